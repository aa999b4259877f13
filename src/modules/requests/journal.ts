// The request journal's writer: entries captured on the requests' path (src/http/journal.ts)
// wait here in memory and are written shortly after, in batches, off the requests' path:
// on an embedded store on disk, to a file of its own by a thread of its own (journal-file.ts);
// on a store in memory, as the store's background work, after the requests' transactions; on
// PostgreSQL, to the shared database. Statements have a few fixed sizes. The entries' ids are
// drawn here, and their rows made (bodies redacted, requests hashed: journal-rows.js), not
// while a request is answered; on an embedded store on disk, the journal's thread makes them.
//
// Each platform's rows beyond its window are deleted now and then (when a tenth of the window
// has been written since the last time, and at the first batch of the platform in this
// process), so the table holds the window and a little more; reads cut the window exactly.
// The buffer is bounded in entries and in bytes: past PENDING_MAX entries or
// PENDING_BYTES_MAX of bodies waiting (a store too slow or gone), the oldest are dropped and
// counted in the log. Closing the server writes what is left.

import type { FastifyBaseLogger } from 'fastify';
import { BACKGROUND, type Db, type Queryable } from '../../db/index.js';
import { BODY_CHARS_MAX, type CapturedRequest, type RequestJournal } from '../../http/journal.js';
import { REDACTED, secretNames } from '../../http/redaction.js';
import { newId } from '../../ids.js';
import { JournalFile } from './journal-file.js';
import { journalRows, type JournalRowsConfig, toWire, type WireEntry } from './journal-rows.js';
import * as store from './store.js';

/**
 * How long an entry waits for its batch, on the embedded store. note: short, so that few
 * entries (and the bodies they hold) are alive when the young generation is collected: at
 * 100 ms, a saturated transfer-out spent half as much again in the collector as with the
 * journal off; at 20 ms, a third as much.
 */
export const FLUSH_DELAY_MS = 25;
/**
 * On PostgreSQL: each batch is a commit of its own, which waits for the server's disk, beside
 * the requests' own commits; fewer, larger batches cost them less.
 */
export const FLUSH_DELAY_PG_MS = 100;
/** An entry waiting beyond this many starts its batch at once. */
export const BATCH_ROWS_MAX = 500;
/** Entries waiting to be written at most; the oldest go first past it. */
export const PENDING_MAX = 20_000;
/** Bytes of bodies waiting to be written at most (with ENTRY_BYTES for each entry); the oldest go first past it. */
export const PENDING_BYTES_MAX = 32 * 1024 * 1024;
/** What an entry weighs besides its bodies, in bytes (its fields, as JavaScript keeps them). */
const ENTRY_BYTES = 600;

export { BODY_CHARS_MAX };

interface Pending extends CapturedRequest {
  /** Taken into a batch: a later change is written as an amendment. */
  written?: boolean;
}

/** What an entry holds in memory while it waits, roughly, in bytes. */
function weight(entry: CapturedRequest): number {
  return ENTRY_BYTES + 2 * ((entry.bodyText?.length ?? 0) + (entry.payload?.length ?? 0));
}

/** The rows' maker (journal-rows.js); the journal's thread makes its own with the same configuration. */
const JOURNAL_ROWS: JournalRowsConfig = {
  secrets: { request: secretNames('request'), response: secretNames('response') },
  redacted: REDACTED,
  bodyCharsMax: BODY_CHARS_MAX,
};
const { valuesOf, answerColumns } = journalRows(JOURNAL_ROWS);

/**
 * The entry as the journal's thread needs it. An answer in bytes is read there only when it is
 * JSON, so it goes as text then, and not at all otherwise (a Buffer would be copied whole, with
 * the pool it was cut from).
 */
function forThread(entry: Pending): WireEntry {
  const wire = toWire(entry);
  const payload = entry.payload;
  if (payload === undefined || typeof payload === 'string') return wire;
  const json = entry.responseContentType?.includes('json') === true;
  return toWire({ ...entry, payload: json ? payload.toString('utf8') : undefined });
}

export class JournalWriter implements RequestJournal {
  private pending: Pending[] = [];
  /** What the pending entries weigh (weight()). */
  private pendingBytes = 0;
  private amended: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  /** Rows written per platform since its last prune (a platform not here is pruned at its first batch). */
  private readonly sincePrune = new Map<string, number>();
  private dropped = 0;
  private closed = false;
  private readonly pruneEvery: number;
  /** How long an entry waits for its batch (FLUSH_DELAY_MS or FLUSH_DELAY_PG_MS). */
  private readonly delayMs: number;
  /** An embedded store on disk: the journal's file of its own and its thread (started at the first write or read). */
  private file: Promise<JournalFile | undefined> | undefined;

  constructor(
    private readonly db: Db,
    /** Each platform's window, in requests (at least 1). */
    readonly size: number,
    private readonly log: FastifyBaseLogger,
  ) {
    this.pruneEvery = Math.max(1, Math.floor(size / 10));
    this.delayMs = db.dialect === 'postgres' ? FLUSH_DELAY_PG_MS : FLUSH_DELAY_MS;
  }

