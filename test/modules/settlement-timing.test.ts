// The platform setting `settlementTiming` (docs/hosted-differences.md): its default and the
// server-wide override, PATCH /_railyard/platform and its refusals, the server admin's
// platform creation, platforms stored before the setting, payouts under way when it changes,
// cancelling a payout that is still processing, the webhooks of a hosted payout, and what a
// reset and a snapshot do with it. The timing of each rail is in test/flows/hosted-settlement.test.ts.

import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, SETTLEMENT_TIMING_DEFAULT } from '../../src/config.js';
import { enableServerAdmin } from '../../src/sandbox/server-admin.js';
import { expectAllConform, receiverFor } from '../events/support.js';
import { balances, eventsOf, expectBalancedBooks, externalAccount, fundedUsd, transferOut } from '../fixtures/money.js';
import { START_MS } from '../fixtures/quotes.js';
import { until } from '../fixtures/until.js';
import { build, ManualClock, type Tenant, type TestApp } from '../helper.js';

const P = (type: string) => `OUTGOING_PAYMENT.${type}`;

async function timingOf(t: Tenant): Promise<string> {
  const reply = await t.raw('GET', '/_railyard/platform');
  expect(reply.status).toBe(200);
  return reply.body.settlementTiming;
}

async function setTiming(t: Tenant, settlementTiming: unknown) {
  return t.raw('PATCH', '/_railyard/platform', { body: { settlementTiming } });
}

/** A plain ACH payout of 100.00 USD from the platform's funded USD account; answers the transaction. */
async function achPayout(t: Tenant, suffix = '000'): Promise<any> {
  const source = await fundedUsd(t, 1_000_000);
  const destination = await externalAccount(t, 'USD_ACCOUNT', suffix);
  const reply = await transferOut(t, source.id, destination.id, 10_000);
  expect(reply.status).toBe(201);
  expect(reply.body.paymentRail).toBe('ACH');
  return { ...reply.body, sourceId: source.id };
}

async function statusOf(t: Tenant, transactionId: string): Promise<string> {
  return (await t.api('GET', `/transactions/${transactionId}`)).body.status;
}

describe('the default settlement timing', () => {
  it('is hosted for a new platform when nothing chooses: an ACH payout is PROCESSING until 120 s have passed', async () => {
    expect(SETTLEMENT_TIMING_DEFAULT).toBe('hosted');
    // The suite's config sets `instant`; without it the server's own default applies.
    const t = await build({ clock: new ManualClock(START_MS), config: { settlementTiming: undefined } });
    expect(await timingOf(t)).toBe('hosted');
    const payout = await achPayout(t);
    expect(payout.status).toBe('PROCESSING');
    await t.advanceClock(120);
    expect(await statusOf(t, payout.id)).toBe('COMPLETED');
    // So is a platform added later on the same server.
    expect(await timingOf(await t.newPlatform())).toBe('hosted');
  });

  it('follows RAILYARD_SETTLEMENT_TIMING, and a bad value stops the start naming the variable', () => {
    expect(loadConfig({}).settlementTiming).toBe('hosted');
    expect(loadConfig({ RAILYARD_SETTLEMENT_TIMING: '' }).settlementTiming).toBe('hosted');
    expect(loadConfig({ RAILYARD_SETTLEMENT_TIMING: 'instant' }).settlementTiming).toBe('instant');
    expect(loadConfig({ RAILYARD_SETTLEMENT_TIMING: 'hosted' }).settlementTiming).toBe('hosted');
    for (const bad of ['HOSTED', 'slow', '0']) {
      expect(() => loadConfig({ RAILYARD_SETTLEMENT_TIMING: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ RAILYARD_SETTLEMENT_TIMING: bad })).toThrow(
        `RAILYARD_SETTLEMENT_TIMING must be instant or hosted, got "${bad}"`,
      );
    }
  });

  it("is the server's setting for every platform it makes, unless the platform's creation chooses", async () => {
    const t = await build({ config: { settlementTiming: 'instant' } });
    expect(await timingOf(t)).toBe('instant');
    expect((await achPayout(t)).status).toBe('COMPLETED');
    const hosted = await t.newPlatform({ settlementTiming: 'hosted' });
    expect(await timingOf(hosted)).toBe('hosted');
    expect((await achPayout(hosted)).status).toBe('PROCESSING');
  });

  it('reads as instant for a platform stored before the setting existed', async () => {
    const t = await build({ settlementTiming: 'hosted' });
    const row = await t.deps.db.k
      .selectFrom('platforms')
      .select('settings')
      .where('id', '=', t.platformId)
      .executeTakeFirstOrThrow();
    const { settlementTiming: _dropped, ...before } = JSON.parse(row.settings);
    await t.deps.db.k
      .updateTable('platforms')
      .set({ settings: JSON.stringify(before) })
      .where('id', '=', t.platformId)
      .execute();
    t.deps.authCache?.clear();
    expect(await timingOf(t)).toBe('instant');
    expect((await achPayout(t)).status).toBe('COMPLETED');
  });
});

