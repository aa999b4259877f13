// Delayed work as rows. A job is due when the platform's sandbox clock passes its due time,
// so moving a platform's clock forward makes its jobs due at once. Jobs are claimed with
// FOR UPDATE SKIP LOCKED on PostgreSQL, so instances sharing a database never run one job
// twice at the same time; on the embedded store one process owns everything.

import { sql } from 'kysely';
import { iso, systemClock } from '../clock.js';
import { afterCommit, afterRollback, type DialectName, type Queryable, type Tx } from '../db/index.js';
import { notify } from '../db/notify.js';
import { prepare } from '../db/prepared.js';
import type { Deps } from '../http/deps.js';
import { newId } from '../ids.js';
import type { FastifyBaseLogger } from 'fastify';

export interface JobContext {
  deps: Deps;
  platformId: string;
  /** Now on the platform's clock. */
  now: Date;
  log: FastifyBaseLogger;
  /**
   * External jobs only: marks the job DONE inside the caller's transaction (so the end of
   * the work and the end of the job commit together); the runner then leaves it alone.
   */
  markDone?: (tx: Queryable) => Promise<void>;
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
  /**
   * Optional: reads what the run needs inside the transaction that claims the job, so the
   * run can start at once (on the embedded store a read outside waits its turn behind the
   * requests' transactions). Its result is the run's third argument.
   */
  prepare?: (tx: Tx, job: Job<Payload>) => Promise<unknown>;
  /** Runs outside any transaction (network calls); a crash mid-way retries it (at least once). */
  run: (job: Job<Payload>, ctx: JobContext, prepared: unknown) => Promise<void>;
  /**
   * Optional: the key of the jobs whose first runs must start in the order they were
   * scheduled (by one instance), from what `prepare` returned. The runner then never hands a
   * job over at scheduling while an earlier one of its key still waits for a claim.
   */
  orderKey?: (prepared: unknown) => string | undefined;
  /** How long a claim holds before another instance may take the job over. */
  leaseMs: number;
}

export type JobKind<Payload> = TransactionalJobKind<Payload> | ExternalJobKind<Payload>;

// biome-ignore lint/suspicious/noExplicitAny: each kind has a payload type of its own
const KINDS = new Map<string, JobKind<any>>();

/** What the job runner of a store offers to scheduling (see JobRunner). */
export interface RunnerHandle {
  instanceId: string;
  /** Look for due work now (called after a commit that scheduled some). */
  wake(): void;
  /** A job committed to fall due at this wall-clock moment: wake then at the latest. */
  dueAt(wallMs: number): void;
  /** True while the runner works in the background (it then hears of this process's work). */
  inBackground(): boolean;
  /**
   * True when the runner takes this external job now (it runs in the background, has room,
   * and no earlier job of the same order key waits for a claim or is about to); false
   * leaves it to a claim.
   */
  adopting(orderKey: string | undefined): boolean;
  /**
   * Takes the next place in the line of `orderKey`, for a job written in the scheduling
   * transaction (after the lock of the row the key stands for); `leaves` when the job is
   * left for a claim (from its turn on, if its transaction committed, later jobs of its key
   * are left too until a claim takes it). Answers the function that settles the place once
   * the transaction has ended: with what to run once every earlier place in the line is
   * settled, or with nothing when the transaction rolled back.
   */
  takePlace(orderKey: string, leaves: boolean): (go: (() => void) | undefined) => void;
  /** The wall clock, for leases. */
  wallNowMs(): number;
  /** Runs an external job this instance claimed when it was scheduled. */
  adopt(row: ClaimedRow, prepared: unknown): void;
}

// The runner of each store, keyed by the store's adapter (a database and its transactions
// share it), so that scheduling work due now can reach it once the work has committed.
const RUNNERS = new WeakMap<object, RunnerHandle>();

/** Called by a JobRunner for the store it runs jobs of. */
export function registerRunner(db: Queryable, runner: RunnerHandle): void {
  RUNNERS.set(db.getExecutor().adapter, runner);
}

/** The notification channel of new work (db/notify.ts): a wall-clock due time, or `now`. */
export const JOBS_CHANNEL = 'jobs';

/**
 * Tells the runners of the store, once `q`'s transaction commits, that work falls due at
 * `wallDueMs` (wall clock), or that they should look now (`now`: work due now, or due times
 * that moved, as when a platform's clock advances). The runner of this process hears it
 * directly; the other processes on PostgreSQL hear it only while no runner works in the
 * background here: one that does runs this process's work itself, and a notification for
 * each job scheduled under load would have every other instance look at the store for work
 * already taken.
 */
