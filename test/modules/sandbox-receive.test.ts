// POST /sandbox/uma/receive: an incoming UMA payment to a customer, held as a pending credit
// while the platform decides (INCOMING_PAYMENT.PENDING), then credited or released through
// the ledger; every sandbox sender; bad input; approve racing reject and the timeout.

import { afterEach, describe, expect, it } from 'vitest';
import { SANDBOX_UMA_ADDRESSES, SANDBOX_UMA_DOMAINS } from '../../src/rails/magic.js';
import { build, ManualClock, type TestApp } from '../helper.js';
import { expectAllConform, receiverFor, type Answer, type Receiver } from '../events/support.js';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { accountBody } from '../fixtures/accounts.js';
import { eventsOf, expectBalancedBooks } from '../fixtures/money.js';

const START_MS = Date.parse('2025-06-02T09:00:00.000Z');
const USD = { code: 'USD', name: 'US Dollar', symbol: '$', decimals: 2 };
const SENDER = '$success.usd@sandbox.grid.uma.money';
const open: Receiver[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

async function customerOf(t: TestApp) {
  const customer = await createCustomer(
    t,
    individualBody('Robin Okafor', { umaAddress: '$robin@railyard.sandbox.uma.money' }),
  );
  const accounts = await t.api(
    'GET',
    `/customers/internal-accounts?customerId=${encodeURIComponent(customer.id)}&currency=USD`,
  );
  return { customer, account: accounts.body.data[0] };
}

async function balances(t: TestApp, customerId: string) {
  const reply = await t.api(
    'GET',
    `/customers/internal-accounts?customerId=${encodeURIComponent(customerId)}&currency=USD`,
  );
  return { balance: reply.body.data[0].balance.amount, totalBalance: reply.body.data[0].totalBalance.amount };
}

function receive(t: TestApp, body: Record<string, unknown>) {
  return t.api('POST', '/sandbox/uma/receive', { body });
}

async function withReceiver(answer: Answer) {
  const clock = new ManualClock(START_MS);
  const t = await build({ clock });
  const receiver = await receiverFor(t, (hit) => (hit.type === 'INCOMING_PAYMENT.PENDING' ? answer : { status: 200 }));
  open.push(receiver);
  await t.runDueJobs();
  return { t, clock, receiver, ...(await customerOf(t)) };
}

async function postingsOf(t: TestApp, transactionId: string) {
  const rows = await t.deps.db.k
    .selectFrom('ledger_postings')
    .select('kind')
    .where('transaction_id', '=', transactionId)
    .orderBy('id')
    .execute();
  return rows.map((r) => r.kind);
}

describe('POST /sandbox/uma/receive', () => {
  it('credits the customer at once when the platform has no webhook endpoint', async () => {
    const t = await build();
    const { customer, account } = await customerOf(t);
    const reply = await receive(t, {
      senderUmaAddress: SENDER,
      customerId: customer.id,
      receivingCurrencyCode: 'USD',
      receivingCurrencyAmount: 25_000,
    });
    expect(reply.status).toBe(200);
    const tx = reply.body;
    expect(tx).toEqual({
      id: expect.stringMatching(/^Transaction:[0-9a-f-]{36}$/),
      type: 'INCOMING',
      status: 'COMPLETED',
      direction: 'CREDIT',
      source: { sourceType: 'UMA_ADDRESS', umaAddress: SENDER, currency: 'USD' },
      destination: { destinationType: 'ACCOUNT', accountId: account.id, currency: 'USD' },
      customerId: customer.id,
      platformCustomerId: customer.platformCustomerId,
      counterpartyInformation: {
        FULL_NAME: 'Sandbox Sender success.usd',
        NATIONALITY: 'US',
        COUNTRY_OF_RESIDENCE: 'US',
      },
      settledAt: tx.createdAt,
      createdAt: tx.createdAt,
      updatedAt: tx.createdAt,
      sentAmount: { amount: 25_000, currency: USD },
      receivedAmount: { amount: 25_000, currency: USD },
      exchangeRate: 1,
      fees: 0,
      reconciliationInstructions: { reference: expect.stringMatching(/^RY[0-9A-F]{12}$/) },
    });
    expect((await t.api('GET', `/transactions/${tx.id}`)).body).toEqual(tx);
    expect(await balances(t, customer.id)).toEqual({ balance: 25_000, totalBalance: 25_000 });
    expect((await eventsOf(t, tx.id)).map((e) => [e.type, e.data.status])).toEqual([
      ['INCOMING_PAYMENT.PENDING', 'PENDING'],
      ['INCOMING_PAYMENT.COMPLETED', 'COMPLETED'],
    ]);
    expect((await eventsOf(t, account.id)).map((e) => [e.data.balance.amount, e.data.totalBalance.amount])).toEqual([
      [0, 25_000],
      [25_000, 25_000],
    ]);
    expect(await postingsOf(t, tx.id)).toEqual(['INCOMING_ACCEPT', 'INCOMING_COMPLETE']);
    const listed = await t.api('GET', `/transactions?customerId=${encodeURIComponent(customer.id)}&type=INCOMING`);
    expect(listed.body.data).toEqual([tx]);
    await expectBalancedBooks(t);
  });

  it('finds the customer by its UMA address and holds the credit until the webhook answer 200 approves it', async () => {
    const { t, receiver, customer, account } = await withReceiver({ status: 200 });
    const reply = await receive(t, {
      senderUmaAddress: SENDER,
      receiverUmaAddress: customer.umaAddress,
      receivingCurrencyCode: 'USD',
      receivingCurrencyAmount: 4_200,
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      status: 'PENDING',
      customerId: customer.id,
      destination: { accountId: account.id },
    });
    expect(reply.body.settledAt).toBeUndefined();
    expect(await balances(t, customer.id)).toEqual({ balance: 0, totalBalance: 4_200 });
    await t.runDueJobs();
    const pending = receiver.hits.find((h) => h.type === 'INCOMING_PAYMENT.PENDING')!;
    expect(pending.json.data).toEqual(reply.body);
    const after = await t.api('GET', `/transactions/${reply.body.id}`);
    expect(after.body).toEqual({
      ...reply.body,
      status: 'COMPLETED',
      settledAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(await balances(t, customer.id)).toEqual({ balance: 4_200, totalBalance: 4_200 });
    await t.runDueJobs();
    const completed = receiver.hits.find((h) => h.type === 'INCOMING_PAYMENT.COMPLETED')!;
    expect(completed.json.data).toEqual(after.body);
    expectAllConform(receiver);
    await expectBalancedBooks(t);
  });

  it('releases the pending credit when the webhook answer 403 rejects it', async () => {
    const { t, customer, receiver } = await withReceiver({ status: 403, body: { reason: 'not expected' } });
    const reply = await receive(t, {
      senderUmaAddress: SENDER,
      customerId: customer.id,
      receivingCurrencyCode: 'USD',
      receivingCurrencyAmount: 900,
    });
    await t.runDueJobs();
    const after = await t.api('GET', `/transactions/${reply.body.id}`);
    expect(after.body).toMatchObject({ status: 'REJECTED' });
    expect(after.body.failureReason).toBeUndefined();
    expect(await balances(t, customer.id)).toEqual({ balance: 0, totalBalance: 0 });
    expect((await eventsOf(t, reply.body.id)).map((e) => [e.type, e.data.status])).toEqual([
      ['INCOMING_PAYMENT.PENDING', 'PENDING'],
      ['INCOMING_PAYMENT.FAILED', 'REJECTED'],
    ]);
    expect(await postingsOf(t, reply.body.id)).toEqual(['INCOMING_ACCEPT', 'INCOMING_FAIL']);
    await t.runDueJobs();
    expect(receiver.hits.find((h) => h.type === 'INCOMING_PAYMENT.FAILED')!.json.data).toEqual(after.body);
    expectAllConform(receiver);
    await expectBalancedBooks(t);
  });

  it.each([
    ['approve', 'COMPLETED', { balance: 700, totalBalance: 700 }],
    ['reject', 'REJECTED', { balance: 0, totalBalance: 0 }],
  ])('after a 202, POST /transactions/{id}/%s decides within 5 s', async (action, status, after) => {
    const { t, customer, receiver } = await withReceiver({ status: 202 });
    const reply = await receive(t, {
      senderUmaAddress: SENDER,
      customerId: customer.id,
      receivingCurrencyCode: 'USD',
      receivingCurrencyAmount: 700,
    });
    await t.runDueJobs();
    await t.advanceClock(4);
    const decided = await t.api('POST', `/transactions/${reply.body.id}/${action}`);
    expect(decided.status).toBe(200);
    expect(decided.body.status).toBe(status);
    expect((await t.api('GET', `/transactions/${reply.body.id}`)).body).toEqual(decided.body);
    expect(await balances(t, customer.id)).toEqual(after);
    await t.advanceClock(10);
    expect((await t.api('GET', `/transactions/${reply.body.id}`)).body.status).toBe(status);
    expect(receiver.hits.map((h) => h.type).filter((type) => type.startsWith('INCOMING_PAYMENT.'))).toEqual([
      'INCOMING_PAYMENT.PENDING',
      status === 'COMPLETED' ? 'INCOMING_PAYMENT.COMPLETED' : 'INCOMING_PAYMENT.FAILED',
    ]);
    expectAllConform(receiver);
    await expectBalancedBooks(t);
  });

  it('after a 202, fails the payment and releases the credit when 5 s pass without a decision', async () => {
    const { t, customer } = await withReceiver({ status: 202 });
    const reply = await receive(t, {
      senderUmaAddress: SENDER,
      customerId: customer.id,
      receivingCurrencyCode: 'USD',
      receivingCurrencyAmount: 700,
    });
    await t.runDueJobs();
    await t.advanceClock(4.999);
    expect((await t.api('GET', `/transactions/${reply.body.id}`)).body.status).toBe('PENDING');
    await t.advanceClock(0.001);
    expect((await t.api('GET', `/transactions/${reply.body.id}`)).body).toMatchObject({
      status: 'FAILED',
      failureReason: 'PAYMENT_APPROVAL_TIMED_OUT',
    });
    expect(await balances(t, customer.id)).toEqual({ balance: 0, totalBalance: 0 });
    expect((await t.api('POST', `/transactions/${reply.body.id}/approve`)).status).toBe(409);
    await expectBalancedBooks(t);
  });

  describe('to a customer with a default UMA deposit account', () => {
    async function depositAccount(t: TestApp, customerId: string, accountType: string) {
      const reply = await t.api('POST', '/customers/external-accounts', {
        body: { ...accountBody(accountType), customerId, defaultUmaDepositAccount: true },
      });
      expect(reply.status).toBe(201);
      expect(reply.body.defaultUmaDepositAccount).toBe(true);
      return reply.body;
    }

    it('deposits in that external account: its destination, money passed on, the internal account untouched', async () => {
      const { t, customer, receiver } = await withReceiver({ status: 200 });
      const external = await depositAccount(t, customer.id, 'USD_ACCOUNT');
      const reply = await receive(t, {
        senderUmaAddress: SENDER,
        customerId: customer.id,
        receivingCurrencyCode: 'USD',
        receivingCurrencyAmount: 7_500,
      });
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({
        status: 'PENDING',
        destination: { destinationType: 'ACCOUNT', accountId: external.id, currency: 'USD' },
      });
      expect(await balances(t, customer.id)).toEqual({ balance: 0, totalBalance: 0 });
      await t.runDueJobs();
      const after = await t.api('GET', `/transactions/${reply.body.id}`);
      expect(after.body).toMatchObject({
        status: 'COMPLETED',
        destination: { accountId: external.id },
        receivedAmount: { amount: 7_500 },
      });
      expect(await balances(t, customer.id)).toEqual({ balance: 0, totalBalance: 0 });
      expect(await postingsOf(t, reply.body.id)).toEqual(['FUNDING_RECEIVED', 'PAYOUT']);
      // No balance of the customer's changed, so no INTERNAL_ACCOUNT.BALANCE_UPDATED.
      const types = (await t.deps.db.k.selectFrom('events').select('type').execute()).map((e) => e.type);
      expect(types.filter((type) => type === 'INTERNAL_ACCOUNT.BALANCE_UPDATED')).toEqual([]);
      const filtered = await t.api('GET', `/transactions?accountIdentifier=${encodeURIComponent(external.id)}`);
      expect(filtered.body.data.map((tx: { id: string }) => tx.id)).toEqual([reply.body.id]);
      await t.runDueJobs();
      expect(receiver.hits.find((h) => h.type === 'INCOMING_PAYMENT.COMPLETED')!.json.data).toEqual(after.body);
      expectAllConform(receiver);
      await expectBalancedBooks(t);
    });

    it('sends the money back when the platform rejects it', async () => {
      const { t, customer } = await withReceiver({ status: 403 });
      const external = await depositAccount(t, customer.id, 'USD_ACCOUNT');
      const reply = await receive(t, {
        senderUmaAddress: SENDER,
        customerId: customer.id,
        receivingCurrencyCode: 'USD',
        receivingCurrencyAmount: 900,
      });
      await t.runDueJobs();
      const after = await t.api('GET', `/transactions/${reply.body.id}`);
      expect(after.body).toMatchObject({ status: 'REJECTED', destination: { accountId: external.id } });
      expect(await postingsOf(t, reply.body.id)).toEqual(['FUNDING_RECEIVED', 'REFUND']);
      expect(await balances(t, customer.id)).toEqual({ balance: 0, totalBalance: 0 });
      await expectBalancedBooks(t);
    });

    it('sends the money back (FAILED, OFFRAMP_FAILED, refunded) when the deposit account is deleted before the approval', async () => {
      const { t, customer, receiver } = await withReceiver({ status: 202 });
      const external = await depositAccount(t, customer.id, 'USD_ACCOUNT');
      const reply = await receive(t, {
        senderUmaAddress: SENDER,
        customerId: customer.id,
        receivingCurrencyCode: 'USD',
        receivingCurrencyAmount: 4_200,
      });
      await t.runDueJobs();
      expect((await t.api('DELETE', `/customers/external-accounts/${external.id}`)).status).toBe(204);
      const approved = await t.api('POST', `/transactions/${reply.body.id}/approve`);
      expect(approved.status).toBe(200);
      expect(approved.body).toMatchObject({
        id: reply.body.id,
        status: 'FAILED',
        failureReason: 'OFFRAMP_FAILED',
        destination: { accountId: external.id },
      });
      // Accepted, then failed: the money going back to the sender is a refund, and says so.
      expect(approved.body.refund).toEqual({
        reference: `${approved.body.reconciliationInstructions.reference}-R`,
        initiatedAt: approved.body.updatedAt,
        settledAt: approved.body.updatedAt,
        status: 'COMPLETED',
        reason: 'TRANSACTION_FAILED',
      });
      expect((await t.api('GET', `/transactions/${reply.body.id}`)).body).toEqual(approved.body);
      expect(await postingsOf(t, reply.body.id)).toEqual(['FUNDING_RECEIVED', 'REFUND']);
      expect(await balances(t, customer.id)).toEqual({ balance: 0, totalBalance: 0 });
      await t.runDueJobs();
      expect(receiver.hits.filter((h) => h.json.data?.id === reply.body.id).map((h) => h.type)).toEqual([
        'INCOMING_PAYMENT.PENDING',
        'INCOMING_PAYMENT.FAILED',
        'INCOMING_PAYMENT.REFUND_PENDING',
        'INCOMING_PAYMENT.REFUND_COMPLETED',
      ]);
      expectAllConform(receiver);
      await expectBalancedBooks(t);
    });

    it('credits the internal account when the default account holds another currency', async () => {
      const t = await build();
      const { customer, account } = await customerOf(t);
      await depositAccount(t, customer.id, 'EUR_ACCOUNT');
      const reply = await receive(t, {
        senderUmaAddress: SENDER,
        customerId: customer.id,
        receivingCurrencyCode: 'USD',
        receivingCurrencyAmount: 1_200,
      });
      expect(reply.body).toMatchObject({ status: 'COMPLETED', destination: { accountId: account.id } });
      expect(await balances(t, customer.id)).toEqual({ balance: 1_200, totalBalance: 1_200 });
      expect(await postingsOf(t, reply.body.id)).toEqual(['INCOMING_ACCEPT', 'INCOMING_COMPLETE']);
      await expectBalancedBooks(t);
    });
  });

  it('makes one decision when approve, reject and the timeout race', async () => {
    const { t, clock, customer } = await withReceiver({ status: 202 });
    const inWindow = await receive(t, {
      senderUmaAddress: SENDER,
      customerId: customer.id,
      receivingCurrencyCode: 'USD',
      receivingCurrencyAmount: 1_000,
    });
    const atDeadline = await receive(t, {
      senderUmaAddress: SENDER,
      customerId: customer.id,
      receivingCurrencyCode: 'USD',
      receivingCurrencyAmount: 2_000,
    });
    await t.runDueJobs();

    // Within the window: approvals and rejections at once; exactly one of them wins.
    clock.advance(4_900);
    const calls = await Promise.all([
      t.api('POST', `/transactions/${inWindow.body.id}/approve`),
      t.api('POST', `/transactions/${inWindow.body.id}/reject`),
      t.api('POST', `/transactions/${inWindow.body.id}/approve`),
      t.api('POST', `/transactions/${inWindow.body.id}/reject`),
    ]);
    expect(calls.map((c) => c.status).sort()).toEqual([200, 409, 409, 409]);
    const winner = calls.find((c) => c.status === 200)!.body;
    for (const loser of calls.filter((c) => c.status === 409))
      expect(loser.body.code).toBe('TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL');

    // At the deadline: an approval races the timeout job; the window is over, so it loses.
    clock.advance(100);
    const [late] = await Promise.all([t.api('POST', `/transactions/${atDeadline.body.id}/approve`), t.runDueJobs()]);
    expect(late.status).toBe(409);
    await t.runDueJobs();
    expect((await t.api('GET', `/transactions/${atDeadline.body.id}`)).body).toMatchObject({
      status: 'FAILED',
      failureReason: 'PAYMENT_APPROVAL_TIMED_OUT',
    });

    const finalEvents = async (id: string) =>
      (await eventsOf(t, id)).map((e) => e.type).filter((type) => type !== 'INCOMING_PAYMENT.PENDING');
    expect(await finalEvents(inWindow.body.id)).toEqual([
      winner.status === 'COMPLETED' ? 'INCOMING_PAYMENT.COMPLETED' : 'INCOMING_PAYMENT.FAILED',
    ]);
    expect(await finalEvents(atDeadline.body.id)).toEqual(['INCOMING_PAYMENT.FAILED']);
    const credited = winner.status === 'COMPLETED' ? 1_000 : 0;
    expect(await balances(t, customer.id)).toEqual({ balance: credited, totalBalance: credited });
    await expectBalancedBooks(t);
  });

  describe('sandbox senders', () => {
    for (const domain of SANDBOX_UMA_DOMAINS) {
      it.each(['success.usd', 'success.eur', 'success.mxn'])(
        `$%s@${domain} pays the customer in the receiving currency`,
        async (name) => {
          const t = await build();
          const { customer } = await customerOf(t);
          const reply = await receive(t, {
            senderUmaAddress: `$${name}@${domain}`,
            customerId: customer.id,
            receivingCurrencyCode: 'USD',
            receivingCurrencyAmount: 300,
          });
          expect(reply.status).toBe(200);
          expect(reply.body).toMatchObject({
            status: 'COMPLETED',
            source: { sourceType: 'UMA_ADDRESS', umaAddress: `$${name}@${domain}` },
          });
          expect(await balances(t, customer.id)).toEqual({ balance: 300, totalBalance: 300 });
        },
      );

      it(`$fail.compliance.usd@${domain} fails compliance before the platform is asked`, async () => {
        const t = await build();
        const { customer } = await customerOf(t);
        const reply = await receive(t, {
          senderUmaAddress: `$fail.compliance.usd@${domain}`,
          customerId: customer.id,
          receivingCurrencyCode: 'USD',
          receivingCurrencyAmount: 300,
        });
        expect(reply.status).toBe(200);
        expect(reply.body).toMatchObject({ status: 'FAILED', failureReason: 'COMPLIANCE_REJECTED' });
        expect((await eventsOf(t, reply.body.id)).map((e) => e.type)).toEqual(['INCOMING_PAYMENT.FAILED']);
        expect(await t.deps.db.k.selectFrom('incoming_payment_approvals').selectAll().execute()).toEqual([]);
        expect(await balances(t, customer.id)).toEqual({ balance: 0, totalBalance: 0 });
        expect((await t.api('POST', `/transactions/${reply.body.id}/approve`)).status).toBe(409);
        await expectBalancedBooks(t);
      });

      it(`$pending.long.usd@${domain} stays pending for an hour after approval, then completes`, async () => {
        const t = await build({ clock: new ManualClock(START_MS) });
        const { customer } = await customerOf(t);
        const reply = await receive(t, {
          senderUmaAddress: `$pending.long.usd@${domain}`,
          customerId: customer.id,
          receivingCurrencyCode: 'USD',
          receivingCurrencyAmount: 300,
        });
        expect(reply.status).toBe(200);
        expect(reply.body.status).toBe('PENDING');
        expect((await t.api('POST', `/transactions/${reply.body.id}/approve`)).status).toBe(409);
        await t.advanceClock(3_599);
        expect((await t.api('GET', `/transactions/${reply.body.id}`)).body.status).toBe('PENDING');
        expect(await balances(t, customer.id)).toEqual({ balance: 0, totalBalance: 300 });
        await t.advanceClock(1);
        expect((await t.api('GET', `/transactions/${reply.body.id}`)).body).toMatchObject({
          status: 'COMPLETED',
          settledAt: '2025-06-02T10:00:00.000Z',
        });
        expect(await balances(t, customer.id)).toEqual({ balance: 300, totalBalance: 300 });
        await expectBalancedBooks(t);
      });
    }

    it('covers every sandbox address of the magic table', () => {
      expect(SANDBOX_UMA_ADDRESSES.map((r) => r.name).sort()).toEqual([
        'fail.compliance.usd',
        'pending.long.usd',
        'success.eur',
        'success.mxn',
        'success.usd',
      ]);
    });
  });

  describe('refusals, which change nothing', () => {
    async function expectNothingWritten(t: TestApp) {
      expect(await t.deps.db.k.selectFrom('transactions').selectAll().execute()).toEqual([]);
    }

    it('answers 404 for an unknown sender, receiver address or customer', async () => {
      const t = await build();
      const { customer } = await customerOf(t);
      const other = await t.newPlatform();
      const theirs = await createCustomer(other, individualBody('Casey Morgan'));
      const cases: [Record<string, unknown>, string][] = [
        [{ senderUmaAddress: '$someone@sandbox.uma.money', customerId: customer.id }, 'UMA_NOT_FOUND'],
        [{ senderUmaAddress: '$success.usd@wallet.example.com', customerId: customer.id }, 'UMA_NOT_FOUND'],
        [{ senderUmaAddress: SENDER, receiverUmaAddress: '$nobody@railyard.sandbox.uma.money' }, 'UMA_NOT_FOUND'],
        [{ senderUmaAddress: SENDER, customerId: 'Customer:019542f5-b3e7-7d02-8000-000000000001' }, 'USER_NOT_FOUND'],
        [{ senderUmaAddress: SENDER, customerId: theirs.id }, 'USER_NOT_FOUND'],
      ];
      for (const [body, code] of cases) {
        const reply = await receive(t, { ...body, receivingCurrencyCode: 'USD', receivingCurrencyAmount: 100 });
        expect(reply.status, JSON.stringify(body)).toBe(404);
        expect(reply.body).toMatchObject({ status: 404, code });
      }
      await expectNothingWritten(t);
    });

    it('answers one 400 naming every invalid field', async () => {
      const t = await build();
      const { customer } = await customerOf(t);
      const schema = await receive(t, {
        senderUmaAddress: 7,
        customerId: customer.id,
        receivingCurrencyCode: 'USD',
        receivingCurrencyAmount: 0,
      });
      expect(schema.status).toBe(400);
      expect(schema.body.details.errors.map((e: any) => e.field).sort()).toEqual([
        'receivingCurrencyAmount',
        'senderUmaAddress',
      ]);
      // Schema problems and the body's own rules come back together.
      const mixed = await receive(t, {
        senderUmaAddress: 'sam',
        receiverUmaAddress: 'robin',
        receivingCurrencyCode: 'XYZ',
        receivingCurrencyAmount: -3,
      });
      expect(mixed.status).toBe(400);
      expect(mixed.body.code).toBe('INVALID_INPUT');
      expect(mixed.body.details.errors.map((e: any) => e.field).sort()).toEqual([
        'receiverUmaAddress',
        'receivingCurrencyAmount',
        'receivingCurrencyCode',
        'senderUmaAddress',
      ]);
      const untyped = await receive(t, {
        senderUmaAddress: SENDER,
        customerId: 12,
        receivingCurrencyCode: 'USD',
        receivingCurrencyAmount: 5,
      });
      expect(untyped.status).toBe(400);
      expect(untyped.body.details.errors.map((e: any) => e.field)).toEqual(['customerId']);
      const all = await receive(t, {
        senderUmaAddress: 'sam',
        receiverUmaAddress: 'robin',
        receivingCurrencyCode: 'XYZ',
        receivingCurrencyAmount: 5,
      });
      expect(all.status).toBe(400);
      expect(all.body.code).toBe('INVALID_INPUT');
      expect(all.body.details.errors.map((e: any) => e.field)).toEqual([
        'senderUmaAddress',
        'receiverUmaAddress',
        'receivingCurrencyCode',
      ]);
      const noReceiver = await receive(t, {
        senderUmaAddress: SENDER,
        receivingCurrencyCode: 'USD',
        receivingCurrencyAmount: 5,
      });
      expect(noReceiver.body.details.errors.map((e: any) => e.field)).toEqual(['receiverUmaAddress', 'customerId']);
      const addresses = await receive(t, {
        senderUmaAddress: 'sam',
        customerId: customer.id,
        receivingCurrencyCode: 'USD',
        receivingCurrencyAmount: 5,
      });
      expect(addresses.body.code).toBe('INVALID_UMA_ADDRESS');
      const currency = await receive(t, {
        senderUmaAddress: SENDER,
        customerId: customer.id,
        receivingCurrencyCode: 'XYZ',
        receivingCurrencyAmount: 5,
      });
      expect(currency.body.code).toBe('INVALID_CURRENCY');
      const mismatch = await receive(t, {
        senderUmaAddress: SENDER,
        customerId: customer.id,
        receiverUmaAddress: '$someone.else@railyard.sandbox.uma.money',
        receivingCurrencyCode: 'USD',
        receivingCurrencyAmount: 5,
      });
      expect(mismatch.status).toBe(400);
      expect(mismatch.body.details.errors.map((e: any) => e.field)).toEqual(['receiverUmaAddress']);
      await expectNothingWritten(t);
    });

    it('answers 400 for a currency the platform does not take, or an amount outside its limits', async () => {
      const t = await build();
      const { customer } = await customerOf(t);
      const base = { senderUmaAddress: SENDER, customerId: customer.id };
      const eur = await receive(t, { ...base, receivingCurrencyCode: 'EUR', receivingCurrencyAmount: 100 });
      expect(eur.status).toBe(400);
      expect(eur.body.code).toBe('INVALID_CURRENCY');
      const tooMuch = await receive(t, { ...base, receivingCurrencyCode: 'USD', receivingCurrencyAmount: 100_000_001 });
      expect(tooMuch.status).toBe(400);
      expect(tooMuch.body.code).toBe('TRANSACTION_SIZE_LIMIT_EXCEEDED');
      const most = await receive(t, { ...base, receivingCurrencyCode: 'USD', receivingCurrencyAmount: 100_000_000 });
      expect(most.status).toBe(200);
      expect(await balances(t, customer.id)).toEqual({ balance: 100_000_000, totalBalance: 100_000_000 });
    });

    it('needs TRANSACT', async () => {
      const t = await build();
      const { customer } = await customerOf(t);
      const created = await t.api('POST', '/tokens', { body: { name: 'viewer', permissions: ['VIEW'] } });
      const reply = await t.api('POST', '/sandbox/uma/receive', {
        body: {
          senderUmaAddress: SENDER,
          customerId: customer.id,
          receivingCurrencyCode: 'USD',
          receivingCurrencyAmount: 100,
        },
        auth: { username: created.body.clientId, password: created.body.clientSecret },
      });
      // The operation declares 403, so a token without the permission gets it.
      expect(reply.status).toBe(403);
      expect(reply.body.code).toBe('FORBIDDEN');
      await expectNothingWritten(t);
    });
  });
});
