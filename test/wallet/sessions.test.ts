import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { decryptCredentialBundle, getPublicKey } from '@turnkey/crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { build, type Reply, type TestApp } from '../helper.js';
import {
  type ClientKey,
  clientKey,
  customerWallet,
  otpLogin,
  signed,
  signsFor,
  walletState,
} from '../fixtures/wallet.js';

const UNKNOWN_SESSION = 'Session:01950000-0000-7000-8000-000000000000';

function expect401(reply: Reply, code: string) {
  expect(reply.status, reply.text).toBe(401);
  expect(reply.body.code).toBe(code);
  expect(typeof reply.body.details.reason).toBe('string');
}

/** The stamping key of a private key in hex. */
function keyOf(privateKey: string): ClientKey {
  const publicKey = Buffer.from(getPublicKey(privateKey, true)).toString('hex');
  const stamper = new ApiKeyStamper({ apiPublicKey: publicKey, apiPrivateKey: privateKey });
  return {
    privateKey,
    publicKey,
    publicKeyUncompressed: Buffer.from(getPublicKey(privateKey, false)).toString('hex'),
    async stamp(payload: string) {
      return (await stamper.stamp(payload)).stampHeaderValue;
    },
  };
}

async function loggedIn(t: TestApp) {
  const wallet = await customerWallet(t);
  const login = await otpLogin(t, wallet.credentials[0].id);
  return { ...wallet, ...login };
}

describe('listAuthSessions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await build();
  });

  it('lists the live sessions without their sealed key', async () => {
    const wallet = await customerWallet(t);
    expect((await walletState(t, wallet.accountId)).sessions).toEqual([]);
    const one = await otpLogin(t, wallet.credentials[0].id);
    const two = await otpLogin(t, wallet.credentials[0].id);
    const list = await t.api('GET', `/auth/sessions?accountId=${wallet.accountId}`);
    expect(list.status).toBe(200);
    expect(Object.keys(list.body)).toEqual(['data']);
    expect(list.body.data).toEqual([one.session, two.session]);
    for (const session of list.body.data) {
      expect(session.encryptedSessionSigningKey).toBeUndefined();
      expect(session).toMatchObject({
        accountId: wallet.accountId,
        type: 'EMAIL_OTP',
        nickname: 'avery.quinn@example.com',
      });
    }
    // A session refreshed with an uncompressed key carries its sealed key in the 201 only.
    const fresh = clientKey();
    const { reply } = await signed(t, 'POST', `/auth/sessions/${one.session.id}/refresh`, one.key, {
      clientPublicKey: fresh.publicKeyUncompressed,
    });
    expect(reply.status, reply.text).toBe(201);
    expect(typeof reply.body.encryptedSessionSigningKey).toBe('string');
    const after = await t.api('GET', `/auth/sessions?accountId=${wallet.accountId}`);
    const { encryptedSessionSigningKey: _sealed, ...listed } = reply.body;
    expect(after.body.data).toEqual([two.session, listed]);
  });

  it('another wallet’s sessions are not listed', async () => {
    const a = await loggedIn(t);
    const b = await customerWallet(t);
    expect((await walletState(t, b.accountId)).sessions).toEqual([]);
    expect((await walletState(t, a.accountId)).sessions.map((s) => s.id)).toEqual([a.session.id]);
  });
});

