// The wallet actions a live session signs besides logins: the wallet's privacy setting, the
// export of its secret, and delegated card keys; and the check of the signature that
// releases a payment from the wallet (POST /quotes/{id}/execute).

import { createHash, createHmac } from 'node:crypto';
import { entropyToMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { iso } from '../../clock.js';
import { normalizePoint } from '../../crypto/p256.js';
import { sealExport } from '../../crypto/wallet-envelopes.js';
import type { Queryable } from '../../db/index.js';
import type { Ctx } from '../../http/context.js';
import { apiError } from '../../http/errors.js';
import { findInternalAccount, presentInternalAccount, setWalletPrivacy } from '../internal-accounts/service.js';
import {
  activityPayload,
  checkRetry,
  checkStamp,
  consumeChallenge,
  isRetry,
  issueChallenge,
  type SignedHeaders,
  walletOrg,
} from './signing.js';
import * as store from './store.js';
import { ACCOUNT_ID, invalid, walletAccount } from './wallet.js';

/** A stand-in address of the wallet on the Spark network (stable per account). */
function walletAddress(accountId: string): string {
  return `sp1q${createHash('sha256').update(accountId).digest('hex').slice(0, 40)}`;
}

// ------------------------------------------------------------------------------- privacy

export async function updateWallet(
  ctx: Ctx,
  id: string,
  body: { privateEnabled?: boolean | undefined },
  headers: SignedHeaders,
) {
  const account = await walletAccount(ctx, ctx.db.k, id, 'id');
  if (body.privateEnabled === undefined)
    throw invalid('privateEnabled', 'is required: the request changes nothing without it');
  const expected = { operation: 'updateInternalAccount', target: account.id, body };
  if (!isRetry(headers)) {
    const org = await walletOrg(ctx);
    const digest = createHash('sha256')
      .update(JSON.stringify({ privateEnabled: body.privateEnabled }))
      .digest('hex');
    const challenge = await issueChallenge(ctx, ctx.db.k, {
      ...expected,
      accountId: account.id,
      payload: activityPayload(
        org,
        'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
        {
          encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
          hashFunction: 'HASH_FUNCTION_NO_OP',
          payload: digest,
          signWith: walletAddress(account.id),
        },
        ctx.now,
      ),
      signer: { kind: 'session' },
    });
    return { status: 202, body: challenge };
  }
  const accepted = await checkRetry(ctx, headers, expected);
  await ctx.db.transaction(async (tx) => {
    await consumeChallenge(ctx, tx, accepted);
    await setWalletPrivacy(tx, ctx.platformId, account.id, body.privateEnabled!, ctx.now);
  });
  return { status: 200, body: presentInternalAccount((await findInternalAccount(ctx.db.k, ctx.platformId, id))!) };
}

// ------------------------------------------------------------------------------- export

/**
 * The wallet's recovery phrase: a BIP-39 mnemonic derived from the platform's wallet signer
 * key and the account id, so the same wallet always exports the same phrase.
 */
function walletMnemonic(signerPrivateKey: string, accountId: string): string {
  const entropy = createHmac('sha256', Buffer.from(signerPrivateKey, 'hex')).update(accountId).digest().subarray(0, 16);
  return entropyToMnemonic(entropy, wordlist);
}

export async function exportWallet(ctx: Ctx, id: string, body: { clientPublicKey: string }, headers: SignedHeaders) {
  const account = await walletAccount(ctx, ctx.db.k, id, 'id');
  const key = normalizePoint(body.clientPublicKey);
  if (key === null) throw invalid('clientPublicKey', 'is not a point of P-256');
  const expected = { operation: 'exportInternalAccount', target: account.id, body };
  if (!isRetry(headers)) {
    const org = await walletOrg(ctx);
    const challenge = await issueChallenge(ctx, ctx.db.k, {
      ...expected,
      accountId: account.id,
      payload: activityPayload(
        org,
        'ACTIVITY_TYPE_EXPORT_WALLET',
        { targetPublicKey: key.uncompressed, walletId: walletAddress(account.id) },
        ctx.now,
      ),
      signer: { kind: 'session' },
    });
    return { status: 202, body: challenge };
  }
  const accepted = await checkRetry(ctx, headers, expected);
  await ctx.db.transaction((tx) => consumeChallenge(ctx, tx, accepted));
  const org = await walletOrg(ctx);
  const mnemonic = walletMnemonic(org.signer.privateKey, account.id);
  return {
    status: 200,
    body: { id: account.id, encryptedWalletCredentials: sealExport(mnemonic, key.uncompressed, org.organizationId) },
  };
}

// ------------------------------------------------------------------------------- quote execution

/** The payload a payment from an EMBEDDED_WALLET asks its holder to sign (stable per quote). */
export async function quotePayloadToSign(
  ctx: Ctx,
  q: Queryable,
  quote: { id: string; sourceAccountId: string; totalSendingAmount: bigint | number | string; currency: string },
): Promise<string> {
  const org = await walletOrg(ctx, q);
  const unsigned = createHash('sha256')
    .update(`${quote.id}|${quote.sourceAccountId}|${quote.totalSendingAmount}|${quote.currency}`)
    .digest('hex');
  return activityPayload(
    org,
    'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
    { signWith: walletAddress(quote.sourceAccountId), type: 'TRANSACTION_TYPE_SPARK', unsignedTransaction: unsigned },
    ctx.now,
  );
}

/** Refuses (401) unless `header` is a live session's stamp of the quote's payload. */
export async function checkQuoteSignature(
  ctx: Ctx,
  sourceAccountId: string,
  payload: string,
  header: string | undefined,
) {
  await checkStamp(ctx, header, payload, sourceAccountId, { kind: 'session' });
}

// ------------------------------------------------------------------------------- delegated keys

function presentDelegatedKey(row: store.DelegatedKeyRow) {
  return {
    id: row.id,
    cardId: row.card_id,
    fundingSourceId: row.funding_source_id,
    accountId: row.account_id,
    publicKey: row.public_key,
    nickname: row.nickname,
    status: row.status as 'PENDING' | 'ACTIVE' | 'REVOKED',
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function listDelegatedKeys(
  ctx: Ctx,
  query: { accountId?: string | undefined; fundingSourceId?: string | undefined },
) {
  if (query.accountId !== undefined && !ACCOUNT_ID.test(query.accountId)) {
    throw invalid('accountId', 'must be an InternalAccount id (InternalAccount:<uuid>)');
  }
  const rows = await store.listDelegatedKeys(ctx.db.k, ctx.platformId, query);
  return { data: rows.map(presentDelegatedKey) };
}

export async function getDelegatedKey(ctx: Ctx, id: string) {
  const row = await store.findDelegatedKey(ctx.db.k, ctx.platformId, id);
  if (row === undefined) throw apiError('REFERENCE_NOT_FOUND', 'Delegated key not found');
  return presentDelegatedKey(row);
}

export async function revokeDelegatedKey(ctx: Ctx, id: string) {
  const row = await store.findDelegatedKey(ctx.db.k, ctx.platformId, id);
  if (row === undefined) throw apiError('REFERENCE_NOT_FOUND', 'Delegated key not found');
  if (row.status === 'REVOKED') throw invalid('id', 'names a delegated key that is already REVOKED');
  await store.setDelegatedKeyStatus(ctx.db.k, ctx.platformId, id, 'REVOKED', iso(ctx.now));
}

/**
 * A delegated key is bound to a card's funding source. Railyard has no cards yet, so no
 * card id names one and every request ends in 404 once its body and account are checked.
 */
export async function createDelegatedKey(
  ctx: Ctx,
  body: { cardId: string; internalAccountId: string; nickname: string },
  _headers: SignedHeaders,
) {
  const account = await findInternalAccount(ctx.db.k, ctx.platformId, body.internalAccountId);
  if (account === undefined) throw apiError('REFERENCE_NOT_FOUND', 'Internal account not found');
  if (account.type !== 'EMBEDDED_WALLET') {
    throw invalid('internalAccountId', 'must be an EMBEDDED_WALLET internal account');
  }
  throw apiError('REFERENCE_NOT_FOUND', `Card ${body.cardId} not found`);
}
