// The request journal (GET /_railyard/requests) and its report (GET /_railyard/requests/report),
// over HTTP on the store the suite runs on: what is kept of each request, the window, the
// secrets redacted, requests that got no answer and the fault marks beside them, and the
// report's findings on a session crafted to have each kind.
//
// Fault rules are another area's (src/http/request-marks.ts is where they leave their mark):
// here, routes added under the Grid base path for the test stand in for them, doing what a
// fired rule does (mark the request, then close the connection, or answer 429 or 5xx).

import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Type } from '@sinclair/typebox';
import { sql } from 'kysely';
import type { FastifyPluginAsync } from 'fastify';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { systemClock } from '../../src/clock.js';
import { BASE_PATH } from '../../src/config.js';
import { dropPgSchema, openDb } from '../../src/db/index.js';
import type { Deps } from '../../src/http/deps.js';
import { apiError } from '../../src/http/errors.js';
import { createPlatform } from '../../src/modules/platform/service.js';
import { markFault } from '../../src/http/request-marks.js';
import { op } from '../../src/http/route.js';
import { IdempotencyHeaders } from '../../src/http/schemas.js';
import { connectedAgent } from '../fixtures/agents.js';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { journal, storedRows } from '../fixtures/journal.js';
import { externalAccount, fundedUsd, platformAccount, transferOut } from '../fixtures/money.js';
import { accountQuoteBody } from '../fixtures/quotes.js';
import { berlin, verifyPhone } from '../fixtures/sca.js';
import { receiverFor } from '../events/support.js';
import { basic, build, databaseUrl, testConfig, type Tenant, type TestApp } from '../helper.js';

async function report(t: Tenant) {
  const reply = await t.raw('GET', '/_railyard/requests/report');
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
}

