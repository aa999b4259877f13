// The API kernel as a client meets it: authentication, permissions, the error envelope for
// every kind of failure, request ids, health and the OpenAPI document.

import { describe, expect, it } from 'vitest';
import { accountBody } from '../fixtures/accounts.js';
import { basic, build } from '../helper.js';
import { balances, externalAccount, fundedUsd, transferOut } from '../fixtures/money.js';

const envelope = (status: number, code: string) => ({ status, code, message: expect.any(String) });

describe('authentication', () => {
  it.each([
    ['no Authorization header', undefined],
    ['a Bearer token', 'Bearer abc'],
    ['Basic with garbage', 'Basic !!!'],
    ['Basic without a colon', `Basic ${Buffer.from('justone').toString('base64')}`],
    ['an unknown client id', basic('0123456789abcdef0123456789abcdef', 'whatever-secret')],
    ['an unknown token id', basic('Token:019542f5-b3e7-7d02-8000-000000000001', 'whatever-secret')],
  ])('answers 401 UNAUTHORIZED for %s', async (_name, header) => {
    const t = await build();
    const reply = await t.api('GET', '/config', { auth: null, headers: header ? { authorization: header } : {} });
    expect(reply.status).toBe(401);
    expect(reply.body).toMatchObject(envelope(401, 'UNAUTHORIZED'));
  });

  it('answers 401 for a right id with a wrong secret, by client id and by token id', async () => {
    const t = await build();
    for (const username of [t.clientId, t.tokenId]) {
      expect((await t.api('GET', '/config', { auth: { username, password: `${t.clientSecret}x` } })).status).toBe(401);
      expect((await t.api('GET', '/config', { auth: { username, password: t.clientSecret } })).status).toBe(200);
    }
  });

  it('stores only a salted hash of each secret', async () => {
    const t = await build();
    const rows = await t.deps.db.k.selectFrom('api_tokens').selectAll().execute();
    for (const row of rows) {
      expect(JSON.stringify(row)).not.toContain(t.clientSecret);
      expect(row.secret_salt).toMatch(/^[0-9a-f]{32}$/);
    }
  });

  it('authenticates a token the moment it is created and stops it the moment it is deleted', async () => {
    const t = await build();
    const created = await t.api('POST', '/tokens', { body: { name: 'ci reader', permissions: ['VIEW'] } });
    const auth = { username: created.body.clientId, password: created.body.clientSecret };
    expect((await t.api('GET', '/config', { auth })).status).toBe(200);
    expect((await t.api('DELETE', `/tokens/${created.body.id}`)).status).toBe(204);
    const after = await t.api('GET', '/config', { auth });
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('UNAUTHORIZED');
  });
});

describe('permissions', () => {
  async function tokenWith(t: Awaited<ReturnType<typeof build>>, permissions: string[]) {
    const created = await t.api('POST', '/tokens', { body: { name: permissions.join('+'), permissions } });
    expect(created.status).toBe(201);
    return { username: created.body.clientId, password: created.body.clientSecret };
  }

  // [method, path, body, permission needed]
  const operations: [string, string, unknown, string][] = [
    ['GET', '/config', undefined, 'VIEW'],
    ['PATCH', '/config', { umaDomain: 'pay.example.com' }, 'MANAGE'],
    ['GET', '/tokens', undefined, 'VIEW'],
    ['POST', '/tokens', { name: 'x', permissions: ['VIEW'] }, 'MANAGE'],
    ['GET', '/platform/external-accounts', undefined, 'VIEW'],
    ['POST', '/platform/external-accounts', accountBody('USD_ACCOUNT'), 'MANAGE'],
  ];

  it.each(['VIEW', 'TRANSACT', 'MANAGE'])('enforces the matrix for a %s-only token', async (permission) => {
    const t = await build();
    const auth = await tokenWith(t, [permission]);
    for (const [method, path, body, needed] of operations) {
      const reply = await t.api(method, path, {
        auth,
        ...(body ? { body: method === 'POST' && path.includes('external') ? accountBody('USD_ACCOUNT') : body } : {}),
      });
      const allowed = needed === 'VIEW' || needed === permission;
      if (allowed) {
        expect(reply.status, `${method} ${path}`).toBeLessThan(300);
      } else {
        // None of these operations declares 403, so the refusal is a 401 naming the permission.
        expect(reply.status, `${method} ${path}`).toBe(401);
        expect(reply.body).toMatchObject({ code: 'UNAUTHORIZED', details: { requiredPermission: needed } });
      }
    }
  });

  it('refuses a write without changing anything', async () => {
    const t = await build();
    const auth = await tokenWith(t, ['VIEW']);
    await t.api('PATCH', '/config', { auth, body: { umaDomain: 'changed.example.com' } });
    expect((await t.api('GET', '/config')).body.umaDomain).not.toBe('changed.example.com');
    await t.api('POST', '/platform/external-accounts', { auth, body: accountBody('USD_ACCOUNT') });
    expect((await t.api('GET', '/platform/external-accounts')).body.totalCount).toBe(0);
  });
});

