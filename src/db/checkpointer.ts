// The embedded store's checkpoints, on a thread of their own (the loop is checkpoint-worker.js).
//
// In WAL mode every commit appends to the log, and a checkpoint copies the log's pages back
// into the database file and fsyncs it. Run on the server's connection, that copy and that
// fsync stall the main thread, and every request in flight, for as long as they take: 10 to
// 20 ms on the CI VM each time the log reached its bound, the p99 of a test suite's sequential
// writes. A second connection on a worker thread runs a PASSIVE checkpoint every few
// milliseconds instead: it copies what is committed without waiting for or blocking the
// server's connection, whose next write then restarts the log from its start once all of it
// is copied (docs/performance.md).
//
// Once nothing has been written for a second, the thread waits for the log file to change
// instead of looking at it (checkpoint-worker.js): an idle server's thread does not wake.
//
// Under writes that never pause, the log is never all copied when a write begins, so it
// would grow for good: the server's connection keeps an automatic checkpoint at a larger
// bound (see sqlite-setup.ts), which then finds almost everything already copied, and lets
// the log restart.

import { Worker } from 'node:worker_threads';

/** How often the thread checkpoints (railyard's store and the bench's floor). */
export const CHECKPOINT_INTERVAL_MS = 20;

export interface Checkpointer {
  /** Checkpoints that copied pages so far (for tests). */
  readonly checkpoints: number;
  /** Checkpoints tried so far, copying or not: how often the thread woke (for tests). */
  readonly looks: number;
  /** Stops the thread; resolves once its connection is closed. */
  close(): Promise<void>;
}

/**
 * Starts the checkpoint thread on `databaseFile`, loading the SQLite driver from
 * `driverPath`: the one the server's connection uses (both must share one SQLite library,
 * which keeps the process's file locks).
 */
export function checkpointOnThread(
  databaseFile: string,
  driverPath: string,
  intervalMs = CHECKPOINT_INTERVAL_MS,
): Checkpointer {
  const counter = new Int32Array(new SharedArrayBuffer(8));
  // The worker's file sits beside this module: src/db/ in tests, dist/ in the bundle.
  const worker = new Worker(new URL('./checkpoint-worker.js', import.meta.url), {
    workerData: { driverPath, file: databaseFile, intervalMs, counter },
    // Its heap holds one connection and a timer.
    resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
  });
  worker.unref();
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  // A thread that fails leaves the store working: the server's own automatic checkpoint
  // still bounds the log.
  worker.on('error', () => {});
  let closing: Promise<void> | undefined;
  return {
    get checkpoints() {
      return Atomics.load(counter, 0);
    },
    get looks() {
      return Atomics.load(counter, 1);
    },
    close() {
      closing ??= (async () => {
        // The thread keeps the process alive until it has closed its connection.
        worker.ref();
        worker.postMessage('stop');
        await exited;
      })();
      return closing;
    },
  };
}
