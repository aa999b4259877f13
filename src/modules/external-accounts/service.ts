import { randomBytes } from 'node:crypto';
import { iso } from '../../clock.js';
import { isFiat } from '../../currencies.js';
import { verifyWalletSignature, type WalletNetwork } from '../../crypto/wallet-signatures.js';
import { isUniqueViolation, type Queryable } from '../../db/index.js';
import { toPage, type PageRequest } from '../../db/pagination.js';
import { recordEvent } from '../../events/outbox.js';
import type { Ctx } from '../../http/context.js';
import type { Deps } from '../../http/deps.js';
import { customerNamedBy } from '../customers/lookup.js';
import { platformNowOf } from '../platform/service.js';
import { type ApiError, apiError, FieldErrors } from '../../http/errors.js';
import { prune } from '../../http/schemas.js';
import { newId } from '../../ids.js';
import { parseShared } from '../../json.js';
import { isTrustedBeneficiary } from '../sca/service.js';
import { beneficiaryVerificationFor, SANDBOX_VALID_SIGNATURE } from '../../rails/magic.js';
import {
  accountTypeDef,
  identityKey,
  paymentRailsFor,
  primaryIdentifier,
  type AccountTypeDef,
} from './account-types.js';
import { ExternalAccountCreateInfo } from './schemas.js';
import * as store from './store.js';

type AccountInfo = Record<string, unknown> & { accountType: string };

export interface CreateExternalAccountInput {
  currency: string;
  platformAccountId?: string | undefined;
  ownershipType?: 'FIRST_PARTY' | 'THIRD_PARTY' | undefined;
  defaultUmaDepositAccount?: boolean | undefined;
  accountInfo: AccountInfo;
}

/** How long a wallet-signature or liveness challenge stays open. */
export const CHALLENGE_TTL_MS = 15 * 60 * 1000;

// ----------------------------------------------------------------------------- presenting

function verifiedName(status: string | null, beneficiary: Record<string, unknown> | undefined): string | undefined {
  const name = String(beneficiary?.fullName ?? beneficiary?.legalName ?? '');
  if (name === '') return undefined;
  if (status === 'MATCHED') return name;
  if (status === 'PARTIAL_MATCH') {
    // The rail reports the holder's name as it has it: first name as an initial.
    const words = name.split(/\s+/);
    return words.length > 1 ? [`${words[0]!.charAt(0)}.`, ...words.slice(1)].join(' ') : name.toUpperCase();
  }
  return undefined;
}

export function presentExternalAccount(row: store.ExternalAccountRow) {
  const def = accountTypeDef(row.account_type)!;
  const info = JSON.parse(row.account_info) as AccountInfo;
  const rails = paymentRailsFor(def, info);
  const name = verifiedName(
    row.beneficiary_verification_status,
    info.beneficiary as Record<string, unknown> | undefined,
  );
  // A fresh parse: the payment rails can be added to it in place.
  if (rails) info.paymentRails = rails;
  // Absent fields are undefined values, which JSON leaves out (see presentTransaction).
  return {
    id: row.id,
    customerId: row.customer_id ?? undefined,
    status: row.status as 'ACTIVE',
    platformAccountId: row.platform_account_id ?? undefined,
    ownershipType: (row.ownership_type ?? undefined) as 'FIRST_PARTY' | 'THIRD_PARTY' | undefined,
    currency: row.currency,
    defaultUmaDepositAccount: row.default_uma_deposit === 1,
    beneficiaryVerificationStatus: (row.beneficiary_verification_status ?? undefined) as 'MATCHED' | undefined,
    beneficiaryVerifiedData: name !== undefined ? { fullName: name } : undefined,
    accountInfo: info,
  };
}

export type ExternalAccountView = ReturnType<typeof presentExternalAccount>;

// ----------------------------------------------------------------------------- rules

function isSelfCustodyWallet(def: AccountTypeDef, info: AccountInfo): boolean {
  return def.kind === 'WALLET' && (info.vaspName === undefined || info.vaspName === '');
}

function walletNetwork(def: AccountTypeDef): WalletNetwork {
  if (def.fields.address?.strict?.format === 'evm-address') return 'EVM';
  if (def.accountType === 'SOLANA_WALLET') return 'SOLANA';
  return 'OTHER';
}

