// The request journal's writer: entries captured on the requests' path (src/http/journal.ts)
// wait here in memory and are written shortly after, in batches: one multi-row insert per
// batch, off the requests' path (the embedded store runs it as background work, after the
// requests' transactions). Serializing the bodies, redacting their secrets and hashing the
// requests happen here too, not while a request is answered.
//
// Each platform's rows beyond its window are deleted now and then (when a tenth of the window
// has been written since the last time, and at the first batch of the platform in this
// process), so the table holds the window and a little more; reads cut the window exactly.
// The buffer is bounded: past PENDING_MAX entries waiting (a store too slow or gone), the
// oldest are dropped and counted in the log. Closing the server writes what is left.

import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { iso } from '../../clock.js';
import { BACKGROUND, type Db, type Queryable } from '../../db/index.js';
import { canonical } from '../../http/command.js';
import type { CapturedRequest, RequestJournal } from '../../http/journal.js';
import { redactJsonText, redactedJson } from '../../http/redaction.js';
import { newId } from '../../ids.js';
import * as store from './store.js';

/** How long an entry waits for its batch. */
export const FLUSH_DELAY_MS = 100;
/** Rows per insert statement (SQLite's and PostgreSQL's limits on bound values leave room). */
export const BATCH_ROWS_MAX = 500;
/** Entries waiting to be written at most; the oldest go first past it. */
export const PENDING_MAX = 20_000;
/** Longer bodies are kept as a note of their size only. */
export const BODY_CHARS_MAX = 64 * 1024;

interface Pending extends CapturedRequest {
  /** Taken into a batch: a later change is written as an amendment. */
  written?: boolean;
}

/** A JSON string literal: what a body column holds when the body itself is not kept. */
function note(text: string): string {
  return JSON.stringify(text);
}

function capped(json: string): string {
  return json.length <= BODY_CHARS_MAX
    ? json
    : note(`(a JSON body of ${json.length} characters, longer than the ${BODY_CHARS_MAX} the journal keeps)`);
}

function requestBodyOf(entry: CapturedRequest): string | null {
  if (entry.body !== undefined) {
    try {
      return capped(redactedJson(entry.body, 'request'));
    } catch {
      return note('(a JSON body too deeply nested to keep)');
    }
  }
  if (entry.requestLength > 0 || entry.requestContentType?.includes('multipart/') === true)
    return note(`(a ${entry.requestContentType?.split(';')[0] ?? 'body'} of ${entry.requestLength} bytes, not kept)`);
  return null;
}

function payloadText(payload: unknown): string | undefined {
  if (typeof payload === 'string') return payload;
  if (Buffer.isBuffer(payload)) return payload.toString('utf8');
  return undefined;
}

function responseBodyOf(entry: CapturedRequest): string | null {
  const text = payloadText(entry.payload);
  if (text === undefined || text === '') return null;
  if (entry.responseContentType?.includes('json') !== true)
    return note(`(a ${entry.responseContentType?.split(';')[0] ?? 'body'} of ${text.length} characters, not kept)`);
  return capped(redactJsonText(text, 'response'));
}

function errorCodeOf(entry: CapturedRequest): string | null {
  if (entry.status === undefined || entry.status < 400) return null;
  const text = payloadText(entry.payload);
  if (text === undefined) return null;
  try {
    const code = (JSON.parse(text) as { code?: unknown }).code;
    return typeof code === 'string' ? code : null;
  } catch {
    return null;
  }
}

/** The request as sent, before redaction: two requests with one hash are the same request. */
function requestHashOf(entry: CapturedRequest): string | null {
  try {
    return createHash('sha256')
      .update(JSON.stringify([entry.method, entry.url, canonical(entry.body ?? null)]))
      .digest('hex');
  } catch {
    return null;
  }
}

function answerColumns(entry: CapturedRequest): Omit<store.EntryAmendment, 'id'> {
  return {
    status: entry.status ?? null,
    error_code: errorCodeOf(entry),
    duration_ms: Math.round(entry.durationMs * 1000) / 1000,
    response_body: responseBodyOf(entry),
    fault: entry.fault === undefined ? null : JSON.stringify(entry.fault),
    answered: entry.answered ? 1 : 0,
  };
}

function rowOf(entry: CapturedRequest): store.JournalRow {
  return {
    id: entry.id,
    platform_id: entry.platformId,
    created_at: iso(new Date(Math.round(entry.receivedAtMs))),
    sandbox_at: iso(entry.sandboxAt),
    method: entry.method,
    path: entry.url,
    operation_id: entry.operationId ?? null,
    request_id: entry.requestId,
    idempotency_key: entry.idempotencyKey ?? null,
    token_id: entry.tokenId,
    agent_id: entry.agentId ?? null,
    request_body: requestBodyOf(entry),
    request_hash: requestHashOf(entry),
    ...answerColumns(entry),
  };
}

export class JournalWriter implements RequestJournal {
  private pending: Pending[] = [];
  private amended: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  /** Rows written per platform since its last prune (a platform not here is pruned at its first batch). */
  private readonly sincePrune = new Map<string, number>();
  private dropped = 0;
  private closed = false;
  private readonly pruneEvery: number;

  constructor(
    private readonly db: Db,
    /** Each platform's window, in requests (at least 1). */
    readonly size: number,
    private readonly log: FastifyBaseLogger,
  ) {
    this.pruneEvery = Math.max(1, Math.floor(size / 10));
  }

  record(entry: CapturedRequest): void {
    if (this.closed) return;
    entry.id = newId('Request');
    this.pending.push(entry);
    if (this.pending.length > PENDING_MAX) {
      this.pending.shift();
      this.dropped++;
    }
    this.schedule(this.pending.length >= BATCH_ROWS_MAX ? 0 : FLUSH_DELAY_MS);
  }

  amend(entry: CapturedRequest): void {
    // Not yet in a batch: the batch reads the entry as it is then.
    if (this.closed || (entry as Pending).written !== true) return;
    this.amended.push(entry);
    this.schedule(FLUSH_DELAY_MS);
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
    this.amended = [];
    for (const entry of batch) entry.written = true;
    const dropped = this.dropped;
    this.dropped = 0;
    this.writing = this.writing.then(() => this.write(batch, amended, dropped));
    return this.writing;
  }

  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
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
      const rows = batch.map(rowOf);
      const counts = new Map<string, number>();
      for (const row of rows) counts.set(row.platform_id, (counts.get(row.platform_id) ?? 0) + 1);
      const toPrune: string[] = [];
      for (const [platformId, count] of counts) {
        const since = (this.sincePrune.get(platformId) ?? this.pruneEvery) + count;
        if (since >= this.pruneEvery) toPrune.push(platformId);
        this.sincePrune.set(platformId, since >= this.pruneEvery ? 0 : since);
      }
      const run = async (q: Queryable) => {
        for (let at = 0; at < rows.length; at += BATCH_ROWS_MAX)
          await store.insertEntries(q, rows.slice(at, at + BATCH_ROWS_MAX));
        for (const entry of amended) await store.amendEntry(q, { id: entry.id, ...answerColumns(entry) });
        for (const platformId of toPrune) await store.pruneToWindow(q, platformId, this.size);
      };
      // The embedded store runs it as background work, sharing a commit with what runs beside
      // it; on PostgreSQL each statement commits on its own (one round trip each).
      if (this.db.dialect === 'sqlite') await this.db.transaction(run, BACKGROUND);
      else await run(this.db.k);
    } catch (err) {
      this.log.warn({ err, entries: batch.length }, 'request journal: a batch could not be written');
    }
  }
}