describe('revokeAuthSession', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await build();
  });

  it('revokes a session with a signed request: its key no longer signs', async () => {
    const a = await loggedIn(t);
    const path = `/auth/sessions/${a.session.id}`;
    const first = await t.api('DELETE', path);
    expect(first.status, first.text).toBe(202);
    expect(Object.keys(first.body).sort()).toEqual(['expiresAt', 'payloadToSign', 'requestId', 'type']);
    expect(first.body.type).toBe('EMAIL_OTP');
    expect(JSON.parse(first.body.payloadToSign)).toMatchObject({
      type: 'ACTIVITY_TYPE_DELETE_API_KEYS',
      parameters: { apiKeyIds: [a.session.id] },
    });
    // The first leg changes nothing.
    expect((await walletState(t, a.accountId)).sessions.map((s) => s.id)).toEqual([a.session.id]);
    const done = await t.api('DELETE', path, {
      headers: {
        'Grid-Wallet-Signature': await a.key.stamp(first.body.payloadToSign),
        'Request-Id': first.body.requestId,
      },
    });
    expect(done.status, done.text).toBe(204);
    expect(done.text).toBe('');
    expect((await walletState(t, a.accountId)).sessions).toEqual([]);
    expect401(await signsFor(t, a.accountId, a.key), 'WALLET_SIGNATURE_INVALID');
    expect((await t.api('DELETE', path)).status).toBe(404);
    expect((await t.api('POST', `${path}/refresh`, { body: { clientPublicKey: clientKey().publicKey } })).status).toBe(
      404,
    );
  });

  it('another live session of the wallet may sign the revocation; the other one stays', async () => {
    const a = await loggedIn(t);
    const b = await otpLogin(t, a.credentials[0].id);
    const { reply } = await signed(t, 'DELETE', `/auth/sessions/${a.session.id}`, b.key);
    expect(reply.status, reply.text).toBe(204);
    expect((await walletState(t, a.accountId)).sessions.map((s) => s.id)).toEqual([b.session.id]);
    expect((await signsFor(t, a.accountId, b.key)).status).toBe(200);
  });

  it('a key that is no live session’s cannot revoke, and nothing changes', async () => {
    const a = await loggedIn(t);
    const other = await loggedIn(t);
    const path = `/auth/sessions/${a.session.id}`;
    const before = await walletState(t, a.accountId);
    for (const key of [clientKey(), other.key]) {
      const { reply } = await signed(t, 'DELETE', path, key);
      expect401(reply, 'WALLET_SIGNATURE_INVALID');
    }
    expect(await walletState(t, a.accountId)).toEqual(before);
    expect((await signsFor(t, a.accountId, a.key)).status).toBe(200);
  });

  it('refuses a retry without signature, without Request-Id, with a malformed stamp, or replayed', async () => {
    const a = await loggedIn(t);
    const b = await otpLogin(t, a.credentials[0].id);
    const path = `/auth/sessions/${a.session.id}`;
    const first = await t.api('DELETE', path);
    const stamp = await b.key.stamp(first.body.payloadToSign);
    const before = await walletState(t, a.accountId);
    expect401(
      await t.api('DELETE', path, { headers: { 'Request-Id': first.body.requestId } }),
      'WALLET_SIGNATURE_MISSING',
    );
    expect401(await t.api('DELETE', path, { headers: { 'Grid-Wallet-Signature': stamp } }), 'REQUEST_ID_MISSING');
    expect401(
      await t.api('DELETE', path, {
        headers: { 'Grid-Wallet-Signature': '%%%', 'Request-Id': first.body.requestId },
      }),
      'WALLET_SIGNATURE_MALFORMED',
    );
    // A Request-Id issued for another session's revocation.
    const otherFirst = await t.api('DELETE', `/auth/sessions/${b.session.id}`);
    const crossed = await t.api('DELETE', path, {
      headers: {
        'Grid-Wallet-Signature': await b.key.stamp(otherFirst.body.payloadToSign),
        'Request-Id': otherFirst.body.requestId,
      },
    });
    expect401(crossed, 'UNAUTHORIZED');
    expect(await walletState(t, a.accountId)).toEqual(before);

    const headers = { 'Grid-Wallet-Signature': stamp, 'Request-Id': first.body.requestId };
    expect((await t.api('DELETE', path, { headers })).status).toBe(204);
    const after = await walletState(t, a.accountId);
    expect(after.sessions.map((s) => s.id)).toEqual([b.session.id]);
    // Replayed: the session is gone now, so 404; and the Request-Id could not be used twice anyway.
    const replay = await t.api('DELETE', path, { headers });
    expect(replay.status, replay.text).toBe(404);
    expect(await walletState(t, a.accountId)).toEqual(after);
  });

  it('two identical signed revocations at once: one 204, the other refused', async () => {
    const a = await loggedIn(t);
    const b = await otpLogin(t, a.credentials[0].id);
    const path = `/auth/sessions/${a.session.id}`;
    const first = await t.api('DELETE', path);
    const headers = {
      'Grid-Wallet-Signature': await b.key.stamp(first.body.payloadToSign),
      'Request-Id': first.body.requestId,
    };
    const replies = await Promise.all([t.api('DELETE', path, { headers }), t.api('DELETE', path, { headers })]);
    // The loser is refused: 401 when it ran beside the winner, 404 when it came after the commit.
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses[0]).toBe(204);
    expect([401, 404]).toContain(statuses[1]);
    expect((await walletState(t, a.accountId)).sessions.map((s) => s.id)).toEqual([b.session.id]);
  });

  it('an unknown session is 404', async () => {
    const reply = await t.api('DELETE', `/auth/sessions/${UNKNOWN_SESSION}`);
    expect(reply.status, reply.text).toBe(404);
    expect(reply.body.code).toBe('REFERENCE_NOT_FOUND');
  });
});

