// Run by test/kernel/idle-gc.test.ts in a process of its own: V8 shrinks the young generation
// only when the heap allocated little over the seconds before a full collection, so the check
// needs a process where nothing else runs (the suite's workers share theirs between files).
// It makes a burst of short-lived objects, then the server's two idle collections in their
// order, as src/memory.ts runs them, with the quiet stretch between, and prints the young
// generation's size after each step, as JSON.

import { pathToFileURL } from 'node:url';
import { fullCollection, youngGenerationSize } from '../../src/full-collection.js';

/** A burst of objects that live a little: V8 grows its young generation for them. */
export function burst() {
  let kept = [];
  for (let i = 0; i < 2_000_000; i++) {
    kept.push({ i, name: `item ${i}`, pair: [i, i] });
    if (kept.length > 20_000) kept = kept.slice(10_000);
  }
}

// The check itself runs only when this file is the process's script (the test imports burst).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await settleCheck(Number(process.argv[2] ?? 6000));

async function settleCheck(quietMs) {
  burst();
  const afterBurst = youngGenerationSize();
  // The burst is over: the compacting collection.
  fullCollection();
  const afterCompaction = youngGenerationSize();
  // The quiet intervals the idle collector counts, then the settling collection.
  await new Promise((resolve) => setTimeout(resolve, quietMs));
  fullCollection();
  process.stdout.write(`${JSON.stringify({ afterBurst, afterCompaction, afterSettle: youngGenerationSize() })}\n`);
}
