// Card transactions: what the card network does with a card, as transactions of type CARD in
// the same lifecycle as every other payment (one row, the ledger's named movements, events
// recorded with the change). Which card, which funding sources and whether to decline is the
// cards area's decision; this file moves the money and the status.
//
//   DEBIT   open -----------------> AUTHORIZED (the amount is held on the first funding
//                                   source that covers it; none covers: declined, no row)
//           pull fails -----------> EXCEPTION (the hold is released)
//           clearing < held ------> PARTIALLY_SETTLED (that much settles, the rest stays held)
//           clearing >= held -----> SETTLED (the hold settles; the excess is pulled, and when
//                                   the account cannot cover it: EXCEPTION)
//           clearing 0 -----------> SETTLED (the authorization expires: the hold is released)
//           advice ---------------> status kept, the hold resized to the new total (less what
//                                   settled; down to it: SETTLED); an increase not covered:
//                                   EXCEPTION
//           return ---------------> REFUNDED once every settled amount came back, else kept
//           return reversal ------> SETTLED (the last return is pulled again; not covered:
//                                   EXCEPTION)
//   CREDIT  open -----------------> AUTHORIZED (a pending credit); clearings complete it as
//                                   above, an excess is credited, clearing 0 drops it
//   A financial (single-message) authorization opens and clears at once: SETTLED.
//
// EXCEPTION is terminal: whatever the authorization still holds goes back when it is reached.
// pullSummary counts the pulls made; its total is what they took, less what was given back.
// Every change records CARD_TRANSACTION.<status after it>, including a change that keeps the
// status (a partial return, a confirmed pull): each network event the platform should hear of.

import { iso } from '../../clock.js';
import type { Queryable, Tx } from '../../db/index.js';
import { newId } from '../../ids.js';
import { defineJob } from '../../jobs/queue.js';
import { BalanceLimitExceeded, InsufficientFunds } from '../../ledger/index.js';
import { finish, newRow, next, openWork, type Work } from './lifecycle.js';
import { type CardDetails, cardDetailsOf, presentCardTransaction } from './presentation.js';
import type { CardTransactionStatus } from './schemas.js';
import * as store from './store.js';

export interface NewCardTransaction {
  platformId: string;
  cardId: string;
  customerId: string;
  platformCustomerId: string | null;
  /** The card's funding sources in priority order: the first that covers a debit funds it. */
  fundingAccountIds: string[];
  currency: string;
  amount: bigint;
  direction: 'DEBIT' | 'CREDIT';
  /** A single-message authorization: cleared in the same message. */
  financial: boolean;
  merchant: CardDetails['merchant'];
  issuerTransactionToken: string;
  /** What becomes of the pull on the funding source: confirmed now, confirmed later (pending until then), or failed. */
  pull: 'CONFIRMED' | 'PENDING' | 'FAILS';
}

export type CardOpening = { declined: 'INSUFFICIENT_FUNDS' | 'BALANCE_LIMIT_EXCEEDED' } | { row: store.TransactionRow };

function emitCard(work: Work, row: store.TransactionRow): void {
  const view = presentCardTransaction(row);
  work.events.push({
    platformId: row.platform_id,
    type: `CARD_TRANSACTION.${row.status}`,
    resourceId: row.id,
    data: view,
    now: work.now,
  });
}

/** The row with new card figures and status, stamped now (its last event). */
function change(
  work: Work,
  row: store.TransactionRow,
  card: CardDetails,
  status: CardTransactionStatus,
  amount?: bigint,
): store.TransactionRow {
  const at = iso(work.now);
  const details = { ...(JSON.parse(row.details) as Record<string, unknown>), card: { ...card, lastEventAt: at } };
  return {
    ...next(work, row, { status, details: JSON.stringify(details) }),
    ...(amount !== undefined ? { amount: amount.toString() } : {}),
  };
}

/**
 * The funding source a debit of `amount` is taken from: the first, in the card's order, whose
 * available balance covers it. Every source is read under its lock, taken in id order (as a
 * flush takes them), so two cards with the same sources in another order never deadlock.
 */
async function coveringAccount(
  work: Work,
  ids: string[],
  currency: string,
  amount: bigint,
): Promise<string | undefined> {
  const available = new Map<string, bigint>();
  for (const id of [...ids].sort()) available.set(id, (await work.books.lockedBalanceOf(id, currency)).available);
  return ids.find((id) => available.get(id)! >= amount);
}

/** Whether the funding account can give `amount` more now (read under its lock). */
async function covers(work: Work, row: store.TransactionRow, amount: bigint): Promise<boolean> {
  return (await work.books.lockedBalanceOf(row.internal_account_id, row.currency)).available >= amount;
}

