// Same-currency transfers between an internal account and an external account of the same
// owner. Both operations run through the idempotent write pipeline; the checks run in a
// fixed order, each with its own code, and only then is anything written:
//   1. accounts exist (404 REFERENCE_NOT_FOUND)
//   2. they fit together: same owner, a usable rail, a pull-capable source (400 INVALID_INPUT)
//   3. same currency, which the platform supports in this direction (400 INVALID_CURRENCY)
//   4. the external account's ownership is verified (400 EXTERNAL_ACCOUNT_VERIFICATION_REQUIRED)
//   5. the amount is within the platform's limits for the currency
//      (400 AMOUNT_OUT_OF_RANGE below the minimum, 400 TRANSACTION_SIZE_LIMIT_EXCEEDED above the maximum)
//   6. the available balance covers it (transfer-out; 400 INVALID_AMOUNT)

import type { Tx } from '../../db/index.js';
import { platformCoreRead } from '../../db/platform-row.js';
import type { PrefetchRead } from '../../db/prefetch.js';
import { runCommand, type Reply } from '../../http/command.js';
import type { Ctx } from '../../http/context.js';
import { apiError, FieldErrors } from '../../http/errors.js';
import { railFor, settlementFor } from '../../rails/index.js';
import {
  findTransferCounterparty,
  requireActiveCounterparty,
  type TransferCounterparty,
  transferCounterpartyRead,
} from '../external-accounts/service.js';
import {
  findInternalAccount,
  type InternalAccountView,
  internalAccountRead,
  ledgerRefusal,
} from '../internal-accounts/service.js';
import { accountCustomerRead } from '../customers/lookup.js';
import { readPlatformConfig, requireWithinLimits } from '../platform/config.js';
import { platformCustomerIdOf, startTransfer, type TransactionView } from '../transactions/service.js';

export interface TransferInInput {
  source: { accountId: string };
  destination: { accountId: string };
  amount: number;
}

export interface TransferOutInput {
  source: { accountId: string };
  destination: { accountId: string; paymentRail?: string | undefined };
  amount: number;
  remittanceInformation?: string | undefined;
  purposeOfPayment?: string | undefined;
}

interface TransferPlan {
  direction: 'INCOMING' | 'OUTGOING';
  internalField: string;
  externalField: string;
  internalAccountId: string;
  externalAccountId: string;
  amount: number;
  requestedRail?: string | undefined;
  details: { remittanceInformation?: string; purposeOfPayment?: string };
}

function referenceNotFound(field: string, kind: string, id: string) {
  return apiError('REFERENCE_NOT_FOUND', `No ${kind} account ${id}`, { field });
}

function chooseRail(plan: TransferPlan, external: TransferCounterparty, errors: FieldErrors) {
  const rails = external.paymentRails;
  if (plan.requestedRail !== undefined) {
    if (rails === undefined || !rails.includes(plan.requestedRail)) {
      errors.add(
        `${plan.externalField.replace(/accountId$/, 'paymentRail')}`,
        `is not a rail this account can be paid over (${rails?.join(', ') ?? 'none'})`,
        rails ? { enum: rails } : undefined,
      );
      return { paymentRail: null, railSelectionMode: null };
    }
    return { paymentRail: plan.requestedRail, railSelectionMode: 'MANUAL' as const };
  }
  const rail = rails?.[0];
  return rail === undefined
    ? { paymentRail: null, railSelectionMode: null }
    : { paymentRail: rail, railSelectionMode: 'AUTO' as const };
}

/** Steps 2 to 5 of the order above. */
async function checkTransfer(
  tx: Tx,
  ctx: Ctx,
  plan: TransferPlan,
  internal: InternalAccountView,
  external: TransferCounterparty,
) {
  const errors = new FieldErrors();
  if (internal.customer_id !== external.customerId) {
    const owner = (customerId: string | null) => customerId ?? 'the platform';
    errors.add(
      plan.externalField,
      `belongs to ${owner(external.customerId)}, but ${plan.internalField} belongs to ${owner(internal.customer_id)}; both accounts must have the same owner`,
    );
  }
  if (internal.status !== 'ACTIVE') errors.add(plan.internalField, `is ${internal.status}`);
  if (plan.direction === 'INCOMING' && external.kind !== 'BANK') {
    errors.add(
      plan.externalField,
      `is a ${external.accountType}, which cannot be pulled from; fund the internal account through its funding instructions instead`,
    );
  }
  const rail = chooseRail(plan, external, errors);
  errors.throwIfAny();

  if (internal.currency !== external.currency) {
    throw apiError(
      'INVALID_CURRENCY',
      `The internal account holds ${internal.currency} and the external account ${external.currency}; same-currency transfers need one currency`,
      {
        errors: [{ field: plan.externalField, message: `holds ${external.currency}, not ${internal.currency}` }],
      },
    );
  }
  const config = await readPlatformConfig(tx, ctx.platformId);
  const limits = config.supportedCurrencies.find((c) => c.currencyCode === internal.currency);
  if (limits === undefined || !limits.enabledTransactionTypes.includes(plan.direction)) {
    throw apiError(
      'INVALID_CURRENCY',
      `The platform does not enable ${plan.direction} transactions in ${internal.currency}`,
      {
        errors: [
          {
            field: plan.internalField,
            message: `holds ${internal.currency}, which is not enabled for ${plan.direction} transactions`,
          },
        ],
      },
    );
  }
  requireActiveCounterparty(external, plan.externalField);
  const amount = BigInt(plan.amount);
  requireWithinLimits(limits, amount, 'amount');
  return { amount, ...rail };
}

