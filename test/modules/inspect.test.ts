// Railyard's inspection endpoints (what the dashboard reads beyond the Grid API): the event
// log, a transaction's timeline and money movements, the postings behind an internal
// account's balances, and the exact request of a webhook delivery. And the dashboard's page
// itself, which needs no credentials.

import { describe, expect, it } from 'vitest';
import { accountBody } from '../fixtures/accounts.js';
import { individualBody } from '../fixtures/customers.js';
import { build, type Tenant } from '../helper.js';
import { publicKeyOf, receiverFor, verifyAsIntegrator } from '../events/support.js';

async function platformUsd(t: Tenant): Promise<string> {
  const reply = await t.api('GET', '/platform/internal-accounts?currency=USD');
  return reply.body.data[0].id;
}

async function fund(t: Tenant, accountId: string, amount: number) {
  const reply = await t.api('POST', `/sandbox/internal-accounts/${accountId}/fund`, { body: { amount } });
  expect(reply.status).toBe(200);
}

async function payout(t: Tenant, sourceId: string, suffix: string, amount: number) {
  const bank = await t.api('POST', '/platform/external-accounts', { body: accountBody('USD_ACCOUNT', suffix) });
  expect(bank.status).toBe(201);
  const sent = await t.api('POST', '/transfer-out', {
    body: { source: { accountId: sourceId }, destination: { accountId: bank.body.id }, amount },
  });
  expect(sent.status).toBe(201);
  return sent.body;
}

/** Every posting's entries sum to zero per currency. */
function expectBalanced(movements: { entries: { currency: string; amount: number }[] }[]) {
  for (const posting of movements) {
    const sums = new Map<string, number>();
    for (const e of posting.entries) sums.set(e.currency, (sums.get(e.currency) ?? 0) + e.amount);
    expect([...sums.values()].every((sum) => sum === 0)).toBe(true);
  }
}

describe('GET /_railyard/transactions/{transactionId}/timeline', () => {
  it('shows a slow payout held, then failed and released when the clock passes its 30 s', async () => {
    const t = await build();
    const usd = await platformUsd(t);
    await fund(t, usd, 100_000);
    const transfer = await payout(t, usd, '005', 2_500);
    expect(transfer.status).toBe('PROCESSING');

    const before = await t.raw('GET', `/_railyard/transactions/${transfer.id}/timeline`);
    expect(before.status).toBe(200);
    expect(before.body.transactionId).toBe(transfer.id);
    expect(before.body.events.map((e: any) => e.type)).toEqual(['OUTGOING_PAYMENT.PROCESSING']);
    expect(before.body.events[0]).toMatchObject({ resourceId: transfer.id, data: { id: transfer.id } });
    expect(before.body.movements.map((p: any) => p.kind)).toEqual(['HOLD']);
    expect(before.body.movements[0].entries).toEqual([
      { accountId: usd, accountKind: 'INTERNAL', bucket: 'AVAILABLE', currency: 'USD', amount: -2_500 },
      { accountId: usd, accountKind: 'INTERNAL', bucket: 'HELD', currency: 'USD', amount: 2_500 },
    ]);

    const advanced = await t.advanceClock(35);
    const after = await t.raw('GET', `/_railyard/transactions/${transfer.id}/timeline`);
    expect(after.body.events.map((e: any) => [e.type, e.data.status])).toEqual([
      ['OUTGOING_PAYMENT.PROCESSING', 'PROCESSING'],
      ['OUTGOING_PAYMENT.FAILED', 'FAILED'],
    ]);
    // Recorded at the time the job ran, after the advance, on the sandbox clock.
    const failedAt = Date.parse(after.body.events[1].timestamp);
    expect(failedAt).toBeGreaterThanOrEqual(Date.parse(transfer.createdAt) + 35_000);
    expect(failedAt).toBeLessThanOrEqual(Date.parse(advanced.now));
    expect(after.body.movements.map((p: any) => p.kind)).toEqual(['HOLD', 'RELEASE']);
    expect(after.body.movements.every((p: any) => p.transactionId === transfer.id && p.currency === 'USD')).toBe(true);
    expectBalanced(after.body.movements);
  });

  it('lists the posting of a completed payout to the outside world', async () => {
    const t = await build();
    const usd = await platformUsd(t);
    await fund(t, usd, 10_000);
    const transfer = await payout(t, usd, '000', 1_000);
    const timeline = (await t.raw('GET', `/_railyard/transactions/${transfer.id}/timeline`)).body;
    expect(timeline.movements.map((p: any) => p.kind)).toEqual(['HOLD', 'SETTLE']);
    expect(timeline.movements[1].entries).toContainEqual(
      expect.objectContaining({ accountKind: 'EXTERNAL_RAILS', bucket: 'AVAILABLE', amount: 1_000 }),
    );
    expectBalanced(timeline.movements);
  });

  it("answers 404 TRANSACTION_NOT_FOUND for an unknown id and for another platform's transaction", async () => {
    const t = await build();
    const usd = await platformUsd(t);
    await fund(t, usd, 10_000);
    const transfer = await payout(t, usd, '000', 1_000);
    const other = await t.newPlatform();
    for (const [tenant, transactionId] of [
      [t, 'Transaction:00000000-0000-0000-0000-000000000000'],
      [other, transfer.id],
    ] as const) {
      const reply = await tenant.raw('GET', `/_railyard/transactions/${transactionId}/timeline`);
      expect(reply.status).toBe(404);
      expect(reply.body).toMatchObject({ status: 404, code: 'TRANSACTION_NOT_FOUND' });
    }
    expect((await t.raw('GET', `/_railyard/transactions/${transfer.id}/timeline`, { auth: null })).status).toBe(401);
  });
});

