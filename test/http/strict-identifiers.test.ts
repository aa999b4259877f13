// Every strict rule, one value each: a platform in default mode accepts it (the reference states
// no such rule), a platform in strict mode (PATCH /_railyard/platform {"strictIdentifiers":
// true}) refuses it with a 400 naming exactly that field, and the same request with a value the
// rule accepts passes there. docs/errors-and-lists.md lists the same rules.

import { beforeAll, describe, expect, it } from 'vitest';
import { base58Encode, accountBody } from '../fixtures/accounts.js';
import { businessBody, createCustomer, individualBody, ownerBody } from '../fixtures/customers.js';
import { platformAccount } from '../fixtures/money.js';
import { agentBody } from '../fuzz/baselines.js';
import { link, register, sparkToken } from '../stablecoins/support.js';
import { build, type Reply, type Tenant, type TestApp } from '../helper.js';

/** What a row needs on each platform: a customer of each kind and a crypto internal account. */
interface World {
  t: Tenant;
  individual: { id: string; umaAddress: string };
  business: { id: string };
  usdc: { id: string };
  linkId: string;
}

async function world(t: Tenant): Promise<World> {
  const individual = (await createCustomer(
    t,
    individualBody('Jordan Rivera', { umaAddress: `$jordan.${Date.now()}` }),
  )) as World['individual'];
  const business = (await createCustomer(t, businessBody('REG-778000'))) as World['business'];
  return { t, individual, business, usdc: await platformAccount(t, 'USDC'), linkId: (await link(t)).id };
}

interface Row {
  rule: string;
  field: string;
  /** The request with the value only strict mode refuses. */
  refused(w: World): Promise<Reply>;
  /** The same request with a value the rule accepts (the row's control). */
  accepted(w: World): Promise<Reply>;
}

const externalAccount = (accountType: string, change: (info: Record<string, any>) => Record<string, any>) => {
  const send = (w: World, changed: boolean) => {
    const body = accountBody(accountType);
    const info = changed ? change(structuredClone(body.accountInfo) as Record<string, any>) : body.accountInfo;
    return w.t.api('POST', '/platform/external-accounts', { body: { ...body, accountInfo: info } });
  };
  return { refused: (w: World) => send(w, true), accepted: (w: World) => send(w, false) };
};

const customer = (base: () => Record<string, any>, change: (body: Record<string, any>) => void) => ({
  refused: (w: World) => {
    const body = base();
    change(body);
    return w.t.api('POST', '/customers', { body });
  },
  accepted: (w: World) => w.t.api('POST', '/customers', { body: base() }),
});

const withdrawal = (cryptoNetwork: string, currency: string, destinationAddress: string, good: string) => {
  const send = (w: World, address: string) =>
    w.t.api('POST', '/crypto/estimate-withdrawal-fee', {
      body: { internalAccountId: w.usdc.id, currency, cryptoNetwork, amount: 5_000_000, destinationAddress: address },
    });
  return { refused: (w: World) => send(w, destinationAddress), accepted: (w: World) => send(w, good) };
};

const evm = `0x${'ab'.repeat(20)}`;
const solana = base58Encode(Buffer.alloc(32, 9));

/** A quote from a new platform USD bank account to the platform's USDC account (a pull, or a push through /sandbox/send). */
async function bankQuote(w: World, extra: Record<string, unknown> = {}): Promise<Reply> {
  const bank = await w.t.api('POST', '/platform/external-accounts', { body: accountBody('USD_ACCOUNT') });
  return w.t.api('POST', '/quotes', {
    body: {
      source: { sourceType: 'ACCOUNT', accountId: bank.body.id },
      destination: { destinationType: 'ACCOUNT', accountId: w.usdc.id },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 10_000,
      ...extra,
    },
  });
}

