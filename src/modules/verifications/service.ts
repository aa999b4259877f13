import { randomBytes } from 'node:crypto';
import { iso } from '../../clock.js';
import type { Queryable, Tx } from '../../db/index.js';
import { toPage, type PageRequest } from '../../db/pagination.js';
import { recordEvent } from '../../events/outbox.js';
import { runCommand } from '../../http/command.js';
import type { Ctx } from '../../http/context.js';
import type { Deps } from '../../http/deps.js';
import { apiError, invalidInput } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { businessKybFor, individualKycFor } from '../../rails/magic.js';
import { ownersOfCustomer, resolveOwners, submitOwners } from '../beneficial-owners/service.js';
import { activeCustomer, findCustomerRow, type CustomerRow } from '../customers/lookup.js';
import {
  changeCustomerStatus,
  customerProfile,
  presentCustomerRow,
  unverifiedContactChannels,
  type CustomerView,
} from '../customers/service.js';
import type { KycStatusValue } from '../customers/schemas.js';
import {
  documentsOfHolders,
  flagPoorQuality,
  IDENTITY_DOCUMENT_TYPES,
  markSubmitted,
  type DocumentMeta,
} from '../documents/service.js';
import type { DocumentTypeValue } from '../documents/schemas.js';
import { platformNowOf } from '../platform/service.js';
import type { VerificationErrorTypeValue, VerificationStatusValue } from './schemas.js';
import * as store from './store.js';

export interface VerificationErrorView {
  resourceId: string;
  type: VerificationErrorTypeValue;
  field?: string;
  acceptedDocumentTypes?: DocumentTypeValue[];
  reason: string;
}

