// Money an agent moves: transfers and quote executions as agent actions, the policy that
// runs, holds or refuses them, and the platform's approvals.

import { describe, expect, it } from 'vitest';
import { accountBody } from '../fixtures/accounts.js';
import { connectedAgent } from '../fixtures/agents.js';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { eventsOf } from '../fixtures/money.js';
import { quoteBody } from '../fuzz/baselines.js';
import { build, type TestApp } from '../helper.js';

/** A customer with a funded USD account, a USD bank account and an MXN bank account. */
async function household(t: TestApp, name: string, funds = 200_000) {
  const customer = await createCustomer(t, individualBody(name));
  const usd = (await t.api('GET', `/customers/internal-accounts?customerId=${customer.id}&currency=USD`)).body.data[0];
  if (funds > 0) await t.api('POST', `/sandbox/internal-accounts/${usd.id}/fund`, { body: { amount: funds } });
  const bank = await t.api('POST', '/customers/external-accounts', {
    body: { ...accountBody('USD_ACCOUNT', '000'), customerId: customer.id },
  });
  const mxn = await t.api('POST', '/customers/external-accounts', {
    body: { ...accountBody('MXN_ACCOUNT', '000'), customerId: customer.id },
  });
  expect([bank.status, mxn.status]).toEqual([201, 201]);
  return { customer, usd, bank: bank.body, mxn: mxn.body };
}

const out = (source: string, destination: string, amount: number) => ({
  source: { accountId: source },
  destination: { accountId: destination },
  amount,
});

async function balanceOf(t: TestApp, accountId: string): Promise<number> {
  const reply = await t.api('GET', '/customers/internal-accounts?limit=100');
  return reply.body.data.find((a: any) => a.id === accountId).balance.amount;
}

