import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  Kysely,
  PostgresAdapter,
  PostgresDialect,
  type QueryResult,
  SqliteDialect,
  sql,
  type Transaction,
} from 'kysely';
import type pg from 'pg';
import type { Database } from './schema.js';
import { onFirstUse } from '../lazy.js';
import { CONNECTION_PROBE, deferringClient } from './deferred.js';
import { groupCommit } from './group-commit.js';
import { type Checkpointer, checkpointOnThread } from './checkpointer.js';
import { applyStoreSettings, holdDataDirectory } from './sqlite-setup.js';
import { migrateToLatest } from './migrations.js';
import { afterCommit, afterRollback, collectEndings, runTransaction } from './endings.js';
import { Notifier, pgChannelOf, type PostgresLink, registerNotifier } from './notify.js';
import { loadSqlite } from './sqlite-driver.js';

export type DialectName = 'sqlite' | 'postgres';
export type Tx = Transaction<Database>;
export type Queryable = Kysely<Database>;

export interface Db {
  readonly dialect: DialectName;
  /** Plain queries outside a transaction (reads, single statements). */
  readonly k: Kysely<Database>;
  /**
   * Runs fn in one database transaction. On PostgreSQL a serialization failure or a
   * deadlock retries the whole function (at most `transactionAttemptsMax` times), so fn
   * must not have effects outside the transaction.
   *
   * Inside fn, every query must go through `tx`: the embedded store has one connection,
   * which the transaction holds, so a query on `k` would wait for the transaction forever.
   */
  transaction<T>(fn: (tx: Tx) => Promise<T>, options?: TransactionOptions): Promise<T>;
  close(): Promise<void>;
  /** The embedded store on disk: the thread that checkpoints its log (see checkpointer.ts). */
  readonly checkpointer?: Checkpointer | undefined;
  /**
   * The embedded store on disk: its file, and the SQLite driver's path (a thread that opens a
   * file of its own beside it loads the same driver).
   */
  readonly sqliteFile?: { path: string; driverPath: string } | undefined;
  /** Wake-ups between the store's users (see notify.ts). */
  readonly notifier: Notifier;
}

export interface TransactionOptions {
  /**
   * Bookkeeping no request waits on (job claims, the record of a webhook try): the embedded
   * store runs request transactions first when both wait (see group-commit.ts).
   */
  background?: boolean;
}

/** The options of a background transaction (see TransactionOptions). */
export const BACKGROUND: Readonly<TransactionOptions> = Object.freeze({ background: true });

export interface DbOptions {
  /** ':memory:' or a directory that will hold railyard.sqlite. Ignored when databaseUrl is set. */
  dataDir: string;
  databaseUrl?: string | undefined;
  /** PostgreSQL schema to use (created if missing); tests give each app its own. */
  pgSchema?: string | undefined;
  pgPoolMax?: number;
  /** Named prepared statements on PostgreSQL (db/deferred.ts); on unless false. */
  pgPrepared?: boolean;
}

export class DbConnectError extends Error {}

const transactionAttemptsMax = 5;
const PG_RETRYABLE = new Set(['40001', '40P01']);
/** The PostgreSQL driver, loaded only when a PostgreSQL store is opened. */
const pgDriver = onFirstUse<typeof pg>('pg');

const TRANSACTION_SCOPES = new WeakMap<object, (q: Queryable) => object | undefined>();

/**
 * An object standing for the transaction `q` runs in, to memoize reads per transaction
 * (WeakMap keys); undefined outside one. On the embedded store a transaction is a turn of
 * the group commit on a shared connection, which is not a Kysely transaction object.
 */
export function transactionScope(q: Queryable): object | undefined {
  if (q.isTransaction) return q;
  return TRANSACTION_SCOPES.get(q.getExecutor().adapter)?.(q);
}

