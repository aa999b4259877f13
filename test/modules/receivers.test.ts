// Receiver lookups: every sandbox UMA address on both sandbox domains, unknown receivers,
// bad parameters, external accounts, and the stored lookup a quote cites.

import { describe, expect, it } from 'vitest';
import { findReceiverLookup } from '../../src/modules/receivers/service.js';
import { SANDBOX_UMA_ADDRESSES, SANDBOX_UMA_DOMAINS } from '../../src/rails/magic.js';
import { build } from '../helper.js';
import { accountBody } from '../fixtures/accounts.js';
import { customerWithAccounts, externalAccount } from '../fixtures/money.js';
import { createCustomer, individualBody } from '../fixtures/customers.js';

/** A lookup shows the mid rate of the moment: the sandbox anchor moved by at most 0.2% (src/rates). */
function nearMid(anchor: number) {
  return expect.toSatisfy((rate: number) => Math.abs(rate - anchor) <= anchor * 0.002 + 1e-9);
}

const CURRENCIES = {
  USD: { code: 'USD', name: 'US Dollar', symbol: '$', decimals: 2 },
  EUR: { code: 'EUR', name: 'Euro', symbol: '€', decimals: 2 },
  MXN: { code: 'MXN', name: 'Mexican Peso', symbol: 'MX$', decimals: 2 },
};

const lookupUma = (t: { api: any }, address: string, query = '') =>
  t.api('GET', `/receiver/uma/${encodeURIComponent(address)}${query}`);

describe('GET /receiver/uma/{receiverUmaAddress}', () => {
  // [name, currency, scenario the lookup stores for the quote]
  const cases: [string, keyof typeof CURRENCIES, string][] = [
    ['success.usd', 'USD', 'SUCCESS'],
    ['success.eur', 'EUR', 'SUCCESS'],
    ['success.mxn', 'MXN', 'SUCCESS'],
    ['pending.long.usd', 'USD', 'PENDING_LONG'],
    ['fail.compliance.usd', 'USD', 'FAIL_COMPLIANCE'],
  ];
  it('covers every sandbox address of the magic table', () => {
    expect(SANDBOX_UMA_ADDRESSES.map((r) => r.name).sort()).toEqual(cases.map((c) => c[0]).sort());
  });

  for (const domain of SANDBOX_UMA_DOMAINS) {
    it.each(cases)(`$%s@${domain} answers its currency and is stored for a quote`, async (name, currency, scenario) => {
      const t = await build();
      const { customer } = await customerWithAccounts(t);
      const address = `$${name}@${domain}`;
      const reply = await lookupUma(t, address, `?customerId=${encodeURIComponent(customer.id)}`);
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({
        receiverUmaAddress: address,
        supportedCurrencies: [
          {
            currency: CURRENCIES[currency],
            estimatedExchangeRate: nearMid({ USD: 1, EUR: 0.92, MXN: 17.25 }[currency]!),
            min: 1,
            max: 1_000_000_000,
          },
        ],
        requiredPayerDataFields: [
          { name: 'FULL_NAME', mandatory: true },
          { name: 'NATIONALITY', mandatory: false },
        ],
        lookupId: expect.stringMatching(/^Lookup:[0-9a-f-]{36}$/),
      });
      const stored = await findReceiverLookup(t.deps.db.k, t.platformId, reply.body.lookupId);
      expect(stored).toEqual({
        id: reply.body.lookupId,
        kind: 'UMA',
        umaAddress: address,
        currencies: [{ code: currency, min: 1, max: 1_000_000_000 }],
        requiredPayerDataFields: [
          { name: 'FULL_NAME', mandatory: true },
          { name: 'NATIONALITY', mandatory: false },
        ],
        scenario,
        createdAt: expect.any(String),
      });
    });
  }

  it('reads the address case-insensitively and accepts a sender UMA address instead of a customer', async () => {
    const t = await build();
    const reply = await lookupUma(
      t,
      '$Success.EUR@Sandbox.UMA.money',
      `?senderUmaAddress=${encodeURIComponent('$alex@railyard.sandbox.uma.money')}`,
    );
    expect(reply.status).toBe(200);
    expect(reply.body.receiverUmaAddress).toBe('$success.eur@sandbox.uma.money');
    expect(reply.body.supportedCurrencies[0].currency.code).toBe('EUR');
  });

  it.each([
    ['an unknown name on a sandbox domain', '$non.existent.usd@sandbox.uma.money'],
    ['an unknown name on the other sandbox domain', '$success.gbp@sandbox.grid.uma.money'],
    ['a known name on another domain', '$success.usd@wallet.example.com'],
  ])('answers 404 UMA_NOT_FOUND for %s and stores nothing', async (_what, address) => {
    const t = await build();
    const reply = await lookupUma(
      t,
      address,
      `?senderUmaAddress=${encodeURIComponent('$alex@railyard.sandbox.uma.money')}`,
    );
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ status: 404, code: 'UMA_NOT_FOUND' });
    expect(await t.deps.db.k.selectFrom('receiver_lookups').selectAll().execute()).toEqual([]);
  });

  it('answers one 400 naming every bad parameter', async () => {
    const t = await build();
    const noSender = await lookupUma(t, 'not-an-address');
    expect(noSender.status).toBe(400);
    expect(noSender.body.code).toBe('INVALID_INPUT');
    expect(noSender.body.details.errors.map((e: any) => e.field)).toEqual([
      'receiverUmaAddress',
      'senderUmaAddress',
      'customerId',
    ]);
    const badAddresses = await lookupUma(t, 'success.usd', '?senderUmaAddress=alex');
    expect(badAddresses.status).toBe(400);
    expect(badAddresses.body.code).toBe('INVALID_UMA_ADDRESS');
    expect(badAddresses.body.details.errors.map((e: any) => e.field)).toEqual([
      'receiverUmaAddress',
      'senderUmaAddress',
    ]);
    expect(await t.deps.db.k.selectFrom('receiver_lookups').selectAll().execute()).toEqual([]);
  });

  it("answers 404 USER_NOT_FOUND for a sender customer that is not the platform's", async () => {
    const t = await build();
    const other = await t.newPlatform();
    const theirs = await createCustomer(other, individualBody('Casey Morgan'));
    for (const id of ['Customer:019542f5-b3e7-7d02-8000-000000000001', theirs.id]) {
      const reply = await lookupUma(t, '$success.usd@sandbox.uma.money', `?customerId=${encodeURIComponent(id)}`);
      expect(reply.status).toBe(404);
      expect(reply.body.code).toBe('USER_NOT_FOUND');
    }
  });

  it('needs credentials', async () => {
    const t = await build();
    const reply = await t.api(
      'GET',
      `/receiver/uma/${encodeURIComponent('$success.usd@sandbox.uma.money')}?customerId=x`,
      { auth: null },
    );
    expect(reply.status).toBe(401);
  });
});

