// Strong Customer Authentication: enrolling factors, logging in, and the lockout.

import { describe, expect, it } from 'vitest';
import { SoftAuthenticator } from '../fixtures/authenticator.js';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { authenticatorCode, euCustomer, euCustomerBody, verifyPhone } from '../fixtures/sca.js';
import { build, type TestApp } from '../helper.js';

const ORIGIN = 'http://localhost:3000';

const sca = (t: TestApp, method: string, path: string, customerId: string, body?: unknown) =>
  t.api(method, `${path}${path.includes('?') ? '&' : '?'}customerId=${encodeURIComponent(customerId)}`, {
    ...(body === undefined ? {} : { body }),
  });

/** Enrolls TOTP with the authenticator's current code: the secret and that (now spent) code. */
async function enrollTotp(t: TestApp, customerId: string): Promise<{ secret: string; code: string }> {
  const started = await sca(t, 'POST', '/sca/factors', customerId, { type: 'TOTP' });
  expect(started.status, started.text).toBe(200);
  const code = authenticatorCode(started.body.secret);
  const confirmed = await sca(t, 'POST', '/sca/factors/confirm', customerId, {
    type: 'TOTP',
    secret: started.body.secret,
    code,
  });
  expect(confirmed.status, confirmed.text).toBe(200);
  return { secret: started.body.secret, code };
}

async function enrollPasskey(t: TestApp, customerId: string) {
  const authenticator = new SoftAuthenticator({ origin: ORIGIN });
  const started = await sca(t, 'POST', '/sca/factors', customerId, { type: 'PASSKEY' });
  expect(started.status, started.text).toBe(200);
  const confirmed = await sca(t, 'POST', '/sca/factors/confirm', customerId, {
    type: 'PASSKEY',
    origin: ORIGIN,
    credential: authenticator.register(started.body.options.challenge),
  });
  expect(confirmed.status, confirmed.text).toBe(200);
  return { authenticator, factor: confirmed.body.factor };
}

describe('SCA applies to EU and EEA customers only', () => {
  it('answers 409 for a US customer on every operation and 404 for an unknown one', async () => {
    const t = await build();
    const us = await createCustomer(t, individualBody('Jordan Rivera'));
    const calls: [string, string, unknown?][] = [
      ['GET', '/sca/factors'],
      ['POST', '/sca/factors', { type: 'TOTP' }],
      ['POST', '/sca/factors/confirm', { type: 'TOTP', secret: 'ab', code: '123456' }],
      ['DELETE', '/sca/factors/cred-1'],
      ['POST', '/sca/login/start', { factor: 'SMS_OTP' }],
      ['POST', '/sca/login/complete', { factor: 'SMS_OTP', endUserIpAddress: '203.0.113.7', code: '123456' }],
      ['POST', '/sca/record-event', { eventType: 'FAILED_LOGIN_ATTEMPT' }],
    ];
    for (const [method, path, body] of calls) {
      const reply = await sca(t, method, path, us.id, body);
      expect(reply.status, `${method} ${path}`).toBe(409);
      expect(reply.body.code).toBe('CONFLICT');
      const unknown = await sca(t, method, path, 'Customer:00000000-0000-7000-8000-000000000000', body);
      expect(unknown.status, `${method} ${path}`).toBe(404);
    }
    // Nothing was recorded for the US customer.
    const rows = await t.deps.db.k.selectFrom('sca_login_states').selectAll().execute();
    expect(rows).toEqual([]);
  });
});

