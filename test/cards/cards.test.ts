// Cards: issuance by sandbox suffix, the state machine and its 409s, funding sources,
// listing, and the reveal of the card's details.

import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { eventsOf } from '../fixtures/money.js';
import { build, type TestApp } from '../helper.js';

async function cardholder(t: TestApp, name = 'Noor Haddad') {
  const customer = await createCustomer(t, individualBody(name));
  const accounts = (await t.api('GET', `/customers/internal-accounts?customerId=${customer.id}`)).body.data;
  const usd = accounts.find((a: any) => a.balance.currency.code === 'USD');
  const other = accounts.find((a: any) => a.balance.currency.code !== 'USD');
  return { customer, usd, other };
}

const issue = (t: TestApp, body: Record<string, unknown>) => t.api('POST', '/cards', { body });

function luhnValid(pan: string): boolean {
  let sum = 0;
  for (let i = 0; i < pan.length; i++) {
    let digit = Number(pan[pan.length - 1 - i]);
    if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum % 10 === 0;
}

describe('issuing a card', () => {
  it('answers PROCESSING and activates at once, after 30 s (005), never (001) or is rejected (002)', async () => {
    const t = await build();
    const { customer, usd } = await cardholder(t);
    const cards: Record<string, any> = {};
    for (const suffix of ['123', '001', '002', '005']) {
      const reply = await issue(t, {
        cardholderId: customer.id,
        platformCardId: `emp-${suffix}`,
        form: 'VIRTUAL',
        fundingSources: [usd.id],
        maxSpendPerTransaction: 5_000,
      });
      expect(reply.status, reply.text).toBe(201);
      expect(reply.body).toMatchObject({
        cardholderId: customer.id,
        platformCardId: `emp-${suffix}`,
        state: 'PROCESSING',
        stateReason: null,
        brand: 'VISA',
        form: 'VIRTUAL',
        last4: `0${suffix}`,
        fundingSources: [usd.id],
        maxSpendPerTransaction: 5_000,
        currency: 'USD',
      });
      cards[suffix] = reply.body;
    }
    await t.runDueJobs();
    const state = async (suffix: string) => (await t.api('GET', `/cards/${cards[suffix].id}`)).body;
    expect((await state('123')).state).toBe('ACTIVE');
    expect(await state('002')).toMatchObject({ state: 'CLOSED', stateReason: 'ISSUER_REJECTED' });
    expect((await state('005')).state).toBe('PROCESSING');
    await t.advanceClock(30);
    expect((await state('005')).state).toBe('ACTIVE');
    await t.advanceClock(3600);
    expect((await state('001')).state).toBe('PROCESSING');
    const events = await eventsOf(t, cards['123'].id);
    expect(events.map((e) => [e.type, e.data.state])).toEqual([['CARD.STATE_CHANGE', 'ACTIVE']]);
    expect((await eventsOf(t, cards['002'].id)).map((e) => e.data.stateReason)).toEqual(['ISSUER_REJECTED']);
  });

  it('needs an APPROVED cardholder and its own accounts in one card currency; nothing is issued otherwise', async () => {
    const t = await build();
    const { customer, usd, other } = await cardholder(t);
    const pending = await cardholder(t, 'Omar Said 001');
    const stranger = await cardholder(t, 'Pia Wolf');
    const kyc = await issue(t, {
      cardholderId: pending.customer.id,
      form: 'VIRTUAL',
      fundingSources: [pending.usd.id],
    });
    expect(kyc.status).toBe(400);
    expect(kyc.body.code).toBe('CARDHOLDER_KYC_NOT_APPROVED');
    const foreign = await issue(t, { cardholderId: customer.id, form: 'VIRTUAL', fundingSources: [stranger.usd.id] });
    expect(foreign.status).toBe(400);
    expect(foreign.body).toMatchObject({ code: 'INVALID_INPUT', details: { reason: 'FUNDING_SOURCE_INELIGIBLE' } });
    expect(foreign.body.details.errors.map((e: any) => e.field)).toEqual(['fundingSources[0]']);
    const mixed = await issue(t, { cardholderId: customer.id, form: 'VIRTUAL', fundingSources: [usd.id, other.id] });
    expect(mixed.status).toBe(400);
    expect(mixed.body.details.errors.map((e: any) => e.field)).toEqual(['fundingSources[1]']);
    const unknown = await issue(t, { cardholderId: 'Customer:nope', form: 'VIRTUAL', fundingSources: [usd.id] });
    expect(unknown.status).toBe(400);
    const bad = await issue(t, { cardholderId: customer.id, form: 'PHYSICAL', fundingSources: [] });
    expect(bad.status).toBe(400);
    expect(bad.body.details.errors.map((e: any) => e.field).sort()).toEqual(['form', 'fundingSources']);
    expect((await t.api('GET', '/cards')).body).toMatchObject({ data: [], totalCount: 0 });
    const first = await issue(t, {
      cardholderId: customer.id,
      platformCardId: 'dup-1',
      form: 'VIRTUAL',
      fundingSources: [usd.id],
    });
    expect(first.status).toBe(201);
    const again = await issue(t, {
      cardholderId: customer.id,
      platformCardId: 'dup-1',
      form: 'VIRTUAL',
      fundingSources: [usd.id],
    });
    expect(again.status).toBe(400);
    expect(again.body.details.errors[0].field).toBe('platformCardId');
  });
});

describe('funding-source binding', () => {
  it('refuses an account id ending in 002 (balance check) or 003 (closed) on issue and on update', async () => {
    const t = await build();
    for (const [suffix, why] of [
      ['002', 'balance check'],
      ['003', 'closed'],
    ] as const) {
      const { customer, usd } = await cardholder(t);
      const card = await issue(t, { cardholderId: customer.id, form: 'VIRTUAL', fundingSources: [usd.id] });
      expect(card.status).toBe(201);
      await t.runDueJobs();
      // Railyard makes account ids, so the test gives the account (no money, no entries yet) an
      // id with the suffix it needs, as an account the hosted sandbox made might have.
      const id = `${usd.id.slice(0, -3)}${suffix}`;
      await t.deps.db.k.updateTable('internal_accounts').set({ id }).where('id', '=', usd.id).execute();
      await t.deps.db.k.updateTable('ledger_accounts').set({ id }).where('id', '=', usd.id).execute();
      const refused = await issue(t, { cardholderId: customer.id, form: 'VIRTUAL', fundingSources: [id] });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ code: 'INVALID_INPUT', details: { reason: 'FUNDING_SOURCE_INELIGIBLE' } });
      expect(refused.body.details.errors).toEqual([
        { field: 'fundingSources[0]', message: expect.stringContaining(why) },
      ]);
      const changed = await t.api('PATCH', `/cards/${card.body.id}`, { body: { fundingSources: [id] } });
      expect(changed.status).toBe(400);
      expect(changed.body.details.reason).toBe('FUNDING_SOURCE_INELIGIBLE');
      expect((await t.api('GET', `/cards/${card.body.id}`)).body.fundingSources).toEqual([usd.id]);
    }
    expect((await t.api('GET', '/cards')).body.data).toHaveLength(2);
  });
});

