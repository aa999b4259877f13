// Payment rails behind one interface. A rail, given a payment, answers with its timeline:
// the outcomes it will report and when. Steps due at once are applied in the transaction
// that creates the payment; later ones become jobs (see modules/transactions). Railyard has
// one rail, the sandbox simulator.

import { sandboxRail } from './sandbox.js';

export type RailOutcome =
  | { kind: 'COMPLETED' }
  | { kind: 'FAILED'; failureReason: string }
  /** Completed, then returned by the receiving bank (a failure after completion). */
  | { kind: 'RETURNED'; failureReason: string };

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

export interface Rail {
  plan(payment: RailPayment): TimelineStep[];
}

export function railFor(_payment: RailPayment): Rail {
  return sandboxRail;
}
