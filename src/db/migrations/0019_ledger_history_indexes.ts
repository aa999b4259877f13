import type { Kysely } from 'kysely';

// Indexes for reading the ledger's history (src/ledger/history.ts) and checking the books.
//
// note: migration 0004 left ledger_entries and ledger_postings with their primary keys alone,
// so that a transfer wrote no more index pages than it had to. Every read of an account's
// postings (the dashboard's account page), of a transaction's postings (its timeline) and the
// ledger check (GET /_railyard/ledger) then scanned every entry or posting of the store, of
// every platform: at 1,000,000 entries, half a second to a second for one account page.
// Measured with `npm run bench -- ledger` and `-- ledger-writes` (docs/performance.md,
// "Ledger indexes"), on both stores:
//
// - ledger_entries (platform_id, account_id, bucket, currency, amount): an account's entries
//   are one range of it, and it holds all that the ledger check reads of an entry, in the
//   order the check groups them (with the primary key, which the embedded store adds to every
//   index of a WITHOUT ROWID table), so the check reads its platform's part of it alone and
//   sorts nothing. An index on account_id alone served the account page as well, but made the
//   check slower on the embedded store: its planner scanned that smaller index and looked up
//   every entry in the table from it.
// - ledger_postings (transaction_id): a transaction's postings.
//
// What they cost a transfer (four entries and two postings each) is in the same section: no
// difference beyond the spread between rounds.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('ledger_entries_account')
    .on('ledger_entries')
    .columns(['platform_id', 'account_id', 'bucket', 'currency', 'amount'])
    .execute();
  await db.schema.createIndex('ledger_postings_transaction').on('ledger_postings').column('transaction_id').execute();
}
