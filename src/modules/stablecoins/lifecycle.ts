// Stablecoin timelines on the sandbox clock, carried out by durable jobs, and the ledger
// movements of mints and burns. (The API operations are in service.ts.)
//
// Registration: PENDING_REVIEW / NOT_ENABLED at once; PROVISIONING after 30 s; PROVISIONED
// with grid operations PENDING_APPROVAL after 60 s; ENABLING after 90 s; ENABLED (with its
// `currency`) after 120 s. Sandbox outcomes may stop it at REJECTED or FAILED.
//
// Operations: PENDING_FUNDING (wire mints, burns from an external wallet) until a sandbox
// payment arrives, or EXPIRED at expiresAt; then PENDING_PROVIDER, PROCESSING 10 s later,
// and COMPLETED (or FAILED) 30 s after that. Other sources start at PENDING_PROVIDER.
// Only a COMPLETED operation posts to the ledger, so a failed or expired one moved nothing.

import { iso } from '../../clock.js';
import type { Tx } from '../../db/index.js';
import { defineJob } from '../../jobs/queue.js';
import { openBooks } from '../../ledger/index.js';
import type { StablecoinRegistrationOutcome } from '../../rails/magic.js';
import * as store from './store.js';

export const REGISTRATION_STEP_MS = 30_000;
/** PENDING_PROVIDER -> PROCESSING. */
export const PROVIDER_ACCEPT_MS = 10_000;
/** PROCESSING -> COMPLETED or FAILED. */
export const PROVIDER_SETTLE_MS = 30_000;
/** How long an operation waits in PENDING_FUNDING before it expires. */
export const FUNDING_WINDOW_MS = 24 * 60 * 60 * 1000;

// ------------------------------------------------------------------------------- registration

interface RegistrationPayload {
  stablecoinId: string;
  outcome: StablecoinRegistrationOutcome;
  /** 1: review, 2: provisioning, 3: enabling, 4: enabled. */
  step: number;
}

type Patch = Partial<Pick<store.StablecoinRow, 'issuance_status' | 'grid_operations_status' | 'currency'>>;

/** What each step expects the stablecoin to be, and what it makes of it. */
function registrationStep(row: store.StablecoinRow, payload: RegistrationPayload): Patch | undefined {
  const { issuance_status: issuance, grid_operations_status: grid } = row;
  switch (payload.step) {
    case 1:
      if (issuance !== 'PENDING_REVIEW') return undefined;
      return { issuance_status: payload.outcome === 'REJECTED' ? 'REJECTED' : 'PROVISIONING' };
    case 2:
      if (issuance !== 'PROVISIONING') return undefined;
      return payload.outcome === 'FAILED'
        ? { issuance_status: 'FAILED' }
        : { issuance_status: 'PROVISIONED', grid_operations_status: 'PENDING_APPROVAL' };
    case 3:
      return grid === 'PENDING_APPROVAL' ? { grid_operations_status: 'ENABLING' } : undefined;
    case 4:
      return grid === 'ENABLING' ? { grid_operations_status: 'ENABLED', currency: row.symbol } : undefined;
    default:
      return undefined;
  }
}

export const registrationJob = defineJob<RegistrationPayload>('stablecoin.registration', {
  mode: 'transaction',
  async run(tx, job, ctx) {
    const row = await store.findStablecoin(tx, job.platformId, job.payload.stablecoinId, true);
    if (row === undefined) return;
    const patch = registrationStep(row, job.payload);
    if (patch === undefined) return;
    await store.updateStablecoin(tx, row.id, { ...patch, updated_at: iso(ctx.now) });
    const next = { ...row, ...patch };
    const goesOn = next.issuance_status !== 'REJECTED' && next.issuance_status !== 'FAILED' && job.payload.step < 4;
    // The next step is due a step after this one was due (not after it ran), so the timeline
    // keeps its times however far the clock jumps.
    if (goesOn)
      await scheduleRegistrationStep(
        tx,
        job.platformId,
        { ...job.payload, step: job.payload.step + 1 },
        job.dueAt,
        ctx.now,
      );
  },
});

