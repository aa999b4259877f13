// Trusted beneficiaries: two-step trust and untrust, and what trust changes for payments.

import { describe, expect, it } from 'vitest';
import { accountBody } from '../fixtures/accounts.js';
import { connectedAgent } from '../fixtures/agents.js';
import { SoftAuthenticator } from '../fixtures/authenticator.js';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { euCustomer, scaLogin } from '../fixtures/sca.js';
import { quoteBody } from '../fuzz/baselines.js';
import { build, type TestApp } from '../helper.js';

const ORIGIN = 'http://localhost:3000';

/** An EU customer with 100,000 USD cents and an MXN bank account. */
async function euPayer(t: TestApp) {
  const customer = await euCustomer(t);
  const usd = (await t.api('GET', `/customers/internal-accounts?customerId=${customer.id}&currency=USD`)).body.data[0];
  await t.api('POST', `/sandbox/internal-accounts/${usd.id}/fund`, { body: { amount: 100_000 } });
  const mxn = await t.api('POST', '/customers/external-accounts', {
    body: { ...accountBody('MXN_ACCOUNT', '000'), customerId: customer.id },
  });
  expect(mxn.status).toBe(201);
  return { customer, usd, mxn: mxn.body };
}

const path = (accountId: string, change: 'trust' | 'untrust', confirm = false) =>
  `/customers/external-accounts/${accountId}/${change}${confirm ? '/confirm' : ''}`;

/** Executes a new quote to the account: what the execute answers. */
async function pay(t: TestApp, sourceId: string, destinationId: string) {
  const quote = await t.api('POST', '/quotes', { body: quoteBody(sourceId, destinationId) });
  expect(quote.status, quote.text).toBe(201);
  return t.api('POST', `/quotes/${quote.body.id}/execute`);
}

