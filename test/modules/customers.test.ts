import { describe, expect, it } from 'vitest';
import {
  businessBody,
  createCustomer,
  eventsOf,
  homeAddress,
  individualBody,
  officeAddress,
} from '../fixtures/customers.js';
import { loginToCustomerWallet, signed } from '../fixtures/wallet.js';
import { build, ManualClock } from '../helper.js';

function fieldsOf(reply: { body: { details?: { errors?: { field: string }[] } } }): string[] {
  return (reply.body.details?.errors ?? []).map((e) => e.field).sort();
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('POST /customers', () => {
  it('creates an individual with every field of the reference, never echoing the identification number', async () => {
    const t = await build();
    const body = {
      ...individualBody('Jordan Rivera'),
      platformCustomerId: 'crm-4471',
      region: 'US',
      currencies: ['USD', 'USDC'],
      phoneNumber: '+14155550123',
      umaAddress: '$jordan.rivera@pay.example.com',
      countryOfIssuance: 'US',
      sourceOfFundsCategories: ['SALARY', 'OTHER'],
      sourceOfFundsOtherDescription: 'Royalties from a published book',
      purposeOfAccount: 'P2P_TRANSFERS',
      expectedMonthlyTransactionCount: 'COUNT_10_TO_100',
      annualIncomeRange: 'RANGE_100K_250K',
      pepStatus: 'NONE',
      favouriteColour: 'teal',
    };
    const reply = await t.api('POST', '/customers', { body });
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      id: expect.stringMatching(/^Customer:[0-9a-f-]{36}$/),
      platformCustomerId: 'crm-4471',
      customerType: 'INDIVIDUAL',
      region: 'US',
      currencies: ['USD', 'USDC'],
      email: 'jordan.rivera@example.com',
      phoneNumber: '+14155550123',
      umaAddress: '$jordan.rivera@pay.example.com',
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      isDeleted: false,
      kycStatus: 'APPROVED',
      fullName: 'Jordan Rivera',
      birthDate: '1988-04-12',
      nationality: 'US',
      address: homeAddress,
      idType: 'SSN',
      countryOfIssuance: 'US',
      sourceOfFundsCategories: ['SALARY', 'OTHER'],
      sourceOfFundsOtherDescription: 'Royalties from a published book',
      purposeOfAccount: 'P2P_TRANSFERS',
      expectedMonthlyTransactionCount: 'COUNT_10_TO_100',
      annualIncomeRange: 'RANGE_100K_250K',
      pepStatus: 'NONE',
    });
    expect(reply.text).not.toContain('123-45-6789');
    const fetched = await t.api('GET', `/customers/${reply.body.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(reply.body);
  });

  it('creates a business UNVERIFIED with its business information and no owners yet', async () => {
    const t = await build();
    const body = businessBody('HF-2016-778');
    const reply = await t.api('POST', '/customers', { body });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      customerType: 'BUSINESS',
      platformCustomerId: body.platformCustomerId,
      kybStatus: 'UNVERIFIED',
      region: 'US',
      address: officeAddress,
      businessInfo: body.businessInfo,
      beneficialOwners: [],
      isDeleted: false,
    });
    expect(reply.body.kycStatus).toBeUndefined();
    expect(reply.body.umaAddress).toMatch(/^\$c[0-9a-f]{12}@railyard\.sandbox\.uma\.money$/);
    expect(await eventsOf(t, reply.body.id)).toEqual([]);
  });

  it('fills in a platformCustomerId, a UMA address and the platform currencies when none are given', async () => {
    const t = await build();
    const reply = await t.api('POST', '/customers', { body: { customerType: 'INDIVIDUAL' } });
    expect(reply.status).toBe(201);
    expect(reply.body.platformCustomerId).toMatch(/^[0-9a-f]{16}$/);
    expect(reply.body.umaAddress).toMatch(/^\$c[0-9a-f]{12}@railyard\.sandbox\.uma\.money$/);
    expect(reply.body.currencies).toEqual(['USD', 'USDC', 'USDB']);
    // No name, no suffix: the customer waits for a submission.
    expect(reply.body.kycStatus).toBe('UNVERIFIED');
  });

  it.each([
    ['Maria Lopez 001', 'PENDING', 'CUSTOMER.KYC_PENDING'],
    ['Maria Lopez 002', 'REJECTED', 'CUSTOMER.KYC_REJECTED'],
    ['Maria Lopez 003', 'UNVERIFIED', undefined],
    ['Maria Lopez 004', 'APPROVED', 'CUSTOMER.KYC_APPROVED'],
    ['Maria Lopez', 'APPROVED', 'CUSTOMER.KYC_APPROVED'],
  ])('gives an individual named %s the kycStatus %s and records %s', async (fullName, kycStatus, eventType) => {
    const t = await build();
    const reply = await t.api('POST', '/customers', { body: individualBody(fullName) });
    expect(reply.status).toBe(201);
    expect(reply.body.kycStatus).toBe(kycStatus);
    const events = await eventsOf(t, reply.body.id);
    expect(events).toEqual(eventType ? [[eventType, reply.body]] : []);
  });

  it('accepts taxIdType and taxIdentifier as the founding names of idType and identifier', async () => {
    const t = await build();
    const { idType: _a, identifier: _b, ...rest } = individualBody('Sam Okafor');
    const reply = await t.api('POST', '/customers', {
      body: { ...rest, taxIdType: 'ITIN', taxIdentifier: '912-70-1234' },
    });
    expect(reply.status).toBe(201);
    expect(reply.body.idType).toBe('ITIN');
    expect(reply.body.taxIdType).toBeUndefined();
    expect(reply.text).not.toContain('912-70-1234');
    const clash = await t.api('POST', '/customers', {
      body: { ...rest, idType: 'SSN', taxIdType: 'ITIN', identifier: '123-45-6789' },
    });
    expect(clash.status).toBe(400);
    expect(fieldsOf(clash)).toEqual(['taxIdType']);
  });

  it('names every invalid field of an individual in one 400, schema and rules together, and creates nothing', async () => {
    const t = await build();
    const body = {
      customerType: 'INDIVIDUAL',
      email: 'not-an-email',
      phoneNumber: '0044 20 7946 0000',
      birthDate: '2099-01-01',
      nationality: 'United States',
      address: { line1: '1 Main St', country: 'US' },
      idType: 'SSN',
      identifier: '123456789',
      currencies: ['USD', 'EUR', 'USD'],
      umaAddress: 'not an address',
      pepStatus: 'MAYBE',
      sourceOfWealthCategories: ['OTHER'],
    };
    const reply = await t.api('POST', '/customers', { body });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ status: 400, code: 'INVALID_INPUT' });
    const reference = [
      'address.postalCode',
      'birthDate',
      'currencies[1]',
      'currencies[2]',
      'email',
      'nationality',
      'pepStatus',
      'phoneNumber',
      'sourceOfWealthOtherDescription',
      'umaAddress',
    ];
    expect(fieldsOf(reply)).toEqual(reference);
    // An SSN written without its dashes breaks no rule of the reference; strict mode refuses it.
    const strict = await t.newPlatform({ strictIdentifiers: true });
    const strictReply = await strict.api('POST', '/customers', { body });
    expect(fieldsOf(strictReply)).toEqual([...reference, 'identifier'].sort());
    expect(strictReply.body.details.errors.find((e: { field: string }) => e.field === 'identifier')).toEqual({
      field: 'identifier',
      constraint: { pattern: '^\\d{3}-\\d{2}-\\d{4}$' },
      message: 'must be written ###-##-#### for SSN (strict identifiers)',
    });
    const byField = Object.fromEntries(reply.body.details.errors.map((e: { field: string }) => [e.field, e]));
    expect(byField.email.constraint).toEqual({ format: 'email' });
    expect(byField.phoneNumber.constraint).toEqual({ pattern: '^\\+[1-9]\\d{1,14}$' });
    expect(byField['currencies[1]'].constraint).toEqual({ enum: ['USD', 'USDC', 'USDB'] });
    expect(byField.pepStatus.constraint.enum).toContain('FAMILY_OR_ASSOCIATE');
    expect((await t.api('GET', '/customers')).body.totalCount).toBe(0);
  });

  it('names every invalid field of a business in one 400; strict mode adds the strict ones', async () => {
    const t = await build();
    const body = {
      customerType: 'BUSINESS',
      businessInfo: {
        legalName: '',
        country: 'USA',
        incorporatedOn: '2099-12-01',
        entityType: 'GUILD',
        naicsCode: 'abc',
        purposeOfAccount: 'OTHER',
      },
      address: { line1: '1 Dock Rd', postalCode: '02110' },
    };
    const reply = await t.api('POST', '/customers', { body });
    expect(reply.status).toBe(400);
    const reference = [
      'address.country',
      'businessInfo.country',
      'businessInfo.entityType',
      'businessInfo.incorporatedOn',
      'businessInfo.naicsCode',
      'businessInfo.purposeOfAccountOtherDescription',
      'businessInfo.taxId',
    ];
    // The reference asks for a legalName, not for one that is not empty: only strict mode does.
    expect(fieldsOf(reply)).toEqual(reference);
    const strict = await t.newPlatform({ strictIdentifiers: true });
    const strictReply = await strict.api('POST', '/customers', { body });
    expect(fieldsOf(strictReply)).toEqual([...reference, 'businessInfo.legalName'].sort());
  });

  it('answers a missing or unknown customerType with the allowed values', async () => {
    const t = await build();
    for (const body of [{ fullName: 'Ann Lee' }, { customerType: 'TRUST' }]) {
      const reply = await t.api('POST', '/customers', { body });
      expect(reply.status).toBe(400);
      expect(reply.body.details.errors).toEqual([
        expect.objectContaining({ field: 'customerType', constraint: { enum: ['INDIVIDUAL', 'BUSINESS'] } }),
      ]);
    }
  });

  it('answers 409 CONFLICT for a platformCustomerId an active customer has, and frees it when that customer is deleted', async () => {
    const t = await build();
    const first = await createCustomer(t, individualBody('Kim Park', { platformCustomerId: 'crm-1' }));
    const again = await t.api('POST', '/customers', {
      body: individualBody('Lee Park', { platformCustomerId: 'crm-1' }),
    });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ status: 409, code: 'CONFLICT', details: { existingCustomerId: first.id } });
    expect((await t.api('DELETE', `/customers/${first.id}`)).status).toBe(200);
    const reused = await t.api('POST', '/customers', {
      body: individualBody('Lee Park', { platformCustomerId: 'crm-1' }),
    });
    expect(reused.status).toBe(201);
    // Another platform has its own namespace.
    const other = await t.newPlatform();
    expect(
      (await other.api('POST', '/customers', { body: individualBody('Kim Park', { platformCustomerId: 'crm-1' }) }))
        .status,
    ).toBe(201);
  });

  it('answers 409 UMA_ADDRESS_EXISTS for a taken UMA address, however it is written', async () => {
    const t = await build();
    await createCustomer(t, individualBody('Kim Park', { umaAddress: '$kim@pay.example.com' }));
    const reply = await t.api('POST', '/customers', {
      body: individualBody('Kim Park', { umaAddress: 'KIM@pay.example.com' }),
    });
    expect(reply.status).toBe(409);
    expect(reply.body.code).toBe('UMA_ADDRESS_EXISTS');
    const bare = await createCustomer(t, individualBody('Kim Park', { umaAddress: 'kim.park' }));
    expect(bare.umaAddress).toBe('$kim.park@railyard.sandbox.uma.money');
  });

  it('records a consent to the current End User Terms and refuses an unknown version', async () => {
    const t = await build();
    const terms = await t.api('GET', '/customers/end-user-terms');
    expect(terms.status).toBe(200);
    expect(terms.body).toEqual({
      version: '2025-10-13',
      url: expect.stringMatching(/\/_railyard\/end-user-terms\/2025-10-13$/),
    });
    const page = await t.raw('GET', new URL(terms.body.url).pathname, { auth: null });
    expect(page.status).toBe(200);
    expect(page.text).toContain('2025-10-13');

    const consent = {
      acceptedAt: '2025-11-02T10:15:00.000Z',
      ipAddress: '203.0.113.7',
      termsVersion: '2025-10-13',
      acceptanceMethod: 'CHECKBOX',
    };
    const accepted = await t.api('POST', '/customers', {
      body: individualBody('Ada Obi', { endUserTermsConsent: consent }),
    });
    expect(accepted.status).toBe(201);
    expect(accepted.body.endUserTermsConsent).toEqual(consent);
    // V1, the version the reference's request bodies name, is taken too.
    const v1 = await t.api('POST', '/customers', {
      body: individualBody('Ada Obi', { endUserTermsConsent: { ...consent, termsVersion: 'V1' } }),
    });
    expect(v1.status, v1.text).toBe(201);

    const old = await t.api('POST', '/customers', {
      body: individualBody('Ada Obi', { endUserTermsConsent: { ...consent, termsVersion: '2019-01-01' } }),
    });
    expect(old.status).toBe(400);
    expect(old.body).toMatchObject({
      code: 'END_USER_TERMS_VERSION_NOT_FOUND',
      details: { errors: [{ field: 'endUserTermsConsent.termsVersion' }] },
    });
    // With other problems too, the answer lists them all under INVALID_INPUT.
    const both = await t.api('POST', '/customers', {
      body: individualBody('Ada Obi', { email: 'x', endUserTermsConsent: { ...consent, termsVersion: '2019-01-01' } }),
    });
    expect(both.body.code).toBe('INVALID_INPUT');
    expect(fieldsOf(both)).toEqual(['email', 'endUserTermsConsent.termsVersion']);
  });

  it('asks customers in the EEA for email and phone and tracks their verification', async () => {
    const t = await build();
    const german = {
      ...individualBody('Lena Vogel'),
      address: { line1: 'Hauptstr. 5', postalCode: '10115', city: 'Berlin', country: 'DE' },
      nationality: 'DE',
    };
    const { email: _e, ...withoutEmail } = german;
    const missing = await t.api('POST', '/customers', { body: withoutEmail });
    expect(missing.status).toBe(400);
    expect(fieldsOf(missing)).toEqual(['email', 'phoneNumber']);
    const created = await createCustomer(t, { ...german, phoneNumber: '+4915112345678' });
    expect(created.region).toBe('DE');
    expect(created.contactVerification).toEqual({ email: 'PENDING', phone: 'PENDING' });
    const american = await createCustomer(t, individualBody('Lena Vogel'));
    expect(american.contactVerification).toBeUndefined();
  });

  it('refuses a token without MANAGE, naming the permission', async () => {
    const t = await build();
    const token = await t.api('POST', '/tokens', { body: { name: 'reader', permissions: ['VIEW'] } });
    const auth = { username: token.body.clientId, password: token.body.clientSecret };
    const reply = await t.api('POST', '/customers', { auth, body: individualBody('Ann Lee') });
    expect(reply.status).toBe(401);
    expect(reply.body.details.requiredPermission).toBe('MANAGE');
    expect((await t.api('GET', '/customers', { auth })).status).toBe(200);
  });

  it('answers other methods on /customers with 405 in the envelope', async () => {
    const t = await build();
    const reply = await t.api('PUT', '/customers', { body: {} });
    expect(reply.status).toBe(405);
    expect(reply.body).toMatchObject({ status: 405, code: 'METHOD_NOT_ALLOWED' });
    expect(reply.headers.allow).toBe('GET, POST');
  });
});

describe('GET /customers/{customerId}', () => {
  it('answers 404 USER_NOT_FOUND for an unknown id, another platform and a deleted customer', async () => {
    const t = await build();
    const other = await t.newPlatform();
    const mine = await createCustomer(t, individualBody('Ann Lee'));
    const unknown = await t.api('GET', '/customers/Customer:019a0000-0000-7000-8000-000000000000');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ status: 404, code: 'USER_NOT_FOUND' });
    const foreign = await other.api('GET', `/customers/${mine.id}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('USER_NOT_FOUND');
    expect(foreign.text).not.toContain('Ann Lee');
    await t.api('DELETE', `/customers/${mine.id}`);
    const deleted = await t.api('GET', `/customers/${mine.id}`);
    expect(deleted.status).toBe(404);
    expect(deleted.body).toMatchObject({ code: 'USER_NOT_FOUND', details: { customerId: mine.id, isDeleted: true } });
  });
});

