// Queries built once with Kysely and compiled once per dialect, then run with fresh
// parameters. Building and compiling a query costs more than running it on SQLite, so the
// hottest queries (reads by id on every request) are prepared this way.

import type { CompiledQuery, Compilable, Kysely, QueryResult } from 'kysely';
import { deferredSql } from './deferred.js';
import { executeCompiled, onPostgres, type Queryable } from './index.js';
import { type PrefetchLead, takePrefetched } from './prefetch.js';
import type { Database } from './schema.js';

// biome-ignore lint/suspicious/noExplicitAny: a placeholder stands for a value of any column type
type Param = (name: string) => any;

const SENTINEL = '\u0001railyard-param:';

interface Plan {
  compiled: CompiledQuery;
  /** For each compiled parameter: the name of a runtime parameter, or a fixed value. */
  slots: ({ name: string } | { value: unknown })[];
}

export interface PreparedQuery<Params extends object, Row> {
  all(q: Kysely<Database>, params: Params): Promise<Row[]>;
  /** The first row; in a transaction, the one prefetched for these parameters when there is one (prefetch.ts). */
  first(q: Kysely<Database>, params: Params): Promise<Row | undefined>;
  run(q: Kysely<Database>, params: Params): Promise<{ numAffectedRows?: bigint }>;
  /** Runs with the values of the parameters in the order the query uses them (every one a `param`). */
  runValues(q: Kysely<Database>, values: unknown[]): Promise<void>;
  /** This query with these parameters, as a read (or the lead) of prefetch(). */
  read(params: Params): PrefetchLead;
}

export interface PrepareOptions {
  /**
   * An insert of rows with fresh ids that nothing reads back in its transaction, or an update
   * whose count nobody reads: inside a transaction on PostgreSQL it travels with the next
   * statement (see deferred.ts).
   */
  deferred?: boolean;
}

/**
 * `build` receives the Kysely instance and `param(name)`, which stands for a value given at
 * run time. Every value a runtime parameter takes must go through `param` (never spliced
 * into the query), so the compiled SQL is the same for every call.
 */
export function prepare<Params extends object, Row = unknown>(
  build: (k: Kysely<Database>, param: Param) => Compilable<Row>,
  options: PrepareOptions = {},
): PreparedQuery<Params, Row> {
  const plans = new Map<unknown, Plan>();
  const plan = (q: Kysely<Database>): Plan => {
    // The adapter identifies the dialect; a transaction shares its database's adapter.
    const key = q.getExecutor().adapter.constructor;
    let found = plans.get(key);
    if (found === undefined) {
      const compiled = build(q, (name) => `${SENTINEL}${name}`).compile();
      const slots = compiled.parameters.map((value) =>
        typeof value === 'string' && value.startsWith(SENTINEL) ? { name: value.slice(SENTINEL.length) } : { value },
      );
      found = { compiled, slots };
      plans.set(key, found);
    }
    return found;
  };
  // These two answer the promise they are given (an async function would wait on it again).
  const executeValues = (
    q: Kysely<Database>,
    compiled: CompiledQuery,
    parameters: unknown[],
  ): Promise<QueryResult<Row>> => {
    const text =
      options.deferred === true && q.isTransaction && onPostgres(q) ? deferredSql(compiled.sql) : compiled.sql;
    // Without a trip through Kysely's executor where the store allows (see directExecutor).
    return executeCompiled<Row>(q, text, parameters);
  };
  const compile = (q: Kysely<Database>, params: Params) => {
    const { compiled, slots } = plan(q);
    const parameters = slots.map((slot) =>
      'name' in slot ? (params as Record<string, unknown>)[slot.name] : slot.value,
    );
    return { compiled, parameters };
  };
  const execute = (q: Kysely<Database>, params: Params): Promise<QueryResult<Row>> => {
    const { compiled, parameters } = compile(q, params);
    return executeValues(q, compiled, parameters);
  };
  return {
    all: async (q, params) => (await execute(q, params)).rows,
    first: async (q, params) => {
      const { compiled, parameters } = compile(q, params);
      if (q.isTransaction) {
        const prefetched = takePrefetched(q, compiled.sql, parameters);
        if (prefetched !== undefined) return prefetched.row as Row | undefined;
      }
      return (await executeValues(q, compiled, parameters)).rows[0];
    },
    read: (params) => ({
      compile: (q) => {
        const { compiled, parameters } = compile(q, params);
        return { sql: compiled.sql, parameters };
      },
      run: async (q) => (await execute(q, params)).rows.length,
    }),
    run: async (q, params) => {
      const result = await execute(q, params);
      return result.numAffectedRows === undefined ? {} : { numAffectedRows: result.numAffectedRows };
    },
    runValues: async (q, values) => {
      const { compiled, slots } = plan(q);
      if (values.length !== slots.length || slots.some((slot) => !('name' in slot))) {
        throw new Error(`runValues needs one value for each of the ${slots.length} parameters`);
      }
      await executeValues(q, compiled, values);
    },
  };
}

