// Whole onboarding journeys, as a platform would drive them.

import { describe, expect, it } from 'vitest';
import { businessBody, documentFields, eventsOf, JPEG, multipart, ownerBody, PDF, PNG } from '../fixtures/customers.js';
import { build } from '../helper.js';

describe('onboarding a business', () => {
  it('takes a business with two beneficial owners and its documents from creation to APPROVED', async () => {
    const t = await build();
    const created = await t.api('POST', '/customers', { body: businessBody('HF-2016-778') });
    expect(created.status).toBe(201);
    const business = created.body;
    expect(business.kybStatus).toBe('UNVERIFIED');

    const founder = await t.api('POST', '/beneficial-owners', {
      body: ownerBody(business.id, 'Okafor', { roles: ['UBO', 'CONTROL_PERSON'], ownershipPercentage: 60 }),
    });
    const partner = await t.api('POST', '/beneficial-owners', {
      body: ownerBody(business.id, 'Lindqvist 001', { roles: ['UBO'], ownershipPercentage: 40 }),
    });
    expect([founder.status, partner.status]).toEqual([201, 201]);

    const uploads = [
      multipart(documentFields(business.id, 'CERTIFICATE_OF_INCORPORATION'), [
        { fileName: 'certificate.pdf', data: PDF() },
      ]),
      multipart(documentFields(business.id, 'SHAREHOLDER_REGISTER'), [{ fileName: 'register.pdf', data: PDF() }]),
      multipart(documentFields(business.id, 'UTILITY_BILL'), [{ fileName: 'bill.png', data: PNG() }]),
      multipart(documentFields(founder.body.id, 'PASSPORT'), [{ fileName: 'founder.jpg', data: JPEG() }]),
      multipart(documentFields(partner.body.id, 'PASSPORT'), [{ fileName: 'partner.jpg', data: JPEG() }]),
    ];
    const documents = [];
    for (const upload of uploads) {
      const reply = await t.api('POST', '/documents', upload);
      expect(reply.status).toBe(201);
      documents.push(reply.body);
    }
    expect((await t.api('GET', `/documents?documentHolder=${business.id}`)).body.totalCount).toBe(3);

    const verification = await t.api('POST', '/verifications', { body: { customerId: business.id } });
    expect(verification.status).toBe(200);
    expect(verification.body).toMatchObject({ customerId: business.id, verificationStatus: 'APPROVED', errors: [] });

    const approved = (await t.api('GET', `/customers/${business.id}`)).body;
    expect(approved.kybStatus).toBe('APPROVED');
    expect(
      approved.beneficialOwners.map((o: { personalInfo: { lastName: string }; kycStatus: string }) => [
        o.personalInfo.lastName,
        o.kycStatus,
      ]),
    ).toEqual([
      ['Okafor', 'APPROVED'],
      ['Lindqvist 001', 'PENDING'],
    ]);
    expect(await eventsOf(t, business.id)).toEqual([['CUSTOMER.KYB_APPROVED', approved]]);
    expect(await eventsOf(t, verification.body.id)).toEqual([['VERIFICATION.APPROVED', verification.body]]);
    // The submitted documents are part of the record now.
    for (const document of documents) expect((await t.api('DELETE', `/documents/${document.id}`)).status).toBe(409);
    expect((await t.api('POST', '/verifications', { body: { customerId: business.id } })).status).toBe(400);
  });

  it('takes a 001 business through RESOLVE_ERRORS and review to APPROVED on the hosted page', async () => {
    const t = await build();
    const business = (await t.api('POST', '/customers', { body: businessBody('QW-001', { address: undefined }) })).body;
    const first = (await t.api('POST', '/verifications', { body: { customerId: business.id } })).body;
    expect(first.verificationStatus).toBe('RESOLVE_ERRORS');
    expect(first.errors.map((e: { type: string }) => e.type)).toEqual([
      'MISSING_FIELD',
      'MISSING_LEGAL_PRESENCE_DOCUMENT',
      'MISSING_OWNERSHIP_STRUCTURE_DOCUMENT',
      'MISSING_PROOF_OF_ADDRESS_DOCUMENT',
      'MISSING_BENEFICIAL_OWNER',
    ]);

    await t.api('PATCH', `/customers/${business.id}`, {
      body: {
        customerType: 'BUSINESS',
        address: { line1: '9 Quay St', postalCode: '02110', city: 'Boston', country: 'US' },
      },
    });
    for (const type of ['ARTICLES_OF_INCORPORATION', 'PARTNERSHIP_AGREEMENT', 'ELECTRICITY_BILL']) {
      expect(
        (
          await t.api(
            'POST',
            '/documents',
            multipart(documentFields(business.id, type), [{ fileName: `${type}.pdf`, data: PDF() }]),
          )
        ).status,
      ).toBe(201);
    }
    await t.api('POST', '/beneficial-owners', { body: ownerBody(business.id, 'Novak', { ownershipPercentage: 50 }) });
    await t.api('POST', '/beneficial-owners', { body: ownerBody(business.id, 'Ito 002', { ownershipPercentage: 50 }) });
    const second = (await t.api('POST', '/verifications', { body: { customerId: business.id } })).body;
    expect(second).toMatchObject({ verificationStatus: 'IN_PROGRESS', errors: [] });
    expect((await t.api('GET', `/customers/${business.id}`)).body.kybStatus).toBe('PENDING');

    const link = (await t.api('POST', `/customers/${business.id}/kyc-link`, { body: {} })).body;
    const url = new URL(link.kycUrl);
    const done = await t.raw('POST', `${url.pathname}/complete${url.search}`, { auth: null });
    expect(done.status).toBe(200);
    expect(done.body.kybStatus).toBe('APPROVED');
    expect(done.body.beneficialOwners.map((o: { kycStatus: string }) => o.kycStatus)).toEqual(['APPROVED', 'REJECTED']);
    expect((await t.api('GET', `/verifications/${second.id}`)).body.verificationStatus).toBe('APPROVED');
    expect((await eventsOf(t, business.id)).map(([type]) => type)).toEqual([
      'CUSTOMER.KYB_PENDING',
      'CUSTOMER.KYB_APPROVED',
    ]);
  });
});

