// Reads sent ahead, several in one statement. On PostgreSQL every statement is a round trip,
// and a request often reads a few rows it can name from the request alone (a transfer: its
// source account, its destination, the platform's row), one after the other though none
// depends on another. `prefetch` sends such reads in ONE statement and keeps their rows for
// the transaction; the prepared query of each read (prepared.ts, `first`) then takes its row
// from there instead of asking the database:
//
//   SELECT r1.*, r2.* FROM (SELECT 1 AS railyard_o) AS railyard_o
//     LEFT JOIN (SELECT true AS railyard_r1, q.* FROM (<read 1>) AS q) AS r1 ON true
//     LEFT JOIN (SELECT true AS railyard_r2, q.* FROM (<read 2>) AS q) AS r2 ON true
//
// Each read keeps its own SQL, so its locks too (a FOR SHARE inside a subquery in FROM locks
// the rows it returns, re-read at their latest version as in a statement of its own). A read
// with no row leaves its columns null, and its marker column says so. A data-modifying
// statement may lead the reads (`lead`: the idempotency key's claim) as a CTE: it runs first
// (it is the outer side of the joins), and its RETURNING rows are counted.
//
// The rules:
// - reads of one row at most (by key); each one is read as if the read were made at the
//   prefetch, so prefetch only what the transaction reads next, before it writes those rows;
// - a prefetched row is taken once: the next `first` with the same query and parameters gets
//   it, any later one reads the database again;
// - one statement has one snapshot: the reads see the database as it was when the statement
//   began, even when the lead had to wait on a lock (a concurrent claim of the same key);
//   rows read under a lock are re-read at their latest version all the same.
// On SQLite, or outside a transaction, nothing is prefetched (round trips cost nothing there)
// and every read runs when it is made, as without a prefetch.

import { CompiledQuery } from 'kysely';
import { columnsSql, shiftPlaceholders } from './deferred.js';
import { onPostgres, type Queryable } from './index.js';

/** One read for `prefetch` (made by a prepared query's `read`). */
export interface PrefetchRead {
  /** The read's SQL and parameters for the dialect of `q`. */
  compile(q: Queryable): { sql: string; parameters: unknown[] };
}

/** A lead statement for `prefetch`: a data-modifying statement with a RETURNING clause. */
export interface PrefetchLead extends PrefetchRead {
  /** Runs the statement alone and answers the number of rows it returned. */
  run(q: Queryable): Promise<number>;
}

/** The rows prefetched in each open transaction, by the key of their read. */
const PREFETCHED = new WeakMap<object, Map<string, Record<string, unknown> | undefined>>();

function keyOf(sql: string, parameters: readonly unknown[]): string {
  return `${sql}\u0000${JSON.stringify(parameters, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))}`;
}

/**
 * The row prefetched in transaction `q` for this read, taken out of the memo: `{ row }`
 * (row undefined: the read found none), or undefined when it was not prefetched.
 */
export function takePrefetched(
  q: Queryable,
  sql: string,
  parameters: readonly unknown[],
): { row: Record<string, unknown> | undefined } | undefined {
  const memo = PREFETCHED.get(q);
  if (memo === undefined) return undefined;
  const key = keyOf(sql, parameters);
  if (!memo.has(key)) return undefined;
  const row = memo.get(key);
  memo.delete(key);
  if (memo.size === 0) PREFETCHED.delete(q);
  return { row };
}

/**
 * Reads `reads` in one statement in transaction `q` and keeps their rows for it (see above);
 * with `lead`, runs that statement first, in the same statement. Answers the number of rows
 * the lead returned (0 without one). On SQLite or outside a transaction only the lead runs.
 */
export async function prefetch(q: Queryable, reads: readonly PrefetchRead[], lead?: PrefetchLead): Promise<number> {
  if (reads.length === 0 || !q.isTransaction || !onPostgres(q)) return lead === undefined ? 0 : lead.run(q);
  const parameters: unknown[] = [];
  const add = (read: PrefetchRead) => {
    const compiled = read.compile(q);
    const text = shiftPlaceholders(compiled.sql, parameters.length);
    parameters.push(...compiled.parameters);
    return { text, compiled };
  };
  let head = '';
  let from = '(SELECT 1 AS railyard_o) AS railyard_o';
  const columns: string[] = [];
  if (lead !== undefined) {
    head = `WITH railyard_lead AS (${add(lead).text}) `;
    from = '(SELECT count(*) AS railyard_lead FROM railyard_lead) AS railyard_o';
    columns.push('railyard_o.railyard_lead');
  }
  const keys: string[] = [];
  let joins = '';
  for (const [i, read] of reads.entries()) {
    const { text, compiled } = add(read);
    keys.push(keyOf(compiled.sql, compiled.parameters));
    joins += ` LEFT JOIN (SELECT true AS railyard_r${i}, q.* FROM (${text}) AS q) AS r${i} ON true`;
    columns.push(`r${i}.*`);
  }
  const text = `${head}SELECT ${columns.join(', ')} FROM ${from}${joins}`;
  const result = await q.executeQuery<[string, unknown][]>(CompiledQuery.raw(columnsSql(text), parameters));
  const pairs = result.rows[0];
  if (pairs === undefined) throw new Error('a prefetch answered no row');
  // The columns of read i follow its marker, up to the next marker.
  const rows: (Record<string, unknown> | undefined)[] = [];
  let leadRows = 0;
  let current: Record<string, unknown> | undefined;
  let found = false;
  const close = () => {
    if (current !== undefined) rows.push(found ? current : undefined);
  };
  for (const [name, value] of pairs) {
    if (name === 'railyard_lead') leadRows = Number(value);
    else if (/^railyard_r[0-9]+$/.test(name)) {
      close();
      current = {};
      found = value !== null;
    } else if (current !== undefined) current[name] = value;
  }
  close();
  if (rows.length !== reads.length) throw new Error(`a prefetch of ${reads.length} reads answered ${rows.length}`);
  let memo = PREFETCHED.get(q);
  if (memo === undefined) {
    memo = new Map();
    PREFETCHED.set(q, memo);
  }
  for (const [i, key] of keys.entries()) memo.set(key, rows[i]);
  return leadRows;
}
