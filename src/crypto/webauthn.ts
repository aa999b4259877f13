// Passkey (WebAuthn) checks for embedded-wallet credentials. The protocol work (client data,
// authenticator data, rpIdHash, attestation statements, COSE keys, signatures, counters) is
// done by @simplewebauthn/server; this module chooses what to expect, adds the checks the
// library leaves to its caller (origin shape, credential ids), never throws, and turns the
// library's errors into short reasons.

import { onFirstUse } from '../lazy.js';

const simplewebauthn = onFirstUse<typeof import('@simplewebauthn/server')>('@simplewebauthn/server');
const helpers = onFirstUse<typeof import('@simplewebauthn/server/helpers')>('@simplewebauthn/server/helpers');

export interface StoredPasskey {
  /** base64url, as the client sent it (PublicKeyCredential.rawId). */
  credentialId: string;
  /** base64url of the COSE public key from the attestation. */
  publicKey: string;
  /** Signature counter last seen. */
  counter: number;
  transports: string[];
  /** The origin the registration ran on (from clientDataJSON). */
  origin: string;
  /** The RP id the credential is bound to (host of that origin). */
  rpId: string;
}

export type PasskeyCheck<T> = { ok: true; value: T } | { ok: false; reason: string };

const BASE64URL = /^[A-Za-z0-9_-]*={0,2}$/;

function isBase64Url(text: unknown): text is string {
  return (
    typeof text === 'string' && text.length > 0 && BASE64URL.test(text) && text.replace(/=+$/, '').length % 4 !== 1
  );
}

function unpadded(text: string): string {
  return text.replace(/=+$/, '');
}

function fail(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}

/** The first field that is not base64url, or null. */
function badEncoding(fields: Record<string, unknown>): string | null {
  for (const [name, value] of Object.entries(fields)) {
    if (!isBase64Url(value)) return `passkey ${name} is not valid base64url`;
  }
  return null;
}

/** The RP id an origin may register under: https on any host, plain http only on loopback. */
function rpIdOf(origin: string): string | null {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return null;
  }
  if (url.origin !== origin || url.hostname === '') return null;
  if (url.protocol === 'https:') return url.hostname;
  if (url.protocol === 'http:' && (url.hostname === 'localhost' || url.hostname === '127.0.0.1')) return url.hostname;
  return null;
}

/** The library's error messages (v14 wording, matched on their fixed prefixes), read as one of this module's reasons. */
function reasonFor(error: unknown, ceremony: 'registration' | 'assertion'): string {
  const message = error instanceof Error ? error.message : String(error);
  if (/^Unexpected (registration|authentication) response type/.test(message)) {
    return `passkey type is not ${ceremony === 'registration' ? 'webauthn.create' : 'webauthn.get'}`;
  }
  if (/^(Unexpected (registration|authentication) response challenge|Custom challenge verifier)/.test(message)) {
    return 'passkey challenge does not match';
  }
  if (/^Unexpected (registration|authentication) response origin/.test(message)) {
    return 'passkey origin does not match the registration';
  }
  if (/^(Detected cross-origin|Unexpected cross-origin|Unexpected top origin)/.test(message)) {
    return 'passkey was used from an unexpected top origin';
  }
  if (message === 'Unexpected RP ID hash') {
    return ceremony === 'registration'
      ? 'passkey RP id does not match the origin'
      : 'passkey RP id does not match the registration';
  }
  if (/^(User presence was required|User not present)/.test(message)) return 'user presence flag not set';
  if (/^User verification (was )?required/i.test(message)) return 'user verification flag not set (SCA needs it)';
  if (/^Response counter value/.test(message)) return 'signature counter did not increase';
  if (/^Unsupported Attestation Format/.test(message)) return 'passkey attestation format is not supported';
  // An assertion's only ASN.1 is its EC2 signature (DER): one that does not parse does not verify.
  if (ceremony === 'assertion' && /ASN\.?1|fully decoded/i.test(message)) return 'passkey signature does not verify';
  return message || 'passkey could not be verified';
}

/** The first CBOR item of base64url `text`, when it is a map; null otherwise. */
function cborMap(text: string): Map<unknown, unknown> | null {
  try {
    const decoded = helpers().isoCBOR.decodeFirst<unknown>(Uint8Array.from(Buffer.from(text, 'base64url')));
    return decoded instanceof Map ? decoded : null;
  } catch {
    return null;
  }
}

function clientOrigin(clientDataJson: string): string | null {
  try {
    const clientData: unknown = JSON.parse(Buffer.from(clientDataJson, 'base64url').toString('utf8'));
    if (typeof clientData !== 'object' || clientData === null) return null;
    const origin = (clientData as { origin?: unknown }).origin;
    return typeof origin === 'string' ? origin : null;
  } catch {
    return null;
  }
}

