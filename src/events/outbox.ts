// The outbox. A state change records its events in the same transaction that makes the
// change, so an event exists exactly when its change committed; delivery reads them later.

import { iso } from '../clock.js';
import type { Queryable } from '../db/index.js';
import { prepare } from '../db/prepared.js';
import type { EventsTable } from '../db/schema.js';
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

// Prepared once: state changes record events on their hot paths.
const insertEvent = prepare<EventsTable>((k, param) =>
  k.insertInto('events').values({
    id: param('id'),
    platform_id: param('platform_id'),
    type: param('type'),
    resource_id: param('resource_id'),
    data: param('data'),
    created_at: param('created_at'),
  }),
);

export async function recordEvent(tx: Queryable, event: EventInput): Promise<string> {
  const id = newId('Webhook');
  await insertEvent.run(tx, {
    id,
    platform_id: event.platformId,
    type: event.type,
    resource_id: event.resourceId,
    data: JSON.stringify(event.data),
    created_at: iso(event.now),
  });
  return id;
}
