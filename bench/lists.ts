// Lists at scale (issue 21, target 4): every filter of GET /transactions, in both orders,
// on a store of 1,000,000 transactions against the same query on a store of 1,000. Each
// store is seeded through the API (the platform's accounts, customers with theirs, one
// transaction of each kind), then filled to size by multi-row inserts of rows cloned from
// those (spread over a year, over statuses, types, customers and accounts) straight into
// the SQLite file, with the server stopped; the triggers of migration 0016 keep the counts as
// they would for the server's own writes. The server then serves the lists; every page is
// checked (status 200, totalCount equal to the matches counted here while filling).
//
//   BENCH_ONLY=lists npm run bench       (or: npm run bench -- lists)
//   BENCH_LISTS_ROWS=1000000 BENCH_LISTS_SAMPLES=60
//
// Target: p50 <= 5 ms per page at 1M (20 ms on PostgreSQL), and at most 2x the same query at 1,000.

import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Kysely, SqliteDialect } from 'kysely';
import { backfillTransactionCounts } from '../src/db/migrations/0016_list_counts.js';
import { loadSqlite } from '../src/db/sqlite-driver.js';

const here = dirname(fileURLToPath(import.meta.url));
const ROWS_LARGE = Number(process.env.BENCH_LISTS_ROWS ?? 1_000_000);
const ROWS_SMALL = 1_000;
const SAMPLES = Number(process.env.BENCH_LISTS_SAMPLES ?? 60);
const P50_MAX_MS = 5;
const P50_MAX_MS_PG = 20;
const RATIO_MAX = 2;
const CUSTOMERS = 40;
const PLATFORM_EXTERNALS = 10;
const DAY_MS = 86_400_000;
const SPAN_MS = 365 * DAY_MS;

interface Server {
  child: ChildProcess;
  baseUrl: string;
  auth: string;
}

function digits(count: number): string {
  let out = '';
  for (let i = 0; i < count; i++) out += String(randomInt(10));
  return out;
}

