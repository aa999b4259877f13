// The railyard command: `start` (the default) runs the server; `migrate` prepares the
// store; `platform create` adds a tenant with its own credentials; `reset` and `seed` wipe a
// platform's data or fill it with a demo set; `snapshot` saves, restores, lists and deletes
// its snapshots. The commands that change data work whether or not a server runs on the
// store: through the running server's admin endpoints when one answers
// (src/sandbox/server-file.ts), directly on the store otherwise.

import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { buildApp } from './app.js';
import { systemClock } from './clock.js';
import {
  BASE_PATH,
  ConfigError,
  loadConfig,
  SETTLEMENT_TIMINGS,
  type Config,
  type SettlementTiming,
} from './config.js';
import { DbConnectError, openDb, redactUrl, type Db } from './db/index.js';
import { AuthCache, hashSecret } from './http/auth.js';
import { ApiError } from './http/errors.js';
import { collectGarbageWhenIdle, oneReducerCollection } from './memory.js';
import { fullCollection } from './full-collection.js';
import { compactSenderHeap } from './events/sender.js';
import type { Deps } from './http/deps.js';
import {
  bootstrap,
  createPlatform,
  requirePlatform,
  webhookPublicKey,
  type BootstrapResult,
} from './modules/platform/service.js';
import { resetPlatform } from './sandbox/reset.js';
import { SEED_DEFAULT, SEED_SIZE_DEFAULT, SEED_SIZE_MAX, seedPlatform } from './sandbox/seed.js';
import { enableServerAdmin } from './sandbox/server-admin.js';
import { SNAPSHOT_NAME_PATTERN } from './sandbox/snapshots/schemas.js';
import { deleteSnapshot, listSnapshots, restoreSnapshot, saveSnapshot } from './sandbox/snapshots/service.js';
import {
  callServer,
  findRunningServer,
  localUrl,
  newServerToken,
  removeServerFile,
  writeServerFile,
  type RunningServer,
} from './sandbox/server-file.js';

const VERSION = '0.1.0';

/** A start-up problem the user can fix: printed as one line, exit code 1. */
class StartupError extends Error {}

function note(message: string): void {
  process.stderr.write(`railyard: ${message}\n`);
}

function fail(message: string): never {
  process.stderr.write(`railyard: ${message}\n`);
  process.exit(1);
}

async function openStore(config: Config): Promise<Db> {
  try {
    return await openDb({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, pgPrepared: config.pgPrepared });
  } catch (err) {
    if (err instanceof DbConnectError) throw new StartupError(err.message);
    if (/database is locked/.test((err as Error).message))
      throw new StartupError(
        `the store (${storeDescription(config)}) is in use by another process, and no railyard server answers at the address in its ${join(config.dataDir, 'server.json')}: stop that process, or start the server with this DATA_DIR`,
      );
    throw new StartupError(`cannot prepare the store: ${(err as Error).message}`);
  }
}

function storeDescription(config: Config): string {
  if (config.databaseUrl) return `PostgreSQL at ${redactUrl(config.databaseUrl)}`;
  if (config.dataDir === ':memory:') return 'SQLite in memory (nothing is kept after exit)';
  return `SQLite at ${join(resolve(config.dataDir), 'railyard.sqlite')}`;
}

interface SavedCredentials {
  platformId: string;
  clientId: string;
  clientSecret: string;
}

/**
 * The store keeps only a hash of each secret. So that a restart can print the sandbox
 * credentials again, the first start saves them beside the embedded store (mode 0600).
 */
function credentialsFile(config: Config): string | undefined {
  return config.dataDir === ':memory:' ? undefined : join(resolve(config.dataDir), 'credentials.json');
}

