// HTTP Basic authentication over API tokens. The username is the token's id or its client
// id; the password is the secret, stored as a salted HMAC-SHA256 and compared in constant
// time. A successful check builds the request's Ctx.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { platformNow } from '../clock.js';
import { prepare } from '../db/prepared.js';
import { secretHash } from '../crypto/sealing.js';
import { apiError } from './errors.js';
import type { CachedPrincipal, CredentialCache, Deps, Permission, PlatformSettings } from './deps.js';

export function hashSecret(secret: string, salt: string): string {
  return createHmac('sha256', salt).update(secret).digest('hex');
}

export function newSalt(): string {
  return randomBytes(16).toString('hex');
}

// A fixed salt/hash pair, so an unknown username costs the same work as a known one.
const DUMMY_SALT = newSalt();
const DUMMY_HASH = hashSecret(randomBytes(24).toString('hex'), DUMMY_SALT);

function parseBasic(header: string | undefined): { username: string; password: string } | null {
  if (header === undefined) return null;
  const match = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  // A token id (Token:<uuid>) carries a colon of its own; the separator is the next one.
  const colon = decoded.indexOf(':', decoded.startsWith('Token:') ? 'Token:'.length : 0);
  if (colon <= 0) return null;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function unauthorized(reason: string) {
  return apiError('UNAUTHORIZED', 'The API credentials were not accepted', { reason });
}

export interface Principal {
  platformId: string;
  tokenId: string;
  permissions: Permission[];
  settings: PlatformSettings;
  now: Date;
  /** The tag of the platform's request fault rules; null while none can fire (src/faults/). */
  faultRules: string | null;
}

const authCacheEntriesMax = 1000;

/**
 * Verified credentials of this process, keyed by the Authorization header. Only for a
 * store this process alone writes (the embedded one): every write that could change an
 * answer (a token deleted, platform settings or clock changed) clears it at once.
 */
export class AuthCache implements CredentialCache {
  private readonly entries = new Map<string, CachedPrincipal>();
  get(header: string): CachedPrincipal | undefined {
    return this.entries.get(header);
  }
  set(header: string, principal: CachedPrincipal): void {
    if (this.entries.size >= authCacheEntriesMax) this.entries.clear();
    this.entries.set(header, principal);
  }
  clear(): void {
    this.entries.clear();
  }
}

/** The principal of already-verified credentials, without touching the store. */
export function cachedPrincipal(deps: Deps, header: string | undefined): Principal | undefined {
  const cached = header === undefined ? undefined : deps.authCache?.get(header);
  if (cached === undefined) return undefined;
  return {
    platformId: cached.platformId,
    tokenId: cached.tokenId,
    permissions: cached.permissions,
    settings: cached.settings,
    now: platformNow(deps.clock, cached.clockOffsetMs),
    faultRules: cached.faultRules,
  };
}

/** A live token and its platform's settings, by the token's id or by its client id. */
const tokenBy = (column: 'api_tokens.id' | 'api_tokens.client_id') =>
  prepare<{ name: string }, TokenRow>((k, param) =>
    k
      .selectFrom('api_tokens')
      .innerJoin('platforms', 'platforms.id', 'api_tokens.platform_id')
      .select([
        'api_tokens.id as token_id',
        'api_tokens.platform_id',
        'api_tokens.permissions',
        'api_tokens.secret_salt',
        'api_tokens.secret_hash',
        'platforms.settings',
        'platforms.clock_offset_ms',
        'platforms.fault_rules',
      ])
      .where(column, '=', param('name'))
      .where('api_tokens.deleted_at', 'is', null),
  );

interface TokenRow {
  token_id: string;
  platform_id: string;
  permissions: string;
  secret_salt: string;
  secret_hash: string;
  settings: string;
  clock_offset_ms: number | string;
  fault_rules: string | null;
}

const tokenById = tokenBy('api_tokens.id');
const tokenByClientId = tokenBy('api_tokens.client_id');

export async function authenticate(deps: Deps, header: string | undefined): Promise<Principal> {
  const cached = cachedPrincipal(deps, header);
  if (cached !== undefined) return cached;
  const credentials = parseBasic(header);
  if (credentials === null) {
    throw unauthorized(
      header === undefined ? 'missing Authorization header' : 'Authorization must be HTTP Basic <token id>:<secret>',
    );
  }
  const byName = credentials.username.startsWith('Token:') ? tokenById : tokenByClientId;
  const row = await byName.first(deps.db.k, { name: credentials.username });
  const expected = Buffer.from(row?.secret_hash ?? DUMMY_HASH, 'hex');
  const actual = Buffer.from(hashSecret(credentials.password, row?.secret_salt ?? DUMMY_SALT), 'hex');
  const matches = expected.length === actual.length && timingSafeEqual(expected, actual);
  if (row === undefined || !matches) throw unauthorized('unknown token or wrong secret');
  const principal: CachedPrincipal = {
    platformId: row.platform_id,
    tokenId: row.token_id,
    permissions: JSON.parse(row.permissions) as Permission[],
    settings: JSON.parse(row.settings) as PlatformSettings,
    clockOffsetMs: Number(row.clock_offset_ms),
    faultRules: row.fault_rules,
  };
  deps.authCache?.set(header!, principal);
  const { clockOffsetMs, ...rest } = principal;
  return { ...rest, now: platformNow(deps.clock, clockOffsetMs) };
}

/**
 * Reads need VIEW, which every token has; changes to configuration, tokens, customers and
 * accounts need MANAGE; moving money needs TRANSACT (the meanings the reference gives them).
 * A token lacking the permission an operation needs is refused with 403 FORBIDDEN where the
 * reference declares 403 for the operation, and with 401 UNAUTHORIZED otherwise, so the
 * answer always has a status the contract allows.
 */
export function checkPermission(principal: Principal, needed: Permission, declares403: boolean): void {
  // Every token may read; MANAGE and TRANSACT are granted separately.
  if (needed === 'VIEW' ? principal.permissions.length > 0 : principal.permissions.includes(needed)) return;
  const message = `This operation needs a token with the ${needed} permission`;
  if (declares403) throw apiError('FORBIDDEN', message, { requiredPermission: needed });
  throw apiError('UNAUTHORIZED', message, {
    reason: `token lacks the ${needed} permission`,
    requiredPermission: needed,
  });
}

export type AuthHook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

// ------------------------------------------------------------------------------- agents

/** The agent a bearer token belongs to (see modules/agents). */
export interface AgentPrincipal {
  platformId: string;
  settings: PlatformSettings;
  now: Date;
  agentId: string;
  customerId: string;
  faultRules: string | null;
}

/** sha256 hex of an agent access token: what the store keeps to find (never to show) it. */
export function agentTokenHash(token: string): string {
  return secretHash(token);
}

/**
 * `Authorization: Bearer <accessToken>` of a live agent. Never cached: deleting an agent
 * ends its token at once, on every instance.
 */
export async function authenticateAgent(deps: Deps, header: string | undefined): Promise<AgentPrincipal> {
  const match = header === undefined ? null : /^Bearer\s+([A-Za-z0-9._~+/=-]+)\s*$/i.exec(header);
  if (match === null) {
    throw unauthorized(
      header === undefined
        ? 'missing Authorization header'
        : 'agent operations take Authorization: Bearer <accessToken> (from redeeming a device code)',
    );
  }
  const row = await deps.db.k
    .selectFrom('agents')
    .innerJoin('platforms', 'platforms.id', 'agents.platform_id')
    .select([
      'agents.id',
      'agents.platform_id',
      'agents.customer_id',
      'platforms.settings',
      'platforms.clock_offset_ms',
      'platforms.fault_rules',
    ])
    .where('agents.token_hash', '=', agentTokenHash(match[1]!))
    .where('agents.deleted_at', 'is', null)
    .executeTakeFirst();
  if (row === undefined) throw unauthorized('unknown or revoked agent access token');
  return {
    platformId: row.platform_id,
    settings: JSON.parse(row.settings) as PlatformSettings,
    now: platformNow(deps.clock, Number(row.clock_offset_ms)),
    agentId: row.id,
    customerId: row.customer_id,
    faultRules: row.fault_rules,
  };
}
