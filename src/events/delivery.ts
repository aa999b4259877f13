// Webhook delivery. Every event recorded while the platform has a webhook endpoint gets a
// delivery row and a `webhook.deliver` job, written in the transaction of the change itself,
// so a committed change always has its delivery and nothing is sent before the commit. The
// job runs outside any transaction, signs the envelope and POSTs it; the answer, its latency
// and any error are kept as an attempt. Failed tries are retried with exponential backoff
// (capped at 30 minutes between tries) for 7 days from the start of the round; a 409 means
// the receiver already has the event and ends the delivery. The job's lease keeps a delivery
// with one instance at a time; each try carries the same envelope, byte for byte. A
// platform's webhook fault rules may delay, hold back, drop or repeat a delivery's try on
// purpose (faults.ts).

import { iso, platformNow } from '../clock.js';
import { BACKGROUND, type Queryable, type Tx } from '../db/index.js';
import { toPage, type PageRequest } from '../db/pagination.js';
import type { Ctx } from '../http/context.js';
import type { Deps } from '../http/deps.js';
import { apiError } from '../http/errors.js';
import { newId } from '../ids.js';
import { defineJob, type Job, type JobContext } from '../jobs/queue.js';
import { type DeliveryFault, faultOf, OUT_OF_ORDER_HOLD_MAX_MS, planDeliveryFault } from './faults.js';
import { post, type PostResult } from './sender.js';
import { SIGNATURE_HEADER, signatureHeaderValue } from './signature.js';
import * as store from './store.js';

/** How long a receiver has to answer a try (config.webhookTimeoutMs overrides it). */
export const WEBHOOK_TIMEOUT_MS = 30_000;
/** The wait after the first failed try; it doubles after each failure … */
export const RETRY_DELAY_FIRST_MS = 30_000;
/** … up to this. */
export const RETRY_DELAY_MAX_MS = 30 * 60_000;
/** No try is scheduled later than this after the start of a round (the event, or a replay). */
export const RETRY_WINDOW_MS = 7 * 24 * 60 * 60_000;
/** How much of an answer's body the delivery log keeps. */
export const RESPONSE_EXCERPT_CHARS_MAX = 1000;
// A bound only: the 7-day window ends a round after 341 tries.
const DELIVERY_JOB_ATTEMPTS_MAX = 1000;
// The runner renews it every LEASE_RENEW_MS while a try runs, so a live instance keeps its
// claim through the longest try (the 30 s timeout) and a dead one's lapses within 15 s.
const DELIVERY_LEASE_MS = 15_000;
const USER_AGENT = 'railyard-webhooks/0.1';

/** The wait before the next try after `failedTries` failed tries of the current round. */
export function retryDelayMs(failedTries: number): number {
  return Math.min(RETRY_DELAY_FIRST_MS * 2 ** Math.max(failedTries - 1, 0), RETRY_DELAY_MAX_MS);
}

/**
 * Kinds tried once, never retried: a TEST only checks the endpoint, and the answer to
 * INCOMING_PAYMENT.PENDING is a decision wanted now, not later.
 */
export const SENT_ONCE: ReadonlySet<string> = new Set(['TEST', 'INCOMING_PAYMENT.PENDING']);

export type DeliveryStatus = 'PENDING' | 'DELIVERED' | 'FAILED';
export type AttemptOutcome = 'SUCCEEDED' | 'DUPLICATE' | 'FAILED';
export type AttemptTrigger = 'EVENT' | 'REPLAY' | 'SEND_TEST';

/** What a receiver said: an HTTP status and body, or why nothing came back. */
export interface WebhookAnswer {
  status?: number;
  body?: string;
  error?: string;
}

export interface AnswerContext {
  deps: Deps;
  platformId: string;
  eventId: string;
  resourceId: string;
  answer: WebhookAnswer;
  /** Now on the platform's clock, after the answer came. */
  now: Date;
}

/**
 * Reads the answer to one webhook type, in the transaction that records the try. It may
 * settle the delivery's status (an answer a handshake understands counts as DELIVERED).
 */
