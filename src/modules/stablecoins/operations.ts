// Stablecoin mints and burns: checked and opened here (amounts in whole cents, the funding
// or payout side, the link that issues), then carried through their timeline by
// lifecycle.ts, which posts their ledger movements when they complete.

import { randomBytes, randomInt } from 'node:crypto';
import { iso } from '../../clock.js';
import type { Queryable, Tx } from '../../db/index.js';
import { toPage, type PageRequest } from '../../db/pagination.js';
import { type Reply, runCommand } from '../../http/command.js';
import type { Ctx } from '../../http/context.js';
import { ApiError, apiError, type FieldError } from '../../http/errors.js';
import { plainObject } from '../../json.js';
import { newId } from '../../ids.js';
import { AMOUNT_MAX } from '../../rates/index.js';
import { stablecoinOperationScenarioFor } from '../../rails/magic.js';
import {
  findTransferCounterparty,
  requireActiveCounterparty,
  type TransferCounterparty,
} from '../external-accounts/service.js';
import { Findings } from './findings.js';
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
 * Undefined, with nothing added, when the schema refused the amount already.
 */
function checkAmount(value: unknown, decimals: number, findings: Findings): Amount | undefined {
  if (typeof value !== 'string' || !/^[0-9]+$/.test(value) || findings.has('amount')) return undefined;
  const units = BigInt(value);
  if (units === 0n) {
    findings.add('amount', 'must be greater than zero', 'INVALID_AMOUNT');
    return undefined;
  }
  if (units > AMOUNT_MAX) {
    findings.add('amount', `must be at most ${AMOUNT_MAX} (smallest units of the token)`, 'AMOUNT_OUT_OF_RANGE');
    return undefined;
  }
  const shift = decimals - FIAT_DECIMALS;
  if (shift <= 0) return { units, cents: units * 10n ** BigInt(-shift) };
  const perCent = 10n ** BigInt(shift);
  if (units % perCent !== 0n) {
    findings.add(
      'amount',
      `must be a whole number of cents: a multiple of ${perCent} for a token of ${decimals} decimals`,
      'INVALID_AMOUNT',
    );
    return undefined;
  }
  return { units, cents: units / perCent };
}

const RESERVED = 'is reserved by the reference for a later flow and not available yet';

/**
 * The external account a field names, or undefined when the field is not a usable id (the
 * schema named it) or names nothing (kept as a 404 finding). `lock` takes the row for the
 * payment (inside the command's transaction).
 */
async function counterparty(
  q: Queryable,
  ctx: Ctx,
  id: unknown,
  field: string,
  findings: Findings,
  lock: boolean,
): Promise<TransferCounterparty | undefined> {
  if (typeof id !== 'string' || id === '' || findings.has(field)) return undefined;
  const account = await findTransferCounterparty(q, ctx.platformId, id, lock);
  if (account === undefined)
    findings.take(
      apiError('REFERENCE_NOT_FOUND', `No external account ${id}`, {
        errors: [{ field, message: `names no external account of this platform: ${id}` }],
      }),
    );
  return account;
}

/** Adds a finding unless the account is ACTIVE (an unverified one keeps its own code when alone). */
function checkActive(account: TransferCounterparty, field: string, findings: Findings): void {
  try {
    requireActiveCounterparty(account, field);
  } catch (err) {
    findings.take(err);
  }
}

