// The card network simulators: each answers 202 with a token and acts later, on the sandbox
// clock; the card transaction it opens or changes shows in GET /transactions (type CARD),
// its money moves in the ledger (checked on the funding account and by the audit after every
// step) and every change records its CARD_TRANSACTION.* event. Decisioning suffixes, frozen
// cards, the spending limit, every refusal, and concurrent authorizations on one account.

import { describe, expect, it } from 'vitest';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { eventsOf, expectBalancedBooks, fund } from '../fixtures/money.js';
import { build, type TestApp } from '../helper.js';

interface Setup {
  t: TestApp;
  customer: any;
  usd: any;
  card: any;
}

/** An ACTIVE USD card of an approved customer whose USD account holds `funded` cents. */
async function activeCard(funded = 100_000, extra: Record<string, unknown> = {}, t?: TestApp): Promise<Setup> {
  const app = t ?? (await build());
  const customer = await createCustomer(app, individualBody('Lena Fischer'));
  const accounts = (await app.api('GET', `/customers/internal-accounts?customerId=${customer.id}&currency=USD`)).body
    .data;
  const usd = accounts[0];
  if (funded > 0) await fund(app, usd.id, funded);
  const issued = await app.api('POST', '/cards', {
    body: { cardholderId: customer.id, form: 'VIRTUAL', fundingSources: [usd.id], ...extra },
  });
  expect(issued.status, issued.text).toBe(201);
  await app.runDueJobs();
  const card = (await app.api('GET', `/cards/${issued.body.id}`)).body;
  expect(card.state).toBe('ACTIVE');
  return { t: app, customer, usd, card };
}

const merchant = (descriptor = 'CORNER BAKERY 4410') => ({ descriptor, mcc: '5812', country: 'US' });

/** Sends a simulator call; expects 202 and a token, runs the due jobs, answers the simulation's record. */
async function simulate(s: Setup, path: string, body: Record<string, unknown>, cardId = s.card.id) {
  const reply = await s.t.api('POST', `/sandbox/cards/${cardId}/simulate/${path}`, { body });
  expect(reply.status, reply.text).toBe(202);
  expect(Object.keys(reply.body)).toEqual(['issuerTransactionToken']);
  await s.t.runDueJobs();
  const record = await s.t.raw('GET', `/_railyard/card-simulations/${reply.body.issuerTransactionToken}`);
  expect(record.status).toBe(200);
  return record.body;
}

async function authorize(s: Setup, amount: number, descriptor?: string) {
  return simulate(s, 'authorization', { amount, currency: { code: 'USD' }, merchant: merchant(descriptor) });
}

async function cardTransaction(s: Setup, id: string) {
  const reply = await s.t.api('GET', `/transactions/${id}`);
  expect(reply.status).toBe(200);
  return reply.body;
}

/** The funding account's balances: available (`balance`) and total (available + held). */
async function account(s: Setup, id = s.usd.id) {
  const reply = await s.t.api('GET', `/customers/internal-accounts?customerId=${s.customer.id}&currency=USD`);
  const found = reply.body.data.find((a: any) => a.id === id);
  return { available: found.balance.amount, total: found.totalBalance.amount };
}

const money = (amount: number) => ({ amount, currency: expect.objectContaining({ code: 'USD' }) });