export type AnswerHandler = (tx: Tx, context: AnswerContext) => Promise<DeliveryStatus | undefined>;

const ANSWER_HANDLERS = new Map<string, AnswerHandler>();

export function onWebhookAnswer(type: string, handler: AnswerHandler): void {
  if (ANSWER_HANDLERS.has(type)) throw new Error(`an answer handler for ${type} is already registered`);
  ANSWER_HANDLERS.set(type, handler);
}

/** The envelope's exact bytes, built the same way for every try from the stored event. */
function envelope(event: store.EventRow): Buffer {
  const text = `{"id":${JSON.stringify(event.id)},"type":${JSON.stringify(event.type)},"timestamp":${JSON.stringify(event.created_at)},"data":${event.data}}`;
  return Buffer.from(text, 'utf8');
}

function outcomeOf(result: PostResult): AttemptOutcome {
  const status = result.answer?.status;
  if (status === undefined) return 'FAILED';
  if (status >= 200 && status < 300) return 'SUCCEEDED';
  if (status === 409) return 'DUPLICATE';
  return 'FAILED';
}

function answerOf(result: PostResult): WebhookAnswer {
  if (result.answer === undefined) return { error: result.error ?? 'no answer' };
  return { status: result.answer.status, body: result.answer.body };
}

type SendResult = PostResult & { url?: string };

async function send(deps: Deps, target: store.WebhookTarget, body: Buffer, orderKey?: string): Promise<SendResult> {
  if (target.endpoint === undefined) return { error: 'no webhook endpoint is set', latencyMs: 0 };
  const headers = { 'content-type': 'application/json', 'user-agent': USER_AGENT };
  const result = await post(target.endpoint, body, headers, {
    timeoutMs: deps.config.webhookTimeoutMs ?? WEBHOOK_TIMEOUT_MS,
    orderKey,
    // Signed on the sender's thread, as the main thread has requests to serve.
    signature: { header: SIGNATURE_HEADER, privateKeyPem: target.privateKeyPem },
  });
  return { ...result, url: target.endpoint };
}

function attemptRow(
  delivery: Pick<store.DeliveryRow, 'id' | 'platform_id'>,
  number: number,
  trigger: string,
  startedAt: Date,
  result: SendResult,
  fault: 'drop' | 'duplicate' | null = null,
): store.AttemptRow {
  return {
    id: newId('WebhookAttempt'),
    platform_id: delivery.platform_id,
    delivery_id: delivery.id,
    number,
    trigger,
    url: result.url ?? null,
    started_at: iso(startedAt),
    latency_ms: result.latencyMs,
    response_status: result.answer?.status ?? null,
    response_excerpt: result.answer === undefined ? null : result.answer.body.slice(0, RESPONSE_EXCERPT_CHARS_MAX),
    error: result.error ?? null,
    outcome: outcomeOf(result),
    fault,
  };
}

function describeFailure(result: SendResult): string {
  return result.answer === undefined ? String(result.error) : `the receiver answered ${result.answer.status}`;
}

/** Raised by a try that failed and has another one coming: the job runner schedules it. */
class RetryLater extends Error {}

interface Prepared {
  delivery: store.DeliveryRow;
  event: store.EventRow;
  target: store.WebhookTarget;
}

const deliverJob = defineJob<{ deliveryId: string }>('webhook.deliver', {
  mode: 'external',
  leaseMs: DELIVERY_LEASE_MS,
  attemptsMax: DELIVERY_JOB_ATTEMPTS_MAX,
  retryDelayMs,
  prepare: (tx, job) => prepareTry(tx, job),
  run: (job, ctx, prepared) => tryDelivery(job, ctx, prepared as Prepared | undefined),
  orderKey: (prepared) => (prepared === undefined ? undefined : orderKeyOf((prepared as Prepared).delivery)),
});

/** The tries of one object's events keep their order (see tryDelivery). */
function orderKeyOf(delivery: store.DeliveryRow): string {
  return `${delivery.platform_id} ${delivery.resource_id}`;
}

