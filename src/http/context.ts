import type { FastifyBaseLogger } from 'fastify';
import type { Deps, PlatformSettings } from './deps.js';
import type { Db } from '../db/index.js';

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