describe('SCA factors', () => {
  it('lists SMS_OTP from the start and enrolls TOTP with a code any authenticator computes', async () => {
    const t = await build();
    const customer = await euCustomer(t);
    expect((await sca(t, 'GET', '/sca/factors', customer.id)).body).toEqual({ factors: [{ factor: 'SMS_OTP' }] });

    const started = await sca(t, 'POST', '/sca/factors', customer.id, { type: 'TOTP' });
    expect(started.status).toBe(200);
    expect(started.body.type).toBe('TOTP');
    expect(started.body.secret).toMatch(/^[0-9a-f]{40}$/);
    expect(started.body.secretBase32Encoded).toMatch(/^[A-Z2-7]{32}$/);
    const uri = new URL(started.body.totpUri);
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.searchParams.get('secret')).toBe(started.body.secretBase32Encoded);

    const wrong = await sca(t, 'POST', '/sca/factors/confirm', customer.id, {
      type: 'TOTP',
      secret: started.body.secret,
      code: authenticatorCode(started.body.secret, Date.now() - 5 * 60_000),
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.details.errors.map((e: any) => e.field)).toEqual(['code']);
    expect((await sca(t, 'GET', '/sca/factors', customer.id)).body.factors).toHaveLength(1);

    const confirmed = await sca(t, 'POST', '/sca/factors/confirm', customer.id, {
      type: 'TOTP',
      secret: started.body.secret,
      code: authenticatorCode(started.body.secret),
    });
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.body.type).toBe('TOTP');
    expect(confirmed.body.recoveryCodes).toHaveLength(8);
    expect(new Set(confirmed.body.recoveryCodes).size).toBe(8);
    expect((await sca(t, 'GET', '/sca/factors', customer.id)).body.factors).toEqual([
      { factor: 'SMS_OTP' },
      { factor: 'TOTP' },
    ]);
    // The enrollment is spent; a second TOTP is refused.
    const again = await sca(t, 'POST', '/sca/factors/confirm', customer.id, {
      type: 'TOTP',
      secret: started.body.secret,
      code: '123456',
    });
    expect(again.status).toBe(400);
    expect((await sca(t, 'POST', '/sca/factors', customer.id, { type: 'TOTP' })).status).toBe(409);

    // The sandbox code confirms too.
    const other = await euCustomer(t, 'Jonas Weber');
    const second = await sca(t, 'POST', '/sca/factors', other.id, { type: 'TOTP' });
    const sandbox = await sca(t, 'POST', '/sca/factors/confirm', other.id, {
      type: 'TOTP',
      secret: second.body.secret,
      code: '123456',
    });
    expect(sandbox.status).toBe(200);
    // Another customer's secret does not confirm this one's enrollment.
    const foreign = await sca(t, 'POST', '/sca/factors/confirm', customer.id, {
      type: 'TOTP',
      secret: second.body.secret,
      code: '123456',
    });
    expect(foreign.status).toBe(400);
  });

  it('enrolls one passkey from a real WebAuthn registration, refuses a second, and deletes it', async () => {
    const t = await build();
    const customer = await euCustomer(t);
    const started = await sca(t, 'POST', '/sca/factors', customer.id, { type: 'PASSKEY' });
    expect(started.body).toMatchObject({
      type: 'PASSKEY',
      allowedOrigins: ['http://localhost:3000', 'https://localhost:3000'],
      relyingPartyId: 'localhost',
      options: { rp: { id: 'localhost' }, attestation: 'none' },
    });
    const authenticator = new SoftAuthenticator({ origin: ORIGIN });
    // Refusals: another origin, a registration for another challenge.
    const elsewhere = await sca(t, 'POST', '/sca/factors/confirm', customer.id, {
      type: 'PASSKEY',
      origin: 'https://evil.example.com',
      credential: new SoftAuthenticator({ origin: 'https://evil.example.com' }).register(
        started.body.options.challenge,
      ),
    });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.details.errors[0].field).toBe('origin');
    const stale = await sca(t, 'POST', '/sca/factors/confirm', customer.id, {
      type: 'PASSKEY',
      origin: ORIGIN,
      credential: authenticator.register('bm90LXRoZS1jaGFsbGVuZ2U'),
    });
    expect(stale.status).toBe(400);
    expect(stale.body.details.errors[0].field).toBe('credential');
    const absent = await sca(t, 'POST', '/sca/factors/confirm', customer.id, {
      type: 'PASSKEY',
      origin: ORIGIN,
      credential: {},
    });
    expect(absent.status).toBe(400);
    expect(absent.body.details.errors.map((e: any) => e.field)).toEqual([
      'credential.credentialId',
      'credential.clientDataJson',
      'credential.attestationObject',
    ]);

    const confirmed = await sca(t, 'POST', '/sca/factors/confirm', customer.id, {
      type: 'PASSKEY',
      origin: ORIGIN,
      credential: authenticator.register(started.body.options.challenge),
    });
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.body).toEqual({
      type: 'PASSKEY',
      factor: { factor: 'PASSKEY', credentialId: authenticator.credentialId, name: 'Passkey' },
    });
    const second = await sca(t, 'POST', '/sca/factors', customer.id, { type: 'PASSKEY' });
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('PASSKEY_ALREADY_ENROLLED');

    expect((await sca(t, 'DELETE', '/sca/factors/not-a-credential', customer.id)).status).toBe(404);
    const deleted = await sca(t, 'DELETE', `/sca/factors/${authenticator.credentialId}`, customer.id);
    expect(deleted.status).toBe(204);
    expect((await sca(t, 'GET', '/sca/factors', customer.id)).body.factors).toEqual([{ factor: 'SMS_OTP' }]);
    expect((await sca(t, 'POST', '/sca/factors', customer.id, { type: 'PASSKEY' })).status).toBe(200);
  });
});

