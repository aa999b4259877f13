// UMA invitations: a platform's customer invites someone by link; whoever claims it with
// their UMA address (a customer of any platform) makes it CLAIMED, and the inviting platform
// hears INVITATION.CLAIMED. PENDING -> CLAIMED (claim) | CANCELLED (cancel, by the inviting
// platform only); EXPIRED once the sandbox clock passes expiresAt (read, never written).

import { iso } from '../../clock.js';
import type { Queryable } from '../../db/index.js';
import { recordEvent } from '../../events/outbox.js';
import type { Ctx } from '../../http/context.js';
import type { Deps } from '../../http/deps.js';
import { apiError, type ApiError, invalidInput } from '../../http/errors.js';
import { randomCode } from '../../ids.js';
import { parseUmaAddress } from '../../rails/magic.js';
import { findActiveCustomerByUmaAddress, normalizeUmaAddress } from '../customers/service.js';
import { money } from '../internal-accounts/service.js';
import { readPlatformConfig } from '../platform/config.js';
import { platformNowOf } from '../platform/service.js';
import type { InvitationCreateInput } from './schemas.js';
import * as store from './store.js';

/** The currency an invitation's amount is in: railyard's customers hold USD. */
const INVITATION_CURRENCY = 'USD';

/** The status as of `now`: a PENDING invitation past its expiresAt has expired. */
function statusAt(row: store.InvitationRow, now: Date): string {
  return row.status === 'PENDING' && row.expires_at !== null && iso(now) >= row.expires_at ? 'EXPIRED' : row.status;
}

function present(row: store.InvitationRow, now: Date, publicBaseUrl: string) {
  return {
    code: row.code,
    createdAt: row.created_at,
    ...(row.claimed_at !== null ? { claimedAt: row.claimed_at } : {}),
    url: `${publicBaseUrl}/_railyard/invitations/${row.code}`,
    ...(row.expires_at !== null ? { expiresAt: row.expires_at } : {}),
    inviterUma: row.inviter_uma,
    ...(row.invitee_uma !== null ? { inviteeUma: row.invitee_uma } : {}),
    status: statusAt(row, now) as 'PENDING',
    ...(row.first_name !== null ? { firstName: row.first_name } : {}),
    ...(row.amount_to_send !== null && row.currency !== null
      ? { amountToSend: money(BigInt(row.amount_to_send), row.currency) }
      : {}),
  };
}

async function load(q: Queryable, code: string, forUpdate = false): Promise<store.InvitationRow> {
  const row = await store.findInvitation(q, code, forUpdate);
  if (row === undefined) throw apiError('INVITATION_NOT_FOUND', `No invitation ${code}`);
  return row;
}

/** Why an invitation that is not PENDING cannot be claimed or cancelled. */
function notPending(row: store.InvitationRow, status: string): ApiError {
  if (status === 'CLAIMED') {
    return apiError('INVITATION_ALREADY_CLAIMED', `Invitation ${row.code} was claimed at ${row.claimed_at}`);
  }
  if (status === 'CANCELLED') return apiError('INVITATION_CANCELLED', `Invitation ${row.code} was cancelled`);
  return invalidInput(
    [{ field: 'invitationCode', message: `names an invitation that expired at ${row.expires_at}` }],
    `Invitation ${row.code} expired at ${row.expires_at}`,
  );
}

