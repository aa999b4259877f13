// Resetting a platform: every row the platform owns goes, except its credentials and its
// configuration, so the tenant starts over with the same client id, secret, settings,
// webhook endpoint and signing keys. Other platforms are not touched.
//
// Which tables hold what is read from the store's own catalogue at the first reset: a table
// with a platform_id column belongs to a platform, and a table without one that references
// such a table (customer_import_errors) goes with its parent. Only the tables named in
// KEPT_TABLES stay, so a table added by a later migration is wiped without anyone having to
// remember this file; the deletions run children first, following the foreign keys.
//
// What a reset guarantees while the platform is in use (docs/reset-and-seed.md):
// - It is one transaction. On the embedded store transactions run one at a time, so no
//   request or job of any platform interleaves with it. On PostgreSQL it first takes an
//   ACCESS EXCLUSIVE lock on every table it wipes: it waits for every transaction that has
//   read or written them (on any instance) to end, and holds back every new one until it
//   commits. A payment, a job or a request therefore happens wholly before the reset or
//   wholly after it, never half on each side. The price is a pause of the store's traffic
//   (all platforms) for the milliseconds of the wipe; a lock not granted within
//   LOCK_WAIT_MS answers 409 CONFLICT and changes nothing.
// - Work that runs outside a transaction (a webhook try waiting for its receiver's answer, a
//   CSV import between two rows, the approval webhook of an incoming payment) holds a lease
//   on its job row. A job of the platform under a live lease makes the reset wait, up to
//   JOBS_WAIT_MS, for it to end; if it is still running then, the answer is 409 CONFLICT
//   naming the jobs, and nothing changed. On the embedded store only this process can be
//   running jobs, so a RUNNING row another process left behind (it died) does not count.

import { setTimeout as sleep } from 'node:timers/promises';
import { platformNow } from '../clock.js';
import { sql, type Db, type Tx } from '../db/index.js';
import type { Deps } from '../http/deps.js';
import { apiError } from '../http/errors.js';
import { provisionInternalAccounts } from '../modules/internal-accounts/service.js';

/**
 * What a reset keeps: the platform's row (name, configuration, settings, sandbox clock,
 * webhook signing keys), its API tokens, and its embedded-wallet signing organization.
 */
export const KEPT_TABLES: ReadonlySet<string> = new Set(['platforms', 'api_tokens', 'wallet_orgs']);

/**
 * Ledger accounts that stay: the platform's system accounts (the world outside railyard,
 * fees, FX, suspense, stablecoin reserve and supply). Their balance is the sum of their
 * entries, so they are at zero once the entries are gone, and the ledger assumes an account
 * it opened once exists for good (it remembers that per process). The ledger accounts of
 * internal accounts go with them.
 */
const LEDGER_KIND_WIPED = 'INTERNAL';

/** How long a reset waits for jobs of the platform that run under a lease to end. */
export const JOBS_WAIT_MS = 5_000;
/** How long a reset waits for the table locks on PostgreSQL. */
export const LOCK_WAIT_MS = 5_000;
const JOBS_POLL_MS = 50;

interface WipeStep {
  table: string;
  /** Deletes rows of the platform (platform_id), or rows whose `column` names a row of `parent` that is the platform's. */
  via?: { column: string; parent: string; parentColumn: string };
}

export interface ResetResult {
  platformId: string;
  /** Rows deleted, by table (tables with none left out). */
  removed: Record<string, number>;
  /** The platform's internal accounts, opened anew (new ids, zero balances). */
  internalAccountIds: string[];
}

interface Catalogue {
  columns: { table_name: string; column_name: string }[];
  keys: { child: string; parent: string; from_col: string; to_col: string }[];
}

async function readCatalogue(db: Db): Promise<Catalogue> {
  if (db.dialect === 'sqlite') {
    const columns = await sql<Catalogue['columns'][number]>`
      SELECT m.name AS table_name, p.name AS column_name
      FROM sqlite_master m JOIN pragma_table_info(m.name) p
      WHERE m.type = 'table'`.execute(db.k);
    const keys = await sql<Catalogue['keys'][number]>`
      SELECT m.name AS child, f."table" AS parent, f."from" AS from_col, f."to" AS to_col
      FROM sqlite_master m JOIN pragma_foreign_key_list(m.name) f
      WHERE m.type = 'table'`.execute(db.k);
    return { columns: columns.rows, keys: keys.rows };
  }
  const columns = await sql<Catalogue['columns'][number]>`
    SELECT table_name, column_name FROM information_schema.columns
    WHERE table_schema = current_schema()`.execute(db.k);
  const keys = await sql<Catalogue['keys'][number]>`
    SELECT cl.relname AS child, pcl.relname AS parent, a.attname AS from_col, af.attname AS to_col
    FROM pg_constraint c
    JOIN pg_class cl ON cl.oid = c.conrelid
    JOIN pg_class pcl ON pcl.oid = c.confrelid
    JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
    JOIN pg_attribute af ON af.attrelid = c.confrelid AND af.attnum = c.confkey[1]
    WHERE c.contype = 'f' AND c.connamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())`.execute(
    db.k,
  );
  return { columns: columns.rows, keys: keys.rows };
}

