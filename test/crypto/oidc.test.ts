import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  checkOidcClaims,
  decodeOidcToken,
  OIDC_ISSUERS,
  type OidcIdentity,
  oidcNonceFor,
} from '../../src/crypto/oidc.js';
import { GOOGLE_CLIENT_ID, GOOGLE_SUBJECT, googleClaims, mintOidcToken } from '../fixtures/oidc.js';

const NOW_MS = Date.UTC(2025, 5, 1, 12, 0, 0);
const NOW_S = NOW_MS / 1000;

function b64url(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}

const HEADER = b64url('{"alg":"RS256","typ":"JWT"}');
const PAYLOAD = b64url('{"sub":"1"}');

function reasonOf(payload: Record<string, unknown>, options?: Parameters<typeof checkOidcClaims>[2]): string | null {
  const check = checkOidcClaims(payload, NOW_MS, options);
  return check.ok ? null : check.reason;
}

describe('decodeOidcToken', () => {
  it('decodes a minted token into its header and payload', () => {
    const claims = googleClaims(NOW_MS);
    const decoded = decodeOidcToken(mintOidcToken(claims));
    expect(decoded).toEqual({ header: { alg: 'RS256', typ: 'JWT', kid: 'test' }, payload: claims });
  });

  it('accepts any signature segment, including an empty one', () => {
    for (const signature of ['', 'x', 'not-a-real-signature_at_all', 'c2lnbmF0dXJl']) {
      expect(decodeOidcToken(mintOidcToken({ sub: '1' }, { signature }))?.payload).toEqual({ sub: '1' });
    }
  });

  it('keeps a custom header', () => {
    expect(decodeOidcToken(mintOidcToken({}, { header: { alg: 'ES256', kid: 'k2' } }))?.header).toEqual({
      alg: 'ES256',
      kid: 'k2',
    });
  });

  it("is null for the literal 'sandbox-valid-oidc-token'", () => {
    expect(decodeOidcToken('sandbox-valid-oidc-token')).toBeNull();
  });

  it('is null unless there are exactly three segments', () => {
    expect(decodeOidcToken('')).toBeNull();
    expect(decodeOidcToken(`${HEADER}.${PAYLOAD}`)).toBeNull();
    expect(decodeOidcToken(`${HEADER}.${PAYLOAD}.sig.extra`)).toBeNull();
    expect(decodeOidcToken('..')).toBeNull();
  });

  it('is null when a segment is not base64url', () => {
    const standardBase64 = Buffer.from('{"a":"??>>"}', 'utf8').toString('base64');
    expect(standardBase64).toMatch(/[+/]/);
    expect(decodeOidcToken(`${HEADER}.${standardBase64}.sig`)).toBeNull();
    expect(decodeOidcToken(`${HEADER}.${PAYLOAD}=.sig`)).toBeNull();
    expect(decodeOidcToken(`${HEADER}.${PAYLOAD}.si+g`)).toBeNull();
    expect(decodeOidcToken(`${HEADER}.${PAYLOAD}.sig=`)).toBeNull();
    expect(decodeOidcToken(`${HEADER} .${PAYLOAD}.sig`)).toBeNull();
    expect(decodeOidcToken(`${HEADER}.${PAYLOAD}.sig\n`)).toBeNull();
    // 4n+1 characters encode no whole byte.
    expect(decodeOidcToken(`${HEADER}.${PAYLOAD}A.sig`)).toBeNull();
  });

  it('is null when the header or payload is empty or not JSON', () => {
    expect(decodeOidcToken(`.${PAYLOAD}.sig`)).toBeNull();
    expect(decodeOidcToken(`${HEADER}..sig`)).toBeNull();
    expect(decodeOidcToken(`${HEADER}.${b64url('not json')}.sig`)).toBeNull();
    expect(decodeOidcToken(`${b64url('{"alg":')}.${PAYLOAD}.sig`)).toBeNull();
    expect(decodeOidcToken(`${HEADER}.${Buffer.from([0x7b, 0xff, 0x7d]).toString('base64url')}.sig`)).toBeNull();
  });

  it('is null when the header or payload is JSON but not an object', () => {
    for (const json of ['[]', '[{"sub":"1"}]', 'null', '"text"', '42', 'true']) {
      expect(decodeOidcToken(`${HEADER}.${b64url(json)}.sig`)).toBeNull();
      expect(decodeOidcToken(`${b64url(json)}.${PAYLOAD}.sig`)).toBeNull();
    }
  });
});

