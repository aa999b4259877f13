// Strong Customer Authentication for customers in the EU and EEA (see region.ts; every
// operation here is 409 for anyone else): the factors they enroll, the login that opens an
// SCA session, and the login-security state that locks them out after failed proofs.
//
// Factors: SMS_OTP is implicit (the verified phone); TOTP (an RFC 6238 secret: the sandbox
// code 123456 works, and so does a code any authenticator computes from the secret) and
// PASSKEY (a real WebAuthn registration, one per customer) are enrolled in two steps. A
// proof that fails changes nothing but the failed-attempt count.
//
// Lockout, shared by failed logins and FAILED_LOGIN_ATTEMPT events: the 5th failure locks
// for 15 minutes, the 6th 30 minutes, the 7th an hour, the 8th a day, the 9th suspends
// until RESET_PASSWORD_COMPLETED. A login that succeeds clears the count.

import { createHash, randomBytes } from 'node:crypto';
import { iso } from '../../clock.js';
import { DEFAULT_PASSKEY_ORIGINS, scaRelyingPartyId } from '../../config.js';
import { secretHash } from '../../crypto/sealing.js';
import { verifyTotp, base32Encode, totpUri } from '../../crypto/totp.js';
import { type StoredPasskey, verifyPasskeyAssertion, verifyPasskeyRegistration } from '../../crypto/webauthn.js';
import type { Queryable, Tx } from '../../db/index.js';
import type { Ctx } from '../../http/context.js';
import { apiError, FieldErrors, invalidInput } from '../../http/errors.js';
import { newId } from '../../ids.js';
import { isOnRelyingParty, originHost } from '../../passkey-origins.js';
import { SCA_SANDBOX_CODE } from '../../rails/magic.js';
import { activeCustomer, type CustomerRow } from '../customers/lookup.js';
import { unverifiedContactChannels } from '../customers/service.js';
import { inScaRegion } from './region.js';
import type { ProofInput, ScaFactorConfirmInput, ScaFactorName } from './schemas.js';
import * as store from './store.js';

/** How long an enrollment or a login may be completed once started. */
export const SCA_START_TTL_MS = 10 * 60_000;
/** How long an SCA login lasts. */
export const SCA_SESSION_TTL_MS = 180 * 86_400_000;
/** The lock each failure count brings; from SUSPEND_AT failures on, the login is suspended. */
const LOCKS_MS: Record<number, number> = { 5: 15 * 60_000, 6: 30 * 60_000, 7: 3_600_000, 8: 86_400_000 };
const SUSPEND_AT = 9;
const RECOVERY_CODES = 8;

// ------------------------------------------------------------------------------- shared

/** The customer, when SCA applies to it: unknown is 404 USER_NOT_FOUND, outside the EU/EEA 409. */
export async function scaCustomer(q: Queryable, ctx: Ctx, customerId: string | undefined): Promise<CustomerRow> {
  if (customerId === undefined || customerId === '') throw apiError('USER_NOT_FOUND', 'customerId names no customer');
  const customer = await activeCustomer(q, ctx.platformId, customerId);
  if (!inScaRegion(customer)) {
    throw apiError(
      'CONFLICT',
      `Strong Customer Authentication does not apply to customer ${customerId}: its address is outside the EU and EEA`,
    );
  }
  return customer;
}

/** SMS_OTP is the customer's verified phone: there is none until contact verification confirmed it. */
function hasVerifiedPhone(customer: CustomerRow): boolean {
  return customer.phone_number !== null && !unverifiedContactChannels(customer).includes('phone');
}

/** Where passkeys are enrolled (RAILYARD_PASSKEY_ORIGINS); the first one's host is the relying party. */
function passkeyOrigins(ctx: Ctx): string[] {
  return ctx.deps.config.passkeyOrigins ?? DEFAULT_PASSKEY_ORIGINS;
}

/**
 * Where an enrolled passkey may answer a challenge: the configured origins on its relying
 * party, and the origin it was enrolled on (the configuration may have changed since).
 */
