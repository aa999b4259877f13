import { generateKeyPairSync } from 'node:crypto';
import { iso, platformNow, type Clock } from '../../clock.js';
import { SETTLEMENT_TIMING_DEFAULT, type SettlementTiming } from '../../config.js';
import { currencyInfo } from '../../currencies.js';
import type { Queryable } from '../../db/index.js';
import { recordEvent } from '../../events/outbox.js';
import type { Ctx } from '../../http/context.js';
import { PERMISSIONS, type Deps, type PlatformSettings } from '../../http/deps.js';
import { apiError, FieldErrors } from '../../http/errors.js';
import { newId } from '../../ids.js';
import type { JobContext } from '../../jobs/queue.js';
import { activeCustomerIds } from '../customers/lookup.js';
import { provisionEveryOwner, provisionInternalAccounts } from '../internal-accounts/service.js';
import { issueToken, pinToken, type ApiTokenView } from '../tokens/service.js';
import type { CurrencyConfig, StoredConfig } from './config.js';
import * as store from './store.js';

const BOTH_DIRECTIONS: CurrencyConfig['enabledTransactionTypes'] = ['INCOMING', 'OUTGOING'];

/**
 * A new sandbox platform supports USD, USDC and USDB (the sandbox defaults the reference's
 * docs describe). maxAmount is the single-transaction maximum in the smallest unit.
 */
function defaultConfig(): StoredConfig {
  return {
    umaDomain: 'railyard.sandbox.uma.money',
    supportedCurrencies: [
      {
        currencyCode: 'USD',
        minAmount: 1,
        maxAmount: 100_000_000,
        requiredCounterpartyFields: [],
        enabledTransactionTypes: BOTH_DIRECTIONS,
      },
      {
        currencyCode: 'USDC',
        minAmount: 1,
        maxAmount: 1_000_000_000_000,
        requiredCounterpartyFields: [],
        enabledTransactionTypes: BOTH_DIRECTIONS,
      },
      {
        currencyCode: 'USDB',
        minAmount: 1,
        maxAmount: 1_000_000_000_000,
        requiredCounterpartyFields: [],
        enabledTransactionTypes: BOTH_DIRECTIONS,
      },
    ],
  };
}

const DEFAULT_SETTINGS: PlatformSettings = { counterpartyRules: false };

export interface CreatedPlatform {
  platformId: string;
  token: ApiTokenView;
}

export interface CreatePlatformInput {
  name: string;
  counterpartyRules?: boolean | undefined;
  /** Strict identifiers (PlatformSettings); the server's default (RAILYARD_STRICT_IDENTIFIERS) when unset. */
  strictIdentifiers?: boolean | undefined;
  /** How its payouts settle (PlatformSettings); the server's default (RAILYARD_SETTLEMENT_TIMING) when unset. */
  settlementTiming?: SettlementTiming | undefined;
  clientId?: string | undefined;
  clientSecret?: string | undefined;
}

/** A new tenant: its configuration, its webhook signing key pair and a token with every permission. */
export async function createPlatform(deps: Deps, input: CreatePlatformInput): Promise<CreatedPlatform> {
  const now = platformNow(deps.clock, 0);
  const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const platformId = newId('Platform');
  const config = defaultConfig();
  return deps.db.transaction(async (tx) => {
    await store.insertPlatform(tx, {
      id: platformId,
      name: input.name,
      config: JSON.stringify(config),
      settings: JSON.stringify({
        ...DEFAULT_SETTINGS,
        counterpartyRules: input.counterpartyRules ?? false,
        strictIdentifiers: input.strictIdentifiers ?? deps.config.strictIdentifiers === true,
        settlementTiming: input.settlementTiming ?? deps.config.settlementTiming ?? SETTLEMENT_TIMING_DEFAULT,
      }),
      clock_offset_ms: 0,
      webhook_private_key: keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      webhook_public_key: keys.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      created_at: iso(now),
      updated_at: iso(now),
    });
    const token = await issueToken(tx, {
      platformId,
      name: 'Sandbox token (all permissions)',
      permissions: [...PERMISSIONS],
      now,
      clientId: input.clientId,
      clientSecret: input.clientSecret,
    });
    // The platform's own internal accounts, one per supported currency.
    await provisionInternalAccounts(tx, {
      platformId,
      customerId: null,
      now,
      fresh: 'platform',
      currencies: config.supportedCurrencies.map((c) => c.currencyCode),
    });
    return { platformId, token };
  });
}

