// GET /_railyard/events as a test waits for events and follows the log: `type` as a comma
// list, `after` (the events recorded after one, oldest first), `wait` (hold the request until
// an event matches, or answer an empty page at the deadline), each event with its webhook's
// delivery. On both stores, and on PostgreSQL across two instances on one database.

import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { dropPgSchema, sql } from '../../src/db/index.js';
import { recordEvent } from '../../src/events/outbox.js';
import { EVENT_WAITERS_MAX, eventWaitersNow } from '../../src/events/waiters.js';
import { createPlatform } from '../../src/modules/platform/service.js';
import { receiverFor, startInstance } from '../events/support.js';
import { individualBody } from '../fixtures/customers.js';
import { externalAccount, fundedUsd, transferOut } from '../fixtures/money.js';
import { startServer, TEST_CLIENT_ID, TEST_CLIENT_SECRET } from '../fixtures/server.js';
import { until } from '../fixtures/until.js';
import { build, databaseUrl, type Reply, type Tenant } from '../helper.js';

/** A request (or other work) in flight, and whether it has been answered yet. */
function pending<T = Reply>(reply: Promise<T>): { reply: Promise<T>; answered: () => boolean } {
  let answered = false;
  const tracked = reply.finally(() => (answered = true));
  return { reply: tracked, answered: () => answered };
}

const events = (t: Tenant, query: string) => t.raw('GET', `/_railyard/events?${query}`);

/** A payout from the platform's funded USD account to a new account with `suffix` (005: fails 30 s later). */
async function payout(t: Tenant, suffix: string, amount = 1_000): Promise<any> {
  const source = await fundedUsd(t, 100_000);
  const destination = await externalAccount(t, 'USD_ACCOUNT', suffix);
  const sent = await transferOut(t, source.id, destination.id, amount);
  expect(sent.status, sent.text).toBe(201);
  return sent.body;
}

