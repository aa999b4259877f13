// 2FA reset: recovering a lost factor through a liveness check. Start (at most 5 per customer
// in 24 hours of sandbox time, then 429 with Retry-After) opens a reset for an hour and a
// liveness page (railyard's stand-in for the hosted check, with Pass and Fail buttons).
// INITIATED -> PENDING_REVIEW when the check is passed, then LIVENESS_PASSED once reviewed
// (5 seconds later), or REJECTED when it is failed; EXPIRED when the hour ends first.
// Completing a LIVENESS_PASSED reset removes the lost factor (TOTP, PASSKEY) so it can be
// enrolled again, or makes the new mobile number the customer's (SMS_OTP): COMPLETED.

import { randomBytes } from 'node:crypto';
import { iso } from '../../clock.js';
import { secretHash as tokenHash } from '../../crypto/sealing.js';
import type { Queryable } from '../../db/index.js';
import type { Ctx } from '../../http/context.js';
import type { Deps } from '../../http/deps.js';
import { apiError, invalidInput } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { defineJob } from '../../jobs/queue.js';
import { setVerifiedPhone } from '../customers/service.js';
import { platformNowOf } from '../platform/service.js';
import type { ScaFactorName } from './schemas.js';
import { scaCustomer } from './service.js';
import * as store from './store.js';

export const RESET_WINDOW_MS = 60 * 60_000;
export const RESET_REVIEW_MS = 5_000;
const RESETS_PER_DAY = 5;
const DAY_MS = 86_400_000;

const OPEN = new Set(['INITIATED', 'PENDING_REVIEW', 'LIVENESS_PASSED']);

/** The status as of `now`: an open reset past its window has expired. */
function statusAt(row: store.ResetRow, now: Date): string {
  return OPEN.has(row.status) && iso(now) >= row.expires_at ? 'EXPIRED' : row.status;
}

async function presentReset(q: Queryable, row: store.ResetRow, now: Date) {
  const status = statusAt(row, now);
  // The replacement factor: PENDING until it is enrolled after the reset completed (none for SMS_OTP).
  let enrollmentStatus: 'PENDING' | 'COMPLETED' | null = null;
  if (row.factor !== 'SMS_OTP') {
    enrollmentStatus = 'PENDING';
    if (status === 'COMPLETED' && row.completed_at !== null) {
      const factors = await store.listFactors(q, row.platform_id, row.customer_id);
      if (factors.some((f) => f.factor === row.factor && f.created_at >= row.completed_at!))
        enrollmentStatus = 'COMPLETED';
    }
  }
  return {
    status: status as 'INITIATED',
    factor: row.factor as ScaFactorName,
    enrollmentStatus,
    expiresAt: row.expires_at,
    completedAt: row.completed_at,
  };
}

interface ReviewPayload {
  resetId: string;
}

/** The review of a passed liveness check: LIVENESS_PASSED, unless the reset expired meanwhile. */
export const resetReviewJob = defineJob<ReviewPayload>('sca.reset.review', {
  mode: 'transaction',
  async run(tx, job, ctx) {
    const row = await store.findReset(tx, job.platformId, job.payload.resetId, true);
    if (row === undefined || statusAt(row, ctx.now) !== 'PENDING_REVIEW') return;
    await store.updateReset(tx, row.id, { status: 'LIVENESS_PASSED', updated_at: iso(ctx.now) });
  },
});

export async function startReset(
  ctx: Ctx,
  customerId: string | undefined,
  input: { factor: ScaFactorName },
  publicBaseUrl: string,
) {
  return ctx.db.transaction(async (tx) => {
    const customer = await scaCustomer(tx, ctx, customerId);
    const enrolled = await store.listFactors(tx, ctx.platformId, customer.id);
    if (input.factor !== 'SMS_OTP' && !enrolled.some((f) => f.factor === input.factor)) {
      throw invalidInput([{ field: 'factor', message: `is not a factor customer ${customer.id} has enrolled` }]);
    }
    // One start at a time per customer, so concurrent starts cannot pass the limit together.
    await store.lockLoginState(tx, ctx.platformId, customer.id, iso(ctx.now));
    const since = iso(new Date(ctx.now.getTime() - DAY_MS));
    const recent = await store.resetsSince(tx, ctx.platformId, customer.id, since);
    if (recent.length >= RESETS_PER_DAY) {
      const freesAt = Date.parse(recent[recent.length - RESETS_PER_DAY]!) + DAY_MS;
      const retryAfter = Math.max(1, Math.ceil((freesAt - ctx.now.getTime()) / 1000));
      const error = apiError(
        'RATE_LIMITED',
        `Customer ${customer.id} started ${recent.length} 2FA resets in the last 24 hours (at most ${RESETS_PER_DAY}); retry in ${retryAfter} s`,
        { retryAfterSeconds: retryAfter },
      );
      error.retryAfterSeconds = retryAfter;
      throw error;
    }
    const token = randomBytes(24).toString('base64url');
    const nowIso = iso(ctx.now);
    const row: store.ResetRow = {
      id: newId('TwoFactorReset'),
      platform_id: ctx.platformId,
      customer_id: customer.id,
      factor: input.factor,
      status: 'INITIATED',
      liveness_token_hash: tokenHash(token),
      expires_at: iso(new Date(ctx.now.getTime() + RESET_WINDOW_MS)),
      completed_at: null,
      created_at: nowIso,
      updated_at: nowIso,
    };
    await store.insertReset(tx, row);
    return {
      resetId: row.id,
      livenessAccessToken: token,
      verificationLink: `${publicBaseUrl}/_railyard/sca-resets/${token}`,
      expiresAt: row.expires_at,
    };
  });
}