describe('a debit from authorization to return reversal', () => {
  it('holds, settles in two clearings, refunds in two returns, reverses the last, with the ledger after each step', async () => {
    const s = await activeCard(100_000);
    const auth = await authorize(s, 4_000);
    expect(auth).toMatchObject({ status: 'APPLIED', simulation: 'AUTHORIZATION', cardId: s.card.id });
    const id = auth.cardTransactionId;
    expect(id).toMatch(/^CardTransaction:/);
    expect(await cardTransaction(s, id)).toMatchObject({
      type: 'CARD',
      id,
      cardId: s.card.id,
      customerId: s.customer.id,
      platformCustomerId: s.customer.platformCustomerId,
      issuerTransactionToken: auth.issuerTransactionToken,
      status: 'AUTHORIZED',
      direction: 'DEBIT',
      merchant: merchant(),
      authorizedAmount: money(4_000),
      settledAmount: money(0),
      refundedAmount: money(0),
      accountId: s.usd.id,
      pullSummary: { count: 1, totalAmount: 4_000, pendingCount: 0 },
    });
    expect(await account(s)).toEqual({ available: 96_000, total: 100_000 });
    await expectBalancedBooks(s.t);

    // Listed among the platform's transactions, and under the funding account.
    const listed = (await s.t.api('GET', `/transactions?accountIdentifier=${s.usd.id}`)).body.data;
    expect(listed.map((row: any) => [row.type, row.id])).toEqual([['CARD', id]]);

    await simulate(s, 'clearing', { cardTransactionId: id, amount: 1_500 });
    expect(await cardTransaction(s, id)).toMatchObject({
      status: 'PARTIALLY_SETTLED',
      settledAmount: money(1_500),
      settlementSummary: { count: 1, totalAmount: 1_500 },
    });
    expect(await account(s)).toEqual({ available: 96_000, total: 98_500 });

    await simulate(s, 'clearing', { cardTransactionId: id, amount: 2_500 });
    expect(await cardTransaction(s, id)).toMatchObject({ status: 'SETTLED', settledAmount: money(4_000) });
    expect(await account(s)).toEqual({ available: 96_000, total: 96_000 });
    await expectBalancedBooks(s.t);

    await simulate(s, 'return', { cardTransactionId: id, amount: 1_000 });
    expect(await cardTransaction(s, id)).toMatchObject({
      status: 'SETTLED',
      refundedAmount: money(1_000),
      refundSummary: { count: 1, totalAmount: 1_000 },
    });
    expect(await account(s)).toEqual({ available: 97_000, total: 97_000 });

    await simulate(s, 'return', { cardTransactionId: id, amount: 3_000 });
    expect(await cardTransaction(s, id)).toMatchObject({ status: 'REFUNDED', refundedAmount: money(4_000) });
    expect(await account(s)).toEqual({ available: 100_000, total: 100_000 });

    await simulate(s, 'return_reversal', { cardTransactionId: id });
    expect(await cardTransaction(s, id)).toMatchObject({
      status: 'SETTLED',
      refundedAmount: money(1_000),
      refundSummary: { count: 2, totalAmount: 4_000 },
      pullSummary: { count: 2, totalAmount: 7_000, pendingCount: 0 },
    });
    expect(await account(s)).toEqual({ available: 97_000, total: 97_000 });
    await expectBalancedBooks(s.t);

    const events = await eventsOf(s.t, id);
    expect(events.map((e) => e.type)).toEqual([
      'CARD_TRANSACTION.AUTHORIZED',
      'CARD_TRANSACTION.PARTIALLY_SETTLED',
      'CARD_TRANSACTION.SETTLED',
      'CARD_TRANSACTION.SETTLED',
      'CARD_TRANSACTION.REFUNDED',
      'CARD_TRANSACTION.SETTLED',
    ]);
    expect(events[4]!.data).toMatchObject({ type: 'CARD', id, status: 'REFUNDED' });
  });

  it('pulls the excess of an over-authorized clearing, or ends in EXCEPTION when the account cannot give it', async () => {
    const s = await activeCard(10_000);
    const tip = (await authorize(s, 2_000)).cardTransactionId;
    await simulate(s, 'clearing', { cardTransactionId: tip, amount: 2_400 });
    expect(await cardTransaction(s, tip)).toMatchObject({
      status: 'SETTLED',
      settledAmount: money(2_400),
      pullSummary: { count: 2, totalAmount: 2_400 },
    });
    expect(await account(s)).toEqual({ available: 7_600, total: 7_600 });

    const short = (await authorize(s, 7_000)).cardTransactionId;
    await simulate(s, 'clearing', { cardTransactionId: short, amount: 9_000 });
    // The hold settles; the 2,000 beyond it cannot be pulled from the 600 left.
    expect(await cardTransaction(s, short)).toMatchObject({
      status: 'EXCEPTION',
      settledAmount: money(9_000),
      pullSummary: { count: 1, totalAmount: 7_000 },
    });
    expect(await account(s)).toEqual({ available: 600, total: 600 });
    expect((await eventsOf(s.t, short)).map((e) => e.type)).toEqual([
      'CARD_TRANSACTION.AUTHORIZED',
      'CARD_TRANSACTION.EXCEPTION',
    ]);
    await expectBalancedBooks(s.t);
  });

  it('expires with a clearing of 0, releasing the hold; an advice resizes an open authorization', async () => {
    const s = await activeCard(10_000);
    const expiring = (await authorize(s, 3_000)).cardTransactionId;
    await simulate(s, 'clearing', { cardTransactionId: expiring, amount: 0 });
    expect(await cardTransaction(s, expiring)).toMatchObject({
      status: 'SETTLED',
      settledAmount: money(0),
      settlementSummary: { count: 0, totalAmount: 0 },
      // One pull was made; all it took was given back.
      pullSummary: { count: 1, totalAmount: 0, pendingCount: 0 },
    });
    expect(await account(s)).toEqual({ available: 10_000, total: 10_000 });

    const resized = (await authorize(s, 1_000)).cardTransactionId;
    await simulate(s, 'authorization_advice', { cardTransactionId: resized, amount: 2_500 });
    expect(await cardTransaction(s, resized)).toMatchObject({ status: 'AUTHORIZED', authorizedAmount: money(2_500) });
    expect(await account(s)).toEqual({ available: 7_500, total: 10_000 });
    await simulate(s, 'clearing', { cardTransactionId: resized, amount: 500 });
    await simulate(s, 'authorization_advice', { cardTransactionId: resized, amount: 800 });
    // 500 settled, so 300 stays held of the new 800 total.
    expect(await cardTransaction(s, resized)).toMatchObject({
      status: 'PARTIALLY_SETTLED',
      authorizedAmount: money(800),
      settledAmount: money(500),
    });
    expect(await account(s)).toEqual({ available: 9_200, total: 9_500 });
    const below = await s.t.api('POST', `/sandbox/cards/${s.card.id}/simulate/authorization_advice`, {
      body: { cardTransactionId: resized, amount: 400 },
    });
    expect(below.status).toBe(400);
    expect(below.body.details.errors.map((e: any) => e.field)).toEqual(['amount']);
    // An increase the account cannot cover: EXCEPTION, which is final, so the 300 still held goes back.
    await simulate(s, 'authorization_advice', { cardTransactionId: resized, amount: 10_000_000 });
    expect(await cardTransaction(s, resized)).toMatchObject({
      status: 'EXCEPTION',
      authorizedAmount: money(10_000_000),
      settledAmount: money(500),
    });
    expect(await account(s)).toEqual({ available: 9_500, total: 9_500 });
    const after = await s.t.api('POST', `/sandbox/cards/${s.card.id}/simulate/clearing`, {
      body: { cardTransactionId: resized, amount: 0 },
    });
    expect(after.status).toBe(400);
    await expectBalancedBooks(s.t);
  });
});

