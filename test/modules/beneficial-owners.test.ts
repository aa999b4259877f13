import { describe, expect, it } from 'vitest';
import {
  addOwner,
  businessBody,
  createCustomer,
  homeAddress,
  individualBody,
  ownerBody,
} from '../fixtures/customers.js';
import { build } from '../helper.js';

describe('POST /beneficial-owners', () => {
  it('adds an UNVERIFIED owner to a business customer, shown on the customer too', async () => {
    const t = await build();
    const business = await createCustomer(t, businessBody('R-1'));
    const body = ownerBody(business.id, 'Chen', { roles: ['UBO', 'CONTROL_PERSON'], ownershipPercentage: 55 });
    const reply = await t.api('POST', '/beneficial-owners', { body });
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      id: expect.stringMatching(/^BeneficialOwner:/),
      customerId: business.id,
      roles: ['UBO', 'CONTROL_PERSON'],
      ownershipPercentage: 55,
      personalInfo: body.personalInfo,
      kycStatus: 'UNVERIFIED',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await t.api('GET', `/customers/${business.id}`)).body.beneficialOwners).toEqual([reply.body]);
  });

  it('names every invalid field in one 400', async () => {
    const t = await build();
    const body = {
      customerId: 'Customer:x',
      roles: [],
      ownershipPercentage: 140,
      personalInfo: {
        firstName: 'A',
        birthDate: '1990-13-01',
        nationality: 'usa',
        address: homeAddress,
        idType: 'PASSPORT',
      },
    };
    const reply = await t.api('POST', '/beneficial-owners', { body });
    expect(reply.status).toBe(400);
    const reference = [
      'ownershipPercentage',
      'personalInfo.birthDate',
      'personalInfo.idType',
      'personalInfo.identifier',
      'personalInfo.lastName',
      'personalInfo.nationality',
    ];
    expect(reply.body.details.errors.map((e: { field: string }) => e.field).sort()).toEqual(reference);
    // An empty list of roles breaks no rule of the reference; strict mode asks for one.
    const strict = await t.newPlatform({ strictIdentifiers: true });
    const strictReply = await strict.api('POST', '/beneficial-owners', { body });
    expect(strictReply.body.details.errors.map((e: { field: string }) => e.field).sort()).toEqual(
      [...reference, 'roles'].sort(),
    );
  });

  it('refuses individuals (400), unknown, foreign and deleted customers (404), and shares over 100%', async () => {
    const t = await build();
    const other = await t.newPlatform();
    const person = await createCustomer(t, individualBody('Ann Lee'));
    const individual = await t.api('POST', '/beneficial-owners', { body: ownerBody(person.id, 'Chen') });
    expect(individual.status).toBe(400);
    expect(individual.body.details.errors[0].field).toBe('customerId');
    expect((await t.api('POST', '/beneficial-owners', { body: ownerBody('Customer:none', 'Chen') })).body.code).toBe(
      'USER_NOT_FOUND',
    );
    const business = await createCustomer(t, businessBody('R-1'));
    expect((await other.api('POST', '/beneficial-owners', { body: ownerBody(business.id, 'Chen') })).status).toBe(404);
    await addOwner(t, business.id, 'Chen', { ownershipPercentage: 70 });
    const tooMuch = await t.api('POST', '/beneficial-owners', {
      body: ownerBody(business.id, 'Diaz', { ownershipPercentage: 31 }),
    });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.details.errors[0]).toMatchObject({
      field: 'ownershipPercentage',
      message: expect.stringContaining('at most 30'),
    });
    expect(
      (await t.api('POST', '/beneficial-owners', { body: ownerBody(business.id, 'Diaz', { ownershipPercentage: 30 }) }))
        .status,
    ).toBe(201);
    await t.api('DELETE', `/customers/${business.id}`);
    expect(
      (await t.api('POST', '/beneficial-owners', { body: ownerBody(business.id, 'Eze', { ownershipPercentage: 0 }) }))
        .status,
    ).toBe(404);
  });

  it('decides an owner added after its business was decided at once, by suffix', async () => {
    const t = await build();
    const business = await createCustomer(t, businessBody('R-777'));
    expect((await t.api('POST', '/verifications', { body: { customerId: business.id } })).body.verificationStatus).toBe(
      'APPROVED',
    );
    expect((await addOwner(t, business.id, 'Late 002')).kycStatus).toBe('REJECTED');
    expect((await addOwner(t, business.id, 'Later', { ownershipPercentage: 10 })).kycStatus).toBe('APPROVED');
  });
});

describe('GET and PATCH /beneficial-owners', () => {
  it('lists the owners of one business, gets and updates one, and keeps platforms apart', async () => {
    const t = await build();
    const other = await t.newPlatform();
    const a = await createCustomer(t, businessBody('R-1'));
    const b = await createCustomer(t, businessBody('R-2'));
    const first = await addOwner(t, a.id, 'Chen', { ownershipPercentage: 20 });
    const second = await addOwner(t, a.id, 'Diaz', { ownershipPercentage: 20 });
    await addOwner(t, b.id, 'Eze');
    const list = await t.api('GET', `/beneficial-owners?customerId=${a.id}`);
    expect(list.body).toMatchObject({ totalCount: 2, hasMore: false });
    expect(list.body.data.map((o: { id: string }) => o.id)).toEqual([second.id, first.id]);
    expect((await t.api('GET', `/beneficial-owners?customerId=${a.id}&limit=1`)).body).toMatchObject({
      hasMore: true,
      nextCursor: expect.any(String),
    });
    expect((await t.api('GET', '/beneficial-owners')).status).toBe(400);
    expect((await other.api('GET', `/beneficial-owners?customerId=${a.id}`)).body.data).toEqual([]);

    expect((await t.api('GET', `/beneficial-owners/${first.id}`)).body).toEqual(first);
    const foreign = await other.api('GET', `/beneficial-owners/${first.id}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('REFERENCE_NOT_FOUND');

    const patched = await t.api('PATCH', `/beneficial-owners/${first.id}`, {
      body: {
        roles: ['DIRECTOR'],
        ownershipPercentage: 25,
        personalInfo: { middleName: 'Q', address: { ...homeAddress, line1: '9 Elm St' } },
      },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({
      ...first,
      roles: ['DIRECTOR'],
      ownershipPercentage: 25,
      personalInfo: { ...first.personalInfo, middleName: 'Q', address: { ...homeAddress, line1: '9 Elm St' } },
      updatedAt: expect.any(String),
    });
    const invalid = await t.api('PATCH', `/beneficial-owners/${first.id}`, {
      body: { ownershipPercentage: 101, roles: ['CEO'], personalInfo: { email: 'no' } },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.details.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'ownershipPercentage',
      'personalInfo.email',
      'roles[0]',
    ]);
    // The other owner holds 20%, so 81 is too much and 80 is the most.
    const overShare = await t.api('PATCH', `/beneficial-owners/${first.id}`, { body: { ownershipPercentage: 81 } });
    expect(overShare.status).toBe(400);
    expect(overShare.body.details.errors[0].field).toBe('ownershipPercentage');
    expect((await t.api('PATCH', `/beneficial-owners/${first.id}`, { body: { ownershipPercentage: 80 } })).status).toBe(
      200,
    );
    expect((await other.api('PATCH', `/beneficial-owners/${first.id}`, { body: { roles: ['UBO'] } })).status).toBe(404);
  });
});
