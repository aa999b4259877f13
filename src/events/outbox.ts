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

const eventsPerInsertMax = 8;
const multiInserts = new Map<number, ReturnType<typeof prepare<Record<string, unknown>>>>();

function eventsInsert(count: number) {
  let statement = multiInserts.get(count);
  if (statement === undefined) {
    statement = prepare<Record<string, unknown>>((k, param) =>
      k.insertInto('events').values(
        Array.from({ length: count }, (_, i) => ({
          id: param(`id${i}`),
          platform_id: param(`platform_id${i}`),
          type: param(`type${i}`),
          resource_id: param(`resource_id${i}`),
          data: param(`data${i}`),
          created_at: param(`created_at${i}`),
        })),
      ),
    );
    multiInserts.set(count, statement);
  }
  return statement;
}

/** Records several events in order, in as few statements as possible. */
export async function recordEvents(tx: Queryable, events: EventInput[]): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < events.length; start += eventsPerInsertMax) {
    const chunk = events.slice(start, start + eventsPerInsertMax);
    const params: Record<string, unknown> = {};
    chunk.forEach((event, i) => {
      const id = newId('Webhook');
      ids.push(id);
      Object.assign(params, {
        [`id${i}`]: id,
        [`platform_id${i}`]: event.platformId,
        [`type${i}`]: event.type,
        [`resource_id${i}`]: event.resourceId,
        [`data${i}`]: JSON.stringify(event.data),
        [`created_at${i}`]: iso(event.now),
      });
    });
    await eventsInsert(chunk.length).run(tx, params);
  }
  return ids;
}
