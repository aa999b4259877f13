// Stablecoin issuance: a platform links its issuing provider account (BRALE; the client
// secret sealed at rest and never shown), registers a stablecoin it issued there (SPARK),
// and mints or burns it against fiat. Links and registrations are here, mints and burns in
// operations.ts; the timelines and the ledger movements in lifecycle.ts; the sandbox outcomes
// in src/rails/magic.ts.

import { createHash, createHmac, hkdfSync } from 'node:crypto';
import { iso } from '../../clock.js';
import { sealText } from '../../crypto/sealing.js';
import type { Queryable } from '../../db/index.js';
import { railyardKey } from '../../db/keys.js';
import { toPage, type PageRequest } from '../../db/pagination.js';
import { type Reply, runCommand } from '../../http/command.js';
import type { Ctx } from '../../http/context.js';
import { ApiError, apiError, type FieldError } from '../../http/errors.js';
import { plainObject } from '../../json.js';
import { newId } from '../../ids.js';
import { openStablecoinAccounts } from '../../ledger/index.js';
import { stablecoinLinkOutcomeFor, stablecoinRegistrationFor } from '../../rails/magic.js';
import { Findings } from './findings.js';
import { linkRevocationJob, scheduleRegistrationStep } from './lifecycle.js';
import type { LinkInput, RegisterInput } from './schemas.js';
import * as store from './store.js';

/** Railyard serves sandbox platforms only, and the provider environment follows the platform's mode. */
export const ENVIRONMENT = 'SANDBOX';
/** What the sandbox provider reports for every registered token. */
export const TOKEN_DECIMALS = 6;
export const BASE_CURRENCY = 'USD';
/** Digits after the point of the base currency (cents). */
export const FIAT_DECIMALS = 2;
/** Spark token identifiers: bech32m with the `btkn` prefix of a Spark network (mainnet, regtest, testnet, signet). */
const SPARK_TOKEN_IDENTIFIER = /^btkn(rt|t|s)?1[02-9ac-hj-np-z]{6,}$/;

// ------------------------------------------------------------------------------- presentation

