import { describe, expect, it } from 'vitest';
import { build, ManualClock, type Tenant, type TestApp } from '../helper.js';
import { accountBody } from '../fixtures/accounts.js';
import { createCustomer, individualBody, multipart } from '../fixtures/customers.js';
import { eventsOf, expectBalancedBooks, transferIn, transferOut } from '../fixtures/money.js';

const currencyConfig = (currencyCode: string) => ({
  currencyCode,
  minAmount: 1,
  maxAmount: 1_000_000_000,
  requiredCounterpartyFields: [],
  enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
});

async function supportCurrencies(t: Tenant, codes: string[]): Promise<void> {
  const reply = await t.api('PATCH', '/config', { body: { supportedCurrencies: codes.map(currencyConfig) } });
  expect(reply.status).toBe(200);
}

async function customerAccounts(t: Tenant, query: string): Promise<any[]> {
  const reply = await t.api('GET', `/customers/internal-accounts?limit=100&${query}`);
  expect(reply.status).toBe(200);
  expect(reply.body.hasMore).toBe(false);
  return reply.body.data;
}

/** The platform's internal accounts as stored, without the lazy provisioning its list does. */
async function storedPlatformAccounts(t: TestApp): Promise<{ currency: string; type: string }[]> {
  return t.deps.db.k
    .selectFrom('internal_accounts')
    .select(['currency', 'type'])
    .where('platform_id', '=', t.platformId)
    .where('customer_id', 'is', null)
    .orderBy('currency')
    .execute();
}

describe('GET /config', () => {
  it('starts with the sandbox defaults', async () => {
    const t = await build();
    const reply = await t.api('GET', '/config');
    expect(reply.status).toBe(200);
    expect(reply.body.id).toBe(t.platformId);
    expect(reply.body.supportedCurrencies.map((c: { currencyCode: string }) => c.currencyCode)).toEqual([
      'USD',
      'USDC',
      'USDB',
    ]);
    expect(reply.body.webhookEndpoint).toBeUndefined();
    expect(reply.body.isRegulatedFinancialInstitution).toBe(false);
  });
});

