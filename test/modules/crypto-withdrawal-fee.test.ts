// POST /crypto/estimate-withdrawal-fee: fixed sandbox fees per currency and network, and
// every refusal with its own code.

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { build } from '../helper.js';
import { base58Encode } from '../fixtures/accounts.js';
import { platformAccount } from '../fixtures/money.js';

const solana = () => base58Encode(randomBytes(32));
const evm = () => `0x${randomBytes(20).toString('hex')}`;

function estimate(t: { api: any }, body: Record<string, unknown>) {
  return t.api('POST', '/crypto/estimate-withdrawal-fee', { body });
}

describe('POST /crypto/estimate-withdrawal-fee', () => {
  it.each([
    ['SOLANA', solana, { networkFee: 5_000, networkFeeAsset: 'SOL', totalFee: 750 }],
    ['ETHEREUM', evm, { networkFee: 420_000_000_000_000, networkFeeAsset: 'ETH', totalFee: 1_260_000 }],
    ['BASE', evm, { networkFee: 2_000_000_000_000, networkFeeAsset: 'ETH', totalFee: 6_000 }],
    ['POLYGON', evm, { networkFee: 4_000_000_000_000_000, networkFeeAsset: 'POL', totalFee: 2_000 }],
  ])('USDC on %s answers the fixed sandbox fee', async (network, address, fee) => {
    const t = await build();
    const account = await platformAccount(t, 'USDC');
    const reply = await estimate(t, {
      internalAccountId: account.id,
      currency: 'USDC',
      cryptoNetwork: network,
      amount: 2_500_000,
      destinationAddress: address(),
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ...fee, applicationFee: 0, netAmount: 2_500_000 - fee.totalFee });
  });

  it('charges nothing on Spark for a customer embedded wallet (USDB)', async () => {
    const t = await build();
    const customer = await t.api('POST', '/customers', {
      body: {
        customerType: 'INDIVIDUAL',
        platformCustomerId: 'wallet-01',
        fullName: 'Dana Whitfield',
        birthDate: '1990-02-03',
        nationality: 'US',
      },
    });
    const accounts = await t.api(
      'GET',
      `/customers/internal-accounts?customerId=${encodeURIComponent(customer.body.id)}&currency=USDB`,
    );
    const wallet = accounts.body.data[0];
    expect(wallet.type).toBe('EMBEDDED_WALLET');
    const reply = await estimate(t, {
      internalAccountId: wallet.id,
      currency: 'USDB',
      cryptoNetwork: 'SPARK',
      amount: 10,
      destinationAddress: `sparkrt1${'q'.repeat(60)}`,
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      networkFee: 0,
      networkFeeAsset: 'BTC',
      applicationFee: 0,
      totalFee: 0,
      netAmount: 10,
    });
  });

  it('answers one 400 naming every invalid field', async () => {
    const t = await build();
    const account = await platformAccount(t, 'USDC');
    const schema = await estimate(t, { internalAccountId: account.id, currency: 'USDC', amount: 1.5 });
    expect(schema.status).toBe(400);
    expect(schema.body.details.errors.map((e: any) => e.field).sort()).toEqual([
      'amount',
      'cryptoNetwork',
      'destinationAddress',
    ]);
    const several = await estimate(t, {
      internalAccountId: account.id,
      currency: 'USDC',
      cryptoNetwork: 'TRON',
      amount: 0,
      destinationAddress: 'x',
    });
    expect(several.status).toBe(400);
    expect(several.body.code).toBe('INVALID_INPUT');
    expect(several.body.details.errors).toEqual([
      {
        field: 'cryptoNetwork',
        constraint: { enum: ['SOLANA', 'ETHEREUM', 'BASE', 'POLYGON'] },
        message: 'is not a network USDC can be withdrawn on',
      },
      { field: 'amount', message: 'must be a positive amount in the smallest unit of the currency' },
    ]);
    // A Solana address on Ethereum breaks no rule of the reference: only strict mode refuses it.
    const onEthereum = { currency: 'USDC', cryptoNetwork: 'ETHEREUM', amount: 5_000_000, destinationAddress: solana() };
    const address = await estimate(t, { internalAccountId: account.id, ...onEthereum });
    expect(address.status).toBe(200);
    const strict = await t.newPlatform({ strictIdentifiers: true });
    const strictAccount = await platformAccount(strict, 'USDC');
    const strictAddress = await estimate(strict, { internalAccountId: strictAccount.id, ...onEthereum });
    expect(strictAddress.status).toBe(400);
    expect(strictAddress.body.details.errors).toEqual([
      {
        field: 'destinationAddress',
        message: 'must be 0x followed by 40 hexadecimal characters on ETHEREUM (strict identifiers)',
      },
    ]);
    const currency = await estimate(t, {
      internalAccountId: account.id,
      currency: 'DOGE',
      cryptoNetwork: 'SOLANA',
      amount: 5,
      destinationAddress: solana(),
    });
    expect(currency.body.code).toBe('INVALID_CURRENCY');
  });

  it.each([
    ['USDC', 'constructor', 'cryptoNetwork'],
    ['USDC', 'toString', 'cryptoNetwork'],
    ['constructor', 'SOLANA', 'currency'],
    ['__proto__', 'SOLANA', 'currency'],
  ])(
    'answers 400 for currency %s on network %s, names that match nothing but built-in object members',
    async (currency, cryptoNetwork, field) => {
      const t = await build();
      const account = await platformAccount(t, 'USDC');
      const reply = await t.api('POST', '/crypto/estimate-withdrawal-fee', {
        body: {
          internalAccountId: account.id,
          currency,
          cryptoNetwork,
          amount: 2_500_000,
          destinationAddress: solana(),
        },
      });
      expect(reply.status).toBe(400);
      expect(reply.body.details.errors.map((e: { field: string }) => e.field)).toEqual([field]);
    },
  );

  it("answers 404 for an unknown internal account or another platform's", async () => {
    const t = await build();
    const other = await t.newPlatform();
    const theirs = await platformAccount(other, 'USDC');
    for (const id of ['InternalAccount:019542f5-b3e7-7d02-8000-000000000001', theirs.id]) {
      const reply = await estimate(t, {
        internalAccountId: id,
        currency: 'USDC',
        cryptoNetwork: 'SOLANA',
        amount: 5_000,
        destinationAddress: solana(),
      });
      expect(reply.status).toBe(404);
      expect(reply.body).toMatchObject({ status: 404, code: 'REFERENCE_NOT_FOUND' });
    }
  });

  it('answers 400 for a fiat account, another currency than the account holds, or an amount the fee eats', async () => {
    const t = await build();
    const usd = await platformAccount(t, 'USD');
    const usdc = await platformAccount(t, 'USDC');
    const fiat = await estimate(t, {
      internalAccountId: usd.id,
      currency: 'USDC',
      cryptoNetwork: 'SOLANA',
      amount: 5_000,
      destinationAddress: solana(),
    });
    expect(fiat.body).toMatchObject({
      status: 400,
      code: 'INVALID_INPUT',
      details: { errors: [{ field: 'internalAccountId' }] },
    });
    const other = await estimate(t, {
      internalAccountId: usdc.id,
      currency: 'USDT',
      cryptoNetwork: 'SOLANA',
      amount: 5_000,
      destinationAddress: solana(),
    });
    expect(other.body).toMatchObject({ status: 400, code: 'INVALID_CURRENCY' });
    const eaten = await estimate(t, {
      internalAccountId: usdc.id,
      currency: 'USDC',
      cryptoNetwork: 'SOLANA',
      amount: 750,
      destinationAddress: solana(),
    });
    expect(eaten.body).toMatchObject({ status: 400, code: 'AMOUNT_OUT_OF_RANGE', details: { minAmount: 751 } });
    const least = await estimate(t, {
      internalAccountId: usdc.id,
      currency: 'USDC',
      cryptoNetwork: 'SOLANA',
      amount: 751,
      destinationAddress: solana(),
    });
    expect(least.body.netAmount).toBe(1);
  });
});