describe('decisioning', () => {
  it('declines by descriptor suffix 002 and 003, a frozen card, a debit past the limit or the funds: no transaction, no money', async () => {
    const s = await activeCard(5_000, { maxSpendPerTransaction: 4_000 });
    const declined = async (amount: number, descriptor: string | undefined, reason: string) => {
      const record = await authorize(s, amount, descriptor);
      expect(record).toMatchObject({ status: 'DECLINED', reason });
      expect(record.cardTransactionId).toBeUndefined();
    };
    await declined(1_000, 'AMAZON RETAIL US-002', 'INSUFFICIENT_FUNDS');
    await declined(1_000, 'CITY PARKING 003', 'CARD_PAUSED');
    await declined(4_001, undefined, 'EXCEEDS_MAX_SPEND_PER_TRANSACTION');
    const frozen = await s.t.api('PATCH', `/cards/${s.card.id}`, { body: { state: 'FROZEN' } });
    expect(frozen.body.state).toBe('FROZEN');
    await declined(1_000, undefined, 'CARD_PAUSED');
    await s.t.api('PATCH', `/cards/${s.card.id}`, { body: { state: 'ACTIVE' } });
    await authorize(s, 3_000);
    await declined(2_500, undefined, 'INSUFFICIENT_FUNDS');
    const cards = (await s.t.api('GET', `/transactions?accountIdentifier=${s.usd.id}`)).body.data;
    expect(cards).toHaveLength(1);
    expect(await account(s)).toEqual({ available: 2_000, total: 5_000 });
    await expectBalancedBooks(s.t);
  });

  it('005 keeps the pull pending for 30 s of sandbox time; 006 ends in EXCEPTION with the hold released', async () => {
    const s = await activeCard(10_000);
    const slow = (await authorize(s, 1_200, 'TRANSIT AUTHORITY 005')).cardTransactionId;
    expect(await cardTransaction(s, slow)).toMatchObject({
      status: 'AUTHORIZED',
      pullSummary: { count: 1, totalAmount: 1_200, pendingCount: 1 },
    });
    await s.t.advanceClock(29);
    expect((await cardTransaction(s, slow)).pullSummary.pendingCount).toBe(1);
    await s.t.advanceClock(1);
    expect((await cardTransaction(s, slow)).pullSummary.pendingCount).toBe(0);
    expect((await eventsOf(s.t, slow)).map((e) => [e.type, e.data.pullSummary.pendingCount])).toEqual([
      ['CARD_TRANSACTION.AUTHORIZED', 1],
      ['CARD_TRANSACTION.AUTHORIZED', 0],
    ]);

    const broken = (await authorize(s, 2_000, 'HARDWARE STORE 006')).cardTransactionId;
    expect(await cardTransaction(s, broken)).toMatchObject({
      status: 'EXCEPTION',
      authorizedAmount: money(2_000),
      pullSummary: { count: 0, totalAmount: 0 },
    });
    expect((await eventsOf(s.t, broken)).map((e) => e.type)).toEqual([
      'CARD_TRANSACTION.AUTHORIZED',
      'CARD_TRANSACTION.EXCEPTION',
    ]);
    expect(await account(s)).toEqual({ available: 8_800, total: 10_000 });
    await expectBalancedBooks(s.t);
  });

  it('concurrent authorizations on four cards of one account never overspend it', async () => {
    const s = await activeCard(10_000);
    const cards = [s.card.id];
    for (let i = 0; i < 3; i++) {
      const issued = await s.t.api('POST', '/cards', {
        body: { cardholderId: s.customer.id, form: 'VIRTUAL', fundingSources: [s.usd.id] },
      });
      cards.push(issued.body.id);
    }
    await s.t.runDueJobs();
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        s.t.api('POST', `/sandbox/cards/${cards[i % 4]}/simulate/authorization`, {
          body: { amount: 3_000, currency: { code: 'USD' }, merchant: merchant(`SHOP ${i}`) },
        }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(12).fill(202));
    // Several runners at once: on PostgreSQL each claims its own jobs and they run side by
    // side, the four cards' authorizations meeting on the one funding account.
    await Promise.all([s.t.runDueJobs(), s.t.runDueJobs(), s.t.runDueJobs(), s.t.runDueJobs()]);
    await s.t.advanceClock(60);
    const outcomes = await Promise.all(
      replies.map(
        async (r) => (await s.t.raw('GET', `/_railyard/card-simulations/${r.body.issuerTransactionToken}`)).body,
      ),
    );
    expect(outcomes.filter((o) => o.status === 'APPLIED')).toHaveLength(3);
    expect(outcomes.filter((o) => o.status === 'DECLINED').map((o) => o.reason)).toEqual(
      Array(9).fill('INSUFFICIENT_FUNDS'),
    );
    expect(await account(s)).toEqual({ available: 1_000, total: 10_000 });
    await expectBalancedBooks(s.t);
  });
});

