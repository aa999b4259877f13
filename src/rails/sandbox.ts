// The sandbox rail: the outcome is chosen by the magic suffix of the counterparty's
// identifier (src/rails/magic.ts) and played out on the platform's sandbox clock. On a
// platform whose settlement timing is `hosted`, an outgoing payout over a bank rail completes
// no earlier than its rail's time (settlement.ts); incoming pulls settle as the table says.

import { quoteExecutionScenarioFor, UMA_PENDING_LONG_MS, type QuoteExecutionScenario } from './magic.js';
import { transferScenarioFor } from './magic.js';
import { hostedSettlementMs, withSettlementTime } from './settlement.js';
import type { Rail, Settlement, TimelineStep } from './types.js';

/** A payout's timeline as the platform's settlement timing plays it. */
function settled(timeline: TimelineStep[], settlement: Settlement): TimelineStep[] {
  if (settlement.timing !== 'hosted') return timeline;
  return withSettlementTime(timeline, hostedSettlementMs(settlement.paymentRail));
}

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
  plan(payment, settlement): TimelineStep[] {
    const scenario = transferScenarioFor(payment.counterpartyIdentifier);
    let timeline: TimelineStep[];
    if (scenario.failAfterMs === null) timeline = [{ afterMs: 0, outcome: { kind: 'COMPLETED' } }];
    else {
      const failureReason =
        payment.direction === 'OUTGOING' ? scenario.outgoingFailureReason : scenario.incomingFailureReason;
      timeline = [{ afterMs: scenario.failAfterMs, outcome: { kind: 'FAILED', failureReason: failureReason! } }];
    }
    return payment.direction === 'OUTGOING' ? settled(timeline, settlement) : timeline;
  },
  planPayout(payout, settlement): TimelineStep[] {
    if (payout.destinationType === 'ACCOUNT')
      return settled(
        timelineOf(quoteExecutionScenarioFor(payout.counterpartyIdentifier, payout.accountType)),
        settlement,
      );
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