describe('SCA passkeys on several origins of one relying party (RAILYARD_PASSKEY_ORIGINS)', () => {
  it('enrolls on a subdomain under the relying party the options name, and logs in from another origin', async () => {
    const t = await build({ config: { passkeyOrigins: ['https://example.com', 'https://pay.example.com'] } });
    const customer = await euCustomer(t);
    const started = await sca(t, 'POST', '/sca/factors', customer.id, { type: 'PASSKEY' });
    expect(started.body).toMatchObject({
      allowedOrigins: ['https://example.com', 'https://pay.example.com'],
      relyingPartyId: 'example.com',
      options: { rp: { id: 'example.com' } },
    });
    // A credential bound to the page's own host, not to the relying party the options named.
    const ownHost = new SoftAuthenticator({ origin: 'https://pay.example.com' });
    const refused = await sca(t, 'POST', '/sca/factors/confirm', customer.id, {
      type: 'PASSKEY',
      origin: 'https://pay.example.com',
      credential: ownHost.register(started.body.options.challenge),
    });
    expect(refused.status).toBe(400);
    expect(refused.body.details.errors).toEqual([
      {
        field: 'credential',
        message: 'passkey RP id is not example.com, the relying party of the creation options',
      },
    ]);
    const authenticator = new SoftAuthenticator({ origin: 'https://pay.example.com', rpId: 'example.com' });
    const confirmed = await sca(t, 'POST', '/sca/factors/confirm', customer.id, {
      type: 'PASSKEY',
      origin: 'https://pay.example.com',
      credential: authenticator.register(started.body.options.challenge),
    });
    expect(confirmed.status, confirmed.text).toBe(200);

    const login = await sca(t, 'POST', '/sca/login/start', customer.id, { factor: 'PASSKEY' });
    expect(login.body).toMatchObject({
      allowedOrigins: ['https://example.com', 'https://pay.example.com'],
      relyingPartyId: 'example.com',
      passkeyOptions: { rpId: 'example.com' },
    });
    const challenge = Buffer.from(login.body.passkeyOptions.challenge, 'base64url').toString('utf8');
    const done = await sca(t, 'POST', '/sca/login/complete', customer.id, {
      factor: 'PASSKEY',
      origin: 'https://example.com',
      passkeyAssertion: authenticator.assert(challenge, { origin: 'https://example.com' }),
      endUserIpAddress: '203.0.113.7',
    });
    expect(done.status, done.text).toBe(200);
    expect(done.body.status).toBe('SUCCESS');
  });
});

