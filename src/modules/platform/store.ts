import { onPostgres, type Queryable } from '../../db/index.js';
import { forgetPlatformCore, platformCore } from '../../db/platform-row.js';
import { prepare, preparedInsert } from '../../db/prepared.js';
import type { NewPlatformRow, PlatformRow } from '../../db/schema.js';

export type { PlatformRow };

const PLATFORM_COLUMNS = [
  'id',
  'name',
  'config',
  'settings',
  'clock_offset_ms',
  'webhook_private_key',
  'webhook_public_key',
  'created_at',
  'updated_at',
] as const;

// Creating a platform reads nothing back of its row (it gives provisioning the currencies it
// set): on PostgreSQL the row travels with the next statement (db/deferred.ts).
const platformInsert = preparedInsert('platforms', PLATFORM_COLUMNS, 1, { deferred: true });

export async function insertPlatform(
  q: Queryable,
  row: Pick<NewPlatformRow, (typeof PLATFORM_COLUMNS)[number]>,
): Promise<void> {
  await platformInsert.one(q, row);
}

const byId = prepare<{ id: string }, PlatformRow>((k, param) =>
  k.selectFrom('platforms').selectAll().where('id', '=', param('id')),
);

export async function findPlatform(q: Queryable, id: string): Promise<PlatformRow | undefined> {
  return byId.first(q, { id });
}

const byIdForUpdate = prepare<{ id: string }, PlatformRow>((k, param) =>
  k.selectFrom('platforms').selectAll().where('id', '=', param('id')).forUpdate(),
);

/**
 * The platform's row for a change made from what it holds now (configuration, settings): on
 * PostgreSQL its row lock, held until the transaction ends, makes a concurrent change wait and
 * then read this one's result instead of overwriting it. SQLite transactions are exclusive already.
 */
export async function findPlatformForUpdate(q: Queryable, id: string): Promise<PlatformRow | undefined> {
  return (onPostgres(q) ? byIdForUpdate : byId).first(q, { id });
}

/** The platform's configuration as stored (JSON text). */
export async function findConfigText(q: Queryable, id: string): Promise<string | undefined> {
  return (await platformCore(q, id))?.config;
}

const configByIdShared = prepare<{ id: string }, Pick<PlatformRow, 'config'>>((k, param) =>
  k.selectFrom('platforms').select('config').where('id', '=', param('id')).forShare(),
);

/**
 * The configuration as stored, read under a share lock on the platform's row on PostgreSQL
 * (held until the transaction ends): a concurrent configuration change waits for this
 * transaction, or this read waits for that change and sees it. SQLite transactions are
 * exclusive already.
 */
export async function findConfigTextShared(q: Queryable, id: string): Promise<string | undefined> {
  if (!onPostgres(q)) return (await platformCore(q, id))?.config;
  return (await configByIdShared.first(q, { id }))?.config;
}

export async function firstPlatform(q: Queryable): Promise<PlatformRow | undefined> {
  return q.selectFrom('platforms').selectAll().orderBy('created_at').orderBy('id').limit(1).executeTakeFirst();
}

export async function updatePlatform(
  q: Queryable,
  id: string,
  changes: Partial<Pick<PlatformRow, 'name' | 'config' | 'settings' | 'updated_at'>>,
): Promise<void> {
  forgetPlatformCore(q);
  await q.updateTable('platforms').set(changes).where('id', '=', id).execute();
}

/** Moves a platform's clock forward; the offset never decreases. */
export async function addClockOffset(q: Queryable, id: string, deltaMs: number): Promise<void> {
  forgetPlatformCore(q);
  await q
    .updateTable('platforms')
    .set((eb) => ({ clock_offset_ms: eb('clock_offset_ms', '+', deltaMs) }))
    .where('id', '=', id)
    .execute();
}
