// The commands that change data (`platform create`, `reset`, `seed`) as a user runs them: real
// processes against a real server process, while it runs (through its admin endpoints, found
// by its runtime file) and once it has stopped (on the store itself). On the embedded store by
// default; on PostgreSQL when DATABASE_URL is set (in a schema of its own).

import { spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, freePort, MAIN, spawnServer } from './fixtures/server.js';

const databaseUrl = process.env.DATABASE_URL || undefined;
const schema = `cli_${randomBytes(5).toString('hex')}`;
const children: ChildProcessWithoutNullStreams[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

afterAll(async () => {
  if (databaseUrl === undefined) return;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await client.end();
});

/** The store's settings: a data directory, and on PostgreSQL a URL whose search_path is our schema. */
async function storeEnv(): Promise<Record<string, string>> {
  const env: Record<string, string> = { DATA_DIR: mkdtempSync(join(tmpdir(), 'railyard-cli-')) };
  if (databaseUrl !== undefined) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.end();
    const url = new URL(databaseUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    env.DATABASE_URL = url.toString();
  }
  return env;
}

interface Started {
  child: ChildProcessWithoutNullStreams;
  root: string;
  platformId: string;
  clientId: string;
  clientSecret: string;
}

async function startServer(env: Record<string, string>): Promise<Started> {
  const port = await freePort();
  const { child, field } = await spawnServer(cleanEnv({ ...env, PORT: String(port) }));
  children.push(child);
  return {
    child,
    root: `http://127.0.0.1:${port}`,
    platformId: field('Platform'),
    clientId: field('Client ID'),
    clientSecret: field('Client secret'),
  };
}

async function stop(server: Started, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (server.child.exitCode !== null) return;
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill(signal);
  await exited;
}

function run(env: Record<string, string>, args: string[]) {
  const result = spawnSync(process.execPath, [MAIN, ...args], {
    env: cleanEnv(env),
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (result.status !== 0) throw new Error(`railyard ${args.join(' ')} exited ${result.status}:\n${result.stderr}`);
  return { json: JSON.parse(result.stdout), stderr: result.stderr };
}

async function get(root: string, path: string, credentials: { clientId: string; clientSecret: string }) {
  const reply = await fetch(`${root}${path}`, {
    headers: {
      authorization: `Basic ${Buffer.from(`${credentials.clientId}:${credentials.clientSecret}`).toString('base64')}`,
    },
  });
  return { status: reply.status, body: (await reply.json()) as any };
}

const customersPath = '/grid/2025-10-13/customers?limit=100';

describe('railyard platform create, reset and seed', () => {
  // note: one server and six commands in all: each process start costs about a second of CI.
  it('work while the server runs (through it) and once it has stopped (on the store)', async () => {
    const env = await storeEnv();
    const server = await startServer(env);
    const file = join(env.DATA_DIR!, 'server.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8')).url).toBe(server.root);

    // The server-admin endpoints take nothing but the token.
    const basic = `Basic ${Buffer.from(`${server.clientId}:${server.clientSecret}`).toString('base64')}`;
    for (const authorization of [undefined, 'Bearer not-the-token', basic]) {
      const refused = await fetch(`${server.root}/_railyard/server/platforms`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ name: 'Intruder' }),
      });
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
    }

    // While it runs, each command goes through the server (the embedded store is the
    // server's alone: a second process could not even open it).
    const tenant = run(env, ['platform', 'create', '--name', 'Added while running']);
    expect(tenant.stderr).toContain(`through the running server at ${server.root}`);
    expect((await get(server.root, '/grid/2025-10-13/config', tenant.json)).body.id).toBe(tenant.json.platformId);

    const seeded = run(env, ['seed', '--platform', tenant.json.platformId, '--seed', '3', '--size', '1']);
    expect(seeded.stderr).toContain('through the running server');
    expect(seeded.json).toMatchObject({ platformId: tenant.json.platformId, seed: 3, size: 1 });
    expect((await get(server.root, customersPath, tenant.json)).body.data).toHaveLength(9);
    expect((await get(server.root, customersPath, server)).body.data).toEqual([]);
    // The server's runner took the deliveries as they came: each was tried before the seed answered.
    const deliveries = (await get(server.root, '/_railyard/webhooks/deliveries?limit=100', tenant.json)).body.data;
    expect(deliveries.length).toBe(seeded.json.created.webhookDeliveries);
    expect(deliveries.filter((d: { attemptCount: number }) => d.attemptCount !== 1)).toEqual([]);
    expect(new Set(deliveries.map((d: { status: string }) => d.status))).toEqual(new Set(['DELIVERED', 'PENDING']));

    const wiped = run(env, ['reset', '--platform', tenant.json.platformId]);
    expect(wiped.stderr).toContain('through the running server');
    expect(wiped.json).toMatchObject({ platformId: tenant.json.platformId, removed: { customers: 9 } });
    expect((await get(server.root, customersPath, tenant.json)).body.data).toEqual([]);
    expect((await get(server.root, '/_railyard/ledger', tenant.json)).body.balanced).toBe(true);

    // A clean stop takes the runtime file away.
    await stop(server);
    expect(existsSync(file)).toBe(false);
    // A file left by a server that was killed names nobody who answers: it is ignored.
    writeFileSync(file, JSON.stringify({ url: `http://127.0.0.1:${await freePort()}`, token: 'stale', pid: 1 }));

    // Stopped: each command works on the store; seed and reset act on the platform start prints.
    const offline = run(env, ['platform', 'create', '--name', 'Added while stopped']);
    expect(offline.stderr).not.toContain('through the running server');
    expect(offline.json.platformId).toMatch(/^Platform:/);
    const seededOffline = run(env, ['seed', '--seed', '4', '--size', '1']);
    expect(seededOffline.json).toMatchObject({ platformId: server.platformId, seed: 4, created: { individuals: 5 } });
    const wipedOffline = run(env, ['reset']);
    expect(wipedOffline.stderr).not.toContain('through the running server');
    expect(wipedOffline.json).toMatchObject({ platformId: server.platformId, removed: { customers: 9 } });
  }, 180_000);
});
