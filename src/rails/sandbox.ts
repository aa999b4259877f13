// The sandbox rail: the outcome is chosen by the magic suffix of the counterparty's
// identifier (src/sandbox/magic.ts) and played out on the platform's sandbox clock.

import { transferScenarioFor } from '../sandbox/magic.js';
import type { Rail, TimelineStep } from './index.js';

export const sandboxRail: Rail = {
  plan(payment): TimelineStep[] {
    const scenario = transferScenarioFor(payment.counterpartyIdentifier);
    if (scenario.failAfterMs === null) return [{ afterMs: 0, outcome: { kind: 'COMPLETED' } }];
    const failureReason = payment.direction === 'OUTGOING' ? scenario.outgoingFailureReason : scenario.incomingFailureReason;
    return [{ afterMs: scenario.failAfterMs, outcome: { kind: 'FAILED', failureReason: failureReason! } }];
  },
};
