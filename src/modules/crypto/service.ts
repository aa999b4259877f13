// Withdrawal fee estimates for crypto internal accounts, from a fixed sandbox table: the
// same request always gives the same answer. networkFee is the on-chain cost in the smallest
// unit of the network's own asset (lamports, wei, satoshis, sun); totalFee is that cost in
// the withdrawn currency's smallest unit, at fixed sandbox prices (SOL 150 USD, ETH 3000 USD,
// POL 0.50 USD, TRX 0.12 USD), already rounded up to a whole unit. railyard charges no
// application fee, so applicationFee is 0 and netAmount = amount - totalFee.
//
// Checks, in order: the body (400, all fields at once: INVALID_CURRENCY when only the
// currency is wrong, INVALID_INPUT otherwise), the account (404 REFERENCE_NOT_FOUND), the
// account against the body (400), the amount against the fee (400 AMOUNT_OUT_OF_RANGE).

import { currencyInfo } from '../../currencies.js';
import type { Ctx } from '../../http/context.js';
import { apiError, FieldErrors } from '../../http/errors.js';
import { ownEntry } from '../../json.js';
import {
  checkEvmAddress,
  checkSolanaAddress,
  checkSparkAddress,
  checkTronAddress,
} from '../external-accounts/formats.js';
import { findInternalAccount } from '../internal-accounts/service.js';

interface NetworkFee {
  networkFee: number;
  networkFeeAsset: string;
  /** networkFee in the smallest unit of the withdrawn currency. */
  totalFee: number;
}

type AddressCheck = (address: string) => string | null;

function checkBitcoinAddress(address: string): string | null {
  // Sandbox bitcoin is regtest: bech32 addresses with the bcrt1 prefix (testnet tb1 accepted too).
  return /^(bcrt1|tb1)[qpzry9x8gf2tvdw0s3jn54khce6mua7l]{20,90}$/.test(address)
    ? null
    : 'must be a regtest or testnet bech32 address (bcrt1…, tb1…)';
}

const ETHEREUM: NetworkFee = { networkFee: 420_000_000_000_000, networkFeeAsset: 'ETH', totalFee: 1_260_000 };
const SOLANA: NetworkFee = { networkFee: 5_000, networkFeeAsset: 'SOL', totalFee: 750 };

/**
 * How a network's destination address is checked: `always` where the sandbox docs say an
 * invalid address is refused (Spark), `strict` (strict identifiers only) for the encodings
 * the reference does not state.
 */
type Destination = { always: AddressCheck } | { strict: AddressCheck };

/** Per currency, the networks it can be withdrawn on, with their fee and address check. */
export const WITHDRAWAL_FEES: Record<string, Record<string, NetworkFee & { address: Destination }>> = {
  USDC: {
    SOLANA: { ...SOLANA, address: { strict: checkSolanaAddress } },
    ETHEREUM: { ...ETHEREUM, address: { strict: checkEvmAddress } },
    BASE: {
      networkFee: 2_000_000_000_000,
      networkFeeAsset: 'ETH',
      totalFee: 6_000,
      address: { strict: checkEvmAddress },
    },
    POLYGON: {
      networkFee: 4_000_000_000_000_000,
      networkFeeAsset: 'POL',
      totalFee: 2_000,
      address: { strict: checkEvmAddress },
    },
  },
  USDT: {
    TRON: { networkFee: 1_000_000, networkFeeAsset: 'TRX', totalFee: 120_000, address: { strict: checkTronAddress } },
    ETHEREUM: { ...ETHEREUM, address: { strict: checkEvmAddress } },
    SOLANA: { ...SOLANA, address: { strict: checkSolanaAddress } },
  },
  BTC: {
    BITCOIN: { networkFee: 1_410, networkFeeAsset: 'BTC', totalFee: 1_410, address: { strict: checkBitcoinAddress } },
    SPARK: { networkFee: 0, networkFeeAsset: 'BTC', totalFee: 0, address: { always: checkSparkAddress } },
  },
  USDB: {
    SPARK: { networkFee: 0, networkFeeAsset: 'BTC', totalFee: 0, address: { always: checkSparkAddress } },
  },
};

export interface EstimateInput {
  internalAccountId: string;
  currency: string;
  cryptoNetwork: string;
  amount: number;
  destinationAddress: string;
}

export async function estimateCryptoWithdrawalFee(ctx: Ctx, body: EstimateInput) {
  const errors = new FieldErrors();
  // note: own keys only; request text such as "constructor" must not find Object's members.
  const networks = ownEntry(WITHDRAWAL_FEES, body.currency);
  let currencyWrong = false;
  if (networks === undefined) {
    currencyWrong = true;
    const known = currencyInfo(body.currency);
    errors.add(
      'currency',
      known === undefined
        ? `is not a currency railyard knows: ${body.currency}`
        : `${body.currency} is not withdrawn on chain`,
      {
        enum: Object.keys(WITHDRAWAL_FEES),
      },
    );
  }
  const fee = networks === undefined ? undefined : ownEntry(networks, body.cryptoNetwork);
  if (networks !== undefined && fee === undefined) {
    errors.add('cryptoNetwork', `is not a network ${body.currency} can be withdrawn on`, {
      enum: Object.keys(networks),
    });
  }
  if (fee !== undefined) {
    const destination = fee.address;
    const strictOnly = 'strict' in destination;
    const check = strictOnly
      ? ctx.settings.strictIdentifiers === true
        ? destination.strict
        : undefined
      : destination.always;
    const problem = check?.(body.destinationAddress) ?? null;
    if (problem !== null)
      errors.add(
        'destinationAddress',
        `${problem} on ${body.cryptoNetwork}${strictOnly ? ' (strict identifiers)' : ''}`,
      );
  }
  if (body.amount <= 0) errors.add('amount', 'must be a positive amount in the smallest unit of the currency');
  if (!errors.empty) {
    if (currencyWrong && errors.errors.length === 1)
      throw apiError('INVALID_CURRENCY', `currency ${errors.errors[0]!.message}`, { errors: errors.errors });
    errors.throwIfAny();
  }

  const account = await findInternalAccount(ctx.db.k, ctx.platformId, body.internalAccountId);
  if (account === undefined)
    throw apiError('REFERENCE_NOT_FOUND', `No internal account ${body.internalAccountId}`, {
      field: 'internalAccountId',
    });
  if (account.type === 'INTERNAL_FIAT') {
    throw apiError('INVALID_INPUT', `Internal account ${account.id} holds ${account.currency}, a fiat currency`, {
      errors: [{ field: 'internalAccountId', message: 'is not a crypto internal account' }],
    });
  }
  if (account.currency !== body.currency) {
    throw apiError(
      'INVALID_CURRENCY',
      `Internal account ${account.id} holds ${account.currency}, not ${body.currency}`,
      {
        errors: [{ field: 'currency', message: `must be ${account.currency}, the currency of the account` }],
      },
    );
  }
  const { networkFee, networkFeeAsset, totalFee } = fee!;
  if (body.amount <= totalFee) {
    throw apiError('AMOUNT_OUT_OF_RANGE', `The withdrawal must be larger than its fee of ${totalFee}`, {
      minAmount: totalFee + 1,
      errors: [{ field: 'amount', message: `must be more than the fee of ${totalFee}` }],
    });
  }
  return { networkFee, networkFeeAsset, applicationFee: 0, totalFee, netAmount: body.amount - totalFee };
}