describe('trusted beneficiaries', () => {
  it('trusts with the sandbox code, skips the payment challenge, and untrusts to restore it', async () => {
    const t = await build();
    const { customer, usd, mxn } = await euPayer(t);
    const challenged = await pay(t, usd.id, mxn.id);
    expect(challenged.body.status).toBe('PENDING_AUTHORIZATION');

    const started = await t.api('POST', path(mxn.id, 'trust'));
    expect(started.status, started.text).toBe(200);
    expect(started.body.scaChallenge).toMatchObject({
      factor: 'SMS_OTP',
      availableFactors: ['SMS_OTP'],
      purpose: 'TRUST_BENEFICIARY',
    });
    const wrong = await t.api('POST', path(mxn.id, 'trust', true), {
      body: { challengeId: started.body.scaChallenge.id, code: '000000' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.details.errors[0].field).toBe('code');
    // A refused proof trusted nothing.
    expect((await pay(t, usd.id, mxn.id)).body.status).toBe('PENDING_AUTHORIZATION');

    const confirmed = await t.api('POST', path(mxn.id, 'trust', true), {
      body: { challengeId: started.body.scaChallenge.id, code: '123456' },
    });
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.body).toEqual({ trusted: true });
    expect((await t.api('POST', path(mxn.id, 'trust'))).status).toBe(409);
    expect((await t.api('POST', path(mxn.id, 'trust', true), { body: { code: '123456' } })).status).toBe(400);

    const trustedPayment = await pay(t, usd.id, mxn.id);
    expect(trustedPayment.status).toBe(200);
    expect(trustedPayment.body.status).toBe('COMPLETED');

    // A trusted beneficiary is not deleted: 409 for the platform, refused for an agent.
    const deleted = await t.api('DELETE', `/customers/external-accounts/${mxn.id}`);
    expect(deleted.status).toBe(409);
    expect(deleted.body.code).toBe('BENEFICIARY_TRUSTED');
    const agent = await connectedAgent(t, customer.id);
    expect((await agent.api('DELETE', `/agents/me/external-accounts/${mxn.id}`)).status).toBe(401);

    const untrust = await t.api('POST', path(mxn.id, 'untrust'));
    expect(untrust.body.scaChallenge.purpose).toBe('UNTRUST_BENEFICIARY');
    const untrusted = await t.api('POST', path(mxn.id, 'untrust', true), { body: { code: '123456' } });
    expect(untrusted.body).toEqual({ trusted: false });
    expect((await pay(t, usd.id, mxn.id)).body.status).toBe('PENDING_AUTHORIZATION');
    expect((await t.api('POST', path(mxn.id, 'untrust'))).status).toBe(409);
    expect((await t.api('DELETE', `/customers/external-accounts/${mxn.id}`)).status).toBe(204);
  });

  it('takes a passkey assertion when the customer has a passkey, and an expired start is refused', async () => {
    const t = await build();
    const { customer, mxn } = await euPayer(t);
    const authenticator = new SoftAuthenticator({ origin: ORIGIN });
    const enroll = await t.api('POST', `/sca/factors?customerId=${customer.id}`, { body: { type: 'PASSKEY' } });
    const enrolled = await t.api('POST', `/sca/factors/confirm?customerId=${customer.id}`, {
      body: { type: 'PASSKEY', origin: ORIGIN, credential: authenticator.register(enroll.body.options.challenge) },
    });
    expect(enrolled.status).toBe(200);

    const stale = await t.api('POST', path(mxn.id, 'trust'));
    await t.advanceClock(11 * 60);
    const late = await t.api('POST', path(mxn.id, 'trust', true), {
      body: { challengeId: stale.body.scaChallenge.id, code: '123456' },
    });
    expect(late.status).toBe(400);
    expect(late.body.details.errors[0].field).toBe('challengeId');

    const started = await t.api('POST', path(mxn.id, 'trust'));
    const challenge = started.body.scaChallenge;
    expect(challenge).toMatchObject({
      factor: 'PASSKEY',
      availableFactors: ['SMS_OTP', 'PASSKEY'],
      // The configured origins (the default two) on the passkey's relying party.
      passkeyAllowedOrigins: [ORIGIN, 'https://localhost:3000'],
      passkeyAssertionOptions: { allowCredentials: [{ id: authenticator.credentialId }] },
    });
    const raw = Buffer.from(challenge.passkeyAssertionOptions.challenge, 'base64url').toString('utf8');
    const forged = await t.api('POST', path(mxn.id, 'trust', true), {
      body: { origin: ORIGIN, passkeyAssertion: authenticator.assert(raw, { signWith: 'other' }) },
    });
    expect(forged.status).toBe(400);
    const signed = await t.api('POST', path(mxn.id, 'trust', true), {
      body: { origin: ORIGIN, passkeyAssertion: authenticator.assert(raw) },
    });
    expect(signed.status, signed.text).toBe(200);
    expect(signed.body).toEqual({ trusted: true });
  });

  it('is 409 for a customer outside the EU and EEA and 404 for an unknown account', async () => {
    const t = await build();
    const us = await createCustomer(t, individualBody('Jordan Rivera'));
    const bank = await t.api('POST', '/customers/external-accounts', {
      body: { ...accountBody('USD_ACCOUNT', '000'), customerId: us.id },
    });
    for (const change of ['trust', 'untrust'] as const) {
      expect((await t.api('POST', path(bank.body.id, change))).status).toBe(409);
      const confirm = await t.api('POST', path(bank.body.id, change, true), { body: { code: '123456' } });
      expect(confirm.status).toBe(409);
      expect((await t.api('POST', path('ExternalAccount:nope', change))).status).toBe(404);
    }
  });
});

describe('trust belongs to the customer who gave it', () => {
  it("does not let another customer's payment to the same account skip the challenge", async () => {
    const t = await build();
    const owner = await euPayer(t);
    const other = await euPayer(t);
    await t.api('POST', path(owner.mxn.id, 'trust'));
    expect((await t.api('POST', path(owner.mxn.id, 'trust', true), { body: { code: '123456' } })).body).toEqual({
      trusted: true,
    });
    expect((await pay(t, owner.usd.id, owner.mxn.id)).body.status).toBe('COMPLETED');
    const theirs = await pay(t, other.usd.id, owner.mxn.id);
    expect(theirs.body.status).toBe('PENDING_AUTHORIZATION');
  });

  it('refuses a passkey answer to a payment challenge issued for SMS without counting it', async () => {
    const t = await build();
    const { customer, usd, mxn } = await euPayer(t);
    await scaLogin(t, customer.id);
    const challenged = await pay(t, usd.id, mxn.id);
    const wrongKind = await t.api('POST', `/quotes/${challenged.body.id}/authorize`, {
      body: { origin: ORIGIN, passkeyAssertion: new SoftAuthenticator({ origin: ORIGIN }).assert('x') },
    });
    expect(wrongKind.status).toBe(400);
    const event = await t.api('POST', `/sca/record-event?customerId=${customer.id}`, {
      body: { eventType: 'FAILED_LOGIN_ATTEMPT' },
    });
    expect(event.body.failedAttempts).toBe(1);
  });
});