describe('PATCH /config', () => {
  it('stores and returns every field it is given, leaving the others alone', async () => {
    const t = await build();
    const patch = {
      umaDomain: 'pay.example.com',
      webhookEndpoint: 'https://hooks.example.com/grid',
      supportedCurrencies: [
        {
          currencyCode: 'USD',
          minAmount: 100,
          maxAmount: 5_000_000,
          requiredCounterpartyFields: [{ name: 'FULL_NAME', mandatory: true }],
          enabledTransactionTypes: ['OUTGOING'],
        },
        {
          currencyCode: 'MXN',
          minAmount: 1,
          maxAmount: 90_000_000,
          requiredCounterpartyFields: [],
          enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
          providerRequiredCustomerFields: ['EMAIL'],
        },
      ],
      embeddedWalletConfig: { appName: 'Acme Wallet', otpLength: 6, expirationSeconds: 300 },
      feeConfigs: [
        {
          feeType: 'CROSS_CURRENCY_TRANSACTION',
          sourceCurrency: 'USD',
          variableFeeBps: 50,
          fixedFee: { amount: 25, currency: 'USD' },
        },
      ],
    };
    const reply = await t.api('PATCH', '/config', { body: patch });
    expect(reply.status).toBe(200);
    const { providerRequiredCustomerFields: _readOnly, ...mxn } = patch.supportedCurrencies[1]!;
    expect(reply.body).toMatchObject({ ...patch, supportedCurrencies: [patch.supportedCurrencies[0], mxn] });
    expect(reply.body.supportedCurrencies[1].providerRequiredCustomerFields).toBeUndefined();
    expect((await t.api('GET', '/config')).body).toEqual(reply.body);

    const second = await t.api('PATCH', '/config', { body: { umaDomain: 'other.example.com' } });
    expect(second.body.webhookEndpoint).toBe('https://hooks.example.com/grid');
    expect(second.body.supportedCurrencies).toHaveLength(2);
    const cleared = await t.api('PATCH', '/config', { body: { webhookEndpoint: '' } });
    expect(cleared.body.webhookEndpoint).toBeUndefined();
  });

  it('keeps every change of concurrent PATCHes that set different fields', async () => {
    // On the embedded store transactions run one at a time; the PostgreSQL run is what this guards.
    const t = await build();
    for (let round = 0; round < 8; round++) {
      const domain = `round${round}.example.com`;
      const endpoint = `https://hooks.example.com/round-${round}`;
      const rules = round % 2 === 0;
      const replies = await Promise.all([
        t.api('PATCH', '/config', { body: { umaDomain: domain } }),
        t.api('PATCH', '/config', { body: { webhookEndpoint: endpoint } }),
        t.raw('PATCH', '/_railyard/platform', { body: { name: `Platform ${round}` } }),
        t.raw('PATCH', '/_railyard/platform', { body: { counterpartyRules: rules } }),
      ]);
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      // No change overwrote another with what it had read first.
      const config = (await t.api('GET', '/config')).body;
      expect([config.umaDomain, config.webhookEndpoint]).toEqual([domain, endpoint]);
      const platform = (await t.raw('GET', '/_railyard/platform')).body;
      expect([platform.name, platform.counterpartyRules]).toEqual([`Platform ${round}`, rules]);
    }
  });

  it('names every invalid field and changes nothing', async () => {
    const t = await build();
    const before = (await t.api('GET', '/config')).body;
    const reply = await t.api('PATCH', '/config', {
      body: {
        webhookEndpoint: 'ftp://hooks.example.com',
        supportedCurrencies: [
          {
            currencyCode: 'XYZ',
            minAmount: 1,
            maxAmount: 2,
            requiredCounterpartyFields: [],
            enabledTransactionTypes: ['OUTGOING'],
          },
          {
            currencyCode: 'USD',
            minAmount: 9,
            maxAmount: 2,
            requiredCounterpartyFields: [],
            enabledTransactionTypes: ['OUTGOING'],
          },
        ],
      },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'supportedCurrencies[0].currencyCode',
      'supportedCurrencies[1].minAmount',
      'webhookEndpoint',
    ]);
    const schemaErrors = await t.api('PATCH', '/config', {
      body: {
        supportedCurrencies: [{ currencyCode: 'USD', minAmount: -1, enabledTransactionTypes: ['SIDEWAYS'] }],
        embeddedWalletConfig: { otpLength: 2 },
      },
    });
    expect(schemaErrors.body.details.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'embeddedWalletConfig.otpLength',
      'supportedCurrencies[0].enabledTransactionTypes[0]',
      'supportedCurrencies[0].maxAmount',
      'supportedCurrencies[0].minAmount',
      'supportedCurrencies[0].requiredCounterpartyFields',
    ]);
    expect((await t.api('GET', '/config')).body).toEqual(before);
  });
});

