/** One full collection of this thread's heap, compacting: its emptied pages go back. */
export function fullCollection(): void;
/** The size of V8's young generation in this thread's heap: what it holds from the system. */
export function youngGenerationSize(): number;
