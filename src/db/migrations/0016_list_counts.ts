import { PostgresAdapter, SqliteAdapter, sql, type Kysely } from 'kysely';

// Lists whose cost does not grow with the table (issue 21, target 4).
//
// A page of a filtered list is cheap once an index leads with the filter and ends with the
// sort key (created_at, id): the page is the first rows of one index range. Its totalCount is
// not: counting a range costs time in proportion to its rows (every COMPLETED transaction
// for `status=COMPLETED`). So the counts a list answers are kept by the database itself, in
// `list_counts`, by triggers on the listed table: whichever code inserts a row or changes a
// counted column, the counts change in the same transaction, so they are exact.
//
// A count row is keyed by platform, list, dimension (the filter), value and day:
// - dimensions whose values are few (every row, `status`, `type`) are kept per day of
//   `created_at` (the first ten characters of the stored time), so a date range sums the
//   whole days inside it and counts the rows of its two partial days through the index;
// - dimensions with many values (customer, account) are kept whole (`day` is '').
// On PostgreSQL each key is spread over 16 shards (a hash of the row id), so concurrent
// writers of one platform rarely wait on one row lock; the embedded store has one writer and
// uses shard 0. A count is the sum of its rows. (Migration 0017 replaced the PostgreSQL
// triggers: the shard is now the server process's, written at commit; see there.)
//
// Transactions (card transactions included) count under:
//   all ('')            per day
//   status              per day
//   type                per day
//   customer            the customer id, '' for the platform's own
//   platform_customer   the platform's customer id, '' when none
//   source, destination the account ids
//   same                the account id, for a row whose source is its destination, so that
//                       accountIdentifier (either side) counts source + destination - same.
//
// A later migration that rebuilds the transactions table must create the triggers again.

const SHARDS_PG = 16;

/** A count row: its dimension, value and day, as SQL over the row named by `row` (NEW or OLD). */
type Key = (row: 'NEW' | 'OLD') => [dim: string, value: string, day: string];

const day = (row: string) => `substr(${row}.created_at, 1, 10)`;

const TRANSACTION_KEYS: Key[] = [
  (r) => ['all', `''`, day(r)],
  (r) => ['status', `${r}.status`, day(r)],
  (r) => ['type', `${r}.type`, day(r)],
  (r) => ['customer', `coalesce(${r}.customer_id, '')`, `''`],
  (r) => ['platform_customer', `coalesce(${r}.platform_customer_id, '')`, `''`],
  (r) => ['source', `${r}.source_account_id`, `''`],
  (r) => ['destination', `${r}.destination_account_id`, `''`],
];
const STATUS_KEY = TRANSACTION_KEYS[1]!;
/** The columns the counts read, besides status. */
const OTHER_COLUMNS = [
  'platform_id',
  'type',
  'customer_id',
  'platform_customer_id',
  'source_account_id',
  'destination_account_id',
];

const CONFLICT = 'ON CONFLICT (platform_id, list, dim, value, day, shard) DO UPDATE SET n = list_counts.n + excluded.n';

function values(keys: Key[], row: 'NEW' | 'OLD', n: 1 | -1, shard: string): string {
  return keys
    .map((key) => {
      const [dim, value, d] = key(row);
      return `(${row}.platform_id, 'transactions', '${dim}', ${value}, ${d}, ${shard}, ${n})`;
    })
    .join(',\n        ');
}

/** The statements that add (n = 1) or take away (n = -1) the row's counts. */
function countRow(table: string, row: 'NEW' | 'OLD', n: 1 | -1, shard: string, keys = TRANSACTION_KEYS): string {
  const same =
    keys === TRANSACTION_KEYS
      ? `
      INSERT INTO ${table} (platform_id, list, dim, value, day, shard, n)
        SELECT ${row}.platform_id, 'transactions', 'same', ${row}.source_account_id, '', ${shard}, ${n}
        WHERE ${row}.source_account_id = ${row}.destination_account_id
      ${CONFLICT};`
      : '';
  return `
      INSERT INTO ${table} (platform_id, list, dim, value, day, shard, n) VALUES
        ${values(keys, row, n, shard)}
      ${CONFLICT};${same}`;
}

