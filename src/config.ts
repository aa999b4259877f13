// The one place that reads the environment. Everything else receives a Config.

import { isOnRelyingParty, originHost, passkeyOriginProblem } from './passkey-origins.js';

export const API_VERSION = '2025-10-13';
export const BASE_PATH = `/grid/${API_VERSION}`;
/** Railyard's own endpoints (clock, platforms, delivery log) live outside the Grid namespace. */
export const ADMIN_PREFIX = '/_railyard';

export interface Config {
  host: string;
  port: number;
  /** Directory of the embedded SQLite store; ':memory:' keeps everything in memory. */
  dataDir: string;
  /** postgres://… selects PostgreSQL instead of the embedded store. */
  databaseUrl: string | undefined;
  /**
   * Send PostgreSQL statements as named prepared statements (on unless
   * RAILYARD_PG_PREPARED=0: a pooler in transaction mode may not keep them).
   */
  pgPrepared?: boolean;
  /** Pins the bootstrap token's client id and secret (the names the official SDK reads). */
  clientId: string | undefined;
  clientSecret: string | undefined;
  logLevel: string;
  /** NDJSON file that receives every HTTP exchange, for the conformance check. */
  recordFile: string | undefined;
  /** Check every response against its own schema before sending it (tests turn this on). */
  validateResponses: boolean;
  /** How long a webhook receiver has to answer before the attempt counts as failed (30 s when unset). */
  webhookTimeoutMs?: number | undefined;
  /** The origins an SCA passkey ceremony may run against (DEFAULT_PASSKEY_ORIGINS when unset). */
  passkeyOrigins?: string[] | undefined;
  /** New platforms start in strict mode (`strictIdentifiers`; RAILYARD_STRICT_IDENTIFIERS=1). */
  strictIdentifiers?: boolean | undefined;
  /**
   * How new platforms' payouts settle unless their creation says (`settlementTiming`;
   * RAILYARD_SETTLEMENT_TIMING). SETTLEMENT_TIMING_DEFAULT when unset.
   */
  settlementTiming?: SettlementTiming | undefined;
  /**
   * How many of each platform's latest requests the request journal keeps
   * (JOURNAL_SIZE_DEFAULT when unset; 0 keeps none).
   */
  journalSize?: number | undefined;
  /** The server-admin token, when given (RAILYARD_ADMIN_TOKEN); otherwise the server draws one at start. */
  adminToken?: string | undefined;
}

/** The request journal's window per platform when RAILYARD_JOURNAL_SIZE is unset. */
export const JOURNAL_SIZE_DEFAULT = 10_000;
export const JOURNAL_SIZE_MAX = 1_000_000;
/** The shortest server-admin token RAILYARD_ADMIN_TOKEN may set. */
export const ADMIN_TOKEN_CHARS_MIN = 16;
const ADMIN_TOKEN_CHARS_MAX = 512;

/** Where an integrator's web app runs in development: the SCA passkey origins when none are configured. */
export const DEFAULT_PASSKEY_ORIGINS = ['http://localhost:3000', 'https://localhost:3000'];

/**
 * How a platform's outgoing bank payouts settle: `instant` completes them when they are
 * accepted; `hosted` keeps them PROCESSING for their rail's sandbox time first, as the hosted
 * sandbox does (src/rails/settlement.ts; docs/hosted-differences.md).
 */
export const SETTLEMENT_TIMINGS = ['instant', 'hosted'] as const;
export type SettlementTiming = (typeof SETTLEMENT_TIMINGS)[number];
/**
 * What a new platform gets when neither its creation nor the server chooses: `hosted`, so that
 * an integration's pending path runs against railyard as it will against the hosted sandbox
 * (the clock's advance makes the wait instant for a test).
 */
export const SETTLEMENT_TIMING_DEFAULT: SettlementTiming = 'hosted';

export class ConfigError extends Error {}

/** The relying-party id of SCA passkeys: the host of the first passkey origin. */
export function scaRelyingPartyId(origins: readonly string[]): string {
  return originHost(origins[0]!)!;
}

/**
 * RAILYARD_PASSKEY_ORIGINS: origins a browser makes passkeys on (src/passkey-origins.ts), every
 * one on the relying party of the first (its host, or a subdomain when that host has a dot).
 */
function checkPasskeyOrigins(origins: string[]): void {
  const usage =
    'RAILYARD_PASSKEY_ORIGINS must be a comma-separated list of origins such as https://app.example.com (http only on localhost)';
  for (const origin of origins) {
    // The server's own setting is held to what browsers do: an IP address can never work.
    const problem = passkeyOriginProblem(origin, { ipAddresses: 'refused' });
    if (problem !== null) throw new ConfigError(`${usage}: "${origin}" ${problem}`);
  }
  const rpId = scaRelyingPartyId(origins);
  for (const origin of origins.slice(1)) {
    if (!isOnRelyingParty(originHost(origin)!, rpId)) {
      throw new ConfigError(
        `${usage}: "${origin}" is not on the relying party ${rpId}, the host of the first origin (a browser would refuse its passkeys there)`,
      );
    }
  }
}

