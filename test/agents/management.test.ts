// Agent management over HTTP: creating agents, redeeming their device codes, the bearer
// token's scope, updates of the agent and its policy, and listing. Each describe shares one
// app; the clock is a manual one so times and reset dates are exact.

import { beforeAll, describe, expect, it } from 'vitest';
import { agentBody } from '../fuzz/baselines.js';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { build, ManualClock, type Tenant, type TestApp } from '../helper.js';

// The last ten minutes of a year: the daily and the monthly reset both fall in the next year.
const START = '2025-12-31T23:50:00.000Z';
const UNKNOWN_AGENT = 'Agent:01936b2e-7c1a-7d3e-8f00-000000000000';
const CODE_PATTERN = /^[A-HJ-KMNP-Z2-9]{4}-[A-HJ-KMNP-Z2-9]{4}$/;

const newApp = () => build({ clock: new ManualClock(Date.parse(START)) });

async function clockNow(t: Tenant): Promise<string> {
  const reply = await t.raw('GET', '/_railyard/clock');
  expect(reply.status, reply.text).toBe(200);
  return reply.body.now;
}

function plusMs(isoTime: string, ms: number): string {
  return new Date(Date.parse(isoTime) + ms).toISOString();
}

async function create(t: Tenant, body: Record<string, unknown>) {
  const reply = await t.api('POST', '/agents', { body });
  expect(reply.status, reply.text).toBe(201);
  return reply.body as { agent: Record<string, any>; deviceCode: Record<string, any> };
}

async function redeem(t: Tenant, code: string): Promise<string> {
  const reply = await t.api('POST', `/agents/device-codes/${code}/redeem`, { auth: null });
  expect(reply.status, reply.text).toBe(200);
  return reply.body.accessToken;
}

const bearer = (token: string) => ({ auth: null, headers: { authorization: `Bearer ${token}` } });

async function getAgent(t: Tenant, id: string) {
  const reply = await t.api('GET', `/agents/${id}`);
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
}

async function accountsOf(t: Tenant, customerId: string): Promise<Record<string, any>[]> {
  const reply = await t.api('GET', `/customers/internal-accounts?customerId=${customerId}&limit=100`);
  expect(reply.status, reply.text).toBe(200);
  expect(reply.body.data.length).toBeGreaterThan(0);
  return reply.body.data;
}

function fieldsOf(reply: { status: number; body: any; text: string }): string[] {
  expect(reply.status, reply.text).toBe(400);
  expect(reply.body).toMatchObject({ status: 400, code: 'INVALID_INPUT' });
  return reply.body.details.errors.map((e: { field: string }) => e.field).sort();
}

