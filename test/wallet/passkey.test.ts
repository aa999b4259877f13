// PASSKEY credentials of embedded wallets over HTTP: registration (first credential, added
// credential through a signed request, the refused attestations), the WebAuthn login
// (challenge bound to the client's key, assertion with Request-Id, the session key signing a
// wallet action), every refused assertion (no session opened), the sandbox's legacy
// assertion signature and the legacy uncompressed client key.

import { randomBytes } from 'node:crypto';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { decryptCredentialBundle, getPublicKey } from '@turnkey/crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { SoftAuthenticator } from '../fixtures/authenticator.js';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { type ClientKey, clientKey, customerWallet, otpLogin, signed } from '../fixtures/wallet.js';
import { build, type Reply, type Tenant, type TestApp } from '../helper.js';

const LEGACY_SIGNATURE = 'sandbox-valid-passkey-signature';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A base64url registration challenge, as a platform backend would mint one. */
function registrationChallenge(): string {
  return randomBytes(32).toString('base64url');
}

/** A customer created without email: its EMBEDDED_WALLET has no credential yet. */
async function emptyWallet(t: Tenant): Promise<string> {
  const customer = await createCustomer(t, individualBody('Morgan Ellis', { email: undefined }));
  const accounts = await t.api('GET', `/customers/internal-accounts?customerId=${customer.id}&type=EMBEDDED_WALLET`);
  expect(accounts.status).toBe(200);
  const accountId: string = accounts.body.data[0].id;
  const credentials = await t.api('GET', `/auth/credentials?accountId=${accountId}`);
  expect(credentials.body.data).toEqual([]);
  return accountId;
}

function passkeyBody(accountId: string, device: SoftAuthenticator, challenge: string, nickname = 'iPhone Face-ID') {
  return { type: 'PASSKEY', accountId, nickname, challenge, attestation: device.register(challenge) };
}

