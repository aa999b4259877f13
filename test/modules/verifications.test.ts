import { describe, expect, it } from 'vitest';
import {
  addOwner,
  businessBody,
  createCustomer,
  eventsOf,
  individualBody,
  JPEG,
  multipart,
  documentFields,
  uploadDocument,
} from '../fixtures/customers.js';
import { build, type Tenant } from '../helper.js';

const verify = (t: Tenant, customerId: string) => t.api('POST', '/verifications', { body: { customerId } });

/** A business with complete information, the three document categories and one owner. */
async function completeBusiness(t: Tenant, registrationNumber: string, ownerLastNames = ['Chen']) {
  const business = await createCustomer(t, businessBody(registrationNumber));
  for (const type of ['CERTIFICATE_OF_INCORPORATION', 'SHAREHOLDER_REGISTER', 'UTILITY_BILL']) {
    expect(
      (await uploadDocument(t, business.id, type, { fileName: `${type}.pdf`, data: Buffer.from('%PDF-1.4 sandbox') }))
        .status,
    ).toBe(201);
  }
  const owners = [];
  for (const lastName of ownerLastNames)
    owners.push(await addOwner(t, business.id, lastName, { ownershipPercentage: 30 }));
  return { business, owners };
}

describe('POST /verifications for individuals', () => {
  it('lists every missing item of an incomplete 001 individual, one entry each', async () => {
    const t = await build();
    const customer = await createCustomer(t, { customerType: 'INDIVIDUAL', fullName: 'Rivera 001' });
    const reply = await verify(t, customer.id);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      id: expect.stringMatching(/^Verification:/),
      customerId: customer.id,
      verificationStatus: 'RESOLVE_ERRORS',
      errors: [
        { resourceId: customer.id, type: 'MISSING_FIELD', field: 'customer.birthDate', reason: expect.any(String) },
        { resourceId: customer.id, type: 'MISSING_FIELD', field: 'customer.nationality', reason: expect.any(String) },
        { resourceId: customer.id, type: 'MISSING_FIELD', field: 'customer.idType', reason: expect.any(String) },
        { resourceId: customer.id, type: 'MISSING_FIELD', field: 'customer.identifier', reason: expect.any(String) },
        { resourceId: customer.id, type: 'MISSING_FIELD', field: 'customer.address', reason: expect.any(String) },
        {
          resourceId: customer.id,
          type: 'MISSING_IDENTITY_DOCUMENT',
          acceptedDocumentTypes: ['PASSPORT', 'DRIVERS_LICENSE', 'NATIONAL_ID'],
          reason: expect.any(String),
        },
      ],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    // The customer keeps its status while errors remain.
    expect((await t.api('GET', `/customers/${customer.id}`)).body.kycStatus).toBe('PENDING');
    expect(await eventsOf(t, reply.body.id)).toEqual([['VERIFICATION.RESOLVE_ERRORS', reply.body]]);
  });

  it('asks for a family name when the full name is a single word', async () => {
    const t = await build();
    const customer = await createCustomer(t, individualBody('Madonna001'));
    await uploadDocument(t, customer.id);
    const reply = await verify(t, customer.id);
    expect(reply.body.verificationStatus).toBe('RESOLVE_ERRORS');
    expect(reply.body.errors).toEqual([
      {
        resourceId: customer.id,
        type: 'MISSING_FIELD',
        field: 'customer.fullName',
        reason: 'The full name needs a given name and a family name',
      },
    ]);
  });

  it('sends a complete 001 individual with an identity document to PENDING_MANUAL_REVIEW', async () => {
    const t = await build();
    const customer = await createCustomer(t, individualBody('Jordan Rivera 001'));
    expect(customer.kycStatus).toBe('PENDING');
    expect((await uploadDocument(t, customer.id, 'DRIVERS_LICENSE')).status).toBe(201);
    const reply = await verify(t, customer.id);
    expect(reply.body).toMatchObject({ verificationStatus: 'PENDING_MANUAL_REVIEW', errors: [] });
    expect((await t.api('GET', `/customers/${customer.id}`)).body.kycStatus).toBe('PENDING');
    // Already PENDING since creation: no second CUSTOMER.KYC_PENDING.
    expect((await eventsOf(t, customer.id)).map(([type]) => type)).toEqual(['CUSTOMER.KYC_PENDING']);
    expect(await eventsOf(t, reply.body.id)).toEqual([['VERIFICATION.PENDING_MANUAL_REVIEW', reply.body]]);
  });

  it('finds the identity document of a complete 003 individual of poor quality until it is replaced', async () => {
    const t = await build();
    const customer = await createCustomer(t, individualBody('Jordan Rivera 003'));
    expect(customer.kycStatus).toBe('UNVERIFIED');
    const document = (await uploadDocument(t, customer.id)).body;
    const first = await verify(t, customer.id);
    expect(first.body).toMatchObject({
      verificationStatus: 'RESOLVE_ERRORS',
      errors: [{ resourceId: document.id, type: 'POOR_QUALITY_DOCUMENT', reason: expect.any(String) }],
    });
    expect(first.body.errors).toHaveLength(1);
    // Resubmitting the same file changes nothing.
    expect((await verify(t, customer.id)).body.errors).toEqual(first.body.errors);
    const replaced = await t.api(
      'PUT',
      `/documents/${document.id}`,
      multipart(documentFields(customer.id), [{ fileName: 'rescan.png', data: JPEG() }]),
    );
    expect(replaced.status).toBe(200);
    const passed = await verify(t, customer.id);
    expect(passed.body).toMatchObject({ verificationStatus: 'PENDING_MANUAL_REVIEW', errors: [] });
    const after = (await t.api('GET', `/customers/${customer.id}`)).body;
    expect(after.kycStatus).toBe('PENDING');
    expect(await eventsOf(t, customer.id)).toEqual([['CUSTOMER.KYC_PENDING', after]]);
  });

  it.each([
    ['Jordan Rivera 002', 'REJECTED'],
    ['Jordan Rivera', 'APPROVED'],
  ])('refuses to submit %s, who is already %s, with 400', async (fullName, kycStatus) => {
    const t = await build();
    const customer = await createCustomer(t, individualBody(fullName));
    await uploadDocument(t, customer.id);
    const reply = await verify(t, customer.id);
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({
      code: 'INVALID_INPUT',
      details: { errors: [{ field: 'customerId', message: expect.stringContaining(kycStatus) }] },
    });
    expect((await t.api('GET', `/verifications?customerId=${customer.id}`)).body.totalCount).toBe(0);
  });
});

