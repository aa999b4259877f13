// The request journal's writer thread, for an embedded store on disk (started by journal.ts).
// It owns a database file of its own beside the store's (journal.sqlite), so its writes never
// wait for the store's write lock nor make the requests wait for theirs, and the inserts,
// their indexes and the checkpoints of that file cost the requests' thread nothing. The main
// thread builds the rows and reads the file through a connection of its own.
//
// Plain JavaScript, loaded by path both from src/ (tests) and from dist/ (the build bundles it
// there). workerData: { driverPath, file, schema: string[], sql: { insert: {rows: text},
// amend, prune, forget } }: the driver is loaded by the path the main thread resolved; the
// SQL is compiled there (store.ts), so there is one definition of it. Messages in: a batch
// { id, rows: [count, values][], amendments: values[], prunes: values[], forget: values[] },
// written in one transaction and answered { id, forgotten } (the rows `forget` deleted) or { id, error }; 'stop', on which the
// thread closes its connection and ends. The first message out is { ready: true } (or
// { error }), once the file has its table.

import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';

const require = createRequire(import.meta.url);
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

// Answers how many rows `forget` deleted.
const write = (batch) => {
  for (const [count, values] of batch.rows) statements.insert.get(count).run(values);
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
