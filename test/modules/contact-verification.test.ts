import { describe, expect, it } from 'vitest';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { loginToCustomerWallet, signed } from '../fixtures/wallet.js';
import { build, type Tenant } from '../helper.js';

async function europeanCustomer(t: Tenant) {
  return createCustomer(t, {
    ...individualBody('Lena Vogel 001'),
    nationality: 'DE',
    address: { line1: 'Hauptstr. 5', postalCode: '10115', city: 'Berlin', country: 'DE' },
    phoneNumber: '+4915112345678',
  });
}

describe('POST /customers/{customerId}/verify-email and /verify-phone', () => {
  it.each([['email'], ['phone']])(
    'verifies the %s with the sandbox code 123456 after a code was sent',
    async (channel) => {
      const t = await build();
      const customer = await europeanCustomer(t);
      const sent = await t.api('POST', `/customers/${customer.id}/verify-${channel}`);
      expect(sent.status).toBe(204);
      expect(sent.text).toBe('');
      const confirmed = await t.api('POST', `/customers/${customer.id}/verify-${channel}/confirm`, {
        body: { code: '123456' },
      });
      expect(confirmed.status).toBe(200);
      expect(confirmed.body.id).toBe(customer.id);
      const other = channel === 'email' ? 'phone' : 'email';
      expect(confirmed.body.contactVerification).toEqual({ [channel]: 'VERIFIED', [other]: 'PENDING' });
      // Once verified, neither sending nor confirming applies any more.
      expect((await t.api('POST', `/customers/${customer.id}/verify-${channel}`)).status).toBe(409);
      const again = await t.api('POST', `/customers/${customer.id}/verify-${channel}/confirm`, {
        body: { code: '123456' },
      });
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('CONFLICT');
    },
  );

  it('refuses any other code with 400 and leaves the channel PENDING', async () => {
    const t = await build();
    const customer = await europeanCustomer(t);
    await t.api('POST', `/customers/${customer.id}/verify-email`);
    for (const code of ['654321', '000000', '12345']) {
      const reply = await t.api('POST', `/customers/${customer.id}/verify-email/confirm`, { body: { code } });
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({ code: 'INVALID_INPUT', details: { errors: [{ field: 'code' }] } });
    }
    expect((await t.api('GET', `/customers/${customer.id}`)).body.contactVerification.email).toBe('PENDING');
  });

  it('refuses a confirmation before any code was sent, and after the code expired', async () => {
    const t = await build();
    const customer = await europeanCustomer(t);
    const early = await t.api('POST', `/customers/${customer.id}/verify-phone/confirm`, { body: { code: '123456' } });
    expect(early.status).toBe(400);
    expect(early.body.details.errors[0].message).toContain('no code has been sent');
    await t.api('POST', `/customers/${customer.id}/verify-phone`);
    await t.raw('POST', '/_railyard/clock/advance', { body: { seconds: 601 } });
    const late = await t.api('POST', `/customers/${customer.id}/verify-phone/confirm`, { body: { code: '123456' } });
    expect(late.status).toBe(400);
    expect(late.body.details.errors[0].message).toContain('expired');
    // A new code works again.
    await t.api('POST', `/customers/${customer.id}/verify-phone`);
    expect(
      (await t.api('POST', `/customers/${customer.id}/verify-phone/confirm`, { body: { code: '123456' } })).status,
    ).toBe(200);
  });

  it('answers 409 for customers that need no contact verification, 404 for unknown and foreign ones', async () => {
    const t = await build();
    const other = await t.newPlatform();
    const american = await createCustomer(t, individualBody('Ann Lee'));
    expect((await t.api('POST', `/customers/${american.id}/verify-email`)).status).toBe(409);
    expect(
      (await t.api('POST', `/customers/${american.id}/verify-phone/confirm`, { body: { code: '123456' } })).status,
    ).toBe(409);
    const european = await europeanCustomer(t);
    const foreign = await other.api('POST', `/customers/${european.id}/verify-email`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('USER_NOT_FOUND');
    expect((await t.api('POST', '/customers/Customer:missing/verify-phone')).status).toBe(404);
  });

  it('asks again for a channel whose value changes', async () => {
    const t = await build();
    const customer = await europeanCustomer(t);
    await t.api('POST', `/customers/${customer.id}/verify-email`);
    await t.api('POST', `/customers/${customer.id}/verify-email/confirm`, { body: { code: '123456' } });
    const unchanged = await t.api('PATCH', `/customers/${customer.id}`, {
      body: { customerType: 'INDIVIDUAL', email: customer.email },
    });
    expect(unchanged.body.contactVerification.email).toBe('VERIFIED');
    const { key } = await loginToCustomerWallet(t, customer.id);
    const { reply: changed } = await signed(t, 'PATCH', `/customers/${customer.id}`, key, {
      customerType: 'INDIVIDUAL',
      email: 'lena@example.de',
    });
    expect(changed.body.contactVerification.email).toBe('PENDING');
  });

  it('holds back KYC until both channels are verified', async () => {
    const t = await build();
    const customer = await europeanCustomer(t);
    const link = await t.api('POST', `/customers/${customer.id}/kyc-link`, { body: {} });
    expect(link.status).toBe(409);
    expect(link.body.details.unverified).toEqual(['email', 'phone']);
    const submission = await t.api('POST', '/verifications', { body: { customerId: customer.id } });
    expect(submission.status).toBe(400);
    expect(submission.body.details.errors[0]).toMatchObject({
      field: 'customerId',
      message: expect.stringContaining('email and phone'),
    });
    for (const channel of ['email', 'phone']) {
      await t.api('POST', `/customers/${customer.id}/verify-${channel}`);
      await t.api('POST', `/customers/${customer.id}/verify-${channel}/confirm`, { body: { code: '123456' } });
    }
    expect((await t.api('POST', `/customers/${customer.id}/kyc-link`, { body: {} })).status).toBe(201);
    expect((await t.api('POST', '/verifications', { body: { customerId: customer.id } })).status).toBe(200);
  });
});