export function passkeyUseOrigins(ctx: Ctx, passkey: StoredPasskey): string[] {
  const configured = passkeyOrigins(ctx).filter((origin) => {
    const host = originHost(origin);
    return host !== null && isOnRelyingParty(host, passkey.rpId);
  });
  return configured.includes(passkey.origin) ? configured : [...configured, passkey.origin];
}

function presentFactor(row: store.FactorRow) {
  return {
    factor: row.factor as ScaFactorName,
    ...(row.credential_id !== null ? { credentialId: row.credential_id } : {}),
    ...(row.name !== null ? { name: row.name } : {}),
  };
}

/** A WebAuthn object in either shape clients send: the reference's camelCase fields or the browser's JSON. */
function webauthnFields(value: Record<string, unknown>): Record<string, string | string[] | undefined> {
  const response = (typeof value.response === 'object' && value.response !== null ? value.response : {}) as Record<
    string,
    unknown
  >;
  const text = (...candidates: unknown[]) => candidates.find((c): c is string => typeof c === 'string');
  const transports = Array.isArray(value.transports)
    ? value.transports
    : Array.isArray(response.transports)
      ? response.transports
      : undefined;
  return {
    credentialId: text(value.credentialId, value.rawId, value.id),
    clientDataJson: text(value.clientDataJson, response.clientDataJSON),
    attestationObject: text(value.attestationObject, response.attestationObject),
    authenticatorData: text(value.authenticatorData, response.authenticatorData),
    signature: text(value.signature, response.signature),
    userHandle: text(value.userHandle, response.userHandle),
    transports: transports?.filter((t): t is string => typeof t === 'string'),
  };
}

function clientDataOf(clientDataJson: string): { challenge?: unknown; origin?: unknown } {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(clientDataJson, 'base64url').toString('utf8'));
    return typeof parsed === 'object' && parsed !== null ? parsed : {};
  } catch {
    return {};
  }
}

// ------------------------------------------------------------------------------- factors

export async function listFactors(ctx: Ctx, customerId: string | undefined) {
  const customer = await scaCustomer(ctx.db.k, ctx, customerId);
  const rows = await store.listFactors(ctx.db.k, ctx.platformId, customer.id);
  const sms = hasVerifiedPhone(customer) ? [{ factor: 'SMS_OTP' as const }] : [];
  return { factors: [...sms, ...rows.map(presentFactor)] };
}

export async function startEnrollment(ctx: Ctx, customerId: string | undefined, input: { type: 'TOTP' | 'PASSKEY' }) {
  return ctx.db.transaction(async (tx) => {
    const customer = await scaCustomer(tx, ctx, customerId);
    const enrolled = await store.listFactors(tx, ctx.platformId, customer.id);
    const now = ctx.now;
    const challenge = {
      id: newId('ScaChallenge'),
      platform_id: ctx.platformId,
      customer_id: customer.id,
      purpose: 'ENROLL',
      factor: input.type,
      expires_at: iso(new Date(now.getTime() + SCA_START_TTL_MS)),
      used_at: null,
      created_at: iso(now),
    };
    if (input.type === 'TOTP') {
      if (enrolled.some((f) => f.factor === 'TOTP')) {
        throw apiError('CONFLICT', `Customer ${customer.id} has a TOTP factor already; a 2FA reset replaces it`);
      }
      const secret = randomBytes(20);
      await store.insertChallenge(tx, { ...challenge, subject: secret.toString('hex'), challenge: null });
      return {
        type: 'TOTP' as const,
        secret: secret.toString('hex'),
        secretBase32Encoded: base32Encode(secret),
        totpUri: totpUri(secret, 'Railyard', customer.platform_customer_id ?? customer.id),
      };
    }
    if (enrolled.some((f) => f.factor === 'PASSKEY')) {
      throw apiError(
        'PASSKEY_ALREADY_ENROLLED',
        `Customer ${customer.id} has a passkey already; delete it (DELETE /sca/factors/{credentialId}) to enroll another`,
      );
    }
    const webauthnChallenge = randomBytes(32).toString('base64url');
    await store.insertChallenge(tx, { ...challenge, subject: null, challenge: webauthnChallenge });
    const origins = passkeyOrigins(ctx);
    const relyingPartyId = scaRelyingPartyId(origins);
    return {
      type: 'PASSKEY' as const,
      options: {
        challenge: webauthnChallenge,
        rp: { id: relyingPartyId, name: 'Railyard sandbox' },
        user: {
          id: Buffer.from(createHash('sha256').update(customer.id).digest().subarray(0, 16)).toString('base64url'),
          name: customer.platform_customer_id ?? customer.id,
          displayName: customer.platform_customer_id ?? customer.id,
        },
        pubKeyCredParams: [
          { type: 'public-key', alg: -7 },
          { type: 'public-key', alg: -257 },
        ],
        timeout: SCA_START_TTL_MS,
        attestation: 'none',
        authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
      },
      allowedOrigins: origins,
      relyingPartyId,
    };
  });
}

