import { describe, expect, it } from 'vitest';
import { build } from '../helper.js';

describe('GET /config', () => {
  it('starts with the sandbox defaults', async () => {
    const t = await build();
    const reply = await t.api('GET', '/config');
    expect(reply.status).toBe(200);
    expect(reply.body.id).toBe(t.platformId);
    expect(reply.body.supportedCurrencies.map((c: { currencyCode: string }) => c.currencyCode)).toEqual(['USD', 'USDC', 'USDB']);
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
        { currencyCode: 'USD', minAmount: 100, maxAmount: 5_000_000, requiredCounterpartyFields: [{ name: 'FULL_NAME', mandatory: true }], enabledTransactionTypes: ['OUTGOING'] },
        { currencyCode: 'MXN', minAmount: 1, maxAmount: 90_000_000, requiredCounterpartyFields: [], enabledTransactionTypes: ['INCOMING', 'OUTGOING'], providerRequiredCustomerFields: ['EMAIL'] },
      ],
      embeddedWalletConfig: { appName: 'Acme Wallet', otpLength: 6, expirationSeconds: 300 },
      feeConfigs: [{ feeType: 'CROSS_CURRENCY_TRANSACTION', sourceCurrency: 'USD', variableFeeBps: 50, fixedFee: { amount: 25, currency: 'USD' } }],
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

  it('names every invalid field and changes nothing', async () => {
    const t = await build();
    const before = (await t.api('GET', '/config')).body;
    const reply = await t.api('PATCH', '/config', {
      body: {
        webhookEndpoint: 'ftp://hooks.example.com',
        supportedCurrencies: [
          { currencyCode: 'XYZ', minAmount: 1, maxAmount: 2, requiredCounterpartyFields: [], enabledTransactionTypes: ['OUTGOING'] },
          { currencyCode: 'USD', minAmount: 9, maxAmount: 2, requiredCounterpartyFields: [], enabledTransactionTypes: ['OUTGOING'] },
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
      body: { supportedCurrencies: [{ currencyCode: 'USD', minAmount: -1, enabledTransactionTypes: ['SIDEWAYS'] }], embeddedWalletConfig: { otpLength: 2 } },
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

describe('the sandbox clock', () => {
  it('moves forward per platform and never back', async () => {
    const t = await build();
    const other = await t.newPlatform();
    const before = await t.raw('GET', '/_railyard/clock');
    const advanced = await t.raw('POST', '/_railyard/clock/advance', { body: { seconds: 3600 } });
    expect(advanced.status).toBe(200);
    expect(advanced.body.offsetSeconds).toBe(3600);
    expect(Date.parse(advanced.body.now) - Date.parse(before.body.now)).toBeGreaterThanOrEqual(3600_000);
    expect((await other.raw('GET', '/_railyard/clock')).body.offsetSeconds).toBe(0);
    for (const seconds of [0, -5, 'soon']) {
      const reply = await t.raw('POST', '/_railyard/clock/advance', { body: { seconds } });
      expect(reply.status).toBe(400);
      expect(reply.body.details.errors[0].field).toBe('seconds');
    }
    const created = await t.api('POST', '/tokens', { body: { name: 'later', permissions: ['VIEW'] } });
    expect(Date.parse(created.body.createdAt)).toBeGreaterThanOrEqual(Date.parse(advanced.body.now));
  });
});