/** In the claiming transaction: what the try sends, and where; nothing when the job has nothing to do. */
async function prepareTry(tx: Tx, job: Job<{ deliveryId: string }>): Promise<Prepared | undefined> {
  const delivery = await store.findDelivery(tx, job.platformId, job.payload.deliveryId);
  // A replay hands the delivery to a new job; an older job has nothing left to do.
  if (delivery === undefined || delivery.status !== 'PENDING' || delivery.job_id !== job.id) return undefined;
  const event = await store.findEvent(tx, delivery.id);
  if (event === undefined) throw new Error(`event ${delivery.id} of a delivery is missing`);
  return { delivery, event, target: await store.webhookTarget(tx, job.platformId) };
}

async function tryDelivery(
  job: Job<{ deliveryId: string }>,
  ctx: JobContext,
  prepared: Prepared | undefined,
): Promise<void> {
  if (prepared === undefined) return;
  const { deps } = ctx;
  const { delivery, event, target } = prepared;
  const fault = faultOf(delivery);
  const firstOfRound = delivery.round_trigger === 'EVENT';
  // Tries of one resource's events go out one after another, in the order they were started
  // (the events' order: a commit hands its deliveries over in that order, claims take due
  // jobs by due time and id, and none is handed over while an earlier one of its resource
  // waits for a claim), each once the one before has its answer; different resources go
  // side by side. A try that fails does not hold back the next one (its retry comes later,
  // out of order).
  const body = envelope(event);
  if (fault?.ruleId !== undefined && firstOfRound && delivery.attempts === 0)
    ctx.log.info(
      { faultRuleId: fault.ruleId, effect: fault.effect, deliveryId: delivery.id, eventType: delivery.type },
      'webhook fault rule fired',
    );
  const dropped = fault?.effect === 'drop' && firstOfRound && delivery.attempts === 0;
  const result: SendResult = dropped
    ? { error: `not sent: dropped by webhook fault rule ${fault.ruleId}`, latencyMs: 0, url: target.endpoint }
    : await send(deps, target, body, orderKeyOf(delivery));
  // A `duplicate` rule sends the try that reached the receiver once more, the same bytes.
  const duplicate =
    fault?.effect === 'duplicate' && firstOfRound && outcomeOf(result) !== 'FAILED'
      ? await send(deps, target, body, orderKeyOf(delivery))
      : undefined;
  const finished: FinishedTry = {
    job,
    ctx,
    delivery,
    result,
    ...(dropped ? { dropped } : {}),
    ...(duplicate !== undefined ? { duplicate } : {}),
    ...(fault !== undefined ? { fault } : {}),
  };
  // A try whose answer a handler reads is recorded alone, so a handler that fails fails
  // only its own try; the others are recorded together.
  const retry = ANSWER_HANDLERS.has(delivery.type)
    ? (await deps.db.transaction((tx) => recordTries(tx, [finished]), BACKGROUND))[0]
    : await recordWithOthers(deps.db, finished);
  if (retry !== undefined) throw new RetryLater(retry);
}

interface FinishedTry {
  job: Job<{ deliveryId: string }>;
  ctx: JobContext;
  delivery: store.DeliveryRow;
  result: SendResult;
  /** A fault rule kept the try from being sent (`drop`). */
  dropped?: boolean;
  /** The second copy a `duplicate` rule sent. */
  duplicate?: SendResult;
  fault?: DeliveryFault;
}

/**
 * Records finished tries, in one transaction: the attempts, each delivery's new status, and
 * each job's end unless the delivery is to be tried again. Returns, for each try, why it is
 * to be tried again (undefined when it is not).
 */
