import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Db } from '../db/index.js';
import type { JobRunner } from '../jobs/runner.js';
import type { AuthCache } from './auth.js';
import type { PlatformGate } from './platform-gate.js';
import type { RequestJournal } from './journal.js';

export const PERMISSIONS = ['VIEW', 'TRANSACT', 'MANAGE'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** What the server is made of; built once by main (or a test) and handed to buildApp. */
export interface Deps {
  config: Config;
  db: Db;
  clock: Clock;
  /** Present when this process is the store's only writer (the embedded store). */
  authCache?: AuthCache | undefined;
  /** The job runner of this process (set by buildApp). */
  jobs?: JobRunner | undefined;
  /** The requests this process serves, by platform (set by buildApp; see platform-gate.ts). */
  gate?: PlatformGate | undefined;
  /** Where this process keeps the requests it answers, for the request journal (set by buildApp unless its size is 0). */
  journal?: RequestJournal | undefined;
}

/** Railyard's own per-platform switches (not part of the reference's PlatformConfig). */
export interface PlatformSettings {
  /**
   * The platform is subject to counterparty rules (for example the EU Travel Rule):
   * self-custody wallets need `ownershipType`, third-party wallets need a beneficiary,
   * and first-party self-custody wallets start in PENDING_OWNERSHIP_VERIFICATION.
   */
  counterpartyRules: boolean;
  /**
   * UMA invitations are set up for the platform. Absent (platforms made before the switch)
   * reads as on; off makes createInvitation answer INVITATIONS_NOT_CONFIGURED.
   */
  invitations?: boolean;
  /**
   * Strict identifiers: requests are also refused for the check digits, checksums and shapes
   * the reference does not state (StrictRules in http/schemas.ts). Absent reads as off.
   */
  strictIdentifiers?: boolean;
}

/**
 * Everything a service needs to serve one request for one platform. `now` is read once
 * per request from the platform's clock, so one operation sees one instant.
 */
export interface Ctx {
  deps: Deps;
  db: Db;
  platformId: string;
  settings: PlatformSettings;
  tokenId: string | null;
  /** Set when the caller is an agent (bearer token): whom it acts for. */
  agent?: { id: string; customerId: string } | undefined;
  now: Date;
  log: FastifyBaseLogger;
}