const LOG_LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = env.PORT === undefined || env.PORT === '' ? 8080 : Number(env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`PORT must be an integer between 0 and 65535, got "${env.PORT}"`);
  }
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql://');
  }
  const pgPreparedSetting = env.RAILYARD_PG_PREPARED || '1';
  if (pgPreparedSetting !== '0' && pgPreparedSetting !== '1') {
    throw new ConfigError(`RAILYARD_PG_PREPARED must be 0 or 1, got "${pgPreparedSetting}"`);
  }
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.has(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${[...LOG_LEVELS].join(', ')}, got "${logLevel}"`);
  }
  const webhookTimeoutMs = env.RAILYARD_WEBHOOK_TIMEOUT_MS ? Number(env.RAILYARD_WEBHOOK_TIMEOUT_MS) : undefined;
  if (
    webhookTimeoutMs !== undefined &&
    (!Number.isInteger(webhookTimeoutMs) || webhookTimeoutMs < 1 || webhookTimeoutMs > 30_000)
  ) {
    throw new ConfigError(
      `RAILYARD_WEBHOOK_TIMEOUT_MS must be an integer between 1 and 30000, got "${env.RAILYARD_WEBHOOK_TIMEOUT_MS}"`,
    );
  }
  const strictSetting = env.RAILYARD_STRICT_IDENTIFIERS || '0';
  if (strictSetting !== '0' && strictSetting !== '1') {
    throw new ConfigError(`RAILYARD_STRICT_IDENTIFIERS must be 0 or 1, got "${strictSetting}"`);
  }
  const settlementTiming = (env.RAILYARD_SETTLEMENT_TIMING || SETTLEMENT_TIMING_DEFAULT) as SettlementTiming;
  if (!SETTLEMENT_TIMINGS.includes(settlementTiming)) {
    throw new ConfigError(
      `RAILYARD_SETTLEMENT_TIMING must be ${SETTLEMENT_TIMINGS.join(' or ')}, got "${env.RAILYARD_SETTLEMENT_TIMING}"`,
    );
  }
  const clientId = env.GRID_CLIENT_ID || undefined;
  const clientSecret = env.GRID_CLIENT_SECRET || undefined;
  if ((clientId === undefined) !== (clientSecret === undefined)) {
    throw new ConfigError('GRID_CLIENT_ID and GRID_CLIENT_SECRET must be set together');
  }
  if (clientSecret !== undefined && clientSecret.length < 16) {
    throw new ConfigError('GRID_CLIENT_SECRET must be at least 16 characters long');
  }
  const journalSize = parseJournalSize(env.RAILYARD_JOURNAL_SIZE);
  const adminToken = env.RAILYARD_ADMIN_TOKEN || undefined;
  if (
    adminToken !== undefined &&
    (adminToken.length < ADMIN_TOKEN_CHARS_MIN ||
      adminToken.length > ADMIN_TOKEN_CHARS_MAX ||
      !/^[\x21-\x7e]+$/.test(adminToken))
  ) {
    // The value itself is never printed: it is a secret.
    throw new ConfigError(
      `RAILYARD_ADMIN_TOKEN must be ${ADMIN_TOKEN_CHARS_MIN} to ${ADMIN_TOKEN_CHARS_MAX} printable ASCII characters without spaces (it is sent as a Bearer token), got ${adminToken.length} characters${/^[\x21-\x7e]*$/.test(adminToken) ? '' : ' with a space or another character outside that range'}`,
    );
  }
  const passkeyOrigins = env.RAILYARD_PASSKEY_ORIGINS
    ? env.RAILYARD_PASSKEY_ORIGINS.split(',').map((origin) => origin.trim())
    : undefined;
  if (passkeyOrigins !== undefined) checkPasskeyOrigins(passkeyOrigins);
  return {
    host: env.HOST || '127.0.0.1',
    port,
    dataDir: env.DATA_DIR || './.railyard',
    databaseUrl,
    clientId,
    clientSecret,
    logLevel,
    pgPrepared: pgPreparedSetting === '1',
    recordFile: env.RAILYARD_RECORD || undefined,
    validateResponses: env.RAILYARD_VALIDATE_RESPONSES === '1',
    webhookTimeoutMs,
    passkeyOrigins,
    strictIdentifiers: strictSetting === '1',
    settlementTiming,
    journalSize,
    adminToken,
  };
}

function parseJournalSize(text: string | undefined): number {
  if (text === undefined || text === '') return JOURNAL_SIZE_DEFAULT;
  const size = Number(text);
  if (!/^\d+$/.test(text) || size > JOURNAL_SIZE_MAX)
    throw new ConfigError(
      `RAILYARD_JOURNAL_SIZE must be an integer from 0 (no journal) to ${JOURNAL_SIZE_MAX}, got "${text}"`,
    );
  return size;
}