export function presentVerification(row: store.VerificationRow) {
  return {
    id: row.id,
    customerId: row.customer_id,
    verificationStatus: row.status as VerificationStatusValue,
    errors: JSON.parse(row.errors) as VerificationErrorView[],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Where a customer can no longer be submitted: its KYC or KYB has been decided. */
const DECIDED = new Set(['APPROVED', 'REJECTED']);

// Document categories a submission needs, and the types that satisfy each.
const LEGAL_PRESENCE: DocumentTypeValue[] = [
  'CERTIFICATE_OF_INCORPORATION',
  'ARTICLES_OF_INCORPORATION',
  'ARTICLES_OF_ASSOCIATION',
  'STATE_REGISTRY_EXCERPT',
];
const OWNERSHIP_STRUCTURE: DocumentTypeValue[] = ['SHAREHOLDER_REGISTER', 'TRUST_AGREEMENT', 'PARTNERSHIP_AGREEMENT'];
const PROOF_OF_ADDRESS: DocumentTypeValue[] = [
  'UTILITY_BILL',
  'RENT_OR_LEASE_AGREEMENT',
  'ELECTRICITY_BILL',
  'BANK_STATEMENT',
  'TAX_RETURN',
];

// ----------------------------------------------------------------------------- what a submission lacks

function missingField(resourceId: string, field: string, reason: string): VerificationErrorView {
  return { resourceId, type: 'MISSING_FIELD', field, reason };
}

function present(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  return value !== undefined && value !== null && value !== '';
}

function requireDocument(
  problems: VerificationErrorView[],
  resourceId: string,
  documents: DocumentMeta[],
  type: VerificationErrorTypeValue,
  accepted: DocumentTypeValue[],
  what: string,
): void {
  if (documents.some((d) => accepted.includes(d.document_type as DocumentTypeValue))) return;
  problems.push({
    resourceId,
    type,
    acceptedDocumentTypes: accepted,
    reason: `${what} must be uploaded with POST /documents`,
  });
}

/** What an individual's submission lacks, one entry per missing item. */
function individualProblems(customer: CustomerRow, documents: DocumentMeta[]): VerificationErrorView[] {
  const profile = customerProfile(customer);
  const problems: VerificationErrorView[] = [];
  const id = customer.id;
  const fullName = typeof profile.fullName === 'string' ? profile.fullName.trim() : '';
  if (fullName === '') problems.push(missingField(id, 'customer.fullName', 'The full name is missing'));
  else if (fullName.split(/\s+/).length < 2)
    problems.push(missingField(id, 'customer.fullName', 'The full name needs a given name and a family name'));
  const required: [string, string][] = [
    ['birthDate', 'The date of birth is missing'],
    ['nationality', 'The nationality is missing'],
    ['idType', 'The type of tax identification (idType, also accepted as taxIdType) is missing'],
    ['identifier', 'The tax identification number (identifier, also accepted as taxIdentifier) is missing'],
    ['address', 'The residential address is missing'],
  ];
  for (const [field, reason] of required)
    if (!present(profile[field])) problems.push(missingField(id, `customer.${field}`, reason));

  const identity = documents.filter((d) => IDENTITY_DOCUMENT_TYPES.includes(d.document_type as DocumentTypeValue));
  if (identity.length === 0) {
    requireDocument(
      problems,
      id,
      documents,
      'MISSING_IDENTITY_DOCUMENT',
      [...IDENTITY_DOCUMENT_TYPES],
      'An identity document',
    );
  } else if (identity.every((d) => d.quality_issue !== null)) {
    problems.push(...identity.map(poorQuality));
  }
  return problems;
}

function poorQuality(document: DocumentMeta): VerificationErrorView {
  return {
    resourceId: document.id,
    type: 'POOR_QUALITY_DOCUMENT',
    reason:
      'The file of this identity document cannot be read well enough; replace it with PUT /documents/{documentId} or upload another',
  };
}

/** What a business's submission lacks: its information, documents and beneficial owners. */
function businessProblems(
  customer: CustomerRow,
  documents: DocumentMeta[],
  ownerCount: number,
): VerificationErrorView[] {
  const profile = customerProfile(customer);
  const info = (profile.businessInfo ?? {}) as Record<string, unknown>;
  const problems: VerificationErrorView[] = [];
  const id = customer.id;
  const required: [string, string][] = [
    ['legalName', 'The legal name of the business is missing'],
    ['country', 'The country of incorporation is missing'],
    ['registrationNumber', 'The registration number is missing'],
    ['incorporatedOn', 'The date of incorporation is missing'],
    ['taxId', 'The tax identification number is missing'],
    ['countriesOfOperation', 'The countries the business operates in are missing'],
  ];
  for (const [field, reason] of required)
    if (!present(info[field])) problems.push(missingField(id, `customer.businessInfo.${field}`, reason));
  if (!present(profile.address))
    problems.push(missingField(id, 'customer.address', 'The address of the principal place of business is missing'));
  requireDocument(
    problems,
    id,
    documents,
    'MISSING_LEGAL_PRESENCE_DOCUMENT',
    LEGAL_PRESENCE,
    'A formation document of the business',
  );
  requireDocument(
    problems,
    id,
    documents,
    'MISSING_OWNERSHIP_STRUCTURE_DOCUMENT',
    OWNERSHIP_STRUCTURE,
    'A document of its ownership structure',
  );
  requireDocument(
    problems,
    id,
    documents,
    'MISSING_PROOF_OF_ADDRESS_DOCUMENT',
    PROOF_OF_ADDRESS,
    'A proof of the business address',
  );
  if (ownerCount === 0) {
    problems.push({
      resourceId: id,
      type: 'MISSING_BENEFICIAL_OWNER',
      reason: 'At least one beneficial owner must be added with POST /beneficial-owners',
    });
  }
  return problems;
}

// ----------------------------------------------------------------------------- deciding a submission

interface Decision {
  status: VerificationStatusValue;
  errors: VerificationErrorView[];
  /** The customer's kycStatus / kybStatus after the submission (unchanged when absent). */
  customerStatus?: KycStatusValue;
  /** What happens to a business's beneficial owners. */
  owners?: 'resolve' | 'submit';
}

async function decideIndividual(tx: Tx, customer: CustomerRow): Promise<Decision> {
  const documents = await documentsOfHolders(tx, customer.platform_id, [customer.id]);
  const problems = individualProblems(customer, documents);
  if (problems.length > 0) return { status: 'RESOLVE_ERRORS', errors: problems };
  const outcome = individualKycFor(customerProfile(customer).fullName as string);
  if (outcome?.completeSubmission === 'POOR_QUALITY_DOCUMENT') {
    // The identity documents on file at the first complete submission are found unusable;
    // once one has been replaced (or another uploaded), the submission goes through.
    const earlier = await store.verificationsOf(tx, customer.platform_id, customer.id);
    const alreadyFound = earlier.some((v) =>
      (JSON.parse(v.errors) as VerificationErrorView[]).some((e) => e.type === 'POOR_QUALITY_DOCUMENT'),
    );
    if (!alreadyFound) {
      const identity = documents.filter(
        (d) => IDENTITY_DOCUMENT_TYPES.includes(d.document_type as DocumentTypeValue) && d.quality_issue === null,
      );
      await flagPoorQuality(
        tx,
        identity.map((d) => d.id),
      );
      return { status: 'RESOLVE_ERRORS', errors: identity.map(poorQuality) };
    }
  }
  return { status: 'PENDING_MANUAL_REVIEW', errors: [], customerStatus: 'PENDING' };
}

async function decideBusiness(tx: Tx, customer: CustomerRow): Promise<Decision> {
  const info = (customerProfile(customer).businessInfo ?? {}) as { registrationNumber?: string };
  const outcome = businessKybFor(info.registrationNumber);
  if (outcome === 'REJECT') return { status: 'REJECTED', errors: [], customerStatus: 'REJECTED', owners: 'resolve' };
  if (outcome === 'APPROVE') return { status: 'APPROVED', errors: [], customerStatus: 'APPROVED', owners: 'resolve' };
  const documents = await documentsOfHolders(tx, customer.platform_id, [customer.id]);
  const owners = await ownersOfCustomer(tx, customer.platform_id, customer.id);
  const problems = businessProblems(customer, documents, owners.length);
  if (problems.length > 0) return { status: 'RESOLVE_ERRORS', errors: problems };
  return { status: 'IN_PROGRESS', errors: [], customerStatus: 'PENDING', owners: 'submit' };
}

/**
 * Carries out a decision in the caller's transaction: owners first, then the customer's
 * status (its event shows the owners as decided), the documents, and the verification with
 * its VERIFICATION.* event.
 */
async function record(tx: Tx, now: Date, customer: CustomerRow, decision: Decision): Promise<store.VerificationRow> {
  if (decision.owners === 'resolve') await resolveOwners(tx, customer.platform_id, customer.id, now);
  if (decision.owners === 'submit') await submitOwners(tx, customer.platform_id, customer.id, now);
  if (decision.customerStatus !== undefined) await changeCustomerStatus(tx, now, customer, decision.customerStatus);
  if (decision.status !== 'RESOLVE_ERRORS') await markSubmitted(tx, customer.platform_id, customer.id, now);
  const row: store.VerificationRow = {
    id: newId('Verification'),
    platform_id: customer.platform_id,
    customer_id: customer.id,
    status: decision.status,
    errors: JSON.stringify(decision.errors),
    created_at: iso(now),
    updated_at: iso(now),
  };
  await store.insertVerification(tx, row);
  await recordVerificationEvent(tx, now, row);
  return row;
}

async function recordVerificationEvent(tx: Tx, now: Date, row: store.VerificationRow): Promise<void> {
  await recordEvent(tx, {
    platformId: row.platform_id,
    type: `VERIFICATION.${row.status}`,
    resourceId: row.id,
    data: presentVerification(row),
    now,
  });
}

function checkSubmittable(customer: CustomerRow): void {
  const kind = customer.customer_type === 'INDIVIDUAL' ? 'kycStatus' : 'kybStatus';
  if (DECIDED.has(customer.status)) {
    throw invalidInput(
      [
        {
          field: 'customerId',
          message: `names a customer whose ${kind} is already ${customer.status}; a decided customer cannot be submitted again`,
        },
      ],
      `Customer ${customer.id} has already been ${customer.status.toLowerCase()}`,
    );
  }
  const unverified = unverifiedContactChannels(customer);
  if (unverified.length > 0) {
    throw invalidInput(
      [
        {
          field: 'customerId',
          message: `names a customer whose ${unverified.join(' and ')} must be verified first (verify-email, verify-phone)`,
        },
      ],
      'Contact verification is not complete',
    );
  }
}

/** Submits a customer for KYC or KYB; the sandbox decides at once (see rails/magic.ts). */
export async function createVerification(ctx: Ctx, customerId: string) {
  return ctx.db.transaction(async (tx) => {
    const customer = await activeCustomer(tx, ctx.platformId, customerId);
    checkSubmittable(customer);
    const decision =
      customer.customer_type === 'INDIVIDUAL'
        ? await decideIndividual(tx, customer)
        : await decideBusiness(tx, customer);
    return presentVerification(await record(tx, ctx.now, customer, decision));
  });
}

export async function getVerification(ctx: Ctx, id: string) {
  const row = await store.findVerification(ctx.db.k, ctx.platformId, id);
  if (row === undefined) throw apiError('REFERENCE_NOT_FOUND', `No verification ${id}`);
  return presentVerification(row);
}

export async function listVerifications(
  ctx: Ctx,
  query: { customerId?: string | undefined; verificationStatus?: string | undefined } & PageRequest,
) {
  const result = await store.listVerifications(
    ctx.db.k,
    ctx.platformId,
    { customerId: query.customerId, status: query.verificationStatus },
    query,
  );
  return toPage(result, presentVerification);
}

// ----------------------------------------------------------------------------- the hosted flow

/** How long a hosted KYC link can be used. */
export const KYC_LINK_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * A single-use link to railyard's stand-in for the hosted KYC/KYB flow. The status of the
 * customer does not change until the flow is completed or rejected on that page.
 */
export async function createCustomerKycLink(
  ctx: Ctx,
  customerId: string,
  body: { redirectUri?: string | undefined } | undefined,
  idempotencyKey: string | undefined,
  publicBaseUrl: string,
) {
  const request = { customerId, redirectUri: body?.redirectUri };
  const spec = { operationId: 'createCustomerKycLink', idempotencyKey, request, conflictCode: 'CONFLICT' as const };
  return runCommand(ctx, spec, async (tx) => {
    const customer = await activeCustomer(tx, ctx.platformId, customerId);
    const unverified = unverifiedContactChannels(customer);
    if (unverified.length > 0) {
      throw apiError('CONFLICT', `The customer's ${unverified.join(' and ')} must be verified before KYC can start`, {
        unverified,
      });
    }
    const now = iso(ctx.now);
    const token = randomBytes(24).toString('base64url');
    const row: store.KycLinkRow = {
      id: newId('KycLink'),
      platform_id: ctx.platformId,
      customer_id: customer.id,
      token,
      redirect_uri: body?.redirectUri ?? null,
      status: 'OPEN',
      expires_at: iso(new Date(ctx.now.getTime() + KYC_LINK_TTL_MS)),
      created_at: now,
      updated_at: now,
    };
    await store.insertKycLink(tx, row);
    const link = {
      kycUrl: `${publicBaseUrl}/_railyard/kyc/${encodeURIComponent(row.id)}?token=${token}`,
      expiresAt: row.expires_at,
      provider: 'SUMSUB' as const,
      token,
    };
    return { status: 201, body: link };
  });
}

async function openLink(q: Queryable, linkId: string, token: string): Promise<store.KycLinkRow | undefined> {
  const link = await store.findKycLink(q, linkId);
  return link !== undefined && link.token === token ? link : undefined;
}

/** What the hosted page shows before the tester decides; undefined for a link that is not valid. */
export async function describeKycLink(deps: Deps, linkId: string, token: string) {
  const link = await openLink(deps.db.k, linkId, token);
  if (link === undefined) return undefined;
  const now = await platformNowOf(deps, link.platform_id);
  const row = await findCustomerRow(deps.db.k, link.platform_id, link.customer_id);
  const customer = row?.deleted_at === null ? row : undefined;
  return {
    customerId: link.customer_id,
    customerType: customer?.customer_type,
    customerStatus: customer?.status ?? 'DELETED',
    linkStatus: link.status,
    expiresAt: link.expires_at,
    usable:
      link.status === 'OPEN' && link.expires_at > iso(now) && customer !== undefined && !DECIDED.has(customer.status),
  };
}

/**
 * The tester's answer on the hosted page: `complete` approves the customer, `reject` rejects
 * it. Beneficial owners of a business are decided by their own suffixes at that moment. The
 * customer's submission under review (if any) gets the decision; otherwise the decision is
 * recorded as a verification of its own.
 */
export async function completeKycLink(
  deps: Deps,
  linkId: string,
  token: string,
  outcome: 'complete' | 'reject',
): Promise<{ customer: CustomerView; redirectUri: string | null }> {
  return deps.db.transaction(async (tx) => {
    const link = await openLink(tx, linkId, token);
    if (link === undefined) throw apiError('REFERENCE_NOT_FOUND', 'No such KYC link');
    const now = await platformNowOf(deps, link.platform_id, tx);
    if (link.status !== 'OPEN') throw apiError('CONFLICT', `This KYC link was already used (${link.status})`);
    if (link.expires_at <= iso(now)) throw apiError('CONFLICT', 'This KYC link has expired; create a new one');
    const customer = await activeCustomer(tx, link.platform_id, link.customer_id);
    if (DECIDED.has(customer.status)) throw apiError('CONFLICT', `The customer is already ${customer.status}`);

    const status = outcome === 'complete' ? 'APPROVED' : 'REJECTED';
    if (customer.customer_type === 'BUSINESS') await resolveOwners(tx, link.platform_id, customer.id, now);
    const decided = await changeCustomerStatus(tx, now, customer, status);
    await markSubmitted(tx, link.platform_id, customer.id, now);
    const latest = (await store.verificationsOf(tx, link.platform_id, customer.id)).at(-1);
    if (latest !== undefined && (latest.status === 'PENDING_MANUAL_REVIEW' || latest.status === 'IN_PROGRESS')) {
      const updated = { ...latest, status, updated_at: iso(now) };
      await store.updateVerification(tx, latest.id, { status, updated_at: updated.updated_at });
      await recordVerificationEvent(tx, now, updated);
    } else {
      const row: store.VerificationRow = {
        id: newId('Verification'),
        platform_id: link.platform_id,
        customer_id: customer.id,
        status,
        errors: '[]',
        created_at: iso(now),
        updated_at: iso(now),
      };
      await store.insertVerification(tx, row);
      await recordVerificationEvent(tx, now, row);
    }
    await store.updateKycLink(tx, link.id, {
      status: outcome === 'complete' ? 'COMPLETED' : 'REJECTED',
      updated_at: iso(now),
    });
    return { customer: await presentCustomerRow(tx, decided), redirectUri: link.redirect_uri };
  });
}