/** The tables a reset wipes, children before parents. */
export function planWipe(catalogue: Catalogue): WipeStep[] {
  const tables = new Map<string, Set<string>>();
  for (const { table_name, column_name } of catalogue.columns) {
    if (table_name.startsWith('kysely_') || table_name.startsWith('sqlite_')) continue;
    const columns = tables.get(table_name) ?? new Set<string>();
    columns.add(column_name);
    tables.set(table_name, columns);
  }
  const steps = new Map<string, WipeStep>();
  for (const [table, columns] of tables)
    if (columns.has('platform_id') && !KEPT_TABLES.has(table)) steps.set(table, { table });
  for (const [table, columns] of tables) {
    if (columns.has('platform_id') || KEPT_TABLES.has(table)) continue;
    const key = catalogue.keys.find(
      (k) => k.child === table && steps.has(k.parent) && steps.get(k.parent)!.via === undefined,
    );
    if (key !== undefined)
      steps.set(table, { table, via: { column: key.from_col, parent: key.parent, parentColumn: key.to_col } });
  }
  // Children first: a table is deleted once every table that references it is done.
  const order: WipeStep[] = [];
  const left = new Set(steps.keys());
  while (left.size > 0) {
    const ready = [...left]
      .filter((table) => !catalogue.keys.some((k) => k.parent === table && k.child !== table && left.has(k.child)))
      .sort();
    if (ready.length === 0) throw new Error(`reset: foreign keys form a cycle among ${[...left].join(', ')}`);
    for (const table of ready) {
      order.push(steps.get(table)!);
      left.delete(table);
    }
  }
  return order;
}

// The schema changes only through migrations at start-up, so the plan is read once per store.
const PLANS = new WeakMap<Db, Promise<WipeStep[]>>();

function planFor(db: Db): Promise<WipeStep[]> {
  let plan = PLANS.get(db);
  if (plan === undefined) {
    plan = readCatalogue(db).then(planWipe);
    plan.catch(() => PLANS.delete(db));
    PLANS.set(db, plan);
  }
  return plan;
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

async function wipeOnce(deps: Deps, platformId: string, plan: WipeStep[]): Promise<ResetResult> {
  const { db } = deps;
  return db.transaction(async (tx) => {
    if (db.dialect === 'postgres') {
      await sql.raw(`SET LOCAL lock_timeout = '${LOCK_WAIT_MS}ms'`).execute(tx);
      const tables = plan.map((step) => step.table).sort();
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

    const removed: Record<string, number> = {};
    for (const step of plan) {
      const where =
        step.via === undefined
          ? sql`platform_id = ${platformId}`
          : sql`${sql.ref(step.via.column)} IN (SELECT ${sql.ref(step.via.parentColumn)} FROM ${sql.table(step.via.parent)} WHERE platform_id = ${platformId})`;
      const kind = step.table === 'ledger_accounts' ? sql` AND kind = ${LEDGER_KIND_WIPED}` : sql``;
      const result = await sql`DELETE FROM ${sql.table(step.table)} WHERE ${where}${kind}`.execute(tx);
      const count = Number(result.numAffectedRows ?? 0n);
      if (count > 0) removed[step.table] = count;
    }
    // A new platform has an internal account per supported currency: so does a reset one.
    const now = platformNow(deps.clock, Number(platform.clock_offset_ms));
    const internalAccountIds = await provisionInternalAccounts(tx, { platformId, customerId: null, now });
    return { platformId, removed, internalAccountIds };
  });
}

/**
 * Deletes everything the platform owns but its credentials and configuration (see the
 * top of this file for what it guarantees). 404 REFERENCE_NOT_FOUND for an unknown
 * platform; 409 CONFLICT when jobs of the platform keep running or the store stays busy.
 */
export async function resetPlatform(
  deps: Deps,
  platformId: string,
  options: { jobsWaitMs?: number } = {},
): Promise<ResetResult> {
  const plan = await planFor(deps.db);
  const deadline = performance.now() + (options.jobsWaitMs ?? JOBS_WAIT_MS);
  for (;;) {
    try {
      const result = await wipeOnce(deps, platformId, plan);
      // Cached credentials stay right (tokens and settings are kept), but nothing cached
      // about the platform's past should outlive it.
      deps.authCache?.clear();
      return result;
    } catch (err) {
      if ((err as { code?: string }).code === '55P03')
        throw apiError('CONFLICT', `The store stayed busy for ${LOCK_WAIT_MS} ms; nothing was reset, try again`, {
          reason: 'STORE_BUSY',
        });
      if (!(err instanceof JobsRunning)) throw err;
      if (performance.now() >= deadline)
        throw apiError(
          'CONFLICT',
          `Jobs of this platform are running (${err.jobs.map((j) => j.kind).join(', ')}); nothing was reset, try again once they end`,
          { reason: 'JOBS_RUNNING', jobs: err.jobs },
        );
      await sleep(JOBS_POLL_MS);
    }
  }
}
