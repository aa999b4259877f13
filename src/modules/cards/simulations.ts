// The card network simulators (POST /sandbox/cards/{id}/simulate/...). A simulation is
// checked against the card and the transaction it names, answered 202 with an issuer
// transaction token, and carried out by a job on the platform's clock: the effect (a card
// transaction, its money, its CARD_TRANSACTION.* event) never arrives in the response.
//
// Six simulators open a card transaction and go through decisioning: the card must not be
// frozen (else CARD_PAUSED), the merchant descriptor's suffix may decline or delay
// (rails/magic.ts), a debit past maxSpendPerTransaction is declined, and a debit takes the
// first funding source that covers it (none: INSUFFICIENT_FUNDS). A declined simulation
// makes no transaction. The other four change an existing transaction (clearing, return,
// return reversal, authorization advice). The money and the statuses are the transaction
// lifecycle's (transactions/card-payments.ts).

import { randomUUID } from 'node:crypto';
import { iso } from '../../clock.js';
import type { Tx } from '../../db/index.js';
import type { Ctx } from '../../http/context.js';
import { apiError, invalidInput } from '../../http/errors.js';
import { defineJob, type JobContext } from '../../jobs/queue.js';
import { cardDecisionFor } from '../../rails/magic.js';
import { findCustomerRow } from '../customers/lookup.js';
import {
  applyCardEvent,
  type CardEvent,
  cardEventRefusal,
  cardPullJob,
  findCardTransaction,
  openCardTransaction,
} from '../transactions/card-payments.js';
import { cardDetailsOf } from '../transactions/presentation.js';
import type { SandboxCardAuthorizationInput } from './schemas.js';
import * as store from './store.js';

/** The simulators that open a card transaction, with what they open. */
export const OPENINGS = {
  AUTHORIZATION: { direction: 'DEBIT', financial: false },
  FINANCIAL_AUTHORIZATION: { direction: 'DEBIT', financial: true },
  BALANCE_INQUIRY: { direction: 'DEBIT', financial: false },
  CREDIT_AUTHORIZATION: { direction: 'CREDIT', financial: false },
  FINANCIAL_CREDIT_AUTHORIZATION: { direction: 'CREDIT', financial: true },
  CREDIT_AUTHORIZATION_ADVICE: { direction: 'CREDIT', financial: false },
} as const;
export type OpeningKind = keyof typeof OPENINGS;

/** The simulators that change an existing card transaction, with the network event each is. */
const EVENTS = {
  CLEARING: 'CLEARING',
  RETURN: 'RETURN',
  RETURN_REVERSAL: 'RETURN_REVERSAL',
  AUTHORIZATION_ADVICE: 'ADVICE',
} as const;
export type EventKind = keyof typeof EVENTS;

interface OpeningRequest {
  amount: number;
  currency: string;
  merchant: SandboxCardAuthorizationInput['merchant'];
}

interface EventRequest {
  cardTransactionId: string;
  amount?: number | undefined;
}

function eventOf(kind: EventKind, request: EventRequest): CardEvent {
  const event = EVENTS[kind];
  if (event === 'RETURN_REVERSAL') return { kind: event };
  return { kind: event, amount: BigInt(request.amount ?? 0) };
}

async function loadCard(tx: Tx, ctx: Ctx, id: string) {
  const card = await store.findCard(tx, ctx.platformId, id);
  if (card === undefined) throw apiError('REFERENCE_NOT_FOUND', `No card ${id}`);
  return card;
}

async function accept(
  tx: Tx,
  ctx: Ctx,
  cardId: string,
  kind: OpeningKind | EventKind,
  request: OpeningRequest | EventRequest,
) {
  const token = randomUUID();
  const now = iso(ctx.now);
  await store.insertSimulation(tx, {
    token,
    platform_id: ctx.platformId,
    card_id: cardId,
    kind,
    request: JSON.stringify(request),
    status: 'PENDING',
    reason: null,
    card_transaction_id: null,
    created_at: now,
    updated_at: now,
  });
  await cardSimulationJob.schedule(tx, {
    platformId: ctx.platformId,
    payload: { token },
    dueAt: ctx.now,
    now: ctx.now,
  });
  return { issuerTransactionToken: token };
}

/**
 * Accepts a simulator that opens a card transaction. Refused at once (400): a card that is
 * not ACTIVE or FROZEN (a frozen card's authorizations are declined later, as the network
 * would), or a currency that is not the card's.
 */
export async function simulateOpening(
  ctx: Ctx,
  cardId: string,
  kind: OpeningKind,
  body: {
    amount?: number;
    currency?: { code?: string | undefined };
    merchant: SandboxCardAuthorizationInput['merchant'];
  },
) {
  return ctx.db.transaction(async (tx) => {
    const card = await loadCard(tx, ctx, cardId);
    const errors = [];
    if (card.state !== 'ACTIVE' && card.state !== 'FROZEN') {
      errors.push({
        field: 'id',
        message: `card ${cardId} is ${card.state}; only an ACTIVE or FROZEN card meets the network`,
      });
    }
    if (body.currency?.code !== undefined && body.currency.code !== card.currency) {
      errors.push({
        field: 'currency.code',
        message: `is ${body.currency.code}; card ${cardId} transacts in ${card.currency}`,
      });
    }
    if (errors.length > 0) throw invalidInput(errors);
    const request: OpeningRequest = { amount: body.amount ?? 0, currency: card.currency, merchant: body.merchant };
    return accept(tx, ctx, card.id, kind, request);
  });
}

/**
 * Accepts a simulator that changes a card transaction: the card exists (404), the
 * transaction is one of the card's (404), and the event can apply to it as it is now (400,
 * naming why); the job checks again when it runs.
 */
