// Receiver lookups: before paying a UMA address or an external account, a platform asks what
// the receiver accepts (currencies with their limits and an indicative rate, and the payer
// data it wants). Each answer is stored under a `Lookup:<uuid>` id, which a quote cites; the
// quotes area reads it back with findReceiverLookup.
//
// Checks, in order: the parameters are well formed (400, all at once), the sender customer
// exists (404 USER_NOT_FOUND), the receiver exists (404 UMA_NOT_FOUND / REFERENCE_NOT_FOUND).

import { iso } from '../../clock.js';
import type { Queryable } from '../../db/index.js';
import type { Ctx } from '../../http/context.js';
import { apiError, FieldErrors } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { hasRate, midRate } from '../../rates/index.js';
import { parseUmaAddress, sandboxUmaCounterpartyFor, type UmaScenario } from '../../rails/magic.js';
import { activeCustomer } from '../customers/lookup.js';
import { findTransferCounterparty } from '../external-accounts/service.js';
import { currencyObject } from '../internal-accounts/service.js';
import * as store from './store.js';

export interface ReceiverLookup {
  id: string;
  kind: 'UMA' | 'EXTERNAL_ACCOUNT';
  umaAddress?: string;
  externalAccountId?: string;
  currencies: { code: string; min: number; max: number }[];
  requiredPayerDataFields: { name: string; mandatory: boolean }[];
  scenario: UmaScenario;
  createdAt: string;
}

/** A stored lookup of the platform; undefined for an unknown id or another platform's. */
export async function findReceiverLookup(
  q: Queryable,
  platformId: string,
  lookupId: string,
): Promise<ReceiverLookup | undefined> {
  const row = await store.findLookup(q, platformId, lookupId);
  if (row === undefined) return undefined;
  return {
    id: row.id,
    kind: row.kind as ReceiverLookup['kind'],
    ...(row.uma_address !== null ? { umaAddress: row.uma_address } : {}),
    ...(row.external_account_id !== null ? { externalAccountId: row.external_account_id } : {}),
    currencies: JSON.parse(row.currencies) as ReceiverLookup['currencies'],
    requiredPayerDataFields: JSON.parse(row.required_payer_data_fields) as ReceiverLookup['requiredPayerDataFields'],
    scenario: row.scenario as UmaScenario,
    createdAt: row.created_at,
  };
}

// ----------------------------------------------------------------------------- sandbox receivers

/** What any sandbox receiver accepts per payment, in the currency's smallest unit. */
export const RECEIVER_MIN_AMOUNT = 1;
export const RECEIVER_MAX_AMOUNT = 1_000_000_000;

/**
 * Payer data every sandbox UMA receiver asks for: the sender's full name (mandatory) and
 * nationality (optional). External accounts ask for nothing.
 */
export const UMA_REQUIRED_PAYER_DATA: ReceiverLookup['requiredPayerDataFields'] = [
  { name: 'FULL_NAME', mandatory: true },
  { name: 'NATIONALITY', mandatory: false },
];

/**
 * The rate a lookup shows: the mid-market rate from USD at the time of the lookup (src/rates),
 * an estimate only; the quote fixes the rate that applies.
 */
function indicativeRate(currency: string, now: Date): number {
  return hasRate(currency) ? Number(midRate('USD', currency, now).toPrecision(8)) : 1;
}

function presentCurrencies(currencies: ReceiverLookup['currencies'], now: Date) {
  return currencies.map((c) => ({
    currency: currencyObject(c.code),
    estimatedExchangeRate: indicativeRate(c.code, now),
    min: c.min,
    max: c.max,
  }));
}

// ----------------------------------------------------------------------------- operations

export interface SenderQuery {
  senderUmaAddress?: string | undefined;
  customerId?: string | undefined;
}

function checkSender(query: SenderQuery, errors: FieldErrors): void {
  if (query.senderUmaAddress === undefined && query.customerId === undefined) {
    errors.add('senderUmaAddress', 'or customerId is required: name the sender');
    errors.add('customerId', 'or senderUmaAddress is required: name the sender');
  }
  if (query.senderUmaAddress !== undefined && parseUmaAddress(query.senderUmaAddress) === undefined) {
    errors.add('senderUmaAddress', 'must be a UMA address such as $name@domain.example');
  }
}

