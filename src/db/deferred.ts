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
// begin with WITH). A ROLLBACK drops them.
//
// Only inserts of rows with fresh ids may be deferred: an error of theirs (which would be a
// bug) surfaces on the statement they travel with, and fails the transaction all the same.

import type pg from 'pg';

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
  text: string;
  values: unknown[];
  table: string;
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
  const match = /^\s*insert\s+into\s+"?([a-z_][a-z0-9_]*)"?/i.exec(text);
  if (match === null) throw new Error(`only an INSERT can be deferred: ${text.slice(0, 80)}`);
  return match[1]!;
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
 * so this is worked out once per combination of texts (COMBINATIONS_MAX of them), and the one
 * text, always the same string, finds its prepared statement's name at once.
 */
interface Combination {
  carries: boolean;
  text: string | undefined;
}
const COMBINATIONS_MAX = 200;
const combinations = new Map<string, Combination>();

function combinationOf(held: readonly Held[], text: string): Combination {
  let key = text;
  for (const statement of held) key += `\u0000${statement.values.length}\u0000${statement.text}`;
  let found = combinations.get(key);
  if (found === undefined) {
    const carries = mayCarry(held, text);
    found = { carries, text: carries ? combinedText(held, text) : undefined };
    if (combinations.size < COMBINATIONS_MAX) combinations.set(key, found);
  }
  return found;
}

/** `text` with the held statements in front, as CTEs, and every parameter in one list. */
function combined(
  held: readonly Held[],
  text: string,
  values: readonly unknown[],
): { text: string; values: unknown[] } {
  const all: unknown[] = [];
  for (const statement of held) for (const value of statement.values) all.push(value);
  for (const value of values) all.push(value);
  return { text: combinationOf(held, text).text ?? combinedText(held, text), values: all };
}

/** True when `text` may carry the held statements in front of it. */
function canCarry(held: readonly Held[], text: string, values: readonly unknown[]): boolean {
  const count = held.reduce((sum, statement) => sum + statement.values.length, values.length);
  return count <= PARAMETERS_MAX && combinationOf(held, text).carries;
}

/**
 * The pool's client class: holds deferred statements until the next statement of its
 * transaction. Only the promise form of query(text, values), which Kysely uses, is
 * intercepted. Made from the driver given, which is loaded only when PostgreSQL is used.
 */
export function deferringClient(driver: typeof pg, prepared = true): typeof pg.Client {
  // Per pool (each app has its own): the same text has the same name on all its connections.
  const statementName = prepared ? statementNames() : () => undefined;
  return class DeferringClient extends driver.Client {
    private held: Held[] = [];

    // biome-ignore lint/suspicious/noExplicitAny: pg's query() is overloaded many ways
    override query(...args: any[]): any {
      const [first, values] = args;
      const columns = typeof first === 'string' && first.startsWith(COLUMNS_MARK);
      const text = columns ? first.slice(COLUMNS_MARK.length) : first;
      const plain = typeof text === 'string' && args.length <= 2 && (values === undefined || Array.isArray(values));
      if (!plain) {
        if (this.held.length > 0) throw new Error('a deferred statement is waiting: only plain queries may follow it');
        return super.query(...(args as [string]));
      }
      if (text.startsWith(MARK)) {
        const statement = text.slice(MARK.length);
        this.held.push({ text: statement, values: values ?? [], table: tableOf(statement) });
        return Promise.resolve(DEFERRED_RESULT);
      }
      if (this.held.length === 0)
        return columns ? this.sendForColumns(text, values ?? []) : this.send(text, values ?? []);
      return this.sendWithHeld(text, values ?? [], columns);
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

    private async sendWithHeld(text: string, values: unknown[], columns: boolean): Promise<pg.QueryResult> {
      const held = this.held;
      this.held = [];
      if (/^\s*rollback\b/i.test(text)) return super.query(text, values);
      const send = (t: string, v: unknown[]) => (columns ? this.sendForColumns(t, v) : this.send(t, v));
      if (canCarry(held, text, values)) {
        const statement = combined(held, text, values);
        return send(statement.text, statement.values);
      }
      // One statement of their own first (in parameter-sized groups), then this one.
      let group: Held[] = [];
      let count = 0;
      const flush = async () => {
        if (group.length === 0) return;
        const statement = combined(group, 'SELECT 1', []);
        await this.send(statement.text, statement.values);
        group = [];
        count = 0;
      };
      for (const statement of held) {
        if (count + statement.values.length > PARAMETERS_MAX) await flush();
        group.push(statement);
        count += statement.values.length;
      }
      await flush();
      return send(text, values);
    }
  };
}
