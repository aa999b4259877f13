// What railyard did to a request besides running it, kept beside the request so that the
// request journal and the log can show it. A platform's fault rules write the mark when one
// fires; the journal reads it when it records the request (also a request that ended with no
// answer, when a rule closed its connection).

import type { FastifyRequest } from 'fastify';

export interface FaultMark {
  /** The id of the fault rule that fired. */
  ruleId: string;
  /** What the rule did to the request. */
  effect: 'status' | 'latencyMs' | 'reset' | 'lostResponse';
  /** The status a `status` or `lostResponse` rule answered, or the delay of a `latencyMs` one, in ms. */
  value?: number;
}

const MARKS = new WeakMap<FastifyRequest, FaultMark>();

export function markFault(request: FastifyRequest, mark: FaultMark): void {
  MARKS.set(request, mark);
}

export function faultMarkOf(request: FastifyRequest): FaultMark | undefined {
  return MARKS.get(request);
}

/**
 * Whether a fault rule made the answer (a `status` rule, or a `lostResponse` one, whose
 * answer never arrives or is the 5xx it names): such an answer is outside the reference on
 * purpose, so the checks of answers against it leave it alone.
 */
export function answeredByFault(request: FastifyRequest): boolean {
  const effect = MARKS.get(request)?.effect;
  return effect === 'status' || effect === 'lostResponse';
}
