import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type StoredPasskey, verifyPasskeyAssertion, verifyPasskeyRegistration } from '../../src/crypto/webauthn.js';
import { SoftAuthenticator } from '../fixtures/authenticator.js';

const registrationChallenge = () => randomBytes(32).toString('base64url');
const assertionChallenge = () => randomBytes(32).toString('hex');

async function registered(options?: {
  origin?: string;
}): Promise<{ device: SoftAuthenticator; passkey: StoredPasskey }> {
  const device = new SoftAuthenticator(options);
  const challenge = registrationChallenge();
  const result = await verifyPasskeyRegistration({ ...device.register(challenge), challenge });
  if (!result.ok) throw new Error(`registration failed: ${result.reason}`);
  return { device, passkey: result.value };
}

function tamper(text: string): string {
  const bytes = Buffer.from(text, 'base64url');
  bytes[bytes.length - 1]! ^= 0x01;
  return bytes.toString('base64url');
}

describe('verifyPasskeyRegistration', () => {
  it('accepts a none attestation and stores the credential', async () => {
    const device = new SoftAuthenticator();
    const challenge = registrationChallenge();
    const result = await verifyPasskeyRegistration({ ...device.register(challenge), challenge });
    expect(result).toEqual({
      ok: true,
      value: {
        credentialId: device.credentialId,
        publicKey: expect.any(String),
        counter: 0,
        transports: ['internal'],
        origin: 'https://wallet.example.com',
        rpId: 'wallet.example.com',
      },
    });
  });

  it('accepts http on localhost with a port, bound to the host', async () => {
    const { passkey } = await registered({ origin: 'http://localhost:5173' });
    expect(passkey.origin).toBe('http://localhost:5173');
    expect(passkey.rpId).toBe('localhost');
  });

  it('refuses another challenge', async () => {
    const device = new SoftAuthenticator();
    const result = await verifyPasskeyRegistration({
      ...device.register(registrationChallenge()),
      challenge: registrationChallenge(),
    });
    expect(result).toEqual({ ok: false, reason: 'passkey challenge does not match' });
  });

  it('accepts http on a subdomain of localhost, bound to its host', async () => {
    const { passkey } = await registered({ origin: 'http://wallet.localhost:3000' });
    expect(passkey).toMatchObject({ origin: 'http://wallet.localhost:3000', rpId: 'wallet.localhost' });
  });

  it('binds the credential to the parent domain the authenticator hashed, when the page named one', async () => {
    const device = new SoftAuthenticator({ origin: 'https://wallet.shop.example.com', rpId: 'shop.example.com' });
    const challenge = registrationChallenge();
    const result = await verifyPasskeyRegistration({ ...device.register(challenge), challenge });
    expect(result).toMatchObject({
      ok: true,
      value: { origin: 'https://wallet.shop.example.com', rpId: 'shop.example.com' },
    });
    const top = new SoftAuthenticator({ origin: 'https://wallet.shop.example.com', rpId: 'example.com' });
    const again = registrationChallenge();
    expect(await verifyPasskeyRegistration({ ...top.register(again), challenge: again })).toMatchObject({
      ok: true,
      value: { rpId: 'example.com' },
    });
  });

  it('refuses plain http off localhost', async () => {
    const device = new SoftAuthenticator({ origin: 'http://wallet.example.com' });
    const challenge = registrationChallenge();
    const result = await verifyPasskeyRegistration({ ...device.register(challenge), challenge });
    expect(result).toEqual({
      ok: false,
      reason: 'passkey origin http://wallet.example.com must be https, or http on localhost or a subdomain of it',
    });
  });

  it('takes an IP address for host by default (a software authenticator may sign for one), and refuses it when strict, as browsers do', async () => {
    const cases = [
      ['http://127.0.0.1:3000', 'http://localhost:3000'],
      ['http://[::1]:5173', 'http://localhost:5173'],
      ['https://192.168.1.20', 'https://localhost'],
    ];
    for (const [origin, instead] of cases) {
      const device = new SoftAuthenticator({ origin });
      const challenge = registrationChallenge();
      const taken = await verifyPasskeyRegistration({ ...device.register(challenge), challenge });
      expect(taken).toMatchObject({ ok: true, value: { origin, rpId: new URL(origin!).hostname } });
      const again = registrationChallenge();
      const strict = await verifyPasskeyRegistration({ ...device.register(again), challenge: again, strict: true });
      expect(strict).toEqual({
        ok: false,
        reason: `passkey origin ${origin} is an IP address, where browsers refuse passkeys (a SecurityError): serve the page from ${instead}`,
      });
    }
    // Plain http on an address other than loopback is refused either way.
    const lan = new SoftAuthenticator({ origin: 'http://192.168.1.20:3000' });
    const challenge = registrationChallenge();
    expect(await verifyPasskeyRegistration({ ...lan.register(challenge), challenge })).toMatchObject({ ok: false });
  });

  it("refuses an RP id that is neither the origin's host nor a parent domain of it", async () => {
    const device = new SoftAuthenticator();
    const challenge = registrationChallenge();
    const result = await verifyPasskeyRegistration({
      ...device.register(challenge, { origin: 'https://evil.example.net' }),
      challenge,
    });
    const reason = "passkey RP id is neither the origin's host nor a parent domain of it";
    expect(result).toEqual({ ok: false, reason });
    // A single label is no parent a browser lets a page name (a public suffix, or localhost).
    for (const [origin, rpId] of [
      ['https://wallet.example.com', 'com'],
      ['http://wallet.localhost:3000', 'localhost'],
    ]) {
      const scoped = new SoftAuthenticator({ origin, rpId });
      const again = registrationChallenge();
      expect(await verifyPasskeyRegistration({ ...scoped.register(again), challenge: again })).toEqual({
        ok: false,
        reason,
      });
    }
  });

  it('expects the RP id it is given (SCA), on an origin of that relying party', async () => {
    const device = new SoftAuthenticator({ origin: 'https://pay.example.com', rpId: 'example.com' });
    const challenge = registrationChallenge();
    const attestation = device.register(challenge);
    expect(await verifyPasskeyRegistration({ ...attestation, challenge, rpId: 'example.com' })).toMatchObject({
      ok: true,
      value: { origin: 'https://pay.example.com', rpId: 'example.com' },
    });
    expect(await verifyPasskeyRegistration({ ...attestation, challenge, rpId: 'pay.example.com' })).toEqual({
      ok: false,
      reason: 'passkey RP id is not pay.example.com, the relying party of the creation options',
    });
    expect(await verifyPasskeyRegistration({ ...attestation, challenge, rpId: 'example.org' })).toEqual({
      ok: false,
      reason: 'passkey origin https://pay.example.com is not on the relying party example.org',
    });
  });

  it('refuses an attestation without the user presence flag', async () => {
    const device = new SoftAuthenticator();
    const challenge = registrationChallenge();
    const result = await verifyPasskeyRegistration({
      ...device.register(challenge, { userPresent: false }),
      challenge,
    });
    expect(result).toEqual({ ok: false, reason: 'user presence flag not set' });
  });

  it('refuses a credential id other than the one in the attestation', async () => {
    const device = new SoftAuthenticator();
    const challenge = registrationChallenge();
    const result = await verifyPasskeyRegistration({
      ...device.register(challenge),
      credentialId: randomBytes(32).toString('base64url'),
      challenge,
    });
    expect(result).toEqual({ ok: false, reason: 'credential id does not match' });
  });

  it('refuses malformed input without throwing', async () => {
    const device = new SoftAuthenticator();
    const challenge = registrationChallenge();
    const good = device.register(challenge);
    expect(await verifyPasskeyRegistration({ ...good, clientDataJson: '*** not base64 ***', challenge })).toEqual({
      ok: false,
      reason: 'passkey clientDataJSON is not valid base64url',
    });
    expect(await verifyPasskeyRegistration({ ...good, attestationObject: 'a', challenge })).toEqual({
      ok: false,
      reason: 'passkey attestationObject is not valid base64url',
    });
    expect(
      await verifyPasskeyRegistration({
        ...good,
        clientDataJson: Buffer.from('{oops').toString('base64url'),
        challenge,
      }),
    ).toEqual({ ok: false, reason: 'passkey clientDataJSON is not valid client data' });
    const notCbor = await verifyPasskeyRegistration({
      ...good,
      attestationObject: Buffer.from('not cbor at all').toString('base64url'),
      challenge,
    });
    expect(notCbor).toEqual({ ok: false, reason: 'passkey attestationObject is not a valid attestation' });
    const truncated = await verifyPasskeyRegistration({
      ...good,
      attestationObject: Buffer.from(good.attestationObject, 'base64url').subarray(0, 60).toString('base64url'),
      challenge,
    });
    expect(truncated).toEqual({ ok: false, reason: expect.any(String) });
  });
});

