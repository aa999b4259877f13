import { Buffer } from 'node:buffer';
import { beforeAll, describe, expect, it } from 'vitest';
import { build, type TestApp } from '../helper.js';
import {
  type ClientKey,
  clientKey,
  customerWallet,
  otpLogin,
  sealOtp,
  signed,
  signsFor,
  walletState,
} from '../fixtures/wallet.js';

const UNKNOWN_CREDENTIAL = 'AuthMethod:01950000-0000-7000-8000-000000000000';

/** Challenge and first leg of an OTP login: answers the 202, the body to retry and the TEK. */
async function firstLeg(t: TestApp, credentialId: string, type = 'EMAIL_OTP', key = clientKey()) {
  const challenge = await t.api('POST', `/auth/credentials/${credentialId}/challenge`, { body: {} });
  expect(challenge.status, challenge.text).toBe(200);
  const body = { type, encryptedOtpBundle: await sealOtp(challenge.body.otpEncryptionTargetBundle, '000000', key) };
  const first = await t.api('POST', `/auth/credentials/${credentialId}/verify`, { body });
  expect(first.status, first.text).toBe(202);
  return { first, body, key };
}

function verify(t: TestApp, credentialId: string, body: unknown, headers: Record<string, string> = {}) {
  return t.api('POST', `/auth/credentials/${credentialId}/verify`, { body, headers });
}

function expect401(reply: { status: number; body: any; text: string }, code: string, reason?: string | RegExp) {
  expect(reply.status, reply.text).toBe(401);
  expect(reply.body.code).toBe(code);
  expect(typeof reply.body.details.reason).toBe('string');
  if (typeof reason === 'string') expect(reply.body.details.reason).toBe(reason);
  else if (reason !== undefined) expect(reply.body.details.reason).toMatch(reason);
}

