// The origin and relying-party rules of passkeys (src/passkey-origins.ts), as Chromium applies
// them (test/browser/passkeys.test.ts drives Chromium itself), and RAILYARD_PASSKEY_ORIGINS,
// which the SCA flow's relying party comes from.

import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_PASSKEY_ORIGINS, loadConfig, scaRelyingPartyId } from '../../src/config.js';
import { isOnRelyingParty, passkeyOriginProblem, relyingPartyIds } from '../../src/passkey-origins.js';

describe('passkeyOriginProblem', () => {
  it('takes https on a domain name, and plain http on localhost and its subdomains', () => {
    for (const origin of [
      'https://app.example.com',
      'https://app.example.com:8443',
      'https://localhost',
      'http://localhost',
      'http://localhost:3000',
      'http://app.localhost:5173',
      'http://wallet.shop.localhost:3000',
    ]) {
      expect(passkeyOriginProblem(origin), origin).toBeNull();
    }
  });

  it('refuses plain http elsewhere, other schemes, and what is not an origin', () => {
    const http = 'must be https, or http on localhost or a subdomain of it';
    expect(passkeyOriginProblem('http://app.example.com')).toBe(http);
    expect(passkeyOriginProblem('http://localhost.example.com')).toBe(http);
    expect(passkeyOriginProblem('ftp://app.example.com')).toBe(http);
    for (const text of ['localhost:3000', 'http://localhost:3000/', 'https://app.example.com/login', '']) {
      expect(passkeyOriginProblem(text), text).toBe('is not an origin (scheme://host[:port], with nothing after it)');
    }
  });

  it('refuses an IP address, v4 or v6, over http or https, when asked to, naming the localhost origin to use', () => {
    const refused = { ipAddresses: 'refused' } as const;
    expect(passkeyOriginProblem('http://127.0.0.1:3000', refused)).toBe(
      'is an IP address, where browsers refuse passkeys (a SecurityError): serve the page from http://localhost:3000',
    );
    expect(passkeyOriginProblem('https://10.0.0.5', refused)).toBe(
      'is an IP address, where browsers refuse passkeys (a SecurityError): serve the page from https://localhost',
    );
    expect(passkeyOriginProblem('http://[::1]:8080', refused)).toBe(
      'is an IP address, where browsers refuse passkeys (a SecurityError): serve the page from http://localhost:8080',
    );
  });

  it('takes an IP address by default: on https, and on http at a loopback address', () => {
    expect(passkeyOriginProblem('http://127.0.0.1:3000')).toBeNull();
    expect(passkeyOriginProblem('http://[::1]:8080')).toBeNull();
    expect(passkeyOriginProblem('https://10.0.0.5')).toBeNull();
    expect(passkeyOriginProblem('http://10.0.0.5:3000')).toBe(
      'is an IP address, where browsers refuse passkeys (a SecurityError): serve the page from http://localhost:3000',
    );
    expect(relyingPartyIds('127.0.0.1')).toEqual(['127.0.0.1']);
  });
});

describe('relying-party ids', () => {
  it('lists the host, then each parent domain of two labels or more', () => {
    expect(relyingPartyIds('localhost')).toEqual(['localhost']);
    expect(relyingPartyIds('app.localhost')).toEqual(['app.localhost']);
    expect(relyingPartyIds('wallet.shop.localhost')).toEqual(['wallet.shop.localhost', 'shop.localhost']);
    expect(relyingPartyIds('a.b.example.com')).toEqual(['a.b.example.com', 'b.example.com', 'example.com']);
  });

  it('puts a page on its own host and on the subdomains of an RP id of two labels or more', () => {
    expect(isOnRelyingParty('localhost', 'localhost')).toBe(true);
    expect(isOnRelyingParty('pay.example.com', 'example.com')).toBe(true);
    expect(isOnRelyingParty('example.com', 'pay.example.com')).toBe(false);
    expect(isOnRelyingParty('app.localhost', 'localhost')).toBe(false);
    expect(isOnRelyingParty('badexample.com', 'example.com')).toBe(false);
  });
});

describe('RAILYARD_PASSKEY_ORIGINS', () => {
  const load = (origins: string) => loadConfig({ RAILYARD_PASSKEY_ORIGINS: origins });

  it('defaults to localhost:3000 over http and https, whose relying party is localhost', () => {
    expect(loadConfig({}).passkeyOrigins).toBeUndefined();
    expect(DEFAULT_PASSKEY_ORIGINS).toEqual(['http://localhost:3000', 'https://localhost:3000']);
    expect(scaRelyingPartyId(DEFAULT_PASSKEY_ORIGINS)).toBe('localhost');
  });

  it('takes origins on the relying party of the first one (its host)', () => {
    expect(load('https://example.com, https://pay.example.com').passkeyOrigins).toEqual([
      'https://example.com',
      'https://pay.example.com',
    ]);
    expect(load('http://shop.localhost:3000,http://pay.shop.localhost:3001').passkeyOrigins).toEqual([
      'http://shop.localhost:3000',
      'http://pay.shop.localhost:3001',
    ]);
    expect(scaRelyingPartyId(['http://shop.localhost:3000', 'http://pay.shop.localhost:3001'])).toBe('shop.localhost');
  });

  it('refuses an origin no browser makes passkeys on, and one off the first origin’s relying party', () => {
    const usage =
      'RAILYARD_PASSKEY_ORIGINS must be a comma-separated list of origins such as https://app.example.com (http only on localhost)';
    const cases: [string, string][] = [
      [
        'http://127.0.0.1:3000',
        `${usage}: "http://127.0.0.1:3000" is an IP address, where browsers refuse passkeys (a SecurityError): serve the page from http://localhost:3000`,
      ],
      [
        'https://app.example.com,http://staging.example.com',
        `${usage}: "http://staging.example.com" must be https, or http on localhost or a subdomain of it`,
      ],
      [
        'https://app.example.com/',
        `${usage}: "https://app.example.com/" is not an origin (scheme://host[:port], with nothing after it)`,
      ],
      [
        'https://pay.example.com,https://example.com',
        `${usage}: "https://example.com" is not on the relying party pay.example.com, the host of the first origin (a browser would refuse its passkeys there)`,
      ],
      [
        'http://localhost:3000,http://app.localhost:3000',
        `${usage}: "http://app.localhost:3000" is not on the relying party localhost, the host of the first origin (a browser would refuse its passkeys there)`,
      ],
    ];
    for (const [value, message] of cases) {
      expect(() => load(value), value).toThrow(new ConfigError(message));
    }
  });
});
