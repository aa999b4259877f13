// The request journal of an embedded store on disk: a file of its own (journal.sqlite, beside the
// store's), written by a thread of its own (src/modules/requests/journal-file.ts). Over HTTP, on
// a data directory whatever store the rest of the suite runs on: what the server answered is in
// the journal as soon as it is read, the store's own table stays empty, a reset empties the file,
// a restart keeps it, rows an earlier version left in the store's table move into it, and the
// file's table has the columns of the store's (migration 0020).

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BASE_PATH } from '../../src/config.js';
import { loadSqlite } from '../../src/db/sqlite-driver.js';
import { JOURNAL_FILE_NAME } from '../../src/modules/requests/journal-file.js';
import { journal, storedRows } from '../fixtures/journal.js';
import { externalAccount, fundedUsd, transferOut } from '../fixtures/money.js';
import { build, type TestApp } from '../helper.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** An app on a new data directory (never PostgreSQL: the file is the embedded store's). */
async function onDisk(
  journalSize?: number,
  options: { before?: (dataDir: string) => void; logLines?: string[] } = {},
): Promise<{ t: TestApp; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'railyard-journal-file-'));
  dirs.push(dataDir);
  options.before?.(dataDir);
  const lines = options.logLines;
  const t = await build({
    config: { dataDir, databaseUrl: undefined, ...(journalSize ? { journalSize } : {}) },
    ...(lines ? { logStream: { write: (line: string) => void lines.push(line) } } : {}),
  });
  return { t, dataDir };
}

/** Reads the journal's file with a connection of the test's own. */
function fileRows(dataDir: string, platformId: string): { id: string; operation_id: string | null }[] {
  const Database = loadSqlite().driver;
  const db = new Database(join(dataDir, JOURNAL_FILE_NAME), { readonly: true });
  try {
    return db
      .prepare('SELECT id, operation_id FROM request_journal WHERE platform_id = ? ORDER BY created_at DESC, id DESC')
      .all(platformId) as { id: string; operation_id: string | null }[];
  } finally {
    db.close();
  }
}

