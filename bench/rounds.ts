// Two loads compared in short alternating rounds, for a ratio that a drifting machine does not
// decide. On this VM the speed moves by a tenth or more within a minute (a neighbour's burst),
// so two windows of 10 s taken minutes apart can differ by that much for the same server. Here
// the two sides take turns, B A A B three times over, so a drift weighs on both alike. Each
// round and the one beside it make a pair (B+A, A+B, ...), and the figure judged is the median
// of the pairs' ratios (A against B): one round slowed by something else does not decide it.
// Used by the journal's part (journal on against off) and by the floors (railyard against the
// same SQL from a bare route, on each store).

import type autocannon from 'autocannon';
import { durationSeconds, run } from './support.js';

/** The order of the rounds: A is the side judged, B the one it is judged against. */
export const ROUND_ORDER = ['B', 'A', 'A', 'B', 'B', 'A', 'A', 'B', 'B', 'A', 'A', 'B'] as const;
/** Each round's length: the twelve rounds together take about as long as three scenarios. */
export const ROUND_SECONDS = Math.max(1, durationSeconds / 4);

export interface RoundsSide {
  requests: number;
  seconds: number;
  /** Each round's p50 and p99 latency, in ms. */
  p50: number[];
  p99: number[];
  errors: number;
}

export interface Rounds {
  A: RoundsSide;
  B: RoundsSide;
  /** Each pair's ratio, A against B, in the order run. */
  pairs: number[];
  /** The median of the pairs' ratios: the figure judged. */
  ratio: number;
  /** All of A's rounds against all of B's. */
  overall: number;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = sorted.length / 2;
  return (sorted[Math.floor(middle - 0.5)]! + sorted[Math.ceil(middle - 0.5)]!) / 2;
}

/** Runs `load.A` and `load.B` in alternating rounds (both warmed up beforehand by the caller). */
export async function alternatingRounds(
  load: Record<'A' | 'B', autocannon.Options>,
  clients?: number,
  /** Called after each round with its side and result (the journal's part counts requests). */
  onRound?: (side: 'A' | 'B', result: autocannon.Result) => void,
): Promise<Rounds> {
  const sides = {
    A: { requests: 0, seconds: 0, p50: [], p99: [], errors: 0 } as RoundsSide,
    B: { requests: 0, seconds: 0, p50: [], p99: [], errors: 0 } as RoundsSide,
  };
  const rates: number[] = [];
  for (const side of ROUND_ORDER) {
    const result = await run(load[side], ROUND_SECONDS, clients);
    rates.push(result.requests.total / ROUND_SECONDS);
    const total = sides[side];
    total.requests += result.requests.total;
    total.seconds += ROUND_SECONDS;
    total.p50.push(result.latency.p50);
    total.p99.push(result.latency.p99);
    total.errors += result.errors + result.non2xx;
    onRound?.(side, result);
  }
  const pairs: number[] = [];
  for (let i = 0; i + 1 < ROUND_ORDER.length; i += 2) {
    const [first, second] = [rates[i]!, rates[i + 1]!];
    pairs.push(ROUND_ORDER[i] === 'A' ? first / second : second / first);
  }
  return {
    ...sides,
    pairs,
    ratio: median(pairs),
    overall: sides.A.requests / sides.A.seconds / (sides.B.requests / sides.B.seconds),
  };
}

/** Whether A made at least `min` of B's requests (the median of the pairs), neither failing one. */
export function meets(rounds: Rounds, min: number): boolean {
  return rounds.ratio >= min && rounds.A.errors === 0 && rounds.B.errors === 0;
}

/** One side's rate over its rounds, and its median p50 and worst p99. */
export function sideFigures(side: RoundsSide): { rps: number; p50: number; p99: number; errors: number } {
  return {
    rps: side.requests / side.seconds,
    p50: median(side.p50),
    p99: Math.max(...side.p99),
    errors: side.errors,
  };
}

/** The judged line's detail: the pairs and all the rounds. */
export function describeRounds(rounds: Rounds): string {
  return `the median of ${rounds.pairs.length} pairs of alternating ${ROUND_SECONDS} s rounds; the pairs ${rounds.pairs.map((pair) => pair.toFixed(2)).join(' ')}; all rounds ${rounds.overall.toFixed(2)}`;
}
