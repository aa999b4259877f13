// The floors of the embedded store: a bare Fastify server whose routes run exactly the
// statements one successful request of railyard runs (same schema, same indexes, rows of the
// same size, the same pragmas, the same group commit and checkpoint thread), and nothing else: no Kysely, no
// validation beyond a JSON schema, no ledger checks, no rates, no presentation. Each is a
// practical ceiling for railyard's design, so `npm run bench` reports it beside the real
// scenario:
//
// - POST /transfer-out: an idempotency record, the transaction, its postings and entries,
//   the balance and three events, as one transfer-out writes them. It still reads the
//   idempotency key, both accounts and the platform's configuration, as railyard does; a
//   design that skipped those reads would gain a little.
// - POST /quotes, and POST /quotes with immediatelyExecute: see bench/floor-quotes.ts.
//
// Every request runs in a transaction of its own, committed in groups as the server does it.
// The floors run on a copy of a railyard store that has made one transfer-out and two quotes
// (one executed; the bench prepares it): FLOOR_DB is the SQLite file, FLOOR_AUTH the
// Authorization header to accept, FLOOR_QUOTES the answers of the two quotes (JSON: created,
// executed), which the quote floors send again with new ids.

import { createHash } from 'node:crypto';
import type SQLite from 'better-sqlite3';
import { checkpointOnThread } from '../src/db/checkpointer.js';
import { loadSqlite } from '../src/db/sqlite-driver.js';
import { applyStoreSettings } from '../src/db/sqlite-setup.js';
import { quoteFloors } from './floor-quotes.js';
import { newId, serveFloor, type TransferOutBody, transferOutBody } from './floor-server.js';

const file = process.env.FLOOR_DB;
if (file === undefined) throw new Error('FLOOR_DB is not set');
const sqlite = loadSqlite();
const db: SQLite.Database = new sqlite.driver(file);
// The same settings and checkpoint thread as railyard's store (src/db/).
applyStoreSettings(db);
checkpointOnThread(file, sqlite.path);
const platform = db.prepare('SELECT id FROM platforms').pluck().get() as string;

// ----------------------------------------------------------------------------- group commit

// Group commit as the server does it: what queued during a turn of the event loop runs in
// one transaction, each request in a savepoint of its own.
interface Pending {
  work: () => string;
  resolve: (payload: string) => void;
  reject: (error: unknown) => void;
}
const queue: Pending[] = [];
let scheduled = false;
const control = {
  begin: db.prepare('BEGIN'),
  commit: db.prepare('COMMIT'),
  savepoint: db.prepare('SAVEPOINT floor'),
  release: db.prepare('RELEASE floor'),
  rollback: db.prepare('ROLLBACK TO floor'),
};

function runBatch(): void {
  scheduled = false;
  const batch = queue.splice(0, 64);
  const outcomes: (() => void)[] = [];
  control.begin.run();
  for (const item of batch) {
    control.savepoint.run();
    try {
      const payload = item.work();
      control.release.run();
      outcomes.push(() => item.resolve(payload));
    } catch (error) {
      control.rollback.run();
      control.release.run();
      outcomes.push(() => item.reject(error));
    }
  }
  control.commit.run();
  for (const outcome of outcomes) outcome();
  if (queue.length > 0 && !scheduled) {
    scheduled = true;
    setImmediate(runBatch);
  }
}

/** Runs `work` in the next grouped transaction; resolves with its answer once that commits. */
function grouped(work: () => string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    queue.push({ work, resolve, reject });
    if (!scheduled) {
      scheduled = true;
      setImmediate(runBatch);
    }
  });
}

// ----------------------------------------------------------------------------- transfer-out

// The transfer the bench made (the one outgoing transaction no quote made), as templates for
// the rows and event bodies.
const template = db
  .prepare(
    "SELECT * FROM transactions WHERE type = 'OUTGOING' AND id NOT IN (SELECT transaction_id FROM quotes) LIMIT 1",
  )
  .get() as Record<string, unknown>;
const eventData = (type: string) =>
  db
    .prepare('SELECT data FROM events WHERE type = ? AND resource_id = ? ORDER BY id DESC LIMIT 1')
    .pluck()
    .get(type, template.id) as string;
const processing = eventData('OUTGOING_PAYMENT.PROCESSING');
const completed = eventData('OUTGOING_PAYMENT.COMPLETED');
const balanceUpdated = db
  .prepare("SELECT data FROM events WHERE type = 'INTERNAL_ACCOUNT.BALANCE_UPDATED' ORDER BY id DESC LIMIT 1")
  .pluck()
  .get() as string;
const columns = Object.keys(template);
const withId = (data: string, id: string) => data.replace(/Transaction:[0-9a-f-]{36}/, id);

