// Mints and burns: the amount rules, funding sources (and the reserved ones), the sandbox
// timeline with funding and expiry, each magic value's outcome, replays, and the ledger.

import { describe, expect, it } from 'vitest';
import { expectBalancedBooks } from '../fixtures/money.js';
import { build, type TestApp } from '../helper.js';
import {
  burn,
  idem,
  link,
  mint,
  operation,
  postingsOf,
  provisionedCoin,
  register,
  sparkToken,
  sparkWallet,
  systemBalance,
  usdBank,
} from './support.js';

async function setup(t: TestApp) {
  const l = await link(t);
  const coin = await provisionedCoin(t, l.id);
  const wallet = await sparkWallet(t);
  const bank = await usdBank(t);
  return { link: l, coin, wallet, bank };
}

const achMint = (bankId: string, walletId: string, amount = '25000000') => ({
  amount,
  fundingSource: { type: 'ACH_DEBIT', externalAccountId: bankId },
  destination: { accountId: walletId },
  description: 'Treasury top-up',
});

const externalBurn = (bankId: string, amount = '5000000', rail = 'ACH_CREDIT') => ({
  amount,
  source: { type: 'EXTERNAL_ACCOUNT' },
  destination: { type: 'EXTERNAL_ACCOUNT', externalAccountId: bankId, rail },
});

const fundOp = (t: TestApp, id: string) => t.raw('POST', `/_railyard/stablecoin-operations/${id}/fund`);

