import { randomBytes } from 'node:crypto';
import { Type, type TSchema } from '@sinclair/typebox';
import { EEA_COUNTRIES } from '../../regions.js';
import { iso } from '../../clock.js';
import { isUniqueViolation, type Queryable, type Tx } from '../../db/index.js';
import { toPage, type PageRequest } from '../../db/pagination.js';
import { recordEvent } from '../../events/outbox.js';
import type { Ctx } from '../../http/context.js';
import { apiError, invalidInput, type ApiError, type FieldError } from '../../http/errors.js';
import { prune } from '../../http/schemas.js';
import { createValidators, toFieldErrors } from '../../http/validation.js';
import { newIdWhere } from '../../ids.js';
import {
  CARD_ISSUANCE_DEFAULT,
  CONTACT_VERIFICATION_CODE,
  cardIssuanceFor,
  individualKycFor,
} from '../../rails/magic.js';
import { ownersByCustomer, type BeneficialOwnerView } from '../beneficial-owners/service.js';
import { provisionInternalAccounts } from '../internal-accounts/service.js';
import { bootstrapWalletCredentials, contactChangeStep } from '../wallet-auth/service.js';
import type { SignedHeaders } from '../wallet-auth/signing.js';
import { readPlatformConfig } from '../platform/config.js';
import {
  BusinessCustomerCreateRequest,
  BusinessCustomerUpdateRequest,
  CustomerCreateRequest,
  IndividualCustomerCreateRequest,
  IndividualCustomerUpdateRequest,
  type CustomerInput,
  type KycStatusValue,
} from './schemas.js';
import { activeCustomer, type CustomerRow } from './lookup.js';
import * as store from './store.js';

export type CustomerView = Record<string, unknown> & { id: string; customerType: 'INDIVIDUAL' | 'BUSINESS' };

/** The version of the End User Terms railyard serves (GET /customers/end-user-terms). */
export const END_USER_TERMS_VERSION = '2025-10-13';

/**
 * The versions a consent may name: the current one, and `V1`, the identifier the reference's
 * own request bodies use for it, so a fixture built from the reference is taken unchanged.
 */
export const END_USER_TERMS_VERSIONS: readonly string[] = [END_USER_TERMS_VERSION, 'V1'];

/**
 * Customers whose region is in the European Economic Area verify their email and phone
 * before KYC, as the reference describes for EU customers; elsewhere no contact check applies.
 */
const CONTACT_VERIFICATION_REGIONS = EEA_COUNTRIES;

/** How long a contact verification code stays usable after it is sent. */
export const CONTACT_CODE_TTL_MS = 10 * 60 * 1000;

const INDIVIDUAL_PROFILE_KEYS = [
  'fullName',
  'birthDate',
  'nationality',
  'address',
  'idType',
  'identifier',
  'countryOfIssuance',
  'sourceOfFundsCategories',
  'sourceOfFundsOtherDescription',
  'sourceOfWealthCategories',
  'sourceOfWealthOtherDescription',
  'purposeOfAccount',
  'purposeOfAccountOtherDescription',
  'expectedMonthlyTransactionCount',
  'expectedMonthlyTransactionVolume',
  'annualIncomeRange',
  'netWorthRange',
  'pepStatus',
] as const;

type Profile = Record<string, unknown>;
type Channel = 'email' | 'phone';
interface ChannelState {
  status: 'PENDING' | 'VERIFIED';
  codeSentAt?: string;
}
type ContactState = Partial<Record<Channel, ChannelState>>;

// ----------------------------------------------------------------------------- presenting

function parse<T>(text: string | null): T | undefined {
  return text === null ? undefined : (JSON.parse(text) as T);
}

