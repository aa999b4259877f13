// The outbox. A state change records its events in the same transaction that makes the
// change, so an event exists exactly when its change committed. When the platform has a
// webhook endpoint, the same transaction also creates the event's delivery and the job that
// makes its tries (see delivery.ts); the job runner is woken once the transaction commits.

import { iso } from '../clock.js';
import type { Queryable } from '../db/index.js';
import { newId } from '../ids.js';
import { writeText } from '../json.js';
import { preparedInsert } from '../db/prepared.js';
import { scheduleDelivery } from './delivery.js';
import { announceEvent, insertEvent, webhookTarget, type EventRow, type WebhookTarget } from './store.js';

/** Every webhook type of the reference (`WebhookType`). */
export const WEBHOOK_TYPES = [
  'OUTGOING_PAYMENT.PENDING',
  'OUTGOING_PAYMENT.PENDING_AUTHORIZATION',
  'OUTGOING_PAYMENT.PROCESSING',
  'OUTGOING_PAYMENT.COMPLETED',
  'OUTGOING_PAYMENT.FAILED',
  'OUTGOING_PAYMENT.EXPIRED',
  'OUTGOING_PAYMENT.REFUND_PENDING',
  'OUTGOING_PAYMENT.REFUND_COMPLETED',
  'OUTGOING_PAYMENT.REFUND_FAILED',
  'INCOMING_PAYMENT.PENDING',
  'INCOMING_PAYMENT.COMPLETED',
  'INCOMING_PAYMENT.FAILED',
  'INCOMING_PAYMENT.REFUND_PENDING',
  'INCOMING_PAYMENT.REFUND_COMPLETED',
  'INCOMING_PAYMENT.REFUND_FAILED',
  'CUSTOMER.KYC_APPROVED',
  'CUSTOMER.KYC_REJECTED',
  'CUSTOMER.KYC_PENDING',
  'CUSTOMER.KYB_APPROVED',
  'CUSTOMER.KYB_REJECTED',
  'CUSTOMER.KYB_PENDING',
  'VERIFICATION.APPROVED',
  'VERIFICATION.REJECTED',
  'VERIFICATION.RESOLVE_ERRORS',
  'VERIFICATION.IN_PROGRESS',
  'VERIFICATION.PENDING_MANUAL_REVIEW',
  'VERIFICATION.READY_FOR_VERIFICATION',
  'EXTERNAL_ACCOUNT.STATUS_UPDATED',
  'INTERNAL_ACCOUNT.BALANCE_UPDATED',
  'INTERNAL_ACCOUNT.STATUS_UPDATED',
  'INTERNAL_ACCOUNT.FUNDING_INSTRUCTIONS_UPDATED',
  'INVITATION.CLAIMED',
  'BULK_UPLOAD.COMPLETED',
  'BULK_UPLOAD.FAILED',
  'AGENT_ACTION.PENDING_APPROVAL',
  'CARD.STATE_CHANGE',
  'CARD.FUNDING_SOURCE_CHANGE',
  'CARD_TRANSACTION.AUTHORIZED',
  'CARD_TRANSACTION.PARTIALLY_SETTLED',
  'CARD_TRANSACTION.SETTLED',
  'CARD_TRANSACTION.REFUNDED',
  'CARD_TRANSACTION.EXCEPTION',
  'TEST',
] as const;

export type WebhookType = (typeof WEBHOOK_TYPES)[number];

const KNOWN_TYPES = new Set<string>(WEBHOOK_TYPES);

export interface EventInput {
  platformId: string;
  /** A WebhookType of the reference, e.g. EXTERNAL_ACCOUNT.STATUS_UPDATED. */
  type: string;
  resourceId: string;
  /** The webhook's `data`: the resource as it is after the change. */
  data: unknown;
  now: Date;
}

/** Records an event (and its delivery, when an endpoint is set); returns its id, `Webhook:<uuid>`. */
export async function recordEvent(tx: Queryable, event: EventInput): Promise<string> {
  const row = eventRow(event);
  await insertEvent(tx, row);
  await scheduleDelivery(tx, row, event.now);
  return row.id;
}

function eventRow(event: EventInput): EventRow {
  // A type outside the reference is a bug of the caller, never something to send.
  if (!KNOWN_TYPES.has(event.type)) throw new Error(`unknown webhook type ${event.type}`);
  return {
    id: newId('Webhook'),
    platform_id: event.platformId,
    type: event.type,
    resource_id: event.resourceId,
    data: writeText(event.data),
    created_at: iso(event.now),
  };
}

// New rows with fresh ids: on PostgreSQL they travel with the transaction's next statement
// (db/deferred.ts).
const eventsInsert = preparedInsert('events', ['id', 'platform_id', 'type', 'resource_id', 'data', 'created_at'], 8, {
  deferred: true,
});

/** Records several events in order, in as few statements as possible, with their deliveries. */
export async function recordEvents(tx: Queryable, events: EventInput[]): Promise<string[]> {
  const rows = events.map(eventRow);
  await eventsInsert.run(
    tx,
    rows.map((r) => [r.id, r.platform_id, r.type, r.resource_id, r.data, r.created_at]),
  );
  for (const platformId of new Set(rows.map((row) => row.platform_id))) announceEvent(tx, platformId);
  // The platform's webhook target is read once per platform, not once per event.
  const targets = new Map<string, WebhookTarget>();
  for (const [i, row] of rows.entries()) {
    let target = targets.get(row.platform_id);
    if (target === undefined) {
      target = await webhookTarget(tx, row.platform_id);
      targets.set(row.platform_id, target);
    }
    await scheduleDelivery(tx, row, events[i]!.now, target);
  }
  return rows.map((row) => row.id);
}