/** Adds SMS_OTP to a wallet, signed by a live session's key; answers the 201. */
async function addSms(t: TestApp, accountId: string, key: ClientKey) {
  const { challenge, reply } = await signed(t, 'POST', '/auth/credentials', key, { type: 'SMS_OTP', accountId });
  expect(challenge.body.type).toBe('SMS_OTP');
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

describe('verifyAuthCredential (OTP)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await build();
  });

  it('logs in with the code sealed by @turnkey/crypto and the retry stamped by the TEK', async () => {
    const wallet = await customerWallet(t);
    expect(wallet.credentials).toHaveLength(1);
    expect(wallet.credentials[0]).toMatchObject({
      type: 'EMAIL_OTP',
      nickname: 'avery.quinn@example.com',
      accountId: wallet.accountId,
    });
    const { session, key } = await otpLogin(t, wallet.credentials[0].id);
    expect(Object.keys(session).sort()).toEqual(
      ['accountId', 'createdAt', 'expiresAt', 'id', 'nickname', 'type', 'updatedAt'].sort(),
    );
    expect(session).toMatchObject({
      accountId: wallet.accountId,
      type: 'EMAIL_OTP',
      nickname: 'avery.quinn@example.com',
    });
    expect(session.id).toMatch(/^Session:[0-9a-f-]{36}$/);
    expect(Date.parse(session.expiresAt) - Date.parse(session.createdAt)).toBe(15 * 60_000);
    const sessions = await t.api('GET', `/auth/sessions?accountId=${wallet.accountId}`);
    expect(sessions.body.data).toEqual([session]);
    expect(key.publicKey).toMatch(/^0[23]/);
    // The TEK is the session key: its stamp passes a later signed request.
    const later = await signsFor(t, wallet.accountId, key);
    expect(later.status, later.text).toBe(200);
    expect(later.body.privateEnabled).toBe(true);
    // A key that is no session's does not.
    expect401(await signsFor(t, wallet.accountId, clientKey()), 'WALLET_SIGNATURE_INVALID');
  });

  it('the 202 names the type and a payload bound to the TEK', async () => {
    const wallet = await customerWallet(t);
    const { first, key } = await firstLeg(t, wallet.credentials[0].id);
    expect(Object.keys(first.body).sort()).toEqual(['expiresAt', 'payloadToSign', 'requestId', 'type']);
    expect(first.body.type).toBe('EMAIL_OTP');
    expect(first.body.requestId).toMatch(/^Request:/);
    const [, claims] = (first.body.payloadToSign as string).split('.');
    const token = JSON.parse(Buffer.from(claims!, 'base64url').toString('utf8'));
    expect(token).toMatchObject({
      id: first.body.requestId,
      public_key: key.publicKey,
      verification_type: 'OTP_TYPE_EMAIL',
      contact: 'avery.quinn@example.com',
    });
  });

  it('a wrong code is 401 Invalid OTP code and opens no session', async () => {
    const wallet = await customerWallet(t);
    const id = wallet.credentials[0].id;
    const challenge = await t.api('POST', `/auth/credentials/${id}/challenge`, { body: {} });
    const before = await walletState(t, wallet.accountId);
    const wrong = await verify(t, id, {
      type: 'EMAIL_OTP',
      encryptedOtpBundle: await sealOtp(challenge.body.otpEncryptionTargetBundle, '123456', clientKey()),
    });
    expect401(wrong, 'UNAUTHORIZED', 'Invalid OTP code');
    expect(await walletState(t, wallet.accountId)).toEqual(before);
    expect(before.sessions).toEqual([]);
    // The open code still takes the right one.
    const key = clientKey();
    const body = {
      type: 'EMAIL_OTP',
      encryptedOtpBundle: await sealOtp(challenge.body.otpEncryptionTargetBundle, '000000', key),
    };
    const first = await verify(t, id, body);
    expect(first.status, first.text).toBe(202);
  });

  it('five wrong codes spend the code: then 429 with Retry-After, until a new challenge', async () => {
    const wallet = await customerWallet(t);
    const id = wallet.credentials[0].id;
    const challenge = await t.api('POST', `/auth/credentials/${id}/challenge`, { body: {} });
    const bundle = challenge.body.otpEncryptionTargetBundle;
    for (let i = 0; i < 5; i++) {
      const wrong = await verify(t, id, {
        type: 'EMAIL_OTP',
        encryptedOtpBundle: await sealOtp(bundle, '999999', clientKey()),
      });
      expect401(wrong, 'UNAUTHORIZED', 'Invalid OTP code');
    }
    const right = { type: 'EMAIL_OTP', encryptedOtpBundle: await sealOtp(bundle, '000000', clientKey()) };
    const spent = await verify(t, id, right);
    expect(spent.status, spent.text).toBe(429);
    expect(spent.body.code).toBe('RATE_LIMITED');
    expect(spent.headers['retry-after']).toBe('1');
    expect((await walletState(t, wallet.accountId)).sessions).toEqual([]);
    // A new challenge starts over.
    const { session } = await otpLogin(t, id);
    expect(session.accountId).toBe(wallet.accountId);
  });

  it('the legacy sandbox-valid-signature still needs a live session of the wallet', async () => {
    const wallet = await customerWallet(t);
    const first = await t.api('PATCH', `/internal-accounts/${wallet.accountId}`, { body: { privateEnabled: true } });
    expect(first.status).toBe(202);
    const legacy = { 'Grid-Wallet-Signature': 'sandbox-valid-signature', 'Request-Id': first.body.requestId };
    const refused = await t.api('PATCH', `/internal-accounts/${wallet.accountId}`, {
      body: { privateEnabled: true },
      headers: legacy,
    });
    expect401(refused, 'WALLET_SIGNATURE_INVALID');
    await otpLogin(t, wallet.credentials[0].id);
    const accepted = await t.api('PATCH', `/internal-accounts/${wallet.accountId}`, {
      body: { privateEnabled: true },
      headers: legacy,
    });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body.privateEnabled).toBe(true);
  });

  it('a code past its 300 s is refused, and nothing changes', async () => {
    const wallet = await customerWallet(t);
    const id = wallet.credentials[0].id;
    const challenge = await t.api('POST', `/auth/credentials/${id}/challenge`, { body: {} });
    await t.advanceClock(301);
    const before = await walletState(t, wallet.accountId);
    const late = await verify(t, id, {
      type: 'EMAIL_OTP',
      encryptedOtpBundle: await sealOtp(challenge.body.otpEncryptionTargetBundle, '000000', clientKey()),
    });
    expect401(late, 'UNAUTHORIZED', /expired/);
    expect(await walletState(t, wallet.accountId)).toEqual(before);
    expect(before.sessions).toEqual([]);
  });

  it('a code that expires between the legs is refused on the retry', async () => {
    const wallet = await customerWallet(t);
    const id = wallet.credentials[0].id;
    const challenge = await t.api('POST', `/auth/credentials/${id}/challenge`, { body: {} });
    const challengedAt = Date.parse(challenge.body.updatedAt);
    await t.advanceClock(200);
    const key = clientKey();
    const body = {
      type: 'EMAIL_OTP',
      encryptedOtpBundle: await sealOtp(challenge.body.otpEncryptionTargetBundle, '000000', key),
    };
    const first = await verify(t, id, body);
    expect(first.status, first.text).toBe(202);
    // The challenge lasts no longer than the code it carries.
    expect(Date.parse(first.body.expiresAt)).toBeLessThanOrEqual(challengedAt + 300_000 + 1_000);
    await t.advanceClock(150);
    const before = await walletState(t, wallet.accountId);
    const retry = await verify(t, id, body, {
      'Grid-Wallet-Signature': await key.stamp(first.body.payloadToSign),
      'Request-Id': first.body.requestId,
    });
    expect401(retry, 'UNAUTHORIZED', /expired/);
    expect(await walletState(t, wallet.accountId)).toEqual(before);
    expect(before.sessions).toEqual([]);
  });

  it('a bundle sealed to the target a re-challenge replaced is refused', async () => {
    const wallet = await customerWallet(t);
    const id = wallet.credentials[0].id;
    const old = await t.api('POST', `/auth/credentials/${id}/challenge`, { body: {} });
    const fresh = await t.api('POST', `/auth/credentials/${id}/challenge`, { body: {} });
    expect(fresh.body.otpEncryptionTargetBundle).not.toBe(old.body.otpEncryptionTargetBundle);
    const before = await walletState(t, wallet.accountId);
    const stale = await verify(t, id, {
      type: 'EMAIL_OTP',
      encryptedOtpBundle: await sealOtp(old.body.otpEncryptionTargetBundle, '000000', clientKey()),
    });
    expect401(stale, 'UNAUTHORIZED', /not sealed to the current/);
    expect(await walletState(t, wallet.accountId)).toEqual(before);
  });

  it('a first leg whose code a re-challenge replaced cannot be completed', async () => {
    const wallet = await customerWallet(t);
    const id = wallet.credentials[0].id;
    const { first, body, key } = await firstLeg(t, id);
    await t.api('POST', `/auth/credentials/${id}/challenge`, { body: {} });
    const before = await walletState(t, wallet.accountId);
    const retry = await verify(t, id, body, {
      'Grid-Wallet-Signature': await key.stamp(first.body.payloadToSign),
      'Request-Id': first.body.requestId,
    });
    expect401(retry, 'UNAUTHORIZED', /replaced/);
    expect(await walletState(t, wallet.accountId)).toEqual(before);
    expect(before.sessions).toEqual([]);
  });

  it('a retry stamped by another key is WALLET_SIGNATURE_INVALID and opens no session', async () => {
    const wallet = await customerWallet(t);
    const id = wallet.credentials[0].id;
    const { first, body, key } = await firstLeg(t, id);
    const before = await walletState(t, wallet.accountId);
    const retry = await verify(t, id, body, {
      'Grid-Wallet-Signature': await clientKey().stamp(first.body.payloadToSign),
      'Request-Id': first.body.requestId,
    });
    expect401(retry, 'WALLET_SIGNATURE_INVALID');
    expect(await walletState(t, wallet.accountId)).toEqual(before);
    // The challenge was not used up: the TEK still completes it.
    const good = await verify(t, id, body, {
      'Grid-Wallet-Signature': await key.stamp(first.body.payloadToSign),
      'Request-Id': first.body.requestId,
    });
    expect(good.status, good.text).toBe(200);
  });

  it('a retry stamped by the TEK over another payload is WALLET_SIGNATURE_INVALID', async () => {
    const wallet = await customerWallet(t);
    const id = wallet.credentials[0].id;
    const { first, body, key } = await firstLeg(t, id);
    const before = await walletState(t, wallet.accountId);
    const retry = await verify(t, id, body, {
      'Grid-Wallet-Signature': await key.stamp(`${first.body.payloadToSign}x`),
      'Request-Id': first.body.requestId,
    });
    expect401(retry, 'WALLET_SIGNATURE_INVALID');
    expect(await walletState(t, wallet.accountId)).toEqual(before);
  });

  it('a retry with Request-Id and no signature is WALLET_SIGNATURE_MISSING', async () => {
    const wallet = await customerWallet(t);
    const id = wallet.credentials[0].id;
    const { first, body } = await firstLeg(t, id);
    const before = await walletState(t, wallet.accountId);
    expect401(await verify(t, id, body, { 'Request-Id': first.body.requestId }), 'WALLET_SIGNATURE_MISSING');
    expect(await walletState(t, wallet.accountId)).toEqual(before);
  });

  it('a signature without Request-Id is REQUEST_ID_MISSING', async () => {
    const wallet = await customerWallet(t);
    const id = wallet.credentials[0].id;
    const { first, body, key } = await firstLeg(t, id);
    const before = await walletState(t, wallet.accountId);
    const retry = await verify(t, id, body, { 'Grid-Wallet-Signature': await key.stamp(first.body.payloadToSign) });
    expect401(retry, 'REQUEST_ID_MISSING');
    expect(await walletState(t, wallet.accountId)).toEqual(before);
  });

  it('a malformed stamp is WALLET_SIGNATURE_MALFORMED', async () => {
    const wallet = await customerWallet(t);
    const id = wallet.credentials[0].id;
    const { first, body, key } = await firstLeg(t, id);
    const before = await walletState(t, wallet.accountId);
    const stamp = JSON.parse(Buffer.from(await key.stamp(first.body.payloadToSign), 'base64url').toString('utf8'));
    const malformed = [
      'not base64url!',
      Buffer.from('{"publicKey":').toString('base64url'),
      Buffer.from(JSON.stringify({ ...stamp, scheme: 'SIGNATURE_SCHEME_TK_API_SECP256K1' })).toString('base64url'),
      Buffer.from(JSON.stringify({ ...stamp, publicKey: 'zz' })).toString('base64url'),
      Buffer.from(JSON.stringify({ ...stamp, signature: 'not hex' })).toString('base64url'),
    ];
    for (const header of malformed) {
      const retry = await verify(t, id, body, { 'Grid-Wallet-Signature': header, 'Request-Id': first.body.requestId });
      expect401(retry, 'WALLET_SIGNATURE_MALFORMED');
    }
    expect(await walletState(t, wallet.accountId)).toEqual(before);
  });

  it('a retry body other than the first leg is WALLET_SIGNATURE_BODY_MISMATCH', async () => {
    const wallet = await customerWallet(t);
    const id = wallet.credentials[0].id;
    const challenge = await t.api('POST', `/auth/credentials/${id}/challenge`, { body: {} });
    const key = clientKey();
    const body = {
      type: 'EMAIL_OTP',
      encryptedOtpBundle: await sealOtp(challenge.body.otpEncryptionTargetBundle, '000000', key),
    };
    const first = await verify(t, id, body);
    expect(first.status, first.text).toBe(202);
    const before = await walletState(t, wallet.accountId);
    const other = {
      type: 'EMAIL_OTP',
      encryptedOtpBundle: await sealOtp(challenge.body.otpEncryptionTargetBundle, '000000', key),
    };
    expect(other.encryptedOtpBundle).not.toBe(body.encryptedOtpBundle);
    const retry = await verify(t, id, other, {
      'Grid-Wallet-Signature': await key.stamp(first.body.payloadToSign),
      'Request-Id': first.body.requestId,
    });
    expect401(retry, 'WALLET_SIGNATURE_BODY_MISMATCH');
    expect(await walletState(t, wallet.accountId)).toEqual(before);
  });

  it('a Request-Id of another credential is refused', async () => {
    const a = await customerWallet(t);
    const b = await customerWallet(t);
    const { first, body, key } = await firstLeg(t, a.credentials[0].id);
    await t.api('POST', `/auth/credentials/${b.credentials[0].id}/challenge`, { body: {} });
    const before = await walletState(t, b.accountId);
    const retry = await verify(t, b.credentials[0].id, body, {
      'Grid-Wallet-Signature': await key.stamp(first.body.payloadToSign),
      'Request-Id': first.body.requestId,
    });
    expect401(retry, 'UNAUTHORIZED', /Request-Id/);
    expect(await walletState(t, b.accountId)).toEqual(before);
  });

  it('a replayed signed retry is refused and opens one session', async () => {
    const wallet = await customerWallet(t);
    const id = wallet.credentials[0].id;
    const { first, body, key } = await firstLeg(t, id);
    const headers = {
      'Grid-Wallet-Signature': await key.stamp(first.body.payloadToSign),
      'Request-Id': first.body.requestId,
    };
    const once = await verify(t, id, body, headers);
    expect(once.status, once.text).toBe(200);
    const before = await walletState(t, wallet.accountId);
    expect(before.sessions.map((s) => s.id)).toEqual([once.body.id]);
    expect401(await verify(t, id, body, headers), 'UNAUTHORIZED', 'this Request-Id was already used');
    expect(await walletState(t, wallet.accountId)).toEqual(before);
  });

  it('two identical signed retries at once: exactly one opens a session', async () => {
    const wallet = await customerWallet(t);
    const id = wallet.credentials[0].id;
    const { first, body, key } = await firstLeg(t, id);
    const headers = {
      'Grid-Wallet-Signature': await key.stamp(first.body.payloadToSign),
      'Request-Id': first.body.requestId,
    };
    const replies = await Promise.all([verify(t, id, body, headers), verify(t, id, body, headers)]);
    expect(replies.map((r) => r.status).sort()).toEqual([200, 401]);
    const won = replies.find((r) => r.status === 200)!;
    const lost = replies.find((r) => r.status === 401)!;
    expect(lost.body.code).toBe('UNAUTHORIZED');
    const after = await walletState(t, wallet.accountId);
    expect(after.sessions.map((s) => s.id)).toEqual([won.body.id]);
  });

  it('accepts the legacy signature value sandbox-valid-signature', async () => {
    const wallet = await customerWallet(t);
    const id = wallet.credentials[0].id;
    const { first, body, key } = await firstLeg(t, id);
    const retry = await verify(t, id, body, {
      'Grid-Wallet-Signature': 'sandbox-valid-signature',
      'Request-Id': first.body.requestId,
    });
    expect(retry.status, retry.text).toBe(200);
    expect(retry.body.type).toBe('EMAIL_OTP');
    // The session key is still the TEK sealed with the code.
    expect((await signsFor(t, wallet.accountId, key)).status).toBe(200);
  });

  it('Service-Wallet-Signature works like Grid-Wallet-Signature', async () => {
    const wallet = await customerWallet(t);
    const id = wallet.credentials[0].id;
    const { first, body, key } = await firstLeg(t, id);
    const retry = await verify(t, id, body, {
      'Service-Wallet-Signature': await key.stamp(first.body.payloadToSign),
      'Request-Id': first.body.requestId,
    });
    expect(retry.status, retry.text).toBe(200);
    const sessions = await walletState(t, wallet.accountId);
    expect(sessions.sessions.map((s) => s.id)).toEqual([retry.body.id]);
    // …and is checked the same way.
    const second = await firstLeg(t, id);
    expect401(
      await verify(t, id, second.body, {
        'Service-Wallet-Signature': await clientKey().stamp(second.first.body.payloadToSign),
        'Request-Id': second.first.body.requestId,
      }),
      'WALLET_SIGNATURE_INVALID',
    );
  });

  it('a type other than the credential’s is 400 naming type', async () => {
    const wallet = await customerWallet(t);
    const id = wallet.credentials[0].id;
    const challenge = await t.api('POST', `/auth/credentials/${id}/challenge`, { body: {} });
    const reply = await verify(t, id, {
      type: 'SMS_OTP',
      encryptedOtpBundle: await sealOtp(challenge.body.otpEncryptionTargetBundle, '000000', clientKey()),
    });
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.code).toBe('INVALID_INPUT');
    expect(reply.body.details.errors.map((e: any) => e.field)).toEqual(['type']);
  });

  it('logs in with SMS_OTP', async () => {
    const wallet = await customerWallet(t);
    const email = await otpLogin(t, wallet.credentials[0].id);
    const sms = await addSms(t, wallet.accountId, email.key);
    // The code of the 201 can be used straight away.
    const key = clientKey();
    const body = { type: 'SMS_OTP', encryptedOtpBundle: await sealOtp(sms.otpEncryptionTargetBundle, '000000', key) };
    const first = await verify(t, sms.id, body);
    expect(first.status, first.text).toBe(202);
    expect(first.body.type).toBe('SMS_OTP');
    const [, claims] = (first.body.payloadToSign as string).split('.');
    expect(JSON.parse(Buffer.from(claims!, 'base64url').toString('utf8'))).toMatchObject({
      verification_type: 'OTP_TYPE_SMS',
      contact: '+14155550123',
      public_key: key.publicKey,
    });
    const retry = await verify(t, sms.id, body, {
      'Grid-Wallet-Signature': await key.stamp(first.body.payloadToSign),
      'Request-Id': first.body.requestId,
    });
    expect(retry.status, retry.text).toBe(200);
    expect(retry.body).toMatchObject({ accountId: wallet.accountId, type: 'SMS_OTP', nickname: '+14155550123' });
    expect(retry.body.encryptedSessionSigningKey).toBeUndefined();
    expect((await signsFor(t, wallet.accountId, key)).status).toBe(200);
    // And through the challenge endpoint, the way a later login goes.
    const again = await otpLogin(t, sms.id, 'SMS_OTP');
    expect(again.session.type).toBe('SMS_OTP');
    const sessions = await walletState(t, wallet.accountId);
    expect(sessions.sessions.map((s) => s.id).sort()).toEqual(
      [email.session.id, retry.body.id, again.session.id].sort(),
    );
  });

  it('a wrong SMS code is 401 Invalid OTP code', async () => {
    const wallet = await customerWallet(t);
    const email = await otpLogin(t, wallet.credentials[0].id);
    const sms = await addSms(t, wallet.accountId, email.key);
    const before = await walletState(t, wallet.accountId);
    const wrong = await verify(t, sms.id, {
      type: 'SMS_OTP',
      encryptedOtpBundle: await sealOtp(sms.otpEncryptionTargetBundle, '999999', clientKey()),
    });
    expect401(wrong, 'UNAUTHORIZED', 'Invalid OTP code');
    expect(await walletState(t, wallet.accountId)).toEqual(before);
  });

  it('verify and challenge of an unknown credential are 404', async () => {
    const challenge = await t.api('POST', `/auth/credentials/${UNKNOWN_CREDENTIAL}/challenge`, { body: {} });
    expect(challenge.status, challenge.text).toBe(404);
    const wallet = await customerWallet(t);
    const real = await t.api('POST', `/auth/credentials/${wallet.credentials[0].id}/challenge`, { body: {} });
    const reply = await verify(t, UNKNOWN_CREDENTIAL, {
      type: 'EMAIL_OTP',
      encryptedOtpBundle: await sealOtp(real.body.otpEncryptionTargetBundle, '000000', clientKey()),
    });
    expect(reply.status, reply.text).toBe(404);
  });
});