export function presentCustomer(row: CustomerRow, owners: BeneficialOwnerView[] = []): CustomerView {
  const profile = JSON.parse(row.profile) as Profile;
  const contact = parse<ContactState>(row.contact_verification);
  const terms = parse<Record<string, unknown>>(row.end_user_terms);
  const base = {
    id: row.id,
    platformCustomerId: row.platform_customer_id,
    customerType: row.customer_type as 'INDIVIDUAL' | 'BUSINESS',
    ...(terms !== undefined ? { endUserTermsConsent: terms } : {}),
    ...(row.region !== null ? { region: row.region } : {}),
    currencies: JSON.parse(row.currencies) as string[],
    ...(row.email !== null ? { email: row.email } : {}),
    ...(row.phone_number !== null ? { phoneNumber: row.phone_number } : {}),
    umaAddress: row.uma_address,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    isDeleted: row.deleted_at !== null,
    ...(contact !== undefined
      ? {
          contactVerification: Object.fromEntries(
            Object.entries(contact).map(([channel, state]) => [channel, state.status]),
          ),
        }
      : {}),
  };
  if (row.customer_type === 'INDIVIDUAL') {
    // The identification number is write-only: it is kept for verification, never shown.
    const { identifier: _identifier, ...visible } = profile;
    return { ...base, kycStatus: row.status, ...visible };
  }
  return { ...base, kybStatus: row.status, ...profile, beneficialOwners: owners };
}

/** Customers as responses show them; business customers carry their beneficial owners. */
export async function presentCustomers(q: Queryable, rows: CustomerRow[]): Promise<CustomerView[]> {
  const businesses = rows.filter((row) => row.customer_type === 'BUSINESS');
  const owners =
    businesses.length === 0
      ? new Map<string, BeneficialOwnerView[]>()
      : await ownersByCustomer(
          q,
          rows[0]!.platform_id,
          businesses.map((r) => r.id),
        );
  return rows.map((row) => presentCustomer(row, owners.get(row.id) ?? []));
}

export async function presentCustomerRow(q: Queryable, row: CustomerRow): Promise<CustomerView> {
  return (await presentCustomers(q, [row]))[0]!;
}

// ----------------------------------------------------------------------------- lookups for every area

/** The live customer at a UMA address (normalized with the platform's UMA domain), if any. */
export async function findActiveCustomerByUmaAddress(
  q: Queryable,
  platformId: string,
  umaAddress: string,
  platformDomain: string,
): Promise<CustomerRow | undefined> {
  const normalized = normalizeUmaAddress(umaAddress, platformDomain);
  return normalized === undefined ? undefined : store.findActiveByUmaAddress(q, platformId, normalized);
}

export function customerProfile(row: CustomerRow): Profile {
  return JSON.parse(row.profile) as Profile;
}

/** Channels that must still be verified before the customer may start KYC. */
export function unverifiedContactChannels(row: CustomerRow): Channel[] {
  const contact = parse<ContactState>(row.contact_verification) ?? {};
  return (Object.keys(contact) as Channel[]).filter((channel) => contact[channel]!.status !== 'VERIFIED');
}

const STATUSES_WITH_EVENTS = new Set<KycStatusValue>(['PENDING', 'APPROVED', 'REJECTED']);

async function recordStatusEvent(tx: Queryable, now: Date, row: CustomerRow): Promise<void> {
  if (!STATUSES_WITH_EVENTS.has(row.status as KycStatusValue)) return;
  const kind = row.customer_type === 'INDIVIDUAL' ? 'KYC' : 'KYB';
  await recordEvent(tx, {
    platformId: row.platform_id,
    type: `CUSTOMER.${kind}_${row.status}`,
    resourceId: row.id,
    data: await presentCustomerRow(tx, row),
    now,
  });
}

/**
 * Moves a customer's kycStatus (individual) or kybStatus (business) and records the matching
 * CUSTOMER.KYC_* / CUSTOMER.KYB_* event in the same transaction. Resolve beneficial owners
 * first: the event carries the customer as it is after the change.
 */