/** Rules between fields that the schema cannot express; all problems are reported together. */
function checkCreate(ctx: Ctx, def: AccountTypeDef, input: CreateExternalAccountInput): void {
  const errors = new FieldErrors();
  const info = input.accountInfo;
  const currencyOk = def.currencies === 'ANY_FIAT' ? isFiat(input.currency) : def.currencies.includes(input.currency);
  if (!currencyOk) {
    const allowed = def.currencies === 'ANY_FIAT' ? undefined : [...def.currencies];
    errors.add(
      'currency',
      `${info.accountType} accounts hold ${allowed ? allowed.join(' or ') : 'a fiat currency'}, not ${input.currency}`,
      allowed ? { enum: allowed } : undefined,
    );
  }
  const given = (field: string) => typeof info[field] === 'string' && info[field] !== '';
  if (def.anyOf && !def.anyOf.some(given)) {
    for (const field of def.anyOf) errors.add(`accountInfo.${field}`, `one of ${def.anyOf.join(', ')} is required`);
  }
  if (def.exactlyOne) {
    const present = def.exactlyOne.filter(given);
    if (present.length !== 1) {
      const fields = present.length === 0 ? def.exactlyOne : present;
      for (const field of fields)
        errors.add(`accountInfo.${field}`, `exactly one of ${def.exactlyOne.join(', ')} must be given`);
    }
  }
  if (isSelfCustodyWallet(def, info) && ctx.settings.counterpartyRules) {
    if (input.ownershipType === undefined) {
      errors.add('ownershipType', 'is required for self-custody wallets on this platform', {
        enum: ['FIRST_PARTY', 'THIRD_PARTY'],
      });
    } else if (input.ownershipType === 'THIRD_PARTY' && info.beneficiary === undefined) {
      errors.add('accountInfo.beneficiary', 'is required for third-party wallets on this platform');
    }
  }
  errors.throwIfAny();
}

function initialStatus(ctx: Ctx, def: AccountTypeDef, input: CreateExternalAccountInput): string {
  const needsProof =
    isSelfCustodyWallet(def, input.accountInfo) &&
    ctx.settings.counterpartyRules &&
    input.ownershipType === 'FIRST_PARTY';
  return needsProof ? 'PENDING_OWNERSHIP_VERIFICATION' : 'ACTIVE';
}

function duplicate(existingId: string) {
  return apiError('CONFLICT', `This account is already registered for this owner as ${existingId}`, {
    existingExternalAccountId: existingId,
  });
}

// ----------------------------------------------------------------------------- operations

/**
 * Registers an external account for the platform (customerId null) or a customer. Checks
 * run in order: field rules, then the sandbox's beneficiary verification, then duplicates.
 */
