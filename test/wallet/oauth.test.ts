// OAUTH credentials of embedded wallets over HTTP: registration with an OIDC ID token (the
// sandbox reads its claims, not its signature), every refused claim, malformed tokens, and the
// one-call login whose fresh token carries nonce = sha256(clientPublicKey) and the registered
// identity; compressed client keys are the session key, uncompressed ones get a sealed one.
// The sandbox clock is never advanced here, so the server's now is Date.now().

import { createHash } from 'node:crypto';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { decryptCredentialBundle, getPublicKey } from '@turnkey/crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { GOOGLE_CLIENT_ID, GOOGLE_SUBJECT, googleClaims, mintOidcToken } from '../fixtures/oidc.js';
import { type ClientKey, clientKey, customerWallet, otpLogin, signed } from '../fixtures/wallet.js';
import { build, type Reply, type Tenant, type TestApp } from '../helper.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A Google ID token issued now; `overrides` replace claims (undefined drops one). */
function googleToken(overrides: Record<string, unknown> = {}): string {
  return mintOidcToken(googleClaims(Date.now(), overrides));
}

/** sha256 hex of the exact clientPublicKey string: the nonce a login token must carry. */
function nonceFor(clientPublicKey: string): string {
  return createHash('sha256').update(clientPublicKey, 'utf8').digest('hex');
}

/** Seconds since the epoch, `delta` seconds from now. */
function epoch(delta = 0): number {
  return Math.floor(Date.now() / 1000) + delta;
}

/** A customer created without email: its EMBEDDED_WALLET has no credential yet. */
async function emptyWallet(t: Tenant): Promise<string> {
  const customer = await createCustomer(t, individualBody('Rowan Blake', { email: undefined }));
  const accounts = await t.api('GET', `/customers/internal-accounts?customerId=${customer.id}&type=EMBEDDED_WALLET`);
  expect(accounts.status).toBe(200);
  const accountId: string = accounts.body.data[0].id;
  expect((await t.api('GET', `/auth/credentials?accountId=${accountId}`)).body.data).toEqual([]);
  return accountId;
}

function register(t: Tenant, accountId: string, oidcToken: string) {
  return t.api('POST', '/auth/credentials', { body: { type: 'OAUTH', accountId, oidcToken } });
}

function login(t: Tenant, credentialId: string, oidcToken: string, clientPublicKey: string) {
  return t.api('POST', `/auth/credentials/${credentialId}/verify`, {
    body: { type: 'OAUTH', oidcToken, clientPublicKey },
  });
}

async function credentialsOf(t: Tenant, accountId: string) {
  return (await t.api('GET', `/auth/credentials?accountId=${accountId}`)).body.data as { type: string }[];
}

async function sessionIds(t: Tenant, accountId: string): Promise<string[]> {
  const reply = await t.api('GET', `/auth/sessions?accountId=${accountId}`);
  expect(reply.status).toBe(200);
  return reply.body.data.map((s: { id: string }) => s.id);
}

function expectUnauthorized(reply: Reply, reason: string) {
  expect(reply.status, reply.text).toBe(401);
  expect(reply.body).toMatchObject({ status: 401, code: 'UNAUTHORIZED', details: { reason } });
}

function expectInvalidField(reply: Reply, field: string) {
  expect(reply.status, reply.text).toBe(400);
  expect(reply.body.code).toBe('INVALID_INPUT');
  expect(reply.body.details.errors.map((e: { field: string }) => e.field)).toContain(field);
}