export async function createInvitation(ctx: Ctx, input: InvitationCreateInput, publicBaseUrl: string) {
  if (ctx.settings.invitations === false) {
    throw apiError(
      'INVITATIONS_NOT_CONFIGURED',
      'Invitations are switched off for this platform (PATCH /_railyard/platform)',
    );
  }
  const config = await readPlatformConfig(ctx.db.k, ctx.platformId);
  if (!config.umaDomain) {
    throw apiError('INVITATIONS_NOT_CONFIGURED', 'This platform has no UMA domain: invitations need one');
  }
  const inviter = await findActiveCustomerByUmaAddress(ctx.db.k, ctx.platformId, input.inviterUma, config.umaDomain);
  const errors = [];
  if (inviter === undefined || inviter.uma_address === null) {
    errors.push({ field: 'inviterUma', message: `is not the UMA address of a customer of this platform` });
  }
  if (input.expiresAt !== undefined && input.expiresAt <= iso(ctx.now)) {
    errors.push({ field: 'expiresAt', message: 'must be in the future' });
  }
  if (errors.length > 0) throw invalidInput(errors);
  const now = iso(ctx.now);
  const row: store.InvitationRow = {
    code: randomCode(10),
    platform_id: ctx.platformId,
    inviter_uma: inviter!.uma_address!,
    invitee_uma: null,
    first_name: input.firstName ?? null,
    amount_to_send: input.amountToSend ?? null,
    currency: input.amountToSend !== undefined ? INVITATION_CURRENCY : null,
    status: 'PENDING',
    expires_at: input.expiresAt !== undefined ? iso(new Date(input.expiresAt)) : null,
    claimed_at: null,
    created_at: now,
    updated_at: now,
  };
  await store.insertInvitation(ctx.db.k, row);
  return present(row, ctx.now, publicBaseUrl);
}

export async function getInvitation(ctx: Ctx, code: string, publicBaseUrl: string) {
  return present(await load(ctx.db.k, code), ctx.now, publicBaseUrl);
}

export async function claimInvitation(ctx: Ctx, code: string, inviteeUma: string, publicBaseUrl: string) {
  const invitee = parseUmaAddress(inviteeUma);
  if (invitee === undefined) {
    throw apiError('INVALID_UMA_ADDRESS', `${inviteeUma} is not an UMA address ($name@domain)`, {
      errors: [{ field: 'inviteeUma', message: 'is not an UMA address ($name@domain)' }],
    });
  }
  const address = normalizeUmaAddress(inviteeUma, invitee.domain)!;
  return ctx.db.transaction(async (tx) => {
    const row = await load(tx, code, true);
    const status = statusAt(row, ctx.now);
    if (status !== 'PENDING') throw notPending(row, status);
    if (address === row.inviter_uma) {
      throw invalidInput([
        { field: 'inviteeUma', message: 'is the inviter: an invitation is claimed by someone else' },
      ]);
    }
    const now = iso(ctx.now);
    if (
      !(await store.settleInvitation(tx, code, {
        status: 'CLAIMED',
        invitee_uma: address,
        claimed_at: now,
        updated_at: now,
      }))
    ) {
      throw notPending(row, 'CLAIMED');
    }
    const claimed = { ...row, status: 'CLAIMED', invitee_uma: address, claimed_at: now, updated_at: now };
    // The inviting platform hears of it, whichever platform claimed.
    await recordEvent(tx, {
      platformId: row.platform_id,
      type: 'INVITATION.CLAIMED',
      resourceId: row.code,
      data: present(claimed, ctx.now, publicBaseUrl),
      now: ctx.now,
    });
    return present(claimed, ctx.now, publicBaseUrl);
  });
}

export async function cancelInvitation(ctx: Ctx, code: string, publicBaseUrl: string) {
  return ctx.db.transaction(async (tx) => {
    const row = await load(tx, code, true);
    if (row.platform_id !== ctx.platformId) {
      throw apiError('FORBIDDEN', `Invitation ${code} was made by another platform; only that platform can cancel it`);
    }
    const status = statusAt(row, ctx.now);
    if (status !== 'PENDING') throw notPending(row, status);
    const now = iso(ctx.now);
    if (!(await store.settleInvitation(tx, code, { status: 'CANCELLED', updated_at: now }))) {
      throw notPending(row, 'CLAIMED');
    }
    return present({ ...row, status: 'CANCELLED', updated_at: now }, ctx.now, publicBaseUrl);
  });
}

/** What the invitation page shows (no credentials: the link is public, as a hosted one is). */
export async function describeInvitation(deps: Deps, code: string) {
  const row = await store.findInvitation(deps.db.k, code);
  if (row === undefined) return undefined;
  const now = await platformNowOf(deps, row.platform_id);
  return {
    code: row.code,
    inviterUma: row.inviter_uma,
    firstName: row.first_name,
    amount: row.amount_to_send === null ? null : `${row.amount_to_send} ${row.currency} (smallest unit)`,
    status: statusAt(row, now),
    expiresAt: row.expires_at,
  };
}
