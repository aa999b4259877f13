// How long an outgoing bank payout stays PROCESSING on a platform whose settlement timing is
// `hosted` (docs/hosted-differences.md, "Settlement timing"), by the payout's rail, and how
// that time composes with the timeline a magic value chose. On an `instant` platform none of
// this applies: the magic value's timeline is played as it is.
//
// This file imports nothing: the dashboard's clock page shows the same table, from this file.

export interface SettlementRow {
  /** The rails (the reference's PaymentRail values) whose payouts take this long. */
  rails: readonly string[];
  /** How long a payout over them stays PROCESSING before it completes, in sandbox seconds. */
  seconds: number;
  /** What these rails are, and why this time. */
  why: string;
}

/**
 * The one piece of evidence is the hosted sandbox's ACH payouts: 60 to 180 seconds of
 * PROCESSING, as an app published by Grid records in its code. Every other time keeps the
 * rails' real order (real-time schemes, then same-day gross settlement, then batches, then
 * correspondent banking) inside that span, or below it for the schemes that settle in seconds.
 * Each is one fixed number, so that a test knows how far to move the clock.
 */
export const HOSTED_SETTLEMENT: readonly SettlementRow[] = [
  {
    rails: [
      'RTP',
      'FEDNOW',
      'SEPA_INSTANT',
      'FASTER_PAYMENTS',
      'SPEI',
      'PIX',
      'UPI',
      'PAYNOW',
      'FAST',
      'INSTAPAY',
      'BRE_B',
    ],
    seconds: 10,
    why: 'real-time schemes: the receiving bank answers within seconds (SEPA_INSTANT allows ten at most); the payout is still seen PROCESSING first',
  },
  {
    rails: ['MOBILE_MONEY', 'UNIONPAY'],
    seconds: 30,
    why: 'credited through a mobile-money operator or a card network: usually within a minute',
  },
  {
    rails: ['WIRE', 'RTGS'],
    seconds: 60,
    why: 'gross settlement, one payment at a time, the same day: the low end of the range the hosted sandbox shows for ACH',
  },
  {
    rails: ['ACH', 'ACH_COLOMBIA', 'SEPA', 'NEFT', 'PESONET', 'BANK_TRANSFER'],
    seconds: 120,
    why: 'batch credit transfers (a local bank transfer of an unnamed scheme counts as one): the middle of the 60 to 180 seconds the hosted sandbox shows for ACH',
  },
  {
    rails: ['SWIFT', 'CIPS'],
    seconds: 180,
    why: 'cross-border, through correspondent banks: the top of that range',
  },
];

const SECONDS_BY_RAIL: ReadonlyMap<string, number> = new Map(
  HOSTED_SETTLEMENT.flatMap((row) => row.rails.map((rail) => [rail, row.seconds] as const)),
);

/**
 * How long a payout over `paymentRail` stays PROCESSING on a `hosted` platform, in ms; 0 for a
 * payout over no bank rail (a wallet, Lightning, Spark, a UMA address, an internal account).
 */
export function hostedSettlementMs(paymentRail: string | null): number {
  return paymentRail === null ? 0 : (SECONDS_BY_RAIL.get(paymentRail) ?? 0) * 1000;
}

interface Step {
  afterMs: number;
  outcome: { kind: string };
}

/**
 * A magic value's timeline on a `hosted` platform: the completion comes no earlier than
 * `settlementMs` after the payout was accepted, and what follows the completion (a return)
 * keeps its distance from it. Steps before the completion, and timelines with none (a
 * failure, a cancellation), are left as they are: a bank that refuses a payout does so while
 * it is processing, and the magic value says when. So a `005` transfer still fails after its
 * 30 s, a `003` quote payout (6 minutes) is slower than any rail and keeps its time, and a
 * `005` quote payout completes after the rail's time and comes back 30 s later.
 */
export function withSettlementTime<T extends Step>(timeline: readonly T[], settlementMs: number): T[] {
  const completion = timeline.findIndex((step) => step.outcome.kind === 'COMPLETED');
  if (settlementMs <= 0 || completion < 0) return [...timeline];
  const shift = Math.max(0, settlementMs - timeline[completion]!.afterMs);
  return timeline.map((step, i) => (i < completion || shift === 0 ? step : { ...step, afterMs: step.afterMs + shift }));
}
