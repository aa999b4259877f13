import { describe, expect, it } from 'vitest';
import {
  checkAbaRouting,
  checkClabe,
  checkIban,
  checkSolanaAddress,
  checkSparkAddress,
  checkTronAddress,
} from '../../src/modules/external-accounts/formats.js';
import { provisionInternalAccounts } from '../../src/modules/internal-accounts/service.js';
import { build } from '../helper.js';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import {
  customerWithAccounts,
  eventsOf,
  expectBalancedBooks,
  externalAccount,
  fund,
  platformAccount,
  serviceCtx,
  transferOut,
} from '../fixtures/money.js';

const USD = { code: 'USD', name: 'US Dollar', symbol: '$', decimals: 2 };

describe('GET /platform/internal-accounts', () => {
  it('lists one account per supported currency, empty, with typed funding instructions', async () => {
    const t = await build();
    const reply = await t.api('GET', '/platform/internal-accounts');
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body)).toEqual(['data']);
    const byCurrency = Object.fromEntries(reply.body.data.map((a: any) => [a.balance.currency.code, a]));
    expect(Object.keys(byCurrency).sort()).toEqual(['USD', 'USDB', 'USDC']);
    // The platform holds USDB in an internal crypto account; embedded wallets are customers'.
    expect(Object.fromEntries(Object.entries(byCurrency).map(([code, a]: [string, any]) => [code, a.type]))).toEqual({
      USD: 'INTERNAL_FIAT',
      USDC: 'INTERNAL_CRYPTO',
      USDB: 'INTERNAL_CRYPTO',
    });
    const usd = byCurrency.USD;
    expect(usd.id).toMatch(/^InternalAccount:[0-9a-f-]{36}$/);
    expect(usd.customerId).toBeUndefined();
    expect(usd).toMatchObject({
      status: 'ACTIVE',
      balance: { amount: 0, currency: USD },
      totalBalance: { amount: 0, currency: USD },
    });
    expect(usd.privateEnabled).toBeUndefined();
    const [instructions] = usd.fundingPaymentInstructions;
    expect(instructions.isPlatformAccount).toBe(true);
    expect(instructions.accountOrWalletInfo).toMatchObject({
      accountType: 'USD_ACCOUNT',
      paymentRails: ['ACH', 'WIRE'],
      routingNumber: '123456780',
    });
    expect(checkAbaRouting(instructions.accountOrWalletInfo.routingNumber)).toBeNull();
    expect(instructions.accountOrWalletInfo.accountNumber).toMatch(/^[0-9]{12}$/);
    expect(instructions.accountOrWalletInfo.reference).toMatch(/^RY-[0-9A-F]{10}$/);
    expect(instructions.instructionsNotes).toContain(`/sandbox/internal-accounts/${usd.id}/fund`);
    const usdc = byCurrency.USDC.fundingPaymentInstructions[0].accountOrWalletInfo;
    expect(usdc).toMatchObject({ accountType: 'SOLANA_WALLET', assetType: 'USDC' });
    expect(checkSolanaAddress(usdc.address)).toBeNull();
    const usdb = byCurrency.USDB.fundingPaymentInstructions[0].accountOrWalletInfo;
    expect(usdb).toMatchObject({ accountType: 'SPARK_WALLET', assetType: 'USDB' });
    expect(checkSparkAddress(usdb.address)).toBeNull();

    // Deterministic: the same account shows the same coordinates every time.
    const again = await t.api('GET', '/platform/internal-accounts');
    expect(again.body).toEqual(reply.body);
  });

  it('filters by currency and type, and rejects an unknown type', async () => {
    const t = await build();
    const usd = await t.api('GET', '/platform/internal-accounts?currency=USD');
    expect(usd.body.data.map((a: any) => a.balance.currency.code)).toEqual(['USD']);
    const crypto = await t.api('GET', '/platform/internal-accounts?type=INTERNAL_CRYPTO');
    expect(crypto.body.data.map((a: any) => a.balance.currency.code).sort()).toEqual(['USDB', 'USDC']);
    expect((await t.api('GET', '/platform/internal-accounts?type=EMBEDDED_WALLET')).body.data).toEqual([]);
    expect((await t.api('GET', '/platform/internal-accounts?currency=EUR')).body.data).toEqual([]);
    const bad = await t.api('GET', '/platform/internal-accounts?type=SAVINGS');
    expect(bad.status).toBe(400);
    expect(bad.body.details.errors).toEqual([
      expect.objectContaining({
        field: 'type',
        constraint: { enum: ['INTERNAL_FIAT', 'INTERNAL_CRYPTO', 'EMBEDDED_WALLET'] },
      }),
    ]);
  });

  it('provisions accounts for currencies added to the configuration, with instructions of each kind', async () => {
    const t = await build();
    const config = await t.api('GET', '/config');
    const extra = ['EUR', 'GBP', 'MXN', 'BRL', 'BTC', 'USDT'].map((currencyCode) => ({
      currencyCode,
      minAmount: 1,
      maxAmount: 1_000_000,
      requiredCounterpartyFields: [],
      enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
    }));
    const patched = await t.api('PATCH', '/config', {
      body: { supportedCurrencies: [...config.body.supportedCurrencies, ...extra] },
    });
    expect(patched.status).toBe(200);
    const reply = await t.api('GET', '/platform/internal-accounts');
    const info = Object.fromEntries(
      reply.body.data.map((a: any) => [a.balance.currency.code, a.fundingPaymentInstructions[0].accountOrWalletInfo]),
    );
    expect(Object.keys(info).sort()).toEqual(['BRL', 'BTC', 'EUR', 'GBP', 'MXN', 'USD', 'USDB', 'USDC', 'USDT']);
    expect(info.EUR.accountType).toBe('EUR_ACCOUNT');
    expect(checkIban(info.EUR.iban)).toBeNull();
    expect(info.GBP).toMatchObject({
      accountType: 'GBP_ACCOUNT',
      sortCode: '608371',
      paymentRails: ['FASTER_PAYMENTS'],
    });
    expect(info.GBP.accountNumber).toMatch(/^[0-9]{8}$/);
    expect(info.MXN.accountType).toBe('MXN_ACCOUNT');
    expect(checkClabe(info.MXN.clabeNumber)).toBeNull();
    expect(info.BRL).toMatchObject({
      accountType: 'SWIFT_ACCOUNT',
      paymentRails: ['SWIFT'],
      accountHolderName: 'Railyard Sandbox Client Funds',
    });
    expect(info.BTC).toMatchObject({ accountType: 'SPARK_WALLET', assetType: 'BTC' });
    expect(info.USDT).toMatchObject({ accountType: 'TRON_WALLET', assetType: 'USDT' });
    expect(checkTronAddress(info.USDT.address)).toBeNull();
    const types = Object.fromEntries(reply.body.data.map((a: any) => [a.balance.currency.code, a.type]));
    expect(types).toMatchObject({
      EUR: 'INTERNAL_FIAT',
      BRL: 'INTERNAL_FIAT',
      BTC: 'INTERNAL_CRYPTO',
      USDT: 'INTERNAL_CRYPTO',
    });
    // Provisioning does not repeat.
    expect((await t.api('GET', '/platform/internal-accounts')).body.data).toHaveLength(9);
  });

  it("shows only the platform's own accounts", async () => {
    const t = await build();
    const other = await t.newPlatform();
    const mine = (await t.api('GET', '/platform/internal-accounts')).body.data.map((a: any) => a.id);
    const theirs = (await other.api('GET', '/platform/internal-accounts')).body.data.map((a: any) => a.id);
    expect(mine).toHaveLength(3);
    expect(theirs).toHaveLength(3);
    expect(mine.filter((id: string) => theirs.includes(id))).toEqual([]);
  });
});

