// npm run bench: load scenarios against the real server and a bare Fastify baseline,
// started here, in the same run. Prints req/s, p50/p99 latency and the ratio to the
// baseline for every scenario, the server's memory after the run, and each target. One
// more scenario measures how long an event takes to reach a webhook receiver under load.
// The write scenarios are also judged against their floors (bench/floor.ts).
//
//   BENCH_DURATION=10 BENCH_CONNECTIONS=50 npm run bench
//   npm run bench -- quotes      (the parts whose name has the word: the quote scenarios and their floors)
//   npm run bench -- journal     (the request journal's cost: transfer-out with it on against off: bench/journal.ts)
//   npm run bench -- idle        (an idle server's CPU on each store: bench/idle.ts)
//   npm run bench -- snapshots   (snapshot restore on both stores: bench/snapshots.ts)
//   npm run bench -- platforms   (a platform per test: creation and reset on each store: bench/platforms.ts)
//   DATABASE_URL=postgres://… npm run bench     (the same scenarios on PostgreSQL)
//   npm run bench -- ledger      (the ledger history reads at 1M entries, with and without their indexes)
//   npm run bench -- ledger-writes   (what those indexes cost POST /transfer-out)

import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type autocannon from 'autocannon';
import { clabeCheckDigit } from '../src/modules/external-accounts/formats.js';
import { IDLE_COLLECT_INTERVAL_MS, IDLE_SETTLE_INTERVALS } from '../src/memory.js';
import { idlePart } from './idle.js';
import { JOURNAL_SCENARIO, journalCost, printJournalCost } from './journal.js';
import { platformsPart } from './platforms.js';
import { benchLedger, benchLedgerWrites } from './ledger.js';
import { benchLists } from './lists.js';
import { postgresPart } from './postgres.js';
import { alternatingRounds, describeRounds, meets, type Rounds, sideFigures } from './rounds.js';
import { SNAPSHOT_SCENARIO, snapshotPart } from './snapshots.js';
import { printWebhookLatency, WEBHOOK_SCENARIO, webhookLatency } from './webhooks.js';
import {
  connections,
  digits,
  durationSeconds,
  get,
  here,
  measureStartup,
  post,
  RSS_MAX_MB,
  rssMb,
  run,
  STARTUP_MAX_MS,
  type ServerInfo,
  startRailyard,
  stopped,
  transferOutLoad,
  usdAccount,
  waitForLine,
  warmupSeconds,
} from './support.js';

interface Target {
  /** Minimum ratio of this scenario's req/s to the baseline scenario's. */
  ratioMin: number;
  p99MaxMs: number;
}

interface Scenario {
  name: string;
  baseline: 'GET' | 'POST';
  target?: Target;
  /** Prepares what the scenario needs; returns the autocannon options. */
  prepare(server: ServerInfo): Promise<autocannon.Options>;
}

async function startBaseline(): Promise<{ child: ChildProcess; origin: string }> {
  const child = spawn(process.execPath, [join(here, 'baseline.js')], { env: { ...process.env, PORT: '0' } });
  const out = await waitForLine(child, /baseline listening (\S+)/, 'baseline');
  return { child, origin: /baseline listening (\S+)/.exec(out)![1]! };
}

/** A floor (see bench/floor.ts): the SQL of one scenario's request alone, from a bare route. */
interface Floor {
  name: string;
  /** The scenario it is the floor of. */
  of: string;
  /** Minimum ratio of the scenario's req/s to its floor's (issue 21, target 1). */
  ratioMin: number;
  options(origin: string, auth: string, seed: FloorSeed): autocannon.Options;
}

/** What the bench made on the floors' store, for their requests. */
interface FloorSeed {
  source: string;
  usdDestination: string;
  mxnDestination: string;
}