async function recordTries(tx: Tx, tries: readonly FinishedTry[]): Promise<(string | undefined)[]> {
  const clockOffsets = new Map<string, number>();
  const attempts: store.AttemptRow[] = [];
  const retries: (string | undefined)[] = [];
  for (const { job, ctx, delivery, result, dropped, duplicate, fault } of tries) {
    const { deps, platformId } = ctx;
    let clockOffset = clockOffsets.get(platformId);
    if (clockOffset === undefined) {
      clockOffset = await store.clockOffsetMs(tx, platformId);
      clockOffsets.set(platformId, clockOffset);
    }
    const now = platformNow(deps.clock, clockOffset);
    let status: DeliveryStatus = outcomeOf(result) === 'FAILED' ? 'FAILED' : 'DELIVERED';
    const handler = ANSWER_HANDLERS.get(delivery.type);
    if (handler !== undefined) {
      const context = {
        deps,
        platformId,
        eventId: delivery.id,
        resourceId: delivery.resource_id,
        answer: answerOf(result),
        now,
      };
      status = (await handler(tx, context)) ?? status;
    }
    let retry: string | undefined;
    if (status === 'FAILED' && !SENT_ONCE.has(delivery.type)) {
      const nextTryMs = now.getTime() + retryDelayMs(job.attempts + 1);
      if (nextTryMs <= Date.parse(delivery.round_started_at) + RETRY_WINDOW_MS) {
        status = 'PENDING';
        retry = describeFailure(result);
      }
    }
    const number = delivery.attempts + 1;
    attempts.push(attemptRow(delivery, number, delivery.round_trigger, ctx.now, result, dropped ? 'drop' : null));
    if (duplicate !== undefined)
      attempts.push(attemptRow(delivery, number + 1, delivery.round_trigger, ctx.now, duplicate, 'duplicate'));
    // Deliveries an `outOfOrder` rule held back for this one go now that it has had its try.
    if (delivery.attempts === 0)
      for (const heldId of fault?.releases ?? []) await releaseHeld(tx, platformId, heldId, now);
    await store.recordTry(tx, {
      id: delivery.id,
      status,
      attempts: number + (duplicate !== undefined ? 1 : 0),
      last_attempt_at: iso(ctx.now),
      delivered_at: status === 'DELIVERED' ? iso(now) : delivery.delivered_at,
      updated_at: iso(now),
    });
    if (retry === undefined) await ctx.markDone?.(tx);
    retries.push(retry);
  }
  await store.insertAttempts(tx, attempts);
  return retries;
}

/** Tries one record of finished tries carries at most (it holds the event loop while it runs). */
const TRIES_PER_RECORD_MAX = 64;

interface WaitingTry extends FinishedTry {
  recorded: (retry: string | undefined) => void;
  failed: (error: unknown) => void;
}

interface RecordQueue {
  tries: WaitingTry[];
  /** A record is on its way that has not yet taken the tries waiting. */
  scheduled: boolean;
}

/** Per store: the finished tries waiting for the next record. */
const recordQueues = new WeakMap<object, RecordQueue>();

/**
 * Records a finished try together with the others that finished meanwhile. The record of
 * each try used to be a transaction of its own; under load they were as many as the events,
 * each a place in the embedded store's queue of transactions that a request waited behind.
 */
function recordWithOthers(db: Deps['db'], finished: FinishedTry): Promise<string | undefined> {
  let queue = recordQueues.get(db);
  if (queue === undefined) {
    queue = { tries: [], scheduled: false };
    recordQueues.set(db, queue);
  }
  const waiting = queue;
  return new Promise((recorded, failed) => {
    waiting.tries.push({ ...finished, recorded, failed });
    if (!waiting.scheduled) {
      waiting.scheduled = true;
      void recordBatch(db, waiting);
    }
  });
}

async function recordBatch(db: Deps['db'], queue: RecordQueue): Promise<void> {
  let taken: WaitingTry[] | undefined;
  const take = () => {
    // The tries waiting when the transaction starts (those that finished while it queued
    // come along); beyond the bound, the rest go in a record of their own.
    taken = queue.tries.splice(0, TRIES_PER_RECORD_MAX);
    queue.scheduled = queue.tries.length > 0;
    if (queue.scheduled) void recordBatch(db, queue);
    return taken;
  };
  try {
    // note: PostgreSQL may run the function again (a serialization failure): the same tries.
    const retries = await db.transaction((tx) => recordTries(tx, taken ?? take()), BACKGROUND);
    for (const [i, waiting] of (taken ?? []).entries()) waiting.recorded(retries[i]);
  } catch (error) {
    // Nothing of the batch was recorded: each try is a failed job attempt, tried again later.
    for (const waiting of taken ?? take()) waiting.failed(error);
  }
}

