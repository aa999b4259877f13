// Railyard's server-admin endpoints, under /_railyard/server: what the `railyard` command asks
// of a running server for work that is not one platform's own (adding a platform, resetting,
// seeding or snapshotting any platform by id; the snapshot ones are in snapshots/routes.ts).
// They take no platform's credentials but the server admin token: RAILYARD_ADMIN_TOKEN when
// set (so a CI job or a container that started the server can make a platform per test over
// HTTP), else a random secret the server draws at start. It is kept in memory and written only
// to the runtime file (server-file.ts, mode 0600) for the command to read. A server that was
// given no token (tests) answers every request here 401.

import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { SETTLEMENT_TIMINGS } from '../config.js';
import type { Deps } from '../http/deps.js';
import { apiError } from '../http/errors.js';
import { op } from '../http/route.js';
import { StringEnum } from '../http/schemas.js';
import { createPlatform, requirePlatform } from '../modules/platform/service.js';
import { resetPlatform } from './reset.js';
import { ResetResultSchema } from './reset-routes.js';
import { SEED_SIZE_MAX, SeedSummarySchema, seedPlatform } from './seed.js';
import { serverSnapshotRoutes } from './snapshots/routes.js';

const tag = 'Railyard server';

interface ServerAdmin {
  tokenDigest: Buffer;
  /** The platform `railyard start` prints, which the command acts on when given none. */
  defaultPlatformId: string | undefined;
}

// Each server's admin, by its Deps (a test may build several servers in one process).
const ADMINS = new WeakMap<Deps, ServerAdmin>();

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Lets the server-admin endpoints of the server built on `deps` accept `token`. */
export function enableServerAdmin(deps: Deps, token: string, defaultPlatformId?: string): void {
  ADMINS.set(deps, { tokenDigest: digest(token), defaultPlatformId });
}

function checkToken(deps: Deps, header: string | undefined): void {
  const expected = ADMINS.get(deps)?.tokenDigest;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  // Compared as digests: equal lengths for timingSafeEqual, and no early exit on a prefix.
  if (expected === undefined || match === null || !timingSafeEqual(digest(match[1]!), expected))
    throw apiError('UNAUTHORIZED', 'The server admin token was not accepted', {
      reason: 'a server-admin endpoint needs Authorization: Bearer <the token in the server runtime file>',
    });
}

const PlatformIdBody = Type.String({ minLength: 1, maxLength: 256, description: 'The platform to act on' });

export const ServerInfo = Type.Object({
  store: Type.Union([Type.Literal('sqlite'), Type.Literal('postgres')]),
  pid: Type.Integer(),
  instanceId: Type.String(),
  defaultPlatformId: Type.Optional(Type.String()),
});

const CreatedPlatform = Type.Object({
  platformId: Type.String(),
  clientId: Type.String(),
  clientSecret: Type.String(),
  tokenId: Type.String(),
});

export const serverAdminRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', async (request) => checkToken(request.server.deps, request.headers.authorization));
  await app.register(serverSnapshotRoutes);

  app.get(
    '/info',
    {
      schema: op({
        operationId: 'railyardServerInfo',
        tag,
        summary: 'Which server answers (needs the server admin token as a Bearer token)',
        permission: null,
        success: { 200: ServerInfo },
        errors: [401, 500],
      }),
    },
    async (request) => {
      const { deps } = request.server;
      const defaultPlatformId = ADMINS.get(deps)?.defaultPlatformId;
      return {
        store: deps.db.dialect,
        pid: process.pid,
        instanceId: deps.jobs?.instanceId ?? '',
        ...(defaultPlatformId === undefined ? {} : { defaultPlatformId }),
      };
    },
  );

  app.post(
    '/platforms',
    {
      schema: op({
        operationId: 'railyardServerCreatePlatform',
        tag,
        summary: 'Add a platform with a token of every permission (needs the server admin token as a Bearer token)',
        permission: null,
        bodyOptional: true,
        body: Type.Object(
          {
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            counterpartyRules: Type.Optional(Type.Boolean()),
            settlementTiming: Type.Optional(StringEnum(SETTLEMENT_TIMINGS)),
          },
          { additionalProperties: false },
        ),
        success: { 201: CreatedPlatform },
        errors: [400, 401, 500],
      }),
    },
    async (request, reply) => {
      const created = await createPlatform(request.server.deps, {
        name: request.body.name ?? 'Sandbox platform',
        counterpartyRules: request.body.counterpartyRules ?? false,
        settlementTiming: request.body.settlementTiming,
      });
      request.log.info({ platformId: created.platformId }, 'platform created by the server admin');
      reply.code(201);
      return {
        platformId: created.platformId,
        clientId: created.token.clientId,
        clientSecret: created.token.clientSecret!,
        tokenId: created.token.id,
      };
    },
  );

  app.post(
    '/reset',
    {
      schema: op({
        operationId: 'railyardServerResetPlatform',
        tag,
        summary:
          "Reset a platform's data, as POST /_railyard/reset does (needs the server admin token as a Bearer token)",
        permission: null,
        body: Type.Object({ platformId: PlatformIdBody }, { additionalProperties: false }),
        success: { 200: ResetResultSchema },
        errors: [400, 401, 404, 409, 500],
      }),
    },
    async (request) => {
      const result = await resetPlatform(request.server.deps, request.body.platformId);
      request.log.info({ platformId: result.platformId, removed: result.removed }, 'platform reset');
      return result;
    },
  );

  app.post(
    '/seed',
    {
      schema: op({
        operationId: 'railyardServerSeedPlatform',
        tag,
        summary: 'Fill a platform with a demo data set (needs the server admin token as a Bearer token)',
        permission: null,
        body: Type.Object(
          {
            platformId: PlatformIdBody,
            seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 })),
            size: Type.Optional(Type.Integer({ minimum: 1, maximum: SEED_SIZE_MAX })),
          },
          { additionalProperties: false },
        ),
        success: { 200: SeedSummarySchema },
        errors: [400, 401, 404, 409, 500],
      }),
    },
    async (request) => {
      await requirePlatform(request.server.deps, request.body.platformId);
      const summary = await seedPlatform(request.server, request.body.platformId, {
        seed: request.body.seed,
        size: request.body.size,
      });
      request.log.info({ platformId: request.body.platformId, seed: summary.seed }, 'platform seeded');
      return summary;
    },
  );
};
