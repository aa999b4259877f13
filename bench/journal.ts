// The request journal's cost (issue 42): POST /transfer-out on a server with the journal on
// (the default) against a server with it off (RAILYARD_JOURNAL_SIZE=0), the two started side
// by side on stores of their own and loaded one at a time, in short alternating rounds (off, on,
// on, off, three times over), so that a machine whose speed drifts during the run weighs on both
// alike. Each round and the one beside it make a pair (off+on, on+off, ...); the ratio is the
// median of the pairs' ratios, so that one round slowed by something else on the machine (seen
// here: a neighbour's burst costs a round a tenth of its requests) does not decide it. The
// target: the journal's server answers at least JOURNAL_COST_MIN of the other's requests.
//
//   npm run bench -- journal                      (this part alone, about a minute)
//   BENCH_PROFILE=1 npm run bench -- journal      (and a CPU profile of each server: bench/profile.ts)

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type autocannon from 'autocannon';
import { PARTS, printSummaries, readProfile, summarize } from './profile.js';
import {
  cpuMs,
  durationSeconds,
  rssMb,
  run,
  startRailyard,
  stopped,
  transferOutLoad,
  warmupSeconds,
} from './support.js';

export const JOURNAL_SCENARIO = 'journal';
/** The target: transfer-outs per second with the journal on, against off. */
export const JOURNAL_COST_MIN = 0.95;
const ORDER = ['off', 'on', 'on', 'off', 'off', 'on', 'on', 'off', 'off', 'on', 'on', 'off'] as const;
/** Each round's length: the twelve rounds together take about as long as three scenarios. */
const roundSeconds = Math.max(1, durationSeconds / 4);

export interface SideFigures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  rssMb: number;
  /** The server's CPU (every thread) per request over the rounds, in ms: other load on the machine does not count in it. */
  cpuMsPerRequest: number;
}

export interface JournalCost {
  on: SideFigures;
  off: SideFigures;
  /** The median of the pairs' ratios (on against off): the figure judged. */
  ratio: number;
  /** Each pair's ratio, in the order run. */
  pairs: number[];
  /** All the rounds' requests on against off. */
  overall: number;
  ok: boolean;
}

type Side = 'on' | 'off';