describe('GET /_railyard/events?wait=', () => {
  it('holds the request until a matching event commits, with no webhook endpoint set', async () => {
    const t = await build();
    const slow = await payout(t, '005');
    const waiting = pending(events(t, `type=OUTGOING_PAYMENT.FAILED&resourceId=${slow.id}&wait=25`));
    // Nothing matches yet: the request is held while the platform goes on working.
    const customer = await t.api('POST', '/customers', { body: individualBody('Ada Waiting') });
    expect(customer.status).toBe(201);
    expect(waiting.answered()).toBe(false);
    // The payout fails once its 30 s have passed on the sandbox clock.
    expect((await t.advanceClock(31)).jobsRun).toBeGreaterThan(0);
    const reply = await waiting.reply;
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual([
      expect.objectContaining({
        type: 'OUTGOING_PAYMENT.FAILED',
        resourceId: slow.id,
        data: expect.objectContaining({ status: 'FAILED' }),
      }),
    ]);
    // No endpoint: no delivery.
    expect(reply.body.data[0].delivery).toBeUndefined();
  });

  it('answers at once when an event already matches, and an empty page at the deadline', async () => {
    const t = await build();
    const paid = await payout(t, '000');
    const now = await events(t, `type=OUTGOING_PAYMENT.COMPLETED&wait=25`);
    expect(now.status).toBe(200);
    expect(now.body.data.map((e: any) => e.resourceId)).toEqual([paid.id]);
    const started = performance.now();
    const empty = await events(t, `type=OUTGOING_PAYMENT.FAILED&wait=1.5`);
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_500);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ data: [], hasMore: false, totalCount: 0 });
  });

  it('takes several types as a comma list', async () => {
    const t = await build();
    const slow = await payout(t, '005');
    await t.advanceClock(31);
    const reply = await events(t, `type=OUTGOING_PAYMENT.PROCESSING,OUTGOING_PAYMENT.FAILED&resourceId=${slow.id}`);
    expect(reply.status).toBe(200);
    expect(reply.body.data.map((e: any) => e.type)).toEqual(['OUTGOING_PAYMENT.FAILED', 'OUTGOING_PAYMENT.PROCESSING']);
    expect(reply.body.totalCount).toBe(2);
  });

  it('follows the log with after: the events recorded after one, oldest first, page by page', async () => {
    const t = await build();
    await t.api('POST', '/customers', { body: individualBody('Grace Follower') });
    const first = (await events(t, 'limit=100')).body.data.at(-1);
    await t.api('POST', '/customers', { body: individualBody('Alan Follower') });
    await payout(t, '000');
    await payout(t, '005');
    await t.advanceClock(31);
    // Every event since the first, as the newest-first list shows them, oldest first.
    const all = (await events(t, 'limit=100')).body.data.map((e: any) => e.id).reverse();
    const since = all.slice(all.indexOf(first.id) + 1);
    expect(since.length).toBeGreaterThan(6);
    const followed: string[] = [];
    let after = first.id;
    for (let pages = 0; ; pages++) {
      const page = (await events(t, `after=${encodeURIComponent(after)}&limit=3`)).body;
      expect(page.data.length).toBeLessThanOrEqual(3);
      followed.push(...page.data.map((e: any) => e.id));
      if (!page.hasMore) break;
      after = page.data.at(-1).id;
      expect(pages).toBeLessThan(20);
    }
    expect(followed).toEqual(since);
    // At the end of the log, a wait is answered by the next event recorded.
    const next = pending(events(t, `after=${encodeURIComponent(followed.at(-1)!)}&wait=25`));
    expect(next.answered()).toBe(false);
    const customer = await t.api('POST', '/customers', { body: individualBody('Next Event') });
    const reply = await next.reply;
    expect(reply.body.data.map((e: any) => e.resourceId)).toContain(customer.body.id);
    expect(reply.body.data[0].id).not.toBe(followed.at(-1));
  });

  it("shows each event's webhook delivery, when the platform had an endpoint", async () => {
    const t = await build();
    const before = await payout(t, '000');
    const receiver = await receiverFor(t);
    try {
      const after = await payout(t, '000');
      await t.runDueJobs();
      const withEndpoint = (await events(t, `type=OUTGOING_PAYMENT.COMPLETED&resourceId=${after.id}`)).body.data;
      expect(withEndpoint).toHaveLength(1);
      expect(withEndpoint[0].delivery).toMatchObject({ status: 'DELIVERED', attemptCount: 1 });
      expect(withEndpoint[0].delivery.deliveredAt).toEqual(expect.any(String));
      expect(receiver.hits.map((hit) => hit.id)).toContain(withEndpoint[0].id);
      const without = (await events(t, `type=OUTGOING_PAYMENT.COMPLETED&resourceId=${before.id}`)).body.data;
      expect(without).toHaveLength(1);
      expect(without[0].delivery).toBeUndefined();
    } finally {
      await receiver.close();
    }
  });

  it('refuses bad values, naming each field', async () => {
    const t = await build();
    await t.api('POST', '/customers', { body: individualBody('Ada Refused') });
    const anEvent = (await events(t, 'limit=1')).body.data[0].id;
    const cases: [string, string[]][] = [
      ['wait=31', ['wait']],
      ['wait=-1', ['wait']],
      ['wait=soon', ['wait']],
      ['type=OUTGOING_PAYMENT.DONE', ['type']],
      ['type=OUTGOING_PAYMENT.COMPLETED,,CUSTOMER.KYC_APPROVED', ['type']],
      ['after=Webhook:00000000-0000-0000-0000-000000000000', ['after']],
      [`after=${encodeURIComponent(anEvent)}&cursor=abc`, ['cursor']],
      ['wait=99&type=NOPE', ['type', 'wait']],
    ];
    for (const [query, fields] of cases) {
      const reply = await events(t, query);
      expect(reply.status, query).toBe(400);
      expect(reply.body.code, query).toBe('INVALID_INPUT');
      expect(reply.body.details.errors.map((e: any) => e.field).sort(), query).toEqual(fields);
    }
    // Another platform's event is not one of this platform's.
    const other = await t.newPlatform();
    const foreign = await events(other, `after=${encodeURIComponent(anEvent)}`);
    expect(foreign.status).toBe(400);
    expect(foreign.body.details.errors.map((e: any) => e.field)).toEqual(['after']);
  });

  it('holds no database connection while waiting, and refuses waits beyond the bound', {
    timeout: 90_000,
  }, async () => {
    const t = await build();
    const marker = `Waiter ${randomBytes(4).toString('hex')}`;
    // As many waits as a process holds, more than the store's connections (10 per test app on
    // PostgreSQL, one on the embedded store).
    const waits = Array.from({ length: EVENT_WAITERS_MAX }, () =>
      pending(events(t, 'type=CUSTOMER.KYC_APPROVED&createdAfter=2999-01-01T00:00:00Z&wait=25')),
    );
    const answered = () => waits.filter((w) => w.answered()).length;
    // Each phase has its own bound and says where it stopped, with what it saw.
    await until(
      () => `the server to hold ${EVENT_WAITERS_MAX} waits: ${eventWaitersNow()} held, ${answered()} answered`,
      () => eventWaitersNow() >= EVENT_WAITERS_MAX,
      20_000,
      10,
    );
    // Held, none answered: the next one is refused at once.
    expect(answered()).toBe(0);
    const refused = await events(t, 'type=CUSTOMER.KYC_APPROVED&createdAfter=2999-01-01T00:00:00Z&wait=1');
    expect(refused.body).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect(refused.headers['retry-after']).toBe('1');
    // The store still serves requests while they wait: they hold none of its connections.
    const customer = await t.api('POST', '/customers', { body: individualBody(marker) });
    expect(customer.status).toBe(201);
    expect(answered()).toBe(0);
    // The server closes: every wait is answered (an empty page), not cut.
    const closed = pending(t.app.close());
    await until(() => `the server to close: ${answered()} of the waits answered`, closed.answered, 20_000, 10);
    for (const w of waits) {
      const reply = await w.reply;
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ data: [], hasMore: false, totalCount: 0 });
    }
  });
});

