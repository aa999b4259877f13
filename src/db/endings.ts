// Work to do once a transaction has committed (waking the job runner for work due now,
// sending a notification), or once it has rolled back. On PostgreSQL it is kept per
// transaction object, so each attempt of a retried transaction has its own. The embedded
// store's group commit keeps them per grouped transaction itself (see group-commit.ts),
// registered here by adapter. A file of its own, importing nothing of the store's, so that
// both the store (index.ts) and what runs at a transaction's end (notify.ts) can use it.

import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

type Queryable = Kysely<Database>;

interface Endings {
  committed: (() => void)[];
  rolledBack: (() => void)[];
}

const ENDINGS = new WeakMap<object, Endings>();
const ENDING_COLLECTORS = new WeakMap<object, (q: Queryable, committed: boolean, fn: () => void) => boolean>();

/**
 * For a store whose transactions are not Kysely transaction objects (the embedded store's
 * group commit): `collect` keeps `fn` for the end of the transaction `q` runs in, and answers
 * false when `q` runs in none. Keyed by the store's adapter.
 */
export function collectEndings(
  k: Queryable,
  collect: (q: Queryable, committed: boolean, fn: () => void) => boolean,
): void {
  ENDING_COLLECTORS.set(k.getExecutor().adapter, collect);
}

/**
 * Runs `fn` after the transaction `q` commits; outside a transaction (the statement has
 * already committed) it runs on the next tick. Callbacks must not throw.
 */
export function afterCommit(q: Queryable, fn: () => void): void {
  if (!onEnding(q, 'committed', fn)) queueMicrotask(fn);
}

/**
 * Runs `fn` after the transaction `q` rolls back (this attempt of it, when it is retried), or
 * fails to commit; never outside a transaction. Callbacks must not throw.
 */
export function afterRollback(q: Queryable, fn: () => void): void {
  onEnding(q, 'rolledBack', fn);
}

/** Keeps `fn` for the end of the transaction `q` runs in; false outside one. */
function onEnding(q: Queryable, ending: keyof Endings, fn: () => void): boolean {
  if (ENDING_COLLECTORS.get(q.getExecutor().adapter)?.(q, ending === 'committed', fn) === true) return true;
  if (!q.isTransaction) return false;
  let endings = ENDINGS.get(q);
  if (endings === undefined) {
    endings = { committed: [], rolledBack: [] };
    ENDINGS.set(q, endings);
  }
  endings[ending].push(fn);
  return true;
}

/** Runs fn in a transaction of k, then the callbacks registered for how it ended. */
export async function runTransaction<T>(k: Queryable, fn: (tx: Transaction<Database>) => Promise<T>): Promise<T> {
  let attempt: Transaction<Database> | undefined;
  let result: T;
  try {
    result = await k.transaction().execute(async (tx) => {
      attempt = tx;
      return fn(tx);
    });
  } catch (err) {
    const endings = attempt === undefined ? undefined : ENDINGS.get(attempt);
    if (endings !== undefined) for (const callback of endings.rolledBack) callback();
    throw err;
  }
  const endings = attempt === undefined ? undefined : ENDINGS.get(attempt);
  if (endings !== undefined) for (const callback of endings.committed) callback();
  return result;
}
