// The fields whose values railyard never keeps in what it records of a request: the request
// journal (src/modules/requests/) replaces them, at any depth of a JSON body, with REDACTED.
// One list, by field name, from the reference's schemas (and railyard's own), with the kind of
// secret each holds. A field name that means a secret only on one side (a request's `code` is
// a one-time code; a response's `code` is an error or currency code) names that side.
//
// The conformance record (recorder.ts) keeps the write-only ones out too: it must stay valid by
// the reference, so it takes only those, whose replacement the reference leaves unchecked.

import { textRedactor } from './redact-text.js';

export type SecretKind =
  | 'client secret'
  | 'shared secret'
  | 'one-time code'
  | 'private key'
  | 'card'
  | 'access token'
  | 'password'
  | 'identity number';

export interface SecretField {
  field: string;
  kind: SecretKind;
  /** Where the field holds a secret: in request bodies, in response bodies, or both. */
  in: 'request' | 'response' | 'both';
  /** The reference marks it writeOnly. */
  writeOnly?: true;
}

export const REDACTED = '(redacted)';

export const SECRET_FIELDS: readonly SecretField[] = [
  // An API token's secret (createToken's answer) and a stablecoin provider's (linkStablecoinProviderAccount).
  { field: 'clientSecret', kind: 'client secret', in: 'both' },
  { field: 'apiClientSecret', kind: 'client secret', in: 'request', writeOnly: true },
  // A TOTP factor's shared secret, in its three spellings (startTotpEnrollment, confirmTotpEnrollment).
  { field: 'secret', kind: 'shared secret', in: 'both' },
  { field: 'secretBase32Encoded', kind: 'shared secret', in: 'response' },
  { field: 'totpUri', kind: 'shared secret', in: 'response' },
  // The codes a customer types: SMS, e-mail and TOTP codes, the sealed OTP of a wallet login,
  // the recovery codes of a TOTP factor.
  { field: 'code', kind: 'one-time code', in: 'request' },
  { field: 'encryptedOtpBundle', kind: 'one-time code', in: 'request' },
  { field: 'recoveryCodes', kind: 'one-time code', in: 'response' },
  // Key material: a wallet's exported mnemonic and a session's signing key (both sealed to
  // the client, still the keys), and any private key.
  { field: 'encryptedWalletCredentials', kind: 'private key', in: 'response' },
  { field: 'encryptedSessionSigningKey', kind: 'private key', in: 'response' },
  { field: 'privateKey', kind: 'private key', in: 'both' },
  { field: 'mnemonic', kind: 'private key', in: 'both' },
  // Cards: the link that opens a card's number carries a one-time token, and the number and
  // its security code themselves.
  { field: 'panEmbedUrl', kind: 'card', in: 'response' },
  { field: 'pan', kind: 'card', in: 'both' },
  { field: 'cardNumber', kind: 'card', in: 'both' },
  { field: 'cvc', kind: 'card', in: 'both' },
  { field: 'cvv', kind: 'card', in: 'both' },
  // Bearer credentials: an agent's access token and the device code that obtains one, an
  // identity provider's ID token, the tokens of hosted KYC and liveness flows.
  { field: 'accessToken', kind: 'access token', in: 'response' },
  { field: 'deviceCode', kind: 'access token', in: 'response' },
  { field: 'oidcToken', kind: 'access token', in: 'request' },
  { field: 'livenessAccessToken', kind: 'access token', in: 'response' },
  { field: 'token', kind: 'access token', in: 'response' },
  { field: 'threeDSecurePassword', kind: 'password', in: 'request' },
  { field: 'password', kind: 'password', in: 'both' },
  // An identity document's number (the reference keeps it write-only).
  { field: 'identifier', kind: 'identity number', in: 'request', writeOnly: true },
];

/** The names of the fields that hold a secret in `which` side's bodies. */
export function secretNames(which: 'request' | 'response'): string[] {
  return SECRET_FIELDS.filter((f) => f.in === which || f.in === 'both').map((f) => f.field);
}

const REQUEST = textRedactor(secretNames('request'), REDACTED);
const RESPONSE = textRedactor(secretNames('response'), REDACTED);

/** The names of the request fields the reference marks write-only. */
export const WRITE_ONLY_FIELDS: ReadonlySet<string> = new Set(
  SECRET_FIELDS.filter((f) => f.writeOnly).map((f) => f.field),
);

/**
 * JSON text with every secret of `which` side replaced by REDACTED, at any depth. Text that
 * names none of them comes back as it is (most bodies: no parse). Text that is not JSON too.
 */
export function redactJsonText(text: string, which: 'request' | 'response'): string {
  return which === 'request' ? REQUEST(text) : RESPONSE(text);
}
