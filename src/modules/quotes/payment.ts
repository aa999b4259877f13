// A quote's payment as it starts: the accounts checked again, then the transaction's payment
// (modules/transactions) with the rail's timeline, or, for a customer in an SCA region paying
// an untrusted payee, the wait for Strong Customer Authentication first. Execute, an agent's
// execute, authorization and POST /sandbox/send (service.ts) all start a payment here.

import { randomBytes } from 'node:crypto';
import { iso } from '../../clock.js';
import type { Tx } from '../../db/index.js';
import type { Ctx } from '../../http/context.js';
import { railFor, settlementFor } from '../../rails/index.js';
import { type CustomerRow, findCustomerRow } from '../customers/lookup.js';
import { type InternalAccountView, ledgerRefusal } from '../internal-accounts/service.js';
import { inScaRegion } from '../sca/region.js';
import { assertionOptions, challengeFactors, isTrustedBeneficiary } from '../sca/service.js';
import {
  executeQuoteTransaction,
  moveQuoteAuthorization,
  type Conversion as TransactionConversion,
  type TransactionRow,
} from '../transactions/service.js';
import { invalid, newChallenge, requirePullFunds, usableExternal, usableInternal } from './planning.js';
import * as store from './store.js';

/** A payment of this customer waits for SCA: the customer is in an SCA region and the payee is not a trusted beneficiary. */
export async function needsAuthorization(
  tx: Tx,
  ctx: Ctx,
  customer: CustomerRow | undefined,
  destinationId: string,
): Promise<boolean> {
  if (!inScaRegion(customer)) return false;
  return !(await isTrustedBeneficiary(tx, ctx.platformId, customer!.id, destinationId));
}

/**
 * Executes an account-funded quote, unless it needs authorization (needsAuthorization): then the
 * payment waits in PENDING_AUTHORIZATION with a challenge, and authorizing it executes it.
 */
export async function executeOrChallenge(
  tx: Tx,
  ctx: Ctx,
  quote: store.QuoteRow,
  transaction: TransactionRow,
  options: Pick<ExecuteOptions, 'checked' | 'fundsAccount' | 'conversion'> & { scaFactor?: string | undefined } = {},
): Promise<store.QuoteRow> {
  const customer =
    quote.customer_id === null ? undefined : await findCustomerRow(tx, ctx.platformId, quote.customer_id);
  if (!(await needsAuthorization(tx, ctx, customer, transaction.destination_account_id))) {
    return (await execute(tx, ctx, quote, transaction, options)).quote;
  }
  let passkeyChallenge: { challenge: string; options: Record<string, unknown> } | undefined;
  if (options.scaFactor === 'PASSKEY') {
    const { passkey } = await challengeFactors(tx, ctx, customer!.id, false);
    if (passkey === undefined) {
      throw invalid('scaFactor', `cannot be PASSKEY: customer ${customer!.id} has no passkey enrolled`);
    }
    const challenge = randomBytes(32).toString('hex');
    passkeyChallenge = { challenge, options: assertionOptions(passkey, challenge) };
  }
  // A payment that could not start is refused now, not after the customer answers the challenge.
  if (options.checked !== true)
    await requirePayable(tx, ctx, transaction, JSON.parse(transaction.conversion!) as TransactionConversion);
  const after = await moveQuoteAuthorization(tx, transaction, ctx.now, 'PENDING_AUTHORIZATION');
  const challenged = {
    ...quote,
    status: after.status,
    sca_challenge: JSON.stringify(newChallenge(quote.expires_at, ctx.now, passkeyChallenge)),
    updated_at: iso(ctx.now),
  };
  await store.saveQuoteState(tx, challenged);
  return challenged;
}

/**
 * The accounts of a quote, checked again when its payment starts: either side may have been
 * deleted, frozen or lost its verification since the quote was made, and money must not move
 * from or to it then. A pull also needs funds at the bank (money `pushed` from the account has
 * arrived already). Answers the source internal account as read (with its balances), for a
 * quote funded from one.
 */