/** In the event's transaction: a delivery and its first try, due now, when an endpoint is set. */
export async function scheduleDelivery(
  tx: Queryable,
  event: store.EventRow,
  now: Date,
  known?: store.WebhookTarget,
): Promise<void> {
  // `known`: the platform's target, read once in this transaction for several events.
  const target = known ?? (await store.webhookTarget(tx, event.platform_id));
  if (target.endpoint === undefined) return;
  const fault = target.faultRules === null ? undefined : await planDeliveryFault(tx, event, target.faultRules);
  const delivery: store.DeliveryRow = {
    id: event.id,
    platform_id: event.platform_id,
    type: event.type,
    resource_id: event.resource_id,
    status: 'PENDING',
    attempts: 0,
    job_id: null,
    round_started_at: event.created_at,
    round_trigger: 'EVENT',
    last_attempt_at: null,
    delivered_at: null,
    created_at: event.created_at,
    updated_at: event.created_at,
    fault: fault === undefined ? null : JSON.stringify(fault),
  };
  const heldMs =
    fault?.effect === 'delay'
      ? Math.round(fault.delaySeconds! * 1000)
      : fault?.effect === 'outOfOrder'
        ? OUT_OF_ORDER_HOLD_MAX_MS
        : 0;
  delivery.job_id = await deliverJob.schedule(tx, {
    platformId: event.platform_id,
    payload: { deliveryId: event.id },
    dueAt: new Date(now.getTime() + heldMs),
    now,
    // What the first try needs is at hand: this instance may send it right after the commit.
    ...(heldMs === 0
      ? { runHere: { prepared: { delivery, event, target } satisfies Prepared, clockOffsetMs: target.clockOffsetMs } }
      : {}),
  });
  await store.insertDelivery(tx, delivery);
}

/**
 * Sends a delivery an `outOfOrder` rule held back, now, if it was never tried: a new job takes
 * it over (the one due when the hold would have ended finds it handed over and does nothing).
 */
export async function releaseHeld(tx: Queryable, platformId: string, deliveryId: string, now: Date): Promise<void> {
  const held = await store.findDelivery(tx, platformId, deliveryId);
  if (held === undefined || held.status !== 'PENDING' || held.attempts !== 0) return;
  const jobId = await deliverJob.schedule(tx, { platformId, payload: { deliveryId }, dueAt: now, now });
  await store.updateDelivery(tx, deliveryId, { job_id: jobId, updated_at: iso(now) });
}

// ----------------------------------------------------------------------------- operations

/**
 * Sends a TEST webhook now and waits for the answer. It is kept in the outbox and the
 * delivery log like any other, but never retried. A 2xx answer is returned; any other
 * answer, or none, is a 400 WEBHOOK_DELIVERY_ERROR that carries what happened.
 */