/** Takes `amount` from the funding account straight out (a pull past the hold): held and settled at once. */
async function pull(work: Work, row: store.TransactionRow, amount: bigint): Promise<void> {
  await work.books.hold(row.internal_account_id, row.currency, amount, row.id);
  await work.books.settle(row.internal_account_id, row.currency, amount, row.id);
}

/**
 * Credits `amount` to the funding account straight in (a credit cleared past its pending
 * amount); false, with nothing posted, when that would pass the balance maximum.
 */
async function credited(work: Work, row: store.TransactionRow, amount: bigint): Promise<boolean> {
  try {
    await work.books.acceptIncoming(row.internal_account_id, row.currency, amount, row.id);
  } catch (err) {
    if (err instanceof BalanceLimitExceeded) return false;
    throw err;
  }
  await work.books.completeIncoming(row.internal_account_id, row.currency, amount, row.id);
  return true;
}

/**
 * Opens a card transaction in the caller's transaction: chooses the funding account, holds
 * (or credits as pending) the amount, clears it at once for a financial authorization, and
 * records the events. A debit no funding source covers, or a credit past the balance
 * maximum, is declined: nothing is written.
 */
export async function openCardTransaction(tx: Tx, input: NewCardTransaction, now: Date): Promise<CardOpening> {
  const id = newId('CardTransaction');
  const work = openWork(tx, input.platformId, now);
  const { amount, currency } = input;
  const debit = input.direction === 'DEBIT';
  const fails = input.pull === 'FAILS';
  let accountId: string | undefined = input.fundingAccountIds[0];
  if (debit && amount > 0n) accountId = await coveringAccount(work, input.fundingAccountIds, currency, amount);
  if (accountId === undefined) return { declined: 'INSUFFICIENT_FUNDS' };
  // The amount is held (a credit: pending), except by a single-message authorization whose
  // pull fails: that one never takes anything.
  const holds = amount > 0n && !(input.financial && fails);
  try {
    if (holds && debit) await work.books.hold(accountId, currency, amount, id);
    else if (holds) await work.books.acceptIncoming(accountId, currency, amount, id);
  } catch (err) {
    if (err instanceof InsufficientFunds) return { declined: 'INSUFFICIENT_FUNDS' };
    if (err instanceof BalanceLimitExceeded) return { declined: 'BALANCE_LIMIT_EXCEEDED' };
    throw err;
  }
  const at = iso(now);
  const pulled = debit && holds;
  const card: CardDetails = {
    cardId: input.cardId,
    issuerTransactionToken: input.issuerTransactionToken,
    direction: input.direction,
    merchant: input.merchant,
    held: holds ? amount.toString() : '0',
    settled: '0',
    settlements: 0,
    refunded: '0',
    returns: [],
    refundTotal: '0',
    refunds: 0,
    pulled: pulled ? amount.toString() : '0',
    pulls: pulled ? 1 : 0,
    pendingPulls: pulled && input.pull === 'PENDING' ? 1 : 0,
    authorizedAt: at,
    lastEventAt: at,
  };
  let row = newRow(
    {
      id,
      platform_id: input.platformId,
      type: 'CARD',
      status: 'AUTHORIZED',
      customer_id: input.customerId,
      platform_customer_id: input.platformCustomerId,
      internal_account_id: accountId,
      // The card stands where a transfer has its external account (the filters read these columns).
      external_account_id: input.cardId,
      source_account_id: debit ? accountId : input.cardId,
      destination_account_id: debit ? input.cardId : accountId,
      currency,
      amount: amount.toString(),
      payment_rail: null,
      rail_selection_mode: null,
      details: JSON.stringify({ card }),
    },
    now,
  );
  if (fails) {
    if (!input.financial) {
      // Approved and held; then the funding source reports the pull failed and the hold goes back.
      emitCard(work, row);
      if (holds && debit) await work.books.release(accountId, currency, amount, id);
      else if (holds) await work.books.failIncoming(accountId, currency, amount, id);
    }
    // A single-message authorization has settled with the network all the same.
    const settled = input.financial ? amount : 0n;
    const failed = { ...card, held: '0', pulled: '0', pulls: 0, settled: settled.toString() };
    row = change(work, row, { ...failed, settlements: input.financial ? 1 : 0 }, 'EXCEPTION');
  } else if (input.financial) {
    // Cleared in the same message: the hold (or pending credit) settles at once.
    if (holds && debit) await work.books.settle(accountId, currency, amount, id);
    else if (holds) await work.books.completeIncoming(accountId, currency, amount, id);
    row = change(work, row, { ...card, held: '0', settled: amount.toString(), settlements: 1 }, 'SETTLED');
  }
  emitCard(work, row);
  await store.insertTransaction(tx, row);
  await finish(work);
  return { row };
}

// ----------------------------------------------------------------------------- network events