describe('onboarding an individual', () => {
  it('takes a 001 individual through RESOLVE_ERRORS to PENDING_MANUAL_REVIEW', async () => {
    const t = await build();
    // Created with a name only: kycStatus PENDING by its suffix.
    const created = await t.api('POST', '/customers', {
      body: {
        customerType: 'INDIVIDUAL',
        platformCustomerId: 'user-8812',
        fullName: 'Priya Natarajan 001',
        email: 'priya@example.com',
      },
    });
    expect(created.status).toBe(201);
    const customer = created.body;
    expect(customer.kycStatus).toBe('PENDING');

    const first = await t.api('POST', '/verifications', { body: { customerId: customer.id } });
    expect(first.body.verificationStatus).toBe('RESOLVE_ERRORS');
    expect(first.body.errors.map((e: { type: string; field?: string }) => e.field ?? e.type)).toEqual([
      'customer.birthDate',
      'customer.nationality',
      'customer.idType',
      'customer.identifier',
      'customer.address',
      'MISSING_IDENTITY_DOCUMENT',
    ]);

    // The platform supplies what was missing, with the founding names for the tax id.
    const patched = await t.api('PATCH', `/customers/${customer.id}`, {
      body: {
        customerType: 'INDIVIDUAL',
        birthDate: '1991-07-19',
        nationality: 'US',
        taxIdType: 'SSN',
        taxIdentifier: '321-54-9876',
        address: { line1: '55 Lake Shore Dr', city: 'Chicago', state: 'IL', postalCode: '60611', country: 'US' },
      },
    });
    expect(patched.status).toBe(200);
    const partial = await t.api('POST', '/verifications', { body: { customerId: customer.id } });
    expect(partial.body.errors).toEqual([
      {
        resourceId: customer.id,
        type: 'MISSING_IDENTITY_DOCUMENT',
        acceptedDocumentTypes: ['PASSPORT', 'DRIVERS_LICENSE', 'NATIONAL_ID'],
        reason: expect.any(String),
      },
    ]);
    const passport = await t.api(
      'POST',
      '/documents',
      multipart(documentFields(customer.id, 'PASSPORT'), [{ fileName: 'passport.jpg', data: JPEG() }]),
    );
    expect(passport.status).toBe(201);

    const final = await t.api('POST', '/verifications', { body: { customerId: customer.id } });
    expect(final.body).toMatchObject({ verificationStatus: 'PENDING_MANUAL_REVIEW', errors: [] });
    expect((await t.api('GET', `/customers/${customer.id}`)).body.kycStatus).toBe('PENDING');
    const history = (await t.api('GET', `/verifications?customerId=${customer.id}`)).body.data.map(
      (v: { verificationStatus: string }) => v.verificationStatus,
    );
    expect(history).toEqual(['PENDING_MANUAL_REVIEW', 'RESOLVE_ERRORS', 'RESOLVE_ERRORS']);
    const types = (await Promise.all([first.body.id, partial.body.id, final.body.id].map((id) => eventsOf(t, id)))).map(
      (events) => events.map(([type]) => type),
    );
    expect(types).toEqual([
      ['VERIFICATION.RESOLVE_ERRORS'],
      ['VERIFICATION.RESOLVE_ERRORS'],
      ['VERIFICATION.PENDING_MANUAL_REVIEW'],
    ]);
  });
});