describe('checkOidcClaims', () => {
  it('accepts a fresh Google token and returns its identity', () => {
    expect(checkOidcClaims(googleClaims(NOW_MS), NOW_MS)).toEqual({
      ok: true,
      identity: {
        iss: 'https://accounts.google.com',
        aud: GOOGLE_CLIENT_ID,
        sub: GOOGLE_SUBJECT,
        email: 'ada.lovelace@example.com',
      },
    });
  });

  it('accepts every listed issuer', () => {
    expect(OIDC_ISSUERS).toEqual(['https://accounts.google.com', 'accounts.google.com', 'https://appleid.apple.com']);
    for (const iss of OIDC_ISSUERS) {
      const check = checkOidcClaims(googleClaims(NOW_MS, { iss }), NOW_MS);
      expect(check.ok && check.identity.iss).toBe(iss);
    }
  });

  it('refuses a missing or unlisted issuer', () => {
    expect(reasonOf(googleClaims(NOW_MS, { iss: undefined }))).toBe('token issuer missing');
    for (const iss of [
      'https://evil.example.com',
      'https://accounts.google.com/',
      'HTTPS://ACCOUNTS.GOOGLE.COM',
      '',
      7,
    ]) {
      expect(reasonOf(googleClaims(NOW_MS, { iss }))).toBe('unsupported token issuer');
    }
  });

  it('takes the audience from a string or a one-element array', () => {
    const check = checkOidcClaims(googleClaims(NOW_MS, { aud: [GOOGLE_CLIENT_ID] }), NOW_MS);
    expect(check.ok && check.identity.aud).toBe(GOOGLE_CLIENT_ID);
  });

  it('refuses a missing, empty or multi-valued audience', () => {
    for (const aud of [undefined, '', [], [''], [7], 7, { client: 'x' }]) {
      expect(reasonOf(googleClaims(NOW_MS, { aud }))).toBe('token audience missing');
    }
    expect(reasonOf(googleClaims(NOW_MS, { aud: [GOOGLE_CLIENT_ID, 'other'] }))).toBe(
      'token audience has more than one value',
    );
  });

  it('refuses a missing or empty subject', () => {
    for (const sub of [undefined, '', 12345, null]) {
      expect(reasonOf(googleClaims(NOW_MS, { sub }))).toBe('token subject missing');
    }
  });

  it('requires iat to be a number', () => {
    for (const iat of [undefined, String(NOW_S), null]) {
      expect(reasonOf(googleClaims(NOW_MS, { iat }))).toBe('token iat is not a number');
    }
  });

  it('accepts an iat exactly 65 s old and refuses one 66 s old', () => {
    expect(reasonOf(googleClaims(NOW_MS, { iat: NOW_S - 65 }))).toBeNull();
    expect(reasonOf(googleClaims(NOW_MS, { iat: NOW_S - 66 }))).toBe('token issued more than 60 seconds ago');
  });

  it('accepts an iat 5 s ahead and refuses one 6 s ahead', () => {
    expect(reasonOf(googleClaims(NOW_MS, { iat: NOW_S + 5 }))).toBeNull();
    expect(reasonOf(googleClaims(NOW_MS, { iat: NOW_S + 6 }))).toBe('token issued in the future');
  });

  it('compares iat with the millisecond clock', () => {
    // 65.001 s old at this instant.
    expect(checkOidcClaims(googleClaims(NOW_MS, { iat: NOW_S - 65 }), NOW_MS + 1)).toEqual({
      ok: false,
      reason: 'token issued more than 60 seconds ago',
    });
  });

  it('requires exp to be a number later than now', () => {
    for (const exp of [undefined, String(NOW_S + 3600), null]) {
      expect(reasonOf(googleClaims(NOW_MS, { exp }))).toBe('token exp is not a number');
    }
    expect(reasonOf(googleClaims(NOW_MS, { exp: NOW_S }))).toBe('token expired');
    expect(reasonOf(googleClaims(NOW_MS, { exp: NOW_S - 1 }))).toBe('token expired');
    expect(reasonOf(googleClaims(NOW_MS, { exp: NOW_S + 1 }))).toBeNull();
    expect(checkOidcClaims(googleClaims(NOW_MS, { exp: NOW_S + 1 }), NOW_MS + 1000).ok).toBe(false);
  });

  it('checks the nonce only when one is expected', () => {
    const clientPublicKey = '04a1b2c3d4e5f60718293a4b5c6d7e8f';
    const nonce = oidcNonceFor(clientPublicKey);
    expect(reasonOf(googleClaims(NOW_MS, { nonce }), { expectedNonce: nonce })).toBeNull();
    expect(reasonOf(googleClaims(NOW_MS), { expectedNonce: nonce })).toBe('token nonce missing');
    expect(reasonOf(googleClaims(NOW_MS, { nonce: clientPublicKey }), { expectedNonce: nonce })).toBe(
      'token nonce does not match sha256 of clientPublicKey',
    );
    expect(reasonOf(googleClaims(NOW_MS, { nonce: nonce.toUpperCase() }), { expectedNonce: nonce })).toBe(
      'token nonce does not match sha256 of clientPublicKey',
    );
    expect(reasonOf(googleClaims(NOW_MS, { nonce: 'anything' }))).toBeNull();
  });

  it('requires iss, aud and sub to equal the registered identity exactly', () => {
    const registered: OidcIdentity = { iss: 'https://accounts.google.com', aud: GOOGLE_CLIENT_ID, sub: GOOGLE_SUBJECT };
    expect(reasonOf(googleClaims(NOW_MS), { registered })).toBeNull();
    expect(reasonOf(googleClaims(NOW_MS, { aud: [GOOGLE_CLIENT_ID] }), { registered })).toBeNull();
    // A different email is not a different identity.
    expect(reasonOf(googleClaims(NOW_MS, { email: 'other@example.com' }), { registered })).toBeNull();
    const mismatches = [
      { iss: 'accounts.google.com' },
      { aud: '999999999999.apps.googleusercontent.com' },
      { sub: '110248495921238986421' },
    ];
    for (const override of mismatches) {
      expect(reasonOf(googleClaims(NOW_MS, override), { registered })).toBe(
        'token identity does not match the registered credential',
      );
    }
  });

  it('includes the email only when it is a string', () => {
    const without = checkOidcClaims(googleClaims(NOW_MS, { email: undefined }), NOW_MS);
    expect(without.ok && 'email' in without.identity).toBe(false);
    const numeric = checkOidcClaims(googleClaims(NOW_MS, { email: 42 }), NOW_MS);
    expect(numeric.ok && 'email' in numeric.identity).toBe(false);
  });

  it('checks the claims of a decoded token', () => {
    const decoded = decodeOidcToken(mintOidcToken(googleClaims(NOW_MS - 30_000)));
    expect(decoded).not.toBeNull();
    expect(checkOidcClaims(decoded!.payload, NOW_MS).ok).toBe(true);
  });
});

describe('oidcNonceFor', () => {
  it('is the sha256 hex of the exact UTF-8 string', () => {
    expect(oidcNonceFor('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(oidcNonceFor('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const key = ' 0xKey-é ';
    expect(oidcNonceFor(key)).toBe(createHash('sha256').update(Buffer.from(key, 'utf8')).digest('hex'));
    expect(oidcNonceFor(key)).not.toBe(oidcNonceFor(key.trim()));
  });
});
