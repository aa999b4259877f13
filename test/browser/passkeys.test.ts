// Passkeys made and used by a real browser: headless Chromium (Debian's `chromium` package)
// driven by playwright-core, with a virtual WebAuthn authenticator added through the DevTools
// protocol (a platform authenticator: CTAP2, internal transport, resident keys, user
// verification). The page (passkey-page.html) is the browser half of an embedded-wallet app,
// served by the test on http://localhost:<port>; the test is the app's backend and talks to
// railyard over HTTP. A customer signs in with an email code, adds a passkey to the wallet (a
// signed request), signs in with the passkey (a session whose key stays in the page's
// WebCrypto), and that session signs a payout from the wallet to the customer's bank account.
// Then what a browser allows and railyard must too: the passkey used from another port of
// localhost, a passkey bound to a parent domain the page names and used from a sibling
// subdomain; what Chromium does on 127.0.0.1 (no passkey at all); and an SCA passkey enrolled
// and used with the WebAuthn options railyard hands out, on two origins of its relying party.
//
// Without /usr/bin/chromium the test fails when CI is set and is skipped otherwise (install it
// with `apt-get install chromium`). RAILYARD_BROWSER_TEST=skip skips it on purpose (`skip-dashboard`
// does not). Unlike the dashboard's browser test it runs on either store (railyard runs in the
// test process, as in every other test) and in CI under each Node release tested (20, 22, 24).
// Time limits are generous (two minutes a test, for a few seconds' work): they only guard
// against a hang on a loaded machine.

import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountBody } from '../fixtures/accounts.js';
import { individualBody } from '../fixtures/customers.js';
import { fund } from '../fixtures/money.js';
import { accountQuoteBody, createQuote, executeQuote, transactionOf } from '../fixtures/quotes.js';
import { euCustomer } from '../fixtures/sca.js';
import { customerWallet, otpLogin, signed } from '../fixtures/wallet.js';
import { build, type TestApp } from '../helper.js';

const CHROMIUM = '/usr/bin/chromium';
const LIMIT_MS = 120_000;
const PAGE = readFileSync(join(__dirname, 'passkey-page.html'), 'utf8');

const present = existsSync(CHROMIUM);
const skipReason =
  process.env.RAILYARD_BROWSER_TEST === 'skip'
    ? 'RAILYARD_BROWSER_TEST=skip'
    : !present && !process.env.CI
      ? `${CHROMIUM} is missing (apt-get install chromium)`
      : undefined;
if (skipReason !== undefined) console.warn(`passkey browser test skipped: ${skipReason}`);

interface Attestation {
  credentialId: string;
  clientDataJson: string;
  attestationObject: string;
  transports: string[];
}
interface Assertion {
  credentialId: string;
  clientDataJson: string;
  authenticatorData: string;
  signature: string;
  userHandle?: string;
}
type Outcome<T> = T | { error: { name: string; message: string } };

/** The page's wallet object (passkey-page.html). */
interface PageWallet {
  createPasskey(input: {
    challenge: string;
    userName: string;
    rpId?: string;
    attestation?: string;
  }): Promise<Outcome<{ attestation: Attestation }>>;
  createFromOptions(options: unknown): Promise<Outcome<{ credential: Record<string, unknown> }>>;
  getFromOptions(options: unknown): Promise<Outcome<{ assertion: Record<string, unknown>; origin: string }>>;
  newSessionKey(): Promise<string>;
  signIn(input: { challenge: string; credentialId: string; rpId?: string }): Promise<Outcome<{ assertion: Assertion }>>;
  stamp(payload: string): Promise<string>;
}
declare global {
  interface Window {
    wallet: PageWallet;
  }
}

/** The outcome's value; a WebAuthn error thrown in the page fails the test with its name and message. */
function ok<T>(outcome: Outcome<T>): T {
  if (typeof outcome === 'object' && outcome !== null && 'error' in outcome) {
    throw new Error(`WebAuthn in the page failed: ${outcome.error.name}: ${outcome.error.message}`);
  }
  return outcome;
}

/** A static server for the page: every path answers it. */
async function pageServer(): Promise<{ server: Server; port: number }> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    response.end(PAGE);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
}

/** A base64url registration challenge, as the app's backend mints one. */
const registrationChallenge = () => randomBytes(32).toString('base64url');

