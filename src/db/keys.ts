// Railyard's own symmetric keys, made (32 random bytes) on first use and kept in the store,
// so every instance sharing the store reads the same one.

import { randomBytes } from 'node:crypto';
import { iso } from '../clock.js';
import type { Queryable } from './index.js';

export type KeyName = 'card-data' | 'delegated-keys' | 'stablecoin-provider-secrets';

export async function railyardKey(q: Queryable, name: KeyName, now: Date): Promise<Buffer> {
  await q
    .insertInto('railyard_keys')
    .values({ name, key: randomBytes(32).toString('base64'), created_at: iso(now) })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await q.selectFrom('railyard_keys').select('key').where('name', '=', name).executeTakeFirstOrThrow();
  return Buffer.from(row.key, 'base64');
}