export async function sendTestWebhook(ctx: Ctx) {
  const target = await store.webhookTarget(ctx.db.k, ctx.platformId);
  if (target.endpoint === undefined) {
    throw apiError(
      'WEBHOOK_ENDPOINT_NOT_SET',
      'This platform has no webhook endpoint; set webhookEndpoint with PATCH /config',
    );
  }
  const event: store.EventRow = {
    id: newId('Webhook'),
    platform_id: ctx.platformId,
    type: 'TEST',
    resource_id: ctx.platformId,
    data: '{}',
    created_at: iso(ctx.now),
  };
  const result = await send(ctx.deps, target, envelope(event));
  const outcome = outcomeOf(result);
  await ctx.db.transaction(async (tx) => {
    await store.insertEvent(tx, event);
    await store.insertDelivery(tx, {
      id: event.id,
      platform_id: ctx.platformId,
      type: 'TEST',
      resource_id: ctx.platformId,
      status: outcome === 'FAILED' ? 'FAILED' : 'DELIVERED',
      attempts: 1,
      job_id: null,
      round_started_at: event.created_at,
      round_trigger: 'SEND_TEST',
      last_attempt_at: event.created_at,
      delivered_at: outcome === 'FAILED' ? null : event.created_at,
      created_at: event.created_at,
      updated_at: event.created_at,
      fault: null,
    });
    await store.insertAttempt(tx, attemptRow(event, 1, 'SEND_TEST', ctx.now, result));
  });
  const url = target.endpoint;
  if (result.answer === undefined) {
    throw apiError('WEBHOOK_DELIVERY_ERROR', `The webhook endpoint gave no answer: ${result.error}`, {
      url,
      error: result.error,
    });
  }
  const { status, body } = result.answer;
  if (outcome !== 'SUCCEEDED') {
    throw apiError('WEBHOOK_DELIVERY_ERROR', `The webhook endpoint answered ${status}`, {
      url,
      response_status: status,
      response_body: body,
    });
  }
  return { url, response_status: status, response_body: body };
}

/** What a webhook fault rule did to a delivery, for the delivery log. */
function presentFault(row: store.DeliveryRow) {
  const fault = faultOf(row);
  if (fault?.ruleId === undefined || fault.effect === undefined) return {};
  return {
    fault: {
      ruleId: fault.ruleId,
      effect: fault.effect,
      ...(fault.delaySeconds !== undefined ? { delaySeconds: fault.delaySeconds } : {}),
      ...(fault.heldBehind !== undefined ? { heldBehind: fault.heldBehind } : {}),
    },
  };
}

/** Where a delivery stands: its status, tries, the times of its last and next try, and any fault rule on it. */
function deliveryState(row: store.DeliveryWithJob) {
  const nextAttemptDue = row.status === 'PENDING' && row.job_status === 'PENDING' && row.job_due_at_ms !== null;
  return {
    status: row.status as DeliveryStatus,
    attemptCount: row.attempts,
    ...(row.last_attempt_at !== null ? { lastAttemptAt: row.last_attempt_at } : {}),
    ...(nextAttemptDue ? { nextAttemptAt: iso(new Date(Number(row.job_due_at_ms))) } : {}),
    ...(row.delivered_at !== null ? { deliveredAt: row.delivered_at } : {}),
    ...presentFault(row),
  };
}

function presentDelivery(row: store.DeliveryWithJob) {
  return { id: row.id, type: row.type, resourceId: row.resource_id, createdAt: row.created_at, ...deliveryState(row) };
}

function presentAttempt(row: store.AttemptRow) {
  return {
    number: row.number,
    trigger: row.trigger as AttemptTrigger,
    startedAt: row.started_at,
    ...(row.url !== null ? { url: row.url } : {}),
    outcome: row.outcome as AttemptOutcome,
    ...(row.response_status !== null ? { responseStatus: row.response_status } : {}),
    ...(row.response_excerpt !== null ? { responseExcerpt: row.response_excerpt } : {}),
    ...(row.error !== null ? { error: row.error } : {}),
    latencyMs: row.latency_ms,
    ...(row.fault !== null ? { fault: row.fault as 'drop' | 'duplicate' } : {}),
  };
}

/**
 * Where the webhook of each event of `eventIds` stands (its delivery's status, tries, and the
 * times of its last and next try), for the events that have one: those recorded while the
 * platform had an endpoint.
 */
export async function deliveryStates(q: Queryable, platformId: string, eventIds: string[]) {
  const rows = await store.deliveriesWithJob(q, platformId, eventIds);
  return new Map(rows.map((row) => [row.id, deliveryState(row)] as const));
}

export async function listDeliveries(ctx: Ctx, filters: store.DeliveryFilters, page: PageRequest) {
  return toPage(await store.listDeliveries(ctx.db.k, ctx.platformId, filters, page), presentDelivery);
}

