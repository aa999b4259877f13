import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { migrateToLatest } from './migrations.js';

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
   */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface DbOptions {
  /** ':memory:' or a directory that will hold railyard.sqlite. Ignored when databaseUrl is set. */
  dataDir: string;
  databaseUrl?: string | undefined;
  /** PostgreSQL schema to use (created if missing); tests give each app its own. */
  pgSchema?: string | undefined;
  pgPoolMax?: number;
}

export class DbConnectError extends Error {}

const transactionAttemptsMax = 5;
const PG_RETRYABLE = new Set(['40001', '40P01']);

export async function openDb(options: DbOptions): Promise<Db> {
  const db = options.databaseUrl ? await openPostgres(options) : openSqlite(options);
  await migrateToLatest(db.k);
  return db;
}

function openSqlite(options: DbOptions): Db {
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
  let database: SQLite.Database;
  try {
    database = new SQLite(file);
    database.pragma('journal_mode = WAL');
    // WAL with synchronous=NORMAL keeps every committed transaction across a process crash
    // (kill -9); only an operating-system crash can lose the last few.
    database.pragma('synchronous = NORMAL');
    database.pragma('foreign_keys = ON');
    database.pragma('busy_timeout = 5000');
  } catch (err) {
    throw new DbConnectError(`cannot open the SQLite store at ${file}: ${(err as Error).message}`);
  }
  const k = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  return {
    dialect: 'sqlite',
    k,
    // note: the SQLite driver holds its single connection for the whole transaction, so
    // transactions are serialized and never need a retry.
    transaction: (fn) => k.transaction().execute(fn),
    close: () => k.destroy(),
  };
}

async function openPostgres(options: DbOptions): Promise<Db> {
  const url = options.databaseUrl!;
  const schema = options.pgSchema;
  if (schema !== undefined && !/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`bad schema name ${schema}`);
  const pool = new pg.Pool({
    connectionString: url,
    max: options.pgPoolMax ?? 20,
    connectionTimeoutMillis: 5000,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // An idle client that loses its server must not crash the process.
  pool.on('error', () => {});
  try {
    const client = await pool.connect();
    try {
      if (schema) await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    } finally {
      client.release();
    }
  } catch (err) {
    await pool.end().catch(() => {});
    throw new DbConnectError(`cannot connect to PostgreSQL at ${redactUrl(url)}: ${describePgError(err)}`);
  }
  const k = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    dialect: 'postgres',
    k,
    async transaction(fn) {
      for (let attempt = 1; ; attempt++) {
        try {
          return await k.transaction().execute(fn);
        } catch (err) {
          const code = (err as { code?: string }).code;
          if (attempt >= transactionAttemptsMax || code === undefined || !PG_RETRYABLE.has(code)) throw err;
        }
      }
    },
    close: () => k.destroy(),
  };
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

/** True when err is a unique-constraint violation on either store. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** Drops a test schema created by openDb({pgSchema}). */
export async function dropPgSchema(databaseUrl: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

export { sql };