const statements = {
  findKey: db.prepare(
    'SELECT request_hash, response_status, response_body FROM idempotency_keys WHERE platform_id = ? AND operation_id = ? AND key = ?',
  ),
  claimKey: db.prepare(
    "INSERT INTO idempotency_keys (platform_id, operation_id, key, request_hash, response_status, response_body, created_at) VALUES (?, ?, ?, ?, 0, '', ?)",
  ),
  completeKey: db.prepare(
    'UPDATE idempotency_keys SET response_status = ?, response_body = ? WHERE platform_id = ? AND operation_id = ? AND key = ?',
  ),
  internal: db.prepare(
    'SELECT internal_accounts.*, CAST(ledger_accounts.available AS TEXT) AS available, CAST(ledger_accounts.held AS TEXT) AS held FROM internal_accounts ' +
      'JOIN ledger_accounts ON ledger_accounts.id = internal_accounts.id WHERE internal_accounts.platform_id = ? AND internal_accounts.id = ?',
  ),
  external: db.prepare('SELECT * FROM external_accounts WHERE platform_id = ? AND id = ? AND deleted_at IS NULL'),
  config: db.prepare('SELECT config FROM platforms WHERE id = ?').pluck(),
  transaction: db.prepare(
    `INSERT INTO transactions (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
  ),
  postings: db.prepare(
    `INSERT INTO ledger_postings (id, platform_id, currency, kind, transaction_id, created_at) VALUES ${['(?, ?, ?, ?, ?, ?)', '(?, ?, ?, ?, ?, ?)'].join(', ')}`,
  ),
  entries: db.prepare(
    `INSERT INTO ledger_entries (posting_id, line, platform_id, account_id, bucket, currency, amount) VALUES ${Array(4).fill('(?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
  ),
  balance: db
    .prepare(
      'UPDATE ledger_accounts SET available = available + ?, updated_at = ? WHERE id = ? AND available + ? >= 0 RETURNING CAST(available AS TEXT)',
    )
    .pluck(),
  events: db.prepare(
    `INSERT INTO events (id, platform_id, type, resource_id, data, created_at) VALUES ${Array(3).fill('(?, ?, ?, ?, ?, ?)').join(', ')}`,
  ),
};

function transferOut(body: TransferOutBody, key: string): string {
  const now = new Date().toISOString();
  const hash = createHash('sha256')
    .update(JSON.stringify(['createTransferOut', body]))
    .digest('hex');
  const stored = statements.findKey.get(platform, 'createTransferOut', key) as { response_body: string } | undefined;
  if (stored !== undefined) return stored.response_body;
  statements.claimKey.run(platform, 'createTransferOut', key, hash, now);
  const internal = statements.internal.get(platform, body.source.accountId) as { id: string } | undefined;
  const external = statements.external.get(platform, body.destination.accountId);
  JSON.parse(statements.config.get(platform) as string);
  if (internal === undefined || external === undefined) throw new Error('unknown account');
  const id = newId('Transaction');
  const fresh: Record<string, unknown> = { id, reference: `RY${id.replace(/-/g, '').slice(-12).toUpperCase()}` };
  statements.transaction.run(
    ...columns.map((c) => (c in fresh ? fresh[c] : c.endsWith('_at') && template[c] !== null ? now : template[c])),
  );
  const hold = newId('Posting');
  const settle = newId('Posting');
  statements.postings.run(hold, platform, 'USD', 'HOLD', id, now, settle, platform, 'USD', 'SETTLE', id, now);
  const rails = `LedgerAccount:EXTERNAL_RAILS:USD:${platform}`;
  statements.entries.run(
    hold,
    1,
    platform,
    internal.id,
    'AVAILABLE',
    'USD',
    -body.amount,
    hold,
    2,
    platform,
    internal.id,
    'HELD',
    'USD',
    body.amount,
    settle,
    1,
    platform,
    internal.id,
    'HELD',
    'USD',
    -body.amount,
    settle,
    2,
    platform,
    rails,
    'AVAILABLE',
    'USD',
    body.amount,
  );
  if (statements.balance.get(-body.amount, now, internal.id, -body.amount) === undefined)
    throw new Error('insufficient funds');
  const response = withId(completed, id);
  statements.events.run(
    newId('Webhook'),
    platform,
    'OUTGOING_PAYMENT.PROCESSING',
    id,
    withId(processing, id),
    now,
    newId('Webhook'),
    platform,
    'OUTGOING_PAYMENT.COMPLETED',
    id,
    response,
    now,
    newId('Webhook'),
    platform,
    'INTERNAL_ACCOUNT.BALANCE_UPDATED',
    internal.id,
    balanceUpdated,
    now,
  );
  statements.completeKey.run(201, response, platform, 'createTransferOut', key);
  return response;
}

// ----------------------------------------------------------------------------- the server

const quotes = quoteFloors(db, platform, JSON.parse(process.env.FLOOR_QUOTES ?? '{}'));

await serveFloor(
  [
    {
      path: '/transfer-out',
      status: 201,
      body: transferOutBody,
      handle: (body: TransferOutBody, key) => grouped(() => transferOut(body, String(key))),
    },
    {
      path: '/quotes',
      status: 201,
      body: quotes.schema,
      handle: (body) => grouped(() => quotes.create(body)),
    },
  ],
  () => db.close(),
);
