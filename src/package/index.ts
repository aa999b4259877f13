// The railyard package's entry (`import { startRailyard } from 'railyard'`): a railyard server
// started in the caller's process, on a port of its own, for a test suite. It is the server
// `railyard start` runs (buildApp, the job runner, the same store), without what belongs to a
// process of its own (signal handlers, the runtime file, the banner, the idle collections).
// Everything the result offers goes over HTTP, through the endpoints any other language uses,
// so it behaves as they do. Several may run in one process; close() stops what one started.

import type { Static } from '@sinclair/typebox';
import pino from 'pino';
import { buildApp } from '../app.js';
import { systemClock } from '../clock.js';
import { ADMIN_PREFIX, BASE_PATH, ConfigError, loadConfig, SETTLEMENT_TIMINGS } from '../config.js';
import { openDb } from '../db/index.js';
import { AuthCache } from '../http/auth.js';
import type { Deps } from '../http/deps.js';
import type { RailyardEventList } from '../modules/inspect/schemas.js';
import { createPlatform } from '../modules/platform/service.js';
import type { RailyardRequest, RailyardRequestList, RailyardRequestReport } from '../modules/requests/schemas.js';
import { enableServerAdmin } from '../sandbox/server-admin.js';
import { localUrl, newServerToken } from '../sandbox/server-file.js';
import type {
  ClockReading,
  EventFilter,
  JournalEntry,
  Page,
  PlatformOptions,
  Railyard,
  RailyardErrorFields,
  RailyardEvent,
  RailyardOptions,
  RailyardPlatform,
  RequestsReport,
  ResetResult,
  SeedSummary,
  StartRailyard,
} from './types.js';

export type * from './types.js';

// The public types are written out for the package's readers; these lines make the compiler
// check that the answers' own schemas fit them.
type Fits<Schema, Public> = Schema extends Public ? true : never;
const schemasFit: [
  Fits<Static<typeof RailyardEventList>, Page<RailyardEvent>>,
  Fits<Static<typeof RailyardRequestList>, Page<JournalEntry>>,
  Fits<Static<typeof RailyardRequest>, JournalEntry>,
  Fits<Static<typeof RailyardRequestReport>, RequestsReport>,
] = [true, true, true, true];
void schemasFit;

/** How long one wait on the event log may hold the request (the endpoint's own maximum). */
const EVENT_WAIT_SECONDS_MAX = 30;
const EVENT_WAIT_DEFAULT_MS = 10_000;
/** A pause between two reads of the event log that came back at once (a server that does not hold them). */
const EVENT_POLL_MS = 50;

/** An answer outside 2xx: its status, the envelope's code and message, and its details. */
export class RailyardError extends Error implements RailyardErrorFields {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'RailyardError';
  }
}