describe('agent transfers', () => {
  it('runs a transfer-out at once in AUTO within the threshold: APPROVED with its transaction, counted in usage', async () => {
    const t = await build();
    const h = await household(t, 'Iris Veld');
    const agent = await connectedAgent(t, h.customer.id);
    const key = { 'idempotency-key': 'agent-out-1' };
    const reply = await t.api('POST', '/agents/me/transfer-out', {
      auth: null,
      headers: { ...agent.headers, ...key },
      body: out(h.usd.id, h.bank.id, 10_000),
    });
    expect(reply.status, reply.text).toBe(201);
    const action = reply.body;
    expect(action).toMatchObject({
      agentId: agent.id,
      customerId: h.customer.id,
      platformCustomerId: h.customer.platformCustomerId,
      status: 'APPROVED',
      type: 'TRANSFER_OUT',
      transferDetails: { amount: 10_000, currency: 'USD', sourceAccountId: h.usd.id, destinationAccountId: h.bank.id },
      transaction: { type: 'OUTGOING', sentAmount: { amount: 10_000 }, customerId: h.customer.id },
    });
    expect(action.id).toMatch(/^AgentAction:/);
    expect(action.quote).toBeUndefined();
    expect(await balanceOf(t, h.usd.id)).toBe(190_000);
    expect((await t.api('GET', `/transactions/${action.transaction.id}`)).status).toBe(200);

    // The same key answers the same action; no second transfer.
    const again = await t.api('POST', '/agents/me/transfer-out', {
      auth: null,
      headers: { ...agent.headers, ...key },
      body: out(h.usd.id, h.bank.id, 10_000),
    });
    expect(again.body.id).toBe(action.id);
    expect(await balanceOf(t, h.usd.id)).toBe(190_000);

    const me = await agent.api('GET', '/agents/me');
    expect(me.body.usage).toMatchObject({ dailyTransactionCount: 1, dailySpend: 10_000, monthlySpend: 10_000 });
    expect((await agent.api('GET', `/agents/me/actions/${action.id}`)).body).toEqual(action);
    const mine = await agent.api('GET', '/agents/me/actions');
    expect(mine.body.data.map((a: any) => a.id)).toEqual([action.id]);
    expect((await t.api('GET', '/agents/approvals')).body.data).toEqual([]);
  });

  it('runs a transfer-in at once, and refuses in AUTO what the platform would refuse, recording nothing', async () => {
    const t = await build();
    const h = await household(t, 'Jon Amari', 5_000);
    const agent = await connectedAgent(t, h.customer.id);
    const pulled = await agent.api('POST', '/agents/me/transfer-in', {
      source: { accountId: h.bank.id },
      destination: { accountId: h.usd.id },
      amount: 2_000,
    });
    expect(pulled.status, pulled.text).toBe(201);
    expect(pulled.body).toMatchObject({
      status: 'APPROVED',
      type: 'TRANSFER_IN',
      transferDetails: { amount: 2_000, sourceAccountId: h.bank.id, destinationAccountId: h.usd.id },
      transaction: { type: 'INCOMING' },
    });

    // More than the balance: the platform's own 400, and no action.
    const short = await agent.api('POST', '/agents/me/transfer-out', out(h.usd.id, h.bank.id, 20_000));
    expect(short.status).toBe(400);
    const platform = await t.api('POST', '/transfer-out', { body: out(h.usd.id, h.bank.id, 20_000) });
    expect(short.body.code).toBe(platform.body.code);
    const bad = await agent.api('POST', '/agents/me/transfer-out', { source: { accountId: h.usd.id }, amount: -1 });
    expect(bad.status).toBe(400);
    expect(bad.body.details.errors.map((e: any) => e.field).sort()).toEqual(['amount', 'destination']);
    expect((await agent.api('GET', '/agents/me/actions')).body.data).toHaveLength(1);
  });

  it("keeps to its customer: another customer's accounts are 404 and its actions invisible", async () => {
    const t = await build();
    const mine = await household(t, 'Kai Moreno');
    const theirs = await household(t, 'Lea Brandt');
    const agent = await connectedAgent(t, mine.customer.id);
    const other = await connectedAgent(t, theirs.customer.id);
    const foreignSource = await agent.api('POST', '/agents/me/transfer-out', out(theirs.usd.id, mine.bank.id, 1_000));
    expect(foreignSource.status).toBe(404);
    expect(foreignSource.body.details.field).toBe('source.accountId');
    const foreignBank = await agent.api('POST', '/agents/me/transfer-out', out(mine.usd.id, theirs.bank.id, 1_000));
    expect(foreignBank.status).toBe(404);
    expect(foreignBank.body.details.field).toBe('destination.accountId');
    expect(await balanceOf(t, theirs.usd.id)).toBe(200_000);

    const theirAction = await other.api('POST', '/agents/me/transfer-out', out(theirs.usd.id, theirs.bank.id, 1_000));
    expect(theirAction.status).toBe(201);
    expect((await agent.api('GET', `/agents/me/actions/${theirAction.body.id}`)).status).toBe(404);
    expect((await agent.api('GET', '/agents/me/actions')).body.data).toEqual([]);
    // The platform names the action with its own agent only.
    const wrongAgent = await t.api('POST', `/agents/${agent.id}/actions/${theirAction.body.id}/approve`);
    expect(wrongAgent.status).toBe(404);
  });

  it('refuses each money operation without its permission (403 naming it)', async () => {
    const t = await build();
    const h = await household(t, 'Mo Farah');
    const viewer = await connectedAgent(t, h.customer.id, ['VIEW_TRANSACTIONS']);
    for (const [path, body] of [
      ['/agents/me/transfer-out', out(h.usd.id, h.bank.id, 1_000)],
      ['/agents/me/transfer-in', { source: { accountId: h.bank.id }, destination: { accountId: h.usd.id }, amount: 1 }],
    ] as const) {
      const refused = await viewer.api('POST', path, body);
      expect(refused.status, path).toBe(403);
      expect(refused.body).toMatchObject({ code: 'FORBIDDEN', details: { requiredPermission: 'CREATE_TRANSFERS' } });
    }
    const quote = await viewer.api('POST', '/agents/me/quotes', quoteBody(h.usd.id, h.mxn.id));
    expect(quote.body).toMatchObject({ code: 'FORBIDDEN', details: { requiredPermission: 'CREATE_QUOTES' } });

    const quoter = await connectedAgent(t, h.customer.id, ['CREATE_QUOTES']);
    const made = await quoter.api('POST', '/agents/me/quotes', quoteBody(h.usd.id, h.mxn.id));
    expect(made.status, made.text).toBe(201);
    const execute = await quoter.api('POST', `/agents/me/quotes/${made.body.id}/execute`);
    expect(execute.status).toBe(403);
    expect(execute.body.details.requiredPermission).toBe('EXECUTE_QUOTES');
    const immediate = await quoter.api('POST', '/agents/me/quotes', {
      ...quoteBody(h.usd.id, h.mxn.id),
      immediatelyExecute: true,
    });
    expect(immediate.status).toBe(403);
    expect(immediate.body.details.requiredPermission).toBe('EXECUTE_QUOTES');
    expect(await balanceOf(t, h.usd.id)).toBe(200_000);
  });

  it('cannot act while paused, and can once resumed', async () => {
    const t = await build();
    const h = await household(t, 'Nia Okoro');
    const agent = await connectedAgent(t, h.customer.id);
    expect((await t.api('PATCH', `/agents/${agent.id}`, { body: { isPaused: true } })).status).toBe(200);
    const refused = await agent.api('POST', '/agents/me/transfer-out', out(h.usd.id, h.bank.id, 1_000));
    expect(refused.status).toBe(403);
    expect(refused.body.details.reason).toBe('AGENT_PAUSED');
    // Reading is not acting.
    expect((await agent.api('GET', '/agents/me/actions')).status).toBe(200);
    await t.api('PATCH', `/agents/${agent.id}`, { body: { isPaused: false } });
    expect((await agent.api('POST', '/agents/me/transfer-out', out(h.usd.id, h.bank.id, 1_000))).status).toBe(201);
  });
});

