import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { describe, expect, it } from 'vitest';
import { ACCOUNT_TYPES } from '../../src/modules/external-accounts/account-types.js';
import { accountBody, base58Encode, clabe, iban } from '../fixtures/accounts.js';
import { build, type TestApp } from '../helper.js';

const PATH = '/platform/external-accounts';

function fieldsOf(reply: { body: { details?: { errors?: { field: string }[] } } }): string[] {
  return (reply.body.details?.errors ?? []).map((e) => e.field).sort();
}

// The tests run once per account type share one server (a fresh store costs a schema and its
// migrations on PostgreSQL); each gets a platform of its own, so none sees another's accounts.
let shared: Promise<TestApp> | undefined;
const freshPlatform = async () => {
  shared ??= build();
  return (await shared).newPlatform();
};

describe('POST /platform/external-accounts', () => {
  it.each(ACCOUNT_TYPES.map((def) => def.accountType))('registers a valid %s account', async (accountType) => {
    const t = await freshPlatform();
    const body = accountBody(accountType);
    const created = await t.api('POST', PATH, { body: { ...body, platformAccountId: `ops-${accountType}` } });
    expect(created.status).toBe(201);
    expect(created.body.id).toMatch(
      /^ExternalAccount:[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(created.body).toMatchObject({
      status: 'ACTIVE',
      currency: body.currency,
      platformAccountId: `ops-${accountType}`,
    });
    expect(created.body.customerId).toBeUndefined();
    for (const [key, value] of Object.entries(body.accountInfo)) expect(created.body.accountInfo[key]).toEqual(value);
    const def = ACCOUNT_TYPES.find((d) => d.accountType === accountType)!;
    if (def.kind === 'BANK') {
      expect(created.body.accountInfo.paymentRails.length).toBeGreaterThan(0);
      for (const rail of created.body.accountInfo.paymentRails) expect(def.paymentRails).toContain(rail);
      expect(created.body.beneficiaryVerificationStatus).toBe('MATCHED');
    } else {
      expect(created.body.accountInfo.paymentRails).toBeUndefined();
      expect(created.body.beneficiaryVerificationStatus).toBeUndefined();
    }

    const fetched = await t.api('GET', `${PATH}/${created.body.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(created.body);
  });

  // One broken body per type: its first required identifying field is removed (or, for
  // types identified by any of several fields, all of them), and the 400 names it.
  it.each(ACCOUNT_TYPES.map((def) => def.accountType))(
    'rejects an invalid %s account and names the field',
    async (accountType) => {
      const t = await freshPlatform();
      const def = ACCOUNT_TYPES.find((d) => d.accountType === accountType)!;
      const body = accountBody(accountType);
      const info = { ...body.accountInfo };
      const required = Object.entries(def.fields).find(([, f]) => f.required)?.[0];
      const removed = required ? [required] : [...(def.anyOf ?? def.exactlyOne ?? [])];
      for (const field of removed) delete info[field];
      const reply = await t.api('POST', PATH, { body: { ...body, accountInfo: info } });
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({ status: 400, code: 'INVALID_INPUT' });
      expect(fieldsOf(reply)).toEqual(expect.arrayContaining(removed.map((f) => `accountInfo.${f}`)));
      const list = await t.api('GET', PATH);
      expect(list.body.totalCount).toBe(0);
    },
  );

  it('lists every invalid field of a body in one response; strict mode adds the strict ones', async () => {
    const body = {
      currency: 'USD',
      ownershipType: 'SOMEONE',
      accountInfo: {
        accountType: 'USD_ACCOUNT',
        accountNumber: '',
        routingNumber: '12345',
        bankAccountType: 'BROKERAGE',
        beneficiary: { beneficiaryType: 'INDIVIDUAL', birthDate: 'yesterday', address: { line1: '1 Main St' } },
      },
    };
    const reference = [
      'accountInfo.accountNumber',
      'accountInfo.bankAccountType',
      'accountInfo.beneficiary.address.country',
      'accountInfo.beneficiary.address.postalCode',
      'accountInfo.beneficiary.fullName',
      'accountInfo.routingNumber',
      'ownershipType',
    ];
    const t = await build();
    const reply = await t.api('POST', PATH, { body });
    expect(reply.status).toBe(400);
    // The reference gives a beneficiary's birthDate as a plain string: only strict mode asks for a date.
    expect(fieldsOf(reply)).toEqual(reference);
    const byField = Object.fromEntries(reply.body.details.errors.map((e: { field: string }) => [e.field, e]));
    expect(byField['accountInfo.routingNumber'].constraint).toMatchObject({ pattern: '^[0-9]{9}$', minLength: 9 });
    expect(byField['accountInfo.bankAccountType'].constraint).toEqual({ enum: ['CHECKING', 'SAVINGS'] });

    const strict = await t.newPlatform({ strictIdentifiers: true });
    const strictReply = await strict.api('POST', PATH, { body });
    expect(strictReply.status).toBe(400);
    expect(fieldsOf(strictReply)).toEqual([...reference, 'accountInfo.beneficiary.birthDate'].sort());
    const strictByField = Object.fromEntries(
      strictReply.body.details.errors.map((e: { field: string }) => [e.field, e]),
    );
    expect(strictByField['accountInfo.beneficiary.birthDate']).toEqual({
      field: 'accountInfo.beneficiary.birthDate',
      constraint: { format: 'date' },
      message: 'must be a valid date (strict identifiers)',
    });
  });

  it('names the allowed account types when accountType is unknown or missing', async () => {
    const t = await build();
    for (const accountInfo of [{ accountType: 'CHEQUE_ACCOUNT' }, { iban: 'x' }]) {
      const reply = await t.api('POST', PATH, { body: { currency: 'USD', accountInfo } });
      expect(reply.status).toBe(400);
      const error = reply.body.details.errors.find((e: { field: string }) => e.field === 'accountInfo.accountType');
      expect(error.constraint.enum).toContain('USD_ACCOUNT');
      expect(error.constraint.enum).toHaveLength(ACCOUNT_TYPES.length);
    }
  });

  it.each([
    // Check digits one off (98 becomes 97): another value mod 97, so never valid (02 -> 99 would be).
    [
      'an IBAN with wrong check digits',
      'EUR_ACCOUNT',
      (b: any) => ({
        ...b,
        iban:
          b.iban.slice(0, 2) +
          String(b.iban.slice(2, 4) === '98' ? 97 : Number(b.iban.slice(2, 4)) + 1).padStart(2, '0') +
          b.iban.slice(4),
      }),
      'accountInfo.iban',
      'iban',
    ],
    [
      'a routing number failing the ABA checksum',
      'USD_ACCOUNT',
      (b: any) => ({ ...b, routingNumber: '123456789' }),
      'accountInfo.routingNumber',
      'aba-routing',
    ],
    [
      'a CLABE with a wrong check digit',
      'MXN_ACCOUNT',
      (b: any) => ({ ...b, clabeNumber: b.clabeNumber.slice(0, 17) + String((Number(b.clabeNumber[17]) + 1) % 10) }),
      'accountInfo.clabeNumber',
      'clabe',
    ],
    [
      'an EVM address of the wrong length',
      'BASE_WALLET',
      (b: any) => ({ ...b, address: '0x1234' }),
      'accountInfo.address',
      'evm-address',
    ],
    [
      'a Solana key that is not 32 bytes',
      'SOLANA_WALLET',
      (b: any) => ({ ...b, address: base58Encode(Buffer.alloc(20, 7)) }),
      'accountInfo.address',
      'solana-address',
    ],
    [
      'a Tron address with a bad checksum',
      'TRON_WALLET',
      (b: any) => ({ ...b, address: `${b.address.slice(0, -1)}${b.address.endsWith('a') ? 'b' : 'a'}` }),
      'accountInfo.address',
      'tron-address',
    ],
    [
      'a lightning address without a domain',
      'LIGHTNING',
      (b: any) => ({ ...b, lightningAddress: 'maria' }),
      'accountInfo.lightningAddress',
      'lightning-address',
    ],
  ])('accepts %s, which only strict mode refuses', async (_name, accountType, mutate, field, format) => {
    const t = await build();
    const body = accountBody(accountType);
    const mutated = { ...body, accountInfo: mutate(body.accountInfo) };
    const accepted = await t.api('POST', PATH, { body: mutated });
    expect(accepted.status).toBe(201);
    expect(accepted.body.accountInfo).toMatchObject(mutated.accountInfo);

    const strict = await t.newPlatform({ strictIdentifiers: true });
    const reply = await strict.api('POST', PATH, { body: mutated });
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors).toEqual([
      { field, constraint: { format }, message: expect.stringMatching(/ \(strict identifiers\)$/) },
    ]);
    expect((await strict.api('GET', PATH)).body.totalCount).toBe(0);
    // The same body with the value the check asks for passes in strict mode.
    expect((await strict.api('POST', PATH, { body })).status).toBe(201);
  });

  it('refuses a Spark address that is not one in either mode, as the sandbox does', async () => {
    const t = await build();
    const strict = await t.newPlatform({ strictIdentifiers: true });
    const body = accountBody('SPARK_WALLET');
    for (const tenant of [t, strict]) {
      const reply = await tenant.api('POST', PATH, {
        body: { ...body, accountInfo: { ...body.accountInfo, address: 'invalid_address' } },
      });
      expect(reply.status).toBe(400);
      const error = reply.body.details.errors.find((e: { field: string }) => e.field === 'accountInfo.address');
      expect(error?.constraint).toEqual({ format: 'spark-address' });
    }
  });

  it('rejects a currency the account type cannot hold, and a lightning destination given twice', async () => {
    const t = await build();
    const usd = accountBody('USD_ACCOUNT');
    const wrongCurrency = await t.api('POST', PATH, { body: { ...usd, currency: 'EUR' } });
    expect(wrongCurrency.status).toBe(400);
    expect(wrongCurrency.body.details.errors).toEqual([
      { field: 'currency', constraint: { enum: ['USD'] }, message: expect.stringContaining('USD') },
    ]);

    const swift = accountBody('SWIFT_ACCOUNT');
    expect((await t.api('POST', PATH, { body: { ...swift, currency: 'USDC' } })).status).toBe(400);

    const lightning = accountBody('LIGHTNING');
    const twice = await t.api('POST', PATH, {
      body: { ...lightning, accountInfo: { ...lightning.accountInfo, bolt12: `lno1${'q'.repeat(40)}` } },
    });
    expect(twice.status).toBe(400);
    expect(fieldsOf(twice)).toEqual(['accountInfo.bolt12', 'accountInfo.lightningAddress']);
  });

  it('keeps only the fields the contract defines', async () => {
    const t = await build();
    const body = accountBody('GBP_ACCOUNT');
    const created = await t.api('POST', PATH, {
      body: {
        ...body,
        accountInfo: {
          ...body.accountInfo,
          nickname: 'rent',
          beneficiary: { ...(body.accountInfo.beneficiary as object), shoeSize: 42 },
        },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.accountInfo.nickname).toBeUndefined();
    expect(created.body.accountInfo.beneficiary.shoeSize).toBeUndefined();
  });
});

describe('beneficiary verification in the sandbox', () => {
  const cases = [
    ['102', 'NOT_MATCHED', undefined],
    ['103', 'PARTIAL_MATCH', 'M. Lopez'],
    ['104', 'PENDING', undefined],
    ['106', 'UNSUPPORTED', undefined],
    ['107', 'CHECKED_BY_RECEIVING_FI', undefined],
    ['101', 'MATCHED', 'Maria Lopez'],
    ['000', 'MATCHED', 'Maria Lopez'],
  ] as const;

  it.each(cases)('an account number ending in %s gives %s', async (suffix, status, verifiedName) => {
    const t = await build();
    const reply = await t.api('POST', PATH, { body: accountBody('USD_ACCOUNT', suffix) });
    expect(reply.status).toBe(201);
    expect(reply.body.beneficiaryVerificationStatus).toBe(status);
    expect(reply.body.beneficiaryVerifiedData).toEqual(verifiedName ? { fullName: verifiedName } : undefined);
  });

  it.each(['USD_ACCOUNT', 'EUR_ACCOUNT', 'MXN_ACCOUNT', 'KES_ACCOUNT', 'BRL_ACCOUNT'])(
    'a %s identifier ending in 105 is rejected as an invalid bank account',
    async (accountType) => {
      const t = await build();
      const reply = await t.api('POST', PATH, { body: accountBody(accountType, '105') });
      expect(reply.status).toBe(400);
      expect(reply.body.code).toBe('INVALID_BANK_ACCOUNT');
      expect(reply.body.details.errors[0].field).toMatch(
        /^accountInfo\.(accountNumber|iban|clabeNumber|phoneNumber|pixKey)$/,
      );
      expect((await t.api('GET', PATH)).body.totalCount).toBe(0);
    },
  );

  it('reads the suffix at the end of the user part of an identifier with a domain', async () => {
    const t = await build();
    const body = accountBody('BRL_ACCOUNT');
    const reply = await t.api('POST', PATH, {
      body: { ...body, accountInfo: { ...body.accountInfo, pixKey: 'testuser.102@pix.com.br' } },
    });
    expect(reply.status).toBe(201);
    expect(reply.body.beneficiaryVerificationStatus).toBe('NOT_MATCHED');
  });

  it('applies to IBAN and CLABE identifiers too', async () => {
    const t = await build();
    const eur = await t.api('POST', PATH, {
      body: {
        currency: 'EUR',
        accountInfo: { ...accountBody('EUR_ACCOUNT').accountInfo, iban: iban('DE', '370400440532013', '104') },
      },
    });
    expect(eur.body.beneficiaryVerificationStatus).toBe('PENDING');
    const mxn = await t.api('POST', PATH, {
      body: { currency: 'MXN', accountInfo: { ...accountBody('MXN_ACCOUNT').accountInfo, clabeNumber: clabe('106') } },
    });
    expect(mxn.body.beneficiaryVerificationStatus).toBe('UNSUPPORTED');
  });
});

describe('duplicates', () => {
  it('answers 409 when the same account is registered again, however it is spelled', async () => {
    const t = await build();
    const body = accountBody('EUR_ACCOUNT');
    const first = await t.api('POST', PATH, { body });
    expect(first.status).toBe(201);
    const again = await t.api('POST', PATH, { body: { ...body, platformAccountId: 'another-label' } });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      status: 409,
      code: 'CONFLICT',
      details: { existingExternalAccountId: first.body.id },
    });

    const wallet = accountBody('ETHEREUM_WALLET');
    expect((await t.api('POST', PATH, { body: wallet })).status).toBe(201);
    const upper = {
      ...wallet,
      accountInfo: { ...wallet.accountInfo, address: `0x${String(wallet.accountInfo.address).slice(2).toUpperCase()}` },
    };
    expect((await t.api('POST', PATH, { body: upper })).status).toBe(409);
  });

  it('allows the account again after it was deleted', async () => {
    const t = await build();
    const body = accountBody('GBP_ACCOUNT');
    const first = await t.api('POST', PATH, { body });
    expect((await t.api('DELETE', `${PATH}/${first.body.id}`)).status).toBe(204);
    const again = await t.api('POST', PATH, { body });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(first.body.id);
  });

  it('creates one account when the same body arrives many times at once', async () => {
    const t = await build();
    const body = accountBody('USD_ACCOUNT');
    const replies = await Promise.all(Array.from({ length: 12 }, () => t.api('POST', PATH, { body })));
    expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
    expect(replies.filter((r) => r.status === 409)).toHaveLength(11);
    expect((await t.api('GET', PATH)).body.totalCount).toBe(1);
  });

  it('lets two platforms register the same account independently', async () => {
    const t = await build();
    const other = await t.newPlatform();
    const body = accountBody('USD_ACCOUNT');
    expect((await t.api('POST', PATH, { body })).status).toBe(201);
    expect((await other.api('POST', PATH, { body })).status).toBe(201);
  });
});

describe('tenancy', () => {
  it("never shows one platform another platform's accounts", async () => {
    const t = await build();
    const other = await t.newPlatform();
    const mine = await t.api('POST', PATH, { body: accountBody('GBP_ACCOUNT') });
    await other.api('POST', PATH, { body: accountBody('GBP_ACCOUNT') });

    for (const [method, suffix, body] of [
      ['GET', '', undefined],
      ['DELETE', '', undefined],
      ['POST', '/challenge', { method: 'WALLET_SIGNATURE' }],
      ['POST', '/verify', { signature: 'sandbox-valid-signature' }],
    ] as const) {
      const reply = await other.api(method, `${PATH}/${mine.body.id}${suffix}`, body ? { body } : {});
      expect(reply.status).toBe(404);
      expect(reply.body).toMatchObject({ status: 404, code: 'REFERENCE_NOT_FOUND' });
    }
    const list = await other.api('GET', PATH);
    expect(list.body.totalCount).toBe(1);
    expect(list.body.data.map((a: { id: string }) => a.id)).not.toContain(mine.body.id);
    expect((await t.api('GET', `${PATH}/${mine.body.id}`)).status).toBe(200);
  });
});

describe('GET /platform/external-accounts', () => {
  it('pages newest first with an opaque cursor and filters by currency', async () => {
    const t = await build();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await t.api('POST', PATH, { body: accountBody('USD_ACCOUNT') })).body.id);
    await t.api('POST', PATH, { body: accountBody('EUR_ACCOUNT') });

    const first = await t.api('GET', `${PATH}?currency=USD&limit=2`);
    expect(first.body).toMatchObject({ hasMore: true, totalCount: 5 });
    expect(first.body.data.map((a: { id: string }) => a.id)).toEqual([ids[4], ids[3]]);
    const second = await t.api('GET', `${PATH}?currency=USD&limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.data.map((a: { id: string }) => a.id)).toEqual([ids[2], ids[1]]);
    const last = await t.api('GET', `${PATH}?currency=USD&limit=2&cursor=${second.body.nextCursor}`);
    expect(last.body.data.map((a: { id: string }) => a.id)).toEqual([ids[0]]);
    expect(last.body.hasMore).toBe(false);
    expect('nextCursor' in last.body).toBe(false);

    const exact = await t.api('GET', `${PATH}?currency=USD&limit=5`);
    expect(exact.body.hasMore).toBe(false);
    expect(exact.body.data).toHaveLength(5);
    const all = await t.api('GET', PATH);
    expect(all.body.totalCount).toBe(6);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=ten', 'limit'],
    ['cursor=not-a-cursor', 'cursor'],
    [`cursor=${Buffer.from('v1|yesterday|x').toString('base64url')}`, 'cursor'],
  ])('answers 400 for %s', async (query, field) => {
    const t = await build();
    const reply = await t.api('GET', `${PATH}?${query}`);
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('INVALID_INPUT');
    expect(reply.body.details.errors.map((e: { field: string }) => e.field)).toEqual([field]);
  });

  it('accepts the largest page size and returns an empty page when nothing matches', async () => {
    const t = await build();
    const reply = await t.api('GET', `${PATH}?limit=100&currency=JPY`);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ data: [], hasMore: false, totalCount: 0 });
  });
});

