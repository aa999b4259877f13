// The request journal of an embedded store on disk: a file of its own beside the store's
// (journal.sqlite), written by a thread of its own (journal-worker.js) and read here through a
// read-only connection. Its inserts, their indexes and the file's checkpoints then cost the
// requests' thread nothing, and never wait for the store's write lock nor hold it (measured:
// written on the requests' thread, the journal cost a saturated transfer-out about a sixth of
// its rate; docs/performance.md). An in-memory store keeps the journal in its own table, and
// PostgreSQL in the shared database, where other instances read it.
//
// The first time a server opens the file, the rows an earlier version kept in the store's
// table move into it.

import { join, dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Kysely, SqliteDialect } from 'kysely';
import type { Db, Queryable } from '../../db/index.js';
import type { Database } from '../../db/schema.js';
import { loadSqlite } from '../../db/sqlite-driver.js';
import type { JournalRowsConfig, WireEntry } from './journal-rows.js';
import * as store from './store.js';

/** The journal's file, in the store's directory. */
export const JOURNAL_FILE_NAME = 'journal.sqlite';

/** Rows moved at once from the store's table into the file. */
const MOVE_ROWS_MAX = 500;

/** What one transaction of the thread writes: entries to make rows of, and statements' values (see store.journalFileSql). */
export interface FileBatch {
  /** New entries, as captured (journal-rows.js toWire): the thread makes their rows. */
  entries: WireEntry[];
  /** Rows already made, as value lists in the order of store.JOURNAL_COLUMNS. */
  rows: (readonly unknown[])[];
  amendments: (readonly unknown[])[];
  prunes: (readonly unknown[])[];
  forget: (readonly unknown[])[];
}

export class JournalFile {
  private readonly waiting = new Map<
    number,
    { resolve: (forgotten: number) => void; reject: (error: Error) => void }
  >();
  private sequence = 0;
  private connection: { k: Kysely<Database>; close: () => void } | undefined;
  private exited: Promise<void>;
  /** Why the thread can take no more batches (it ended, or failed); undefined while it runs. */
  private ended: Error | undefined;

  private constructor(
    private readonly worker: Worker,
    readonly path: string,
  ) {
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    worker.on('message', (message: { id?: number; forgotten?: number; error?: string }) => {
      if (message.id === undefined) return;
      const waiter = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      if (message.error === undefined) waiter?.resolve(message.forgotten ?? 0);
      else waiter?.reject(new Error(`request journal file ${this.path}: ${message.error}`));
    });
    worker.on('error', (error) => this.failAll(error));
    worker.on('exit', () => this.failAll(new Error(`request journal file ${this.path}: its thread ended`)));
  }

  /**
   * Starts the thread on the file beside `db`'s (an embedded store on disk), once its table is
   * there, and moves into it what the store's own table still holds.
   */
  static async open(db: Db, rows: JournalRowsConfig): Promise<JournalFile> {
    const storeFile = db.sqliteFile!;
    const path = join(dirname(storeFile.path), JOURNAL_FILE_NAME);
    // The thread's file sits beside this module: src/modules/requests/ in tests, dist/ in the bundle.
    const worker = new Worker(new URL('./journal-worker.js', import.meta.url), {
      workerData: {
        driverPath: storeFile.driverPath,
        file: path,
        schema: store.journalFileSchema(db.k),
        sql: store.journalFileSql(db.k),
        rows,
      },
      // Its heap holds one batch at a time.
      resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 64 },
    });
    // The thread keeps no process alive: closing the journal ends it.
    worker.unref();
    await new Promise<void>((resolve, reject) => {
      worker.once('message', (message: { ready?: boolean; error?: string }) =>
        message.ready === true ? resolve() : reject(new Error(`request journal file ${path}: ${message.error}`)),
      );
      worker.once('error', reject);
    });
    const file = new JournalFile(worker, path);
    await file.moveFrom(db);
    return file;
  }

  /** Writes `batch` in one transaction; resolves once it is committed, with the rows `forget` deleted. */
  write(batch: Partial<FileBatch>): Promise<number> {
    if (this.ended !== undefined) return Promise.reject(this.ended);
    const id = ++this.sequence;
    return new Promise<number>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, entries: [], rows: [], amendments: [], prunes: [], forget: [], ...batch });
    });
  }

  /** Where reads go: a read-only connection of this thread on the file (opened at the first read). */
  reader(): Queryable {
    if (this.connection === undefined) {
      const database = new (loadSqlite().driver)(this.path, { readonly: true });
      database.pragma('busy_timeout = 5000');
      const k = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
      this.connection = { k, close: () => database.close() };
    }
    return this.connection.k;
  }

  async close(): Promise<void> {
    this.connection?.close();
    this.connection = undefined;
    if (this.ended !== undefined) return;
    // The thread keeps the process alive until it has closed its connection.
    this.worker.ref();
    this.worker.postMessage('stop');
    await this.exited;
  }

  /** The rows an earlier version kept in the store's own table, moved into the file. */
  private async moveFrom(db: Db): Promise<void> {
    for (;;) {
      const rows = await store.oldestEntries(db.k, MOVE_ROWS_MAX);
      if (rows.length === 0) return;
      await this.write({ rows: rows.map((row) => store.JOURNAL_COLUMNS.map((column) => row[column])) });
      await store.deleteEntries(
        db.k,
        rows.map((row) => row.id),
      );
    }
  }

  private failAll(error: Error): void {
    this.ended ??= error;
    for (const waiter of this.waiting.values()) waiter.reject(error);
    this.waiting.clear();
  }
}
