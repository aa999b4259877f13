// The floors of POST /quotes on the embedded store (see bench/floor.ts for the server and
// its group commit): the statements one successful quote runs in railyard, in its order, with
// its SQL text, on rows of the same size, traced from the server on the bench's corridor
// (a funded platform USD account paying a platform MXN account, no Idempotency-Key):
//
//   create:  read the source account with its balance, the destination, the platform;
//            insert the PENDING transaction and its OUTGOING_PAYMENT.PENDING event; insert
//            the quote and its quote.expire job.
//   executed at creation (immediatelyExecute): the same three reads; insert the quote; insert
//            the transaction as it ends, COMPLETED (it is written once, after its execution);
//            insert three postings (HOLD, CONVERT, PAYOUT) and their seven entries; the
//            guarded balance update; insert four events (PENDING, PROCESSING, COMPLETED,
//            BALANCE_UPDATED). An executed quote leaves nothing to expire: no job.
//
// Any read railyard repeats is repeated here too, so the ratio measures what railyard
// spends in JavaScript, not in SQL. (Railyard no longer repeats one: the platform's row is
// read once per transaction, and execution takes the source account and its balances from
// the first read and the guarded update.) The rows copy the bench's two quotes (one executed), and
// the answer is the quote railyard gave then, with new ids.

import type SQLite from 'better-sqlite3';
import { newId } from './floor-server.js';

const READ_INTERNAL =
  'select "internal_accounts".*, CAST(ledger_accounts.available AS TEXT) as "available", CAST(ledger_accounts.held AS TEXT) as "held", ' +
  '"ledger_accounts"."updated_at" as "balance_updated_at" from "internal_accounts" inner join "ledger_accounts" on "ledger_accounts"."id" = "internal_accounts"."id" ' +
  'where "internal_accounts"."platform_id" = ? and "internal_accounts"."id" = ?';
const READ_EXTERNAL = 'select * from "external_accounts" where "platform_id" = ? and "id" = ? and "deleted_at" is null';
const READ_PLATFORM =
  'select "config", "webhook_private_key", "clock_offset_ms", "webhook_fault_rules" from "platforms" where "id" = ?';
const UPDATE_BALANCE =
  'update "ledger_accounts" set "available" = available + ?, "held" = held + ?, "updated_at" = ? where "id" = ? and available + ? >= 0 ' +
  'and held + ? >= 0 and (CAST(? AS BIGINT) <= 0 or available + held + ? <= ?) returning CAST(available AS TEXT) as "available", CAST(held AS TEXT) as "held"';
/** The balance limit railyard checks a credit against (a debit passes it). */
const BALANCE_MAX = '9000000000000000';
const QUOTE_LIFETIME_MS = 15 * 60_000;

const insert = (db: SQLite.Database, table: string, columns: string[], rows = 1) =>
  db.prepare(
    `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values ${Array(rows)
      .fill(`(${columns.map(() => '?').join(', ')})`)
      .join(', ')}`,
  );

const accountRef = (kind: string) =>
  ({
    type: 'object',
    required: [kind, 'accountId'],
    properties: { [kind]: { type: 'string' }, accountId: { type: 'string' } },
  }) as const;

export interface QuoteBody {
  source: { accountId: string };
  destination: { accountId: string };
  lockedCurrencySide: string;
  lockedCurrencyAmount: number;
  immediatelyExecute?: boolean;
}

/**
 * The two quote floors on `db`, which holds the quotes railyard answered with `answers`
 * (created: a quote left pending; executed: one made with immediatelyExecute).
 */