async function startServer(dataDir: string, clientId: string, secret: string): Promise<Server> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDir,
    GRID_CLIENT_ID: clientId,
    GRID_CLIENT_SECRET: secret,
  };
  delete env.RAILYARD_RECORD;
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, [join(here, 'main.js'), 'start'], { env });
  const out = await new Promise<string>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`railyard did not start:\n${text}`)), 60_000);
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      if (/Client secret\s+\S+/.test(text)) {
        clearTimeout(timer);
        resolve(text);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`railyard exited with ${code}:\n${text}`)));
  });
  const baseUrl = /Base URL\s+(\S+)/.exec(out)![1]!;
  return { child, baseUrl, auth: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}` };
}

async function stopServer(server: Server): Promise<void> {
  if (server.child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    server.child.once('exit', () => resolve());
    server.child.kill('SIGTERM');
  });
}

async function call(server: Server, method: string, path: string, body?: unknown): Promise<any> {
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
async function seed(server: Server): Promise<Seed> {
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

const TYPES = ['OUTGOING', 'INCOMING'] as const;
/** Statuses by type, with their weights. */
const STATUS_MIX: Record<(typeof TYPES)[number], [string, number][]> = {
  OUTGOING: [
    ['COMPLETED', 85],
    ['PROCESSING', 5],
    ['PENDING', 2],
    ['FAILED', 6],
    ['EXPIRED', 2],
  ],
  INCOMING: [
    ['COMPLETED', 90],
    ['PENDING', 6],
    ['FAILED', 4],
  ],
};
const STATUSES = [...new Set(Object.values(STATUS_MIX).flatMap((mix) => mix.map(([s]) => s)))];

/** A uniform integer in [0, n) (the fill needs no cryptographic randomness, and this is faster). */
const rand = (n: number) => Math.floor(Math.random() * n);

function pick(mix: [string, number][]): string {
  let r = rand(100);
  for (const [value, weight] of mix) {
    if (r < weight) return value;
    r -= weight;
  }
  return mix[0]![0];
}

/** What the bench knows of every row it wrote, to count the matches of each query itself. */
interface Facts {
  createdMs: Float64Array;
  type: Uint8Array;
  status: Uint8Array;
  /** -1: the platform's own; else the customer's index. */
  owner: Int16Array;
  /** Account indexes: 0 the platform's USD account, then the platform's externals, then each customer's two. */
  source: Int16Array;
  destination: Int16Array;
  reference: string[];
  ids: string[];
}

/** A time-ordered uuid (its first 48 bits the millisecond), as the index of ids grows at its end. */
function timeUuid(ms: number): string {
  let hex = ms.toString(16).padStart(12, '0');
  for (let i = 0; i < 5; i++) hex += rand(0x10000).toString(16).padStart(4, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7${hex.slice(13, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Fills the store to `rows` transactions: the seeded ones and clones of them, spread evenly
 * over the year before `endMs` (times rounded to 100 ms, so some share an instant). A third
 * belong to the platform, the rest to customers (a few of them busy).
 */
async function fill(file: string, s: Seed, rows: number, endMs: number): Promise<Facts> {
  const db = new (loadSqlite().driver)(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -400000');
  const platformId = db.prepare('SELECT id FROM platforms LIMIT 1').pluck().get() as string;
  const templates = db.prepare('SELECT * FROM transactions ORDER BY created_at').all() as Record<string, unknown>[];
  const existing = templates.length;
  const columns = Object.keys(templates[0]!);
  const outgoing = templates.find((t) => t.type === 'OUTGOING' && t.customer_id === null)!;
  const incoming = templates.find((t) => t.type === 'INCOMING')!;
  const customerOut = templates.find((t) => t.type === 'OUTGOING' && t.customer_id !== null)!;
  const accounts = [s.platformUsd, ...s.platformExternals, ...s.customers.flatMap((c) => [c.usd, c.external])];
  const customerUsd = (i: number) => 1 + PLATFORM_EXTERNALS + 2 * i;

  const facts: Facts = {
    createdMs: new Float64Array(rows),
    type: new Uint8Array(rows),
    status: new Uint8Array(rows),
    owner: new Int16Array(rows),
    source: new Int16Array(rows),
    destination: new Int16Array(rows),
    reference: new Array(rows),
    ids: new Array(rows),
  };
  // The seeded rows, as they are.
  for (const [i, t] of templates.entries()) {
    facts.createdMs[i] = Date.parse(t.created_at as string);
    facts.type[i] = TYPES.indexOf(t.type as never);
    facts.status[i] = STATUSES.indexOf(t.status as string);
    const owner = t.customer_id === null ? -1 : s.customers.findIndex((c) => c.id === t.customer_id);
    facts.owner[i] = owner;
    facts.source[i] = accounts.indexOf(t.source_account_id as string);
    facts.destination[i] = accounts.indexOf(t.destination_account_id as string);
    facts.reference[i] = t.reference as string;
    facts.ids[i] = t.id as string;
  }

  const PER_STATEMENT = 200;
  const insertMany = db.prepare(
    `INSERT INTO transactions (${columns.join(', ')}) VALUES ${Array(PER_STATEMENT)
      .fill(`(${columns.map(() => '?').join(', ')})`)
      .join(', ')}`,
  );
  const insertOne = db.prepare(
    `INSERT INTO transactions (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
  );
  const startMs = endMs - SPAN_MS;
  const toWrite = rows - existing;
  const write = db.transaction(() => {
    let batch: unknown[] = [];
    for (let n = 0; n < toWrite; n++) {
      const i = existing + n;
      const ms = Math.floor((startMs + (n / toWrite) * (SPAN_MS - 60_000)) / 100) * 100;
      const type = rand(100) < 65 ? 'OUTGOING' : 'INCOMING';
      const status = pick(STATUS_MIX[type]);
      // A third the platform's; of the customers', the first few busier than the rest.
      const owner = rand(3) === 0 ? -1 : Math.floor(CUSTOMERS * Math.random() ** 2);
      const customer = owner === -1 ? undefined : s.customers[owner]!;
      const internal = owner === -1 ? 0 : customerUsd(owner);
      const external = owner === -1 ? 1 + rand(PLATFORM_EXTERNALS) : customerUsd(owner) + 1;
      const [source, destination] = type === 'OUTGOING' ? [internal, external] : [external, internal];
      const template = type === 'INCOMING' ? incoming : owner === -1 ? outgoing : customerOut;
      const uuid = timeUuid(ms);
      const id = `Transaction:${uuid}`;
      const reference = `RY${uuid.replace(/-/g, '').slice(-12).toUpperCase()}`;
      const at = new Date(ms).toISOString();
      const row: Record<string, unknown> = {
        ...template,
        id,
        platform_id: platformId,
        type,
        status,
        customer_id: customer?.id ?? null,
        platform_customer_id: customer?.platformCustomerId ?? null,
        internal_account_id: accounts[internal],
        external_account_id: accounts[external],
        source_account_id: accounts[source],
        destination_account_id: accounts[destination],
        amount: 100 + rand(1_000_000),
        failure_reason:
          status === 'FAILED' ? (type === 'OUTGOING' ? 'ACCOUNT_CANNOT_RECEIVE' : 'OFFRAMP_FAILED') : null,
        reference,
        settled_at: status === 'COMPLETED' ? at : null,
        created_at: at,
        updated_at: at,
      };
      facts.createdMs[i] = ms;
      facts.type[i] = TYPES.indexOf(type);
      facts.status[i] = STATUSES.indexOf(status);
      facts.owner[i] = owner;
      facts.source[i] = source;
      facts.destination[i] = destination;
      facts.reference[i] = reference;
      facts.ids[i] = id;
      for (const c of columns) batch.push(row[c]);
      if (batch.length === PER_STATEMENT * columns.length) {
        insertMany.run(batch);
        batch = [];
      }
    }
    for (let j = 0; j < batch.length; j += columns.length) insertOne.run(batch.slice(j, j + columns.length));
  });
  // The bulk path: the indexes and triggers of transactions go while the rows go in (each
  // index is then built once, sorted), and the counts the triggers keep are computed once by
  // the migration's own backfill.
  const dependents = db
    .prepare(
      "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'transactions' AND type IN (?) AND sql IS NOT NULL",
    )
    .all(process.env.BENCH_LISTS_DROP ?? 'trigger') as { type: string; name: string; sql: string }[];
  for (const d of dependents) db.exec(`DROP ${d.type.toUpperCase()} ${d.name}`);
  let t0 = performance.now();
  const phase = (name: string) => {
    if (process.env.BENCH_LISTS_VERBOSE)
      console.log(`  fill ${rows}: ${name} ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    t0 = performance.now();
  };
  write();
  phase('rows');
  for (const d of dependents.filter((x) => x.type === 'index')) db.exec(d.sql);
  phase('indexes');
  db.exec('DELETE FROM transaction_counts');
  db.exec(
    'INSERT INTO transaction_counts (platform_id, shard, n) SELECT platform_id, 0, COUNT(*) FROM transactions GROUP BY platform_id',
  );
  await backfillTransactionCounts(new Kysely<unknown>({ dialect: new SqliteDialect({ database: db }) }));
  phase('counts');
  for (const d of dependents.filter((x) => x.type === 'trigger')) db.exec(d.sql);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return facts;
}

// ----------------------------------------------------------------------------- the queries

interface Query {
  name: string;
  params: Record<string, string>;
  match(f: Facts, i: number): boolean;
}

function queries(s: Seed, platformId: string, f: Facts, endMs: number): Query[] {
  const busy = s.customers[0]!;
  const busyIndex = 0;
  const payee = 1; // the platform's first external account
  const referenceRow = Math.floor(f.ids.length / 2);
  const iso = (ms: number) => new Date(ms).toISOString();
  const monthStart = endMs - 200 * DAY_MS + 12_345;
  const monthEnd = monthStart + 30 * DAY_MS;
  const recent = endMs - 30 * DAY_MS + 6_789;
  const early = endMs - SPAN_MS + 30 * DAY_MS;
  const type = (t: string) => TYPES.indexOf(t as never);
  const status = (t: string) => STATUSES.indexOf(t);
  const has = (i: number, account: number) => f.source[i] === account || f.destination[i] === account;
  return [
    { name: '(none)', params: {}, match: () => true },
    { name: 'status=COMPLETED', params: { status: 'COMPLETED' }, match: (x, i) => x.status[i] === status('COMPLETED') },
    { name: 'status=PENDING', params: { status: 'PENDING' }, match: (x, i) => x.status[i] === status('PENDING') },
    { name: 'type=OUTGOING', params: { type: 'OUTGOING' }, match: (x, i) => x.type[i] === type('OUTGOING') },
    { name: 'type=INCOMING', params: { type: 'INCOMING' }, match: (x, i) => x.type[i] === type('INCOMING') },
    { name: 'customerId=<busy customer>', params: { customerId: busy.id }, match: (x, i) => x.owner[i] === busyIndex },
    { name: 'customerId=<platform>', params: { customerId: platformId }, match: (x, i) => x.owner[i] === -1 },
    {
      name: 'platformCustomerId=<busy customer>',
      params: { platformCustomerId: busy.platformCustomerId },
      match: (x, i) => x.owner[i] === busyIndex,
    },
    {
      name: 'accountIdentifier=<platform USD>',
      params: { accountIdentifier: s.platformUsd },
      match: (_x, i) => has(i, 0),
    },
    {
      name: 'accountIdentifier=<payee>',
      params: { accountIdentifier: s.platformExternals[0]! },
      match: (_x, i) => has(i, payee),
    },
    {
      name: 'senderAccountIdentifier=<platform USD>',
      params: { senderAccountIdentifier: s.platformUsd },
      match: (x, i) => x.source[i] === 0,
    },
    {
      name: 'receiverAccountIdentifier=<payee>',
      params: { receiverAccountIdentifier: s.platformExternals[0]! },
      match: (x, i) => x.destination[i] === payee,
    },
    {
      name: 'reference=<one>',
      params: { reference: f.reference[referenceRow]! },
      match: (x, i) => x.reference[i] === f.reference[referenceRow],
    },
    { name: 'startDate=<30 days ago>', params: { startDate: iso(recent) }, match: (x, i) => x.createdMs[i]! >= recent },
    { name: 'endDate=<11 months ago>', params: { endDate: iso(early) }, match: (x, i) => x.createdMs[i]! <= early },
    {
      name: 'startDate&endDate=<a month>',
      params: { startDate: iso(monthStart), endDate: iso(monthEnd) },
      match: (x, i) => x.createdMs[i]! >= monthStart && x.createdMs[i]! <= monthEnd,
    },
    {
      name: 'status=COMPLETED&startDate=<a month>',
      params: { status: 'COMPLETED', startDate: iso(monthStart), endDate: iso(monthEnd) },
      match: (x, i) =>
        x.status[i] === status('COMPLETED') && x.createdMs[i]! >= monthStart && x.createdMs[i]! <= monthEnd,
    },
  ];
}

// ----------------------------------------------------------------------------- measuring

interface Measure {
  p50: number;
  ok: boolean;
  problem?: string;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** p50 of the page (first, and after the first page's cursor), checking every answer. */
async function measure(server: Server, query: Query, expected: number, order: 'asc' | 'desc') {
  const search = new URLSearchParams({ ...query.params, sortOrder: order }).toString();
  const url = `${server.baseUrl}/transactions?${search}`;
  const headers = { authorization: server.auth };
  const one = async (target: string) => {
    const started = performance.now();
    const reply = await fetch(target, { headers });
    const body = (await reply.json()) as { totalCount?: number; nextCursor?: string; data?: unknown[] };
    return { ms: performance.now() - started, status: reply.status, body };
  };
  const first = await one(url);
  let problem: string | undefined;
  if (first.status !== 200) problem = `status ${first.status}`;
  else if (first.body.totalCount !== expected) problem = `totalCount ${first.body.totalCount}, expected ${expected}`;
  const next = first.body.nextCursor === undefined ? undefined : `${url}&cursor=${first.body.nextCursor}`;
  const timesFirst: number[] = [];
  const timesNext: number[] = [];
  for (let i = 0; i < 5; i++) await one(url);
  for (let i = 0; i < SAMPLES; i++) {
    const a = await one(url);
    timesFirst.push(a.ms);
    if (a.status !== 200) problem ??= `status ${a.status}`;
    if (next !== undefined) {
      const b = await one(next);
      timesNext.push(b.ms);
      if (b.status !== 200) problem ??= `status ${b.status} (page 2)`;
    }
  }
  return {
    first: { p50: median(timesFirst), ok: problem === undefined, ...(problem ? { problem } : {}) } as Measure,
    next: timesNext.length > 0 ? median(timesNext) : undefined,
  };
}

interface Store {
  rows: number;
  dataDir: string;
  seed: Seed;
  facts: Facts;
  endMs: number;
  platformId: string;
  clientId: string;
  secret: string;
  fillSeconds: number;
}

async function prepareStore(rows: number): Promise<Store> {
  const dataDir = mkdtempSync(join(tmpdir(), 'railyard-bench-lists-'));
  const clientId = `bench-lists-${randomBytes(4).toString('hex')}`;
  const secret = randomBytes(24).toString('hex');
  const server = await startServer(dataDir, clientId, secret);
  let s: Seed;
  try {
    s = await seed(server);
  } finally {
    await stopServer(server);
  }
  const endMs = Date.now();
  const started = performance.now();
  const facts = await fill(join(dataDir, 'railyard.sqlite'), s, rows, endMs);
  const fillSeconds = (performance.now() - started) / 1000;
  const platformId = (() => {
    const db = new (loadSqlite().driver)(join(dataDir, 'railyard.sqlite'), { readonly: true });
    const id = db.prepare('SELECT id FROM platforms LIMIT 1').pluck().get() as string;
    db.close();
    return id;
  })();
  return { rows, dataDir, seed: s, facts, endMs, platformId, clientId, secret, fillSeconds };
}

interface Result {
  name: string;
  order: 'asc' | 'desc';
  expected: number;
  first: Measure;
  next?: number | undefined;
}

async function measureStore(store: Store, queryList: (store: Store) => Query[]): Promise<Result[]> {
  const server = await startServer(store.dataDir, store.clientId, store.secret);
  const results: Result[] = [];
  try {
    for (const query of queryList(store)) {
      let expected = 0;
      for (let i = 0; i < store.facts.ids.length; i++) if (query.match(store.facts, i)) expected++;
      for (const order of ['desc', 'asc'] as const) {
        const { first, next } = await measure(server, query, expected, order);
        results.push({ name: query.name, order, expected, first, next });
      }
    }
  } finally {
    await stopServer(server);
  }
  return results;
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
      '\nlists at scale: measured on the embedded store only (the PostgreSQL fill is not written yet); DATABASE_URL is ignored here',
    );
  }
  const large = await prepareStore(ROWS_LARGE);
  const small = await prepareStore(ROWS_SMALL);
  const listOf = (store: Store) => queries(store.seed, store.platformId, store.facts, store.endMs);
  const atSmall = await measureStore(small, listOf);
  const atLarge = await measureStore(large, listOf);

  console.log(
    `\nlists at scale: GET /transactions, SQLite (embedded), ${ROWS_LARGE.toLocaleString('en')} transactions (filled in ${large.fillSeconds.toFixed(1)} s) against ${ROWS_SMALL.toLocaleString('en')}; p50 of ${SAMPLES} sequential requests; target p50 <= ${P50_MAX_MS} ms and <= ${RATIO_MAX}x the small store\n`,
  );
  console.log(
    `${'filter'.padEnd(40)}${'order'.padEnd(6)}${'matches'.padStart(10)}${'p50 1k'.padStart(9)}${'p50 1M'.padStart(9)}${'ratio'.padStart(7)}${'page 2'.padStart(9)}  verdict`,
  );
  let failed = false;
  for (const [i, row] of atLarge.entries()) {
    const base = atSmall[i]!;
    const ratio = row.first.p50 / base.first.p50;
    const ok = row.first.ok && base.first.ok && row.first.p50 <= P50_MAX_MS && ratio <= RATIO_MAX;
    failed ||= !ok;
    console.log(
      `${row.name.padEnd(40)}${row.order.padEnd(6)}${String(row.expected).padStart(10)}${base.first.p50.toFixed(2).padStart(9)}${row.first.p50.toFixed(2).padStart(9)}${ratio.toFixed(2).padStart(7)}${(row.next === undefined ? '-' : row.next.toFixed(2)).padStart(9)}  ${ok ? 'PASS' : 'FAIL'}${row.first.problem ? ` (${row.first.problem})` : ''}${base.first.problem ? ` (at 1k: ${base.first.problem})` : ''}`,
    );
  }
  void P50_MAX_MS_PG;
  if (failed) process.exitCode = 1;
  return only === 'lists';
}