describe('GET /customers/internal-accounts', () => {
  it('lists the accounts provisioned for customers, filtered and paginated', async () => {
    const t = await build();
    // Creating a customer provisions one account per supported currency, in its transaction.
    const customers: string[] = [];
    for (const name of ['Avery Stone', 'Blake Moreno'])
      customers.push((await createCustomer(t, individualBody(name))).id);
    customers.sort();
    const ctx = await serviceCtx(t);
    for (const customerId of customers) {
      // Provisioning again creates nothing more.
      expect(
        await t.deps.db.transaction((tx) =>
          provisionInternalAccounts(tx, { platformId: t.platformId, customerId, now: ctx.now }),
        ),
      ).toEqual([]);
    }
    const all = await t.api('GET', '/customers/internal-accounts');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ hasMore: false, totalCount: 6 });
    expect(all.body.data.every((a: any) => customers.includes(a.customerId))).toBe(true);

    const first = await t.api('GET', `/customers/internal-accounts?customerId=${customers[0]}`);
    expect(first.body.totalCount).toBe(3);
    const byType = Object.fromEntries(first.body.data.map((a: any) => [a.type, a]));
    // USDB gives a customer an embedded wallet (self-custodial), which reports privateEnabled.
    expect(Object.keys(byType).sort()).toEqual(['EMBEDDED_WALLET', 'INTERNAL_CRYPTO', 'INTERNAL_FIAT']);
    expect(byType.EMBEDDED_WALLET).toMatchObject({
      customerId: customers[0],
      privateEnabled: false,
      balance: { amount: 0, currency: { code: 'USDB' } },
    });
    expect(byType.INTERNAL_FIAT.fundingPaymentInstructions[0].isPlatformAccount).toBe(false);

    const wallets = await t.api('GET', '/customers/internal-accounts?type=EMBEDDED_WALLET');
    expect(wallets.body.data.map((a: any) => a.customerId).sort()).toEqual(customers);
    const usd = await t.api('GET', `/customers/internal-accounts?currency=USD&customerId=${customers[1]}`);
    expect(usd.body.data.map((a: any) => [a.customerId, a.type])).toEqual([[customers[1], 'INTERNAL_FIAT']]);

    const page1 = await t.api('GET', '/customers/internal-accounts?limit=4');
    expect(page1.body).toMatchObject({ hasMore: true, totalCount: 6 });
    const page2 = await t.api('GET', `/customers/internal-accounts?limit=4&cursor=${page1.body.nextCursor}`);
    expect(page2.body.hasMore).toBe(false);
    expect(page2.body.nextCursor).toBeUndefined();
    const ids = [...page1.body.data, ...page2.body.data].map((a: any) => a.id);
    expect(new Set(ids).size).toBe(6);

    // Platform accounts never show here; another platform sees none of these.
    expect(
      (await t.api('GET', '/platform/internal-accounts')).body.data.every((a: any) => a.customerId === undefined),
    ).toBe(true);
    const other = await t.newPlatform();
    expect((await other.api('GET', '/customers/internal-accounts')).body).toMatchObject({ data: [], totalCount: 0 });
    expect((await t.api('GET', '/customers/internal-accounts?limit=0')).status).toBe(400);
  });
});

