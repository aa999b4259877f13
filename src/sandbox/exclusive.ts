// One transaction that replaces a platform's state (a reset, a snapshot's restore), run so
// that nothing of the platform happens half before and half after it (docs/reset-and-seed.md,
// docs/snapshots.md):
// - Requests: the platform's requests on this process are let finish first, and new ones wait
//   until it has committed (http/platform-gate.ts).
// - Transactions: on the embedded store transactions run one at a time, so no request or job
//   of any platform interleaves with it. On PostgreSQL it first takes an EXCLUSIVE lock on
//   every table it changes: once it has them, no transaction that has written them or locked
//   rows of them (on any instance) is still running, and every new one that does waits until
//   it commits. So a payment or a job of the platform is wholly before or wholly after it.
//   Plain reads are not held back: they see the state before until it commits (one
//   statement sees one state; this process's reads of the platform wait at its gate, above).
//   The price is a pause of the store's writes (all platforms) for its milliseconds. It asks
//   for the locks in attempts short enough never to deadlock with anyone (lockTables says
//   why); locks not all had within LOCK_WAIT_MS answer 409 CONFLICT and change nothing.
// - Work outside transactions (a webhook try waiting for its receiver's answer, a CSV import
//   between two rows, the approval webhook of an incoming payment) holds a lease on its job
//   row. A job of the platform under a live lease makes it wait, up to JOBS_WAIT_MS, for it to
//   end; if it is still running then, the answer is 409 CONFLICT naming the jobs, and nothing
//   changed. On the embedded store only this process can be running jobs, so a RUNNING row
//   another process left behind (it died) does not count.

import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { sql, type Tx } from '../db/index.js';
import type { Deps } from '../http/deps.js';
import { apiError } from '../http/errors.js';

/** How long the work waits for jobs of the platform that run under a lease to end. */
export const JOBS_WAIT_MS = 5_000;
/** How long the work waits for the table locks on PostgreSQL. */
export const LOCK_WAIT_MS = 5_000;
const JOBS_POLL_MS = 50;
/** How long one attempt at the table locks may wait in all (see lockTables). */
const LOCK_ATTEMPT_MS = 300;
/** The pause before the next attempt at the locks: a few ms, drawn, so that two resets do not keep meeting. */
const lockRetryMs = () => 5 + Math.random() * 20;

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

/**
 * Takes an EXCLUSIVE lock on each table, waiting in PostgreSQL's lock queue (so that new
 * writers queue behind it and the tables drain) for at most LOCK_ATTEMPT_MS in all, and never
 * longer than half the server's deadlock_timeout. Past that the statement fails with 55P03,
 * which lets go of every lock taken so far, and the caller starts over a moment later.
 *
 * note: a plain LOCK TABLE of many tables takes them one after the other, each as long as it
 * takes; a transaction holding one it has not reached yet and waiting for one it has forms a
 * deadlock, and PostgreSQL aborts whichever of the two looks first, after deadlock_timeout of
 * waiting: often a request of another platform or another instance, which then failed with a
 * 500. Here every transaction that waits for one of these locks began to wait after the
 * attempt began, so the attempt has given up before any of them looks for a deadlock; and
 * once the locks are held, this transaction waits for nothing more. EXCLUSIVE rather than
 * ACCESS EXCLUSIVE: plain reads (which take ACCESS SHARE) neither wait for it nor hold it up,
 * so a steady flow of reads of several tables at once cannot keep it from its locks (with
 * ACCESS EXCLUSIVE, four clients listing in a loop kept a restore out for 5 s). One
 * statement (a DO block) does it all, in one round trip.
 */
async function lockTables(tx: Tx, tables: string[]): Promise<void> {
  const names = [...new Set(tables)].sort();
  for (const name of names) if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unexpected table name ${name}`);
  const list = names.map((name) => `'${name}'`).join(', ');
  await sql
    .raw(`DO $$
DECLARE
  name text;
  started timestamptz := clock_timestamp();
  budget interval;
  remaining interval;
BEGIN
  SELECT least(interval '${LOCK_ATTEMPT_MS} milliseconds', setting::int * interval '1 millisecond' / 2) INTO budget
    FROM pg_settings WHERE pg_settings.name = 'deadlock_timeout';
  FOREACH name IN ARRAY ARRAY[${list}]::text[] LOOP
    remaining := budget - (clock_timestamp() - started);
    IF remaining < interval '1 millisecond' THEN
      RAISE EXCEPTION 'railyard: the tables stayed in use' USING ERRCODE = 'lock_not_available';
    END IF;
    PERFORM set_config('lock_timeout', ceil(extract(epoch FROM remaining) * 1000)::int || 'ms', true);
    EXECUTE format('LOCK TABLE %I IN EXCLUSIVE MODE', name);
  END LOOP;
  PERFORM set_config('lock_timeout', '${LOCK_WAIT_MS}ms', true);
END
$$`)
    .execute(tx);
}

async function once<T>(
  deps: Deps,
  platformId: string,
  options: ExclusiveOptions,
  work: (tx: Tx, platform: PlatformState) => Promise<T>,
): Promise<T> {
  const { db } = deps;
  return db.transaction(async (tx) => {
    if (db.dialect === 'postgres') await lockTables(tx, options.tables);
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
    const started = performance.now();
    const deadline = started + (options.jobsWaitMs ?? JOBS_WAIT_MS);
    for (;;) {
      try {
        return await once(deps, platformId, options, work);
      } catch (err) {
        if ((err as { code?: string }).code === '55P03') {
          if (performance.now() - started >= LOCK_WAIT_MS)
            throw apiError(
              'CONFLICT',
              `The store stayed busy for ${LOCK_WAIT_MS} ms; nothing was ${options.done}, try again`,
              { reason: 'STORE_BUSY' },
            );
          await sleep(lockRetryMs());
          continue;
        }
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