async function recallSecret(deps: Deps, platformId: string, clientId: string): Promise<string | undefined> {
  const file = credentialsFile(deps.config);
  if (file === undefined) return undefined;
  try {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as SavedCredentials;
    if (saved.platformId !== platformId || saved.clientId !== clientId) return undefined;
    const row = await deps.db.k
      .selectFrom('api_tokens')
      .select(['secret_salt', 'secret_hash'])
      .where('client_id', '=', clientId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return row && hashSecret(saved.clientSecret, row.secret_salt) === row.secret_hash ? saved.clientSecret : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The default platform, as `start` finds it: the pinned credentials' platform, else the first
 * one, else a new one (whose secret is saved for later starts to print).
 */
async function bootstrapAndSave(deps: Deps): Promise<BootstrapResult> {
  const boot = await bootstrap(deps);
  const file = credentialsFile(deps.config);
  if (boot.created && boot.clientSecret !== undefined && file !== undefined && deps.config.clientId === undefined) {
    const saved: SavedCredentials = {
      platformId: boot.platformId,
      clientId: boot.clientId,
      clientSecret: boot.clientSecret,
    };
    writeFileSync(file, `${JSON.stringify(saved, null, 2)}\n`, { mode: 0o600 });
  }
  return boot;
}

async function start(config: Config): Promise<void> {
  const startedAt = process.hrtime.bigint();
  const db = await openStore(config);
  const deps: Deps = {
    config,
    db,
    clock: systemClock,
    authCache: db.dialect === 'sqlite' ? new AuthCache() : undefined,
  };
  const boot = await bootstrapAndSave(deps);
  // The secret of the server-admin endpoints: RAILYARD_ADMIN_TOKEN's, or one drawn now. Either
  // way local commands find it in the runtime file.
  const adminToken = config.adminToken ?? newServerToken();
  enableServerAdmin(deps, adminToken, boot.platformId);
  const secret = boot.clientSecret ?? (await recallSecret(deps, boot.platformId, boot.clientId));

  const logger = pino({ level: config.logLevel, base: { service: 'railyard' } });
  const app = await buildApp(deps, { loggerInstance: logger });
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await db.close();
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new StartupError(
        `cannot listen on ${config.host}:${config.port}: the port is already in use (set PORT to another one)`,
      );
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
      throw new StartupError(`cannot listen on ${config.host}: no such local address (check HOST)`);
    if (code === 'EACCES') throw new StartupError(`cannot listen on ${config.host}:${config.port}: permission denied`);
    throw err;
  }
  await deps.jobs?.start();
  // When the main heap is compacted, so is the webhook sender thread's, which a burst of
  // deliveries leaves with its garbage too.
  const collect = () => {
    fullCollection();
    void compactSenderHeap();
  };
  collectGarbageWhenIdle(app.server, undefined, { collect }, () => deps.jobs?.jobsFinished ?? 0);
  oneReducerCollection();
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  try {
    writeServerFile(config, { url: localUrl(config.host, port), token: adminToken, pid: process.pid });
  } catch (err) {
    logger.warn({ err }, 'could not write the server runtime file: commands will not find this server');
  }
  // However the process ends (a second signal, a crash), the file goes with it.
  process.on('exit', () => removeServerFile(config, adminToken));
  // On every interface (HOST=0.0.0.0, as in the container image) the URLs printed are the
  // loopback ones, which a client on this machine (or on a container's host, with the port
  // published as it is) can use; a line after them says where the server listens.
  const everyInterface = config.host === '0.0.0.0' || config.host === '::';
  const origin = localUrl(config.host, port);
  const baseUrl = `${origin}${BASE_PATH}`;
  const readyMs = Number(process.hrtime.bigint() - startedAt) / 1e6;
  const publicKey = await webhookPublicKey(db.k, boot.platformId);
  // Handlers before the banner: a supervisor that reads the banner may signal at once, and a
  // signal that arrives before a handler exists would kill the process without draining.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting at once');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'draining in-flight requests and jobs, then stopping');
    // Commands stop coming here first: one started now works on the store once it is free.
    removeServerFile(config, adminToken);
    const timer = setTimeout(() => {
      logger.error('drain took longer than 30 s; exiting');
      process.exit(1);
    }, 30_000);
    timer.unref();
    await app.close();
    await db.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  process.stdout.write(
    [
      '',
      `railyard ${VERSION}: Grid API sandbox (${storeDescription(config)}), ready in ${readyMs.toFixed(0)} ms`,
      `  Base URL       ${baseUrl}`,
      `  Platform       ${boot.platformId}`,
      `  Client ID      ${boot.clientId}`,
      `  Client secret  ${secret ?? '(not recoverable: set GRID_CLIENT_ID and GRID_CLIENT_SECRET, or run `npx railyard platform create`)'}`,
      `  Health         ${origin}/health`,
      ...(everyInterface
        ? [
            `  Listening on   ${config.host === '::' ? '[::]' : config.host}:${port}, every interface (from a container's host: the port published for ${port})`,
          ]
        : []),
      '  Webhook signing public key (also at GET /_railyard/webhook-public-key):',
      ...publicKey
        .trim()
        .split('\n')
        .map((line) => `    ${line}`),
      '',
      '',
    ].join('\n'),
  );
}

async function migrate(config: Config): Promise<void> {
  const db = await openStore(config);
  await db.close();
  process.stdout.write(`railyard: the store is up to date (${storeDescription(config)})\n`);
}

/**
 * Runs a command through the running server when one answers, else on the store directly
 * (opened for the command, closed after it).
 */
async function onServerOrStore<T>(
  config: Config,
  viaServer: (server: RunningServer) => Promise<T>,
  viaStore: (deps: Deps) => Promise<T>,
): Promise<T> {
  const server = await findRunningServer(config);
  if (server !== undefined) {
    note(`through the running server at ${server.url}`);
    return viaServer(server);
  }
  const db = await openStore(config);
  try {
    return await viaStore({ config, db, clock: systemClock });
  } finally {
    await db.close();
  }
}

/** The body of a successful server-admin answer; a refusal ends the command with its message. */
// biome-ignore lint/suspicious/noExplicitAny: the JSON of one of several answers, printed or read by field
function answered(reply: { status: number; body: any }, expected: number): any {
  if (reply.status === expected) return reply.body;
  const body = reply.body as { code?: string; message?: string };
  fail(`the server refused (${reply.status} ${body?.code ?? ''}): ${body?.message ?? JSON.stringify(reply.body)}`);
}

function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

async function platformCreate(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      name: { type: 'string' },
      'counterparty-rules': { type: 'boolean' },
      'settlement-timing': { type: 'string' },
    },
    strict: true,
  });
  const timing = values['settlement-timing'];
  if (timing !== undefined && !(SETTLEMENT_TIMINGS as readonly string[]).includes(timing))
    fail(`--settlement-timing must be ${SETTLEMENT_TIMINGS.join(' or ')}, got "${timing}"`);
  const input = {
    name: values.name ?? 'Sandbox platform',
    counterpartyRules: values['counterparty-rules'] ?? false,
    // Left out, the platform takes the server's default (RAILYARD_SETTLEMENT_TIMING).
    ...(timing === undefined ? {} : { settlementTiming: timing as SettlementTiming }),
  };
  const created = await onServerOrStore(
    config,
    async (server) => answered(await callServer(server, 'POST', '/platforms', input), 201),
    async (deps) => {
      const platform = await createPlatform(deps, input);
      return {
        platformId: platform.platformId,
        clientId: platform.token.clientId,
        clientSecret: platform.token.clientSecret,
        tokenId: platform.token.id,
      };
    },
  );
  printJson({
    platformId: created.platformId,
    clientId: created.clientId,
    clientSecret: created.clientSecret,
    tokenId: created.tokenId,
  });
}

