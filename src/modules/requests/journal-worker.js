// The request journal's writer thread, for an embedded store on disk (started by journal.ts).
// It owns a database file of its own beside the store's (journal.sqlite), so its writes never
// wait for the store's write lock nor make the requests wait for theirs, and the inserts,
// their indexes and the checkpoints of that file cost the requests' thread nothing. The main
// thread builds the rows and reads the file through a connection of its own.
//
// Plain JavaScript, loaded by path both from src/ (tests) and from dist/ (the build bundles it
// there). workerData: { driverPath, file, schema: string[], sql: { insert: {rows: text},
// amend, prune, forget }, rows: the configuration of journal-rows.js }: the driver is loaded
// by the path the main thread resolved; the SQL is compiled there (store.ts), so there is one
// definition of it. Messages in: a batch { id, entries: captured entries (journal-rows.js toWire), rows: values[],
// amendments: values[], prunes: values[], forget: values[] }, written in one transaction (the
// entries' rows made here, by journal-rows.js) and answered { id, forgotten } (the rows
// `forget` deleted) or { id, error }; 'stop', on which the thread closes its connection and
// ends. The first message out is { ready: true } (or { error }), once the file has its table.

import { readlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { fromWire, journalRows } from './journal-rows.js';

const require = createRequire(import.meta.url);

// The journal is background work: where the system lets a thread have a priority of its own
// (Linux: a thread's id is a process id to setpriority), this one yields the CPU to the
// requests' thread when both want it. A nice of 10 weighs about a tenth of a normal thread;
// the journal needs some 5% of a core at the requests' saturation, so it keeps up. Elsewhere
// it keeps the process's priority.
const JOURNAL_NICE = 10;
try {
  const threadId = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(threadId) && threadId > 0) setPriority(threadId, JOURNAL_NICE);
} catch {
  // Not Linux, or no /proc: the default priority.
}
const Database = require(workerData.driverPath);

let db;
let statements;
try {
  db = new Database(workerData.file);
  // Rows of a few kilobytes (two bodies each): several to a page (a new file only).
  db.pragma('page_size = 16384');
  db.pragma('journal_mode = WAL');
  // A record of the test's traffic, not money: no waits for the disk. A crash of the process
  // keeps every committed batch (the system has it); a crash of the machine may lose the last.
  db.pragma('synchronous = OFF');
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_size_limit = 16777216');
  for (const text of workerData.schema) db.exec(text);
  const { sql } = workerData;
  statements = {
    insert: new Map(Object.entries(sql.insert).map(([count, text]) => [Number(count), db.prepare(text)])),
    amend: db.prepare(sql.amend),
    prune: db.prepare(sql.prune),
    forget: db.prepare(sql.forget),
  };
  parentPort.postMessage({ ready: true });
} catch (error) {
  parentPort.postMessage({ error: String(error?.message ?? error) });
}

const { valuesOf } = journalRows(workerData.rows);
// The insert statements' row counts, largest first: rows go in chunks of these.
const counts = Object.keys(workerData.sql.insert)
  .map(Number)
  .sort((a, b) => b - a);

const insert = (rows) => {
  for (let at = 0; at < rows.length; ) {
    const count = counts.find((c) => c <= rows.length - at);
    const values = [];
    for (let i = at; i < at + count; i++) for (const value of rows[i]) values.push(value);
    statements.insert.get(count).run(values);
    at += count;
  }
};

// Answers how many rows `forget` deleted.
const write = (batch) => {
  insert(batch.entries.map((wire) => valuesOf(fromWire(wire))));
  insert(batch.rows);
  for (const values of batch.amendments) statements.amend.run(values);
  for (const values of batch.prunes) statements.prune.run(values);
  let forgotten = 0;
  for (const values of batch.forget) forgotten += statements.forget.run(values).changes;
  return forgotten;
};

parentPort.on('message', (message) => {
  if (message === 'stop') {
    db?.close();
    parentPort.close();
    return;
  }
  try {
    const forgotten = db.transaction(write)(message);
    parentPort.postMessage({ id: message.id, forgotten });
  } catch (error) {
    parentPort.postMessage({ id: message.id, error: String(error?.message ?? error) });
  }
});
