// The platform's configuration as other areas read it: the currencies it supports and their
// limits, its UMA domain, its webhook endpoint. This is the lowest part of the platform area:
// it reads the platform's row and imports no other area, so that internal accounts (which
// provision one account per supported currency), customers and the payment areas can read
// the configuration while the platform's operations (service.ts) provision the accounts of a
// new platform or of a newly supported currency.

import type { Queryable } from '../../db/index.js';
import { apiError } from '../../http/errors.js';
import { parseShared } from '../../json.js';
import { BALANCE_MAX } from '../../ledger/index.js';
import * as store from './store.js';

/** The PlatformConfig fields a platform sets (stored as JSON, returned as given). */
export interface StoredConfig {
  umaDomain: string;
  webhookEndpoint?: string;
  supportedCurrencies: CurrencyConfig[];
  embeddedWalletConfig?: Record<string, unknown>;
  cardTokenization2faConfig?: Record<string, unknown>;
  feeConfigs?: Record<string, unknown>[];
}

export interface CurrencyConfig {
  currencyCode: string;
  minAmount: number;
  maxAmount: number;
  requiredCounterpartyFields: { name: string; mandatory: boolean }[];
  enabledTransactionTypes: ('INCOMING' | 'OUTGOING')[];
}

/**
 * Refuses a single payment of `amount` outside the platform's limits for its currency (the
 * maximum never above the ledger's balance maximum): 400 AMOUNT_OUT_OF_RANGE below the
 * minimum, 400 TRANSACTION_SIZE_LIMIT_EXCEEDED above the maximum. `field` set the amount.
 */
export function requireWithinLimits(limits: CurrencyConfig, amount: bigint, field: string): void {
  const currency = limits.currencyCode;
  if (amount < BigInt(limits.minAmount)) {
    throw apiError('AMOUNT_OUT_OF_RANGE', `The minimum ${currency} transaction is ${limits.minAmount}`, {
      minAmount: limits.minAmount,
      errors: [{ field, message: `must be at least ${limits.minAmount}` }],
    });
  }
  const maxAmount = BigInt(limits.maxAmount) < BALANCE_MAX ? BigInt(limits.maxAmount) : BALANCE_MAX;
  if (amount > maxAmount) {
    throw apiError('TRANSACTION_SIZE_LIMIT_EXCEEDED', `The maximum single ${currency} transaction is ${maxAmount}`, {
      maxAmount: Number(maxAmount),
      errors: [{ field, message: `must be at most ${maxAmount}` }],
    });
  }
}

/** The platform's stored configuration, for other areas (limits, currencies, webhook endpoint); read-only. */
export async function readPlatformConfig(q: Queryable, platformId: string): Promise<StoredConfig> {
  return storedConfig(platformId, await store.findConfigText(q, platformId));
}

/**
 * readPlatformConfig for work that must agree with the currencies the platform supports
 * (provisioning internal accounts): a configuration change running at the same time either
 * waits for the caller's transaction or is seen by it, never missed.
 */
export async function readPlatformConfigShared(tx: Queryable, platformId: string): Promise<StoredConfig> {
  return storedConfig(platformId, await store.findConfigTextShared(tx, platformId));
}

function storedConfig(platformId: string, text: string | undefined): StoredConfig {
  // The platform of an authenticated request always exists.
  if (text === undefined) throw new Error(`platform ${platformId} vanished`);
  return parseShared<StoredConfig>(text);
}