export async function openDb(options: DbOptions): Promise<Db> {
  const { schema, ...db } = options.databaseUrl
    ? await openPostgres(options)
    : { ...openSqlite(options), schema: undefined };
  await migrateToLatest(db.k, schema);
  const notifier = new Notifier(
    options.databaseUrl === undefined ? undefined : postgresLink(db.k, options.databaseUrl, schema ?? 'public'),
  );
  registerNotifier(db.k, notifier);
  return {
    ...db,
    notifier,
    async close() {
      // What waits to be sent goes before the pool does.
      await notifier.close();
      await db.close();
    },
  };
}

/** How notifications reach the other processes on a PostgreSQL store (see notify.ts). */
function postgresLink(k: Kysely<Database>, url: string, schema: string): PostgresLink {
  return {
    channel: pgChannelOf(schema),
    async connect() {
      const client = new (pgDriver().Client)({ connectionString: url, keepAlive: true });
      // A connection that fails after it was made reports it as an event; unheard, it would end the process.
      client.on('error', () => {});
      await client.connect();
      return client;
    },
    async send(channel, payload) {
      await sql`SELECT pg_notify(${channel}, ${payload})`.execute(k);
    },
  };
}

function openSqlite(options: DbOptions): Omit<Db, 'notifier'> {
  let file = ':memory:';
  if (options.dataDir !== ':memory:') {
    const dir = resolve(options.dataDir);
    try {
      mkdirSync(dir, { recursive: true });
    } catch (err) {
      throw new DbConnectError(`cannot create the data directory ${dir}: ${(err as Error).message}`);
    }
    file = join(dir, 'railyard.sqlite');
  }
  const { driver, path: driverPath } = loadSqlite();
  let database: SQLite.Database;
  let lock: SQLite.Database | undefined;
  try {
    // One server owns a data directory: a second one on it is refused rather than left to
    // interleave its writes and caches with this one's.
    if (file !== ':memory:') lock = holdDataDirectory(driver, `${file}.lock`);
    database = new driver(file);
    applyStoreSettings(database);
  } catch (err) {
    lock?.close();
    if (/database is locked/.test((err as Error).message)) throw err;
    throw new DbConnectError(`cannot open the SQLite store at ${file}: ${(err as Error).message}`);
  }
  const cached = withStatementCache(database);
  const k = new Kysely<Database>({ dialect: new SqliteDialect({ database: cached }) });
  const batches = groupCommit(k, (text) => cached.prepare(text));
  collectEndings(k, (q, committed, fn) => q === batches.activeConnection && batches.onEnd(committed, fn));
  TRANSACTION_SCOPES.set(k.getExecutor().adapter, (q) => (q === batches.activeConnection ? batches.scope : undefined));
  registerDirect(k, {
    run(q, text, parameters) {
      // Straight to SQLite only when no transaction can be affected: inside the running
      // transaction itself, or when none runs or waits (a plain read could otherwise see
      // uncommitted rows). Otherwise Kysely's connection queue decides.
      if (q !== batches.activeConnection && batches.busy) return undefined;
      const statement = cached.prepare(text);
      if (statement.reader) return { rows: statement.all(parameters as unknown[]) };
      const result = statement.run(parameters as unknown[]);
      return { rows: [], numAffectedRows: BigInt(result.changes) };
    },
  });
  const checkpointer = file === ':memory:' ? undefined : checkpointOnThread(file, driverPath);
  return {
    dialect: 'sqlite',
    k,
    // note: transactions on the one SQLite connection are serialized (and grouped under
    // shared commits, see group-commit.ts), so they never need a retry.
    transaction: (fn, options) => batches.transaction(fn, options?.background === true),
    close: async () => {
      await checkpointer?.close();
      await k.destroy();
      lock?.close();
    },
    checkpointer,
    sqliteFile: file === ':memory:' ? undefined : { path: file, driverPath },
  };
}

export interface DirectResult {
  rows: unknown[];
  numAffectedRows?: bigint;
}