function recoveryCode(): string {
  const text = base32Encode(randomBytes(8)).slice(0, 12);
  return `${text.slice(0, 4)}-${text.slice(4, 8)}-${text.slice(8)}`;
}

/**
 * A TOTP code: the sandbox code, or the code of the secret now (the process clock, as an
 * authenticator app keeps it) for a step after `lastStep`. Answers the step a real code
 * used (to be kept), null for the sandbox code, false when it does not fit.
 */
function totpCodeFits(ctx: Ctx, secretHex: string, code: string, lastStep: number | null): number | null | false {
  if (code === SCA_SANDBOX_CODE) return null;
  const step = verifyTotp(Buffer.from(secretHex, 'hex'), code, ctx.deps.clock.nowMs());
  if (step === null || (lastStep !== null && step <= lastStep)) return false;
  return step;
}

/** A TOTP code against the customer's enrolled factor; a real code's step is kept so it is not accepted again. */
async function acceptTotp(tx: Tx, ctx: Ctx, factor: store.FactorRow, code: string): Promise<boolean> {
  const lastStep = factor.last_totp_step === null ? null : Number(factor.last_totp_step);
  const step = totpCodeFits(ctx, factor.secret!, code, lastStep);
  if (step === false) return false;
  if (step !== null) await store.updateFactorTotpStep(tx, ctx.platformId, factor.id, step);
  return true;
}