export async function journalCost(): Promise<JournalCost> {
  const profileDirs =
    process.env.BENCH_PROFILE === '1'
      ? { on: mkdtempSync(join(tmpdir(), 'railyard-prof-on-')), off: mkdtempSync(join(tmpdir(), 'railyard-prof-off-')) }
      : undefined;
  const nodeArgs = (side: Side) => (profileDirs ? ['--cpu-prof', '--cpu-prof-dir', profileDirs[side]] : []);
  const servers = {
    on: await startRailyard({ nodeArgs: nodeArgs('on') }),
    off: await startRailyard({ env: { RAILYARD_JOURNAL_SIZE: '0' }, nodeArgs: nodeArgs('off') }),
  };
  const totals = {
    on: { requests: 0, seconds: 0, p50: [] as number[], p99: [] as number[], errors: 0 },
    off: { requests: 0, seconds: 0, p50: [] as number[], p99: [] as number[], errors: 0 },
  };
  let stoppedAll = false;
  const stopAll = async () => {
    if (stoppedAll) return;
    stoppedAll = true;
    for (const server of Object.values(servers)) server.child.kill('SIGTERM');
    await Promise.all(Object.values(servers).map((server) => stopped(server.child)));
  };
  try {
    const options: Record<Side, autocannon.Options> = {
      on: await transferOutLoad(servers.on.info),
      off: await transferOutLoad(servers.off.info),
    };
    // Requests each server answered in all, warm-up included (what its profile covers).
    const answered = { on: 0, off: 0 };
    for (const side of ['off', 'on'] as const)
      answered[side] += (await run(options[side], warmupSeconds)).requests.total;
    const cpuBefore = { on: cpuMs(servers.on.child.pid!), off: cpuMs(servers.off.child.pid!) };
    const rates: number[] = [];
    for (const side of ORDER) {
      const result = await run(options[side], roundSeconds);
      rates.push(result.requests.total / roundSeconds);
      const total = totals[side];
      total.requests += result.requests.total;
      answered[side] += result.requests.total;
      total.seconds += roundSeconds;
      total.p50.push(result.latency.p50);
      total.p99.push(result.latency.p99);
      total.errors += result.errors + result.non2xx;
    }
    const figure = (side: Side) => {
      const total = totals[side];
      const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
      return {
        rps: total.requests / total.seconds,
        p50: sorted(total.p50)[Math.floor(total.p50.length / 2)]!,
        p99: sorted(total.p99)[total.p99.length - 1]!,
        errors: total.errors,
        rssMb: rssMb(servers[side].child.pid!),
        cpuMsPerRequest: (cpuMs(servers[side].child.pid!) - cpuBefore[side]) / total.requests,
      };
    };
    const on = figure('on');
    const off = figure('off');
    const pairs: number[] = [];
    for (let i = 0; i + 1 < ORDER.length; i += 2) {
      const [a, b] = [rates[i]!, rates[i + 1]!];
      pairs.push(ORDER[i] === 'on' ? a / b : b / a);
    }
    const sortedPairs = [...pairs].sort((x, y) => x - y);
    const middle = sortedPairs.length / 2;
    const ratio = (sortedPairs[Math.floor(middle - 0.5)]! + sortedPairs[Math.ceil(middle - 0.5)]!) / 2;
    const ok = ratio >= JOURNAL_COST_MIN && on.errors === 0 && off.errors === 0;
    const result = { on, off, ratio, pairs, overall: on.rps / off.rps, ok };
    if (profileDirs !== undefined) {
      await stopAll();
      console.log(
        `\nCPU profiles of the journal's part (${profileDirs.on}: ${answered.on} requests, ${profileDirs.off}: ${answered.off}); parts counted with what they call: ${PARTS.map((part) => part.name).join('; ')}`,
      );
      printSummaries([
        { label: 'journal on', summary: summarize(readProfile(profileDirs.on)), requests: answered.on },
        { label: 'journal off', summary: summarize(readProfile(profileDirs.off)), requests: answered.off },
      ]);
      if (process.env.BENCH_KEEP_PROFILES !== '1')
        for (const dir of Object.values(profileDirs)) rmSync(dir, { recursive: true, force: true });
    }
    return result;
  } finally {
    await stopAll();
  }
}

/** Prints the part's figures; true when the target is met. */
export function printJournalCost(cost: JournalCost): boolean {
  const line = (label: string, side: JournalCost['on']) =>
    console.log(
      `  ${label.padEnd(30)}${side.rps.toFixed(0).padStart(8)} req/s  p50 ${side.p50.toFixed(1)} ms  p99 ${side.p99.toFixed(1)} ms  errors ${side.errors}  RSS ${side.rssMb.toFixed(0)} MB  server CPU ${(side.cpuMsPerRequest * 1000).toFixed(0)} µs per request`,
    );
  console.log(
    `\nthe request journal's cost: POST /transfer-out, journal on (the default) and off (RAILYARD_JOURNAL_SIZE=0), ${ORDER.length} alternating rounds of ${roundSeconds} s`,
  );
  line('journal on', cost.on);
  line('journal off', cost.off);
  console.log(
    `  on against off, the median of ${cost.pairs.length} pairs of rounds: ${cost.ratio.toFixed(3)} (target >= ${JOURNAL_COST_MIN}: ${cost.ok ? 'PASS' : 'FAIL'})`,
  );
  console.log(
    `  the pairs: ${cost.pairs.map((pair) => pair.toFixed(3)).join(' ')}; all rounds: ${cost.overall.toFixed(3)}; CPU per request, off against on: ${(cost.off.cpuMsPerRequest / cost.on.cpuMsPerRequest).toFixed(3)}`,
  );
  return cost.ok;
}
