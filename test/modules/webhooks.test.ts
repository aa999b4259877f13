// The webhook operations: the TEST webhook (on an endpoint change, and on demand), and
// railyard's delivery log with replay.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { build, ManualClock } from '../helper.js';
import {
  activateWallet,
  deliveries,
  delivery,
  expectAllConform,
  publicKeyOf,
  receiverFor,
  startReceiver,
  type Receiver,
} from '../events/support.js';

const START_MS = Date.parse('2025-06-02T09:00:00.000Z');
const open: Receiver[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});
const track = (receiver: Receiver) => {
  open.push(receiver);
  return receiver;
};

describe('PATCH /config (webhookEndpoint)', () => {
  it('sends a TEST webhook to a new endpoint, once, and none when the endpoint stays or is cleared', async () => {
    const t = await build();
    const receiver = track(await receiverFor(t));
    await t.runDueJobs();
    expect(receiver.hits).toHaveLength(1);
    const [test] = receiver.hits;
    expect(test!.json).toEqual({ id: test!.id, type: 'TEST', timestamp: expect.any(String), data: {} });
    expectAllConform(receiver);

    await t.api('PATCH', '/config', { body: { webhookEndpoint: receiver.url, umaDomain: 'pay.example.com' } });
    await t.api('PATCH', '/config', { body: { umaDomain: 'other.example.com' } });
    await t.runDueJobs();
    expect(receiver.hits).toHaveLength(1);

    const other = track(await startReceiver(await publicKeyOf(t)));
    await t.api('PATCH', '/config', { body: { webhookEndpoint: other.url } });
    await t.api('PATCH', '/config', { body: { webhookEndpoint: '' } });
    await t.runDueJobs();
    // Sent after the commit to the endpoint of that moment, which was cleared since: the
    // try finds no endpoint and, being a TEST, is not tried again.
    expect(other.hits).toHaveLength(0);
    const tests = await deliveries(t, '?type=TEST');
    expect(tests.map((d) => d.status)).toEqual(['FAILED', 'DELIVERED']);
    expect((await delivery(t, tests[0].id)).attempts).toEqual([
      expect.objectContaining({ number: 1, outcome: 'FAILED', error: 'no webhook endpoint is set' }),
    ]);
  });
});

describe('POST /sandbox/webhooks/test', () => {
  it('answers 400 WEBHOOK_ENDPOINT_NOT_SET without an endpoint', async () => {
    const t = await build();
    const reply = await t.api('POST', '/sandbox/webhooks/test');
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ status: 400, code: 'WEBHOOK_ENDPOINT_NOT_SET', message: expect.any(String) });
  });

  it("sends a signed TEST now and answers with the receiver's status and body", async () => {
    const t = await build();
    const receiver = track(await receiverFor(t, () => ({ status: 200, body: { received: true } })));
    // The docs' examples send a body; the reference defines none, so it is ignored.
    const reply = await t.api('POST', '/sandbox/webhooks/test', { body: { url: 'https://elsewhere.example.com' } });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ url: receiver.url, response_status: 200, response_body: '{"received":true}' });
    expect(receiver.hits).toHaveLength(1);
    expect(receiver.hits[0]!.type).toBe('TEST');
    expectAllConform(receiver);
    const [logged] = await deliveries(t, `?type=TEST&status=DELIVERED`);
    expect(logged.id).toBe(receiver.hits[0]!.id);
    expect((await delivery(t, logged.id)).attempts).toEqual([
      expect.objectContaining({
        number: 1,
        trigger: 'SEND_TEST',
        outcome: 'SUCCEEDED',
        responseStatus: 200,
        responseExcerpt: '{"received":true}',
      }),
    ]);
  });

  it('answers 400 WEBHOOK_DELIVERY_ERROR with what the receiver said, and does not retry', async () => {
    const t = await build({ clock: new ManualClock(START_MS) });
    const receiver = track(
      await receiverFor(t, (_hit, index) =>
        index === 0
          ? { status: 200 }
          : { status: 401, body: { status: 401, code: 'UNAUTHORIZED', message: 'bad signature' } },
      ),
    );
    await t.runDueJobs();
    const reply = await t.api('POST', '/sandbox/webhooks/test');
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({
      status: 400,
      code: 'WEBHOOK_DELIVERY_ERROR',
      details: {
        url: receiver.url,
        response_status: 401,
        response_body: JSON.stringify({ status: 401, code: 'UNAUTHORIZED', message: 'bad signature' }),
      },
    });
    await t.advanceClock(3600);
    expect(receiver.hits).toHaveLength(2);
    expect(await deliveries(t, '?type=TEST&status=FAILED')).toHaveLength(1);
  });

  it('answers 400 WEBHOOK_DELIVERY_ERROR when nothing answers', async () => {
    const t = await build({ config: { webhookTimeoutMs: 150 } });
    const receiver = track(await receiverFor(t, () => 'hang'));
    const reply = await t.api('POST', '/sandbox/webhooks/test');
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({
      code: 'WEBHOOK_DELIVERY_ERROR',
      details: { url: receiver.url, error: 'no complete answer within 150 ms' },
    });

    const closed = await startReceiver(await publicKeyOf(t));
    await closed.close();
    await t.api('PATCH', '/config', { body: { webhookEndpoint: closed.url } });
    const refused = await t.api('POST', '/sandbox/webhooks/test');
    expect(refused.status).toBe(400);
    expect(refused.body.details.error).toMatch(/^ECONNREFUSED/);
  });

  it('needs MANAGE, and a token without it is refused with 401 (the operation declares no 403)', async () => {
    const t = await build();
    const created = await t.api('POST', '/tokens', { body: { name: 'reader', permissions: ['VIEW'] } });
    const reply = await t.api('POST', '/sandbox/webhooks/test', {
      auth: { username: created.body.clientId, password: created.body.clientSecret },
    });
    expect(reply.status).toBe(401);
    expect(reply.body.details.requiredPermission).toBe('MANAGE');
  });
});