export async function changeCustomerStatus(
  tx: Tx,
  now: Date,
  row: CustomerRow,
  status: KycStatusValue,
): Promise<CustomerRow> {
  if (row.status === status) return row;
  const updated = { ...row, status, updated_at: iso(now) };
  await store.updateCustomer(tx, row.id, { status, updated_at: updated.updated_at });
  await recordStatusEvent(tx, now, updated);
  return updated;
}

// ----------------------------------------------------------------------------- input rules

/** Normalizes `$name@domain`, `name@domain`, `$name` or `name` (the platform's domain) to `$name@domain`. */
export function normalizeUmaAddress(value: string, platformDomain: string): string | undefined {
  const match = /^\$?([A-Za-z0-9._+-]{1,64})(?:@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+))?$/.exec(value.trim());
  if (!match) return undefined;
  return `$${match[1]!.toLowerCase()}@${(match[2] ?? platformDomain).toLowerCase()}`;
}

const SSN_LIKE = /^\d{3}-\d{2}-\d{4}$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function today(now: Date): string {
  return iso(now).slice(0, 10);
}

// A named schema is compiled through a reference: the validator already holds it by name.
const CreateRequestRef = Type.Ref(CustomerCreateRequest);

function schemaErrorsOf(schema: TSchema, body: unknown): FieldError[] {
  const validate = createValidators().compile(schema, 'body');
  if (validate(body)) return [];
  return toFieldErrors(validate.errors ?? [], createValidators().body);
}

/** The region a customer belongs to: as given, else where its address, business or nationality points. */
function regionOf(body: CustomerInput): string | undefined {
  const address = isObject(body.address) ? str(body.address.country) : undefined;
  const business = isObject(body.businessInfo) ? str(body.businessInfo.country) : undefined;
  return str(body.region) ?? address ?? business ?? str(body.nationality);
}

interface RuleContext {
  now: Date;
  supportedCurrencies: string[];
  umaDomain: string;
  /** The platform is in strict mode (PlatformSettings.strictIdentifiers). */
  strictIdentifiers: boolean;
}

