// What the server is made of, as types: the parts main (or a test) builds once and hands to
// buildApp, the permissions of a token and a platform's own switches. This file sits below
// everything that uses these types (http/, jobs/, the modules): it imports only the types of
// the clock, the configuration and the store, none of which import back. The job runner and
// the credential cache appear here as the interfaces the rest of the server calls; their
// classes (src/jobs/runner.ts, src/http/auth.ts) implement them, so neither the runner nor
// the authentication has to be imported to name a Deps.

import type { Clock } from '../clock.js';
import type { Config, SettlementTiming } from '../config.js';
import type { Db, Queryable } from '../db/index.js';
import type { PlatformGate } from './platform-gate.js';

export const PERMISSIONS = ['VIEW', 'TRANSACT', 'MANAGE'] as const;
export type Permission = (typeof PERMISSIONS)[number];

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
  /**
   * How its outgoing bank payouts settle (SettlementTiming). Absent (platforms made before the
   * setting) reads as `instant`, which is what they did when they were made.
   */
  settlementTiming?: SettlementTiming;
}

/** Verified credentials as the credential cache keeps them: the clock is read per request. */
export interface CachedPrincipal {
  platformId: string;
  tokenId: string;
  permissions: Permission[];
  settings: PlatformSettings;
  clockOffsetMs: number;
  /** The tag of the platform's fault rules (src/faults/), null with none. */
  faultRules: string | null;
}

/** Verified credentials of this process, keyed by the Authorization header (AuthCache). */
export interface CredentialCache {
  get(header: string): CachedPrincipal | undefined;
  set(header: string, principal: CachedPrincipal): void;
  clear(): void;
}

/** What the rest of the server calls on this process's job runner (JobRunner). */
export interface JobRunnerHandle {
  readonly instanceId: string;
  /** How many jobs this runner has finished (the idle collector watches it). */
  readonly jobsFinished: number;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Looks for due work now rather than at the next poll. */
  wake(): void;
  /** Runs the jobs due now (of one platform, or of all), here; answers how many ran. */
  runDue(platformId?: string, background?: boolean): Promise<number>;
  /** Runs what is due by `dueByMs` and, on a shared store, waits for other instances' share. */
  runDueEverywhere(platformId: string, dueByMs: number, waitMsMax?: number): Promise<number>;
}

/** What the server is made of; built once by main (or a test) and handed to buildApp. */
export interface Deps {
  config: Config;
  db: Db;
  clock: Clock;
  /** Present when this process is the store's only writer (the embedded store). */
  authCache?: CredentialCache | undefined;
  /** The job runner of this process (set by buildApp). */
  jobs?: JobRunnerHandle | undefined;
  /** The requests this process serves, by platform (set by buildApp; see platform-gate.ts). */
  gate?: PlatformGate | undefined;
  /** Where this process keeps the requests it answers (set by buildApp unless its size is 0). */
  journal?: JournalHandle | undefined;
}

/** What the rest of the server calls on the request journal (RequestJournal, http/journal.ts). */
export interface JournalHandle {
  /** Each platform's window: how many of its latest requests are kept. */
  readonly size: number;
  /** Writes every entry taken so far; resolves once they are in the store. */
  flush(): Promise<void>;
  /**
   * Writes every entry taken so far, then answers where the journal is read: a connection on
   * its file of its own (an embedded store on disk), or undefined for the store's own table.
   */
  readable(): Promise<Queryable | undefined>;
  /**
   * Deletes a platform's entries kept outside the store (a reset; the store's own go with its
   * other rows); answers how many.
   */
  forget(platformId: string): Promise<number>;
}
