// Where a passkey can be made and used: the rules a browser applies to the origin and the
// relying-party id of a WebAuthn ceremony, which railyard applies the same way to embedded
// wallets' credentials, SCA factors and RAILYARD_PASSKEY_ORIGINS.
//
// What Chromium does (test/browser/passkeys.test.ts checks it): https on any domain name, and
// plain http on `localhost` and its subdomains (`app.localhost`); never on an IP address:
// http://127.0.0.1 and http://[::1] are secure contexts, yet navigator.credentials refuses
// them with a SecurityError whatever relying-party id the page asks for. Railyard refuses IP
// addresses only where asked to (strict mode, its own settings): a credential a test makes
// with a software authenticator may name one. The relying-party id
// is the page's host unless the page names a parent domain of it; a parent with a single label
// (`localhost`, `com`) is refused, as a browser refuses a public suffix.

const IPV4 = /^\d+\.\d+\.\d+\.\d+$/;

/** True for a host that is an IP address (URL.hostname: IPv4 dotted, IPv6 in brackets). */
function isIpAddress(host: string): boolean {
  return IPV4.test(host) || host.startsWith('[');
}

/** A loopback address, where plain http is a secure context as on `localhost`. */
function isLoopbackIp(host: string): boolean {
  return host.startsWith('127.') || host === '[::1]';
}

/** `localhost` and its subdomains, where browsers take plain http as a secure context for WebAuthn. */
function isLocalhost(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/** The host of an origin (`scheme://host[:port]`, nothing after), or null when it is not one. */
export function originHost(origin: string): string | null {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return null;
  }
  if (url.origin !== origin || url.hostname === '') return null;
  return url.hostname;
}

/**
 * Why a passkey ceremony cannot run on `origin`, as words that follow the origin in a sentence
 * ("… must be https, …"), or null when it can. An IP address: `ipAddresses: 'refused'` holds
 * it to what browsers do (no passkey there at all: a platform in strict mode, and the
 * server's own RAILYARD_PASSKEY_ORIGINS); by default it is taken on https, and on http at a
 * loopback address, as a test's software authenticator may sign for one (the reference states
 * no rule on origins).
 */
export function passkeyOriginProblem(
  origin: string,
  options: { ipAddresses?: 'refused' | 'taken' } = {},
): string | null {
  const host = originHost(origin);
  if (host === null) return 'is not an origin (scheme://host[:port], with nothing after it)';
  const protocol = new URL(origin).protocol;
  if (isIpAddress(host)) {
    if (options.ipAddresses !== 'refused' && (protocol === 'https:' || (protocol === 'http:' && isLoopbackIp(host))))
      return null;
    const url = new URL(origin);
    const instead = `${url.protocol}//localhost${url.port === '' ? '' : `:${url.port}`}`;
    return `is an IP address, where browsers refuse passkeys (a SecurityError): serve the page from ${instead}`;
  }
  if (protocol === 'https:' || (protocol === 'http:' && isLocalhost(host))) return null;
  return 'must be https, or http on localhost or a subdomain of it';
}

/** Whether a page on `host` may use the relying-party id `rpId`: its host, or a parent domain of two labels or more. */
export function isOnRelyingParty(host: string, rpId: string): boolean {
  return host === rpId || (rpId.includes('.') && !isIpAddress(host) && host.endsWith(`.${rpId}`));
}

/** The relying-party ids a page on `host` may ask for: the host first, then its parent domains (an IP address has none). */
export function relyingPartyIds(host: string): string[] {
  if (isIpAddress(host)) return [host];
  const labels = host.split('.');
  const ids = [host];
  for (let i = 1; i < labels.length - 1; i += 1) ids.push(labels.slice(i).join('.'));
  return ids;
}
