// The request journal as a platform reads it: its latest requests (listRequests, getRequest)
// and the integration report that sums them up (requestsReport). Every read first writes what
// this server still holds in memory, so a request already answered is always there. Requests
// other instances on the same PostgreSQL answered appear once they write them (within about
// FLUSH_DELAY_PG_MS). On an embedded store on disk the journal is read from its own file.

import { failedDeliveries } from '../../events/delivery.js';
import type { Ctx } from '../../http/context.js';
import { apiError } from '../../http/errors.js';
import { type PageRequest, toPage } from '../../db/pagination.js';
import * as store from './store.js';

/**
 * The operations that move money and declare an Idempotency-Key in the reference: a retry of
 * one sent without a key may move the money twice. A quote moves money only when it is
 * executed at once (`immediatelyExecute`), so those two count only then.
 */
export const MONEY_MOVING_OPERATIONS: ReadonlyMap<string, 'always' | 'immediatelyExecute'> = new Map([
  ['createTransferIn', 'always'],
  ['createTransferOut', 'always'],
  ['executeQuote', 'always'],
  ['createQuote', 'immediatelyExecute'],
  ['agentCreateTransferIn', 'always'],
  ['agentCreateTransferOut', 'always'],
  ['agentExecuteQuote', 'always'],
  ['agentCreateQuote', 'immediatelyExecute'],
  ['createStablecoinMint', 'always'],
  ['createStablecoinBurn', 'always'],
]);

/** Findings list at most this many items each (the newest); request ids at most REQUEST_IDS_MAX per item. */
export const FINDINGS_MAX = 100;
export const REQUEST_IDS_MAX = 10;

function sizeOf(ctx: Ctx): number {
  return ctx.deps.journal?.size ?? 0;
}

/**
 * Writes this server's waiting entries, then reads where the platform's window starts; `q` is
 * where the journal is read (its own file on an embedded store on disk, journal-file.ts).
 */
async function openWindow(ctx: Ctx) {
  const q = (await ctx.deps.journal?.readable()) ?? ctx.db.k;
  return { q, start: await store.windowStart(q, ctx.platformId, sizeOf(ctx)) };
}