describe('the other simulators', () => {
  it('balance inquiry, financial authorization, credits and the credit advice', async () => {
    const s = await activeCard(10_000);
    const inquiry = await simulate(s, 'balance_inquiry', { merchant: merchant('FUEL PUMP 7') });
    expect(await cardTransaction(s, inquiry.cardTransactionId)).toMatchObject({
      status: 'AUTHORIZED',
      direction: 'DEBIT',
      authorizedAmount: money(0),
      pullSummary: { count: 0, totalAmount: 0 },
    });
    expect(await account(s)).toEqual({ available: 10_000, total: 10_000 });

    const atm = await simulate(s, 'financial_authorization', {
      amount: 6_000,
      currency: { code: 'USD' },
      merchant: merchant('ATM 24TH ST'),
    });
    expect(await cardTransaction(s, atm.cardTransactionId)).toMatchObject({
      status: 'SETTLED',
      settledAmount: money(6_000),
    });
    expect(await account(s)).toEqual({ available: 4_000, total: 4_000 });
    expect((await eventsOf(s.t, atm.cardTransactionId)).map((e) => e.type)).toEqual(['CARD_TRANSACTION.SETTLED']);

    const credit = await simulate(s, 'credit_authorization', {
      amount: 2_500,
      currency: { code: 'USD' },
      merchant: merchant('MARKETPLACE REFUNDS'),
    });
    expect(await cardTransaction(s, credit.cardTransactionId)).toMatchObject({
      status: 'AUTHORIZED',
      direction: 'CREDIT',
    });
    // A pending credit counts in the total, not yet in what can be spent.
    expect(await account(s)).toEqual({ available: 4_000, total: 6_500 });
    await simulate(s, 'clearing', { cardTransactionId: credit.cardTransactionId, amount: 2_500 });
    expect((await cardTransaction(s, credit.cardTransactionId)).status).toBe('SETTLED');
    expect(await account(s)).toEqual({ available: 6_500, total: 6_500 });
    const notReturnable = await s.t.api('POST', `/sandbox/cards/${s.card.id}/simulate/return`, {
      body: { cardTransactionId: credit.cardTransactionId, amount: 100 },
    });
    expect(notReturnable.status).toBe(400);

    const push = await simulate(s, 'financial_credit_authorization', {
      amount: 4_000,
      currency: { code: 'USD' },
      merchant: merchant('PAYOUTS INC'),
    });
    expect(await cardTransaction(s, push.cardTransactionId)).toMatchObject({ status: 'SETTLED', direction: 'CREDIT' });
    expect(await account(s)).toEqual({ available: 10_500, total: 10_500 });

    const advice = await simulate(s, 'credit_authorization_advice', {
      amount: 700,
      currency: { code: 'USD' },
      merchant: merchant('NETWORK ADVICE'),
    });
    expect(await cardTransaction(s, advice.cardTransactionId)).toMatchObject({
      status: 'AUTHORIZED',
      direction: 'CREDIT',
      authorizedAmount: money(700),
    });
    await simulate(s, 'clearing', { cardTransactionId: advice.cardTransactionId, amount: 0 });
    expect(await account(s)).toEqual({ available: 10_500, total: 10_500 });
    await expectBalancedBooks(s.t);
  });
});