describe('SCA login', () => {
  it('opens a 180-day session with each factor', async () => {
    const t = await build();
    const customer = await euCustomer(t);
    const ip = { endUserIpAddress: '203.0.113.7' };

    const sms = await sca(t, 'POST', '/sca/login/start', customer.id, { factor: 'SMS_OTP' });
    expect(sms.status).toBe(200);
    expect(sms.body).toEqual({ factor: 'SMS_OTP', challengeId: expect.any(String), expiresAt: expect.any(String) });
    const done = await sca(t, 'POST', '/sca/login/complete', customer.id, {
      factor: 'SMS_OTP',
      challengeId: sms.body.challengeId,
      code: '123456',
      ...ip,
    });
    expect(done.status, done.text).toBe(200);
    expect(done.body.status).toBe('SUCCESS');
    const startedAt = Date.parse(sms.body.expiresAt) - 10 * 60_000;
    const days = (Date.parse(done.body.sessionExpiresAt) - startedAt) / 86_400_000;
    expect(days).toBeGreaterThanOrEqual(180);
    expect(days).toBeLessThan(180.01);
    // A challenge answers once.
    const reused = await sca(t, 'POST', '/sca/login/complete', customer.id, {
      factor: 'SMS_OTP',
      challengeId: sms.body.challengeId,
      code: '123456',
      ...ip,
    });
    expect(reused.status).toBe(400);

    // TOTP and PASSKEY need enrolling first.
    expect((await sca(t, 'POST', '/sca/login/start', customer.id, { factor: 'TOTP' })).status).toBe(400);
    const { secret, code: enrollmentCode } = await enrollTotp(t, customer.id);
    expect((await sca(t, 'POST', '/sca/login/start', customer.id, { factor: 'TOTP' })).body).toEqual({
      factor: 'TOTP',
    });
    // The code that confirmed the enrollment is spent; the authenticator's next one logs in, once.
    const spent = await sca(t, 'POST', '/sca/login/complete', customer.id, {
      factor: 'TOTP',
      code: enrollmentCode,
      ...ip,
    });
    expect(spent.status).toBe(400);
    const next = authenticatorCode(secret, Date.now() + 30_000);
    const totp = await sca(t, 'POST', '/sca/login/complete', customer.id, { factor: 'TOTP', code: next, ...ip });
    expect(totp.status, totp.text).toBe(200);
    expect(totp.body.status).toBe('SUCCESS');
    await sca(t, 'POST', '/sca/login/start', customer.id, { factor: 'TOTP' });
    const replayed = await sca(t, 'POST', '/sca/login/complete', customer.id, { factor: 'TOTP', code: next, ...ip });
    expect(replayed.status).toBe(400);

    const { authenticator } = await enrollPasskey(t, customer.id);
    const passkey = await sca(t, 'POST', '/sca/login/start', customer.id, { factor: 'PASSKEY' });
    expect(passkey.body).toMatchObject({
      factor: 'PASSKEY',
      // The configured origins (the default two) on the passkey's relying party.
      allowedOrigins: [ORIGIN, 'https://localhost:3000'],
      relyingPartyId: 'localhost',
      passkeyOptions: { rpId: 'localhost', allowCredentials: [{ id: authenticator.credentialId }] },
    });
    const challenge = Buffer.from(passkey.body.passkeyOptions.challenge, 'base64url').toString('utf8');
    const forged = await sca(t, 'POST', '/sca/login/complete', customer.id, {
      factor: 'PASSKEY',
      origin: ORIGIN,
      passkeyAssertion: authenticator.assert(challenge, { signWith: 'other' }),
      ...ip,
    });
    expect(forged.status).toBe(400);
    expect(forged.body.details.errors[0].field).toBe('passkeyAssertion');
    // An origin of the relying party that is not configured, and an origin other than the
    // assertion's own: each refused, naming the field.
    const unlisted = await sca(t, 'POST', '/sca/login/complete', customer.id, {
      factor: 'PASSKEY',
      origin: 'http://localhost:3001',
      passkeyAssertion: authenticator.assert(challenge, { origin: 'http://localhost:3001' }),
      ...ip,
    });
    expect(unlisted.status).toBe(400);
    // (The failed attempts so far count: the message says how many.)
    expect(unlisted.body.details.errors).toEqual([
      {
        field: 'origin',
        message:
          'must be http://localhost:3000 or https://localhost:3000, where this passkey is used; 3 failed attempts (the 5th locks the login)',
      },
    ]);
    const mismatched = await sca(t, 'POST', '/sca/login/complete', customer.id, {
      factor: 'PASSKEY',
      origin: 'https://localhost:3000',
      passkeyAssertion: authenticator.assert(challenge),
      ...ip,
    });
    expect(mismatched.status).toBe(400);
    expect(mismatched.body.details.errors).toEqual([
      {
        field: 'passkeyAssertion',
        message:
          'passkey origin http://localhost:3000 is not https://localhost:3000; 4 failed attempts (the 5th locks the login)',
      },
    ]);
    // The other configured origin on the same relying party logs in.
    const signed = await sca(t, 'POST', '/sca/login/complete', customer.id, {
      factor: 'PASSKEY',
      origin: 'https://localhost:3000',
      passkeyAssertion: authenticator.assert(challenge, { origin: 'https://localhost:3000' }),
      ...ip,
    });
    expect(signed.status, signed.text).toBe(200);
    expect(signed.body.status).toBe('SUCCESS');
  });

  it('names every missing proof field at once', async () => {
    const t = await build();
    const customer = await euCustomer(t);
    const reply = await sca(t, 'POST', '/sca/login/complete', customer.id, {
      factor: 'SMS_OTP',
      endUserIpAddress: '203.0.113.7',
    });
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors.map((e: any) => e.field)).toEqual(['code', 'challengeId']);
  });

  it('locks after the fifth wrong code (423 with details) until the lock ends on the sandbox clock', async () => {
    const t = await build();
    const customer = await euCustomer(t);
    const start = async () => (await sca(t, 'POST', '/sca/login/start', customer.id, { factor: 'SMS_OTP' })).body;
    const complete = (challengeId: string, code: string) =>
      sca(t, 'POST', '/sca/login/complete', customer.id, {
        factor: 'SMS_OTP',
        challengeId,
        code,
        endUserIpAddress: '203.0.113.7',
      });
    const login = await start();
    for (let attempt = 1; attempt <= 4; attempt++) {
      const wrong = await complete(login.challengeId, '654321');
      expect(wrong.status).toBe(400);
      expect(wrong.body.details.errors[0].message).toContain(`${attempt} failed attempts`);
    }
    const locking = await complete(login.challengeId, '654321');
    expect(locking.status).toBe(423);
    expect(locking.body.code).toBe('ACCOUNT_LOCKED');
    expect(locking.body.details).toMatchObject({ failedAttempts: 5, suspended: false });
    const lockedFor = Date.parse(locking.body.details.lockedUntil) - (Date.parse(login.expiresAt) - 10 * 60_000);
    expect(lockedFor).toBeGreaterThanOrEqual(15 * 60_000);
    expect(lockedFor).toBeLessThan(16 * 60_000);
    // Even the right code waits for the lock.
    const right = await complete(login.challengeId, '123456');
    expect(right.status).toBe(423);
    expect(right.body.details.failedAttempts).toBe(5);

    await t.advanceClock(15 * 60 + 1);
    const after = await start();
    const done = await complete(after.challengeId, '123456');
    expect(done.status, done.text).toBe(200);
    // A successful login clears the count.
    const event = await sca(t, 'POST', '/sca/record-event', customer.id, { eventType: 'FAILED_LOGIN_ATTEMPT' });
    expect(event.body).toEqual({
      eventType: 'FAILED_LOGIN_ATTEMPT',
      failedAttempts: 1,
      suspended: false,
      lockedUntil: null,
    });
  });
});