/**
 * Deliveries the platform's endpoint failed: not delivered, their latest try failed (an
 * error answer, a timeout, no answer, no endpoint set), the latest tries first.
 */
export async function failedDeliveries(ctx: Ctx, limit: number) {
  const rows = await store.failedDeliveries(ctx.db.k, ctx.platformId, limit);
  return rows.map((row) => ({
    deliveryId: row.id,
    type: row.type,
    resourceId: row.resource_id,
    status: row.status,
    attemptCount: Number(row.attempts),
    lastAttempt: {
      startedAt: row.started_at,
      ...(row.url !== null ? { url: row.url } : {}),
      ...(row.response_status !== null ? { responseStatus: Number(row.response_status) } : {}),
      ...(row.response_excerpt !== null ? { responseExcerpt: row.response_excerpt } : {}),
      ...(row.error !== null ? { error: row.error } : {}),
    },
  }));
}

export async function getDelivery(ctx: Ctx, id: string) {
  const row = await store.findDeliveryWithJob(ctx.db.k, ctx.platformId, id);
  if (row === undefined) throw apiError('REFERENCE_NOT_FOUND', `No webhook delivery ${id}`);
  const event = await store.findEvent(ctx.db.k, id);
  return {
    ...presentDelivery(row),
    envelope: JSON.parse(envelope(event!).toString('utf8')) as Record<string, unknown>,
    attempts: (await store.listAttempts(ctx.db.k, id)).map(presentAttempt),
  };
}

/**
 * The request a try of a delivery sends: the envelope's exact bytes and the headers. The
 * signature is made afresh over those bytes (ECDSA draws a new nonce each time, so it differs
 * from the one a try sent, and verifies the same way).
 */
export async function deliveryRequest(ctx: Ctx, id: string) {
  const delivery = await store.findDelivery(ctx.db.k, ctx.platformId, id);
  if (delivery === undefined) throw apiError('REFERENCE_NOT_FOUND', `No webhook delivery ${id}`);
  const event = await store.findEvent(ctx.db.k, id);
  const target = await store.webhookTarget(ctx.db.k, ctx.platformId);
  const body = envelope(event!);
  return {
    method: 'POST' as const,
    ...(target.endpoint !== undefined ? { url: target.endpoint } : {}),
    headers: {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      [SIGNATURE_HEADER]: signatureHeaderValue(target.privateKeyPem, body),
    },
    body: body.toString('utf8'),
  };
}

/**
 * Starts a new round of tries of a delivery, now: same envelope, same id, the same retry
 * rules from this moment. Refused while a try is under way (one try of a delivery at a time).
 */
export async function replayDelivery(ctx: Ctx, id: string) {
  await ctx.db.transaction(async (tx) => {
    const delivery = await store.findDelivery(tx, ctx.platformId, id);
    if (delivery === undefined) throw apiError('REFERENCE_NOT_FOUND', `No webhook delivery ${id}`);
    if ((await store.webhookTarget(tx, ctx.platformId)).endpoint === undefined) {
      throw apiError(
        'CONFLICT',
        'This platform has no webhook endpoint to replay to; set webhookEndpoint with PATCH /config',
      );
    }
    if (delivery.job_id !== null && (await store.lockJobStatus(tx, ctx.db.dialect, delivery.job_id)) === 'RUNNING') {
      throw apiError('CONFLICT', 'A try of this delivery is under way; replay it once the try has ended');
    }
    const now = iso(ctx.now);
    // Past this line the replay happens. The previous job, if still waiting, finds the
    // delivery handed over and does nothing.
    const jobId = await deliverJob.schedule(tx, {
      platformId: ctx.platformId,
      payload: { deliveryId: id },
      dueAt: ctx.now,
      now: ctx.now,
    });
    await store.updateDelivery(tx, id, {
      status: 'PENDING',
      job_id: jobId,
      round_started_at: now,
      round_trigger: 'REPLAY',
      updated_at: now,
    });
  });
  return getDelivery(ctx, id);
}