describe('a server that stops while a request waits for events', () => {
  it('answers the request before it exits on SIGTERM', { timeout: 90_000 }, async () => {
    const schema = databaseUrl ? `t_drain_${randomBytes(5).toString('hex')}` : undefined;
    const env: Record<string, string> = {};
    if (schema !== undefined) {
      const admin = new pg.Client({ connectionString: databaseUrl });
      await admin.connect();
      await admin.query(`CREATE SCHEMA ${schema}`);
      await admin.end();
      const url = new URL(databaseUrl!);
      url.searchParams.set('options', `-c search_path=${schema}`);
      env.DATABASE_URL = url.toString();
    }
    const server = await startServer(env);
    try {
      const authorization = `Basic ${Buffer.from(`${TEST_CLIENT_ID}:${TEST_CLIENT_SECRET}`).toString('base64')}`;
      const waiting = fetch(`${server.origin}/_railyard/events?type=OUTGOING_PAYMENT.FAILED&wait=30`, {
        headers: { authorization },
      });
      // Once the request is held (a wait of its own, answered empty, shows the server is up
      // and waiting works), stop the server.
      const probe = await fetch(`${server.origin}/_railyard/events?type=OUTGOING_PAYMENT.FAILED&wait=0.5`, {
        headers: { authorization },
      });
      expect(probe.status).toBe(200);
      const started = systemClock.nowMs();
      const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
      server.child.kill('SIGTERM');
      const reply = await waiting;
      expect(reply.status).toBe(200);
      expect(await reply.json()).toEqual({ data: [], hasMore: false, totalCount: 0 });
      expect(await exited).toBe(0);
      // It did not sit out the 30 s wait (nor the 30 s drain bound, after which it exits with 1).
      expect(systemClock.nowMs() - started).toBeLessThan(25_000);
    } finally {
      await server.kill('SIGKILL');
      if (schema !== undefined) await dropPgSchema(databaseUrl!, schema);
    }
  });
});

