// The snapshot endpoints: under /_railyard/snapshots for the platform whose credentials call
// them, and under /_railyard/server/snapshots for any platform by id, with the server admin
// token, for the `railyard snapshot` command (server-admin.ts registers those).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { op } from '../../http/route.js';
import { requirePlatform } from '../../modules/platform/service.js';
import { Snapshot, SnapshotCreate, SnapshotList, SnapshotNameParams, SnapshotRestore } from './schemas.js';
import { deleteSnapshot, listSnapshots, restoreSnapshot, saveSnapshot } from './service.js';

const tag = 'Railyard';

export const snapshotRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/snapshots',
    {
      schema: op({
        operationId: 'railyardListSnapshots',
        tag,
        summary: "This platform's snapshots, the latest saved first",
        permission: 'VIEW',
        success: { 200: SnapshotList },
        errors: [401, 500],
      }),
    },
    async (request) => ({ data: await listSnapshots(request.ctx.deps, request.ctx.platformId) }),
  );

  app.post(
    '/snapshots',
    {
      schema: op({
        operationId: 'railyardSaveSnapshot',
        tag,
        summary:
          "Save this platform's whole state (resources, ledger, events, deliveries, jobs, clock, configuration) under a name",
        permission: 'MANAGE',
        body: SnapshotCreate,
        success: { 201: Snapshot },
        errors: [400, 401, 409, 500],
      }),
    },
    async (request, reply) => {
      const saved = await saveSnapshot(request.ctx.deps, request.ctx.platformId, request.body);
      request.log.info(
        { platformId: request.ctx.platformId, snapshot: saved.name, rows: saved.rows },
        'snapshot saved',
      );
      reply.code(201);
      return saved;
    },
  );

  app.post(
    '/snapshots/:name/restore',
    {
      schema: op({
        operationId: 'railyardRestoreSnapshot',
        tag,
        summary: 'Bring this platform back to a snapshot, clock included (its credentials stay those of now)',
        permission: 'MANAGE',
        params: SnapshotNameParams,
        success: { 200: SnapshotRestore },
        errors: [400, 401, 404, 409, 500],
      }),
    },
    async (request) => {
      const { ctx } = request;
      const result = await restoreSnapshot(ctx.deps, ctx.platformId, request.params.name, {
        request,
        log: request.log,
      });
      request.log.info(
        { platformId: ctx.platformId, snapshot: result.name, restored: result.restored },
        'snapshot restored',
      );
      return result;
    },
  );

  app.delete(
    '/snapshots/:name',
    {
      schema: op({
        operationId: 'railyardDeleteSnapshot',
        tag,
        summary: 'Delete a snapshot of this platform',
        permission: 'MANAGE',
        params: SnapshotNameParams,
        success: { 204: null },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request, reply) => {
      await deleteSnapshot(request.ctx.deps, request.ctx.platformId, request.params.name);
      reply.code(204);
    },
  );
};

const serverTag = 'Railyard server';
const PlatformId = Type.String({ minLength: 1, maxLength: 256, description: 'The platform to act on' });
const PlatformQuery = Type.Object({ platformId: PlatformId });
const needsToken = '(needs the server admin token as a Bearer token)';

/**
 * The same for any platform, named by id (in the body, or the query when there is none), as
 * the other server-admin endpoints do: what `railyard snapshot` asks of a running server.
 */
export const serverSnapshotRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/snapshots',
    {
      schema: op({
        operationId: 'railyardServerListSnapshots',
        tag: serverTag,
        summary: `A platform's snapshots ${needsToken}`,
        permission: null,
        querystring: PlatformQuery,
        success: { 200: SnapshotList },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request) => {
      const { deps } = request.server;
      await requirePlatform(deps, request.query.platformId);
      return { data: await listSnapshots(deps, request.query.platformId) };
    },
  );

  app.post(
    '/snapshots',
    {
      schema: op({
        operationId: 'railyardServerSaveSnapshot',
        tag: serverTag,
        summary: `Save a platform's state under a name ${needsToken}`,
        permission: null,
        body: Type.Object(
          { platformId: PlatformId, name: SnapshotCreate.properties.name, replace: SnapshotCreate.properties.replace },
          { additionalProperties: false },
        ),
        success: { 201: Snapshot },
        errors: [400, 401, 404, 409, 500],
      }),
    },
    async (request, reply) => {
      const { platformId, ...input } = request.body;
      const saved = await saveSnapshot(request.server.deps, platformId, input);
      request.log.info({ platformId, snapshot: saved.name }, 'snapshot saved');
      reply.code(201);
      return saved;
    },
  );

  app.post(
    '/snapshots/:name/restore',
    {
      schema: op({
        operationId: 'railyardServerRestoreSnapshot',
        tag: serverTag,
        summary: `Bring a platform back to a snapshot ${needsToken}`,
        permission: null,
        params: SnapshotNameParams,
        body: Type.Object({ platformId: PlatformId }, { additionalProperties: false }),
        success: { 200: SnapshotRestore },
        errors: [400, 401, 404, 409, 500],
      }),
    },
    async (request) => {
      const { platformId } = request.body;
      const result = await restoreSnapshot(request.server.deps, platformId, request.params.name, { log: request.log });
      request.log.info({ platformId, snapshot: result.name, restored: result.restored }, 'snapshot restored');
      return result;
    },
  );

  app.delete(
    '/snapshots/:name',
    {
      schema: op({
        operationId: 'railyardServerDeleteSnapshot',
        tag: serverTag,
        summary: `Delete a snapshot of a platform ${needsToken}`,
        permission: null,
        params: SnapshotNameParams,
        querystring: PlatformQuery,
        success: { 204: null },
        errors: [400, 401, 404, 500],
      }),
    },
    async (request, reply) => {
      await requirePlatform(request.server.deps, request.query.platformId);
      await deleteSnapshot(request.server.deps, request.query.platformId, request.params.name);
      reply.code(204);
    },
  );
};
