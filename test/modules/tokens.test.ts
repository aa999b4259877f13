import { describe, expect, it } from 'vitest';
import { build } from '../helper.js';

describe('POST /tokens', () => {
  it('returns the secret once, never again', async () => {
    const t = await build();
    const created = await t.api('POST', '/tokens', {
      body: { name: 'payouts bot', permissions: ['VIEW', 'TRANSACT'] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^Token:/),
      name: 'payouts bot',
      permissions: ['VIEW', 'TRANSACT'],
      clientId: expect.stringMatching(/^[0-9a-f]{32}$/),
      clientSecret: expect.stringMatching(/^[0-9a-f]{48}$/),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const fetched = await t.api('GET', `/tokens/${created.body.id}`);
    expect(fetched.body.clientSecret).toBeUndefined();
    expect(fetched.body).toEqual({ ...created.body, clientSecret: undefined });
    const listed = await t.api('GET', '/tokens');
    expect(listed.body.data.every((token: { clientSecret?: string }) => token.clientSecret === undefined)).toBe(true);
  });

  it('names every invalid field', async () => {
    const t = await build();
    const body = { name: '', permissions: ['VIEW', 'ROOT'] };
    const reply = await t.api('POST', '/tokens', { body });
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors.map((e: { field: string }) => e.field).sort()).toEqual(['permissions[1]']);
    // An empty name and an empty list of permissions break no rule of the reference: strict mode refuses them.
    const empty = await t.api('POST', '/tokens', { body: { name: 'x', permissions: [] } });
    expect(empty.status).toBe(201);
    expect(empty.body.permissions).toEqual([]);
    const strict = await t.newPlatform({ strictIdentifiers: true });
    const strictReply = await strict.api('POST', '/tokens', { body });
    expect(strictReply.body.details.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'name',
      'permissions[1]',
    ]);
    const strictEmpty = await strict.api('POST', '/tokens', { body: { name: 'x', permissions: [] } });
    expect(strictEmpty.body.details.errors).toEqual([
      { field: 'permissions', message: 'must have at least 1 item(s) (strict identifiers)' },
    ]);
  });
});

describe('GET /tokens', () => {
  it('filters by name and creation time and pages', async () => {
    // Taken before the platform (and its own token) exists, however long building it takes.
    const before = new Date(Date.now() - 1000).toISOString();
    const t = await build();
    for (const name of ['alpha', 'beta', 'beta', 'gamma'])
      await t.api('POST', '/tokens', { body: { name, permissions: ['VIEW'] } });
    const betas = await t.api('GET', '/tokens?name=beta');
    expect(betas.body.totalCount).toBe(2);
    expect(betas.body.data.map((x: { name: string }) => x.name)).toEqual(['beta', 'beta']);
    const all = await t.api('GET', `/tokens?createdAfter=${encodeURIComponent(before)}`);
    expect(all.body.totalCount).toBe(5); // four new ones and the platform's own token
    const none = await t.api('GET', `/tokens?createdBefore=${encodeURIComponent(before)}`);
    expect(none.body.totalCount).toBe(0);
    const paged = await t.api('GET', '/tokens?limit=3');
    expect(paged.body).toMatchObject({ hasMore: true, totalCount: 5 });
    const rest = await t.api('GET', `/tokens?limit=3&cursor=${paged.body.nextCursor}`);
    expect(rest.body.data).toHaveLength(2);
    const ids = [...paged.body.data, ...rest.body.data].map((x: { id: string }) => x.id);
    expect(new Set(ids).size).toBe(5);
    expect((await t.api('GET', '/tokens?createdAfter=yesterday')).status).toBe(400);
  });

  it('shows one platform only its own tokens', async () => {
    const t = await build();
    const other = await t.newPlatform();
    const list = await other.api('GET', '/tokens');
    expect(list.body.data.map((x: { id: string }) => x.id)).toEqual([other.tokenId]);
    expect((await other.api('GET', `/tokens/${t.tokenId}`)).status).toBe(404);
    expect((await other.api('DELETE', `/tokens/${t.tokenId}`)).status).toBe(404);
    expect((await t.api('GET', '/config')).status).toBe(200);
  });
});

describe('GET and DELETE /tokens/{tokenId}', () => {
  it('answers 404 TOKEN_NOT_FOUND for unknown and deleted tokens', async () => {
    const t = await build();
    const created = await t.api('POST', '/tokens', { body: { name: 'temp', permissions: ['MANAGE'] } });
    expect((await t.api('DELETE', `/tokens/${created.body.id}`)).status).toBe(204);
    for (const [method, id] of [
      ['GET', created.body.id],
      ['DELETE', created.body.id],
      ['GET', 'Token:nope'],
    ]) {
      const reply = await t.api(method!, `/tokens/${id}`);
      expect(reply.status).toBe(404);
      expect(reply.body).toMatchObject({ status: 404, code: 'TOKEN_NOT_FOUND' });
    }
  });

  it('lets a token delete itself, after which it is refused', async () => {
    const t = await build();
    expect((await t.api('DELETE', `/tokens/${t.tokenId}`)).status).toBe(204);
    expect((await t.api('GET', '/tokens')).status).toBe(401);
  });
});
