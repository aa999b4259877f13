// The test harness: each call to build() starts the real app (buildApp, every hook and
// route) on a fresh store: in-memory SQLite, or a PostgreSQL schema of its own when
// DATABASE_URL is set. Requests go through Fastify's HTTP injection, so they exercise
// routing, parsing, validation, auth and serialization exactly as a socket would.

import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { ManualClock, systemClock, type Clock } from '../src/clock.js';
import { BASE_PATH, type Config } from '../src/config.js';
import { dropPgSchema, openDb } from '../src/db/index.js';
import { AuthCache } from '../src/http/auth.js';
import type { Deps } from '../src/http/deps.js';
import { createPlatform } from '../src/modules/platform/service.js';

export const databaseUrl = process.env.DATABASE_URL || undefined;

export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    host: '127.0.0.1',
    port: 0,
    dataDir: ':memory:',
    databaseUrl,
    clientId: undefined,
    clientSecret: undefined,
    logLevel: 'silent',
    recordFile: process.env.RAILYARD_RECORD || undefined,
    validateResponses: true,
    // The suite's tests are about what a payment does, not how long it takes: their platforms
    // settle payouts at once unless a test asks for `hosted` (build({settlementTiming}),
    // newPlatform({settlementTiming}), or this config's setting). The default a real server
    // gives (SETTLEMENT_TIMING_DEFAULT) is tested in test/modules/settlement-timing.test.ts.
    settlementTiming: 'instant',
    ...overrides,
  };
}

export interface Credentials {
  platformId: string;
  tokenId: string;
  clientId: string;
  clientSecret: string;
}

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Raw payload instead of JSON (with its own content type). */
  payload?: string | Buffer;
  headers?: Record<string, string>;
  /** Credentials to use; null sends no Authorization header. Defaults to the platform's. */
  auth?: Credentials | { username: string; password: string } | null;
}

export interface Tenant extends Credentials {
  /** A request to the Grid API (path relative to the base path). */
  api<T = any>(method: string, path: string, options?: RequestOptions): Promise<Reply<T>>;
  /** A request to any path of the server. */
  raw<T = any>(method: string, path: string, options?: RequestOptions): Promise<Reply<T>>;
}

export interface TestApp extends Tenant {
  app: FastifyInstance;
  deps: Deps;
  /** Moves this platform's sandbox clock; due jobs run before it returns. */
  advanceClock(seconds: number): Promise<{ now: string; offsetSeconds: number; jobsRun: number }>;
  /** Runs every job that is due now (tests do not run the background poll). */
  runDueJobs(): Promise<number>;
  /** Another platform on the same server, with its own credentials. */
  newPlatform(options?: PlatformOptions): Promise<Tenant>;
  close(): Promise<void>;
  /**
   * Stops the app and starts a new one on the same store (a data directory, or PostgreSQL),
   * as a server restart does; the new one serves the same platform.
   */
  restart(): Promise<TestApp>;
}

export function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

