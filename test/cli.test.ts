// The `railyard` command as a user runs it: a real process on a real port.

import { spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, freePort, MAIN, spawnServer } from './fixtures/server.js';

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** The CLI's tests read its info lines too. */
const cliEnv = (env: Record<string, string>) => cleanEnv({ LOG_LEVEL: 'info', ...env });

interface Started {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  readyAfterMs: number;
}

async function startServer(env: Record<string, string>): Promise<Started> {
  const spawnedAt = performance.now();
  const { child, output, field } = await spawnServer(cliEnv(env), 15_000);
  children.push(child);
  const readyAfterMs = performance.now() - spawnedAt;
  return {
    child,
    output,
    baseUrl: field('Base URL'),
    clientId: field('Client ID'),
    clientSecret: field('Client secret'),
    readyAfterMs,
  };
}

function authHeader(id: string, secret: string) {
  return { authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` };
}

async function exited(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe('railyard start', () => {
  it('serves the API on the embedded store with the credentials it prints', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'railyard-'));
    const port = await freePort();
    const server = await startServer({ DATA_DIR: dataDir, PORT: String(port) });
    expect(server.baseUrl).toBe(`http://127.0.0.1:${port}/grid/2025-10-13`);
    expect(server.output()).toMatch(/BEGIN PUBLIC KEY/);
    const config = await fetch(`${server.baseUrl}/config`, {
      headers: authHeader(server.clientId, server.clientSecret),
    });
    expect(config.status).toBe(200);
    const saved = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8'));
    expect(saved.clientSecret).toBe(server.clientSecret);

    // Structured logs carry a request id per request.
    await fetch(`${server.baseUrl}/config`, {
      headers: { ...authHeader(server.clientId, server.clientSecret), 'x-request-id': 'log-me-42' },
    });
    // The log line is written as the answer goes out: wait for it (bounded), not a fixed time.
    const findLogLine = () =>
      server
        .output()
        .split('\n')
        .find((line) => line.includes('log-me-42'));
    for (let i = 0; i < 250 && findLogLine() === undefined; i++) await new Promise((r) => setTimeout(r, 20));
    const logLine = findLogLine();
    expect(JSON.parse(logLine!)).toMatchObject({ reqId: 'log-me-42', service: 'railyard' });

    server.child.kill('SIGTERM');
    expect(await exited(server.child)).toBe(0);

    // A restart on the same data keeps the platform and prints the same credentials.
    const again = await startServer({ DATA_DIR: dataDir, PORT: String(port) });
    expect(again.clientId).toBe(server.clientId);
    expect(again.clientSecret).toBe(server.clientSecret);
    again.child.kill('SIGTERM');
    expect(await exited(again.child)).toBe(0);
  });

  it('prints loopback URLs and where it listens when it listens on every interface (HOST=0.0.0.0)', async () => {
    const port = await freePort();
    const server = await startServer({ DATA_DIR: ':memory:', HOST: '0.0.0.0', PORT: String(port) });
    expect(server.baseUrl).toBe(`http://127.0.0.1:${port}/grid/2025-10-13`);
    const lines = server.output().split('\n');
    expect(lines).toContain(`  Health         http://127.0.0.1:${port}/health`);
    expect(lines).toContain(
      `  Listening on   0.0.0.0:${port}, every interface (from a container's host: the port published for ${port})`,
    );
    const config = await fetch(`${server.baseUrl}/config`, {
      headers: authHeader(server.clientId, server.clientSecret),
    });
    expect(config.status).toBe(200);
    server.child.kill('SIGTERM');
    expect(await exited(server.child)).toBe(0);
  });

  it('prints no listening line on one address (the default, 127.0.0.1)', async () => {
    const server = await startServer({ DATA_DIR: ':memory:', PORT: String(await freePort()) });
    expect(server.output()).not.toMatch(/Listening on/);
  });

  it('uses GRID_CLIENT_ID and GRID_CLIENT_SECRET when they are set', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'railyard-'));
    const env = {
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      GRID_CLIENT_ID: 'team-sandbox-client',
      GRID_CLIENT_SECRET: 'a-long-enough-shared-secret',
    };
    const server = await startServer(env);
    expect(server.clientId).toBe('team-sandbox-client');
    const reply = await fetch(`${server.baseUrl}/tokens`, {
      headers: authHeader('team-sandbox-client', 'a-long-enough-shared-secret'),
    });
    expect(reply.status).toBe(200);
  });

  it('finishes requests in flight when it receives SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'railyard-'));
    const server = await startServer({ DATA_DIR: dataDir, PORT: String(await freePort()) });
    const headers = authHeader(server.clientId, server.clientSecret);
    const body = JSON.stringify({ name: 'drain', permissions: ['VIEW'] });
    // SIGTERM goes once the server has answered one request, so it is at work on the others:
    // a fixed pause before it proved too short for a busy machine (none had been read yet).
    let firstAnswered!: () => void;
    const working = new Promise<void>((resolve) => (firstAnswered = resolve));
    const inFlight = Array.from({ length: 100 }, () =>
      fetch(`${server.baseUrl}/tokens`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body,
      }).then((r) => {
        firstAnswered();
        return r.status;
      }),
    );
    await working;
    server.child.kill('SIGTERM');
    const statuses = await Promise.all(inFlight.map((p) => p.catch(() => 'refused')));
    expect(await exited(server.child)).toBe(0);
    // Every request the server accepted was answered; none was cut off half-way.
    expect(statuses.every((s) => s === 201 || s === 503 || s === 'refused')).toBe(true);
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThan(0);
    expect(server.output()).toMatch(/"msg":"stopped"/);
  });
});