describe('DELETE /platform/external-accounts/{externalAccountId}', () => {
  it('removes the account; a second delete and later reads answer 404', async () => {
    const t = await build();
    const created = await t.api('POST', PATH, { body: accountBody('NGN_ACCOUNT') });
    const deleted = await t.api('DELETE', `${PATH}/${created.body.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await t.api('DELETE', `${PATH}/${created.body.id}`)).status).toBe(404);
    expect((await t.api('GET', `${PATH}/${created.body.id}`)).status).toBe(404);
    expect((await t.api('GET', PATH)).body.totalCount).toBe(0);
  });
});

// ------------------------------------------------------------------------ ownership

function evmWallet() {
  const secretKey = secp256k1.utils.randomSecretKey();
  const publicKey = secp256k1.getPublicKey(secretKey, false);
  const address = `0x${Buffer.from(keccak_256(publicKey.subarray(1)).subarray(12)).toString('hex')}`;
  const signMessage = (message: string) => {
    const bytes = Buffer.from(message, 'utf8');
    const digest = keccak_256(Buffer.concat([Buffer.from(`\x19Ethereum Signed Message:\n${bytes.length}`), bytes]));
    const recovered = secp256k1.sign(digest, secretKey, { prehash: false, format: 'recovered' });
    // Wallets send r || s || v with v = 27 + recovery.
    return `0x${Buffer.concat([Buffer.from(recovered.subarray(1)), Buffer.from([27 + recovered[0]!])]).toString('hex')}`;
  };
  return { address, signMessage };
}

function solanaWallet() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ type: 'spki', format: 'der' }).subarray(12);
  return {
    address: base58Encode(raw),
    signMessage: (message: string) => base58Encode(sign(null, Buffer.from(message, 'utf8'), privateKey)),
  };
}

describe('ownership verification of self-custody wallets', () => {
  async function pendingWallet(accountType: string, address: string) {
    const t = await build({ counterpartyRules: true });
    const body = accountBody(accountType);
    const created = await t.api('POST', PATH, {
      body: { ...body, ownershipType: 'FIRST_PARTY', accountInfo: { ...body.accountInfo, address } },
    });
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('PENDING_OWNERSHIP_VERIFICATION');
    return { t, account: created.body };
  }

  it('activates an EVM wallet that signs the challenge message', async () => {
    const wallet = evmWallet();
    const { t, account } = await pendingWallet('ETHEREUM_WALLET', wallet.address);
    const challenge = await t.api('POST', `${PATH}/${account.id}/challenge`, { body: { method: 'WALLET_SIGNATURE' } });
    expect(challenge.status).toBe(201);
    expect(challenge.body.method).toBe('WALLET_SIGNATURE');
    expect(challenge.body.messageToSign).toContain(account.id);
    expect(Date.parse(challenge.body.expiresAt)).toBeGreaterThan(Date.now());

    const verified = await t.api('POST', `${PATH}/${account.id}/verify`, {
      body: { signature: wallet.signMessage(challenge.body.messageToSign) },
    });
    expect(verified.status).toBe(200);
    expect(verified.body.status).toBe('ACTIVE');
    expect((await t.api('GET', `${PATH}/${account.id}`)).body.status).toBe('ACTIVE');
    // Verified accounts have nothing left to prove.
    expect(
      (await t.api('POST', `${PATH}/${account.id}/challenge`, { body: { method: 'WALLET_SIGNATURE' } })).status,
    ).toBe(409);
  });

  it('activates a Solana wallet that signs with its ed25519 key', async () => {
    const wallet = solanaWallet();
    const { t, account } = await pendingWallet('SOLANA_WALLET', wallet.address);
    const challenge = await t.api('POST', `${PATH}/${account.id}/challenge`, { body: { method: 'WALLET_SIGNATURE' } });
    const verified = await t.api('POST', `${PATH}/${account.id}/verify`, {
      body: { signature: wallet.signMessage(challenge.body.messageToSign) },
    });
    expect(verified.body.status).toBe('ACTIVE');
  });

  it('moves to UNVERIFIED on a bad signature, and a new challenge reopens verification', async () => {
    const wallet = evmWallet();
    const impostor = evmWallet();
    const { t, account } = await pendingWallet('BASE_WALLET', wallet.address);
    const first = await t.api('POST', `${PATH}/${account.id}/challenge`, { body: { method: 'WALLET_SIGNATURE' } });
    const rejected = await t.api('POST', `${PATH}/${account.id}/verify`, {
      body: { signature: impostor.signMessage(first.body.messageToSign) },
    });
    expect(rejected.status).toBe(400);
    expect(rejected.body.details.errors[0].field).toBe('signature');
    expect((await t.api('GET', `${PATH}/${account.id}`)).body.status).toBe('UNVERIFIED');
    // The failed challenge is spent.
    expect(
      (
        await t.api('POST', `${PATH}/${account.id}/verify`, {
          body: { signature: wallet.signMessage(first.body.messageToSign) },
        })
      ).status,
    ).toBe(409);

    const second = await t.api('POST', `${PATH}/${account.id}/challenge`, { body: { method: 'WALLET_SIGNATURE' } });
    expect((await t.api('GET', `${PATH}/${account.id}`)).body.status).toBe('PENDING_OWNERSHIP_VERIFICATION');
    const verified = await t.api('POST', `${PATH}/${account.id}/verify`, {
      body: { signature: wallet.signMessage(second.body.messageToSign) },
    });
    expect(verified.body.status).toBe('ACTIVE');

    const events = await t.deps.db.k
      .selectFrom('events')
      .select(['type', 'data'])
      .where('resource_id', '=', account.id)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    expect(events.map((e) => JSON.parse(e.data).status)).toEqual([
      'UNVERIFIED',
      'PENDING_OWNERSHIP_VERIFICATION',
      'ACTIVE',
    ]);
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(['EXTERNAL_ACCOUNT.STATUS_UPDATED']));
  });

  it('accepts the sandbox signature value on any network, and only an answer to the latest challenge', async () => {
    const { t, account } = await pendingWallet('SPARK_WALLET', String(accountBody('SPARK_WALLET').accountInfo.address));
    const signatureFirst = await t.api('POST', `${PATH}/${account.id}/verify`, {
      body: { signature: 'sandbox-valid-signature' },
    });
    expect(signatureFirst.status).toBe(409);
    await t.api('POST', `${PATH}/${account.id}/challenge`, { body: { method: 'WALLET_SIGNATURE' } });
    const verified = await t.api('POST', `${PATH}/${account.id}/verify`, {
      body: { signature: 'sandbox-valid-signature' },
    });
    expect(verified.body.status).toBe('ACTIVE');
  });

  it('serves a liveness page whose answer sets the outcome', async () => {
    const { t, account } = await pendingWallet('TRON_WALLET', String(accountBody('TRON_WALLET').accountInfo.address));
    const challenge = await t.api('POST', `${PATH}/${account.id}/challenge`, { body: { method: 'LIVENESS' } });
    expect(challenge.status).toBe(201);
    expect(challenge.body.method).toBe('LIVENESS');
    const link = new URL(challenge.body.verificationLink);
    const page = await t.raw('GET', link.pathname + link.search, { auth: null });
    expect(page.status).toBe(200);
    expect(page.text).toContain(account.id);
    // A LIVENESS challenge is not answered by a signature.
    expect(
      (await t.api('POST', `${PATH}/${account.id}/verify`, { body: { signature: 'sandbox-valid-signature' } })).status,
    ).toBe(409);
    const wrongToken = await t.raw('POST', `${link.pathname}/pass?token=nope`, { auth: null });
    expect(wrongToken.status).toBe(404);
    const failed = await t.raw('POST', `${link.pathname}/fail${link.search}`, {
      auth: null,
      payload: '',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(failed.status).toBe(200);
    expect(failed.body.status).toBe('UNVERIFIED');
    expect((await t.raw('POST', `${link.pathname}/pass${link.search}`, { auth: null })).status).toBe(409);
  });

  it('expires a challenge after its lifetime on the sandbox clock', async () => {
    const wallet = evmWallet();
    const { t, account } = await pendingWallet('POLYGON_WALLET', wallet.address);
    const challenge = await t.api('POST', `${PATH}/${account.id}/challenge`, { body: { method: 'WALLET_SIGNATURE' } });
    await t.raw('POST', '/_railyard/clock/advance', { body: { seconds: 16 * 60 } });
    const late = await t.api('POST', `${PATH}/${account.id}/verify`, {
      body: { signature: wallet.signMessage(challenge.body.messageToSign) },
    });
    expect(late.status).toBe(400);
    expect(late.body.message).toMatch(/expired/);
    expect((await t.api('GET', `${PATH}/${account.id}`)).body.status).toBe('PENDING_OWNERSHIP_VERIFICATION');
  });

  it('answers 409 for accounts ownership verification does not apply to', async () => {
    const t = await build({ counterpartyRules: true });
    const bank = await t.api('POST', PATH, { body: accountBody('USD_ACCOUNT') });
    const custodial = await t.api('POST', PATH, {
      body: {
        ...accountBody('BASE_WALLET'),
        ownershipType: 'FIRST_PARTY',
        accountInfo: { ...accountBody('BASE_WALLET').accountInfo, vaspName: 'Coinbase' },
      },
    });
    const thirdParty = await t.api('POST', PATH, {
      body: {
        ...accountBody('BASE_WALLET'),
        ownershipType: 'THIRD_PARTY',
        accountInfo: {
          ...accountBody('BASE_WALLET').accountInfo,
          beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Kim Park', countryOfResidence: 'KR' },
        },
      },
    });
    for (const created of [bank, custodial, thirdParty]) {
      expect(created.status).toBe(201);
      expect(created.body.status).toBe('ACTIVE');
      const reply = await t.api('POST', `${PATH}/${created.body.id}/challenge`, {
        body: { method: 'WALLET_SIGNATURE' },
      });
      expect(reply.status).toBe(409);
      expect(reply.body.code).toBe('CONFLICT');
    }
    expect((await t.api('POST', `${PATH}/${bank.body.id}/challenge`, { body: { method: 'FACE_ID' } })).status).toBe(
      400,
    );
  });
});

describe('counterparty rules (platform setting)', () => {
  it('requires ownershipType for self-custody wallets, and a beneficiary for third-party ones', async () => {
    const t = await build({ counterpartyRules: true });
    const wallet = accountBody('SOLANA_WALLET');
    const missing = await t.api('POST', PATH, { body: wallet });
    expect(missing.status).toBe(400);
    expect(fieldsOf(missing)).toEqual(['ownershipType']);
    const thirdParty = await t.api('POST', PATH, { body: { ...wallet, ownershipType: 'THIRD_PARTY' } });
    expect(fieldsOf(thirdParty)).toEqual(['accountInfo.beneficiary']);
    // Custodial wallets (with a VASP) and bank accounts need neither.
    const custodial = await t.api('POST', PATH, {
      body: { ...wallet, accountInfo: { ...wallet.accountInfo, vaspName: 'Kraken' } },
    });
    expect(custodial.status).toBe(201);
  });

  it('accepts ownershipType everywhere and starts wallets ACTIVE on platforms without the rules', async () => {
    const t = await build();
    const plain = await t.api('POST', PATH, { body: accountBody('SOLANA_WALLET') });
    expect(plain.body.status).toBe('ACTIVE');
    const firstParty = await t.api('POST', PATH, {
      body: { ...accountBody('SOLANA_WALLET'), ownershipType: 'FIRST_PARTY' },
    });
    expect(firstParty.body).toMatchObject({ status: 'ACTIVE', ownershipType: 'FIRST_PARTY' });
    const bank = await t.api('POST', PATH, { body: { ...accountBody('CAD_ACCOUNT'), ownershipType: 'THIRD_PARTY' } });
    expect(bank.body.ownershipType).toBe('THIRD_PARTY');
  });

  it('is switched per platform through /_railyard/platform', async () => {
    const t = await build();
    const patched = await t.raw('PATCH', '/_railyard/platform', { body: { counterpartyRules: true } });
    expect(patched.status).toBe(200);
    expect(patched.body.counterpartyRules).toBe(true);
    const missing = await t.api('POST', PATH, { body: accountBody('SOLANA_WALLET') });
    expect(fieldsOf(missing)).toEqual(['ownershipType']);
  });
});

// Guards the hash helper the fixtures rely on.
it('fixture IBANs carry valid check digits', () => {
  const value = iban('GB', 'NWBK60161331926', '819');
  expect(value).toBe('GB29NWBK60161331926819');
  expect(createHash('sha256').update(value).digest('hex')).toHaveLength(64);
});

// The ready-made identifiers of docs/external-accounts.md must keep working for whoever copies them.
describe('docs/external-accounts.md examples of magic identifiers', () => {
  it.each([
    ['USD_ACCOUNT', { accountNumber: '000123456102', routingNumber: '021000021' }],
    ['EUR_ACCOUNT', { iban: 'DE51370400440532013102' }],
    ['MXN_ACCOUNT', { clabeNumber: '002010077757777102' }],
    ['GBP_ACCOUNT', { accountNumber: '31926102', sortCode: '040004' }],
  ])('%s ends in 102 and is NOT_MATCHED', async (accountType, fields) => {
    const t = await build();
    const body = accountBody(accountType);
    const reply = await t.api('POST', PATH, { body: { ...body, accountInfo: { ...body.accountInfo, ...fields } } });
    expect(reply.status).toBe(201);
    expect(reply.body.beneficiaryVerificationStatus).toBe('NOT_MATCHED');
  });
});
