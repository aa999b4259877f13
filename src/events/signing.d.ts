/** The X-Grid-Signature value for `body`, signed with the platform's private key (PEM). */
export function signatureHeaderValue(privateKeyPem: string, body: Uint8Array): string;
