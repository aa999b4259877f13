// Schemas of railyard's inspection endpoints under /_railyard (outside the Grid namespace, so
// not reference components): the event log, a transaction's timeline and money movements, the
// postings behind an internal account's balances, and the exact request of a webhook delivery.
// The dashboard reads them; so can any script.

import { Type } from '@sinclair/typebox';
import { DateTime, PageQuery } from '../../http/schemas.js';

/** A recorded event: what a webhook delivers, whether or not an endpoint is set. */
export const RailyardEvent = Type.Object({
  id: Type.String(),
  type: Type.String(),
  /** The id of the object the event is about (its data.id). */
  resourceId: Type.String(),
  /** When the change happened, on the platform's sandbox clock. */
  timestamp: DateTime,
  /** The object as it stood right after the change. */
  data: Type.Unknown(),
});

export const RailyardEventList = Type.Object({
  data: Type.Array(RailyardEvent),
  hasMore: Type.Boolean(),
  nextCursor: Type.Optional(Type.String()),
  totalCount: Type.Integer({ minimum: 0 }),
});

export const RailyardEventListQuery = Type.Object({
  ...PageQuery,
  type: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  resourceId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  /** Inclusive, on the sandbox clock. */
  createdAfter: Type.Optional(DateTime),
});

/** One line of a posting: an amount (signed, smallest unit) moved into or out of one bucket of one account. */
export const RailyardLedgerEntry = Type.Object({
  accountId: Type.String(),
  /** INTERNAL for an internal account, else the system account's kind (EXTERNAL_RAILS, FEES, SUSPENSE, …). */
  accountKind: Type.String(),
  bucket: Type.String(),
  currency: Type.String(),
  amount: Type.Integer(),
});

/** A balanced posting of the double-entry ledger. */
export const RailyardPosting = Type.Object({
  id: Type.String(),
  /** FUND, HOLD, SETTLE, RELEASE, CONVERT, REFUND, … */
  kind: Type.String(),
  currency: Type.String(),
  transactionId: Type.Optional(Type.String()),
  createdAt: DateTime,
  entries: Type.Array(RailyardLedgerEntry),
});

export const TransactionTimelineParams = Type.Object({ transactionId: Type.String() });

export const TransactionTimeline = Type.Object({
  transactionId: Type.String(),
  /** Every event about the transaction, oldest first. */
  events: Type.Array(RailyardEvent),
  /** Every posting of the transaction, oldest first. */
  movements: Type.Array(RailyardPosting),
});

export const AccountEntriesParams = Type.Object({ accountId: Type.String() });

export const AccountEntriesQuery = Type.Object({ ...PageQuery });

/** A posting as it changed one internal account: what each of its two buckets gained or lost. */
export const AccountPosting = Type.Object({
  postingId: Type.String(),
  kind: Type.String(),
  transactionId: Type.Optional(Type.String()),
  createdAt: DateTime,
  /** Change of `balance` (the AVAILABLE bucket), smallest unit. */
  availableChange: Type.Integer(),
  /** Change of the HELD bucket (held for a payout, or pending from an incoming payment). */
  heldChange: Type.Integer(),
});

export const AccountEntries = Type.Object({
  accountId: Type.String(),
  currency: Type.String(),
  /** The balances now: `available` is the API's `balance`, `available + held` its `totalBalance`. */
  available: Type.Integer(),
  held: Type.Integer(),
  data: Type.Array(AccountPosting),
  hasMore: Type.Boolean(),
  nextCursor: Type.Optional(Type.String()),
  totalCount: Type.Integer({ minimum: 0 }),
});

export const DeliveryRequestParams = Type.Object({ deliveryId: Type.String() });

/** The request a try of a delivery sends, as a receiver sees it. */
export const DeliveryRequest = Type.Object({
  method: Type.Literal('POST'),
  /** The endpoint configured now (where the next try or a replay goes); absent when none is set. */
  url: Type.Optional(Type.String()),
  headers: Type.Record(Type.String(), Type.String()),
  /** The body, byte for byte (the same for every try). */
  body: Type.String(),
});