const quoteFloorOptions = (origin: string, auth: string, body: unknown): autocannon.Options => ({
  url: `${origin}/quotes`,
  method: 'POST',
  headers: { authorization: auth, 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

const FLOORS: Floor[] = [
  {
    name: 'POST /transfer-out floor (its SQL alone)',
    of: 'POST /transfer-out',
    ratioMin: 0.6,
    options(origin, auth, seed) {
      const body = JSON.stringify({
        source: { accountId: seed.source },
        destination: { accountId: seed.usdDestination },
        amount: 1,
      });
      let sequence = 0;
      return {
        url: `${origin}/transfer-out`,
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        requests: [
          {
            setupRequest: (request) => ({
              ...request,
              body,
              headers: { ...request.headers, 'idempotency-key': `floor-${sequence++}` },
            }),
          },
        ],
      };
    },
  },
  {
    name: 'POST /quotes floor (its SQL alone)',
    of: 'POST /quotes (USD -> MXN)',
    ratioMin: 0.6,
    options: (origin, auth, seed) => quoteFloorOptions(origin, auth, quoteBody(seed.source, seed.mxnDestination)),
  },
  {
    name: 'POST /quotes, executed floor (its SQL alone)',
    of: 'POST /quotes, executed (immediatelyExecute)',
    ratioMin: 0.6,
    options: (origin, auth, seed) =>
      quoteFloorOptions(origin, auth, { ...quoteBody(seed.source, seed.mxnDestination), immediatelyExecute: true }),
  },
];

/**
 * Starts the floor server (see bench/floor.ts) on a store of its own: a railyard server of its
 * own makes one transfer-out, one quote and one executed quote there (the rows the floors
 * copy), and is stopped; then the floor server serves that store.
 */
async function startFloors(): Promise<{ options: (floor: Floor) => autocannon.Options; stop: () => Promise<void> }> {
  const railyard = await startRailyard();
  let seed: FloorSeed;
  let quotes: { created: string; executed: string };
  try {
    const source = (await get(railyard.info, '/platform/internal-accounts?currency=USD')).data[0].id as string;
    await post(railyard.info, `/sandbox/internal-accounts/${source}/fund`, { amount: 100_000_000_000 });
    seed = {
      source,
      usdDestination: (await post(railyard.info, '/platform/external-accounts', usdAccount(`${digits(9)}000`))).id,
      mxnDestination: (await post(railyard.info, '/platform/external-accounts', mxnAccount())).id,
    };
    await post(railyard.info, '/transfer-out', {
      source: { accountId: seed.source },
      destination: { accountId: seed.usdDestination },
      amount: 1,
    });
    const body = quoteBody(seed.source, seed.mxnDestination);
    quotes = {
      created: JSON.stringify(await post(railyard.info, '/quotes', body)),
      executed: JSON.stringify(await post(railyard.info, '/quotes', { ...body, immediatelyExecute: true })),
    };
  } finally {
    railyard.child.kill('SIGTERM');
    await stopped(railyard.child);
  }
  const auth = 'Basic floor';
  const child = spawn(process.execPath, [join(here, 'floor.js')], {
    env: {
      ...process.env,
      FLOOR_DB: join(railyard.dataDir, 'railyard.sqlite'),
      FLOOR_AUTH: auth,
      FLOOR_QUOTES: JSON.stringify(quotes),
    },
  });
  const stop = async () => {
    child.kill('SIGTERM');
    await stopped(child);
  };
  try {
    const out = await waitForLine(child, /floor listening (\S+)/, 'floor');
    const origin = /floor listening (\S+)/.exec(out)![1]!;
    return { options: (floor) => floor.options(origin, auth, seed), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

const SCENARIOS: Scenario[] = [
  {
    name: 'GET /platform/external-accounts/{id}',
    baseline: 'GET',
    async prepare(server) {
      const account = await post(server, '/platform/external-accounts', usdAccount(`${digits(9)}000`));
      return {
        url: `${server.baseUrl}/platform/external-accounts/${account.id}`,
        headers: { authorization: server.auth },
      };
    },
  },
  {
    name: 'POST /platform/external-accounts',
    baseline: 'POST',
    async prepare(server) {
      return {
        url: `${server.baseUrl}/platform/external-accounts`,
        method: 'POST',
        headers: { authorization: server.auth, 'content-type': 'application/json' },
        // Every request registers a new account number (ending in 000, no sandbox scenario).
        requests: [
          { setupRequest: (request) => ({ ...request, body: JSON.stringify(usdAccount(`${digits(13)}000`)) }) },
        ],
      };
    },
  },
  {
    name: 'POST /transfer-out',
    baseline: 'POST',
    prepare: transferOutLoad,
  },
  {
    name: 'GET /transactions (first page of 20)',
    baseline: 'GET',
    async prepare(server) {
      // Runs after the transfer-out scenario, so the list has tens of thousands of rows.
      return { url: `${server.baseUrl}/transactions`, headers: { authorization: server.auth } };
    },
  },
];

const mxnAccount = () => ({
  currency: 'MXN',
  accountInfo: {
    accountType: 'MXN_ACCOUNT',
    clabeNumber: clabeEnding000(),
    beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Bench Mark' },
  },
});

/** A valid CLABE whose last three digits (check digit included) are 000: no sandbox scenario. */
function clabeEnding000(): string {
  for (;;) {
    const first17 = `${digits(15)}00`;
    if (clabeCheckDigit(first17) === 0) return `${first17}0`;
  }
}

/** The bench's quote: 1 USD from `source` to the MXN account `destination`, locked on the sending side. */
const quoteBody = (source: string, destination: string) => ({
  source: { sourceType: 'ACCOUNT', accountId: source },
  destination: { destinationType: 'ACCOUNT', accountId: destination },
  lockedCurrencySide: 'SENDING',
  lockedCurrencyAmount: 100,
});

/** A funded platform USD account and a platform MXN account to pay (suffix 000: success). */
async function quoteCorridor(server: ServerInfo): Promise<ReturnType<typeof quoteBody>> {
  const list = await get(server, '/platform/internal-accounts?currency=USD');
  const source = list.data[0].id as string;
  await post(server, `/sandbox/internal-accounts/${source}/fund`, { amount: 100_000_000_000 });
  const destination = await post(server, '/platform/external-accounts', mxnAccount());
  return quoteBody(source, destination.id);
}

SCENARIOS.push(
  {
    name: 'POST /quotes (USD -> MXN)',
    baseline: 'POST',
    async prepare(server) {
      const body = JSON.stringify(await quoteCorridor(server));
      return {
        url: `${server.baseUrl}/quotes`,
        method: 'POST',
        headers: { authorization: server.auth, 'content-type': 'application/json' },
        body,
      };
    },
  },
  {
    name: 'POST /quotes, executed (immediatelyExecute)',
    baseline: 'POST',
    async prepare(server) {
      // One request creates the quote and executes it: hold, conversion, payout, events.
      const body = JSON.stringify({ ...(await quoteCorridor(server)), immediatelyExecute: true });
      return {
        url: `${server.baseUrl}/quotes`,
        method: 'POST',
        headers: { authorization: server.auth, 'content-type': 'application/json' },
        body,
      };
    },
  },
);

/** Scenarios run again at one connection, as an integration test suite calls (issue 21, target 2). */
const SEQUENTIAL_LABEL = 'sequential latency';
const SEQUENTIAL_SCENARIOS = [
  'GET /platform/external-accounts/{id}',
  'POST /platform/external-accounts',
  'POST /transfer-out',
  'POST /quotes (USD -> MXN)',
  'POST /quotes, executed (immediatelyExecute)',
];
const sequentialSeconds = Number(process.env.BENCH_SEQUENTIAL_DURATION ?? 5);
const SEQUENTIAL_P50_MAX_MS = 1;
const SEQUENTIAL_P99_MAX_MS = 5;

/**
 * How long the server is left idle before its memory after the whole bench is read: long
 * enough for what it gives back when idle (src/memory.ts) to have run, the compacting
 * collection (within two intervals of the last request) and the young generation's settling
 * after it, with two intervals to spare. The figure once the compacting collection has run
 * is printed too.
 */
const RSS_IDLE_WAIT_MS = (IDLE_SETTLE_INTERVALS + 4) * IDLE_COLLECT_INTERVAL_MS;
const RSS_EARLY_WAIT_MS = 3 * IDLE_COLLECT_INTERVAL_MS;

interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  ratio?: number;
  errors: number;
  /** The server's RSS right after this scenario. */
  rssMb?: number;
  target?: Target;
}

async function main(): Promise<void> {
  const filter = process.argv[2];
  if (filter === 'postgres') {
    if (!(await postgresPart())) process.exitCode = 1;
    return;
  }
  if (filter === 'idle') {
    if (!(await idlePart())) process.exitCode = 1;
    return;
  }
  if (filter === JOURNAL_SCENARIO) {
    if (!printJournalCost(await journalCost())) process.exitCode = 1;
    return;
  }
  if (filter === 'platforms') {
    if (!(await platformsPart())) process.exitCode = 1;
    return;
  }
  if (await benchLists(filter)) return;
  if (filter === SNAPSHOT_SCENARIO) {
    if (!(await snapshotPart())) process.exitCode = 1;
    return;
  }
  if (await benchLedger(filter)) return;
  if (await benchLedgerWrites(filter)) return;
  // First, while nothing else runs: how long a start takes.
  const startup = !filter || filter === 'startup' ? await measureStartup() : undefined;
  if (startup !== undefined) {
    const median = [...startup.wallMs].sort((a, b) => a - b)[Math.floor(startup.wallMs.length / 2)]!;
    const ok = median <= STARTUP_MAX_MS;
    if (!ok) process.exitCode = 1;
    console.log(
      `start-up on a new embedded store, launch to the printed credentials: ${startup.wallMs.map((ms) => ms.toFixed(0)).join(', ')} ms ` +
        `(CPU ${startup.cpuMs.map((ms) => ms.toFixed(0)).join(', ')} ms); median ${median.toFixed(0)} ms ` +
        `(target <= ${STARTUP_MAX_MS} ms: ${ok ? 'PASS' : 'FAIL'})`,
    );
    if (filter === 'startup') return;
  }
  const baseline = await startBaseline();
  const railyard = await startRailyard();
  const rows: Row[] = [];
  try {
    const baselineOptions = {
      GET: { url: `${baseline.origin}/ping` },
      POST: {
        url: `${baseline.origin}/echo`,
        method: 'POST' as const,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(usdAccount('123456789012')),
      },
    };
    const baselineRps: Record<string, number> = {};
    for (const kind of ['GET', 'POST'] as const) {
      await run(baselineOptions[kind], warmupSeconds);
      const result = await run(baselineOptions[kind], durationSeconds);
      baselineRps[kind] = result.requests.average;
      rows.push({
        name: `baseline ${kind} (bare Fastify)`,
        rps: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        errors: result.errors + result.non2xx,
      });
    }
    // Each write scenario is judged against its floor right after its own window, with the
    // store as its window left it: the two servers in alternating rounds (bench/rounds.ts).
    const floors = new Map<Floor, Rounds>();
    const wantedFloors = FLOORS.filter(
      (floor) =>
        (!filter || floor.name.includes(filter)) &&
        SCENARIOS.some((scenario) => scenario.name === floor.of && (!filter || scenario.name.includes(filter))),
    );
    const floorServer = wantedFloors.length > 0 ? await startFloors() : undefined;
    try {
      for (const scenario of SCENARIOS) {
        if (filter && !scenario.name.includes(filter)) continue;
        const options = await scenario.prepare(railyard.info);
        await run(options, warmupSeconds);
        const result = await run(options, durationSeconds);
        rows.push({
          name: scenario.name,
          rps: result.requests.average,
          p50: result.latency.p50,
          p99: result.latency.p99,
          ratio: result.requests.average / baselineRps[scenario.baseline]!,
          errors: result.errors + result.non2xx,
          rssMb: rssMb(railyard.child.pid!),
          ...(scenario.target ? { target: scenario.target } : {}),
        });
        for (const floor of wantedFloors.filter((wanted) => wanted.of === scenario.name)) {
          const floorOptions = floorServer!.options(floor);
          await run(floorOptions, warmupSeconds);
          floors.set(floor, await alternatingRounds({ A: options, B: floorOptions }));
        }
      }
    } finally {
      await floorServer?.stop();
    }
    for (const [floor, rounds] of floors) {
      const figures = sideFigures(rounds.B);
      rows.push({ name: floor.name, ...figures, ratio: figures.rps / baselineRps.POST! });
    }
    // The latency an integration test suite feels: one request at a time.
    const sequential: Row[] = [];
    for (const scenario of SCENARIOS) {
      if (!SEQUENTIAL_SCENARIOS.includes(scenario.name)) continue;
      if (filter && !SEQUENTIAL_LABEL.includes(filter)) continue;
      const options = await scenario.prepare(railyard.info);
      await run(options, warmupSeconds, 1);
      const result = await run(options, sequentialSeconds, 1);
      sequential.push({
        name: scenario.name,
        rps: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        errors: result.errors + result.non2xx,
      });
    }
    const rssAfterRequests = rssMb(railyard.child.pid!);
    const webhook = !filter || WEBHOOK_SCENARIO.includes(filter) ? await webhookLatency(railyard.info) : undefined;
    // The memory target is for the server after the whole bench: its last load is over (the
    // webhook backlog delivered), and it has been idle long enough to give back what the
    // bursts left (src/memory.ts). The figure right after the last load is printed too.
    const rssAfterLoad = rssMb(railyard.child.pid!);
    await new Promise((resolve) => setTimeout(resolve, RSS_EARLY_WAIT_MS));
    const rssEarly = rssMb(railyard.child.pid!);
    await new Promise((resolve) => setTimeout(resolve, RSS_IDLE_WAIT_MS - RSS_EARLY_WAIT_MS));
    const rss = rssMb(railyard.child.pid!);
    console.log(
      `\nrailyard bench: SQLite (embedded), ${connections} connections, ${durationSeconds} s per scenario after ${warmupSeconds} s warm-up, server LOG_LEVEL=warn\n`,
    );
    // RSS: the server's resident memory right after that scenario (scenarios run in this order, one server).
    console.log(
      `${'scenario'.padEnd(44)}${'req/s'.padStart(10)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'ratio'.padStart(8)}${'errors'.padStart(8)}${'RSS MB'.padStart(8)}  target`,
    );
    let failed = false;
    for (const row of rows) {
      let verdict = '';
      if (row.target && row.ratio !== undefined) {
        const ok = row.ratio >= row.target.ratioMin && row.p99 <= row.target.p99MaxMs && row.errors === 0;
        failed ||= !ok;
        verdict = `${ok ? 'PASS' : 'FAIL'} (ratio >= ${row.target.ratioMin}, p99 <= ${row.target.p99MaxMs} ms)`;
      }
      console.log(
        `${row.name.padEnd(44)}${row.rps.toFixed(0).padStart(10)}${row.p50.toFixed(1).padStart(9)}${row.p99.toFixed(1).padStart(9)}${(row.ratio === undefined ? '' : row.ratio.toFixed(2)).padStart(8)}${String(row.errors).padStart(8)}${(row.rssMb === undefined ? '' : row.rssMb.toFixed(0)).padStart(8)}  ${verdict}`,
      );
    }
    // Targets against railyard's own floors (issue 21, target 1): each write against the same
    // SQL from a bare route, measured in this run, in alternating rounds (bench/rounds.ts). The
    // floor's row above is its rounds; the scenario's is its own window, earlier.
    const floorLines: string[] = [];
    for (const [floor, rounds] of floors) {
      const scenario = rows.find((row) => row.name === floor.of)!;
      const ok = meets(rounds, floor.ratioMin) && scenario.errors === 0;
      failed ||= !ok;
      floorLines.push(
        `${`${floor.of} against its floor:`.padEnd(66)}${rounds.ratio.toFixed(2)}  (target >= ${floor.ratioMin}: ${ok ? 'PASS' : 'FAIL'}; ${sideFigures(rounds.A).rps.toFixed(0)} / ${sideFigures(rounds.B).rps.toFixed(0)} req/s in the rounds; ${describeRounds(rounds)})`,
      );
    }
    if (floorLines.length > 0) console.log(`\n${floorLines.join('\n')}`);
    if (sequential.length > 0) {
      console.log(
        `\n${SEQUENTIAL_LABEL} (1 connection, ${sequentialSeconds} s each; target p50 <= ${SEQUENTIAL_P50_MAX_MS} ms, p99 <= ${SEQUENTIAL_P99_MAX_MS} ms)`,
      );
      for (const row of sequential) {
        const ok = row.errors === 0 && row.p50 <= SEQUENTIAL_P50_MAX_MS && row.p99 <= SEQUENTIAL_P99_MAX_MS;
        failed ||= !ok;
        console.log(
          `  ${row.name.padEnd(44)}${row.rps.toFixed(0).padStart(8)} req/s  p50 ${row.p50.toFixed(1)} ms  p99 ${row.p99.toFixed(1)} ms  errors ${row.errors}` +
            `  ${ok ? 'PASS' : 'FAIL'}`,
        );
      }
    }
    if (webhook !== undefined) failed = !printWebhookLatency(webhook) || failed;
    const rssOk = rss <= RSS_MAX_MB;
    console.log(
      `\nserver RSS after the request scenarios: ${rssAfterRequests.toFixed(0)} MB; right after the last load: ${rssAfterLoad.toFixed(0)} MB; idle ${RSS_EARLY_WAIT_MS / 1000} s: ${rssEarly.toFixed(0)} MB`,
    );
    console.log(
      `server RSS after the whole bench, idle ${RSS_IDLE_WAIT_MS / 1000} s: ${rss.toFixed(0)} MB (target <= ${RSS_MAX_MB} MB: ${rssOk ? 'PASS' : 'FAIL'})`,
    );
    if (failed || !rssOk) process.exitCode = 1;
  } finally {
    railyard.child.kill('SIGTERM');
    baseline.child.kill('SIGTERM');
  }
  if (!filter && !printJournalCost(await journalCost())) process.exitCode = 1;
  if (!filter && !(await postgresPart())) process.exitCode = 1;
  if (!filter && !(await platformsPart())) process.exitCode = 1;
  if (!filter && !(await idlePart())) process.exitCode = 1;
  if (!filter && !(await snapshotPart())) process.exitCode = 1;
}

await main();
