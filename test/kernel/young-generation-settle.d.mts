/** A burst of objects that live a little: V8 grows its young generation for them. */
export function burst(): void;
