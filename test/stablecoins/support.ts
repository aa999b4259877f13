// Helpers of the stablecoin tests: a linked provider account, a registered stablecoin taken
// through its sandbox timeline, and the accounts mints and burns name.

import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { externalAccount } from '../fixtures/money.js';
import type { Reply, TestApp, Tenant } from '../helper.js';

export const idem = () => ({ 'idempotency-key': randomUUID() });

/** A Spark token identifier of the regtest network, new each time. */
export function sparkToken(): string {
  const charset = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
  let data = '';
  for (let i = 0; i < 40; i++) data += charset[Math.floor(Math.random() * 32)];
  return `btknrt1${data}`;
}

// The default client id ends in -000, never a magic suffix: a random tail ending 002 or 003
// (1 in 4,096 each) made a link INVALID or REVOKED by chance.
export function linkBody(apiClientId = `client_${randomUUID().slice(0, 8)}-000`, extra: Record<string, unknown> = {}) {
  return { provider: 'BRALE', apiClientId, apiClientSecret: `secret-${randomUUID()}`, ...extra };
}

export async function link(t: Tenant, apiClientId?: string, extra: Record<string, unknown> = {}): Promise<any> {
  const reply = await t.api('POST', '/stablecoin-provider-accounts', {
    body: linkBody(apiClientId, extra),
    headers: idem(),
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

export function register(t: Tenant, body: Record<string, unknown>, headers = idem()): Promise<Reply> {
  return t.api('POST', '/stablecoins', { body: { network: 'SPARK', ...body }, headers });
}

/** A stablecoin registered on `linkId` and advanced to PROVISIONED (and ENABLED). */
export async function provisionedCoin(t: TestApp, linkId: string, providerTokenIdentifier = 'RAIL'): Promise<any> {
  const reply = await register(t, {
    providerTokenIdentifier,
    networkTokenIdentifier: sparkToken(),
    stablecoinProviderAccountId: linkId,
  });
  expect(reply.status, reply.text).toBe(201);
  await t.advanceClock(120);
  const coin = (await t.api('GET', `/stablecoins/${reply.body.id}`)).body;
  expect(coin.issuanceStatus).toBe('PROVISIONED');
  return coin;
}

export async function sparkWallet(t: Tenant, suffix = '000'): Promise<any> {
  return externalAccount(t, 'SPARK_WALLET', suffix);
}

export async function usdBank(t: Tenant, suffix = '000'): Promise<any> {
  return externalAccount(t, 'USD_ACCOUNT', suffix);
}

export function mint(t: Tenant, coinId: string, body: Record<string, unknown>, headers = idem()): Promise<Reply> {
  return t.api('POST', `/stablecoins/${coinId}/mints`, { body, headers });
}

export function burn(t: Tenant, coinId: string, body: Record<string, unknown>, headers = idem()): Promise<Reply> {
  return t.api('POST', `/stablecoins/${coinId}/burns`, { body, headers });
}

export async function operation(t: Tenant, id: string): Promise<any> {
  const reply = await t.api('GET', `/stablecoin-operations/${id}`);
  expect(reply.status, reply.text).toBe(200);
  return reply.body;
}

/**
 * The ledger balance (sum of entries) of a system account, from the audit. An account the
 * ledger does not have is an error, so a misspelled kind or currency cannot pass for zero.
 */
export async function systemBalance(t: Tenant, kind: string, currency: string): Promise<bigint> {
  const audit = (await t.raw('GET', '/_railyard/ledger')).body;
  const account = audit.accounts.find((a: any) => a.kind === kind && a.currency === currency);
  if (account === undefined) throw new Error(`the ledger has no ${kind} account in ${currency}`);
  return BigInt(account.available);
}

/** The ledger postings made for a stablecoin operation (none until it completes). */
export async function postingsOf(t: TestApp, operationId: string): Promise<unknown[]> {
  return t.deps.db.k.selectFrom('ledger_postings').selectAll().where('transaction_id', '=', operationId).execute();
}