describe('the error envelope', () => {
  it('answers an unknown route with 404 in the envelope', async () => {
    const t = await build();
    const reply = await t.api('GET', '/no/such/thing');
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({
      status: 404,
      code: 'REFERENCE_NOT_FOUND',
      message: expect.stringContaining('/no/such/thing'),
    });
    expect((await t.raw('POST', '/elsewhere', { auth: null })).body.code).toBe('REFERENCE_NOT_FOUND');
  });

  it('answers malformed JSON with 400 INVALID_INPUT naming the body', async () => {
    const t = await build();
    const reply = await t.api('POST', '/tokens', {
      payload: '{"name": "x", ',
      headers: { 'content-type': 'application/json' },
    });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({
      ...envelope(400, 'INVALID_INPUT'),
      details: { errors: [{ field: 'body', message: expect.any(String) }] },
    });
  });

  it('rejects prototype-poisoning keys as malformed JSON', async () => {
    const t = await build();
    const reply = await t.api('POST', '/tokens', {
      payload: '{"name":"x","permissions":["VIEW"],"__proto__":{"admin":true}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('INVALID_INPUT');
  });

  it('answers a wrong content type with 400 naming Content-Type', async () => {
    const t = await build();
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const reply = await t.api('POST', '/tokens', { payload: 'name=x', headers: { 'content-type': contentType } });
      expect(reply.status).toBe(400);
      expect(reply.body.details.errors).toEqual([{ field: 'Content-Type', message: 'must be application/json' }]);
    }
  });

  it('answers a body over 1 MiB with 400', async () => {
    const t = await build();
    const reply = await t.api('POST', '/tokens', {
      body: { name: 'x'.repeat(1024 * 1024 + 10), permissions: ['VIEW'] },
    });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: 'INVALID_INPUT', details: { errors: [{ field: 'body' }] } });
  });

  it('answers a missing body where one is required with 400', async () => {
    const t = await build();
    const reply = await t.api('POST', '/tokens', { payload: '', headers: { 'content-type': 'application/json' } });
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors[0].field).toBe('body');
  });

  it('answers an unexpected failure with 500 INTERNAL_ERROR and no internals', async () => {
    const t = await build();
    await t.deps.db.close();
    const reply = await t.api('GET', '/platform/external-accounts', { headers: { 'x-request-id': 'req-for-500' } });
    expect(reply.status).toBe(500);
    expect(reply.body).toEqual({
      status: 500,
      code: 'INTERNAL_ERROR',
      message: expect.stringContaining('req-for-500'),
    });
    expect(reply.text).not.toMatch(/select|sqlite|postgres|destroyed|\bat\b .*\(/i);
  });
});

describe('the NUL character (U+0000), which PostgreSQL cannot store in text', () => {
  it('is a 404 in a path id, a 400 naming the query field, and a 400 naming every body field, on either store', async () => {
    const t = await build();
    const usd = await fundedUsd(t, 10_000);
    const bank = await externalAccount(t, 'USD_ACCOUNT', '000');
    const paths: [string, string][] = [
      ['GET', '/transactions/Transaction%3Aabc%00'],
      ['POST', '/transactions/abc%00/cancel'],
      ['POST', '/sandbox/internal-accounts/abc%00/fund'],
      ['GET', '/platform/external-accounts/ExternalAccount%3A%00'],
    ];
    for (const [method, path] of paths) {
      const reply = await t.api(method, path, method === 'POST' ? { body: { amount: 1 } } : {});
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.body).toMatchObject(envelope(404, 'REFERENCE_NOT_FOUND'));
    }

    for (const query of ['customerId=abc%00', 'reference=RY%00', 'accountIdentifier=%00x']) {
      const reply = await t.api('GET', `/transactions?${query}`);
      expect(reply.status, query).toBe(400);
      expect(reply.body).toMatchObject(envelope(400, 'INVALID_INPUT'));
      expect(reply.body.details.errors).toEqual([
        { field: query.split('=')[0], message: expect.stringContaining('U+0000') },
      ]);
    }

    const body = {
      source: { accountId: `${usd.id}\u0000` },
      destination: { accountId: bank.id },
      amount: 1,
      remittanceInformation: 'a\u0000b',
    };
    const reply = await transferOut(t, body.source.accountId, bank.id, 1, {});
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors.map((e: { field: string }) => e.field)).toEqual(['source.accountId']);
    const both = await t.api('POST', '/transfer-out', { body, headers: { 'idempotency-key': 'nul-1' } });
    expect(both.status).toBe(400);
    expect(both.body.details.errors.map((e: { field: string }) => e.field)).toEqual([
      'source.accountId',
      'remittanceInformation',
    ]);
    // Nothing moved, and the key was not taken.
    expect((await balances(t, usd.id)).balance).toBe(10_000);
    expect((await t.api('GET', '/transactions')).body.totalCount).toBe(0);
    const clean = await t.api('POST', '/transfer-out', {
      body: { ...body, source: { accountId: usd.id }, remittanceInformation: 'ab' },
      headers: { 'idempotency-key': 'nul-1' },
    });
    expect(clean.status).toBe(201);
  });
});

