// The embedded store's checkpoint thread (started by checkpointer.ts). It holds a second
// connection to the database file and, every few milliseconds, copies the pages that the
// write-ahead log holds into the file (a PASSIVE checkpoint: it never waits for, nor blocks,
// the server's connection). The copy and the fsync of the database file that ends it then
// happen here, not on the main thread between two requests.
//
// Plain JavaScript, loaded by path both from src/ (tests) and from dist/ (the build bundles
// it there). workerData: { driverPath, file, intervalMs, counter }: the driver is loaded by
// the path the main thread resolved, so both connections share one SQLite library and its
// table of file locks; counter (an Int32Array on shared memory) counts the checkpoints that
// copied pages. Message in: 'stop', on which the thread closes its connection and ends.

import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';

const require = createRequire(import.meta.url);
const Database = require(workerData.driverPath);
const db = new Database(workerData.file);
// The server's connection may hold a lock for a moment: try again at the next tick rather
// than wait here.
db.pragma('busy_timeout = 0');
db.pragma('synchronous = NORMAL');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');

const counter = workerData.counter;
// While the log changes, a checkpoint every intervalMs. Once it has stayed the same for
// IDLE_AFTER_MS (nothing written), the pause doubles up to IDLE_INTERVAL_MAX_MS, so that an
// idle server's thread costs next to nothing; the first change seen brings the pace back.
// A write landing during a long pause waits for the next tick at most (the server's own
// automatic checkpoint bounds the log meanwhile).
const IDLE_AFTER_MS = 1000;
const IDLE_INTERVAL_MAX_MS = 1000;
let copiedUpTo = -1;
let lastLog = -1;
let unchangedMs = 0;
let pauseMs = workerData.intervalMs;
let timer;
let stopped = false;

function tick() {
  let row;
  try {
    row = checkpoint.get();
  } catch {
    // SQLITE_BUSY and the like: the next tick tries again.
  }
  if (row !== undefined) {
    const changed = row.log !== lastLog || row.checkpointed !== copiedUpTo;
    // log: frames in the log; checkpointed: frames copied. Nothing new since the last copy
    // costs nothing to report.
    if (row.log > 0 && row.checkpointed !== copiedUpTo) Atomics.add(counter, 0, 1);
    lastLog = row.log;
    copiedUpTo = row.checkpointed;
    if (changed) {
      unchangedMs = 0;
      pauseMs = workerData.intervalMs;
    } else {
      unchangedMs += pauseMs;
      if (unchangedMs >= IDLE_AFTER_MS) pauseMs = Math.min(pauseMs * 2, IDLE_INTERVAL_MAX_MS);
    }
  }
  if (!stopped) timer = setTimeout(tick, pauseMs);
}
timer = setTimeout(tick, pauseMs);

parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  stopped = true;
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