function basic(clientId: string, clientSecret: string): string {
  return `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
}

async function call<T>(
  origin: string,
  authorization: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const reply = await fetch(`${origin}${path}`, {
    method,
    headers: {
      authorization,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await reply.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = text;
  }
  if (!reply.ok) {
    const envelope = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
    throw new RailyardError(
      reply.status,
      String(envelope.code ?? 'HTTP_ERROR'),
      `${method} ${path} answered ${reply.status}: ${String(envelope.message ?? text)}`,
      envelope.details,
    );
  }
  return parsed as T;
}

function search(params: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.set(name, String(value));
  const text = query.toString();
  return text === '' ? '' : `?${text}`;
}

function eventQuery(filter: EventFilter) {
  return {
    type: Array.isArray(filter.type) ? filter.type.join(',') : filter.type,
    resourceId: filter.resourceId,
    after: filter.after,
  };
}

interface Credentials {
  platformId: string;
  clientId: string;
  clientSecret: string;
}

function platformHandle(origin: string, adminToken: string, credentials: Credentials): RailyardPlatform {
  const auth = basic(credentials.clientId, credentials.clientSecret);
  const api = <T>(method: string, path: string, body?: unknown) => call<T>(origin, auth, method, path, body);
  const admin = <T>(method: string, path: string, body?: unknown) =>
    call<T>(origin, `Bearer ${adminToken}`, method, `${ADMIN_PREFIX}/server${path}`, body);
  const listEvents = (filter: EventFilter & { limit?: number; cursor?: string; wait?: number }) =>
    api<Page<RailyardEvent>>(
      'GET',
      `${ADMIN_PREFIX}/events${search({ ...eventQuery(filter), limit: filter.limit, cursor: filter.cursor, wait: filter.wait })}`,
    );
  return {
    baseURL: `${origin}${BASE_PATH}`,
    ...credentials,
    clock: {
      read: () => api<ClockReading>('GET', `${ADMIN_PREFIX}/clock`),
      advance: (seconds) =>
        api<ClockReading & { jobsRun: number }>('POST', `${ADMIN_PREFIX}/clock/advance`, { seconds }),
    },
    events: {
      list: (filter = {}) => listEvents(filter),
      async waitFor(filter, options = {}) {
        const deadline = performance.now() + (options.timeoutMs ?? EVENT_WAIT_DEFAULT_MS);
        for (;;) {
          const leftMs = deadline - performance.now();
          const waitSeconds = Math.min(EVENT_WAIT_SECONDS_MAX, Math.max(1, Math.ceil(leftMs / 1000)));
          const askedAt = performance.now();
          const page = await listEvents({ ...filter, limit: 1, wait: waitSeconds });
          if (page.data.length > 0) return page.data[0]!;
          if (performance.now() >= deadline)
            throw new RailyardError(
              408,
              'TIMEOUT',
              `No event matching ${JSON.stringify(filter)} within ${options.timeoutMs ?? EVENT_WAIT_DEFAULT_MS} ms`,
            );
          // A page that came back empty at once (not held): read again after a pause.
          if (performance.now() - askedAt < EVENT_POLL_MS)
            await new Promise((resolve) => setTimeout(resolve, EVENT_POLL_MS));
        }
      },
    },
    requests: {
      list: (filter = {}) => api<Page<JournalEntry>>('GET', `${ADMIN_PREFIX}/requests${search({ ...filter })}`),
      get: (id) => api<JournalEntry>('GET', `${ADMIN_PREFIX}/requests/${encodeURIComponent(id)}`),
      report: () => api<RequestsReport>('GET', `${ADMIN_PREFIX}/requests/report`),
    },
    reset: () => api<ResetResult>('POST', `${ADMIN_PREFIX}/reset`),
    seed: (options = {}) => admin<SeedSummary>('POST', '/seed', { platformId: credentials.platformId, ...options }),
  };
}

/** The server's settings from the options, checked as the environment's are (one line per problem). */
function configOf(options: RailyardOptions) {
  const store = options.store ?? 'memory';
  const postgres = /^postgres(ql)?:\/\//.test(store);
  const setting = (value: string | number | undefined) => (value === undefined ? undefined : String(value));
  try {
    return loadConfig({
      HOST: options.host ?? '127.0.0.1',
      PORT: String(options.port ?? 0),
      DATA_DIR: store === 'memory' ? ':memory:' : postgres ? ':memory:' : store,
      DATABASE_URL: postgres ? store : undefined,
      LOG_LEVEL: options.logLevel ?? 'silent',
      RAILYARD_JOURNAL_SIZE: setting(options.journalSize),
      RAILYARD_ADMIN_TOKEN: options.adminToken,
      RAILYARD_WEBHOOK_TIMEOUT_MS: setting(options.webhookTimeoutMs),
      RAILYARD_SETTLEMENT_TIMING: options.settlementTiming,
    });
  } catch (err) {
    if (err instanceof ConfigError) throw new Error(`startRailyard: ${err.message.replace(/^[A-Z_]+/, optionName)}`);
    throw err;
  }
}

/** The option a setting's message names, for the caller who never set an environment variable. */
function optionName(variable: string): string {
  const names: Record<string, string> = {
    HOST: 'host',
    PORT: 'port',
    DATA_DIR: 'store',
    DATABASE_URL: 'store',
    LOG_LEVEL: 'logLevel',
    RAILYARD_JOURNAL_SIZE: 'journalSize',
    RAILYARD_ADMIN_TOKEN: 'adminToken',
    RAILYARD_WEBHOOK_TIMEOUT_MS: 'webhookTimeoutMs',
    RAILYARD_SETTLEMENT_TIMING: 'settlementTiming',
  };
  return names[variable] ?? variable;
}

export const startRailyard: StartRailyard = async (options = {}) => {
  const config = configOf(options);
  const timing = options.platform?.settlementTiming;
  if (timing !== undefined && !(SETTLEMENT_TIMINGS as readonly string[]).includes(timing))
    throw new Error(
      `startRailyard: platform.settlementTiming must be ${SETTLEMENT_TIMINGS.join(' or ')}, got "${timing}"`,
    );
  const adminToken = config.adminToken ?? newServerToken();
  const db = await openDb({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, pgPrepared: config.pgPrepared });
  const deps: Deps = {
    config,
    db,
    clock: systemClock,
    authCache: db.dialect === 'sqlite' ? new AuthCache() : undefined,
  };
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  try {
    const first = await createPlatform(deps, {
      name: options.platform?.name ?? 'Test platform',
      counterpartyRules: options.platform?.counterpartyRules ?? false,
      settlementTiming: options.platform?.settlementTiming,
    });
    enableServerAdmin(deps, adminToken, first.platformId);
    app = await buildApp(
      deps,
      config.logLevel === 'silent'
        ? { logger: false }
        : { loggerInstance: pino({ level: config.logLevel, base: { service: 'railyard' } }) },
    );
    await app.listen({ host: config.host, port: config.port });
    await deps.jobs?.start();
    const address = app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : config.port;
    const origin = localUrl(config.host, port);
    const platform = platformHandle(origin, adminToken, {
      platformId: first.platformId,
      clientId: first.token.clientId,
      clientSecret: first.token.clientSecret!,
    });
    const started = app;
    let closing: Promise<void> | undefined;
    return {
      ...platform,
      origin,
      adminToken,
      async newPlatform(more: PlatformOptions = {}) {
        const created = await call<Credentials>(
          origin,
          `Bearer ${adminToken}`,
          'POST',
          `${ADMIN_PREFIX}/server/platforms`,
          {
            name: more.name ?? 'Test platform',
            counterpartyRules: more.counterpartyRules ?? false,
            ...(more.settlementTiming === undefined ? {} : { settlementTiming: more.settlementTiming }),
          },
        );
        return platformHandle(origin, adminToken, {
          platformId: created.platformId,
          clientId: created.clientId,
          clientSecret: created.clientSecret,
        });
      },
      close() {
        closing ??= (async () => {
          await started.close();
          await db.close();
        })();
        return closing;
      },
    } satisfies Railyard;
  } catch (err) {
    await app?.close().catch(() => undefined);
    await db.close().catch(() => undefined);
    throw err;
  }
};

// The package's declarations (public.d.ts) are what these exports are.
const declared: [typeof import('./public.js').startRailyard, typeof import('./public.js').RailyardError] = [
  startRailyard,
  RailyardError,
];
void declared;
