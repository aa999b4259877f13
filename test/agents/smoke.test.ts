import { expect, it } from 'vitest';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { build } from '../helper.js';

it('creates an agent, redeems its code, and the agent reads itself with its bearer token', async () => {
  const t = await build();
  const customer = await createCustomer(t, individualBody('Mia Chen'));
  const policy = {
    permissions: ['VIEW_TRANSACTIONS', 'CREATE_TRANSFERS'],
    defaultExecutionMode: 'AUTO',
    spendingLimits: { currency: 'USD', perTransactionLimit: 50_000, dailyLimit: 100_000 },
  };
  const created = await t.api('POST', '/agents', { body: { name: 'Budget helper', customerId: customer.id, policy } });
  expect(created.status, created.text).toBe(201);
  const code = created.body.deviceCode.code;
  const redeemed = await t.api('POST', `/agents/device-codes/${code}/redeem`, { auth: null });
  expect(redeemed.status, redeemed.text).toBe(200);
  const bearer = { authorization: `Bearer ${redeemed.body.accessToken}` };
  const me = await t.api('GET', '/agents/me', { auth: null, headers: bearer });
  expect(me.status, me.text).toBe(200);
  expect(me.body).toMatchObject({ id: created.body.agent.id, isConnected: true, customerId: customer.id });
  const accounts = await t.api('GET', '/agents/me/internal-accounts', { auth: null, headers: bearer });
  expect(accounts.status, accounts.text).toBe(200);
  expect(accounts.body.data.every((a: any) => a.customerId === customer.id)).toBe(true);
  expect((await t.api('GET', '/agents/me')).status).toBe(401);
  expect((await t.api('GET', '/customers', { auth: null, headers: bearer })).status).toBe(401);
  expect((await t.api('POST', `/agents/device-codes/${code}/redeem`, { auth: null })).status).toBe(400);
  expect((await t.api('DELETE', `/agents/${created.body.agent.id}`)).status).toBe(204);
  expect((await t.api('GET', '/agents/me', { auth: null, headers: bearer })).status).toBe(401);
});
