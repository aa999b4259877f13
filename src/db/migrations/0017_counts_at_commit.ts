import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { listCountsBody, otherChanged } from './0016_list_counts.js';

// Counts written at commit (PostgreSQL only).
//
// The counts of 0008 and 0016 were kept by triggers that ran at each insert or update of a
// transaction, so the rows they changed stayed locked until the end of the writing
// transaction: through its wait for an account's lock, and in whatever order its statements
// came. Two transfers then held a count row and an account each and waited for the other's
// (the two-instance test saw about 25 deadlocks a run, each a one-second stall and a retry).
//
// Now they are constraint triggers deferred to the commit, after every other statement of the
// transaction, when it takes no other lock. Each transaction writes to one shard, that of
// its server process (pg_backend_pid), and first takes a transaction-level advisory lock on
// that shard: the writers of one shard's count rows then go one at a time, so their row
// locks, in whatever order, can form no cycle. The lock is held for the commit alone.
//
// The embedded store has one writer: its triggers stay as they are.

const SHARDS_PG = 16;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  const schema = (await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(db)).rows[0]!.schema;
  // One lock space per schema, so installations sharing a database do not wait on each other.
  const space = (await sql<{ key: number }>`SELECT hashtext(${`railyard counts ${schema}`}) AS key`.execute(db))
    .rows[0]!.key;
  const shard = `(pg_backend_pid() & ${SHARDS_PG - 1})`;
  const lock = `PERFORM pg_advisory_xact_lock(${space}, ${shard});`;

  const counts = sql.id(schema, 'transaction_counts');
  const countFn = sql.id(schema, 'transactions_count');
  await sql`
    CREATE OR REPLACE FUNCTION ${countFn}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      ${sql.raw(lock)}
      INSERT INTO ${counts} AS c (platform_id, shard, n)
      VALUES (NEW.platform_id, ${sql.raw(shard)}, 1)
      ON CONFLICT (platform_id, shard) DO UPDATE SET n = c.n + 1;
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`DROP TRIGGER transactions_count ON transactions`.execute(db);
  await sql`
    CREATE CONSTRAINT TRIGGER transactions_count AFTER INSERT ON transactions
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${countFn}()`.execute(db);

  const table = `${sql.id(schema, 'list_counts').compile(db).sql}`;
  const listFn = sql.id(schema, 'transactions_list_counts');
  await sql`
    CREATE OR REPLACE FUNCTION ${listFn}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      ${sql.raw(lock)}
      ${sql.raw(listCountsBody(table, shard))}
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`DROP TRIGGER transactions_list_counts_insert ON transactions`.execute(db);
  await sql`DROP TRIGGER transactions_list_counts_update ON transactions`.execute(db);
  await sql`
    CREATE CONSTRAINT TRIGGER transactions_list_counts_insert AFTER INSERT ON transactions
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${listFn}()`.execute(db);
  await sql`
    CREATE CONSTRAINT TRIGGER transactions_list_counts_update AFTER UPDATE ON transactions
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status OR ${sql.raw(otherChanged('IS DISTINCT FROM'))})
    EXECUTE FUNCTION ${listFn}()`.execute(db);
}