/** Schedules a registration step, due REGISTRATION_STEP_MS after `from`. */
export async function scheduleRegistrationStep(
  tx: Tx,
  platformId: string,
  payload: RegistrationPayload,
  from: Date,
  now: Date,
) {
  await registrationJob.schedule(tx, {
    platformId,
    payload,
    dueAt: new Date(from.getTime() + REGISTRATION_STEP_MS),
    now,
  });
}

// ------------------------------------------------------------------------------- provider links

/** The provider revokes a link's credentials (a sandbox outcome). */
export const linkRevocationJob = defineJob<{ linkId: string }>('stablecoin.link-revocation', {
  mode: 'transaction',
  async run(tx, job, ctx) {
    const row = await store.findLink(tx, job.platformId, job.payload.linkId, true);
    if (row === undefined || row.status !== 'ACTIVE') return;
    await store.updateLink(tx, row.id, { status: 'REVOKED', updated_at: iso(ctx.now) });
  },
});

// ------------------------------------------------------------------------------- operations

type OperationStep = 'ACCEPT' | 'SETTLE' | 'EXPIRE';

interface OperationPayload {
  operationId: string;
  step: OperationStep;
}

export const operationJob = defineJob<OperationPayload>('stablecoin.operation', {
  mode: 'transaction',
  async run(tx, job, ctx) {
    const row = await store.findOperation(tx, job.platformId, job.payload.operationId, true);
    if (row === undefined) return;
    const now = iso(ctx.now);
    switch (job.payload.step) {
      case 'ACCEPT':
        if (row.status !== 'PENDING_PROVIDER') return;
        await store.updateOperation(tx, row.id, {
          status: 'PROCESSING',
          provider_status: 'processing',
          updated_at: now,
        });
        await scheduleOperationStep(tx, row, 'SETTLE', job.dueAt, ctx.now);
        return;
      case 'SETTLE':
        if (row.status !== 'PROCESSING') return;
        await settle(tx, row, ctx.now);
        return;
      case 'EXPIRE':
        if (row.status !== 'PENDING_FUNDING') return;
        await store.updateOperation(tx, row.id, { status: 'EXPIRED', provider_status: 'expired', updated_at: now });
        return;
    }
  },
});

const STEP_DELAY_MS: Record<Exclude<OperationStep, 'EXPIRE'>, number> = {
  ACCEPT: PROVIDER_ACCEPT_MS,
  SETTLE: PROVIDER_SETTLE_MS,
};

export async function scheduleOperationStep(
  tx: Tx,
  row: Pick<store.OperationRow, 'id' | 'platform_id' | 'expires_at'>,
  step: OperationStep,
  from: Date,
  now: Date,
) {
  // EXPIRE is due at expiresAt; the others a step's delay after `from` (the time the step
  // before was due), so the timeline keeps its times however far the clock jumps.
  const dueAt = step === 'EXPIRE' ? new Date(row.expires_at!) : new Date(from.getTime() + STEP_DELAY_MS[step]);
  await operationJob.schedule(tx, { platformId: row.platform_id, payload: { operationId: row.id, step }, dueAt, now });
}

/** The provider's final answer: FAILED by the sandbox scenario, else COMPLETED with its postings. */
async function settle(tx: Tx, row: store.OperationRow, now: Date) {
  const at = iso(now);
  if (row.scenario.startsWith('FAIL:')) {
    await store.updateOperation(tx, row.id, {
      status: 'FAILED',
      provider_status: 'failed',
      failure_reason: row.scenario.slice('FAIL:'.length),
      updated_at: at,
    });
    return;
  }
  const coin = await store.findStablecoin(tx, row.platform_id, row.stablecoin_id);
  if (coin === undefined) throw new Error(`stablecoin ${row.stablecoin_id} of operation ${row.id} is gone`);
  const books = openBooks(tx, row.platform_id, now);
  const legs = {
    fiatCurrency: coin.base_currency,
    fiatAmount: BigInt(row.fiat_amount),
    tokenCurrency: coin.id,
    tokenAmount: BigInt(row.amount),
  };
  if (row.operation_type === 'MINT') await books.mintStablecoin(legs, row.id);
  else await books.burnStablecoin(legs, row.id);
  await books.flush();
  await store.updateOperation(tx, row.id, { status: 'COMPLETED', provider_status: 'completed', updated_at: at });
}
