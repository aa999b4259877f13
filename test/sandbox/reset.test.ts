// Resetting a platform (POST /_railyard/reset): every row it owns goes but its credentials and
// configuration, checked table by table in the store; another platform's rows stay exactly as
// they were; both sets of books balance; and a job running under a lease holds the reset back.

import { describe, expect, it } from 'vitest';
import { sql } from '../../src/db/index.js';
import { ApiError } from '../../src/http/errors.js';
import { KEPT_TABLES, resetPlatform } from '../../src/sandbox/reset.js';
import { seedPlatform } from '../../src/sandbox/seed.js';
import { receiverFor } from '../events/support.js';
import { multipart } from '../fixtures/customers.js';
import { build, type Tenant, type TestApp } from '../helper.js';
import { rowsOf } from './support.js';

async function importErrorsOf(t: TestApp, platformId: string): Promise<number> {
  const result = await sql<{ n: unknown }>`
    SELECT COUNT(*) AS n FROM customer_import_errors e JOIN customer_import_jobs j ON j.id = e.job_id
    WHERE j.platform_id = ${platformId}`.execute(t.deps.db.k);
  return Number(result.rows[0]!.n);
}

/** Data beyond the seed: a CSV import with a refused row, and the 005 payout run to its end. */
async function moreData(t: TestApp, tenant: Tenant): Promise<void> {
  const csv = [
    'umaAddress,platformCustomerId,customerType,fullName,birthDate,addressLine1,addressLine2,city,state,postalCode,country',
    '$imported@pay.example.com,imp-1,INDIVIDUAL,Iris Imported,1990-02-03,1 Main St,,Austin,TX,78701,US',
    ',,ROBOT,,,,,,,,',
  ].join('\n');
  const upload = multipart({}, [{ fileName: 'customers.csv', data: Buffer.from(csv), contentType: 'text/csv' }]);
  expect((await tenant.api('POST', '/customers/bulk/csv', upload)).status).toBe(202);
  await t.runDueJobs();
  const advanced = await tenant.raw('POST', '/_railyard/clock/advance', { body: { seconds: 35 } });
  expect(advanced.status).toBe(200);
}

