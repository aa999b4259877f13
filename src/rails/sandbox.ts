// The sandbox rail: the outcome is chosen by the magic suffix of the counterparty's
// identifier (src/rails/magic.ts) and played out on the platform's sandbox clock.

import { quoteExecutionScenarioFor, UMA_PENDING_LONG_MS, type QuoteExecutionScenario } from './magic.js';
import { transferScenarioFor } from './magic.js';
import type { Rail, TimelineStep } from './types.js';

function timelineOf(scenario: QuoteExecutionScenario): TimelineStep[] {
  switch (scenario.kind) {
    case 'COMPLETE':
      return [{ afterMs: scenario.afterMs, outcome: { kind: 'COMPLETED' } }];
    case 'FAIL':
      return [
        {
          afterMs: scenario.afterMs ?? 0,
          outcome: {
            kind: 'FAILED',
            failureReason: scenario.failureReason,
            ...(scenario.refund ? { refund: scenario.refund } : {}),
          },
        },
      ];
    case 'RETURN':
      return [
        { afterMs: 0, outcome: { kind: 'COMPLETED' } },
        { afterMs: scenario.returnAfterMs, outcome: { kind: 'RETURNED', failureReason: 'PAYOUT_RETURNED' } },
      ];
    case 'CANCEL':
      return [{ afterMs: 0, outcome: { kind: 'CANCELLED' } }];
  }
}

export const sandboxRail: Rail = {
  plan(payment): TimelineStep[] {
    const scenario = transferScenarioFor(payment.counterpartyIdentifier);
    if (scenario.failAfterMs === null) return [{ afterMs: 0, outcome: { kind: 'COMPLETED' } }];
    const failureReason =
      payment.direction === 'OUTGOING' ? scenario.outgoingFailureReason : scenario.incomingFailureReason;
    return [{ afterMs: scenario.failAfterMs, outcome: { kind: 'FAILED', failureReason: failureReason! } }];
  },
  planPayout(payout): TimelineStep[] {
    if (payout.destinationType === 'ACCOUNT')
      return timelineOf(quoteExecutionScenarioFor(payout.counterpartyIdentifier, payout.accountType));
    if (payout.destinationType === 'INTERNAL_ACCOUNT') return [{ afterMs: 0, outcome: { kind: 'COMPLETED' } }];
    switch (payout.umaScenario) {
      case 'SUCCESS':
        return [{ afterMs: 0, outcome: { kind: 'COMPLETED' } }];
      case 'PENDING_LONG':
        return [{ afterMs: UMA_PENDING_LONG_MS, outcome: { kind: 'COMPLETED' } }];
      case 'FAIL_COMPLIANCE':
        return [{ afterMs: 0, outcome: { kind: 'FAILED', failureReason: 'COMPLIANCE_REJECTED', refund: 'COMPLETED' } }];
    }
  },
};