describe('GET /_railyard/webhooks/deliveries', () => {
  it('lists newest first and filters by type, status and resource id, with pages', async () => {
    const t = await build({ counterpartyRules: true, clock: new ManualClock(START_MS) });
    const receiver = track(
      await receiverFor(t, (hit) => (hit.json.data?.id === failing ? { status: 500 } : { status: 200 })),
    );
    let failing = '';
    await t.runDueJobs();
    const accounts: string[] = [];
    for (let i = 0; i < 3; i++) accounts.push(await activateWallet(t));
    failing = accounts[1]!;
    await t.runDueJobs();
    expect(receiver.hits).toHaveLength(4);

    const all = await t.raw('GET', '/_railyard/webhooks/deliveries');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ hasMore: false, totalCount: 4 });
    expect(all.body.data.map((d: any) => d.resourceId)).toEqual([...accounts].reverse().concat(t.platformId));
    expect((await deliveries(t, '?type=TEST')).map((d) => d.type)).toEqual(['TEST']);
    expect((await deliveries(t, '?status=PENDING')).map((d) => d.resourceId)).toEqual([accounts[1]]);
    expect(
      (await deliveries(t, '?status=DELIVERED&type=EXTERNAL_ACCOUNT.STATUS_UPDATED')).map((d) => d.resourceId),
    ).toEqual([accounts[2], accounts[0]]);
    expect((await deliveries(t, `?resourceId=${accounts[0]}`)).map((d) => d.status)).toEqual(['DELIVERED']);

    const first = await t.raw('GET', '/_railyard/webhooks/deliveries?limit=3');
    expect(first.body).toMatchObject({ hasMore: true, totalCount: 4, nextCursor: expect.any(String) });
    const second = await t.raw('GET', `/_railyard/webhooks/deliveries?limit=3&cursor=${first.body.nextCursor}`);
    expect(second.body.data.map((d: any) => d.type)).toEqual(['TEST']);
    expect(second.body.hasMore).toBe(false);
  });

  it('names every invalid filter and keeps platforms apart', async () => {
    const t = await build({ counterpartyRules: true });
    const bad = await t.raw('GET', '/_railyard/webhooks/deliveries?type=NOT.A_TYPE&status=LOST&limit=0');
    expect(bad.status).toBe(400);
    expect(bad.body.details.errors.map((e: { field: string }) => e.field).sort()).toEqual(['limit', 'status', 'type']);

    track(await receiverFor(t));
    await t.runDueJobs();
    const [mine] = await deliveries(t);
    const other = await t.newPlatform();
    expect(await deliveries(other)).toEqual([]);
    expect((await other.raw('GET', `/_railyard/webhooks/deliveries/${mine.id}`)).status).toBe(404);
    expect((await other.raw('POST', `/_railyard/webhooks/deliveries/${mine.id}/replay`)).status).toBe(404);
    expect((await t.raw('GET', '/_railyard/webhooks/deliveries', { auth: null })).status).toBe(401);
  });
});

