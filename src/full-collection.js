// V8's full collection, made callable (the same as starting Node with --expose-gc), for the
// main thread's idle collector (memory.ts) and the webhook sender's thread (send-worker.js),
// each of which collects its own heap; and the young generation's size. Plain JavaScript,
// since the sender's thread, and a test's own process, load it by path from src/.

import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc;

/**
 * Runs one full collection of this thread's heap, compacting: the objects still live are moved
 * together and the emptied pages go back. A plain full collection frees the garbage but keeps
 * the pages it was spread over (measured after the bench: 73 MB used became 27, the heap's
 * 94 MB stayed 86, and so did the RSS).
 */
export function fullCollection() {
  if (gc === undefined) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc');
  }
  // V8's flags are the process's: another thread's collection in this short window compacts too.
  setFlagsFromString('--compact-on-every-full-gc');
  try {
    gc();
  } finally {
    setFlagsFromString('--no-compact-on-every-full-gc');
  }
}

/** The size of V8's young generation in this thread's heap: what it holds from the system. */
export function youngGenerationSize() {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
}
