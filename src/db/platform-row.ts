// The little of a platform's row that requests read on their way (its configuration, webhook
// signing key and clock offset), read once per database transaction: a transfer reads the
// configuration for its checks and the webhook target for its events, and on PostgreSQL each
// read is a round trip. A write to the row in the transaction forgets what was read.
// note: kernel code, like the job queue and webhook delivery, so that the platform service
// and the event outbox can both use it without importing each other.

import { type Queryable, transactionScope } from './index.js';
import type { PrefetchRead } from './prefetch.js';
import { prepare } from './prepared.js';

export interface PlatformCore {
  config: string;
  webhook_private_key: string;
  clock_offset_ms: string | number;
  webhook_fault_rules: string | null;
}

const coreById = prepare<{ id: string }, PlatformCore>((k, param) =>
  k
    .selectFrom('platforms')
    .select(['config', 'webhook_private_key', 'clock_offset_ms', 'webhook_fault_rules'])
    .where('id', '=', param('id')),
);

/** What each open transaction has read, by platform. */
const READ = new WeakMap<object, Map<string, PlatformCore>>();

/** The platform's row; within a transaction, read once. Undefined when there is no such platform. */
export async function platformCore(q: Queryable, id: string): Promise<PlatformCore | undefined> {
  const scope = transactionScope(q);
  if (scope === undefined) return coreById.first(q, { id });
  let read = READ.get(scope);
  const known = read?.get(id);
  if (known !== undefined) return known;
  const row = await coreById.first(q, { id });
  if (row === undefined) return undefined;
  if (read === undefined) {
    read = new Map();
    READ.set(scope, read);
  }
  read.set(id, row);
  return row;
}

/** The read of platformCore, for prefetch() (db/prefetch.ts). */
export function platformCoreRead(id: string): PrefetchRead {
  return coreById.read({ id });
}

/** Called by every write to a platform's row: the transaction reads it again. */
export function forgetPlatformCore(q: Queryable): void {
  const scope = transactionScope(q);
  if (scope !== undefined) READ.delete(scope);
}
