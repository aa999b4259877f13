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
// copied pages (at 0) and every checkpoint tried (at 1). Message in: 'stop', on which the
// thread closes its connection and ends.

import { watch } from 'node:fs';
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
// IDLE_AFTER_MS (nothing written), the thread stops ticking and waits for the log file to be
// written (inotify, through fs.watch): an idle server's thread then never wakes, where a
// timer, however slow, costs a wake-up each time. The first write brings the pace back. A
// write that lands as the watch begins is seen by one more look right after it begins.
const IDLE_AFTER_MS = 1000;
/** Where the log cannot be watched (no such file yet, a file system without notifications): how often to look instead. */
const IDLE_INTERVAL_MAX_MS = 1000;
let copiedUpTo = -1;
let lastLog = -1;
let unchangedMs = 0;
let pauseMs = workerData.intervalMs;
let timer;
let watcher;
let stopped = false;

/** One checkpoint; true when the log changed since the one before. */
function look() {
  Atomics.add(counter, 1, 1);
  let row;
  try {
    row = checkpoint.get();
  } catch {
    // SQLITE_BUSY and the like: the next tick tries again.
    return false;
  }
  const changed = row.log !== lastLog || row.checkpointed !== copiedUpTo;
  // log: frames in the log; checkpointed: frames copied. Nothing new since the last copy
  // costs nothing to report.
  if (row.log > 0 && row.checkpointed !== copiedUpTo) Atomics.add(counter, 0, 1);
  lastLog = row.log;
  copiedUpTo = row.checkpointed;
  return changed;
}

function tick() {
  timer = undefined;
  if (stopped) return;
  if (look()) {
    unchangedMs = 0;
    pauseMs = workerData.intervalMs;
  } else {
    unchangedMs += pauseMs;
    if (unchangedMs >= IDLE_AFTER_MS && waitForWrite()) return;
    if (unchangedMs >= IDLE_AFTER_MS) pauseMs = Math.min(pauseMs * 2, IDLE_INTERVAL_MAX_MS);
  }
  timer = setTimeout(tick, pauseMs);
}

/** Sleeps until the log file is written; false when it cannot be watched. */
function waitForWrite() {
  try {
    watcher = watch(`${workerData.file}-wal`, wake);
  } catch {
    return false;
  }
  watcher.on('error', wake);
  // Written between the last look and the watch: not missed.
  if (look()) wake();
  return true;
}

function wake() {
  if (watcher === undefined) return;
  watcher.close();
  watcher = undefined;
  unchangedMs = 0;
  pauseMs = workerData.intervalMs;
  if (!stopped && timer === undefined) timer = setTimeout(tick, pauseMs);
}

timer = setTimeout(tick, pauseMs);

parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  stopped = true;
  clearTimeout(timer);
  watcher?.close();
  db.close();
  parentPort.close();
});