describe('PATCH /customers/{customerId}', () => {
  it('changes the given fields and keeps the others', async () => {
    const t = await build();
    const created = await createCustomer(t, individualBody('Noor Haddad'));
    // The customer's wallet logs in with its email, so a new email is signed by a wallet session.
    const { key } = await loginToCustomerWallet(t, created.id);
    const { reply } = await signed(t, 'PATCH', `/customers/${created.id}`, key, {
      customerType: 'INDIVIDUAL',
      email: 'noor@example.org',
      currencies: ['USDC'],
      address: { ...homeAddress, line1: '1 New Street' },
      umaAddress: '$noor@pay.example.com',
      netWorthRange: 'RANGE_1M_5M',
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      id: created.id,
      email: 'noor@example.org',
      currencies: ['USDC'],
      address: { ...homeAddress, line1: '1 New Street' },
      umaAddress: '$noor@pay.example.com',
      netWorthRange: 'RANGE_1M_5M',
      fullName: 'Noor Haddad',
      birthDate: '1988-04-12',
      kycStatus: 'APPROVED',
    });
    expect(reply.body.updatedAt >= created.updatedAt).toBe(true);
    expect((await t.api('GET', `/customers/${created.id}`)).body).toEqual(reply.body);
  });

  it('merges businessInfo and keeps the business status', async () => {
    const t = await build();
    const created = await createCustomer(t, businessBody('HF-1'));
    const reply = await t.api('PATCH', `/customers/${created.id}`, {
      body: { customerType: 'BUSINESS', businessInfo: { doingBusinessAs: 'HF Cargo', naicsCode: '4841' } },
    });
    expect(reply.status).toBe(200);
    expect(reply.body.businessInfo).toEqual({
      ...created.businessInfo,
      doingBusinessAs: 'HF Cargo',
      naicsCode: '4841',
    });
    expect(reply.body.kybStatus).toBe('UNVERIFIED');
  });

  it('names every invalid field in one 400, including a customerType that is not the customer’s', async () => {
    const t = await build();
    const created = await createCustomer(t, individualBody('Noor Haddad'));
    const reply = await t.api('PATCH', `/customers/${created.id}`, {
      body: {
        customerType: 'BUSINESS',
        email: 'nope',
        phoneNumber: '12',
        currencies: ['GBP'],
        businessInfo: { country: 'Narnia' },
      },
    });
    expect(reply.status).toBe(400);
    expect(fieldsOf(reply)).toEqual(['businessInfo.country', 'currencies[0]', 'customerType', 'email', 'phoneNumber']);
    expect((await t.api('GET', `/customers/${created.id}`)).body).toEqual(created);
  });

  it('answers 409 for a UMA address another customer has, 404 for unknown, foreign and deleted customers', async () => {
    const t = await build();
    const other = await t.newPlatform();
    await createCustomer(t, individualBody('Ann Lee', { umaAddress: '$ann@pay.example.com' }));
    const bob = await createCustomer(t, individualBody('Bob Lee'));
    const taken = await t.api('PATCH', `/customers/${bob.id}`, {
      body: { customerType: 'INDIVIDUAL', umaAddress: '$ann@pay.example.com' },
    });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('UMA_ADDRESS_EXISTS');
    const patch = { body: { customerType: 'INDIVIDUAL', email: 'b@example.com' } };
    expect((await other.api('PATCH', `/customers/${bob.id}`, patch)).status).toBe(404);
    expect((await t.api('PATCH', '/customers/Customer:nope', patch)).body.code).toBe('USER_NOT_FOUND');
    await t.api('DELETE', `/customers/${bob.id}`);
    const gone = await t.api('PATCH', `/customers/${bob.id}`, patch);
    expect(gone.status).toBe(404);
    expect(gone.body.details.isDeleted).toBe(true);
  });
});

