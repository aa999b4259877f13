// The ledger's history at scale (issue 36): how long the reads behind the dashboard's account
// page (GET /_railyard/internal-accounts/{id}/entries: postingsOfAccount), its transaction page
// (GET /_railyard/transactions/{id}/timeline: postingsOfTransaction) and the ledger check
// (GET /_railyard/ledger: auditBooks) take on a store of 1,000,000 ledger entries, with and
// without each candidate index of migration 0019 (on ledger_entries' account, alone or
// covering the ledger check, and on ledger_postings.transaction_id). The indexes are dropped
// and created again on the same store between variants, and the rounds repeat, so that a
// machine busy with other work shows as a spread between rounds rather than as a difference
// between the variants.
//
//   npm run bench -- ledger                                  (embedded store)
//   DATABASE_URL=postgres://… npm run bench -- ledger         (PostgreSQL, in a schema of its own)
//   BENCH_LEDGER_ENTRIES=1000000 BENCH_LEDGER_ROUNDS=2 BENCH_LEDGER_SAMPLES=9
//
// The store: one platform, 2,000 internal USD accounts each funded once, and transfers out
// spread over them, each a HOLD and a SETTLE posting of two entries (as the ledger writes
// them), until the entries number BENCH_LEDGER_ENTRIES. The rows go straight into the tables
// (the API would take an hour to make them); the balances are then set from the entries, so
// the ledger check passes. PostgreSQL is ANALYZEd after each change, as its autovacuum would;
// SQLite is not (railyard never runs ANALYZE there, so the planner works without statistics).
//
// `npm run bench -- ledger-writes` measures what the indexes cost the writes: the bench's
// POST /transfer-out load (50 connections, each request its own Idempotency-Key) against one
// server, in turns of BENCH_DURATION seconds, the indexes dropped for one turn and present
// for the next (changed from a connection of the bench's own between turns), repeated
// BENCH_LEDGER_ROUNDS times, so both variants meet the same machine. With DATABASE_URL, on
// PostgreSQL.