function checkBankOf(account: TransferCounterparty, currency: string, field: string, findings: Findings): boolean {
  if (account.kind !== 'BANK' || account.currency !== currency) {
    findings.add(
      field,
      `must be a ${currency} bank account; ${account.id} is a ${account.accountType} in ${account.currency}`,
    );
    return false;
  }
  checkActive(account, field, findings);
  return true;
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

/**
 * A request the schema refused: the service's own checks still run, read only and outside
 * the command (its Idempotency-Key may be missing or malformed), so the one 400 names every
 * field. An unknown stablecoin adds nothing: the schema's findings are answered.
 */
async function refuseWithSchemaErrors(
  ctx: Ctx,
  stablecoinId: string,
  schemaErrors: FieldError[],
  check: (coin: store.StablecoinRow, findings: Findings) => Promise<unknown>,
): Promise<void> {
  const findings = new Findings(schemaErrors);
  const coin = await store.findStablecoin(ctx.db.k, ctx.platformId, stablecoinId);
  if (coin !== undefined) await check(coin, findings);
  findings.throwIfAny();
}

interface MintPlan {
  amount: Amount;
  fundingType: string;
  source: Record<string, unknown>;
  destination: TransferCounterparty;
}

/**
 * Every check of a mint that names a field: the amount, the funding source and the
 * destination, each whatever the others found. The body may have failed the schema, so each
 * field is looked at only when it has the type the schema asks. The plan only when all passed.
 */
async function checkMint(
  q: Queryable,
  ctx: Ctx,
  coin: store.StablecoinRow,
  input: unknown,
  findings: Findings,
  lock: boolean,
): Promise<MintPlan | undefined> {
  const body = plainObject(input) ?? {};
  const amount = checkAmount(body.amount, Number(coin.decimals), findings);
  const funding = plainObject(body.fundingSource);
  const fundingType = typeof funding?.type === 'string' ? funding.type : undefined;
  if (fundingType === 'GRID_INTERNAL_ACCOUNT' || fundingType === 'PROVIDER_INTERNAL_BALANCE')
    findings.add('fundingSource.type', `${fundingType} ${RESERVED}`);
  const destinationId = plainObject(body.destination)?.accountId;
  let destination: TransferCounterparty | undefined;
  if (typeof destinationId === 'string' && !destinationId.startsWith('ExternalAccount:')) {
    findings.add(
      'destination.accountId',
      'must be an ExternalAccount (a Spark wallet): Grid-managed destinations are not available yet',
    );
  } else {
    destination = await counterparty(q, ctx, destinationId, 'destination.accountId', findings, lock);
    if (destination !== undefined && destination.accountType !== 'SPARK_WALLET')
      findings.add(
        'destination.accountId',
        `must be a Spark wallet; ${destination.id} is a ${destination.accountType}`,
      );
    else if (destination !== undefined) checkActive(destination, 'destination.accountId', findings);
  }
  const source: Record<string, unknown> = { type: fundingType };
  if (fundingType === 'ACH_DEBIT' || fundingType === 'SAME_DAY_ACH_DEBIT') {
    const field = 'fundingSource.externalAccountId';
    const bank = await counterparty(q, ctx, funding?.externalAccountId, field, findings, lock);
    if (bank !== undefined && checkBankOf(bank, coin.base_currency, field, findings))
      source.externalAccountId = bank.id;
  }
  if (amount === undefined || destination === undefined || fundingType === undefined) return undefined;
  return { amount, fundingType, source, destination };
}

export async function createStablecoinMint(
  ctx: Ctx,
  stablecoinId: string,
  input: MintInput,
  idempotencyKey: string | undefined,
  schemaErrors: FieldError[] = [],
): Promise<Reply> {
  if (schemaErrors.length > 0)
    await refuseWithSchemaErrors(ctx, stablecoinId, schemaErrors, (coin, findings) =>
      checkMint(ctx.db.k, ctx, coin, input, findings, false),
    );
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
      const findings = new Findings();
      const plan = await checkMint(tx, ctx, coin, input, findings, true);
      findings.throwIfAny();
      const { amount, fundingType, source, destination } = plan!;
      const link = await issuable(tx, ctx, coin);
      requireProvisioned(coin, 'mint');
      const scenario = stablecoinOperationScenarioFor(destination.primaryIdentifier);
      if (scenario.kind === 'UNAVAILABLE') throw unavailable('mint');
      return openOperation(tx, ctx, {
        type: 'MINT',
        coin,
        link,
        amount,
        source,
        destination: { accountId: destination.id },
        instructions: fundingType === 'WIRE' ? wireInstructions(amount, coin.base_currency) : undefined,
        estimatedDelivery: undefined,
        scenario: scenarioText(scenario),
        description: input.description,
      });
    },
  );
}

interface BurnPlan {
  amount: Amount;
  sourceType: string;
  bank: TransferCounterparty;
  rail: PayoutRail;
}

/**
 * Every check of a burn that names a field: the amount (also against what can be burned,
 * once the stablecoin is provisioned), the source and the bank paid, whatever the others found.
 */
async function checkBurn(
  q: Queryable,
  ctx: Ctx,
  coin: store.StablecoinRow,
  input: unknown,
  findings: Findings,
  lock: boolean,
): Promise<BurnPlan | undefined> {
  const body = plainObject(input) ?? {};
  const amount = checkAmount(body.amount, Number(coin.decimals), findings);
  const sourceType = plainObject(body.source)?.type;
  if (sourceType === 'GRID_INTERNAL_ACCOUNT') findings.add('source.type', `GRID_INTERNAL_ACCOUNT ${RESERVED}`);
  const destination = plainObject(body.destination);
  const field = 'destination.externalAccountId';
  const bank = await counterparty(q, ctx, destination?.externalAccountId, field, findings, lock);
  const paid = bank !== undefined && checkBankOf(bank, coin.base_currency, field, findings);
  if (amount !== undefined && coin.issuance_status === 'PROVISIONED') {
    // The stablecoin row is locked (PostgreSQL), so burns of one coin are checked one at a time.
    const burnable = await store.burnableCents(q, coin.id);
    if (amount.cents > burnable) {
      const perCent = 10n ** BigInt(Math.max(Number(coin.decimals) - FIAT_DECIMALS, 0));
      findings.add(
        'amount',
        `must be at most ${burnable * perCent}: the supply minted and not yet burned or being burned`,
        'INVALID_AMOUNT',
      );
    }
  }
  const rail = destination?.rail;
  if (amount === undefined || !paid || typeof sourceType !== 'string' || typeof rail !== 'string') return undefined;
  return { amount, sourceType, bank: bank!, rail: rail as PayoutRail };
}

export async function createStablecoinBurn(
  ctx: Ctx,
  stablecoinId: string,
  input: BurnInput,
  idempotencyKey: string | undefined,
  schemaErrors: FieldError[] = [],
): Promise<Reply> {
  if (schemaErrors.length > 0)
    await refuseWithSchemaErrors(ctx, stablecoinId, schemaErrors, (coin, findings) =>
      checkBurn(ctx.db.k, ctx, coin, input, findings, false),
    );
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
      const findings = new Findings();
      const plan = await checkBurn(tx, ctx, coin, input, findings, true);
      findings.throwIfAny();
      const { amount, sourceType, bank, rail } = plan!;
      const link = await issuable(tx, ctx, coin);
      requireProvisioned(coin, 'burn');
      const scenario = stablecoinOperationScenarioFor(bank.primaryIdentifier);
      if (scenario.kind === 'UNAVAILABLE') throw unavailable('burn');
      const external = sourceType === 'EXTERNAL_ACCOUNT';
      return openOperation(tx, ctx, {
        type: 'BURN',
        coin,
        link,
        amount,
        source: { type: sourceType },
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
          amount: amount.cents.toString(),
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
