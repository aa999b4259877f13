// Cards: virtual cards issued to KYC-approved customers and funded from their internal
// accounts. Issuance answers PROCESSING; a provisioning job then activates the card, or the
// issuer rejects it, by the sandbox suffix of platformCardId (else cardholderId): 001 stays
// PROCESSING, 002 CLOSED/ISSUER_REJECTED, 005 ACTIVE after 30 s, others ACTIVE at once.
// States: ACTIVE <-> FROZEN, ACTIVE | FROZEN -> CLOSED (terminal, funding sources detached).
// CARD.STATE_CHANGE fires on every transition, CARD.FUNDING_SOURCE_CHANGE whenever the
// funding sources change. The full number and CVC are sealed with railyard's card-data key
// (AES-256-GCM) and shown only on the reveal page, whose token travels in the URL fragment
// (never in a request line, so never in a log).

import { createHash, randomBytes, randomInt } from 'node:crypto';
import { iso } from '../../clock.js';
import { openText, sealText, secretHash as tokenHash } from '../../crypto/sealing.js';
import type { Queryable, Tx } from '../../db/index.js';
import { railyardKey } from '../../db/keys.js';
import { toPage, type PageRequest } from '../../db/pagination.js';
import { recordEvent } from '../../events/outbox.js';
import type { Ctx } from '../../http/context.js';
import type { Deps } from '../../http/deps.js';
import { apiError, type FieldError, invalidInput } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { defineJob } from '../../jobs/queue.js';
import { cardFundingBindingFor, cardIssuanceFor } from '../../rails/magic.js';
import { findCustomerRow } from '../customers/lookup.js';
import { findInternalAccount } from '../internal-accounts/service.js';
import { platformNowOf } from '../platform/service.js';
import type { CardCreateInput, CardUpdateInput } from './schemas.js';
import * as store from './store.js';

/** Currencies a card can transact in. */
const CARD_CURRENCIES = new Set(['USD', 'EUR', 'GBP', 'USDB', 'USDC']);
export const REVEAL_TTL_MS = 5 * 60_000;

// ------------------------------------------------------------------------------- presentation

