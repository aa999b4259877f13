// Snapshots of a platform (docs/snapshots.md): its whole state saved under a name, and brought
// back exactly, as many times as wanted.
//
// What a snapshot holds is every row the platform owns (platform-tables.ts reads which tables
// those are from the store's catalogue), but the tables named below, and the platform row's
// configuration, settings and sandbox time. Saving is one consistent read (on PostgreSQL a
// repeatable-read transaction). Restoring is one transaction that nothing of the platform
// interleaves with (exclusive.ts): the platform's rows go, the saved ones come back by column
// name, its configuration and settings are those of the save, and its clock reads again the
// instant of the save, so that the jobs saved (a 005 payout's failure, a quote's expiry, a
// webhook retry) fall due when they would have.

import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { iso, platformNow } from '../../clock.js';
import { isUniqueViolation, onPostgres, sql } from '../../db/index.js';
import { SCHEMA_VERSION } from '../../db/migrations.js';
import { forgetPlatformCore } from '../../db/platform-row.js';
import type { Deps } from '../../http/deps.js';
import { apiError } from '../../http/errors.js';
import { jobsWritten } from '../../jobs/queue.js';
import { syncFaultTags } from '../../faults/service.js';
import { platformExclusive } from '../exclusive.js';
import { type OwnedTable, type PlatformTables, platformTables } from '../platform-tables.js';
import { deletePlatformRows } from '../reset.js';
import * as store from './store.js';

/** How many snapshots one platform may keep. */
export const SNAPSHOTS_PER_PLATFORM_MAX = 50;
/** How many rows one snapshot may hold (a platform beyond it is refused with 409 TOO_LARGE). */
export const SNAPSHOT_ROWS_MAX = 200_000;

/**
 * Tables of the platform a snapshot leaves out, and why. A restore does not touch them: what
 * they hold stays as it is now. Test instrumentation (a request journal, fault rules) belongs
 * here too: it is the test's own set-up, not the platform's state, and a restore must not
 * undo it. test/sandbox/snapshot-tables.test.ts fails on a new table until it is placed.
 */
export const NOT_SNAPSHOTTED: Readonly<Record<string, string>> = {
  api_tokens: 'credentials: after a restore the platform keeps the tokens it has now',
  wallet_orgs: "the embedded-wallet signing organization's key pair: kept like the credentials",
  snapshots: 'the snapshots themselves',
  fault_rules: 'the fault rules on requests: the test sets them, a restore leaves them as they are',
  webhook_fault_rules: 'the fault rules on webhook deliveries: the test sets them, a restore leaves them as they are',
  request_journal: "the requests the app sent: a record of the test's traffic, which a restore does not rewrite",
};

/**
 * Tables a snapshot leaves out because the store derives them from other rows: a restore
 * empties them for the platform, and the triggers that keep them count the rows back.
 */
export const DERIVED: Readonly<Record<string, string>> = {
  list_counts: 'the counts behind the lists’ totalCount, kept by triggers on transactions (migration 0016)',
  transaction_counts: 'the count of transactions, kept by a trigger on transactions (migration 0008)',
};

/** Tables that are no platform's rows, and what a snapshot does with them. */
export const SHARED_TABLES: Readonly<Record<string, string>> = {
  platforms:
    'one row per platform: a snapshot keeps its configuration, settings and clock (not its id or webhook keys)',
  railyard_keys: "the server's own keys, the same for every platform",
};

/** The columns of the platform row a restore leaves as they are (the clock is set from the snapshot's time). */
const PLATFORM_COLUMNS_KEPT: ReadonlySet<string> = new Set([
  'id',
  'created_at',
  'webhook_private_key',
  'webhook_public_key',
  'clock_offset_ms',
  // The tag of its fault rules, which a restore leaves as they are (faults/service.ts).
  'fault_rules',
]);

export interface SnapshotTables {
  /** The tables a snapshot holds, children first. */
  saved: OwnedTable[];
  /** The tables a restore empties for the platform, children first (the saved ones and the derived ones). */
  replaced: OwnedTable[];
  /** Tables that are neither a platform's nor named in SHARED_TABLES: nobody has said what a snapshot does with them. */
  unplaced: string[];
}

export function snapshotTables(tables: PlatformTables): SnapshotTables {
  const replaced = tables.owned.filter((table) => NOT_SNAPSHOTTED[table.table] === undefined);
  return {
    saved: replaced.filter((table) => DERIVED[table.table] === undefined),
    replaced,
    unplaced: [...tables.others.keys()].filter((table) => SHARED_TABLES[table] === undefined).sort(),
  };
}

