import { iso } from '../../clock.js';
import type { Queryable, Tx } from '../../db/index.js';
import { toPage, type PageRequest } from '../../db/pagination.js';
import type { Ctx } from '../../http/context.js';
import { apiError, FieldErrors, invalidInput } from '../../http/errors.js';
import { prune } from '../../http/schemas.js';
import { newId } from '../../ids.js';
import { beneficialOwnerKycFor } from '../../rails/magic.js';
import { activeCustomer } from '../customers/lookup.js';
import { BeneficialOwnerPersonalInfo, BeneficialOwnerPersonalInfoUpdate } from './schemas.js';
import * as store from './store.js';

export type OwnerRow = store.OwnerRow;
type PersonalInfo = Record<string, unknown> & { lastName: string };
type Role = 'UBO' | 'DIRECTOR' | 'COMPANY_OFFICER' | 'CONTROL_PERSON' | 'TRUSTEE' | 'GENERAL_PARTNER';

export interface BeneficialOwnerView {
  id: string;
  customerId: string;
  roles: Role[];
  ownershipPercentage: number;
  personalInfo: PersonalInfo;
  kycStatus: string;
  createdAt: string;
  updatedAt: string;
}

export function presentOwner(row: OwnerRow): BeneficialOwnerView {
  return {
    id: row.id,
    customerId: row.customer_id,
    roles: JSON.parse(row.roles) as Role[],
    ownershipPercentage: Number(row.ownership_percentage),
    personalInfo: JSON.parse(row.personal_info) as PersonalInfo,
    kycStatus: row.kyc_status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The owners of several customers at once, for presenting business customers. */
export async function ownersByCustomer(
  q: Queryable,
  platformId: string,
  customerIds: string[],
): Promise<Map<string, BeneficialOwnerView[]>> {
  const byCustomer = new Map<string, BeneficialOwnerView[]>();
  for (const row of await store.ownersOf(q, platformId, customerIds)) {
    const list = byCustomer.get(row.customer_id) ?? [];
    list.push(presentOwner(row));
    byCustomer.set(row.customer_id, list);
  }
  return byCustomer;
}

/** Every owner of one business, oldest first. */
export async function ownersOfCustomer(q: Queryable, platformId: string, customerId: string): Promise<OwnerRow[]> {
  return store.ownersOf(q, platformId, [customerId]);
}

export async function findOwner(q: Queryable, platformId: string, id: string): Promise<OwnerRow | undefined> {
  return store.findOwner(q, platformId, id);
}

const TERMINAL = new Set(['APPROVED', 'REJECTED']);

/** An owner's status when its business has been decided: by the suffix of its last name. */
function resolvedStatus(info: PersonalInfo): string {
  return beneficialOwnerKycFor(info.lastName);
}

/**
 * The business has just been approved or rejected: each owner still open is decided by the
 * suffix of its last name (see rails/magic.ts).
 */
export async function resolveOwners(tx: Tx, platformId: string, customerId: string, now: Date): Promise<void> {
  for (const row of await store.ownersOf(tx, platformId, [customerId])) {
    if (TERMINAL.has(row.kyc_status)) continue;
    const status = resolvedStatus(JSON.parse(row.personal_info) as PersonalInfo);
    if (status !== row.kyc_status) await store.updateOwner(tx, row.id, { kyc_status: status, updated_at: iso(now) });
  }
}

/** The business went to review complete: its owners not yet submitted are under review too. */
export async function submitOwners(tx: Tx, platformId: string, customerId: string, now: Date): Promise<void> {
  for (const row of await store.ownersOf(tx, platformId, [customerId])) {
    if (row.kyc_status === 'UNVERIFIED')
      await store.updateOwner(tx, row.id, { kyc_status: 'PENDING', updated_at: iso(now) });
  }
}

function checkPersonalInfo(errors: FieldErrors, info: Record<string, unknown> | undefined, now: Date): void {
  if (info === undefined) return;
  if (typeof info.birthDate === 'string' && info.birthDate > iso(now).slice(0, 10))
    errors.add('personalInfo.birthDate', 'must not be in the future');
}

/** The owners' shares of one business may not add up to more than 100 percent. */
function checkShares(
  errors: FieldErrors,
  siblings: OwnerRow[],
  ownershipPercentage: number | undefined,
  exceptId?: string,
): void {
  if (ownershipPercentage === undefined) return;
  const others = siblings.filter((o) => o.id !== exceptId).reduce((sum, o) => sum + Number(o.ownership_percentage), 0);
  if (others + ownershipPercentage > 100) {
    errors.add(
      'ownershipPercentage',
      `would bring the owners of this business to ${others + ownershipPercentage}%; at most ${100 - others} is left`,
    );
  }
}

export interface OwnerCreateInput {
  customerId: string;
  roles: Role[];
  ownershipPercentage: number;
  personalInfo: Record<string, unknown>;
}

export async function createBeneficialOwner(ctx: Ctx, body: OwnerCreateInput): Promise<BeneficialOwnerView> {
  const errors = new FieldErrors();
  checkPersonalInfo(errors, body.personalInfo, ctx.now);
  errors.throwIfAny();
  return ctx.db.transaction(async (tx) => {
    const customer = await activeCustomer(tx, ctx.platformId, body.customerId);
    if (customer.customer_type !== 'BUSINESS') {
      throw invalidInput([
        { field: 'customerId', message: 'names an individual customer; only businesses have beneficial owners' },
      ]);
    }
    const siblings = await store.ownersOf(tx, ctx.platformId, [customer.id]);
    checkShares(errors, siblings, body.ownershipPercentage);
    errors.throwIfAny();
    const info = prune(body.personalInfo, BeneficialOwnerPersonalInfo) as PersonalInfo;
    const now = iso(ctx.now);
    const row: OwnerRow = {
      id: newId('BeneficialOwner'),
      platform_id: ctx.platformId,
      customer_id: customer.id,
      roles: JSON.stringify(body.roles),
      ownership_percentage: body.ownershipPercentage,
      personal_info: JSON.stringify(info),
      // An owner added after its business was decided is decided at once, as the others were.
      kyc_status: TERMINAL.has(customer.status) ? resolvedStatus(info) : 'UNVERIFIED',
      created_at: now,
      updated_at: now,
    };
    await store.insertOwner(tx, row);
    return presentOwner(row);
  });
}

function notFound(id: string) {
  return apiError('REFERENCE_NOT_FOUND', `No beneficial owner ${id}`);
}

export async function getBeneficialOwner(ctx: Ctx, id: string): Promise<BeneficialOwnerView> {
  const row = await store.findOwner(ctx.db.k, ctx.platformId, id);
  if (row === undefined) throw notFound(id);
  return presentOwner(row);
}

export async function listBeneficialOwners(ctx: Ctx, query: { customerId: string } & PageRequest) {
  return toPage(await store.listOwners(ctx.db.k, ctx.platformId, query.customerId, query), presentOwner);
}

export interface OwnerUpdateInput {
  roles?: Role[] | undefined;
  ownershipPercentage?: number | undefined;
  personalInfo?: Record<string, unknown> | undefined;
}

export async function updateBeneficialOwner(
  ctx: Ctx,
  id: string,
  body: OwnerUpdateInput,
): Promise<BeneficialOwnerView> {
  const errors = new FieldErrors();
  checkPersonalInfo(errors, body.personalInfo, ctx.now);
  errors.throwIfAny();
  return ctx.db.transaction(async (tx) => {
    const row = await store.findOwner(tx, ctx.platformId, id);
    if (row === undefined) throw notFound(id);
    checkShares(errors, await store.ownersOf(tx, ctx.platformId, [row.customer_id]), body.ownershipPercentage, row.id);
    errors.throwIfAny();
    const info = {
      ...(JSON.parse(row.personal_info) as PersonalInfo),
      ...(prune(body.personalInfo ?? {}, BeneficialOwnerPersonalInfoUpdate) as object),
    };
    const changes = {
      roles: body.roles !== undefined ? JSON.stringify(body.roles) : row.roles,
      ownership_percentage: body.ownershipPercentage ?? row.ownership_percentage,
      personal_info: JSON.stringify(info),
      updated_at: iso(ctx.now),
    };
    await store.updateOwner(tx, row.id, changes);
    return presentOwner({ ...row, ...changes });
  });
}
