// Lists at scale (issue 21, target 4): every filter of GET /transactions, in both orders,
// on a store of 1,000,000 transactions against the same query on a store of 1,000. Each
// store is seeded through the API (the platform's accounts, customers with theirs, one
// transaction of each kind), then filled to size straight in the SQLite file, with the
// server stopped, by clones of those rows that SQLite generates itself (spread over a year,
// over statuses, types, customers and accounts); the counts of migration 0016 are then
// computed by the migration's own backfill. Both servers then serve the lists; every answer
// is checked (status 200, totalCount equal to a COUNT(*) on the file with its own predicate).
//
//   BENCH_ONLY=lists npm run bench       (or: npm run bench -- lists)
//   BENCH_LISTS_ROWS=1000000 BENCH_LISTS_SAMPLES=60 BENCH_LISTS_VERBOSE=1 (the fill's phases)
//
// Target: p50 <= 5 ms per page at 1M, and at most 2x the same query at 1,000. Embedded store
// only: the PostgreSQL fill (target 20 ms) is not written yet.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Kysely, SqliteDialect } from 'kysely';
import { backfillTransactionCounts } from '../src/db/migrations/0016_list_counts.js';
import { loadSqlite } from '../src/db/sqlite-driver.js';
import { digits, type ServerInfo, startRailyard, stopped } from './support.js';

const ROWS_LARGE = Number(process.env.BENCH_LISTS_ROWS ?? 1_000_000);
const ROWS_SMALL = 1_000;
const SAMPLES = Number(process.env.BENCH_LISTS_SAMPLES ?? 60);
const P50_MAX_MS = 5;
const RATIO_MAX = 2;
const CUSTOMERS = 40;
const PLATFORM_EXTERNALS = 10;
const DAY_MS = 86_400_000;
const SPAN_MS = 365 * DAY_MS;

/** A server on a store of a million rows, on a busy machine, may take longer to start than the default allows. */
const START_TIMEOUT_MS = 60_000;

async function call(server: ServerInfo, method: string, path: string, body?: unknown): Promise<any> {
  const reply = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: {
      authorization: server.auth,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await reply.text();
  if (!reply.ok) throw new Error(`${method} ${path} failed: ${reply.status} ${text}`);
  return JSON.parse(text);
}

const usdAccount = (fullName: string) => ({
  currency: 'USD',
  accountInfo: {
    accountType: 'USD_ACCOUNT',
    accountNumber: `${digits(9)}000`,
    routingNumber: '021000021',
    beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName },
  },
});

interface Seed {
  platformUsd: string;
  platformExternals: string[];
  customers: { id: string; platformCustomerId: string; usd: string; external: string }[];
}

/** What the fill clones from: accounts, customers, and one transaction of each kind. */
async function seed(server: ServerInfo): Promise<Seed> {
  const platformUsd = (await call(server, 'GET', '/platform/internal-accounts?currency=USD')).data[0].id as string;
  await call(server, 'POST', `/sandbox/internal-accounts/${platformUsd}/fund`, { amount: 100_000_000 });
  const platformExternals: string[] = [];
  for (let i = 0; i < PLATFORM_EXTERNALS; i++) {
    platformExternals.push((await call(server, 'POST', '/platform/external-accounts', usdAccount('Bench Payee'))).id);
  }
  const customers: Seed['customers'] = [];
  for (let i = 0; i < CUSTOMERS; i++) {
    const platformCustomerId = `bench-${i}-${randomBytes(4).toString('hex')}`;
    const customer = await call(server, 'POST', '/customers', {
      customerType: 'INDIVIDUAL',
      platformCustomerId,
      fullName: `Bench Customer ${i}`,
      birthDate: '1988-04-12',
      nationality: 'US',
      address: { line1: '742 Evergreen Terrace', city: 'Springfield', state: 'OR', postalCode: '97403', country: 'US' },
      idType: 'SSN',
      identifier: '123-45-6789',
      email: 'bench@example.com',
    });
    const external = await call(server, 'POST', '/customers/external-accounts', {
      ...usdAccount(`Bench Customer ${i}`),
      customerId: customer.id,
    });
    const usd = (
      await call(
        server,
        'GET',
        `/customers/internal-accounts?customerId=${encodeURIComponent(customer.id)}&currency=USD`,
      )
    ).data[0].id as string;
    customers.push({ id: customer.id, platformCustomerId, usd, external: external.id });
  }
  // One of each kind, the templates of the fill.
  await call(server, 'POST', '/transfer-out', {
    source: { accountId: platformUsd },
    destination: { accountId: platformExternals[0] },
    amount: 100,
  });
  await call(server, 'POST', '/transfer-in', {
    source: { accountId: platformExternals[0] },
    destination: { accountId: platformUsd },
    amount: 100,
  });
  const first = customers[0]!;
  await call(server, 'POST', `/sandbox/internal-accounts/${first.usd}/fund`, { amount: 10_000 });
  await call(server, 'POST', '/transfer-out', {
    source: { accountId: first.usd },
    destination: { accountId: first.external },
    amount: 100,
  });
  return { platformUsd, platformExternals, customers };
}