describe('a card over its life', () => {
  it('freezes, unfreezes, changes funding and limit, closes for good, with each 409', async () => {
    const t = await build();
    const { customer, usd, other } = await cardholder(t);
    const created = (await issue(t, { cardholderId: customer.id, form: 'VIRTUAL', fundingSources: [usd.id] })).body;
    const patch = (body: Record<string, unknown>) => t.api('PATCH', `/cards/${created.id}`, { body });
    // Still PROCESSING: no transition yet.
    const early = await patch({ state: 'FROZEN' });
    expect(early.status).toBe(409);
    expect(early.body.code).toBe('INVALID_STATE_TRANSITION');
    await t.runDueJobs();

    expect((await patch({})).status).toBe(400);
    const frozen = await patch({ state: 'FROZEN' });
    expect(frozen.status, frozen.text).toBe(200);
    expect(frozen.body.state).toBe('FROZEN');
    expect((await patch({ state: 'FROZEN' })).body.code).toBe('INVALID_STATE_TRANSITION');
    expect((await patch({ state: 'ACTIVE', maxSpendPerTransaction: 2_500 })).body).toMatchObject({
      state: 'ACTIVE',
      maxSpendPerTransaction: 2_500,
    });
    expect((await patch({ maxSpendPerTransaction: null })).body.maxSpendPerTransaction).toBeNull();
    // A customer holds one account per currency: the same binding again changes nothing; another currency is refused.
    expect((await patch({ fundingSources: [usd.id] })).body.fundingSources).toEqual([usd.id]);
    const otherCurrency = await patch({ fundingSources: [other.id] });
    expect(otherCurrency.status).toBe(400);
    expect(otherCurrency.body.details.reason).toBe('FUNDING_SOURCE_INELIGIBLE');
    const together = await patch({ state: 'CLOSED', fundingSources: [usd.id] });
    expect(together.status).toBe(400);
    expect(together.body.details.errors.map((e: any) => e.field)).toEqual(['fundingSources']);

    const closed = await patch({ state: 'CLOSED' });
    expect(closed.body).toMatchObject({ state: 'CLOSED', stateReason: 'CLOSED_BY_PLATFORM', fundingSources: [] });
    expect((await patch({ state: 'CLOSED' })).body.code).toBe('CARD_ALREADY_CLOSED');
    expect((await patch({ state: 'ACTIVE' })).body.code).toBe('CARD_NOT_MUTABLE');
    expect((await patch({ maxSpendPerTransaction: 10 })).body.code).toBe('CARD_NOT_MUTABLE');

    const events = (await eventsOf(t, created.id)).map((e) => [e.type, e.data.state]);
    expect(events).toEqual([
      ['CARD.STATE_CHANGE', 'ACTIVE'],
      ['CARD.STATE_CHANGE', 'FROZEN'],
      ['CARD.STATE_CHANGE', 'ACTIVE'],
      ['CARD.STATE_CHANGE', 'CLOSED'],
      ['CARD.FUNDING_SOURCE_CHANGE', 'CLOSED'],
    ]);
    expect((await t.api('GET', '/cards/Card:nope')).status).toBe(404);
  });

  it('closes a frozen card, and refuses ACTIVE to ACTIVE', async () => {
    const t = await build();
    const { customer, usd } = await cardholder(t);
    const card = (await issue(t, { cardholderId: customer.id, form: 'VIRTUAL', fundingSources: [usd.id] })).body;
    await t.runDueJobs();
    const patch = (body: Record<string, unknown>) => t.api('PATCH', `/cards/${card.id}`, { body });
    const again = await patch({ state: 'ACTIVE' });
    expect([again.status, again.body.code]).toEqual([409, 'INVALID_STATE_TRANSITION']);
    expect((await patch({ state: 'FROZEN' })).body.state).toBe('FROZEN');
    const closed = await patch({ state: 'CLOSED' });
    expect([closed.status, closed.body.state, closed.body.stateReason]).toEqual([200, 'CLOSED', 'CLOSED_BY_PLATFORM']);
    expect(closed.body.fundingSources).toEqual([]);
    expect((await eventsOf(t, card.id)).map((e) => [e.type, e.data.state])).toEqual([
      ['CARD.STATE_CHANGE', 'ACTIVE'],
      ['CARD.STATE_CHANGE', 'FROZEN'],
      ['CARD.STATE_CHANGE', 'CLOSED'],
      ['CARD.FUNDING_SOURCE_CHANGE', 'CLOSED'],
    ]);
  });

  it('lists by cardholder, funding account, state and platformCardId, in both orders', async () => {
    const t = await build();
    const a = await cardholder(t, 'Ana Ruiz');
    const b = await cardholder(t, 'Ben Cole');
    const ids: string[] = [];
    for (const [holder, platformCardId] of [
      [a, 'a-1'],
      [b, 'b-1'],
      [a, 'a-2'],
    ] as const) {
      const reply = await issue(t, {
        cardholderId: holder.customer.id,
        platformCardId,
        form: 'VIRTUAL',
        fundingSources: [holder.usd.id],
      });
      ids.push(reply.body.id);
      await t.advanceClock(1);
    }
    const list = async (query: string) => (await t.api('GET', `/cards?${query}`)).body.data.map((c: any) => c.id);
    expect(await list('')).toEqual([...ids].reverse());
    expect(await list('sortOrder=asc')).toEqual(ids);
    expect(await list(`cardholderId=${a.customer.id}`)).toEqual([ids[2], ids[0]]);
    expect(await list(`accountId=${b.usd.id}`)).toEqual([ids[1]]);
    expect(await list('platformCardId=a-2')).toEqual([ids[2]]);
    expect(await list('state=ACTIVE')).toEqual([...ids].reverse());
    expect(await list('state=FROZEN')).toEqual([]);
    for (const bad of ['limit=0', 'state=MELTED', 'sortOrder=up']) {
      expect((await t.api('GET', `/cards?${bad}`)).status, bad).toBe(400);
    }
  });
});