describe('POST /stablecoins/{stablecoinId}/mints (createStablecoinMint)', () => {
  it('mints by ACH debit: PENDING_PROVIDER, PROCESSING after 10 s, COMPLETED 30 s later, with its ledger postings', async () => {
    const t = await build();
    const { link: l, coin, wallet, bank } = await setup(t);
    const reply = await mint(t, coin.id, achMint(bank.id, wallet.id));
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body).toEqual({
      id: expect.stringMatching(/^StablecoinOperation:/),
      stablecoinId: coin.id,
      operationType: 'MINT',
      status: 'PENDING_PROVIDER',
      amount: '25000000',
      provider: 'BRALE',
      providerEnvironment: 'SANDBOX',
      stablecoinProviderAccountId: l.id,
      source: { type: 'ACH_DEBIT', externalAccountId: bank.id },
      destination: { accountId: wallet.id },
      providerStatus: 'pending',
      description: 'Treasury top-up',
      createdAt: expect.any(String),
      updatedAt: reply.body.createdAt,
    });
    await t.advanceClock(9);
    expect((await operation(t, reply.body.id)).status).toBe('PENDING_PROVIDER');
    await t.advanceClock(1);
    expect((await operation(t, reply.body.id)).status).toBe('PROCESSING');
    expect(await systemBalance(t, 'STABLECOIN_RESERVE', 'USD')).toBe(0n);
    await t.advanceClock(30);
    expect(await operation(t, reply.body.id)).toMatchObject({ status: 'COMPLETED', providerStatus: 'completed' });
    // 25 tokens of 6 decimals: $25.00 joins the reserve, 25,000,000 units leave the supply.
    expect(await systemBalance(t, 'STABLECOIN_RESERVE', 'USD')).toBe(2_500n);
    expect(await systemBalance(t, 'STABLECOIN_SUPPLY', coin.id)).toBe(-25_000_000n);
    expect(await systemBalance(t, 'EXTERNAL_RAILS', coin.id)).toBe(25_000_000n);
    expect(await postingsOf(t, reply.body.id)).toHaveLength(2);
    await expectBalancedBooks(t);
  });

  it('mints by wire: funding instructions, PENDING_FUNDING until the sandbox payment, then the provider timeline', async () => {
    const t = await build();
    const { coin, wallet } = await setup(t);
    const reply = await mint(t, coin.id, {
      amount: '1000000',
      fundingSource: { type: 'WIRE' },
      destination: { accountId: wallet.id },
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      status: 'PENDING_FUNDING',
      providerStatus: 'awaiting_funds',
      source: { type: 'WIRE' },
      fundingInstructions: { rail: 'WIRE', amount: '100', currency: 'USD' },
    });
    expect(reply.body.fundingInstructions.accountNumber).toMatch(/^\d{10}$/);
    expect(Date.parse(reply.body.expiresAt) - Date.parse(reply.body.createdAt)).toBe(24 * 3600 * 1000);
    await t.advanceClock(3600);
    expect((await operation(t, reply.body.id)).status).toBe('PENDING_FUNDING');
    const funded = await fundOp(t, reply.body.id);
    expect(funded.status, funded.text).toBe(200);
    expect(funded.body).toMatchObject({ status: 'PENDING_PROVIDER', providerStatus: 'pending' });
    const twice = await fundOp(t, reply.body.id);
    expect([twice.status, twice.body.code]).toEqual([409, 'CONFLICT']);
    await t.advanceClock(40);
    expect((await operation(t, reply.body.id)).status).toBe('COMPLETED');
    // Funding had no deadline once it arrived.
    await t.advanceClock(24 * 3600);
    expect((await operation(t, reply.body.id)).status).toBe('COMPLETED');
    expect(await systemBalance(t, 'STABLECOIN_RESERVE', 'USD')).toBe(100n);
    await expectBalancedBooks(t);
  });

  it('expires an unfunded operation at expiresAt, which then cannot be funded and moved nothing', async () => {
    const t = await build();
    const { coin, wallet } = await setup(t);
    const reply = await mint(t, coin.id, {
      amount: '1000000',
      fundingSource: { type: 'WIRE' },
      destination: { accountId: wallet.id },
    });
    await t.advanceClock(24 * 3600);
    expect(await operation(t, reply.body.id)).toMatchObject({ status: 'EXPIRED', providerStatus: 'expired' });
    const late = await fundOp(t, reply.body.id);
    expect([late.status, late.body.code]).toEqual([409, 'CONFLICT']);
    expect(await systemBalance(t, 'STABLECOIN_RESERVE', 'USD')).toBe(0n);
    expect(await postingsOf(t, reply.body.id)).toEqual([]);
    const unknown = await fundOp(t, 'StablecoinOperation:00000000-0000-7000-8000-000000000000');
    expect([unknown.status, unknown.body.code]).toEqual([404, 'REFERENCE_NOT_FOUND']);
  });

  it('fails a mint to a wallet ending 002 (PROVIDER_TRANSFER_FAILED) and refuses one ending 003 with 503', async () => {
    const t = await build();
    const { coin, bank } = await setup(t);
    const failing = await sparkWallet(t, '002');
    const unavailable = await sparkWallet(t, '003');
    const failed = await mint(t, coin.id, achMint(bank.id, failing.id));
    expect(failed.status).toBe(201);
    await t.advanceClock(10);
    expect((await operation(t, failed.body.id)).status).toBe('PROCESSING');
    await t.advanceClock(30);
    expect(await operation(t, failed.body.id)).toMatchObject({
      status: 'FAILED',
      failureReason: 'PROVIDER_TRANSFER_FAILED',
      providerStatus: 'failed',
    });
    const refused = await mint(t, coin.id, achMint(bank.id, unavailable.id));
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    expect((await t.api('GET', `/stablecoins/${coin.id}/operations`)).body.totalCount).toBe(1);
    expect(await systemBalance(t, 'STABLECOIN_RESERVE', 'USD')).toBe(0n);
    expect(await postingsOf(t, failed.body.id)).toEqual([]);
    await expectBalancedBooks(t);
  });

  it('holds amounts to whole cents and the amount maximum, with their own codes', async () => {
    const t = await build();
    const { coin, wallet, bank } = await setup(t);
    const cases: [string, number, string][] = [
      ['1', 400, 'INVALID_AMOUNT'],
      ['10001', 400, 'INVALID_AMOUNT'],
      ['0', 400, 'INVALID_AMOUNT'],
      ['9000000000010000', 400, 'AMOUNT_OUT_OF_RANGE'],
      ['1.5', 400, 'INVALID_INPUT'],
      ['-10000', 400, 'INVALID_INPUT'],
    ];
    for (const [amount, status, code] of cases) {
      const reply = await mint(t, coin.id, achMint(bank.id, wallet.id, amount));
      expect([reply.status, reply.body.code], amount).toEqual([status, code]);
      expect(reply.body.details.errors[0].field).toBe('amount');
    }
    // One cent is the smallest mint.
    expect((await mint(t, coin.id, achMint(bank.id, wallet.id, '10000'))).status).toBe(201);
  });

  it('refuses the reserved funding sources and names every field at once', async () => {
    const t = await build();
    const { coin, wallet } = await setup(t);
    const reserved = [
      { type: 'GRID_INTERNAL_ACCOUNT', accountId: 'InternalAccount:00000000-0000-7000-8000-000000000001' },
      { type: 'PROVIDER_INTERNAL_BALANCE', sourceTokenIdentifier: 'USDC', cryptoNetwork: 'SOLANA' },
    ];
    for (const fundingSource of reserved) {
      const reply = await mint(t, coin.id, { amount: '1000000', fundingSource, destination: { accountId: wallet.id } });
      expect([reply.status, reply.body.code]).toEqual([400, 'INVALID_INPUT']);
      expect(reply.body.details.errors).toEqual([
        { field: 'fundingSource.type', message: expect.stringContaining('reserved') },
      ]);
    }
    const several = await mint(t, coin.id, {
      amount: '3',
      fundingSource: reserved[0],
      destination: { accountId: 'InternalAccount:00000000-0000-7000-8000-000000000001' },
    });
    expect(several.body.code).toBe('INVALID_INPUT');
    expect(several.body.details.errors.map((e: any) => e.field)).toEqual([
      'amount',
      'fundingSource.type',
      'destination.accountId',
    ]);
    const noKeyBadBody = await t.api('POST', `/stablecoins/${coin.id}/mints`, {
      body: { amount: 'ten', fundingSource: { type: 'ACH_DEBIT' }, destination: {} },
    });
    expect([noKeyBadBody.status, noKeyBadBody.body.code]).toEqual([400, 'INVALID_INPUT']);
    expect(noKeyBadBody.body.details.errors.map((e: any) => e.field).sort()).toEqual(
      ['amount', 'destination.accountId', 'fundingSource.externalAccountId', 'idempotency-key'].sort(),
    );
    expect((await t.api('GET', `/stablecoins/${coin.id}/operations`)).body.totalCount).toBe(0);
  });

  it("names the schema's findings, the amount and both accounts in one 400, writing nothing", async () => {
    const t = await build();
    const { coin, wallet, bank } = await setup(t);
    const keys = async () => (await t.deps.db.k.selectFrom('idempotency_keys').selectAll().execute()).length;
    const keysBefore = await keys();
    const fields = (reply: any) => reply.body.details.errors.map((e: any) => e.field).sort();
    // The amount is not whole cents and the description is too long for the schema.
    const long = await mint(t, coin.id, { ...achMint(bank.id, wallet.id, '1'), description: 'x'.repeat(2000) });
    expect([long.status, long.body.code]).toEqual([400, 'INVALID_INPUT']);
    expect(fields(long)).toEqual(['amount', 'description']);
    // The wallet and the bank swapped.
    const swapped = await mint(t, coin.id, achMint(wallet.id, bank.id));
    expect([swapped.status, swapped.body.code]).toEqual([400, 'INVALID_INPUT']);
    expect(fields(swapped)).toEqual(['destination.accountId', 'fundingSource.externalAccountId']);
    // A bad amount and a wallet to pay out to.
    const payout = await burn(t, coin.id, externalBurn(wallet.id, '1'));
    expect([payout.status, payout.body.code]).toEqual([400, 'INVALID_INPUT']);
    expect(fields(payout)).toEqual(['amount', 'destination.externalAccountId']);
    // The same with a schema finding and no key: checked all the same.
    const noKey = await t.api('POST', `/stablecoins/${coin.id}/burns`, {
      body: {
        ...externalBurn(wallet.id, '1'),
        destination: { type: 'EXTERNAL_ACCOUNT', externalAccountId: wallet.id, rail: 'SWIFT' },
      },
    });
    expect([noKey.status, noKey.body.code]).toEqual([400, 'INVALID_INPUT']);
    expect(fields(noKey)).toEqual(['amount', 'destination.externalAccountId', 'destination.rail', 'idempotency-key']);
    // A body of the wrong shape is a 400, not a failure of the service's checks.
    for (const body of [[], { amount: 5, fundingSource: 'WIRE', destination: null }]) {
      const reply = await mint(t, coin.id, body as never);
      expect([reply.status, reply.body.code]).toEqual([400, 'INVALID_INPUT']);
    }
    // An unknown account next to another problem is named in the 400; alone it is still a 404.
    const unknown = 'ExternalAccount:00000000-0000-7000-8000-000000000000';
    const both = await mint(t, coin.id, achMint(unknown, wallet.id, '1'));
    expect([both.status, both.body.code]).toEqual([400, 'INVALID_INPUT']);
    expect(fields(both)).toEqual(['amount', 'fundingSource.externalAccountId']);
    // Only the amount: its own code, with or without the schema.
    const amountOnly = await mint(t, coin.id, achMint(bank.id, wallet.id, '1'));
    expect([amountOnly.status, amountOnly.body.code]).toEqual([400, 'INVALID_AMOUNT']);
    expect((await t.api('GET', `/stablecoins/${coin.id}/operations`)).body.totalCount).toBe(0);
    expect(await keys()).toBe(keysBefore);
  });

  it('checks the accounts: 404 for unknown ones, 400 for a wallet that is not Spark or a bank not in USD', async () => {
    const t = await build();
    const { coin, wallet, bank } = await setup(t);
    const solanaReply = await t.api('POST', '/platform/external-accounts', {
      body: {
        currency: 'USDC',
        accountInfo: { accountType: 'SOLANA_WALLET', address: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin' },
      },
    });
    expect(solanaReply.status, solanaReply.text).toBe(201);
    const solana = solanaReply.body;
    const unknown = 'ExternalAccount:00000000-0000-7000-8000-000000000000';
    const cases: [Record<string, unknown>, number, string, string][] = [
      [achMint(bank.id, unknown), 404, 'REFERENCE_NOT_FOUND', 'destination.accountId'],
      [achMint(unknown, wallet.id), 404, 'REFERENCE_NOT_FOUND', 'fundingSource.externalAccountId'],
      [achMint(bank.id, solana.id), 400, 'INVALID_INPUT', 'destination.accountId'],
      [achMint(wallet.id, wallet.id), 400, 'INVALID_INPUT', 'fundingSource.externalAccountId'],
    ];
    for (const [body, status, code, field] of cases) {
      const reply = await mint(t, coin.id, body);
      expect([reply.status, reply.body.code, reply.body.details?.errors?.[0]?.field]).toEqual([status, code, field]);
    }
  });

  it("needs a PROVISIONED stablecoin (409) on a usable link (400), and 404 for another platform's", async () => {
    const t = await build();
    const revoking = await link(t, 'client-003');
    const pending = (
      await register(t, {
        providerTokenIdentifier: 'WAIT',
        networkTokenIdentifier: sparkToken(),
        stablecoinProviderAccountId: revoking.id,
      })
    ).body;
    const wallet = await sparkWallet(t);
    const bank = await usdBank(t);
    const early = await mint(t, pending.id, achMint(bank.id, wallet.id));
    expect([early.status, early.body.code]).toEqual([409, 'CONFLICT']);
    await t.advanceClock(60); // the link is revoked at 60 s
    const revoked = await mint(t, pending.id, achMint(bank.id, wallet.id));
    expect([revoked.status, revoked.body.code]).toEqual([400, 'STABLECOIN_PROVIDER_ACCOUNT_REVOKED']);
    const other = await t.newPlatform();
    const foreign = await mint(other, pending.id, achMint(bank.id, wallet.id));
    expect([foreign.status, foreign.body.code]).toEqual([404, 'REFERENCE_NOT_FOUND']);
  });

  it('replays a repeated key byte for byte (one operation), refuses it with another body, and settles a race to one', async () => {
    const t = await build();
    const { coin, wallet, bank } = await setup(t);
    const headers = idem();
    const first = await mint(t, coin.id, achMint(bank.id, wallet.id), headers);
    const replay = await mint(t, coin.id, achMint(bank.id, wallet.id), headers);
    expect(replay.status).toBe(201);
    expect(replay.text).toBe(first.text);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const changed = await mint(t, coin.id, achMint(bank.id, wallet.id, '50000000'), headers);
    expect([changed.status, changed.body.code]).toEqual([409, 'CONFLICT']);
    const raceKey = idem();
    const race = await Promise.all(
      Array.from({ length: 4 }, () => mint(t, coin.id, achMint(bank.id, wallet.id, '30000000'), raceKey)),
    );
    expect(race.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    expect(new Set(race.map((r) => r.body.id)).size).toBe(1);
    expect((await t.api('GET', `/stablecoins/${coin.id}/operations`)).body.totalCount).toBe(2);
  });
});

describe('POST /stablecoins/{stablecoinId}/burns (createStablecoinBurn)', () => {
  async function minted(t: TestApp, amount = '100000000') {
    const base = await setup(t);
    const reply = await mint(t, base.coin.id, achMint(base.bank.id, base.wallet.id, amount));
    await t.advanceClock(40);
    expect((await operation(t, reply.body.id)).status).toBe('COMPLETED');
    return base;
  }

  it('burns from an external wallet: deposit instructions, funding, then the fiat leaves the reserve', async () => {
    const t = await build();
    const { coin, bank } = await minted(t);
    const reply = await burn(t, coin.id, { ...externalBurn(bank.id, '40000000', 'WIRE'), description: 'Redemption' });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body).toMatchObject({
      operationType: 'BURN',
      status: 'PENDING_FUNDING',
      amount: '40000000',
      source: { type: 'EXTERNAL_ACCOUNT' },
      destination: { accountId: bank.id, rail: 'WIRE' },
      fundingInstructions: { rail: 'SPARK', network: 'SPARK', valueType: 'RAIL' },
      estimatedDelivery: { rail: 'WIRE', amount: '4000', currency: 'USD', timing: expect.any(String) },
      description: 'Redemption',
    });
    expect(reply.body.fundingInstructions.address).toMatch(/^sparkrt1[02-9ac-hj-np-z]{58}$/);
    expect((await fundOp(t, reply.body.id)).status).toBe(200);
    await t.advanceClock(40);
    expect((await operation(t, reply.body.id)).status).toBe('COMPLETED');
    expect(await systemBalance(t, 'STABLECOIN_RESERVE', 'USD')).toBe(6_000n);
    expect(await systemBalance(t, 'STABLECOIN_SUPPLY', coin.id)).toBe(-60_000_000n);
    const books = await expectBalancedBooks(t);
    const kinds = await t.deps.db.k
      .selectFrom('ledger_postings')
      .select(['kind', 'currency'])
      .where('transaction_id', '=', reply.body.id)
      .orderBy('created_at')
      .execute();
    expect(kinds.map((k) => k.kind)).toEqual(['STABLECOIN_BURN', 'STABLECOIN_BURN']);
    expect(books.currencies.map((c: any) => c.currency)).toContain(coin.id);
  });

  it('burns from the provider balance without funding, and keeps burns within the supply minted', async () => {
    const t = await build();
    const { coin, bank } = await minted(t, '10000000');
    const tooMuch = await burn(t, coin.id, {
      ...externalBurn(bank.id, '10010000'),
      source: { type: 'PROVIDER_INTERNAL_BALANCE' },
    });
    expect([tooMuch.status, tooMuch.body.code]).toEqual([400, 'INVALID_AMOUNT']);
    const first = await burn(t, coin.id, {
      ...externalBurn(bank.id, '6000000'),
      source: { type: 'PROVIDER_INTERNAL_BALANCE' },
    });
    expect(first.body).toMatchObject({ status: 'PENDING_PROVIDER', source: { type: 'PROVIDER_INTERNAL_BALANCE' } });
    expect(first.body.fundingInstructions).toBeUndefined();
    // The pending burn holds its part: only 4 tokens are left to burn.
    const second = await burn(t, coin.id, externalBurn(bank.id, '5000000'));
    expect([second.status, second.body.code]).toEqual([400, 'INVALID_AMOUNT']);
    expect(second.body.details.errors[0].message).toContain('4000000');
    await t.advanceClock(40);
    expect((await operation(t, first.body.id)).status).toBe('COMPLETED');
    expect(await systemBalance(t, 'STABLECOIN_RESERVE', 'USD')).toBe(400n);
    // An expired burn gives its part back.
    const expiring = await burn(t, coin.id, externalBurn(bank.id, '4000000'));
    const overdrawn = await burn(t, coin.id, externalBurn(bank.id, '10000'));
    expect([overdrawn.status, overdrawn.body.code]).toEqual([400, 'INVALID_AMOUNT']);
    await t.advanceClock(24 * 3600);
    expect((await operation(t, expiring.body.id)).status).toBe('EXPIRED');
    expect((await burn(t, coin.id, externalBurn(bank.id, '4000000'))).status).toBe(201);
    await expectBalancedBooks(t);
  });

  it("needs a PROVISIONED stablecoin (409), answers 404 for unknown or another platform's, and replays a key", async () => {
    const t = await build();
    const { coin, bank, link: l } = await minted(t);
    const waiting = (
      await register(t, {
        providerTokenIdentifier: 'WAIT',
        networkTokenIdentifier: sparkToken(),
        stablecoinProviderAccountId: l.id,
      })
    ).body;
    const early = await burn(t, waiting.id, externalBurn(bank.id));
    expect([early.status, early.body.code]).toEqual([409, 'CONFLICT']);
    const unknown = await burn(t, 'Stablecoin:019542f5-b3e7-1d02-0000-000000000000', externalBurn(bank.id));
    expect([unknown.status, unknown.body.code]).toEqual([404, 'REFERENCE_NOT_FOUND']);
    const foreign = await burn(await t.newPlatform(), coin.id, externalBurn(bank.id));
    expect([foreign.status, foreign.body.code]).toEqual([404, 'REFERENCE_NOT_FOUND']);

    const headers = idem();
    const first = await burn(t, coin.id, externalBurn(bank.id), headers);
    expect(first.status, first.text).toBe(201);
    const replay = await burn(t, coin.id, externalBurn(bank.id), headers);
    expect([replay.status, replay.text, replay.headers['idempotent-replayed']]).toEqual([201, first.text, 'true']);
    const changed = await burn(t, coin.id, externalBurn(bank.id, '6000000'), headers);
    expect([changed.status, changed.body.code]).toEqual([409, 'CONFLICT']);
    const burns = await t.api('GET', `/stablecoins/${coin.id}/operations?operationType=BURN`);
    expect(burns.body.totalCount).toBe(1);
  });

  it('fails a burn to a bank account ending 002, refuses one ending 003 (503), and refuses the reserved source', async () => {
    const t = await build();
    const { coin } = await minted(t);
    const failing = await usdBank(t, '002');
    const down = await usdBank(t, '003');
    const failed = await burn(t, coin.id, {
      ...externalBurn(failing.id),
      source: { type: 'PROVIDER_INTERNAL_BALANCE' },
    });
    await t.advanceClock(40);
    expect(await operation(t, failed.body.id)).toMatchObject({
      status: 'FAILED',
      failureReason: 'PROVIDER_TRANSFER_FAILED',
    });
    expect(await systemBalance(t, 'STABLECOIN_RESERVE', 'USD')).toBe(10_000n);
    const unavailable = await burn(t, coin.id, externalBurn(down.id));
    expect([unavailable.status, unavailable.body.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
    const reserved = await burn(t, coin.id, {
      ...externalBurn(down.id),
      source: { type: 'GRID_INTERNAL_ACCOUNT', accountId: 'InternalAccount:00000000-0000-7000-8000-000000000001' },
    });
    expect(reserved.body.details.errors).toEqual([
      { field: 'source.type', message: expect.stringContaining('reserved') },
    ]);
    const badRail = await burn(t, coin.id, externalBurn(down.id, '10000', 'SWIFT'));
    expect(badRail.body.details.errors[0].field).toBe('destination.rail');
    const headers = idem();
    const once = await burn(t, coin.id, externalBurn(failing.id), headers);
    const again = await burn(t, coin.id, externalBurn(failing.id), headers);
    expect(again.text).toBe(once.text);
  });
});

describe('GET /stablecoins/{stablecoinId}/operations (listStablecoinOperations) and GET /stablecoin-operations/{id}', () => {
  it('lists newest first, filters by operationType, pages, and answers 404 for unknown or foreign ids', async () => {
    const t = await build();
    const { coin, wallet, bank } = await setup(t);
    const m1 = (await mint(t, coin.id, achMint(bank.id, wallet.id))).body;
    await t.advanceClock(40);
    const b1 = (await burn(t, coin.id, externalBurn(bank.id))).body;
    const m2 = (await mint(t, coin.id, achMint(bank.id, wallet.id))).body;
    const ids = async (query = '') =>
      (await t.api('GET', `/stablecoins/${coin.id}/operations${query}`)).body.data.map((o: any) => o.id);
    expect(await ids()).toEqual([m2.id, b1.id, m1.id]);
    expect(await ids('?operationType=MINT')).toEqual([m2.id, m1.id]);
    expect(await ids('?operationType=BURN')).toEqual([b1.id]);
    const page = (await t.api('GET', `/stablecoins/${coin.id}/operations?limit=2`)).body;
    expect(page).toMatchObject({ hasMore: true, totalCount: 3 });
    expect(await ids(`?limit=2&cursor=${page.nextCursor}`)).toEqual([m1.id]);
    // No 400 is declared here: a cursor it never issued ends the list.
    expect(await ids('?cursor=nonsense')).toEqual([]);
    expect((await t.api('GET', `/stablecoin-operations/${b1.id}`)).body).toEqual(b1);
    const other = await t.newPlatform();
    const foreignList = await other.api('GET', `/stablecoins/${coin.id}/operations`);
    expect([foreignList.status, foreignList.body.code]).toEqual([404, 'REFERENCE_NOT_FOUND']);
    const foreignOp = await other.api('GET', `/stablecoin-operations/${m1.id}`);
    expect([foreignOp.status, foreignOp.body.code]).toEqual([404, 'REFERENCE_NOT_FOUND']);
    const foreignFund = await other.raw('POST', `/_railyard/stablecoin-operations/${b1.id}/fund`);
    expect(foreignFund.status).toBe(404);
  });
});

describe('the OpenAPI document', () => {
  it('declares the ten stablecoin operations with their required Idempotency-Key', async () => {
    const t = await build();
    const doc = (await t.api('GET', '/openapi.json', { auth: null })).body;
    const ops = Object.values(doc.paths).flatMap((p: any) => Object.values(p) as any[]);
    const stablecoinOps = ops.filter((o) => o.tags?.includes('Stablecoins')).map((o) => o.operationId);
    expect(stablecoinOps.sort()).toEqual(
      [
        'linkStablecoinProviderAccount',
        'listStablecoinProviderAccounts',
        'getStablecoinProviderAccount',
        'registerStablecoin',
        'listStablecoins',
        'getStablecoin',
        'createStablecoinMint',
        'createStablecoinBurn',
        'listStablecoinOperations',
        'getStablecoinOperation',
      ].sort(),
    );
    const mintOp = doc.paths['/stablecoins/{stablecoinId}/mints'].post;
    expect(mintOp.parameters).toContainEqual(
      expect.objectContaining({ name: 'idempotency-key', in: 'header', required: true }),
    );
    expect(Object.keys(mintOp.responses).sort()).toEqual(['201', '400', '401', '404', '409', '500', '503']);
  });
});
