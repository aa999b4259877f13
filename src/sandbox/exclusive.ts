// One transaction that replaces a platform's state (a reset, a snapshot's restore), run so
// that nothing of the platform happens half before and half after it (docs/reset-and-seed.md,
// docs/snapshots.md):
// - Requests: the platform's requests on this process are let finish first, and new ones wait
//   until it has committed (http/platform-gate.ts).
// - Transactions: on the embedded store transactions run one at a time, so no request or job
//   of any platform interleaves with it. On PostgreSQL it first takes an ACCESS EXCLUSIVE
//   lock on every table it changes: it waits for every transaction that has read or written
//   them (on any instance) to end, and holds back every new one until it commits. The price is
//   a pause of the store's traffic (all platforms) for its milliseconds; a lock not granted
//   within LOCK_WAIT_MS answers 409 CONFLICT and changes nothing.
// - Work outside transactions (a webhook try waiting for its receiver's answer, a CSV import
//   between two rows, the approval webhook of an incoming payment) holds a lease on its job
//   row. A job of the platform under a live lease makes it wait, up to JOBS_WAIT_MS, for it to
//   end; if it is still running then, the answer is 409 CONFLICT naming the jobs, and nothing
//   changed. On the embedded store only this process can be running jobs, so a RUNNING row
//   another process left behind (it died) does not count.

import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { sql, type Tx } from '../db/index.js';
import type { Deps } from '../http/context.js';
import { apiError } from '../http/errors.js';

/** How long the work waits for jobs of the platform that run under a lease to end. */
export const JOBS_WAIT_MS = 5_000;
/** How long the work waits for the table locks on PostgreSQL. */
export const LOCK_WAIT_MS = 5_000;
const JOBS_POLL_MS = 50;

export interface ExclusiveOptions {
  /** The tables the transaction changes (locked on PostgreSQL). */
  tables: string[];
  /** What the work is, for the refusals: "reset", "restored". */
  done: string;
  jobsWaitMs?: number;
  /** The request asking for the work, when a request of the platform asks. */
  request?: FastifyRequest | undefined;
  log?: FastifyBaseLogger | undefined;
}

export interface PlatformState {
  clockOffsetMs: number;
}

class JobsRunning extends Error {
  constructor(readonly jobs: { id: string; kind: string }[]) {
    super(`${jobs.length} job(s) of the platform are running`);
  }
}

/** Jobs of the platform that run outside a transaction right now, somewhere. */
async function runningJobs(tx: Tx, deps: Deps, platformId: string): Promise<{ id: string; kind: string }[]> {
  const rows = await tx
    .selectFrom('jobs')
    .select(['id', 'kind', 'locked_by', 'locked_until_ms'])
    .where('platform_id', '=', platformId)
    .where('status', '=', 'RUNNING')
    .execute();
  const wallNowMs = deps.clock.nowMs();
  // note: one process owns the embedded store, so only its own runner can be running
  // anything; a RUNNING row of another instance id is what a dead process left.
  const live =
    deps.db.dialect === 'sqlite'
      ? rows.filter((row) => deps.jobs !== undefined && row.locked_by === deps.jobs.instanceId)
      : rows.filter((row) => row.locked_until_ms !== null && Number(row.locked_until_ms) >= wallNowMs);
  return live.map((row) => ({ id: row.id, kind: row.kind }));
}

async function once<T>(
  deps: Deps,
  platformId: string,
  options: ExclusiveOptions,
  work: (tx: Tx, platform: PlatformState) => Promise<T>,
): Promise<T> {
  const { db } = deps;
  return db.transaction(async (tx) => {
    if (db.dialect === 'postgres') {
      await sql.raw(`SET LOCAL lock_timeout = '${LOCK_WAIT_MS}ms'`).execute(tx);
      const tables = [...options.tables].sort();
      await sql`LOCK TABLE ${sql.join(tables.map((t) => sql.table(t)))} IN ACCESS EXCLUSIVE MODE`.execute(tx);
    }
    const platform = await tx
      .selectFrom('platforms')
      .select('clock_offset_ms')
      .where('id', '=', platformId)
      .executeTakeFirst();
    if (platform === undefined) throw apiError('REFERENCE_NOT_FOUND', `No platform ${platformId}`);
    const running = await runningJobs(tx, deps, platformId);
    if (running.length > 0) throw new JobsRunning(running);
    return work(tx, { clockOffsetMs: Number(platform.clock_offset_ms) });
  });
}

/**
 * Runs `work` in one transaction that nothing of the platform interleaves with (see the top
 * of this file). 404 REFERENCE_NOT_FOUND for an unknown platform; 409 CONFLICT when jobs of
 * the platform keep running or the store stays busy.
 */
export async function platformExclusive<T>(
  deps: Deps,
  platformId: string,
  options: ExclusiveOptions,
  work: (tx: Tx, platform: PlatformState) => Promise<T>,
): Promise<T> {
  const attempt = async (): Promise<T> => {
    const deadline = performance.now() + (options.jobsWaitMs ?? JOBS_WAIT_MS);
    for (;;) {
      try {
        return await once(deps, platformId, options, work);
      } catch (err) {
        if ((err as { code?: string }).code === '55P03')
          throw apiError(
            'CONFLICT',
            `The store stayed busy for ${LOCK_WAIT_MS} ms; nothing was ${options.done}, try again`,
            { reason: 'STORE_BUSY' },
          );
        if (!(err instanceof JobsRunning)) throw err;
        if (performance.now() >= deadline)
          throw apiError(
            'CONFLICT',
            `Jobs of this platform are running (${err.jobs.map((j) => j.kind).join(', ')}); nothing was ${options.done}, try again once they end`,
            { reason: 'JOBS_RUNNING', jobs: err.jobs },
          );
        await sleep(JOBS_POLL_MS);
      }
    }
  };
  const gate = deps.gate;
  if (gate === undefined) return attempt();
  return gate.exclusive(platformId, options.request, options.log, attempt);
}