describe('spending limits', () => {
  it('refuses past the per-transaction, daily and count limits, and the day resets on the sandbox clock', async () => {
    const t = await build();
    const h = await household(t, 'Omar Haddad', 1_000_000);
    const agent = await connectedAgent(t, h.customer.id, undefined, {
      spendingLimits: { currency: 'USD', perTransactionLimit: 20_000, dailyLimit: 30_000, dailyTransactionLimit: 3 },
      approvalThresholds: { currency: 'USD', amount: 100_000 },
    });
    const send = (amount: number) => agent.api('POST', '/agents/me/transfer-out', out(h.usd.id, h.bank.id, amount));

    const tooBig = await send(20_001);
    expect(tooBig.status).toBe(403);
    expect(tooBig.body).toMatchObject({
      code: 'FORBIDDEN',
      details: { limit: 'perTransactionLimit', limitAmount: 20_000, currency: 'USD', amount: 20_001 },
    });
    expect((await send(20_000)).status).toBe(201);
    const overDaily = await send(10_001);
    expect(overDaily.status).toBe(403);
    expect(overDaily.body.details).toMatchObject({ limit: 'dailyLimit', limitAmount: 30_000, dailySpend: 20_000 });
    expect((await send(5_000)).status).toBe(201);
    expect((await send(5_000)).status).toBe(201);
    const overCount = await send(1);
    expect(overCount.status).toBe(403);
    expect(overCount.body.details).toMatchObject({ limit: 'dailyTransactionLimit', limitAmount: 3 });
    const me = await agent.api('GET', '/agents/me');
    expect(me.body.usage).toMatchObject({ dailyTransactionCount: 3, dailySpend: 30_000, monthlySpend: 30_000 });

    // The next UTC day on the sandbox clock: the daily counts start again.
    const last = (await agent.api('GET', '/agents/me/actions?limit=1')).body.data[0];
    const toMidnight =
      Math.ceil((Date.parse(`${me.body.usage.dailyResetDate}T00:00:00Z`) - Date.parse(last.createdAt)) / 1000) + 1;
    await t.advanceClock(toMidnight);
    const next = await agent.api('GET', '/agents/me');
    expect(next.body.usage).toMatchObject({ dailyTransactionCount: 0, dailySpend: 0 });
    expect((await send(20_000)).status).toBe(201);
  });

  it('measures other currencies in the limit currency, and an account rule overrides the limit and mode', async () => {
    const t = await build();
    const h = await household(t, 'Pia Lind', 1_000_000);
    const agent = await connectedAgent(t, h.customer.id, undefined, {
      // 10 EUR per transaction: 100 USD is more than that at any rate railyard uses.
      spendingLimits: { currency: 'EUR', perTransactionLimit: 1_000 },
    });
    const refused = await agent.api('POST', '/agents/me/transfer-out', out(h.usd.id, h.bank.id, 10_000));
    expect(refused.status).toBe(403);
    expect(refused.body.details).toMatchObject({ limit: 'perTransactionLimit', currency: 'EUR' });
    expect(refused.body.details.amount).toBeGreaterThan(1_000);
    expect((await agent.api('POST', '/agents/me/transfer-out', out(h.usd.id, h.bank.id, 500))).status).toBe(201);

    await t.api('PATCH', `/agents/${agent.id}/policy`, {
      body: {
        accountRestrictions: {
          accountRules: [{ accountId: h.usd.id, perTransactionLimit: 100_000, executionMode: 'APPROVAL_REQUIRED' }],
        },
        approvalThresholds: { currency: 'USD', amount: null },
      },
    });
    const held = await agent.api('POST', '/agents/me/transfer-out', out(h.usd.id, h.bank.id, 10_000));
    expect(held.status).toBe(201);
    expect(held.body.status).toBe('PENDING_APPROVAL');
  });

  it('refuses an account outside allowedAccountIds', async () => {
    const t = await build();
    const h = await household(t, 'Quin Adler');
    const all = (await t.api('GET', `/customers/internal-accounts?customerId=${h.customer.id}`)).body.data;
    const eur = all.find((a: any) => a.id !== h.usd.id);
    const agent = await connectedAgent(t, h.customer.id, undefined, {
      accountRestrictions: { allowedAccountIds: [eur.id] },
    });
    const refused = await agent.api('POST', '/agents/me/transfer-out', out(h.usd.id, h.bank.id, 1_000));
    expect(refused.status).toBe(403);
    expect(refused.body.details).toEqual({ accountId: h.usd.id, allowedAccountIds: [eur.id] });
  });

  it('holds the limits under concurrent requests: exactly as many pass as the daily limit allows', async () => {
    const t = await build();
    const h = await household(t, 'Rui Costa', 1_000_000);
    const agent = await connectedAgent(t, h.customer.id, undefined, {
      spendingLimits: { currency: 'USD', perTransactionLimit: 10_000, dailyLimit: 30_000 },
    });
    const replies = await Promise.all(
      Array.from({ length: 6 }, () => agent.api('POST', '/agents/me/transfer-out', out(h.usd.id, h.bank.id, 10_000))),
    );
    expect(replies.map((r) => r.status).sort()).toEqual([201, 201, 201, 403, 403, 403]);
    expect(await balanceOf(t, h.usd.id)).toBe(970_000);
    expect((await agent.api('GET', '/agents/me')).body.usage.dailySpend).toBe(30_000);
  });
});

