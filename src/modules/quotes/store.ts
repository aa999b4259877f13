// The quotes' SQL. A quote's status lives on its transaction (modules/transactions): reads
// join the two, so the quote and its transaction can never disagree.

import { sql } from 'kysely';
import type { Queryable } from '../../db/index.js';
import { prepare, preparedInsert } from '../../db/prepared.js';
import type { QuotesTable } from '../../db/schema.js';

/** A quote as read: 64-bit columns as text, with its transaction's status and failure reason. */
export type QuoteRow = Omit<
  QuotesTable,
  'locked_amount' | 'sending_amount' | 'receiving_amount' | 'fees' | 'platform_fees'
> & {
  locked_amount: string;
  sending_amount: string;
  receiving_amount: string;
  fees: string;
  platform_fees: string;
  status: string;
};

export type NewQuoteRow = Omit<QuoteRow, 'status'>;

const COLUMNS = [
  'id',
  'platform_id',
  'customer_id',
  'transaction_id',
  'lookup_id',
  'source',
  'destination',
  'locked_side',
  'locked_amount',
  'sending_currency',
  'receiving_currency',
  'sending_amount',
  'receiving_amount',
  'exchange_rate',
  'fees',
  'platform_fees',
  'rate_details',
  'payment_instructions',
  'sca_challenge',
  'sender_customer_info',
  'expires_at',
  'created_at',
  'updated_at',
] as const;
const INT64 = new Set(['locked_amount', 'sending_amount', 'receiving_amount', 'fees', 'platform_fees']);

const insertRow = preparedInsert('quotes', COLUMNS);

export async function insertQuote(q: Queryable, row: NewQuoteRow): Promise<void> {
  await insertRow.one(q, row);
}

const byId = prepare<{ platformId: string; id: string }, QuoteRow>((k, param) =>
  k
    .selectFrom('quotes')
    .innerJoin('transactions', 'transactions.id', 'quotes.transaction_id')
    .select(COLUMNS.filter((c) => !INT64.has(c)).map((c) => `quotes.${c}` as const))
    .select([...INT64].map((c) => sql<string>`CAST(${sql.ref(`quotes.${c}`)} AS TEXT)`.as(c)))
    .select('transactions.status as status')
    .where('quotes.platform_id', '=', param('platformId'))
    .where('quotes.id', '=', param('id')),
);

export async function findQuote(q: Queryable, platformId: string, id: string): Promise<QuoteRow | undefined> {
  return byId.first(q, { platformId, id });
}

/** The columns that change after creation: the SCA challenge and the instructions it releases. */
export async function saveQuoteState(
  q: Queryable,
  row: Pick<QuoteRow, 'id' | 'platform_id' | 'sca_challenge' | 'payment_instructions' | 'updated_at'>,
): Promise<void> {
  await q
    .updateTable('quotes')
    .set({
      sca_challenge: row.sca_challenge,
      payment_instructions: row.payment_instructions,
      updated_at: row.updated_at,
    })
    .where('id', '=', row.id)
    .where('platform_id', '=', row.platform_id)
    .execute();
}