describe('refusals', () => {
  it('answers 404, 400 naming the field, never a change, for what cannot be simulated', async () => {
    const s = await activeCard(10_000);
    const other = await activeCard(10_000, {}, s.t);
    const id = (await authorize(s, 1_000)).cardTransactionId;
    const post = (cardId: string, path: string, body: unknown) =>
      s.t.api('POST', `/sandbox/cards/${cardId}/simulate/${path}`, { body });

    const unknownCard = await post('Card:00000000-0000-0000-0000-000000000000', 'authorization', {
      amount: 100,
      currency: { code: 'USD' },
      merchant: merchant(),
    });
    expect([unknownCard.status, unknownCard.body.code]).toEqual([404, 'REFERENCE_NOT_FOUND']);
    const foreign = await post(other.card.id, 'clearing', { cardTransactionId: id, amount: 100 });
    expect([foreign.status, foreign.body.code]).toEqual([404, 'TRANSACTION_NOT_FOUND']);
    const missing = await post(s.card.id, 'clearing', { cardTransactionId: 'CardTransaction:nope', amount: 100 });
    expect([missing.status, missing.body.code]).toEqual([404, 'TRANSACTION_NOT_FOUND']);

    const currency = await post(s.card.id, 'authorization', {
      amount: 100,
      currency: { code: 'EUR' },
      merchant: merchant(),
    });
    expect(currency.status).toBe(400);
    expect(currency.body.details.errors.map((e: any) => e.field)).toEqual(['currency.code']);
    const invalid = await post(s.card.id, 'authorization', { amount: 0, currency: {} });
    expect(invalid.status).toBe(400);
    expect(invalid.body.details.errors.map((e: any) => e.field).sort()).toEqual(['amount', 'merchant']);
    const reversal = await post(s.card.id, 'return_reversal', { cardTransactionId: id });
    expect(reversal.status).toBe(400);
    expect(reversal.body.details.errors[0].field).toBe('cardTransactionId');
    const early = await post(s.card.id, 'return', { cardTransactionId: id, amount: 100 });
    expect(early.status).toBe(400);
    await simulate(s, 'clearing', { cardTransactionId: id, amount: 1_000 });
    const again = await post(s.card.id, 'clearing', { cardTransactionId: id, amount: 100 });
    expect(again.status).toBe(400);
    const tooMuch = await post(s.card.id, 'return', { cardTransactionId: id, amount: 1_001 });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.details.errors.map((e: any) => e.field)).toEqual(['amount']);

    await s.t.api('PATCH', `/cards/${s.card.id}`, { body: { state: 'CLOSED' } });
    const closed = await post(s.card.id, 'authorization', {
      amount: 100,
      currency: { code: 'USD' },
      merchant: merchant(),
    });
    expect(closed.status).toBe(400);
    // A closed card's settled transactions still take returns from the network.
    await simulate(s, 'return', { cardTransactionId: id, amount: 1_000 });
    expect((await cardTransaction(s, id)).status).toBe('REFUNDED');
    expect(await account(s)).toEqual({ available: 10_000, total: 10_000 });
    expect(await account(other)).toEqual({ available: 10_000, total: 10_000 });
    await expectBalancedBooks(s.t);
  });

  it('a simulation whose transaction changed before it ran is recorded NOT_APPLIED and moves nothing', async () => {
    const s = await activeCard(10_000);
    const id = (await authorize(s, 1_000)).cardTransactionId;
    const first = await s.t.api('POST', `/sandbox/cards/${s.card.id}/simulate/clearing`, {
      body: { cardTransactionId: id, amount: 1_000 },
    });
    const second = await s.t.api('POST', `/sandbox/cards/${s.card.id}/simulate/clearing`, {
      body: { cardTransactionId: id, amount: 1_000 },
    });
    expect([first.status, second.status]).toEqual([202, 202]);
    await s.t.runDueJobs();
    const record = (await s.t.raw('GET', `/_railyard/card-simulations/${second.body.issuerTransactionToken}`)).body;
    expect(record).toMatchObject({ status: 'NOT_APPLIED', cardTransactionId: id });
    expect(record.reason).toContain('SETTLED');
    expect(await cardTransaction(s, id)).toMatchObject({ status: 'SETTLED', settledAmount: money(1_000) });
    expect(await account(s)).toEqual({ available: 9_000, total: 9_000 });
  });
});

