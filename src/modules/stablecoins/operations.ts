// Stablecoin mints and burns: checked and opened here (amounts in whole cents, the funding
// or payout side, the link that issues), then carried through their timeline by
// lifecycle.ts, which posts their ledger movements when they complete.

import { randomBytes, randomInt } from 'node:crypto';
import { iso } from '../../clock.js';
import type { Queryable, Tx } from '../../db/index.js';
import { toPage, type PageRequest } from '../../db/pagination.js';
import { type Reply, runCommand } from '../../http/command.js';
import type { Ctx } from '../../http/context.js';
import { ApiError, apiError, type ErrorCode, type FieldError, invalidInput } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { AMOUNT_MAX } from '../../rates/index.js';
import { stablecoinOperationScenarioFor } from '../../sandbox/magic.js';
import {
  findTransferCounterparty,
  requireActiveCounterparty,
  type TransferCounterparty,
} from '../external-accounts/service.js';
import { FUNDING_WINDOW_MS, scheduleOperationStep } from './lifecycle.js';
import type { BurnInput, MintInput, PayoutRail } from './schemas.js';
import * as store from './store.js';

import { FIAT_DECIMALS, loadStablecoin, presentOperation, requireUsable } from './service.js';

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
