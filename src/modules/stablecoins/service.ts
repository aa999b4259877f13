// Stablecoin issuance: a platform links its issuing provider account (BRALE; the client
// secret sealed at rest and never shown), registers a stablecoin it issued there (SPARK),
// and mints or burns it against fiat. The timelines and the ledger movements are in
// lifecycle.ts; the sandbox outcomes in src/sandbox/magic.ts.

import { createHash, createHmac, randomBytes, randomInt } from 'node:crypto';
import { iso } from '../../clock.js';
import { sealText } from '../../crypto/sealing.js';
import type { Queryable, Tx } from '../../db/index.js';
import { railyardKey } from '../../db/keys.js';
import { toPage, type PageRequest } from '../../db/pagination.js';
import { type Reply, runCommand } from '../../http/command.js';
import type { Ctx } from '../../http/context.js';
import { ApiError, apiError, type ErrorCode, type FieldError, invalidInput } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { openStablecoinAccounts } from '../../ledger/index.js';
import { AMOUNT_MAX } from '../../rates/index.js';
import {
  stablecoinLinkOutcomeFor,
  stablecoinOperationScenarioFor,
  stablecoinRegistrationFor,
} from '../../sandbox/magic.js';
import {
  findTransferCounterparty,
  requireActiveCounterparty,
  type TransferCounterparty,
} from '../external-accounts/service.js';
import { FUNDING_WINDOW_MS, linkRevocationJob, scheduleOperationStep, scheduleRegistrationStep } from './lifecycle.js';
import type { BurnInput, LinkInput, MintInput, PayoutRail, RegisterInput } from './schemas.js';
import * as store from './store.js';

/** Railyard serves sandbox platforms only, and the provider environment follows the platform's mode. */
const ENVIRONMENT = 'SANDBOX';
/** What the sandbox provider reports for every registered token. */
const TOKEN_DECIMALS = 6;
const BASE_CURRENCY = 'USD';
/** Digits after the point of the base currency (cents). */
const FIAT_DECIMALS = 2;
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