// ----------------------------------------------------------------------------- the fill

/** Statuses by type, with their cumulative weights out of 100. */
const STATUS_MIX = {
  OUTGOING: [
    ['COMPLETED', 85],
    ['PROCESSING', 90],
    ['PENDING', 92],
    ['FAILED', 98],
    ['EXPIRED', 100],
  ],
  INCOMING: [
    ['COMPLETED', 90],
    ['PENDING', 96],
    ['FAILED', 100],
  ],
} as const;

const statusCase = (type: keyof typeof STATUS_MIX) =>
  `CASE ${STATUS_MIX[type].map(([status, below]) => `WHEN sr < ${below} THEN '${status}'`).join(' ')} END`;

/**
 * Fills the store to `rows` transactions with clones of the seeded ones, generated by the
 * database itself (one INSERT … SELECT over a counter), spread evenly over the year before
 * `endMs` (times rounded to 100 ms, so some share an instant), with ids that grow with time
 * as uuid v7 ids do. 65% are payouts, 35% incoming; a third belong to the platform, the rest
 * to customers (the first few much busier than the rest); statuses by type as STATUS_MIX.
 * Meanwhile the table's indexes and triggers are dropped; then each index is built once,
 * sorted, and the counts the triggers keep are computed by the migration's own backfill.
 */