describe('the request journal of an embedded store on disk', () => {
  it('is written to journal.sqlite, read back at once, and leaves the store’s table empty', async () => {
    const { t, dataDir } = await onDisk();
    const source = await fundedUsd(t);
    const bank = await externalAccount(t, 'USD_ACCOUNT');
    const sent = await transferOut(t, source.id, bank.id, 2_500, { 'idempotency-key': 'file-payout-1' });
    expect(sent.status, sent.text).toBe(201);

    // Read right after the answer: the writer's batch is written before the read.
    const page = await journal(t);
    expect(page.data.map((r) => r.operationId)).toEqual([
      'createTransferOut',
      'createPlatformExternalAccount',
      'sandboxFundInternalAccount',
      'listPlatformInternalAccounts',
    ]);
    expect(page.data[0]).toMatchObject({
      method: 'POST',
      path: `${BASE_PATH}/transfer-out`,
      status: 201,
      answered: true,
      idempotencyKey: 'file-payout-1',
      requestBody: { amount: 2_500 },
    });
    // One entry by id, and the report, read the same file.
    const one = await t.raw('GET', `/_railyard/requests/${page.data[0].id}`);
    expect(one.status, one.text).toBe(200);
    expect(one.body.responseBody.id).toBe(sent.body.id);
    const report = await t.raw('GET', '/_railyard/requests/report');
    expect(report.body.window).toMatchObject({ requests: 4 });

    expect(existsSync(join(dataDir, JOURNAL_FILE_NAME))).toBe(true);
    expect(await storedRows(t)).toBe(0);
    // The file holds what was listed.
    expect(fileRows(dataDir, t.platformId).map((row) => row.operation_id)).toEqual(page.data.map((r) => r.operationId));
  });

  it('makes its rows in its own thread as the store’s table has them: secrets redacted, error codes, request hashes', async () => {
    const { t, dataDir } = await onDisk();
    const token = await t.api('POST', '/tokens', { body: { name: 'ledger reader', permissions: ['VIEW'] } });
    expect(token.status, token.text).toBe(201);
    const source = await fundedUsd(t);
    const bank = await externalAccount(t, 'USD_ACCOUNT');
    const refused = await transferOut(t, source.id, bank.id, -5);
    expect(refused.status).toBe(400);
    // One key, three requests: the same body twice (a replay), then another.
    for (const amount of [700, 700, 800])
      await transferOut(t, source.id, bank.id, amount, { 'idempotency-key': 'file-reused-1' });

    const byOperation = async (operationId: string) => (await journal(t, `?operationId=${operationId}`)).data;
    const [created] = await byOperation('createToken');
    expect(created.responseBody).toMatchObject({ clientId: token.body.clientId, clientSecret: '(redacted)' });
    expect(JSON.stringify(created)).not.toContain(token.body.clientSecret);
    const transfers = await byOperation('createTransferOut');
    expect(transfers.map((r) => [r.status, r.errorCode ?? null, r.requestBody.amount])).toEqual([
      // The key reused with another request.
      [400, 'INVALID_INPUT', 800],
      [201, null, 700],
      [201, null, 700],
      [400, 'INVALID_INPUT', -5],
    ]);
    const report = await t.raw('GET', '/_railyard/requests/report');
    expect(report.body.reusedIdempotencyKeys).toEqual([
      expect.objectContaining({ idempotencyKey: 'file-reused-1', requests: 3, distinctRequests: 2 }),
    ]);

    // The hash is SHA-256 of the method, the path and the body as sent.
    await t.deps.journal!.flush();
    const Database = loadSqlite().driver;
    const db = new Database(join(dataDir, JOURNAL_FILE_NAME), { readonly: true });
    try {
      const row = db
        .prepare('SELECT request_hash FROM request_journal WHERE request_id = ?')
        .get(transfers[3].requestId) as { request_hash: string };
      const body = JSON.stringify({
        source: { accountId: source.id },
        destination: { accountId: bank.id },
        amount: -5,
      });
      expect(row.request_hash).toBe(
        createHash('sha256').update(`POST ${BASE_PATH}/transfer-out\n${body}`).digest('hex'),
      );
    } finally {
      db.close();
    }
  });

  it('keeps each platform’s window in the file', async () => {
    const { t, dataDir } = await onDisk(3);
    for (let i = 0; i < 6; i++) await t.api('GET', `/customers?limit=${i + 1}`);
    const page = await journal(t);
    expect(page.totalCount).toBe(3);
    expect(page.data.map((r) => r.path)).toEqual([6, 5, 4].map((n) => `${BASE_PATH}/customers?limit=${n}`));
    await t.deps.journal!.flush();
    // The window is pruned in the file too (a prune runs every few batches: at most one window more).
    expect(fileRows(dataDir, t.platformId).length).toBeLessThanOrEqual(6);
  });

  it('is emptied by a reset, counted in what the reset removed', async () => {
    const { t, dataDir } = await onDisk();
    await t.api('GET', '/config');
    await t.api('GET', '/customers');
    const other = await t.newPlatform();
    await other.api('GET', '/config');
    const reset = await t.raw('POST', '/_railyard/reset');
    expect(reset.status, reset.text).toBe(200);
    expect(reset.body.removed.request_journal).toBe(2);
    expect((await journal(t)).totalCount).toBe(0);
    expect(fileRows(dataDir, t.platformId)).toEqual([]);
    // The other platform's entries stay.
    await t.deps.journal!.flush();
    expect(fileRows(dataDir, other.platformId).map((row) => row.operation_id)).toEqual(['getPlatformConfig']);
  });

  it('outlives a restart', async () => {
    let { t } = await onDisk();
    const customer = await t.api('GET', '/customers?limit=7');
    expect(customer.status).toBe(200);
    t = await t.restart();
    const page = await journal(t);
    expect(page.data.map((r) => r.path)).toContain(`${BASE_PATH}/customers?limit=7`);
  });

  it('takes in the rows an earlier version kept in the store’s table', async () => {
    let { t, dataDir } = await onDisk();
    await t.api('GET', '/config');
    t = await t.restart();
    // An earlier version wrote its entries to the store's own table.
    const old = {
      id: 'Request:0000000000000000000000000001',
      platform_id: t.platformId,
      created_at: '2026-01-02T03:04:05.000Z',
      sandbox_at: '2026-01-02T03:04:05.000Z',
      method: 'GET',
      path: `${BASE_PATH}/customers`,
      operation_id: 'listCustomers',
      status: 200,
      error_code: null,
      duration_ms: 3.5,
      request_id: 'req-old-1',
      idempotency_key: null,
      token_id: null,
      agent_id: null,
      request_body: null,
      response_body: '{"data":[]}',
      request_hash: null,
      fault: null,
      answered: 1,
    };
    await t.deps.db.k.insertInto('request_journal').values(old).execute();
    t = await t.restart();
    const page = await journal(t);
    expect(page.data.map((r) => r.operationId)).toEqual(['getPlatformConfig', 'listCustomers']);
    expect(page.data[1]).toMatchObject({
      id: old.id,
      requestId: 'req-old-1',
      durationMs: 3.5,
      responseBody: { data: [] },
    });
    expect(await storedRows(t)).toBe(0);
    expect(fileRows(dataDir, t.platformId).map((row) => row.id)).toContain(old.id);
  });

  it('has the columns of the store’s table (migration 0020)', async () => {
    const { t, dataDir } = await onDisk();
    await journal(t);
    const columns = (db: { prepare(sql: string): { all(): unknown[] } }) =>
      (db.prepare('PRAGMA table_info(request_journal)').all() as Record<string, unknown>[]).map((c) => [
        c.name,
        c.type,
        c.notnull,
        c.pk,
      ]);
    const Database = loadSqlite().driver;
    const store = new Database(join(dataDir, 'railyard.sqlite'), { readonly: true });
    const file = new Database(join(dataDir, JOURNAL_FILE_NAME), { readonly: true });
    try {
      expect(columns(file)).toEqual(columns(store));
      expect(columns(file).length).toBeGreaterThan(15);
    } finally {
      store.close();
      file.close();
    }
  });

  it('stays in the store’s table when its file cannot be opened, and the log says why', async () => {
    const lines: string[] = [];
    // A directory where the file would be: SQLite cannot open it.
    const { t } = await onDisk(undefined, {
      before: (dataDir) => mkdirSync(join(dataDir, JOURNAL_FILE_NAME)),
      logLines: lines,
    });
    await t.api('GET', '/customers?limit=3');
    const page = await journal(t);
    expect(page.data.map((r) => r.path)).toEqual([`${BASE_PATH}/customers?limit=3`]);
    expect(await storedRows(t)).toBe(1);
    const errors = lines.map((line) => JSON.parse(line)).filter((line) => line.level === 50);
    expect(errors.map((line) => line.msg)).toEqual([
      "request journal: its file could not be opened; it is kept in the store's table",
    ]);
    // A reset still empties it (the store's table goes with the platform's rows).
    expect((await t.raw('POST', '/_railyard/reset')).body.removed.request_journal).toBe(1);
    expect((await journal(t)).totalCount).toBe(0);
  });
});