describe('request ids', () => {
  it('echoes the caller x-request-id or makes one', async () => {
    const t = await build();
    const given = await t.api('GET', '/config', { headers: { 'x-request-id': 'trace-123' } });
    expect(given.headers['x-request-id']).toBe('trace-123');
    const made = await t.api('GET', '/config');
    expect(String(made.headers['x-request-id'])).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('GET /health', () => {
  it('reports ok without credentials', async () => {
    const t = await build();
    const reply = await t.raw('GET', '/health', { auth: null });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ status: 'ok', store: t.deps.db.dialect });
  });
});

describe('GET /openapi.json', () => {
  it('describes every operation railyard serves, with the schemas it validates with', async () => {
    const t = await build();
    const reply = await t.api('GET', '/openapi.json', { auth: null });
    expect(reply.status).toBe(200);
    const doc = reply.body;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('2025-10-13');
    const operationIds = Object.values(doc.paths).flatMap((p: any) => Object.values(p).map((o: any) => o.operationId));
    expect(operationIds).toEqual(
      expect.arrayContaining([
        'getPlatformConfig',
        'updatePlatformConfig',
        'listTokens',
        'createToken',
        'getTokenById',
        'deleteTokenById',
        'listPlatformExternalAccounts',
        'createPlatformExternalAccount',
        'getPlatformExternalAccountById',
        'deletePlatformExternalAccountById',
        'createPlatformExternalAccountOwnershipChallenge',
        'verifyPlatformExternalAccountOwnership',
      ]),
    );
    const create = doc.paths['/platform/external-accounts'].post;
    expect(create.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/PlatformExternalAccountCreateRequest',
    });
    expect(Object.keys(create.responses).sort()).toEqual(['201', '400', '401', '409', '500']);
    const union = doc.components.schemas.ExternalAccountInfoOneOf;
    expect(union.discriminator.propertyName).toBe('accountType');
    expect(union.discriminator.mapping.LIGHTNING_ACCOUNT).toBe('#/components/schemas/LightningExternalAccountInfo');
    expect(union.oneOf).toHaveLength(46);
    expect(doc.paths['/tokens/{tokenId}'].get.parameters).toEqual([
      { name: 'tokenId', in: 'path', required: true, schema: { type: 'string' } },
    ]);
    // Every reference in the document resolves.
    const text = JSON.stringify(doc);
    for (const [, name] of text.matchAll(/"#\/components\/schemas\/([^"]+)"/g))
      expect(doc.components.schemas[name!], name).toBeDefined();
    // One entry per operation: Fastify's automatic HEAD twins of GET routes are not listed.
    expect(new Set(operationIds).size).toBe(operationIds.length);
    expect(Object.values(doc.paths).some((p: any) => 'head' in p)).toBe(false);
  });

  it("describes railyard's own endpoints in a document of their own at /_railyard/openapi.json", async () => {
    const t = await build();
    const reply = await t.raw('GET', '/_railyard/openapi.json', { auth: null });
    expect(reply.status).toBe(200);
    expect(reply.body.servers).toEqual([{ url: '/_railyard' }]);
    expect(Object.keys(reply.body.paths)).toEqual(
      expect.arrayContaining(['/clock/advance', '/ledger', '/webhooks/deliveries/{deliveryId}/replay']),
    );
    expect(reply.body.paths['/clock/advance'].post.operationId).toBe('railyardAdvanceClock');
    // The Grid API's operations are not in it, nor its own in the Grid API's document.
    const grid = (await t.api('GET', '/openapi.json', { auth: null })).body;
    expect(Object.keys(reply.body.paths).some((p) => p.startsWith('/grid'))).toBe(false);
    expect(Object.keys(grid.paths).some((p) => p.includes('clock'))).toBe(false);
  });
});