describe('GET /receiver/external-account/{accountId}', () => {
  it("answers the account's currency, asks for no payer data, and stores the lookup", async () => {
    const t = await build();
    const { customer } = await customerWithAccounts(t);
    const created = await t.api('POST', '/customers/external-accounts', {
      body: { ...accountBody('MXN_ACCOUNT', '000'), customerId: customer.id },
    });
    expect(created.status).toBe(201);
    const reply = await t.api(
      'GET',
      `/receiver/external-account/${created.body.id}?customerId=${encodeURIComponent(customer.id)}`,
    );
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      accountId: created.body.id,
      supportedCurrencies: [
        { currency: CURRENCIES.MXN, estimatedExchangeRate: nearMid(17.25), min: 1, max: 1_000_000_000 },
      ],
      requiredPayerDataFields: [],
      lookupId: expect.stringMatching(/^Lookup:/),
    });
    expect(await findReceiverLookup(t.deps.db.k, t.platformId, reply.body.lookupId)).toEqual({
      id: reply.body.lookupId,
      kind: 'EXTERNAL_ACCOUNT',
      externalAccountId: created.body.id,
      currencies: [{ code: 'MXN', min: 1, max: 1_000_000_000 }],
      requiredPayerDataFields: [],
      scenario: 'SUCCESS',
      createdAt: expect.any(String),
    });
  });

  it("answers 404 for an unknown, deleted or other platform's account", async () => {
    const t = await build();
    const mine = await externalAccount(t, 'USD_ACCOUNT');
    const other = await t.newPlatform();
    const theirs = await externalAccount(other, 'USD_ACCOUNT');
    expect((await t.api('DELETE', `/platform/external-accounts/${mine.id}`)).status).toBe(204);
    for (const id of ['ExternalAccount:019542f5-b3e7-7d02-8000-000000000001', theirs.id, mine.id]) {
      const reply = await t.api(
        'GET',
        `/receiver/external-account/${id}?senderUmaAddress=${encodeURIComponent('$ops@railyard.sandbox.uma.money')}`,
      );
      expect(reply.status).toBe(404);
      expect(reply.body).toMatchObject({ status: 404, code: 'REFERENCE_NOT_FOUND' });
    }
  });

  it('answers 400 without a sender, or with a malformed one', async () => {
    const t = await build();
    const account = await externalAccount(t, 'USD_ACCOUNT');
    const none = await t.api('GET', `/receiver/external-account/${account.id}`);
    expect(none.status).toBe(400);
    expect(none.body.details.errors.map((e: any) => e.field)).toEqual(['senderUmaAddress', 'customerId']);
    const bad = await t.api('GET', `/receiver/external-account/${account.id}?senderUmaAddress=ops`);
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('INVALID_UMA_ADDRESS');
  });
});

describe('findReceiverLookup', () => {
  it("finds nothing for an unknown id or another platform's lookup", async () => {
    const t = await build();
    const reply = await lookupUma(
      t,
      '$success.usd@sandbox.uma.money',
      `?senderUmaAddress=${encodeURIComponent('$ops@railyard.sandbox.uma.money')}`,
    );
    const other = await t.newPlatform();
    expect(await findReceiverLookup(t.deps.db.k, other.platformId, reply.body.lookupId)).toBeUndefined();
    expect(
      await findReceiverLookup(t.deps.db.k, t.platformId, 'Lookup:019542f5-b3e7-7d02-8000-000000000001'),
    ).toBeUndefined();
  });
});