async function fill(file: string, s: Seed, rows: number, endMs: number): Promise<void> {
  // A fresh store that is thrown away if the fill fails: no journal, and a cache that holds
  // the whole store, so that every page is written once, at the commit.
  const db = new (loadSqlite().driver)(file);
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -3000000');
  db.pragma('temp_store = MEMORY');
  const platformId = db.prepare('SELECT id FROM platforms LIMIT 1').pluck().get() as string;
  const templates = db.prepare('SELECT * FROM transactions ORDER BY created_at').all() as Record<string, unknown>[];
  const toWrite = rows - templates.length;
  const outgoing = templates.find((t) => t.type === 'OUTGOING' && t.customer_id === null)!;
  const incoming = templates.find((t) => t.type === 'INCOMING')!;
  const customerOut = templates.find((t) => t.type === 'OUTGOING' && t.customer_id !== null)!;

  // The owners (-1 the platform, then each customer) and the platform's payees.
  db.exec('CREATE TEMP TABLE bench_owners (i INTEGER PRIMARY KEY, customer_id, platform_customer_id, usd, external)');
  db.exec('CREATE TEMP TABLE bench_payees (i INTEGER PRIMARY KEY, id)');
  const owner = db.prepare('INSERT INTO bench_owners VALUES (?, ?, ?, ?, ?)');
  owner.run(-1, null, null, s.platformUsd, null);
  for (const [i, c] of s.customers.entries()) owner.run(i, c.id, c.platformCustomerId, c.usd, c.external);
  const payee = db.prepare('INSERT INTO bench_payees VALUES (?, ?)');
  for (const [i, id] of s.platformExternals.entries()) payee.run(i, id);

  const generated: Record<string, string> = {
    id: `'Transaction:' || substr(msx, 1, 8) || '-' || substr(msx, 9, 4) || '-7' || substr(rnd, 1, 3) || '-' || substr(rnd, 4, 4) || '-' || substr(rnd, 8, 12)`,
    platform_id: '?',
    type: 'type',
    status: `CASE type WHEN 'OUTGOING' THEN ${statusCase('OUTGOING')} ELSE ${statusCase('INCOMING')} END`,
    customer_id: 'o.customer_id',
    platform_customer_id: 'o.platform_customer_id',
    internal_account_id: 'o.usd',
    external_account_id: 'coalesce(o.external, p.id)',
    source_account_id: `CASE type WHEN 'OUTGOING' THEN o.usd ELSE coalesce(o.external, p.id) END`,
    destination_account_id: `CASE type WHEN 'OUTGOING' THEN coalesce(o.external, p.id) ELSE o.usd END`,
    amount: '100 + amt',
    failure_reason: 'NULL',
    reference: `'RY' || upper(substr(rnd, 8, 12))`,
    settled_at: 'NULL',
    created_at: 'at',
    updated_at: 'at',
  };
  const params: unknown[] = [platformId];
  const columns = Object.keys(templates[0]!);
  const select = columns.map((c) => {
    if (generated[c] !== undefined) return generated[c];
    // Any other column as the seeded row of the same kind has it.
    params.push(incoming[c], outgoing[c], customerOut[c]);
    return `CASE WHEN type = 'INCOMING' THEN ? WHEN owner = -1 THEN ? ELSE ? END`;
  });
  const startMs = endMs - SPAN_MS;
  const stepMs = (SPAN_MS - 60_000) / Math.max(toWrite, 1);
  const insert = db.prepare(`
    INSERT INTO transactions (${columns.join(', ')})
    WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n < ${toWrite - 1}),
    -- Materialized: each random draw is made once per row (a view would draw again at each use).
    r AS MATERIALIZED (
      SELECT CAST((${startMs} + n * ${stepMs}) / 100 AS INTEGER) * 100 AS ms,
        abs(random()) % 100 AS tr, abs(random()) % 100 AS sr, abs(random()) % 3 AS o3,
        (abs(random()) % 1000000) / 1000000.0 AS q, abs(random()) % ${PLATFORM_EXTERNALS} AS pi,
        abs(random()) % 1000000 AS amt, lower(hex(randomblob(10))) AS rnd
      FROM g),
    x AS (
      SELECT r.*, printf('%012x', ms) AS msx,
        strftime('%Y-%m-%dT%H:%M:%S', ms / 1000, 'unixepoch') || printf('.%03dZ', ms % 1000) AS at,
        CASE WHEN tr < 65 THEN 'OUTGOING' ELSE 'INCOMING' END AS type,
        CASE WHEN o3 = 0 THEN -1 ELSE CAST(${CUSTOMERS} * q * q AS INTEGER) END AS owner
      FROM r)
    SELECT ${select.join(',\n      ')}
    FROM x JOIN bench_owners o ON o.i = x.owner JOIN bench_payees p ON p.i = x.pi`);

  const dependents = db
    .prepare(
      "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'transactions' AND type IN ('index', 'trigger') AND sql IS NOT NULL",
    )
    .all() as { type: string; name: string; sql: string }[];
  let t0 = performance.now();
  const phase = (name: string) => {
    if (process.env.BENCH_LISTS_VERBOSE)
      console.log(`  fill ${rows}: ${name} ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    t0 = performance.now();
  };
  db.exec('BEGIN');
  for (const d of dependents) db.exec(`DROP ${d.type.toUpperCase()} ${d.name}`);
  if (toWrite > 0) insert.run(params);
  // The status and failure of each payout or incoming payment, as a real one has them.
  db.prepare(
    `UPDATE transactions SET settled_at = CASE status WHEN 'COMPLETED' THEN created_at END,
       failure_reason = CASE WHEN status = 'FAILED' THEN CASE type WHEN 'OUTGOING' THEN 'ACCOUNT_CANNOT_RECEIVE' ELSE 'OFFRAMP_FAILED' END END
     WHERE platform_id = ? AND reference NOT IN (${templates.map(() => '?').join(', ')})`,
  ).run(platformId, ...templates.map((t) => t.reference));
  phase('rows');
  for (const d of dependents.filter((x) => x.type === 'index')) db.exec(d.sql);
  phase('indexes');
  db.exec('DELETE FROM transaction_counts');
  db.exec(
    'INSERT INTO transaction_counts (platform_id, shard, n) SELECT platform_id, 0, COUNT(*) FROM transactions GROUP BY platform_id',
  );
  await backfillTransactionCounts(new Kysely<unknown>({ dialect: new SqliteDialect({ database: db }) }));
  for (const d of dependents.filter((x) => x.type === 'trigger')) db.exec(d.sql);
  db.exec('COMMIT');
  phase('counts and commit');
  db.pragma('journal_mode = WAL');
  db.close();
}

// ----------------------------------------------------------------------------- the queries

interface Query {
  name: string;
  params: Record<string, string>;
  /** The same selection as SQL over the table, to count the matches independently. */
  where: string;
  args: unknown[];
}

function queries(s: Seed, platformId: string, endMs: number, reference: string): Query[] {
  const busy = s.customers[0]!;
  const payee = s.platformExternals[0]!;
  const iso = (ms: number) => new Date(ms).toISOString();
  const monthStart = iso(endMs - 200 * DAY_MS + 12_345);
  const monthEnd = iso(endMs - 170 * DAY_MS + 12_345);
  const recent = iso(endMs - 30 * DAY_MS + 6_789);
  const early = iso(endMs - SPAN_MS + 30 * DAY_MS);
  return [
    { name: '(none)', params: {}, where: '1 = 1', args: [] },
    { name: 'status=COMPLETED', params: { status: 'COMPLETED' }, where: "status = 'COMPLETED'", args: [] },
    { name: 'status=PENDING', params: { status: 'PENDING' }, where: "status = 'PENDING'", args: [] },
    { name: 'type=OUTGOING', params: { type: 'OUTGOING' }, where: "type = 'OUTGOING'", args: [] },
    { name: 'type=INCOMING', params: { type: 'INCOMING' }, where: "type = 'INCOMING'", args: [] },
    {
      name: 'customerId=<busy customer>',
      params: { customerId: busy.id },
      where: 'customer_id = ?',
      args: [busy.id],
    },
    { name: 'customerId=<platform>', params: { customerId: platformId }, where: 'customer_id IS NULL', args: [] },
    {
      name: 'platformCustomerId=<busy customer>',
      params: { platformCustomerId: busy.platformCustomerId },
      where: 'platform_customer_id = ?',
      args: [busy.platformCustomerId],
    },
    {
      name: 'accountIdentifier=<platform USD>',
      params: { accountIdentifier: s.platformUsd },
      where: '(source_account_id = ? OR destination_account_id = ?)',
      args: [s.platformUsd, s.platformUsd],
    },
    {
      name: 'accountIdentifier=<payee>',
      params: { accountIdentifier: payee },
      where: '(source_account_id = ? OR destination_account_id = ?)',
      args: [payee, payee],
    },
    {
      name: 'senderAccountIdentifier=<platform USD>',
      params: { senderAccountIdentifier: s.platformUsd },
      where: 'source_account_id = ?',
      args: [s.platformUsd],
    },
    {
      name: 'receiverAccountIdentifier=<payee>',
      params: { receiverAccountIdentifier: payee },
      where: 'destination_account_id = ?',
      args: [payee],
    },
    { name: 'reference=<one>', params: { reference }, where: 'reference = ?', args: [reference] },
    { name: 'startDate=<30 days ago>', params: { startDate: recent }, where: 'created_at >= ?', args: [recent] },
    { name: 'endDate=<11 months ago>', params: { endDate: early }, where: 'created_at <= ?', args: [early] },
    {
      name: 'startDate&endDate=<a month>',
      params: { startDate: monthStart, endDate: monthEnd },
      where: 'created_at >= ? AND created_at <= ?',
      args: [monthStart, monthEnd],
    },
    {
      name: 'status=COMPLETED&<a month>',
      params: { status: 'COMPLETED', startDate: monthStart, endDate: monthEnd },
      where: "status = 'COMPLETED' AND created_at >= ? AND created_at <= ?",
      args: [monthStart, monthEnd],
    },
  ];
}

// ----------------------------------------------------------------------------- measuring

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

interface Store {
  rows: number;
  dataDir: string;
  clientId: string;
  secret: string;
  fillSeconds: number;
  queries: Query[];
  /** The matches of each query, counted on the file. */
  expected: number[];
}

async function prepareStore(rows: number): Promise<Store> {
  const dataDir = mkdtempSync(join(tmpdir(), 'railyard-bench-lists-'));
  const clientId = `bench-lists-${randomBytes(4).toString('hex')}`;
  const secret = randomBytes(24).toString('hex');
  const server = await startRailyard({
    dataDir,
    credentials: { clientId, clientSecret: secret },
    startTimeoutMs: START_TIMEOUT_MS,
  });
  let s: Seed;
  try {
    s = await seed(server.info);
  } finally {
    server.child.kill('SIGTERM');
    await stopped(server.child);
  }
  const endMs = Date.now();
  const file = join(dataDir, 'railyard.sqlite');
  const started = performance.now();
  await fill(file, s, rows, endMs);
  const fillSeconds = (performance.now() - started) / 1000;
  const db = new (loadSqlite().driver)(file, { readonly: true });
  try {
    const platformId = db.prepare('SELECT id FROM platforms LIMIT 1').pluck().get() as string;
    const reference = db
      .prepare('SELECT reference FROM transactions ORDER BY created_at, id LIMIT 1 OFFSET ?')
      .pluck()
      .get(Math.floor(rows / 2)) as string;
    const list = queries(s, platformId, endMs, reference);
    const expected = list.map(
      (q) =>
        db
          .prepare(`SELECT COUNT(*) FROM transactions WHERE platform_id = ? AND ${q.where}`)
          .pluck()
          .get(platformId, ...q.args) as number,
    );
    return { rows, dataDir, clientId, secret, fillSeconds, queries: list, expected };
  } finally {
    db.close();
  }
}

interface Sample {
  first: number[];
  next: number[];
  problem?: string;
}

/**
 * Samples one page of `query` (the first, then the one after its cursor) on a store, after
 * checking the answer: 200, and totalCount equal to the matches counted on the file.
 */
async function sampler(server: ServerInfo, query: Query, expected: number, order: 'asc' | 'desc') {
  const search = new URLSearchParams({ ...query.params, sortOrder: order }).toString();
  const url = `${server.baseUrl}/transactions?${search}`;
  const headers = { authorization: server.auth };
  const one = async (target: string) => {
    const started = performance.now();
    const reply = await fetch(target, { headers });
    const body = (await reply.json()) as { totalCount?: number; nextCursor?: string };
    return { ms: performance.now() - started, status: reply.status, body };
  };
  const sample: Sample = { first: [], next: [] };
  const head = await one(url);
  if (head.status !== 200) sample.problem = `status ${head.status}`;
  else if (head.body.totalCount !== expected)
    sample.problem = `totalCount ${head.body.totalCount}, expected ${expected}`;
  const next = head.body.nextCursor === undefined ? undefined : `${url}&cursor=${head.body.nextCursor}`;
  return {
    sample,
    async take(record: boolean) {
      const a = await one(url);
      if (a.status !== 200) sample.problem ??= `status ${a.status}`;
      if (record) sample.first.push(a.ms);
      if (next !== undefined) {
        const b = await one(next);
        if (b.status !== 200) sample.problem ??= `status ${b.status} (page 2)`;
        if (record) sample.next.push(b.ms);
      }
    },
  };
}

/**
 * Runs the lists scenario when asked: alone with BENCH_ONLY=lists or `npm run bench -- lists`
 * (then answers true: the rest of the bench is skipped), or as part of the whole bench.
 */
export async function benchLists(filter: string | undefined): Promise<boolean> {
  const only = process.env.BENCH_ONLY ?? filter;
  if (only !== undefined && only !== 'lists') return false;
  if (process.env.DATABASE_URL) {
    console.log(
      '\nlists at scale: measured on the embedded store only (a PostgreSQL fill is not written yet); DATABASE_URL is ignored here',
    );
  }
  const large = await prepareStore(ROWS_LARGE);
  const small = await prepareStore(ROWS_SMALL);
  // Both servers run at once and take turns, so that a change in the machine's load weighs
  // on both sides of each ratio alike.
  const start = (store: Store) =>
    startRailyard({
      dataDir: store.dataDir,
      credentials: { clientId: store.clientId, clientSecret: store.secret },
      startTimeoutMs: START_TIMEOUT_MS,
    });
  const servers = [await start(small), await start(large)];
  const rowsOut: string[] = [];
  let failed = false;
  try {
    for (const [i, query] of large.queries.entries()) {
      for (const order of ['desc', 'asc'] as const) {
        const s = await sampler(servers[0]!.info, small.queries[i]!, small.expected[i]!, order);
        const l = await sampler(servers[1]!.info, query, large.expected[i]!, order);
        for (let n = 0; n < 5 + SAMPLES; n++) {
          await s.take(n >= 5);
          await l.take(n >= 5);
        }
        const ratio = median(l.sample.first) / median(s.sample.first);
        const p50 = median(l.sample.first);
        const problem = l.sample.problem ?? (s.sample.problem === undefined ? undefined : `at 1k: ${s.sample.problem}`);
        const ok = problem === undefined && p50 <= P50_MAX_MS && ratio <= RATIO_MAX;
        failed ||= !ok;
        rowsOut.push(
          `${query.name.padEnd(40)}${order.padEnd(6)}${String(large.expected[i]).padStart(10)}${median(s.sample.first).toFixed(2).padStart(9)}${p50.toFixed(2).padStart(9)}${ratio.toFixed(2).padStart(7)}${(l.sample.next.length === 0 ? '-' : median(l.sample.next).toFixed(2)).padStart(9)}  ${ok ? 'PASS' : 'FAIL'}${problem === undefined ? '' : ` (${problem})`}`,
        );
      }
    }
  } finally {
    for (const server of servers) {
      server.child.kill('SIGTERM');
      await stopped(server.child);
    }
    for (const store of [small, large]) rmSync(store.dataDir, { recursive: true, force: true });
  }
  console.log(
    `\nlists at scale: GET /transactions, SQLite (embedded), ${ROWS_LARGE.toLocaleString('en')} transactions (filled in ${large.fillSeconds.toFixed(1)} s) against ${ROWS_SMALL.toLocaleString('en')}; p50 of ${SAMPLES} sequential requests each; target p50 <= ${P50_MAX_MS} ms at 1M and <= ${RATIO_MAX}x the same at 1k\n`,
  );
  console.log(
    `${'filter'.padEnd(40)}${'order'.padEnd(6)}${'matches'.padStart(10)}${'p50 1k'.padStart(9)}${'p50 1M'.padStart(9)}${'ratio'.padStart(7)}${'page 2'.padStart(9)}  verdict`,
  );
  for (const line of rowsOut) console.log(line);
  if (failed) process.exitCode = 1;
  return only === 'lists';
}