/** The rules between fields that a schema cannot state, on a body of either type. */
function ruleErrors(body: CustomerInput, rules: RuleContext, mode: 'create' | 'update'): FieldError[] {
  const errors: FieldError[] = [];
  const add = (field: string, message: string, constraint?: FieldError['constraint']) =>
    errors.push(constraint === undefined ? { field, message } : { field, constraint, message });

  // Identification: the founding names are aliases of the reference's; both may not disagree.
  const idTypeField = body.idType !== undefined ? 'idType' : 'taxIdType';
  const identifierField = body.identifier !== undefined ? 'identifier' : 'taxIdentifier';
  if (body.idType !== undefined && body.taxIdType !== undefined && body.idType !== body.taxIdType) {
    add('taxIdType', 'must equal idType when both are given (taxIdType is another name for idType)');
  }
  if (body.identifier !== undefined && body.taxIdentifier !== undefined && body.identifier !== body.taxIdentifier) {
    add('taxIdentifier', 'must equal identifier when both are given (taxIdentifier is another name for identifier)');
  }
  const idType = str(body[idTypeField]);
  const identifier = str(body[identifierField]);
  // The reference gives the number as a plain string: its shape is a strict rule.
  if (
    rules.strictIdentifiers &&
    (idType === 'SSN' || idType === 'ITIN') &&
    identifier !== undefined &&
    !SSN_LIKE.test(identifier)
  ) {
    add(identifierField, `must be written ###-##-#### for ${idType} (strict identifiers)`, {
      pattern: SSN_LIKE.source,
    });
  }
  if (
    (idType === 'SSN' || idType === 'ITIN') &&
    body.countryOfIssuance !== undefined &&
    body.countryOfIssuance !== 'US'
  ) {
    add('countryOfIssuance', `must be US for ${idType}, which only the US issues`, { enum: ['US'] });
  }
  const birthDate = str(body.birthDate);
  if (birthDate !== undefined && birthDate > today(rules.now)) add('birthDate', 'must not be in the future');

  // An OTHER answer needs its description.
  const needsDescription = (list: unknown, description: unknown, field: string, prefix = '') => {
    const chose = Array.isArray(list) ? list.includes('OTHER') : list === 'OTHER';
    if (chose && (typeof description !== 'string' || description.trim() === ''))
      add(`${prefix}${field}`, 'is required when OTHER is chosen');
  };
  needsDescription(body.sourceOfFundsCategories, body.sourceOfFundsOtherDescription, 'sourceOfFundsOtherDescription');
  needsDescription(
    body.sourceOfWealthCategories,
    body.sourceOfWealthOtherDescription,
    'sourceOfWealthOtherDescription',
  );
  needsDescription(body.purposeOfAccount, body.purposeOfAccountOtherDescription, 'purposeOfAccountOtherDescription');
  if (isObject(body.businessInfo)) {
    const info = body.businessInfo;
    needsDescription(
      info.sourceOfFundsCategories,
      info.sourceOfFundsOtherDescription,
      'sourceOfFundsOtherDescription',
      'businessInfo.',
    );
    needsDescription(
      info.purposeOfAccount,
      info.purposeOfAccountOtherDescription,
      'purposeOfAccountOtherDescription',
      'businessInfo.',
    );
    const incorporatedOn = str(info.incorporatedOn);
    if (incorporatedOn !== undefined && incorporatedOn > today(rules.now))
      add('businessInfo.incorporatedOn', 'must not be in the future');
  }

  if (Array.isArray(body.currencies)) {
    const seen = new Set<string>();
    body.currencies.forEach((code, i) => {
      if (typeof code !== 'string') return;
      if (!rules.supportedCurrencies.includes(code)) {
        add(`currencies[${i}]`, `is not a currency this platform supports (${rules.supportedCurrencies.join(', ')})`, {
          enum: rules.supportedCurrencies,
        });
      } else if (seen.has(code)) {
        add(`currencies[${i}]`, `lists ${code} more than once`);
      }
      seen.add(code);
    });
  }
  if (typeof body.umaAddress === 'string' && normalizeUmaAddress(body.umaAddress, rules.umaDomain) === undefined) {
    add('umaAddress', 'must be a UMA address such as $name@domain.example (letters, digits and . _ + - before the @)');
  }
  if (mode === 'create') {
    const region = regionOf(body);
    if (region !== undefined && CONTACT_VERIFICATION_REGIONS.has(region)) {
      if (body.email === undefined)
        add('email', `is required for customers in ${region}, who verify their email before KYC`);
      if (body.phoneNumber === undefined)
        add('phoneNumber', `is required for customers in ${region}, who verify their phone before KYC`);
    }
  }
  return errors;
}

/** Throws every problem of a body at once; a wrong terms version alone gets its own code. */
function throwIfInvalid(errors: FieldError[], body: CustomerInput): void {
  if (!isObject(body) && errors.length === 0) errors.push({ field: 'body', message: 'must be a JSON object' });
  const terms = isObject(body) && isObject(body.endUserTermsConsent) ? body.endUserTermsConsent : undefined;
  const termsWrong = typeof terms?.termsVersion === 'string' && !END_USER_TERMS_VERSIONS.includes(terms.termsVersion);
  const termsError: FieldError = {
    field: 'endUserTermsConsent.termsVersion',
    constraint: { enum: [...END_USER_TERMS_VERSIONS] },
    message: `is not a version of the End User Terms; the current one is ${END_USER_TERMS_VERSION}`,
  };
  if (termsWrong && errors.length === 0) {
    throw apiError('END_USER_TERMS_VERSION_NOT_FOUND', `No End User Terms version ${String(terms!.termsVersion)}`, {
      errors: [termsError],
    });
  }
  if (termsWrong) errors.push(termsError);
  if (errors.length > 0) throw invalidInput(errors);
}

