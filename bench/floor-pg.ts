// The floor of POST /transfer-out on PostgreSQL: a bare Fastify route that writes and reads
// what one successful transfer-out does (the idempotency record, the transaction row, its two
// postings and four entries, the source balance, three events), on the same tables, with the
// fewest round trips that data allows: BEGIN with the key's claim (written together, as
// railyard writes a BEGIN with its first statement), one read of both accounts and the
// platform's configuration, one statement for every write (the guarded balance update last,
// so its row lock is held only until the COMMIT), COMMIT (on its own: it may be sent only
// once the guard has passed). No Kysely, no validation beyond a JSON schema, no ledger
// checks, no presentation. It is the practical ceiling of the design on this database, which
// `npm run bench` measures beside the real server. Its statements are prepared once per
// connection, as railyard's are (db/deferred.ts).
//
// It runs on the database of a railyard server (the bench has made one transfer-out there to
// copy rows from): FLOOR_DATABASE_URL, FLOOR_PLATFORM, FLOOR_AUTH.

import { createHash } from 'node:crypto';
import pg from 'pg';
import { newId, serveFloor, type TransferOutBody, transferOutBody } from './floor-server.js';

const url = process.env.FLOOR_DATABASE_URL;
const platform = process.env.FLOOR_PLATFORM;
if (url === undefined || platform === undefined) throw new Error('FLOOR_DATABASE_URL and FLOOR_PLATFORM are needed');
// Pipelined connections, as railyard's: a query is written without waiting for the one before.
const pool = new pg.Pool({ connectionString: url, max: 20, pipeline: true } as pg.PoolConfig);

const template = (
  await pool.query("SELECT * FROM transactions WHERE platform_id = $1 AND type = 'OUTGOING' LIMIT 1", [platform])
).rows[0] as Record<string, unknown>;
if (template === undefined) throw new Error('the platform has no transfer-out to copy');
const eventData = async (type: string) =>
  (
    await pool.query('SELECT data FROM events WHERE platform_id = $1 AND type = $2 ORDER BY id DESC LIMIT 1', [
      platform,
      type,
    ])
  ).rows[0].data as string;
const processing = await eventData('OUTGOING_PAYMENT.PROCESSING');
const completed = await eventData('OUTGOING_PAYMENT.COMPLETED');
const balanceUpdated = await eventData('INTERNAL_ACCOUNT.BALANCE_UPDATED');
const columns = Object.keys(template);
const withId = (data: string, id: string) => data.replace(/Transaction:[0-9a-f-]{36}/, id);

/** `count` rows of `width` placeholders each, numbered from `from`. */
function rows(count: number, width: number, from: number): string {
  return Array.from(
    { length: count },
    (_, r) => `(${Array.from({ length: width }, (_, c) => `$${from + r * width + c}`).join(', ')})`,
  ).join(', ');
}

const CLAIM =
  'INSERT INTO idempotency_keys (platform_id, operation_id, key, request_hash, response_status, response_body, created_at) ' +
  "VALUES ($1, 'createTransferOut', $2, $3, 0, '', $4) ON CONFLICT DO NOTHING RETURNING 1";
const READ =
  'SELECT i.id, CAST(l.available AS TEXT) AS available, ' +
  '(SELECT e.id FROM external_accounts e WHERE e.platform_id = $1 AND e.id = $3 AND e.deleted_at IS NULL) AS external, ' +
  '(SELECT p.config FROM platforms p WHERE p.id = $1) AS config ' +
  'FROM internal_accounts i JOIN ledger_accounts l ON l.id = i.id WHERE i.platform_id = $1 AND i.id = $2';