export interface SnapshotSummary {
  name: string;
  /** The platform's sandbox time at the save: the time a restore brings back. */
  createdAt: string;
  schemaVersion: string;
  sizeBytes: number;
  /** Rows held, by table (tables with none left out). */
  rows: Record<string, number>;
}

function present(row: store.SnapshotRow): SnapshotSummary {
  return {
    name: row.name,
    createdAt: row.created_at,
    schemaVersion: row.schema_version,
    sizeBytes: Number(row.size_bytes),
    rows: JSON.parse(row.row_counts) as Record<string, number>,
  };
}

function notFound(name: string) {
  return apiError('REFERENCE_NOT_FOUND', `This platform has no snapshot named ${name}`);
}

/** A job that was running at the save (a webhook try under way) is saved as waiting: it runs again after a restore. */
function settleRunningJobs(jobs: store.SavedTable): void {
  const status = jobs.columns.indexOf('status');
  const nulled = ['locked_by', 'locked_until_ms'].map((column) => jobs.columns.indexOf(column));
  for (const row of jobs.rows) {
    if (row[status] !== 'RUNNING') continue;
    row[status] = 'PENDING';
    for (const at of nulled) if (at >= 0) row[at] = null;
  }
}

/**
 * Saves the platform's state as `name`. 409 CONFLICT when the name is taken (unless
 * `replace`), when the platform has SNAPSHOTS_PER_PLATFORM_MAX already, or when it holds more
 * than SNAPSHOT_ROWS_MAX rows; 404 for an unknown platform.
 */
