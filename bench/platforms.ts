// The platform-per-test part of `npm run bench` (issue 37): what a test suite pays for a
// platform of its own, over HTTP with the server-admin token (RAILYARD_ADMIN_TOKEN), as a suite
// in any language does it. On each store: the time of POST /_railyard/server/platforms, and of
// POST /_railyard/server/reset on a platform seeded with the demo set at size 2. Requests go one
// at a time (a suite's set-up waits for each), timed at the client from sending to the answer.
//
//   npm run bench -- platforms          (this part alone, a minute or two)
//   DATABASE_URL=postgres://… npm run bench -- platforms     (PostgreSQL on that server)

import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { cpuTicks, TICKS_PER_SECOND } from './idle.js';
import { onEachStore } from './postgres.js';
import { percentile, startRailyard, stopped } from './support.js';

/** The targets: p50 of a creation, and of a reset of a platform seeded at size 2, in ms. */
export const CREATE_P50_MAX_MS = 10;
export const RESET_P50_MAX_MS = 20;
const CREATIONS = Number(process.env.BENCH_PLATFORM_CREATIONS ?? 60);
const RESETS = Number(process.env.BENCH_PLATFORM_RESETS ?? 15);
const WARMUP = 5;
const SEED_SIZE = 2;

interface Figures {
  store: string;
  create: number[];
  reset: number[];
  /** The server process's CPU time per creation, and per seed and reset (all its threads), in ms. */
  createCpuMs: number;
  seedAndResetCpuMs: number;
}

/** Sends one server-admin request; its answer's body and the time it took, in ms. */
async function timed(origin: string, token: string, path: string, body: unknown): Promise<[any, number]> {
  const started = performance.now();
  const reply = await fetch(`${origin}/_railyard/server${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = await reply.json();
  const ms = performance.now() - started;
  if (!reply.ok) throw new Error(`POST /_railyard/server${path}: ${reply.status} ${JSON.stringify(answer)}`);
  return [answer, ms];
}

async function measure(store: string, url: string | undefined): Promise<Figures> {
  const token = `bench-${randomBytes(16).toString('hex')}`;
  const railyard = await startRailyard({
    ...(url === undefined ? {} : { databaseUrl: url }),
    env: { RAILYARD_ADMIN_TOKEN: token },
  });
  const { origin } = railyard.info;
  const pid = railyard.child.pid!;
  const cpuMsSince = (ticks: number, count: number) => ((cpuTicks(pid) - ticks) * (1000 / TICKS_PER_SECOND)) / count;
  try {
    const create = [];
    let ticks = 0;
    for (let i = 0; i < WARMUP + CREATIONS; i++) {
      if (i === WARMUP) ticks = cpuTicks(pid);
      const [, ms] = await timed(origin, token, '/platforms', { name: `bench platform ${i}` });
      if (i >= WARMUP) create.push(ms);
    }
    const createCpuMs = cpuMsSince(ticks, CREATIONS);
    const reset = [];
    for (let i = 0; i < WARMUP + RESETS; i++) {
      if (i === WARMUP) ticks = cpuTicks(pid);
      const [platform] = await timed(origin, token, '/platforms', { name: `bench seeded ${i}` });
      await timed(origin, token, '/seed', { platformId: platform.platformId, size: SEED_SIZE });
      const [, ms] = await timed(origin, token, '/reset', { platformId: platform.platformId });
      if (i >= WARMUP) reset.push(ms);
    }
    return { store, create, reset, createCpuMs, seedAndResetCpuMs: cpuMsSince(ticks, RESETS) };
  } finally {
    railyard.child.kill('SIGTERM');
    await stopped(railyard.child);
  }
}

/** Runs the part on both stores and prints it; true when every figure met its target. */
export async function platformsPart(): Promise<boolean> {
  const figures = await onEachStore('platforms', measure);
  let ok = true;
  // Latencies are wall time at the client: a machine busy with other work lengthens them, and
  // the server's own CPU time per operation (which other load does not count) says by how much.
  console.log(
    `\na platform per test, over HTTP with the admin token (${CREATIONS} creations, ${RESETS} resets after a seed of size ${SEED_SIZE}, one at a time; load average ${loadavg()[0]!.toFixed(1)})`,
  );
  for (const figure of figures) {
    for (const [what, times, max, cpu] of [
      ['creation', figure.create, CREATE_P50_MAX_MS, `server CPU ${figure.createCpuMs.toFixed(1)} ms each`],
      [
        'reset of a seeded platform',
        figure.reset,
        RESET_P50_MAX_MS,
        `server CPU ${figure.seedAndResetCpuMs.toFixed(0)} ms per seed and reset`,
      ],
    ] as const) {
      const sorted = [...times].sort((a, b) => a - b);
      const p50 = percentile(sorted, 50);
      const pass = p50 <= max;
      ok &&= pass;
      console.log(
        `  ${figure.store.padEnd(20)}${what.padEnd(28)} p50 ${p50.toFixed(1).padStart(6)} ms, p90 ${percentile(sorted, 90).toFixed(1).padStart(6)} ms, ${cpu} (target p50 <= ${max} ms: ${pass ? 'PASS' : 'FAIL'})`,
      );
    }
  }
  return ok;
}