export async function confirmEnrollment(ctx: Ctx, customerId: string | undefined, input: ScaFactorConfirmInput) {
  return ctx.db.transaction(async (tx) => {
    const customer = await scaCustomer(tx, ctx, customerId);
    const nowIso = iso(ctx.now);
    const open = await store.openChallenges(tx, ctx.platformId, customer.id, 'ENROLL', nowIso);
    const enrolled = await store.listFactors(tx, ctx.platformId, customer.id);
    if (input.type === 'TOTP') {
      const started = open.find((c) => c.factor === 'TOTP' && c.subject === input.secret);
      if (started === undefined) {
        throw invalidInput([
          { field: 'secret', message: 'is not the secret of an open TOTP enrollment (it expired, or was confirmed)' },
        ]);
      }
      const step = totpCodeFits(ctx, input.secret, input.code, null);
      if (step === false) {
        throw invalidInput([
          { field: 'code', message: 'is not the current code of this secret (the sandbox code is 123456)' },
        ]);
      }
      if (enrolled.some((f) => f.factor === 'TOTP') || !(await store.useChallenge(tx, started.id, nowIso))) {
        throw apiError('CONFLICT', `Customer ${customer.id} has a TOTP factor already`);
      }
      const codes = Array.from({ length: RECOVERY_CODES }, recoveryCode);
      await store.insertFactor(tx, {
        id: newId('ScaFactor'),
        platform_id: ctx.platformId,
        customer_id: customer.id,
        factor: 'TOTP',
        credential_id: null,
        name: null,
        secret: input.secret,
        last_totp_step: step,
        passkey: null,
        recovery_codes: JSON.stringify(codes.map(secretHash)),
        created_at: nowIso,
      });
      return { type: 'TOTP' as const, recoveryCodes: codes };
    }

    const credential = webauthnFields(input.credential);
    const errors = new FieldErrors();
    for (const field of ['credentialId', 'clientDataJson', 'attestationObject'] as const) {
      if (credential[field] === undefined) errors.add(`credential.${field}`, 'is required');
    }
    errors.throwIfAny();
    const clientData = clientDataOf(credential.clientDataJson as string);
    if (clientData.origin !== input.origin || !passkeyOrigins(ctx).includes(input.origin)) {
      throw invalidInput([
        {
          field: 'origin',
          message: `must be the origin the credential was made on and one of ${passkeyOrigins(ctx).join(', ')}`,
        },
      ]);
    }
    const started = open.find((c) => c.factor === 'PASSKEY' && c.challenge === clientData.challenge);
    if (started === undefined) {
      throw invalidInput([
        { field: 'credential', message: 'answers no open passkey enrollment (it expired, or was confirmed)' },
      ]);
    }
    const verified = await verifyPasskeyRegistration({
      credentialId: credential.credentialId as string,
      clientDataJson: credential.clientDataJson as string,
      attestationObject: credential.attestationObject as string,
      transports: credential.transports as string[] | undefined,
      challenge: started.challenge!,
      requireUserVerification: true,
      rpId: scaRelyingPartyId(passkeyOrigins(ctx)),
    });
    if (!verified.ok) throw invalidInput([{ field: 'credential', message: verified.reason }]);
    if (enrolled.some((f) => f.factor === 'PASSKEY') || !(await store.useChallenge(tx, started.id, nowIso))) {
      throw apiError('PASSKEY_ALREADY_ENROLLED', `Customer ${customer.id} has a passkey already`);
    }
    const row: store.FactorRow = {
      id: newId('ScaFactor'),
      platform_id: ctx.platformId,
      customer_id: customer.id,
      factor: 'PASSKEY',
      credential_id: verified.value.credentialId,
      name: 'Passkey',
      secret: null,
      last_totp_step: null,
      passkey: JSON.stringify(verified.value),
      recovery_codes: null,
      created_at: nowIso,
    };
    await store.insertFactor(tx, row);
    return { type: 'PASSKEY' as const, factor: presentFactor(row) };
  });
}

/** Deletes a passkey (the one factor with a credentialId); SMS_OTP always remains. */
export async function deleteFactor(ctx: Ctx, customerId: string | undefined, credentialId: string): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    const customer = await scaCustomer(tx, ctx, customerId);
    const factors = await store.listFactors(tx, ctx.platformId, customer.id);
    const passkey = factors.find((f) => f.credential_id === credentialId);
    if (passkey === undefined) {
      throw apiError('REFERENCE_NOT_FOUND', `Customer ${customer.id} has no factor with credentialId ${credentialId}`);
    }
    await store.deleteFactor(tx, ctx.platformId, passkey.id);
  });
}

// ------------------------------------------------------------------------------- login

export async function startLogin(ctx: Ctx, customerId: string | undefined, input: { factor: ScaFactorName }) {
  return ctx.db.transaction(async (tx) => {
    const customer = await scaCustomer(tx, ctx, customerId);
    const enrolled = await store.listFactors(tx, ctx.platformId, customer.id);
    const factor = enrolled.find((f) => f.factor === input.factor);
    if (input.factor !== 'SMS_OTP' && factor === undefined) {
      throw invalidInput([{ field: 'factor', message: `is not a factor customer ${customer.id} has enrolled` }]);
    }
    if (input.factor === 'SMS_OTP' && !hasVerifiedPhone(customer)) {
      throw invalidInput([
        {
          field: 'factor',
          message: `is SMS_OTP, but customer ${customer.id} has no verified phone yet (POST /customers/{customerId}/verify-phone, then /confirm)`,
        },
      ]);
    }
    const expiresAt = iso(new Date(ctx.now.getTime() + SCA_START_TTL_MS));
    const passkey = factor?.passkey ? (JSON.parse(factor.passkey) as StoredPasskey) : undefined;
    const challenge = passkey !== undefined ? randomBytes(32).toString('hex') : null;
    const row = {
      id: newId('ScaChallenge'),
      platform_id: ctx.platformId,
      customer_id: customer.id,
      purpose: 'LOGIN',
      factor: input.factor,
      subject: null,
      challenge,
      expires_at: expiresAt,
      used_at: null,
      created_at: iso(ctx.now),
    };
    await store.insertChallenge(tx, row);
    if (input.factor === 'SMS_OTP') return { factor: input.factor, challengeId: row.id, expiresAt };
    if (passkey === undefined) return { factor: input.factor };
    return {
      factor: input.factor,
      passkeyOptions: assertionOptions(passkey, challenge!),
      allowedOrigins: passkeyUseOrigins(ctx, passkey),
      relyingPartyId: passkey.rpId,
    };
  });
}