export async function createExternalAccount(ctx: Ctx, owner: store.Owner, input: CreateExternalAccountInput) {
  const def = accountTypeDef(input.accountInfo.accountType);
  if (def === undefined) throw new Error(`unvalidated account type ${input.accountInfo.accountType}`);
  checkCreate(ctx, def, input);
  const info = prune(input.accountInfo, ExternalAccountCreateInfo) as AccountInfo;
  const primary = primaryIdentifier(def, info);

  let verification: string | null = null;
  if (def.kind === 'BANK') {
    const outcome = beneficiaryVerificationFor(primary);
    if (outcome.kind === 'reject') {
      const field = def.primary.find((f) => info[f] === primary) ?? def.primary[0]!;
      throw apiError('INVALID_BANK_ACCOUNT', 'The receiving bank reports that this account is invalid', {
        errors: [{ field: `accountInfo.${field}`, message: 'was rejected by the receiving bank' }],
      });
    }
    verification = outcome.status;
  }

  const key = identityKey(def, info);
  const now = iso(ctx.now);
  const row: store.ExternalAccountRow = {
    id: newId('ExternalAccount'),
    platform_id: owner.platformId,
    customer_id: owner.customerId,
    owner_key: store.ownerKey(owner),
    status: initialStatus(ctx, def, input),
    currency: input.currency,
    account_type: def.accountType,
    account_info: JSON.stringify(info),
    identity_key: key,
    platform_account_id: input.platformAccountId ?? null,
    ownership_type: input.ownershipType ?? null,
    default_uma_deposit: input.defaultUmaDepositAccount ? 1 : 0,
    beneficiary_verification_status: verification,
    beneficiary_verified_name: null,
    created_at: now,
    updated_at: now,
    deleted_at: null,
  };
  try {
    await ctx.db.transaction(async (tx) => {
      const existing = await store.findLiveByIdentity(tx, owner, key);
      if (existing !== undefined) throw duplicate(existing.id);
      // At most one default UMA deposit account per owner: the new one replaces the old.
      if (row.default_uma_deposit === 1) await store.clearDefaultUmaDeposit(tx, owner, now);
      await store.insertExternalAccount(tx, row);
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    // A concurrent request registered the same account first.
    const winner = await store.findLiveByIdentity(ctx.db.k, owner, key);
    throw duplicate(winner?.id ?? 'another account');
  }
  return presentExternalAccount(row);
}

/**
 * POST /customers/external-accounts: an account of the customer named by `customerId`, or of
 * the platform when there is none. The operation declares no 404, so a customer id that names
 * nothing (or a deleted customer) is a 400 on that field.
 */
export async function createCustomerExternalAccount(
  ctx: Ctx,
  input: CreateExternalAccountInput & { customerId?: string | undefined },
) {
  const customer =
    input.customerId === undefined
      ? undefined
      : await customerNamedBy(ctx.db.k, ctx.platformId, input.customerId, 'customerId');
  return createExternalAccount(ctx, { platformId: ctx.platformId, customerId: customer?.id ?? null }, input);
}

function notFound(id: string) {
  return apiError('REFERENCE_NOT_FOUND', `No external account ${id}`);
}

async function loadAccount(q: Queryable, ctx: Ctx, id: string, scope: store.AccountScope) {
  const row = await store.findExternalAccount(q, ctx.platformId, id, scope);
  if (row === undefined) throw notFound(id);
  return row;
}

export async function getExternalAccount(ctx: Ctx, id: string, scope: store.AccountScope) {
  return presentExternalAccount(await loadAccount(ctx.db.k, ctx, id, scope));
}

export async function listExternalAccounts(ctx: Ctx, filters: store.ExternalAccountFilters, page: PageRequest) {
  return toPage(await store.listExternalAccounts(ctx.db.k, ctx.platformId, filters, page), presentExternalAccount);
}

/**
 * Deletes an external account. A trusted beneficiary (SCA) is refused until it is
 * untrusted: 409 BENEFICIARY_TRUSTED, or what `refuseTrusted` answers where 409 is not declared.
 */
export async function deleteExternalAccount(
  ctx: Ctx,
  id: string,
  scope: store.AccountScope,
  refuseTrusted: (message: string) => ApiError = (message) => apiError('BENEFICIARY_TRUSTED', message),
) {
  await ctx.db.transaction(async (tx) => {
    const row = await loadAccount(tx, ctx, id, scope);
    if (row.customer_id !== null && (await isTrustedBeneficiary(tx, ctx.platformId, row.customer_id, row.id))) {
      throw refuseTrusted(
        `External account ${row.id} is a trusted beneficiary; untrust it first (POST /customers/external-accounts/${row.id}/untrust and its /confirm)`,
      );
    }
    const now = iso(ctx.now);
    await store.updateExternalAccount(tx, row.id, { deleted_at: now, updated_at: now });
  });
}

// ----------------------------------------------------------------------------- ownership

/** Moves an account to a new status and records EXTERNAL_ACCOUNT.STATUS_UPDATED with it. */
async function transition(
  tx: Queryable,
  now: Date,
  row: store.ExternalAccountRow,
  status: string,
): Promise<store.ExternalAccountRow> {
  if (row.status === status) return row;
  const updated = { ...row, status, updated_at: iso(now) };
  await store.updateExternalAccount(tx, row.id, { status, updated_at: updated.updated_at });
  await recordEvent(tx, {
    platformId: row.platform_id,
    type: 'EXTERNAL_ACCOUNT.STATUS_UPDATED',
    resourceId: row.id,
    data: presentExternalAccount(updated),
    now,
  });
  return updated;
}

const OWNERSHIP_OPEN = new Set(['PENDING_OWNERSHIP_VERIFICATION', 'UNVERIFIED']);

function checkOwnershipApplies(row: store.ExternalAccountRow): AccountTypeDef {
  const def = accountTypeDef(row.account_type)!;
  const info = JSON.parse(row.account_info) as AccountInfo;
  if (!isSelfCustodyWallet(def, info) || row.ownership_type !== 'FIRST_PARTY') {
    throw apiError('CONFLICT', 'Ownership verification applies only to first-party self-custody wallets');
  }
  if (!OWNERSHIP_OPEN.has(row.status)) {
    throw apiError('CONFLICT', `Ownership of this account needs no verification (status ${row.status})`);
  }
  return def;
}

function messageToSign(row: store.ExternalAccountRow, nonce: string, expiresAt: string): string {
  const info = JSON.parse(row.account_info) as AccountInfo;
  return [
    'Railyard sandbox: prove control of this wallet.',
    `Account: ${row.id}`,
    `Address: ${String(info.address)}`,
    `Nonce: ${nonce}`,
    `Expires: ${expiresAt}`,
  ].join('\n');
}

export async function createOwnershipChallenge(
  ctx: Ctx,
  id: string,
  scope: store.AccountScope,
  method: 'WALLET_SIGNATURE' | 'LIVENESS',
  publicBaseUrl: string,
) {
  return ctx.db.transaction(async (tx) => {
    const row = await loadAccount(tx, ctx, id, scope);
    checkOwnershipApplies(row);
    const now = iso(ctx.now);
    const expiresAt = iso(new Date(ctx.now.getTime() + CHALLENGE_TTL_MS));
    await store.abandonPendingChallenges(tx, row.id, now);
    const challengeId = newId('OwnershipChallenge');
    const token = randomBytes(16).toString('hex');
    const message =
      method === 'WALLET_SIGNATURE' ? messageToSign(row, randomBytes(16).toString('hex'), expiresAt) : null;
    await store.insertChallenge(tx, {
      id: challengeId,
      platform_id: ctx.platformId,
      external_account_id: row.id,
      method,
      message_to_sign: message,
      token: method === 'LIVENESS' ? token : null,
      status: 'PENDING',
      expires_at: expiresAt,
      created_at: now,
      updated_at: now,
    });
    // A new challenge reopens verification after a failed attempt.
    await transition(tx, ctx.now, row, 'PENDING_OWNERSHIP_VERIFICATION');
    if (method === 'WALLET_SIGNATURE') return { method, messageToSign: message!, expiresAt };
    const link = `${publicBaseUrl}/_railyard/liveness/${encodeURIComponent(challengeId)}?token=${token}`;
    return { method, verificationLink: link, token, expiresAt };
  });
}

/**
 * Completes a WALLET_SIGNATURE challenge. A valid signature activates the account; an
 * invalid one moves it to UNVERIFIED (committed) and answers 400.
 */
export async function verifyOwnership(ctx: Ctx, id: string, scope: store.AccountScope, signature: string) {
  const outcome = await ctx.db.transaction(async (tx) => {
    const row = await loadAccount(tx, ctx, id, scope);
    const def = checkOwnershipApplies(row);
    const challenge = await store.latestPendingChallenge(tx, row.id);
    if (challenge === undefined || challenge.method !== 'WALLET_SIGNATURE') {
      throw apiError('CONFLICT', 'There is no open WALLET_SIGNATURE challenge for this account; start one first');
    }
    if (challenge.expires_at <= iso(ctx.now)) {
      throw apiError('INVALID_INPUT', 'The challenge has expired; start a new one', {
        errors: [{ field: 'signature', message: 'answers an expired challenge' }],
      });
    }
    const info = JSON.parse(row.account_info) as AccountInfo;
    const valid =
      signature === SANDBOX_VALID_SIGNATURE ||
      verifyWalletSignature(walletNetwork(def), String(info.address), challenge.message_to_sign ?? '', signature);
    const now = iso(ctx.now);
    await store.setChallengeStatus(tx, challenge.id, valid ? 'SUCCEEDED' : 'FAILED', now);
    const updated = await transition(tx, ctx.now, row, valid ? 'ACTIVE' : 'UNVERIFIED');
    return { valid, account: presentExternalAccount(updated) };
  });
  if (!outcome.valid) {
    throw apiError(
      'INVALID_INPUT',
      'The signature does not prove control of this wallet; the account is now UNVERIFIED',
      {
        errors: [{ field: 'signature', message: 'is not a valid signature of messageToSign by this address' }],
      },
    );
  }
  return outcome.account;
}

/**
 * The tester's answer on railyard's liveness page: passing activates the account, failing
 * leaves it UNVERIFIED. The link's token is the credential, as a hosted flow's link would be.
 */
export async function completeLiveness(deps: Deps, challengeId: string, token: string, passed: boolean) {
  return deps.db.transaction(async (tx) => {
    const challenge = await store.findChallenge(tx, challengeId);
    if (challenge === undefined || challenge.method !== 'LIVENESS' || challenge.token !== token) {
      throw apiError('REFERENCE_NOT_FOUND', 'No such liveness check');
    }
    const now = await platformNowOf(deps, challenge.platform_id, tx);
    if (challenge.status !== 'PENDING')
      throw apiError('CONFLICT', `This liveness check is already ${challenge.status}`);
    if (challenge.expires_at <= iso(now)) throw apiError('CONFLICT', 'This liveness check has expired');
    const row = await store.findExternalAccount(tx, challenge.platform_id, challenge.external_account_id, 'any');
    if (row === undefined) throw apiError('REFERENCE_NOT_FOUND', 'The account of this liveness check no longer exists');
    await store.setChallengeStatus(tx, challenge.id, passed ? 'SUCCEEDED' : 'FAILED', iso(now));
    return presentExternalAccount(await transition(tx, now, row, passed ? 'ACTIVE' : 'UNVERIFIED'));
  });
}

/** What a liveness page shows before the tester answers. */
export async function describeLiveness(deps: Deps, challengeId: string, token: string) {
  const challenge = await store.findChallenge(deps.db.k, challengeId);
  if (challenge === undefined || challenge.method !== 'LIVENESS' || challenge.token !== token) return undefined;
  return { accountId: challenge.external_account_id, status: challenge.status, expiresAt: challenge.expires_at };
}

// ----------------------------------------------------------------------------- for transfers

export interface TransferCounterparty {
  id: string;
  customerId: string | null;
  status: string;
  currency: string;
  accountType: string;
  kind: AccountTypeDef['kind'];
  /** The identifier whose last characters select the sandbox scenario. */
  primaryIdentifier: string;
  /** The rails this account can be paid over (bank accounts); undefined for wallets. */
  paymentRails: string[] | undefined;
}

/**
 * Refuses a counterparty money cannot move with yet: one whose ownership is not verified
 * (400 EXTERNAL_ACCOUNT_VERIFICATION_REQUIRED) or that is otherwise not ACTIVE (400
 * INVALID_INPUT); `field` is the request field that named it.
 */
export function requireActiveCounterparty(external: TransferCounterparty, field: string): void {
  if (external.status === 'PENDING_OWNERSHIP_VERIFICATION' || external.status === 'UNVERIFIED') {
    throw apiError(
      'EXTERNAL_ACCOUNT_VERIFICATION_REQUIRED',
      `External account ${external.id} must pass ownership verification first`,
      {
        errors: [{ field, message: `is ${external.status}` }],
      },
    );
  }
  if (external.status !== 'ACTIVE') {
    throw apiError('INVALID_INPUT', `External account ${external.id} is ${external.status}`, {
      errors: [{ field, message: `is ${external.status}` }],
    });
  }
}

/**
 * Where an incoming UMA payment to the customer in `currency` is deposited, when not in the
 * customer's internal account: the external account flagged `defaultUmaDepositAccount`, if
 * it holds that currency and is ACTIVE (sandbox payments are not converted).
 */
export async function umaDepositAccountFor(
  q: Queryable,
  platformId: string,
  customerId: string,
  currency: string,
): Promise<string | undefined> {
  const row = await store.findDefaultUmaDeposit(q, { platformId, customerId });
  return row !== undefined && row.currency === currency && row.status === 'ACTIVE' ? row.id : undefined;
}

/** The read of findTransferCounterparty, for a command's prefetched reads (db/prefetch.ts). */
export function transferCounterpartyRead(platformId: string, id: string, forPayment = false) {
  return store.externalAccountRead(platformId, id, forPayment);
}

/**
 * A live external account of the platform (any owner), as transfers need it; read in the
 * caller's transaction. `forPayment`: money moves with it in this transaction, so a
 * concurrent delete or status change must not slip in before the commit (a share lock on
 * PostgreSQL).
 */
export async function findTransferCounterparty(
  q: Queryable,
  platformId: string,
  id: string,
  forPayment = false,
): Promise<TransferCounterparty | undefined> {
  const row = await store.findExternalAccount(q, platformId, id, 'any', forPayment);
  if (row === undefined) return undefined;
  const def = accountTypeDef(row.account_type)!;
  // Read only, and by every payment to the account: parsed once per text (src/json.ts).
  const info = parseShared<AccountInfo>(row.account_info);
  return {
    id: row.id,
    customerId: row.customer_id,
    status: row.status,
    currency: row.currency,
    accountType: row.account_type,
    kind: def.kind,
    primaryIdentifier: primaryIdentifier(def, info),
    paymentRails: paymentRailsFor(def, info),
  };
}