describe('security events', () => {
  it('escalates the lock at each milestone to suspension; a password reset clears it and ends the sessions', async () => {
    const t = await build();
    const customer = await euCustomer(t);
    const sms = await sca(t, 'POST', '/sca/login/start', customer.id, { factor: 'SMS_OTP' });
    const login = await sca(t, 'POST', '/sca/login/complete', customer.id, {
      factor: 'SMS_OTP',
      challengeId: sms.body.challengeId,
      code: '123456',
      endUserIpAddress: '203.0.113.7',
    });
    expect(login.body.status).toBe('SUCCESS');

    const record = (eventType: string) => sca(t, 'POST', '/sca/record-event', customer.id, { eventType });
    const locks: (number | null)[] = [];
    for (let i = 1; i <= 9; i++) {
      const reply = await record('FAILED_LOGIN_ATTEMPT');
      expect(reply.status).toBe(200);
      expect(reply.body.failedAttempts).toBe(i);
      locks.push(
        reply.body.lockedUntil === null ? null : Math.round((Date.parse(reply.body.lockedUntil) - Date.now()) / 60_000),
      );
      expect(reply.body.suspended).toBe(i >= 9);
    }
    // Minutes of lock after each attempt (the sandbox clock runs with the wall clock here).
    expect(locks).toEqual([null, null, null, null, 15, 30, 60, 1440, null]);
    const refused = await sca(t, 'POST', '/sca/login/complete', customer.id, {
      factor: 'SMS_OTP',
      challengeId: sms.body.challengeId,
      code: '123456',
      endUserIpAddress: '203.0.113.7',
    });
    expect(refused.status).toBe(423);
    expect(refused.body.details).toEqual({ suspended: true, lockedUntil: null, failedAttempts: 9 });
    // Suspension does not end with time.
    await t.advanceClock(2 * 86_400);
    const still = await sca(t, 'POST', '/sca/login/complete', customer.id, {
      factor: 'SMS_OTP',
      challengeId: sms.body.challengeId,
      code: '123456',
      endUserIpAddress: '203.0.113.7',
    });
    expect(still.status).toBe(423);

    const reset = await record('RESET_PASSWORD_COMPLETED');
    expect(reset.body).toEqual({
      eventType: 'RESET_PASSWORD_COMPLETED',
      failedAttempts: 0,
      suspended: false,
      lockedUntil: null,
    });
    const sessions = await t.deps.db.k
      .selectFrom('sca_sessions')
      .select('revoked_at')
      .where('customer_id', '=', customer.id)
      .execute();
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.revoked_at).not.toBeNull();
    expect((await record('SOMETHING_ELSE')).status).toBe(400);
  });
});