async function customerReset(q: Queryable, ctx: Ctx, customerId: string, resetId: string, forUpdate = false) {
  const row = await store.findReset(q, ctx.platformId, resetId, forUpdate);
  if (row === undefined || row.customer_id !== customerId) {
    throw apiError('REFERENCE_NOT_FOUND', `Customer ${customerId} has no 2FA reset ${resetId}`);
  }
  return row;
}

export async function getReset(ctx: Ctx, customerId: string | undefined, resetId: string) {
  const customer = await scaCustomer(ctx.db.k, ctx, customerId);
  return presentReset(ctx.db.k, await customerReset(ctx.db.k, ctx, customer.id, resetId), ctx.now);
}

export interface ResetCompleteInput {
  mobile?: { countryCode: string; number: string } | undefined;
}

export async function completeReset(
  ctx: Ctx,
  customerId: string | undefined,
  resetId: string,
  input: ResetCompleteInput | undefined,
): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    const customer = await scaCustomer(tx, ctx, customerId);
    const row = await customerReset(tx, ctx, customer.id, resetId, true);
    const status = statusAt(row, ctx.now);
    if (status !== 'LIVENESS_PASSED') {
      throw invalidInput([
        {
          field: 'resetId',
          message: OPEN.has(status)
            ? `names a reset that is ${status}: it can be completed once its liveness check passed (LIVENESS_PASSED)`
            : `names a reset that is ${status}; start a new one`,
        },
      ]);
    }
    if (row.factor === 'SMS_OTP') {
      const mobile = input?.mobile;
      if (mobile === undefined) {
        throw invalidInput([{ field: 'mobile', message: 'is required to complete an SMS_OTP reset: the new number' }]);
      }
      const countryCode = mobile.countryCode.startsWith('+') ? mobile.countryCode : `+${mobile.countryCode}`;
      await setVerifiedPhone(tx, customer, `${countryCode}${mobile.number}`, ctx.now);
    } else {
      await store.deleteFactorsOf(tx, ctx.platformId, customer.id, row.factor);
    }
    await store.updateReset(tx, row.id, {
      status: 'COMPLETED',
      completed_at: iso(ctx.now),
      updated_at: iso(ctx.now),
    });
  });
}

// ------------------------------------------------------------------------------- the liveness page

/** What the liveness page shows, or undefined for a token that names no reset. */
export async function describeResetLiveness(deps: Deps, token: string) {
  const row = await store.findResetByToken(deps.db.k, tokenHash(token));
  if (row === undefined) return undefined;
  const now = await platformNowOf(deps, row.platform_id, deps.db.k);
  return { customerId: row.customer_id, factor: row.factor, status: statusAt(row, now), expiresAt: row.expires_at };
}

/** The tester's answer on the liveness page; the link's token is the credential. */
export async function answerResetLiveness(deps: Deps, token: string, passed: boolean) {
  return deps.db.transaction(async (tx) => {
    const row = await store.findResetByToken(tx, tokenHash(token), true);
    if (row === undefined) throw apiError('REFERENCE_NOT_FOUND', 'No such liveness check');
    const now = await platformNowOf(deps, row.platform_id, tx);
    const status = statusAt(row, now);
    if (status !== 'INITIATED') throw apiError('CONFLICT', `This liveness check is already answered (${status})`);
    const next = { ...row, status: passed ? 'PENDING_REVIEW' : 'REJECTED', updated_at: iso(now) };
    await store.updateReset(tx, row.id, { status: next.status, updated_at: next.updated_at });
    if (passed) {
      await resetReviewJob.schedule(tx, {
        platformId: row.platform_id,
        payload: { resetId: row.id },
        dueAt: new Date(now.getTime() + RESET_REVIEW_MS),
        now,
      });
    }
    return presentReset(tx, next, now);
  });
}