// $1 platform, $2 amount, $3 now, $4 source, $5 key, $6 response; then the rows' values.
const WRITE = (() => {
  let next = 7;
  const take = (count: number, width: number) => {
    const text = rows(count, width, next);
    next += count * width;
    return text;
  };
  const transaction = `INSERT INTO transactions (${columns.join(', ')}) VALUES ${take(1, columns.length)}`;
  const postings = `INSERT INTO ledger_postings (id, platform_id, currency, kind, transaction_id, created_at) VALUES ${take(2, 6)}`;
  const entries = `INSERT INTO ledger_entries (posting_id, line, platform_id, account_id, bucket, currency, amount) VALUES ${take(4, 7)}`;
  const events = `INSERT INTO events (id, platform_id, type, resource_id, data, created_at) VALUES ${take(3, 6)}`;
  const key =
    "UPDATE idempotency_keys SET response_status = 201, response_body = $6 WHERE platform_id = $1 AND operation_id = 'createTransferOut' AND key = $5";
  return (
    `WITH t AS (${transaction}), p AS (${postings}), e AS (${entries}), v AS (${events}), k AS (${key}) ` +
    'UPDATE ledger_accounts SET available = available - $2, updated_at = $3 WHERE id = $4 AND available - $2 >= 0 RETURNING 1'
  );
})();

async function transferOut(body: TransferOutBody, key: string): Promise<string> {
  const now = new Date().toISOString();
  const hash = createHash('sha256')
    .update(JSON.stringify(['createTransferOut', body]))
    .digest('hex');
  const client = await pool.connect();
  try {
    const stream = (client as unknown as { connection: { stream: { cork(): void; uncork(): void } } }).connection
      .stream;
    stream.cork();
    const begun = client.query('BEGIN');
    const claimed = client.query({ name: 'floor_claim', text: CLAIM, values: [platform, key, hash, now] });
    stream.uncork();
    try {
      const [, claim] = await Promise.all([begun, claimed]);
      if (claim.rowCount !== 1) throw new Error('key used');
      const read = (
        await client.query({
          name: 'floor_read',
          text: READ,
          values: [platform, body.source.accountId, body.destination.accountId],
        })
      ).rows[0];
      if (read === undefined || read.external === null) throw new Error('unknown account');
      const id = newId('Transaction');
      const fresh: Record<string, unknown> = { id, reference: `RY${id.replace(/-/g, '').slice(-12).toUpperCase()}` };
      const hold = newId('Posting');
      const settle = newId('Posting');
      const rails = `LedgerAccount:EXTERNAL_RAILS:USD:${platform}`;
      const response = withId(completed, id);
      const amount = body.amount;
      const values = [
        platform,
        amount,
        now,
        read.id,
        key,
        response,
        ...columns.map((c) => (c in fresh ? fresh[c] : c.endsWith('_at') && template[c] !== null ? now : template[c])),
        ...[hold, platform, 'USD', 'HOLD', id, now, settle, platform, 'USD', 'SETTLE', id, now],
        ...[hold, 1, platform, read.id, 'AVAILABLE', 'USD', -amount, hold, 2, platform, read.id, 'HELD', 'USD', amount],
        ...[
          settle,
          1,
          platform,
          read.id,
          'HELD',
          'USD',
          -amount,
          settle,
          2,
          platform,
          rails,
          'AVAILABLE',
          'USD',
          amount,
        ],
        ...[newId('Webhook'), platform, 'OUTGOING_PAYMENT.PROCESSING', id, withId(processing, id), now],
        ...[newId('Webhook'), platform, 'OUTGOING_PAYMENT.COMPLETED', id, response, now],
        ...[newId('Webhook'), platform, 'INTERNAL_ACCOUNT.BALANCE_UPDATED', read.id, balanceUpdated, now],
      ];
      if ((await client.query({ name: 'floor_write', text: WRITE, values })).rowCount !== 1)
        throw new Error('insufficient funds');
      await client.query('COMMIT');
      return response;
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    }
  } finally {
    client.release();
  }
}

await serveFloor(
  [
    {
      path: '/transfer-out',
      status: 201,
      body: transferOutBody,
      handle: (body: TransferOutBody, key) => transferOut(body, String(key)),
    },
  ],
  () => pool.end(),
);
