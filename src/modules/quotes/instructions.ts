// What a quote tells its payer to do: the payment instructions it carries. A real-time-funded
// quote, and one funded by a push from an external bank account, show the coordinates to pay
// (POST /sandbox/send simulates that payment); one from an embedded wallet shows the payload
// its holder signs. A quote from any other internal account needs none.

import type { Queryable } from '../../db/index.js';
import type { Ctx } from '../../http/context.js';
import type { Conversion } from '../../rates/index.js';
import { fundingInfo, type InternalAccountView } from '../internal-accounts/service.js';
import { quotePayloadToSign } from '../wallet-auth/actions.js';
import { parseJson } from './planning.js';
import type * as store from './store.js';

/** The amount a payer must send, in words. */
function amountText(conversion: Conversion): string {
  return `${conversion.totalSending} (smallest unit of ${conversion.sendingCurrency})`;
}

export function realtimeInstructions(quoteId: string, conversion: Conversion, cryptoNetwork: string | undefined) {
  const info = fundingInfo(quoteId, conversion.sendingCurrency, {
    network: cryptoNetwork,
    amount: conversion.totalSending,
  });
  return [
    {
      instructionsNotes: `Sandbox coordinates: pay exactly ${amountText(conversion)} before the quote expires${'reference' in info ? `, quoting ${String(info.reference)}` : ''}; in the sandbox, POST /sandbox/send with this quote's id does it.`,
      isPlatformAccount: true,
      accountOrWalletInfo: info,
    },
  ];
}

/**
 * A quote funded from an external bank account: where the customer sends the money from that
 * account (a wire or a bank transfer of their own), the way the hosted sandbox has it. The
 * sandbox's POST /sandbox/send stands for that transfer; POST /quotes/{quoteId}/execute may
 * still pull the funds instead, except in strict mode.
 */
export function pushInstructions(quoteId: string, conversion: Conversion, sourceAccountId: string) {
  const info = fundingInfo(quoteId, conversion.sendingCurrency, { amount: conversion.totalSending });
  return [
    {
      instructionsNotes: `Sandbox coordinates: send exactly ${amountText(conversion)} from ${sourceAccountId} before the quote expires${'reference' in info ? `, quoting ${String(info.reference)}` : ''}; in the sandbox, POST /sandbox/send with this quote's id stands for that transfer.`,
      isPlatformAccount: true,
      accountOrWalletInfo: info,
    },
  ];
}

/** A payment from an embedded wallet: the payload its holder signs to release it (POST /quotes/{id}/execute). */
export async function walletInstructions(
  tx: Queryable,
  ctx: Ctx,
  quoteId: string,
  wallet: InternalAccountView,
  conversion: Conversion,
) {
  const payloadToSign = await quotePayloadToSign(ctx, tx, {
    id: quoteId,
    sourceAccountId: wallet.id,
    totalSendingAmount: conversion.totalSending,
    currency: conversion.sendingCurrency,
  });
  return [
    {
      instructionsNotes:
        'Stamp payloadToSign, exactly as given, with the key of a live session of the source wallet, and send the stamp as Grid-Wallet-Signature on POST /quotes/{quoteId}/execute.',
      isPlatformAccount: false,
      accountOrWalletInfo: { accountType: 'EMBEDDED_WALLET', payloadToSign },
    },
  ];
}

/** The source wallet and payload to sign of a quote paid from an embedded wallet; undefined for any other quote. */
export function walletSigning(quote: store.QuoteRow): { accountId: string; payloadToSign: string } | undefined {
  const instructions = parseJson<{ accountOrWalletInfo?: { accountType?: string; payloadToSign?: string } }[]>(
    quote.payment_instructions,
  );
  const wallet = instructions?.find((i) => i.accountOrWalletInfo?.accountType === 'EMBEDDED_WALLET');
  if (wallet === undefined) return undefined;
  const source = JSON.parse(quote.source) as { accountId: string };
  return { accountId: source.accountId, payloadToSign: wallet.accountOrWalletInfo!.payloadToSign! };
}