async function ruleContext(ctx: Ctx): Promise<RuleContext> {
  const config = await readPlatformConfig(ctx.db.k, ctx.platformId);
  return {
    now: ctx.now,
    supportedCurrencies: config.supportedCurrencies.map((c) => c.currencyCode),
    umaDomain: config.umaDomain,
    strictIdentifiers: ctx.settings.strictIdentifiers === true,
  };
}

// ----------------------------------------------------------------------------- create

/** A checked create request, ready to be written. */
export interface PreparedCustomer {
  row: CustomerRow;
}

function withAliases(body: CustomerInput): CustomerInput {
  const out = { ...body };
  if (out.idType === undefined && out.taxIdType !== undefined) out.idType = out.taxIdType;
  if (out.identifier === undefined && out.taxIdentifier !== undefined) out.identifier = out.taxIdentifier;
  delete out.taxIdType;
  delete out.taxIdentifier;
  return out;
}

function pick(source: Record<string, unknown>, keys: readonly string[]): Profile {
  const out: Profile = {};
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key];
  return out;
}

/**
 * Checks a create body (every problem in one 400) and turns it into a row. `schemaErrors`
 * are the ones the route's validation already found; without them the body is validated here
 * (bulk import rows).
 */
export async function prepareCustomer(
  ctx: Ctx,
  body: CustomerInput,
  schemaErrors?: FieldError[],
): Promise<PreparedCustomer> {
  const rules = await ruleContext(ctx);
  const errors = [
    ...(schemaErrors ?? schemaErrorsOf(CreateRequestRef, body)),
    ...(isObject(body) ? ruleErrors(body, rules, 'create') : []),
  ];
  throwIfInvalid(errors, body);

  const type = body.customerType as 'INDIVIDUAL' | 'BUSINESS';
  const clean = withAliases(
    prune(
      body,
      type === 'INDIVIDUAL' ? IndividualCustomerCreateRequest : BusinessCustomerCreateRequest,
    ) as CustomerInput,
  );
  const now = iso(ctx.now);
  const profile =
    type === 'INDIVIDUAL' ? pick(clean, INDIVIDUAL_PROFILE_KEYS) : pick(clean, ['address', 'businessInfo']);
  // A business starts UNVERIFIED; an individual's name suffix sets its status (see rails/magic.ts).
  const status =
    type === 'INDIVIDUAL' ? (individualKycFor(str(clean.fullName))?.kycStatusAtCreation ?? 'UNVERIFIED') : 'UNVERIFIED';
  const region = regionOf(clean);
  const contact: ContactState | undefined =
    region !== undefined && CONTACT_VERIFICATION_REGIONS.has(region)
      ? { email: { status: 'PENDING' }, phone: { status: 'PENDING' } }
      : undefined;
  const umaAddress =
    typeof clean.umaAddress === 'string'
      ? normalizeUmaAddress(clean.umaAddress, rules.umaDomain)!
      : `$c${randomBytes(6).toString('hex')}@${rules.umaDomain}`;
  return {
    row: {
      // A card issued without platformCardId reads the cardholder id's suffix: an id ending in
      // one (about 3 in 4,096) would leave such a card PROCESSING or CLOSED by chance.
      id: newIdWhere('Customer', (candidate) => cardIssuanceFor(candidate) === CARD_ISSUANCE_DEFAULT),
      platform_id: ctx.platformId,
      customer_type: type,
      platform_customer_id: str(clean.platformCustomerId) ?? randomBytes(8).toString('hex'),
      uma_address: umaAddress,
      region: region ?? null,
      currencies: JSON.stringify((clean.currencies as string[] | undefined) ?? rules.supportedCurrencies),
      email: str(clean.email) ?? null,
      phone_number: str(clean.phoneNumber) ?? null,
      status,
      profile: JSON.stringify(profile),
      end_user_terms: clean.endUserTermsConsent === undefined ? null : JSON.stringify(clean.endUserTermsConsent),
      contact_verification: contact === undefined ? null : JSON.stringify(contact),
      created_at: now,
      updated_at: now,
      deleted_at: null,
    },
  };
}