function tenant(app: FastifyInstance, credentials: Credentials): Tenant {
  const raw = async (method: string, path: string, options: RequestOptions = {}): Promise<Reply> => {
    const headers: Record<string, string> = { ...options.headers };
    const auth = options.auth === undefined ? credentials : options.auth;
    if (auth !== null) {
      headers.authorization ??=
        'clientId' in auth ? basic(auth.clientId, auth.clientSecret) : basic(auth.username, auth.password);
    }
    let payload: string | Buffer | undefined = options.payload;
    if (options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await app.inject({
      method: method as 'GET',
      url: path,
      headers,
      ...(payload !== undefined ? { payload } : {}),
    });
    let body: unknown;
    if (response.body !== '') {
      try {
        body = JSON.parse(response.body);
      } catch {
        body = response.body;
      }
    }
    return { status: response.statusCode, body, headers: response.headers, text: response.body };
  };
  return {
    ...credentials,
    raw,
    api: (method, path, options) => raw(method, `${BASE_PATH}${path}`, options),
  };
}

const openApps: TestApp[] = [];

/**
 * Closes every app the current test file built (and, on PostgreSQL, drops its schema).
 * test/setup.ts runs it after each file: the files share one module instance of this helper
 * (vitest.config.ts: isolate false), so a hook registered here would run after the first only.
 */
export async function closeOpenApps(): Promise<void> {
  await Promise.all(openApps.splice(0).map((app) => app.close()));
}

/** Settings of a test platform (PlatformSettings). */
export interface PlatformOptions {
  counterpartyRules?: boolean;
  /** Strict identifiers: the strict rules apply to its requests (off unless set). */
  strictIdentifiers?: boolean;
  /** How its payouts settle (the test config's `instant` unless set). */
  settlementTiming?: 'instant' | 'hosted';
}

export interface BuildOptions extends PlatformOptions {
  clock?: Clock;
  config?: Partial<Config>;
  /** Routes added under the Grid base path, for tests of kernel pieces. */
  extraRoutes?: FastifyPluginAsync;
  /** Where the app's pino log goes, at the level a server runs with (tests of what is logged). */
  logStream?: { write(line: string): void };
}

export async function build(options: BuildOptions = {}): Promise<TestApp> {
  const config = testConfig(options.config);
  const pgSchema = config.databaseUrl ? `t_${randomBytes(6).toString('hex')}` : undefined;
  return open(options, config, pgSchema, undefined);
}

/** The app on the store of `config` (and `pgSchema`); with `main`, that platform rather than a new one. */
async function open(
  options: BuildOptions,
  config: Config,
  pgSchema: string | undefined,
  main: Credentials | undefined,
): Promise<TestApp> {
  const db = await openDb({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, pgSchema, pgPoolMax: 10 });
  const deps: Deps = {
    config,
    db,
    clock: options.clock ?? systemClock,
    authCache: db.dialect === 'sqlite' ? new AuthCache() : undefined,
  };
  const app = await buildApp(deps, {
    ...(options.extraRoutes ? { extraRoutes: options.extraRoutes } : {}),
    ...(options.logStream
      ? { loggerInstance: pino({ level: 'info', base: { service: 'railyard' } }, options.logStream) }
      : {}),
  });
  const addPlatform = async (settings: PlatformOptions) => {
    const created = await createPlatform(deps, { name: 'Test platform', ...settings });
    return tenant(app, {
      platformId: created.platformId,
      tokenId: created.token.id,
      clientId: created.token.clientId,
      clientSecret: created.token.clientSecret!,
    });
  };
  const first =
    main === undefined
      ? await addPlatform({
          counterpartyRules: options.counterpartyRules,
          strictIdentifiers: options.strictIdentifiers,
          settlementTiming: options.settlementTiming,
        })
      : tenant(app, main);
  let closed = false;
  const shut = async (dropStore: boolean) => {
    if (closed) return;
    closed = true;
    const at = openApps.indexOf(testApp);
    if (at >= 0) openApps.splice(at, 1);
    await app.close();
    await db.close();
    if (dropStore && pgSchema && config.databaseUrl) await dropPgSchema(config.databaseUrl, pgSchema);
  };
  const testApp: TestApp = {
    ...first,
    app,
    deps,
    newPlatform: (o = {}) => addPlatform(o),
    async advanceClock(seconds) {
      const reply = await first.raw('POST', '/_railyard/clock/advance', { body: { seconds } });
      if (reply.status !== 200) throw new Error(`clock advance failed: ${reply.text}`);
      return reply.body;
    },
    runDueJobs: () => deps.jobs!.runDue(),
    close: () => shut(true),
    async restart() {
      if (config.dataDir === ':memory:' && !config.databaseUrl)
        throw new Error('restart needs a store that outlives the app');
      await shut(false);
      return open(options, config, pgSchema, {
        platformId: first.platformId,
        tokenId: first.tokenId,
        clientId: first.clientId,
        clientSecret: first.clientSecret,
      });
    },
  };
  openApps.push(testApp);
  return testApp;
}

export { ManualClock };