describe('createAuthCredential, listAuthCredentials, revokeAuthCredential', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await build();
  });

  it('a customer without email gets no credential; the first one needs no signature', async () => {
    const wallet = await customerWallet(t, { email: undefined });
    expect(wallet.credentials).toEqual([]);
    const email = await t.api('POST', '/auth/credentials', {
      body: { type: 'EMAIL_OTP', accountId: wallet.accountId },
    });
    expect(email.status, email.text).toBe(400);
    expect(email.body.code).toBe('INVALID_INPUT');
    expect(email.body.details.errors.map((e: any) => e.field)).toEqual(['type']);
    expect((await walletState(t, wallet.accountId)).credentials).toEqual([]);
    const sms = await t.api('POST', '/auth/credentials', { body: { type: 'SMS_OTP', accountId: wallet.accountId } });
    expect(sms.status, sms.text).toBe(201);
    expect(sms.body).toMatchObject({ accountId: wallet.accountId, type: 'SMS_OTP', nickname: '+14155550123' });
    expect((await walletState(t, wallet.accountId)).credentials).toEqual([
      {
        id: sms.body.id,
        accountId: wallet.accountId,
        type: 'SMS_OTP',
        nickname: '+14155550123',
        createdAt: sms.body.createdAt,
        updatedAt: sms.body.updatedAt,
      },
    ]);
    const { session } = await otpLogin(t, sms.body.id, 'SMS_OTP');
    expect(session.type).toBe('SMS_OTP');
  });

  it('adds SMS_OTP with a request signed by a live session, then logs in with it', async () => {
    const wallet = await customerWallet(t);
    const { key } = await otpLogin(t, wallet.credentials[0].id);
    const body = { type: 'SMS_OTP', accountId: wallet.accountId };
    const first = await t.api('POST', '/auth/credentials', { body });
    expect(first.status, first.text).toBe(202);
    expect(Object.keys(first.body).sort()).toEqual(['expiresAt', 'payloadToSign', 'requestId', 'type']);
    expect(first.body.type).toBe('SMS_OTP');
    expect(first.body.requestId).toMatch(/^Request:/);
    expect(JSON.parse(first.body.payloadToSign)).toMatchObject({
      type: 'ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER',
      parameters: { userPhoneNumber: '+14155550123' },
    });
    // The first leg adds nothing.
    expect((await walletState(t, wallet.accountId)).credentials).toHaveLength(1);
    const retry = await t.api('POST', '/auth/credentials', {
      body,
      headers: {
        'Grid-Wallet-Signature': await key.stamp(first.body.payloadToSign),
        'Request-Id': first.body.requestId,
      },
    });
    expect(retry.status, retry.text).toBe(201);
    expect(retry.body).toMatchObject({ accountId: wallet.accountId, type: 'SMS_OTP', nickname: '+14155550123' });
    expect(typeof retry.body.otpEncryptionTargetBundle).toBe('string');
    const { credentials } = await walletState(t, wallet.accountId);
    expect(credentials.map((c) => c.type)).toEqual(['EMAIL_OTP', 'SMS_OTP']);
    expect(credentials[1].id).toBe(retry.body.id);
    const { session } = await otpLogin(t, retry.body.id, 'SMS_OTP');
    expect(session).toMatchObject({ type: 'SMS_OTP', nickname: '+14155550123' });
  });

  it('without a live session the retry is 401 and nothing is added', async () => {
    const wallet = await customerWallet(t);
    const body = { type: 'SMS_OTP', accountId: wallet.accountId };
    const first = await t.api('POST', '/auth/credentials', { body });
    expect(first.status, first.text).toBe(202);
    const before = await walletState(t, wallet.accountId);
    const retry = await t.api('POST', '/auth/credentials', {
      body,
      headers: {
        'Grid-Wallet-Signature': await clientKey().stamp(first.body.payloadToSign),
        'Request-Id': first.body.requestId,
      },
    });
    expect401(retry, 'WALLET_SIGNATURE_INVALID');
    expect(await walletState(t, wallet.accountId)).toEqual(before);
    expect(before.credentials).toHaveLength(1);
  });

  it('a session of another wallet cannot sign', async () => {
    const wallet = await customerWallet(t);
    const other = await customerWallet(t);
    const { key } = await otpLogin(t, other.credentials[0].id);
    const before = await walletState(t, wallet.accountId);
    const { reply } = await signed(t, 'POST', '/auth/credentials', key, {
      type: 'SMS_OTP',
      accountId: wallet.accountId,
    });
    expect401(reply, 'WALLET_SIGNATURE_INVALID');
    expect(await walletState(t, wallet.accountId)).toEqual(before);
  });

  it('a second EMAIL_OTP is 400 naming type', async () => {
    const wallet = await customerWallet(t);
    const before = await walletState(t, wallet.accountId);
    const reply = await t.api('POST', '/auth/credentials', {
      body: { type: 'EMAIL_OTP', accountId: wallet.accountId },
    });
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.code).toBe('EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS');
    expect(reply.body.details.errors.map((e: any) => e.field)).toEqual(['type']);
    expect(await walletState(t, wallet.accountId)).toEqual(before);
  });

  it('a second SMS_OTP is 400 naming type', async () => {
    const wallet = await customerWallet(t);
    const { key } = await otpLogin(t, wallet.credentials[0].id);
    await addSms(t, wallet.accountId, key);
    const before = await walletState(t, wallet.accountId);
    const reply = await t.api('POST', '/auth/credentials', { body: { type: 'SMS_OTP', accountId: wallet.accountId } });
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.code).toBe('SMS_OTP_CREDENTIAL_ALREADY_EXISTS');
    expect(reply.body.details.errors.map((e: any) => e.field)).toEqual(['type']);
    expect(await walletState(t, wallet.accountId)).toEqual(before);
  });

  it('the last credential cannot be revoked', async () => {
    const wallet = await customerWallet(t);
    await otpLogin(t, wallet.credentials[0].id);
    const before = await walletState(t, wallet.accountId);
    const reply = await t.api('DELETE', `/auth/credentials/${wallet.credentials[0].id}`);
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.code).toBe('INVALID_INPUT');
    expect(reply.body.details.errors.map((e: any) => e.field)).toEqual(['id']);
    expect(await walletState(t, wallet.accountId)).toEqual(before);
  });

  it('revoking a credential is signed by a session of another credential and ends its sessions', async () => {
    const wallet = await customerWallet(t);
    const email = await otpLogin(t, wallet.credentials[0].id);
    const smsCredential = await addSms(t, wallet.accountId, email.key);
    const sms = await otpLogin(t, smsCredential.id, 'SMS_OTP');
    const path = `/auth/credentials/${smsCredential.id}`;

    const first = await t.api('DELETE', path);
    expect(first.status, first.text).toBe(202);
    expect(first.body.type).toBe('SMS_OTP');
    const before = await walletState(t, wallet.accountId);
    expect(before.credentials).toHaveLength(2);
    expect(before.sessions).toHaveLength(2);
    // A session of the credential being revoked cannot sign its revocation.
    const own = await t.api('DELETE', path, {
      headers: {
        'Grid-Wallet-Signature': await sms.key.stamp(first.body.payloadToSign),
        'Request-Id': first.body.requestId,
      },
    });
    expect401(own, 'WALLET_SIGNATURE_INVALID');
    expect(await walletState(t, wallet.accountId)).toEqual(before);

    const done = await t.api('DELETE', path, {
      headers: {
        'Grid-Wallet-Signature': await email.key.stamp(first.body.payloadToSign),
        'Request-Id': first.body.requestId,
      },
    });
    expect(done.status, done.text).toBe(204);
    expect(done.text).toBe('');
    const after = await walletState(t, wallet.accountId);
    expect(after.credentials.map((c) => c.id)).toEqual([wallet.credentials[0].id]);
    expect(after.sessions.map((s) => s.id)).toEqual([email.session.id]);
    expect401(await signsFor(t, wallet.accountId, sms.key), 'WALLET_SIGNATURE_INVALID');
    expect((await signsFor(t, wallet.accountId, email.key)).status).toBe(200);
    // Gone: it answers 404 and cannot log in.
    expect((await t.api('DELETE', path)).status).toBe(404);
    expect((await t.api('POST', `${path}/challenge`, { body: {} })).status).toBe(404);
    // The remaining credential is now the last one.
    expect((await t.api('DELETE', `/auth/credentials/${wallet.credentials[0].id}`)).status).toBe(400);
  });

  it('listAuthCredentials and listAuthSessions check accountId', async () => {
    for (const path of ['/auth/credentials', '/auth/sessions']) {
      const malformed = await t.api('GET', `${path}?accountId=Customer:123`);
      expect(malformed.status, malformed.text).toBe(400);
      expect(malformed.body.code).toBe('INVALID_INPUT');
      expect(malformed.body.details.errors.map((e: any) => e.field)).toEqual(['accountId']);
      const unknown = await t.api('GET', `${path}?accountId=InternalAccount:01950000-0000-7000-8000-000000000000`);
      expect(unknown.status, unknown.text).toBe(200);
      expect(unknown.body).toEqual({ data: [] });
    }
  });

  it('revoking an unknown credential is 404', async () => {
    const reply = await t.api('DELETE', `/auth/credentials/${UNKNOWN_CREDENTIAL}`);
    expect(reply.status, reply.text).toBe(404);
    expect(reply.body.code).toBe('REFERENCE_NOT_FOUND');
  });
});