async function conflictOf(q: Queryable, row: CustomerRow): Promise<ApiError | undefined> {
  const sameId = await store.findActiveByPlatformCustomerId(q, row.platform_id, row.platform_customer_id);
  if (sameId !== undefined && sameId.id !== row.id) {
    return apiError('CONFLICT', `An active customer already has platformCustomerId ${row.platform_customer_id}`, {
      existingCustomerId: sameId.id,
    });
  }
  const sameUma = await store.findActiveByUmaAddress(q, row.platform_id, row.uma_address);
  if (sameUma !== undefined && sameUma.id !== row.id)
    return apiError('UMA_ADDRESS_EXISTS', `The UMA address ${row.uma_address} is taken`);
  return undefined;
}

/**
 * Writes a prepared customer in one transaction: the conflict checks, the row, the event of
 * its initial status and `alsoInTx` (the bulk import records its progress there).
 */
export async function createPreparedCustomer(
  ctx: Ctx,
  prepared: PreparedCustomer,
  alsoInTx?: (tx: Tx, customer: CustomerView) => Promise<void>,
): Promise<CustomerView> {
  const { row } = prepared;
  try {
    return await ctx.db.transaction(async (tx) => {
      const conflict = await conflictOf(tx, row);
      if (conflict !== undefined) throw conflict;
      await store.insertCustomer(tx, row);
      await provisionInternalAccounts(tx, {
        platformId: row.platform_id,
        customerId: row.id,
        now: ctx.now,
        fresh: 'owner',
      });
      await bootstrapWalletCredentials(tx, row.platform_id, row.id, row.email, ctx.now);
      await recordStatusEvent(tx, ctx.now, row);
      const view = presentCustomer(row);
      if (alsoInTx !== undefined) await alsoInTx(tx, view);
      return view;
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    // A concurrent request took the platformCustomerId or UMA address first.
    throw (
      (await conflictOf(ctx.db.k, row)) ?? apiError('CONFLICT', 'A concurrent request created a conflicting customer')
    );
  }
}

export async function createCustomer(
  ctx: Ctx,
  body: CustomerInput,
  schemaErrors?: FieldError[],
): Promise<CustomerView> {
  return createPreparedCustomer(ctx, await prepareCustomer(ctx, body, schemaErrors));
}

// ----------------------------------------------------------------------------- read, update, delete

export async function getCustomerById(ctx: Ctx, customerId: string): Promise<CustomerView> {
  return presentCustomerRow(ctx.db.k, await activeCustomer(ctx.db.k, ctx.platformId, customerId));
}

export async function listCustomers(ctx: Ctx, query: store.CustomerFilters & PageRequest) {
  const filters = { ...query };
  if (query.umaAddress !== undefined) {
    const { umaDomain } = await readPlatformConfig(ctx.db.k, ctx.platformId);
    filters.umaAddress = normalizeUmaAddress(query.umaAddress, umaDomain) ?? query.umaAddress;
  }
  const result = await store.listCustomers(ctx.db.k, ctx.platformId, filters, query);
  const views = await presentCustomers(ctx.db.k, result.rows);
  return toPage({ ...result, rows: views }, (view) => view);
}

/** A contact channel whose value changes must be verified again. */
function resetChangedChannels(
  contact: ContactState | undefined,
  emailChanged: boolean,
  phoneChanged: boolean,
): ContactState | undefined {
  if (contact === undefined) return undefined;
  const next = { ...contact };
  if (emailChanged && next.email) next.email = { status: 'PENDING' };
  if (phoneChanged && next.phone) next.phone = { status: 'PENDING' };
  return next;
}

export async function updateCustomerById(
  ctx: Ctx,
  customerId: string,
  body: CustomerInput,
  schemaErrors: FieldError[],
  headers: SignedHeaders = {},
): Promise<{ status: 200 | 202; body: unknown }> {
  const existing = await activeCustomer(ctx.db.k, ctx.platformId, customerId);
  const rules = await ruleContext(ctx);
  const errors = [...schemaErrors, ...(isObject(body) ? ruleErrors(body, rules, 'update') : [])];
  if (isObject(body) && typeof body.customerType === 'string' && body.customerType !== existing.customer_type) {
    errors.push({
      field: 'customerType',
      constraint: { enum: [existing.customer_type] },
      message: `must be ${existing.customer_type}, the type of this customer`,
    });
  }
  throwIfInvalid(errors, body);
  const type = existing.customer_type as 'INDIVIDUAL' | 'BUSINESS';
  const patch = withAliases(
    prune(
      body,
      type === 'INDIVIDUAL' ? IndividualCustomerUpdateRequest : BusinessCustomerUpdateRequest,
    ) as CustomerInput,
  );

  // A new email or phone number that a wallet logs in with is a signed request (wallet-auth).
  const newEmail = str(patch.email);
  const newPhone = str(patch.phoneNumber);
  const wallet = await contactChangeStep(
    ctx,
    customerId,
    {
      email: newEmail !== undefined && newEmail !== existing.email ? newEmail : undefined,
      phoneNumber: newPhone !== undefined && newPhone !== existing.phone_number ? newPhone : undefined,
    },
    patch,
    headers,
  );
  if (wallet.kind === 'challenge') return { status: 202, body: wallet.body };

  const updated = await ctx.db
    .transaction(async (tx) => {
      if (wallet.kind === 'signed') await wallet.finish(tx);
      const row = await activeCustomer(tx, ctx.platformId, customerId);
      const profile = customerProfile(row);
      if (type === 'INDIVIDUAL') {
        Object.assign(profile, pick(patch, INDIVIDUAL_PROFILE_KEYS));
      } else {
        if (patch.address !== undefined) profile.address = patch.address;
        if (isObject(patch.businessInfo))
          profile.businessInfo = { ...(profile.businessInfo as Profile | undefined), ...patch.businessInfo };
      }
      const email = str(patch.email) ?? row.email;
      const phone = str(patch.phoneNumber) ?? row.phone_number;
      const contact = resetChangedChannels(
        parse<ContactState>(row.contact_verification),
        email !== row.email,
        phone !== row.phone_number,
      );
      const next: CustomerRow = {
        ...row,
        profile: JSON.stringify(profile),
        currencies: patch.currencies !== undefined ? JSON.stringify(patch.currencies) : row.currencies,
        email,
        phone_number: phone,
        uma_address:
          typeof patch.umaAddress === 'string'
            ? normalizeUmaAddress(patch.umaAddress, rules.umaDomain)!
            : row.uma_address,
        end_user_terms:
          patch.endUserTermsConsent !== undefined ? JSON.stringify(patch.endUserTermsConsent) : row.end_user_terms,
        contact_verification: contact === undefined ? null : JSON.stringify(contact),
        updated_at: iso(ctx.now),
      };
      const conflict = await conflictOf(tx, next);
      if (conflict !== undefined) throw conflict;
      const { id: _id, platform_id: _p, customer_type: _t, created_at: _c, ...changes } = next;
      await store.updateCustomer(tx, row.id, changes);
      return next;
    })
    .catch(async (err: unknown) => {
      if (!isUniqueViolation(err)) throw err;
      throw apiError('UMA_ADDRESS_EXISTS', 'A concurrent request took this UMA address');
    });
  return { status: 200, body: await presentCustomerRow(ctx.db.k, updated) };
}

/** Deletes a customer; it stays listable with isIncludingDeleted and answers 410 to a second delete. */
export async function deleteCustomerById(ctx: Ctx, customerId: string): Promise<CustomerView> {
  const deleted = await ctx.db.transaction(async (tx) => {
    const row = await activeCustomer(tx, ctx.platformId, customerId, 'gone');
    const now = iso(ctx.now);
    await store.updateCustomer(tx, row.id, { deleted_at: now, updated_at: now });
    return { ...row, deleted_at: now, updated_at: now };
  });
  return presentCustomerRow(ctx.db.k, deleted);
}

export function getEndUserTerms(publicBaseUrl: string) {
  return {
    version: END_USER_TERMS_VERSION,
    url: `${publicBaseUrl}/_railyard/end-user-terms/${END_USER_TERMS_VERSION}`,
  };
}

// ----------------------------------------------------------------------------- contact verification

function channelState(row: CustomerRow, channel: Channel): { contact: ContactState; state: ChannelState } {
  const contact = parse<ContactState>(row.contact_verification);
  const state = contact?.[channel];
  const name = channel === 'email' ? 'email address' : 'phone number';
  if (contact === undefined || state === undefined) {
    throw apiError(
      'CONFLICT',
      `This customer's ${name} needs no verification: contact verification applies to customers in the EEA`,
    );
  }
  if (state.status === 'VERIFIED') throw apiError('CONFLICT', `This customer's ${name} is already verified`);
  return { contact, state };
}

/** Makes `phone` the customer's verified number (a completed 2FA reset of SMS_OTP proved it). */
export async function setVerifiedPhone(tx: Queryable, row: CustomerRow, phone: string, now: Date): Promise<void> {
  const contact = parse<ContactState>(row.contact_verification) ?? {};
  const next: ContactState = { ...contact, phone: { status: 'VERIFIED' } };
  await store.updateCustomer(tx, row.id, {
    phone_number: phone,
    contact_verification: JSON.stringify(next),
    updated_at: iso(now),
  });
}

/** Sends (in the sandbox: pretends to send) a one-time code to the customer's email or phone. */
export async function sendContactVerification(ctx: Ctx, customerId: string, channel: Channel): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    const row = await activeCustomer(tx, ctx.platformId, customerId);
    const { contact } = channelState(row, channel);
    const next: ContactState = { ...contact, [channel]: { status: 'PENDING', codeSentAt: iso(ctx.now) } };
    await store.updateCustomer(tx, row.id, { contact_verification: JSON.stringify(next) });
  });
}