export interface BootstrapResult {
  platformId: string;
  clientId: string;
  /** Known only when the token was created now or pinned by the environment. */
  clientSecret: string | undefined;
  created: boolean;
}

/**
 * Start-up: with pinned credentials, make sure they authenticate (creating the platform on
 * first start); without, create the sandbox platform if the store has none.
 */
export async function bootstrap(deps: Deps): Promise<BootstrapResult> {
  const { clientId, clientSecret } = deps.config;
  const now = platformNow(deps.clock, 0);
  if (clientId !== undefined && clientSecret !== undefined) {
    const existing = await pinToken(deps.db.k, clientId, clientSecret, now);
    if (existing !== undefined) return { platformId: existing.platform_id, clientId, clientSecret, created: false };
    const created = await createPlatform(deps, { name: 'Sandbox platform', clientId, clientSecret });
    return { platformId: created.platformId, clientId, clientSecret, created: true };
  }
  const first = await store.firstPlatform(deps.db.k);
  if (first !== undefined) {
    const token = await deps.db.k
      .selectFrom('api_tokens')
      .select('client_id')
      .where('platform_id', '=', first.id)
      .where('deleted_at', 'is', null)
      .orderBy('created_at')
      .limit(1)
      .executeTakeFirst();
    return { platformId: first.id, clientId: token?.client_id ?? '', clientSecret: undefined, created: false };
  }
  const created = await createPlatform(deps, { name: 'Sandbox platform' });
  return {
    platformId: created.platformId,
    clientId: created.token.clientId,
    clientSecret: created.token.clientSecret,
    created: true,
  };
}

/** 404 REFERENCE_NOT_FOUND unless the platform exists (for work on a platform named by id, not by credentials). */
export async function requirePlatform(deps: Deps, platformId: string): Promise<void> {
  if ((await store.findPlatform(deps.db.k, platformId)) === undefined)
    throw apiError('REFERENCE_NOT_FOUND', `No platform ${platformId}`);
}

/** The platform's row; `forUpdate`: locked for a change made from what it holds (see store.findPlatformForUpdate). */
async function loadPlatform(q: Queryable, platformId: string, forUpdate = false): Promise<store.PlatformRow> {
  const row = await (forUpdate ? store.findPlatformForUpdate(q, platformId) : store.findPlatform(q, platformId));
  // The platform of an authenticated request always exists.
  if (row === undefined) throw new Error(`platform ${platformId} vanished`);
  return row;
}

