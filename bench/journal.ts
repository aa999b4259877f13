// The request journal's cost (issue 42): POST /transfer-out on a server with the journal on
// (the default) against a server with it off (RAILYARD_JOURNAL_SIZE=0), the two started side
// by side on stores of their own and loaded one at a time, in short alternating rounds (off, on,
// on, off, three times over; bench/rounds.ts says why). The target: the journal's server
// answers at least JOURNAL_COST_MIN of the other's requests, the median of the pairs.
//
//   npm run bench -- journal                      (this part alone, about a minute)
//   BENCH_PROFILE=1 npm run bench -- journal      (and a CPU profile of each server: bench/profile.ts)

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type autocannon from 'autocannon';
import { PARTS, printSummaries, readProfile, summarize } from './profile.js';
import {
  alternatingRounds,
  describeRounds,
  meets,
  ROUND_ORDER,
  ROUND_SECONDS,
  type Rounds,
  sideFigures,
} from './rounds.js';
import { cpuMs, rssMb, run, startRailyard, stopped, transferOutLoad, warmupSeconds } from './support.js';

export const JOURNAL_SCENARIO = 'journal';
/** The target: transfer-outs per second with the journal on, against off. */
export const JOURNAL_COST_MIN = 0.95;

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
  /** The rounds, the journal on as A: their ratio (the median of the pairs) is judged. */
  rounds: Rounds;
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
    // A is the side judged: the journal on.
    const rounds = await alternatingRounds({ A: options.on, B: options.off }, undefined, (side, result) => {
      answered[side === 'A' ? 'on' : 'off'] += result.requests.total;
    });
    const figure = (side: Side) => {
      const total = rounds[side === 'on' ? 'A' : 'B'];
      return {
        ...sideFigures(total),
        rssMb: rssMb(servers[side].child.pid!),
        cpuMsPerRequest: (cpuMs(servers[side].child.pid!) - cpuBefore[side]) / total.requests,
      };
    };
    const result = { on: figure('on'), off: figure('off'), rounds, ok: meets(rounds, JOURNAL_COST_MIN) };
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
    `\nthe request journal's cost: POST /transfer-out, journal on (the default) and off (RAILYARD_JOURNAL_SIZE=0), ${ROUND_ORDER.length} alternating rounds of ${ROUND_SECONDS} s`,
  );
  line('journal on', cost.on);
  line('journal off', cost.off);
  console.log(
    `  on against off: ${cost.rounds.ratio.toFixed(3)} (target >= ${JOURNAL_COST_MIN}: ${cost.ok ? 'PASS' : 'FAIL'}); ${describeRounds(cost.rounds)}; CPU per request, off against on: ${(cost.off.cpuMsPerRequest / cost.on.cpuMsPerRequest).toFixed(3)}`,
  );
  return cost.ok;
}