/** The proof fields a factor takes, all problems at once. */
function checkProofShape(factor: ScaFactorName, input: ProofInput, needsChallengeId: boolean) {
  const errors = new FieldErrors();
  const has = (value: unknown) => value !== undefined && value !== null;
  if (factor === 'PASSKEY') {
    if (!has(input.passkeyAssertion)) errors.add('passkeyAssertion', 'is required for a PASSKEY proof');
    if (!has(input.origin)) errors.add('origin', 'is required with passkeyAssertion');
    if (has(input.code)) errors.add('code', 'cannot be given for a PASSKEY proof');
  } else {
    if (!has(input.code)) errors.add('code', `is required for a ${factor} proof`);
    if (has(input.passkeyAssertion)) errors.add('passkeyAssertion', `cannot be given for a ${factor} proof`);
  }
  if (needsChallengeId && !has(input.challengeId)) errors.add('challengeId', 'is required for an SMS_OTP proof');
  errors.throwIfAny();
}

/** A proof's check. `counts: false`: a proof of the wrong kind or shape, refused without counting as a failed attempt. */
type ProofResult = { ok: true } | { ok: false; field: string; message: string; counts?: false };

/** The fields an assertion needs, so a malformed one is refused as such (not counted as a wrong proof). */
function assertionShape(value: Record<string, unknown>): ProofResult {
  const fields = webauthnFields(value);
  const missing = (['credentialId', 'clientDataJson', 'authenticatorData', 'signature'] as const).filter(
    (name) => typeof fields[name] !== 'string' || fields[name] === '',
  );
  if (missing.length === 0) return { ok: true };
  return { ok: false, field: 'passkeyAssertion', message: `lacks ${missing.join(', ')}`, counts: false };
}

/** The WebAuthn challenge an assertion says it signed (base64url, as clientDataJSON carries it). */
function signedChallenge(value: Record<string, unknown>): unknown {
  const clientDataJson = webauthnFields(value).clientDataJson;
  return typeof clientDataJson === 'string' ? clientDataOf(clientDataJson).challenge : undefined;
}

/** Whether an assertion signed this challenge (a hex string whose UTF-8 bytes the client was given). */
export function assertionAnswers(value: Record<string, unknown>, challenge: string | null): boolean {
  return challenge !== null && signedChallenge(value) === Buffer.from(challenge, 'utf8').toString('base64url');
}

