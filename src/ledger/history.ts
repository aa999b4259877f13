// Reading the ledger's history: the postings behind an account's balances and the postings of
// one transaction. Read-only; the dashboard and railyard's inspection endpoints use it.
//
// note: an account's entries are one range of the index ledger_entries_account (platform,
// account, …) and a transaction's postings one of ledger_postings_transaction (migration
// 0019, which says what they cost a transfer and what they save here).

import { sql } from 'kysely';
import type { Queryable } from '../db/index.js';
import { paginate, type PageRequest, type PageResult } from '../db/pagination.js';

export interface PostingRow {
  id: string;
  kind: string;
  currency: string;
  transaction_id: string | null;
  created_at: string;
}

export interface EntryRow {
  posting_id: string;
  line: number;
  account_id: string;
  bucket: string;
  currency: string;
  /** As text: the two drivers return 64-bit integers differently. */
  amount: string;
  /** The ledger account's kind: INTERNAL or a system kind (EXTERNAL_RAILS, FEES, …). */
  account_kind: string | null;
}

/** One page of the postings that touched an account, newest first, with that account's entries of each. */
export async function postingsOfAccount(
  q: Queryable,
  platformId: string,
  accountId: string,
  page: PageRequest,
): Promise<{ page: PageResult<PostingRow>; entries: EntryRow[] }> {
  const query = q
    .selectFrom('ledger_postings')
    .select(['id', 'kind', 'currency', 'transaction_id', 'created_at'])
    .where('platform_id', '=', platformId)
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('ledger_entries')
        .select('posting_id')
        .where('platform_id', '=', platformId)
        .where('account_id', '=', accountId),
    );
  const result = await paginate<PostingRow>(query as never, 'ledger_postings', page);
  const entries = await entriesOf(
    q,
    platformId,
    result.rows.map((r) => r.id),
    accountId,
  );
  return { page: result, entries };
}

/** Every posting of a transaction, oldest first, with all of their entries. */
export async function postingsOfTransaction(
  q: Queryable,
  platformId: string,
  transactionId: string,
): Promise<{ postings: PostingRow[]; entries: EntryRow[] }> {
  const postings = await q
    .selectFrom('ledger_postings')
    .select(['id', 'kind', 'currency', 'transaction_id', 'created_at'])
    .where('platform_id', '=', platformId)
    .where('transaction_id', '=', transactionId)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
  const entries = await entriesOf(
    q,
    platformId,
    postings.map((p) => p.id),
  );
  return { postings, entries };
}

/** The entries of some postings (only those of one account when it is given), in posting and line order. */
async function entriesOf(
  q: Queryable,
  platformId: string,
  postingIds: string[],
  accountId?: string,
): Promise<EntryRow[]> {
  if (postingIds.length === 0) return [];
  let query = q
    .selectFrom('ledger_entries as e')
    .leftJoin('ledger_accounts as a', 'a.id', 'e.account_id')
    .select(['e.posting_id', 'e.line', 'e.account_id', 'e.bucket', 'e.currency', 'a.kind as account_kind'])
    .select(sql<string>`CAST(e.amount AS TEXT)`.as('amount'))
    .where('e.platform_id', '=', platformId)
    .where('e.posting_id', 'in', postingIds);
  if (accountId !== undefined) query = query.where('e.account_id', '=', accountId);
  return (await query.orderBy('e.posting_id').orderBy('e.line').execute()) as EntryRow[];
}
