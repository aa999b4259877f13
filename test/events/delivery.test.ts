// Webhook delivery end to end: events become signed POSTs to the platform's endpoint, tried
// again on failure along the retry ladder, kept in the delivery log, durable across a
// restart and shared safely by several instances.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WEBHOOK_TYPES } from '../../src/events/outbox.js';
import { createPlatform } from '../../src/modules/platform/service.js';
import { build, databaseUrl, ManualClock, type Credentials } from '../helper.js';
import { dropPgSchema } from '../../src/db/index.js';
import { referenceSpec } from '../reference.js';
import {
  activateWallet,
  deliveries,
  delivery,
  expectAllConform,
  publicKeyOf,
  receiverFor,
  startInstance,
  startReceiver,
  type Receiver,
} from './support.js';

const START_MS = Date.parse('2025-06-02T09:00:00.000Z');
const open: Receiver[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});
const track = (receiver: Receiver) => {
  open.push(receiver);
  return receiver;
};

describe('webhook types', () => {
  it('are exactly the WebhookType enum of the reference', () => {
    expect([...WEBHOOK_TYPES].sort()).toEqual([...referenceSpec().components.schemas.WebhookType.enum].sort());
  });
});

describe('delivery of recorded events', () => {
  it('POSTs each event as the signed envelope of the reference, and logs the try', async () => {
    const t = await build({ counterpartyRules: true });
    const receiver = track(await receiverFor(t));
    await t.runDueJobs();
    await receiver.waitFor(1);
    expect(receiver.hits[0]!.type).toBe('TEST');

    const accountId = await activateWallet(t);
    expect(await t.runDueJobs()).toBe(1);
    expect(receiver.hits).toHaveLength(2);
    const hit = receiver.hits[1]!;
    expect(hit.headers['content-type']).toBe('application/json');
    expect(hit.json).toMatchObject({
      type: 'EXTERNAL_ACCOUNT.STATUS_UPDATED',
      data: { id: accountId, status: 'ACTIVE' },
    });
    expect(hit.id).toMatch(/^Webhook:[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Object.keys(hit.json)).toEqual(['id', 'type', 'timestamp', 'data']);
    expect(hit.json.data).toEqual((await t.api('GET', `/platform/external-accounts/${accountId}`)).body);
    expectAllConform(receiver);

    const logged = await delivery(t, hit.id);
    expect(logged).toMatchObject({
      id: hit.id,
      type: 'EXTERNAL_ACCOUNT.STATUS_UPDATED',
      resourceId: accountId,
      status: 'DELIVERED',
      attemptCount: 1,
    });
    expect(logged.nextAttemptAt).toBeUndefined();
    expect(logged.envelope).toEqual(hit.json);
    expect(logged.attempts).toEqual([
      {
        number: 1,
        trigger: 'EVENT',
        startedAt: logged.lastAttemptAt,
        url: receiver.url,
        outcome: 'SUCCEEDED',
        responseStatus: 200,
        responseExcerpt: '',
        latencyMs: expect.any(Number),
      },
    ]);
    // Nothing more to send.
    expect(await t.runDueJobs()).toBe(0);
    expect(receiver.hits).toHaveLength(2);
  });

  it('sends nothing for events recorded while no endpoint is set', async () => {
    const t = await build({ counterpartyRules: true });
    const accountId = await activateWallet(t);
    const events = await t.deps.db.k.selectFrom('events').select('id').where('resource_id', '=', accountId).execute();
    expect(events).toHaveLength(1);
    expect(await deliveries(t)).toEqual([]);
    expect(await t.runDueJobs()).toBe(0);
  });

  it('keeps the receiver answer excerpt, and a slow receiver does not hold up the others', async () => {
    const t = await build({ counterpartyRules: true });
    track(
      await receiverFor(t, (hit) =>
        hit.type === 'TEST' ? { status: 204 } : { status: 200, body: { ok: hit.id }, delayMs: 1_000 },
      ),
    );
    await t.runDueJobs();
    for (let i = 0; i < 8; i++) await activateWallet(t);
    const started = performance.now();
    expect(await t.runDueJobs()).toBe(8);
    // Eight answers of a second each, taken side by side: one after another would take eight.
    expect(performance.now() - started).toBeLessThan(8 * 1_000);
    const logged = await deliveries(t, '?type=EXTERNAL_ACCOUNT.STATUS_UPDATED');
    expect(logged).toHaveLength(8);
    for (const item of logged) {
      const detail = await delivery(t, item.id);
      expect(detail.attempts[0]).toMatchObject({
        outcome: 'SUCCEEDED',
        responseStatus: 200,
        responseExcerpt: JSON.stringify({ ok: item.id }),
      });
      expect(detail.attempts[0].latencyMs).toBeGreaterThanOrEqual(290);
    }
  });
});

describe('retries', () => {
  it('walks the whole ladder on the sandbox clock: 30 s doubling to 30 min, the same bytes each time, then gives up after 7 days', {
    timeout: 180_000,
  }, async () => {
    const clock = new ManualClock(START_MS);
    const t = await build({ counterpartyRules: true, clock });
    const receiver = track(
      await receiverFor(t, (hit) => (hit.type === 'TEST' ? { status: 200 } : { status: 500, body: { error: 'down' } })),
    );
    await t.runDueJobs();
    const accountId = await activateWallet(t);
    await t.runDueJobs();
    const [first] = await deliveries(t, `?resourceId=${accountId}`);
    expect(first).toMatchObject({ status: 'PENDING', attemptCount: 1 });
    expect(Date.parse(first.nextAttemptAt) - Date.parse(first.lastAttemptAt)).toBe(30_000);

    let now = Date.parse((await t.raw('GET', '/_railyard/clock')).body.now);
    for (let step = 0; step < 1000; step++) {
      const [current] = await deliveries(t, `?resourceId=${accountId}`);
      if (current.status !== 'PENDING') break;
      const waitMs = Date.parse(current.nextAttemptAt) - now;
      const before = receiver.hits.length;
      if (step < 8) {
        // One second early, nothing happens.
        await t.advanceClock(waitMs / 1000 - 1);
        expect(receiver.hits.length).toBe(before);
        now = Date.parse((await t.advanceClock(1)).now);
      } else {
        now = Date.parse((await t.advanceClock(waitMs / 1000)).now);
      }
      expect(receiver.hits.length).toBe(before + 1);
    }

    const final = await delivery(t, first.id);
    expect(final.status).toBe('FAILED');
    expect(final.nextAttemptAt).toBeUndefined();
    expect(final.attemptCount).toBe(341);
    const times = final.attempts.map((a: { startedAt: string }) => Date.parse(a.startedAt));
    const intervals = times.slice(1).map((time: number, i: number) => (time - times[i]) / 1000);
    expect(intervals.slice(0, 7)).toEqual([30, 60, 120, 240, 480, 960, 1800]);
    expect(new Set(intervals.slice(6))).toEqual(new Set([1800]));
    expect((times[340] - times[0]) / 1000).toBe(603_090);
    expect(7 * 24 * 3600 - (times[340] - times[0]) / 1000).toBeLessThan(1800);
    expect(
      final.attempts.every(
        (a: { outcome: string; responseStatus: number }) => a.outcome === 'FAILED' && a.responseStatus === 500,
      ),
    ).toBe(true);

    const tries = receiver.hits.filter((h) => h.type !== 'TEST');
    expect(tries).toHaveLength(341);
    expect(tries.every((h) => h.raw.equals(tries[0]!.raw))).toBe(true);
    expect(tries.every((h) => h.signatureValid)).toBe(true);
    await t.advanceClock(7 * 24 * 3600);
    expect(receiver.hits.filter((h) => h.type !== 'TEST')).toHaveLength(341);
  });

  it('retries a 500 and stops at the first 2xx', async () => {
    const clock = new ManualClock(START_MS);
    const t = await build({ counterpartyRules: true, clock });
    let failures = 2;
    const receiver = track(
      await receiverFor(t, (hit) => (hit.type !== 'TEST' && failures-- > 0 ? { status: 503 } : { status: 200 })),
    );
    await t.runDueJobs();
    const accountId = await activateWallet(t);
    await t.runDueJobs();
    await t.advanceClock(30);
    await t.advanceClock(60);
    const [logged] = await deliveries(t, `?resourceId=${accountId}`);
    expect(logged).toMatchObject({ status: 'DELIVERED', attemptCount: 3 });
    const detail = await delivery(t, logged.id);
    expect(detail.attempts.map((a: any) => [a.outcome, a.responseStatus])).toEqual([
      ['FAILED', 503],
      ['FAILED', 503],
      ['SUCCEEDED', 200],
    ]);
    expect(new Set(receiver.hits.filter((h) => h.type !== 'TEST').map((h) => h.id))).toEqual(new Set([logged.id]));
    await t.advanceClock(3600);
    expect(receiver.hits).toHaveLength(4);
  });

  it('does not retry a 409: the receiver already has the event', async () => {
    const t = await build({ counterpartyRules: true, clock: new ManualClock(START_MS) });
    const receiver = track(
      await receiverFor(t, (hit) =>
        hit.type === 'TEST'
          ? { status: 200 }
          : { status: 409, body: { status: 409, code: 'CONFLICT', message: 'seen' } },
      ),
    );
    await t.runDueJobs();
    const accountId = await activateWallet(t);
    await t.runDueJobs();
    await t.advanceClock(24 * 3600);
    const [logged] = await deliveries(t, `?resourceId=${accountId}`);
    expect(logged).toMatchObject({ status: 'DELIVERED', attemptCount: 1 });
    expect((await delivery(t, logged.id)).attempts[0]).toMatchObject({ outcome: 'DUPLICATE', responseStatus: 409 });
    expect(receiver.hits).toHaveLength(2);
  });

  it('counts a receiver that does not answer in time as a failed try, and retries it', async () => {
    const t = await build({
      counterpartyRules: true,
      clock: new ManualClock(START_MS),
      // Long enough for the answering retry below on a loaded machine; the hang costs it once.
      config: { webhookTimeoutMs: 2_000 },
    });
    const receiver = track(await receiverFor(t, (hit) => (hit.type === 'TEST' ? { status: 200 } : 'hang')));
    await t.runDueJobs();
    const accountId = await activateWallet(t);
    await t.runDueJobs();
    const [logged] = await deliveries(t, `?resourceId=${accountId}`);
    expect(logged.status).toBe('PENDING');
    const attempt = (await delivery(t, logged.id)).attempts[0];
    expect(attempt).toMatchObject({ outcome: 'FAILED', error: 'no complete answer within 2000 ms' });
    expect(attempt.responseStatus).toBeUndefined();
    expect(attempt.latencyMs).toBeGreaterThanOrEqual(1_990);
    receiver.answer = () => ({ status: 200 });
    await t.advanceClock(30);
    expect((await delivery(t, logged.id)).status).toBe('DELIVERED');
  });

  it('counts a refused connection as a failed try, and retries it', async () => {
    const t = await build({ counterpartyRules: true, clock: new ManualClock(START_MS) });
    const receiver = await startReceiver(await publicKeyOf(t));
    const url = receiver.url;
    await receiver.close();
    expect((await t.api('PATCH', '/config', { body: { webhookEndpoint: url } })).status).toBe(200);
    await t.runDueJobs();
    const [test] = await deliveries(t, '?type=TEST');
    // A TEST is sent once and never retried.
    expect(test).toMatchObject({ status: 'FAILED', attemptCount: 1 });
    expect((await delivery(t, test.id)).attempts[0].error).toMatch(/^ECONNREFUSED/);
    const accountId = await activateWallet(t);
    await t.runDueJobs();
    const [logged] = await deliveries(t, `?resourceId=${accountId}`);
    expect(logged).toMatchObject({ status: 'PENDING', attemptCount: 1 });
    await t.advanceClock(30);
    expect((await deliveries(t, `?resourceId=${accountId}`))[0]).toMatchObject({ status: 'PENDING', attemptCount: 2 });
  });

  it('resumes the ladder after a restart, from the store', { timeout: 60_000 }, async () => {
    const clock = new ManualClock(START_MS);
    const dataDir = databaseUrl ? undefined : mkdtempSync(join(tmpdir(), 'railyard-webhooks-'));
    const pgSchema = databaseUrl ? `t_restart_${process.pid}_${Date.now() % 100000}` : undefined;
    try {
      const first = await startInstance({ clock, ...(dataDir ? { dataDir } : {}), ...(pgSchema ? { pgSchema } : {}) });
      const created = await createPlatform(first.deps, { name: 'Restart', counterpartyRules: true });
      const credentials: Credentials = {
        platformId: created.platformId,
        tokenId: created.token.id,
        clientId: created.token.clientId,
        clientSecret: created.token.clientSecret!,
      };
      let tenant = first.as(credentials);
      const receiver = track(
        await receiverFor(tenant, (hit) => (hit.type === 'TEST' ? { status: 200 } : { status: 500 })),
      );
      await first.deps.jobs!.runDue();
      const accountId = await activateWallet(tenant);
      await first.deps.jobs!.runDue();
      for (const seconds of [30, 60]) await tenant.raw('POST', '/_railyard/clock/advance', { body: { seconds } });
      expect((await deliveries(tenant, `?resourceId=${accountId}`))[0]).toMatchObject({
        status: 'PENDING',
        attemptCount: 3,
      });
      await first.close();

      const second = await startInstance({ clock, ...(dataDir ? { dataDir } : {}), ...(pgSchema ? { pgSchema } : {}) });
      tenant = second.as(credentials);
      const [pending] = await deliveries(tenant, `?resourceId=${accountId}`);
      expect(pending).toMatchObject({ status: 'PENDING', attemptCount: 3 });
      // The fourth try is still 120 s after the third, not sooner.
      await tenant.raw('POST', '/_railyard/clock/advance', { body: { seconds: 119 } });
      expect(receiver.hits).toHaveLength(4);
      receiver.answer = () => ({ status: 200 });
      await tenant.raw('POST', '/_railyard/clock/advance', { body: { seconds: 1 } });
      const detail = await delivery(tenant, pending.id);
      expect(detail).toMatchObject({ status: 'DELIVERED', attemptCount: 4 });
      expect(detail.attempts.map((a: any) => a.outcome)).toEqual(['FAILED', 'FAILED', 'FAILED', 'SUCCEEDED']);
      expect(new Set(receiver.hits.slice(1).map((h) => h.id))).toEqual(new Set([pending.id]));
      await second.close();
    } finally {
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
      if (pgSchema && databaseUrl) await dropPgSchema(databaseUrl, pgSchema);
    }
  });
});

describe.skipIf(!databaseUrl)('two instances on one PostgreSQL database', () => {
  it('deliver each event once per try', { timeout: 60_000 }, async () => {
    const clock = new ManualClock(START_MS);
    const pgSchema = `t_pair_${process.pid}_${Date.now() % 100000}`;
    const a = await startInstance({ clock, pgSchema });
    const b = await startInstance({ clock, pgSchema });
    try {
      const created = await createPlatform(a.deps, { name: 'Pair', counterpartyRules: true });
      const tenant = a.as({
        platformId: created.platformId,
        tokenId: created.token.id,
        clientId: created.token.clientId,
        clientSecret: created.token.clientSecret!,
      });
      const receiver = track(
        await receiverFor(tenant, (hit) => (hit.type === 'TEST' ? { status: 200 } : { status: 500, delayMs: 5 })),
      );
      await a.deps.jobs!.runDue();
      const ids = new Set<string>();
      for (let i = 0; i < 24; i++) ids.add(await activateWallet(tenant));
      const countPerId = () => {
        const counts = new Map<string, number>();
        for (const hit of receiver.hits.filter((h) => h.type !== 'TEST'))
          counts.set(hit.json.data.id, (counts.get(hit.json.data.id) ?? 0) + 1);
        return counts;
      };

      const [ranA, ranB] = await Promise.all([a.deps.jobs!.runDue(), b.deps.jobs!.runDue()]);
      // Which instance claims how many depends on timing (one may take a whole batch first);
      // what matters is that together they ran each delivery exactly once.
      expect(ranA + ranB).toBe(24);
      expect([...countPerId().keys()].sort()).toEqual([...ids].sort());
      expect(new Set(countPerId().values())).toEqual(new Set([1]));

      // The retries come due for both instances at once: still one try each.
      await a.deps.db.k
        .updateTable('platforms')
        .set({ clock_offset_ms: 30_000 })
        .where('id', '=', created.platformId)
        .execute();
      await Promise.all([a.deps.jobs!.runDue(), b.deps.jobs!.runDue(), a.deps.jobs!.runDue(), b.deps.jobs!.runDue()]);
      expect(new Set(countPerId().values())).toEqual(new Set([2]));
      const logged = await deliveries(tenant, '?type=EXTERNAL_ACCOUNT.STATUS_UPDATED&limit=100');
      expect(logged).toHaveLength(24);
      expect(new Set(logged.map((d) => d.attemptCount))).toEqual(new Set([2]));
      expectAllConform(receiver);
    } finally {
      await a.close();
      await b.close();
      await dropPgSchema(databaseUrl!, pgSchema);
    }
  });
});

describe('one instance at a time', () => {
  it('writes the first try already claimed by the recording instance when its runner works in the background', async () => {
    const t = await build({ counterpartyRules: true });
    const receiver = track(await receiverFor(t, (hit) => (hit.type === 'TEST' ? { status: 200 } : 'hang')));
    await t.runDueJobs();
    t.deps.jobs!.start();
    try {
      const accountId = await activateWallet(t);
      const [logged] = await deliveries(t, `?resourceId=${accountId}`);
      const job = await t.deps.db.k
        .selectFrom('jobs')
        .selectAll()
        .where(
          'id',
          '=',
          (
            await t.deps.db.k
              .selectFrom('webhook_deliveries')
              .select('job_id')
              .where('id', '=', logged.id)
              .executeTakeFirstOrThrow()
          ).job_id!,
        )
        .executeTakeFirstOrThrow();
      expect(job).toMatchObject({ status: 'RUNNING', locked_by: t.deps.jobs!.instanceId, attempts: 0 });
      await receiver.waitFor(2);
      receiver.release(200);
      for (let i = 0; i < 100 && (await delivery(t, logged.id)).status !== 'DELIVERED'; i++)
        await new Promise((r) => setTimeout(r, 10));
      expect(await delivery(t, logged.id)).toMatchObject({ status: 'DELIVERED', attemptCount: 1 });
      const done = await t.deps.db.k
        .selectFrom('jobs')
        .select(['status', 'locked_by'])
        .where('id', '=', job.id)
        .executeTakeFirstOrThrow();
      expect(done).toEqual({ status: 'DONE', locked_by: null });
    } finally {
      await t.deps.jobs!.stop();
    }
  });

  it('leaves a try claimed by a live instance alone, and takes it over once that claim lapses', async () => {
    const clock = new ManualClock(START_MS);
    const t = await build({ counterpartyRules: true, clock });
    const receiver = track(await receiverFor(t));
    await t.runDueJobs();
    const accountId = await activateWallet(t);
    const [logged] = await deliveries(t, `?resourceId=${accountId}`);
    const { job_id: jobId } = await t.deps.db.k
      .selectFrom('webhook_deliveries')
      .select('job_id')
      .where('id', '=', logged.id)
      .executeTakeFirstOrThrow();
    // Another instance claimed the try, then died with it.
    await t.deps.db.k
      .updateTable('jobs')
      .set({ status: 'RUNNING', locked_by: 'instance-that-died', locked_until_ms: START_MS + 90_000 })
      .where('id', '=', jobId!)
      .execute();
    expect(await t.runDueJobs()).toBe(0);
    expect(receiver.hits).toHaveLength(1);
    clock.advance(90_001);
    expect(await t.runDueJobs()).toBe(1);
    expect(receiver.hits.map((h) => h.id)).toEqual([expect.any(String), logged.id]);
    expect(await delivery(t, logged.id)).toMatchObject({ status: 'DELIVERED', attemptCount: 1 });
  });
});

describe('the background runner', () => {
  it('delivers an event moments after its transaction commits, without a poll or a clock move', async () => {
    const t = await build({ counterpartyRules: true });
    const receiver = track(await receiverFor(t));
    t.deps.jobs!.start();
    try {
      await receiver.waitFor(1, 10_000);
      await activateWallet(t);
      // Nothing here runs the jobs or moves the clock: only the runner can deliver it.
      await receiver.waitFor(2, 10_000);
      expect(receiver.hits[1]!.type).toBe('EXTERNAL_ACCOUNT.STATUS_UPDATED');
      expectAllConform(receiver);
    } finally {
      await t.deps.jobs!.stop();
    }
  });
});