describe('approvals', () => {
  it('holds an action over the threshold, sends the webhook, and runs it once approved (twice: 409)', async () => {
    const t = await build();
    const h = await household(t, 'Sol Ferrer');
    const agent = await connectedAgent(t, h.customer.id);
    const held = await agent.api('POST', '/agents/me/transfer-out', out(h.usd.id, h.bank.id, 30_000));
    expect(held.status, held.text).toBe(201);
    expect(held.body.status).toBe('PENDING_APPROVAL');
    expect(held.body.transaction).toBeUndefined();
    expect(await balanceOf(t, h.usd.id)).toBe(200_000);
    const events = await eventsOf(t, held.body.id);
    expect(events.map((e) => e.type)).toEqual(['AGENT_ACTION.PENDING_APPROVAL']);
    expect(events[0]!.data).toEqual(held.body);
    // A held action counts in usage until it is decided.
    expect((await agent.api('GET', '/agents/me')).body.usage.dailySpend).toBe(30_000);

    const queue = await t.api('GET', '/agents/approvals');
    expect(queue.body.data.map((a: any) => a.id)).toEqual([held.body.id]);
    const approved = await t.api('POST', `/agents/${agent.id}/actions/${held.body.id}/approve`);
    expect(approved.status, approved.text).toBe(200);
    expect(approved.body).toMatchObject({ status: 'APPROVED', transaction: { sentAmount: { amount: 30_000 } } });
    expect(await balanceOf(t, h.usd.id)).toBe(170_000);
    expect((await agent.api('GET', `/agents/me/actions/${held.body.id}`)).body).toEqual(approved.body);

    for (const decision of ['approve', 'reject']) {
      const twice = await t.api('POST', `/agents/${agent.id}/actions/${held.body.id}/${decision}`);
      expect(twice.status).toBe(409);
      expect(twice.body.code).toBe('CONFLICT');
    }
    expect(await balanceOf(t, h.usd.id)).toBe(170_000);
    expect((await t.api('GET', '/agents/approvals')).body.data).toEqual([]);
    expect((await t.api('POST', `/agents/${agent.id}/actions/AgentAction:nope/approve`)).status).toBe(404);
  });

  it('rejects in APPROVAL_REQUIRED mode with a reason: nothing moves and the usage is released', async () => {
    const t = await build();
    const h = await household(t, 'Tao Lin');
    const agent = await connectedAgent(t, h.customer.id, undefined, { defaultExecutionMode: 'APPROVAL_REQUIRED' });
    const held = await agent.api('POST', '/agents/me/transfer-out', out(h.usd.id, h.bank.id, 1_000));
    expect(held.body.status).toBe('PENDING_APPROVAL');
    const rejected = await t.api('POST', `/agents/${agent.id}/actions/${held.body.id}/reject`, {
      body: { reason: 'Rent is paid by standing order' },
    });
    expect(rejected.status, rejected.text).toBe(200);
    expect(rejected.body).toMatchObject({ status: 'REJECTED', rejectionReason: 'Rent is paid by standing order' });
    expect(rejected.body.transaction).toBeUndefined();
    expect(await balanceOf(t, h.usd.id)).toBe(200_000);
    expect((await agent.api('GET', '/agents/me')).body.usage).toMatchObject({
      dailySpend: 0,
      dailyTransactionCount: 0,
    });
    const bare = await agent.api('POST', '/agents/me/transfer-out', out(h.usd.id, h.bank.id, 1_000));
    const noReason = await t.api('POST', `/agents/${agent.id}/actions/${bare.body.id}/reject`);
    expect(noReason.status).toBe(200);
    expect(noReason.body.status).toBe('REJECTED');
    expect(noReason.body.rejectionReason).toBeUndefined();
    expect((await agent.api('GET', '/agents/me/actions?status=REJECTED')).body.data).toHaveLength(2);
  });

  it('fails an approved action whose money is gone', async () => {
    const t = await build();
    const h = await household(t, 'Uma Patel', 40_000);
    const agent = await connectedAgent(t, h.customer.id);
    const held = await agent.api('POST', '/agents/me/transfer-out', out(h.usd.id, h.bank.id, 30_000));
    expect(held.body.status).toBe('PENDING_APPROVAL');
    expect((await t.api('POST', '/transfer-out', { body: out(h.usd.id, h.bank.id, 20_000) })).status).toBe(201);
    const approved = await t.api('POST', `/agents/${agent.id}/actions/${held.body.id}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.body.status).toBe('FAILED');
    expect(approved.body.transaction).toBeUndefined();
    expect(await balanceOf(t, h.usd.id)).toBe(20_000);
    expect((await agent.api('GET', '/agents/me')).body.usage.dailySpend).toBe(0);
  });

  it('pages the approval queue in both orders with its filters; bad values are 400', async () => {
    const t = await build();
    const a = await household(t, 'Vic Stone');
    const b = await household(t, 'Wen Zhou');
    const first = await connectedAgent(t, a.customer.id, undefined, { defaultExecutionMode: 'APPROVAL_REQUIRED' });
    const second = await connectedAgent(t, b.customer.id, undefined, { defaultExecutionMode: 'APPROVAL_REQUIRED' });
    const ids: string[] = [];
    for (const [agent, h] of [
      [first, a],
      [second, b],
      [first, a],
      [second, b],
      [first, a],
    ] as const) {
      const reply = await agent.api('POST', '/agents/me/transfer-out', out(h.usd.id, h.bank.id, 1_000));
      expect(reply.body.status).toBe('PENDING_APPROVAL');
      ids.push(reply.body.id);
      await t.advanceClock(1);
    }
    const desc = await t.api('GET', '/agents/approvals');
    expect(desc.body).toMatchObject({ hasMore: false, totalCount: 5 });
    expect(desc.body.data.map((x: any) => x.id)).toEqual([...ids].reverse());
    const asc = await t.api('GET', '/agents/approvals?sortOrder=asc');
    expect(asc.body.data.map((x: any) => x.id)).toEqual(ids);

    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await t.api('GET', `/agents/approvals?limit=2&sortOrder=asc${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      paged.push(...page.body.data.map((x: any) => x.id));
      cursor = page.body.nextCursor;
    } while (cursor !== undefined);
    expect(paged).toEqual(ids);

    const byAgent = await t.api('GET', `/agents/approvals?agentId=${first.id}`);
    expect(byAgent.body.data.map((x: any) => x.id)).toEqual([ids[4], ids[2], ids[0]]);
    const byCustomer = await t.api('GET', `/agents/approvals?customerId=${b.customer.id}&sortOrder=asc`);
    expect(byCustomer.body.data.map((x: any) => x.id)).toEqual([ids[1], ids[3]]);
    const created = desc.body.data.map((x: any) => x.createdAt);
    const window = await t.api('GET', `/agents/approvals?startDate=${created[3]}&endDate=${created[1]}`);
    expect(window.body.data.map((x: any) => x.id)).toEqual([ids[3], ids[2], ids[1]]);

    for (const query of ['limit=0', 'limit=101', 'sortOrder=up', 'startDate=yesterday', 'cursor=bm9wZQ']) {
      const bad = await t.api('GET', `/agents/approvals?${query}`);
      expect(bad.status, query).toBe(400);
      expect(bad.body.code).toBe('INVALID_INPUT');
    }
    // The agent's own list reads what it can and never refuses (its contract has no 400).
    const own = await first.api('GET', '/agents/me/actions?limit=2');
    expect(own.body.data.map((x: any) => x.id)).toEqual([ids[4], ids[2]]);
    expect((await first.api('GET', '/agents/me/actions?limit=0')).status).toBe(200);
  });
});

describe('agent quotes', () => {
  it("creates and executes its customer's quote in AUTO, and cannot name another customer's account", async () => {
    const t = await build();
    const h = await household(t, 'Xia Ming');
    const other = await household(t, 'Yara Nassar');
    const agent = await connectedAgent(t, h.customer.id);
    const made = await agent.api('POST', '/agents/me/quotes', quoteBody(h.usd.id, h.mxn.id));
    expect(made.status, made.text).toBe(201);
    expect(made.body.status).toBe('PENDING');
    const foreign = await agent.api('POST', '/agents/me/quotes', quoteBody(h.usd.id, other.mxn.id));
    expect(foreign.status).toBe(400);
    expect(foreign.body.details.errors.map((e: any) => e.field)).toEqual(['destination.accountId']);
    const foreignSource = await agent.api('POST', '/agents/me/quotes', quoteBody(other.usd.id, h.mxn.id));
    expect(foreignSource.status).toBe(400);

    const executed = await agent.api('POST', `/agents/me/quotes/${made.body.id}/execute`);
    expect(executed.status, executed.text).toBe(200);
    expect(executed.body).toMatchObject({
      status: 'APPROVED',
      type: 'EXECUTE_QUOTE',
      quote: { id: made.body.id, status: 'COMPLETED' },
      transaction: { id: made.body.transactionId, quoteId: made.body.id },
    });
    expect(executed.body.transferDetails).toBeUndefined();
    expect(await balanceOf(t, h.usd.id)).toBe(200_000 - made.body.totalSendingAmount);
    const twice = await agent.api('POST', `/agents/me/quotes/${made.body.id}/execute`);
    expect(twice.status).toBe(409);

    const theirs = await t.api('POST', '/quotes', { body: quoteBody(other.usd.id, other.mxn.id) });
    expect((await agent.api('POST', `/agents/me/quotes/${theirs.body.id}/execute`)).status).toBe(404);

    const immediate = await agent.api('POST', '/agents/me/quotes', {
      ...quoteBody(h.usd.id, h.mxn.id),
      immediatelyExecute: true,
    });
    expect(immediate.status, immediate.text).toBe(201);
    expect(immediate.body.status).toBe('COMPLETED');
    const actions = (await agent.api('GET', '/agents/me/actions')).body.data;
    expect(actions.map((a: any) => [a.type, a.status, a.quote.id])).toEqual([
      ['EXECUTE_QUOTE', 'APPROVED', immediate.body.id],
      ['EXECUTE_QUOTE', 'APPROVED', made.body.id],
    ]);
  });

  it('holds a quote over the threshold; approved after the quote expired, the action FAILS', async () => {
    const t = await build();
    const h = await household(t, 'Zed Ortiz');
    const agent = await connectedAgent(t, h.customer.id);
    const made = await agent.api('POST', '/agents/me/quotes', {
      ...quoteBody(h.usd.id, h.mxn.id),
      lockedCurrencyAmount: 30_000,
    });
    expect(made.status, made.text).toBe(201);
    const held = await agent.api('POST', `/agents/me/quotes/${made.body.id}/execute`);
    expect(held.status, held.text).toBe(200);
    expect(held.body).toMatchObject({ status: 'PENDING_APPROVAL', quote: { id: made.body.id, status: 'PENDING' } });
    expect(held.body.transaction).toBeUndefined();
    // One held execution per quote.
    expect((await agent.api('POST', `/agents/me/quotes/${made.body.id}/execute`)).status).toBe(409);

    // The quote expires while the action waits: the action fails with it, and is decided.
    await t.advanceClock(16 * 60);
    const expired = await agent.api('GET', `/agents/me/actions/${held.body.id}`);
    expect(expired.body).toMatchObject({ status: 'FAILED', quote: { status: 'EXPIRED' } });
    expect((await t.api('POST', `/agents/${agent.id}/actions/${held.body.id}/approve`)).status).toBe(409);
    expect(await balanceOf(t, h.usd.id)).toBe(200_000);
    expect((await agent.api('GET', '/agents/me')).body.usage.dailySpend).toBe(0);

    // Approved after the platform executed the quote itself: the run is refused, the action FAILS.
    const quote = await agent.api('POST', '/agents/me/quotes', {
      ...quoteBody(h.usd.id, h.mxn.id),
      lockedCurrencyAmount: 30_000,
    });
    const waiting1 = await agent.api('POST', `/agents/me/quotes/${quote.body.id}/execute`);
    expect(waiting1.body.status).toBe('PENDING_APPROVAL');
    expect((await t.api('POST', `/quotes/${quote.body.id}/execute`)).status).toBe(200);
    const late = await t.api('POST', `/agents/${agent.id}/actions/${waiting1.body.id}/approve`);
    expect(late.status).toBe(200);
    expect(late.body.status).toBe('FAILED');
    expect(late.body.transaction).toBeUndefined();
    const afterPlatform = await balanceOf(t, h.usd.id);
    expect(afterPlatform).toBe(200_000 - quote.body.totalSendingAmount);

    // Held with immediatelyExecute: the quote stays PENDING until approved, then runs.
    const immediate = await agent.api('POST', '/agents/me/quotes', {
      ...quoteBody(h.usd.id, h.mxn.id),
      lockedCurrencyAmount: 30_000,
      immediatelyExecute: true,
    });
    expect(immediate.status).toBe(201);
    expect(immediate.body.status).toBe('PENDING');
    const waiting = (await t.api('GET', '/agents/approvals')).body.data;
    expect(waiting.map((a: any) => a.quote.id)).toEqual([immediate.body.id]);
    const run = await t.api('POST', `/agents/${agent.id}/actions/${waiting[0].id}/approve`);
    expect(run.body).toMatchObject({ status: 'APPROVED', quote: { status: 'COMPLETED' } });
    expect(await balanceOf(t, h.usd.id)).toBe(afterPlatform - immediate.body.totalSendingAmount);
  });
});

describe('what happens to actions later', () => {
  it('fails an approved transfer whose payment fails on the rail, and releases its usage', async () => {
    const t = await build();
    const h = await household(t, 'Ada Brook');
    const slow = await t.api('POST', '/customers/external-accounts', {
      body: { ...accountBody('USD_ACCOUNT', '005'), customerId: h.customer.id },
    });
    const agent = await connectedAgent(t, h.customer.id);
    const sent = await agent.api('POST', '/agents/me/transfer-out', out(h.usd.id, slow.body.id, 10_000));
    expect(sent.body).toMatchObject({ status: 'APPROVED', transaction: { status: 'PROCESSING' } });
    expect((await agent.api('GET', '/agents/me')).body.usage.dailySpend).toBe(10_000);
    await t.advanceClock(31);
    const after = await agent.api('GET', `/agents/me/actions/${sent.body.id}`);
    expect(after.body).toMatchObject({ status: 'FAILED', transaction: { status: 'FAILED' } });
    expect((await agent.api('GET', '/agents/me')).body.usage).toMatchObject({
      dailySpend: 0,
      dailyTransactionCount: 0,
    });
  });

  it("rejects a deleted agent's waiting actions", async () => {
    const t = await build();
    const h = await household(t, 'Bo Lind');
    const agent = await connectedAgent(t, h.customer.id, undefined, { defaultExecutionMode: 'APPROVAL_REQUIRED' });
    const held = await agent.api('POST', '/agents/me/transfer-out', out(h.usd.id, h.bank.id, 1_000));
    expect(held.body.status).toBe('PENDING_APPROVAL');
    expect((await t.api('DELETE', `/agents/${agent.id}`)).status).toBe(204);
    expect((await t.api('GET', '/agents/approvals')).body.data).toEqual([]);
    expect((await t.api('POST', `/agents/${agent.id}/actions/${held.body.id}/approve`)).status).toBe(404);
    const row = await t.deps.db.k
      .selectFrom('agent_actions')
      .select(['status', 'rejection_reason'])
      .where('id', '=', held.body.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'REJECTED', rejection_reason: 'The agent was deleted' });
  });

  it("refuses real-time funding and never describes another customer's account", async () => {
    const t = await build();
    const h = await household(t, 'Cai Moss');
    const other = await household(t, 'Dee Park');
    const agent = await connectedAgent(t, h.customer.id);
    const realtime = await agent.api('POST', '/agents/me/quotes', {
      source: { sourceType: 'REALTIME_FUNDING', currency: 'USD', customerId: h.customer.id },
      destination: { destinationType: 'ACCOUNT', accountId: h.mxn.id },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 10_000,
    });
    expect(realtime.status).toBe(400);
    expect(realtime.body.details.errors.map((e: any) => e.field)).toEqual(['source.sourceType']);
    const foreign = await agent.api('POST', '/agents/me/quotes', {
      ...quoteBody(other.usd.id, h.mxn.id),
      source: { sourceType: 'ACCOUNT', accountId: other.usd.id, customerId: h.customer.id },
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.details.errors.map((e: any) => e.field)).toEqual(['source.accountId']);
    expect(foreign.text).not.toContain(other.customer.id);
  });
});

describe("the server's OpenAPI document", () => {
  it('declares all 27 agent operations, the agent paths with the AgentAuth bearer scheme', async () => {
    const t = await build();
    const doc = (await t.api('GET', '/openapi.json', { auth: null })).body;
    const agentOps = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
      Object.values(item)
        .filter((o) => o.tags?.[0] === 'Agent Management' || o.tags?.[0] === 'Agent Operations')
        .map((o) => ({ path, id: o.operationId, tag: o.tags[0], security: o.security })),
    );
    expect(agentOps).toHaveLength(27);
    for (const op of agentOps) {
      const expected = op.tag === 'Agent Operations' ? [{ AgentAuth: [] }] : undefined;
      if (expected !== undefined) expect(op.security, op.id).toEqual(expected);
      else expect(op.security, op.id).not.toEqual([{ AgentAuth: [] }]);
    }
    expect(doc.components.securitySchemes.AgentAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });
});