/** 400 with every problem; INVALID_UMA_ADDRESS when each one is a malformed UMA address. */
function throwIfInvalid(errors: FieldErrors, umaFormatFields: Set<string>): void {
  if (errors.empty) return;
  const onlyAddresses = errors.errors.every(
    (e) => umaFormatFields.has(e.field) && e.message.startsWith('must be a UMA address'),
  );
  if (onlyAddresses) {
    throw apiError('INVALID_UMA_ADDRESS', errors.errors.map((e) => `${e.field} ${e.message}`).join('; '), {
      errors: errors.errors,
    });
  }
  errors.throwIfAny();
}

async function checkSenderCustomer(ctx: Ctx, query: SenderQuery): Promise<void> {
  if (query.customerId !== undefined) await activeCustomer(ctx.db.k, ctx.platformId, query.customerId);
}

async function saveLookup(
  ctx: Ctx,
  lookup: Omit<ReceiverLookup, 'id' | 'createdAt'>,
  query: SenderQuery,
): Promise<ReceiverLookup> {
  const stored: ReceiverLookup = { id: newId('Lookup'), ...lookup, createdAt: iso(ctx.now) };
  await store.insertLookup(ctx.db.k, {
    id: stored.id,
    platform_id: ctx.platformId,
    kind: stored.kind,
    uma_address: stored.umaAddress ?? null,
    external_account_id: stored.externalAccountId ?? null,
    sender_customer_id: query.customerId ?? null,
    sender_uma_address: query.senderUmaAddress ?? null,
    currencies: JSON.stringify(stored.currencies),
    required_payer_data_fields: JSON.stringify(stored.requiredPayerDataFields),
    scenario: stored.scenario,
    created_at: stored.createdAt,
  });
  return stored;
}

export async function lookupUma(ctx: Ctx, receiverUmaAddress: string, query: SenderQuery) {
  const errors = new FieldErrors();
  const parsed = parseUmaAddress(receiverUmaAddress);
  if (parsed === undefined) errors.add('receiverUmaAddress', 'must be a UMA address such as $name@domain.example');
  checkSender(query, errors);
  throwIfInvalid(errors, new Set(['receiverUmaAddress', 'senderUmaAddress']));
  await checkSenderCustomer(ctx, query);

  const counterparty = sandboxUmaCounterpartyFor(receiverUmaAddress);
  if (counterparty === undefined) throw apiError('UMA_NOT_FOUND', `Nobody receives payments at ${receiverUmaAddress}`);
  const address = `$${parsed!.name}@${parsed!.domain}`;
  const lookup = await saveLookup(
    ctx,
    {
      kind: 'UMA',
      umaAddress: address,
      currencies: [{ code: counterparty.currency, min: RECEIVER_MIN_AMOUNT, max: RECEIVER_MAX_AMOUNT }],
      requiredPayerDataFields: UMA_REQUIRED_PAYER_DATA,
      scenario: counterparty.scenario,
    },
    query,
  );
  return {
    receiverUmaAddress: address,
    supportedCurrencies: presentCurrencies(lookup.currencies, ctx.now),
    requiredPayerDataFields: lookup.requiredPayerDataFields,
    lookupId: lookup.id,
  };
}

export async function lookupExternalAccount(ctx: Ctx, accountId: string, query: SenderQuery) {
  const errors = new FieldErrors();
  checkSender(query, errors);
  throwIfInvalid(errors, new Set(['senderUmaAddress']));
  await checkSenderCustomer(ctx, query);

  const account = await findTransferCounterparty(ctx.db.k, ctx.platformId, accountId);
  if (account === undefined)
    throw apiError('REFERENCE_NOT_FOUND', `No external account ${accountId}`, { field: 'accountId' });
  const lookup = await saveLookup(
    ctx,
    {
      kind: 'EXTERNAL_ACCOUNT',
      externalAccountId: account.id,
      currencies: [{ code: account.currency, min: RECEIVER_MIN_AMOUNT, max: RECEIVER_MAX_AMOUNT }],
      requiredPayerDataFields: [],
      scenario: 'SUCCESS',
    },
    query,
  );
  return {
    accountId: account.id,
    supportedCurrencies: presentCurrencies(lookup.currencies, ctx.now),
    requiredPayerDataFields: lookup.requiredPayerDataFields,
    lookupId: lookup.id,
  };
}