/** Checks a proof against the customer's factor; a passkey's counter moves on when it verifies. */
async function checkProof(
  tx: Tx,
  ctx: Ctx,
  factor: ScaFactorName,
  enrolled: store.FactorRow | undefined,
  challenge: store.ChallengeRow,
  input: ProofInput,
): Promise<ProofResult> {
  if (factor === 'SMS_OTP') {
    return input.code === SCA_SANDBOX_CODE
      ? { ok: true }
      : { ok: false, field: 'code', message: 'is not the code sent (the sandbox code is 123456)' };
  }
  if (factor === 'TOTP') {
    return (await acceptTotp(tx, ctx, enrolled!, input.code!))
      ? { ok: true }
      : {
          ok: false,
          field: 'code',
          message: 'is not the current code of the authenticator (the sandbox code is 123456)',
        };
  }
  const passkey = JSON.parse(enrolled!.passkey!) as StoredPasskey;
  const shape = assertionShape(input.passkeyAssertion!);
  if (!shape.ok) return shape;
  const assertion = webauthnFields(input.passkeyAssertion!);
  const origins = passkeyUseOrigins(ctx, passkey);
  if (!origins.includes(input.origin!)) {
    return { ok: false, field: 'origin', message: `must be ${origins.join(' or ')}, where this passkey is used` };
  }
  const verified = await verifyPasskeyAssertion(
    {
      credentialId: assertion.credentialId as string,
      clientDataJson: assertion.clientDataJson as string,
      authenticatorData: assertion.authenticatorData as string,
      signature: assertion.signature as string,
      userHandle: assertion.userHandle as string | undefined,
    },
    passkey,
    challenge.challenge!,
    // The assertion was made where the proof says: its client data names that origin.
    { requireUserVerification: true, origins: [input.origin!] },
  );
  if (!verified.ok) return { ok: false, field: 'passkeyAssertion', message: verified.reason };
  await store.updateFactorPasskey(
    tx,
    ctx.platformId,
    enrolled!.id,
    JSON.stringify({ ...passkey, counter: verified.value.newCounter }),
  );
  return { ok: true };
}

/**
 * A per-operation proof (beneficiary trust, a payment's challenge): a code (the sandbox code,
 * or the current code of an enrolled TOTP), or an assertion of the enrolled passkey over
 * `webauthnChallenge`. `factor` narrows what is accepted (a payment's challenge never takes TOTP).
 */
export async function verifyOperationProof(
  tx: Tx,
  ctx: Ctx,
  customerId: string,
  input: ProofInput,
  webauthnChallenge: string | null,
  accepts: ScaFactorName[] = ['SMS_OTP', 'TOTP', 'PASSKEY'],
): Promise<ProofResult> {
  const enrolled = await store.listFactors(tx, ctx.platformId, customerId);
  if (input.passkeyAssertion !== undefined && input.passkeyAssertion !== null) {
    const passkey = enrolled.find((f) => f.factor === 'PASSKEY');
    if (!accepts.includes('PASSKEY') || passkey === undefined || webauthnChallenge === null) {
      return {
        ok: false,
        counts: false,
        field: 'passkeyAssertion',
        message: 'cannot answer this challenge: it was not issued for a passkey',
      };
    }
    const challenge = { challenge: webauthnChallenge } as store.ChallengeRow;
    return checkProof(tx, ctx, 'PASSKEY', passkey, challenge, input);
  }
  const code = input.code ?? '';
  if (accepts.includes('SMS_OTP') && code === SCA_SANDBOX_CODE) return { ok: true };
  const totp = enrolled.find((f) => f.factor === 'TOTP');
  if (accepts.includes('TOTP') && totp !== undefined && (await acceptTotp(tx, ctx, totp, code))) return { ok: true };
  return { ok: false, field: 'code', message: 'is not the code of this challenge (the sandbox code is 123456)' };
}

/** The factors a customer may answer a per-operation challenge with. */
export async function challengeFactors(q: Queryable, ctx: Ctx, customerId: string, allowTotp: boolean) {
  const enrolled = await store.listFactors(q, ctx.platformId, customerId);
  const passkey = enrolled.find((f) => f.factor === 'PASSKEY');
  const factors: ScaFactorName[] = ['SMS_OTP'];
  if (allowTotp && enrolled.some((f) => f.factor === 'TOTP')) factors.push('TOTP');
  if (passkey !== undefined) factors.push('PASSKEY');
  return { factors, passkey: passkey?.passkey ? (JSON.parse(passkey.passkey) as StoredPasskey) : undefined };
}

/** WebAuthn assertion options for a passkey challenge over `challenge` (a hex string). */
export function assertionOptions(passkey: StoredPasskey, challenge: string) {
  return {
    challenge: Buffer.from(challenge, 'utf8').toString('base64url'),
    rpId: passkey.rpId,
    allowCredentials: [{ type: 'public-key', id: passkey.credentialId, transports: passkey.transports }],
    userVerification: 'required',
    timeout: SCA_START_TTL_MS,
  };
}