describe('POST /verifications for businesses', () => {
  it('rejects a 002 business at once, without looking at its data, and decides its owners by suffix', async () => {
    const t = await build();
    const business = await createCustomer(t, businessBody('REG-55002', { address: undefined }));
    const owners = [
      await addOwner(t, business.id, 'Chen001'),
      await addOwner(t, business.id, 'Diaz 002', { ownershipPercentage: 10 }),
      await addOwner(t, business.id, 'Eze', { ownershipPercentage: 5 }),
    ];
    const reply = await verify(t, business.id);
    expect(reply.body).toMatchObject({ verificationStatus: 'REJECTED', errors: [] });
    const after = (await t.api('GET', `/customers/${business.id}`)).body;
    expect(after.kybStatus).toBe('REJECTED');
    expect(after.beneficialOwners.map((o: { id: string; kycStatus: string }) => [o.id, o.kycStatus])).toEqual([
      [owners[0].id, 'PENDING'],
      [owners[1].id, 'REJECTED'],
      [owners[2].id, 'APPROVED'],
    ]);
    expect(await eventsOf(t, business.id)).toEqual([['CUSTOMER.KYB_REJECTED', after]]);
    expect((await eventsOf(t, reply.body.id)).map(([type]) => type)).toEqual(['VERIFICATION.REJECTED']);
    expect((await verify(t, business.id)).status).toBe(400);
  });

  it('approves a business with any other suffix at once, without validation, deciding its owners', async () => {
    const t = await build();
    const business = await createCustomer(t, businessBody('REG-55123'));
    const owner = await addOwner(t, business.id, 'Chen 002');
    const reply = await verify(t, business.id);
    expect(reply.body).toMatchObject({ verificationStatus: 'APPROVED', errors: [] });
    const after = (await t.api('GET', `/customers/${business.id}`)).body;
    expect(after.kybStatus).toBe('APPROVED');
    expect(after.beneficialOwners[0]).toMatchObject({ id: owner.id, kycStatus: 'REJECTED' });
    expect(await eventsOf(t, business.id)).toEqual([['CUSTOMER.KYB_APPROVED', after]]);
    const again = await verify(t, business.id);
    expect(again.status).toBe(400);
    expect(again.body.details.errors[0].message).toContain('APPROVED');
  });

  it.each(['001', '003'])(
    'validates a %s business: everything missing is listed, a complete one goes to review',
    async (suffix) => {
      const t = await build();
      const business = await createCustomer(t, {
        customerType: 'BUSINESS',
        businessInfo: {
          legalName: 'Quay Works Ltd',
          country: 'US',
          incorporatedOn: '2019-05-05',
          taxId: '12-3456789',
          registrationNumber: `QW-${suffix}`,
        },
      });
      const incomplete = await verify(t, business.id);
      expect(incomplete.body.verificationStatus).toBe('RESOLVE_ERRORS');
      expect(
        incomplete.body.errors.map((e: { type: string; field?: string; acceptedDocumentTypes?: string[] }) => [
          e.type,
          e.field ?? e.acceptedDocumentTypes ?? null,
        ]),
      ).toEqual([
        ['MISSING_FIELD', 'customer.businessInfo.countriesOfOperation'],
        ['MISSING_FIELD', 'customer.address'],
        [
          'MISSING_LEGAL_PRESENCE_DOCUMENT',
          [
            'CERTIFICATE_OF_INCORPORATION',
            'ARTICLES_OF_INCORPORATION',
            'ARTICLES_OF_ASSOCIATION',
            'STATE_REGISTRY_EXCERPT',
          ],
        ],
        ['MISSING_OWNERSHIP_STRUCTURE_DOCUMENT', ['SHAREHOLDER_REGISTER', 'TRUST_AGREEMENT', 'PARTNERSHIP_AGREEMENT']],
        [
          'MISSING_PROOF_OF_ADDRESS_DOCUMENT',
          ['UTILITY_BILL', 'RENT_OR_LEASE_AGREEMENT', 'ELECTRICITY_BILL', 'BANK_STATEMENT', 'TAX_RETURN'],
        ],
        ['MISSING_BENEFICIAL_OWNER', null],
      ]);
      expect(incomplete.body.errors.every((e: { resourceId: string }) => e.resourceId === business.id)).toBe(true);
      expect((await t.api('GET', `/customers/${business.id}`)).body.kybStatus).toBe('UNVERIFIED');

      const { business: complete, owners } = await completeBusiness(t, `QW-${suffix}`, ['Chen', 'Diaz 002']);
      const reply = await verify(t, complete.id);
      expect(reply.body).toMatchObject({ verificationStatus: 'IN_PROGRESS', errors: [] });
      const after = (await t.api('GET', `/customers/${complete.id}`)).body;
      expect(after.kybStatus).toBe('PENDING');
      // Submitted owners are under review; their suffixes count only when the business is decided.
      expect(after.beneficialOwners.map((o: { id: string; kycStatus: string }) => [o.id, o.kycStatus])).toEqual([
        [owners[0].id, 'PENDING'],
        [owners[1].id, 'PENDING'],
      ]);
      expect(await eventsOf(t, complete.id)).toEqual([['CUSTOMER.KYB_PENDING', after]]);
      // Still PENDING, so a new submission is allowed.
      expect((await verify(t, complete.id)).body.verificationStatus).toBe('IN_PROGRESS');
    },
  );

  it('validates a business without a registration number and names it', async () => {
    const t = await build();
    const body = businessBody('x');
    delete (body.businessInfo as Record<string, unknown>).registrationNumber;
    const business = await createCustomer(t, body);
    const reply = await verify(t, business.id);
    expect(reply.body.verificationStatus).toBe('RESOLVE_ERRORS');
    expect(reply.body.errors[0]).toMatchObject({
      type: 'MISSING_FIELD',
      field: 'customer.businessInfo.registrationNumber',
    });
  });
});

