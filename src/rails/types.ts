// The types of the payment rails: what a rail is given (a payment or a quote's payout) and
// what it answers (a timeline of outcomes). They sit apart from the rails themselves so that
// the simulator (sandbox.ts), the chooser (index.ts) and the transactions that play the
// timelines out all import them from one place below every rail.

import type { SettlementTiming } from '../config.js';
import type { UmaScenario } from './magic.js';

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

/**
 * How the payment settles: the platform's settlement timing, and the bank rail the payment
 * moves over (null: none, as for a wallet, a UMA address or an internal account). On a
 * `hosted` platform an outgoing payout over a bank rail completes no earlier than that rail's
 * time (settlement.ts).
 */
export interface Settlement {
  timing: SettlementTiming;
  paymentRail: string | null;
}

export interface Rail {
  plan(payment: RailPayment, settlement: Settlement): TimelineStep[];
  planPayout(payout: QuotePayout, settlement: Settlement): TimelineStep[];
}