export type CardEvent =
  | { kind: 'CLEARING'; amount: bigint }
  | { kind: 'RETURN'; amount: bigint }
  | { kind: 'RETURN_REVERSAL' }
  | { kind: 'ADVICE'; amount: bigint }
  | { kind: 'PULL_CONFIRMED' };

const OPEN: readonly string[] = ['AUTHORIZED', 'PARTIALLY_SETTLED'];

export interface CardEventRefusal {
  /** The request field the refusal is about. */
  field: 'cardTransactionId' | 'amount';
  message: string;
}

/** Why `event` cannot apply to the transaction as it is; undefined when it can. */
export function cardEventRefusal(row: store.TransactionRow, event: CardEvent): CardEventRefusal | undefined {
  const card = cardDetailsOf(row);
  const refuse = (message: string, field: CardEventRefusal['field'] = 'cardTransactionId') => ({ field, message });
  switch (event.kind) {
    case 'CLEARING':
      return OPEN.includes(row.status)
        ? undefined
        : refuse(`is ${row.status}; a clearing needs AUTHORIZED or PARTIALLY_SETTLED`);
    case 'ADVICE': {
      if (!OPEN.includes(row.status))
        return refuse(`is ${row.status}; an advice needs AUTHORIZED or PARTIALLY_SETTLED`);
      const settled = BigInt(card.settled);
      return event.amount < settled
        ? refuse(`is less than the ${settled} already settled on ${row.id}`, 'amount')
        : undefined;
    }
    case 'RETURN': {
      if (card.direction !== 'DEBIT') return refuse('is a credit; only debits can be returned');
      if (row.status !== 'SETTLED' && row.status !== 'PARTIALLY_SETTLED')
        return refuse(`is ${row.status}; a return needs a SETTLED or PARTIALLY_SETTLED transaction`);
      const open = BigInt(card.settled) - BigInt(card.refunded);
      return event.amount > open
        ? refuse(`is more than the ${open} settled and not yet returned on ${row.id}`, 'amount')
        : undefined;
    }
    case 'RETURN_REVERSAL':
      return row.status === 'REFUNDED' && card.returns.length > 0
        ? undefined
        : refuse(`is ${row.status}; a return reversal needs a REFUNDED transaction`);
    case 'PULL_CONFIRMED':
      return card.pendingPulls > 0 ? undefined : refuse('has no pull pending');
  }
}

/** Gives back `amount` of what the open authorization holds: a debit's hold is released, a credit's pending amount dropped. */
async function giveBack(
  work: Work,
  row: store.TransactionRow,
  card: CardDetails,
  amount: bigint,
): Promise<CardDetails> {
  if (amount === 0n) return card;
  const debit = card.direction === 'DEBIT';
  if (debit) await work.books.release(row.internal_account_id, row.currency, amount, row.id);
  else await work.books.failIncoming(row.internal_account_id, row.currency, amount, row.id);
  const pulled = debit ? (BigInt(card.pulled) - amount).toString() : card.pulled;
  return { ...card, held: (BigInt(card.held) - amount).toString(), pulled };
}

/**
 * The network went on without the money following (a pull, a credit or a hold that could
 * not be made): EXCEPTION, a terminal state, so whatever is still held goes back now.
 */
async function exception(
  work: Work,
  row: store.TransactionRow,
  card: CardDetails,
  amount?: bigint,
): Promise<store.TransactionRow> {
  return change(work, row, await giveBack(work, row, card, BigInt(card.held)), 'EXCEPTION', amount);
}