function parsedBody(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function presentRequest(row: store.JournalRow) {
  return {
    id: row.id,
    receivedAt: row.created_at,
    sandboxTime: row.sandbox_at,
    method: row.method,
    path: row.path,
    ...(row.operation_id !== null ? { operationId: row.operation_id } : {}),
    ...(row.status !== null ? { status: Number(row.status) } : {}),
    answered: Number(row.answered) === 1,
    ...(row.error_code !== null ? { errorCode: row.error_code } : {}),
    durationMs: Number(row.duration_ms),
    requestId: row.request_id,
    ...(row.idempotency_key !== null ? { idempotencyKey: row.idempotency_key } : {}),
    ...(row.token_id !== null ? { tokenId: row.token_id } : {}),
    ...(row.agent_id !== null ? { agentId: row.agent_id } : {}),
    ...(row.fault !== null ? { fault: JSON.parse(row.fault) as Record<string, unknown> } : {}),
    ...(row.request_body !== null ? { requestBody: parsedBody(row.request_body) } : {}),
    ...(row.response_body !== null ? { responseBody: parsedBody(row.response_body) } : {}),
  };
}

export async function listRequests(ctx: Ctx, filters: store.EntryFilters, page: PageRequest) {
  const { q, start } = await openWindow(ctx);
  if (sizeOf(ctx) === 0) return { data: [], hasMore: false, totalCount: 0 };
  return toPage(await store.listEntries(q, ctx.platformId, start, filters, page), presentRequest);
}

export async function getRequest(ctx: Ctx, requestId: string) {
  const { q, start } = await openWindow(ctx);
  const row = sizeOf(ctx) === 0 ? undefined : await store.findEntry(q, ctx.platformId, start, requestId);
  if (row === undefined) throw apiError('REFERENCE_NOT_FOUND', `No request ${requestId} in this platform's journal`);
  return presentRequest(row);
}

// ------------------------------------------------------------------------------ the report

function operationsSummary(counts: store.OperationCount[]) {
  const byOperation = new Map<
    string,
    {
      operationId: string;
      requests: number;
      unanswered: number;
      byStatus: Record<string, number>;
      byCode: Record<string, number>;
    }
  >();
  for (const row of counts) {
    const operationId = row.operation_id ?? '(no operation)';
    let summary = byOperation.get(operationId);
    if (summary === undefined) {
      summary = { operationId, requests: 0, unanswered: 0, byStatus: {}, byCode: {} };
      byOperation.set(operationId, summary);
    }
    const count = Number(row.count);
    summary.requests += count;
    if (Number(row.answered) === 0) summary.unanswered += count;
    if (row.status !== null) {
      const status = String(row.status);
      summary.byStatus[status] = (summary.byStatus[status] ?? 0) + count;
    }
    if (row.error_code !== null) summary.byCode[row.error_code] = (summary.byCode[row.error_code] ?? 0) + count;
  }
  return [...byOperation.values()].sort(
    (a, b) => b.requests - a.requests || a.operationId.localeCompare(b.operationId),
  );
}

function movesMoney(operationId: string | null, requestBody: string | null): boolean {
  const rule = operationId === null ? undefined : MONEY_MOVING_OPERATIONS.get(operationId);
  if (rule === 'always') return true;
  if (rule !== 'immediatelyExecute') return false;
  const body = parsedBody(requestBody);
  return (
    typeof body === 'object' && body !== null && (body as { immediatelyExecute?: unknown }).immediatelyExecute === true
  );
}

function missingKeys(rows: Awaited<ReturnType<typeof store.withoutKey>>) {
  const byOperation = new Map<string, { operationId: string; requests: number; requestIds: string[] }>();
  for (const row of rows) {
    if (!movesMoney(row.operation_id, row.request_body)) continue;
    const operationId = row.operation_id!;
    let finding = byOperation.get(operationId);
    if (finding === undefined) {
      finding = { operationId, requests: 0, requestIds: [] };
      byOperation.set(operationId, finding);
    }
    finding.requests++;
    if (finding.requestIds.length < REQUEST_IDS_MAX) finding.requestIds.push(row.id);
  }
  return [...byOperation.values()];
}

function reusedKeys(rows: Awaited<ReturnType<typeof store.reusedKeys>>) {
  const byPair = new Map<
    string,
    { operationId: string; idempotencyKey: string; requests: number; hashes: Set<string>; requestIds: string[] }
  >();
  for (const row of rows) {
    const pair = JSON.stringify([row.operation_id, row.idempotency_key]);
    let finding = byPair.get(pair);
    if (finding === undefined) {
      if (byPair.size >= FINDINGS_MAX) continue;
      finding = {
        operationId: row.operation_id ?? '(no operation)',
        idempotencyKey: row.idempotency_key!,
        requests: 0,
        hashes: new Set(),
        requestIds: [],
      };
      byPair.set(pair, finding);
    }
    finding.requests++;
    finding.hashes.add(row.request_hash ?? '');
    if (finding.requestIds.length < REQUEST_IDS_MAX) finding.requestIds.push(row.id);
  }
  return [...byPair.values()].map(({ hashes, ...finding }) => ({ ...finding, distinctRequests: hashes.size }));
}

/** What the client did after each failed answer: the first later request of the operation that retried it. */
function failedAnswers(failed: store.FailureRow[], later: store.FailureRow[]) {
  const after = (a: store.FailureRow, b: store.FailureRow) =>
    a.created_at > b.created_at || (a.created_at === b.created_at && a.id > b.id);
  return failed.map((row) => {
    let retry: 'SAME_KEY' | 'NEW_KEY' | 'NO_KEY' | 'NOT_RETRIED' = 'NOT_RETRIED';
    let retryRequestId: string | undefined;
    for (const next of later) {
      if (next.operation_id !== row.operation_id || !after(next, row)) continue;
      if (row.idempotency_key !== null && next.idempotency_key === row.idempotency_key) {
        retry = 'SAME_KEY';
      } else if (next.request_hash !== null && next.request_hash === row.request_hash) {
        retry = next.idempotency_key === null ? 'NO_KEY' : 'NEW_KEY';
      } else continue;
      retryRequestId = next.id;
      break;
    }
    return {
      requestId: row.id,
      receivedAt: row.created_at,
      method: row.method,
      path: row.path,
      ...(row.operation_id !== null ? { operationId: row.operation_id } : {}),
      ...(row.status !== null ? { status: Number(row.status) } : {}),
      answered: Number(row.answered) === 1,
      ...(row.error_code !== null ? { errorCode: row.error_code } : {}),
      ...(row.idempotency_key !== null ? { idempotencyKey: row.idempotency_key } : {}),
      retry,
      ...(retryRequestId !== undefined ? { retryRequestId } : {}),
    };
  });
}

export async function requestsReport(ctx: Ctx) {
  const { q, start } = await openWindow(ctx);
  const size = sizeOf(ctx);
  const journalOn = size > 0;
  const [stats, counts, withoutKey, reused, failed, webhooks] = await Promise.all([
    journalOn ? store.windowStats(q, ctx.platformId, start) : { requests: 0, first: null, last: null },
    journalOn ? store.operationCounts(q, ctx.platformId, start) : [],
    journalOn ? store.withoutKey(q, ctx.platformId, start, [...MONEY_MOVING_OPERATIONS.keys()]) : [],
    journalOn ? store.reusedKeys(q, ctx.platformId, start) : [],
    journalOn ? store.failures(q, ctx.platformId, start, FINDINGS_MAX) : [],
    failedDeliveries(ctx, FINDINGS_MAX),
  ]);
  const earliest = failed[failed.length - 1];
  const operations = [...new Set(failed.map((row) => row.operation_id).filter((id) => id !== null))];
  const later =
    earliest === undefined || operations.length === 0
      ? []
      : await store.requestsFrom(q, ctx.platformId, { createdAt: earliest.created_at, id: earliest.id }, operations);
  return {
    window: {
      size,
      requests: stats.requests,
      ...(stats.first !== null ? { firstReceivedAt: stats.first } : {}),
      ...(stats.last !== null ? { lastReceivedAt: stats.last } : {}),
    },
    operations: operationsSummary(counts),
    missingIdempotencyKeys: missingKeys(withoutKey),
    reusedIdempotencyKeys: reusedKeys(reused),
    failedAnswers: failedAnswers(failed, later),
    failedWebhookDeliveries: webhooks,
  };
}