describe('verifyPasskeyAssertion', () => {
  it('accepts a signed assertion and the counter advances', async () => {
    const { device, passkey } = await registered();
    const first = assertionChallenge();
    expect(await verifyPasskeyAssertion(device.assert(first), passkey, first)).toEqual({
      ok: true,
      value: { newCounter: 1 },
    });
    const second = assertionChallenge();
    const stored = { ...passkey, counter: 1 };
    expect(await verifyPasskeyAssertion(device.assert(second), stored, second)).toEqual({
      ok: true,
      value: { newCounter: 2 },
    });
  });

  it('accepts an authenticator that keeps its counter at zero', async () => {
    const { device, passkey } = await registered();
    const challenge = assertionChallenge();
    expect(await verifyPasskeyAssertion(device.assert(challenge, { counter: 0 }), passkey, challenge)).toEqual({
      ok: true,
      value: { newCounter: 0 },
    });
  });

  it('refuses another challenge', async () => {
    const { device, passkey } = await registered();
    const result = await verifyPasskeyAssertion(device.assert(assertionChallenge()), passkey, assertionChallenge());
    expect(result).toEqual({ ok: false, reason: 'passkey challenge does not match' });
  });

  it('accepts another origin of the relying party: another port, another subdomain of a parent RP id', async () => {
    const { device, passkey } = await registered({ origin: 'http://localhost:3000' });
    const challenge = assertionChallenge();
    expect(
      await verifyPasskeyAssertion(device.assert(challenge, { origin: 'http://localhost:3001' }), passkey, challenge),
    ).toEqual({ ok: true, value: { newCounter: 1 } });
    const shop = new SoftAuthenticator({ origin: 'https://wallet.shop.example.com', rpId: 'shop.example.com' });
    const registration = registrationChallenge();
    const made = await verifyPasskeyRegistration({ ...shop.register(registration), challenge: registration });
    if (!made.ok) throw new Error(made.reason);
    const next = assertionChallenge();
    expect(
      await verifyPasskeyAssertion(shop.assert(next, { origin: 'https://pay.shop.example.com' }), made.value, next),
    ).toEqual({ ok: true, value: { newCounter: 1 } });
  });

  it('refuses an origin off the relying party of the registration, or an IP address', async () => {
    const { device, passkey } = await registered();
    const challenge = assertionChallenge();
    const result = await verifyPasskeyAssertion(
      device.assert(challenge, { origin: 'https://evil.example.net' }),
      passkey,
      challenge,
    );
    expect(result).toEqual({
      ok: false,
      reason:
        'passkey origin https://evil.example.net is not on the relying party wallet.example.com of the registration',
    });
    // A parent of the RP id is off it too.
    const parent = await verifyPasskeyAssertion(
      device.assert(challenge, { origin: 'https://example.com' }),
      passkey,
      challenge,
    );
    expect(parent).toMatchObject({ ok: false, reason: expect.stringMatching(/is not on the relying party/) });
    const local = await registered({ origin: 'http://localhost:3000' });
    const ip = await verifyPasskeyAssertion(
      local.device.assert(challenge, { origin: 'http://127.0.0.1:3000' }),
      local.passkey,
      challenge,
    );
    expect(ip).toEqual({
      ok: false,
      reason: 'passkey origin http://127.0.0.1:3000 is not on the relying party localhost of the registration',
    });
    const strictIp = await verifyPasskeyAssertion(
      local.device.assert(challenge, { origin: 'http://127.0.0.1:3000' }),
      local.passkey,
      challenge,
      { strict: true },
    );
    expect(strictIp).toEqual({
      ok: false,
      reason:
        'passkey origin http://127.0.0.1:3000 is an IP address, where browsers refuse passkeys (a SecurityError): serve the page from http://localhost:3000',
    });
  });

  it('refuses an origin outside the list it is given (SCA)', async () => {
    const { device, passkey } = await registered({ origin: 'http://localhost:3000' });
    const challenge = assertionChallenge();
    const assertion = device.assert(challenge, { origin: 'http://localhost:3001' });
    expect(await verifyPasskeyAssertion(assertion, passkey, challenge, { origins: ['http://localhost:3000'] })).toEqual(
      { ok: false, reason: 'passkey origin http://localhost:3001 is not http://localhost:3000' },
    );
    expect(
      await verifyPasskeyAssertion(assertion, passkey, challenge, {
        origins: ['http://localhost:3000', 'http://localhost:3001'],
      }),
    ).toEqual({ ok: true, value: { newCounter: 1 } });
  });

  it('refuses an RP id other than the registration', async () => {
    const { passkey } = await registered();
    const device = new SoftAuthenticator({ rpId: 'example.com' });
    const challenge = assertionChallenge();
    const stolen = { ...passkey, credentialId: device.credentialId };
    const result = await verifyPasskeyAssertion(device.assert(challenge), stolen, challenge);
    expect(result).toEqual({ ok: false, reason: 'passkey RP id does not match the registration' });
  });

  it('refuses an assertion without the user presence flag', async () => {
    const { device, passkey } = await registered();
    const challenge = assertionChallenge();
    const result = await verifyPasskeyAssertion(device.assert(challenge, { userPresent: false }), passkey, challenge);
    expect(result).toEqual({ ok: false, reason: 'user presence flag not set' });
  });

  it('refuses a signature by another key', async () => {
    const { device, passkey } = await registered();
    const challenge = assertionChallenge();
    const result = await verifyPasskeyAssertion(device.assert(challenge, { signWith: 'other' }), passkey, challenge);
    expect(result).toEqual({ ok: false, reason: 'passkey signature does not verify' });
  });

  it('refuses authenticator data changed after signing', async () => {
    const { device, passkey } = await registered();
    const challenge = assertionChallenge();
    const assertion = device.assert(challenge);
    const result = await verifyPasskeyAssertion(
      { ...assertion, authenticatorData: tamper(assertion.authenticatorData) },
      passkey,
      challenge,
    );
    expect(result).toEqual({ ok: false, reason: 'passkey signature does not verify' });
  });

  it('refuses a replayed assertion and a counter that goes back', async () => {
    const { device, passkey } = await registered();
    const challenge = assertionChallenge();
    const assertion = device.assert(challenge);
    const first = await verifyPasskeyAssertion(assertion, passkey, challenge);
    expect(first).toEqual({ ok: true, value: { newCounter: 1 } });
    const after = { ...passkey, counter: 1 };
    expect(await verifyPasskeyAssertion(assertion, after, challenge)).toEqual({
      ok: false,
      reason: 'signature counter did not increase',
    });
    const next = assertionChallenge();
    expect(await verifyPasskeyAssertion(device.assert(next, { counter: 0 }), after, next)).toEqual({
      ok: false,
      reason: 'signature counter did not increase',
    });
  });

  it('refuses client data of a registration', async () => {
    const { device, passkey } = await registered();
    const challenge = assertionChallenge();
    const { clientDataJson } = device.register(Buffer.from(challenge, 'utf8').toString('base64url'));
    const result = await verifyPasskeyAssertion({ ...device.assert(challenge), clientDataJson }, passkey, challenge);
    expect(result).toEqual({ ok: false, reason: 'passkey type is not webauthn.get' });
  });

  it('refuses a credential id other than the stored one', async () => {
    const { device, passkey } = await registered();
    const challenge = assertionChallenge();
    const result = await verifyPasskeyAssertion(
      { ...device.assert(challenge), credentialId: randomBytes(32).toString('base64url') },
      passkey,
      challenge,
    );
    expect(result).toEqual({ ok: false, reason: 'credential id does not match' });
  });

  it('refuses malformed input without throwing', async () => {
    const { device, passkey } = await registered();
    const challenge = assertionChallenge();
    const good = device.assert(challenge);
    expect(await verifyPasskeyAssertion({ ...good, signature: '!!!' }, passkey, challenge)).toEqual({
      ok: false,
      reason: 'passkey signature is not valid base64url',
    });
    expect(await verifyPasskeyAssertion({ ...good, authenticatorData: 'abc$' }, passkey, challenge)).toEqual({
      ok: false,
      reason: 'passkey authenticatorData is not valid base64url',
    });
    const notDer = await verifyPasskeyAssertion(
      { ...good, signature: Buffer.from('not a DER signature').toString('base64url') },
      passkey,
      challenge,
    );
    expect(notDer).toEqual({ ok: false, reason: 'passkey signature does not verify' });
    const shortAuthData = await verifyPasskeyAssertion(
      { ...good, authenticatorData: Buffer.from('short').toString('base64url') },
      passkey,
      challenge,
    );
    expect(shortAuthData).toEqual({ ok: false, reason: 'Authenticator data was 5 bytes, expected at least 37 bytes' });
    const badKey = await verifyPasskeyAssertion(
      good,
      { ...passkey, counter: 0, publicKey: Buffer.from('not a key').toString('base64url') },
      challenge,
    );
    expect(badKey).toEqual({ ok: false, reason: 'stored passkey public key is not a COSE key' });
  });
});