describe('GET /_railyard/internal-accounts/{accountId}/entries', () => {
  it("lists the postings behind an account's balances, newest first, whose changes add up to them", async () => {
    const t = await build();
    const usd = await platformUsd(t);
    await fund(t, usd, 100_000);
    await payout(t, usd, '000', 2_500);
    await payout(t, usd, '005', 4_000);

    const reply = await t.raw('GET', `/_railyard/internal-accounts/${usd}/entries`);
    expect(reply.status).toBe(200);
    const page = reply.body;
    expect(page).toMatchObject({ accountId: usd, currency: 'USD', available: 93_500, held: 4_000, totalCount: 4 });
    expect(page.data.map((p: any) => [p.kind, p.availableChange, p.heldChange])).toEqual([
      ['HOLD', -4_000, 4_000],
      ['SETTLE', 0, -2_500],
      ['HOLD', -2_500, 2_500],
      ['FUND', 100_000, 0],
    ]);
    expect(page.data.reduce((sum: number, p: any) => sum + p.availableChange, 0)).toBe(page.available);
    expect(page.data.reduce((sum: number, p: any) => sum + p.heldChange, 0)).toBe(page.held);
    expect(page.data[3].transactionId).toBeUndefined();
    expect(page.data[0].transactionId).toMatch(/^Transaction:/);

    // The same balances the Grid API reports.
    const account = (await t.api('GET', '/platform/internal-accounts?currency=USD')).body.data[0];
    expect([account.balance.amount, account.totalBalance.amount]).toEqual([93_500, 97_500]);

    // Pages of one posting each walk the same list.
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const query = `limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const one = (await t.raw('GET', `/_railyard/internal-accounts/${usd}/entries?${query}`)).body;
      expect(one.data).toHaveLength(1);
      seen.push(one.data[0].postingId);
      cursor = one.nextCursor;
      expect(one.hasMore).toBe(cursor !== undefined);
    } while (cursor !== undefined);
    expect(seen).toEqual(page.data.map((p: any) => p.postingId));
  });

  it("answers 404 for an unknown account, a ledger system account and another platform's account; 400 for a bad page", async () => {
    const t = await build();
    const usd = await platformUsd(t);
    const other = await t.newPlatform();
    const system = `LedgerAccount:EXTERNAL_RAILS:USD:${t.platformId}`;
    for (const [tenant, accountId] of [
      [t, 'InternalAccount:00000000-0000-0000-0000-000000000000'],
      [t, system],
      [other, usd],
    ] as const) {
      const reply = await tenant.raw('GET', `/_railyard/internal-accounts/${encodeURIComponent(accountId)}/entries`);
      expect(reply.status).toBe(404);
      expect(reply.body).toMatchObject({ status: 404, code: 'REFERENCE_NOT_FOUND' });
    }
    const bad = await t.raw('GET', `/_railyard/internal-accounts/${usd}/entries?limit=0&cursor=nonsense`);
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('INVALID_INPUT');
    expect(bad.body.details.errors.map((e: any) => e.field)).toContain('limit');
  });
});

describe('GET /_railyard/events', () => {
  it("lists the platform's events newest first, filtered by type, resource and time", async () => {
    const t = await build();
    const customer = await t.api('POST', '/customers', { body: individualBody('Grace Hopper') });
    expect(customer.status).toBe(201);
    const usd = await platformUsd(t);
    await fund(t, usd, 10_000);
    const transfer = await payout(t, usd, '000', 1_000);

    const all = (await t.raw('GET', '/_railyard/events?limit=100')).body;
    expect(all.totalCount).toBe(all.data.length);
    const times = all.data.map((e: any) => e.timestamp);
    expect([...times].sort().reverse()).toEqual(times);
    expect(all.data.map((e: any) => e.type)).toEqual(
      expect.arrayContaining([
        'CUSTOMER.KYC_APPROVED',
        'OUTGOING_PAYMENT.COMPLETED',
        'INTERNAL_ACCOUNT.BALANCE_UPDATED',
      ]),
    );

    const ofTransfer = (await t.raw('GET', `/_railyard/events?resourceId=${transfer.id}`)).body;
    expect(ofTransfer.data.map((e: any) => e.type).sort()).toEqual([
      'OUTGOING_PAYMENT.COMPLETED',
      'OUTGOING_PAYMENT.PROCESSING',
    ]);
    const typed = (await t.raw('GET', '/_railyard/events?type=CUSTOMER.KYC_APPROVED')).body;
    expect(typed.data.map((e: any) => e.resourceId)).toEqual([customer.body.id]);

    // After an advance, createdAfter the old time finds what the advance made due.
    const slow = await payout(t, usd, '005', 1_000);
    const before = (await t.raw('GET', '/_railyard/clock')).body.now;
    await t.advanceClock(31);
    const due = (await t.raw('GET', `/_railyard/events?createdAfter=${encodeURIComponent(before)}`)).body;
    expect(due.data.filter((e: any) => e.resourceId === slow.id).map((e: any) => e.type)).toEqual([
      'OUTGOING_PAYMENT.FAILED',
    ]);
    expect(due.data.some((e: any) => e.resourceId === transfer.id)).toBe(false);

    const other = await t.newPlatform();
    expect((await other.raw('GET', `/_railyard/events?resourceId=${transfer.id}`)).body).toMatchObject({
      data: [],
      totalCount: 0,
    });
    const bad = await t.raw('GET', '/_railyard/events?createdAfter=yesterday&limit=1000');
    expect(bad.status).toBe(400);
    expect(bad.body.details.errors.map((e: any) => e.field).sort()).toEqual(['createdAfter', 'limit']);
  });
});

describe('GET /_railyard/webhooks/deliveries/{deliveryId}/request', () => {
  it('shows the exact body a try sends and a signature header that verifies over it', async () => {
    const t = await build();
    const receiver = await receiverFor(t);
    try {
      await t.runDueJobs();
      await receiver.waitFor(1);
      const hit = receiver.hits[0]!;
      const reply = await t.raw('GET', `/_railyard/webhooks/deliveries/${hit.id}/request`);
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({
        method: 'POST',
        url: receiver.url,
        headers: { 'content-type': 'application/json', 'user-agent': hit.headers['user-agent'] },
      });
      expect(reply.body.body).toBe(hit.raw.toString('utf8'));
      const signature = reply.body.headers['X-Grid-Signature'];
      expect(signature).toMatch(/^\{"v":"1","s":"[A-Za-z0-9+/=]+"\}$/);
      expect(verifyAsIntegrator(await publicKeyOf(t), Buffer.from(reply.body.body), signature)).toBe(true);

      const other = await t.newPlatform();
      for (const [tenant, id] of [
        [t, 'Webhook:00000000-0000-0000-0000-000000000000'],
        [other, hit.id],
      ] as const) {
        const refused = await tenant.raw('GET', `/_railyard/webhooks/deliveries/${id}/request`);
        expect(refused.status).toBe(404);
        expect(refused.body.code).toBe('REFERENCE_NOT_FOUND');
      }
    } finally {
      await receiver.close();
    }
  });
});

describe('the inspection endpoints in the OpenAPI document', () => {
  it('are operations of /_railyard/openapi.json that any token may call', async () => {
    const t = await build();
    const doc = (await t.raw('GET', '/_railyard/openapi.json', { auth: null })).body;
    const operations = Object.values<any>(doc.paths).flatMap((item) => Object.values<any>(item));
    const ids = operations.map((o) => o.operationId);
    expect(ids).toEqual(
      expect.arrayContaining([
        'railyardListEvents',
        'railyardGetTransactionTimeline',
        'railyardListInternalAccountEntries',
        'railyardGetWebhookDeliveryRequest',
      ]),
    );
    // The dashboard's page and files are not operations.
    expect(Object.keys(doc.paths).some((path) => path.includes('dashboard'))).toBe(false);
  });
});

describe('GET /_railyard/dashboard', () => {
  it('serves the page and its bundle without credentials, locked to this origin', async () => {
    const t = await build();
    const page = await t.raw('GET', '/_railyard/dashboard', { auth: null });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toContain("connect-src 'self'");
    expect(page.text).toContain('<script type="module" src="/_railyard/dashboard/app.js"></script>');
    const script = await t.raw('GET', '/_railyard/dashboard/app.js', { auth: null });
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    expect(script.text.length).toBeGreaterThan(1000);
    const style = await t.raw('GET', '/_railyard/dashboard/app.css', { auth: null });
    expect(style.status).toBe(200);
    expect(style.headers['content-type']).toMatch(/^text\/css/);
    expect((await t.raw('GET', '/_railyard/dashboard/other.js', { auth: null })).status).toBe(404);
  });
});