export interface InsertOptions extends PrepareOptions {
  /**
   * The row counts a statement may have, largest first, ending with 1: a list is inserted in
   * chunks of the largest that fits, so that a writer of lists of any length keeps at most
   * this many statements (each count is one statement in the store's caches). By default,
   * every count from 1 to `rowsMax`.
   */
  counts?: readonly number[];
}

/**
 * Rows given as value lists, in chunks of `size(left)` rows (of the `left` still to take), each
 * chunk's values one row after another: what a multi-row insert statement of that count takes.
 */
export function* rowChunks(
  rows: readonly (readonly unknown[])[],
  size: (left: number) => number,
): Generator<[count: number, values: unknown[]]> {
  for (let start = 0; start < rows.length; ) {
    const end = start + size(rows.length - start);
    const values: unknown[] = [];
    for (let r = start; r < end; r++) for (const value of rows[r]!) values.push(value);
    yield [end - start, values];
    start = end;
  }
}

/** The largest of `counts` (largest first, ending with 1) that fits in `left` rows. */
export function largestCount(counts: readonly number[], left: number): number {
  return counts.find((count) => count <= left)!;
}

/**
 * A prepared insert of several rows at once: one statement per row count up to `rowsMax`,
 * longer lists in chunks of that many (or of `options.counts`). Each row gives its values in
 * the order of `columns`.
 */
export function preparedInsert<Table extends keyof Database & string, Column extends keyof Database[Table] & string>(
  table: Table,
  columns: readonly Column[],
  rowsMax = 8,
  options: InsertOptions = {},
) {
  const counts = options.counts;
  if (counts !== undefined && (counts.at(-1) !== 1 || counts.some((count, i) => i > 0 && count >= counts[i - 1]!)))
    throw new Error('preparedInsert: counts must go down and end with 1');
  /** How many rows the next statement takes, of `left` still to insert. */
  const chunk = (left: number) => (counts === undefined ? Math.min(rowsMax, left) : largestCount(counts, left));
  const statements = new Map<number, PreparedQuery<object, unknown>>();
  const statementFor = (count: number) => {
    let statement = statements.get(count);
    if (statement === undefined) {
      statement = prepare<object>(
        (k, param) =>
          k
            .insertInto(table)
            .values(
              Array.from({ length: count }, (_, i) =>
                Object.fromEntries(columns.map((c) => [c, param(`${c}${i}`)])),
              ) as never,
            ),
        options,
      );
      statements.set(count, statement);
    }
    return statement;
  };
  return {
    /** Inserts one row given as an object with (at least) every column. */
    async one(q: Queryable, row: { [C in Column]: unknown }): Promise<void> {
      await statementFor(1).runValues(
        q,
        columns.map((c) => row[c]),
      );
    },
    /** Inserts rows given as value lists in the order of `columns`. */
    async run(q: Queryable, rows: readonly (readonly unknown[])[]): Promise<void> {
      for (const [count, values] of rowChunks(rows, chunk)) await statementFor(count).runValues(q, values);
    },
  };
}
