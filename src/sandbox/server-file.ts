// How the `railyard` command finds a running server. A server writes `server.json` into its
// data directory (DATA_DIR, the embedded store's directory; on PostgreSQL the same setting
// names where the file goes) once it listens: its local URL and the server admin token it drew
// at start, readable by its owner only (mode 0600). It removes the file when it exits. A
// command reads the file, asks the server who it is with the token, and talks to it when it
// answers; a file whose server does not answer (it was killed) is ignored, and the command
// works on the store directly.

import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../config.js';

export const SERVER_FILE_NAME = 'server.json';
/** How long a command waits for a server named in the file to answer before it works on the store. */
export const SERVER_PROBE_MS = 2_000;

export interface ServerFile {
  /** Where the command reaches the server (a loopback address when it listens on every interface). */
  url: string;
  token: string;
  pid: number;
}

export interface RunningServer {
  url: string;
  token: string;
  defaultPlatformId: string | undefined;
}

/** The file's path, or undefined for a store in memory (no other process can reach it). */
export function serverFilePath(config: Config): string | undefined {
  if (config.dataDir === ':memory:') return undefined;
  return join(resolve(config.dataDir), SERVER_FILE_NAME);
}

export function newServerToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The URL a local command uses to reach a server listening on `host`:`port`. */
export function localUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

/** Writes the file afresh (mode 0600 from its creation: an old file is removed first). */
export function writeServerFile(config: Config, content: ServerFile): string | undefined {
  const file = serverFilePath(config);
  if (file === undefined) return undefined;
  mkdirSync(resolve(config.dataDir), { recursive: true });
  try {
    unlinkSync(file);
  } catch {
    // none there
  }
  writeFileSync(file, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  return file;
}

/** Removes the file if it is still this server's (another server may have written its own since). */
export function removeServerFile(config: Config, token: string): void {
  const file = serverFilePath(config);
  if (file === undefined) return;
  try {
    const content = JSON.parse(readFileSync(file, 'utf8')) as ServerFile;
    if (content.token === token) unlinkSync(file);
  } catch {
    // gone already, or not ours
  }
}

/** The server named in the file, if it answers with that token; undefined otherwise. */
export async function findRunningServer(config: Config): Promise<RunningServer | undefined> {
  const file = serverFilePath(config);
  if (file === undefined) return undefined;
  let content: ServerFile;
  try {
    content = JSON.parse(readFileSync(file, 'utf8')) as ServerFile;
  } catch {
    return undefined;
  }
  if (typeof content.url !== 'string' || typeof content.token !== 'string') return undefined;
  try {
    const reply = await fetch(`${content.url}/_railyard/server/info`, {
      headers: { authorization: `Bearer ${content.token}` },
      signal: AbortSignal.timeout(SERVER_PROBE_MS),
    });
    if (reply.status !== 200) return undefined;
    const info = (await reply.json()) as { defaultPlatformId?: string };
    return { url: content.url, token: content.token, defaultPlatformId: info.defaultPlatformId };
  } catch {
    return undefined;
  }
}

/** A request to a server-admin endpoint: its status and parsed body. */
export async function callServer(
  server: RunningServer,
  method: string,
  path: string,
  body?: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: the JSON answer of one of the server-admin endpoints
): Promise<{ status: number; body: any }> {
  const reply = await fetch(`${server.url}/_railyard/server${path}`, {
    method,
    headers: {
      authorization: `Bearer ${server.token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await reply.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: reply.status, body: parsed };
}
