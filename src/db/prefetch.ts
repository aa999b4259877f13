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

import { columnsSql, shiftPlaceholders } from './deferred.js';
import { TextMemo } from './text-memo.js';
import { executeCompiled, onPostgres, type Queryable } from './index.js';

/** One read for `prefetch` (made by a prepared query's `read`). */
export interface PrefetchRead {
  /** The read's SQL and parameters for the dialect of `q`. */
  compile(q: Queryable): { sql: string; parameters: unknown[] };
  /**
   * The read whose row this is, when it is another one (a read by a key only the database knows
   * yet, such as the owner of an account named by the request): the row is kept for that read,
   * named from the row. A read that finds no row keeps nothing then.
   */
  standsFor?(q: Queryable, row: Record<string, unknown>): { sql: string; parameters: unknown[] };
}

/** A lead statement for `prefetch`: a data-modifying statement with a RETURNING clause. */
export interface PrefetchLead extends PrefetchRead {
  /** Runs the statement alone and answers the number of rows it returned. */
  run(q: Queryable): Promise<number>;
}

/**
 * The rows prefetched in each open transaction, by their read's SQL (the same string for every
 * call of one prepared query), then its parameters.
 */
const PREFETCHED = new WeakMap<object, Map<string, Map<string, Record<string, unknown> | undefined>>>();

function parametersKey(parameters: readonly unknown[]): string {
  return JSON.stringify(parameters, (_, v) => (typeof v === 'bigint' ? `${v}n` : v));
}

/** The statement's text for a lead's SQL ('' for none) and the reads' SQL, put together once per list. */
const statements = new TextMemo<string>(1000);

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
  const bySql = memo?.get(sql);
  if (bySql === undefined) return undefined;
  const key = parametersKey(parameters);
  if (!bySql.has(key)) return undefined;
  const row = bySql.get(key);
  bySql.delete(key);
  if (bySql.size === 0) {
    memo!.delete(sql);
    if (memo!.size === 0) PREFETCHED.delete(q);
  }
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
  const leadCompiled = lead?.compile(q);
  const compiled = reads.map((read) => read.compile(q));
  const sqls = [leadCompiled?.sql ?? '', ...compiled.map((read) => read.sql)];
  const text = statements.get(sqls, () => statementText(leadCompiled, compiled));
  if (leadCompiled !== undefined) parameters.push(...leadCompiled.parameters);
  for (const read of compiled) parameters.push(...read.parameters);
  const result = await executeCompiled<[string, unknown][]>(q, text, parameters);
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
  for (const [i, compiledRead] of compiled.entries()) {
    const row = rows[i];
    const standsFor = reads[i]!.standsFor;
    if (standsFor !== undefined && row === undefined) continue;
    const read = standsFor === undefined ? compiledRead : standsFor(q, row!);
    let bySql = memo.get(read.sql);
    if (bySql === undefined) {
      bySql = new Map();
      memo.set(read.sql, bySql);
    }
    bySql.set(parametersKey(read.parameters), row);
  }
  return leadRows;
}

/** The one statement of a prefetch (see above), its rows as column lists (deferred.ts columnsSql). */
function statementText(
  lead: { sql: string; parameters: unknown[] } | undefined,
  reads: readonly { sql: string; parameters: unknown[] }[],
): string {
  let count = 0;
  const shifted = (read: { sql: string; parameters: unknown[] }) => {
    const text = shiftPlaceholders(read.sql, count);
    count += read.parameters.length;
    return text;
  };
  let head = '';
  let from = '(SELECT 1 AS railyard_o) AS railyard_o';
  const columns: string[] = [];
  if (lead !== undefined) {
    head = `WITH railyard_lead AS (${shifted(lead)}) `;
    from = '(SELECT count(*) AS railyard_lead FROM railyard_lead) AS railyard_o';
    columns.push('railyard_o.railyard_lead');
  }
  let joins = '';
  for (const [i, read] of reads.entries()) {
    joins += ` LEFT JOIN (SELECT true AS railyard_r${i}, q.* FROM (${shifted(read)}) AS q) AS r${i} ON true`;
    columns.push(`r${i}.*`);
  }
  return columnsSql(`${head}SELECT ${columns.join(', ')} FROM ${from}${joins}`);
}
