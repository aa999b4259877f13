// Deferred inserts on PostgreSQL. Every statement is a round trip to the server, and a money
// write inserts several rows nobody reads back in the same transaction (its transaction row,
// postings, entries, events). A statement marked as deferred (see `deferredSql`) is not sent
// when it is run: the connection keeps it, and sends it together with the next statement of
// the transaction, as data-modifying common table expressions in front of it:
//
//   WITH railyard_d1 AS (INSERT …), railyard_d2 AS (INSERT …) UPDATE ledger_accounts …
//
// One statement, one trip, and the same effects: PostgreSQL runs every part of it, and
// checks foreign keys at its end. The parts of one statement do not see each other's rows, so
// a statement that names a table with deferred rows does not take them in front: they go as a
// statement of their own just before it (as they do before COMMIT, or anything that cannot
// begin with WITH), written to the socket together with it (pipelined), so still one trip.
// A ROLLBACK drops them.
//
// BEGIN waits the same way: it is written together with the transaction's first statement,
// so a transaction's start costs no trip of its own. A transaction with no statement sends
// neither its BEGIN nor its end.
//
// Only inserts of rows with fresh ids, and updates whose row count nobody reads (the
// completion of the idempotency key this transaction claimed), may be deferred: an error of
// theirs (which would be a bug) surfaces on the statement they travel with, and fails the
// transaction all the same (a COMMIT behind a failed one answers its error, never success).

import type pg from 'pg';
import { TextMemo } from './text-memo.js';

const MARK = '/* railyard:deferred */ ';
const COLUMNS_MARK = '/* railyard:columns */ ';
/** PostgreSQL's bound on the parameters of one statement. */
const PARAMETERS_MAX = 65_535;

/** The text of a statement that, inside a transaction on PostgreSQL, waits for the next one. */
export function deferredSql(text: string): string {
  return MARK + text;
}

/**
 * The text of a statement whose rows come back as lists of [column name, value] pairs, in
 * the order of the result's columns: for a result whose column names repeat (see
 * prefetch.ts), which rows as objects would merge. Each value is parsed by its type as usual.
 */
export function columnsSql(text: string): string {
  return COLUMNS_MARK + text;
}

interface Held {
  /** The statement as given, with its mark: the same string for every call of one prepared statement. */
  marked: string;
  text: string;
  values: unknown[];
  table: string;
}

/** A statement's text without its columns mark, kept: the same string each time for the same statement. */
const uncolumned = new TextMemo<string>(1000);

function withoutColumnsMark(text: string): string {
  return uncolumned.get([text], () => text.slice(COLUMNS_MARK.length));
}

/** A deferred statement's text without its mark, and its table, by the text given (the same few, again and again). */
const unmarked = new TextMemo<{ text: string; table: string }>(1000);

function unmark(marked: string): { text: string; table: string } {
  return unmarked.get([marked], () => {
    const text = marked.slice(MARK.length);
    return { text, table: tableOf(text) };
  });
}

/**
 * Statements are sent as named prepared statements, so that each connection parses and plans
 * a statement once instead of at every call: the statements of a money write are long (the
 * reads and rows travelling together, above), and planning them again was most of their time
 * (about 2 ms each on the 2-core VM, the transfer-out's whole answer 8 ms at one connection).
 * The same text always gets the same name (a connection keeps its own). Beyond this many
 * distinct texts (statements whose text varies with their input, such as an IN list), new
 * ones go unnamed, so the statements a connection keeps stay bounded. RAILYARD_PG_PREPARED=0
 * turns names off, for a pooler in transaction mode, which may not keep them.
 */
const NAMED_STATEMENTS_MAX = 1000;

/** The names statements are prepared under, for the connections of one pool. */
function statementNames(): (text: string, values: readonly unknown[]) => string | undefined {
  const names = new Map<string, string>();
  return (text, values) => {
    // A statement without parameters may be several statements (migrations), which only the
    // simple protocol takes; it is sent as it always was.
    if (values.length === 0) return undefined;
    let name = names.get(text);
    if (name === undefined && names.size < NAMED_STATEMENTS_MAX) {
      name = `railyard_${names.size + 1}`;
      names.set(text, name);
    }
    return name;
  };
}

/** What a deferred statement answers at once; Kysely reads no row count from it. */
const DEFERRED_RESULT = Object.freeze({ command: 'DEFERRED', rowCount: null, rows: [], fields: [] });

/** Renumbers the $n placeholders of `text` by `offset`, outside quoted strings and names. */
export function shiftPlaceholders(text: string, offset: number): string {
  if (offset === 0) return text;
  let out = '';
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote !== undefined) {
      out += c;
      if (c === quote) quote = undefined;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      out += c;
      continue;
    }
    if (c === '$' && /[0-9]/.test(text[i + 1] ?? '')) {
      let j = i + 1;
      while (j < text.length && /[0-9]/.test(text[j]!)) j++;
      out += `$${Number(text.slice(i + 1, j)) + offset}`;
      i = j - 1;
      continue;
    }
    out += c;
  }
  return out;
}