describe('PATCH /_railyard/platform {settlementTiming}', () => {
  it('switches between instant and hosted; each payout takes the setting in force when it starts', async () => {
    const t = await build({ clock: new ManualClock(START_MS) });
    expect(await timingOf(t)).toBe('instant');
    expect((await achPayout(t)).status).toBe('COMPLETED');

    const switched = await setTiming(t, 'hosted');
    expect(switched.status).toBe(200);
    expect(switched.body).toMatchObject({ id: t.platformId, settlementTiming: 'hosted', strictIdentifiers: false });
    expect(await timingOf(t)).toBe('hosted');
    const underWay = await achPayout(t);
    expect(underWay.status).toBe('PROCESSING');

    // Back to instant: the next payout completes at once, the one under way keeps its time.
    expect((await setTiming(t, 'instant')).body.settlementTiming).toBe('instant');
    expect((await achPayout(t)).status).toBe('COMPLETED');
    expect(await statusOf(t, underWay.id)).toBe('PROCESSING');
    await t.advanceClock(119.999);
    expect(await statusOf(t, underWay.id)).toBe('PROCESSING');
    await t.advanceClock(0.001);
    expect(await statusOf(t, underWay.id)).toBe('COMPLETED');
    await expectBalancedBooks(t);
  });

  it('refuses a value that is not instant or hosted with 400 naming settlementTiming, and changes nothing', async () => {
    const t = await build();
    for (const bad of ['slow', 'HOSTED', '', 5, null, true, ['hosted'], { timing: 'hosted' }]) {
      const reply = await setTiming(t, bad);
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({ status: 400, code: 'INVALID_INPUT' });
      expect(reply.body.details.errors.map((e: { field: string }) => e.field)).toEqual(['settlementTiming']);
    }
    // With another bad field, both are named, and neither is applied.
    const both = await t.raw('PATCH', '/_railyard/platform', { body: { settlementTiming: 'slow', name: '' } });
    expect(both.status).toBe(400);
    expect(both.body.details.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'name',
      'settlementTiming',
    ]);
    expect(await timingOf(t)).toBe('instant');
  });

  it('needs MANAGE', async () => {
    const t = await build();
    const token = await t.api('POST', '/tokens', { body: { name: 'read only', permissions: ['VIEW'] } });
    expect(token.status).toBe(201);
    const reader = { clientId: token.body.clientId, clientSecret: token.body.clientSecret };
    const refused = await t.raw('PATCH', '/_railyard/platform', {
      body: { settlementTiming: 'hosted' },
      auth: { username: reader.clientId, password: reader.clientSecret },
    });
    expect(refused.status).toBe(401);
    expect(await timingOf(t)).toBe('instant');
  });
});

describe('POST /_railyard/server/platforms {settlementTiming}', () => {
  it("sets the new platform's timing, takes the server's default without it, and refuses a bad value", async () => {
    const t = await build();
    const adminToken = 'settlement-admin-token-0123456789';
    enableServerAdmin(t.deps, adminToken);
    const create = (body: unknown) =>
      t.raw('POST', '/_railyard/server/platforms', {
        body,
        auth: null,
        headers: { authorization: `Bearer ${adminToken}` },
      });
    const tenantOf = (body: any): Tenant & { platformId: string } => ({
      platformId: body.platformId,
      tokenId: body.tokenId,
      clientId: body.clientId,
      clientSecret: body.clientSecret,
      raw: (method, path, options = {}) =>
        t.raw(method, path, { ...options, auth: { username: body.clientId, password: body.clientSecret } }),
      api: (method, path, options = {}) =>
        t.api(method, path, { ...options, auth: { username: body.clientId, password: body.clientSecret } }),
    });
    const hosted = await create({ name: 'Hosted team', settlementTiming: 'hosted' });
    expect(hosted.status).toBe(201);
    expect(await timingOf(tenantOf(hosted.body))).toBe('hosted');
    const plain = await create({ name: 'Default team' });
    expect(plain.status).toBe(201);
    expect(await timingOf(tenantOf(plain.body))).toBe('instant');
    const bad = await create({ name: 'Bad team', settlementTiming: 'later' });
    expect(bad.status).toBe(400);
    expect(bad.body.details.errors.map((e: { field: string }) => e.field)).toEqual(['settlementTiming']);
  });
});

