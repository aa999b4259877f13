// What SCA asks of a payment: an SCA session, a proof by SMS code or passkey (never TOTP),
// and the lockout wrong proofs bring.

import { describe, expect, it } from 'vitest';
import { accountBody } from '../fixtures/accounts.js';
import { SoftAuthenticator } from '../fixtures/authenticator.js';
import { authenticatorCode, euCustomer, scaLogin } from '../fixtures/sca.js';
import { quoteBody } from '../fuzz/baselines.js';
import { build, type TestApp } from '../helper.js';

const ORIGIN = 'http://localhost:3000';

/** An EU customer with money and an MXN bank account, and a quote to it executed into PENDING_AUTHORIZATION. */
async function challengedPayment(t: TestApp, options: { login?: boolean; scaFactor?: string } = {}) {
  const customer = await euCustomer(t);
  if (options.login !== false) await scaLogin(t, customer.id);
  const usd = (await t.api('GET', `/customers/internal-accounts?customerId=${customer.id}&currency=USD`)).body.data[0];
  await t.api('POST', `/sandbox/internal-accounts/${usd.id}/fund`, { body: { amount: 100_000 } });
  const mxn = await t.api('POST', '/customers/external-accounts', {
    body: { ...accountBody('MXN_ACCOUNT', '000'), customerId: customer.id },
  });
  return { customer, usd, mxn: mxn.body, pay: () => newChallenge(t, usd.id, mxn.body.id, options.scaFactor) };
}

async function newChallenge(t: TestApp, sourceId: string, destinationId: string, scaFactor?: string) {
  const quote = await t.api('POST', '/quotes', { body: quoteBody(sourceId, destinationId) });
  const executed = await t.api('POST', `/quotes/${quote.body.id}/execute`, {
    ...(scaFactor !== undefined ? { body: { scaFactor } } : {}),
  });
  return executed;
}

const authorize = (t: TestApp, quoteId: string, body: Record<string, unknown>) =>
  t.api('POST', `/quotes/${quoteId}/authorize`, { body });

describe('authorizing a payment', () => {
  it('needs a live SCA session: none, expired or ended by a password reset is 409 SCA_SESSION_REQUIRED', async () => {
    const t = await build();
    const { customer, pay } = await challengedPayment(t, { login: false });
    const first = await pay();
    expect(first.body.status).toBe('PENDING_AUTHORIZATION');
    const refused = await authorize(t, first.body.id, { code: '123456' });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('SCA_SESSION_REQUIRED');
    expect((await t.api('GET', `/quotes/${first.body.id}`)).body.status).toBe('PENDING_AUTHORIZATION');

    await scaLogin(t, customer.id);
    const authorized = await authorize(t, first.body.id, { code: '123456' });
    expect(authorized.status, authorized.text).toBe(200);
    expect(authorized.body.status).toBe('COMPLETED');

    // 180 days later the session is over.
    await t.advanceClock(180 * 86_400 + 60);
    const later = await pay();
    expect((await authorize(t, later.body.id, { code: '123456' })).body.code).toBe('SCA_SESSION_REQUIRED');
    await scaLogin(t, customer.id);
    const reset = await t.api('POST', `/sca/record-event?customerId=${customer.id}`, {
      body: { eventType: 'RESET_PASSWORD_COMPLETED' },
    });
    expect(reset.status).toBe(200);
    expect((await authorize(t, later.body.id, { code: '123456' })).body.code).toBe('SCA_SESSION_REQUIRED');
  });

  it('never takes a TOTP code, and counts wrong proofs to the lock (423)', async () => {
    const t = await build();
    const { customer, pay } = await challengedPayment(t);
    const started = await t.api('POST', `/sca/factors?customerId=${customer.id}`, { body: { type: 'TOTP' } });
    await t.api('POST', `/sca/factors/confirm?customerId=${customer.id}`, {
      body: { type: 'TOTP', secret: started.body.secret, code: '123456' },
    });
    const quote = (await pay()).body;
    expect(quote.scaChallenge).toMatchObject({ factor: 'SMS_OTP', availableFactors: ['SMS_OTP'] });
    // The authenticator's current code is a fine login proof, but not a payment's.
    const totp = await authorize(t, quote.id, { code: authenticatorCode(started.body.secret) });
    expect(totp.status).toBe(400);
    expect(totp.body.details.errors[0].message).toContain('1 failed attempts');
    for (let attempt = 2; attempt <= 4; attempt++) {
      const wrong = await authorize(t, quote.id, { code: '111111' });
      expect(wrong.status).toBe(400);
      expect(wrong.body.details.errors[0]).toMatchObject({ field: 'code' });
    }
    const locked = await authorize(t, quote.id, { code: '111111' });
    expect(locked.status).toBe(423);
    expect(locked.body).toMatchObject({ code: 'ACCOUNT_LOCKED', details: { failedAttempts: 5, suspended: false } });
    const stillLocked = await authorize(t, quote.id, { code: '123456' });
    expect(stillLocked.status).toBe(423);
    expect((await t.api('GET', `/quotes/${quote.id}`)).body.status).toBe('PENDING_AUTHORIZATION');
    const totpFactor = await t.api('POST', `/quotes/${quote.id}/execute`, { body: { scaFactor: 'TOTP' } });
    expect(totpFactor.status).toBe(400);
  });

  it('issues a passkey challenge when asked and the customer has one, and checks the assertion', async () => {
    const t = await build();
    const { customer, pay } = await challengedPayment(t, { scaFactor: 'PASSKEY' });
    const none = await pay();
    expect(none.status).toBe(400);
    expect(none.body.details.errors[0].field).toBe('scaFactor');

    const authenticator = new SoftAuthenticator({ origin: ORIGIN });
    const enroll = await t.api('POST', `/sca/factors?customerId=${customer.id}`, { body: { type: 'PASSKEY' } });
    await t.api('POST', `/sca/factors/confirm?customerId=${customer.id}`, {
      body: { type: 'PASSKEY', origin: ORIGIN, credential: authenticator.register(enroll.body.options.challenge) },
    });
    const quote = (await pay()).body;
    expect(quote.status).toBe('PENDING_AUTHORIZATION');
    expect(quote.scaChallenge).toMatchObject({
      factor: 'PASSKEY',
      availableFactors: ['SMS_OTP', 'PASSKEY'],
      passkeyAssertionOptions: { rpId: 'localhost', allowCredentials: [{ id: authenticator.credentialId }] },
    });
    expect(quote.scaChallenge.passkeyChallenge).toBeUndefined();
    const raw = Buffer.from(quote.scaChallenge.passkeyAssertionOptions.challenge, 'base64url').toString('utf8');
    const forged = await authorize(t, quote.id, {
      origin: ORIGIN,
      passkeyAssertion: authenticator.assert(raw, { signWith: 'other' }),
    });
    expect(forged.status).toBe(400);
    expect(forged.body.details.errors[0].field).toBe('passkeyAssertion');
    const signed = await authorize(t, quote.id, { origin: ORIGIN, passkeyAssertion: authenticator.assert(raw) });
    expect(signed.status, signed.text).toBe(200);
    expect(signed.body.status).toBe('COMPLETED');
  });
});