function lockState(row: store.LoginStateRow, now: Date) {
  const lockedUntil = row.locked_until !== null && row.locked_until > iso(now) ? row.locked_until : null;
  return { suspended: Number(row.suspended) === 1, lockedUntil, failedAttempts: Number(row.failed_attempts) };
}

function accountLocked(row: store.LoginStateRow, now: Date) {
  const state = lockState(row, now);
  const message = state.suspended
    ? 'The customer is suspended after too many failed attempts; RESET_PASSWORD_COMPLETED lifts it'
    : `The customer's login is locked until ${state.lockedUntil} after ${state.failedAttempts} failed attempts`;
  return apiError('ACCOUNT_LOCKED', message, state);
}

function isLocked(row: store.LoginStateRow, now: Date): boolean {
  const state = lockState(row, now);
  return state.suspended || state.lockedUntil !== null;
}

/** One more failure: the count goes up and, at its milestones, the lock with it. */
function withFailure(row: store.LoginStateRow, now: Date): store.LoginStateRow {
  const attempts = Number(row.failed_attempts) + 1;
  const lockMs = LOCKS_MS[attempts];
  return {
    ...row,
    failed_attempts: attempts,
    suspended: attempts >= SUSPEND_AT ? 1 : Number(row.suspended),
    locked_until:
      attempts >= SUSPEND_AT ? null : lockMs !== undefined ? iso(new Date(now.getTime() + lockMs)) : row.locked_until,
    updated_at: iso(now),
  };
}

/** The customer's login-security state, locked for this transaction; 423 while the login is locked. */
export async function unlockedLoginState(tx: Tx, ctx: Ctx, customerId: string): Promise<store.LoginStateRow> {
  const state = await store.lockLoginState(tx, ctx.platformId, customerId, iso(ctx.now));
  if (isLocked(state, ctx.now)) throw accountLocked(state, ctx.now);
  return state;
}

/** Counts a failed proof (saved with the caller's transaction); answers the new state. */
export async function countFailedProof(tx: Tx, ctx: Ctx, state: store.LoginStateRow): Promise<store.LoginStateRow> {
  const failed = withFailure(state, ctx.now);
  await store.saveLoginState(tx, failed);
  return failed;
}

/** The answer to a failed proof once it is counted: 423 when it locked the login, else 400 naming the field. */
export function failedProofError(state: store.LoginStateRow, now: Date, proof: { field: string; message: string }) {
  if (isLocked(state, now)) return accountLocked(state, now);
  return invalidInput([
    {
      field: proof.field,
      message: `${proof.message}; ${state.failed_attempts} failed attempts (the 5th locks the login)`,
    },
  ]);
}

/** 409 SCA_SESSION_REQUIRED unless the customer has a live SCA session. */
export async function requireScaSession(q: Queryable, ctx: Ctx, customerId: string): Promise<void> {
  if (await hasScaSession(q, ctx, customerId)) return;
  throw apiError(
    'SCA_SESSION_REQUIRED',
    `Customer ${customerId} has no live SCA session: log in (POST /sca/login/start and /complete), then try again`,
  );
}

export interface LoginCompleteInput extends ProofInput {
  factor: ScaFactorName;
  endUserIpAddress: string;
}

