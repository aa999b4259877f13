/** One full collection of this thread's heap; with `compact`, its emptied pages go back. */
export function fullCollection(compact: boolean): void;