export async function saveSnapshot(
  deps: Deps,
  platformId: string,
  input: { name: string; replace?: boolean | undefined },
): Promise<SnapshotSummary> {
  const tables = snapshotTables(await platformTables(deps.db));
  const { name } = input;
  const save = () =>
    deps.db.transaction(async (tx) => {
      // Every read below sees the store as of one moment, whatever commits meanwhile.
      if (onPostgres(tx)) await sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`.execute(tx);
      const platform = await store.readPlatform(tx, platformId);
      if (platform === undefined) throw apiError('REFERENCE_NOT_FOUND', `No platform ${platformId}`);
      const existing = await store.findSnapshot(tx, platformId, name);
      if (existing !== undefined && input.replace !== true)
        throw apiError('CONFLICT', `A snapshot named ${name} exists; delete it first, or save with replace: true`, {
          reason: 'SNAPSHOT_EXISTS',
        });
      if (existing === undefined && (await store.countSnapshots(tx, platformId)) >= SNAPSHOTS_PER_PLATFORM_MAX)
        throw apiError(
          'CONFLICT',
          `This platform has ${SNAPSHOTS_PER_PLATFORM_MAX} snapshots, the most it may keep; delete one first`,
          { reason: 'SNAPSHOTS_MAX', max: SNAPSHOTS_PER_PLATFORM_MAX },
        );
      const savedAtMs = deps.clock.nowMs();
      const clockMs = savedAtMs + Number(platform.clock_offset_ms);
      const content: store.Content = {
        format: store.FORMAT,
        platform: Object.fromEntries(Object.entries(platform).filter(([column]) => !PLATFORM_COLUMNS_KEPT.has(column))),
        tables: {},
      };
      const rowCounts: Record<string, number> = {};
      let total = 0;
      for (const table of tables.saved) {
        const saved = await store.readRows(tx, table, platformId);
        if (table.table === 'jobs') settleRunningJobs(saved);
        content.tables[table.table] = saved;
        if (saved.rows.length > 0) rowCounts[table.table] = saved.rows.length;
        total += saved.rows.length;
        if (total > SNAPSHOT_ROWS_MAX)
          throw apiError(
            'CONFLICT',
            `The platform holds more than ${SNAPSHOT_ROWS_MAX} rows, more than a snapshot may`,
            {
              reason: 'TOO_LARGE',
              max: SNAPSHOT_ROWS_MAX,
            },
          );
      }
      const text = JSON.stringify(content);
      const row = {
        platform_id: platformId,
        name,
        schema_version: SCHEMA_VERSION,
        format: store.FORMAT,
        clock_ms: clockMs,
        row_counts: JSON.stringify(rowCounts),
        size_bytes: Buffer.byteLength(text),
        saved_at_ms: savedAtMs,
        created_at: iso(new Date(clockMs)),
      };
      await store.putSnapshot(tx, { ...row, content: text }, existing !== undefined);
      return present(row);
    });
  try {
    return await save();
  } catch (err) {
    // Two saves of one new name at once (PostgreSQL): the second finds the first's row.
    if (isUniqueViolation(err))
      throw apiError('CONFLICT', `A snapshot named ${name} exists; delete it first, or save with replace: true`, {
        reason: 'SNAPSHOT_EXISTS',
      });
    throw err;
  }
}

export interface RestoreResult {
  name: string;
  platformId: string;
  /** The platform's clock once restored: the time of the save. */
  clock: { now: string; offsetSeconds: number };
  /** Rows put back, by table (tables with none left out). */
  restored: Record<string, number>;
  /** Rows deleted first, by table (tables with none left out). */
  removed: Record<string, number>;
}

/**
 * Brings the platform back to the snapshot `name` (see the top of this file). 404 for an
 * unknown name; 409 CONFLICT when the snapshot was saved by a later version of railyard, or
 * when jobs of the platform keep running or the store stays busy (exclusive.ts).
 */
export async function restoreSnapshot(
  deps: Deps,
  platformId: string,
  name: string,
  options: { request?: FastifyRequest | undefined; log?: FastifyBaseLogger | undefined } = {},
): Promise<RestoreResult> {
  const found = await store.snapshotContent(deps.db.k, platformId, name);
  if (found === undefined) throw notFound(name);
  if (found.schema_version > SCHEMA_VERSION || Number(found.format) > store.FORMAT)
    throw apiError(
      'CONFLICT',
      `The snapshot ${name} was saved by a later version of railyard (schema ${found.schema_version}; this one has ${SCHEMA_VERSION})`,
      { reason: 'SNAPSHOT_FROM_LATER_VERSION', schemaVersion: found.schema_version },
    );
  const content = JSON.parse(found.content) as store.Content;
  const all = await platformTables(deps.db);
  const tables = snapshotTables(all);
  const platformColumns = all.others.get('platforms') ?? [];
  const exclusive = {
    tables: [...tables.replaced.map((table) => table.table), 'platforms'],
    done: 'restored',
    request: options.request,
    log: options.log,
  };
  const result = await platformExclusive(deps, platformId, exclusive, async (tx) => {
    // The platform's system ledger accounts stay (reset.ts says why); those the snapshot holds
    // are put back only when missing.
    const removed = await deletePlatformRows(tx, tables.replaced, platformId);
    const restored: Record<string, number> = {};
    // Parents first: the reverse of the order of deletion.
    for (const table of [...tables.saved].reverse()) {
      const saved = content.tables[table.table];
      if (saved === undefined) continue;
      const columns = table.columns.filter((column) => saved.columns.includes(column));
      const count = await store.writeRows(tx, table.table, columns, saved, table.table === 'ledger_accounts');
      if (count > 0) restored[table.table] = count;
    }
    const offsetMs = Number(found.clock_ms) - deps.clock.nowMs();
    const values: Record<string, unknown> = { clock_offset_ms: offsetMs };
    for (const column of platformColumns)
      if (!PLATFORM_COLUMNS_KEPT.has(column) && content.platform[column] !== undefined)
        values[column] = content.platform[column];
    forgetPlatformCore(tx);
    await store.updatePlatform(tx, platformId, values);
    // The fault rules are not part of a snapshot; their tags are made right all the same.
    await syncFaultTags(tx, platformId);
    // The jobs put back that are due already (a webhook that was waiting) run at once.
    jobsWritten(tx);
    return { restored, removed, offsetMs };
  });
  // What this process remembers of the platform (its settings and clock, with its
  // credentials) is that of before.
  deps.authCache?.clear();
  return {
    name,
    platformId,
    clock: { now: iso(platformNow(deps.clock, result.offsetMs)), offsetSeconds: result.offsetMs / 1000 },
    restored: result.restored,
    removed: result.removed,
  };
}

export async function listSnapshots(deps: Deps, platformId: string): Promise<SnapshotSummary[]> {
  return (await store.listSnapshots(deps.db.k, platformId)).map(present);
}

export async function deleteSnapshot(deps: Deps, platformId: string, name: string): Promise<void> {
  if (!(await store.deleteSnapshot(deps.db.k, platformId, name))) throw notFound(name);
}
