// RAILYARD_ADMIN_TOKEN: a server started with a server-admin token of the caller's choosing,
// as a CI job or a container starts it, and a test suite in any language that makes a platform
// per test file, seeds and resets it over HTTP with that token. A real server process, on the
// store the suite runs on (a schema of its own on PostgreSQL, nothing on disk otherwise).

import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer, type ServerProcess } from '../fixtures/server.js';
import { individualBody } from '../fixtures/customers.js';
import { basic, databaseUrl } from '../helper.js';

const ADMIN_TOKEN = `ci-admin-${randomBytes(12).toString('hex')}`;
/**
 * A guard against a hung run, not a speed limit: a new PostgreSQL schema's migrations, a start
 * and a seed take several times their usual length on a busy 2-core machine.
 */
const TIMEOUT_MS = 120_000;

describe('a server started with RAILYARD_ADMIN_TOKEN', () => {
  const schema = `admin_${randomBytes(5).toString('hex')}`;
  let server: ServerProcess | undefined;
  afterAll(async () => {
    await server?.kill('SIGKILL');
    if (databaseUrl === undefined) return;
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  });

  it(
    'makes, seeds and resets platforms over HTTP for a client that knows only the token',
    async () => {
      let store: Record<string, string> = { DATA_DIR: ':memory:' };
      if (databaseUrl !== undefined) {
        const client = new pg.Client({ connectionString: databaseUrl });
        await client.connect();
        await client.query(`CREATE SCHEMA ${schema}`);
        await client.end();
        const url = new URL(databaseUrl);
        url.searchParams.set('options', `-c search_path=${schema}`);
        store = { DATABASE_URL: url.toString() };
      }
      server = await startServer({ ...store, RAILYARD_ADMIN_TOKEN: ADMIN_TOKEN });
      const admin = async (method: string, path: string, body?: unknown, token = ADMIN_TOKEN) => {
        const reply = await fetch(`${server!.origin}/_railyard/server${path}`, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: reply.status, body: (await reply.json()) as any };
      };

      const refused = await admin('GET', '/info', undefined, 'not-the-admin-token-000');
      expect(refused.status).toBe(401);
      expect(refused.body).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
      expect((await admin('GET', '/info')).body.store).toBe(databaseUrl === undefined ? 'sqlite' : 'postgres');

      // A platform per test file: two made at once, each with its own credentials and data.
      const [first, second] = await Promise.all([
        admin('POST', '/platforms', { name: 'checkout.test.ts' }),
        admin('POST', '/platforms', { name: 'payouts.test.ts' }),
      ]);
      expect(first.status).toBe(201);
      expect(second.status).toBe(201);
      expect(first.body.platformId).not.toBe(second.body.platformId);
      const as =
        (created: { clientId: string; clientSecret: string }) =>
        async (method: string, path: string, body?: unknown) => {
          const reply = await fetch(`${server!.baseUrl}${path}`, {
            method,
            headers: {
              authorization: basic(created.clientId, created.clientSecret),
              ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          });
          return { status: reply.status, body: (await reply.json()) as any };
        };
      const checkout = as(first.body);
      const payouts = as(second.body);
      expect((await checkout('GET', '/config')).body.id).toBe(first.body.platformId);
      expect((await checkout('POST', '/customers', individualBody('Imani Clarke'))).status).toBe(201);

      // Seeded, then reset: the first platform starts over; the second never saw either.
      const seeded = await admin('POST', '/seed', { platformId: first.body.platformId, seed: 3, size: 2 });
      expect(seeded.status, JSON.stringify(seeded.body)).toBe(200);
      expect((await checkout('GET', '/customers?limit=100')).body.totalCount).toBeGreaterThan(1);
      expect((await payouts('GET', '/customers')).body.totalCount).toBe(0);
      const reset = await admin('POST', '/reset', { platformId: first.body.platformId });
      expect(reset.status).toBe(200);
      expect(reset.body.removed.customers).toBeGreaterThan(1);
      expect((await checkout('GET', '/customers')).body.totalCount).toBe(0);
      // The credentials survive the reset.
      expect((await checkout('GET', '/config')).status).toBe(200);
      // The seed's own requests are not the app's: the journal holds only the test's.
      const journal = await fetch(`${server.origin}/_railyard/requests`, {
        headers: { authorization: basic(first.body.clientId, first.body.clientSecret) },
      });
      expect(((await journal.json()) as { data: { operationId: string }[] }).data.map((r) => r.operationId)).toEqual([
        'getPlatformConfig',
        'listCustomers',
      ]);
    },
    TIMEOUT_MS,
  );
});
