// Trusted beneficiaries: an SCA customer's external account that payments may go to without
// the per-payment challenge. Trusting and untrusting are two steps each: start issues a
// challenge bound to the account, confirm answers it (a code, or a passkey assertion when the
// customer has a passkey). A wrong or expired proof changes nothing.

import { randomBytes } from 'node:crypto';
import { iso } from '../../clock.js';
import type { Queryable } from '../../db/index.js';
import type { Ctx } from '../../http/context.js';
import { apiError, invalidInput } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { findTransferCounterparty } from '../external-accounts/service.js';
import type { ProofInput } from './schemas.js';
import {
  assertionAnswers,
  assertionOptions,
  challengeFactors,
  passkeyUseOrigins,
  SCA_START_TTL_MS,
  scaCustomer,
  verifyOperationProof,
} from './service.js';
import * as store from './store.js';

type Change = 'TRUST' | 'UNTRUST';

/** The customer's external account (404 otherwise), its customer in an SCA region (409 otherwise). */
async function beneficiary(q: Queryable, ctx: Ctx, externalAccountId: string) {
  const account = await findTransferCounterparty(q, ctx.platformId, externalAccountId);
  if (account === undefined || account.customerId === null) {
    throw apiError('REFERENCE_NOT_FOUND', `No customer external account ${externalAccountId}`);
  }
  const customer = await scaCustomer(q, ctx, account.customerId);
  return { account, customer };
}

function alreadyThere(change: Change, externalAccountId: string) {
  return apiError(
    'CONFLICT',
    change === 'TRUST'
      ? `External account ${externalAccountId} is a trusted beneficiary already`
      : `External account ${externalAccountId} is not a trusted beneficiary`,
  );
}

export async function startChange(ctx: Ctx, externalAccountId: string, change: Change) {
  return ctx.db.transaction(async (tx) => {
    const { customer } = await beneficiary(tx, ctx, externalAccountId);
    const trusted = await store.isTrusted(tx, ctx.platformId, customer.id, externalAccountId);
    if (trusted === (change === 'TRUST')) throw alreadyThere(change, externalAccountId);
    const { factors, passkey } = await challengeFactors(tx, ctx, customer.id, true);
    const expiresAt = iso(new Date(ctx.now.getTime() + SCA_START_TTL_MS));
    const webauthnChallenge = passkey !== undefined ? randomBytes(32).toString('hex') : null;
    const id = newId('ScaChallenge');
    await store.insertChallenge(tx, {
      id,
      platform_id: ctx.platformId,
      customer_id: customer.id,
      purpose: change,
      factor: passkey !== undefined ? 'PASSKEY' : 'SMS_OTP',
      subject: externalAccountId,
      challenge: webauthnChallenge,
      expires_at: expiresAt,
      used_at: null,
      created_at: iso(ctx.now),
    });
    return {
      scaChallenge: {
        id,
        expiresAt,
        factor: passkey !== undefined ? ('PASSKEY' as const) : ('SMS_OTP' as const),
        availableFactors: factors,
        purpose: change === 'TRUST' ? 'TRUST_BENEFICIARY' : 'UNTRUST_BENEFICIARY',
        ...(passkey !== undefined
          ? {
              passkeyAssertionOptions: assertionOptions(passkey, webauthnChallenge!),
              passkeyAllowedOrigins: passkeyUseOrigins(ctx, passkey),
            }
          : {}),
      },
    };
  });
}

export async function confirmChange(ctx: Ctx, externalAccountId: string, change: Change, input: ProofInput) {
  const hasCode = input.code !== undefined && input.code !== null;
  const hasPasskey = input.passkeyAssertion !== undefined && input.passkeyAssertion !== null;
  return ctx.db.transaction(async (tx) => {
    const { customer } = await beneficiary(tx, ctx, externalAccountId);
    const errors = [];
    if (hasCode === hasPasskey) {
      errors.push({ field: 'code', message: 'or passkeyAssertion: give exactly one' });
    }
    if (hasPasskey && (input.origin === undefined || input.origin === null)) {
      errors.push({ field: 'origin', message: 'is required with passkeyAssertion' });
    }
    if (errors.length > 0) throw invalidInput(errors);
    const nowIso = iso(ctx.now);
    const open = await store.openChallenges(tx, ctx.platformId, customer.id, change, nowIso);
    // The challenge named; else the one a passkey assertion signed; else the newest start.
    const started = open.find(
      (c) =>
        c.subject === externalAccountId &&
        (input.challengeId !== undefined && input.challengeId !== null
          ? c.id === input.challengeId
          : !hasPasskey || assertionAnswers(input.passkeyAssertion!, c.challenge)),
    );
    if (started === undefined) {
      const field = input.challengeId ? 'challengeId' : 'externalAccountId';
      throw invalidInput([
        {
          field,
          message: `names no open ${change === 'TRUST' ? 'trust' : 'untrust'} start of this account (it expired or was confirmed; start again)`,
        },
      ]);
    }
    const proof = await verifyOperationProof(tx, ctx, customer.id, input, started.challenge);
    if (!proof.ok) throw invalidInput([{ field: proof.field, message: proof.message }]);
    if (!(await store.useChallenge(tx, started.id, nowIso))) throw alreadyThere(change, externalAccountId);
    const trusted = await store.isTrusted(tx, ctx.platformId, customer.id, externalAccountId);
    if (trusted === (change === 'TRUST')) throw alreadyThere(change, externalAccountId);
    if (change === 'TRUST') {
      await store.trust(tx, {
        platform_id: ctx.platformId,
        external_account_id: externalAccountId,
        customer_id: customer.id,
        trusted_at: nowIso,
      });
    } else {
      await store.untrust(tx, ctx.platformId, externalAccountId);
    }
    return { trusted: change === 'TRUST' };
  });
}