export function announceJobs(q: Queryable, wallDueMs: number | 'now'): void {
  const runner = RUNNERS.get(q.getExecutor().adapter);
  if (runner !== undefined) afterCommit(q, () => (wallDueMs === 'now' ? runner.wake() : runner.dueAt(wallDueMs)));
  if (runner?.inBackground() !== true) notify(q, JOBS_CHANNEL, String(wallDueMs));
}

export interface ScheduleInput<Payload> {
  platformId: string;
  payload: Payload;
  dueAt: Date;
  now: Date;
  /**
   * External kinds, due now: what the run needs (as `prepare` would return it) and the
   * platform's clock offset. When this process's runner works in the background, the job is
   * written already claimed by it (leased) and handed to it after the commit, with no claim
   * in between; if the process dies first, the lease lapses and any instance takes it over.
   */
  runHere?: { prepared: unknown; clockOffsetMs: number };
}

export interface JobDefinition<Payload> {
  kind: string;
  /** Schedules the job in the caller's transaction, due at `dueAt` of the platform's clock. */
  schedule(tx: Queryable, input: ScheduleInput<Payload>): Promise<string>;
}

// Every scheduled job runs this insert; prepared once (see db/prepared.ts).
const insertJob = prepare<{
  id: string;
  platform_id: string;
  kind: string;
  payload: string;
  due_at_ms: number;
  status: string;
  locked_by: string | null;
  locked_until_ms: number | null;
  created_at: string;
}>(
  (k, param) =>
    k.insertInto('jobs').values({
      id: param('id'),
      platform_id: param('platform_id'),
      kind: param('kind'),
      payload: param('payload'),
      due_at_ms: param('due_at_ms'),
      status: param('status'),
      attempts: 0,
      locked_by: param('locked_by'),
      locked_until_ms: param('locked_until_ms'),
      last_error: null,
      created_at: param('created_at'),
      updated_at: param('created_at'),
    }),
  // A new job has a fresh id and nothing reads it back in its transaction: on PostgreSQL it
  // travels with the transaction's next statement (db/deferred.ts) instead of costing a trip
  // of its own (three more per transfer-out when the platform has a webhook endpoint).
  { deferred: true },
);

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
      const definition = KINDS.get(kind)!;
      const runner = RUNNERS.get(tx.getExecutor().adapter);
      const dueNow = input.dueAt.getTime() <= input.now.getTime();
      const orderKey =
        input.runHere !== undefined && definition.mode === 'external'
          ? definition.orderKey?.(input.runHere.prepared)
          : undefined;
      const adopt =
        input.runHere !== undefined && dueNow && definition.mode === 'external' && runner?.adopting(orderKey) === true;
      const payload = JSON.stringify(input.payload);
      await insertJob.run(tx, {
        id,
        platform_id: input.platformId,
        kind,
        payload,
        due_at_ms: input.dueAt.getTime(),
        status: adopt ? 'RUNNING' : 'PENDING',
        locked_by: adopt ? runner!.instanceId : null,
        locked_until_ms: adopt ? runner!.wallNowMs() + (definition as ExternalJobKind<Payload>).leaseMs : null,
        created_at: now,
      });
      if (adopt) {
        const row: ClaimedRow = {
          id,
          kind,
          platform_id: input.platformId,
          payload,
          due_at_ms: input.dueAt.getTime(),
          attempts: 0,
          clock_offset_ms: input.runHere!.clockOffsetMs,
        };
        whenCommitted(tx, runner!, orderKey, false, () => runner!.adopt(row, input.runHere!.prepared));
      } else if (dueNow && runner !== undefined) {
        whenCommitted(tx, runner, orderKey, true, () => runner.wake());
      }
      if (!dueNow) {
        // Due later on the platform's clock: as much later on the wall clock.
        const wallNowMs = runner?.wallNowMs() ?? systemClock.nowMs();
        announceJobs(tx, wallNowMs + (input.dueAt.getTime() - input.now.getTime()));
      } else if (runner?.inBackground() !== true) {
        // Woken above if it runs here; the other processes' runners hear of it (announceJobs).
        notify(tx, JOBS_CHANNEL, 'now');
      }
      return id;
    },
  };
}

/**
 * Runs `go` once the scheduling transaction has committed. With an order key, also once
 * every job of that key scheduled before this one (by this instance) has had its turn: on
 * PostgreSQL, two transactions that took the same row's lock one after the other may see
 * their commits confirmed in the other order, when the first one's server process is slow
 * to answer. The place in line is taken here, inside the transaction, so it follows the
 * lock's order; a transaction that rolls back gives its place up.
 */