describe('PATCH /config adding a currency', () => {
  it('gives an existing customer an account in it at once, which money moves through', async () => {
    const t = await build();
    await supportCurrencies(t, ['USD']);
    const customer = await createCustomer(t, individualBody('Robin Okafor'));
    const [usd] = await customerAccounts(t, `customerId=${customer.id}`);
    expect(usd).toMatchObject({ type: 'INTERNAL_FIAT', balance: { amount: 0, currency: { code: 'USD' } } });

    await supportCurrencies(t, ['USD', 'EUR']);
    const accounts = await customerAccounts(t, `customerId=${customer.id}`);
    expect(accounts.map((a) => [a.type, a.balance.currency.code]).sort()).toEqual([
      ['INTERNAL_FIAT', 'EUR'],
      ['INTERNAL_FIAT', 'USD'],
    ]);
    // The account that was there is untouched.
    expect(accounts.find((a) => a.id === usd.id)).toEqual(usd);
    const eur = accounts.find((a) => a.balance.currency.code === 'EUR');
    expect(eur).toMatchObject({
      customerId: customer.id,
      status: 'ACTIVE',
      balance: { amount: 0 },
      totalBalance: { amount: 0 },
    });
    expect(eur.fundingPaymentInstructions[0].accountOrWalletInfo.accountType).toBe('EUR_ACCOUNT');
    // Provisioning records no event, as for a new customer's accounts.
    expect(await eventsOf(t, eur.id)).toEqual([]);

    const bank = await t.api('POST', '/customers/external-accounts', {
      body: { ...accountBody('EUR_ACCOUNT'), customerId: customer.id },
    });
    expect(bank.status).toBe(201);
    const pulled = await transferIn(t, bank.body.id, eur.id, 25_000);
    expect(pulled.status).toBe(201);
    expect(pulled.body).toMatchObject({
      status: 'COMPLETED',
      customerId: customer.id,
      receivedAmount: { amount: 25_000, currency: { code: 'EUR' } },
    });
    const paid = await transferOut(t, eur.id, bank.body.id, 10_000);
    expect(paid.body).toMatchObject({ status: 'COMPLETED', sentAmount: { amount: 10_000, currency: { code: 'EUR' } } });
    const [after] = await customerAccounts(t, `customerId=${customer.id}&currency=EUR`);
    expect(after.balance.amount).toBe(15_000);
    await expectBalancedBooks(t);

    // Removing the currency deletes nothing: the account and its money stay.
    await supportCurrencies(t, ['USD']);
    expect(
      (await customerAccounts(t, `customerId=${customer.id}&currency=EUR`)).map((a) => [a.id, a.balance.amount]),
    ).toEqual([[eur.id, 15_000]]);
  });

  it('provisions the platform and every live customer, of the type each currency calls for, with ledger accounts', async () => {
    const t = await build();
    await supportCurrencies(t, ['USD']);
    const live: string[] = [];
    for (const name of ['Ada Brook', 'Ben Carver', 'Cleo Dunn'])
      live.push((await createCustomer(t, individualBody(name))).id);
    const gone = (await createCustomer(t, individualBody('Dana Ellis'))).id;
    expect((await t.api('DELETE', `/customers/${gone}`)).status).toBe(200);
    const before = await customerAccounts(t, '');
    expect(before).toHaveLength(4);
    // The platform keeps the accounts of the defaults it was created with.
    const platformBefore = [
      { currency: 'USD', type: 'INTERNAL_FIAT' },
      { currency: 'USDB', type: 'INTERNAL_CRYPTO' },
      { currency: 'USDC', type: 'INTERNAL_CRYPTO' },
    ];
    expect(await storedPlatformAccounts(t)).toEqual(platformBefore);

    await supportCurrencies(t, ['USD', 'EUR', 'USDB']);
    const owners = async (query: string) =>
      (await customerAccounts(t, query)).map((a) => [a.customerId, a.type]).sort();
    expect(await owners('currency=EUR')).toEqual(live.map((id) => [id, 'INTERNAL_FIAT']).sort());
    // USDB is an embedded wallet for a customer, an internal crypto account for the platform.
    expect(await owners('currency=USDB')).toEqual(live.map((id) => [id, 'EMBEDDED_WALLET']).sort());
    expect(await owners(`customerId=${gone}`)).toEqual([[gone, 'INTERNAL_FIAT']]);
    expect(await storedPlatformAccounts(t)).toEqual([{ currency: 'EUR', type: 'INTERNAL_FIAT' }, ...platformBefore]);
    const all = await customerAccounts(t, '');
    expect(all).toHaveLength(4 + 2 * live.length);
    for (const account of before) expect(all.find((a) => a.id === account.id)).toEqual(account);
    // Each account has its ledger account, and the books stay balanced.
    const books = await expectBalancedBooks(t);
    const ledgerIds = new Set(books.accounts.filter((a: any) => a.kind === 'INTERNAL').map((a: any) => a.id));
    const platformIds = (await t.api('GET', '/platform/internal-accounts')).body.data.map((a: any) => a.id);
    expect([...all.map((a) => a.id), ...platformIds].filter((id) => !ledgerIds.has(id))).toEqual([]);
    expect(ledgerIds.size).toBe(all.length + 4);

    // A change that adds no currency creates nothing.
    const limits = (await t.api('GET', '/config')).body.supportedCurrencies.map((c: any) => ({
      ...c,
      maxAmount: 5_000,
    }));
    expect((await t.api('PATCH', '/config', { body: { supportedCurrencies: limits } })).status).toBe(200);
    expect(await customerAccounts(t, '')).toHaveLength(all.length);
  });

  it('reaches customers created while the change runs (concurrent requests)', async () => {
    // On the embedded store transactions run one at a time; the PostgreSQL run is what this guards.
    const t = await build();
    await supportCurrencies(t, ['USD']);
    const created = Array.from({ length: 30 }, (_, i) => createCustomer(t, individualBody(`Sam Race ${i}`)));
    await supportCurrencies(t, ['USD', 'EUR']);
    const customers = await Promise.all(created);
    const withEur = (await customerAccounts(t, 'currency=EUR')).map((a) => a.customerId).sort();
    expect(withEur).toEqual(customers.map((c) => c.id).sort());
  });

  it('reaches every customer of a platform with more than a page of them, created at one instant', async () => {
    const t = await build({ clock: new ManualClock(Date.parse('2026-03-02T09:00:00Z')) });
    await supportCurrencies(t, ['USD']);
    const rows = Array.from(
      { length: 501 },
      (_, i) =>
        `pat${i}@pay.example.com,bulk-${i},INDIVIDUAL,Pat Lee ${i},1990-02-03,1 Main St,,Austin,TX,78701,US,,,,,,,`,
    );
    const header =
      'umaAddress,platformCustomerId,customerType,fullName,birthDate,addressLine1,addressLine2,city,state,postalCode,country,email,businessLegalName,businessRegistrationNumber,businessTaxId,businessIncorporatedOn,platformAccountId,description';
    const csv = Buffer.from([header, ...rows].join('\r\n'), 'utf8');
    const accepted = await t.api(
      'POST',
      '/customers/bulk/csv',
      multipart({}, [{ fileName: 'customers.csv', data: csv, contentType: 'text/csv' }]),
    );
    expect(accepted.status).toBe(202);
    await t.runDueJobs();
    const job = await t.api('GET', `/customers/bulk/jobs/${accepted.body.jobId}`);
    expect(job.body).toMatchObject({ status: 'COMPLETED', progress: { successful: 501, failed: 0 } });
    const customers = await t.api('GET', '/customers?limit=1');
    expect(customers.body.totalCount).toBe(501);
    expect(customers.body.data[0].createdAt).toBe('2026-03-02T09:00:00.000Z');

    await supportCurrencies(t, ['USD', 'EUR']);
    const eur = await t.api('GET', '/customers/internal-accounts?currency=EUR&limit=1');
    expect(eur.body.totalCount).toBe(501);
  });
});