const ROWS: Row[] = [
  {
    rule: 'IBAN check digits (mod 97)',
    field: 'accountInfo.iban',
    ...externalAccount('DKK_ACCOUNT', (i) => ({ ...i, iban: 'DK5000400040116243' })),
  },
  {
    rule: 'CLABE check digit',
    field: 'accountInfo.clabeNumber',
    ...externalAccount('MXN_ACCOUNT', (i) => ({ ...i, clabeNumber: '123456789012345678' })),
  },
  {
    rule: 'ABA routing number checksum',
    field: 'accountInfo.routingNumber',
    ...externalAccount('USD_ACCOUNT', (i) => ({ ...i, routingNumber: '123456789' })),
  },
  {
    rule: 'EVM address: 0x and 40 hexadecimal characters',
    field: 'accountInfo.address',
    ...externalAccount('POLYGON_WALLET', (i) => ({ ...i, address: '0xAbC' })),
  },
  {
    rule: 'Solana address: base58 of 32 bytes',
    field: 'accountInfo.address',
    ...externalAccount('SOLANA_WALLET', (i) => ({ ...i, address: base58Encode(Buffer.alloc(20, 7)) })),
  },
  {
    rule: 'Tron address: base58check starting with T',
    field: 'accountInfo.address',
    ...externalAccount('TRON_WALLET', (i) => ({ ...i, address: 'TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeM' })),
  },
  {
    rule: 'BOLT 11 invoice prefix',
    field: 'accountInfo.invoice',
    ...externalAccount('LIGHTNING', ({ lightningAddress: _, ...i }) => ({ ...i, invoice: 'invoice-0042' })),
  },
  {
    rule: 'BOLT 12 offer prefix',
    field: 'accountInfo.bolt12',
    ...externalAccount('LIGHTNING', ({ lightningAddress: _, ...i }) => ({ ...i, bolt12: `lnbc15u1${'p'.repeat(40)}` })),
  },
  {
    rule: 'lightning address: user@domain.tld',
    field: 'accountInfo.lightningAddress',
    ...externalAccount('LIGHTNING', (i) => ({ ...i, lightningAddress: 'maria' })),
  },
  {
    rule: "a beneficiary's birthDate is a date",
    field: 'accountInfo.beneficiary.birthDate',
    ...externalAccount('GBP_ACCOUNT', (i) => ({ ...i, beneficiary: { ...i.beneficiary, birthDate: '14/03/1991' } })),
  },
  {
    rule: "a beneficiary's email is an email address",
    field: 'accountInfo.beneficiary.email',
    ...externalAccount('GBP_ACCOUNT', (i) => ({ ...i, beneficiary: { ...i.beneficiary, email: 'oliver at example' } })),
  },
  {
    rule: "a beneficiary's nationality is two capital letters",
    field: 'accountInfo.beneficiary.nationality',
    ...externalAccount('GBP_ACCOUNT', (i) => ({ ...i, beneficiary: { ...i.beneficiary, nationality: 'British' } })),
  },
  {
    rule: "a beneficiary's countryOfResidence is two capital letters",
    field: 'accountInfo.beneficiary.countryOfResidence',
    ...externalAccount('GBP_ACCOUNT', (i) => ({ ...i, beneficiary: { ...i.beneficiary, countryOfResidence: 'gb' } })),
  },
  {
    rule: "a beneficiary's fullName is not empty",
    field: 'accountInfo.beneficiary.fullName',
    ...externalAccount('GBP_ACCOUNT', (i) => ({ ...i, beneficiary: { ...i.beneficiary, fullName: '' } })),
  },
  {
    rule: "an address's postalCode is not empty",
    field: 'accountInfo.beneficiary.address.postalCode',
    ...externalAccount('GBP_ACCOUNT', (i) => ({
      ...i,
      beneficiary: { ...i.beneficiary, address: { line1: '1 Queen St', postalCode: '', country: 'HK' } },
    })),
  },
  {
    rule: "an address's line1 is not empty",
    field: 'accountInfo.beneficiary.address.line1',
    ...externalAccount('GBP_ACCOUNT', (i) => ({
      ...i,
      beneficiary: { ...i.beneficiary, address: { line1: '', postalCode: 'EC1A 1BB', country: 'GB' } },
    })),
  },
  {
    rule: "a wallet's vaspName is not empty",
    field: 'accountInfo.vaspName',
    ...externalAccount('BASE_WALLET', (i) => ({ ...i, vaspName: '' })),
  },
  {
    rule: "a customer's fullName is not empty",
    field: 'fullName',
    ...customer(
      () => individualBody('Jordan Rivera'),
      (b) => {
        b.fullName = '';
      },
    ),
  },
  {
    rule: 'an SSN is written ###-##-####',
    field: 'identifier',
    ...customer(
      () => individualBody('Jordan Rivera'),
      (b) => {
        b.identifier = '123456789';
      },
    ),
  },
  {
    rule: "a business's registrationNumber is not empty",
    field: 'businessInfo.registrationNumber',
    ...customer(
      () => businessBody('REG-100200'),
      (b) => {
        b.businessInfo.registrationNumber = '';
      },
    ),
  },
  {
    rule: "a business's taxId is not empty",
    field: 'businessInfo.taxId',
    ...customer(
      () => businessBody('REG-100300'),
      (b) => {
        b.businessInfo.taxId = '';
      },
    ),
  },
  {
    rule: "a beneficial owner's roles are not empty",
    field: 'roles',
    refused: (w) =>
      w.t.api('POST', '/beneficial-owners', {
        body: ownerBody(w.business.id, 'Quinn', { roles: [], ownershipPercentage: 5 }),
      }),
    accepted: (w) =>
      w.t.api('POST', '/beneficial-owners', { body: ownerBody(w.business.id, 'Quinn', { ownershipPercentage: 5 }) }),
  },
  {
    rule: "a beneficial owner's roles do not repeat",
    field: 'roles',
    refused: (w) =>
      w.t.api('POST', '/beneficial-owners', {
        body: ownerBody(w.business.id, 'Reyes', { roles: ['UBO', 'UBO'], ownershipPercentage: 5 }),
      }),
    accepted: (w) =>
      w.t.api('POST', '/beneficial-owners', { body: ownerBody(w.business.id, 'Reyes', { ownershipPercentage: 5 }) }),
  },
  {
    rule: "a beneficial owner's lastName is not empty",
    field: 'personalInfo.lastName',
    refused: (w) =>
      w.t.api('POST', '/beneficial-owners', { body: ownerBody(w.business.id, '', { ownershipPercentage: 5 }) }),
    accepted: (w) =>
      w.t.api('POST', '/beneficial-owners', { body: ownerBody(w.business.id, 'Sato', { ownershipPercentage: 5 }) }),
  },
  {
    rule: 'a KYC link redirectUri is http(s)',
    field: 'redirectUri',
    refused: (w) =>
      w.t.api('POST', `/customers/${w.individual.id}/kyc-link`, { body: { redirectUri: 'myapp://kyc/done' } }),
    accepted: (w) =>
      w.t.api('POST', `/customers/${w.individual.id}/kyc-link`, { body: { redirectUri: 'https://app.example/done' } }),
  },
  {
    rule: "a token's name is not empty",
    field: 'name',
    refused: (w) => w.t.api('POST', '/tokens', { body: { name: '', permissions: ['VIEW'] } }),
    accepted: (w) => w.t.api('POST', '/tokens', { body: { name: 'reports', permissions: ['VIEW'] } }),
  },
  {
    rule: "a token's permissions are not empty",
    field: 'permissions',
    refused: (w) => w.t.api('POST', '/tokens', { body: { name: 'nothing', permissions: [] } }),
    accepted: (w) => w.t.api('POST', '/tokens', { body: { name: 'nothing', permissions: ['VIEW'] } }),
  },
  {
    rule: "an agent's name is not empty",
    field: 'name',
    refused: (w) => w.t.api('POST', '/agents', { body: { ...agentBody(w.individual.id), name: '' } }),
    accepted: (w) => w.t.api('POST', '/agents', { body: agentBody(w.individual.id) }),
  },
  {
    rule: "an invitation's firstName is not empty",
    field: 'firstName',
    refused: (w) => w.t.api('POST', '/invitations', { body: { inviterUma: w.individual.umaAddress, firstName: '' } }),
    accepted: (w) =>
      w.t.api('POST', '/invitations', { body: { inviterUma: w.individual.umaAddress, firstName: 'Rosa' } }),
  },
  {
    rule: 'a withdrawal address on Ethereum is an EVM address',
    field: 'destinationAddress',
    ...withdrawal('ETHEREUM', 'USDC', solana, evm),
  },
  {
    rule: 'a withdrawal address on Solana is a Solana key',
    field: 'destinationAddress',
    ...withdrawal('SOLANA', 'USDC', evm, solana),
  },
  {
    rule: 'a quote funded from an external bank account is paid by a push (/sandbox/send), not executed',
    field: 'quoteId',
    refused: async (w) => w.t.api('POST', `/quotes/${(await bankQuote(w)).body.id}/execute`),
    accepted: async (w) =>
      w.t.api('POST', '/sandbox/send', { body: { quoteId: (await bankQuote(w)).body.id, currencyCode: 'USD' } }),
  },
  {
    rule: 'a quote funded from an external bank account is not executed at creation',
    field: 'immediatelyExecute',
    refused: (w) => bankQuote(w, { immediatelyExecute: true }),
    accepted: (w) => bankQuote(w),
  },
  {
    rule: 'a Spark token identifier starts btkn',
    field: 'networkTokenIdentifier',
    refused: (w) =>
      register(w.t, {
        providerTokenIdentifier: 'ACME',
        networkTokenIdentifier: '0xabc',
        stablecoinProviderAccountId: w.linkId,
      }),
    accepted: (w) =>
      register(w.t, {
        providerTokenIdentifier: 'ACME2',
        networkTokenIdentifier: sparkToken(),
        stablecoinProviderAccountId: w.linkId,
      }),
  },
];