describe('start-up errors', () => {
  function runOnce(env: Record<string, string>, args = ['start']) {
    return spawnSync(process.execPath, [MAIN, ...args], { env: cliEnv(env), encoding: 'utf8', timeout: 20_000 });
  }

  it('stops with one line when the port is taken', async () => {
    const port = await freePort();
    const blocker = createServer().listen(port, '127.0.0.1');
    await new Promise((r) => blocker.once('listening', r));
    try {
      const result = runOnce({ DATA_DIR: mkdtempSync(join(tmpdir(), 'railyard-')), PORT: String(port) });
      expect(result.status).toBe(1);
      expect(result.stderr.trim().split('\n')).toEqual([
        `railyard: cannot listen on 127.0.0.1:${port}: the port is already in use (set PORT to another one)`,
      ]);
    } finally {
      blocker.close();
    }
  });

  it('stops with one line when another server holds the data directory', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'railyard-'));
    const first = await startServer({ DATA_DIR: dataDir, PORT: '0' });
    const result = runOnce({ DATA_DIR: dataDir, PORT: '0' });
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^railyard: the store \(SQLite at .*railyard\.sqlite\) is in use by another process/);
    // The first server still answers.
    expect((await fetch(first.baseUrl.replace(/\/grid\/.*$/, '/health'))).status).toBe(200);
  });

  it('stops with one line when DATABASE_URL cannot be reached', () => {
    const result = runOnce({ DATABASE_URL: 'postgres://railyard:secret@127.0.0.1:9/railyard', PORT: '0' });
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^railyard: cannot connect to PostgreSQL at postgres:\/\/railyard:\*\*\*@127\.0\.0\.1:9\/railyard: /,
    );
    expect(lines[0]).not.toContain('secret');
  });

  it.each([
    [{ PORT: 'eighty' }, 'railyard: PORT must be an integer between 0 and 65535, got "eighty"'],
    [{ DATABASE_URL: 'mysql://x' }, 'railyard: DATABASE_URL must start with postgres:// or postgresql://'],
    [{ GRID_CLIENT_ID: 'only-the-id' }, 'railyard: GRID_CLIENT_ID and GRID_CLIENT_SECRET must be set together'],
    [{ RAILYARD_PG_PREPARED: 'yes' }, 'railyard: RAILYARD_PG_PREPARED must be 0 or 1, got "yes"'],
    [
      { RAILYARD_ADMIN_TOKEN: 'too-short' },
      'railyard: RAILYARD_ADMIN_TOKEN must be 16 to 512 printable ASCII characters without spaces (it is sent as a Bearer token), got 9 characters',
    ],
    [
      { RAILYARD_ADMIN_TOKEN: 'long enough but has spaces' },
      'railyard: RAILYARD_ADMIN_TOKEN must be 16 to 512 printable ASCII characters without spaces (it is sent as a Bearer token), got 26 characters with a space or another character outside that range',
    ],
    [
      { RAILYARD_PASSKEY_ORIGINS: 'http://127.0.0.1:3000' },
      'railyard: RAILYARD_PASSKEY_ORIGINS must be a comma-separated list of origins such as https://app.example.com (http only on localhost): "http://127.0.0.1:3000" is an IP address, where browsers refuse passkeys (a SecurityError): serve the page from http://localhost:3000',
    ],
    [
      { RAILYARD_SETTLEMENT_TIMING: 'slow' },
      'railyard: RAILYARD_SETTLEMENT_TIMING must be instant or hosted, got "slow"',
    ],
    [
      { RAILYARD_JOURNAL_SIZE: '10k' },
      'railyard: RAILYARD_JOURNAL_SIZE must be an integer from 0 (no journal) to 1000000, got "10k"',
    ],
  ])('stops with one line for a bad setting %o', (env, line) => {
    const result = runOnce(env);
    expect(result.status).toBe(1);
    expect(result.stderr.trim()).toBe(line);
  });
});

describe('railyard platform create', () => {
  it('adds a platform whose credentials work and see only its own data', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'railyard-'));
    const create = (...args: string[]) =>
      spawnSync(process.execPath, [MAIN, 'platform', 'create', '--name', 'Second tenant', ...args], {
        env: cliEnv({ DATA_DIR: dataDir }),
        encoding: 'utf8',
      });
    const refused = create('--settlement-timing', 'later');
    expect(refused.status).toBe(1);
    expect(refused.stderr.trim()).toBe('railyard: --settlement-timing must be instant or hosted, got "later"');
    const created = create('--settlement-timing', 'instant');
    expect(created.status).toBe(0);
    const tenant = JSON.parse(created.stdout);
    expect(tenant).toMatchObject({
      platformId: expect.stringMatching(/^Platform:/),
      clientId: expect.any(String),
      clientSecret: expect.any(String),
    });

    const server = await startServer({ DATA_DIR: dataDir, PORT: String(await freePort()) });
    const own = await fetch(`${server.baseUrl}/config`, { headers: authHeader(tenant.clientId, tenant.clientSecret) });
    expect(((await own.json()) as { id: string }).id).toBe(tenant.platformId);
    const settings = await fetch(`${server.baseUrl.replace(/\/grid\/.*$/, '')}/_railyard/platform`, {
      headers: authHeader(tenant.clientId, tenant.clientSecret),
    });
    expect(((await settings.json()) as { settlementTiming: string }).settlementTiming).toBe('instant');
    // The printed default platform is the first one created, the tenant's here.
    expect(server.clientId).toBe(tenant.clientId);
  });
});