/** `text` with the held statements' texts in front, as CTEs. */
function combinedText(held: readonly Held[], text: string): string {
  const parts: string[] = [];
  let offset = 0;
  for (const [i, statement] of held.entries()) {
    parts.push(`railyard_d${i + 1} AS (${shiftPlaceholders(statement.text, offset)})`);
    offset += statement.values.length;
  }
  const main = shiftPlaceholders(text, offset);
  const recursive = /^\s*with\s+recursive\s+/i.exec(main);
  if (recursive !== null) return `WITH RECURSIVE ${parts.join(', ')}, ${main.slice(recursive[0].length)}`;
  const withList = /^\s*with\s+/i.exec(main);
  if (withList !== null) return `WITH ${parts.join(', ')}, ${main.slice(withList[0].length)}`;
  return `WITH ${parts.join(', ')} ${main}`;
}

function tableOf(text: string): string {
  const match = /^\s*(?:insert\s+into|update)\s+"?([a-z_][a-z0-9_]*)"?/i.exec(text);
  if (match === null) throw new Error(`only an INSERT or an UPDATE can be deferred: ${text.slice(0, 80)}`);
  return match[1]!;
}

/**
 * A query answered by the connection itself, with itself, without a trip to the server: how
 * db/index.ts learns which connection Kysely gave a transaction.
 */
export const CONNECTION_PROBE = '/* railyard:connection */';

/** What a BEGIN held for the next statement answers at once. */
const BEGIN_RESULT = Object.freeze({ command: 'BEGIN', rowCount: null, rows: [], fields: [] });

function endResult(text: string) {
  return { command: /^\s*commit\b/i.test(text) ? 'COMMIT' : 'ROLLBACK', rowCount: null, rows: [], fields: [] };
}

/** A plain BEGIN (Kysely's, with no isolation level or access mode), which may wait for the next statement. */
function isBegin(text: string, values: unknown): boolean {
  return /^\s*begin\s*$/i.test(text) && (values === undefined || (values as unknown[]).length === 0);
}

function isEnd(text: string): boolean {
  return /^\s*(commit|rollback)\s*$/i.test(text);
}

/** A ROLLBACK, which drops what is held: nothing held needs to reach the server before it. */
function isRollback(text: string): boolean {
  return /^\s*rollback\b/i.test(text);
}

/** Whether `text` may carry the held statements in front of it, whatever their parameters. */
function mayCarry(held: readonly Held[], text: string): boolean {
  if (!/^\s*(select|insert|update|delete|with)\b/i.test(text)) return false;
  // A statement that reads or writes a table with held rows would not see them.
  return !held.some((statement) => new RegExp(`\\b${statement.table}\\b`, 'i').test(text));
}

/**
 * What the texts of `held` and `text` make together: whether `text` may carry them, and the
 * one statement's text then. A transaction's statements are the same from request to request,
 * so this is worked out once per list of texts (text-memo.ts), and the one text, always the
 * same string then, finds its prepared statement's name at once. `key`: `text` as given to
 * query() (the same string every time, where `text` may have been cut from it).
 * note: a statement's text fixes how many parameters it takes, so the texts are the key.
 */
interface Combination {
  carries: boolean;
  text: string | undefined;
}
const combinations = new TextMemo<Combination>(1000);

function combinationOf(held: readonly Held[], text: string, key: string): Combination {
  const texts = held.map((statement) => statement.marked);
  texts.push(key);
  return combinations.get(texts, () => {
    const carries = mayCarry(held, text);
    return { carries, text: carries ? combinedText(held, text) : undefined };
  });
}

/** Every parameter of the held statements and then of `values`, in one list. */
function allValues(held: readonly Held[], values: readonly unknown[]): unknown[] {
  const all: unknown[] = [];
  for (const statement of held) for (const value of statement.values) all.push(value);
  for (const value of values) all.push(value);
  return all;
}

/** The held statements' parameters and `values`, together within PostgreSQL's bound. */
function fitParameters(held: readonly Held[], values: readonly unknown[]): boolean {
  return held.reduce((sum, statement) => sum + statement.values.length, values.length) <= PARAMETERS_MAX;
}

/**
 * The pool's client class: holds deferred statements and a transaction's BEGIN until the next
 * statement of its transaction. Only the promise form of query(text, values), which Kysely
 * uses, is intercepted. Made from the driver given, which is loaded only when PostgreSQL is
 * used. Its connections are pipelined (pg's `pipeline`): a query is written at once, without
 * waiting for the answer of the one before, which is what lets a held statement go in the same
 * write as the next. Every other query on it is made after the one before has answered (Kysely
 * runs one statement at a time on a connection), as without pipelining.
 */