export const otherChanged = (distinct: string) =>
  [...OTHER_COLUMNS.map((c) => `OLD.${c} ${distinct} NEW.${c}`), `${day('OLD')} ${distinct} ${day('NEW')}`].join(
    ' OR ',
  );

/**
 * The statements of the PostgreSQL trigger function that keeps the counts of `table` (the
 * list_counts table, named with its schema) for an insert or an update of a transaction, each
 * count row in `shard` (an SQL expression). Migration 0017 uses it too.
 */
export function listCountsBody(table: string, shard: string): string {
  const conflictAs = (s: string) => s.replaceAll(`${table} (`, `${table} AS list_counts (`);
  return `
        IF TG_OP = 'INSERT' THEN
          ${conflictAs(countRow(table, 'NEW', 1, shard))}
        ELSIF NOT (${otherChanged('IS DISTINCT FROM')}) THEN
          -- Only the status changed (a transition): move the row between two status counts.
          INSERT INTO ${table} AS list_counts (platform_id, list, dim, value, day, shard, n) VALUES
            ${values([STATUS_KEY], 'OLD', -1, shard)},
            ${values([STATUS_KEY], 'NEW', 1, shard)}
          ${CONFLICT};
        ELSE
          ${conflictAs(countRow(table, 'OLD', -1, shard))}
          ${conflictAs(countRow(table, 'NEW', 1, shard))}
        END IF;`;
}

/**
 * The transactions' counts as they are now, for a table that already has rows: the daily
 * dimensions from one grouping of the rows by platform, status, type and day; the others
 * each from the index that leads with their column (grouped in its order, without a sort).
 */