function whenCommitted(
  tx: Queryable,
  runner: RunnerHandle,
  orderKey: string | undefined,
  leaves: boolean,
  go: () => void,
) {
  if (orderKey === undefined) {
    afterCommit(tx, go);
    return;
  }
  const settle = runner.takePlace(orderKey, leaves);
  afterCommit(tx, () => settle(go));
  afterRollback(tx, () => settle(undefined));
}

/**
 * For a transaction that writes job rows other than through schedule() (a snapshot's restore
 * puts back the jobs it saved): once it commits, this process's runner looks for due work
 * again, as it does after a commit that scheduled some.
 */
export function jobsWritten(tx: Queryable): void {
  const runner = RUNNERS.get(tx.getExecutor().adapter);
  if (runner !== undefined) afterCommit(tx, () => runner.wake());
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
export async function claimNext(
  tx: Tx,
  dialect: DialectName,
  wallNowMs: number,
  platformId?: string,
): Promise<ClaimedRow | undefined> {
  return (await claimDue(tx, dialect, wallNowMs, { platformId, limit: 1 }))[0];
}

/** More due jobs of external kinds, locked for this transaction (claimed together with one). */
export async function claimDueExternal(
  tx: Tx,
  dialect: DialectName,
  wallNowMs: number,
  platformId: string | undefined,
  limit: number,
): Promise<ClaimedRow[]> {
  const kinds = [...KINDS].filter(([, kind]) => kind.mode === 'external').map(([name]) => name);
  if (kinds.length === 0 || limit <= 0) return [];
  return claimDue(tx, dialect, wallNowMs, { platformId, limit, kinds });
}

async function claimDue(
  tx: Tx,
  dialect: DialectName,
  wallNowMs: number,
  options: { platformId: string | undefined; limit: number; kinds?: string[] },
): Promise<ClaimedRow[]> {
  // note: one query per platform, each with a constant bound on due_at_ms (the wall clock
  // plus that platform's offset), so it reads only due rows through jobs_platform_due. A
  // single query that compares due_at_ms with a per-platform sum cannot use the index: on
  // PostgreSQL it scanned every pending job at each claim (6 ms with 18k quote expiries
  // waiting), and deliveries crawled.
  const platforms = await sql<{ id: string; offset: string }>`
    SELECT id, CAST(clock_offset_ms AS TEXT) AS ${sql.ref('offset')} FROM platforms
    ${options.platformId === undefined ? sql`` : sql`WHERE id = ${options.platformId}`}
    ORDER BY id`.execute(tx);
  const kindFilter = options.kinds === undefined ? sql`` : sql`AND j.kind IN (${sql.join(options.kinds)})`;
  const lock = dialect === 'postgres' ? sql`FOR UPDATE OF j SKIP LOCKED` : sql``;
  const claimed: ClaimedRow[] = [];
  for (const platform of platforms.rows) {
    const limit = options.limit - claimed.length;
    if (limit <= 0) break;
    const dueBy = wallNowMs + Number(platform.offset);
    const result = await sql<Omit<ClaimedRow, 'clock_offset_ms'>>`
      SELECT j.id, j.kind, j.platform_id, j.payload, j.due_at_ms, j.attempts
      FROM jobs j
      WHERE j.platform_id = ${platform.id}
        AND ((j.status = 'PENDING' AND j.due_at_ms <= ${dueBy})
          OR (j.status = 'RUNNING' AND j.due_at_ms <= ${dueBy} AND j.locked_until_ms < ${wallNowMs}))
        ${kindFilter}
      ORDER BY j.due_at_ms, j.id
      LIMIT ${limit}
      ${lock}`.execute(tx);
    for (const row of result.rows) claimed.push({ ...row, clock_offset_ms: platform.offset });
  }
  return claimed;
}

/**
 * The wall-clock moment at which the next job can be claimed, or undefined when no job waits:
 * the earliest due time of a pending job, each platform's offset taken off (its clock runs
 * ahead of the wall clock by that much), and on PostgreSQL also when the lease of a job
 * another instance runs lapses (claimNext then takes it over). One statement: a look at the
 * index per platform, and at the running jobs.
 */
export async function nextClaimableAtMs(
  q: Queryable,
  dialect: DialectName,
  instanceId: string,
): Promise<number | undefined> {
  const pending = sql`(SELECT MIN(d.at) FROM (
      SELECT (SELECT MIN(j.due_at_ms) FROM jobs j WHERE j.platform_id = p.id AND j.status = 'PENDING') - p.clock_offset_ms AS at
      FROM platforms p) d)`;
  // One process owns the embedded store: a running job there is this process's own.
  const lapsing =
    dialect === 'postgres'
      ? sql`(SELECT MIN(GREATEST(j.locked_until_ms + 1, j.due_at_ms - p.clock_offset_ms))
          FROM jobs j JOIN platforms p ON p.id = j.platform_id
          WHERE j.status = 'RUNNING' AND j.locked_by IS DISTINCT FROM ${instanceId})`
      : sql`NULL`;
  const row = (
    await sql<{ pending: string | null; lapsing: string | null }>`
      SELECT CAST(${pending} AS TEXT) AS ${sql.ref('pending')}, CAST(${lapsing} AS TEXT) AS ${sql.ref('lapsing')}`.execute(
      q,
    )
  ).rows[0];
  const times = [row?.pending, row?.lapsing].filter((at): at is string => at != null).map(Number);
  return times.length === 0 ? undefined : Math.min(...times);
}

/**
 * How many of the platform's state changes due by `dueByMs` (its clock) are not over yet: jobs
 * of the transaction kinds, pending (whether or not a transaction on any instance has claimed
 * them). Work over the network (external kinds: webhook deliveries, imports) is not counted:
 * it changes no payment, and a slow receiver must not hold the sandbox clock.
 */
export async function unfinishedDueChanges(q: Queryable, platformId: string, dueByMs: number): Promise<number> {
  const kinds = [...KINDS].filter(([, kind]) => kind.mode === 'transaction').map(([name]) => name);
  if (kinds.length === 0) return 0;
  const row = await q
    .selectFrom('jobs')
    .select(sql<string>`CAST(COUNT(*) AS TEXT)`.as('n'))
    .where('platform_id', '=', platformId)
    .where('status', 'in', ['PENDING', 'RUNNING'])
    .where('due_at_ms', '<=', dueByMs)
    .where('kind', 'in', kinds)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const markDoneStatement = prepare<{ id: string; updated_at: string }>((k, param) =>
  k
    .updateTable('jobs')
    .set({ status: 'DONE', locked_by: null, locked_until_ms: null, updated_at: param('updated_at') })
    .where('id', '=', param('id')),
);

export async function markDone(tx: Queryable, id: string, now: Date): Promise<void> {
  await markDoneStatement.run(tx, { id, updated_at: iso(now) });
}

export async function markRunning(
  tx: Queryable,
  id: string,
  instanceId: string,
  lockedUntilMs: number,
  now: Date,
): Promise<void> {
  await tx
    .updateTable('jobs')
    .set({ status: 'RUNNING', locked_by: instanceId, locked_until_ms: lockedUntilMs, updated_at: iso(now) })
    .where('id', '=', id)
    .execute();
}

/**
 * Extends the leases this instance holds on running jobs, so that a live instance keeps its
 * claim through a long try while a dead one's lapses soon: `leases` maps each job id to the
 * moment its lease should now end.
 */
export async function renewLeases(k: Queryable, instanceId: string, leases: Map<string, number>): Promise<void> {
  const byEnd = new Map<number, string[]>();
  for (const [id, until] of leases) byEnd.set(until, [...(byEnd.get(until) ?? []), id]);
  for (const [until, ids] of byEnd) {
    await k
      .updateTable('jobs')
      .set({ locked_until_ms: until })
      .where('id', 'in', ids)
      .where('locked_by', '=', instanceId)
      .where('status', '=', 'RUNNING')
      .execute();
  }
}

/**
 * Hands back every job a process left RUNNING. Only for the embedded store, which one process
 * owns: at its start no other process can be running anything, so whatever is RUNNING was
 * under way when the last one died and is due again now rather than when its lease ends.
 */
export async function releaseAbandonedJobs(k: Queryable, now: Date): Promise<number> {
  const result = await k
    .updateTable('jobs')
    .set({ status: 'PENDING', locked_by: null, locked_until_ms: null, updated_at: iso(now) })
    .where('status', '=', 'RUNNING')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
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
  const retryDelayMs = giveUp ? 0 : kind!.retryDelayMs(attempts);
  // The retry falls due as much later on the wall clock as on the platform's.
  if (!giveUp) announceJobs(tx, platformNowMs - Number(row.clock_offset_ms) + retryDelayMs);
  await tx
    .updateTable('jobs')
    .set({
      status: giveUp ? 'FAILED' : 'PENDING',
      attempts,
      due_at_ms: giveUp ? Number(row.due_at_ms) : platformNowMs + retryDelayMs,
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