export function quoteFloors(db: SQLite.Database, platform: string, answers: { created?: string; executed?: string }) {
  if (answers.created === undefined || answers.executed === undefined) throw new Error('FLOOR_QUOTES is not set');
  const created = JSON.parse(answers.created) as { id: string; transactionId: string };
  const executed = JSON.parse(answers.executed) as { id: string; transactionId: string };
  const row = (table: string, id: string) =>
    db.prepare(`SELECT * FROM ${table} WHERE id = ?`).get(id) as Record<string, unknown>;
  // The rows as railyard inserted them (the created quote's transaction is still PENDING).
  const transaction = row('transactions', created.transactionId);
  const quote = row('quotes', created.id);
  // The executed quote's rows, its transaction as it ended.
  const executedTransaction = row('transactions', executed.transactionId);
  const executedQuote = row('quotes', executed.id);
  const job = db
    .prepare("SELECT * FROM jobs WHERE kind = 'quote.expire' AND payload LIKE ?")
    .get(`%${created.id}%`) as Record<string, unknown>;
  const eventOf = (type: string, resource: string) =>
    db
      .prepare('SELECT data FROM events WHERE type = ? AND resource_id = ? ORDER BY id DESC LIMIT 1')
      .pluck()
      .get(type, resource) as string;
  const pendingEvent = eventOf('OUTGOING_PAYMENT.PENDING', created.transactionId);
  const executedPendingEvent = eventOf('OUTGOING_PAYMENT.PENDING', executed.transactionId);
  const processingEvent = eventOf('OUTGOING_PAYMENT.PROCESSING', executed.transactionId);
  const completedEvent = eventOf('OUTGOING_PAYMENT.COMPLETED', executed.transactionId);
  const balanceEvent = db
    .prepare("SELECT data FROM events WHERE type = 'INTERNAL_ACCOUNT.BALANCE_UPDATED' ORDER BY id DESC LIMIT 1")
    .pluck()
    .get() as string;
  // The executed quote's ledger: its postings in order, and their entries.
  const postings = db
    .prepare('SELECT id, currency, kind FROM ledger_postings WHERE transaction_id = ? ORDER BY id')
    .all(executed.transactionId) as { id: string; currency: string; kind: string }[];
  const entries = db
    .prepare(
      `SELECT posting_id, line, account_id, bucket, currency, amount FROM ledger_entries WHERE posting_id IN (${postings.map(() => '?').join(', ')}) ORDER BY posting_id, line`,
    )
    .all(...postings.map((p) => p.id)) as {
    posting_id: string;
    line: number;
    account_id: string;
    bucket: string;
    currency: string;
    amount: number;
  }[];
  const debit = entries[0]!.amount;
  const transactionColumns = Object.keys(transaction);
  const quoteColumns = Object.keys(quote);
  const jobColumns = Object.keys(job);
  const eventColumns = ['id', 'platform_id', 'type', 'resource_id', 'data', 'created_at'];
  const statements = {
    internal: db.prepare(READ_INTERNAL),
    external: db.prepare(READ_EXTERNAL),
    platform: db.prepare(READ_PLATFORM),
    transaction: insert(db, 'transactions', transactionColumns),
    event: insert(db, 'events', eventColumns),
    quote: insert(db, 'quotes', quoteColumns),
    job: insert(db, 'jobs', jobColumns),
    postings: insert(
      db,
      'ledger_postings',
      ['id', 'platform_id', 'currency', 'kind', 'transaction_id', 'created_at'],
      3,
    ),
    entries: insert(
      db,
      'ledger_entries',
      ['posting_id', 'line', 'platform_id', 'account_id', 'bucket', 'currency', 'amount'],
      entries.length,
    ),
    updateBalance: db.prepare(UPDATE_BALANCE),
    events: insert(db, 'events', eventColumns, 4),
  };

  /** The template's row with new ids and times; the other values as railyard wrote them. */
  const copy = (
    template: Record<string, unknown>,
    columns: string[],
    fresh: Record<string, unknown>,
    ids: (text: string) => string,
    now: string,
  ) =>
    columns.map((c) => {
      if (c in fresh) return fresh[c];
      const value = template[c];
      if (c.endsWith('_at') && value !== null) return now;
      return typeof value === 'string' ? ids(value) : value;
    });

  function create(body: QuoteBody): string {
    const nowMs = Date.now();
    const now = new Date(nowMs).toISOString();
    const internal = statements.internal.get(platform, body.source.accountId) as { id: string } | undefined;
    const external = statements.external.get(platform, body.destination.accountId);
    JSON.parse((statements.platform.get(platform) as { config: string }).config);
    if (internal === undefined || external === undefined) throw new Error('unknown account');
    const quoteId = newId('Quote');
    const transactionId = newId('Transaction');
    const reference = `RY${transactionId.replace(/-/g, '').slice(-12).toUpperCase()}`;
    const expiresAt = new Date(nowMs + QUOTE_LIFETIME_MS).toISOString();
    if (body.immediatelyExecute !== true) {
      const ids = (text: string) =>
        text.replaceAll(created.id, quoteId).replaceAll(created.transactionId, transactionId);
      statements.transaction.run(copy(transaction, transactionColumns, { id: transactionId, reference }, ids, now));
      statements.event.run(
        newId('Webhook'),
        platform,
        'OUTGOING_PAYMENT.PENDING',
        transactionId,
        ids(pendingEvent),
        now,
      );
      statements.quote.run(
        copy(quote, quoteColumns, { id: quoteId, transaction_id: transactionId, expires_at: expiresAt }, ids, now),
      );
      statements.job.run(copy(job, jobColumns, { id: newId('Job'), due_at_ms: nowMs + QUOTE_LIFETIME_MS }, ids, now));
      return ids(answers.created!);
    }

    const executedIds = (text: string) =>
      text.replaceAll(executed.id, quoteId).replaceAll(executed.transactionId, transactionId);
    statements.quote.run(
      copy(
        executedQuote,
        quoteColumns,
        { id: quoteId, transaction_id: transactionId, expires_at: expiresAt },
        executedIds,
        now,
      ),
    );
    statements.transaction.run(
      copy(executedTransaction, transactionColumns, { id: transactionId, reference }, executedIds, now),
    );
    const postingIds = new Map(postings.map((p) => [p.id, newId('Posting')]));
    statements.postings.run(
      postings.flatMap((p) => [postingIds.get(p.id), platform, p.currency, p.kind, transactionId, now]),
    );
    statements.entries.run(
      entries.flatMap((e) => [
        postingIds.get(e.posting_id),
        e.line,
        platform,
        e.account_id,
        e.bucket,
        e.currency,
        e.amount,
      ]),
    );
    if (statements.updateBalance.get(debit, 0, now, internal.id, debit, 0, debit, debit, BALANCE_MAX) === undefined)
      throw new Error('insufficient funds');
    statements.events.run(
      newId('Webhook'),
      platform,
      'OUTGOING_PAYMENT.PENDING',
      transactionId,
      executedIds(executedPendingEvent),
      now,
      newId('Webhook'),
      platform,
      'OUTGOING_PAYMENT.PROCESSING',
      transactionId,
      executedIds(processingEvent),
      now,
      newId('Webhook'),
      platform,
      'OUTGOING_PAYMENT.COMPLETED',
      transactionId,
      executedIds(completedEvent),
      now,
      newId('Webhook'),
      platform,
      'INTERNAL_ACCOUNT.BALANCE_UPDATED',
      internal.id,
      balanceEvent,
      now,
    );
    return executedIds(answers.executed!);
  }

  return {
    schema: {
      type: 'object',
      required: ['source', 'destination', 'lockedCurrencySide', 'lockedCurrencyAmount'],
      properties: {
        source: accountRef('sourceType'),
        destination: accountRef('destinationType'),
        lockedCurrencySide: { type: 'string', enum: ['SENDING', 'RECEIVING'] },
        lockedCurrencyAmount: { type: 'integer', minimum: 1 },
        immediatelyExecute: { type: 'boolean' },
      },
    },
    create,
  };
}
