// The reference's own examples, for both external-account creates and every accountInfo type
// (46), with each beneficiary variant a type has: a default platform takes every one (201,
// the account as sent), a platform in strict mode refuses exactly the values STRICT_REFUSALS
// lists. The bodies are built from grid-openapi.yaml at run time (builder.ts).

import { beforeAll, describe, expect, it } from 'vitest';
import { individualBody } from '../fixtures/customers.js';
import { build, type Tenant, type TestApp } from '../helper.js';
import { propertyNames, variantsOf } from './builder.js';
import {
  accountCurrency,
  MAGIC_EXAMPLES,
  ofArea,
  REFERENCE_BREAKS,
  STRICT_REFUSALS,
  strictRulesRead,
} from './expectations.js';
import {
  bodyFor,
  builtCases,
  distinct,
  type ExampleCase,
  expectAnswer,
  expectValidByReference,
  findingsOf,
  magicOf,
  namedCases,
} from './support.js';

const OPERATIONS = [
  { operationId: 'createCustomerExternalAccount', path: '/customers/external-accounts', customer: true },
  { operationId: 'createPlatformExternalAccount', path: '/platform/external-accounts', customer: false },
] as const;

/** The fields of LightningInfo of which exactly one is given (the reference's prose). */
const LIGHTNING_DESTINATIONS = ['invoice', 'bolt12', 'lightningAddress'];

interface AccountCase extends ExampleCase {
  accountType: string;
  /** The platforms a case runs on: an owner holds one account per identifier, so each beneficiary variant gets its own. */
  group: string;
}

function accountCases(operationId: string): AccountCase[] {
  const built = builtCases(operationId).flatMap((c): AccountCase[] => {
    const accountType: string = c.body.accountInfo.accountType;
    const body = { ...c.body, currency: accountCurrency(accountType) };
    const group = body.accountInfo.beneficiary?.beneficiaryType ?? 'INDIVIDUAL';
    if (accountType !== 'LIGHTNING') return [{ ...c, body, accountType, group }];
    return LIGHTNING_DESTINATIONS.map((field) => {
      const info = { ...body.accountInfo };
      for (const other of LIGHTNING_DESTINATIONS) if (other !== field) delete info[other];
      return { ...c, name: `${c.name} (${field} only)`, body: { ...body, accountInfo: info }, accountType, group };
    });
  });
  const named = namedCases(operationId).map(
    (c): AccountCase => ({ ...c, accountType: c.body.accountInfo.accountType, group: 'named' }),
  );
  return distinct([...built, ...named]) as AccountCase[];
}

const CASES = OPERATIONS.flatMap((op) => accountCases(op.operationId));
const ACCOUNT_TYPES = variantsOf('ExternalAccountCreateInfoOneOf').map((v) => v.tag);
const GROUPS = [...new Set(CASES.map((c) => c.group))];

describe('reference examples: POST /customers/external-accounts and POST /platform/external-accounts', () => {
  let t: TestApp;
  /** Per mode and group: the platform, and the customer whose accounts the customer create makes. */
  const owners = new Map<string, { tenant: Tenant; customerId: string }>();

  beforeAll(async () => {
    t = await build();
    for (const strict of [false, true]) {
      for (const group of GROUPS) {
        const tenant = await t.newPlatform({ strictIdentifiers: strict });
        const customer = await tenant.api('POST', '/customers', { body: individualBody('Robin Example') });
        expect(customer.status, customer.text).toBe(201);
        owners.set(`${strict}:${group}`, { tenant, customerId: customer.body.id });
      }
    }
  });

  it('has a case for every accountInfo type the reference lists, and every beneficiary variant', () => {
    expect(ACCOUNT_TYPES).toHaveLength(46);
    for (const op of OPERATIONS) {
      const types = new Set(CASES.filter((c) => c.operationId === op.operationId).map((c) => c.accountType));
      expect([...types].sort()).toEqual([...ACCOUNT_TYPES].sort());
    }
    // Every type with a beneficiary union is sent with each of its variants.
    const withBusiness = CASES.filter((c) => c.group === 'BUSINESS').map((c) => `${c.operationId} ${c.accountType}`);
    const withBeneficiary = CASES.filter((c) => c.body.accountInfo.beneficiary !== undefined && c.group !== 'named');
    expect(new Set(withBusiness)).toEqual(new Set(withBeneficiary.map((c) => `${c.operationId} ${c.accountType}`)));
    expect(REFERENCE_BREAKS.some((b) => b.where === 'LightningInfo')).toBe(true);
  });

  it('sends bodies the reference schema takes, from its examples (fills only where it has none)', () => {
    for (const c of CASES) expectValidByReference(c);
    // The only values not from the reference: the bank beneficiaries' required names and
    // countries, which no beneficiary schema gives an example of (FILLS in builder.ts).
    const filled = new Set(CASES.flatMap((c) => c.filled));
    expect([...filled].sort()).toEqual([
      'accountInfo.beneficiary.countryOfResidence',
      'accountInfo.beneficiary.fullName',
      'accountInfo.beneficiary.legalName',
      'accountInfo.beneficiary.phoneNumber',
    ]);
  });

  it('lists the strict refusals and magic values these examples hold', () => {
    const expected = ofArea(STRICT_REFUSALS, 'external-accounts', (r) => `${r.field} ${r.value} ${r.rule}`);
    expect(findingsOf(CASES)).toEqual(expected);
    // Each strict rule for accounts read example values: none passes for want of input.
    const read = strictRulesRead(CASES);
    for (const rule of ['IBAN', 'CLABE', 'ABA', 'BOLT 12', 'BOLT 11', 'lightning', 'EVM', 'Solana', 'Tron'])
      expect(Object.entries(read).find(([name]) => name.startsWith(rule))?.[1], rule).toBeGreaterThan(0);
    expect(magicOf(CASES)).toEqual(ofArea(MAGIC_EXAMPLES, 'external-accounts', (_e, value) => value));
  });

  it.each(ACCOUNT_TYPES)(
    '%s: taken by default, refused in strict mode only where a strict rule applies',
    async (type) => {
      const cases = CASES.filter((c) => c.accountType === type);
      await Promise.all(
        cases.flatMap((c) =>
          [false, true].map(async (strict) => {
            const { tenant, customerId } = owners.get(`${strict}:${c.group}`)!;
            const op = OPERATIONS.find((o) => o.operationId === c.operationId)!;
            const body = bodyFor(c, op.customer ? { customerId } : {});
            const reply = await tenant.api('POST', op.path, { body });
            expectAnswer(c, strict, reply);
            if (strict) return;
            // The account is stored as sent: every field its type declares comes back.
            const declared = new Set(propertyNames(variantOf(body.accountInfo.accountType)));
            const sent = Object.fromEntries(Object.entries(body.accountInfo).filter(([key]) => declared.has(key)));
            expect(reply.body.accountInfo, c.name).toMatchObject(sent);
            expect(reply.body.currency, c.name).toBe(body.currency);
            if (op.customer) expect(reply.body.customerId, c.name).toBe(customerId);
          }),
        ),
      );
    },
  );
});

function variantOf(accountType: string): string {
  return variantsOf('ExternalAccountCreateInfoOneOf').find((v) => v.tag === accountType)!.schema;
}