  record(entry: CapturedRequest): void {
    if (this.closed) return;
    this.pending.push(entry);
    this.pendingBytes += weight(entry);
    while (this.pending.length > PENDING_MAX || (this.pendingBytes > PENDING_BYTES_MAX && this.pending.length > 1)) {
      this.pendingBytes -= weight(this.pending.shift()!);
      this.dropped++;
    }
    this.schedule(this.pending.length >= BATCH_ROWS_MAX ? 0 : this.delayMs);
  }

  amend(entry: CapturedRequest): void {
    // Not yet in a batch: the batch reads the entry as it is then.
    if (this.closed || (entry as Pending).written !== true) return;
    this.amended.push(entry);
    this.schedule(this.delayMs);
  }

  flush(): Promise<void> {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.pending.length === 0 && this.amended.length === 0) return this.writing;
    const batch = this.pending;
    const amended = this.amended;
    this.pending = [];
    this.pendingBytes = 0;
    this.amended = [];
    // Ids are drawn as the batch is taken (uuid v7 in the entries' order), not on the requests' path.
    for (const entry of batch) {
      entry.id = newId('Request');
      entry.written = true;
    }
    const dropped = this.dropped;
    this.dropped = 0;
    this.writing = this.writing.then(() => this.write(batch, amended, dropped));
    return this.writing;
  }

  /**
   * Writes what waits, then answers where the journal is read: its file's connection on an
   * embedded store on disk, or undefined for the store's own table.
   */
  async readable(): Promise<Queryable | undefined> {
    await this.flush();
    return (await this.fileOf())?.reader();
  }

  /**
   * Deletes a platform's entries kept in the journal's file (a reset), once what waits is
   * written; answers how many. The store's own table goes with the platform's other rows
   * (sandbox/reset.ts).
   */
  async forget(platformId: string): Promise<number> {
    await this.flush();
    const file = await this.fileOf();
    return file === undefined ? 0 : file.write({ forget: [store.forgetValues(this.db.k, platformId)] });
  }

  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    await (await this.file)?.close();
  }

  /**
   * The journal's file on an embedded store on disk (opened at the first use); undefined
   * elsewhere, or when it could not be opened: then the journal stays in the store's table,
   * as on a store in memory, and the log says why once.
   */
  private fileOf(): Promise<JournalFile | undefined> {
    if (this.db.sqliteFile === undefined) return Promise.resolve(undefined);
    this.file ??= JournalFile.open(this.db, JOURNAL_ROWS).catch((err: unknown) => {
      this.log.error({ err }, "request journal: its file could not be opened; it is kept in the store's table");
      return undefined;
    });
    return this.file;
  }

  private schedule(delayMs: number): void {
    if (this.timer !== undefined) {
      if (delayMs > 0) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, delayMs);
    this.timer.unref();
  }

  private async write(batch: Pending[], amended: Pending[], dropped: number): Promise<void> {
    if (dropped > 0)
      this.log.warn({ dropped }, 'request journal: entries dropped, the store did not keep up with the requests');
    try {
      const counts = new Map<string, number>();
      for (const entry of batch) counts.set(entry.platformId, (counts.get(entry.platformId) ?? 0) + 1);
      const toPrune: string[] = [];
      for (const [platformId, count] of counts) {
        const since = (this.sincePrune.get(platformId) ?? this.pruneEvery) + count;
        if (since >= this.pruneEvery) toPrune.push(platformId);
        this.sincePrune.set(platformId, since >= this.pruneEvery ? 0 : since);
      }
      const file = await this.fileOf();
      if (file !== undefined) {
        // On disk, the journal's thread writes its file in one transaction (journal-file.ts).
        const k = this.db.k;
        // Its thread makes the rows (journal-rows.js): this thread only hands the entries over.
        await file.write({
          entries: batch.map(forThread),
          amendments: amended.map((entry) => store.amendValues(k, { id: entry.id, ...answerColumns(entry) })),
          prunes: toPrune.map((platformId) => store.pruneValues(k, platformId, this.size)),
        });
        return;
      }
      const rows = batch.map(valuesOf);
      const run = async (q: Queryable) => {
        await store.insertEntries(q, rows);
        for (const entry of amended) await store.amendEntry(q, { id: entry.id, ...answerColumns(entry) });
        for (const platformId of toPrune) await store.pruneToWindow(q, platformId, this.size);
      };
      // The embedded store in memory runs it as background work, sharing a commit with what
      // runs beside it; on PostgreSQL each statement commits on its own (one round trip each).
      if (this.db.dialect === 'sqlite') await this.db.transaction(run, BACKGROUND);
      else await run(this.db.k);
    } catch (err) {
      this.log.warn({ err, entries: batch.length }, 'request journal: a batch could not be written');
    }
  }
}