/** The platform a command acts on: --platform, else the one `start` prints. */
function platformOf(given: string | undefined, server: RunningServer): string {
  if (given !== undefined) return given;
  if (server.defaultPlatformId === undefined) fail('the running server names no default platform: pass --platform');
  return server.defaultPlatformId;
}

async function reset(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { platform: { type: 'string' } }, strict: true });
  const result = await onServerOrStore(
    config,
    async (server) =>
      answered(await callServer(server, 'POST', '/reset', { platformId: platformOf(values.platform, server) }), 200),
    async (deps) => resetPlatform(deps, values.platform ?? (await bootstrapAndSave(deps)).platformId),
  );
  printJson(result);
}

function integerFlag(name: string, text: string | undefined, min: number, max: number): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max)
    fail(`--${name} must be an integer from ${min} to ${max}, got "${text}"`);
  return value;
}

async function seed(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { platform: { type: 'string' }, seed: { type: 'string' }, size: { type: 'string' } },
    strict: true,
  });
  const options = {
    seed: integerFlag('seed', values.seed, 0, 2_147_483_647) ?? SEED_DEFAULT,
    size: integerFlag('size', values.size, 1, SEED_SIZE_MAX) ?? SEED_SIZE_DEFAULT,
  };
  const summary = await onServerOrStore(
    config,
    async (server) =>
      answered(
        await callServer(server, 'POST', '/seed', { platformId: platformOf(values.platform, server), ...options }),
        200,
      ),
    async (deps) => {
      const platformId = values.platform ?? (await bootstrapAndSave(deps)).platformId;
      const platform = await deps.db.k
        .selectFrom('platforms')
        .select('id')
        .where('id', '=', platformId)
        .executeTakeFirst();
      if (platform === undefined) fail(`no platform ${platformId} in the store`);
      // The seed makes its data through the API, in this process.
      const app = await buildApp(deps, { logger: false });
      try {
        return await seedPlatform(app, platformId, options);
      } finally {
        await app.close();
      }
    },
  );
  printJson(summary);
}

