// The SQL of the inspection endpoints: the platform's event log. (The ledger's history is read
// through src/ledger/history.ts; deliveries through src/events/.)

import type { Queryable } from '../../db/index.js';
import { paginate, storedTime, type PageRequest, type PageResult } from '../../db/pagination.js';
import type { EventsTable } from '../../db/schema.js';

export type EventRow = EventsTable;

export interface EventFilters {
  type?: string | undefined;
  resourceId?: string | undefined;
  createdAfter?: string | undefined;
}

/** One page of the platform's events, newest first (the events_platform_created index orders them). */
export async function listEvents(
  q: Queryable,
  platformId: string,
  filters: EventFilters,
  page: PageRequest,
): Promise<PageResult<EventRow>> {
  let query = q.selectFrom('events').selectAll().where('platform_id', '=', platformId);
  if (filters.type !== undefined) query = query.where('type', '=', filters.type);
  if (filters.resourceId !== undefined) query = query.where('resource_id', '=', filters.resourceId);
  if (filters.createdAfter !== undefined)
    query = query.where('created_at', '>=', storedTime(filters.createdAfter, 'from'));
  return paginate<EventRow>(query as never, 'events', page);
}

/** Every event about one object, oldest first. */
export async function eventsOfResource(q: Queryable, platformId: string, resourceId: string): Promise<EventRow[]> {
  return q
    .selectFrom('events')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('resource_id', '=', resourceId)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
}