/** Registers `device` as the first credential of `accountId` (201 at once). */
async function registerFirst(t: Tenant, accountId: string, device: SoftAuthenticator, nickname?: string) {
  const reply = await t.api('POST', '/auth/credentials', {
    body: passkeyBody(accountId, device, registrationChallenge(), nickname),
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.body as { id: string; credentialId: string; nickname: string };
}

async function challenge(t: Tenant, credentialId: string, clientPublicKey: string) {
  const reply = await t.api('POST', `/auth/credentials/${credentialId}/challenge`, { body: { clientPublicKey } });
  expect(reply.status, reply.text).toBe(200);
  return reply.body as { challenge: string; requestId: string; expiresAt: string; credentialId: string };
}

function verify(t: Tenant, credentialId: string, assertion: unknown, requestId?: string) {
  return t.api('POST', `/auth/credentials/${credentialId}/verify`, {
    body: { type: 'PASSKEY', assertion },
    ...(requestId !== undefined ? { headers: { 'Request-Id': requestId } } : {}),
  });
}

/** The whole passkey login with `device` and a new compressed client key. */
async function passkeyLogin(t: Tenant, credentialId: string, device: SoftAuthenticator) {
  const key = clientKey();
  const issued = await challenge(t, credentialId, key.publicKey);
  const reply = await verify(t, credentialId, device.assert(issued.challenge), issued.requestId);
  expect(reply.status, reply.text).toBe(200);
  return { session: reply.body, key };
}

async function credentialsOf(t: Tenant, accountId: string): Promise<{ type: string }[]> {
  const reply = await t.api('GET', `/auth/credentials?accountId=${accountId}`);
  expect(reply.status).toBe(200);
  return reply.body.data;
}

async function sessionIds(t: Tenant, accountId: string): Promise<string[]> {
  const reply = await t.api('GET', `/auth/sessions?accountId=${accountId}`);
  expect(reply.status).toBe(200);
  return reply.body.data.map((s: { id: string }) => s.id);
}

function expectUnauthorized(reply: Reply, reason: string, code = 'UNAUTHORIZED') {
  expect(reply.status, reply.text).toBe(401);
  expect(reply.body).toMatchObject({ status: 401, code, details: { reason } });
}

function expectInvalidField(reply: Reply, field: string) {
  expect(reply.status, reply.text).toBe(400);
  expect(reply.body.code).toBe('INVALID_INPUT');
  expect(reply.body.details.errors.map((e: { field: string }) => e.field)).toContain(field);
}

/** A client key made from a private key (hex), as a client holding a decrypted session key would. */
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

/** The session key signs a wallet action: PATCH /internal-accounts/{id} through both legs. */
async function expectKeySigns(t: Tenant, accountId: string, key: ClientKey, privateEnabled = true) {
  const { reply } = await signed(t, 'PATCH', `/internal-accounts/${accountId}`, key, { privateEnabled });
  expect(reply.status, reply.text).toBe(200);
  expect(reply.body).toMatchObject({ id: accountId, type: 'EMBEDDED_WALLET', privateEnabled });
}

describe('createAuthCredential (PASSKEY)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await build();
  });

  it('registers the first credential of a wallet at once (201)', async () => {
    const accountId = await emptyWallet(t);
    const device = new SoftAuthenticator();
    const reply = await t.api('POST', '/auth/credentials', {
      body: passkeyBody(accountId, device, registrationChallenge(), '  YubiKey 5C (desk)  '),
    });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body).toEqual({
      id: expect.stringMatching(/^AuthMethod:/),
      accountId,
      type: 'PASSKEY',
      credentialId: device.credentialId,
      nickname: 'YubiKey 5C (desk)',
      createdAt: expect.stringMatching(ISO),
      updatedAt: reply.body.createdAt,
    });
    expect(reply.body.otpEncryptionTargetBundle).toBeUndefined();
    const listed = await t.api('GET', `/auth/credentials?accountId=${accountId}`);
    expect(listed.body.data).toEqual([reply.body]);
  });

  it('adds a passkey to a wallet that has a credential through a signed request (202, then 201)', async () => {
    const wallet = await customerWallet(t);
    const { key } = await otpLogin(t, wallet.credentials[0].id);
    const device = new SoftAuthenticator();
    const body = passkeyBody(wallet.accountId, device, registrationChallenge(), 'Pixel 8');
    const { challenge: first, reply } = await signed(t, 'POST', '/auth/credentials', key, body);
    expect(first.body).toEqual({
      payloadToSign: expect.any(String),
      requestId: expect.stringMatching(/^Request:/),
      expiresAt: expect.stringMatching(ISO),
      type: 'PASSKEY',
    });
    const activity = JSON.parse(first.body.payloadToSign);
    expect(activity.type).toBe('ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2');
    expect(activity.parameters.authenticators[0]).toMatchObject({
      authenticatorName: 'Pixel 8',
      challenge: body.challenge,
      attestation: { credentialId: device.credentialId },
    });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body).toMatchObject({
      accountId: wallet.accountId,
      type: 'PASSKEY',
      credentialId: device.credentialId,
      nickname: 'Pixel 8',
    });
    const listed = await t.api('GET', `/auth/credentials?accountId=${wallet.accountId}`);
    expect(listed.body.data.map((c: { type: string }) => c.type).sort()).toEqual(['EMAIL_OTP', 'PASSKEY']);
    // The added passkey logs in.
    const { session } = await passkeyLogin(t, reply.body.id, device);
    expect(session).toMatchObject({ accountId: wallet.accountId, type: 'PASSKEY', nickname: 'Pixel 8' });
  });

  it('refuses the signed retry of an added passkey stamped by a key that is no session of the wallet', async () => {
    const wallet = await customerWallet(t);
    await otpLogin(t, wallet.credentials[0].id);
    const body = passkeyBody(wallet.accountId, new SoftAuthenticator(), registrationChallenge());
    const first = await t.api('POST', '/auth/credentials', { body });
    expect(first.status, first.text).toBe(202);
    const stranger = clientKey();
    const retry = await t.api('POST', '/auth/credentials', {
      body,
      headers: {
        'Grid-Wallet-Signature': await stranger.stamp(first.body.payloadToSign),
        'Request-Id': first.body.requestId,
      },
    });
    expectUnauthorized(
      retry,
      'the stamp is not signed by the key of a live session of this wallet',
      'WALLET_SIGNATURE_INVALID',
    );
    const listed = await t.api('GET', `/auth/credentials?accountId=${wallet.accountId}`);
    expect(listed.body.data.map((c: { type: string }) => c.type)).toEqual(['EMAIL_OTP']);
  });

  it('refuses an attestation made for another challenge', async () => {
    const accountId = await emptyWallet(t);
    const device = new SoftAuthenticator();
    const reply = await t.api('POST', '/auth/credentials', {
      body: {
        type: 'PASSKEY',
        accountId,
        nickname: 'iPhone',
        challenge: registrationChallenge(),
        attestation: device.register(registrationChallenge()),
      },
    });
    expectUnauthorized(reply, 'passkey challenge does not match');
    expect(await credentialsOf(t, accountId)).toEqual([]);
  });

  it("refuses an attestation whose RP id is neither its origin's host nor a parent domain of it", async () => {
    const accountId = await emptyWallet(t);
    // The authenticator's credential is scoped to wallet.example.com; the page runs on another origin.
    const device = new SoftAuthenticator({ origin: 'https://wallet.example.com' });
    const challengeText = registrationChallenge();
    const reply = await t.api('POST', '/auth/credentials', {
      body: {
        type: 'PASSKEY',
        accountId,
        nickname: 'iPhone',
        challenge: challengeText,
        attestation: device.register(challengeText, { origin: 'https://attacker.example.net' }),
      },
    });
    const reason = "passkey RP id is neither the origin's host nor a parent domain of it";
    expectUnauthorized(reply, reason);
    const scoped = new SoftAuthenticator({ origin: 'https://wallet.example.com', rpId: 'other.example.org' });
    const second = registrationChallenge();
    const again = await t.api('POST', '/auth/credentials', { body: passkeyBody(accountId, scoped, second) });
    expectUnauthorized(again, reason);
    expect(await credentialsOf(t, accountId)).toEqual([]);
  });

  it('refuses an attestation without the user-present flag', async () => {
    const accountId = await emptyWallet(t);
    const device = new SoftAuthenticator();
    const challengeText = registrationChallenge();
    const reply = await t.api('POST', '/auth/credentials', {
      body: {
        type: 'PASSKEY',
        accountId,
        nickname: 'iPhone',
        challenge: challengeText,
        attestation: device.register(challengeText, { userPresent: false }),
      },
    });
    expectUnauthorized(reply, 'user presence flag not set');
    expect(await credentialsOf(t, accountId)).toEqual([]);
  });

  it('refuses plain http off localhost', async () => {
    const accountId = await emptyWallet(t);
    const device = new SoftAuthenticator({ origin: 'http://wallet.example.com' });
    const reply = await t.api('POST', '/auth/credentials', {
      body: passkeyBody(accountId, device, registrationChallenge()),
    });
    expectUnauthorized(
      reply,
      'passkey origin http://wallet.example.com must be https, or http on localhost or a subdomain of it',
    );
    expect(await credentialsOf(t, accountId)).toEqual([]);
  });

  it('takes a passkey a test made for a loopback address, and logs in with it there', async () => {
    const accountId = await emptyWallet(t);
    const device = new SoftAuthenticator({ origin: 'http://127.0.0.1:3000' });
    const credential = await registerFirst(t, accountId, device);
    const key = clientKey();
    const issued = await challenge(t, credential.id, key.publicKey);
    const reply = await verify(t, credential.id, device.assert(issued.challenge), issued.requestId);
    expect(reply.status, reply.text).toBe(200);
    await expectKeySigns(t, accountId, key);
  });

  it('in strict mode, refuses a page on an IP address (browsers make no passkey there) with the origin to use instead', async () => {
    const strict = await t.raw('PATCH', '/_railyard/platform', { body: { strictIdentifiers: true } });
    expect(strict.status, strict.text).toBe(200);
    try {
      const accountId = await emptyWallet(t);
      const device = new SoftAuthenticator({ origin: 'http://127.0.0.1:3000' });
      const reply = await t.api('POST', '/auth/credentials', {
        body: passkeyBody(accountId, device, registrationChallenge()),
      });
      expectUnauthorized(
        reply,
        'passkey origin http://127.0.0.1:3000 is an IP address, where browsers refuse passkeys (a SecurityError): serve the page from http://localhost:3000',
      );
      expect(await credentialsOf(t, accountId)).toEqual([]);
    } finally {
      await t.raw('PATCH', '/_railyard/platform', { body: { strictIdentifiers: false } });
    }
  });

  it('registers on a subdomain of localhost, bound to the parent domain the page named, and logs in on a sibling', async () => {
    const accountId = await emptyWallet(t);
    const device = new SoftAuthenticator({ origin: 'http://wallet.shop.localhost:3000', rpId: 'shop.localhost' });
    const credential = await registerFirst(t, accountId, device);
    const key = clientKey();
    const issued = await challenge(t, credential.id, key.publicKey);
    const assertion = device.assert(issued.challenge, { origin: 'http://pay.shop.localhost:3001' });
    const reply = await verify(t, credential.id, assertion, issued.requestId);
    expect(reply.status, reply.text).toBe(200);
    await expectKeySigns(t, accountId, key);
    // localhost itself is no page of shop.localhost.
    const elsewhere = await challenge(t, credential.id, clientKey().publicKey);
    const refused = await verify(
      t,
      credential.id,
      device.assert(elsewhere.challenge, { origin: 'http://localhost:3000' }),
      elsewhere.requestId,
    );
    expectUnauthorized(
      refused,
      'passkey origin http://localhost:3000 is not on the relying party shop.localhost of the registration',
    );
  });

  it('refuses a registration challenge that was already used, on any wallet of the platform', async () => {
    const first = await emptyWallet(t);
    const second = await emptyWallet(t);
    const challengeText = registrationChallenge();
    const used = await t.api('POST', '/auth/credentials', {
      body: passkeyBody(first, new SoftAuthenticator(), challengeText),
    });
    expect(used.status, used.text).toBe(201);
    const reused = await t.api('POST', '/auth/credentials', {
      body: passkeyBody(second, new SoftAuthenticator(), challengeText),
    });
    expectUnauthorized(reused, 'this registration challenge was already used');
    expect(await credentialsOf(t, second)).toEqual([]);
  });

  it('lets one of two simultaneous registrations with the same challenge through; the other is refused (401)', async () => {
    const wallets = await Promise.all([emptyWallet(t), emptyWallet(t), emptyWallet(t)]);
    const challengeText = registrationChallenge();
    const replies = await Promise.all(
      wallets.map((accountId) =>
        t.api('POST', '/auth/credentials', { body: passkeyBody(accountId, new SoftAuthenticator(), challengeText) }),
      ),
    );
    expect(replies.map((r) => r.status).sort(), replies.map((r) => r.text).join('\n')).toEqual([201, 401, 401]);
    for (const reply of replies.filter((r) => r.status === 401)) {
      expectUnauthorized(reply, 'this registration challenge was already used');
    }
  });

  it('refuses a passkey whose credentialId is already on the wallet (400 PASSKEY_CREDENTIAL_ALREADY_EXISTS)', async () => {
    const accountId = await emptyWallet(t);
    const device = new SoftAuthenticator();
    await registerFirst(t, accountId, device);
    const reply = await t.api('POST', '/auth/credentials', {
      body: passkeyBody(accountId, device, registrationChallenge()),
    });
    expect(reply.status, reply.text).toBe(400);
    expect(reply.body).toMatchObject({
      status: 400,
      code: 'PASSKEY_CREDENTIAL_ALREADY_EXISTS',
      details: { errors: [{ field: 'attestation.credentialId', message: 'is already registered on this account' }] },
    });
    expect(await credentialsOf(t, accountId)).toHaveLength(1);
  });

  it("refuses a nickname outside 1 to 100 letters, digits, spaces and . _ - ' ( ) (400 naming nickname)", async () => {
    const accountId = await emptyWallet(t);
    for (const nickname of ['   ', 'Work <laptop>', 'key;drop', 'x'.repeat(101), '']) {
      const reply = await t.api('POST', '/auth/credentials', {
        body: passkeyBody(accountId, new SoftAuthenticator(), registrationChallenge(), nickname),
      });
      expectInvalidField(reply, 'nickname');
    }
    const accepted = await t.api('POST', '/auth/credentials', {
      body: passkeyBody(accountId, new SoftAuthenticator(), registrationChallenge(), "Zoë's Touch-ID_2 (v1.0)"),
    });
    expect(accepted.status, accepted.text).toBe(201);
    expect(accepted.body.nickname).toBe("Zoë's Touch-ID_2 (v1.0)");
  });
});