describe('strict identifiers', () => {
  let app: TestApp;
  let lenient: World;
  let strict: World;
  beforeAll(async () => {
    app = await build();
    lenient = await world(app);
    strict = await world(await app.newPlatform({ strictIdentifiers: true }));
  });

  it('is off by default and switched with PATCH /_railyard/platform', async () => {
    const t = await app.newPlatform();
    expect((await t.raw('GET', '/_railyard/platform')).body.strictIdentifiers).toBe(false);
    const on = await t.raw('PATCH', '/_railyard/platform', { body: { strictIdentifiers: true } });
    expect(on.body.strictIdentifiers).toBe(true);
    const refused = await t.api('POST', '/platform/external-accounts', {
      body: {
        ...accountBody('MXN_ACCOUNT'),
        accountInfo: { ...accountBody('MXN_ACCOUNT').accountInfo, clabeNumber: '123456789012345678' },
      },
    });
    expect(refused.status).toBe(400);
    const off = await t.raw('PATCH', '/_railyard/platform', { body: { strictIdentifiers: false } });
    expect(off.body.strictIdentifiers).toBe(false);
    const accepted = await t.api('POST', '/platform/external-accounts', {
      body: {
        ...accountBody('MXN_ACCOUNT'),
        accountInfo: { ...accountBody('MXN_ACCOUNT').accountInfo, clabeNumber: '123456789012345678' },
      },
    });
    expect(accepted.status).toBe(201);
  });

  it('is the default of new platforms with RAILYARD_STRICT_IDENTIFIERS=1', async () => {
    const t = await build({ config: { strictIdentifiers: true } });
    expect((await t.raw('GET', '/_railyard/platform')).body.strictIdentifiers).toBe(true);
    expect((await (await t.newPlatform()).raw('GET', '/_railyard/platform')).body.strictIdentifiers).toBe(true);
    const lenientOne = await t.newPlatform({ strictIdentifiers: false });
    expect((await lenientOne.raw('GET', '/_railyard/platform')).body.strictIdentifiers).toBe(false);
  });

  it.each(ROWS.map((row) => [row.rule, row] as const))('%s: only strict mode refuses', async (_rule, row) => {
    const accepted = await row.refused(lenient);
    expect(accepted.status, accepted.text).toBeLessThan(300);

    const refused = await row.refused(strict);
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.code).toBe('INVALID_INPUT');
    expect(refused.body.details.errors).toEqual([
      expect.objectContaining({ field: row.field, message: expect.stringMatching(/\(strict identifiers\)$/) }),
    ]);

    const control = await row.accepted(strict);
    expect(control.status, control.text).toBeLessThan(300);
  });
});