describe('GET /_railyard/requests', () => {
  it('keeps each request under the Grid base path with both clocks, its answer and who sent it', async () => {
    const t = await build();
    await t.advanceClock(3600);
    const source = await fundedUsd(t);
    const bank = await externalAccount(t, 'USD_ACCOUNT');
    const sent = await transferOut(t, source.id, bank.id, 1_500, { 'idempotency-key': 'payout-77' });
    expect(sent.status, sent.text).toBe(201);
    const refused = await t.api('POST', '/transfer-out', { body: { source: { accountId: source.id }, amount: -5 } });
    expect(refused.status).toBe(400);

    const page = await journal(t);
    // Newest first: the refusal, the transfer, the account, the funding, the account list.
    expect(page.data.map((r) => r.operationId)).toEqual([
      'createTransferOut',
      'createTransferOut',
      'createPlatformExternalAccount',
      'sandboxFundInternalAccount',
      'listPlatformInternalAccounts',
    ]);
    expect(page.totalCount).toBe(5);
    const [bad, good] = page.data;
    expect(good).toMatchObject({
      method: 'POST',
      path: `${BASE_PATH}/transfer-out`,
      status: 201,
      answered: true,
      requestId: sent.headers['x-request-id'],
      idempotencyKey: 'payout-77',
      tokenId: t.tokenId,
      requestBody: { source: { accountId: source.id }, destination: { accountId: bank.id }, amount: 1_500 },
      responseBody: { id: sent.body.id, status: sent.body.status },
    });
    expect(good.errorCode).toBeUndefined();
    expect(good.durationMs).toBeGreaterThanOrEqual(0);
    // The sandbox clock is an hour ahead of the server's.
    const ahead = Date.parse(good.sandboxTime) - Date.parse(good.receivedAt);
    expect(ahead).toBeGreaterThan(3_599_000);
    expect(ahead).toBeLessThan(3_601_000);
    expect(bad).toMatchObject({ status: 400, errorCode: 'INVALID_INPUT', answered: true, requestBody: { amount: -5 } });
    expect(bad.responseBody).toEqual(refused.body);
    expect(bad.idempotencyKey).toBeUndefined();

    // One request by id, with the same content.
    const one = await t.raw('GET', `/_railyard/requests/${encodeURIComponent(good.id)}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(good);
  });

  it('filters by operation, status, code, key and time, and pages with a cursor', async () => {
    const t = await build();
    const source = await fundedUsd(t);
    const bank = await externalAccount(t, 'USD_ACCOUNT');
    for (let i = 0; i < 3; i++) await transferOut(t, source.id, bank.id, 100 + i, { 'idempotency-key': `k-${i}` });
    await t.api('POST', '/transfer-out', { body: {} });
    // since is inclusive, to the millisecond: a pause on each side keeps midway apart from both.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const midway = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await t.api('GET', '/config');

    expect((await journal(t, '?operationId=createTransferOut')).totalCount).toBe(4);
    expect((await journal(t, '?status=201')).data.map((r) => r.idempotencyKey)).toEqual([
      'k-2',
      'k-1',
      'k-0',
      undefined,
    ]);
    expect((await journal(t, '?code=INVALID_INPUT')).data.map((r) => r.status)).toEqual([400]);
    expect((await journal(t, '?idempotencyKey=k-1')).data.map((r) => r.requestBody.amount)).toEqual([101]);
    expect((await journal(t, `?since=${encodeURIComponent(midway)}`)).data.map((r) => r.operationId)).toEqual([
      'getPlatformConfig',
    ]);

    const first = await journal(t, '?limit=3');
    expect(first).toMatchObject({ hasMore: true, totalCount: 8 });
    const rest = await journal(t, `?limit=3&cursor=${first.nextCursor}`);
    const last = await journal(t, `?limit=3&cursor=${rest.nextCursor}`);
    expect(last.hasMore).toBe(false);
    const ids = [...first.data, ...rest.data, ...last.data].map((r) => r.id);
    expect(new Set(ids).size).toBe(8);
    expect(ids).toEqual((await journal(t, '?limit=100')).data.map((r) => r.id));

    for (const bad of ['status=99', 'status=abc', 'since=yesterday', 'limit=0', 'cursor=nope']) {
      const reply = await t.raw('GET', `/_railyard/requests?${bad}`);
      expect(reply.status, bad).toBe(400);
      expect(reply.body.code).toBe('INVALID_INPUT');
    }
    const missing = await t.raw('GET', '/_railyard/requests/Request:00000000-0000-7000-8000-000000000000');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ status: 404, code: 'REFERENCE_NOT_FOUND' });
  });

  it("keeps each platform's requests to itself, and leaves out refused credentials and X-Railyard-Journal: off", async () => {
    const t = await build();
    const other = await t.newPlatform();
    await t.api('GET', '/config');
    await other.api('GET', '/customers');
    await t.api('GET', '/config', { auth: { username: t.clientId, password: 'not-the-secret-0000' } });
    await t.api('GET', '/customers', { headers: { 'x-railyard-journal': 'off' } });
    // A token without TRANSACT is refused the payout, but it is the platform's request.
    const viewer = await t.api('POST', '/tokens', { body: { name: 'read only', permissions: ['VIEW'] } });
    const asViewer = { username: viewer.body.clientId, password: viewer.body.clientSecret };
    const forbidden = await t.api('POST', '/transfer-out', { auth: asViewer, body: {} });
    expect(forbidden.status).toBe(401);

    const mine = await journal(t);
    expect(mine.data.map((r) => [r.operationId, r.status])).toEqual([
      ['createTransferOut', 401],
      ['createToken', 201],
      ['getPlatformConfig', 200],
    ]);
    expect(mine.data[0]).toMatchObject({ tokenId: viewer.body.id, errorCode: 'UNAUTHORIZED' });
    expect((await journal(other)).data.map((r) => r.operationId)).toEqual(['listCustomers']);
    const foreign = await other.raw('GET', `/_railyard/requests/${encodeURIComponent(mine.data[0].id)}`);
    expect(foreign.status).toBe(404);
  });

  it('names the agent that made a request', async () => {
    const t = await build();
    const customer = await createCustomer(t, individualBody('Ama Mensah'));
    const agent = await connectedAgent(t, customer.id);
    expect((await agent.api('GET', '/agents/me')).status).toBe(200);
    const [latest] = (await journal(t, '?limit=1')).data;
    expect(latest).toMatchObject({ operationId: 'getAgentMe', agentId: agent.id, status: 200 });
    expect(latest.tokenId).toBeUndefined();
  });

  it('keeps the latest RAILYARD_JOURNAL_SIZE requests of each platform, and deletes older ones from the store', async () => {
    const t = await build({ config: { journalSize: 5 } });
    const other = await t.newPlatform();
    await other.api('GET', '/config');
    for (let i = 0; i < 8; i++) await t.api('GET', `/customers?limit=${i + 1}`);
    const page = await journal(t);
    expect(page.totalCount).toBe(5);
    expect(page.data.map((r) => r.path)).toEqual([8, 7, 6, 5, 4].map((n) => `${BASE_PATH}/customers?limit=${n}`));
    expect((await report(t)).window).toMatchObject({ size: 5, requests: 5 });
    expect(await storedRows(t)).toBe(5);
    // The other platform's window is its own.
    expect((await journal(other)).totalCount).toBe(1);
  });

  it('is emptied by a reset of the platform, with what the server still held', async () => {
    const t = await build();
    await t.api('GET', '/config');
    const reset = await t.raw('POST', '/_railyard/reset');
    expect(reset.status).toBe(200);
    expect(reset.body.removed.request_journal).toBe(1);
    expect((await journal(t)).totalCount).toBe(0);
  });

  it.skipIf(databaseUrl === undefined)(
    'is one journal for the instances that share a PostgreSQL database',
    async () => {
      const schema = `t_${randomBytes(6).toString('hex')}`;
      const instance = async () => {
        const db = await openDb({ dataDir: ':memory:', databaseUrl, pgSchema: schema, pgPoolMax: 4 });
        const deps: Deps = { config: testConfig(), db, clock: systemClock };
        return { deps, app: await buildApp(deps) };
      };
      const one = await instance();
      const two = await instance();
      try {
        const created = await createPlatform(one.deps, { name: 'Shared platform' });
        const authorization = basic(created.token.clientId, created.token.clientSecret!);
        const send = (app: typeof one.app, method: 'GET', url: string) =>
          app.inject({ method, url, headers: { authorization } });
        expect((await send(one.app, 'GET', `${BASE_PATH}/config`)).statusCode).toBe(200);
        expect((await send(two.app, 'GET', `${BASE_PATH}/customers`)).statusCode).toBe(200);
        // Each instance writes its own requests before it reads; the other's arrive within a batch's delay.
        for (const reader of [one, two]) {
          await expect
            .poll(async () => {
              const page = JSON.parse((await send(reader.app, 'GET', '/_railyard/requests')).body);
              return page.data.map((r: { operationId: string }) => r.operationId);
            })
            .toEqual(['listCustomers', 'getPlatformConfig']);
        }
      } finally {
        await one.app.close();
        await two.app.close();
        await one.deps.db.close();
        await two.deps.db.close();
        await dropPgSchema(databaseUrl!, schema);
      }
    },
  );

  it.skipIf(databaseUrl === undefined)(
    'is an unlogged table on PostgreSQL (no write-ahead log), and the money tables are not',
    async () => {
      const t = await build();
      await t.api('GET', '/config');
      await expect.poll(() => storedRows(t)).toBe(1);
      const persistence = async (table: string) =>
        (
          await sql<{ relpersistence: string }>`
            SELECT relpersistence FROM pg_class WHERE oid = to_regclass(${table})`.execute(t.deps.db.k)
        ).rows[0]?.relpersistence;
      expect(await persistence('request_journal')).toBe('u');
      expect(await persistence('transactions')).toBe('p');
      expect(await persistence('ledger_entries')).toBe('p');
    },
  );

  it('is off with RAILYARD_JOURNAL_SIZE=0: the lists are empty and nothing is stored', async () => {
    const t = await build({ config: { journalSize: 0 } });
    await t.api('GET', '/config');
    expect(await journal(t)).toEqual({ data: [], hasMore: false, totalCount: 0 });
    expect((await report(t)).window).toEqual({ size: 0, requests: 0 });
    expect(await storedRows(t)).toBe(0);
  });
});

describe('secrets in the journal', () => {
  it('redacts secrets sent and answered, keeping every other field', async () => {
    const t = await build();
    // A client secret answered (createToken).
    const token = await t.api('POST', '/tokens', { body: { name: 'payouts bot', permissions: ['VIEW'] } });
    expect(token.status).toBe(201);
    // An identity document's number sent (createCustomer).
    const customer = await createCustomer(
      t,
      individualBody('Kofi Boateng', { identifier: '987-65-4321', address: berlin, phoneNumber: '+4915123456789' }),
    );
    // A one-time code sent (confirmPhoneVerification).
    await verifyPhone(t, customer.id);
    // A device code and an access token answered (createAgent, redeemAgentDeviceCode: no credentials, so the
    // redemption is in no journal; the agent's creation is).
    await connectedAgent(t, customer.id);

    const byOperation = async (operationId: string) => (await journal(t, `?operationId=${operationId}`)).data[0];
    const created = await byOperation('createToken');
    expect(created.responseBody).toMatchObject({ clientId: token.body.clientId, clientSecret: '(redacted)' });
    expect(JSON.stringify(created)).not.toContain(token.body.clientSecret);
    const onboarded = await byOperation('createCustomer');
    expect(onboarded.requestBody).toMatchObject({ fullName: 'Kofi Boateng', identifier: '(redacted)' });
    expect(JSON.stringify(onboarded)).not.toContain('987-65-4321');
    const confirmed = (await journal(t)).data.find((r) => r.path.endsWith('/verify-phone/confirm'));
    expect(confirmed.requestBody).toEqual({ code: '(redacted)' });
    const agent = await byOperation('createAgent');
    expect(agent.responseBody.deviceCode).toBe('(redacted)');
    expect(agent.responseBody.agent.name).toBe('Household budget assistant');
    // An error's code is not a secret: answers keep it.
    await t.api('POST', '/transfer-out', { body: {} });
    expect((await byOperation('createTransferOut')).responseBody.code).toBe('INVALID_INPUT');
  });
});

describe('bodies in the journal', () => {
  it('keeps a body as the app sent it, members railyard ignores included', async () => {
    const t = await build();
    const source = await fundedUsd(t);
    const bank = await externalAccount(t, 'USD_ACCOUNT');
    // Members the reference does not define are accepted and dropped by railyard; the journal
    // shows what was sent, in the order it was sent.
    const text = `{"amount":250,"destination":{"accountId":"${bank.id}","note":"not a field"},"source":{"accountId":"${source.id}"},"clientTag":"run-7"}`;
    const sent = await t.api('POST', '/transfer-out', {
      payload: text,
      headers: { 'content-type': 'application/json', 'idempotency-key': 'as-sent-1' },
    });
    expect(sent.status, sent.text).toBe(201);
    const entry = (await journal(t, '?idempotencyKey=as-sent-1')).data[0];
    expect(entry.requestBody).toEqual(JSON.parse(text));
    expect(Object.keys(entry.requestBody)).toEqual(['amount', 'destination', 'source', 'clientTag']);
  });

  it('keeps a note of the size of a body longer than 64 KiB, and of one that is not JSON', async () => {
    const t = await build();
    const long = JSON.stringify({
      source: { accountId: 'InternalAccount:x' },
      amount: 1,
      description: 'x'.repeat(70_000),
    });
    const tooLong = await t.api('POST', '/transfer-out', {
      payload: long,
      headers: { 'content-type': 'application/json' },
    });
    expect(tooLong.status).toBe(400);
    const broken = await t.api('POST', '/transfer-out', {
      payload: '{"amount": 1,',
      headers: { 'content-type': 'application/json' },
    });
    expect(broken.status).toBe(400);
    const [last, first] = (await journal(t)).data;
    expect(first.requestBody).toBe(
      `(a JSON body of ${long.length} characters, longer than the 65536 the journal keeps)`,
    );
    expect(first.responseBody).toEqual(tooLong.body);
    expect(last.requestBody).toBe('(a application/json of 13 bytes, not kept)');
    expect(last.responseBody).toEqual(broken.body);
  });
});

// ------------------------------------------------------------------ requests with no answer

/** What a fault rule does, for this test: mark the request, then end it as the rule says. */
const faultRoutes: FastifyPluginAsync = async (app) => {
  const schema = (operationId: string) =>
    op({
      operationId,
      tag: 'Test',
      summary: 'A request a fault rule acts on',
      permission: 'TRANSACT',
      headers: IdempotencyHeaders,
      body: Type.Object({ ref: Type.String(), failWith: Type.Optional(Type.String()) }),
      success: { 201: Type.Object({ ref: Type.String() }) },
      errors: [400, 401, 429, 500],
    });
  app.post('/test-faults/reset', { schema: schema('testFaultReset') }, async (request, reply) => {
    markFault(request, { ruleId: 'FaultRule:reset', effect: 'reset' });
    reply.hijack();
    request.raw.socket.destroy();
  });
  app.post(
    '/test-faults/lost',
    {
      schema: schema('testFaultLost'),
      // After the journal took the answer: written to the store first, so the loss amends a stored row.
      onSend: async (request, reply, payload) => {
        markFault(request, { ruleId: 'FaultRule:lost', effect: 'lostResponse', value: reply.statusCode });
        await request.server.deps.journal?.flush();
        request.raw.socket.destroy();
        return payload;
      },
    },
    async (request, reply) => {
      reply.code(201);
      return { ref: (request.body as { ref: string }).ref };
    },
  );
  app.post('/test-faults/slow', { schema: schema('testFaultLatency') }, async (request, reply) => {
    markFault(request, { ruleId: 'FaultRule:slow', effect: 'latencyMs', value: 30 });
    await new Promise((resolve) => setTimeout(resolve, 30));
    reply.code(201);
    return { ref: (request.body as { ref: string }).ref };
  });
  // Fails the first time it sees a request (by its body) with the code the body names, then succeeds.
  const seen = new Set<string>();
  app.post('/test-faults/flaky', { schema: schema('testFlakyPayment') }, async (request, reply) => {
    const body = request.body as { ref: string; failWith?: 'RATE_LIMITED' | 'INTERNAL_ERROR' };
    const key = JSON.stringify(body);
    if (!seen.has(key) && body.failWith !== undefined) {
      seen.add(key);
      throw apiError(body.failWith, `The test rule answers ${body.failWith}`);
    }
    reply.code(201);
    return { ref: body.ref };
  });
};

/** A POST over a real socket; resolves with the status, or the error when no answer came. */
function post(port: number, t: Tenant, path: string, body: unknown, headers: Record<string, string> = {}) {
  return new Promise<{ status?: number; error?: string }>((resolve) => {
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: `${BASE_PATH}${path}`,
        headers: { authorization: basic(t.clientId, t.clientSecret), 'content-type': 'application/json', ...headers },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode }));
        response.on('error', (err) => resolve({ error: err.message }));
      },
    );
    request.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    request.end(JSON.stringify(body));
  });
}

async function listening(t: TestApp): Promise<number> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return (t.app.server.address() as { port: number }).port;
}

describe('requests with no answer, and fault marks', () => {
  it('keeps a request whose connection a fault rule closed, one whose answer it lost, and one it slowed', async () => {
    const t = await build({ extraRoutes: faultRoutes });
    const port = await listening(t);
    expect((await post(port, t, '/test-faults/reset', { ref: 'r1' }, { 'idempotency-key': 'reset-1' })).error).toBe(
      'ECONNRESET',
    );
    expect((await post(port, t, '/test-faults/lost', { ref: 'l1' })).error).toBeDefined();
    expect((await post(port, t, '/test-faults/slow', { ref: 's1' })).status).toBe(201);
    // The connection's close reaches the server on its own time.
    await expect.poll(async () => (await journal(t)).data.length).toBe(3);

    const [slow, lost, reset] = (await journal(t)).data;
    expect(reset).toMatchObject({
      operationId: 'testFaultReset',
      answered: false,
      idempotencyKey: 'reset-1',
      fault: { ruleId: 'FaultRule:reset', effect: 'reset' },
      requestBody: { ref: 'r1' },
    });
    expect(reset.status).toBeUndefined();
    expect(reset.responseBody).toBeUndefined();
    expect(lost).toMatchObject({
      operationId: 'testFaultLost',
      status: 201,
      answered: false,
      fault: { ruleId: 'FaultRule:lost', effect: 'lostResponse', value: 201 },
      responseBody: { ref: 'l1' },
    });
    expect(slow).toMatchObject({
      status: 201,
      answered: true,
      fault: { ruleId: 'FaultRule:slow', effect: 'latencyMs', value: 30 },
    });
    expect(slow.durationMs).toBeGreaterThanOrEqual(25);
  });
});

// ------------------------------------------------------------------------------- the report

describe('GET /_railyard/requests/report', () => {
  it("finds each kind of problem in a crafted session, and the operations' answers", async () => {
    const t = await build({ extraRoutes: faultRoutes });
    const port = await listening(t);
    const receiver = await receiverFor(t, (hit) =>
      hit.type === 'TEST' ? { status: 200 } : { status: 503, body: { down: 'for maintenance' } },
    );
    try {
      const usd = await fundedUsd(t);
      const bank = await externalAccount(t, 'USD_ACCOUNT');
      const mxnBank = await externalAccount(t, 'MXN_ACCOUNT');

      // Money moved without an Idempotency-Key: a payout, and a quote executed at once. A quote
      // alone moves nothing, and a read needs no key.
      expect((await transferOut(t, usd.id, bank.id, 100)).status).toBe(201);
      const quoted = await t.api('POST', '/quotes', { body: accountQuoteBody(usd.id, mxnBank.id) });
      expect(quoted.status, quoted.text).toBe(201);
      const executedAtOnce = await t.api('POST', '/quotes', {
        body: accountQuoteBody(usd.id, mxnBank.id, { extra: { immediatelyExecute: true } }),
      });
      expect(executedAtOnce.status, executedAtOnce.text).toBe(201);

      // A key sent again with another amount (refused), and again with the first body (a replay).
      const first = await transferOut(t, usd.id, bank.id, 200, { 'idempotency-key': 'reused-9' });
      expect(first.status).toBe(201);
      expect((await transferOut(t, usd.id, bank.id, 250, { 'idempotency-key': 'reused-9' })).status).toBe(400);
      expect((await transferOut(t, usd.id, bank.id, 200, { 'idempotency-key': 'reused-9' })).status).toBe(201);

      // Failed answers, and what the client did next.
      const flaky = (body: unknown, key?: string) =>
        post(port, t, '/test-faults/flaky', body, key === undefined ? {} : { 'idempotency-key': key });
      expect((await flaky({ ref: 'a', failWith: 'INTERNAL_ERROR' }, 'key-a')).status).toBe(500);
      expect((await flaky({ ref: 'a', failWith: 'INTERNAL_ERROR' }, 'key-a')).status).toBe(201);
      expect((await flaky({ ref: 'b', failWith: 'RATE_LIMITED' }, 'key-b')).status).toBe(429);
      expect((await flaky({ ref: 'b', failWith: 'RATE_LIMITED' }, 'key-b-again')).status).toBe(201);
      expect((await flaky({ ref: 'c', failWith: 'INTERNAL_ERROR' })).status).toBe(500);
      expect((await flaky({ ref: 'c', failWith: 'INTERNAL_ERROR' })).status).toBe(201);
      expect((await flaky({ ref: 'd', failWith: 'RATE_LIMITED' }, 'key-d')).status).toBe(429);
      expect((await post(port, t, '/test-faults/reset', { ref: 'e' }, { 'idempotency-key': 'key-e' })).error).toBe(
        'ECONNRESET',
      );

      // The endpoint fails the payouts' webhooks.
      await t.runDueJobs();
      await receiver.waitFor(2);
      await expect.poll(async () => (await report(t)).failedWebhookDeliveries.length).toBeGreaterThan(0);
      const found = await report(t);

      expect(found.window.size).toBe(10_000);
      const transfers = found.operations.find((o: any) => o.operationId === 'createTransferOut');
      expect(transfers).toEqual({
        operationId: 'createTransferOut',
        requests: 4,
        unanswered: 0,
        byStatus: { '201': 3, '400': 1 },
        byCode: { INVALID_INPUT: 1 },
      });
      const flakies = found.operations.find((o: any) => o.operationId === 'testFlakyPayment');
      expect(flakies).toMatchObject({
        requests: 7,
        byStatus: { '201': 3, '429': 2, '500': 2 },
        byCode: { INTERNAL_ERROR: 2, RATE_LIMITED: 2 },
      });
      expect(found.operations.find((o: any) => o.operationId === 'testFaultReset')).toMatchObject({
        requests: 1,
        unanswered: 1,
        byStatus: {},
      });

      expect(found.missingIdempotencyKeys).toEqual([
        { operationId: 'createQuote', requests: 1, requestIds: [expect.stringMatching(/^Request:/)] },
        { operationId: 'createTransferOut', requests: 1, requestIds: [expect.stringMatching(/^Request:/)] },
      ]);
      const executedEntry = await t.raw('GET', `/_railyard/requests/${found.missingIdempotencyKeys[0].requestIds[0]}`);
      expect(executedEntry.body.requestBody.immediatelyExecute).toBe(true);

      expect(found.reusedIdempotencyKeys).toEqual([
        {
          operationId: 'createTransferOut',
          idempotencyKey: 'reused-9',
          requests: 3,
          distinctRequests: 2,
          requestIds: expect.any(Array),
        },
      ]);
      expect(found.reusedIdempotencyKeys[0].requestIds).toHaveLength(3);

      const outcome = (ref: string) =>
        found.failedAnswers
          .filter((f: any) => f.operationId === 'testFlakyPayment' || f.operationId === 'testFaultReset')
          .map((f: any) => [f.idempotencyKey ?? null, f.status ?? null, f.answered, f.errorCode ?? null, f.retry])
          .find((row: unknown[]) => row[0] === ref || (ref === 'c' && row[0] === null));
      expect(outcome('key-a')).toEqual(['key-a', 500, true, 'INTERNAL_ERROR', 'SAME_KEY']);
      expect(outcome('key-b')).toEqual(['key-b', 429, true, 'RATE_LIMITED', 'NEW_KEY']);
      expect(outcome('c')).toEqual([null, 500, true, 'INTERNAL_ERROR', 'NO_KEY']);
      expect(outcome('key-d')).toEqual(['key-d', 429, true, 'RATE_LIMITED', 'NOT_RETRIED']);
      expect(outcome('key-e')).toEqual(['key-e', null, false, null, 'NOT_RETRIED']);
      expect(found.failedAnswers).toHaveLength(5);
      const retried = found.failedAnswers.find((f: any) => f.idempotencyKey === 'key-a');
      const retry = await t.raw('GET', `/_railyard/requests/${retried.retryRequestId}`);
      expect(retry.body).toMatchObject({ idempotencyKey: 'key-a', status: 201 });

      const failedHook = found.failedWebhookDeliveries.find((d: any) => d.type.startsWith('OUTGOING_PAYMENT.'));
      expect(failedHook).toMatchObject({
        status: 'PENDING',
        attemptCount: 1,
        lastAttempt: { url: receiver.url, responseStatus: 503, responseExcerpt: '{"down":"for maintenance"}' },
      });
      // The TEST webhook the endpoint answered 200 is not a finding.
      expect(found.failedWebhookDeliveries.every((d: any) => d.type !== 'TEST')).toBe(true);
    } finally {
      await receiver.close();
    }
  });

  it('is empty for a platform that made no request', async () => {
    const t = await build();
    const other = await t.newPlatform();
    await t.api('POST', '/transfer-out', { body: {} });
    expect(await report(other)).toEqual({
      window: { size: 10_000, requests: 0 },
      operations: [],
      missingIdempotencyKeys: [],
      reusedIdempotencyKeys: [],
      failedAnswers: [],
      failedWebhookDeliveries: [],
    });
    // platformAccount reads through the API too: it is in the journal of the platform it reads.
    await platformAccount(other, 'USD');
    expect((await report(other)).window.requests).toBe(1);
  });
});