describe('createAgent', () => {
  let t: TestApp;
  let customer: Record<string, any>;
  let other: Record<string, any>;

  beforeAll(async () => {
    t = await newApp();
    customer = await createCustomer(t, individualBody('Mia Chen'));
    other = await createCustomer(t, individualBody('Noah Patel'));
  });

  it('answers 201 with the agent (every field) and its first device code', async () => {
    const [account] = await accountsOf(t, customer.id);
    const policy = {
      permissions: ['EXECUTE_QUOTES', 'VIEW_TRANSACTIONS', 'EXECUTE_QUOTES', 'CREATE_QUOTES', 'VIEW_TRANSACTIONS'],
      defaultExecutionMode: 'APPROVAL_REQUIRED',
      spendingLimits: {
        currency: 'USD',
        perTransactionLimit: 50_000,
        dailyLimit: 200_000,
        dailyTransactionLimit: 10,
        monthlyLimit: null,
      },
      accountRestrictions: {
        allowedAccountIds: [account!.id],
        accountRules: [{ accountId: account!.id, executionMode: 'AUTO', perTransactionLimit: 10_000 }],
      },
      approvalThresholds: { currency: 'USD', amount: 25_000 },
    };
    const reply = await t.api('POST', '/agents', {
      body: { name: 'Groceries helper', customerId: customer.id, policy },
    });
    expect(reply.status, reply.text).toBe(201);
    const expectedPolicy = { ...policy, permissions: ['VIEW_TRANSACTIONS', 'CREATE_QUOTES', 'EXECUTE_QUOTES'] };
    expect(reply.body).toEqual({
      agent: {
        id: expect.stringMatching(/^Agent:[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        name: 'Groceries helper',
        customerId: customer.id,
        isPaused: false,
        isConnected: false,
        policy: expectedPolicy,
        usage: {
          dailyTransactionCount: 0,
          dailySpend: 0,
          dailyResetDate: '2026-01-01',
          monthlySpend: 0,
          monthlyResetMonth: '2026-01',
        },
        createdAt: START,
        updatedAt: START,
      },
      deviceCode: {
        code: expect.stringMatching(CODE_PATTERN),
        agentId: reply.body.agent.id,
        expiresAt: '2026-01-01T00:05:00.000Z',
        redeemed: false,
      },
    });
    expect(await getAgent(t, reply.body.agent.id)).toEqual(reply.body.agent);
    const status = await t.api('GET', `/agents/device-codes/${reply.body.deviceCode.code}/status`);
    expect(status.status, status.text).toBe(200);
    expect(status.body).toEqual({ code: reply.body.deviceCode.code, redeemed: false });
  });

  it('keeps the minimal policy as given and drops members the contract does not define', async () => {
    const policy = {
      permissions: ['CREATE_TRANSFERS'],
      defaultExecutionMode: 'AUTO',
      spendingLimits: { currency: 'EUR', perTransactionLimit: 0, note: 'not a field' },
      extra: { nested: true },
    };
    const { agent } = await create(t, { name: 'Bare', customerId: customer.id, policy, color: 'blue' });
    const expected = {
      permissions: ['CREATE_TRANSFERS'],
      defaultExecutionMode: 'AUTO',
      spendingLimits: { currency: 'EUR', perTransactionLimit: 0 },
    };
    expect(agent.policy).toEqual(expected);
    expect((await getAgent(t, agent.id)).policy).toEqual(expected);
  });

  it('names every unknown reference and policy problem at once, creating nothing', async () => {
    const before = (await t.api('GET', '/agents')).body.totalCount;
    const body = agentBody('Customer:01936b2e-7c1a-7d3e-8f00-00000000dead');
    body.policy.spendingLimits.currency = 'XQZ';
    body.policy.approvalThresholds = { amount: 1_000 } as never;
    // Whose accounts these are cannot be judged without a customer: not reported.
    const [account] = await accountsOf(t, customer.id);
    (body.policy as Record<string, unknown>).accountRestrictions = { allowedAccountIds: [account!.id] };
    const reply = await t.api('POST', '/agents', { body });
    expect(fieldsOf(reply)).toEqual([
      'customerId',
      'policy.approvalThresholds.currency',
      'policy.spendingLimits.currency',
    ]);
    expect((await t.api('GET', '/agents')).body.totalCount).toBe(before);
  });

  it("refuses accounts that are not the customer's own, with the other policy problems", async () => {
    const before = (await t.api('GET', '/agents')).body.totalCount;
    const [own] = await accountsOf(t, customer.id);
    const [foreign] = await accountsOf(t, other.id);
    const body = agentBody(customer.id) as Record<string, any>;
    body.policy.accountRestrictions = {
      allowedAccountIds: [foreign!.id, own!.id, 'InternalAccount:01936b2e-7c1a-7d3e-8f00-000000000000'],
      accountRules: [{ accountId: own!.id }, { accountId: foreign!.id, executionMode: 'AUTO' }],
    };
    body.policy.approvalThresholds = { currency: 'ABC', amount: 5 };
    const reply = await t.api('POST', '/agents', { body });
    expect(fieldsOf(reply)).toEqual([
      'policy.accountRestrictions.accountRules[1].accountId',
      'policy.accountRestrictions.allowedAccountIds[0]',
      'policy.accountRestrictions.allowedAccountIds[2]',
      'policy.approvalThresholds.currency',
    ]);
    expect((await t.api('GET', '/agents')).body.totalCount).toBe(before);
  });

  it('names each schema violation: missing name, bad permission, negative limit', async () => {
    const before = (await t.api('GET', '/agents')).body.totalCount;
    const { name: _name, ...body } = agentBody(customer.id) as Record<string, any>;
    body.policy.permissions = ['VIEW_TRANSACTIONS', 'SPEND_EVERYTHING'];
    body.policy.spendingLimits.perTransactionLimit = -1;
    const reply = await t.api('POST', '/agents', { body });
    expect(fieldsOf(reply)).toEqual(['name', 'policy.permissions[1]', 'policy.spendingLimits.perTransactionLimit']);
    expect((await t.api('GET', '/agents')).body.totalCount).toBe(before);
  });

  it('refuses a deleted customer', async () => {
    const gone = await createCustomer(t, individualBody('Ivy Gone'));
    const deleted = await t.api('DELETE', `/customers/${gone.id}`);
    expect(deleted.status, deleted.text).toBe(200);
    expect(fieldsOf(await t.api('POST', '/agents', { body: agentBody(gone.id) }))).toEqual(['customerId']);
  });

  it("refuses another platform's customer as unknown", async () => {
    const other = await t.newPlatform();
    const theirs = await createCustomer(other, individualBody('Lee Other'));
    expect(fieldsOf(await t.api('POST', '/agents', { body: agentBody(theirs.id) }))).toEqual(['customerId']);
    expect((await other.api('GET', '/agents')).body).toEqual({ data: [], hasMore: false, totalCount: 0 });
  });
  it('shows reset dates that follow the sandbox clock', async () => {
    const { agent } = await create(t, agentBody(customer.id));
    await t.advanceClock(24 * 3600 + 31 * 24 * 3600); // past 2026-02-01 00:00 UTC
    expect(await clockNow(t)).toBe('2026-02-01T23:50:00.000Z');
    expect((await getAgent(t, agent.id)).usage).toEqual({
      dailyTransactionCount: 0,
      dailySpend: 0,
      dailyResetDate: '2026-02-02',
      monthlySpend: 0,
      monthlyResetMonth: '2026-03',
    });
  });
});

describe('redeemAgentDeviceCode and getAgentDeviceCodeStatus', () => {
  let t: TestApp;
  let customer: Record<string, any>;

  beforeAll(async () => {
    t = await newApp();
    customer = await createCustomer(t, individualBody('Ana Ruiz'));
  });

  it('redeems a code once: the token, then 400 naming code; status and isConnected follow', async () => {
    const { agent, deviceCode } = await create(t, agentBody(customer.id));
    const status = `/agents/device-codes/${deviceCode.code}/status`;
    expect((await t.api('GET', status)).body).toEqual({ code: deviceCode.code, redeemed: false });

    const first = await t.api('POST', `/agents/device-codes/${deviceCode.code}/redeem`, { auth: null });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({
      agentId: agent.id,
      agentName: agent.name,
      accessToken: expect.stringMatching(/^agt_[A-Za-z0-9_-]{43}$/),
      policy: agent.policy,
    });
    expect((await t.api('GET', status)).body).toEqual({ code: deviceCode.code, redeemed: true });
    const now = await clockNow(t);
    const connected = await getAgent(t, agent.id);
    expect(connected).toEqual({ ...agent, isConnected: true, updatedAt: now });

    const again = await t.api('POST', `/agents/device-codes/${deviceCode.code}/redeem`, { auth: null });
    expect(fieldsOf(again)).toEqual(['code']);
    expect(await getAgent(t, agent.id)).toEqual(connected);
    // The first token still works: a refused second redemption issues nothing and revokes nothing.
    const me = await t.api('GET', '/agents/me', bearer(first.body.accessToken));
    expect(me.status, me.text).toBe(200);
    expect(me.body).toEqual(connected);
  });

  it('answers 404 for a code that was never issued', async () => {
    const unknown = await t.api('POST', '/agents/device-codes/ZZZZ-ZZZZ/redeem', { auth: null });
    expect(unknown.status, unknown.text).toBe(404);
    expect(unknown.body).toMatchObject({ status: 404 });
    expect((await t.api('GET', '/agents/device-codes/ZZZZ-ZZZZ/status')).status).toBe(404);
  });

  it('replaces earlier codes on regenerate; after connection regenerate is 409', async () => {
    const { agent, deviceCode: old } = await create(t, agentBody(customer.id));
    const now = await clockNow(t);
    const regenerated = await t.api('POST', `/agents/${agent.id}/device-codes`);
    expect(regenerated.status, regenerated.text).toBe(201);
    expect(regenerated.body).toEqual({
      code: expect.stringMatching(CODE_PATTERN),
      agentId: agent.id,
      expiresAt: plusMs(now, 15 * 60_000),
      redeemed: false,
    });
    expect(regenerated.body.code).not.toBe(old.code);
    const third = await t.api('POST', `/agents/${agent.id}/device-codes`);
    expect(third.status, third.text).toBe(201);

    for (const replaced of [old.code, regenerated.body.code]) {
      const refused = await t.api('POST', `/agents/device-codes/${replaced}/redeem`, { auth: null });
      expect(fieldsOf(refused)).toEqual(['code']);
      expect((await t.api('GET', `/agents/device-codes/${replaced}/status`)).body).toEqual({
        code: replaced,
        redeemed: false,
      });
    }
    expect((await getAgent(t, agent.id)).isConnected).toBe(false);

    await redeem(t, third.body.code);
    const connected = await getAgent(t, agent.id);
    const conflict = await t.api('POST', `/agents/${agent.id}/device-codes`);
    expect(conflict.status, conflict.text).toBe(409);
    expect(conflict.body).toMatchObject({ status: 409, code: 'CONFLICT' });
    expect(await getAgent(t, agent.id)).toEqual(connected);
    expect((await t.api('GET', `/agents/device-codes/${third.body.code}/status`)).body.redeemed).toBe(true);
  });

  it('regenerate of an unknown agent is 404', async () => {
    const reply = await t.api('POST', `/agents/${UNKNOWN_AGENT}/device-codes`);
    expect(reply.status, reply.text).toBe(404);
  });

  it("keeps one platform's codes from another", async () => {
    const { agent, deviceCode } = await create(t, agentBody(customer.id));
    const other = await t.newPlatform();
    expect((await other.api('GET', `/agents/device-codes/${deviceCode.code}/status`)).status).toBe(404);
    expect((await other.api('POST', `/agents/${agent.id}/device-codes`)).status).toBe(404);
    // The code itself still works (it is the proof; no platform is named when redeeming).
    expect((await t.api('GET', `/agents/device-codes/${deviceCode.code}/status`)).body.redeemed).toBe(false);
  });

  it('a code lasts 15 minutes of the sandbox clock', async () => {
    const early = await create(t, agentBody(customer.id));
    const late = await create(t, agentBody(customer.id));
    await t.advanceClock(15 * 60 - 1);
    await redeem(t, early.deviceCode.code);
    await t.advanceClock(2); // 15 min + 1 s
    const before = await getAgent(t, late.agent.id);
    const expired = await t.api('POST', `/agents/device-codes/${late.deviceCode.code}/redeem`, { auth: null });
    expect(fieldsOf(expired)).toEqual(['code']);
    expect(expired.body.details.errors[0].message).toContain(late.deviceCode.expiresAt);
    expect(await getAgent(t, late.agent.id)).toEqual(before);
    expect(before.isConnected).toBe(false);
    expect((await t.api('GET', `/agents/device-codes/${late.deviceCode.code}/status`)).body.redeemed).toBe(false);
    // A fresh code works again.
    const fresh = await t.api('POST', `/agents/${late.agent.id}/device-codes`);
    expect(fresh.status, fresh.text).toBe(201);
    await redeem(t, fresh.body.code);
    expect((await getAgent(t, late.agent.id)).isConnected).toBe(true);
  });
});

describe('agent bearer tokens', () => {
  let t: TestApp;
  let customer: Record<string, any>;
  let sibling: Record<string, any>;

  beforeAll(async () => {
    t = await newApp();
    customer = await createCustomer(t, individualBody('Omar Haddad'));
    sibling = await createCustomer(t, individualBody('Lina Haddad'));
  });

  it('is the only credential /agents/me takes, and it opens no platform path', async () => {
    const { agent, deviceCode } = await create(t, agentBody(customer.id));
    const token = await redeem(t, deviceCode.code);
    const basic = await t.api('GET', '/agents/me');
    expect(basic.status, basic.text).toBe(401);
    expect(basic.body).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
    expect((await t.api('GET', '/agents/me', { auth: null })).status).toBe(401);
    expect((await t.api('GET', '/agents/me/internal-accounts')).status).toBe(401);
    for (const path of ['/customers', '/agents', `/agents/${agent.id}`]) {
      const reply = await t.api('GET', path, bearer(token));
      expect(reply.status, `${path} ${reply.text}`).toBe(401);
    }
    const patched = await t.api('PATCH', `/agents/${agent.id}`, { ...bearer(token), body: { isPaused: true } });
    expect(patched.status).toBe(401);
    expect((await getAgent(t, agent.id)).isPaused).toBe(false);
    for (const header of [
      'Bearer',
      'Bearer ',
      `Bearer ${token} extra`,
      `Bearer ${token}x`,
      `Token ${token}`,
      `Bearer agt_${'A'.repeat(43)}`,
      token,
    ]) {
      const reply = await t.api('GET', '/agents/me', { auth: null, headers: { authorization: header } });
      expect(reply.status, `${header} ${reply.text}`).toBe(401);
    }
    const me = await t.api('GET', '/agents/me', { auth: null, headers: { authorization: `bearer  ${token}` } });
    expect(me.status, me.text).toBe(200);
  });

  it("lists the agent's customer's internal accounts only", async () => {
    const { deviceCode } = await create(t, agentBody(customer.id));
    const token = await redeem(t, deviceCode.code);
    const reply = await t.api('GET', '/agents/me/internal-accounts', bearer(token));
    expect(reply.status, reply.text).toBe(200);
    const own = await accountsOf(t, customer.id);
    expect(reply.body.data).toEqual(own);
    expect(reply.body).toMatchObject({ hasMore: false, totalCount: own.length });
    const siblingIds = new Set((await accountsOf(t, sibling.id)).map((a) => a.id));
    expect(reply.body.data.some((a: { id: string }) => siblingIds.has(a.id))).toBe(false);

    // Another platform's agent sees its own customer's accounts, none of these.
    const other = await t.newPlatform();
    const theirs = await createCustomer(other, individualBody('Zoe Other'));
    const theirToken = await redeem(t, (await create(other, agentBody(theirs.id))).deviceCode.code);
    const their = await t.api('GET', '/agents/me/internal-accounts', bearer(theirToken));
    expect(their.status, their.text).toBe(200);
    expect(their.body.data).toEqual(await accountsOf(other, theirs.id));
    expect(their.body.data.every((a: { customerId: string }) => a.customerId === theirs.id)).toBe(true);
    const theirMe = await t.api('GET', '/agents/me', bearer(theirToken));
    expect(theirMe.body.customerId).toBe(theirs.id);
  });

  it('reads leniently: limit=abc and a cursor never issued answer 200', async () => {
    const { deviceCode } = await create(t, agentBody(customer.id));
    const token = await redeem(t, deviceCode.code);
    const all = await t.api('GET', '/agents/me/internal-accounts', bearer(token));
    for (const query of ['limit=abc', 'limit=0', 'limit=101']) {
      const reply = await t.api('GET', `/agents/me/internal-accounts?${query}`, bearer(token));
      expect(reply.status, `${query} ${reply.text}`).toBe(200);
      expect(reply.body).toEqual(all.body);
    }
    const bogus = await t.api('GET', '/agents/me/internal-accounts?cursor=not-a-cursor', bearer(token));
    expect(bogus.status, bogus.text).toBe(200);
    expect(bogus.body).toEqual({ data: [], hasMore: false });
  });

  it('without VIEW_TRANSACTIONS the agent reads itself but not the accounts', async () => {
    const body = agentBody(customer.id);
    body.policy.permissions = ['CREATE_TRANSFERS'];
    const { agent, deviceCode } = await create(t, body);
    const token = await redeem(t, deviceCode.code);
    const accounts = await t.api('GET', '/agents/me/internal-accounts', bearer(token));
    expect(accounts.status, accounts.text).toBe(401);
    expect(accounts.body).toMatchObject({
      status: 401,
      code: 'UNAUTHORIZED',
      details: { requiredPermission: 'VIEW_TRANSACTIONS' },
    });
    const me = await t.api('GET', '/agents/me', bearer(token));
    expect(me.status, me.text).toBe(200);
    expect(me.body).toEqual(await getAgent(t, agent.id));
  });

  it('stops working the moment the agent is deleted', async () => {
    const { agent, deviceCode } = await create(t, agentBody(customer.id));
    const token = await redeem(t, deviceCode.code);
    expect((await t.api('GET', '/agents/me', bearer(token))).status).toBe(200);
    const deleted = await t.api('DELETE', `/agents/${agent.id}`);
    expect(deleted.status, deleted.text).toBe(204);
    expect(deleted.text).toBe('');
    expect((await t.api('GET', '/agents/me', bearer(token))).status).toBe(401);
    expect((await t.api('GET', '/agents/me/internal-accounts', bearer(token))).status).toBe(401);
    expect((await t.api('GET', `/agents/${agent.id}`)).status).toBe(404);
    expect((await t.api('DELETE', `/agents/${agent.id}`)).status).toBe(404);
    expect((await t.api('PATCH', `/agents/${agent.id}`, { body: { name: 'Back' } })).status).toBe(404);
    expect((await t.api('PATCH', `/agents/${agent.id}/policy`, { body: { permissions: [] } })).status).toBe(404);
    expect((await t.api('POST', `/agents/${agent.id}/device-codes`)).status).toBe(404);
    const listed = await t.api('GET', `/agents?customerId=${customer.id}&limit=100`);
    expect(listed.body.data.map((a: { id: string }) => a.id)).not.toContain(agent.id);
  });

  it('a deleted agent never connects: its unredeemed code is refused', async () => {
    const { agent, deviceCode } = await create(t, agentBody(customer.id));
    expect((await t.api('DELETE', `/agents/${agent.id}`)).status).toBe(204);
    const reply = await t.api('POST', `/agents/device-codes/${deviceCode.code}/redeem`, { auth: null });
    expect(reply.status, reply.text).toBe(404);
    expect((await t.api('GET', `/agents/${agent.id}`)).status).toBe(404);
  });

  it("deleting another platform's agent is 404 and leaves it working", async () => {
    const { agent, deviceCode } = await create(t, agentBody(customer.id));
    const token = await redeem(t, deviceCode.code);
    const other = await t.newPlatform();
    expect((await other.api('DELETE', `/agents/${agent.id}`)).status).toBe(404);
    expect((await other.api('GET', `/agents/${agent.id}`)).status).toBe(404);
    expect((await t.api('GET', '/agents/me', bearer(token))).status).toBe(200);
  });
});

describe('updateAgent and updateAgentPolicy', () => {
  let t: TestApp;
  let customer: Record<string, any>;
  let other: Record<string, any>;

  beforeAll(async () => {
    t = await newApp();
    customer = await createCustomer(t, individualBody('Rosa Diaz'));
    other = await createCustomer(t, individualBody('Sam Diaz'));
  });

  it('renames, pauses and resumes', async () => {
    const { agent } = await create(t, agentBody(customer.id));
    await t.advanceClock(60);
    const now = await clockNow(t);
    const renamed = await t.api('PATCH', `/agents/${agent.id}`, { body: { name: 'Rent payer' } });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toEqual({ ...agent, name: 'Rent payer', updatedAt: now });
    expect(await getAgent(t, agent.id)).toEqual(renamed.body);

    const paused = await t.api('PATCH', `/agents/${agent.id}`, { body: { isPaused: true } });
    expect(paused.status, paused.text).toBe(200);
    expect(paused.body).toEqual({ ...renamed.body, isPaused: true });
    const found = await t.api('GET', `/agents?isPaused=true&customerId=${customer.id}`);
    expect(found.body.data.map((a: { id: string }) => a.id)).toEqual([agent.id]);
    const running = await t.api('GET', `/agents?isPaused=false&customerId=${customer.id}&limit=100`);
    expect(running.body.data.map((a: { id: string }) => a.id)).not.toContain(agent.id);

    const both = await t.api('PATCH', `/agents/${agent.id}`, { body: { isPaused: false, name: 'Rent' } });
    expect(both.body).toEqual({ ...renamed.body, name: 'Rent', isPaused: false });
    expect((await t.api('GET', `/agents?isPaused=true&customerId=${customer.id}`)).body.data).toEqual([]);
  });

  it('refuses an empty or invalid body, and an unknown agent, changing nothing', async () => {
    const { agent } = await create(t, agentBody(customer.id));
    const before = await getAgent(t, agent.id);
    expect(fieldsOf(await t.api('PATCH', `/agents/${agent.id}`, { body: {} }))).toEqual(['name']);
    expect(fieldsOf(await t.api('PATCH', `/agents/${agent.id}`, { body: { name: '', isPaused: 'yes' } }))).toEqual([
      'isPaused',
    ]);
    expect(await getAgent(t, agent.id)).toEqual(before);
    const unknown = await t.api('PATCH', `/agents/${UNKNOWN_AGENT}`, { body: { name: 'Nobody' } });
    expect(unknown.status, unknown.text).toBe(404);
    expect((await t.api('GET', `/agents/${UNKNOWN_AGENT}`)).status).toBe(404);
    expect((await t.api('DELETE', `/agents/${UNKNOWN_AGENT}`)).status).toBe(404);
    expect((await t.api('GET', '/agents/not-an-agent')).status).toBe(404);
  });

  it('merges a policy patch field by field and shows it to the agent', async () => {
    const { agent, deviceCode } = await create(t, agentBody(customer.id));
    const token = await redeem(t, deviceCode.code);
    await t.advanceClock(30);
    const now = await clockNow(t);

    const limit = await t.api('PATCH', `/agents/${agent.id}/policy`, {
      body: { spendingLimits: { perTransactionLimit: 75_000 } },
    });
    expect(limit.status, limit.text).toBe(200);
    const policy1 = {
      ...agent.policy,
      spendingLimits: { ...agent.policy.spendingLimits, perTransactionLimit: 75_000 },
    };
    expect(limit.body).toEqual({ ...agent, isConnected: true, policy: policy1, updatedAt: now });
    expect(limit.body.policy.spendingLimits).toEqual({
      currency: 'USD',
      perTransactionLimit: 75_000,
      dailyLimit: 200_000,
      dailyTransactionLimit: 20,
    });

    const noDaily = await t.api('PATCH', `/agents/${agent.id}/policy`, {
      body: { spendingLimits: { dailyLimit: null, monthlyLimit: 900_000 } },
    });
    expect(noDaily.status, noDaily.text).toBe(200);
    expect(noDaily.body.policy.spendingLimits).toEqual({
      currency: 'USD',
      perTransactionLimit: 75_000,
      dailyLimit: null,
      dailyTransactionLimit: 20,
      monthlyLimit: 900_000,
    });

    const perms = await t.api('PATCH', `/agents/${agent.id}/policy`, {
      body: { permissions: ['MANAGE_EXTERNAL_ACCOUNTS', 'VIEW_TRANSACTIONS', 'MANAGE_EXTERNAL_ACCOUNTS'] },
    });
    expect(perms.status, perms.text).toBe(200);
    const finalPolicy = {
      ...noDaily.body.policy,
      permissions: ['VIEW_TRANSACTIONS', 'MANAGE_EXTERNAL_ACCOUNTS'],
    };
    expect(perms.body.policy).toEqual(finalPolicy);

    const mode = await t.api('PATCH', `/agents/${agent.id}/policy`, {
      body: { defaultExecutionMode: 'APPROVAL_REQUIRED', approvalThresholds: { amount: null } },
    });
    expect(mode.status, mode.text).toBe(200);
    const expected = {
      ...finalPolicy,
      defaultExecutionMode: 'APPROVAL_REQUIRED',
      approvalThresholds: { amount: null },
    };
    expect(mode.body.policy).toEqual(expected);

    expect((await getAgent(t, agent.id)).policy).toEqual(expected);
    const me = await t.api('GET', '/agents/me', bearer(token));
    expect(me.status, me.text).toBe(200);
    expect(me.body).toEqual(mode.body);
  });

  it('drops members of a policy patch the contract does not define', async () => {
    const { agent } = await create(t, agentBody(customer.id));
    const reply = await t.api('PATCH', `/agents/${agent.id}/policy`, {
      body: {
        spendingLimits: { dailyTransactionLimit: 3, weekly: 5 },
        approvalThresholds: { currency: 'EUR', amount: 7, by: 'x' },
        x: 1,
      },
    });
    expect(reply.status, reply.text).toBe(200);
    const expected = {
      ...agent.policy,
      spendingLimits: { ...agent.policy.spendingLimits, dailyTransactionLimit: 3 },
      approvalThresholds: { currency: 'EUR', amount: 7 },
    };
    expect(reply.body.policy).toEqual(expected);
    expect((await getAgent(t, agent.id)).policy).toEqual(expected);
  });

  it('refuses a policy patch naming each problem without the policy. prefix, changing nothing', async () => {
    const { agent } = await create(t, agentBody(customer.id));
    const before = await getAgent(t, agent.id);
    const [foreign] = await accountsOf(t, other.id);
    const reply = await t.api('PATCH', `/agents/${agent.id}/policy`, {
      body: {
        spendingLimits: { currency: 'XQZ' },
        approvalThresholds: { amount: 10 },
        accountRestrictions: { allowedAccountIds: [foreign!.id], accountRules: [{ accountId: foreign!.id }] },
      },
    });
    expect(fieldsOf(reply)).toEqual([
      'accountRestrictions.accountRules[0].accountId',
      'accountRestrictions.allowedAccountIds[0]',
      'approvalThresholds.currency',
      'spendingLimits.currency',
    ]);
    const schema = await t.api('PATCH', `/agents/${agent.id}/policy`, {
      body: { permissions: ['ROOT'], spendingLimits: { perTransactionLimit: -5 } },
    });
    expect(fieldsOf(schema)).toEqual(['permissions[0]', 'spendingLimits.perTransactionLimit']);
    expect(await getAgent(t, agent.id)).toEqual(before);

    const unknown = await t.api('PATCH', `/agents/${UNKNOWN_AGENT}/policy`, { body: { permissions: [] } });
    expect(unknown.status, unknown.text).toBe(404);
  });
});

describe('listAgents', () => {
  let t: TestApp;
  let alice: Record<string, any>;
  let bob: Record<string, any>;
  /** Alice's five agents, oldest first, each a second after the one before. */
  const agents: Record<string, any>[] = [];
  let bobAgent: Record<string, any>;

  beforeAll(async () => {
    t = await newApp();
    alice = await createCustomer(t, individualBody('Alice Park'));
    bob = await createCustomer(t, individualBody('Bob Park'));
    for (let i = 0; i < 5; i++) {
      await t.advanceClock(1);
      agents.push((await create(t, { ...agentBody(alice.id), name: `Alice agent ${i}` })).agent);
    }
    await t.advanceClock(1);
    const created = await create(t, agentBody(bob.id));
    bobAgent = created.agent;
    await redeem(t, created.deviceCode.code);
    await t.advanceClock(1);
    const paused = await t.api('PATCH', `/agents/${agents[1]!.id}`, { body: { isPaused: true } });
    expect(paused.status, paused.text).toBe(200);
  });

  const ids = (reply: { body: { data: { id: string }[] } }) => reply.body.data.map((a) => a.id);

  it('filters by customerId, isConnected, isPaused and createdAfter', async () => {
    const newestFirst = [...agents].reverse().map((a) => a.id);
    const byAlice = await t.api('GET', `/agents?customerId=${alice.id}`);
    expect(byAlice.status, byAlice.text).toBe(200);
    expect(byAlice.body).toMatchObject({ hasMore: false, totalCount: 5 });
    expect(ids(byAlice)).toEqual(newestFirst);
    expect(ids(await t.api('GET', `/agents?customerId=${bob.id}`))).toEqual([bobAgent.id]);
    expect(ids(await t.api('GET', '/agents?isConnected=true'))).toEqual([bobAgent.id]);
    expect(ids(await t.api('GET', '/agents?isConnected=false'))).toEqual(newestFirst);
    expect(ids(await t.api('GET', '/agents?isPaused=true'))).toEqual([agents[1]!.id]);
    expect((await t.api('GET', '/agents?isPaused=false')).body.totalCount).toBe(5);
    const after = encodeURIComponent(agents[2]!.createdAt);
    expect(ids(await t.api('GET', `/agents?createdAfter=${after}&customerId=${alice.id}`))).toEqual(
      newestFirst.slice(0, 3),
    );
    expect(ids(await t.api('GET', `/agents?createdBefore=${after}`))).toEqual(newestFirst.slice(2));
    const pausedAt = encodeURIComponent((await getAgent(t, agents[1]!.id)).updatedAt);
    expect(ids(await t.api('GET', `/agents?updatedAfter=${pausedAt}`))).toEqual([agents[1]!.id]);
    expect((await t.api('GET', `/agents?updatedBefore=${pausedAt}`)).body.totalCount).toBe(6);
    const unknownCustomer = await t.api('GET', '/agents?customerId=Customer:nobody');
    expect(unknownCustomer.body).toEqual({ data: [], hasMore: false, totalCount: 0 });
    // A listed agent is the agent as getAgentById shows it.
    expect(byAlice.body.data[0]).toEqual(await getAgent(t, agents[4]!.id));
  });

  it('pages newest first with limit=2 and a cursor', async () => {
    const seen: string[] = [];
    const pages: { hasMore: boolean; count: number }[] = [];
    let cursor: string | undefined;
    do {
      const reply = await t.api(
        'GET',
        `/agents?customerId=${alice.id}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(reply.status, reply.text).toBe(200);
      expect(reply.body.totalCount).toBe(5);
      expect('nextCursor' in reply.body).toBe(reply.body.hasMore);
      pages.push({ hasMore: reply.body.hasMore, count: reply.body.data.length });
      seen.push(...ids(reply));
      cursor = reply.body.nextCursor;
    } while (cursor !== undefined);
    expect(pages).toEqual([
      { hasMore: true, count: 2 },
      { hasMore: true, count: 2 },
      { hasMore: false, count: 1 },
    ]);
    expect(seen).toEqual([...agents].reverse().map((a) => a.id));
    expect(new Set(seen).size).toBe(5);
  });

  it('refuses a bad limit or cursor, naming the parameter', async () => {
    for (const limit of ['0', '101', 'abc', '-1', '2.5']) {
      expect(fieldsOf(await t.api('GET', `/agents?limit=${limit}`)), limit).toEqual(['limit']);
    }
    expect(fieldsOf(await t.api('GET', '/agents?cursor=bm90LWEtY3Vyc29y'))).toEqual(['cursor']);
    expect(fieldsOf(await t.api('GET', '/agents?isPaused=maybe'))).toEqual(['isPaused']);
    expect(fieldsOf(await t.api('GET', '/agents?createdAfter=yesterday'))).toEqual(['createdAfter']);
  });

  it("never lists another platform's agents", async () => {
    const other = await t.newPlatform();
    expect((await other.api('GET', '/agents')).body).toEqual({ data: [], hasMore: false, totalCount: 0 });
    expect((await other.api('GET', `/agents?customerId=${alice.id}`)).body.data).toEqual([]);
    const theirs = await createCustomer(other, individualBody('Cleo Other'));
    const { agent } = await create(other, agentBody(theirs.id));
    expect(ids(await other.api('GET', '/agents'))).toEqual([agent.id]);
    const mine = await t.api('GET', '/agents?limit=100');
    expect(mine.body.totalCount).toBe(6);
    expect(ids(mine)).not.toContain(agent.id);
  });
});
