import { describe, expect, it } from 'vitest';
import { accountBody } from '../fixtures/accounts.js';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { build } from '../helper.js';

const PATH = '/customers/external-accounts';

describe('POST /customers/external-accounts', () => {
  it.each(['USD_ACCOUNT', 'EUR_ACCOUNT', 'MXN_ACCOUNT', 'KES_ACCOUNT', 'SOLANA_WALLET', 'LIGHTNING'])(
    'registers a %s account for a customer with the shared account-type table',
    async (accountType) => {
      const t = await build();
      const customer = await createCustomer(t, individualBody('Ana Diaz'));
      const body = accountBody(accountType);
      const reply = await t.api('POST', PATH, {
        body: { ...body, customerId: customer.id, platformAccountId: 'ops-1' },
      });
      expect(reply.status).toBe(201);
      expect(reply.body).toMatchObject({
        customerId: customer.id,
        status: 'ACTIVE',
        currency: body.currency,
        platformAccountId: 'ops-1',
        defaultUmaDepositAccount: false,
      });
      expect(reply.body.accountInfo.accountType).toBe(accountType);
      expect((await t.api('GET', `${PATH}/${reply.body.id}`)).body).toEqual(reply.body);
    },
  );

  it('applies the beneficiary-verification suffixes and the duplicate rule per customer', async () => {
    const t = await build();
    const a = await createCustomer(t, individualBody('Ana Diaz'));
    const b = await createCustomer(t, individualBody('Ben Diaz'));
    const partial = await t.api('POST', PATH, { body: { ...accountBody('USD_ACCOUNT', '103'), customerId: a.id } });
    expect(partial.body).toMatchObject({
      beneficiaryVerificationStatus: 'PARTIAL_MATCH',
      beneficiaryVerifiedData: { fullName: 'M. Lopez' },
    });
    const invalid = await t.api('POST', PATH, { body: { ...accountBody('USD_ACCOUNT', '105'), customerId: a.id } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe('INVALID_BANK_ACCOUNT');
    const body = accountBody('GBP_ACCOUNT');
    expect((await t.api('POST', PATH, { body: { ...body, customerId: a.id } })).status).toBe(201);
    const duplicate = await t.api('POST', PATH, { body: { ...body, customerId: a.id } });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.code).toBe('CONFLICT');
    // Another customer may hold the same account.
    expect((await t.api('POST', PATH, { body: { ...body, customerId: b.id } })).status).toBe(201);
  });

  it('keeps at most one default UMA deposit account per customer', async () => {
    const t = await build();
    const a = await createCustomer(t, individualBody('Ana Diaz'));
    const b = await createCustomer(t, individualBody('Ben Diaz'));
    const first = await t.api('POST', PATH, {
      body: { ...accountBody('USD_ACCOUNT'), customerId: a.id, defaultUmaDepositAccount: true },
    });
    const theirs = await t.api('POST', PATH, {
      body: { ...accountBody('USD_ACCOUNT'), customerId: b.id, defaultUmaDepositAccount: true },
    });
    const second = await t.api('POST', PATH, {
      body: { ...accountBody('EUR_ACCOUNT'), customerId: a.id, defaultUmaDepositAccount: true },
    });
    expect(second.body.defaultUmaDepositAccount).toBe(true);
    expect((await t.api('GET', `${PATH}/${first.body.id}`)).body.defaultUmaDepositAccount).toBe(false);
    expect((await t.api('GET', `${PATH}/${theirs.body.id}`)).body.defaultUmaDepositAccount).toBe(true);
  });

  it('answers 400 on customerId for unknown, foreign and deleted customers, and creates a platform account without one', async () => {
    const t = await build();
    const other = await t.newPlatform();
    const customer = await createCustomer(t, individualBody('Ana Diaz'));
    for (const [tenant, customerId] of [
      [t, 'Customer:none'],
      [other, customer.id],
    ] as const) {
      const reply = await tenant.api('POST', PATH, { body: { ...accountBody('USD_ACCOUNT'), customerId } });
      expect(reply.status).toBe(400);
      expect(reply.body.details.errors[0].field).toBe('customerId');
    }
    await t.api('DELETE', `/customers/${customer.id}`);
    expect(
      (await t.api('POST', PATH, { body: { ...accountBody('USD_ACCOUNT'), customerId: customer.id } })).body.details
        .errors[0].message,
    ).toContain('deleted');
    const platform = await t.api('POST', PATH, { body: accountBody('USD_ACCOUNT') });
    expect(platform.status).toBe(201);
    expect(platform.body.customerId).toBeUndefined();
    expect((await t.api('GET', `/platform/external-accounts/${platform.body.id}`)).status).toBe(200);
  });
});

describe('GET and DELETE /customers/external-accounts', () => {
  it('lists all accounts or one customer’s, by currency, and deletes', async () => {
    const t = await build();
    const other = await t.newPlatform();
    const a = await createCustomer(t, individualBody('Ana Diaz'));
    const b = await createCustomer(t, individualBody('Ben Diaz'));
    const usd = (await t.api('POST', PATH, { body: { ...accountBody('USD_ACCOUNT'), customerId: a.id } })).body;
    const eur = (await t.api('POST', PATH, { body: { ...accountBody('EUR_ACCOUNT'), customerId: a.id } })).body;
    const bens = (await t.api('POST', PATH, { body: { ...accountBody('USD_ACCOUNT'), customerId: b.id } })).body;
    const ids = async (query: string) =>
      (await t.api('GET', `${PATH}${query}`)).body.data.map((x: { id: string }) => x.id);
    expect(await ids('')).toEqual([bens.id, eur.id, usd.id]);
    expect(await ids(`?customerId=${a.id}`)).toEqual([eur.id, usd.id]);
    expect(await ids(`?customerId=${a.id}&currency=USD`)).toEqual([usd.id]);
    expect(await ids('?limit=1')).toEqual([bens.id]);
    expect((await other.api('GET', PATH)).body.data).toEqual([]);
    expect((await other.api('GET', `${PATH}/${usd.id}`)).status).toBe(404);
    expect((await other.api('DELETE', `${PATH}/${usd.id}`)).status).toBe(404);

    expect((await t.api('DELETE', `${PATH}/${usd.id}`)).status).toBe(204);
    const gone = await t.api('GET', `${PATH}/${usd.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe('REFERENCE_NOT_FOUND');
    expect(await ids(`?customerId=${a.id}`)).toEqual([eur.id]);
  });
});

describe('ownership verification of customer wallets', () => {
  it('challenges and verifies a first-party self-custody wallet, and a liveness link works too', async () => {
    const t = await build({ counterpartyRules: true });
    const customer = await createCustomer(t, individualBody('Ana Diaz'));
    const created = await t.api('POST', PATH, {
      body: { ...accountBody('SPARK_WALLET'), customerId: customer.id, ownershipType: 'FIRST_PARTY' },
    });
    expect(created.body.status).toBe('PENDING_OWNERSHIP_VERIFICATION');
    const challenge = await t.api('POST', `${PATH}/${created.body.id}/challenge`, {
      body: { method: 'WALLET_SIGNATURE' },
    });
    expect(challenge.status).toBe(201);
    expect(challenge.body.messageToSign).toContain(created.body.id);
    const verified = await t.api('POST', `${PATH}/${created.body.id}/verify`, {
      body: { signature: 'sandbox-valid-signature' },
    });
    expect(verified.status).toBe(200);
    expect(verified.body.status).toBe('ACTIVE');
    expect((await t.api('POST', `${PATH}/${created.body.id}/challenge`, { body: { method: 'LIVENESS' } })).status).toBe(
      409,
    );

    const other = await t.api('POST', PATH, {
      body: { ...accountBody('TRON_WALLET'), customerId: customer.id, ownershipType: 'FIRST_PARTY' },
    });
    const liveness = await t.api('POST', `${PATH}/${other.body.id}/challenge`, { body: { method: 'LIVENESS' } });
    const url = new URL(liveness.body.verificationLink);
    const passed = await t.raw('POST', `${url.pathname}/pass${url.search}`, { auth: null });
    expect(passed.body.status).toBe('ACTIVE');
    const bad = await t.api('POST', `${PATH}/${other.body.id}/verify`, { body: {} });
    expect(bad.status).toBe(400);
  });
});