export async function confirmContactVerification(
  ctx: Ctx,
  customerId: string,
  channel: Channel,
  code: string,
): Promise<CustomerView> {
  const updated = await ctx.db.transaction(async (tx) => {
    const row = await activeCustomer(tx, ctx.platformId, customerId);
    const { contact, state } = channelState(row, channel);
    const path = channel === 'email' ? 'verify-email' : 'verify-phone';
    const wrong = (message: string) =>
      invalidInput([{ field: 'code', message }], 'The verification code was not accepted');
    if (state.codeSentAt === undefined)
      throw wrong(`no code has been sent yet; call POST /customers/{customerId}/${path} first`);
    if (Date.parse(state.codeSentAt) + CONTACT_CODE_TTL_MS <= ctx.now.getTime())
      throw wrong(`has expired; send a new one with POST /customers/{customerId}/${path}`);
    if (code !== CONTACT_VERIFICATION_CODE) throw wrong('is not the code that was sent');
    const next: ContactState = { ...contact, [channel]: { status: 'VERIFIED' } };
    const changes = { contact_verification: JSON.stringify(next), updated_at: iso(ctx.now) };
    await store.updateCustomer(tx, row.id, changes);
    return { ...row, ...changes };
  });
  return presentCustomerRow(ctx.db.k, updated);
}