export function presentCard(row: store.CardRow) {
  return {
    id: row.id,
    cardholderId: row.cardholder_id,
    platformCardId: row.platform_card_id,
    state: row.state as 'ACTIVE',
    stateReason: row.state_reason as 'ISSUER_REJECTED' | null,
    brand: row.brand as 'VISA',
    form: row.form as 'VIRTUAL',
    last4: row.last4,
    expMonth: Number(row.exp_month),
    expYear: Number(row.exp_year),
    fundingSources: JSON.parse(row.funding_sources) as string[],
    maxSpendPerTransaction: row.max_spend_per_transaction === null ? null : Number(row.max_spend_per_transaction),
    currency: row.currency,
    processorRef: row.processor_ref,
    issuerRef: row.issuer_ref,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

async function emitState(tx: Queryable, row: store.CardRow, now: Date) {
  await recordEvent(tx, {
    platformId: row.platform_id,
    type: 'CARD.STATE_CHANGE',
    resourceId: row.id,
    data: presentCard(row),
    now,
  });
}

async function emitFunding(tx: Queryable, row: store.CardRow, now: Date) {
  await recordEvent(tx, {
    platformId: row.platform_id,
    type: 'CARD.FUNDING_SOURCE_CHANGE',
    resourceId: row.id,
    data: presentCard(row),
    now,
  });
}

// ------------------------------------------------------------------------------- card data

/** A Luhn-valid 16-digit number on the Visa test range (4000 00..) ending in `last4`. */
function cardNumber(last4: string): string {
  const body = `400000${String(randomInt(0, 100_000)).padStart(5, '0')}`;
  for (let check = 0; check <= 9; check++) {
    const pan = `${body}${check}${last4}`;
    let sum = 0;
    for (let i = 0; i < pan.length; i++) {
      let digit = Number(pan[pan.length - 1 - i]);
      if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
      sum += digit;
    }
    if (sum % 10 === 0) return pan;
  }
  throw new Error('unreachable: one check digit always completes a Luhn number');
}

/** last4 from the issuance suffix: its digits, else digits derived from it. */
function last4For(suffix: string): string {
  if (/^\d{3}$/.test(suffix)) return `0${suffix}`;
  return String(createHash('sha256').update(suffix).digest().readUInt16BE(0) % 10_000).padStart(4, '0');
}

function seal(key: Buffer, details: { pan: string; cvc: string }): string {
  return sealText(key, JSON.stringify(details));
}

function unseal(key: Buffer, sealed: string): { pan: string; cvc: string } {
  return JSON.parse(openText(key, sealed)) as { pan: string; cvc: string };
}

// ------------------------------------------------------------------------------- provisioning

interface ProvisionPayload {
  cardId: string;
  outcome: 'ACTIVE' | 'REJECTED';
}

/** The issuer's answer to a card in PROCESSING. */
export const cardProvisionJob = defineJob<ProvisionPayload>('card.provision', {
  mode: 'transaction',
  async run(tx, job, ctx) {
    const row = await store.findCard(tx, job.platformId, job.payload.cardId, true);
    if (row === undefined || row.state !== 'PROCESSING') return;
    const next: store.CardRow =
      job.payload.outcome === 'ACTIVE'
        ? { ...row, state: 'ACTIVE', updated_at: iso(ctx.now) }
        : { ...row, state: 'CLOSED', state_reason: 'ISSUER_REJECTED', updated_at: iso(ctx.now) };
    await store.updateCard(tx, row.id, {
      state: next.state,
      state_reason: next.state_reason,
      updated_at: next.updated_at,
    });
    await emitState(tx, next, ctx.now);
  },
});

// ------------------------------------------------------------------------------- funding sources

/**
 * The funding sources, checked: each an internal account of the cardholder, in one
 * card-eligible currency (`currency` when the card has one). Refusals name the
 * FUNDING_SOURCE_INELIGIBLE reason the reference gives (its Error400 has no such code).
 */
async function checkFundingSources(
  q: Queryable,
  ctx: Ctx,
  cardholderId: string,
  ids: string[],
  currency: string | undefined,
): Promise<string> {
  const errors: FieldError[] = [];
  let chosen = currency;
  const seen = new Set<string>();
  for (const [i, id] of ids.entries()) {
    const field = `fundingSources[${i}]`;
    if (seen.has(id)) {
      errors.push({ field, message: 'names a funding source already in the list' });
      continue;
    }
    seen.add(id);
    const account = await findInternalAccount(q, ctx.platformId, id);
    if (account === undefined || account.customer_id !== cardholderId) {
      errors.push({ field, message: `is not an internal account of cardholder ${cardholderId}` });
      continue;
    }
    if (account.status !== 'ACTIVE') {
      errors.push({ field, message: `is ${account.status}` });
      continue;
    }
    const binding = cardFundingBindingFor(id);
    if (binding.kind === 'INELIGIBLE') {
      errors.push({ field, message: binding.why });
      continue;
    }
    if (!CARD_CURRENCIES.has(account.currency)) {
      errors.push({ field, message: `holds ${account.currency}, which cards cannot transact in` });
      continue;
    }
    chosen ??= account.currency;
    if (account.currency !== chosen) {
      errors.push({ field, message: `holds ${account.currency}; every funding source must hold ${chosen}` });
    }
  }
  if (errors.length > 0) {
    throw apiError('INVALID_INPUT', `A funding source is not eligible: ${errors[0]!.field} ${errors[0]!.message}`, {
      reason: 'FUNDING_SOURCE_INELIGIBLE',
      errors,
    });
  }
  return chosen!;
}

// ------------------------------------------------------------------------------- operations

export async function createCard(ctx: Ctx, input: CardCreateInput) {
  return ctx.db.transaction(async (tx) => {
    const cardholder = await findCustomerRow(tx, ctx.platformId, input.cardholderId);
    if (cardholder === undefined || cardholder.deleted_at !== null) {
      throw invalidInput([
        { field: 'cardholderId', message: `names no customer of this platform: ${input.cardholderId}` },
      ]);
    }
    if (cardholder.status !== 'APPROVED') {
      throw apiError(
        'CARDHOLDER_KYC_NOT_APPROVED',
        `Customer ${cardholder.id} is ${cardholder.status}; a card needs an APPROVED cardholder`,
        { errors: [{ field: 'cardholderId', message: `is ${cardholder.status}, not APPROVED` }] },
      );
    }
    if (input.threeDSecurePassword !== undefined) {
      throw invalidInput([
        {
          field: 'threeDSecurePassword',
          message: "cannot be set: railyard's card program has no static 3-D Secure password",
        },
      ]);
    }
    const currency = await checkFundingSources(tx, ctx, cardholder.id, input.fundingSources, undefined);
    const platformCardId = input.platformCardId ?? `card-${randomBytes(6).toString('hex')}`;
    if ((await store.findByPlatformCardId(tx, ctx.platformId, platformCardId)) !== undefined) {
      throw invalidInput([
        { field: 'platformCardId', message: `is the platformCardId of another card: ${platformCardId}` },
      ]);
    }
    const issuanceId = input.platformCardId ?? cardholder.id;
    const issuance = cardIssuanceFor(issuanceId);
    const last4 = last4For(issuanceId.slice(-3));
    const expiry = new Date(Date.UTC(ctx.now.getUTCFullYear() + 3, ctx.now.getUTCMonth(), 1));
    const now = iso(ctx.now);
    const row: store.CardRow = {
      id: newId('Card'),
      platform_id: ctx.platformId,
      cardholder_id: cardholder.id,
      platform_card_id: platformCardId,
      state: 'PROCESSING',
      state_reason: null,
      brand: 'VISA',
      form: input.form,
      last4,
      exp_month: expiry.getUTCMonth() + 1,
      exp_year: expiry.getUTCFullYear(),
      funding_sources: JSON.stringify(input.fundingSources),
      max_spend_per_transaction: input.maxSpendPerTransaction ?? null,
      currency,
      processor_ref: `crd_${randomBytes(8).toString('hex')}`,
      issuer_ref: `iss_${randomBytes(8).toString('hex')}`,
      sealed_details: seal(await railyardKey(tx, 'card-data', ctx.now), {
        pan: cardNumber(last4),
        cvc: String(randomInt(0, 1000)).padStart(3, '0'),
      }),
      created_at: now,
      updated_at: now,
    };
    await store.insertCard(tx, row);
    if (issuance.kind !== 'STAYS_PROCESSING') {
      await cardProvisionJob.schedule(tx, {
        platformId: ctx.platformId,
        payload: { cardId: row.id, outcome: issuance.kind === 'REJECTED' ? 'REJECTED' : 'ACTIVE' },
        dueAt: new Date(ctx.now.getTime() + (issuance.kind === 'ACTIVE' ? issuance.afterMs : 0)),
        now: ctx.now,
      });
    }
    return presentCard(row);
  });
}

async function loadCard(q: Queryable, ctx: Ctx, id: string, forUpdate = false): Promise<store.CardRow> {
  const row = await store.findCard(q, ctx.platformId, id, forUpdate);
  if (row === undefined) throw apiError('REFERENCE_NOT_FOUND', `No card ${id}`);
  return row;
}

export async function getCard(ctx: Ctx, id: string) {
  return presentCard(await loadCard(ctx.db.k, ctx, id));
}

export async function listCards(ctx: Ctx, query: store.CardFilters & PageRequest) {
  return toPage(await store.listCards(ctx.db.k, ctx.platformId, query, query), presentCard);
}

const TRANSITIONS: Record<string, readonly string[]> = {
  ACTIVE: ['FROZEN', 'CLOSED'],
  FROZEN: ['ACTIVE', 'CLOSED'],
};

export async function updateCard(ctx: Ctx, id: string, input: CardUpdateInput) {
  const changesFunding = input.fundingSources !== undefined;
  const changesLimit = input.maxSpendPerTransaction !== undefined;
  return ctx.db.transaction(async (tx: Tx) => {
    const row = await loadCard(tx, ctx, id, true);
    if (input.state === undefined && !changesFunding && !changesLimit) {
      throw invalidInput([
        {
          field: 'state',
          message: 'or fundingSources or maxSpendPerTransaction is required: the request changes nothing',
        },
      ]);
    }
    if (row.state === 'CLOSED') {
      if (input.state === 'CLOSED') throw apiError('CARD_ALREADY_CLOSED', `Card ${id} is closed already`);
      throw apiError('CARD_NOT_MUTABLE', `Card ${id} is CLOSED: a closed card cannot change`);
    }
    if (input.state === 'CLOSED' && (changesFunding || changesLimit)) {
      const errors: FieldError[] = [];
      if (changesFunding) errors.push({ field: 'fundingSources', message: 'cannot be given with state CLOSED' });
      if (changesLimit) errors.push({ field: 'maxSpendPerTransaction', message: 'cannot be given with state CLOSED' });
      throw invalidInput(errors);
    }
    if (input.state !== undefined && !(TRANSITIONS[row.state] ?? []).includes(input.state)) {
      throw apiError(
        'INVALID_STATE_TRANSITION',
        `Card ${id} is ${row.state} and cannot become ${input.state} (ACTIVE and FROZEN go to each other, or to CLOSED)`,
      );
    }
    let next: store.CardRow = { ...row, updated_at: iso(ctx.now) };
    if (changesFunding) {
      await checkFundingSources(tx, ctx, row.cardholder_id, input.fundingSources!, row.currency);
      next.funding_sources = JSON.stringify(input.fundingSources);
    }
    if (changesLimit) next.max_spend_per_transaction = input.maxSpendPerTransaction ?? null;
    if (input.state !== undefined) {
      next = { ...next, state: input.state };
      if (input.state === 'CLOSED') next = { ...next, state_reason: 'CLOSED_BY_PLATFORM', funding_sources: '[]' };
    }
    await store.updateCard(tx, row.id, {
      state: next.state,
      state_reason: next.state_reason,
      funding_sources: next.funding_sources,
      max_spend_per_transaction: next.max_spend_per_transaction,
      updated_at: next.updated_at,
    });
    if (next.state !== row.state) await emitState(tx, next, ctx.now);
    if (next.funding_sources !== row.funding_sources) await emitFunding(tx, next, ctx.now);
    return presentCard(next);
  });
}

/** The card when `accountId` is one of its funding sources (what a delegated key is for). */
export async function cardFundedBy(q: Queryable, platformId: string, cardId: string, accountId: string) {
  const card = await store.findCard(q, platformId, cardId);
  if (card === undefined) return { card: undefined, funded: false };
  return { card, funded: (JSON.parse(card.funding_sources) as string[]).includes(accountId) };
}

// ------------------------------------------------------------------------------- reveal

/** A short-lived link to railyard's reveal page; its token is in the fragment, which browsers never send. */
export async function revealCard(ctx: Ctx, id: string, publicBaseUrl: string) {
  return ctx.db.transaction(async (tx) => {
    const row = await loadCard(tx, ctx, id);
    const token = randomBytes(24).toString('base64url');
    const expiresAt = iso(new Date(ctx.now.getTime() + REVEAL_TTL_MS));
    await store.insertReveal(tx, {
      token_hash: tokenHash(token),
      platform_id: ctx.platformId,
      card_id: row.id,
      expires_at: expiresAt,
      created_at: iso(ctx.now),
    });
    return { panEmbedUrl: `${publicBaseUrl}/_railyard/card-reveal#${token}`, expiresAt };
  });
}

/** The card's details for a live reveal token (the page posts the token from its fragment). */
export async function revealedDetails(deps: Deps, token: string) {
  const reveal = await store.findReveal(deps.db.k, tokenHash(token));
  if (reveal === undefined) return undefined;
  const now = await platformNowOf(deps, reveal.platform_id);
  if (reveal.expires_at <= iso(now)) return undefined;
  const card = await store.findCard(deps.db.k, reveal.platform_id, reveal.card_id);
  if (card === undefined) return undefined;
  const details = unseal(await railyardKey(deps.db.k, 'card-data', now), card.sealed_details);
  return {
    cardId: card.id,
    pan: details.pan,
    cvc: details.cvc,
    expMonth: Number(card.exp_month),
    expYear: Number(card.exp_year),
  };
}
