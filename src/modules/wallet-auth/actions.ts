// The wallet actions a live session signs besides logins: the wallet's privacy setting, the
// export of its secret, and delegated card keys; and the check of the signature that
// releases a payment from the wallet (POST /quotes/{id}/execute).

import { createHash, createHmac } from 'node:crypto';
import { entropyToMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { iso } from '../../clock.js';
import { generateKeyPair, normalizePoint, publicKeysOf } from '../../crypto/p256.js';
import { openText, sealText } from '../../crypto/sealing.js';
import { railyardKey } from '../../db/keys.js';
import { sealExport } from '../../crypto/wallet-envelopes.js';
import type { Queryable } from '../../db/index.js';
import type { Ctx } from '../../http/context.js';
import { apiError } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { cardFundedBy } from '../cards/service.js';
import { findInternalAccount, presentInternalAccount, setWalletPrivacy } from '../internal-accounts/service.js';
import {
  activityPayload,
  checkRetry,
  checkStamp,
  consumeChallenge,
  isRetry,
  issueChallenge,
  type SignedHeaders,
  unauthorized,
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
 * A delegated key for a card's embedded-wallet funding source, in three legs signed by a live
 * session of the wallet: the first answers a challenge to create the key's signer identity
 * (railyard makes the P-256 keypair and keeps the private half, sealed), the second creates it
 * (PENDING: it holds no policy yet) and answers a challenge for its policies, the third grants
 * them (ACTIVE, 201). One ACTIVE key per card funding source (409). The body is the same on
 * every leg; a flow abandoned after the second leg leaves the PENDING key behind.
 */
export async function createDelegatedKey(
  ctx: Ctx,
  body: { cardId: string; internalAccountId: string; nickname: string },
  headers: SignedHeaders,
) {
  const account = await findInternalAccount(ctx.db.k, ctx.platformId, body.internalAccountId);
  if (account === undefined) throw apiError('REFERENCE_NOT_FOUND', 'Internal account not found');
  if (account.type !== 'EMBEDDED_WALLET') {
    throw invalid('internalAccountId', 'must be an EMBEDDED_WALLET internal account');
  }
  const { card, funded } = await cardFundedBy(ctx.db.k, ctx.platformId, body.cardId, account.id);
  if (card === undefined) throw apiError('REFERENCE_NOT_FOUND', `Card ${body.cardId} not found`);
  if (!funded) {
    throw apiError('REFERENCE_NOT_FOUND', `Card ${card.id} has no funding source ${account.id}`);
  }
  const activeConflict = async (q: Queryable) => {
    const active = await store.activeDelegatedKey(q, ctx.platformId, card.id, account.id);
    if (active !== undefined) {
      throw apiError(
        'CONFLICT',
        `Delegated key ${active.id} is ACTIVE for this card funding source; revoke it (DELETE /auth/delegated-keys/${active.id}) first`,
      );
    }
  };
  await activeConflict(ctx.db.k);
  const expected = { operation: 'createDelegatedKey', target: `${card.id}|${account.id}`, body };
  const org = await walletOrg(ctx);
  if (!isRetry(headers)) {
    const pair = generateKeyPair();
    // The private half is sealed wherever it is kept: in the challenge until the next leg, then with the key.
    const sealedKey = sealText(await railyardKey(ctx.db.k, 'delegated-keys', ctx.now), pair.privateKey);
    const challenge = await issueChallenge(ctx, ctx.db.k, {
      ...expected,
      accountId: account.id,
      payload: activityPayload(
        org,
        'ACTIVITY_TYPE_CREATE_USERS_V3',
        {
          users: [
            { userName: body.nickname, apiKeys: [{ publicKey: pair.compressed, curveType: 'API_KEY_CURVE_P256' }] },
          ],
        },
        ctx.now,
      ),
      signer: { kind: 'session' },
      data: { leg: 1, sealedPrivateKey: sealedKey },
    });
    return { status: 202, body: challenge };
  }
  const accepted = await checkRetry(ctx, headers, expected);
  if (accepted.data.leg === 1) {
    const sealedKey = String(accepted.data.sealedPrivateKey);
    const privateKey = openText(await railyardKey(ctx.db.k, 'delegated-keys', ctx.now), sealedKey);
    const now = iso(ctx.now);
    const row: store.DelegatedKeyRow = {
      id: newId('DelegatedKey'),
      platform_id: ctx.platformId,
      account_id: account.id,
      card_id: card.id,
      funding_source_id: newId('CardFundingSource'),
      public_key: publicKeysOf(privateKey).compressed,
      private_key: sealedKey,
      nickname: body.nickname,
      status: 'PENDING',
      created_at: now,
      updated_at: now,
    };
    const challenge = await ctx.db.transaction(async (tx) => {
      await consumeChallenge(ctx, tx, accepted);
      await store.insertDelegatedKey(tx, row);
      return issueChallenge(ctx, tx, {
        ...expected,
        accountId: account.id,
        payload: activityPayload(
          org,
          'ACTIVITY_TYPE_CREATE_POLICIES_V3',
          { policies: [{ policyName: `sign and revoke: ${row.id}`, effect: 'EFFECT_ALLOW', signer: row.public_key }] },
          ctx.now,
        ),
        signer: { kind: 'session' },
        data: { leg: 2, delegatedKeyId: row.id },
      });
    });
    return { status: 202, body: challenge };
  }
  const keyId = String(accepted.data.delegatedKeyId);
  const activated = await ctx.db.transaction(async (tx) => {
    await consumeChallenge(ctx, tx, accepted);
    await activeConflict(tx);
    const row = await store.findDelegatedKey(tx, ctx.platformId, keyId);
    if (row === undefined || row.status !== 'PENDING') {
      throw unauthorized('UNAUTHORIZED', 'the challenge of this Request-Id names no pending delegated key');
    }
    await store.setDelegatedKeyStatus(tx, ctx.platformId, keyId, 'ACTIVE', iso(ctx.now));
    return { ...row, status: 'ACTIVE', updated_at: iso(ctx.now) };
  });
  return { status: 201, body: presentDelegatedKey(activated) };
}