describe('revealing a card', () => {
  it('answers a short-lived link whose token stays in the fragment, and the page shows the sealed details', async () => {
    const t = await build();
    const { customer, usd } = await cardholder(t);
    const card = (
      await issue(t, {
        cardholderId: customer.id,
        platformCardId: 'rev-042',
        form: 'VIRTUAL',
        fundingSources: [usd.id],
      })
    ).body;
    const reveal = await t.api('POST', `/cards/${card.id}/reveal`);
    expect(reveal.status, reveal.text).toBe(200);
    const url = new URL(reveal.body.panEmbedUrl);
    expect(url.pathname).toBe('/_railyard/card-reveal');
    expect(url.hash.length).toBeGreaterThan(20);
    expect(Date.parse(reveal.body.expiresAt) - Date.now()).toBeLessThanOrEqual(5 * 60_000 + 1_000);

    const page = await t.raw('GET', '/_railyard/card-reveal', { auth: null });
    expect(page.text).toContain('location.hash');
    const details = await t.raw('POST', '/_railyard/card-reveal', { auth: null, body: { token: url.hash.slice(1) } });
    expect(details.status, details.text).toBe(200);
    expect(details.body.pan).toMatch(/^4000\d{8}0042$/);
    expect(luhnValid(details.body.pan)).toBe(true);
    expect(details.body.cvc).toMatch(/^\d{3}$/);
    expect([details.body.expMonth, details.body.expYear]).toEqual([card.expMonth, card.expYear]);
    // Stored sealed: the number is not in the row.
    const row = await t.deps.db.k.selectFrom('cards').selectAll().where('id', '=', card.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(details.body.pan);

    await t.advanceClock(5 * 60 + 1);
    const expired = await t.raw('POST', '/_railyard/card-reveal', { auth: null, body: { token: url.hash.slice(1) } });
    expect(expired.status).toBe(404);
    expect((await t.api('POST', '/cards/Card:nope/reveal')).status).toBe(404);

    const viewer = await t.api('POST', '/tokens', { body: { name: 'viewer', permissions: ['VIEW'] } });
    const refused = await t.api('POST', `/cards/${card.id}/reveal`, {
      auth: { username: viewer.body.clientId, password: viewer.body.clientSecret },
    });
    expect(refused.status).toBe(403);
  });

  it("keeps the link's token and the card's details out of the server log and the exchange record", async () => {
    const record = join(mkdtempSync(join(tmpdir(), 'railyard-reveal-')), 'exchanges.ndjson');
    const lines: string[] = [];
    const t = await build({ config: { recordFile: record }, logStream: { write: (line) => lines.push(line) } });
    const { customer, usd } = await cardholder(t);
    const card = (await issue(t, { cardholderId: customer.id, form: 'VIRTUAL', fundingSources: [usd.id] })).body;
    const reveal = await t.api('POST', `/cards/${card.id}/reveal`);
    expect(reveal.status, reveal.text).toBe(200);
    const token = new URL(reveal.body.panEmbedUrl).hash.slice(1);
    const details = await t.raw('POST', '/_railyard/card-reveal', { auth: null, body: { token } });
    expect(details.status, details.text).toBe(200);

    const log = lines.join('');
    expect(log).toContain(`/cards/${card.id}/reveal`); // the log is really captured
    const recorded = readFileSync(record, 'utf8');
    expect(recorded).toContain('/_railyard/card-reveal#not-recorded');
    for (const secret of [token, details.body.pan]) {
      expect(log).not.toContain(secret);
      expect(recorded).not.toContain(secret);
    }
    expect(log).not.toContain('"cvc"');
    expect(recorded).not.toContain('"cvc"');
  });
});
