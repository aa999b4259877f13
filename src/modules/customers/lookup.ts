// Customers as other areas read them: a live customer by id (404 or 410 otherwise), one a
// request field names (400 otherwise), the ids of the live ones. The lowest part of the
// customers area: it imports no other area, so that the areas customers' own operations call
// (beneficial owners, wallets, the platform's provisioning) can read customers too.

import type { Queryable } from '../../db/index.js';
import { apiError, invalidInput } from '../../http/errors.js';
import * as store from './store.js';

export type CustomerRow = store.CustomerRow;

/**
 * A live customer of the platform. Unknown ids and other platforms' customers are 404
 * USER_NOT_FOUND. A deleted customer is 410 CUSTOMER_DELETED where the operation declares
 * 410 (`whenDeleted: 'gone'`), and otherwise 404 with a message saying it was deleted.
 */
export async function activeCustomer(
  q: Queryable,
  platformId: string,
  id: string,
  whenDeleted: 'notFound' | 'gone' = 'notFound',
): Promise<CustomerRow> {
  const row = await store.findCustomer(q, platformId, id);
  if (row === undefined) throw apiError('USER_NOT_FOUND', `No customer ${id}`);
  if (row.deleted_at !== null) {
    if (whenDeleted === 'gone') throw apiError('CUSTOMER_DELETED', `Customer ${id} was deleted at ${row.deleted_at}`);
    throw apiError('USER_NOT_FOUND', `Customer ${id} was deleted at ${row.deleted_at}`, {
      customerId: id,
      isDeleted: true,
    });
  }
  return row;
}

/** A live customer named by a body field, for operations that answer a bad reference with 400. */
export async function customerNamedBy(
  q: Queryable,
  platformId: string,
  id: string,
  field: string,
): Promise<CustomerRow> {
  const row = await store.findCustomer(q, platformId, id);
  if (row === undefined) throw invalidInput([{ field, message: `names no customer of this platform: ${id}` }]);
  if (row.deleted_at !== null) throw invalidInput([{ field, message: `names a deleted customer: ${id}` }]);
  return row;
}

export async function findCustomerRow(q: Queryable, platformId: string, id: string): Promise<CustomerRow | undefined> {
  return store.findCustomer(q, platformId, id);
}

/** For prefetch(): the owner of an internal account, as findCustomerRow then reads it. */
export const accountCustomerRead = store.accountCustomerRead;

const activeCustomersPerPage = 500;

/**
 * The ids of the platform's live customers, in creation order, read a page at a time: the
 * owners a configuration change gives accounts in a new currency (provisionEveryOwner).
 */
export async function* activeCustomerIds(q: Queryable, platformId: string): AsyncGenerator<string> {
  let after: store.CustomerKey | undefined;
  for (;;) {
    const page = await store.activeCustomerKeys(q, platformId, after, activeCustomersPerPage);
    for (const key of page) yield key.id;
    if (page.length < activeCustomersPerPage) return;
    after = page[page.length - 1];
  }
}