describe('SCA proofs, from the review', () => {
  it('answers a passkey login with the challenge the assertion signed, and refuses one without user verification', async () => {
    const t = await build();
    const customer = await euCustomer(t);
    const { authenticator } = await enrollPasskey(t, customer.id);
    const first = await sca(t, 'POST', '/sca/login/start', customer.id, { factor: 'PASSKEY' });
    await sca(t, 'POST', '/sca/login/start', customer.id, { factor: 'PASSKEY' });
    const challenge = Buffer.from(first.body.passkeyOptions.challenge, 'base64url').toString('utf8');
    expect(first.body.passkeyOptions.userVerification).toBe('required');
    const unverified = await sca(t, 'POST', '/sca/login/complete', customer.id, {
      factor: 'PASSKEY',
      origin: ORIGIN,
      passkeyAssertion: authenticator.assert(challenge, { userVerified: false }),
      endUserIpAddress: '203.0.113.7',
    });
    expect(unverified.status).toBe(400);
    expect(unverified.body.details.errors[0].message).toContain('user verification');
    const answered = await sca(t, 'POST', '/sca/login/complete', customer.id, {
      factor: 'PASSKEY',
      origin: ORIGIN,
      passkeyAssertion: authenticator.assert(challenge),
      endUserIpAddress: '203.0.113.7',
    });
    expect(answered.status, answered.text).toBe(200);
    // A malformed assertion is refused as such and does not count.
    await sca(t, 'POST', '/sca/login/start', customer.id, { factor: 'PASSKEY' });
    const malformed = await sca(t, 'POST', '/sca/login/complete', customer.id, {
      factor: 'PASSKEY',
      origin: ORIGIN,
      passkeyAssertion: { id: 'x' },
      endUserIpAddress: '203.0.113.7',
    });
    expect(malformed.status).toBe(400);
    // (The successful login cleared the count; the malformed assertion added nothing.)
    const event = await sca(t, 'POST', '/sca/record-event', customer.id, { eventType: 'FAILED_LOGIN_ATTEMPT' });
    expect(event.body.failedAttempts).toBe(1);
  });

  it('offers SMS_OTP only once the phone is verified', async () => {
    const t = await build();
    const customer = await createCustomer(t, euCustomerBody('Greta Lang'));
    expect((await sca(t, 'GET', '/sca/factors', customer.id)).body).toEqual({ factors: [] });
    const refused = await sca(t, 'POST', '/sca/login/start', customer.id, { factor: 'SMS_OTP' });
    expect(refused.status).toBe(400);
    expect(refused.body.details.errors[0].field).toBe('factor');
    await verifyPhone(t, customer.id);
    expect((await sca(t, 'GET', '/sca/factors', customer.id)).body).toEqual({ factors: [{ factor: 'SMS_OTP' }] });
    expect((await sca(t, 'POST', '/sca/login/start', customer.id, { factor: 'SMS_OTP' })).status).toBe(200);
  });
});