function keyFromPrivate(privateKey: string): ClientKey {
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

async function expectKeySigns(t: Tenant, accountId: string, key: ClientKey, privateEnabled = true) {
  const { reply } = await signed(t, 'PATCH', `/internal-accounts/${accountId}`, key, { privateEnabled });
  expect(reply.status, reply.text).toBe(200);
  expect(reply.body).toMatchObject({ id: accountId, type: 'EMBEDDED_WALLET', privateEnabled });
}

describe('createAuthCredential (OAUTH)', () => {
  let t: TestApp;
  /** A wallet without credentials that every refusal below leaves that way. */
  let refusedWallet: string;

  beforeAll(async () => {
    t = await build();
    refusedWallet = await emptyWallet(t);
  });

  it('registers a Google token as the first credential (201), named after its email claim', async () => {
    const accountId = await emptyWallet(t);
    const reply = await register(t, accountId, googleToken());
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body).toEqual({
      id: expect.stringMatching(/^AuthMethod:/),
      accountId,
      type: 'OAUTH',
      nickname: 'ada.lovelace@example.com',
      createdAt: expect.stringMatching(ISO),
      updatedAt: reply.body.createdAt,
    });
    expect(await credentialsOf(t, accountId)).toEqual([reply.body]);
  });

  it('accepts each supported issuer, a one-element aud array, and tokens without email', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ iss: 'accounts.google.com' }, 'ada.lovelace@example.com'],
      [{ iss: 'https://appleid.apple.com', email: 'ada@privaterelay.appleid.com' }, 'ada@privaterelay.appleid.com'],
      [{ aud: [GOOGLE_CLIENT_ID] }, 'ada.lovelace@example.com'],
      [{ email: undefined }, `Google ${GOOGLE_SUBJECT}`],
      [{ iss: 'https://appleid.apple.com', sub: '001234.abcdef', email: undefined }, 'Apple 001234.abcdef'],
    ];
    for (const [overrides, nickname] of cases) {
      const reply = await register(t, await emptyWallet(t), googleToken(overrides));
      expect(reply.status, `${JSON.stringify(overrides)}: ${reply.text}`).toBe(201);
      expect(reply.body).toMatchObject({ type: 'OAUTH', nickname });
    }
  });

  it('accepts iat up to 60 s old and up to 5 s ahead (clock skew)', async () => {
    for (const iat of [epoch(-58), epoch(3)]) {
      const reply = await register(t, await emptyWallet(t), googleToken({ iat, exp: iat + 3600 }));
      expect(reply.status, `iat ${iat - epoch()}: ${reply.text}`).toBe(201);
    }
  });

  // Claims are made when each test runs (not when the file is collected), so times are fresh.
  const refusals: [string, () => Record<string, unknown>, string][] = [
    ['an unsupported issuer', () => ({ iss: 'https://login.example.com' }), 'unsupported token issuer'],
    ['an issuer in another spelling', () => ({ iss: 'https://accounts.google.com/' }), 'unsupported token issuer'],
    ['no issuer', () => ({ iss: undefined }), 'token issuer missing'],
    ['an empty aud', () => ({ aud: '' }), 'token audience missing'],
    ['an empty aud array', () => ({ aud: [] }), 'token audience missing'],
    ['no aud', () => ({ aud: undefined }), 'token audience missing'],
    [
      'a two-element aud',
      () => ({ aud: [GOOGLE_CLIENT_ID, 'other-client'] }),
      'token audience has more than one value',
    ],
    ['no sub', () => ({ sub: undefined }), 'token subject missing'],
    ['an empty sub', () => ({ sub: '' }), 'token subject missing'],
    ['an iat 61 + 5 s old', () => ({ iat: epoch(-66), exp: epoch(3600) }), 'token issued more than 60 seconds ago'],
    ['an iat an hour old', () => ({ iat: epoch(-3600), exp: epoch(3600) }), 'token issued more than 60 seconds ago'],
    ['an iat more than 5 s ahead', () => ({ iat: epoch(7), exp: epoch(3600) }), 'token issued in the future'],
    ['an iat that is a string', () => ({ iat: String(epoch()) }), 'token iat is not a number'],
    ['an exp in the past', () => ({ iat: epoch(-10), exp: epoch(-1) }), 'token expired'],
    ['no exp', () => ({ exp: undefined }), 'token exp is not a number'],
  ];
  for (const [what, overrides, reason] of refusals) {
    it(`refuses a token with ${what} (401, reason "${reason}")`, async () => {
      const reply = await register(t, refusedWallet, googleToken(overrides()));
      expectUnauthorized(reply, reason);
      expect(await credentialsOf(t, refusedWallet)).toEqual([]);
    });
  }

  it('refuses tokens that are not JWTs, the retired literal sandbox-valid-oidc-token among them (400 naming oidcToken)', async () => {
    const claims = Buffer.from(JSON.stringify(googleClaims(Date.now())), 'utf8').toString('base64url');
    const header = Buffer.from('{"alg":"RS256"}', 'utf8').toString('base64url');
    for (const oidcToken of [
      'sandbox-valid-oidc-token',
      'not-a-jwt',
      `${header}.${claims}`,
      `${header}.${claims}.sig.extra`,
      `${header}.!!!.sig`,
      `${Buffer.from('not json').toString('base64url')}.${claims}.sig`,
      `${header}.${Buffer.from('[1,2]').toString('base64url')}.sig`,
      `${header}.${claims}.not+base64url`,
    ]) {
      const reply = await register(t, refusedWallet, oidcToken);
      expectInvalidField(reply, 'oidcToken');
    }
    expect(await credentialsOf(t, refusedWallet)).toEqual([]);
  });

  it('refuses an identity already registered on the wallet (400 naming oidcToken)', async () => {
    const accountId = await emptyWallet(t);
    expect((await register(t, accountId, googleToken())).status).toBe(201);
    const again = await register(t, accountId, googleToken());
    expectInvalidField(again, 'oidcToken');
    expect(await credentialsOf(t, accountId)).toHaveLength(1);
  });

  it('adds an OAUTH credential to a wallet that has one through a signed request (202, then 201)', async () => {
    const wallet = await customerWallet(t);
    const { key } = await otpLogin(t, wallet.credentials[0].id);
    const body = { type: 'OAUTH', accountId: wallet.accountId, oidcToken: googleToken() };
    const { challenge, reply } = await signed(t, 'POST', '/auth/credentials', key, body);
    expect(challenge.body).toMatchObject({ type: 'OAUTH', requestId: expect.stringMatching(/^Request:/) });
    expect(JSON.parse(challenge.body.payloadToSign)).toMatchObject({
      type: 'ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS',
      parameters: { oauthProviders: [{ oidcToken: body.oidcToken, providerName: 'Google' }] },
    });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body).toMatchObject({
      accountId: wallet.accountId,
      type: 'OAUTH',
      nickname: 'ada.lovelace@example.com',
    });
    expect((await credentialsOf(t, wallet.accountId)).map((c) => c.type).sort()).toEqual(['EMAIL_OTP', 'OAUTH']);
  });
});

