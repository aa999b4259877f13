// Fault rules on a platform's Grid API requests (POST /_railyard/faults): each effect over a
// real socket, the counts, seeded probabilities, matching, and that a rule touches its own
// platform's Grid requests only.

import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { balances, externalAccount, fundedUsd, transferOut } from '../fixtures/money.js';
import { build, databaseUrl, type Tenant } from '../helper.js';
import { addFaultRule, faultRules, faultTags, overSocket, portOf } from './support.js';

describe('POST /_railyard/faults', () => {
  it('adds a rule (201 with its id), lists it with its counts, and removes one or all', async () => {
    const t = await build();
    const added = await addFaultRule(t, { operationId: 'listCustomers', status: 503, times: 2 });
    expect(added).toMatchObject({
      operationId: 'listCustomers',
      status: 503,
      times: 2,
      matchedCount: 0,
      firedCount: 0,
      active: true,
    });
    expect(added.id).toMatch(/^FaultRule:/);
    const second = await addFaultRule(t, { method: 'POST', path: '/quotes/*/execute', latencyMs: 10 });
    expect((await faultRules(t)).map((r) => r.id)).toEqual([added.id, second.id]);

    expect((await t.raw('DELETE', `/_railyard/faults/${added.id}`)).status).toBe(204);
    expect((await faultRules(t)).map((r) => r.id)).toEqual([second.id]);
    const again = await t.raw('DELETE', `/_railyard/faults/${added.id}`);
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('REFERENCE_NOT_FOUND');

    await addFaultRule(t, { reset: true, path: '/customers' });
    expect((await t.raw('DELETE', '/_railyard/faults')).status).toBe(204);
    expect(await faultRules(t)).toEqual([]);
    expect((await faultTags(t, t.platformId)).fault_rules).toBeNull();
  });

  it('refuses a rule with no effect, several effects or bad fields, naming every field, and adds nothing', async () => {
    const t = await build();
    const none = await t.raw('POST', '/_railyard/faults', { body: { operationId: 'listCustomers' } });
    expect(none.status).toBe(400);
    expect(none.body.details.errors.map((e: any) => e.field)).toEqual(['body']);

    const bad = await t.raw('POST', '/_railyard/faults', {
      body: {
        operationId: 'listCustomerz',
        path: 'customers',
        method: 'FETCH',
        status: 418,
        latencyMs: 70_000,
        lostResponseStatus: 503,
        seed: 7,
        probability: 1.5,
        retryAfterSeconds: 5,
        header: { name: 'bad name', value: 'x' },
        colour: 'red',
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('INVALID_INPUT');
    const fields = bad.body.details.errors.map((e: any) => e.field).sort();
    expect(fields).toEqual(
      [
        'colour',
        'header.name',
        'latencyMs',
        'lostResponseStatus',
        'method',
        'operationId',
        'path',
        'probability',
        'retryAfterSeconds',
        'status',
      ].sort(),
    );
    const message = (field: string) => bad.body.details.errors.find((e: any) => e.field === field).message;
    expect(message('status')).toContain('429, 500, 502, 503, 504');
    expect(message('lostResponseStatus')).toBe('is only for a lostResponse rule');
    expect(message('operationId')).toBe('is not an operation of the Grid API that railyard serves');

    const twoEffects = await t.raw('POST', '/_railyard/faults', { body: { reset: true, lostResponse: true } });
    expect(twoEffects.status).toBe(400);
    expect(twoEffects.body.details.errors).toEqual([
      { field: 'reset', message: 'is one of 2 effects given (reset, lostResponse); a rule has exactly one' },
      { field: 'lostResponse', message: 'is one of 2 effects given (reset, lostResponse); a rule has exactly one' },
    ]);
    const falseReset = await t.raw('POST', '/_railyard/faults', { body: { reset: false } });
    expect(falseReset.status).toBe(400);
    expect(falseReset.body.details.errors.map((e: any) => e.field)).toEqual(['reset']);
    const seedAlone = await t.raw('POST', '/_railyard/faults', { body: { status: 500, seed: 3 } });
    expect(seedAlone.body.details.errors.map((e: any) => e.field)).toEqual(['seed']);

    expect(await faultRules(t)).toEqual([]);
    expect((await faultTags(t, t.platformId)).fault_rules).toBeNull();
  });

  it('answers 503 once in the envelope without running the operation, then lets the request through', async () => {
    const t = await build();
    const rule = await addFaultRule(t, { operationId: 'createCustomer', status: 503, times: 1 });
    const body = individualBody('Avery Stone');
    const failed = await t.api('POST', '/customers', { body });
    expect(failed.status).toBe(503);
    expect(failed.body).toEqual({
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      message: expect.stringContaining(rule.id),
      details: { faultRuleId: rule.id },
    });
    // Nothing ran: the customer does not exist.
    expect((await t.api('GET', '/customers')).body.data).toEqual([]);
    const created = await t.api('POST', '/customers', { body });
    expect(created.status, created.text).toBe(201);
    expect((await t.api('GET', '/customers')).body.data).toHaveLength(1);
    const [listed] = await faultRules(t);
    expect(listed).toMatchObject({ id: rule.id, matchedCount: 1, firedCount: 1, active: false });
    // Used up: the platform is back on the path without rules.
    expect((await faultTags(t, t.platformId)).fault_rules).toBeNull();
  });

  it('answers 429 with Retry-After (the rule’s or 1 s), and 500, 502 and 504 with codes of the catalogue', async () => {
    const t = await build();
    await addFaultRule(t, { method: 'GET', path: '/customers', status: 429, retryAfterSeconds: 7, times: 1 });
    const limited = await t.api('GET', '/customers');
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('7');
    expect(limited.body.code).toBe('RATE_LIMITED');
    await addFaultRule(t, { operationId: 'listCustomers', status: 429, times: 1 });
    const byDefault = await t.api('GET', '/customers');
    expect(byDefault.status).toBe(429);
    expect(byDefault.headers['retry-after']).toBe('1');

    for (const [status, code] of [
      [500, 'INTERNAL_ERROR'],
      [502, 'SERVICE_UNAVAILABLE'],
      [504, 'SERVICE_UNAVAILABLE'],
    ] as const) {
      await addFaultRule(t, { operationId: 'listCustomers', status, times: 1 });
      const reply = await t.api('GET', '/customers');
      expect(reply.status).toBe(status);
      expect(reply.body).toMatchObject({ status, code });
      expect(reply.headers['retry-after']).toBeUndefined();
    }
    expect((await t.api('GET', '/customers')).status).toBe(200);
  });

  it('loses the answer of a transfer-out after it committed; the same key then replays it: one transaction, one debit', async () => {
    const t = await build();
    const port = await portOf(t);
    const source = await fundedUsd(t, 100_000);
    const destination = await externalAccount(t, 'USD_ACCOUNT');
    const rule = await addFaultRule(t, { operationId: 'createTransferOut', lostResponse: true, times: 1 });
    const body = { source: { accountId: source.id }, destination: { accountId: destination.id }, amount: 2_500 };
    const headers = { 'idempotency-key': 'lost-1' };

    const lost = await overSocket(port, t, 'POST', '/transfer-out', { body, headers });
    expect(lost.status).toBeUndefined();
    expect(lost.error).toMatch(/ECONNRESET|socket hang up/);
    // The transfer happened all the same.
    expect((await balances(t, source.id)).totalBalance).toBe(97_500);

    const retried = await overSocket(port, t, 'POST', '/transfer-out', { body, headers });
    expect(retried.status).toBe(201);
    expect(retried.headers!['idempotent-replayed']).toBe('true');
    const transactions = (await t.api('GET', '/transactions')).body.data;
    expect(transactions).toHaveLength(1);
    expect(retried.body.id).toBe(transactions[0].id);
    expect((await balances(t, source.id)).totalBalance).toBe(97_500);
    expect((await faultRules(t))[0]).toMatchObject({ id: rule.id, firedCount: 1 });
  });

  it('answers a lost response with the 5xx the rule names, after the operation committed', async () => {
    const t = await build();
    const source = await fundedUsd(t, 100_000);
    const destination = await externalAccount(t, 'USD_ACCOUNT');
    await addFaultRule(t, { operationId: 'createTransferOut', lostResponse: true, lostResponseStatus: 504, times: 1 });
    const headers = { 'idempotency-key': 'lost-2' };
    const first = await transferOut(t, source.id, destination.id, 1_000, headers);
    expect(first.status).toBe(504);
    expect(first.body.code).toBe('SERVICE_UNAVAILABLE');
    const retried = await transferOut(t, source.id, destination.id, 1_000, headers);
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    expect((await t.api('GET', '/transactions')).body.data).toHaveLength(1);
    expect((await balances(t, source.id)).totalBalance).toBe(99_000);
  });

  it('closes the connection with no answer before the operation runs (reset)', async () => {
    const t = await build();
    const port = await portOf(t);
    await addFaultRule(t, { method: 'POST', path: '/customers', reset: true, times: 1 });
    const body = individualBody('Rowan Vale');
    const reset = await overSocket(port, t, 'POST', '/customers', { body });
    expect(reset.status).toBeUndefined();
    expect(reset.error).toMatch(/ECONNRESET|socket hang up/);
    expect((await t.api('GET', '/customers')).body.data).toEqual([]);
    const created = await overSocket(port, t, 'POST', '/customers', { body });
    expect(created.status).toBe(201);
  });

  it('delays the answer by latencyMs, and the operation runs as usual', async () => {
    const t = await build();
    const port = await portOf(t);
    await addFaultRule(t, { operationId: 'createCustomer', latencyMs: 400, times: 1 });
    const slow = await overSocket(port, t, 'POST', '/customers', { body: individualBody('Sasha Reed') });
    expect(slow.status).toBe(201);
    // A delay only ever adds to the time a request takes, however loaded the machine.
    expect(slow.elapsedMs).toBeGreaterThanOrEqual(400);
    expect((await t.api('GET', `/customers/${slow.body.id}`)).status).toBe(200);
  });

  it('sends a held answer at once when the server closes', async () => {
    const t = await build();
    const port = await portOf(t);
    await addFaultRule(t, { operationId: 'listCustomers', latencyMs: 60_000 });
    const held = overSocket(port, t, 'GET', '/customers');
    // The request has reached the rule once it is counted.
    while ((await faultRules(t))[0].firedCount === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    await t.close();
    const answered = await held;
    expect(answered.status).toBe(200);
    expect(answered.elapsedMs).toBeLessThan(60_000);
  });

  it("goes with the platform's reset", async () => {
    const t = await build();
    await addFaultRule(t, { operationId: 'listCustomers', status: 503 });
    expect((await t.api('GET', '/customers')).status).toBe(503);
    expect((await t.raw('POST', '/_railyard/reset')).status).toBe(200);
    expect(await faultRules(t)).toEqual([]);
    expect(await faultTags(t, t.platformId)).toEqual({ fault_rules: null, webhook_fault_rules: null });
    expect((await t.api('GET', '/customers')).status).toBe(200);
  });

  it('fires a rule with a probability the same way for the same seed and request sequence', async () => {
    const t = await build();
    const other = await t.newPlatform();
    const pattern = async (tenant: Tenant, seed: number) => {
      await addFaultRule(tenant, { operationId: 'listCustomers', status: 503, probability: 0.4, seed });
      const statuses: number[] = [];
      for (let i = 0; i < 40; i++) statuses.push((await tenant.api('GET', '/customers')).status);
      return statuses;
    };
    const first = await pattern(t, 1234);
    const second = await pattern(other, 1234);
    expect(second).toEqual(first);
    const fired = first.filter((s) => s === 503).length;
    expect(fired).toBeGreaterThan(0);
    expect(fired).toBeLessThan(40);
    expect(first.every((s) => s === 503 || s === 200)).toBe(true);
    const [rule] = await faultRules(t);
    expect(rule).toMatchObject({ seed: 1234, probability: 0.4, matchedCount: 40, firedCount: fired, active: true });
  });

  it('draws a seed when none is given and shows it, and stops a probability rule after `times` firings', async () => {
    const t = await build();
    const rule = await addFaultRule(t, { operationId: 'listCustomers', status: 500, probability: 0.9, times: 2 });
    expect(Number.isInteger(rule.seed)).toBe(true);
    let failures = 0;
    for (let i = 0; i < 20; i++) if ((await t.api('GET', '/customers')).status === 500) failures++;
    expect(failures).toBe(2);
    expect((await faultRules(t))[0]).toMatchObject({ firedCount: 2, active: false });
  });

  it('matches by method and path pattern, a route template, and a header value', async () => {
    const t = await build();
    const customer = await createCustomer(t, individualBody('Morgan Lake'));
    await addFaultRule(t, { method: 'GET', path: '/customers/{customerId}', status: 502 });
    await addFaultRule(t, { path: '/customers', header: { name: 'X-Test-Case', value: 'boom' }, status: 500 });
    expect((await t.api('GET', `/customers/${customer.id}`)).status).toBe(502);
    // The id percent-encoded is the same segment.
    expect((await t.api('GET', `/customers/${encodeURIComponent(customer.id)}`)).status).toBe(502);
    expect((await t.api('PATCH', `/customers/${customer.id}`, { body: { fullName: 'Morgan Lake' } })).status).not.toBe(
      502,
    );
    expect((await t.api('GET', '/customers')).status).toBe(200);
    expect((await t.api('GET', '/customers', { headers: { 'x-test-case': 'boom' } })).status).toBe(500);
    expect((await t.api('GET', '/customers?limit=5', { headers: { 'x-test-case': 'boom' } })).status).toBe(500);
    expect((await t.api('GET', '/customers', { headers: { 'x-test-case': 'other' } })).status).toBe(200);

    await t.raw('DELETE', '/_railyard/faults');
    await addFaultRule(t, { path: '/customers/**', status: 503 });
    expect((await t.api('GET', '/customers')).status).toBe(503);
    expect((await t.api('GET', `/customers/${customer.id}`)).status).toBe(503);
    expect((await t.api('GET', '/transactions')).status).toBe(200);
  });

  it("touches only its own platform's Grid requests, never /_railyard ones", async () => {
    const t = await build();
    const other = await t.newPlatform();
    await addFaultRule(t, { path: '/**', status: 503 });
    expect((await t.api('GET', '/customers')).status).toBe(503);
    expect((await other.api('GET', '/customers')).status).toBe(200);
    expect(await faultRules(other)).toEqual([]);
    expect((await faultTags(t, other.platformId)).fault_rules).toBeNull();
    expect((await t.raw('GET', '/_railyard/faults')).status).toBe(200);
    expect((await t.raw('GET', '/_railyard/clock')).status).toBe(200);
  });

  it('fires a `times` rule exactly that many times under concurrent requests', async () => {
    const t = await build();
    await addFaultRule(t, { operationId: 'listCustomers', status: 503, times: 5 });
    const statuses = await Promise.all(Array.from({ length: 24 }, () => t.api('GET', '/customers')));
    expect(statuses.filter((r) => r.status === 503)).toHaveLength(5);
    expect(statuses.filter((r) => r.status === 200)).toHaveLength(19);
    expect((await faultRules(t))[0]).toMatchObject({ firedCount: 5, matchedCount: 5, active: false });
  });

  it('logs a fired rule with the request id', async () => {
    const lines: string[] = [];
    const t = await build({ logStream: { write: (line) => void lines.push(line) } });
    const rule = await addFaultRule(t, { operationId: 'listCustomers', status: 503, times: 1 });
    const reply = await t.api('GET', '/customers', { headers: { 'x-request-id': 'fault-log-1' } });
    expect(reply.status).toBe(503);
    const fired = lines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'fault rule fired');
    expect(fired).toMatchObject({ reqId: 'fault-log-1', faultRuleId: rule.id, effect: 'status', value: 503 });
  });
});

describe('a fired fault rule, noted beside its request', () => {
  it('keeps the answers rules make out of the exchange record, and the others in', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'railyard-record-')), 'exchanges.ndjson');
    const t = await build({ config: { recordFile: file } });
    const source = await fundedUsd(t, 100_000);
    const destination = await externalAccount(t, 'USD_ACCOUNT');
    await addFaultRule(t, { operationId: 'listCustomers', status: 502, times: 1 });
    await addFaultRule(t, { operationId: 'createTransferOut', lostResponse: true, lostResponseStatus: 503, times: 1 });
    expect((await t.api('GET', '/customers')).status).toBe(502);
    const headers = { 'idempotency-key': 'recorded-1' };
    expect((await transferOut(t, source.id, destination.id, 1_000, headers)).status).toBe(503);
    expect((await t.api('GET', '/customers')).status).toBe(200);
    expect((await transferOut(t, source.id, destination.id, 1_000, headers)).status).toBe(201);

    const recorded = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((line) => line.path.endsWith('/customers') || line.path.endsWith('/transfer-out'))
      .map((line) => [line.method, line.path.split('/').at(-1), line.status]);
    expect(recorded).toEqual([
      ['GET', 'customers', 200],
      ['POST', 'transfer-out', 201],
    ]);
  });
});

describe.skipIf(databaseUrl === undefined)('fault rules on instances that share one PostgreSQL', () => {
  it('apply on every instance, and `times` counts across them', async () => {
    const { startInstance } = await import('../events/support.js');
    const { systemClock } = await import('../../src/clock.js');
    const t = await build();
    const schema = (
      await t.deps.db.k.selectNoFrom((eb) => eb.fn('current_schema', []).as('s')).executeTakeFirstOrThrow()
    ).s as string;
    const second = await startInstance({ clock: systemClock, pgSchema: schema });
    try {
      const there = second.as(t);
      // Added on one instance: the other applies it at once (its row's tag changed).
      await addFaultRule(t, { operationId: 'listCustomers', status: 503, times: 6 });
      const replies = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? t : there).api('GET', '/customers')),
      );
      expect(replies.filter((r) => r.status === 503)).toHaveLength(6);
      expect((await there.api('GET', '/customers')).status).toBe(200);
      expect((await faultRules(there))[0]).toMatchObject({ firedCount: 6, active: false });
    } finally {
      await second.close();
    }
  });
});
