// The railyard command: `start` (the default) runs the server; `migrate` prepares the
// store; `platform create` adds a tenant with its own credentials.

import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { buildApp } from './app.js';
import { systemClock } from './clock.js';
import { BASE_PATH, ConfigError, loadConfig, type Config } from './config.js';
import { DbConnectError, openDb, redactUrl, type Db } from './db/index.js';
import { AuthCache, hashSecret } from './http/auth.js';
import type { Deps } from './http/context.js';
import { bootstrap, createPlatform, webhookPublicKey } from './modules/platform/service.js';

const VERSION = '0.1.0';

/** A start-up problem the user can fix: printed as one line, exit code 1. */
class StartupError extends Error {}

function fail(message: string): never {
  process.stderr.write(`railyard: ${message}\n`);
  process.exit(1);
}

async function openStore(config: Config): Promise<Db> {
  try {
    return await openDb({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  } catch (err) {
    if (err instanceof DbConnectError) throw new StartupError(err.message);
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

async function start(config: Config): Promise<void> {
  const startedAt = process.hrtime.bigint();
  const db = await openStore(config);
  const deps: Deps = {
    config,
    db,
    clock: systemClock,
    authCache: db.dialect === 'sqlite' ? new AuthCache() : undefined,
  };
  const boot = await bootstrap(deps);
  const file = credentialsFile(config);
  if (boot.created && boot.clientSecret !== undefined && file !== undefined && config.clientId === undefined) {
    const saved: SavedCredentials = {
      platformId: boot.platformId,
      clientId: boot.clientId,
      clientSecret: boot.clientSecret,
    };
    writeFileSync(file, `${JSON.stringify(saved, null, 2)}\n`, { mode: 0o600 });
  }
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
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const baseUrl = `http://${host}:${port}${BASE_PATH}`;
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
      `  Health         http://${host}:${port}/health`,
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

async function platformCreate(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { name: { type: 'string' }, 'counterparty-rules': { type: 'boolean' } },
    strict: true,
  });
  const db = await openStore(config);
  try {
    const created = await createPlatform(
      { config, db, clock: systemClock },
      {
        name: values.name ?? 'Sandbox platform',
        counterpartyRules: values['counterparty-rules'] ?? false,
      },
    );
    process.stdout.write(
      `${JSON.stringify({ platformId: created.platformId, clientId: created.token.clientId, clientSecret: created.token.clientSecret, tokenId: created.token.id }, null, 2)}\n`,
    );
  } finally {
    await db.close();
  }
}

const USAGE = `usage: railyard [start]                 run the server (the default)
       railyard migrate                 create or upgrade the store, then exit
       railyard platform create [--name NAME] [--counterparty-rules]
                                        add a platform and print its credentials`;

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
    else if (command === 'help' || command === '--help' || command === '-h') process.stdout.write(`${USAGE}\n`);
    else fail(`unknown command "${argv.join(' ')}"\n${USAGE}`);
  } catch (err) {
    if (err instanceof StartupError) fail(err.message);
    if (err instanceof TypeError && (err as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION')
      fail(err.message);
    throw err;
  }
}

await main(process.argv.slice(2));