export async function completeLogin(ctx: Ctx, customerId: string | undefined, input: LoginCompleteInput) {
  const outcome = await ctx.db.transaction(async (tx) => {
    const customer = await scaCustomer(tx, ctx, customerId);
    checkProofShape(input.factor, input, input.factor === 'SMS_OTP');
    const nowIso = iso(ctx.now);
    const state = await unlockedLoginState(tx, ctx, customer.id);
    const open = await store.openChallenges(tx, ctx.platformId, customer.id, 'LOGIN', nowIso);
    // SMS: the challenge named; PASSKEY: the one the assertion signed; TOTP: any open one.
    const started = open.find(
      (c) =>
        c.factor === input.factor &&
        (input.factor === 'SMS_OTP'
          ? c.id === input.challengeId
          : input.factor === 'PASSKEY'
            ? assertionAnswers(input.passkeyAssertion!, c.challenge)
            : true),
    );
    if (started === undefined) {
      const field =
        input.factor === 'SMS_OTP' ? 'challengeId' : input.factor === 'PASSKEY' ? 'passkeyAssertion' : 'factor';
      throw invalidInput([
        {
          field,
          message: `names no open ${input.factor} login of this customer (start one with POST /sca/login/start)`,
        },
      ]);
    }
    const enrolled = (await store.listFactors(tx, ctx.platformId, customer.id)).find((f) => f.factor === input.factor);
    if (input.factor !== 'SMS_OTP' && enrolled === undefined) {
      throw invalidInput([{ field: 'factor', message: 'is no longer enrolled' }]);
    }
    const proof = await checkProof(tx, ctx, input.factor, enrolled, started, input);
    if (!proof.ok && proof.counts === false) throw invalidInput([{ field: proof.field, message: proof.message }]);
    if (!proof.ok) return { proof, state: await countFailedProof(tx, ctx, state) };
    if (!(await store.useChallenge(tx, started.id, nowIso))) {
      throw invalidInput([{ field: 'factor', message: 'answers a login that was completed meanwhile' }]);
    }
    await store.saveLoginState(tx, { ...state, failed_attempts: 0, locked_until: null, updated_at: nowIso });
    const expiresAt = iso(new Date(ctx.now.getTime() + SCA_SESSION_TTL_MS));
    await store.insertSession(tx, {
      id: newId('ScaSession'),
      platform_id: ctx.platformId,
      customer_id: customer.id,
      factor: input.factor,
      end_user_ip_address: input.endUserIpAddress,
      expires_at: expiresAt,
      revoked_at: null,
      created_at: nowIso,
    });
    return { session: { status: 'SUCCESS', sessionExpiresAt: expiresAt } };
  });
  if ('session' in outcome) return outcome.session;
  // The failure is recorded (committed) before it is answered; the failure that locks answers 423.
  throw failedProofError(outcome.state, ctx.now, outcome.proof);
}

// ------------------------------------------------------------------------------- security events

export async function recordSecurityEvent(
  ctx: Ctx,
  customerId: string | undefined,
  input: { eventType: 'RESET_PASSWORD_COMPLETED' | 'FAILED_LOGIN_ATTEMPT' },
) {
  return ctx.db.transaction(async (tx) => {
    const customer = await scaCustomer(tx, ctx, customerId);
    const nowIso = iso(ctx.now);
    const state = await store.lockLoginState(tx, ctx.platformId, customer.id, nowIso);
    let next: store.LoginStateRow;
    if (input.eventType === 'RESET_PASSWORD_COMPLETED') {
      await store.revokeSessions(tx, ctx.platformId, customer.id, nowIso);
      next = { ...state, failed_attempts: 0, locked_until: null, suspended: 0, updated_at: nowIso };
    } else {
      next = withFailure(state, ctx.now);
    }
    await store.saveLoginState(tx, next);
    return { eventType: input.eventType, ...lockState(next, ctx.now) };
  });
}

/** Whether the customer has a live SCA session (for the operations that need one). */
export async function hasScaSession(q: Queryable, ctx: Ctx, customerId: string): Promise<boolean> {
  return (await store.liveSession(q, ctx.platformId, customerId, iso(ctx.now))) !== undefined;
}

// note: the trust workflow (trust.ts) reads external accounts; this read of its outcome sits
// here, below it, so that external accounts (which refuse to delete a trusted one) and quotes
// can ask without importing the workflow.
/** Whether the customer's payments to this external account skip the per-payment challenge. */
export async function isTrustedBeneficiary(
  q: Queryable,
  platformId: string,
  customerId: string,
  externalAccountId: string,
) {
  return store.isTrusted(q, platformId, customerId, externalAccountId);
}