describe('verifyAuthCredential (OAUTH)', () => {
  let t: TestApp;
  let accountId: string;
  let credentialId: string;

  beforeAll(async () => {
    t = await build();
    accountId = await emptyWallet(t);
    const reply = await register(t, accountId, googleToken());
    expect(reply.status, reply.text).toBe(201);
    credentialId = reply.body.id;
  });

  /** A refused login: 401 with `reason`, and no new session. */
  async function expectRefused(oidcToken: string, clientPublicKey: string, reason: string) {
    const before = await sessionIds(t, accountId);
    expectUnauthorized(await login(t, credentialId, oidcToken, clientPublicKey), reason);
    expect(await sessionIds(t, accountId)).toEqual(before);
  }

  it('logs in with a fresh token whose nonce is sha256(clientPublicKey); the compressed key signs', async () => {
    const key = clientKey();
    const reply = await login(t, credentialId, googleToken({ nonce: nonceFor(key.publicKey) }), key.publicKey);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({
      id: expect.stringMatching(/^Session:/),
      accountId,
      type: 'OAUTH',
      nickname: 'ada.lovelace@example.com',
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      expiresAt: expect.stringMatching(ISO),
    });
    expect(Date.parse(reply.body.expiresAt) - Date.parse(reply.body.createdAt)).toBe(15 * 60_000);
    expect(await sessionIds(t, accountId)).toContain(reply.body.id);
    await expectKeySigns(t, accountId, key);
  });

  it('seals a session key to an uncompressed (legacy) client key; the opened key signs', async () => {
    const key = clientKey();
    const nonce = nonceFor(key.publicKeyUncompressed);
    const reply = await login(t, credentialId, googleToken({ nonce }), key.publicKeyUncompressed);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.encryptedSessionSigningKey).toEqual(expect.any(String));
    const sessionKey = keyFromPrivate(decryptCredentialBundle(reply.body.encryptedSessionSigningKey, key.privateKey));
    expect(sessionKey.publicKey).not.toBe(key.publicKey);
    await expectKeySigns(t, accountId, sessionKey, false);
    const { reply: refused } = await signed(t, 'PATCH', `/internal-accounts/${accountId}`, key, {
      privateEnabled: true,
    });
    expect(refused.status, refused.text).toBe(401);
    expect(refused.body.code).toBe('WALLET_SIGNATURE_INVALID');
  });

  it('hashes the exact clientPublicKey string: upper-case hex needs the nonce of the upper-case text', async () => {
    const key = clientKey();
    const upper = key.publicKey.toUpperCase();
    await expectRefused(
      googleToken({ nonce: nonceFor(key.publicKey) }),
      upper,
      'token nonce does not match sha256 of clientPublicKey',
    );
    const reply = await login(t, credentialId, googleToken({ nonce: nonceFor(upper) }), upper);
    expect(reply.status, reply.text).toBe(200);
    await expectKeySigns(t, accountId, key);
  });

  it('refuses a token whose nonce is not sha256 of this clientPublicKey, or has none', async () => {
    const key = clientKey();
    await expectRefused(
      googleToken({ nonce: nonceFor(clientKey().publicKey) }),
      key.publicKey,
      'token nonce does not match sha256 of clientPublicKey',
    );
    await expectRefused(
      googleToken({ nonce: nonceFor(key.publicKey).toUpperCase() }),
      key.publicKey,
      'token nonce does not match sha256 of clientPublicKey',
    );
    await expectRefused(googleToken(), key.publicKey, 'token nonce missing');
  });

  for (const [what, overrides] of [
    ['another sub', { sub: '998877665544332211' }],
    ['another aud', { aud: 'other-client.apps.googleusercontent.com', azp: 'other' }],
    ['the other spelling of the issuer', { iss: 'accounts.google.com' }],
    ['another supported issuer', { iss: 'https://appleid.apple.com' }],
  ] as [string, Record<string, unknown>][]) {
    it(`refuses a token of ${what} than the registered identity`, async () => {
      const key = clientKey();
      await expectRefused(
        googleToken({ ...overrides, nonce: nonceFor(key.publicKey) }),
        key.publicKey,
        'token identity does not match the registered credential',
      );
    });
  }

  it('refuses a stale, future, expired or unsupported token on login', async () => {
    const key = clientKey();
    const nonce = nonceFor(key.publicKey);
    await expectRefused(
      googleToken({ nonce, iat: epoch(-66), exp: epoch(3600) }),
      key.publicKey,
      'token issued more than 60 seconds ago',
    );
    await expectRefused(
      googleToken({ nonce, iat: epoch(7), exp: epoch(3600) }),
      key.publicKey,
      'token issued in the future',
    );
    await expectRefused(googleToken({ nonce, iat: epoch(-10), exp: epoch(-1) }), key.publicKey, 'token expired');
    await expectRefused(
      googleToken({ nonce, iss: 'https://login.example.com' }),
      key.publicKey,
      'unsupported token issuer',
    );
  });

  it('refuses a malformed token, the retired literal, and a missing or off-curve clientPublicKey (400)', async () => {
    const key = clientKey();
    for (const oidcToken of ['sandbox-valid-oidc-token', 'a.b', 'x.y.z']) {
      expectInvalidField(await login(t, credentialId, oidcToken, key.publicKey), 'oidcToken');
    }
    const missing = await t.api('POST', `/auth/credentials/${credentialId}/verify`, {
      body: { type: 'OAUTH', oidcToken: googleToken({ nonce: nonceFor(key.publicKey) }) },
    });
    expectInvalidField(missing, 'clientPublicKey');
    const offCurve = `02${'f'.repeat(64)}`;
    expectInvalidField(
      await login(t, credentialId, googleToken({ nonce: nonceFor(offCurve) }), offCurve),
      'clientPublicKey',
    );
    expect(await sessionIds(t, accountId)).not.toHaveLength(0);
  });

  it('refuses a verify of another type than the credential (400 naming type)', async () => {
    const reply = await t.api('POST', `/auth/credentials/${credentialId}/verify`, {
      body: {
        type: 'PASSKEY',
        assertion: { credentialId: 'AA', clientDataJson: 'e30', authenticatorData: 'AA', signature: 'AA' },
      },
    });
    expectInvalidField(reply, 'type');
  });

  it('has no challenge step: POST /auth/credentials/{id}/challenge on an OAUTH credential is 400', async () => {
    const reply = await t.api('POST', `/auth/credentials/${credentialId}/challenge`, {
      body: { clientPublicKey: clientKey().publicKey },
    });
    expectInvalidField(reply, 'id');
    const bare = await t.api('POST', `/auth/credentials/${credentialId}/challenge`, { body: {} });
    expectInvalidField(bare, 'id');
  });
});
