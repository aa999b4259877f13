// The request journal's writer (src/modules/requests/journal.ts) on the store the suite runs
// on: what waits in memory to be written is bounded in entries and in bytes, the oldest going
// first, and a write of any number of entries lands whole. Entries are recorded in one
// synchronous run, as a burst of answers faster than the store is; nothing is written until
// the run ends, so the bounds are what decides what is left.

import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it } from 'vitest';
import { BODY_CHARS_MAX, type CapturedRequest } from '../../src/http/journal.js';
import { JournalWriter, PENDING_BYTES_MAX, PENDING_MAX } from '../../src/modules/requests/journal.js';
import { build, type TestApp } from '../helper.js';

function entry(platformId: string, sequence: number, bodyChars: number): CapturedRequest {
  const text = JSON.stringify({ sequence, padding: 'p'.repeat(Math.max(0, bodyChars - 30)) });
  return {
    id: '',
    platformId,
    receivedAtMs: Date.parse('2026-12-01T10:00:00Z') + sequence,
    sandboxAt: new Date('2026-12-01T10:00:00Z'),
    method: 'POST',
    url: `/grid/2025-10-13/transfer-out?n=${sequence}`,
    operationId: 'createTransferOut',
    status: 201,
    durationMs: 1.5,
    requestId: `req-${sequence}`,
    idempotencyKey: `key-${sequence}`,
    tokenId: null,
    agentId: undefined,
    bodyText: text,
    bodyChars: text.length,
    requestContentType: 'application/json',
    requestLength: text.length,
    payload: text,
    responseLength: text.length,
    responseContentType: 'application/json; charset=utf-8',
    fault: undefined,
    answered: true,
  };
}

function logger() {
  const warnings: { dropped?: number }[] = [];
  const log = { warn: (fields: { dropped?: number }) => warnings.push(fields) } as unknown as FastifyBaseLogger;
  return { log, warnings };
}

async function stored(t: TestApp, platformId: string) {
  return t.deps.db.k
    .selectFrom('request_journal')
    .select(['path', 'request_body', 'response_body', 'request_hash'])
    .where('platform_id', '=', platformId)
    .orderBy('created_at')
    .execute();
}

describe('the journal writer', () => {
  it('keeps at most PENDING_BYTES_MAX of bodies waiting, dropping the oldest, and says how many it dropped', async () => {
    const t = await build();
    const { log, warnings } = logger();
    const writer = new JournalWriter(t.deps.db, 10_000, log);
    const platformId = `Platform:bytes-${Date.now()}`;
    for (let i = 0; i < 300; i++) writer.record(entry(platformId, i, BODY_CHARS_MAX));
    await writer.close();
    const rows = await stored(t, platformId);
    // Each entry weighs its two bodies (two bytes a character) and 600 bytes besides.
    const weight = 600 + 2 * 2 * BODY_CHARS_MAX;
    const kept = Math.floor(PENDING_BYTES_MAX / weight);
    expect(rows).toHaveLength(kept);
    // The newest were kept, whole.
    expect(rows.at(-1)!.path).toBe('/grid/2025-10-13/transfer-out?n=299');
    expect(rows[0]!.path).toBe(`/grid/2025-10-13/transfer-out?n=${300 - kept}`);
    expect(JSON.parse(rows.at(-1)!.request_body!).sequence).toBe(299);
    expect(JSON.parse(rows.at(-1)!.response_body!).sequence).toBe(299);
    expect(warnings.map((w) => w.dropped)).toEqual([300 - kept]);
  });

  it('keeps at most PENDING_MAX entries waiting, and writes a batch of any length whole', async () => {
    const t = await build();
    const { log, warnings } = logger();
    const writer = new JournalWriter(t.deps.db, 100_000, log);
    const platformId = `Platform:count-${Date.now()}`;
    for (let i = 0; i < PENDING_MAX + 7; i++) writer.record(entry(platformId, i, 40));
    await writer.close();
    const rows = await stored(t, platformId);
    expect(rows).toHaveLength(PENDING_MAX);
    expect(rows[0]!.path).toBe('/grid/2025-10-13/transfer-out?n=7');
    expect(warnings.map((w) => w.dropped)).toEqual([7]);
    // Two requests are the same when their method, path and body are: here none are.
    expect(new Set(rows.map((row) => row.request_hash)).size).toBe(PENDING_MAX);
  });
});