describe('DELETE /customers/{customerId}', () => {
  it('answers 200 with the deleted customer, then 410 CUSTOMER_DELETED to a second delete', async () => {
    const t = await build();
    const created = await createCustomer(t, businessBody('HF-9'));
    const deleted = await t.api('DELETE', `/customers/${created.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ id: created.id, isDeleted: true, kybStatus: 'UNVERIFIED' });
    const again = await t.api('DELETE', `/customers/${created.id}`);
    expect(again.status).toBe(410);
    expect(again.body).toMatchObject({ status: 410, code: 'CUSTOMER_DELETED' });
  });

  it('answers 404 for another platform’s customer and leaves it alone', async () => {
    const t = await build();
    const other = await t.newPlatform();
    const created = await createCustomer(t, individualBody('Ann Lee'));
    const reply = await other.api('DELETE', `/customers/${created.id}`);
    expect(reply.status).toBe(404);
    expect(reply.body.code).toBe('USER_NOT_FOUND');
    expect((await t.api('GET', `/customers/${created.id}`)).status).toBe(200);
  });
});

describe('GET /customers', () => {
  it('filters by every parameter the reference declares and shows deleted customers only on request', async () => {
    // Each customer a second after the one before, so the date filters can tell them apart.
    const clock = new ManualClock(Date.parse('2025-06-02T09:00:00.000Z'));
    const t = await build({ clock });
    await t.api('PATCH', '/config', {
      body: {
        supportedCurrencies: ['USD', 'USDC', 'MXN'].map((currencyCode) => ({
          currencyCode,
          minAmount: 1,
          maxAmount: 1_000_000,
          requiredCounterpartyFields: [],
          enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
        })),
      },
    });
    const ann = await createCustomer(
      t,
      individualBody('Ann Lee', { platformCustomerId: 'ann', currencies: ['USD'], umaAddress: '$ann@pay.example.com' }),
    );
    clock.advance(1_000);
    const mx = await createCustomer(t, {
      ...individualBody('Luis Mora', { platformCustomerId: 'luis', currencies: ['MXN', 'USDC'] }),
      address: { line1: 'Av. Juárez 10', postalCode: '06050', city: 'CDMX', country: 'MX' },
    });
    clock.advance(1_000);
    const biz = await createCustomer(t, businessBody('HF-3', { platformCustomerId: 'hf' }));
    const ids = async (query: string) =>
      (await t.api('GET', `/customers${query}`)).body.data.map((c: { id: string }) => c.id).sort();

    expect(await ids('')).toEqual([ann.id, mx.id, biz.id].sort());
    expect(await ids('?platformCustomerId=luis')).toEqual([mx.id]);
    expect(await ids('?customerType=BUSINESS')).toEqual([biz.id]);
    expect(await ids('?region=MX')).toEqual([mx.id]);
    expect(await ids('?currency=USD')).toEqual([ann.id, biz.id].sort());
    expect(await ids('?currency=USDC')).toEqual([mx.id, biz.id].sort());
    expect(await ids('?currency=US%25')).toEqual([]);
    expect(await ids(`?umaAddress=${encodeURIComponent('$ann@pay.example.com')}`)).toEqual([ann.id]);
    expect(await ids(`?umaAddress=${encodeURIComponent(biz.umaAddress)}`)).toEqual([biz.id]);

    const between = `createdAfter=${encodeURIComponent(mx.createdAt)}&createdBefore=${encodeURIComponent(mx.createdAt)}`;
    expect(await ids(`?${between}`)).toEqual([mx.id]);
    const later = new Date(Date.parse(biz.createdAt) + 1).toISOString();
    expect(await ids(`?createdAfter=${encodeURIComponent(later)}`)).toEqual([]);
    clock.advance(1_000);
    await t.api('PATCH', `/customers/${ann.id}`, { body: { customerType: 'INDIVIDUAL', email: 'ann@example.net' } });
    const patched = (await t.api('GET', `/customers/${ann.id}`)).body;
    expect(await ids(`?updatedAfter=${encodeURIComponent(patched.updatedAt)}`)).toEqual([ann.id]);
    expect(await ids(`?updatedBefore=${encodeURIComponent(biz.updatedAt)}`)).toEqual([mx.id, biz.id].sort());

    await t.api('DELETE', `/customers/${mx.id}`);
    expect(await ids('')).toEqual([ann.id, biz.id].sort());
    const withDeleted = await t.api('GET', '/customers?isIncludingDeleted=true');
    expect(withDeleted.body.totalCount).toBe(3);
    expect(withDeleted.body.data.find((c: { id: string }) => c.id === mx.id).isDeleted).toBe(true);
    expect((await t.api('GET', '/customers?isIncludingDeleted=false')).body.totalCount).toBe(2);
  });

  it('pages newest first and rejects bad parameters', async () => {
    const t = await build();
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await createCustomer(t, individualBody(`Person ${i}`)));
    const first = await t.api('GET', '/customers?limit=2');
    expect(first.body).toMatchObject({ hasMore: true, totalCount: 5 });
    expect(first.body.data.map((c: { id: string }) => c.id)).toEqual([created[4]!.id, created[3]!.id]);
    const second = await t.api('GET', `/customers?limit=2&cursor=${first.body.nextCursor}`);
    const third = await t.api('GET', `/customers?limit=2&cursor=${second.body.nextCursor}`);
    expect(third.body.hasMore).toBe(false);
    expect(third.body.nextCursor).toBeUndefined();
    expect(third.body.data.map((c: { id: string }) => c.id)).toEqual([created[0]!.id]);
    for (const query of [
      'limit=0',
      'limit=101',
      'cursor=garbage',
      'createdAfter=yesterday',
      'customerType=ROBOT',
      'isIncludingDeleted=perhaps',
    ]) {
      const reply = await t.api('GET', `/customers?${query}`);
      expect(reply.status, query).toBe(400);
      expect(reply.body.code).toBe('INVALID_INPUT');
    }
  });

  it('answers 400 naming the filter for a leap second, which no instant can hold', async () => {
    const t = await build();
    const reply = await t.api(
      'GET',
      '/customers?createdAfter=2016-12-31T23:59:60Z&updatedBefore=2016-12-31T23:59:60.5Z',
    );
    expect(reply.status).toBe(400);
    const problem = 'must not be a leap second (second 60): give 59 seconds or the next minute';
    expect(reply.body).toMatchObject({ status: 400, code: 'INVALID_INPUT' });
    expect(reply.body.details.errors).toEqual([
      { field: 'createdAfter', constraint: { format: 'date-time' }, message: problem },
      { field: 'updatedBefore', constraint: { format: 'date-time' }, message: problem },
    ]);
  });

  it('shows each platform only its own customers', async () => {
    const t = await build();
    const other = await t.newPlatform();
    await createCustomer(t, individualBody('Ann Lee'));
    const theirs = await createCustomer(other, individualBody('Ann Lee'));
    const list = await other.api('GET', '/customers');
    expect(list.body.data.map((c: { id: string }) => c.id)).toEqual([theirs.id]);
  });

  it('includes the beneficial owners of business customers', async () => {
    const t = await build();
    const biz = await createCustomer(t, businessBody('HF-7'));
    const owner = await t.api('POST', '/beneficial-owners', {
      body: {
        customerId: biz.id,
        roles: ['UBO'],
        ownershipPercentage: 60,
        personalInfo: {
          firstName: 'Ivy',
          lastName: 'Chen',
          birthDate: '1980-01-01',
          nationality: 'US',
          address: homeAddress,
          idType: 'SSN',
          identifier: '111-22-3333',
        },
      },
    });
    const list = await t.api('GET', `/customers?platformCustomerId=${biz.platformCustomerId}`);
    expect(list.body.data[0].beneficialOwners).toEqual([owner.body]);
  });
});