export function deferringClient(driver: typeof pg, prepared = true): typeof pg.Client {
  // Per pool (each app has its own): the same text has the same name on all its connections.
  const statementName = prepared ? statementNames() : () => undefined;
  return class DeferringClient extends driver.Client {
    private held: Held[] = [];
    /** A BEGIN not yet sent (see the top of this file). */
    private beginHeld: string | undefined;

    constructor(config?: string | pg.ClientConfig) {
      super(typeof config === 'string' ? { connectionString: config, pipeline: true } : { ...config, pipeline: true });
    }

    // biome-ignore lint/suspicious/noExplicitAny: pg's query() is overloaded many ways
    override query(...args: any[]): any {
      const [first, values] = args;
      if (first === CONNECTION_PROBE)
        return Promise.resolve({ command: 'SELECT', rowCount: 1, rows: [{ client: this }], fields: [] });
      const columns = typeof first === 'string' && first.startsWith(COLUMNS_MARK);
      const text = columns ? withoutColumnsMark(first) : first;
      const plain = typeof text === 'string' && args.length <= 2 && (values === undefined || Array.isArray(values));
      if (!plain) {
        if (this.held.length > 0 || this.beginHeld !== undefined)
          throw new Error('a deferred statement is waiting: only plain queries may follow it');
        return super.query(...(args as [string]));
      }
      if (this.beginHeld === undefined && this.held.length === 0 && isBegin(text, values)) {
        this.beginHeld = text;
        return Promise.resolve(BEGIN_RESULT);
      }
      if (text.startsWith(MARK)) {
        const { text: statement, table } = unmark(text);
        this.held.push({ marked: text, text: statement, values: values ?? [], table });
        return Promise.resolve(DEFERRED_RESULT);
      }
      const begin = this.beginHeld;
      if (begin !== undefined) {
        this.beginHeld = undefined;
        // Nothing was sent since the BEGIN: there is no transaction to end.
        if (isRollback(text) || (this.held.length === 0 && isEnd(text))) {
          this.held = [];
          return Promise.resolve(endResult(text));
        }
        return this.pipelined(
          () => super.query(begin),
          () => this.dispatch(text, values ?? [], columns, first),
        );
      }
      return this.dispatch(text, values ?? [], columns, first);
    }

    private dispatch(text: string, values: unknown[], columns: boolean, key: string): Promise<pg.QueryResult> {
      if (this.held.length === 0) return columns ? this.sendForColumns(text, values) : this.send(text, values);
      return this.sendWithHeld(text, values, columns, key);
    }

    /**
     * Queries `before` and then `next` in one write to the socket, and answers `next`'s result;
     * when `before` fails, its error (the cause: what follows it in the transaction fails, or a
     * COMMIT answers ROLLBACK without an error).
     */
    private async pipelined(
      before: () => Promise<unknown>,
      next: () => Promise<pg.QueryResult>,
    ): Promise<pg.QueryResult> {
      const stream = this.connection.stream as unknown as { cork?: () => void; uncork?: () => void };
      let first: Promise<unknown>;
      let second: Promise<pg.QueryResult>;
      stream.cork?.();
      try {
        first = before();
        second = next();
      } finally {
        stream.uncork?.();
      }
      const [done, result] = await Promise.allSettled([first, second]);
      if (done.status === 'rejected') throw done.reason;
      if (result.status === 'rejected') throw result.reason;
      return result.value;
    }

    /** Sends one statement, prepared under its name (see statementNames). */
    private send(text: string, values: unknown[]): Promise<pg.QueryResult> {
      const name = statementName(text, values);
      return name === undefined ? super.query(text, values) : super.query({ name, text, values });
    }

    /** Sends `text` and answers its rows as [column name, value] pairs (see columnsSql). */
    private async sendForColumns(text: string, values: unknown[]): Promise<pg.QueryResult> {
      const name = statementName(text, values);
      const result = await super.query({ ...(name !== undefined ? { name } : {}), text, values, rowMode: 'array' });
      const rows = (result.rows as unknown[][]).map((row) => result.fields.map((field, i) => [field.name, row[i]]));
      return { command: result.command, rowCount: result.rowCount, oid: result.oid, fields: result.fields, rows };
    }

    /** `key`: the statement as given to query(); `text`: without its columns mark. */
    private sendWithHeld(text: string, values: unknown[], columns: boolean, key: string): Promise<pg.QueryResult> {
      const held = this.held;
      this.held = [];
      if (isRollback(text)) return super.query(text, values);
      const send = (t: string, v: unknown[]) => (columns ? this.sendForColumns(t, v) : this.send(t, v));
      if (fitParameters(held, values)) {
        const combination = combinationOf(held, text, key);
        if (combination.carries) return send(combination.text!, allValues(held, values));
      }
      // Statements of their own (in parameter-sized groups), then this one, in one write.
      const groups: Held[][] = [[]];
      let count = 0;
      for (const statement of held) {
        if (count + statement.values.length > PARAMETERS_MAX && groups.at(-1)!.length > 0) {
          groups.push([]);
          count = 0;
        }
        groups.at(-1)!.push(statement);
        count += statement.values.length;
      }
      return this.pipelined(
        () =>
          Promise.all(
            groups.map((group) => this.send(combinationOf(group, 'SELECT 1', 'SELECT 1').text!, allValues(group, []))),
          ),
        () => send(text, values),
      );
    }
  };
}
