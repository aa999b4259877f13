// Resetting a platform: every row the platform owns goes, except its credentials and its
// configuration, so the tenant starts over with the same client id, secret, settings,
// webhook endpoint and signing keys. Other platforms are not touched.
//
// Which tables hold what comes from platform-tables.ts (the store's own catalogue): only the
// tables named in KEPT_TABLES stay, so a table added by a later migration is wiped without
// anyone having to remember this file; the deletions run children first, following the
// foreign keys (on PostgreSQL, all in one statement). The reset is one transaction that
// nothing of the platform interleaves with (exclusive.ts says how, and what it waits for).

import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { platformNow } from '../clock.js';
import { onPostgres, sql, type Tx } from '../db/index.js';
import { syncFaultTags } from '../faults/service.js';
import type { Deps } from '../http/deps.js';
import { provisionInternalAccounts } from '../modules/internal-accounts/service.js';
import { platformExclusive } from './exclusive.js';
import { type OwnedTable, ownedBy, platformTables } from './platform-tables.js';

/**
 * What a reset keeps: the platform's row (name, configuration, settings, sandbox clock,
 * webhook signing keys), its API tokens, its embedded-wallet signing organization, and its
 * snapshots (a reset is a way back to empty, a snapshot one to a saved state: both stay open).
 */
export const KEPT_TABLES: ReadonlySet<string> = new Set(['platforms', 'api_tokens', 'wallet_orgs', 'snapshots']);

/**
 * Ledger accounts that stay: the platform's system accounts (the world outside railyard,
 * fees, FX, suspense, stablecoin reserve and supply). Their balance is the sum of their
 * entries, so they are at zero once the entries are gone, and the ledger assumes an account
 * it opened once exists for good (it remembers that per process). The ledger accounts of
 * internal accounts go with them.
 */
export const LEDGER_KIND_WIPED = 'INTERNAL';

/**
 * Deletes the platform's rows of `tables` (children before parents), its system ledger
 * accounts excepted; returns how many went, by table (tables with none left out). A reset and
 * a snapshot's restore both start with it.
 */
export async function deletePlatformRows(
  tx: Tx,
  tables: readonly OwnedTable[],
  platformId: string,
): Promise<Record<string, number>> {
  const deletions = tables.map((table) => {
    const kind = table.table === 'ledger_accounts' ? sql` AND kind = ${LEDGER_KIND_WIPED}` : sql``;
    return sql`DELETE FROM ${sql.table(table.table)} WHERE ${ownedBy(table, platformId)}${kind}`;
  });
  const counts: number[] = [];
  if (onPostgres(tx)) {
    // One statement, one round trip: each table's DELETE is a data-modifying WITH query
    // (PostgreSQL runs every one, on the snapshot taken at the statement's start, so a table
    // that finds its rows through its parent still sees the parent's), and the foreign keys
    // are checked at the statement's end. A DELETE per statement (46 round trips) made a
    // seeded platform's reset 22.7 ms at the median, against 15.0 so.
    const counted = await sql<Record<string, string>>`WITH ${sql.join(
      deletions.map((deletion, i) => sql`${sql.ref(`d${i}`)} AS (${deletion} RETURNING 1)`),
    )} SELECT ${sql.join(deletions.map((_, i) => sql`(SELECT count(*) FROM ${sql.ref(`d${i}`)}) AS ${sql.ref(`c${i}`)}`))}`.execute(
      tx,
    );
    const row = counted.rows[0]!;
    for (const i of deletions.keys()) counts.push(Number(row[`c${i}`]));
  } else {
    for (const deletion of deletions) counts.push(Number((await deletion.execute(tx)).numAffectedRows ?? 0n));
  }
  const removed: Record<string, number> = {};
  tables.forEach((table, i) => {
    if (counts[i]! > 0) removed[table.table] = counts[i]!;
  });
  return removed;
}

export interface ResetResult {
  platformId: string;
  /** Rows deleted, by table (tables with none left out). */
  removed: Record<string, number>;
  /** The platform's internal accounts, opened anew (new ids, zero balances). */
  internalAccountIds: string[];
}

/**
 * Deletes everything the platform owns but its credentials and configuration (see the
 * top of this file and exclusive.ts for what it guarantees). 404 REFERENCE_NOT_FOUND for an
 * unknown platform; 409 CONFLICT when jobs of the platform keep running or the store stays busy.
 */
export async function resetPlatform(
  deps: Deps,
  platformId: string,
  options: { jobsWaitMs?: number; request?: FastifyRequest; log?: FastifyBaseLogger } = {},
): Promise<ResetResult> {
  const plan = (await platformTables(deps.db)).owned.filter((table) => !KEPT_TABLES.has(table.table));
  // The requests this server answered and has not written yet go now, so none of them comes
  // back into the journal after the wipe.
  await deps.journal?.flush();
  const exclusive = { tables: plan.map((table) => table.table), done: 'reset', ...options };
  const result = await platformExclusive(deps, platformId, exclusive, async (tx, platform) => {
    const removed = await deletePlatformRows(tx, plan, platformId);
    // Its fault rules went with the rest: the platform is back on the path without rules.
    await syncFaultTags(tx, platformId);
    // A new platform has an internal account per supported currency: so does a reset one.
    const now = platformNow(deps.clock, platform.clockOffsetMs);
    // Its internal accounts were deleted above: the platform is a fresh owner again.
    const internalAccountIds = await provisionInternalAccounts(tx, {
      platformId,
      customerId: null,
      now,
      fresh: 'owner',
    });
    return { platformId, removed, internalAccountIds };
  });
  // An embedded store on disk keeps the journal in a file of its own: its rows go too.
  const forgotten = (await deps.journal?.forget(platformId)) ?? 0;
  if (forgotten > 0) result.removed.request_journal = forgotten;
  // Cached credentials stay right (tokens and settings are kept), but nothing cached
  // about the platform's past should outlive it.
  deps.authCache?.clear();
  return result;
}
