// What the bench's parts share: its settings, starting and stopping servers, autocannon runs,
// and the small HTTP helpers of the scenarios' set-up.

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

export const here = dirname(fileURLToPath(import.meta.url));
export const durationSeconds = Number(process.env.BENCH_DURATION ?? 10);
export const warmupSeconds = Number(process.env.BENCH_WARMUP ?? 3);
export const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** A PostgreSQL database for the PostgreSQL part; without it the bench starts a server of its own. */
export const databaseUrl = process.env.DATABASE_URL;

/** The directories the bench made for stores, removed when it exits. */
const madeDirs: string[] = [];
process.once('exit', () => {
  for (const dir of madeDirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * A new directory under the system's temporary one, removed when the bench exits: the stores
 * of a whole run take gigabytes, and run after run they filled the disk.
 */
export function benchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  madeDirs.push(dir);
  return dir;
}

export interface ServerInfo {
  baseUrl: string;
  origin: string;
  auth: string;
}

export function waitForLine(child: ChildProcess, pattern: RegExp, label: string, timeoutMs = 20_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${label} did not start:\n${out}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const match = pattern.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(out);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${label} exited with ${code}:\n${out}`)));
  });
}

/**
 * A railyard server on the embedded store, or on the PostgreSQL database `options.databaseUrl`.
 * `dataDir`: the embedded store's directory (by default a new one); `credentials`: the
 * platform's, for a store made by an earlier server (whose restart cannot print the secret).
 */
export async function startRailyard(
  options: {
    databaseUrl?: string | undefined;
    dataDir?: string;
    credentials?: { clientId: string; clientSecret: string };
    /** How long to wait for the server's banner (a large store takes longer to open). */
    startTimeoutMs?: number;
    /** More settings of the server's environment. */
    env?: Record<string, string>;
    /** Options for node itself, before the server's script (a CPU profile: bench/profile.ts). */
    nodeArgs?: string[];
  } = {},
): Promise<{ child: ChildProcess; info: ServerInfo; dataDir: string }> {
  const dataDir = options.dataDir ?? benchDir('railyard-bench-');
  // The scenarios measure a payout that settles in its request, as they always have: the
  // server's platforms settle `instant` (a `hosted` payout would leave its settlement to a job).
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDir,
    RAILYARD_SETTLEMENT_TIMING: 'instant',
    ...options.env,
  };
  delete env.RAILYARD_RECORD;
  delete env.DATABASE_URL;
  if (options.credentials !== undefined) {
    env.GRID_CLIENT_ID = options.credentials.clientId;
    env.GRID_CLIENT_SECRET = options.credentials.clientSecret;
  }
  if (options.databaseUrl !== undefined) {
    env.DATABASE_URL = options.databaseUrl;
    // A PostgreSQL database outlives the run, and a restart cannot print an existing
    // platform's secret: each run brings credentials of its own (a platform of its own).
    if (env.GRID_CLIENT_ID === undefined) {
      env.GRID_CLIENT_ID = `bench-${randomUUID()}`;
      env.GRID_CLIENT_SECRET = randomBytes(24).toString('hex');
    }
  }
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), join(here, 'main.js'), 'start'], { env });
  const out = await waitForLine(child, /Client secret\s+\S+/, 'railyard', options.startTimeoutMs);
  const field = (label: string) => new RegExp(`${label}\\s+(\\S+)`).exec(out)![1]!;
  const baseUrl = field('Base URL');
  return {
    child,
    dataDir,
    info: {
      baseUrl,
      origin: new URL(baseUrl).origin,
      auth: `Basic ${Buffer.from(`${field('Client ID')}:${field('Client secret')}`).toString('base64')}`,
    },
  };
}

export function stopped(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

/** The server's resident memory after the whole bench, in MB (issue 21, target 6). */
export const RSS_MAX_MB = 200;

export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

export async function run(
  options: autocannon.Options,
  seconds: number,
  clients = connections,
): Promise<autocannon.Result> {
  return autocannon({ ...options, connections: clients, duration: seconds });
}

/**
 * A load at a steady rate: one request every 1/rate s, each sent on time whether or not the
 * ones before have their answers (on up to `clients` keep-alive connections). autocannon's
 * `overallRate` is not that: each of its connections sends its share of a second at once when
 * the second begins, all connections together, so "100 req/s" arrives as a burst of 100 every
 * second, and the last of a burst waits behind the 99 before it.
 */
export async function steady(
  url: string,
  headers: (sequence: number) => Record<string, string>,
  body: string,
  rate: number,
  seconds: number,
  clients = connections,
): Promise<{ rps: number; errors: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const target = new URL(url);
  let errors = 0;
  const one = (sequence: number) =>
    new Promise<void>((resolve) => {
      const request = http.request(target, {
        method: 'POST',
        agent,
        headers: { ...headers(sequence), 'content-length': String(Buffer.byteLength(body)) },
      });
      request.on('response', (response) => {
        if ((response.statusCode ?? 0) >= 300) errors++;
        response.resume().on('end', resolve);
      });
      request.on('error', () => {
        errors++;
        resolve();
      });
      request.end(body);
    });
  const started = performance.now();
  const sent: Promise<void>[] = [];
  for (let i = 0; performance.now() - started < seconds * 1000; i++) {
    const wait = started + (i * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    sent.push(one(i));
  }
  await Promise.all(sent);
  agent.destroy();
  return { rps: sent.length / seconds, errors };
}

export function digits(count: number): string {
  let out = '';
  for (let i = 0; i < count; i++) out += String(randomInt(10));
  return out;
}

export async function post(server: ServerInfo, path: string, body: unknown): Promise<any> {
  const reply = await fetch(`${server.baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: server.auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!reply.ok) throw new Error(`setup ${path} failed: ${reply.status} ${await reply.text()}`);
  return reply.json();
}

export async function get(server: ServerInfo, path: string): Promise<any> {
  const reply = await fetch(`${server.baseUrl}${path}`, { headers: { authorization: server.auth } });
  if (!reply.ok) throw new Error(`setup ${path} failed: ${reply.status} ${await reply.text()}`);
  return reply.json();
}

export const usdAccount = (accountNumber: string) => ({
  currency: 'USD',
  accountInfo: {
    accountType: 'USD_ACCOUNT',
    accountNumber,
    routingNumber: '021000021',
    beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Bench Mark' },
  },
});

/**
 * What a transfer-out load needs: the platform's USD account, funded for every transfer of a
 * run (each sends 1 cent), a new destination, and the request body.
 */
export async function transferOutSetup(server: ServerInfo): Promise<{ source: string; body: string }> {
  const list = await get(server, '/platform/internal-accounts?currency=USD');
  const source = list.data[0].id as string;
  await post(server, `/sandbox/internal-accounts/${source}/fund`, { amount: 100_000_000_000 });
  const destination = await post(server, '/platform/external-accounts', usdAccount(`${digits(9)}000`));
  return {
    source,
    body: JSON.stringify({ source: { accountId: source }, destination: { accountId: destination.id }, amount: 1 }),
  };
}

/**
 * The transfer-out load: the success path (suffix 000), each request with its own
 * Idempotency-Key (a prefix per call, as a scenario may be prepared again on the same server).
 */
export async function transferOutLoad(server: ServerInfo): Promise<autocannon.Options> {
  const { body } = await transferOutSetup(server);
  const prefix = randomUUID();
  let sequence = 0;
  return {
    url: `${server.baseUrl}/transfer-out`,
    method: 'POST',
    headers: { authorization: server.auth, 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (request) => ({
          ...request,
          body,
          headers: { ...request.headers, 'idempotency-key': `bench-${prefix}-${sequence++}` },
        }),
      },
    ],
  };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** The start-up target (issue 21, target 6): launch to the printed credentials, embedded store. */
export const STARTUP_MAX_MS = 1000;

export interface Startup {
  /** Launch to the banner's client secret, in milliseconds, for each start. */
  wallMs: number[];
  /** CPU time the process had used by then, in milliseconds (user + system). */
  cpuMs: number[];
}

/**
 * Starts `npm start`'s command (node --enable-source-maps dist/main.js start) `runs` times
 * on a new embedded store, as a newcomer's first start does (creating the store and the
 * platform), and times each until the banner shows the credentials.
 */
/** The CPU a process has used so far (user and system, all its threads), in ms, from /proc/<pid>/stat. */
export function cpuMs(pid: number): number {
  const ticksPerMs = 100 / 1000; // /proc/<pid>/stat counts clock ticks of 10 ms
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticksPerMs;
}

export async function measureStartup(runs = 3): Promise<Startup> {
  const result: Startup = { wallMs: [], cpuMs: [] };
  for (let i = 0; i < runs; i++) {
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', LOG_LEVEL: 'warn' };
    env.DATA_DIR = benchDir('railyard-startup-');
    delete env.RAILYARD_RECORD;
    delete env.DATABASE_URL;
    delete env.GRID_CLIENT_ID;
    delete env.GRID_CLIENT_SECRET;
    const started = performance.now();
    const child = spawn(process.execPath, ['--enable-source-maps', join(here, 'main.js'), 'start'], { env });
    await waitForLine(child, /Client secret\s+\S+/, 'railyard');
    result.wallMs.push(performance.now() - started);
    result.cpuMs.push(cpuMs(child.pid!));
    child.kill('SIGTERM');
    await stopped(child);
  }
  return result;
}
