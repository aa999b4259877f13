// The idle part of `npm run bench` (issue 36): the CPU an idle server uses, on each store.
// Teams leave railyard running all day beside their work, often several instances, so a
// server with nothing to do should cost next to nothing: at most IDLE_CPU_MAX_PERCENT of one
// core. The figure is the server process's own CPU time (user + system, every thread: the
// checkpoint and webhook threads too) from /proc/<pid>/stat over IDLE_MEASURE_SECONDS, after
// a little work and a pause; other load on the machine does not count in it.
//
//   npm run bench -- idle          (this part alone, about two and a half minutes)
//   DATABASE_URL=postgres://… npm run bench -- idle     (PostgreSQL on that server)

import { readFileSync } from 'node:fs';
import { onEachStore } from './postgres.js';
import { digits, get, post, startRailyard, stopped, usdAccount } from './support.js';

/** The target: CPU over the measured minute, in percent of one core. */
export const IDLE_CPU_MAX_PERCENT = 0.2;
const IDLE_MEASURE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
/**
 * The pause between the last request and the measure: what a server does once after a burst
 * (src/memory.ts: a collection after 1 s, the young generation's settling after 6 s) is over.
 */
const SETTLE_SECONDS = 10;
/** /proc counts CPU time in clock ticks of 10 ms (USER_HZ). */
export const TICKS_PER_SECOND = 100;

/** CPU time the process has used, in ticks (user + system, all its threads). */
export function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

interface IdleFigure {
  store: string;
  ticks: number;
  percent: number;
}

/** Starts a server, makes it work a little, lets it settle, and measures its CPU. */
async function measureIdle(store: string, url: string | undefined): Promise<IdleFigure> {
  const railyard = await startRailyard(url === undefined ? {} : { databaseUrl: url });
  try {
    const server = railyard.info;
    // A little of what a test suite does: a payout that completes, so the store, the job
    // runner and the webhook machinery have all run once.
    const source = (await get(server, '/platform/internal-accounts?currency=USD')).data[0].id as string;
    await post(server, `/sandbox/internal-accounts/${source}/fund`, { amount: 100_000 });
    const destination = await post(server, '/platform/external-accounts', usdAccount(`${digits(9)}000`));
    await post(server, '/transfer-out', {
      source: { accountId: source },
      destination: { accountId: destination.id },
      amount: 100,
    });
    await new Promise((resolve) => setTimeout(resolve, SETTLE_SECONDS * 1000));
    const pid = railyard.child.pid!;
    const before = cpuTicks(pid);
    await new Promise((resolve) => setTimeout(resolve, IDLE_MEASURE_SECONDS * 1000));
    const ticks = cpuTicks(pid) - before;
    return { store, ticks, percent: (100 * ticks) / (IDLE_MEASURE_SECONDS * TICKS_PER_SECOND) };
  } finally {
    railyard.child.kill('SIGTERM');
    await stopped(railyard.child);
  }
}

/** Runs the idle part on both stores and prints it; true when both met the target. */
export async function idlePart(): Promise<boolean> {
  const figures = await onEachStore('idle server', measureIdle);
  let ok = true;
  console.log(`\nidle server CPU over ${IDLE_MEASURE_SECONDS} s, ${SETTLE_SECONDS} s after its last request`);
  for (const figure of figures) {
    const pass = figure.percent <= IDLE_CPU_MAX_PERCENT;
    ok &&= pass;
    console.log(
      `  ${figure.store.padEnd(20)}${figure.percent.toFixed(3).padStart(7)}% of a core (${figure.ticks} ticks of 10 ms; target <= ${IDLE_CPU_MAX_PERCENT}%: ${pass ? 'PASS' : 'FAIL'})`,
    );
  }
  return ok;
}
