import { describe, expect, it } from 'vitest';
import { accountBody } from '../fixtures/accounts.js';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { connectedAgent } from '../fixtures/agents.js';
import { build } from '../helper.js';

describe("an agent's external accounts", () => {
  it("creates, lists, reads and deletes its customer's accounts, and sees no other", async () => {
    const t = await build();
    const mine = await createCustomer(t, individualBody('Ada Quint'));
    const theirs = await createCustomer(t, individualBody('Ben Roth'));
    const agent = await connectedAgent(t, mine.id);
    const created = await agent.api('POST', '/agents/me/external-accounts', accountBody('USD_ACCOUNT', '000'));
    expect(created.status, created.text).toBe(201);
    expect(created.body.customerId).toBe(mine.id);
    const other = await t.api('POST', '/customers/external-accounts', {
      body: { ...accountBody('USD_ACCOUNT', '000'), customerId: theirs.id },
    });
    expect(other.status).toBe(201);

    const list = await agent.api('GET', '/agents/me/external-accounts');
    expect(list.status).toBe(200);
    expect(list.body.data.map((a: any) => a.id)).toEqual([created.body.id]);
    expect((await agent.api('GET', `/agents/me/external-accounts/${created.body.id}`)).body).toEqual(created.body);
    // Another customer's account does not exist for this agent.
    expect((await agent.api('GET', `/agents/me/external-accounts/${other.body.id}`)).status).toBe(404);
    expect((await agent.api('DELETE', `/agents/me/external-accounts/${other.body.id}`)).status).toBe(404);
    expect((await t.api('GET', `/customers/external-accounts/${other.body.id}`)).status).toBe(200);
    // Naming another customer in the body is refused.
    const foreign = await agent.api('POST', '/agents/me/external-accounts', {
      ...accountBody('EUR_ACCOUNT', '000'),
      customerId: theirs.id,
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.details.errors.map((e: any) => e.field)).toEqual(['customerId']);

    expect((await agent.api('DELETE', `/agents/me/external-accounts/${created.body.id}`)).status).toBe(204);
    expect((await agent.api('GET', '/agents/me/external-accounts')).body.data).toEqual([]);
  });

  it('needs MANAGE_EXTERNAL_ACCOUNTS to change them and a read permission to see them (401: no 403 declared)', async () => {
    const t = await build();
    const customer = await createCustomer(t, individualBody('Cy Dane'));
    const reader = await connectedAgent(t, customer.id, ['VIEW_TRANSACTIONS']);
    const refused = await reader.api('POST', '/agents/me/external-accounts', accountBody('USD_ACCOUNT', '000'));
    expect(refused.status).toBe(401);
    expect(refused.body.details.requiredPermission).toBe('MANAGE_EXTERNAL_ACCOUNTS');
    expect((await reader.api('GET', '/agents/me/external-accounts')).status).toBe(200);
    expect((await t.api('GET', `/customers/external-accounts?customerId=${customer.id}`)).body.data).toEqual([]);
    const quoter = await connectedAgent(t, customer.id, ['CREATE_QUOTES']);
    const hidden = await quoter.api('GET', '/agents/me/external-accounts');
    expect(hidden.status).toBe(401);
    expect(hidden.body.details.requiredPermission).toBe('VIEW_TRANSACTIONS');
  });
});
