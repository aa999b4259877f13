// Payment rails behind one interface. A rail, given a payment, answers with its timeline:
// the outcomes it will report and when. Steps due at once are applied in the transaction
// that creates the payment; later ones become jobs (see modules/transactions). Railyard has
// one rail, the sandbox simulator.

import type { UmaScenario } from '../sandbox/magic.js';
import { sandboxRail } from './sandbox.js';

export type RailOutcome =
  | { kind: 'COMPLETED' }
  /**
   * Failed before completion. `refund` (cross-currency payments): the funds go back to the
   * payer through a refund that completes or itself fails; without it they are released.
   */
  | { kind: 'FAILED'; failureReason: string; refund?: 'COMPLETED' | 'FAILED' }
  /** Completed, then returned by the receiving bank (a failure after completion). */
  | { kind: 'RETURNED'; failureReason: string }
  /** The payer's side cancelled it before completion: refunded (USER_CANCELLATION). */
  | { kind: 'CANCELLED' };

export interface TimelineStep {
  /** Delay after the payment is accepted, in the platform's sandbox time. */
  afterMs: number;
  outcome: RailOutcome;
}

export interface RailPayment {
  direction: 'INCOMING' | 'OUTGOING';
  /** The external account's primary identifier (account number, IBAN, address...). */
  counterpartyIdentifier: string;
}

/** The payout of an executed cross-currency quote. */
export type QuotePayout =
  /** `accountType`: the external account's type (some types have sandbox rules of their own); absent on quotes made before it was kept. */
  | { destinationType: 'ACCOUNT'; counterpartyIdentifier: string; accountType?: string }
  | { destinationType: 'UMA_ADDRESS'; umaScenario: UmaScenario }
  /** Another internal account of the platform: a book transfer, no rail. */
  | { destinationType: 'INTERNAL_ACCOUNT'; accountId: string };

export interface Rail {
  plan(payment: RailPayment): TimelineStep[];
  planPayout(payout: QuotePayout): TimelineStep[];
}

export function railFor(_payment: RailPayment | QuotePayout): Rail {
  return sandboxRail;
}
