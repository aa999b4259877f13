// The wallet actions a live session signs: the privacy setting (PATCH /internal-accounts/{id}),
// the export of the recovery phrase, the release of a payment from the wallet (POST
// /quotes/{id}/execute with Grid-Wallet-Signature), and the delegated-key endpoints, all over
// HTTP with the libraries real clients use.

import { randomUUID } from 'node:crypto';
import { validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { hpkeDecrypt } from '@turnkey/crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { publicKeysOf } from '../../src/crypto/p256.js';
import { openText } from '../../src/crypto/sealing.js';
import { railyardKey } from '../../src/db/keys.js';
import { build, type Reply, type Tenant, type TestApp } from '../helper.js';
import { accountBody } from '../fixtures/accounts.js';
import { fund } from '../fixtures/money.js';
import { accountQuoteBody, createQuote, executeQuote, quoteOf, transactionOf } from '../fixtures/quotes.js';
import { type ClientKey, clientKey, customerWallet, otpLogin, signed } from '../fixtures/wallet.js';

function fieldsOf(reply: Reply): string[] {
  return (reply.body.details?.errors ?? []).map((e: { field: string }) => e.field);
}

async function customerAccount(t: Tenant, customerId: string, query: string): Promise<any> {
  const reply = await t.api(
    'GET',
    `/customers/internal-accounts?customerId=${encodeURIComponent(customerId)}&${query}`,
  );
  expect(reply.status).toBe(200);
  expect(reply.body.data).toHaveLength(1);
  return reply.body.data[0];
}

/** The retry of a signed request with the given headers (the challenge's Request-Id, any signature). */
function retry(t: Tenant, method: string, path: string, body: unknown, requestId: string, signature: string) {
  return t.api(method, path, { body, headers: { 'Grid-Wallet-Signature': signature, 'Request-Id': requestId } });
}

describe('updateInternalAccount: PATCH /internal-accounts/{id} (wallet privacy)', () => {
  let t: TestApp;
  let wallet: Awaited<ReturnType<typeof customerWallet>>;
  let key: ClientKey;
  let path: string;

  beforeAll(async () => {
    t = await build();
    wallet = await customerWallet(t);
    ({ key } = await otpLogin(t, wallet.credentials[0].id));
    path = `/internal-accounts/${wallet.accountId}`;
  });

  it('answers 202 with a SignedRequestChallenge, then applies the signed retry (200 InternalAccount)', async () => {
    const before = await customerAccount(t, wallet.customerId, 'type=EMBEDDED_WALLET');
    expect(before.privateEnabled).toBe(false);
    const { challenge, reply } = await signed(t, 'PATCH', path, key, { privateEnabled: true });
    expect(Object.keys(challenge.body).sort()).toEqual(['expiresAt', 'payloadToSign', 'requestId']);
    expect(challenge.body.requestId).toMatch(/^Request:[0-9a-f-]{36}$/);
    expect(JSON.parse(challenge.body.payloadToSign)).toMatchObject({ type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2' });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({ id: wallet.accountId, type: 'EMBEDDED_WALLET', privateEnabled: true });
    const after = await customerAccount(t, wallet.customerId, 'type=EMBEDDED_WALLET');
    expect(after.privateEnabled).toBe(true);
    expect(after).toEqual(reply.body);
  });

  it('refuses a retry whose body differs from the first leg (401 WALLET_SIGNATURE_BODY_MISMATCH) and changes nothing', async () => {
    const challenge = await t.api('PATCH', path, { body: { privateEnabled: false } });
    expect(challenge.status).toBe(202);
    const reply = await retry(
      t,
      'PATCH',
      path,
      { privateEnabled: true },
      challenge.body.requestId,
      await key.stamp(challenge.body.payloadToSign),
    );
    expect(reply.status).toBe(401);
    expect(reply.body.code).toBe('WALLET_SIGNATURE_BODY_MISMATCH');
    expect((await customerAccount(t, wallet.customerId, 'type=EMBEDDED_WALLET')).privateEnabled).toBe(true);
  });

  it('refuses a retry stamped by a key that is no session of the wallet (401 WALLET_SIGNATURE_INVALID)', async () => {
    const body = { privateEnabled: false };
    const challenge = await t.api('PATCH', path, { body });
    const stranger = clientKey();
    const reply = await retry(
      t,
      'PATCH',
      path,
      body,
      challenge.body.requestId,
      await stranger.stamp(challenge.body.payloadToSign),
    );
    expect(reply.status).toBe(401);
    expect(reply.body.code).toBe('WALLET_SIGNATURE_INVALID');
    expect((await customerAccount(t, wallet.customerId, 'type=EMBEDDED_WALLET')).privateEnabled).toBe(true);
    // The refused retry did not use the challenge: the session's stamp still completes it.
    const good = await retry(
      t,
      'PATCH',
      path,
      body,
      challenge.body.requestId,
      await key.stamp(challenge.body.payloadToSign),
    );
    expect(good.status, good.text).toBe(200);
    expect(good.body.privateEnabled).toBe(false);
    // A challenge is good once.
    const again = await retry(
      t,
      'PATCH',
      path,
      body,
      challenge.body.requestId,
      await key.stamp(challenge.body.payloadToSign),
    );
    expect(again.status).toBe(401);
    expect(again.body.code).toBe('UNAUTHORIZED');
  });

  it('refuses an empty body (400 naming privateEnabled), a non-wallet account (400) and an unknown id (404)', async () => {
    const empty = await t.api('PATCH', path, { body: {} });
    expect(empty.status).toBe(400);
    expect(empty.body.code).toBe('INVALID_INPUT');
    expect(fieldsOf(empty)).toEqual(['privateEnabled']);

    const usd = await customerAccount(t, wallet.customerId, 'currency=USD');
    expect(usd.type).toBe('INTERNAL_FIAT');
    const fiat = await t.api('PATCH', `/internal-accounts/${usd.id}`, { body: { privateEnabled: true } });
    expect(fiat.status).toBe(400);
    expect(fiat.body.code).toBe('INVALID_INPUT');
    expect((await customerAccount(t, wallet.customerId, 'currency=USD')).privateEnabled).toBeUndefined();

    const unknown = await t.api('PATCH', `/internal-accounts/InternalAccount:${randomUUID()}`, {
      body: { privateEnabled: true },
    });
    expect(unknown.status).toBe(404);
  });

  it('refuses a retry after the challenge expired (5 minutes): 401 UNAUTHORIZED', async () => {
    const body = { privateEnabled: true };
    const challenge = await t.api('PATCH', path, { body });
    expect(challenge.status).toBe(202);
    const { now } = await t.advanceClock(5 * 60 + 1);
    // The challenge lived 5 minutes: it expired about a second before this moment.
    expect(Date.parse(now) - Date.parse(challenge.body.expiresAt)).toBeGreaterThanOrEqual(1000);
    expect(Date.parse(now) - Date.parse(challenge.body.expiresAt)).toBeLessThan(10_000);
    const reply = await retry(
      t,
      'PATCH',
      path,
      body,
      challenge.body.requestId,
      await key.stamp(challenge.body.payloadToSign),
    );
    expect(reply.status).toBe(401);
    expect(reply.body.code).toBe('UNAUTHORIZED');
    expect((await customerAccount(t, wallet.customerId, 'type=EMBEDDED_WALLET')).privateEnabled).toBe(false);
  });
});

describe('exportInternalAccount: POST /internal-accounts/{id}/export', () => {
  let t: TestApp;
  let wallet: Awaited<ReturnType<typeof customerWallet>>;
  let key: ClientKey;
  let path: string;

  beforeAll(async () => {
    t = await build();
    wallet = await customerWallet(t);
    ({ key } = await otpLogin(t, wallet.credentials[0].id));
    path = `/internal-accounts/${wallet.accountId}/export`;
  });

  /** Both legs of an export to a fresh key; answers the mnemonic opened with that key. */
  async function exportPhrase(): Promise<string> {
    const target = clientKey();
    const { challenge, reply } = await signed(t, 'POST', path, key, { clientPublicKey: target.publicKeyUncompressed });
    expect(Object.keys(challenge.body).sort()).toEqual(['expiresAt', 'payloadToSign', 'requestId']);
    expect(JSON.parse(challenge.body.payloadToSign)).toMatchObject({
      type: 'ACTIVITY_TYPE_EXPORT_WALLET',
      parameters: { targetPublicKey: target.publicKeyUncompressed },
    });
    expect(reply.status, reply.text).toBe(200);
    expect(Object.keys(reply.body).sort()).toEqual(['encryptedWalletCredentials', 'id']);
    expect(reply.body.id).toBe(wallet.accountId);
    const bundle = JSON.parse(reply.body.encryptedWalletCredentials);
    expect(bundle).toEqual({ version: 'v1.0.0', data: expect.any(String), dataSignature: '', enclaveQuorumPublic: '' });
    const data = JSON.parse(Buffer.from(bundle.data, 'hex').toString('utf8'));
    expect(Object.keys(data).sort()).toEqual(['ciphertext', 'encappedPublic', 'organizationId']);
    expect(data.encappedPublic).toMatch(/^04[0-9a-f]{128}$/);
    expect(data.organizationId).toBe(JSON.parse(challenge.body.payloadToSign).organizationId);
    const plain = hpkeDecrypt({
      ciphertextBuf: Buffer.from(data.ciphertext, 'hex'),
      encappedKeyBuf: Buffer.from(data.encappedPublic, 'hex'),
      receiverPriv: target.privateKey,
    });
    return Buffer.from(plain).toString('utf8');
  }

  it('refuses a compressed clientPublicKey (400 naming clientPublicKey)', async () => {
    const reply = await t.api('POST', path, { body: { clientPublicKey: clientKey().publicKey } });
    expect(reply.status).toBe(400);
    expect(fieldsOf(reply)).toEqual(['clientPublicKey']);
  });

  it('seals a 12-word BIP-39 phrase to the client key, the same phrase every time', async () => {
    const phrase = await exportPhrase();
    expect(phrase.split(' ')).toHaveLength(12);
    expect(validateMnemonic(phrase, wordlist)).toBe(true);
    expect(await exportPhrase()).toBe(phrase);
  });

  it('refuses a retry whose clientPublicKey differs from the first leg (401 WALLET_SIGNATURE_BODY_MISMATCH)', async () => {
    const first = clientKey();
    const challenge = await t.api('POST', path, { body: { clientPublicKey: first.publicKeyUncompressed } });
    expect(challenge.status).toBe(202);
    const reply = await retry(
      t,
      'POST',
      path,
      { clientPublicKey: clientKey().publicKeyUncompressed },
      challenge.body.requestId,
      await key.stamp(challenge.body.payloadToSign),
    );
    expect(reply.status).toBe(401);
    expect(reply.body.code).toBe('WALLET_SIGNATURE_BODY_MISMATCH');
  });

  it('refuses a non-wallet account (400) and an unknown one (404)', async () => {
    const usd = await customerAccount(t, wallet.customerId, 'currency=USD');
    const body = { clientPublicKey: clientKey().publicKeyUncompressed };
    expect((await t.api('POST', `/internal-accounts/${usd.id}/export`, { body })).status).toBe(400);
    expect((await t.api('POST', `/internal-accounts/InternalAccount:${randomUUID()}/export`, { body })).status).toBe(
      404,
    );
  });
});

describe('executeQuote from an EMBEDDED_WALLET source (Grid-Wallet-Signature)', () => {
  let t: TestApp;
  let wallet: Awaited<ReturnType<typeof customerWallet>>;
  let destinationId: string;

  beforeAll(async () => {
    t = await build();
    wallet = await customerWallet(t);
    await fund(t, wallet.accountId, 50_000_000);
    const destination = await t.api('POST', '/customers/external-accounts', {
      body: { ...accountBody('MXN_ACCOUNT'), customerId: wallet.customerId },
    });
    expect(destination.status, destination.text).toBe(201);
    destinationId = destination.body.id;
  });

  const walletBalance = async () =>
    (await customerAccount(t, wallet.customerId, 'type=EMBEDDED_WALLET')).balance.amount;

  async function walletQuote(amount = 1_000_000) {
    const reply = await createQuote(t, accountQuoteBody(wallet.accountId, destinationId, { amount }));
    expect(reply.status, reply.text).toBe(201);
    return reply.body;
  }

  async function expectUntouched(quote: any, balance: number) {
    expect((await quoteOf(t, quote.id)).status).toBe('PENDING');
    expect(await walletBalance()).toBe(balance);
  }

  it('releases the payment only with a live session stamp of payloadToSign', async () => {
    // A session opened now is past its 15 minutes when the quote below is executed.
    const old = await otpLogin(t, wallet.credentials[0].id);
    await t.advanceClock(10 * 60);
    const { key } = await otpLogin(t, wallet.credentials[0].id);
    const quote = await walletQuote();
    expect(quote.status).toBe('PENDING');
    expect(quote.paymentInstructions).toHaveLength(1);
    const info = quote.paymentInstructions[0].accountOrWalletInfo;
    expect(Object.keys(info).sort()).toEqual(['accountType', 'payloadToSign']);
    expect(info.accountType).toBe('EMBEDDED_WALLET');
    expect(JSON.parse(info.payloadToSign)).toMatchObject({ type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2' });
    const payload: string = info.payloadToSign;
    const balance = await walletBalance();
    expect(balance).toBe(50_000_000);

    const missing = await executeQuote(t, quote.id);
    expect(missing.status).toBe(401);
    expect(missing.body.code).toBe('WALLET_SIGNATURE_MISSING');
    await expectUntouched(quote, balance);

    const stranger = await executeQuote(t, quote.id, { 'Grid-Wallet-Signature': await clientKey().stamp(payload) });
    expect(stranger.status).toBe(401);
    expect(stranger.body.code).toBe('WALLET_SIGNATURE_INVALID');

    const malformed = await executeQuote(t, quote.id, { 'Grid-Wallet-Signature': 'not a stamp' });
    expect(malformed.status).toBe(401);
    expect(malformed.body.code).toBe('WALLET_SIGNATURE_MALFORMED');

    // A live session, but of another wallet of the platform.
    const neighbour = await customerWallet(t);
    const { key: neighbourKey } = await otpLogin(t, neighbour.credentials[0].id);
    const foreign = await executeQuote(t, quote.id, { 'Grid-Wallet-Signature': await neighbourKey.stamp(payload) });
    expect(foreign.status).toBe(401);
    expect(foreign.body.code).toBe('WALLET_SIGNATURE_INVALID');

    const otherPayload = await executeQuote(t, quote.id, { 'Grid-Wallet-Signature': await key.stamp(`${payload} `) });
    expect(otherPayload.status).toBe(401);
    expect(otherPayload.body.code).toBe('WALLET_SIGNATURE_INVALID');
    await expectUntouched(quote, balance);

    // Six minutes on: the first session is past its 15 minutes, the quote is not.
    const { now } = await t.advanceClock(6 * 60);
    expect(Date.parse(quote.expiresAt)).toBeGreaterThan(Date.parse(now));
    expect(Date.parse(old.session.expiresAt)).toBeLessThan(Date.parse(now));
    const expired = await executeQuote(t, quote.id, { 'Grid-Wallet-Signature': await old.key.stamp(payload) });
    expect(expired.status).toBe(401);
    expect(expired.body.code).toBe('WALLET_SIGNATURE_INVALID');
    await expectUntouched(quote, balance);

    const good = await executeQuote(t, quote.id, { 'Grid-Wallet-Signature': await key.stamp(payload) });
    expect(good.status, good.text).toBe(200);
    expect(good.body).toMatchObject({ id: quote.id, status: 'COMPLETED', totalSendingAmount: 1_000_000 });
    expect(await walletBalance()).toBe(balance - quote.totalSendingAmount);
    expect(await transactionOf(t, quote.transactionId)).toMatchObject({
      id: quote.transactionId,
      quoteId: quote.id,
      status: 'COMPLETED',
      source: { sourceType: 'ACCOUNT', accountId: wallet.accountId, currency: 'USDB' },
      destination: { accountId: destinationId, currency: 'MXN' },
      sentAmount: { amount: quote.totalSendingAmount, currency: { code: 'USDB' } },
    });

    const again = await executeQuote(t, quote.id, { 'Grid-Wallet-Signature': await key.stamp(payload) });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('CONFLICT');
    expect(await walletBalance()).toBe(balance - quote.totalSendingAmount);
  });

  it("refuses a revoked session's stamp (401 WALLET_SIGNATURE_INVALID)", async () => {
    const { session, key } = await otpLogin(t, wallet.credentials[0].id);
    const quote = await walletQuote(2_000_000);
    const payload: string = quote.paymentInstructions[0].accountOrWalletInfo.payloadToSign;
    const revoke = await signed(t, 'DELETE', `/auth/sessions/${session.id}`, key);
    expect(revoke.reply.status, revoke.reply.text).toBe(204);
    const balance = await walletBalance();
    const reply = await executeQuote(t, quote.id, { 'Grid-Wallet-Signature': await key.stamp(payload) });
    expect(reply.status).toBe(401);
    expect(reply.body.code).toBe('WALLET_SIGNATURE_INVALID');
    await expectUntouched(quote, balance);
  });

  it('accepts the legacy sandbox value sandbox-valid-signature', async () => {
    const quote = await walletQuote(3_000_000);
    const balance = await walletBalance();
    const reply = await executeQuote(t, quote.id, { 'Grid-Wallet-Signature': 'sandbox-valid-signature' });
    expect(reply.status, reply.text).toBe(200);
    expect(await walletBalance()).toBe(balance - quote.totalSendingAmount);
  });

  it('reads the stamp from the older header name Service-Wallet-Signature too', async () => {
    const { key } = await otpLogin(t, wallet.credentials[0].id);
    const quote = await walletQuote(1_500_000);
    const balance = await walletBalance();
    const payload: string = quote.paymentInstructions[0].accountOrWalletInfo.payloadToSign;
    const reply = await executeQuote(t, quote.id, { 'Service-Wallet-Signature': await key.stamp(payload) });
    expect(reply.status, reply.text).toBe(200);
    expect(await walletBalance()).toBe(balance - quote.totalSendingAmount);
  });

  it('refuses immediatelyExecute from a wallet (400 naming immediatelyExecute)', async () => {
    const reply = await createQuote(
      t,
      accountQuoteBody(wallet.accountId, destinationId, { amount: 1_000_000, extra: { immediatelyExecute: true } }),
    );
    expect(reply.status).toBe(400);
    expect(fieldsOf(reply)).toEqual(['immediatelyExecute']);
  });

  it('needs no signature for a quote from a non-wallet account', async () => {
    const usd = await customerAccount(t, wallet.customerId, 'currency=USD');
    await fund(t, usd.id, 1_000_000);
    const quote = (await createQuote(t, accountQuoteBody(usd.id, destinationId, { amount: 10_000 }))).body;
    expect(quote.paymentInstructions).toBeUndefined();
    const reply = await executeQuote(t, quote.id);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.status).toBe('COMPLETED');
    expect((await customerAccount(t, wallet.customerId, 'currency=USD')).balance.amount).toBe(
      1_000_000 - quote.totalSendingAmount,
    );
  });
});

describe('delegated keys: /auth/delegated-keys', () => {
  let t: TestApp;
  let wallet: Awaited<ReturnType<typeof customerWallet>>;

  beforeAll(async () => {
    t = await build();
    wallet = await customerWallet(t);
  });

  it('lists none (200 {data: []}) and refuses a malformed accountId (400)', async () => {
    const all = await t.api('GET', '/auth/delegated-keys');
    expect(all.status).toBe(200);
    expect(all.body).toEqual({ data: [] });
    const mine = await t.api('GET', `/auth/delegated-keys?accountId=${wallet.accountId}`);
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual({ data: [] });
    const bad = await t.api('GET', '/auth/delegated-keys?accountId=bad');
    expect(bad.status).toBe(400);
    expect(fieldsOf(bad)).toEqual(['accountId']);
  });

  it('answers 404 for an unknown key on GET and DELETE', async () => {
    const id = `DelegatedKey:${randomUUID()}`;
    expect((await t.api('GET', `/auth/delegated-keys/${id}`)).status).toBe(404);
    expect((await t.api('DELETE', `/auth/delegated-keys/${id}`)).status).toBe(404);
  });

  it('refuses a body without a required field (400 naming it)', async () => {
    const reply = await t.api('POST', '/auth/delegated-keys', {
      body: { cardId: `Card:${randomUUID()}`, internalAccountId: wallet.accountId },
    });
    expect(reply.status).toBe(400);
    expect(fieldsOf(reply)).toEqual(['nickname']);
  });

  it('answers 404 for an unknown account or card, 400 for a non-wallet account, 404 for a card it does not fund', async () => {
    const body = (internalAccountId: string, cardId = `Card:${randomUUID()}`) => ({
      cardId,
      internalAccountId,
      nickname: 'Checkout key',
    });
    const unknown = await t.api('POST', '/auth/delegated-keys', { body: body(`InternalAccount:${randomUUID()}`) });
    expect(unknown.status).toBe(404);
    const usd = await customerAccount(t, wallet.customerId, 'currency=USD');
    const fiat = await t.api('POST', '/auth/delegated-keys', { body: body(usd.id) });
    expect(fiat.status).toBe(400);
    expect(fieldsOf(fiat)).toEqual(['internalAccountId']);
    const card = await t.api('POST', '/auth/delegated-keys', { body: body(wallet.accountId) });
    expect(card.status).toBe(404);
    const usdCard = await t.api('POST', '/cards', {
      body: { cardholderId: wallet.customerId, form: 'VIRTUAL', fundingSources: [usd.id] },
    });
    const notFunding = await t.api('POST', '/auth/delegated-keys', { body: body(wallet.accountId, usdCard.body.id) });
    expect(notFunding.status).toBe(404);
    expect((await t.api('GET', '/auth/delegated-keys')).body).toEqual({ data: [] });
  });

  it('creates a key in three signed legs (202, 202, 201 ACTIVE), one ACTIVE per funding source, then revokes it', async () => {
    const { key } = await otpLogin(t, wallet.credentials[0].id);
    const card = await t.api('POST', '/cards', {
      body: { cardholderId: wallet.customerId, form: 'VIRTUAL', fundingSources: [wallet.accountId] },
    });
    expect(card.status, card.text).toBe(201);
    expect(card.body.currency).toBe('USDB');
    const body = { cardId: card.body.id, internalAccountId: wallet.accountId, nickname: 'Card payments key' };
    const leg1 = await t.api('POST', '/auth/delegated-keys', { body });
    expect(leg1.status, leg1.text).toBe(202);
    expect(JSON.parse(leg1.body.payloadToSign).type).toBe('ACTIVITY_TYPE_CREATE_USERS_V3');
    // A stamp by another key is refused and leaves the challenge open.
    const stranger = clientKey();
    const forged = await retry(
      t,
      'POST',
      '/auth/delegated-keys',
      body,
      leg1.body.requestId,
      await stranger.stamp(leg1.body.payloadToSign),
    );
    expect(forged.status).toBe(401);
    const leg2 = await retry(
      t,
      'POST',
      '/auth/delegated-keys',
      body,
      leg1.body.requestId,
      await key.stamp(leg1.body.payloadToSign),
    );
    expect(leg2.status, leg2.text).toBe(202);
    expect(JSON.parse(leg2.body.payloadToSign).type).toBe('ACTIVITY_TYPE_CREATE_POLICIES_V3');
    const pending = (await t.api('GET', `/auth/delegated-keys?accountId=${wallet.accountId}`)).body.data;
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ status: 'PENDING', cardId: card.body.id, nickname: 'Card payments key' });
    expect(pending[0].publicKey).toMatch(/^0[23][0-9a-f]{64}$/);
    expect(JSON.stringify(pending[0])).not.toContain('privateKey');
    // The first leg's Request-Id is spent.
    expect(
      (
        await retry(
          t,
          'POST',
          '/auth/delegated-keys',
          body,
          leg1.body.requestId,
          await key.stamp(leg1.body.payloadToSign),
        )
      ).status,
    ).toBe(401);
    const leg3 = await retry(
      t,
      'POST',
      '/auth/delegated-keys',
      body,
      leg2.body.requestId,
      await key.stamp(leg2.body.payloadToSign),
    );
    expect(leg3.status, leg3.text).toBe(201);
    expect(leg3.body).toMatchObject({
      id: pending[0].id,
      status: 'ACTIVE',
      cardId: card.body.id,
      accountId: wallet.accountId,
      fundingSourceId: expect.stringMatching(/^CardFundingSource:/),
    });
    // Custodied sealed: the stored private half is not the key's scalar in hex, and opens to the public key shown.
    const stored = await t.deps.db.k
      .selectFrom('delegated_keys')
      .select('private_key')
      .where('id', '=', leg3.body.id)
      .executeTakeFirstOrThrow();
    expect(stored.private_key).not.toMatch(/^[0-9a-f]{64}$/);
    const sealingKey = await railyardKey(t.deps.db.k, 'delegated-keys', new Date());
    expect(publicKeysOf(openText(sealingKey, stored.private_key!)).compressed).toBe(leg3.body.publicKey);
    const second = await t.api('POST', '/auth/delegated-keys', { body });
    expect(second.status).toBe(409);
    expect((await t.api('DELETE', `/auth/delegated-keys/${leg3.body.id}`)).status).toBe(204);
    expect((await t.api('GET', `/auth/delegated-keys/${leg3.body.id}`)).body.status).toBe('REVOKED');
    expect((await t.api('POST', '/auth/delegated-keys', { body })).status).toBe(202);
  });
});
