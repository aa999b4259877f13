// The request journal's cost (issue 42): POST /transfer-out on a server with the journal on
// (the default) against a server with it off (RAILYARD_JOURNAL_SIZE=0), the two started side
// by side on stores of their own and loaded one at a time, in alternating rounds (off, on, on,
// off, off, on), so that a machine whose speed drifts during the run weighs on both alike. The
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
const ORDER = ['off', 'on', 'on', 'off', 'off', 'on'] as const;
/** Each round's length: the six rounds together take about as long as three scenarios. */
const roundSeconds = Math.max(2, Math.round(durationSeconds / 2));

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
  ratio: number;
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
    for (const side of ORDER) {
      const result = await run(options[side], roundSeconds);
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
    const ratio = on.rps / off.rps;
    const result = { on, off, ratio, ok: ratio >= JOURNAL_COST_MIN && on.errors === 0 && off.errors === 0 };
    if (profileDirs !== undefined) {
      await stopAll();
      console.log(
        `\nCPU profiles of the journal's part (${profileDirs.on}, ${profileDirs.off}); parts counted with what they call: ${PARTS.map((part) => part.name).join('; ')}`,
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
    `  on against off: ${cost.ratio.toFixed(3)} (target >= ${JOURNAL_COST_MIN}: ${cost.ok ? 'PASS' : 'FAIL'}); CPU per request, off against on: ${(cost.off.cpuMsPerRequest / cost.on.cpuMsPerRequest).toFixed(3)}`,
  );
  return cost.ok;
}