describe('POST /sandbox/internal-accounts/{accountId}/fund', () => {
  it('adds funds at once, returns the account and records INTERNAL_ACCOUNT.BALANCE_UPDATED', async () => {
    const t = await build();
    const account = await platformAccount(t, 'USD');
    const funded = await t.api('POST', `/sandbox/internal-accounts/${account.id}/fund`, { body: { amount: 100_000 } });
    expect(funded.status).toBe(200);
    expect(funded.body).toMatchObject({
      id: account.id,
      balance: { amount: 100_000, currency: USD },
      totalBalance: { amount: 100_000, currency: USD },
    });
    const again = await fund(t, account.id, 1);
    expect(again.balance.amount).toBe(100_001);
    const events = await eventsOf(t, account.id);
    expect(events.map((e) => e.type)).toEqual(['INTERNAL_ACCOUNT.BALANCE_UPDATED', 'INTERNAL_ACCOUNT.BALANCE_UPDATED']);
    expect(events[0]!.data).toEqual(funded.body);
    expect(events[1]!.data.balance.amount).toBe(100_001);
    const books = await expectBalancedBooks(t);
    expect(books.currencies).toEqual([{ currency: 'USD', entriesSum: '0', postings: 2 }]);
    expect(books.accounts.find((a: any) => a.kind === 'SANDBOX_FUNDING' && a.currency === 'USD').available).toBe(
      '-100001',
    );
  });

  it('funds a customer account and the reference maximum in one call', async () => {
    const t = await build();
    const { customer, usd } = await customerWithAccounts(t);
    const funded = await fund(t, usd.id, 100_000_000_000);
    expect(funded).toMatchObject({ customerId: customer.id, balance: { amount: 100_000_000_000 } });
  });

  it.each([
    ['zero', { amount: 0 }],
    ['a negative amount', { amount: -5 }],
    ['a fraction', { amount: 10.5 }],
    ['more than the reference maximum', { amount: 100_000_000_001 }],
    ['a string', { amount: '100' }],
    ['no amount', {}],
  ])('rejects %s with 400 naming amount, and changes nothing', async (_name, body) => {
    const t = await build();
    const account = await platformAccount(t, 'USD');
    const reply = await t.api('POST', `/sandbox/internal-accounts/${account.id}/fund`, { body });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ status: 400, code: 'INVALID_INPUT' });
    expect(reply.body.details.errors.map((e: any) => e.field)).toEqual(['amount']);
    expect((await platformAccount(t, 'USD')).balance.amount).toBe(0);
    expect(await eventsOf(t, account.id)).toEqual([]);
  });

  it('refuses a balance past the 9e15 maximum', async () => {
    const t = await build();
    const account = await platformAccount(t, 'USDC');
    // 90,000 deposits of the maximum reach 9e15 exactly; write the balance directly to get there.
    await t.deps.db.k
      .updateTable('ledger_accounts')
      .set({ available: 8_999_999_999_999_999n })
      .where('id', '=', account.id)
      .execute();
    const reply = await t.api('POST', `/sandbox/internal-accounts/${account.id}/fund`, { body: { amount: 2 } });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('INVALID_AMOUNT');
    expect(reply.body.details.errors[0].field).toBe('amount');
    const exact = await fund(t, account.id, 1);
    expect(exact.balance.amount).toBe(9_000_000_000_000_000);
  });

  it('counts held funds in the maximum, so a release never passes it', async () => {
    const t = await build();
    const account = await platformAccount(t, 'USD');
    await fund(t, account.id, 1_000);
    // A transfer that stays pending (suffix 005) holds 100 of the account's 1,000.
    const slow = await externalAccount(t, 'USD_ACCOUNT', '005');
    const pending = await transferOut(t, account.id, slow.id, 100);
    expect(pending.body.status).toBe('PROCESSING');
    await t.deps.db.k
      .updateTable('ledger_accounts')
      .set({ available: 8_999_999_999_999_900n })
      .where('id', '=', account.id)
      .execute();
    // The total is at the maximum: another deposit is refused, though the available bucket has room.
    const refused = await t.api('POST', `/sandbox/internal-accounts/${account.id}/fund`, { body: { amount: 1 } });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('INVALID_AMOUNT');
    // Releasing the hold keeps the total where it is: the cancel goes through.
    const cancelled = await t.api('POST', `/transactions/${pending.body.id}/cancel`, { body: {} });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'COMPLETED', refund: { reason: 'USER_CANCELLATION' } });
    const after = await platformAccount(t, 'USD');
    expect(after.balance.amount).toBe(9_000_000_000_000_000);
    expect(after.totalBalance.amount).toBe(9_000_000_000_000_000);
  });

  it("answers 404 for an unknown account or another platform's", async () => {
    const t = await build();
    const other = await t.newPlatform();
    const theirs = await platformAccount(other, 'USD');
    for (const id of ['InternalAccount:0193f1d2-0000-7000-8000-000000000000', theirs.id, 'nonsense']) {
      const reply = await t.api('POST', `/sandbox/internal-accounts/${encodeURIComponent(id)}/fund`, {
        body: { amount: 10 },
      });
      expect(reply.status).toBe(404);
      expect(reply.body).toMatchObject({ status: 404, code: 'REFERENCE_NOT_FOUND' });
    }
    expect((await platformAccount(other, 'USD')).balance.amount).toBe(0);
  });

  it('needs the TRANSACT permission (403 FORBIDDEN, as the operation declares 403)', async () => {
    const t = await build();
    const account = await platformAccount(t, 'USD');
    const token = await t.api('POST', '/tokens', { body: { name: 'read only', permissions: ['VIEW'] } });
    const auth = { username: token.body.clientId, password: token.body.clientSecret };
    const reply = await t.api('POST', `/sandbox/internal-accounts/${account.id}/fund`, { body: { amount: 10 }, auth });
    expect(reply.status).toBe(403);
    expect(reply.body).toMatchObject({ code: 'FORBIDDEN', details: { requiredPermission: 'TRANSACT' } });
    expect((await t.api('GET', '/platform/internal-accounts', { auth })).status).toBe(200);
    expect(
      (await t.api('POST', `/sandbox/internal-accounts/${account.id}/fund`, { body: { amount: 10 }, auth: null }))
        .status,
    ).toBe(401);
  });
});