/** The change an event makes: the new row, after posting its movements. */
async function applyEvent(work: Work, row: store.TransactionRow, event: CardEvent): Promise<store.TransactionRow> {
  const card = cardDetailsOf(row);
  const debit = card.direction === 'DEBIT';
  const books = work.books;
  const account = row.internal_account_id;
  const held = BigInt(card.held);
  const settled = BigInt(card.settled);
  const kept = row.status as CardTransactionStatus;
  switch (event.kind) {
    case 'PULL_CONFIRMED':
      return change(work, row, { ...card, pendingPulls: card.pendingPulls - 1 }, kept);
    case 'CLEARING': {
      // 0: the authorization expired; nothing more will clear and what it held goes back.
      if (event.amount === 0n) return change(work, row, await giveBack(work, row, card, held), 'SETTLED');
      const part = event.amount < held ? event.amount : held;
      const excess = event.amount - part;
      if (part > 0n) {
        if (debit) await books.settle(account, row.currency, part, row.id);
        else await books.completeIncoming(account, row.currency, part, row.id);
      }
      let after: CardDetails = {
        ...card,
        held: (held - part).toString(),
        settled: (settled + event.amount).toString(),
        settlements: card.settlements + 1,
      };
      if (excess > 0n) {
        // The network settled more than was held: the rest is pulled (a debit) or credited.
        if (debit && !(await covers(work, row, excess))) return exception(work, row, after);
        if (debit) {
          await pull(work, row, excess);
          after = { ...after, pulls: card.pulls + 1, pulled: (BigInt(card.pulled) + excess).toString() };
        } else if (!(await credited(work, row, excess))) {
          return exception(work, row, after);
        }
      }
      return change(work, row, after, held - part > 0n ? 'PARTIALLY_SETTLED' : 'SETTLED');
    }
    case 'ADVICE': {
      const wanted = event.amount - settled;
      // Resized down to what settled already: nothing more will clear.
      const status: CardTransactionStatus = wanted === 0n && settled > 0n ? 'SETTLED' : kept;
      if (wanted <= held)
        return change(work, row, await giveBack(work, row, card, held - wanted), status, event.amount);
      const more = wanted - held;
      if (debit) {
        if (!(await covers(work, row, more))) return exception(work, row, card, event.amount);
        await books.hold(account, row.currency, more, row.id);
        const pulled = (BigInt(card.pulled) + more).toString();
        const after = { ...card, held: wanted.toString(), pulls: card.pulls + 1, pulled };
        return change(work, row, after, status, event.amount);
      }
      try {
        await books.acceptIncoming(account, row.currency, more, row.id);
      } catch (err) {
        if (!(err instanceof BalanceLimitExceeded)) throw err;
        return exception(work, row, card, event.amount);
      }
      return change(work, row, { ...card, held: wanted.toString() }, status, event.amount);
    }
    case 'RETURN': {
      try {
        await books.reverseSettlement(account, row.currency, event.amount, row.id);
      } catch (err) {
        // The account cannot take the money back (past the balance maximum).
        if (!(err instanceof BalanceLimitExceeded)) throw err;
        return exception(work, row, card);
      }
      const refunded = BigInt(card.refunded) + event.amount;
      const after: CardDetails = {
        ...card,
        refunded: refunded.toString(),
        returns: [...card.returns, event.amount.toString()],
        refundTotal: (BigInt(card.refundTotal) + event.amount).toString(),
        refunds: card.refunds + 1,
      };
      return change(work, row, after, held === 0n && refunded === settled ? 'REFUNDED' : kept);
    }
    case 'RETURN_REVERSAL': {
      const last = BigInt(card.returns[card.returns.length - 1]!);
      const after: CardDetails = {
        ...card,
        refunded: (BigInt(card.refunded) - last).toString(),
        returns: card.returns.slice(0, -1),
      };
      if (!(await covers(work, row, last))) return exception(work, row, after);
      await pull(work, row, last);
      const pulled = (BigInt(card.pulled) + last).toString();
      return change(work, row, { ...after, pulls: card.pulls + 1, pulled }, 'SETTLED');
    }
  }
}

/** A card transaction of the platform, under its row lock (PostgreSQL); undefined when there is none. */
export async function lockCardTransaction(
  tx: Queryable,
  platformId: string,
  id: string,
): Promise<store.TransactionRow | undefined> {
  const row = await store.lockTransaction(tx, platformId, id);
  return row?.type === 'CARD' ? row : undefined;
}

/** A card transaction of the platform (no lock); undefined when there is none. */
export async function findCardTransaction(
  q: Queryable,
  platformId: string,
  id: string,
): Promise<store.TransactionRow | undefined> {
  const row = await store.findTransaction(q, platformId, id);
  return row?.type === 'CARD' ? row : undefined;
}

/**
 * Applies a network event to a card transaction in the caller's transaction. Answers why it
 * could not apply (the transaction changed since the event was accepted), else undefined.
 */
export async function applyCardEvent(
  tx: Tx,
  platformId: string,
  transactionId: string,
  event: CardEvent,
  now: Date,
): Promise<string | undefined> {
  const row = await lockCardTransaction(tx, platformId, transactionId);
  if (row === undefined) return `card transaction ${transactionId} does not exist`;
  const refusal = cardEventRefusal(row, event);
  if (refusal !== undefined) return `${refusal.field} ${refusal.message}`;
  const work = openWork(tx, platformId, now);
  const after = await applyEvent(work, row, event);
  emitCard(work, after);
  await store.saveState(tx, after);
  await finish(work);
  return undefined;
}

/** A pull that confirms later (the decisioning's delayed pull): confirmed when the platform's clock reaches it. */
export const cardPullJob = defineJob<{ transactionId: string }>('card.pull', {
  mode: 'transaction',
  async run(tx, job, ctx) {
    const refusal = await applyCardEvent(
      tx,
      job.platformId,
      job.payload.transactionId,
      { kind: 'PULL_CONFIRMED' },
      ctx.now,
    );
    if (refusal !== undefined)
      ctx.log.warn({ transactionId: job.payload.transactionId }, `card pull not confirmed: ${refusal}`);
  },
});