const SNAPSHOT_USAGE =
  'railyard snapshot save|restore|delete [--platform ID] NAME, or railyard snapshot list [--platform ID]';

async function snapshot(config: Config, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    options: { platform: { type: 'string' }, replace: { type: 'boolean' } },
    allowPositionals: true,
    strict: true,
  });
  const [action, name, ...extra] = positionals;
  const named = action === 'save' || action === 'restore' || action === 'delete';
  if (!(named || action === 'list') || extra.length > 0 || (named ? name === undefined : name !== undefined))
    fail(`usage: ${SNAPSHOT_USAGE}`);
  if (values.replace !== undefined && action !== 'save') fail('--replace goes with snapshot save only');
  if (name !== undefined && !new RegExp(SNAPSHOT_NAME_PATTERN).test(name))
    fail(`a snapshot name is 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit: "${name}"`);
  const snapshotName = name ?? '';
  const path = `/snapshots/${encodeURIComponent(snapshotName)}`;
  const result = await onServerOrStore(
    config,
    async (server) => {
      const platformId = platformOf(values.platform, server);
      const query = `?platformId=${encodeURIComponent(platformId)}`;
      if (action === 'list') return answered(await callServer(server, 'GET', `/snapshots${query}`), 200);
      if (action === 'save') {
        const body = { platformId, name: snapshotName, ...(values.replace ? { replace: true } : {}) };
        return answered(await callServer(server, 'POST', '/snapshots', body), 201);
      }
      if (action === 'restore')
        return answered(await callServer(server, 'POST', `${path}/restore`, { platformId }), 200);
      answered(await callServer(server, 'DELETE', `${path}${query}`), 204);
      return { name: snapshotName, deleted: true };
    },
    async (deps) => {
      const platformId = values.platform ?? (await bootstrapAndSave(deps)).platformId;
      if (action === 'list') {
        await requirePlatform(deps, platformId);
        return { data: await listSnapshots(deps, platformId) };
      }
      if (action === 'save') return saveSnapshot(deps, platformId, { name: snapshotName, replace: values.replace });
      if (action === 'restore') return restoreSnapshot(deps, platformId, snapshotName);
      await requirePlatform(deps, platformId);
      await deleteSnapshot(deps, platformId, snapshotName);
      return { name: snapshotName, deleted: true };
    },
  );
  printJson(result);
}

const USAGE = `usage: railyard [start]                 run the server (the default)
       railyard migrate                 create or upgrade the store, then exit
       railyard platform create [--name NAME] [--counterparty-rules] [--settlement-timing instant|hosted]
                                        add a platform and print its credentials
       railyard reset [--platform ID]   delete a platform's data, keeping its credentials
                                        and configuration (default: the platform start prints)
       railyard seed [--platform ID] [--seed N] [--size N]
                                        fill a platform with a demo data set (seed ${SEED_DEFAULT}, size ${SEED_SIZE_DEFAULT})
       railyard snapshot save [--platform ID] [--replace] NAME
       railyard snapshot restore|delete [--platform ID] NAME
       railyard snapshot list [--platform ID]
                                        save a platform's whole state under a name, bring it
                                        back, delete it, or list the saved ones
The commands that change data work whether or not a server runs: through it when it answers
(its address and admin token are in DATA_DIR/server.json), on the store otherwise.
See docs/reset-and-seed.md and docs/snapshots.md.`;

async function main(argv: string[]): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message);
    throw err;
  }
  const [command = 'start', ...rest] = argv;
  try {
    if (command === 'start') await start(config);
    else if (command === 'migrate') await migrate(config);
    else if (command === 'platform' && rest[0] === 'create') await platformCreate(config, rest.slice(1));
    else if (command === 'reset') await reset(config, rest);
    else if (command === 'seed') await seed(config, rest);
    else if (command === 'snapshot') await snapshot(config, rest);
    else if (command === 'help' || command === '--help' || command === '-h') process.stdout.write(`${USAGE}\n`);
    else fail(`unknown command "${argv.join(' ')}"\n${USAGE}`);
  } catch (err) {
    if (err instanceof StartupError) fail(err.message);
    if (err instanceof ApiError) fail(`${err.code}: ${err.message}`);
    if (err instanceof TypeError && (err as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION')
      fail(err.message);
    throw err;
  }
}

await main(process.argv.slice(2));
