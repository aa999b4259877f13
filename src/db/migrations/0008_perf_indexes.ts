import { PostgresAdapter, SqliteAdapter, sql, type Kysely } from 'kysely';

// The number of transactions of each platform, kept by the database itself.
//
// note: GET /transactions answers `totalCount`, and counting a platform's rows at every
// request costs time in proportion to the table (5 ms per request at 76k rows on SQLite,
// the whole of the request's time). An index cannot make that count cheaper; a count
// kept in lockstep can. A trigger keeps it: every insert into transactions, whichever code
// makes it, adds one in the same transaction (transactions are never deleted). On
// PostgreSQL the count of a platform is spread over 16 rows (the shard is a hash of the
// transaction id), so concurrent transfers of one platform do not queue on one row lock;
// the embedded store has one writer and one row per platform. The list sums the rows.
// (Migration 0017 replaced the PostgreSQL trigger: the shard is now the server process's,
// written at commit; see there.)
//
// A later migration that rebuilds the transactions table must create the trigger again.

const SHARDS_PG = 16;

export async function up(db: Kysely<unknown>): Promise<void> {
  const adapter = db.getExecutor().adapter;
  const withoutRowid = adapter instanceof SqliteAdapter ? sql`WITHOUT ROWID` : sql``;
  await db.schema
    .createTable('transaction_counts')
    .addColumn('platform_id', 'text', (c) => c.notNull())
    .addColumn('shard', 'integer', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('transaction_counts_pk', ['platform_id', 'shard'])
    .modifyEnd(withoutRowid)
    .execute();

  if (adapter instanceof PostgresAdapter) {
    // The function names its table with the schema it is created in, so it does not depend
    // on the search_path of the session that inserts.
    const schema = (await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(db)).rows[0]!.schema;
    const table = sql.id(schema, 'transaction_counts');
    const fn = sql.id(schema, 'transactions_count');
    await sql`
      CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO ${table} AS c (platform_id, shard, n)
        VALUES (NEW.platform_id, hashtext(NEW.id) & ${sql.raw(String(SHARDS_PG - 1))}, 1)
        ON CONFLICT (platform_id, shard) DO UPDATE SET n = c.n + 1;
        RETURN NULL;
      END
      $$`.execute(db);
    // Created before the count below: it waits for transactions inserting rows to end and
    // keeps new ones out until this migration commits, so no row is counted twice or missed.
    await sql`CREATE TRIGGER transactions_count AFTER INSERT ON transactions FOR EACH ROW EXECUTE FUNCTION ${fn}()`.execute(
      db,
    );
  } else {
    await sql`
      CREATE TRIGGER transactions_count AFTER INSERT ON transactions
      BEGIN
        INSERT INTO transaction_counts (platform_id, shard, n) VALUES (NEW.platform_id, 0, 1)
        ON CONFLICT (platform_id, shard) DO UPDATE SET n = n + 1;
      END`.execute(db);
  }
  await sql`
    INSERT INTO transaction_counts (platform_id, shard, n)
    SELECT platform_id, 0, COUNT(*) FROM transactions GROUP BY platform_id`.execute(db);
}
