import { describe, expect, it } from 'vitest';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { clientKey, loginToCustomerWallet, signed } from '../fixtures/wallet.js';
import { build } from '../helper.js';

// A customer's email (phone number) is what its wallet's EMAIL_OTP (SMS_OTP) credential
// sends codes to, so changing it is a signed request of the wallet holder.
describe('PATCH /customers/{customerId} of a wallet login', () => {
  it('asks for the wallet signature, then changes the email and the credential together', async () => {
    const t = await build();
    const customer = await createCustomer(t, individualBody('Rosa Delgado', { email: 'rosa@example.com' }));
    const { accountId, key } = await loginToCustomerWallet(t, customer.id);
    const body = { customerType: 'INDIVIDUAL', email: 'rosa.delgado@example.net' };

    const first = await t.api('PATCH', `/customers/${customer.id}`, { body });
    expect(first.status).toBe(202);
    expect(Object.keys(first.body).sort()).toEqual(['expiresAt', 'payloadToSign', 'requestId']);
    const payload = JSON.parse(first.body.payloadToSign);
    expect(payload).toMatchObject({
      type: 'ACTIVITY_TYPE_UPDATE_USER_EMAIL',
      parameters: { userEmail: 'rosa.delgado@example.net' },
    });
    // Nothing changed yet.
    expect((await t.api('GET', `/customers/${customer.id}`)).body.email).toBe('rosa@example.com');

    // Signed by a key that holds no session of the wallet: refused, nothing changed.
    const stranger = await t.api('PATCH', `/customers/${customer.id}`, {
      body,
      headers: {
        'Grid-Wallet-Signature': await clientKey().stamp(first.body.payloadToSign),
        'Request-Id': first.body.requestId,
      },
    });
    expect(stranger.status).toBe(401);
    expect(stranger.body.code).toBe('WALLET_SIGNATURE_INVALID');
    expect((await t.api('GET', `/customers/${customer.id}`)).body.email).toBe('rosa@example.com');

    const retry = await t.api('PATCH', `/customers/${customer.id}`, {
      body,
      headers: {
        'Grid-Wallet-Signature': await key.stamp(first.body.payloadToSign),
        'Request-Id': first.body.requestId,
      },
    });
    expect(retry.status).toBe(200);
    expect(retry.body.email).toBe('rosa.delgado@example.net');
    const credentials = (await t.api('GET', `/auth/credentials?accountId=${accountId}`)).body.data;
    expect(credentials.map((c: any) => [c.type, c.nickname])).toEqual([['EMAIL_OTP', 'rosa.delgado@example.net']]);
  });

  it('changes other fields, and the email of a customer whose wallet has no EMAIL_OTP, at once', async () => {
    const t = await build();
    const customer = await createCustomer(t, individualBody('Ivo Marsh', { email: 'ivo@example.com' }));
    const plain = await t.api('PATCH', `/customers/${customer.id}`, {
      body: { customerType: 'INDIVIDUAL', email: 'ivo@example.com', birthDate: '1990-01-01' },
    });
    expect(plain.status).toBe(200);
    expect(plain.body.birthDate).toBe('1990-01-01');
    const noEmail = await createCustomer(t, individualBody('Una Park', { email: undefined }));
    const set = await t.api('PATCH', `/customers/${noEmail.id}`, {
      body: { customerType: 'INDIVIDUAL', email: 'una@example.com' },
    });
    expect(set.status).toBe(200);
    expect(set.body.email).toBe('una@example.com');
  });

  it('refuses email and phone number in one request once both are wallet logins', async () => {
    const t = await build();
    const customer = await createCustomer(
      t,
      individualBody('Lea Brandt', { email: 'lea@example.com', phoneNumber: '+14155550142' }),
    );
    const { accountId, key } = await loginToCustomerWallet(t, customer.id);
    const sms = await signed(t, 'POST', '/auth/credentials', key, { type: 'SMS_OTP', accountId });
    expect(sms.reply.status).toBe(201);
    const both = await t.api('PATCH', `/customers/${customer.id}`, {
      body: { customerType: 'INDIVIDUAL', email: 'lea.b@example.com', phoneNumber: '+14155550199' },
    });
    expect(both.status).toBe(400);
    expect(both.body.details.errors.map((e: any) => e.field).sort()).toEqual(['email', 'phoneNumber']);

    const phone = await signed(t, 'PATCH', `/customers/${customer.id}`, key, {
      customerType: 'INDIVIDUAL',
      phoneNumber: '+14155550199',
    });
    expect(JSON.parse(phone.challenge.body.payloadToSign)).toMatchObject({
      type: 'ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER',
      parameters: { userPhoneNumber: '+14155550199' },
    });
    expect(phone.reply.status).toBe(200);
    expect(phone.reply.body.phoneNumber).toBe('+14155550199');
    const credentials = (await t.api('GET', `/auth/credentials?accountId=${accountId}`)).body.data;
    expect(credentials.find((c: any) => c.type === 'SMS_OTP').nickname).toBe('+14155550199');
  });

  it('answers 409 when the wallet credentials changed between the two calls', async () => {
    const t = await build();
    const customer = await createCustomer(
      t,
      individualBody('Tom Reyes', { email: 'tom@example.com', phoneNumber: '+14155550177' }),
    );
    const { accountId, key } = await loginToCustomerWallet(t, customer.id);
    const body = { customerType: 'INDIVIDUAL', phoneNumber: '+14155550188' };
    // The phone number is no wallet login yet: no signature needed.
    expect((await t.api('PATCH', `/customers/${customer.id}`, { body })).status).toBe(200);
    expect((await signed(t, 'POST', '/auth/credentials', key, { type: 'SMS_OTP', accountId })).reply.status).toBe(201);
    const next = { customerType: 'INDIVIDUAL', phoneNumber: '+14155550166' };
    const first = await t.api('PATCH', `/customers/${customer.id}`, { body: next });
    expect(first.status).toBe(202);
    const sms = (await t.api('GET', `/auth/credentials?accountId=${accountId}`)).body.data.find(
      (c: any) => c.type === 'SMS_OTP',
    );
    expect((await signed(t, 'DELETE', `/auth/credentials/${sms.id}`, key)).reply.status).toBe(204);
    const retry = await t.api('PATCH', `/customers/${customer.id}`, {
      body: next,
      headers: {
        'Grid-Wallet-Signature': await key.stamp(first.body.payloadToSign),
        'Request-Id': first.body.requestId,
      },
    });
    expect(retry.status).toBe(409);
    expect(retry.body.code).toBe('EMAIL_OTP_CREDENTIAL_SET_CHANGED');
    expect((await t.api('GET', `/customers/${customer.id}`)).body.phoneNumber).toBe('+14155550188');
  });
});