/** A transfer whose checks passed (steps 1 to 5): nothing is written yet. */
export interface PreparedTransfer {
  plan: TransferPlan;
  internal: InternalAccountView;
  external: TransferCounterparty;
  amount: bigint;
  paymentRail: string | null;
  railSelectionMode: 'AUTO' | 'MANUAL' | null;
}

/**
 * Runs the checks of a transfer. With `customerId` (an agent acting for its customer),
 * an account of anyone else does not exist here: 404 like an unknown one.
 */
async function prepare(tx: Tx, ctx: Ctx, plan: TransferPlan, customerId?: string): Promise<PreparedTransfer> {
  const internal = await findInternalAccount(tx, ctx.platformId, plan.internalAccountId);
  if (internal === undefined || (customerId !== undefined && internal.customer_id !== customerId))
    throw referenceNotFound(plan.internalField, 'internal', plan.internalAccountId);
  const external = await findTransferCounterparty(tx, ctx.platformId, plan.externalAccountId, true);
  if (external === undefined || (customerId !== undefined && external.customerId !== customerId))
    throw referenceNotFound(plan.externalField, 'external', plan.externalAccountId);
  const checked = await checkTransfer(tx, ctx, plan, internal, external);
  return { plan, internal, external, ...checked };
}

/**
 * What `prepare` reads, named by the request: the internal account, the external account
 * under its share lock, the platform's row (for its configuration; the events read it too),
 * and the internal account's owner (for the transaction's platformCustomerId).
 * A command prefetches them in one statement (db/prefetch.ts).
 */
function transferReads(ctx: Ctx, plan: TransferPlan): PrefetchRead[] {
  return [
    internalAccountRead(ctx.platformId, plan.internalAccountId),
    transferCounterpartyRead(ctx.platformId, plan.externalAccountId, true),
    platformCoreRead(ctx.platformId),
    accountCustomerRead(ctx.platformId, plan.internalAccountId),
  ];
}

/** Starts a prepared transfer: step 6 (the balance) and the transaction with its timeline. */
export async function executeTransfer(tx: Tx, ctx: Ctx, prepared: PreparedTransfer): Promise<TransactionView> {
  const { plan, internal, external } = prepared;
  const payment = { direction: plan.direction, counterpartyIdentifier: external.primaryIdentifier };
  const timeline = railFor(payment).plan(payment, settlementFor(ctx.settings, prepared.paymentRail));
  try {
    return await startTransfer(
      tx,
      {
        type: plan.direction,
        platformId: ctx.platformId,
        customerId: internal.customer_id,
        platformCustomerId: await platformCustomerIdOf(tx, ctx.platformId, internal.customer_id),
        internalAccountId: internal.id,
        externalAccountId: external.id,
        currency: internal.currency,
        amount: prepared.amount,
        paymentRail: prepared.paymentRail,
        railSelectionMode: prepared.railSelectionMode,
        details: plan.details,
        internalAccount: internal,
      },
      timeline,
      ctx.now,
    );
  } catch (err) {
    throw ledgerRefusal(err, 'amount');
  }
}

function outPlan(input: TransferOutInput): TransferPlan {
  const details: TransferPlan['details'] = {};
  if (input.remittanceInformation !== undefined) details.remittanceInformation = input.remittanceInformation;
  if (input.purposeOfPayment !== undefined) details.purposeOfPayment = input.purposeOfPayment;
  return {
    direction: 'OUTGOING',
    internalField: 'source.accountId',
    externalField: 'destination.accountId',
    internalAccountId: input.source.accountId,
    externalAccountId: input.destination.accountId,
    amount: input.amount,
    requestedRail: input.destination.paymentRail,
    details,
  };
}

function inPlan(input: TransferInInput): TransferPlan {
  return {
    direction: 'INCOMING',
    internalField: 'destination.accountId',
    externalField: 'source.accountId',
    internalAccountId: input.destination.accountId,
    externalAccountId: input.source.accountId,
    amount: input.amount,
    details: {},
  };
}

export function prepareTransferOut(tx: Tx, ctx: Ctx, input: TransferOutInput, customerId?: string) {
  return prepare(tx, ctx, outPlan(input), customerId);
}

export function prepareTransferIn(tx: Tx, ctx: Ctx, input: TransferInInput, customerId?: string) {
  return prepare(tx, ctx, inPlan(input), customerId);
}

export async function createTransferOut(
  ctx: Ctx,
  input: TransferOutInput,
  idempotencyKey: string | undefined,
): Promise<Reply> {
  const plan = outPlan(input);
  const reads = transferReads(ctx, plan);
  return runCommand(ctx, { operationId: 'createTransferOut', idempotencyKey, request: input, reads }, async (tx) => {
    const body = await executeTransfer(tx, ctx, await prepare(tx, ctx, plan));
    return { status: 201, body };
  });
}

export async function createTransferIn(
  ctx: Ctx,
  input: TransferInInput,
  idempotencyKey: string | undefined,
): Promise<Reply> {
  const plan = inPlan(input);
  const reads = transferReads(ctx, plan);
  return runCommand(ctx, { operationId: 'createTransferIn', idempotencyKey, request: input, reads }, async (tx) => {
    const body = await executeTransfer(tx, ctx, await prepare(tx, ctx, plan));
    return { status: 201, body };
  });
}