import { randomInt, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { type Db, dropPgSchema, openDb } from '../src/db/index.js';
import { newId } from '../src/ids.js';
import { auditBooks, openAccounts, systemAccountId } from '../src/ledger/index.js';
import { postingsOfAccount, postingsOfTransaction } from '../src/ledger/history.js';
import { createPlatform } from '../src/modules/platform/service.js';
import { loadSqlite } from '../src/db/sqlite-driver.js';
import {
  benchDir,
  connections,
  cpuMs,
  databaseUrl,
  durationSeconds,
  percentile,
  run,
  startRailyard,
  stopped,
  transferOutSetup,
} from './support.js';

const ENTRIES = Number(process.env.BENCH_LEDGER_ENTRIES ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_LEDGER_ROUNDS ?? 2);
const SAMPLES = Number(process.env.BENCH_LEDGER_SAMPLES ?? 9);
const AUDIT_SAMPLES = 3;
const ACCOUNTS = 2_000;
const BATCH_ROWS = 1_000;
const DAY_MS = 86_400_000;

/**
 * The candidate indexes: one on the entries' account alone, one that also covers what the
 * ledger check reads of an entry (the platform first, so a check reads only its platform's
 * part, then its account, bucket, currency and amount), and one on the postings' transaction.
 */
const INDEXES = {
  account: { name: 'ledger_entries_account', table: 'ledger_entries', columns: ['account_id'] },
  covering: {
    name: 'ledger_entries_account',
    table: 'ledger_entries',
    columns: ['platform_id', 'account_id', 'bucket', 'currency', 'amount'],
  },
  postings: { name: 'ledger_postings_transaction', table: 'ledger_postings', columns: ['transaction_id'] },
} as const;
type IndexName = keyof typeof INDEXES;

const VARIANTS: { label: string; indexes: IndexName[] }[] = [
  { label: 'no index', indexes: [] },
  { label: 'entries(account_id)', indexes: ['account'] },
  { label: 'entries(platform_id, account_id, …)', indexes: ['covering'] },
  { label: 'postings(transaction_id)', indexes: ['postings'] },
  { label: 'entries(platform_id, …) + postings', indexes: ['covering', 'postings'] },
];

interface Store {
  db: Db;
  platformId: string;
  accounts: string[];
  transactions: string[];
}

/** Fills a new store: the platform, its accounts, and transfers until the entries number ENTRIES. */
async function fill(db: Db): Promise<Store> {
  const started = performance.now();
  // Its transfer-outs settle in their request, as the other scenarios' do (bench/support.ts).
  const config = loadConfig({ ...process.env, DATA_DIR: ':memory:', RAILYARD_SETTLEMENT_TIMING: 'instant' });
  const { platformId } = await createPlatform({ config, db, clock: systemClock }, { name: 'Ledger bench' });
  const start = systemClock.nowMs() - 365 * DAY_MS;
  const accounts = Array.from({ length: ACCOUNTS }, () => newId('InternalAccount'));
  await db.transaction(async (tx) => {
    for (const id of accounts)
      await openAccounts(tx, { platformId, internalAccountId: id, currency: 'USD', now: new Date(start) });
  });
  const external = systemAccountId(platformId, 'EXTERNAL_RAILS', 'USD');
  const funding = systemAccountId(platformId, 'SANDBOX_FUNDING', 'USD');

  const postings: unknown[][] = [];
  const entries: unknown[][] = [];
  const transactions: string[] = [];
  const flush = async (force: boolean) => {
    if (!force && entries.length < 50 * BATCH_ROWS) return;
    await db.transaction(async (tx) => {
      for (let i = 0; i < postings.length; i += BATCH_ROWS) {
        const rows = postings.slice(i, i + BATCH_ROWS).map(([id, kind, transactionId, createdAt]) => ({
          id: id as string,
          platform_id: platformId,
          currency: 'USD',
          kind: kind as string,
          transaction_id: transactionId as string | null,
          created_at: createdAt as string,
        }));
        await tx.insertInto('ledger_postings').values(rows).execute();
      }
      for (let i = 0; i < entries.length; i += BATCH_ROWS) {
        const rows = entries.slice(i, i + BATCH_ROWS).map(([postingId, line, accountId, bucket, amount]) => ({
          posting_id: postingId as string,
          line: line as number,
          platform_id: platformId,
          account_id: accountId as string,
          bucket: bucket as string,
          currency: 'USD',
          amount: amount as number,
        }));
        await tx.insertInto('ledger_entries').values(rows).execute();
      }
    });
    postings.length = 0;
    entries.length = 0;
  };
  const balances = new Map(accounts.map((id) => [id, { available: 0, held: 0 }]));
  const posting = (kind: string, transactionId: string | null, at: number, lines: [string, string, number][]) => {
    const id = newId('Posting');
    for (const [accountId, bucket, amount] of lines) {
      const balance = balances.get(accountId);
      if (balance !== undefined) balance[bucket === 'AVAILABLE' ? 'available' : 'held'] += amount;
    }
    postings.push([id, kind, transactionId, new Date(at).toISOString()]);
    lines.forEach(([accountId, bucket, amount], line) => {
      entries.push([id, line, accountId, bucket, amount]);
    });
  };

  const fundEach = 1_000_000_000;
  for (const account of accounts) {
    posting('FUND', null, start, [
      [funding, 'AVAILABLE', -fundEach],
      [account, 'AVAILABLE', fundEach],
    ]);
  }
  const transfers = Math.max(1, Math.floor((ENTRIES - 2 * ACCOUNTS) / 4));
  const stepMs = (365 * DAY_MS) / transfers;
  for (let i = 0; i < transfers; i++) {
    const account = accounts[i % ACCOUNTS]!;
    const transactionId = newId('Transaction');
    transactions.push(transactionId);
    const at = start + i * stepMs;
    const amount = 1 + (i % 500);
    posting('HOLD', transactionId, at, [
      [account, 'AVAILABLE', -amount],
      [account, 'HELD', amount],
    ]);
    posting('SETTLE', transactionId, at + 1000, [
      [account, 'HELD', -amount],
      [external, 'AVAILABLE', amount],
    ]);
    await flush(false);
  }
  await flush(true);
  // The balances the entries add up to, so that the ledger check finds the books balanced.
  await db.transaction(async (tx) => {
    for (const [id, balance] of balances) {
      await tx
        .updateTable('ledger_accounts')
        .set({ available: balance.available, held: balance.held })
        .where('id', '=', id)
        .execute();
    }
  });
  const count = await db.k
    .selectFrom('ledger_entries')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  console.log(
    `  filled: ${Number(count.n).toLocaleString('en')} entries, ${transfers.toLocaleString('en')} transfers over ` +
      `${ACCOUNTS} accounts, in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  return { db, platformId, accounts, transactions };
}

async function setIndexes(db: Db, wanted: IndexName[]): Promise<void> {
  for (const index of Object.values(INDEXES)) await sql`DROP INDEX IF EXISTS ${sql.id(index.name)}`.execute(db.k);
  for (const name of wanted) {
    const index = INDEXES[name];
    const columns = sql.join(index.columns.map((column) => sql.id(column)));
    await sql`CREATE INDEX ${sql.id(index.name)} ON ${sql.id(index.table)} (${columns})`.execute(db.k);
  }
  if (db.dialect === 'postgres') await sql`ANALYZE ledger_entries, ledger_postings`.execute(db.k);
}

/** The p50 of `samples` calls of `call`, in milliseconds, after one call to warm up. */
async function timed(samples: number, call: (i: number) => Promise<unknown>): Promise<number> {
  await call(-1);
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    await call(i);
    times.push(performance.now() - started);
  }
  return percentile(
    times.sort((a, b) => a - b),
    50,
  );
}

interface Row {
  variant: string;
  round: number;
  accountMs: number;
  transactionMs: number;
  auditMs: number;
}

/**
 * The store's plan for the part of each read that the indexes concern: an account's entries
 * (the account page's subquery), a transaction's postings, and the ledger check's sums
 * (`entrySums`). EXPLAIN QUERY PLAN on the embedded store, EXPLAIN (COSTS OFF) on PostgreSQL,
 * each step on one line.
 */
async function plans(store: Store): Promise<string[]> {
  const { db, platformId, accounts, transactions } = store;
  const explain = db.dialect === 'postgres' ? sql.raw('EXPLAIN (COSTS OFF)') : sql.raw('EXPLAIN QUERY PLAN');
  const statements = {
    account: sql`SELECT posting_id FROM ledger_entries WHERE platform_id = ${platformId} AND account_id = ${accounts[0]}`,
    transaction: sql`SELECT id FROM ledger_postings WHERE platform_id = ${platformId} AND transaction_id = ${transactions[0]}`,
    check: sql`SELECT account_id, bucket, currency, CAST(SUM(amount) AS TEXT) AS sum FROM ledger_entries
      WHERE platform_id = ${platformId} GROUP BY account_id, bucket, currency`,
  };
  const lines: string[] = [];
  for (const [label, statement] of Object.entries(statements)) {
    const result = await sql<Record<string, string>>`${explain} ${statement}`.execute(db.k);
    const steps = result.rows.map((row) => (row.detail ?? row['QUERY PLAN'] ?? '').trim());
    lines.push(`    ${label.padEnd(11)} ${steps.join(' / ')}`);
  }
  return lines;
}

async function measure(store: Store, variant: (typeof VARIANTS)[number], round: number): Promise<Row> {
  const { db, platformId, accounts, transactions } = store;
  await setIndexes(db, variant.indexes);
  if (round === 1) for (const line of await plans(store)) console.log(line);
  const pick = <T>(list: T[]) => list[randomInt(list.length)]!;
  const accountMs = await timed(SAMPLES, () => postingsOfAccount(db.k, platformId, pick(accounts), { limit: 50 }));
  const transactionMs = await timed(SAMPLES, () => postingsOfTransaction(db.k, platformId, pick(transactions)));
  const auditMs = await timed(AUDIT_SAMPLES, async () => {
    const audit = await auditBooks(db, platformId);
    if (!audit.balanced) throw new Error('the filled books do not balance');
  });
  return { variant: variant.label, round, accountMs, transactionMs, auditMs };
}

/** Runs the ledger part when the filter asks for it; true when it ran. */
export async function benchLedger(filter: string | undefined): Promise<boolean> {
  if (filter !== 'ledger' && process.env.BENCH_ONLY !== 'ledger') return false;
  const schema = databaseUrl === undefined ? undefined : `bench_ledger_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  console.log(
    `ledger history at ${ENTRIES.toLocaleString('en')} entries, ${databaseUrl === undefined ? 'embedded store' : 'PostgreSQL'}` +
      ` (p50 of ${SAMPLES} calls; the ledger check of ${AUDIT_SAMPLES})`,
  );
  const db = await openDb({
    dataDir: benchDir('railyard-ledger-'),
    databaseUrl,
    pgSchema: schema,
  });
  try {
    const store = await fill(db);
    const width = Math.max(...VARIANTS.map((v) => v.label.length));
    console.log(`  ${'indexes'.padEnd(width)}  round  account page  transaction page  ledger check`);
    for (let round = 1; round <= ROUNDS; round++) {
      for (const variant of VARIANTS) {
        const row = await measure(store, variant, round);
        console.log(
          `  ${row.variant.padEnd(width)}  ${String(row.round).padStart(5)}  ${row.accountMs.toFixed(2).padStart(9)} ms` +
            `  ${row.transactionMs.toFixed(2).padStart(13)} ms  ${row.auditMs.toFixed(0).padStart(9)} ms`,
        );
      }
    }
  } finally {
    await db.close();
    if (databaseUrl !== undefined && schema !== undefined) await dropPgSchema(databaseUrl, schema);
  }
  return true;
}

/** The variants of the write measurement: none, and what migration 0019 creates. */
const WRITE_VARIANTS: { label: string; indexes: IndexName[] }[] = [
  { label: 'no index', indexes: [] },
  { label: 'entries(platform_id, …) + postings', indexes: ['covering', 'postings'] },
];

/** Runs the write-cost part when the filter asks for it; true when it ran. */
export async function benchLedgerWrites(filter: string | undefined): Promise<boolean> {
  if (filter !== 'ledger-writes') return false;
  const schema = databaseUrl === undefined ? undefined : `bench_writes_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  let serverUrl = databaseUrl;
  if (databaseUrl !== undefined && schema !== undefined) {
    const url = new URL(databaseUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    serverUrl = url.toString();
    const admin = await openDb({ dataDir: ':memory:', databaseUrl, pgSchema: schema });
    await admin.close();
  }
  const railyard = await startRailyard({ databaseUrl: serverUrl });
  // The bench's own connection to the server's store, for the DDL between turns.
  const ddl =
    serverUrl === undefined
      ? sqliteDdl(`${railyard.dataDir}/railyard.sqlite`)
      : await openDb({ dataDir: ':memory:', databaseUrl, pgSchema: schema });
  try {
    const { body } = await transferOutSetup(railyard.info);
    let sequence = 0;
    const turn = async () =>
      run(
        {
          url: `${railyard.info.baseUrl}/transfer-out`,
          method: 'POST',
          headers: { authorization: railyard.info.auth, 'content-type': 'application/json' },
          requests: [
            {
              setupRequest: (request) => ({
                ...request,
                body,
                headers: { ...request.headers, 'idempotency-key': `writes-${sequence++}` },
              }),
            },
          ],
        },
        durationSeconds,
      );
    console.log(
      `POST /transfer-out with and without the ledger indexes, ${serverUrl === undefined ? 'embedded store' : 'PostgreSQL'}` +
        ` (${connections} connections, turns of ${durationSeconds} s)`,
    );
    await turn(); // warm-up
    for (let round = 1; round <= ROUNDS; round++) {
      for (const variant of WRITE_VARIANTS) {
        if ('k' in ddl) await setIndexes(ddl, variant.indexes);
        else ddl.set(variant.indexes);
        const cpuBefore = await usedCpuMs(railyard.child.pid!, ddl);
        const result = await turn();
        const cpu = (await usedCpuMs(railyard.child.pid!, ddl)) - cpuBefore;
        const rows = (await sqlCount(ddl, 'ledger_entries')).toLocaleString('en');
        console.log(
          `  ${variant.label.padEnd(36)} round ${round}: ${result.requests.average.toFixed(0).padStart(5)} req/s, ` +
            `p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ${result.non2xx} non-2xx, ` +
            `${(cpu / result['2xx']).toFixed(2)} ms CPU a transfer, ${rows} entries`,
        );
      }
    }
  } finally {
    if ('k' in ddl) await ddl.close();
    else ddl.close();
    railyard.child.kill('SIGTERM');
    await stopped(railyard.child);
    if (databaseUrl !== undefined && schema !== undefined) await dropPgSchema(databaseUrl, schema);
  }
  return true;
}

/**
 * The CPU used so far by the server and, on PostgreSQL, by the backends serving its
 * connections (the database's other than the bench's own), in ms: a figure that a machine
 * busy with other work changes much less than a rate. A backend that ended between two
 * readings takes its share with it, so the server keeps its pool for the whole run.
 */
async function usedCpuMs(pid: number, ddl: Db | ReturnType<typeof sqliteDdl>): Promise<number> {
  let total = cpuMs(pid);
  if ('k' in ddl) {
    const backends = await sql<{ pid: number }>`
      SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`.execute(ddl.k);
    for (const backend of backends.rows) {
      try {
        total += cpuMs(backend.pid);
      } catch {
        // ended since the query
      }
    }
  }
  return total;
}

/** A connection of the bench's own to a server's embedded store, which changes its indexes. */
function sqliteDdl(file: string) {
  const { driver } = loadSqlite();
  const database = new driver(file);
  database.pragma('busy_timeout = 10000');
  return {
    set(wanted: IndexName[]) {
      for (const index of Object.values(INDEXES)) database.exec(`DROP INDEX IF EXISTS ${index.name}`);
      for (const name of wanted) {
        const index = INDEXES[name];
        database.exec(`CREATE INDEX ${index.name} ON ${index.table} (${index.columns.join(', ')})`);
      }
    },
    count(table: string): number {
      return Number((database.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n);
    },
    close() {
      database.close();
    },
  };
}

async function sqlCount(ddl: Db | ReturnType<typeof sqliteDdl>, table: 'ledger_entries'): Promise<number> {
  if (!('k' in ddl)) return ddl.count(table);
  const row = await ddl.k
    .selectFrom(table)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