describe('edges of the money', () => {
  it("a currency without a code is the card's; a balance inquiry cleared above 0 pulls what it clears", async () => {
    const s = await activeCard(10_000);
    const record = await simulate(s, 'authorization', { amount: 700, currency: {}, merchant: merchant() });
    expect(record.status).toBe('APPLIED');
    const inquiry = (await simulate(s, 'balance_inquiry', { merchant: merchant('KIOSK 005') })).cardTransactionId;
    // Nothing was held, so no pull is pending even on 005.
    expect((await cardTransaction(s, inquiry)).pullSummary).toEqual({ count: 0, totalAmount: 0, pendingCount: 0 });
    await simulate(s, 'clearing', { cardTransactionId: inquiry, amount: 300 });
    expect(await cardTransaction(s, inquiry)).toMatchObject({
      status: 'SETTLED',
      settledAmount: money(300),
      pullSummary: { count: 1, totalAmount: 300 },
    });
    expect(await account(s)).toEqual({ available: 9_000, total: 9_700 });
    await expectBalancedBooks(s.t);
  });

  it('a 005 pull confirms after the transaction settled; a financial 006 is EXCEPTION with nothing taken', async () => {
    const s = await activeCard(10_000);
    const slow = (await authorize(s, 1_000, 'TOLL ROAD 005')).cardTransactionId;
    await simulate(s, 'clearing', { cardTransactionId: slow, amount: 1_000 });
    await s.t.advanceClock(30);
    expect(await cardTransaction(s, slow)).toMatchObject({
      status: 'SETTLED',
      pullSummary: { count: 1, totalAmount: 1_000, pendingCount: 0 },
    });
    expect((await eventsOf(s.t, slow)).map((e) => e.type)).toEqual([
      'CARD_TRANSACTION.AUTHORIZED',
      'CARD_TRANSACTION.SETTLED',
      'CARD_TRANSACTION.SETTLED',
    ]);
    const atm = await simulate(s, 'financial_authorization', {
      amount: 2_000,
      currency: { code: 'USD' },
      merchant: merchant('ATM 006'),
    });
    expect(await cardTransaction(s, atm.cardTransactionId)).toMatchObject({
      status: 'EXCEPTION',
      settledAmount: money(2_000),
      pullSummary: { count: 0, totalAmount: 0 },
    });
    expect((await eventsOf(s.t, atm.cardTransactionId)).map((e) => e.type)).toEqual(['CARD_TRANSACTION.EXCEPTION']);
    expect(await account(s)).toEqual({ available: 9_000, total: 9_000 });
    await expectBalancedBooks(s.t);
  });

  it('an advice down to what settled closes it; a reversal the account cannot cover is EXCEPTION', async () => {
    const s = await activeCard(5_000);
    const id = (await authorize(s, 2_000)).cardTransactionId;
    await simulate(s, 'clearing', { cardTransactionId: id, amount: 1_200 });
    await simulate(s, 'authorization_advice', { cardTransactionId: id, amount: 1_200 });
    expect(await cardTransaction(s, id)).toMatchObject({
      status: 'SETTLED',
      authorizedAmount: money(1_200),
      pullSummary: { count: 1, totalAmount: 1_200 },
    });
    expect(await account(s)).toEqual({ available: 3_800, total: 3_800 });
    await simulate(s, 'return', { cardTransactionId: id, amount: 1_200 });
    expect((await cardTransaction(s, id)).status).toBe('REFUNDED');
    // The refund is spent before the merchant's return is reversed.
    await authorize(s, 5_000);
    await simulate(s, 'return_reversal', { cardTransactionId: id });
    expect(await cardTransaction(s, id)).toMatchObject({ status: 'EXCEPTION', refundedAmount: money(0) });
    expect(await account(s)).toEqual({ available: 0, total: 5_000 });
    await expectBalancedBooks(s.t);
  });

  it('the descriptor suffixes on the three credit openings: 002 and 003 decline, 005 changes nothing, 006 is EXCEPTION', async () => {
    const s = await activeCard(10_000);
    const opened: Record<string, unknown> = {
      credit_authorization: 'AUTHORIZED',
      credit_authorization_advice: 'AUTHORIZED',
    };
    for (const kind of ['credit_authorization', 'financial_credit_authorization', 'credit_authorization_advice']) {
      const outcomes = [];
      for (const suffix of ['002', '003', '005', '006']) {
        const body = { amount: 500, currency: { code: 'USD' }, merchant: merchant(`PAYOUTS ${suffix}`) };
        const record = await simulate(s, kind, body);
        await s.t.advanceClock(31);
        const status = record.cardTransactionId
          ? (await cardTransaction(s, record.cardTransactionId)).status
          : undefined;
        outcomes.push([record.status, record.reason ?? status]);
      }
      expect(outcomes, kind).toEqual([
        ['DECLINED', 'INSUFFICIENT_FUNDS'],
        ['DECLINED', 'CARD_PAUSED'],
        ['APPLIED', opened[kind] ?? 'SETTLED'],
        ['APPLIED', 'EXCEPTION'],
      ]);
    }
    // Only the 005 financial credit moved money; the two AUTHORIZED credits wait in the total.
    expect(await account(s)).toEqual({ available: 10_500, total: 11_500 });
    await expectBalancedBooks(s.t);
  });

  it('credits: a clearing past the pending amount credits the rest; a return past the balance maximum is EXCEPTION', async () => {
    const s = await activeCard(10_000);
    const credit = await simulate(s, 'credit_authorization', {
      amount: 1_000,
      currency: { code: 'USD' },
      merchant: merchant('REFUNDS R US'),
    });
    await simulate(s, 'clearing', { cardTransactionId: credit.cardTransactionId, amount: 1_500 });
    expect(await cardTransaction(s, credit.cardTransactionId)).toMatchObject({
      status: 'SETTLED',
      direction: 'CREDIT',
      settledAmount: money(1_500),
    });
    expect(await account(s)).toEqual({ available: 11_500, total: 11_500 });

    const id = (await authorize(s, 1_000)).cardTransactionId;
    await simulate(s, 'clearing', { cardTransactionId: id, amount: 1_000 });
    // A push credit fills the account to the 9e15 maximum: the returned 1,000 cannot come back in.
    await simulate(s, 'financial_credit_authorization', {
      amount: 9_000_000_000_000_000 - 10_500,
      currency: { code: 'USD' },
      merchant: merchant('JACKPOT'),
    });
    await simulate(s, 'return', { cardTransactionId: id, amount: 1_000 });
    expect(await cardTransaction(s, id)).toMatchObject({ status: 'EXCEPTION', refundedAmount: money(0) });
    expect((await account(s)).total).toBe(9_000_000_000_000_000);
    await expectBalancedBooks(s.t);
  });
});