/** Registration (navigator.credentials.create). `challenge` is the base64url challenge string the client says it used; clientDataJSON.challenge must equal it. */
export async function verifyPasskeyRegistration(input: {
  credentialId: string;
  clientDataJson: string;
  attestationObject: string;
  transports?: string[] | undefined;
  challenge: string;
  /** SCA: the authenticator must have verified the user (biometrics, PIN), not only their presence. */
  requireUserVerification?: boolean;
}): Promise<PasskeyCheck<StoredPasskey>> {
  const encoding = badEncoding({
    'credential id': input.credentialId,
    clientDataJSON: input.clientDataJson,
    attestationObject: input.attestationObject,
  });
  if (encoding !== null) return fail(encoding);
  if (typeof input.challenge !== 'string' || input.challenge === '') return fail('passkey challenge does not match');
  const origin = clientOrigin(input.clientDataJson);
  if (origin === null) return fail('passkey clientDataJSON is not valid client data');
  const rpId = rpIdOf(origin);
  if (rpId === null) return fail('passkey origin must be https (or http on localhost)');
  const attestation = cborMap(input.attestationObject);
  if (
    attestation === null ||
    typeof attestation.get('fmt') !== 'string' ||
    !(attestation.get('attStmt') instanceof Map) ||
    !(attestation.get('authData') instanceof Uint8Array)
  ) {
    return fail('passkey attestationObject is not a valid attestation');
  }
  const transports = Array.isArray(input.transports) ? input.transports.filter((t) => typeof t === 'string') : [];

  try {
    const result = await simplewebauthn().verifyRegistrationResponse({
      response: {
        id: input.credentialId,
        rawId: input.credentialId,
        type: 'public-key',
        response: {
          clientDataJSON: input.clientDataJson,
          attestationObject: input.attestationObject,
          transports,
        },
        clientExtensionResults: {},
      },
      expectedChallenge: input.challenge,
      expectedOrigin: origin,
      expectedRPID: rpId,
      expectedType: 'webauthn.create',
      requireUserPresence: true,
      requireUserVerification: input.requireUserVerification === true,
    });
    if (!result.verified) return fail('passkey attestation does not verify');
    const { credential } = result.registrationInfo;
    if (unpadded(input.credentialId) !== credential.id) return fail('credential id does not match');
    return {
      ok: true,
      value: {
        credentialId: input.credentialId,
        publicKey: Buffer.from(credential.publicKey).toString('base64url'),
        counter: credential.counter,
        transports,
        origin,
        rpId,
      },
    };
  } catch (error) {
    return fail(reasonFor(error, 'registration'));
  }
}

/** Assertion (navigator.credentials.get). `challenge` is the raw challenge string the server issued (a lowercase hex string); the client passes its UTF-8 bytes as the WebAuthn challenge, so clientDataJSON.challenge is base64url(utf8(challenge)). */
export async function verifyPasskeyAssertion(
  assertion: {
    credentialId: string;
    clientDataJson: string;
    authenticatorData: string;
    signature: string;
    userHandle?: string | undefined;
  },
  passkey: StoredPasskey,
  challenge: string,
  options: { requireUserVerification?: boolean } = {},
): Promise<PasskeyCheck<{ newCounter: number }>> {
  const encoding = badEncoding({
    'credential id': assertion.credentialId,
    clientDataJSON: assertion.clientDataJson,
    authenticatorData: assertion.authenticatorData,
    signature: assertion.signature,
    ...(assertion.userHandle ? { userHandle: assertion.userHandle } : {}),
  });
  if (encoding !== null) return fail(encoding);
  if (!isBase64Url(passkey.publicKey) || !isBase64Url(passkey.credentialId)) {
    return fail('stored passkey is not valid base64url');
  }
  if (typeof cborMap(passkey.publicKey)?.get(3) !== 'number')
    return fail('stored passkey public key is not a COSE key');
  if (unpadded(assertion.credentialId) !== unpadded(passkey.credentialId)) return fail('credential id does not match');
  if (typeof challenge !== 'string' || challenge === '') return fail('passkey challenge does not match');
  if (clientOrigin(assertion.clientDataJson) === null) return fail('passkey clientDataJSON is not valid client data');

  try {
    const result = await simplewebauthn().verifyAuthenticationResponse({
      response: {
        id: assertion.credentialId,
        rawId: assertion.credentialId,
        type: 'public-key',
        response: {
          clientDataJSON: assertion.clientDataJson,
          authenticatorData: assertion.authenticatorData,
          signature: assertion.signature,
          ...(assertion.userHandle ? { userHandle: assertion.userHandle } : {}),
        },
        clientExtensionResults: {},
      },
      expectedChallenge: Buffer.from(challenge, 'utf8').toString('base64url'),
      expectedOrigin: passkey.origin,
      expectedRPID: passkey.rpId,
      expectedType: 'webauthn.get',
      credential: {
        id: passkey.credentialId,
        publicKey: Uint8Array.from(Buffer.from(passkey.publicKey, 'base64url')),
        counter: passkey.counter,
        transports: passkey.transports,
      },
      // Without advancedFIDOConfig the library enforces the UP flag itself ('User not present').
      requireUserVerification: options.requireUserVerification === true,
    });
    if (!result.verified) return fail('passkey signature does not verify');
    return { ok: true, value: { newCounter: result.authenticationInfo.newCounter } };
  } catch (error) {
    return fail(reasonFor(error, 'assertion'));
  }
}