describe.skipIf(!databaseUrl)('GET /_railyard/events?after= on PostgreSQL, where transactions run side by side', () => {
  it('never answers an event before one that a transaction begun earlier has yet to commit', async () => {
    const t = await build();
    await t.api('POST', '/customers', { body: individualBody('Start Here') });
    const start = (await events(t, 'limit=1')).body.data[0].id;
    const now = new Date();
    // A transaction records an event and stays open; a later one records another and commits.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let recorded!: () => void;
    const isRecorded = new Promise<void>((resolve) => (recorded = resolve));
    const early = t.deps.db.transaction(async (tx) => {
      await recordEvent(tx, { platformId: t.platformId, type: 'TEST', resourceId: 'early', data: {}, now });
      // The insert goes out now (it would otherwise travel with the next statement).
      await sql`SELECT 1`.execute(tx);
      recorded();
      await released;
    });
    await isRecorded;
    await t.deps.db.transaction((tx) =>
      recordEvent(tx, { platformId: t.platformId, type: 'TEST', resourceId: 'late', data: {}, now }),
    );
    // The later event has committed, but a reader at `start` that saw it now would never see
    // the earlier one: it is held back until the earlier transaction ends.
    expect((await events(t, `after=${encodeURIComponent(start)}`)).body.data).toEqual([]);
    const following = pending(events(t, `after=${encodeURIComponent(start)}&wait=25`));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(following.answered()).toBe(false);
    release();
    await early;
    const reply = await following.reply;
    expect(reply.body.data.map((e: any) => e.resourceId)).toEqual(['early', 'late']);
  });

  it('is not held back by a transaction of another schema in the same database', async () => {
    // Two installations on one database, in two schemas (as each test app is here): a
    // transaction left open in one does not stop a reader of the other's log.
    const t = await build();
    const other = await build();
    await t.api('POST', '/customers', { body: individualBody('Start Here') });
    const start = (await events(t, 'limit=1')).body.data[0].id;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let recorded!: () => void;
    const isRecorded = new Promise<void>((resolve) => (recorded = resolve));
    const elsewhere = other.deps.db.transaction(async (tx) => {
      await recordEvent(tx, {
        platformId: other.platformId,
        type: 'TEST',
        resourceId: 'elsewhere',
        data: {},
        now: new Date(),
      });
      await sql`SELECT 1`.execute(tx);
      recorded();
      await released;
    });
    try {
      await isRecorded;
      const customer = await t.api('POST', '/customers', { body: individualBody('After Start') });
      const read = (await events(t, `after=${encodeURIComponent(start)}`)).body.data;
      expect(read.map((e: any) => e.resourceId)).toContain(customer.body.id);
    } finally {
      release();
      await elsewhere;
    }
  });
});

describe.skipIf(!databaseUrl)('GET /_railyard/events?wait= with two instances on one PostgreSQL', () => {
  it('wakes on an event another instance records', { timeout: 90_000 }, async () => {
    const pgSchema = `t_events_${randomBytes(5).toString('hex')}`;
    const waiting = await startInstance({ clock: systemClock, pgSchema });
    const recording = await startInstance({ clock: systemClock, pgSchema });
    try {
      const created = await createPlatform(recording.deps, { name: 'Two', counterpartyRules: false });
      const credentials = {
        platformId: created.platformId,
        tokenId: created.token.id,
        clientId: created.token.clientId,
        clientSecret: created.token.clientSecret!,
      };
      const here = waiting.as(credentials);
      const there = recording.as(credentials);
      await there.api('POST', '/customers', { body: individualBody('First Event') });
      const last = (await events(here, 'limit=1')).body.data[0].id;
      const held = pending(events(here, `after=${encodeURIComponent(last)}&type=CUSTOMER.KYC_APPROVED&wait=25`));
      // Held on this instance, with nothing of the other's yet.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(held.answered()).toBe(false);
      const customer = await there.api('POST', '/customers', { body: individualBody('Remote Event') });
      expect(customer.status).toBe(201);
      const committedAtMs = systemClock.nowMs();
      const reply = await held.reply;
      const answeredAtMs = systemClock.nowMs();
      expect(reply.status).toBe(200);
      expect(reply.body.data.map((e: any) => [e.type, e.resourceId])).toEqual([
        ['CUSTOMER.KYC_APPROVED', customer.body.id],
      ]);
      // For the record, not a bound (the machine may be loaded).
      console.log(
        `a wait on one instance was answered ${answeredAtMs - committedAtMs} ms after another instance's commit`,
      );
    } finally {
      await waiting.close();
      await recording.close();
      await dropPgSchema(databaseUrl!, pgSchema);
    }
  });
});