export async function simulateEvent(ctx: Ctx, cardId: string, kind: EventKind, body: EventRequest) {
  return ctx.db.transaction(async (tx) => {
    const card = await loadCard(tx, ctx, cardId);
    const row = await findCardTransaction(tx, ctx.platformId, body.cardTransactionId);
    if (row === undefined || cardDetailsOf(row).cardId !== card.id) {
      throw apiError('TRANSACTION_NOT_FOUND', `Card ${cardId} has no transaction ${body.cardTransactionId}`);
    }
    const refusal = cardEventRefusal(row, eventOf(kind, body));
    if (refusal !== undefined) throw invalidInput([refusal]);
    return accept(tx, ctx, card.id, kind, { cardTransactionId: row.id, amount: body.amount });
  });
}

type Outcome =
  | { status: 'APPLIED'; transactionId: string }
  | { status: 'DECLINED' | 'NOT_APPLIED'; reason: string; transactionId?: string };

/** Decisioning and, when approved, the opening of the card transaction. */
async function runOpening(tx: Tx, sim: store.SimulationRow, ctx: JobContext): Promise<Outcome> {
  const kind = sim.kind as OpeningKind;
  const request = JSON.parse(sim.request) as OpeningRequest;
  const { direction, financial } = OPENINGS[kind];
  const card = await store.findCard(tx, sim.platform_id, sim.card_id, true);
  if (card === undefined || (card.state !== 'ACTIVE' && card.state !== 'FROZEN')) {
    return { status: 'DECLINED', reason: 'CARD_NOT_ACTIVE' };
  }
  if (card.state === 'FROZEN') return { status: 'DECLINED', reason: 'CARD_PAUSED' };
  const decision = cardDecisionFor(request.merchant.descriptor);
  if (decision.kind === 'DECLINE') return { status: 'DECLINED', reason: decision.reason };
  const amount = BigInt(request.amount);
  const limit = card.max_spend_per_transaction;
  if (direction === 'DEBIT' && limit !== null && amount > BigInt(limit)) {
    return { status: 'DECLINED', reason: 'EXCEEDS_MAX_SPEND_PER_TRANSACTION' };
  }
  const cardholder = await findCustomerRow(tx, sim.platform_id, card.cardholder_id);
  const pull = decision.pull === 'FAILS' ? 'FAILS' : decision.afterMs > 0 ? 'PENDING' : 'CONFIRMED';
  const opening = await openCardTransaction(
    tx,
    {
      platformId: sim.platform_id,
      cardId: card.id,
      customerId: card.cardholder_id,
      platformCustomerId: cardholder?.platform_customer_id ?? null,
      fundingAccountIds: JSON.parse(card.funding_sources) as string[],
      currency: card.currency,
      amount,
      direction,
      financial,
      merchant: request.merchant,
      issuerTransactionToken: sim.token,
      pull,
    },
    ctx.now,
  );
  if ('declined' in opening) return { status: 'DECLINED', reason: opening.declined };
  if (pull === 'PENDING' && direction === 'DEBIT') {
    await cardPullJob.schedule(tx, {
      platformId: sim.platform_id,
      payload: { transactionId: opening.row.id },
      dueAt: new Date(ctx.now.getTime() + decision.afterMs),
      now: ctx.now,
    });
  }
  return { status: 'APPLIED', transactionId: opening.row.id };
}

async function runEvent(tx: Tx, sim: store.SimulationRow, ctx: JobContext): Promise<Outcome> {
  const request = JSON.parse(sim.request) as EventRequest;
  const event = eventOf(sim.kind as EventKind, request);
  const refusal = await applyCardEvent(tx, sim.platform_id, request.cardTransactionId, event, ctx.now);
  return refusal === undefined
    ? { status: 'APPLIED', transactionId: request.cardTransactionId }
    : { status: 'NOT_APPLIED', reason: refusal, transactionId: request.cardTransactionId };
}

/** Carries out an accepted simulation and records what came of it. */
export const cardSimulationJob = defineJob<{ token: string }>('card.simulation', {
  mode: 'transaction',
  async run(tx, job, ctx) {
    const sim = await store.findSimulation(tx, job.platformId, job.payload.token, true);
    if (sim === undefined || sim.status !== 'PENDING') return;
    const outcome = sim.kind in OPENINGS ? await runOpening(tx, sim, ctx) : await runEvent(tx, sim, ctx);
    await store.endSimulation(tx, sim.token, {
      status: outcome.status,
      reason: outcome.status === 'APPLIED' ? null : outcome.reason,
      card_transaction_id: outcome.transactionId ?? null,
      updated_at: iso(ctx.now),
    });
    if (outcome.status !== 'APPLIED') {
      ctx.log.info(
        { issuerTransactionToken: sim.token, cardId: sim.card_id, simulation: sim.kind, reason: outcome.reason },
        outcome.status === 'DECLINED' ? 'card authorization declined' : 'card event not applied',
      );
    }
  },
});

/** Railyard's record of a simulation: what it asked for and what came of it. */
export async function getSimulation(ctx: Ctx, token: string) {
  const sim = await store.findSimulation(ctx.db.k, ctx.platformId, token);
  if (sim === undefined) throw apiError('REFERENCE_NOT_FOUND', `No card simulation ${token}`);
  return {
    issuerTransactionToken: sim.token,
    cardId: sim.card_id,
    simulation: sim.kind,
    status: sim.status as 'PENDING',
    ...(sim.reason !== null ? { reason: sim.reason } : {}),
    ...(sim.card_transaction_id !== null ? { cardTransactionId: sim.card_transaction_id } : {}),
    createdAt: sim.created_at,
    updatedAt: sim.updated_at,
  };
}