/**
 * Compiled SQL run straight on the store's driver, without Kysely's executor (see prepared.ts):
 * at once on the embedded store, on the transaction's own connection on PostgreSQL. Undefined
 * when it cannot be run so (then Kysely runs it).
 */
export interface DirectExecutor {
  run(
    q: Kysely<Database>,
    sql: string,
    parameters: readonly unknown[],
  ): DirectResult | Promise<DirectResult> | undefined;
}

/** Runs compiled SQL on `q`: directly when the store can (DirectExecutor), else through Kysely. */
export function executeCompiled<Row>(
  q: Kysely<Database>,
  text: string,
  parameters: readonly unknown[],
): Promise<QueryResult<Row>> {
  const direct = directExecutor(q)?.run(q, text, parameters);
  if (direct !== undefined) return Promise.resolve(direct as QueryResult<Row>);
  return q.executeQuery<Row>(CompiledQuery.raw(text, parameters as unknown[]));
}

// Keyed by the dialect's adapter, which a database and its transactions share.
const DIRECT = new WeakMap<object, DirectExecutor>();

function registerDirect(k: Kysely<Database>, direct: DirectExecutor): void {
  DIRECT.set(k.getExecutor().adapter, direct);
}

export function directExecutor(q: Kysely<Database>): DirectExecutor | undefined {
  return DIRECT.get(q.getExecutor().adapter);
}

const statementCacheMax = 500;

/**
 * Kysely prepares every query anew; preparing costs more than running a simple query on
 * SQLite. Statements are reusable, so keep the most recent ones per SQL text.
 */
function withStatementCache(database: SQLite.Database) {
  const cache = new Map<string, SQLite.Statement>();
  return {
    prepare(text: string): SQLite.Statement {
      let statement = cache.get(text);
      if (statement === undefined) {
        statement = database.prepare(text);
        if (cache.size >= statementCacheMax) cache.delete(cache.keys().next().value!);
        cache.set(text, statement);
      }
      return statement;
    },
    close(): void {
      cache.clear();
      database.close();
    },
  };
}

/** How long a request may wait for one of the pool's connections. */
const POOL_WAIT_MAX_MS = 30_000;

/**
 * The pool, and the schema its tables go to (undefined when the search_path names no schema
 * that exists). note: the migration tables live there too: the schema given, else the first of
 * the connection's search_path (a URL may set it with ?options=-c%20search_path%3D<schema>).
 * Left unnamed, the migrator would look for them in any schema and could find another
 * installation's.
 */
