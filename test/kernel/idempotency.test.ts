// The idempotent write pipeline, through a small operation registered for this test.

import { createHash } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { recordEvent } from '../../src/events/outbox.js';
import { requestHash, runCommand, sendReply } from '../../src/http/command.js';
import { op } from '../../src/http/route.js';
import { IdempotencyHeaders } from '../../src/http/schemas.js';
import { newId } from '../../src/ids.js';
import { build, type TestApp } from '../helper.js';

const Widget = Type.Object({ id: Type.String(), name: Type.String(), size: Type.Integer() });

const widgets: FastifyPluginAsync = async (app) => {
  app.post(
    '/test-widgets',
    {
      schema: op({
        operationId: 'createTestWidget',
        tag: 'Test',
        summary: 'test',
        permission: 'MANAGE',
        headers: IdempotencyHeaders,
        body: Type.Object({ name: Type.String(), size: Type.Optional(Type.Integer({ default: 1 })) }),
        success: { 201: Widget },
        errors: [400, 401, 500],
      }),
    },
    async (request, reply) => {
      const body = request.body as { name: string; size: number };
      const result = await runCommand(
        request.ctx,
        {
          operationId: 'createTestWidget',
          idempotencyKey: (request.headers as Record<string, string>)['idempotency-key'],
          request: body,
        },
        async (tx) => {
          const id = newId('Widget');
          await recordEvent(tx, {
            platformId: request.ctx.platformId,
            type: 'TEST',
            resourceId: id,
            data: body,
            now: request.ctx.now,
          });
          // Give concurrent requests a chance to interleave.
          await new Promise((r) => setTimeout(r, 5));
          return { status: 201, body: { id, name: body.name, size: body.size } };
        },
      );
      return sendReply(reply, result);
    },
  );
};

async function widgetCount(t: TestApp): Promise<number> {
  const rows = await t.deps.db.k
    .selectFrom('events')
    .select('id')
    .where('platform_id', '=', t.platformId)
    .where('type', '=', 'TEST')
    .execute();
  return rows.length;
}

describe('Idempotency-Key', () => {
  it('replays the stored response byte for byte with no second effect', async () => {
    const t = await build({ extraRoutes: widgets });
    const headers = { 'idempotency-key': 'order-7' };
    const first = await t.api('POST', '/test-widgets', { body: { name: 'gear' }, headers });
    expect(first.status).toBe(201);
    const again = await t.api('POST', '/test-widgets', { body: { name: 'gear' }, headers });
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers['idempotent-replayed']).toBe('true');
    // Key order and explicit defaults do not make a different request.
    const same = await t.api('POST', '/test-widgets', { body: { size: 1, name: 'gear' }, headers });
    expect(same.text).toBe(first.text);
    expect(await widgetCount(t)).toBe(1);
  });

  it('refuses the key with a different request and changes nothing', async () => {
    const t = await build({ extraRoutes: widgets });
    const headers = { 'idempotency-key': 'order-8' };
    await t.api('POST', '/test-widgets', { body: { name: 'gear' }, headers });
    const other = await t.api('POST', '/test-widgets', { body: { name: 'sprocket' }, headers });
    expect(other.status).toBe(400);
    expect(other.body).toMatchObject({ code: 'INVALID_INPUT', details: { errors: [{ field: 'Idempotency-Key' }] } });
    expect(await widgetCount(t)).toBe(1);
  });

  it('gives concurrent requests with one key one effect and one response', async () => {
    const t = await build({ extraRoutes: widgets });
    const headers = { 'idempotency-key': 'burst' };
    const replies = await Promise.all(
      Array.from({ length: 10 }, () => t.api('POST', '/test-widgets', { body: { name: 'gear' }, headers })),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(replies.map((r) => r.text)).size).toBe(1);
    expect(await widgetCount(t)).toBe(1);
  });

  it('scopes keys per platform, and does nothing without a key', async () => {
    const t = await build({ extraRoutes: widgets });
    const other = await t.newPlatform();
    const headers = { 'idempotency-key': 'shared-key' };
    const mine = await t.api('POST', '/test-widgets', { body: { name: 'gear' }, headers });
    const theirs = await other.api('POST', '/test-widgets', { body: { name: 'gear' }, headers });
    expect(theirs.body.id).not.toBe(mine.body.id);
    const a = await t.api('POST', '/test-widgets', { body: { name: 'gear' } });
    const b = await t.api('POST', '/test-widgets', { body: { name: 'gear' } });
    expect(a.body.id).not.toBe(b.body.id);
    expect(await widgetCount(t)).toBe(3);
  });

  it('rejects an over-long key', async () => {
    const t = await build({ extraRoutes: widgets });
    const reply = await t.api('POST', '/test-widgets', {
      body: { name: 'gear' },
      headers: { 'idempotency-key': 'k'.repeat(256) },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors[0].field).toBe('idempotency-key');
  });
});

describe('requestHash', () => {
  // Stored keys are compared with this hash, so its text must never change for a request:
  // keys sorted, integer-like keys first in numeric order (as JSON.stringify prints an object),
  // undefined members left out, whatever order the client sent.
  it('hashes one canonical text for a request', () => {
    const text = '["createQuote",{"a":{"9":"y","10":"x","$k":1,"z":[2,{"b":null,"c":"d"}]},"b":1}]';
    const expected = createHash('sha256').update(text).digest('hex');
    expect(
      requestHash('createQuote', {
        b: 1,
        a: { z: [2, { c: 'd', b: null, e: undefined }], $k: 1, '10': 'x', '9': 'y' },
      }),
    ).toBe(expected);
  });
});