async function requirePayable(
  tx: Tx,
  ctx: Ctx,
  transaction: TransactionRow,
  conversion: TransactionConversion,
  pushed = false,
): Promise<InternalAccountView | undefined> {
  const gone = (id: string) => `names ${id}, which no longer exists`;
  let fundsAccount: InternalAccountView | undefined;
  if (conversion.funding === 'INTERNAL_ACCOUNT') {
    fundsAccount = await usableInternal(
      tx,
      ctx,
      transaction.internal_account_id,
      'source.accountId',
      gone(transaction.internal_account_id),
    );
  } else if (conversion.funding === 'EXTERNAL_ACCOUNT') {
    const source = await usableExternal(
      tx,
      ctx,
      transaction.source_account_id,
      'source.accountId',
      gone(transaction.source_account_id),
      true,
    );
    if (!pushed) requirePullFunds(source);
  }
  const { payout } = conversion;
  if (payout.destinationType === 'ACCOUNT') {
    await usableExternal(
      tx,
      ctx,
      transaction.destination_account_id,
      'destination.accountId',
      gone(transaction.destination_account_id),
      true,
    );
  } else if (payout.destinationType === 'INTERNAL_ACCOUNT') {
    await usableInternal(tx, ctx, payout.accountId, 'destination.accountId', gone(payout.accountId));
  }
  return fundsAccount;
}

export interface ExecuteOptions {
  /** Real-time funding, or a push from the source external account: the amount that arrived. */
  paidAmount?: bigint | undefined;
  /** The funds were pushed from the source external account (POST /sandbox/send), not pulled. */
  pushed?: boolean;
  /** The payment waited in PENDING_AUTHORIZATION for a challenge now satisfied. */
  authorized?: boolean;
  /** The quote was made in this very transaction (immediatelyExecute), its accounts checked and locked then. */
  checked?: boolean;
  /** With `checked`: the source internal account as read then (with its balances). */
  fundsAccount?: InternalAccountView | undefined;
  /** With `checked`: the transaction's conversion as written then (not parsed back from its row). */
  conversion?: TransactionConversion;
}

/**
 * Starts the payment of a PENDING quote whose transaction row the caller holds locked (or of
 * one awaiting authorization, once `authorized`), after checking its accounts again.
 */
export async function execute(
  tx: Tx,
  ctx: Ctx,
  quote: store.QuoteRow,
  transaction: TransactionRow,
  options: ExecuteOptions = {},
) {
  const conversion = options.conversion ?? (JSON.parse(transaction.conversion!) as TransactionConversion);
  const fundsAccount =
    options.checked !== true
      ? await requirePayable(tx, ctx, transaction, conversion, options.pushed === true)
      : options.fundsAccount;
  const { payout } = conversion;
  try {
    const timeline = railFor(payout).planPayout(payout, settlementFor(ctx.settings, transaction.payment_rail));
    const after = await executeQuoteTransaction(tx, transaction, ctx.now, timeline, {
      paidAmount: options.paidAmount,
      authorized: options.authorized === true,
      conversion,
      fundsAccount,
    });
    return { quote: { ...quote, status: after.status }, transaction: after };
  } catch (err) {
    throw ledgerRefusal(err, 'lockedCurrencyAmount');
  }
}

/** A quote may be executed or funded only while PENDING and before it expires. */
export function checkExecutable(quote: store.QuoteRow, now: Date, conflict: (message: string) => Error): void {
  if (quote.status === 'EXPIRED' || (quote.status === 'PENDING' && iso(now) >= quote.expires_at)) {
    throw conflict(`Quote ${quote.id} expired at ${quote.expires_at}; create a new quote`);
  }
  if (quote.status === 'PENDING_AUTHORIZATION')
    throw conflict(
      `Quote ${quote.id} awaits Strong Customer Authentication: authorize it first (POST /quotes/${quote.id}/authorize)`,
    );
  if (quote.status === 'FAILED') throw conflict(`Quote ${quote.id} failed and cannot be executed; create a new quote`);
  if (quote.status !== 'PENDING') throw conflict(`Quote ${quote.id} was already executed (it is ${quote.status})`);
}

/** How the money of a quote's payment comes in: from an internal account, an external one, or in real time. */
export function fundingOf(transaction: TransactionRow): TransactionConversion['funding'] {
  return (JSON.parse(transaction.conversion!) as TransactionConversion).funding;
}