export async function linkStablecoinProviderAccount(
  ctx: Ctx,
  input: LinkInput,
  idempotencyKey: string | undefined,
): Promise<Reply> {
  // note: the idempotency record keeps a hash of the request; the secret enters it only as an
  // HMAC under railyard's key, so no digest of a weak secret can be guessed back from it.
  const key = await ctx.db.transaction((tx) => railyardKey(tx, 'stablecoin-provider-secrets', ctx.now));
  const request = { ...input, apiClientSecret: createHmac('sha256', key).update(input.apiClientSecret).digest('hex') };
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
        sealed_client_secret: sealText(key, input.apiClientSecret),
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
function requireUsable(row: store.LinkRow): store.LinkRow {
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

/** The link a registration uses: the one named, else the only ACTIVE one. */
async function selectLink(tx: Tx, ctx: Ctx, id: string | undefined): Promise<store.LinkRow> {
  if (id !== undefined) {
    const row = await store.findLink(tx, ctx.platformId, id, true);
    if (row === undefined)
      throw apiError('STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND', `No stablecoin provider account ${id}`, {
        errors: [{ field: 'stablecoinProviderAccountId', message: `names no provider account link: ${id}` }],
      });
    return requireUsable(row);
  }
  const active = await store.activeLinkIds(tx, ctx.platformId, 'BRALE', ENVIRONMENT);
  if (active.length === 0)
    throw apiError(
      'STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND',
      'This platform has no ACTIVE stablecoin provider account link: link one first',
    );
  if (active.length > 1)
    throw apiError(
      'STABLECOIN_PROVIDER_ACCOUNT_SELECTION_REQUIRED',
      'This platform has several ACTIVE stablecoin provider account links: name one in stablecoinProviderAccountId',
      { errors: [{ field: 'stablecoinProviderAccountId', message: 'is required when several links are ACTIVE' }] },
    );
  return (await store.findLink(tx, ctx.platformId, active[0]!, true))!;
}

// ------------------------------------------------------------------------------- stablecoins

export async function registerStablecoin(
  ctx: Ctx,
  input: RegisterInput,
  idempotencyKey: string | undefined,
): Promise<Reply> {
  return runCommand(
    ctx,
    { operationId: 'registerStablecoin', idempotencyKey, request: input, conflictCode: 'CONFLICT' },
    async (tx) => {
      if (!SPARK_TOKEN_IDENTIFIER.test(input.networkTokenIdentifier)) {
        throw invalidInput([
          {
            field: 'networkTokenIdentifier',
            message: 'must be a Spark token identifier (bech32m text starting btkn1, btknrt1, btknt1 or btkns1)',
          },
        ]);
      }
      await store.lockPlatform(tx, ctx.platformId);
      const link = await selectLink(tx, ctx, input.stablecoinProviderAccountId);
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

async function loadStablecoin(q: Queryable, ctx: Ctx, id: string, forUpdate = false): Promise<store.StablecoinRow> {
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

// ------------------------------------------------------------------------------- operations

interface Amount {
  units: bigint;
  cents: bigint;
}

/**
 * The amount in the token's smallest unit and in cents: positive, not past the reference's
 * amount maximum, and a whole number of cents (units divisible by 10^(decimals - 2)).
 */
function checkAmount(text: string, decimals: number, errors: FieldError[]): Amount | undefined {
  const units = BigInt(text);
  if (units === 0n) {
    errors.push({ field: 'amount', message: 'must be greater than zero' });
    return undefined;
  }
  if (units > AMOUNT_MAX) {
    errors.push({ field: 'amount', message: `must be at most ${AMOUNT_MAX} (smallest units of the token)` });
    return undefined;
  }
  const shift = decimals - FIAT_DECIMALS;
  if (shift <= 0) return { units, cents: units * 10n ** BigInt(-shift) };
  const perCent = 10n ** BigInt(shift);
  if (units % perCent !== 0n) {
    errors.push({
      field: 'amount',
      message: `must be a whole number of cents: a multiple of ${perCent} for a token of ${decimals} decimals`,
    });
    return undefined;
  }
  return { units, cents: units / perCent };
}

/** One 400 for every field problem; an amount-only problem keeps the amount's own code. */
function refuseFields(errors: FieldError[]): void {
  if (errors.length === 0) return;
  if (errors.every((e) => e.field === 'amount')) {
    const code: ErrorCode = errors.some((e) => e.message.startsWith('must be at most'))
      ? 'AMOUNT_OUT_OF_RANGE'
      : 'INVALID_AMOUNT';
    throw apiError(code, `amount ${errors[0]!.message}`, { errors });
  }
  throw invalidInput(errors);
}

const RESERVED = 'is reserved by the reference for a later flow and not available yet';

async function counterparty(tx: Tx, ctx: Ctx, id: string, field: string): Promise<TransferCounterparty> {
  const account = await findTransferCounterparty(tx, ctx.platformId, id, true);
  if (account === undefined)
    throw apiError('REFERENCE_NOT_FOUND', `No external account ${id}`, {
      errors: [{ field, message: `names no external account of this platform: ${id}` }],
    });
  return account;
}

function requireBankOf(account: TransferCounterparty, currency: string, field: string): void {
  if (account.kind !== 'BANK' || account.currency !== currency)
    throw invalidInput([
      {
        field,
        message: `must be a ${currency} bank account; ${account.id} is a ${account.accountType} in ${account.currency}`,
      },
    ]);
  requireActiveCounterparty(account, field);
}

/** The stablecoin, checked for issuer operations: provisioned, on a usable link. */
async function issuable(tx: Tx, ctx: Ctx, coin: store.StablecoinRow): Promise<store.LinkRow> {
  const link = await store.findLink(tx, ctx.platformId, coin.stablecoin_provider_account_id);
  if (link === undefined) throw new Error(`stablecoin ${coin.id} has no link ${coin.stablecoin_provider_account_id}`);
  return requireUsable(link);
}

function requireProvisioned(coin: store.StablecoinRow, what: string): void {
  if (coin.issuance_status !== 'PROVISIONED')
    throw apiError('CONFLICT', `Stablecoin ${coin.id} is ${coin.issuance_status}; a ${what} needs it PROVISIONED`);
}

function unavailable(what: string) {
  return apiError('SERVICE_UNAVAILABLE', `The stablecoin provider cannot take the ${what} right now; try again later`);
}

function scenarioText(scenario: ReturnType<typeof stablecoinOperationScenarioFor>): string {
  return scenario.kind === 'FAIL' ? `FAIL:${scenario.failureReason}` : 'COMPLETE';
}

const BECH32 = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

function sparkDepositAddress(): string {
  let data = '';
  for (let i = 0; i < 58; i++) data += BECH32[randomInt(32)];
  return `sparkrt1${data}`;
}

function wireInstructions(amount: Amount, currency: string) {
  return {
    rail: 'WIRE',
    bankName: 'Railyard Sandbox Trust',
    accountHolderName: 'Brale sandbox issuance',
    accountNumber: String(randomInt(1_000_000_000, 10_000_000_000)),
    routingNumber: '011000015',
    reference: `RY${randomBytes(5).toString('hex').toUpperCase()}`,
    amount: amount.cents.toString(),
    currency,
  };
}

const TIMING: Record<PayoutRail, string> = {
  WIRE: 'within the business day',
  ACH_CREDIT: 'one to three business days',
  SAME_DAY_ACH_CREDIT: 'by the end of the business day',
  RTP_CREDIT: 'within minutes',
};

interface NewOperation {
  type: 'MINT' | 'BURN';
  coin: store.StablecoinRow;
  link: store.LinkRow;
  amount: Amount;
  source: Record<string, unknown>;
  destination: Record<string, unknown>;
  instructions: Record<string, unknown> | undefined;
  estimatedDelivery: Record<string, unknown> | undefined;
  scenario: string;
  description: string | undefined;
}

/** Writes a new operation: waiting for funds when it has instructions, else with the provider. */
async function openOperation(tx: Tx, ctx: Ctx, spec: NewOperation) {
  const now = iso(ctx.now);
  const awaitsFunds = spec.instructions !== undefined;
  const row: store.OperationRow = {
    id: newId('StablecoinOperation'),
    platform_id: ctx.platformId,
    stablecoin_id: spec.coin.id,
    operation_type: spec.type,
    status: awaitsFunds ? 'PENDING_FUNDING' : 'PENDING_PROVIDER',
    amount: spec.amount.units.toString(),
    fiat_amount: spec.amount.cents.toString(),
    provider: spec.link.provider,
    provider_environment: spec.link.provider_environment,
    stablecoin_provider_account_id: spec.link.id,
    source: JSON.stringify(spec.source),
    destination: JSON.stringify(spec.destination),
    funding_instructions: awaitsFunds ? JSON.stringify(spec.instructions) : null,
    estimated_delivery: spec.estimatedDelivery === undefined ? null : JSON.stringify(spec.estimatedDelivery),
    expires_at: awaitsFunds ? iso(new Date(ctx.now.getTime() + FUNDING_WINDOW_MS)) : null,
    provider_status: awaitsFunds ? 'awaiting_funds' : 'pending',
    failure_reason: null,
    description: spec.description ?? null,
    scenario: spec.scenario,
    created_at: now,
    updated_at: now,
  };
  await store.insertOperation(tx, row);
  await scheduleOperationStep(tx, row, awaitsFunds ? 'EXPIRE' : 'ACCEPT', ctx.now, ctx.now);
  return { status: 201, body: presentOperation(row) };
}

export async function createStablecoinMint(
  ctx: Ctx,
  stablecoinId: string,
  input: MintInput,
  idempotencyKey: string | undefined,
): Promise<Reply> {
  // An unknown (or another platform's) stablecoin is a 404 whatever the key says.
  await loadStablecoin(ctx.db.k, ctx, stablecoinId);
  return runCommand(
    ctx,
    {
      operationId: 'createStablecoinMint',
      idempotencyKey,
      request: { stablecoinId, body: input },
      conflictCode: 'CONFLICT',
    },
    async (tx) => {
      const coin = await loadStablecoin(tx, ctx, stablecoinId, true);
      const errors: FieldError[] = [];
      const amount = checkAmount(input.amount, Number(coin.decimals), errors);
      const funding = input.fundingSource;
      if (funding.type === 'GRID_INTERNAL_ACCOUNT' || funding.type === 'PROVIDER_INTERNAL_BALANCE')
        errors.push({ field: 'fundingSource.type', message: `${funding.type} ${RESERVED}` });
      if (!input.destination.accountId.startsWith('ExternalAccount:'))
        errors.push({
          field: 'destination.accountId',
          message: 'must be an ExternalAccount (a Spark wallet): Grid-managed destinations are not available yet',
        });
      refuseFields(errors);
      const link = await issuable(tx, ctx, coin);
      const destination = await counterparty(tx, ctx, input.destination.accountId, 'destination.accountId');
      if (destination.accountType !== 'SPARK_WALLET')
        throw invalidInput([
          {
            field: 'destination.accountId',
            message: `must be a Spark wallet; ${destination.id} is a ${destination.accountType}`,
          },
        ]);
      requireActiveCounterparty(destination, 'destination.accountId');
      const source: Record<string, unknown> = { type: funding.type };
      if (funding.type === 'ACH_DEBIT' || funding.type === 'SAME_DAY_ACH_DEBIT') {
        const bank = await counterparty(tx, ctx, funding.externalAccountId, 'fundingSource.externalAccountId');
        requireBankOf(bank, coin.base_currency, 'fundingSource.externalAccountId');
        source.externalAccountId = bank.id;
      }
      requireProvisioned(coin, 'mint');
      const scenario = stablecoinOperationScenarioFor(destination.primaryIdentifier);
      if (scenario.kind === 'UNAVAILABLE') throw unavailable('mint');
      return openOperation(tx, ctx, {
        type: 'MINT',
        coin,
        link,
        amount: amount!,
        source,
        destination: { accountId: destination.id },
        instructions: funding.type === 'WIRE' ? wireInstructions(amount!, coin.base_currency) : undefined,
        estimatedDelivery: undefined,
        scenario: scenarioText(scenario),
        description: input.description,
      });
    },
  );
}

export async function createStablecoinBurn(
  ctx: Ctx,
  stablecoinId: string,
  input: BurnInput,
  idempotencyKey: string | undefined,
): Promise<Reply> {
  await loadStablecoin(ctx.db.k, ctx, stablecoinId);
  return runCommand(
    ctx,
    {
      operationId: 'createStablecoinBurn',
      idempotencyKey,
      request: { stablecoinId, body: input },
      conflictCode: 'CONFLICT',
    },
    async (tx) => {
      const coin = await loadStablecoin(tx, ctx, stablecoinId, true);
      const errors: FieldError[] = [];
      const amount = checkAmount(input.amount, Number(coin.decimals), errors);
      if (input.source.type === 'GRID_INTERNAL_ACCOUNT')
        errors.push({ field: 'source.type', message: `GRID_INTERNAL_ACCOUNT ${RESERVED}` });
      refuseFields(errors);
      const link = await issuable(tx, ctx, coin);
      const bank = await counterparty(tx, ctx, input.destination.externalAccountId, 'destination.externalAccountId');
      requireBankOf(bank, coin.base_currency, 'destination.externalAccountId');
      requireProvisioned(coin, 'burn');
      // The stablecoin row is locked (PostgreSQL), so burns of one coin are checked one at a time.
      const burnable = await store.burnableCents(tx, coin.id);
      if (amount!.cents > burnable) {
        const perCent = 10n ** BigInt(Math.max(Number(coin.decimals) - FIAT_DECIMALS, 0));
        throw apiError('INVALID_AMOUNT', `amount exceeds what can be burned: ${burnable * perCent} units`, {
          errors: [
            {
              field: 'amount',
              message: `must be at most ${burnable * perCent}: the supply minted and not yet burned or being burned`,
            },
          ],
        });
      }
      const scenario = stablecoinOperationScenarioFor(bank.primaryIdentifier);
      if (scenario.kind === 'UNAVAILABLE') throw unavailable('burn');
      const external = input.source.type === 'EXTERNAL_ACCOUNT';
      const rail = input.destination.rail;
      return openOperation(tx, ctx, {
        type: 'BURN',
        coin,
        link,
        amount: amount!,
        source: { type: input.source.type },
        destination: { accountId: bank.id, rail },
        instructions: external
          ? {
              rail: 'SPARK',
              network: 'SPARK',
              address: sparkDepositAddress(),
              valueType: coin.provider_token_identifier,
            }
          : undefined,
        estimatedDelivery: {
          rail,
          amount: amount!.cents.toString(),
          currency: coin.base_currency,
          timing: TIMING[rail],
        },
        scenario: scenarioText(scenario),
        description: input.description,
      });
    },
  );
}

export async function listStablecoinOperations(
  ctx: Ctx,
  stablecoinId: string,
  query: { operationType?: string | undefined } & PageRequest,
) {
  await loadStablecoin(ctx.db.k, ctx, stablecoinId);
  try {
    return toPage(await store.listOperations(ctx.db.k, ctx.platformId, stablecoinId, query, query), presentOperation);
  } catch (err) {
    // This operation has no 400 to refuse a cursor it never issued: such a cursor ends the list.
    if (err instanceof ApiError && err.code === 'INVALID_INPUT' && query.cursor !== undefined)
      return { data: [], hasMore: false };
    throw err;
  }
}

async function loadOperation(q: Queryable, ctx: Ctx, id: string, forUpdate = false) {
  const row = await store.findOperation(q, ctx.platformId, id, forUpdate);
  if (row === undefined) throw apiError('REFERENCE_NOT_FOUND', `No stablecoin operation ${id}`);
  return row;
}

export async function getStablecoinOperation(ctx: Ctx, id: string) {
  return presentOperation(await loadOperation(ctx.db.k, ctx, id));
}

/**
 * Sandbox: the funds an operation waits for arrive (the wire of a mint, the tokens of a
 * burn), so it goes on to the provider. Only while PENDING_FUNDING and before expiresAt.
 */
export async function fundStablecoinOperation(ctx: Ctx, id: string) {
  return ctx.db.transaction(async (tx) => {
    const row = await loadOperation(tx, ctx, id, true);
    const expired = row.expires_at !== null && row.expires_at <= iso(ctx.now);
    if (row.status !== 'PENDING_FUNDING' || expired)
      throw apiError(
        'CONFLICT',
        `Stablecoin operation ${id} is ${expired && row.status === 'PENDING_FUNDING' ? 'EXPIRED' : row.status}; only a PENDING_FUNDING operation can be funded`,
      );
    const next = { ...row, status: 'PENDING_PROVIDER', provider_status: 'pending', updated_at: iso(ctx.now) };
    await store.updateOperation(tx, row.id, {
      status: next.status,
      provider_status: next.provider_status,
      updated_at: next.updated_at,
    });
    await scheduleOperationStep(tx, row, 'ACCEPT', ctx.now, ctx.now);
    return presentOperation(next);
  });
}