export function presentLink(row: store.LinkRow) {
  return {
    id: row.id,
    provider: row.provider as 'BRALE',
    providerAccountId: row.provider_account_id,
    providerEnvironment: row.provider_environment as 'SANDBOX',
    status: row.status as 'ACTIVE',
    ...(row.last_verified_at !== null ? { lastVerifiedAt: row.last_verified_at } : {}),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function presentStablecoin(row: store.StablecoinRow) {
  return {
    id: row.id,
    name: row.name,
    symbol: row.symbol,
    baseCurrency: row.base_currency,
    network: row.network as 'SPARK',
    decimals: Number(row.decimals),
    issuanceStatus: row.issuance_status as 'PROVISIONED',
    gridOperationsStatus: row.grid_operations_status as 'ENABLED',
    networkTokenIdentifier: row.network_token_identifier,
    ...(row.currency !== null ? { currency: row.currency } : {}),
    provider: row.provider as 'BRALE',
    stablecoinProviderAccountId: row.stablecoin_provider_account_id,
    providerEnvironment: row.provider_environment as 'SANDBOX',
    providerTokenIdentifier: row.provider_token_identifier,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function presentOperation(row: store.OperationRow) {
  const optional = (key: string, value: unknown) => (value === null ? {} : { [key]: value });
  const json = (text: string | null) => (text === null ? null : JSON.parse(text));
  return {
    id: row.id,
    stablecoinId: row.stablecoin_id,
    operationType: row.operation_type as 'MINT',
    status: row.status as 'COMPLETED',
    amount: row.amount,
    provider: row.provider as 'BRALE',
    providerEnvironment: row.provider_environment as 'SANDBOX',
    stablecoinProviderAccountId: row.stablecoin_provider_account_id,
    source: JSON.parse(row.source),
    ...optional('fundingInstructions', json(row.funding_instructions)),
    destination: JSON.parse(row.destination),
    ...optional('estimatedDelivery', json(row.estimated_delivery)),
    ...optional('expiresAt', row.expires_at),
    ...optional('providerStatus', row.provider_status),
    ...optional('failureReason', row.failure_reason),
    ...optional('description', row.description),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

// ------------------------------------------------------------------------------- provider links

/** A provider account id as the sandbox provider would expose it for these credentials (27 base62 characters). */
function derivedProviderAccountId(apiClientId: string): string {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  let value = BigInt(`0x${createHash('sha256').update(`brale-account:${apiClientId}`).digest('hex')}`);
  let text = '';
  for (let i = 0; i < 27; i++) {
    text += alphabet[Number(value % 62n)];
    value /= 62n;
  }
  return text;
}

/**
 * The two keys drawn from railyard's stored stablecoin-provider key (HKDF-SHA256, one info
 * string each): one for the HMAC of a secret in the idempotency record, one for sealing the
 * secret at rest, so neither use of the key can lend anything to the other.
 */
export function providerSecretKeys(stored: Buffer): { hmac: Buffer; seal: Buffer } {
  const derive = (info: string) => Buffer.from(hkdfSync('sha256', stored, Buffer.alloc(0), info, 32));
  return {
    hmac: derive('railyard/stablecoin-provider-secrets/request-hash'),
    seal: derive('railyard/stablecoin-provider-secrets/sealing'),
  };
}

export async function linkStablecoinProviderAccount(
  ctx: Ctx,
  input: LinkInput,
  idempotencyKey: string | undefined,
): Promise<Reply> {
  // note: the idempotency record keeps a hash of the request; the secret enters it only as an
  // HMAC under railyard's key, so no digest of a weak secret can be guessed back from it.
  const keys = providerSecretKeys(
    await ctx.db.transaction((tx) => railyardKey(tx, 'stablecoin-provider-secrets', ctx.now)),
  );
  const request = {
    ...input,
    apiClientSecret: createHmac('sha256', keys.hmac).update(input.apiClientSecret).digest('hex'),
  };
  return runCommand(
    ctx,
    { operationId: 'linkStablecoinProviderAccount', idempotencyKey, request, conflictCode: 'CONFLICT' },
    async (tx) => {
      await store.lockPlatform(tx, ctx.platformId);
      const providerAccountId = input.providerAccountId ?? derivedProviderAccountId(input.apiClientId);
      const outcome = stablecoinLinkOutcomeFor(input.apiClientId);
      const now = iso(ctx.now);
      const verified = outcome.kind !== 'INVALID';
      const credentials = {
        status: verified ? 'ACTIVE' : 'INVALID',
        api_client_id: input.apiClientId,
        sealed_client_secret: sealText(keys.seal, input.apiClientSecret),
        last_verified_at: verified ? now : null,
        updated_at: now,
      };
      const existing = await store.findLinkByAccount(tx, ctx.platformId, {
        provider: input.provider,
        environment: ENVIRONMENT,
        providerAccountId,
      });
      let row: store.LinkRow;
      if (existing === undefined) {
        row = {
          id: newId('StablecoinProviderAccount'),
          platform_id: ctx.platformId,
          provider: input.provider,
          provider_account_id: providerAccountId,
          provider_environment: ENVIRONMENT,
          ...credentials,
          created_at: now,
        };
        await store.insertLink(tx, row);
      } else if (existing.status === 'ACTIVE') {
        throw apiError('CONFLICT', `Provider account ${providerAccountId} is linked already, as ${existing.id}`, {
          stablecoinProviderAccountId: existing.id,
        });
      } else {
        // note: a link whose credentials failed or were revoked is unusable, and there is no
        // operation to remove it; linking the account again gives it the new credentials.
        row = { ...existing, ...credentials };
        await store.updateLink(tx, row.id, credentials);
      }
      if (outcome.kind === 'REVOKED') {
        await linkRevocationJob.schedule(tx, {
          platformId: ctx.platformId,
          payload: { linkId: row.id },
          dueAt: new Date(ctx.now.getTime() + outcome.afterMs),
          now: ctx.now,
        });
      }
      return { status: 201, body: presentLink(row) };
    },
  );
}

export async function listStablecoinProviderAccounts(ctx: Ctx, query: store.LinkFilters & PageRequest) {
  return toPage(await store.listLinks(ctx.db.k, ctx.platformId, query, query), presentLink);
}

export async function getStablecoinProviderAccount(ctx: Ctx, id: string) {
  const row = await store.findLink(ctx.db.k, ctx.platformId, id);
  if (row === undefined)
    throw apiError('STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND', `No stablecoin provider account ${id}`);
  return presentLink(row);
}

/** Refuses a link that cannot be used (its credentials failed, or the provider revoked them). */
export function requireUsable(row: store.LinkRow): store.LinkRow {
  if (row.status === 'INVALID')
    throw apiError(
      'STABLECOIN_PROVIDER_ACCOUNT_INVALID',
      `Stablecoin provider account ${row.id} is INVALID: its credentials did not verify; link it again`,
    );
  if (row.status === 'REVOKED')
    throw apiError(
      'STABLECOIN_PROVIDER_ACCOUNT_REVOKED',
      `Stablecoin provider account ${row.id} was REVOKED at the provider; link it again`,
    );
  return row;
}

/**
 * The link a registration uses: the one named, else the only ACTIVE one; with no ACTIVE link
 * but a single unusable one, that link's own refusal.
 */
export async function selectLink(
  q: Queryable,
  ctx: Ctx,
  id: string | undefined,
  lock: boolean,
): Promise<store.LinkRow> {
  const field = 'stablecoinProviderAccountId';
  if (id !== undefined) {
    const row = await store.findLink(q, ctx.platformId, id, lock);
    if (row === undefined)
      throw apiError('STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND', `No stablecoin provider account ${id}`, {
        errors: [{ field, message: `names no provider account link: ${id}` }],
      });
    try {
      return requireUsable(row);
    } catch (err) {
      // Named in the request, the link is a field a one-400 answer lists.
      if (!(err instanceof ApiError)) throw err;
      throw apiError(err.code, err.message, { errors: [{ field, message: `is ${row.status}: link it again` }] });
    }
  }
  const active = await store.linkIds(q, ctx.platformId, 'BRALE', ENVIRONMENT);
  if (active.length === 0) {
    const any = await store.linkIds(q, ctx.platformId, 'BRALE', ENVIRONMENT, false);
    if (any.length === 1) return requireUsable((await store.findLink(q, ctx.platformId, any[0]!, lock))!);
    throw apiError(
      'STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND',
      'This platform has no ACTIVE stablecoin provider account link: link one first',
    );
  }
  if (active.length > 1)
    throw apiError(
      'STABLECOIN_PROVIDER_ACCOUNT_SELECTION_REQUIRED',
      'This platform has several ACTIVE stablecoin provider account links: name one in stablecoinProviderAccountId',
      { errors: [{ field, message: 'is required when several links are ACTIVE' }] },
    );
  return (await store.findLink(q, ctx.platformId, active[0]!, lock))!;
}

/**
 * Every check of a registration's request, on top of the schema's findings: the token
 * identifier and the link. The body may have failed the schema, so each field is looked at
 * only when it has the type the schema asks. The link only when all passed.
 */
async function checkRegistration(
  q: Queryable,
  ctx: Ctx,
  input: unknown,
  findings: Findings,
  lock: boolean,
): Promise<store.LinkRow | undefined> {
  const body = plainObject(input) ?? {};
  const token = body.networkTokenIdentifier;
  // The reference gives the identifier as a plain string: its Spark shape is a strict rule.
  if (
    ctx.settings.strictIdentifiers === true &&
    typeof token === 'string' &&
    !findings.has('networkTokenIdentifier') &&
    !SPARK_TOKEN_IDENTIFIER.test(token)
  )
    findings.add(
      'networkTokenIdentifier',
      'must be a Spark token identifier (bech32m text starting btkn1, btknrt1, btknt1 or btkns1) (strict identifiers)',
    );
  const named = body.stablecoinProviderAccountId;
  if (named !== undefined && (typeof named !== 'string' || findings.has('stablecoinProviderAccountId')))
    return undefined;
  try {
    const link = await selectLink(q, ctx, named, lock);
    return findings.empty ? link : undefined;
  } catch (err) {
    findings.take(err);
    return undefined;
  }
}

// ------------------------------------------------------------------------------- stablecoins

export async function registerStablecoin(
  ctx: Ctx,
  input: RegisterInput,
  idempotencyKey: string | undefined,
  schemaErrors: FieldError[] = [],
): Promise<Reply> {
  if (schemaErrors.length > 0) {
    // Checked read only and outside the command (the key may be missing or malformed), so
    // the one 400 names what the schema and the service found.
    const findings = new Findings(schemaErrors);
    await checkRegistration(ctx.db.k, ctx, input, findings, false);
    findings.throwIfAny();
  }
  return runCommand(
    ctx,
    { operationId: 'registerStablecoin', idempotencyKey, request: input, conflictCode: 'CONFLICT' },
    async (tx) => {
      await store.lockPlatform(tx, ctx.platformId);
      const findings = new Findings();
      const checked = await checkRegistration(tx, ctx, input, findings, true);
      findings.throwIfAny();
      const link = checked!;
      const duplicate = await store.findDuplicateStablecoin(tx, ctx.platformId, {
        network: input.network,
        networkTokenIdentifier: input.networkTokenIdentifier,
        linkId: link.id,
        providerTokenIdentifier: input.providerTokenIdentifier,
      });
      if (duplicate !== undefined) {
        const same = duplicate.network_token_identifier === input.networkTokenIdentifier;
        throw apiError(
          'CONFLICT',
          same
            ? `Token ${input.networkTokenIdentifier} is registered already, as ${duplicate.id}`
            : `Provider token ${input.providerTokenIdentifier} is registered already on ${link.id}, as ${duplicate.id}`,
          { stablecoinId: duplicate.id },
        );
      }
      // Past this line the registration succeeds.
      const now = iso(ctx.now);
      const symbol = input.providerTokenIdentifier.toUpperCase();
      const row: store.StablecoinRow = {
        id: newId('Stablecoin'),
        platform_id: ctx.platformId,
        stablecoin_provider_account_id: link.id,
        provider: link.provider,
        provider_environment: link.provider_environment,
        provider_token_identifier: input.providerTokenIdentifier,
        network: input.network,
        network_token_identifier: input.networkTokenIdentifier,
        name: `${symbol} stablecoin`,
        symbol,
        base_currency: BASE_CURRENCY,
        decimals: TOKEN_DECIMALS,
        issuance_status: 'PENDING_REVIEW',
        grid_operations_status: 'NOT_ENABLED',
        currency: null,
        created_at: now,
        updated_at: now,
      };
      await store.insertStablecoin(tx, row);
      await openStablecoinAccounts(tx, {
        platformId: ctx.platformId,
        fiatCurrency: row.base_currency,
        tokenCurrency: row.id,
        now: ctx.now,
      });
      await scheduleRegistrationStep(
        tx,
        ctx.platformId,
        { stablecoinId: row.id, outcome: stablecoinRegistrationFor(input.providerTokenIdentifier), step: 1 },
        ctx.now,
        ctx.now,
      );
      return { status: 201, body: presentStablecoin(row) };
    },
  );
}

export async function loadStablecoin(
  q: Queryable,
  ctx: Ctx,
  id: string,
  forUpdate = false,
): Promise<store.StablecoinRow> {
  const row = await store.findStablecoin(q, ctx.platformId, id, forUpdate);
  if (row === undefined) throw apiError('REFERENCE_NOT_FOUND', `No stablecoin ${id}`);
  return row;
}

export async function getStablecoin(ctx: Ctx, id: string) {
  return presentStablecoin(await loadStablecoin(ctx.db.k, ctx, id));
}

export async function listStablecoins(ctx: Ctx, query: store.StablecoinFilters & PageRequest) {
  return toPage(await store.listStablecoins(ctx.db.k, ctx.platformId, query, query), presentStablecoin);
}