describe('POST /_railyard/webhooks/deliveries/{id}/replay', () => {
  it('sends the same envelope again as a new round, logged as REPLAY tries', async () => {
    const t = await build({ counterpartyRules: true, clock: new ManualClock(START_MS) });
    const receiver = track(await receiverFor(t));
    await t.runDueJobs();
    const accountId = await activateWallet(t);
    await t.runDueJobs();
    const [logged] = await deliveries(t, `?resourceId=${accountId}`);

    const replayed = await t.raw('POST', `/_railyard/webhooks/deliveries/${logged.id}/replay`);
    expect(replayed.status).toBe(202);
    expect(replayed.body).toMatchObject({ id: logged.id, status: 'PENDING', attemptCount: 1 });
    expect(replayed.body.nextAttemptAt).toBe(new Date(START_MS).toISOString());
    await t.runDueJobs();
    const hits = receiver.hits.filter((h) => h.id === logged.id);
    expect(hits).toHaveLength(2);
    expect(hits[1]!.raw.equals(hits[0]!.raw)).toBe(true);
    const detail = await delivery(t, logged.id);
    expect(detail).toMatchObject({ status: 'DELIVERED', attemptCount: 2 });
    expect(detail.attempts.map((a: any) => [a.number, a.trigger, a.outcome])).toEqual([
      [1, 'EVENT', 'SUCCEEDED'],
      [2, 'REPLAY', 'SUCCEEDED'],
    ]);
    expectAllConform(receiver);
  });

  it('restarts the retry ladder of a delivery that gave up, and of a test send', async () => {
    const t = await build({ counterpartyRules: true, clock: new ManualClock(START_MS) });
    const receiver = track(await receiverFor(t, () => ({ status: 500 })));
    await t.runDueJobs();
    const [test] = await deliveries(t, '?type=TEST');
    expect(test.status).toBe('FAILED');
    expect((await t.api('POST', '/sandbox/webhooks/test')).status).toBe(400);

    receiver.answer = (_hit, index) => (index < 3 ? { status: 500 } : { status: 200 });
    const replayed = await t.raw('POST', `/_railyard/webhooks/deliveries/${test.id}/replay`);
    expect(replayed.status).toBe(202);
    await t.runDueJobs();
    // A replayed TEST is still tried once: the answer was a 500.
    expect(await delivery(t, test.id)).toMatchObject({ status: 'FAILED', attemptCount: 2 });
    const [sent] = await deliveries(t, '?type=TEST&status=FAILED');
    await t.raw('POST', `/_railyard/webhooks/deliveries/${sent.id}/replay`);
    await t.runDueJobs();
    expect((await delivery(t, sent.id)).attempts.map((a: any) => [a.trigger, a.outcome])).toEqual([
      ['SEND_TEST', 'FAILED'],
      ['REPLAY', 'SUCCEEDED'],
    ]);
  });

  it('is refused while a try of the delivery is under way', async () => {
    const t = await build({ counterpartyRules: true });
    const receiver = track(await receiverFor(t, (hit) => (hit.type === 'TEST' ? { status: 200 } : 'hang')));
    await t.runDueJobs();
    await activateWallet(t);
    const running = t.runDueJobs();
    await receiver.waitFor(2);
    const [logged] = await deliveries(t, '?type=EXTERNAL_ACCOUNT.STATUS_UPDATED');
    const refused = await t.raw('POST', `/_railyard/webhooks/deliveries/${logged.id}/replay`);
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('CONFLICT');
    receiver.release(200);
    await running;
    expect((await delivery(t, logged.id)).status).toBe('DELIVERED');
    expect((await t.raw('POST', `/_railyard/webhooks/deliveries/${logged.id}/replay`)).status).toBe(202);
  });

  it('answers 404 for an unknown delivery, 409 without an endpoint, and needs MANAGE', async () => {
    const t = await build();
    track(await receiverFor(t));
    await t.runDueJobs();
    const [test] = await deliveries(t);
    expect(
      (await t.raw('POST', '/_railyard/webhooks/deliveries/Webhook:019542f5-b3e7-7d02-8000-000000000001/replay'))
        .status,
    ).toBe(404);
    const created = await t.api('POST', '/tokens', { body: { name: 'reader', permissions: ['VIEW'] } });
    const reader = { username: created.body.clientId, password: created.body.clientSecret };
    expect((await t.raw('GET', `/_railyard/webhooks/deliveries/${test.id}`, { auth: reader })).status).toBe(200);
    expect((await t.raw('POST', `/_railyard/webhooks/deliveries/${test.id}/replay`, { auth: reader })).status).toBe(
      401,
    );
    await t.api('PATCH', '/config', { body: { webhookEndpoint: '' } });
    const noEndpoint = await t.raw('POST', `/_railyard/webhooks/deliveries/${test.id}/replay`);
    expect(noEndpoint.status).toBe(409);
    expect(noEndpoint.body.code).toBe('CONFLICT');
  });
});

describe('docs/webhooks.md', () => {
  it("verification snippet accepts railyard's signatures and refuses a changed body", async () => {
    const readme = readFileSync(join(__dirname, '../../docs/webhooks.md'), 'utf8');
    const code = /<!-- webhook-verify -->\n```js\n([\s\S]*?)```/.exec(readme)![1]!;
    const verifyGridSignature = new Function('require', `${code}\nreturn verifyGridSignature;`)(
      createRequire(__filename),
    ) as (body: Buffer, header: string, key: string) => boolean;
    const t = await build();
    const receiver = track(await receiverFor(t));
    await t.runDueJobs();
    const [hit] = receiver.hits;
    const header = String(hit!.headers['x-grid-signature']);
    const key = await publicKeyOf(t);
    expect(verifyGridSignature(hit!.raw, header, key)).toBe(true);
    expect(verifyGridSignature(Buffer.from(hit!.raw.toString('utf8').replace('"TEST"', '"TEST" ')), header, key)).toBe(
      false,
    );
    expect(verifyGridSignature(hit!.raw, JSON.parse(header).s, key)).toBe(true);
    const other = await publicKeyOf(await t.newPlatform());
    expect(verifyGridSignature(hit!.raw, header, other)).toBe(false);
  });
});
