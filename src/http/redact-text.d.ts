/** JSON text with the members named in `names` replaced by `replacement`, at any depth. */
export function textRedactor(names: readonly string[], replacement: string): (text: string) => string;