describe('POST /_railyard/reset', () => {
  it("deletes every row of the platform but its credentials and configuration, and none of another platform's", async () => {
    const t = await build();
    const other = await t.newPlatform();
    expect((await t.api('PATCH', '/config', { body: { umaDomain: 'kept.example.com' } })).status).toBe(200);
    expect((await t.api('POST', '/tokens', { body: { name: 'kept reader', permissions: ['VIEW'] } })).status).toBe(201);
    await seedPlatform(t.app, t.platformId, { seed: 11, size: 1 });
    await seedPlatform(t.app, other.platformId, { seed: 12, size: 1 });
    await moreData(t, t);
    await moreData(t, other);

    const before = await rowsOf(t, t.platformId);
    // The set reaches most of the store; these are the tables the reset is judged on.
    const filled = Object.entries(before)
      .filter(([, rows]) => rows.length > 0)
      .map(([name]) => name);
    expect(filled).toEqual(
      expect.arrayContaining([
        'customers',
        'beneficial_owners',
        'documents',
        'verifications',
        'customer_import_jobs',
        'internal_accounts',
        'ledger_accounts',
        'ledger_postings',
        'ledger_entries',
        'transactions',
        'external_accounts',
        'events',
        'webhook_deliveries',
        'webhook_attempts',
        'jobs',
        'idempotency_keys',
      ]),
    );
    expect(await importErrorsOf(t, t.platformId)).toBeGreaterThan(0);
    const otherBefore = await rowsOf(t, other.platformId);
    const otherImportErrors = await importErrorsOf(t, other.platformId);

    const reply = await t.raw('POST', '/_railyard/reset');
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.platformId).toBe(t.platformId);
    expect(reply.body.removed.customers).toBe(before.customers!.length);
    const newAccounts: string[] = reply.body.internalAccountIds;
    expect(newAccounts).toHaveLength(3); // USD, USDC, USDB: the platform's currencies

    const after = await rowsOf(t, t.platformId);
    for (const [table, rows] of Object.entries(after)) {
      if (KEPT_TABLES.has(table)) expect(rows, table).toEqual(before[table]);
      else if (table === 'internal_accounts')
        expect(rows.map((r) => JSON.parse(r).id).sort(), table).toEqual([...newAccounts].sort());
      else if (table === 'ledger_accounts') {
        const kept = before[table]!.filter((r) => JSON.parse(r).kind !== 'INTERNAL');
        const internal = rows.filter((r) => JSON.parse(r).kind === 'INTERNAL').map((r) => JSON.parse(r));
        expect(
          rows.filter((r) => JSON.parse(r).kind !== 'INTERNAL'),
          table,
        ).toEqual(kept);
        expect(internal.map((r) => r.id).sort(), table).toEqual([...newAccounts].sort());
        expect(internal.every((r) => Number(r.available) === 0 && Number(r.held) === 0)).toBe(true);
      } else expect(rows, table).toEqual([]);
    }
    expect(await importErrorsOf(t, t.platformId)).toBe(0);
    expect(await rowsOf(t, other.platformId)).toEqual(otherBefore);
    expect(await importErrorsOf(t, other.platformId)).toBe(otherImportErrors);

    // Both sets of books balance; the reset platform's hold nothing.
    for (const tenant of [t, other] as Tenant[]) {
      const audit = await tenant.raw('GET', '/_railyard/ledger');
      expect(audit.body.balanced).toBe(true);
    }
    const audit = await t.raw('GET', '/_railyard/ledger');
    expect(audit.body.currencies).toEqual([]);
    expect(audit.body.accounts.every((a: any) => a.available === '0' && a.held === '0')).toBe(true);

    // Same credentials and configuration; the platform works as a new one and can be seeded again.
    expect((await t.api('GET', '/config')).body.umaDomain).toBe('kept.example.com');
    expect((await t.api('GET', '/tokens')).body.data).toHaveLength(2);
    expect((await t.api('GET', '/customers')).body.data).toEqual([]);
    const accounts = await t.api('GET', '/platform/internal-accounts');
    expect(accounts.body.data.map((a: any) => a.id).sort()).toEqual([...newAccounts].sort());
    await seedPlatform(t.app, t.platformId, { seed: 11, size: 1 });
    expect((await t.raw('GET', '/_railyard/ledger')).body.balanced).toBe(true);
  }, 120_000);

  it('needs MANAGE, and answers in the error envelope', async () => {
    const t = await build();
    const token = await t.api('POST', '/tokens', { body: { name: 'reader', permissions: ['VIEW', 'TRANSACT'] } });
    const reader = {
      clientId: token.body.clientId,
      clientSecret: token.body.clientSecret,
      platformId: t.platformId,
      tokenId: token.body.id,
    };
    const refused = await t.raw('POST', '/_railyard/reset', { auth: reader });
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({
      status: 401,
      code: 'UNAUTHORIZED',
      details: { requiredPermission: 'MANAGE' },
    });
    expect((await t.raw('POST', '/_railyard/reset', { auth: null })).status).toBe(401);
    const doc = await t.raw('GET', '/_railyard/openapi.json', { auth: null });
    expect(doc.body.paths['/reset'].post.operationId).toBe('railyardResetPlatform');
  });

  it('waits for a job of the platform running under a lease, and refuses with 409 when it outlasts the wait', async () => {
    const t = await build();
    let hold = true;
    const receiver = await receiverFor(t, (hit) => (hit.type === 'TEST' || !hold ? { status: 200 } : 'hang'));
    await t.runDueJobs(); // the TEST webhook
    const customer = await t.api('POST', '/customers', {
      body: { customerType: 'INDIVIDUAL', platformCustomerId: 'held-1', fullName: 'Held Webhook' },
    });
    expect(customer.status).toBe(201);
    // The runner sends CUSTOMER.KYC_APPROVED and waits for an answer that does not come.
    const running = t.deps.jobs!.runDue(t.platformId);
    await receiver.waitFor(2);

    const refused = await resetPlatform(t.deps, t.platformId, { jobsWaitMs: 200 }).catch((err) => err);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused.code).toBe('CONFLICT');
    expect(refused.details).toMatchObject({ reason: 'JOBS_RUNNING', jobs: [{ kind: 'webhook.deliver' }] });
    // Nothing changed.
    expect((await t.api('GET', `/customers/${customer.body.id}`)).status).toBe(200);

    // Over HTTP the reset waits; the answer arrives meanwhile, and then it runs.
    hold = false;
    const reset = t.raw('POST', '/_railyard/reset');
    await new Promise((r) => setTimeout(r, 100));
    receiver.release(200);
    await running;
    const reply = await reset;
    expect(reply.status, reply.text).toBe(200);
    const left = await rowsOf(t, t.platformId);
    expect(left.webhook_attempts).toEqual([]);
    expect(left.webhook_deliveries).toEqual([]);
    expect(left.customers).toEqual([]);
    await receiver.close();
  });
});
