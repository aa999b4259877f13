// The reference's own examples for customers (individual and business, create and update),
// beneficial owners and UMA invitations: a default platform takes every one, a platform in
// strict mode refuses exactly the values STRICT_REFUSALS lists for this area (none).
// The sandbox clock starts in June 2025, when the examples were written, so a dated example
// (an invitation's expiresAt) is still in the future.

import { beforeAll, describe, expect, it } from 'vitest';
import { START_MS } from '../fixtures/quotes.js';
import { build, ManualClock, type Reply, type Tenant, type TestApp } from '../helper.js';
import { MAGIC_EXAMPLES, ofArea, STRICT_REFUSALS, strictRulesRead } from './expectations.js';
import {
  bodyFor,
  builtCases,
  type ExampleCase,
  expectValidByReference,
  findingsOf,
  magicOf,
  namedCases,
  onBoth,
} from './support.js';

const CREATES = [...namedCases('createCustomer'), ...builtCases('createCustomer')];
const UPDATES = [...namedCases('updateCustomerById'), ...builtCases('updateCustomerById')];
const OWNER_CREATES = builtCases('createBeneficialOwner');
const OWNER_UPDATES = builtCases('updateBeneficialOwner');
const INVITATIONS = builtCases('createInvitation');
const CLAIMS = builtCases('claimInvitation');
const ALL = [...CREATES, ...UPDATES, ...OWNER_CREATES, ...OWNER_UPDATES, ...INVITATIONS, ...CLAIMS];

/** The named create example whose customer a named update of that type is applied to (a fresh one each time). */
const UPDATE_TARGET = { INDIVIDUAL: 'individualCustomer', BUSINESS: 'businessCustomer' } as const;

const isNamed = (c: ExampleCase) => c.name.includes(' named ');
const typeOf = (c: ExampleCase): 'INDIVIDUAL' | 'BUSINESS' => c.body.customerType;