describe('challengeAuthCredential and verifyAuthCredential (PASSKEY)', () => {
  let t: TestApp;
  let accountId: string;
  let credential: { id: string; credentialId: string; nickname: string };
  let device: SoftAuthenticator;
  /** A passkey of another wallet on the same platform. */
  let other: { id: string; device: SoftAuthenticator };

  beforeAll(async () => {
    t = await build();
    accountId = await emptyWallet(t);
    device = new SoftAuthenticator();
    credential = await registerFirst(t, accountId, device, 'Desk key');
    const otherDevice = new SoftAuthenticator();
    other = { id: (await registerFirst(t, await emptyWallet(t), otherDevice)).id, device: otherDevice };
  });

  /** A refused verify: 401 with `reason` (and `code`), and no new session. */
  async function expectRefused(send: () => Promise<Reply>, reason: string, code = 'UNAUTHORIZED') {
    const before = await sessionIds(t, accountId);
    expectUnauthorized(await send(), reason, code);
    expect(await sessionIds(t, accountId)).toEqual(before);
  }

  it('issues a challenge bound to the client key: lowercase hex, a Request id, five minutes', async () => {
    const key = clientKey();
    const reply = await t.api('POST', `/auth/credentials/${credential.id}/challenge`, {
      body: { clientPublicKey: key.publicKey },
    });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({
      id: credential.id,
      accountId,
      type: 'PASSKEY',
      credentialId: device.credentialId,
      nickname: 'Desk key',
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      challenge: expect.stringMatching(/^[0-9a-f]{64}$/),
      requestId: expect.stringMatching(/^Request:/),
      expiresAt: expect.stringMatching(ISO),
    });
    const ttl = Date.parse(reply.body.expiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(290_000);
    expect(ttl).toBeLessThanOrEqual(300_000);
    const again = await challenge(t, credential.id, key.publicKey);
    expect(again.challenge).not.toBe(reply.body.challenge);
    expect(again.requestId).not.toBe(reply.body.requestId);
  });

  it('logs in end to end; the client key is the session key and signs a wallet action', async () => {
    const key = clientKey();
    const issued = await challenge(t, credential.id, key.publicKey);
    const reply = await verify(t, credential.id, device.assert(issued.challenge), issued.requestId);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toEqual({
      id: expect.stringMatching(/^Session:/),
      accountId,
      type: 'PASSKEY',
      credentialId: device.credentialId,
      nickname: 'Desk key',
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      expiresAt: expect.stringMatching(ISO),
    });
    expect(Date.parse(reply.body.expiresAt) - Date.parse(reply.body.createdAt)).toBe(15 * 60_000);
    expect(await sessionIds(t, accountId)).toContain(reply.body.id);
    await expectKeySigns(t, accountId, key);
    // A key that opened no session does not sign.
    const challengeOnly = clientKey();
    await challenge(t, credential.id, challengeOnly.publicKey);
    const { reply: refused } = await signed(t, 'PATCH', `/internal-accounts/${accountId}`, challengeOnly, {
      privateEnabled: false,
    });
    expectUnauthorized(
      refused,
      'the stamp is not signed by the key of a live session of this wallet',
      'WALLET_SIGNATURE_INVALID',
    );
  });

  it('refuses an assertion made for another challenge', async () => {
    const issued = await challenge(t, credential.id, clientKey().publicKey);
    const another = await challenge(t, credential.id, clientKey().publicKey);
    await expectRefused(
      () => verify(t, credential.id, device.assert(another.challenge), issued.requestId),
      'passkey challenge does not match',
    );
  });

  it('refuses an assertion signed by another key', async () => {
    const issued = await challenge(t, credential.id, clientKey().publicKey);
    await expectRefused(
      () => verify(t, credential.id, device.assert(issued.challenge, { signWith: 'other' }), issued.requestId),
      'passkey signature does not verify',
    );
  });

  it('refuses an assertion without the user-present flag', async () => {
    const issued = await challenge(t, credential.id, clientKey().publicKey);
    await expectRefused(
      () => verify(t, credential.id, device.assert(issued.challenge, { userPresent: false }), issued.requestId),
      'user presence flag not set',
    );
  });

  it('refuses an assertion made on an origin off the relying party of the registration', async () => {
    const issued = await challenge(t, credential.id, clientKey().publicKey);
    await expectRefused(
      () =>
        verify(
          t,
          credential.id,
          device.assert(issued.challenge, { origin: 'https://attacker.example.net' }),
          issued.requestId,
        ),
      'passkey origin https://attacker.example.net is not on the relying party wallet.example.com of the registration',
    );
  });

  it('logs in from another port of the registration host (the same relying party)', async () => {
    const key = clientKey();
    const issued = await challenge(t, credential.id, key.publicKey);
    const assertion = device.assert(issued.challenge, { origin: 'https://wallet.example.com:8443' });
    const reply = await verify(t, credential.id, assertion, issued.requestId);
    expect(reply.status, reply.text).toBe(200);
    expect(await sessionIds(t, accountId)).toContain(reply.body.id);
  });

  it('refuses a replayed assertion and a counter that did not increase', async () => {
    const key = clientKey();
    const issued = await challenge(t, credential.id, key.publicKey);
    const assertion = device.assert(issued.challenge);
    const first = await verify(t, credential.id, assertion, issued.requestId);
    expect(first.status, first.text).toBe(200);
    // The same assertion again, with its own Request-Id: used.
    await expectRefused(
      () => verify(t, credential.id, assertion, issued.requestId),
      'this Request-Id was already used',
    );
    // The same assertion against a fresh challenge: bound to the old one.
    const fresh = await challenge(t, credential.id, key.publicKey);
    await expectRefused(() => verify(t, credential.id, assertion, fresh.requestId), 'passkey challenge does not match');
    // A fresh assertion whose counter equals the last one seen, then one below it.
    const lastCounter = Buffer.from(assertion.authenticatorData, 'base64url').readUInt32BE(33);
    await expectRefused(
      () => verify(t, credential.id, device.assert(fresh.challenge, { counter: lastCounter }), fresh.requestId),
      'signature counter did not increase',
    );
    await expectRefused(
      () => verify(t, credential.id, device.assert(fresh.challenge, { counter: 1 }), fresh.requestId),
      'signature counter did not increase',
    );
    // The refusals left the challenge usable: a proper assertion still logs in.
    const ok = await verify(t, credential.id, device.assert(fresh.challenge), fresh.requestId);
    expect(ok.status, ok.text).toBe(200);
  });

  it("refuses another passkey's assertion and another credential's Request-Id", async () => {
    const issued = await challenge(t, credential.id, clientKey().publicKey);
    // The other wallet's authenticator answers this credential's challenge.
    await expectRefused(
      () => verify(t, credential.id, other.device.assert(issued.challenge), issued.requestId),
      'credential id does not match',
    );
    // This device's assertion sent with another credential id in it.
    const renamed = { ...device.assert(issued.challenge), credentialId: other.device.credentialId };
    await expectRefused(() => verify(t, credential.id, renamed, issued.requestId), 'credential id does not match');
    // This credential's Request-Id sent to the other credential's verify.
    const otherBefore = await sessionIds(t, accountId);
    const crossed = await verify(t, other.id, other.device.assert(issued.challenge), issued.requestId);
    expectUnauthorized(crossed, 'Request-Id does not match a pending challenge of this request');
    expect(await sessionIds(t, accountId)).toEqual(otherBefore);
  });

  it('refuses a verify without Request-Id (401 REQUEST_ID_MISSING) and with an unknown one', async () => {
    const issued = await challenge(t, credential.id, clientKey().publicKey);
    await expectRefused(
      () => verify(t, credential.id, device.assert(issued.challenge)),
      'a passkey login needs the Request-Id of POST /auth/credentials/{id}/challenge',
      'REQUEST_ID_MISSING',
    );
    await expectRefused(
      () => verify(t, credential.id, device.assert(issued.challenge), 'Request:00000000-0000-4000-8000-000000000000'),
      'Request-Id does not match a pending challenge of this request',
    );
  });

  it('refuses a Request-Id used twice', async () => {
    const issued = await challenge(t, credential.id, clientKey().publicKey);
    const first = await verify(t, credential.id, device.assert(issued.challenge), issued.requestId);
    expect(first.status, first.text).toBe(200);
    await expectRefused(
      () => verify(t, credential.id, device.assert(issued.challenge), issued.requestId),
      'this Request-Id was already used',
    );
  });

  it('accepts the legacy assertion signature without WebAuthn, still checking credential id and Request-Id', async () => {
    const legacy = (credentialId: string) => ({
      credentialId,
      clientDataJson: 'e30',
      authenticatorData: 'AA',
      signature: LEGACY_SIGNATURE,
    });
    const key = clientKey();
    const issued = await challenge(t, credential.id, key.publicKey);
    await expectRefused(
      () => verify(t, credential.id, legacy(other.device.credentialId), issued.requestId),
      'credential id does not match',
    );
    await expectRefused(
      () => verify(t, credential.id, legacy(device.credentialId)),
      'a passkey login needs the Request-Id of POST /auth/credentials/{id}/challenge',
      'REQUEST_ID_MISSING',
    );
    const otherIssued = await challenge(t, other.id, clientKey().publicKey);
    await expectRefused(
      () => verify(t, credential.id, legacy(device.credentialId), otherIssued.requestId),
      'Request-Id does not match a pending challenge of this request',
    );
    const reply = await verify(t, credential.id, legacy(device.credentialId), issued.requestId);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({ accountId, type: 'PASSKEY', credentialId: device.credentialId });
    expect(reply.body.encryptedSessionSigningKey).toBeUndefined();
    await expectKeySigns(t, accountId, key, false);
    await expectRefused(
      () => verify(t, credential.id, legacy(device.credentialId), issued.requestId),
      'this Request-Id was already used',
    );
    // The legacy login read no counter and stored none: the authenticator's next assertion logs in.
    await passkeyLogin(t, credential.id, device);
  });

  it('opens one session when two assertions race for the same Request-Id', async () => {
    const issued = await challenge(t, credential.id, clientKey().publicKey);
    const before = await sessionIds(t, accountId);
    const assertions = [device.assert(issued.challenge), device.assert(issued.challenge)];
    const replies = await Promise.all(assertions.map((a) => verify(t, credential.id, a, issued.requestId)));
    expect(replies.map((r) => r.status).sort(), replies.map((r) => r.text).join('\n')).toEqual([200, 401]);
    expectUnauthorized(replies.find((r) => r.status === 401)!, 'this Request-Id was already used');
    const after = await sessionIds(t, accountId);
    expect(after.filter((id) => !before.includes(id))).toEqual([replies.find((r) => r.status === 200)!.body.id]);
  });

  it('refuses a challenge without clientPublicKey or with a key that is not on P-256 (400)', async () => {
    const missing = await t.api('POST', `/auth/credentials/${credential.id}/challenge`, { body: {} });
    expectInvalidField(missing, 'clientPublicKey');
    const empty = await t.api('POST', `/auth/credentials/${credential.id}/challenge`);
    expectInvalidField(empty, 'clientPublicKey');
    const offCurve = await t.api('POST', `/auth/credentials/${credential.id}/challenge`, {
      body: { clientPublicKey: `02${'f'.repeat(64)}` },
    });
    expectInvalidField(offCurve, 'clientPublicKey');
  });

  it('answers 404 for a challenge or verify of an unknown credential', async () => {
    const id = 'AuthMethod:00000000-0000-4000-8000-000000000000';
    const challenged = await t.api('POST', `/auth/credentials/${id}/challenge`, {
      body: { clientPublicKey: clientKey().publicKey },
    });
    expect(challenged.status, challenged.text).toBe(404);
    const verified = await verify(t, id, device.assert('00'), 'Request:00000000-0000-4000-8000-000000000000');
    expect(verified.status, verified.text).toBe(404);
  });

  it('seals a session key to an uncompressed (legacy) client key; the opened key signs, the client key does not', async () => {
    const key = clientKey();
    const issued = await challenge(t, credential.id, key.publicKeyUncompressed);
    const reply = await verify(t, credential.id, device.assert(issued.challenge), issued.requestId);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.encryptedSessionSigningKey).toEqual(expect.any(String));
    const sessionKey = keyFromPrivate(decryptCredentialBundle(reply.body.encryptedSessionSigningKey, key.privateKey));
    expect(sessionKey.publicKey).not.toBe(key.publicKey);
    await expectKeySigns(t, accountId, sessionKey);
    const { reply: refused } = await signed(t, 'PATCH', `/internal-accounts/${accountId}`, key, {
      privateEnabled: false,
    });
    expect(refused.status, refused.text).toBe(401);
    expect(refused.body.code).toBe('WALLET_SIGNATURE_INVALID');
    // The list never shows the sealed key.
    const listed = await t.api('GET', `/auth/sessions?accountId=${accountId}`);
    const session = listed.body.data.find((s: { id: string }) => s.id === reply.body.id);
    expect(session).toBeDefined();
    expect(session.encryptedSessionSigningKey).toBeUndefined();
  });
});

describe('verifyAuthCredential (PASSKEY): challenge expiry', () => {
  it('accepts an assertion just before the challenge expires and refuses one after five minutes', async () => {
    const t = await build();
    const accountId = await emptyWallet(t);
    const device = new SoftAuthenticator();
    const credential = await registerFirst(t, accountId, device);
    const early = await challenge(t, credential.id, clientKey().publicKey);
    const late = await challenge(t, credential.id, clientKey().publicKey);
    await t.advanceClock(295);
    const inTime = await verify(t, credential.id, device.assert(early.challenge), early.requestId);
    expect(inTime.status, inTime.text).toBe(200);
    await t.advanceClock(6);
    const before = await sessionIds(t, accountId);
    const expired = await verify(t, credential.id, device.assert(late.challenge), late.requestId);
    expectUnauthorized(expired, 'the challenge of this Request-Id has expired');
    expect(await sessionIds(t, accountId)).toEqual(before);
  });
});
