// The PostgreSQL part of `npm run bench` (issue 21, target 3): POST /transfer-out on a
// railyard server backed by PostgreSQL, beside its floor (bench/floor-pg.ts: the same writes
// from a bare route with the fewest round trips), in two load shapes: one hot source account,
// which every request must lock in turn, and many source accounts (one customer account per
// connection). Then the same transfer at one connection, as a test suite calls. Each shape is
// judged against the floor in alternating rounds (bench/rounds.ts).
//
// The database is DATABASE_URL when set, else a PostgreSQL server the bench starts from the
// machine's binaries in a directory of its own, with PostgreSQL's default durability (fsync
// and synchronous_commit on), and removes afterwards.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type autocannon from 'autocannon';
import { alternatingRounds, describeRounds, meets, type Rounds, sideFigures } from './rounds.js';
import {
  connections,
  databaseUrl,
  digits,
  durationSeconds,
  get,
  here,
  post,
  RSS_MAX_MB,
  rssMb,
  run,
  type ServerInfo,
  startRailyard,
  stopped,
  usdAccount,
  waitForLine,
  warmupSeconds,
} from './support.js';
import { printWebhookLatency, type WebhookLatency, webhookLatency, webhookSteadyRatePg } from './webhooks.js';

/** Targets of issue 21 (3): against the floor in both shapes, and absolute figures. */
const FLOOR_RATIO_MIN = 0.5;
const MANY_ACCOUNTS_RPS_MIN = 1000;
const SEQUENTIAL_P50_MAX_MS = 3;

