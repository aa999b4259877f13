// Fault rules on a platform's webhook deliveries (POST /_railyard/webhook-faults): a duplicate,
// an out-of-order pair, a dropped try, a delay on the sandbox clock, each seen by a receiver that
// verifies signatures, and in the delivery log.

import { describe, expect, it } from 'vitest';
import { externalAccount, fundedUsd, transferOut } from '../fixtures/money.js';
import { deliveries, delivery, expectAllConform, type Receiver, receiverFor } from '../events/support.js';
import { build, type Tenant, type TestApp } from '../helper.js';
import { addWebhookFaultRule, faultTags } from './support.js';

/** A funded platform with a receiver, and a transfer-out maker. */
async function world(t: TestApp, tenant: Tenant = t) {
  const receiver = await receiverFor(tenant);
  const source = await fundedUsd(tenant, 1_000_000);
  const destination = await externalAccount(tenant, 'USD_ACCOUNT');
  let n = 0;
  const transfer = async () => {
    const reply = await transferOut(tenant, source.id, destination.id, 100 + n, { 'idempotency-key': `wf-${n++}` });
    expect(reply.status, reply.text).toBe(201);
    return reply.body.id as string;
  };
  return { receiver, transfer };
}

/** The receiver's hits about one object, as [type, id]. */
function hitsOf(receiver: Receiver, resourceId: string) {
  return receiver.hits.filter((h) => h.json.data?.id === resourceId).map((h) => [h.type, h.id]);
}

/**
 * Runs due jobs until `done` holds (the test app runs jobs only when asked). The bound is
 * generous: the first send of a process starts the sender's thread, which on a loaded
 * machine takes seconds.
 */
