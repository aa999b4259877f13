// Group commit for the embedded store. Committing a SQLite transaction costs a few file
// writes, which dominate a small write request. Transactions that arrive while others run
// are queued and run one after another inside one SQLite transaction, each in a savepoint
// of its own, with one COMMIT for the batch. A transaction whose function throws is rolled
// back to its savepoint alone. Every caller hears back only after the shared COMMIT, so an
// acknowledged write is as durable as before; one by one, the semantics are those of
// serial transactions, which is what the single SQLite connection gave anyway.

import type { Kysely, Transaction } from 'kysely';
import type SQLite from 'better-sqlite3';
import type { Database } from './schema.js';

/** Transactions one COMMIT may carry; bounds the wait of the batch's first caller. */
export const BATCH_TRANSACTIONS_MAX = 64;
/**
 * While requests wait, every BACKGROUND_EVERY-th pick goes to a background transaction (when
 * one waits): requests queued behind a burst of bookkeeping get at least every other place,
 * and bookkeeping is never starved (it holds the webhook sends' places in flight).
 */
export const BACKGROUND_EVERY = 2;
/**
 * A batch takes no more transactions once it has run this long: the event loop waits for the
 * whole batch, so a long one holds up every request and webhook answer meanwhile (the sends
 * themselves run on their own thread, see events/sender.ts). A COMMIT costs about 2 ms
 * whatever the batch holds: at 6 ms a saturated server committed every 7 to 9 transactions
 * and spent a fifth of its time in COMMIT. At 25 ms a batch takes 20 to 30 of them, which
 * raised transfer-outs per second by about a fifth with an unchanged p99 (issue 21).
 */
export const BATCH_DURATION_MAX_MS = 25;
/**
 * Past this, a batch goes on only while requests wait. Every caller in a batch hears back at
 * its COMMIT, so a lone request must not wait for 25 ms of bookkeeping that happened to queue
 * with it (the jobs a burst of payments left, say): that was a p99 of 61 ms for an executed
 * quote at one connection.
 */
export const BATCH_ALONE_DURATION_MAX_MS = 6;

interface Pending {
  fn: (tx: Transaction<Database>) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export interface GroupCommit {
  /**
   * `background`: bookkeeping no caller waits on (the job runner's claims, the record of a
   * webhook try). A request's transaction goes before it, so the answer to the request, and
   * the webhooks its commit releases, do not queue behind a burst of bookkeeping.
   */
  transaction<T>(fn: (tx: Transaction<Database>) => Promise<T>, background?: boolean): Promise<T>;
  /** The connection-bound Kysely of the batch running now, if any. */
  readonly activeConnection: Kysely<Database> | undefined;
  /** True while a batch runs or transactions wait for one. */
  readonly busy: boolean;
  /** Batches committed so far. */
  readonly commits: number;
  /**
   * Runs fn once the grouped transaction running now has committed (`committed`), or once it
   * has rolled back or its batch failed to commit (not `committed`). False when none is running.
   */
  onEnd(committed: boolean, fn: () => void): boolean;
  /**
   * An object that stands for the grouped transaction running now (a new one for each, so
   * what is memoized per transaction is not seen by the next); undefined when none runs.
   */
  readonly scope: object | undefined;
}

export function groupCommit(k: Kysely<Database>, prepare: (sql: string) => SQLite.Statement): GroupCommit {
  const queue: Pending[] = [];
  const backgroundQueue: Pending[] = [];
  const waiting = () => queue.length + backgroundQueue.length;
  // The next transaction to run (the count of picks goes on across batches, which the time
  // bound may keep short).
  let picks = 0;
  const take = (): Pending | undefined => {
    picks++;
    if (queue.length > 0 && (picks % BACKGROUND_EVERY !== 0 || backgroundQueue.length === 0)) return queue.shift();
    return backgroundQueue.shift() ?? queue.shift();
  };
  let running = false;
  let active: Kysely<Database> | undefined;
  let commits = 0;
  // The callbacks of the grouped transaction running now, for its commit and its rollback.
  let callbacks: { committed: (() => void)[]; rolledBack: (() => void)[] } | undefined;
  let scope: object | undefined;
  const exec = (text: string) => prepare(text).run();

  async function runBatch(connection: Kysely<Database>): Promise<void> {
    const settled: (() => void)[] = [];
    const taken: Pending[] = [];
    // The rollback callbacks of every transaction of this batch: all of them run if the
    // batch does not commit.
    const undone: (() => void)[] = [];
    active = connection;
    exec('BEGIN');
    const started = performance.now();
    const goesOn = () => {
      const elapsed = performance.now() - started;
      return elapsed < BATCH_ALONE_DURATION_MAX_MS || (queue.length > 0 && elapsed < BATCH_DURATION_MAX_MS);
    };
    try {
      for (let count = 0; count < BATCH_TRANSACTIONS_MAX && waiting() > 0 && (count === 0 || goesOn()); count++) {
        const item = take()!;
        taken.push(item);
        exec('SAVEPOINT railyard_tx');
        const itemCallbacks: NonNullable<typeof callbacks> = { committed: [], rolledBack: [] };
        callbacks = itemCallbacks;
        scope = {};
        try {
          const value = await item.fn(connection as Transaction<Database>);
          exec('RELEASE railyard_tx');
          settled.push(() => {
            item.resolve(value);
            for (const callback of itemCallbacks.committed) callback();
          });
        } catch (error) {
          exec('ROLLBACK TO railyard_tx');
          exec('RELEASE railyard_tx');
          settled.push(() => {
            for (const callback of itemCallbacks.rolledBack) callback();
            item.reject(error);
          });
        } finally {
          undone.push(...itemCallbacks.rolledBack);
          callbacks = undefined;
          scope = undefined;
        }
      }
      exec('COMMIT');
      commits++;
    } catch (error) {
      // The batch could not commit (a failed savepoint statement, a full disk): none of it
      // happened, so every caller of the batch gets the error, successful or not.
      try {
        exec('ROLLBACK');
      } catch {
        // Nothing to roll back.
      }
      active = undefined;
      for (const callback of undone) callback();
      for (const item of taken) item.reject(error);
      return;
    }
    active = undefined;
    for (const settle of settled) settle();
  }

  async function drain(): Promise<void> {
    running = true;
    try {
      while (waiting() > 0) {
        try {
          // Holding Kysely's connection keeps its other queries out of the batch.
          await k.connection().execute(runBatch);
          // Let I/O in (requests, webhook answers) before the next batch.
          if (waiting() > 0) await new Promise((resolve) => setImmediate(resolve));
        } catch (error) {
          // The connection itself failed (the store was closed): nobody waiting can proceed.
          for (const item of [...queue.splice(0), ...backgroundQueue.splice(0)]) item.reject(error);
        }
      }
    } finally {
      running = false;
    }
  }

  return {
    transaction<T>(fn: (tx: Transaction<Database>) => Promise<T>, background = false): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        (background ? backgroundQueue : queue).push({ fn, resolve: resolve as (value: unknown) => void, reject });
        if (!running) {
          running = true;
          // Start on the next turn of the event loop, after the requests that arrived with
          // this one have queued their transactions too.
          setImmediate(() => void drain());
        }
      });
    },
    get activeConnection() {
      return active;
    },
    get busy() {
      return running || waiting() > 0;
    },
    get commits() {
      return commits;
    },
    get scope() {
      return scope;
    },
    onEnd(committed: boolean, fn: () => void): boolean {
      if (callbacks === undefined) return false;
      (committed ? callbacks.committed : callbacks.rolledBack).push(fn);
      return true;
    },
  };
}