describe('a hosted payout', () => {
  it('sends the webhooks of an instant one, each when its step happens', async () => {
    const run = async (timing: 'instant' | 'hosted') => {
      const t = await build({ clock: new ManualClock(START_MS), settlementTiming: timing });
      const receiver = await receiverFor(t);
      try {
        const payout = await achPayout(t);
        const mine = () => receiver.hits.filter((h) => h.json.data?.id === payout.id);
        await t.runDueJobs();
        if (timing === 'hosted') {
          await until('the PROCESSING webhook', () => mine().length === 1);
          expect(await statusOf(t, payout.id)).toBe('PROCESSING');
          await t.advanceClock(120);
          await t.runDueJobs();
        }
        await until('the COMPLETED webhook', () => mine().length === 2);
        expectAllConform(receiver);
        return mine();
      } finally {
        await receiver.close();
      }
    };
    const instant = await run('instant');
    const hosted = await run('hosted');
    expect(hosted.map((h) => h.type)).toEqual([P('PROCESSING'), P('COMPLETED')]);
    expect(instant.map((h) => h.type)).toEqual([P('PROCESSING'), P('COMPLETED')]);
    // The same payload shape at each step; the hosted completion is dated 120 s later.
    for (const [i, hit] of hosted.entries()) {
      expect(Object.keys(hit.json).sort()).toEqual(Object.keys(instant[i]!.json).sort());
      expect(Object.keys(hit.json.data).sort()).toEqual(Object.keys(instant[i]!.json.data).sort());
      expect(hit.json.data.status).toBe(instant[i]!.json.data.status);
    }
    expect(instant[1]!.json.timestamp).toBe(new Date(START_MS).toISOString());
    expect(hosted[1]!.json.timestamp).toBe(new Date(START_MS + 120_000).toISOString());
    expect(hosted[1]!.json.data.settledAt).toBe(new Date(START_MS + 120_000).toISOString());
  });

  it('can be cancelled while it processes (ACH): refunded, and the completion that falls due later changes nothing', async () => {
    const t = await build({ clock: new ManualClock(START_MS), settlementTiming: 'hosted' });
    const payout = await achPayout(t);
    await t.advanceClock(60);
    const cancelled = await t.api('POST', `/transactions/${payout.id}/cancel`, { body: { reason: 'Wrong amount' } });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      status: 'COMPLETED',
      refund: { status: 'COMPLETED', reason: 'USER_CANCELLATION' },
    });
    await t.advanceClock(3_600);
    expect((await eventsOf(t, payout.id)).map((e) => e.type)).toEqual([
      P('PROCESSING'),
      P('REFUND_PENDING'),
      P('REFUND_COMPLETED'),
      P('COMPLETED'),
    ]);
    expect(await balances(t, payout.sourceId)).toEqual({ balance: 1_000_000, totalBalance: 1_000_000 });
    await expectBalancedBooks(t);
  });
});

describe('reset and snapshots', () => {
  it('a reset keeps the setting, as it keeps the other settings', async () => {
    for (const timing of ['instant', 'hosted'] as const) {
      const t: TestApp = await build({ settlementTiming: timing });
      expect((await t.raw('POST', '/_railyard/reset')).status).toBe(200);
      expect(await timingOf(t)).toBe(timing);
    }
  });

  it('a restore brings back the setting of the save, and its payout under way completes on time', async () => {
    const t = await build({ clock: new ManualClock(START_MS), settlementTiming: 'hosted' });
    const payout = await achPayout(t);
    const saved = await t.raw('POST', '/_railyard/snapshots', { body: { name: 'in-flight' } });
    expect(saved.status).toBe(201);

    // After the save: switched to instant, and the payout completed.
    await setTiming(t, 'instant');
    await t.advanceClock(120);
    expect(await statusOf(t, payout.id)).toBe('COMPLETED');

    const restored = await t.raw('POST', '/_railyard/snapshots/in-flight/restore');
    expect(restored.status).toBe(200);
    expect(await timingOf(t)).toBe('hosted');
    expect(await statusOf(t, payout.id)).toBe('PROCESSING');
    await t.advanceClock(119.999);
    expect(await statusOf(t, payout.id)).toBe('PROCESSING');
    await t.advanceClock(0.001);
    expect(await statusOf(t, payout.id)).toBe('COMPLETED');
    await expectBalancedBooks(t);
  });
});
