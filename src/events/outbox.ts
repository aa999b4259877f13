// The outbox. A state change records its events in the same transaction that makes the
// change, so an event exists exactly when its change committed; delivery reads them later.

import { iso } from '../clock.js';
import type { Queryable } from '../db/index.js';
import { newId } from '../ids.js';

export interface EventInput {
  platformId: string;
  /** A WebhookType of the reference, e.g. EXTERNAL_ACCOUNT.STATUS_UPDATED. */
  type: string;
  resourceId: string;
  /** The webhook's `data`: the resource as it is after the change. */
  data: unknown;
  now: Date;
}

export async function recordEvent(tx: Queryable, event: EventInput): Promise<string> {
  const id = newId('Webhook');
  await tx
    .insertInto('events')
    .values({
      id,
      platform_id: event.platformId,
      type: event.type,
      resource_id: event.resourceId,
      data: JSON.stringify(event.data),
      created_at: iso(event.now),
    })
    .execute();
  return id;
}