describe('the sandbox clock', () => {
  it('moves forward per platform and never back', async () => {
    const t = await build();
    const other = await t.newPlatform();
    const before = await t.raw('GET', '/_railyard/clock');
    const advanced = await t.raw('POST', '/_railyard/clock/advance', { body: { seconds: 3600 } });
    expect(advanced.status).toBe(200);
    expect(advanced.body.offsetSeconds).toBe(3600);
    expect(Date.parse(advanced.body.now) - Date.parse(before.body.now)).toBeGreaterThanOrEqual(3600_000);
    expect((await t.raw('POST', '/_railyard/clock/advance', { body: { seconds: 0.001 } })).body.offsetSeconds).toBe(
      3600.001,
    );
    expect((await other.raw('GET', '/_railyard/clock')).body.offsetSeconds).toBe(0);
    // Less than a millisecond would not move the clock at all.
    for (const seconds of [0, 0.0001, -5, 'soon']) {
      const reply = await t.raw('POST', '/_railyard/clock/advance', { body: { seconds } });
      expect(reply.status).toBe(400);
      expect(reply.body.details.errors[0].field).toBe('seconds');
    }
    const created = await t.api('POST', '/tokens', { body: { name: 'later', permissions: ['VIEW'] } });
    expect(Date.parse(created.body.createdAt)).toBeGreaterThanOrEqual(Date.parse(advanced.body.now));
  });
});