function presentConfig(row: store.PlatformRow) {
  const config = JSON.parse(row.config) as StoredConfig;
  return {
    id: row.id,
    ...config,
    isRegulatedFinancialInstitution: false,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function getPlatformConfig(ctx: Ctx) {
  return presentConfig(await loadPlatform(ctx.db.k, ctx.platformId));
}

function checkConfigUpdate(patch: Partial<StoredConfig>): void {
  const errors = new FieldErrors();
  if (patch.webhookEndpoint !== undefined && patch.webhookEndpoint !== '') {
    let url: URL | undefined;
    try {
      url = new URL(patch.webhookEndpoint);
    } catch {
      url = undefined;
    }
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      errors.add('webhookEndpoint', 'must be an absolute http or https URL', { format: 'uri' });
    }
  }
  const seen = new Set<string>();
  patch.supportedCurrencies?.forEach((currency, i) => {
    const at = `supportedCurrencies[${i}]`;
    if (currencyInfo(currency.currencyCode) === undefined) {
      errors.add(`${at}.currencyCode`, `is not a currency railyard supports: ${currency.currencyCode}`);
    } else if (seen.has(currency.currencyCode)) {
      errors.add(`${at}.currencyCode`, `lists ${currency.currencyCode} more than once`);
    }
    seen.add(currency.currencyCode);
    if (currency.minAmount > currency.maxAmount) errors.add(`${at}.minAmount`, 'must not exceed maxAmount');
  });
  patch.feeConfigs?.forEach((fee, i) => {
    const fixed = fee.fixedFee as { currency?: string } | undefined;
    if (currencyInfo(String(fee.sourceCurrency)) === undefined)
      errors.add(`feeConfigs[${i}].sourceCurrency`, 'is not a supported currency');
    if (fixed?.currency !== undefined && currencyInfo(fixed.currency) === undefined) {
      errors.add(`feeConfigs[${i}].fixedFee.currency`, 'is not a supported currency');
    }
  });
  errors.throwIfAny();
}

const CURRENCY_CONFIG_FIELDS = [
  'currencyCode',
  'minAmount',
  'maxAmount',
  'requiredCounterpartyFields',
  'enabledTransactionTypes',
] as const;

export async function updatePlatformConfig(ctx: Ctx, patch: Partial<StoredConfig>) {
  checkConfigUpdate(patch);
  const row = await ctx.db.transaction(async (tx) => {
    const current = await loadPlatform(tx, ctx.platformId, true);
    const config = JSON.parse(current.config) as StoredConfig;
    const next: StoredConfig = { ...config };
    if (patch.umaDomain !== undefined) next.umaDomain = patch.umaDomain;
    if (patch.webhookEndpoint !== undefined) {
      if (patch.webhookEndpoint === '') delete next.webhookEndpoint;
      else next.webhookEndpoint = patch.webhookEndpoint;
    }
    if (patch.supportedCurrencies !== undefined) {
      // Read-only members a client echoes back are dropped, not stored.
      next.supportedCurrencies = patch.supportedCurrencies.map(
        (c) => Object.fromEntries(CURRENCY_CONFIG_FIELDS.map((k) => [k, c[k]])) as unknown as CurrencyConfig,
      );
    }
    if (patch.embeddedWalletConfig !== undefined) next.embeddedWalletConfig = patch.embeddedWalletConfig;
    if (patch.cardTokenization2faConfig !== undefined) next.cardTokenization2faConfig = patch.cardTokenization2faConfig;
    if (patch.feeConfigs !== undefined) next.feeConfigs = patch.feeConfigs;
    const updatedAt = iso(ctx.now);
    await store.updatePlatform(tx, ctx.platformId, { config: JSON.stringify(next), updated_at: updatedAt });
    // A currency added to the platform gives the platform and every customer their accounts in it now.
    const before = new Set(config.supportedCurrencies.map((c) => c.currencyCode));
    if (next.supportedCurrencies.some((c) => !before.has(c.currencyCode))) {
      await provisionEveryOwner(tx, {
        platformId: ctx.platformId,
        now: ctx.now,
        currencies: next.supportedCurrencies.map((c) => c.currencyCode),
        customerIds: activeCustomerIds(tx, ctx.platformId),
      });
    }
    // A new endpoint hears a TEST webhook first (sent after the commit, to the new endpoint).
    if (next.webhookEndpoint !== undefined && next.webhookEndpoint !== config.webhookEndpoint) {
      await recordEvent(tx, {
        platformId: ctx.platformId,
        type: 'TEST',
        resourceId: ctx.platformId,
        data: {},
        now: ctx.now,
      });
    }
    return { ...current, config: JSON.stringify(next), updated_at: updatedAt };
  });
  return presentConfig(row);
}

function presentRailyardPlatform(row: store.PlatformRow, clock: Clock) {
  const offsetMs = Number(row.clock_offset_ms);
  const settings = JSON.parse(row.settings) as PlatformSettings;
  return {
    id: row.id,
    name: row.name,
    counterpartyRules: settings.counterpartyRules,
    invitations: settings.invitations !== false,
    strictIdentifiers: settings.strictIdentifiers === true,
    settlementTiming: settings.settlementTiming ?? 'instant',
    clock: { now: iso(platformNow(clock, offsetMs)), offsetSeconds: offsetMs / 1000 },
    webhookPublicKey: row.webhook_public_key,
    createdAt: row.created_at,
  };
}

export async function getRailyardPlatform(ctx: Ctx) {
  return presentRailyardPlatform(await loadPlatform(ctx.db.k, ctx.platformId), ctx.deps.clock);
}

export async function updateRailyardPlatform(
  ctx: Ctx,
  patch: {
    name?: string;
    counterpartyRules?: boolean;
    invitations?: boolean;
    strictIdentifiers?: boolean;
    settlementTiming?: SettlementTiming;
  },
) {
  const row = await ctx.db.transaction(async (tx) => {
    const current = await loadPlatform(tx, ctx.platformId, true);
    const settings = { ...(JSON.parse(current.settings) as PlatformSettings) };
    if (patch.counterpartyRules !== undefined) settings.counterpartyRules = patch.counterpartyRules;
    if (patch.invitations !== undefined) settings.invitations = patch.invitations;
    if (patch.strictIdentifiers !== undefined) settings.strictIdentifiers = patch.strictIdentifiers;
    // Payouts already under way keep the timeline they were given; the next ones take the new setting.
    if (patch.settlementTiming !== undefined) settings.settlementTiming = patch.settlementTiming;
    const changes = { name: patch.name ?? current.name, settings: JSON.stringify(settings), updated_at: iso(ctx.now) };
    await store.updatePlatform(tx, ctx.platformId, changes);
    return { ...current, ...changes };
  });
  ctx.deps.authCache?.clear();
  return presentRailyardPlatform(row, ctx.deps.clock);
}

export const CLOCK_ADVANCE_SECONDS_MAX = 366 * 24 * 3600;

/** Moves the platform's sandbox clock forward by `seconds` (fractions allowed, never backwards). */
export async function advanceClock(ctx: Ctx, seconds: number) {
  await store.addClockOffset(ctx.db.k, ctx.platformId, Math.round(seconds * 1000));
  ctx.deps.authCache?.clear();
  // Everything that became due on the new time has run, here or on another instance, before the caller hears back.
  const dueBy = await platformNowOf(ctx.deps, ctx.platformId);
  const jobsRun = (await ctx.deps.jobs?.runDueEverywhere(ctx.platformId, dueBy.getTime())) ?? 0;
  return { ...(await getRailyardPlatform(ctx)), jobsRun };
}

/**
 * "Now" on a platform's clock, for work that runs outside an authenticated request. Inside
 * a transaction pass the transaction as `q` (see Db.transaction on why).
 */
export async function platformNowOf(deps: Deps, platformId: string, q: Queryable = deps.db.k): Promise<Date> {
  return platformNow(deps.clock, Number((await loadPlatform(q, platformId)).clock_offset_ms));
}

/** A Ctx for work done on a platform's behalf outside a request (a job), at the job's now. */
export async function platformCtx(job: JobContext): Promise<Ctx> {
  const row = await loadPlatform(job.deps.db.k, job.platformId);
  return {
    deps: job.deps,
    db: job.deps.db,
    platformId: job.platformId,
    settings: JSON.parse(row.settings) as PlatformSettings,
    tokenId: null,
    now: job.now,
    log: job.log,
  };
}

export async function webhookPublicKey(q: Queryable, platformId: string): Promise<string> {
  return (await loadPlatform(q, platformId)).webhook_public_key;
}