describe('refreshAuthSession', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await build();
  });

  it('a compressed key becomes the new session’s key; the old session ends', async () => {
    const a = await loggedIn(t);
    const fresh = clientKey();
    const path = `/auth/sessions/${a.session.id}/refresh`;
    const body = { clientPublicKey: fresh.publicKey };
    const first = await t.api('POST', path, { body });
    expect(first.status, first.text).toBe(202);
    expect(Object.keys(first.body).sort()).toEqual(['expiresAt', 'payloadToSign', 'requestId']);
    expect(JSON.parse(first.body.payloadToSign)).toMatchObject({
      type: 'ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2',
      parameters: { targetPublicKey: fresh.publicKey },
    });
    expect((await walletState(t, a.accountId)).sessions.map((s) => s.id)).toEqual([a.session.id]);
    const reply = await t.api('POST', path, {
      body,
      headers: {
        'Grid-Wallet-Signature': await a.key.stamp(first.body.payloadToSign),
        'Request-Id': first.body.requestId,
      },
    });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body.id).toMatch(/^Session:/);
    expect(reply.body.id).not.toBe(a.session.id);
    expect(reply.body).toMatchObject({
      accountId: a.accountId,
      type: 'EMAIL_OTP',
      nickname: 'avery.quinn@example.com',
    });
    expect(reply.body.encryptedSessionSigningKey).toBeUndefined();
    expect(Date.parse(reply.body.expiresAt) - Date.parse(reply.body.createdAt)).toBe(15 * 60_000);
    expect((await walletState(t, a.accountId)).sessions).toEqual([reply.body]);
    expect401(await signsFor(t, a.accountId, a.key), 'WALLET_SIGNATURE_INVALID');
    expect((await signsFor(t, a.accountId, fresh)).status).toBe(200);
    expect((await t.api('POST', path, { body: { clientPublicKey: clientKey().publicKey } })).status).toBe(404);
  });

  it('an uncompressed key gets a new session key sealed to it', async () => {
    const a = await loggedIn(t);
    const client = clientKey();
    const { reply } = await signed(t, 'POST', `/auth/sessions/${a.session.id}/refresh`, a.key, {
      clientPublicKey: client.publicKeyUncompressed,
    });
    expect(reply.status, reply.text).toBe(201);
    expect(typeof reply.body.encryptedSessionSigningKey).toBe('string');
    const privateKey = decryptCredentialBundle(reply.body.encryptedSessionSigningKey, client.privateKey);
    expect(privateKey).toMatch(/^[0-9a-f]{64}$/);
    const sessionKey = keyOf(privateKey);
    expect(sessionKey.publicKey).not.toBe(client.publicKey);
    const { encryptedSessionSigningKey: _sealed, ...listed } = reply.body;
    expect((await walletState(t, a.accountId)).sessions).toEqual([listed]);
    expect((await signsFor(t, a.accountId, sessionKey)).status).toBe(200);
    // The key it was sealed to is not the session key; nor is the old session's.
    expect401(await signsFor(t, a.accountId, client), 'WALLET_SIGNATURE_INVALID');
    expect401(await signsFor(t, a.accountId, a.key), 'WALLET_SIGNATURE_INVALID');
  });

  it('only the session being refreshed may sign, and nothing changes otherwise', async () => {
    const a = await loggedIn(t);
    const b = await otpLogin(t, a.credentials[0].id);
    const path = `/auth/sessions/${a.session.id}/refresh`;
    const before = await walletState(t, a.accountId);
    for (const key of [b.key, clientKey()]) {
      const { reply } = await signed(t, 'POST', path, key, { clientPublicKey: clientKey().publicKey });
      expect401(reply, 'WALLET_SIGNATURE_INVALID');
    }
    expect(await walletState(t, a.accountId)).toEqual(before);
  });

  it('a retry body other than the first leg is WALLET_SIGNATURE_BODY_MISMATCH', async () => {
    const a = await loggedIn(t);
    const path = `/auth/sessions/${a.session.id}/refresh`;
    const first = await t.api('POST', path, { body: { clientPublicKey: clientKey().publicKey } });
    const before = await walletState(t, a.accountId);
    const reply = await t.api('POST', path, {
      body: { clientPublicKey: clientKey().publicKey },
      headers: {
        'Grid-Wallet-Signature': await a.key.stamp(first.body.payloadToSign),
        'Request-Id': first.body.requestId,
      },
    });
    expect401(reply, 'WALLET_SIGNATURE_BODY_MISMATCH');
    expect(await walletState(t, a.accountId)).toEqual(before);
  });

  it('a key that is not a point of P-256 is 400 naming clientPublicKey', async () => {
    const a = await loggedIn(t);
    const before = await walletState(t, a.accountId);
    const reply = await t.api('POST', `/auth/sessions/${a.session.id}/refresh`, {
      body: { clientPublicKey: `02${'f'.repeat(64)}` },
    });
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body.code).toBe('INVALID_INPUT');
    expect(reply.body.details.errors.map((e: any) => e.field)).toEqual(['clientPublicKey']);
    expect(await walletState(t, a.accountId)).toEqual(before);
  });

  it('an unknown session is 404', async () => {
    const reply = await t.api('POST', `/auth/sessions/${UNKNOWN_SESSION}/refresh`, {
      body: { clientPublicKey: clientKey().publicKey },
    });
    expect(reply.status, reply.text).toBe(404);
  });
});

