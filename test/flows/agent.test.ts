// An agent end to end over plain HTTP against a running server, as an agent's own code
// would drive it: its token from a device code, then only `Authorization: Bearer` requests;
// the platform (Basic) decides what waits for approval.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { accountBody } from '../fixtures/accounts.js';
import { individualBody } from '../fixtures/customers.js';
import { startServer, type ServerProcess } from '../fixtures/server.js';
import { agentBody } from '../fuzz/baselines.js';

const servers: ServerProcess[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.kill('SIGKILL')));
});

describe('an agent over HTTP', () => {
  it('connects with its device code, moves money within its policy, and waits for approval above it', async () => {
    const server = await startServer({ DATA_DIR: mkdtempSync(join(tmpdir(), 'railyard-agent-')) });
    servers.push(server);
    const platform = server.request;

    // The platform's side: a customer with money and a bank account, and an agent for it.
    const customer = await platform('POST', '/customers', individualBody('Ines Duarte'));
    expect(customer.status).toBe(201);
    const usd = (await platform('GET', `/customers/internal-accounts?customerId=${customer.body.id}&currency=USD`)).body
      .data[0];
    expect((await platform('POST', `/sandbox/internal-accounts/${usd.id}/fund`, { amount: 100_000 })).status).toBe(200);
    const bank = await platform('POST', '/customers/external-accounts', {
      ...accountBody('USD_ACCOUNT', '000'),
      customerId: customer.body.id,
    });
    expect(bank.status).toBe(201);
    const created = await platform('POST', '/agents', agentBody(customer.body.id));
    expect(created.status).toBe(201);
    const agentId = created.body.agent.id;

    // The agent's side: plain fetch, no Basic credentials anywhere.
    const agent = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const response = await fetch(`${server.baseUrl}${path}`, {
        method,
        headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await response.text();
      return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
    };
    const redeemed = await agent('POST', `/agents/device-codes/${created.body.deviceCode.code}/redeem`);
    expect(redeemed.status).toBe(200);
    expect(redeemed.body.agentId).toBe(agentId);
    const bearer = { authorization: `Bearer ${redeemed.body.accessToken}` };
    expect((await agent('GET', '/agents/me')).status).toBe(401);
    const me = await agent('GET', '/agents/me', undefined, bearer);
    expect(me.body).toMatchObject({ id: agentId, isConnected: true, customerId: customer.body.id });
    // Its token opens the agent paths only.
    expect((await agent('GET', '/customers', undefined, bearer)).status).toBe(401);

    const send = (amount: number, key: string) =>
      agent(
        'POST',
        '/agents/me/transfer-out',
        { source: { accountId: usd.id }, destination: { accountId: bank.body.id }, amount },
        { ...bearer, 'idempotency-key': key },
      );
    const small = await send(5_000, 'groceries-1');
    expect(small.status).toBe(201);
    expect(small.body).toMatchObject({ status: 'APPROVED', transaction: { sentAmount: { amount: 5_000 } } });
    const large = await send(40_000, 'rent-1');
    expect(large.status).toBe(201);
    expect(large.body.status).toBe('PENDING_APPROVAL');

    // The agent polls its action; the platform approves it.
    const queue = await platform('GET', `/agents/approvals?agentId=${agentId}`);
    expect(queue.body.data.map((a: any) => a.id)).toEqual([large.body.id]);
    const approved = await platform('POST', `/agents/${agentId}/actions/${large.body.id}/approve`);
    expect(approved.status).toBe(200);
    const polled = await agent('GET', `/agents/me/actions/${large.body.id}`, undefined, bearer);
    expect(polled.body).toMatchObject({ status: 'APPROVED', transaction: { sentAmount: { amount: 40_000 } } });
    const balance = (await platform('GET', `/customers/internal-accounts?customerId=${customer.body.id}&currency=USD`))
      .body.data[0].balance.amount;
    expect(balance).toBe(55_000);
    const usage = (await agent('GET', '/agents/me', undefined, bearer)).body.usage;
    expect(usage).toMatchObject({ dailyTransactionCount: 2, dailySpend: 45_000 });

    // Deleted: the token stops at once.
    expect((await platform('DELETE', `/agents/${agentId}`)).status).toBe(204);
    expect((await agent('GET', '/agents/me/actions', undefined, bearer)).status).toBe(401);
  });
});
