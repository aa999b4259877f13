// The commands that change data (`platform create`, `reset`, `seed`, `snapshot`) as a user runs
// them: real processes against a real server process, while it runs (through its admin
// endpoints, found by its runtime file) and once it has stopped (on the store itself). On the
// embedded store by default; on PostgreSQL when DATABASE_URL is set (in a schema of its own).

import { spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, freePort, MAIN, spawnServer } from './fixtures/server.js';

const databaseUrl = process.env.DATABASE_URL || undefined;
const schemas: string[] = [];
const children: ChildProcessWithoutNullStreams[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

afterAll(async () => {
  if (databaseUrl === undefined) return;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  for (const schema of schemas.splice(0)) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await client.end();
});

/** A new store's settings: a data directory, and on PostgreSQL a URL whose search_path is a schema of its own. */
async function storeEnv(): Promise<Record<string, string>> {
  const env: Record<string, string> = { DATA_DIR: mkdtempSync(join(tmpdir(), 'railyard-cli-')) };
  if (databaseUrl !== undefined) {
    const schema = `cli_${randomBytes(5).toString('hex')}`;
    schemas.push(schema);
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

/** A command that must fail: its exit status and what it printed on stderr. */
function refused(env: Record<string, string>, args: string[]): string {
  const result = spawnSync(process.execPath, [MAIN, ...args], {
    env: cleanEnv(env),
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (result.status !== 1)
    throw new Error(`railyard ${args.join(' ')} exited ${result.status}, not 1:\n${result.stdout}`);
  return result.stderr;
}

async function get(root: string, path: string, credentials: { clientId: string; clientSecret: string }) {
  const reply = await fetch(`${root}${path}`, {
    headers: {
      authorization: `Basic ${Buffer.from(`${credentials.clientId}:${credentials.clientSecret}`).toString('base64')}`,
    },
  });
  return { status: reply.status, body: (await reply.json()) as any };
}

async function addCustomer(root: string, credentials: { clientId: string; clientSecret: string }, fullName: string) {
  const reply = await fetch(`${root}/grid/2025-10-13/customers`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${credentials.clientId}:${credentials.clientSecret}`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      customerType: 'INDIVIDUAL',
      platformCustomerId: `cli-${randomBytes(4).toString('hex')}-000`,
      fullName,
    }),
  });
  expect(reply.status).toBe(201);
}

const names = (list: { data: { fullName: string }[] }) => list.data.map((c) => c.fullName).sort();

const customersPath = '/grid/2025-10-13/customers?limit=100';

describe('railyard platform create, reset, seed and snapshot', () => {
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

  it('snapshot save, list, restore and delete work while the server runs and once it has stopped', async () => {
    const env = await storeEnv();
    let server = await startServer(env);
    const tenant = run(env, ['platform', 'create', '--name', 'Snapshotted']).json;
    const platform = ['--platform', tenant.platformId];
    await addCustomer(server.root, tenant, 'Saved Sam');

    const saved = run(env, ['snapshot', 'save', ...platform, 'first']);
    expect(saved.stderr).toContain('through the running server');
    expect(saved.json).toMatchObject({ name: 'first', rows: { customers: 1 } });
    await addCustomer(server.root, tenant, 'Later Lou');
    expect(run(env, ['snapshot', 'list', ...platform]).json.data.map((s: any) => s.name)).toEqual(['first']);
    expect(refused(env, ['snapshot', 'save', ...platform, 'first'])).toMatch(/409 CONFLICT.*exists/);
    expect(run(env, ['snapshot', 'save', ...platform, '--replace', 'first']).json.rows.customers).toBe(2);
    await addCustomer(server.root, tenant, 'Gone Gus');
    const restored = run(env, ['snapshot', 'restore', ...platform, 'first']);
    expect(restored.stderr).toContain('through the running server');
    expect(restored.json).toMatchObject({ name: 'first', platformId: tenant.platformId, restored: { customers: 2 } });
    expect(names((await get(server.root, customersPath, tenant)).body)).toEqual(['Later Lou', 'Saved Sam']);
    expect(refused(env, ['snapshot', 'save', ...platform, 'bad name'])).toContain('a snapshot name is');
    expect(refused(env, ['snapshot', 'restore', ...platform])).toContain('usage:');

    // Stopped: the same commands on the store; without --platform, the platform start prints.
    await stop(server);
    expect(run(env, ['snapshot', 'save', 'default-one']).json.name).toBe('default-one');
    const offline = run(env, ['snapshot', 'list', ...platform]);
    expect(offline.stderr).not.toContain('through the running server');
    expect(offline.json.data.map((s: any) => s.name)).toEqual(['first']);
    expect(run(env, ['snapshot', 'restore', ...platform, 'first']).json.restored.customers).toBe(2);
    expect(run(env, ['snapshot', 'delete', ...platform, 'first']).json).toEqual({ name: 'first', deleted: true });
    expect(refused(env, ['snapshot', 'restore', ...platform, 'first'])).toContain('REFERENCE_NOT_FOUND');

    // Started again: what the commands did on the store is there, the snapshots too.
    server = await startServer(env);
    expect(names((await get(server.root, customersPath, tenant)).body)).toEqual(['Later Lou', 'Saved Sam']);
    expect((await get(server.root, '/_railyard/snapshots', server)).body.data.map((s: any) => s.name)).toEqual([
      'default-one',
    ]);
    expect((await get(server.root, '/_railyard/snapshots', tenant)).body.data).toEqual([]);
  }, 180_000);
});