export async function backfillTransactionCounts(db: Kysely<unknown>): Promise<void> {
  const insert = sql`INSERT INTO list_counts (platform_id, list, dim, value, day, shard, n)`;
  const merge = sql.raw(CONFLICT);
  await sql`DELETE FROM list_counts WHERE list = 'transactions'`.execute(db);
  await sql`DROP TABLE IF EXISTS list_counts_daily`.execute(db);
  await sql`
    CREATE TEMPORARY TABLE list_counts_daily AS
    SELECT platform_id, status, type, substr(created_at, 1, 10) AS day, COUNT(*) AS n
    FROM transactions GROUP BY platform_id, status, type, substr(created_at, 1, 10)`.execute(db);
  for (const [dim, value] of [
    ['all', sql`''`],
    ['status', sql.ref('status')],
    ['type', sql.ref('type')],
  ] as const) {
    const groups = dim === 'all' ? sql`platform_id, day` : sql`platform_id, ${value}, day`;
    await sql`${insert}
      SELECT platform_id, 'transactions', ${dim}, ${value}, day, 0, SUM(n) FROM list_counts_daily
      GROUP BY ${groups}`.execute(db);
  }
  await sql`DROP TABLE list_counts_daily`.execute(db);
  for (const [dim, column] of [
    ['customer', 'customer_id'],
    ['platform_customer', 'platform_customer_id'],
    ['source', 'source_account_id'],
    ['destination', 'destination_account_id'],
  ] as const) {
    // A null and an empty text are both counted under '' (the merge adds them up).
    await sql`${insert}
      SELECT platform_id, 'transactions', ${dim}, coalesce(${sql.ref(column)}, ''), '', 0, COUNT(*) FROM transactions
      WHERE true GROUP BY platform_id, ${sql.ref(column)} ${merge}`.execute(db);
  }
  await sql`${insert}
    SELECT platform_id, 'transactions', 'same', source_account_id, '', 0, COUNT(*)
    FROM transactions WHERE source_account_id = destination_account_id
    GROUP BY platform_id, source_account_id`.execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const adapter = db.getExecutor().adapter;
  const withoutRowid = adapter instanceof SqliteAdapter ? sql`WITHOUT ROWID` : sql``;
  await db.schema
    .createTable('list_counts')
    .addColumn('platform_id', 'text', (c) => c.notNull())
    .addColumn('list', 'text', (c) => c.notNull())
    .addColumn('dim', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('shard', 'integer', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('list_counts_pk', ['platform_id', 'list', 'dim', 'value', 'day', 'shard'])
    .modifyEnd(withoutRowid)
    .execute();

  // One index per filter of GET /transactions, each ending with the sort key; the list by
  // platform and by customer had theirs (0004).
  for (const column of [
    'status',
    'type',
    'platform_customer_id',
    'source_account_id',
    'destination_account_id',
    'reference',
  ]) {
    await db.schema
      .createIndex(`transactions_${column}_created`)
      .on('transactions')
      .columns(['platform_id', column, 'created_at', 'id'])
      .execute();
  }

  // The other lists that grow with transactions page from an index per filter as well (their
  // counts still count the matching index range).
  for (const [name, table, columns] of [
    ['agent_actions_platform_created', 'agent_actions', ['platform_id', 'created_at', 'id']],
    ['agent_actions_customer_created', 'agent_actions', ['platform_id', 'customer_id', 'created_at', 'id']],
    ['webhook_deliveries_status_created', 'webhook_deliveries', ['platform_id', 'status', 'created_at', 'id']],
    ['webhook_deliveries_type_created', 'webhook_deliveries', ['platform_id', 'type', 'created_at', 'id']],
  ] as const) {
    await db.schema
      .createIndex(name)
      .on(table)
      .columns([...columns])
      .execute();
  }

  if (adapter instanceof PostgresAdapter) {
    // Named with the schema they are created in, so they do not depend on the search_path of
    // the session that writes.
    const schema = (await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(db)).rows[0]!.schema;
    const table = `${sql.id(schema, 'list_counts').compile(db).sql}`;
    const fn = sql.id(schema, 'transactions_list_counts');
    const shard = `(hashtext(NEW.id) & ${SHARDS_PG - 1})`;
    await sql`
      CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${sql.raw(listCountsBody(table, shard))}
        RETURN NULL;
      END
      $$`.execute(db);
    // Created before the counts below: they wait for transactions writing rows to end and
    // keep new ones out until this migration commits, so no row is counted twice or missed.
    await sql`CREATE TRIGGER transactions_list_counts_insert AFTER INSERT ON transactions FOR EACH ROW EXECUTE FUNCTION ${fn}()`.execute(
      db,
    );
    await sql`
      CREATE TRIGGER transactions_list_counts_update AFTER UPDATE ON transactions FOR EACH ROW
      WHEN (OLD.status IS DISTINCT FROM NEW.status OR ${sql.raw(otherChanged('IS DISTINCT FROM'))})
      EXECUTE FUNCTION ${fn}()`.execute(db);
  } else {
    await sql`
      CREATE TRIGGER transactions_list_counts_insert AFTER INSERT ON transactions
      BEGIN ${sql.raw(countRow('list_counts', 'NEW', 1, '0'))}
      END`.execute(db);
    // A transition changes the status alone: two counts move.
    await sql`
      CREATE TRIGGER transactions_list_counts_status AFTER UPDATE OF status ON transactions
      WHEN OLD.status IS NOT NEW.status AND NOT (${sql.raw(otherChanged('IS NOT'))})
      BEGIN
        INSERT INTO list_counts (platform_id, list, dim, value, day, shard, n) VALUES
          ${sql.raw(values([STATUS_KEY], 'OLD', -1, '0'))},
          ${sql.raw(values([STATUS_KEY], 'NEW', 1, '0'))}
        ${sql.raw(CONFLICT)};
      END`.execute(db);
    // Any other change of a counted column (railyard makes none): every count of the row moves.
    await sql`
      CREATE TRIGGER transactions_list_counts_update AFTER UPDATE ON transactions
      WHEN ${sql.raw(otherChanged('IS NOT'))}
      BEGIN ${sql.raw(countRow('list_counts', 'OLD', -1, '0'))}
      ${sql.raw(countRow('list_counts', 'NEW', 1, '0'))}
      END`.execute(db);
  }
  await backfillTransactionCounts(db);
}
