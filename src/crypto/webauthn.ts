// Passkey (WebAuthn) checks for embedded-wallet credentials and SCA factors. The protocol work
// (client data, authenticator data, rpIdHash, attestation statements, COSE keys, signatures,
// counters) is done by @simplewebauthn/server; this module chooses what to expect, adds the
// checks the library leaves to its caller (the origin and relying-party rules browsers apply,
// src/passkey-origins.ts; credential ids), never throws, and turns the library's errors into
// short reasons.

import { onFirstUse } from '../lazy.js';
import { isOnRelyingParty, originHost, passkeyOriginProblem, relyingPartyIds } from '../passkey-origins.js';

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
  /** The relying-party id the credential is bound to: the host of that origin, or a parent domain of it. */
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

/**
 * The library's error messages (v14 wording, matched on their fixed prefixes), read as one of
 * this module's reasons; `rpIdMismatch` is the reason for an rpIdHash that is not the one expected.
 */
function reasonFor(error: unknown, ceremony: 'registration' | 'assertion', rpIdMismatch: string): string {
  const message = error instanceof Error ? error.message : String(error);
  if (/^Unexpected (registration|authentication) response type/.test(message)) {
    return `passkey type is not ${ceremony === 'registration' ? 'webauthn.create' : 'webauthn.get'}`;
  }
  if (/^(Unexpected (registration|authentication) response challenge|Custom challenge verifier)/.test(message)) {
    return 'passkey challenge does not match';
  }
  if (/^Unexpected (registration|authentication) response origin/.test(message)) return 'passkey origin does not match';
  if (/^(Detected cross-origin|Unexpected cross-origin|Unexpected top origin)/.test(message)) {
    return 'passkey was used from an unexpected top origin';
  }
  if (message === 'Unexpected RP ID hash') return rpIdMismatch;
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
  /**
   * The relying-party id the creation options named (SCA's). Without it (embedded wallets,
   * whose app writes its own options) the credential may be bound to the origin's host or a
   * parent domain of it, as a browser allows, and is bound to the one its rpIdHash names.
   */
  rpId?: string | undefined;
  /** Hold the origin to what browsers allow: no IP address (a platform in strict mode). */
  strict?: boolean;
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
  const problem = passkeyOriginProblem(origin, { ipAddresses: input.strict === true ? 'refused' : 'taken' });
  if (problem !== null) return fail(`passkey origin ${origin} ${problem}`);
  const host = originHost(origin)!;
  if (input.rpId !== undefined && !isOnRelyingParty(host, input.rpId)) {
    return fail(`passkey origin ${origin} is not on the relying party ${input.rpId}`);
  }
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
      expectedRPID: input.rpId ?? relyingPartyIds(host),
      expectedType: 'webauthn.create',
      requireUserPresence: true,
      requireUserVerification: input.requireUserVerification === true,
    });
    if (!result.verified) return fail('passkey attestation does not verify');
    const { credential, rpID } = result.registrationInfo;
    if (unpadded(input.credentialId) !== credential.id) return fail('credential id does not match');
    return {
      ok: true,
      value: {
        credentialId: input.credentialId,
        publicKey: Buffer.from(credential.publicKey).toString('base64url'),
        counter: credential.counter,
        transports,
        origin,
        rpId: rpID ?? input.rpId ?? host,
      },
    };
  } catch (error) {
    const rpIdMismatch =
      input.rpId !== undefined
        ? `passkey RP id is not ${input.rpId}, the relying party of the creation options`
        : "passkey RP id is neither the origin's host nor a parent domain of it";
    return fail(reasonFor(error, 'registration', rpIdMismatch));
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
  options: {
    requireUserVerification?: boolean;
    /** The origins this assertion may come from (SCA's); without them, any origin on the passkey's relying party. */
    origins?: readonly string[];
    /** Hold the origin to what browsers allow: no IP address (a platform in strict mode). */
    strict?: boolean;
  } = {},
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
  const origin = clientOrigin(assertion.clientDataJson);
  if (origin === null) return fail('passkey clientDataJSON is not valid client data');
  const problem = passkeyOriginProblem(origin, { ipAddresses: options.strict === true ? 'refused' : 'taken' });
  if (problem !== null) return fail(`passkey origin ${origin} ${problem}`);
  // A browser uses a passkey on any page of its relying party: another port or subdomain than
  // the registration's is the same relying party.
  if (!isOnRelyingParty(originHost(origin)!, passkey.rpId)) {
    return fail(`passkey origin ${origin} is not on the relying party ${passkey.rpId} of the registration`);
  }
  if (options.origins !== undefined && !options.origins.includes(origin)) {
    return fail(`passkey origin ${origin} is not ${options.origins.join(' or ')}`);
  }

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
      expectedOrigin: origin,
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
    return fail(reasonFor(error, 'assertion', 'passkey RP id does not match the registration'));
  }
}
