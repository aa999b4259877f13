// Delayed work as rows. A job is due when the platform's sandbox clock passes its due time,
// so moving a platform's clock forward makes its jobs due at once. Jobs are claimed with
// FOR UPDATE SKIP LOCKED on PostgreSQL, so instances sharing a database never run one job
// twice at the same time; on the embedded store one process owns everything.

import { sql } from 'kysely';
import { iso } from '../clock.js';
import { afterCommit, type DialectName, type Queryable, type Tx } from '../db/index.js';
import type { Deps } from '../http/context.js';
import { newId } from '../ids.js';
import type { FastifyBaseLogger } from 'fastify';

export interface JobContext {
  deps: Deps;
  platformId: string;
  /** Now on the platform's clock. */
  now: Date;
  log: FastifyBaseLogger;
}

export interface Job<Payload> {
  id: string;
  kind: string;
  platformId: string;
  payload: Payload;
  /** Attempts made before this one. */
  attempts: number;
  dueAt: Date;
}

interface JobKindBase {
  /** How many attempts before the job is marked FAILED. */
  attemptsMax: number;
  /** Delay before attempt `attempt + 1` after attempt `attempt` failed. */
  retryDelayMs: (attempt: number) => number;
}

export interface TransactionalJobKind<Payload> extends JobKindBase {
  mode: 'transaction';
  /** Runs inside the transaction that also marks the job done: the effect happens once. */
  run: (tx: Tx, job: Job<Payload>, ctx: JobContext) => Promise<void>;
}

export interface ExternalJobKind<Payload> extends JobKindBase {
  mode: 'external';
  /** Runs outside any transaction (network calls); a crash mid-way retries it (at least once). */
  run: (job: Job<Payload>, ctx: JobContext) => Promise<void>;
  /** How long a claim holds before another instance may take the job over. */
  leaseMs: number;
}

export type JobKind<Payload> = TransactionalJobKind<Payload> | ExternalJobKind<Payload>;

const KINDS = new Map<string, JobKind<any>>();

// The runner of each store, keyed by the store's adapter (a database and its transactions
// share it), so that scheduling work due now can wake it once the work has committed.
const WAKERS = new WeakMap<object, () => void>();

/** Called by a JobRunner: `wake` runs after any transaction on `db` commits a job due now. */
export function onJobsDue(db: Queryable, wake: () => void): void {
  WAKERS.set(db.getExecutor().adapter, wake);
}

export interface JobDefinition<Payload> {
  kind: string;
  /** Schedules the job in the caller's transaction, due at `dueAt` of the platform's clock. */
  schedule(tx: Queryable, input: { platformId: string; payload: Payload; dueAt: Date; now: Date }): Promise<string>;
}

const defaultRetryDelayMs = (attempt: number) => Math.min(1000 * 2 ** attempt, 60_000);

type KindOptions<K> = Omit<K, 'attemptsMax' | 'retryDelayMs'> & Partial<JobKindBase>;

export function defineJob<Payload>(
  kind: string,
  options: KindOptions<TransactionalJobKind<Payload>> | KindOptions<ExternalJobKind<Payload>>,
): JobDefinition<Payload> {
  if (KINDS.has(kind)) throw new Error(`job kind ${kind} defined twice`);
  KINDS.set(kind, { attemptsMax: 5, retryDelayMs: defaultRetryDelayMs, ...options } as JobKind<Payload>);
  return {
    kind,
    async schedule(tx, input) {
      const id = newId('Job');
      const now = iso(input.now);
      await tx
        .insertInto('jobs')
        .values({
          id,
          platform_id: input.platformId,
          kind,
          payload: JSON.stringify(input.payload),
          due_at_ms: input.dueAt.getTime(),
          status: 'PENDING',
          attempts: 0,
          locked_by: null,
          locked_until_ms: null,
          last_error: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
      if (input.dueAt.getTime() <= input.now.getTime()) {
        const wake = WAKERS.get(tx.getExecutor().adapter);
        if (wake !== undefined) afterCommit(tx, wake);
      }
      return id;
    },
  };
}

export function jobKind(kind: string): JobKind<unknown> | undefined {
  return KINDS.get(kind);
}

export interface ClaimedRow {
  id: string;
  kind: string;
  platform_id: string;
  payload: string;
  due_at_ms: string | number;
  attempts: number;
  clock_offset_ms: string | number;
}

/**
 * The next job that is due (or whose claim has lapsed), locked for this transaction.
 * `wallNowMs` is the wall clock; each platform adds its own offset.
 */
export async function claimNext(tx: Tx, dialect: DialectName, wallNowMs: number, platformId?: string): Promise<ClaimedRow | undefined> {
  const platformFilter = platformId === undefined ? sql`` : sql`AND j.platform_id = ${platformId}`;
  const lock = dialect === 'postgres' ? sql`FOR UPDATE OF j SKIP LOCKED` : sql``;
  const result = await sql<ClaimedRow>`
    SELECT j.id, j.kind, j.platform_id, j.payload, j.due_at_ms, j.attempts, p.clock_offset_ms
    FROM jobs j JOIN platforms p ON p.id = j.platform_id
    WHERE (j.status = 'PENDING' OR (j.status = 'RUNNING' AND j.locked_until_ms < ${wallNowMs}))
      AND j.due_at_ms <= ${wallNowMs} + p.clock_offset_ms
      ${platformFilter}
    ORDER BY j.due_at_ms, j.id
    LIMIT 1
    ${lock}`.execute(tx);
  return result.rows[0];
}

export async function markDone(tx: Queryable, id: string, now: Date): Promise<void> {
  await tx.updateTable('jobs').set({ status: 'DONE', locked_by: null, locked_until_ms: null, updated_at: iso(now) }).where('id', '=', id).execute();
}

export async function markRunning(tx: Queryable, id: string, instanceId: string, lockedUntilMs: number, now: Date): Promise<void> {
  await tx
    .updateTable('jobs')
    .set({ status: 'RUNNING', locked_by: instanceId, locked_until_ms: lockedUntilMs, updated_at: iso(now) })
    .where('id', '=', id)
    .execute();
}

/** Records a failed attempt: retried after a delay, or FAILED once the attempts run out. */
export async function markFailedAttempt(
  tx: Queryable,
  row: ClaimedRow,
  kind: JobKind<unknown> | undefined,
  error: string,
  platformNowMs: number,
  now: Date,
): Promise<void> {
  const attempts = row.attempts + 1;
  const giveUp = kind === undefined || attempts >= kind.attemptsMax;
  await tx
    .updateTable('jobs')
    .set({
      status: giveUp ? 'FAILED' : 'PENDING',
      attempts,
      due_at_ms: giveUp ? Number(row.due_at_ms) : platformNowMs + kind!.retryDelayMs(attempts),
      locked_by: null,
      locked_until_ms: null,
      last_error: error.slice(0, 2000),
      updated_at: iso(now),
    })
    .where('id', '=', row.id)
    .execute();
}

export function toJob<Payload>(row: ClaimedRow): Job<Payload> {
  return {
    id: row.id,
    kind: row.kind,
    platformId: row.platform_id,
    payload: JSON.parse(row.payload) as Payload,
    attempts: row.attempts,
    dueAt: new Date(Number(row.due_at_ms)),
  };
}