async function openPostgres(options: DbOptions): Promise<Omit<Db, 'notifier'> & { schema: string | undefined }> {
  const url = options.databaseUrl!;
  const schema = options.pgSchema;
  if (schema !== undefined && !/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`bad schema name ${schema}`);
  const driver = pgDriver();
  // The first connection, on its own with a short limit: a server that cannot be reached
  // stops the start at once with one line.
  const probe = new driver.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  let schemaName = schema;
  try {
    await probe.connect();
    if (schema) await probe.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    else
      schemaName =
        (await probe.query<{ schema: string | null }>('SELECT current_schema() AS schema')).rows[0]?.schema ??
        undefined;
  } catch (err) {
    throw new DbConnectError(`cannot connect to PostgreSQL at ${redactUrl(url)}: ${describePgError(err)}`);
  } finally {
    await probe.end().catch(() => {});
  }
  const pool = new driver.Pool({
    Client: deferringClient(driver, options.pgPrepared !== false),
    connectionString: url,
    max: options.pgPoolMax ?? 20,
    // pg-pool applies this limit to a request's wait for a free connection too, and on a busy
    // machine with many requests at once that wait is long but not a failure (it was a 500
    // after 5 s under load): the limit stands for a server that stopped answering.
    connectionTimeoutMillis: POOL_WAIT_MAX_MS,
    // Every instance on one schema names its connections alike, so that a reader of the event
    // log waits for the transactions of its own installation only (LOG_HORIZON in
    // modules/inspect/store.ts), not for those of another schema of the same database.
    application_name: applicationName(schemaName ?? 'public'),
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // An idle client that loses its server must not crash the process.
  pool.on('error', () => {});
  const k = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  // A transaction's connection, by its Kysely transaction object, while its function runs.
  const clients = new WeakMap<object, pg.PoolClient>();
  registerDirect(k, {
    run(q, text, parameters) {
      if (q.isTransaction) {
        const client = clients.get(q);
        return client === undefined ? undefined : client.query(text, parameters as unknown[]).then(directResult);
      }
      return (async () => {
        const client = await pool.connect();
        try {
          return directResult(await client.query(text, parameters as unknown[]));
        } finally {
          client.release();
        }
      })();
    },
  });
  // The connection Kysely gave the transaction, asked of it once (deferred.ts answers the probe
  // without a trip to the server); after the function, the transaction's queries go through
  // Kysely again, which refuses them once it has ended.
  const withConnection =
    <T>(fn: (tx: Tx) => Promise<T>) =>
    async (tx: Tx): Promise<T> => {
      const probe = await tx.executeQuery<{ client: pg.PoolClient }>(CompiledQuery.raw(CONNECTION_PROBE, []));
      clients.set(tx, probe.rows[0]!.client);
      try {
        return await fn(tx);
      } finally {
        clients.delete(tx);
      }
    };
  return {
    dialect: 'postgres',
    k,
    schema: schemaName,
    async transaction(fn) {
      for (let attempt = 1; ; attempt++) {
        try {
          return await runTransaction(k, withConnection(fn));
        } catch (err) {
          const code = (err as { code?: string }).code;
          if (attempt >= transactionAttemptsMax || code === undefined || !PG_RETRYABLE.has(code)) throw err;
        }
      }
    },
    close: () => k.destroy(),
  };
}

/** A PostgreSQL result as Kysely's own PostgreSQL connection reads it. */
function directResult(result: pg.QueryResult): DirectResult {
  const { command, rowCount } = result;
  return command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE'
    ? { rows: result.rows ?? [], numAffectedRows: BigInt(rowCount ?? 0) }
    : { rows: result.rows ?? [] };
}

/** The application_name of railyard's connections to a schema (at most 63 bytes, PostgreSQL's bound). */
function applicationName(schema: string): string {
  return `railyard:${schema}`.slice(0, 63);
}

function describePgError(err: unknown): string {
  const e = err as { code?: string; message?: string; errors?: { message: string }[] };
  if (e.errors?.length) return e.errors.map((x) => x.message).join('; ');
  return [e.code, e.message].filter(Boolean).join(' ') || String(err);
}

export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the configured URL';
  }
}

/**
 * True when `q` runs on PostgreSQL: where a read that decides a change needs its row lock
 * (SQLite transactions are exclusive, so a plain read is already final there).
 */
export function onPostgres(q: Queryable): boolean {
  return q.getExecutor().adapter instanceof PostgresAdapter;
}

/** True when err is a unique-constraint violation on either store. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** The drops of this process, one after another (dropPgSchema). */
let schemaDrops: Promise<void> = Promise.resolve();

/**
 * Drops a test schema created by openDb({pgSchema}), after any drop this process has under way.
 * One drop locks every object of the schema in one transaction (about 670 locks at migration
 * 0023), and the server's lock table is shared: 64 per connection by default. A test file that
 * closes thirty apps at once overflowed it ("out of shared memory"), so drops queue here.
 */
export function dropPgSchema(databaseUrl: string, schema: string): Promise<void> {
  const drop = schemaDrops.then(async () => {
    const client = new (pgDriver().Client)({ connectionString: databaseUrl });
    await client.connect();
    try {
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    } finally {
      await client.end();
    }
  });
  schemaDrops = drop.catch(() => undefined);
  return drop;
}

export { afterCommit, afterRollback, sql };