describe('POST /verifications', () => {
  it('answers 404 USER_NOT_FOUND for unknown, foreign and deleted customers, 400 for a bad body', async () => {
    const t = await build();
    const other = await t.newPlatform();
    const customer = await createCustomer(t, individualBody('Jordan Rivera 001'));
    expect((await verify(t, 'Customer:unknown')).body).toMatchObject({ status: 404, code: 'USER_NOT_FOUND' });
    expect((await verify(other, customer.id)).status).toBe(404);
    await t.api('DELETE', `/customers/${customer.id}`);
    expect((await verify(t, customer.id)).status).toBe(404);
    const bad = await t.api('POST', '/verifications', { body: { customer: 'x' } });
    expect(bad.status).toBe(400);
    expect(bad.body.details.errors).toEqual([{ field: 'customerId', message: 'is required' }]);
  });
});

describe('GET /verifications and /verifications/{verificationId}', () => {
  it('lists by customer and status, gets by id, and keeps platforms apart', async () => {
    const t = await build();
    const other = await t.newPlatform();
    const a = await createCustomer(t, individualBody('Jordan Rivera 001'));
    const b = await createCustomer(t, businessBody('R-9'));
    const first = (await verify(t, a.id)).body;
    await uploadDocument(t, a.id);
    const second = (await verify(t, a.id)).body;
    const third = (await verify(t, b.id)).body;
    const ids = async (query: string, tenant: Tenant = t) =>
      (await tenant.api('GET', `/verifications${query}`)).body.data.map((v: { id: string }) => v.id);
    expect(await ids('')).toEqual([third.id, second.id, first.id]);
    expect(await ids(`?customerId=${a.id}`)).toEqual([second.id, first.id]);
    expect(await ids('?verificationStatus=RESOLVE_ERRORS')).toEqual([first.id]);
    expect(await ids('?verificationStatus=APPROVED')).toEqual([third.id]);
    expect(await ids('', other)).toEqual([]);
    expect((await t.api('GET', '/verifications?verificationStatus=DONE')).status).toBe(400);
    const paged = await t.api('GET', '/verifications?limit=2');
    expect(paged.body).toMatchObject({ hasMore: true, totalCount: 3 });

    const fetched = await t.api('GET', `/verifications/${second.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(second);
    const foreign = await other.api('GET', `/verifications/${second.id}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('REFERENCE_NOT_FOUND');
  });
});