async function until(t: TestApp, done: () => boolean, what: string) {
  const deadline = Date.now() + 60_000;
  while (!done() && Date.now() < deadline) {
    await t.runDueJobs();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(done(), what).toBe(true);
}

/** Lets every due job run, then a little more, so that what should not arrive had its chance. */
async function settle(t: TestApp) {
  for (let i = 0; i < 5; i++) {
    await t.runDueJobs();
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
}

async function deliveryOf(tenant: Tenant, type: string, resourceId: string) {
  const [found] = await deliveries(tenant, `?type=${type}&resourceId=${encodeURIComponent(resourceId)}`);
  return delivery(tenant, found.id);
}

describe('POST /_railyard/webhook-faults', () => {
  it('adds, lists and removes rules, and refuses a bad one naming every field', async () => {
    const t = await build();
    const rule = await addWebhookFaultRule(t, { eventType: 'OUTGOING_PAYMENT.COMPLETED', effect: 'drop', times: 2 });
    expect(rule).toMatchObject({ effect: 'drop', times: 2, firedCount: 0, active: true });
    expect(rule.id).toMatch(/^WebhookFaultRule:/);
    expect((await t.raw('GET', '/_railyard/webhook-faults')).body.data).toHaveLength(1);

    const bad = await t.raw('POST', '/_railyard/webhook-faults', {
      body: { eventType: 'PAYMENT.DONE', effect: 'drop', delaySeconds: 5, times: 0 },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details.errors.map((e: any) => e.field).sort()).toEqual(['delaySeconds', 'eventType', 'times']);
    const noDelay = await t.raw('POST', '/_railyard/webhook-faults', { body: { effect: 'delay' } });
    expect(noDelay.body.details.errors).toEqual([{ field: 'delaySeconds', message: 'is required for delay' }]);
    const noEffect = await t.raw('POST', '/_railyard/webhook-faults', { body: { effect: 'lose' } });
    expect(noEffect.body.details.errors.map((e: any) => e.field)).toEqual(['effect']);

    expect((await t.raw('DELETE', `/_railyard/webhook-faults/${rule.id}`)).status).toBe(204);
    expect((await t.raw('DELETE', `/_railyard/webhook-faults/${rule.id}`)).status).toBe(404);
    await addWebhookFaultRule(t, { effect: 'duplicate' });
    expect((await t.raw('DELETE', '/_railyard/webhook-faults')).status).toBe(204);
    expect((await t.raw('GET', '/_railyard/webhook-faults')).body.data).toEqual([]);
    expect((await faultTags(t, t.platformId)).webhook_fault_rules).toBeNull();
  });

  it('duplicate: the receiver gets the same envelope twice, one id, both signed', async () => {
    const t = await build();
    const { receiver, transfer } = await world(t);
    const rule = await addWebhookFaultRule(t, {
      eventType: 'OUTGOING_PAYMENT.COMPLETED',
      effect: 'duplicate',
      times: 1,
    });
    const first = await transfer();
    await until(t, () => hitsOf(receiver, first).length === 3, 'PROCESSING once, COMPLETED twice');
    const completed = receiver.hits.filter((h) => h.json.data?.id === first && h.type === 'OUTGOING_PAYMENT.COMPLETED');
    expect(completed).toHaveLength(2);
    expect(completed[1]!.id).toBe(completed[0]!.id);
    expect(completed[1]!.raw.equals(completed[0]!.raw)).toBe(true);
    expectAllConform(receiver);
    const logged = await deliveryOf(t, 'OUTGOING_PAYMENT.COMPLETED', first);
    expect(logged).toMatchObject({
      status: 'DELIVERED',
      attemptCount: 2,
      fault: { ruleId: rule.id, effect: 'duplicate' },
    });
    expect(logged.attempts.map((a: any) => [a.outcome, a.fault])).toEqual([
      ['SUCCEEDED', undefined],
      ['SUCCEEDED', 'duplicate'],
    ]);

    // Used up: the next payment's events arrive once each.
    const second = await transfer();
    await until(t, () => hitsOf(receiver, second).length === 2, 'the next payment');
    await settle(t);
    expect(hitsOf(receiver, second).map(([type]) => type)).toEqual([
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.COMPLETED',
    ]);
  });

  it('outOfOrder: an object’s next event is sent before the held one', async () => {
    const t = await build();
    const { receiver, transfer } = await world(t);
    const rule = await addWebhookFaultRule(t, {
      eventType: 'OUTGOING_PAYMENT.PROCESSING',
      effect: 'outOfOrder',
      times: 1,
    });
    const id = await transfer();
    await until(t, () => hitsOf(receiver, id).length === 2, 'both events of the payment');
    expect(hitsOf(receiver, id).map(([type]) => type)).toEqual([
      'OUTGOING_PAYMENT.COMPLETED',
      'OUTGOING_PAYMENT.PROCESSING',
    ]);
    const completed = await deliveryOf(t, 'OUTGOING_PAYMENT.COMPLETED', id);
    const processing = await deliveryOf(t, 'OUTGOING_PAYMENT.PROCESSING', id);
    expect(processing).toMatchObject({
      status: 'DELIVERED',
      fault: { ruleId: rule.id, effect: 'outOfOrder', heldBehind: completed.id },
    });
    expect(completed.fault).toBeUndefined();
    expectAllConform(receiver);
  });

  it('outOfOrder with no later event: removing the rule sends the held delivery', async () => {
    const t = await build();
    const { receiver, transfer } = await world(t);
    const rule = await addWebhookFaultRule(t, { eventType: 'OUTGOING_PAYMENT.COMPLETED', effect: 'outOfOrder' });
    const id = await transfer();
    await until(t, () => hitsOf(receiver, id).length === 1, 'PROCESSING');
    await settle(t);
    expect(hitsOf(receiver, id).map(([type]) => type)).toEqual(['OUTGOING_PAYMENT.PROCESSING']);
    const held = await deliveryOf(t, 'OUTGOING_PAYMENT.COMPLETED', id);
    expect(held).toMatchObject({ status: 'PENDING', attemptCount: 0, fault: { effect: 'outOfOrder' } });
    expect(Date.parse(held.nextAttemptAt) - Date.parse(held.createdAt)).toBe(60 * 60_000);

    expect((await t.raw('DELETE', `/_railyard/webhook-faults/${rule.id}`)).status).toBe(204);
    await until(t, () => hitsOf(receiver, id).length === 2, 'COMPLETED once the rule is gone');
    expect((await deliveryOf(t, 'OUTGOING_PAYMENT.COMPLETED', id)).status).toBe('DELIVERED');
  });

  it('drop: the first try is not sent and counts as failed, and is logged; the retry ladder delivers it', async () => {
    const lines: string[] = [];
    const t = await build({ logStream: { write: (line) => void lines.push(line) } });
    const { receiver, transfer } = await world(t);
    const rule = await addWebhookFaultRule(t, { eventType: 'OUTGOING_PAYMENT.COMPLETED', effect: 'drop', times: 1 });
    const id = await transfer();
    await until(t, () => hitsOf(receiver, id).length === 1, 'PROCESSING');
    await settle(t);
    expect(hitsOf(receiver, id).map(([type]) => type)).toEqual(['OUTGOING_PAYMENT.PROCESSING']);
    const dropped = await deliveryOf(t, 'OUTGOING_PAYMENT.COMPLETED', id);
    expect(dropped).toMatchObject({ status: 'PENDING', attemptCount: 1, fault: { ruleId: rule.id, effect: 'drop' } });
    expect(dropped.attempts).toEqual([
      expect.objectContaining({ number: 1, outcome: 'FAILED', fault: 'drop', error: expect.stringContaining(rule.id) }),
    ]);
    const logged = lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'webhook fault rule fired');
    expect(logged).toEqual([
      expect.objectContaining({
        faultRuleId: rule.id,
        effect: 'drop',
        deliveryId: dropped.id,
        eventType: dropped.type,
      }),
    ]);
    // The first retry is due 30 s after the failed try (counted from when it was recorded, so a
    // little later on a busy machine), well before the ladder's second step.
    const retryAfterMs = Date.parse(dropped.nextAttemptAt) - Date.parse(dropped.attempts[0].startedAt);
    expect(retryAfterMs).toBeGreaterThanOrEqual(30_000);
    expect(retryAfterMs).toBeLessThan(60_000);

    await t.advanceClock(30);
    await until(t, () => hitsOf(receiver, id).length === 2, 'COMPLETED on the retry');
    const delivered = await deliveryOf(t, 'OUTGOING_PAYMENT.COMPLETED', id);
    expect(delivered.status).toBe('DELIVERED');
    expect(delivered.attempts.map((a: any) => [a.number, a.outcome, a.fault])).toEqual([
      [1, 'FAILED', 'drop'],
      [2, 'SUCCEEDED', undefined],
    ]);
    expectAllConform(receiver);
  });

  it('delay: the delivery waits delaySeconds on the sandbox clock', async () => {
    const t = await build();
    const { receiver, transfer } = await world(t);
    // An hour, so that the wall-clock time the test itself takes (the sandbox clock moves
    // with it) cannot make the delivery due before the clock is moved.
    await addWebhookFaultRule(t, {
      eventType: 'OUTGOING_PAYMENT.COMPLETED',
      effect: 'delay',
      delaySeconds: 3600,
      times: 1,
    });
    const id = await transfer();
    await until(t, () => hitsOf(receiver, id).length === 1, 'PROCESSING');
    await t.advanceClock(1800);
    await settle(t);
    expect(hitsOf(receiver, id).map(([type]) => type)).toEqual(['OUTGOING_PAYMENT.PROCESSING']);
    const waiting = await deliveryOf(t, 'OUTGOING_PAYMENT.COMPLETED', id);
    expect(waiting).toMatchObject({
      status: 'PENDING',
      attemptCount: 0,
      fault: { effect: 'delay', delaySeconds: 3600 },
    });
    expect(Date.parse(waiting.nextAttemptAt) - Date.parse(waiting.createdAt)).toBe(3_600_000);
    await t.advanceClock(1800);
    await until(t, () => hitsOf(receiver, id).length === 2, 'COMPLETED once the hour has passed');
  });

  it("leaves another platform's deliveries alone", async () => {
    const t = await build();
    const other = await t.newPlatform();
    const here = await world(t);
    const there = await world(t, other);
    await addWebhookFaultRule(t, { effect: 'drop' });
    const mine = await here.transfer();
    const theirs = await there.transfer();
    await until(t, () => hitsOf(there.receiver, theirs).length === 2, "the other platform's events");
    await settle(t);
    expect(hitsOf(here.receiver, mine)).toEqual([]);
    expect((await deliveries(other)).every((d) => d.fault === undefined && d.status === 'DELIVERED')).toBe(true);
    expect((await faultTags(t, other.platformId)).webhook_fault_rules).toBeNull();
  });
});
