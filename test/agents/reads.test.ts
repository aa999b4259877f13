import { describe, expect, it } from 'vitest';
import { accountBody } from '../fixtures/accounts.js';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { quoteBody } from '../fuzz/baselines.js';
import { connectedAgent } from '../fixtures/agents.js';
import { build, type TestApp } from '../helper.js';

/** A customer with USD, a bank account, two transfer-outs and a quote. */
async function customerWithMoney(t: TestApp, name: string) {
  const customer = await createCustomer(t, individualBody(name));
  const usd = (await t.api('GET', `/customers/internal-accounts?customerId=${customer.id}&currency=USD`)).body.data[0];
  await t.api('POST', `/sandbox/internal-accounts/${usd.id}/fund`, { body: { amount: 100_000 } });
  const bank = await t.api('POST', '/customers/external-accounts', {
    body: { ...accountBody('USD_ACCOUNT', '000'), customerId: customer.id },
  });
  const transfers = [];
  for (const amount of [1_000, 2_000]) {
    const reply = await t.api('POST', '/transfer-out', {
      body: { source: { accountId: usd.id }, destination: { accountId: bank.body.id }, amount },
    });
    expect(reply.status, reply.text).toBe(201);
    transfers.push(reply.body);
  }
  const mxn = await t.api('POST', '/customers/external-accounts', {
    body: { ...accountBody('MXN_ACCOUNT', '000'), customerId: customer.id },
  });
  const quote = await t.api('POST', '/quotes', { body: quoteBody(usd.id, mxn.body.id) });
  expect(quote.status, quote.text).toBe(201);
  return { customer, transfers, quote: quote.body };
}

describe("an agent's transactions and quotes", () => {
  it("reads its customer's transactions and quotes, in both orders, and nothing of another customer", async () => {
    const t = await build();
    const mine = await customerWithMoney(t, 'Eva Lund');
    const theirs = await customerWithMoney(t, 'Finn Osei');
    const agent = (await connectedAgent(t, mine.customer.id)).api;

    const desc = await agent('GET', '/agents/me/transactions');
    expect(desc.status, desc.text).toBe(200);
    const ids = desc.body.data.map((x: any) => x.id);
    expect(ids).toEqual(expect.arrayContaining(mine.transfers.map((x) => x.id)));
    expect(desc.body.data.every((x: any) => x.customerId === mine.customer.id)).toBe(true);
    const asc = await agent('GET', '/agents/me/transactions?sortOrder=asc');
    expect(asc.body.data.map((x: any) => x.id)).toEqual([...ids].reverse());
    // The customerId filter of the platform's list is not the agent's to choose.
    const other = await agent('GET', `/agents/me/transactions?customerId=${theirs.customer.id}`);
    expect(other.body.data.map((x: any) => x.id)).toEqual(ids);
    expect((await agent('GET', '/agents/me/transactions?limit=0')).status).toBe(400);

    const one = await agent('GET', `/agents/me/transactions/${mine.transfers[0]!.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual((await t.api('GET', `/transactions/${mine.transfers[0]!.id}`)).body);
    const hidden = await agent('GET', `/agents/me/transactions/${theirs.transfers[0]!.id}`);
    expect(hidden.status).toBe(404);
    expect(hidden.body.code).toBe('TRANSACTION_NOT_FOUND');

    const quote = await agent('GET', `/agents/me/quotes/${mine.quote.id}`);
    expect(quote.status).toBe(200);
    expect(quote.body).toEqual((await t.api('GET', `/quotes/${mine.quote.id}`)).body);
    const foreignQuote = await agent('GET', `/agents/me/quotes/${theirs.quote.id}`);
    expect(foreignQuote.status).toBe(404);
    expect(foreignQuote.body.code).toBe('QUOTE_NOT_FOUND');
  });

  it('needs VIEW_TRANSACTIONS for transactions, and a quote permission or VIEW_TRANSACTIONS for quotes', async () => {
    const t = await build();
    const mine = await customerWithMoney(t, 'Gia Holm');
    const mover = (await connectedAgent(t, mine.customer.id, ['CREATE_TRANSFERS'])).api;
    const refused = await mover('GET', '/agents/me/transactions');
    expect(refused.status).toBe(401);
    expect(refused.body.details.requiredPermission).toBe('VIEW_TRANSACTIONS');
    expect((await mover('GET', `/agents/me/transactions/${mine.transfers[0]!.id}`)).status).toBe(401);
    expect((await mover('GET', `/agents/me/quotes/${mine.quote.id}`)).status).toBe(401);
    const quoter = (await connectedAgent(t, mine.customer.id, ['CREATE_QUOTES'])).api;
    expect((await quoter('GET', `/agents/me/quotes/${mine.quote.id}`)).status).toBe(200);
  });
});
