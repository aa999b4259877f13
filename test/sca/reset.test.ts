// 2FA reset: the liveness-gated recovery of a lost factor, its page, its limit.

import { describe, expect, it } from 'vitest';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { euCustomer } from '../fixtures/sca.js';
import { build, type TestApp } from '../helper.js';

const q = (customerId: string) => `?customerId=${encodeURIComponent(customerId)}`;

async function startReset(t: TestApp, customerId: string, factor: string) {
  return t.api('POST', `/sca/factors/reset${q(customerId)}`, { body: { factor } });
}

const status = async (t: TestApp, customerId: string, resetId: string) =>
  (await t.api('GET', `/sca/factors/reset/${resetId}${q(customerId)}`)).body;

const tokenOf = (link: string) => link.split('/').pop()!;

describe('2FA reset', () => {
  it('takes a lost TOTP through the liveness page to COMPLETED, and then to a new enrollment', async () => {
    const t = await build();
    const customer = await euCustomer(t);
    const notEnrolled = await startReset(t, customer.id, 'TOTP');
    expect(notEnrolled.status).toBe(400);
    const enroll = await t.api('POST', `/sca/factors${q(customer.id)}`, { body: { type: 'TOTP' } });
    await t.api('POST', `/sca/factors/confirm${q(customer.id)}`, {
      body: { type: 'TOTP', secret: enroll.body.secret, code: '123456' },
    });

    const started = await startReset(t, customer.id, 'TOTP');
    expect(started.status, started.text).toBe(201);
    expect(started.body).toEqual({
      resetId: expect.stringMatching(/^TwoFactorReset:/),
      livenessAccessToken: expect.any(String),
      verificationLink: expect.stringContaining('/_railyard/sca-resets/'),
      expiresAt: expect.any(String),
    });
    const { resetId } = started.body;
    expect(tokenOf(started.body.verificationLink)).toBe(started.body.livenessAccessToken);
    expect(await status(t, customer.id, resetId)).toEqual({
      status: 'INITIATED',
      factor: 'TOTP',
      enrollmentStatus: 'PENDING',
      expiresAt: started.body.expiresAt,
      completedAt: null,
    });
    const early = await t.api('POST', `/sca/factors/reset/${resetId}/complete${q(customer.id)}`);
    expect(early.status).toBe(400);

    const page = await t.raw('GET', `/_railyard/sca-resets/${started.body.livenessAccessToken}`, { auth: null });
    expect(page.status).toBe(200);
    expect(page.text).toContain('Pass the check');
    const passed = await t.raw('POST', `/_railyard/sca-resets/${started.body.livenessAccessToken}/pass`, {
      auth: null,
    });
    expect(passed.status, passed.text).toBe(200);
    expect(passed.body.status).toBe('PENDING_REVIEW');
    expect((await t.api('POST', `/sca/factors/reset/${resetId}/complete${q(customer.id)}`)).status).toBe(400);
    const again = await t.raw('POST', `/_railyard/sca-resets/${started.body.livenessAccessToken}/pass`, { auth: null });
    expect(again.status).toBe(409);

    await t.advanceClock(5);
    expect((await status(t, customer.id, resetId)).status).toBe('LIVENESS_PASSED');
    const completed = await t.api('POST', `/sca/factors/reset/${resetId}/complete${q(customer.id)}`);
    expect(completed.status, completed.text).toBe(204);
    const done = await status(t, customer.id, resetId);
    expect(done).toMatchObject({ status: 'COMPLETED', enrollmentStatus: 'PENDING' });
    expect(done.completedAt).not.toBeNull();
    expect((await t.api('GET', `/sca/factors${q(customer.id)}`)).body.factors).toEqual([{ factor: 'SMS_OTP' }]);

    const renew = await t.api('POST', `/sca/factors${q(customer.id)}`, { body: { type: 'TOTP' } });
    await t.api('POST', `/sca/factors/confirm${q(customer.id)}`, {
      body: { type: 'TOTP', secret: renew.body.secret, code: '123456' },
    });
    expect((await status(t, customer.id, resetId)).enrollmentStatus).toBe('COMPLETED');
    expect((await t.api('POST', `/sca/factors/reset/${resetId}/complete${q(customer.id)}`)).status).toBe(400);
  });

  it('makes the new mobile number the customer’s on an SMS_OTP reset', async () => {
    const t = await build();
    const customer = await euCustomer(t);
    const started = await startReset(t, customer.id, 'SMS_OTP');
    await t.raw('POST', `/_railyard/sca-resets/${started.body.livenessAccessToken}/pass`, { auth: null });
    await t.advanceClock(5);
    const path = `/sca/factors/reset/${started.body.resetId}/complete${q(customer.id)}`;
    const missing = await t.api('POST', path);
    expect(missing.status).toBe(400);
    expect(missing.body.details.errors[0].field).toBe('mobile');
    const done = await t.api('POST', path, { body: { mobile: { countryCode: '+49', number: '15199990000' } } });
    expect(done.status, done.text).toBe(204);
    expect((await t.api('GET', `/customers/${customer.id}`)).body.phoneNumber).toBe('+4915199990000');
    expect((await status(t, customer.id, started.body.resetId)).enrollmentStatus).toBeNull();
  });

  it('ends REJECTED when the check fails and EXPIRED when the hour passes; neither completes', async () => {
    const t = await build();
    const customer = await euCustomer(t);
    const failed = await startReset(t, customer.id, 'SMS_OTP');
    const answer = await t.raw('POST', `/_railyard/sca-resets/${failed.body.livenessAccessToken}/fail`, { auth: null });
    expect(answer.body.status).toBe('REJECTED');
    const refused = await t.api('POST', `/sca/factors/reset/${failed.body.resetId}/complete${q(customer.id)}`, {
      body: { mobile: { countryCode: '+49', number: '15199990000' } },
    });
    expect(refused.status).toBe(400);
    expect((await t.api('GET', `/customers/${customer.id}`)).body.phoneNumber).toBe('+4915123456789');

    const slow = await startReset(t, customer.id, 'SMS_OTP');
    await t.advanceClock(60 * 60);
    expect((await status(t, customer.id, slow.body.resetId)).status).toBe('EXPIRED');
    const late = await t.raw('POST', `/_railyard/sca-resets/${slow.body.livenessAccessToken}/pass`, { auth: null });
    expect(late.status).toBe(409);
    expect((await t.raw('GET', '/_railyard/sca-resets/not-a-token', { auth: null })).status).toBe(404);
  });

  it('allows 5 starts per customer in 24 hours of sandbox time, then 429 with Retry-After', async () => {
    const t = await build();
    const customer = await euCustomer(t);
    for (let i = 0; i < 5; i++) {
      expect((await startReset(t, customer.id, 'SMS_OTP')).status).toBe(201);
      await t.advanceClock(60);
    }
    const limited = await startReset(t, customer.id, 'SMS_OTP');
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('RATE_LIMITED');
    // The first start leaves the window 24 hours after it was made: 5 minutes have passed since.
    expect(Number(limited.headers['retry-after'])).toBe(86_400 - 300);
    const other = await euCustomer(t, 'Paul Richter');
    expect((await startReset(t, other.id, 'SMS_OTP')).status).toBe(201);
    await t.advanceClock(86_400 - 300);
    expect((await startReset(t, customer.id, 'SMS_OTP')).status).toBe(201);
  });

  it('is 409 for a customer outside the EU and EEA', async () => {
    const t = await build();
    const us = await createCustomer(t, individualBody('Jordan Rivera'));
    expect((await startReset(t, us.id, 'SMS_OTP')).status).toBe(409);
    expect((await t.api('GET', `/sca/factors/reset/TwoFactorReset:x${q(us.id)}`)).status).toBe(409);
    expect((await t.api('POST', `/sca/factors/reset/TwoFactorReset:x/complete${q(us.id)}`)).status).toBe(409);
  });
});

describe("the server's OpenAPI document", () => {
  it('declares all 16 operations of the Strong Customer Authentication tag', async () => {
    const t = await build();
    const doc = (await t.api('GET', '/openapi.json', { auth: null })).body;
    const ids = Object.values(doc.paths as Record<string, Record<string, any>>)
      .flatMap((item) => Object.values(item))
      .filter((o) => o.tags?.[0] === 'Strong Customer Authentication')
      .map((o) => o.operationId)
      .sort();
    expect(ids).toEqual([
      'authorizeQuote',
      'completeScaLogin',
      'completeTwoFactorReset',
      'confirmBeneficiaryTrust',
      'confirmBeneficiaryUntrust',
      'confirmScaFactorEnrollment',
      'deleteScaFactor',
      'getTwoFactorResetStatus',
      'listScaFactors',
      'recordSecurityEvent',
      'resendQuoteScaCode',
      'startBeneficiaryTrust',
      'startBeneficiaryUntrust',
      'startScaFactorEnrollment',
      'startScaLogin',
      'startTwoFactorReset',
    ]);
  });
});