describe.skipIf(skipReason !== undefined)('passkeys in Chromium', () => {
  let browser: Browser;
  let pages: { server: Server; port: number }[] = [];
  let t: TestApp;

  beforeAll(async () => {
    if (!present) throw new Error(`CI is set and ${CHROMIUM} is missing: install Debian's chromium package`);
    const launched = chromium.launch({
      executablePath: CHROMIUM,
      // As in dashboard.test.ts: without the background-networking switches Chromium's own
      // connections are refused on an offline machine, and it can stall.
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    pages = [await pageServer(), await pageServer()];
    t = await build();
    browser = await launched;
  }, LIMIT_MS);

  afterAll(async () => {
    await browser?.close();
    for (const { server } of pages) await new Promise((resolve) => server.close(resolve));
  });

  /** A new tab with a virtual platform authenticator of its own, showing the page at `origin`. */
  async function tab(origin: string): Promise<{ page: Page }> {
    const context = await browser.newContext();
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    await page.goto(`${origin}/wallet`);
    return { page };
  }

  const localhost = (index = 0) => `http://localhost:${pages[index]!.port}`;

  it(
    'adds a passkey to a wallet, signs in with it, and its session signs a payout',
    async () => {
      // The customer, the wallet's USDB and the bank account the payout goes to.
      const wallet = await customerWallet(t);
      await fund(t, wallet.accountId, 25_000_000);
      const bank = await t.api('POST', '/customers/external-accounts', {
        body: { ...accountBody('USD_ACCOUNT'), customerId: wallet.customerId },
      });
      expect(bank.status, bank.text).toBe(201);

      // Signed in with the email code, the customer adds a passkey made in the browser.
      const { key: otpKey } = await otpLogin(t, wallet.credentials[0].id);
      const { page } = await tab(localhost());
      const challenge = registrationChallenge();
      const { attestation } = ok(
        await page.evaluate((input) => window.wallet.createPasskey(input), {
          challenge,
          userName: 'avery.quinn@example.com',
        }),
      );
      expect(attestation.transports).toEqual(['internal']);
      const clientData = JSON.parse(Buffer.from(attestation.clientDataJson, 'base64url').toString('utf8'));
      expect(clientData).toMatchObject({ type: 'webauthn.create', challenge, origin: localhost() });
      const body = {
        type: 'PASSKEY',
        accountId: wallet.accountId,
        nickname: 'Chromium (test)',
        challenge,
        attestation,
      };
      const { challenge: first, reply: added } = await signed(t, 'POST', '/auth/credentials', otpKey, body);
      expect(first.body.type).toBe('PASSKEY');
      expect(added.status, added.text).toBe(201);
      expect(added.body).toMatchObject({
        accountId: wallet.accountId,
        type: 'PASSKEY',
        credentialId: attestation.credentialId,
        nickname: 'Chromium (test)',
      });
      const passkeyId: string = added.body.id;

      // Sign-in: the page makes the session key, railyard binds it into the challenge, the
      // passkey signs the challenge, and the session opens for that key.
      const sessionKey = await page.evaluate(() => window.wallet.newSessionKey());
      expect(sessionKey).toMatch(/^0[23][0-9a-f]{64}$/);
      const issued = await t.api('POST', `/auth/credentials/${passkeyId}/challenge`, {
        body: { clientPublicKey: sessionKey },
      });
      expect(issued.status, issued.text).toBe(200);
      expect(issued.body).toMatchObject({ id: passkeyId, type: 'PASSKEY', credentialId: attestation.credentialId });
      expect(issued.body.challenge).toMatch(/^[0-9a-f]{64}$/);
      const { assertion } = ok(
        await page.evaluate((input) => window.wallet.signIn(input), {
          challenge: issued.body.challenge,
          credentialId: issued.body.credentialId,
        }),
      );
      const session = await t.api('POST', `/auth/credentials/${passkeyId}/verify`, {
        body: { type: 'PASSKEY', assertion },
        headers: { 'Request-Id': issued.body.requestId },
      });
      expect(session.status, session.text).toBe(200);
      expect(session.body).toMatchObject({
        id: expect.stringMatching(/^Session:/),
        accountId: wallet.accountId,
        type: 'PASSKEY',
        nickname: 'Chromium (test)',
      });
      expect(session.body.encryptedSessionSigningKey).toBeUndefined();
      const live = await t.api('GET', `/auth/sessions?accountId=${wallet.accountId}`);
      expect(live.body.data.map((s: { id: string }) => s.id)).toContain(session.body.id);

      // The payout: a quote from the wallet to the bank account, released with the stamp the
      // page makes of its payloadToSign with the session key.
      const quote = await createQuote(t, accountQuoteBody(wallet.accountId, bank.body.id, { amount: 1_500_000 }));
      expect(quote.status, quote.text).toBe(201);
      const payload: string = quote.body.paymentInstructions[0].accountOrWalletInfo.payloadToSign;
      const stamp = await page.evaluate((text) => window.wallet.stamp(text), payload);
      const executed = await executeQuote(t, quote.body.id, { 'Grid-Wallet-Signature': stamp });
      expect(executed.status, executed.text).toBe(200);
      expect(executed.body).toMatchObject({ id: quote.body.id, totalSendingAmount: 1_500_000 });
      // However long the bank rail takes on this platform, an hour of sandbox time settles it.
      await t.advanceClock(3600);
      expect(await transactionOf(t, quote.body.transactionId)).toMatchObject({
        id: quote.body.transactionId,
        quoteId: quote.body.id,
        status: 'COMPLETED',
        source: { sourceType: 'ACCOUNT', accountId: wallet.accountId, currency: 'USDB' },
        destination: { accountId: bank.body.id, currency: 'USD' },
      });
      const walletAccount = await t.api(
        'GET',
        `/customers/internal-accounts?customerId=${wallet.customerId}&type=EMBEDDED_WALLET`,
      );
      expect(walletAccount.body.data[0].balance.amount).toBe(25_000_000 - quote.body.totalSendingAmount);
    },
    LIMIT_MS,
  );

  /** A customer without email: its wallet has no credential, so a passkey is its first (201 at once). */
  async function emptyWallet(): Promise<string> {
    const customer = await t.api('POST', '/customers', { body: individualBody('Morgan Ellis', { email: undefined }) });
    expect(customer.status, customer.text).toBe(201);
    const accounts = await t.api(
      'GET',
      `/customers/internal-accounts?customerId=${customer.body.id}&type=EMBEDDED_WALLET`,
    );
    return accounts.body.data[0].id;
  }

  /** The page's passkey registered as the wallet's first credential: the AuthMethod. */
  async function registerOn(page: Page, accountId: string, options: { rpId?: string; attestation?: string } = {}) {
    const challenge = registrationChallenge();
    const { attestation } = ok(
      await page.evaluate((input) => window.wallet.createPasskey(input), {
        challenge,
        userName: 'morgan.ellis',
        ...options,
      }),
    );
    const reply = await t.api('POST', '/auth/credentials', {
      body: { type: 'PASSKEY', accountId, nickname: 'Chromium', challenge, attestation },
    });
    expect(reply.status, reply.text).toBe(201);
    return reply.body as { id: string; credentialId: string };
  }

  /** A passkey sign-in on the page: the verify call's reply. */
  async function signInOn(page: Page, credential: { id: string }, rpId?: string) {
    const clientPublicKey = await page.evaluate(() => window.wallet.newSessionKey());
    const issued = await t.api('POST', `/auth/credentials/${credential.id}/challenge`, { body: { clientPublicKey } });
    expect(issued.status, issued.text).toBe(200);
    const { assertion } = ok(
      await page.evaluate((input) => window.wallet.signIn(input), {
        challenge: issued.body.challenge,
        credentialId: issued.body.credentialId,
        ...(rpId !== undefined ? { rpId } : {}),
      }),
    );
    return t.api('POST', `/auth/credentials/${credential.id}/verify`, {
      body: { type: 'PASSKEY', assertion },
      headers: { 'Request-Id': issued.body.requestId },
    });
  }

  it(
    'signs in from another port of localhost with a passkey made on the first (one relying party)',
    async () => {
      const accountId = await emptyWallet();
      const { page } = await tab(localhost(0));
      // 'direct' asks the authenticator for its own attestation statement ('packed').
      const credential = await registerOn(page, accountId, { attestation: 'direct' });
      for (const index of [1, 0]) {
        await page.goto(`${localhost(index)}/wallet`);
        const session = await signInOn(page, credential);
        expect(session.status, session.text).toBe(200);
        expect(session.body).toMatchObject({ accountId, type: 'PASSKEY' });
        // The session signs for the wallet.
        const path = `/internal-accounts/${accountId}`;
        const first = await t.api('PATCH', path, { body: { privateEnabled: index === 1 } });
        expect(first.status, first.text).toBe(202);
        const stamp = await page.evaluate((text) => window.wallet.stamp(text), first.body.payloadToSign as string);
        const retry = await t.api('PATCH', path, {
          body: { privateEnabled: index === 1 },
          headers: { 'Grid-Wallet-Signature': stamp, 'Request-Id': first.body.requestId },
        });
        expect(retry.status, retry.text).toBe(200);
        expect(retry.body.privateEnabled).toBe(index === 1);
      }
    },
    LIMIT_MS,
  );

  it(
    "binds a passkey to a parent domain the page names as relying party, and signs in from that domain's other subdomains",
    async () => {
      const accountId = await emptyWallet();
      const { page } = await tab(`http://wallet.shop.localhost:${pages[0]!.port}`);
      const credential = await registerOn(page, accountId, { rpId: 'shop.localhost' });
      await page.goto(`http://pay.shop.localhost:${pages[1]!.port}/wallet`);
      const session = await signInOn(page, credential, 'shop.localhost');
      expect(session.status, session.text).toBe(200);
      expect(session.body).toMatchObject({ accountId, type: 'PASSKEY' });
    },
    LIMIT_MS,
  );

  it(
    'makes no passkey on 127.0.0.1: Chromium refuses WebAuthn on an IP address, whatever the relying party',
    async () => {
      const { page } = await tab(`http://127.0.0.1:${pages[0]!.port}`);
      // A secure context all the same: the refusal is WebAuthn's own.
      expect(await page.evaluate(() => window.isSecureContext)).toBe(true);
      for (const rpId of [undefined, '127.0.0.1', 'localhost']) {
        const outcome = await page.evaluate((input) => window.wallet.createPasskey(input), {
          challenge: registrationChallenge(),
          userName: 'morgan.ellis',
          ...(rpId !== undefined ? { rpId } : {}),
        });
        expect(outcome, `rp id ${rpId}`).toEqual({
          error: { name: 'SecurityError', message: 'This is an invalid domain.' },
        });
      }
    },
    LIMIT_MS,
  );

  it(
    'enrolls and uses an SCA passkey with the options railyard hands out, on two origins of its relying party',
    async () => {
      const shop = `http://shop.localhost:${pages[0]!.port}`;
      const pay = `http://pay.shop.localhost:${pages[1]!.port}`;
      const sca = await build({ config: { passkeyOrigins: [shop, pay] } });
      const customer = await euCustomer(sca);
      const query = `?customerId=${encodeURIComponent(customer.id)}`;

      // Enrolled on the subdomain: the options name the first origin's host as relying party.
      const started = await sca.api('POST', `/sca/factors${query}`, { body: { type: 'PASSKEY' } });
      expect(started.status, started.text).toBe(200);
      expect(started.body).toMatchObject({ allowedOrigins: [shop, pay], relyingPartyId: 'shop.localhost' });
      const { page } = await tab(pay);
      const { credential } = ok(
        await page.evaluate((options) => window.wallet.createFromOptions(options), started.body.options),
      );
      const confirmed = await sca.api('POST', `/sca/factors/confirm${query}`, {
        body: { type: 'PASSKEY', origin: pay, credential },
      });
      expect(confirmed.status, confirmed.text).toBe(200);
      expect(confirmed.body).toEqual({
        type: 'PASSKEY',
        factor: { factor: 'PASSKEY', credentialId: credential.id, name: 'Passkey' },
      });

      // The login, from the other origin.
      const login = await sca.api('POST', `/sca/login/start${query}`, { body: { factor: 'PASSKEY' } });
      expect(login.status, login.text).toBe(200);
      expect(login.body).toMatchObject({ allowedOrigins: [shop, pay], relyingPartyId: 'shop.localhost' });
      await page.goto(`${shop}/wallet`);
      const { assertion, origin } = ok(
        await page.evaluate((options) => window.wallet.getFromOptions(options), login.body.passkeyOptions),
      );
      expect(origin).toBe(shop);
      const done = await sca.api('POST', `/sca/login/complete${query}`, {
        body: { factor: 'PASSKEY', passkeyAssertion: assertion, origin, endUserIpAddress: '203.0.113.7' },
      });
      expect(done.status, done.text).toBe(200);
      expect(done.body.status).toBe('SUCCESS');
    },
    LIMIT_MS,
  );
});