describe('reference examples: customers, beneficial owners, invitations', () => {
  let t: TestApp;
  /**
   * Per mode, a platform for the named examples and one for each built customer type: the
   * built bodies of both types carry the same platformCustomerId and umaAddress examples,
   * which one platform holds once.
   */
  const platforms = new Map<string, Tenant>();
  const platform = (strict: boolean, key: string) => platforms.get(`${strict}:${key}`)!;
  /** The customers the create examples made, by mode and case name. */
  const created = new Map<string, any>();
  let suffix = 0;

  beforeAll(async () => {
    t = await build({ clock: new ManualClock(START_MS) });
    // The examples name currencies a new platform does not offer (EUR, BRL): it offers them first.
    const named = [...new Set(ALL.flatMap((c) => (Array.isArray(c.body.currencies) ? c.body.currencies : [])))];
    for (const strict of [false, true]) {
      for (const key of ['named', 'INDIVIDUAL', 'BUSINESS']) {
        const tenant = await t.newPlatform({ strictIdentifiers: strict });
        const config = (await tenant.api('GET', '/config')).body;
        const offered = new Set(config.supportedCurrencies.map((c: { currencyCode: string }) => c.currencyCode));
        const extra = named
          .filter((code) => !offered.has(code))
          .map((currencyCode) => ({
            currencyCode,
            minAmount: 1,
            maxAmount: 1_000_000,
            requiredCounterpartyFields: [],
            enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
          }));
        const patched = await tenant.api('PATCH', '/config', {
          body: { supportedCurrencies: [...config.supportedCurrencies, ...extra] },
        });
        expect(patched.status, patched.text).toBe(200);
        platforms.set(`${strict}:${key}`, tenant);
      }
    }
  });

  /** A new customer from a named create example (its platformCustomerId made unique): its id. */
  async function freshCustomer(tenant: Tenant, example: string): Promise<string> {
    const create = CREATES.find((k) => k.name === `createCustomer named ${example}`)!;
    suffix += 1;
    const reply = await tenant.api('POST', '/customers', {
      body: { ...create.body, platformCustomerId: `${create.body.platformCustomerId}-${suffix}` },
    });
    expect(reply.status, reply.text).toBe(201);
    return reply.body.id;
  }

  /** Sends a case to the platform of each mode that holds `key`, and checks the answers. */
  const both = (c: ExampleCase, key: string, send: (tenant: Tenant, strict: boolean) => Promise<Reply>) =>
    onBoth(c, new Map([false, true].map((strict) => [strict, platform(strict, key)])), send);

  it('sends bodies the reference schema takes, from its examples', () => {
    for (const c of ALL) expectValidByReference(c);
    const filled = new Set(ALL.flatMap((c) => c.filled));
    // endUserTermsConsent.acceptedAt has no example anywhere (FILLS in builder.ts).
    expect([...filled].sort()).toEqual(['endUserTermsConsent.acceptedAt']);
    expect(findingsOf(ALL)).toEqual(ofArea(STRICT_REFUSALS, 'customers', (r) => `${r.field} ${r.value} ${r.rule}`));
    expect(strictRulesRead(ALL)['SSN/ITIN written ###-##-####']).toBeGreaterThan(0);
    expect(magicOf(ALL)).toEqual(ofArea(MAGIC_EXAMPLES, 'customers', (_e, value) => value));
  });

  it.each(CREATES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const key = isNamed(c) ? 'named' : typeOf(c);
    const replies = await both(c, key, (tenant) => tenant.api('POST', '/customers', { body: bodyFor(c, {}) }));
    replies.forEach((reply, i) => {
      created.set(`${i === 1}:${c.name}`, reply.body);
      // The customer is stored as sent (the fields every customer shows).
      expect(reply.body, c.name).toMatchObject({
        customerType: c.body.customerType,
        ...(c.body.platformCustomerId ? { platformCustomerId: c.body.platformCustomerId } : {}),
        ...(c.body.fullName ? { fullName: c.body.fullName } : {}),
        ...(c.body.businessInfo ? { businessInfo: { legalName: c.body.businessInfo.legalName } } : {}),
      });
    });
  });

  it.each(UPDATES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    if (isNamed(c)) {
      // A fresh customer of the example's type, made from the create example of that type.
      await both(c, 'named', async (tenant) => {
        const target = await freshCustomer(tenant, UPDATE_TARGET[typeOf(c)]);
        return tenant.api('PATCH', `/customers/${target}`, { body: bodyFor(c, {}) });
      });
      return;
    }
    // The customer the built create of the same type made.
    const create = CREATES.find((k) => !isNamed(k) && typeOf(k) === typeOf(c))!;
    await both(c, typeOf(c), (tenant, strict) =>
      tenant.api('PATCH', `/customers/${created.get(`${strict}:${create.name}`).id}`, { body: bodyFor(c, {}) }),
    );
  });

  it.each([...OWNER_CREATES, ...OWNER_UPDATES].map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    await both(c, 'named', async (tenant) => {
      // A fresh business (from its create example) for each: the owners of one hold at most 100%.
      const business = await freshCustomer(tenant, 'businessCustomer');
      if (c.operationId === 'createBeneficialOwner')
        return tenant.api('POST', '/beneficial-owners', { body: bodyFor(c, { customerId: business }) });
      const owner = await tenant.api('POST', '/beneficial-owners', {
        body: bodyFor(OWNER_CREATES[0]!, { customerId: business }),
      });
      expect(owner.status, owner.text).toBe(201);
      return tenant.api('PATCH', `/beneficial-owners/${owner.body.id}`, { body: bodyFor(c, {}) });
    });
  });

  it.each([...INVITATIONS, ...CLAIMS].map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const inviter = (strict: boolean) => created.get(`${strict}:createCustomer named individualCustomer`);
    await both(c, 'named', async (tenant, strict) => {
      const inviterUma = inviter(strict).umaAddress as string;
      if (c.operationId === 'createInvitation')
        return tenant.api('POST', '/invitations', { body: bodyFor(c, { inviterUma }) });
      const invitation = await tenant.api('POST', '/invitations', { body: { inviterUma } });
      expect(invitation.status, invitation.text).toBe(201);
      return tenant.api('POST', `/invitations/${invitation.body.code}/claim`, { body: bodyFor(c, {}) });
    });
  });
});