export interface Postgres {
  url: string;
  stop(): void;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Measures on the embedded store, then on PostgreSQL (DATABASE_URL, else a server of the
 * bench's own, stopped after): the figures of each store that could be measured. `part`
 * names what is skipped when no PostgreSQL server can be had.
 */
export async function onEachStore<T>(part: string, measure: (store: string, url: string | undefined) => Promise<T>) {
  const figures: T[] = [await measure('SQLite (embedded)', undefined)];
  const own = databaseUrl === undefined ? await startPostgres() : undefined;
  if (typeof own === 'string') console.log(`\n${part} on PostgreSQL skipped: ${own}`);
  else {
    try {
      figures.push(await measure('PostgreSQL', databaseUrl ?? own!.url));
    } finally {
      own?.stop();
    }
  }
  return figures;
}

/** A PostgreSQL server of the bench's own, or why there is none. */
export async function startPostgres(): Promise<Postgres | string> {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(a) - Number(b)) : [];
  const bin = versions.length > 0 ? join(root, versions[versions.length - 1]!, 'bin') : undefined;
  if (bin === undefined || !existsSync(join(bin, 'initdb'))) {
    return 'no PostgreSQL server binaries (Debian package postgresql); set DATABASE_URL to use a server';
  }
  const dir = mkdtempSync(join(tmpdir(), 'railyard-bench-pg-'));
  chmodSync(dir, 0o777);
  // initdb refuses to run as root: as root, the server runs as the postgres user.
  const asUser = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : [];
  const command = (program: string, args: string[]) => {
    const [file, ...rest] = [...asUser, join(bin, program), ...args];
    execFileSync(file!, rest, { stdio: 'ignore' });
  };
  const port = await freePort();
  command('initdb', ['-D', join(dir, 'data'), '-U', 'railyard', '-A', 'trust']);
  command('pg_ctl', [
    '-D',
    join(dir, 'data'),
    '-l',
    join(dir, 'server.log'),
    '-w',
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`,
    'start',
  ]);
  execFileSync(join(bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'railyard', 'railyard']);
  return {
    url: `postgres://railyard@127.0.0.1:${port}/railyard`,
    stop() {
      try {
        command('pg_ctl', ['-D', join(dir, 'data'), '-m', 'fast', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

interface Pair {
  source: string;
  destination: string;
}

/** `count` customers, each with a funded USD account and a USD external account of its own. */
async function customerPairs(server: ServerInfo, count: number): Promise<Pair[]> {
  const pairs: Pair[] = [];
  for (let i = 0; i < count; i++) {
    const customer = await post(server, '/customers', {
      customerType: 'INDIVIDUAL',
      platformCustomerId: `bench-${randomUUID()}-000`,
      fullName: 'Robin Bench',
      birthDate: '1990-01-01',
      nationality: 'US',
      address: { line1: '1 Main St', city: 'Austin', state: 'TX', postalCode: '78701', country: 'US' },
    });
    const accounts = await get(server, `/customers/internal-accounts?customerId=${customer.id}&currency=USD`);
    const source = accounts.data[0].id as string;
    await post(server, `/sandbox/internal-accounts/${source}/fund`, { amount: 1_000_000_000 });
    const external = await post(server, '/customers/external-accounts', {
      ...usdAccount(`${digits(9)}000`),
      customerId: customer.id,
    });
    pairs.push({ source, destination: external.id as string });
  }
  return pairs;
}

/** The platform's own funded USD account and a platform external account: one hot source. */
async function platformPair(server: ServerInfo): Promise<Pair> {
  const list = await get(server, '/platform/internal-accounts?currency=USD');
  const source = list.data[0].id as string;
  await post(server, `/sandbox/internal-accounts/${source}/fund`, { amount: 100_000_000_000 });
  const destination = await post(server, '/platform/external-accounts', usdAccount(`${digits(9)}000`));
  return { source, destination: destination.id as string };
}

/** Transfer-outs of one cent, taking the pairs in turn, each with a fresh Idempotency-Key. */
function transfers(origin: string, path: string, auth: string, pairs: Pair[]): autocannon.Options {
  const bodies = pairs.map((pair) =>
    JSON.stringify({ source: { accountId: pair.source }, destination: { accountId: pair.destination }, amount: 1 }),
  );
  const prefix = randomUUID();
  let sequence = 0;
  return {
    url: `${origin}${path}`,
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (request) => {
          const n = sequence++;
          return {
            ...request,
            body: bodies[n % bodies.length]!,
            headers: { ...request.headers, 'idempotency-key': `pg-${prefix}-${n}` },
          };
        },
      },
    ],
  };
}

async function measure(options: autocannon.Options, clients = connections): Promise<autocannon.Result> {
  await run(options, warmupSeconds, clients);
  return run(options, durationSeconds, clients);
}

async function startFloor(url: string, platformId: string): Promise<{ child: ChildProcess; origin: string }> {
  const child = spawn(process.execPath, [join(here, 'floor-pg.js')], {
    env: { ...process.env, FLOOR_DATABASE_URL: url, FLOOR_PLATFORM: platformId, FLOOR_AUTH: 'Basic floor' },
  });
  const out = await waitForLine(child, /floor listening (\S+)/, 'floor');
  return { child, origin: /floor listening (\S+)/.exec(out)![1]! };
}

interface Line {
  name: string;
  result: autocannon.Result;
}

/** Runs the PostgreSQL part and prints it; true when every target passed. */
export async function postgresPart(): Promise<boolean> {
  const own = databaseUrl === undefined ? await startPostgres() : undefined;
  if (typeof own === 'string') {
    console.log(`\nPostgreSQL part skipped: ${own}`);
    return true;
  }
  const url = databaseUrl ?? own!.url;
  const lines: Line[] = [];
  const judged = new Map<'one hot account' | 'many accounts', Rounds>();
  let railyard: Awaited<ReturnType<typeof startRailyard>> | undefined;
  let floor: { child: ChildProcess; origin: string } | undefined;
  let webhook: WebhookLatency[] | undefined;
  let rssAfter = Number.NaN;
  try {
    railyard = await startRailyard({ databaseUrl: url });
    const server = railyard.info;
    const platformId = (await get(server, '/config')).id as string;
    const hot = [await platformPair(server)];
    const many = await customerPairs(server, connections);
    // Each shape is judged against the floor right after its own window, the tables as that
    // window left them: railyard and the floor in alternating rounds (bench/rounds.ts). The
    // floor copies a transfer-out of the platform, which the first window makes.
    for (const [shape, pairs] of [
      ['one hot account', hot],
      ['many accounts', many],
    ] as const) {
      const mine = transfers(server.baseUrl, '/transfer-out', server.auth, pairs);
      lines.push({ name: `POST /transfer-out, ${shape}`, result: await measure(mine) });
      floor ??= await startFloor(url, platformId);
      const floors = transfers(floor.origin, '/transfer-out', 'Basic floor', pairs);
      await run(floors, warmupSeconds);
      judged.set(shape, await alternatingRounds({ A: mine, B: floors }));
    }
    lines.push({
      name: 'POST /transfer-out, 1 connection',
      result: await measure(transfers(server.baseUrl, '/transfer-out', server.auth, hot), 1),
    });
    webhook = await webhookLatency(server, webhookSteadyRatePg);
    // For reference beside the 1-connection target: what the same SQL alone takes.
    lines.push({
      name: 'floor, 1 connection',
      result: await measure(transfers(floor!.origin, '/transfer-out', 'Basic floor', hot), 1),
    });
    // The server has been idle while the floors ran: what it holds after its whole part.
    rssAfter = rssMb(railyard.child.pid!);
  } finally {
    floor?.child.kill('SIGTERM');
    if (floor !== undefined) await stopped(floor.child);
    railyard?.child.kill('SIGTERM');
    if (railyard !== undefined) await stopped(railyard.child);
    own?.stop();
  }

  const where = databaseUrl === undefined ? "a server of the bench's own, default durability" : 'DATABASE_URL';
  console.log(`\nPostgreSQL (${where}): POST /transfer-out and its floor (bench/floor-pg.ts)`);
  const print = (name: string, figures: { rps: number; p50: number; p99: number; errors: number }) =>
    console.log(
      `  ${name.padEnd(40)}${figures.rps.toFixed(0).padStart(8)} req/s  p50 ${figures.p50.toFixed(1)} ms  p99 ${figures.p99.toFixed(1)} ms  errors ${figures.errors}`,
    );
  for (const { name, result } of lines)
    print(name, {
      rps: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      errors: result.errors + result.non2xx,
    });
  // The rounds: railyard's and the floor's, each over its six rounds.
  for (const [shape, rounds] of judged) {
    print(`POST /transfer-out, ${shape}, rounds`, sideFigures(rounds.A));
    print(`floor, ${shape}, rounds`, sideFigures(rounds.B));
  }
  const rps = (name: string) => lines.find((line) => line.name === name)!.result.requests.average;
  const againstFloor = (shape: 'one hot account' | 'many accounts', label: string): [string, boolean] => {
    const rounds = judged.get(shape);
    if (rounds === undefined) return [`${label}: not measured`, false];
    return [
      `${label}: ${rounds.ratio.toFixed(2)} (target >= ${FLOOR_RATIO_MIN}; ${describeRounds(rounds)})`,
      meets(rounds, FLOOR_RATIO_MIN),
    ];
  };
  const checks: [string, boolean][] = [
    againstFloor('one hot account', 'one hot account against its floor'),
    againstFloor('many accounts', 'many accounts against their floor'),
    [
      `many accounts: ${rps('POST /transfer-out, many accounts').toFixed(0)} req/s (target >= ${MANY_ACCOUNTS_RPS_MIN})`,
      rps('POST /transfer-out, many accounts') >= MANY_ACCOUNTS_RPS_MIN,
    ],
    [
      `1 connection: p50 ${lines.find((l) => l.name === 'POST /transfer-out, 1 connection')!.result.latency.p50.toFixed(1)} ms (target <= ${SEQUENTIAL_P50_MAX_MS} ms; the floor's ${lines.find((l) => l.name === 'floor, 1 connection')!.result.latency.p50.toFixed(1)} ms)`,
      lines.find((l) => l.name === 'POST /transfer-out, 1 connection')!.result.latency.p50 <= SEQUENTIAL_P50_MAX_MS,
    ],
    [
      `server RSS after its part, idle while the floors ran: ${rssAfter.toFixed(0)} MB (target <= ${RSS_MAX_MB} MB)`,
      rssAfter <= RSS_MAX_MB,
    ],
  ];
  const errors = lines.reduce((sum, line) => sum + line.result.errors + line.result.non2xx, 0);
  for (const [text, ok] of checks) console.log(`  ${text}: ${ok ? 'PASS' : 'FAIL'}`);
  if (errors > 0) console.log(`  ${errors} requests failed: FAIL`);
  const webhookMet = webhook === undefined || printWebhookLatency(webhook, ', PostgreSQL');
  return errors === 0 && checks.every(([, ok]) => ok) && webhookMet;
}