describe('session expiry', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await build();
  });

  it('a session lasts 15 minutes of sandbox clock', async () => {
    const a = await loggedIn(t);
    const revoke = await t.api('DELETE', `/auth/sessions/${a.session.id}`);
    const refresh = await t.api('POST', `/auth/sessions/${a.session.id}/refresh`, {
      body: { clientPublicKey: clientKey().publicKey },
    });
    await t.advanceClock(15 * 60 - 5);
    expect((await walletState(t, a.accountId)).sessions.map((s) => s.id)).toEqual([a.session.id]);
    await t.advanceClock(6);
    const before = await walletState(t, a.accountId);
    expect(before.sessions).toEqual([]);
    expect(before.credentials).toHaveLength(1);
    const path = `/auth/sessions/${a.session.id}`;
    expect((await t.api('DELETE', path)).status).toBe(404);
    expect((await t.api('POST', `${path}/refresh`, { body: { clientPublicKey: clientKey().publicKey } })).status).toBe(
      404,
    );
    // Retries of challenges issued while it was live are refused too.
    const lateRevoke = await t.api('DELETE', path, {
      headers: {
        'Grid-Wallet-Signature': await a.key.stamp(revoke.body.payloadToSign),
        'Request-Id': revoke.body.requestId,
      },
    });
    expect(lateRevoke.status, lateRevoke.text).toBe(404);
    expect(refresh.status).toBe(202);
    expect401(await signsFor(t, a.accountId, a.key), 'WALLET_SIGNATURE_INVALID');
    expect(await walletState(t, a.accountId)).toEqual(before);
    // Logging in again opens a new one.
    const again = await otpLogin(t, a.credentials[0].id);
    expect((await walletState(t, a.accountId)).sessions.map((s) => s.id)).toEqual([again.session.id]);
  });

  it('a refreshed session starts its own 15 minutes', async () => {
    const a = await loggedIn(t);
    await t.advanceClock(10 * 60);
    const fresh = clientKey();
    const { reply } = await signed(t, 'POST', `/auth/sessions/${a.session.id}/refresh`, a.key, {
      clientPublicKey: fresh.publicKey,
    });
    expect(reply.status, reply.text).toBe(201);
    await t.advanceClock(10 * 60);
    expect((await walletState(t, a.accountId)).sessions.map((s) => s.id)).toEqual([reply.body.id]);
    expect((await signsFor(t, a.accountId, fresh)).status).toBe(200);
    await t.advanceClock(5 * 60 + 1);
    expect((await walletState(t, a.accountId)).sessions).toEqual([]);
    expect401(await signsFor(t, a.accountId, fresh), 'WALLET_SIGNATURE_INVALID');
  });
});

describe('sessions and credentials of another platform', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await build();
  });

  it('cannot be seen or used', async () => {
    const a = await loggedIn(t);
    const before = await walletState(t, a.accountId);
    const other = await t.newPlatform();
    expect(await walletState(other, a.accountId)).toEqual({ credentials: [], sessions: [] });
    const credentialId = a.credentials[0].id;
    const sessionPath = `/auth/sessions/${a.session.id}`;
    const replies = [
      await other.api('DELETE', sessionPath),
      await other.api('POST', `${sessionPath}/refresh`, { body: { clientPublicKey: clientKey().publicKey } }),
      await other.api('DELETE', `/auth/credentials/${credentialId}`),
      await other.api('POST', `/auth/credentials/${credentialId}/challenge`, { body: {} }),
      await other.api('POST', '/auth/credentials', { body: { type: 'SMS_OTP', accountId: a.accountId } }),
      await other.api('PATCH', `/internal-accounts/${a.accountId}`, { body: { privateEnabled: true } }),
    ];
    expect(replies.map((r) => r.status)).toEqual([404, 404, 404, 404, 404, 404]);
    // A challenge issued on this platform cannot be completed through the other one.
    const first = await t.api('DELETE', sessionPath);
    const crossed = await other.api('DELETE', sessionPath, {
      headers: {
        'Grid-Wallet-Signature': await a.key.stamp(first.body.payloadToSign),
        'Request-Id': first.body.requestId,
      },
    });
    expect(crossed.status, crossed.text).toBe(404);
    expect(await walletState(t, a.accountId)).toEqual(before);
  });
});
