// Schemas of railyard's inspection endpoints under /_railyard (outside the Grid namespace, so
// not reference components): the event log, a transaction's timeline and money movements, the
// postings behind an internal account's balances, and the exact request of a webhook delivery.
// The dashboard reads them; so can any script.

import { Type } from '@sinclair/typebox';
import { WEBHOOK_TYPES } from '../../events/outbox.js';
import { EVENT_WAIT_SECONDS_MAX } from '../../events/waiters.js';
import { DateTime, defineFormat, PageQuery } from '../../http/schemas.js';
import { WebhookDelivery } from '../webhooks/schemas.js';

/** Where the event's webhook stands: its delivery, when the platform had an endpoint as it was recorded. */
export const RailyardEventDelivery = Type.Omit(WebhookDelivery, ['id', 'type', 'resourceId', 'createdAt']);

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
  delivery: Type.Optional(RailyardEventDelivery),
});

export const RailyardEventList = Type.Object({
  data: Type.Array(RailyardEvent),
  hasMore: Type.Boolean(),
  nextCursor: Type.Optional(Type.String()),
  totalCount: Type.Integer({ minimum: 0 }),
});

const KNOWN_TYPES: ReadonlySet<string> = new Set(WEBHOOK_TYPES);

/** A comma list of event types (WebhookType), checked with the rest of the query. */
const EventTypeList = Type.String({
  minLength: 1,
  maxLength: 2000,
  format: defineFormat('webhook-type-list', (value) => {
    const unknown = value.split(',').filter((item) => !KNOWN_TYPES.has(item.trim()));
    if (unknown.length === 0) return null;
    const named = unknown.map((item) => (item.trim() === '' ? 'an empty item' : JSON.stringify(item)));
    return `has ${named.join(', ')}: each item must be an event type (a WebhookType)`;
  }),
});

/** The event types of a valid `type` list, each once. */
export function eventTypesOf(list: string): string[] {
  return [...new Set(list.split(',').map((item) => item.trim()))];
}

export const RailyardEventListQuery = Type.Object({
  ...PageQuery,
  /** One type, or several separated by commas (any of them). */
  type: Type.Optional(EventTypeList),
  resourceId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  /** Inclusive, on the sandbox clock. */
  createdAfter: Type.Optional(DateTime),
  /** An event's id: only the events recorded after it, oldest first (following the log). */
  after: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  /** Seconds to hold the request while nothing matches, until an event that does is recorded. */
  wait: Type.Optional(Type.Number({ minimum: 0, maximum: EVENT_WAIT_SECONDS_MAX })),
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
