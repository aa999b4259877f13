// Test support for webhooks: a real HTTP receiver on loopback that does what an integrator's
// endpoint does (verifies X-Grid-Signature with the platform's public key over the raw body,
// checks the payload against the reference's schema for its type) and answers as a test
// scenario asks.

import { createVerify } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { expect } from 'vitest';
import { accountBody } from '../fixtures/accounts.js';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { Clock } from '../../src/clock.js';
import { BASE_PATH } from '../../src/config.js';
import { openDb } from '../../src/db/index.js';
import { AuthCache } from '../../src/http/auth.js';
import type { Deps } from '../../src/http/deps.js';
import {
  basic,
  testConfig,
  type Credentials,
  type Reply,
  type RequestOptions,
  type TestApp,
  type Tenant,
} from '../helper.js';
import { referenceSpec } from '../reference.js';

type AddFormats = (ajv: Ajv2020) => Ajv2020;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ??
  addFormatsModule) as unknown as AddFormats;

let validators: Map<string, ValidateFunction> | undefined;

/** The reference's webhook payload schema for each WebhookType, compiled once. */
export function webhookValidators(): Map<string, ValidateFunction> {
  if (validators !== undefined) return validators;
  const spec = referenceSpec();
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  for (const format of ['int64', 'int32', 'double', 'float', 'byte', 'binary', 'password']) ajv.addFormat(format, true);
  ajv.addSchema({ $id: 'grid.json', components: spec.components });
  validators = new Map();
  for (const webhook of Object.values<any>(spec.webhooks)) {
    const ref: string = webhook.post.requestBody.content['application/json'].schema.$ref;
    const name = ref.split('/').pop()!;
    const validate = ajv.compile({ $ref: `grid.json#/components/schemas/${name}` });
    for (const part of spec.components.schemas[name].allOf) {
      for (const type of part.properties?.type?.enum ?? []) validators.set(type, validate);
    }
  }
  return validators;
}

/** Problems of a payload against the reference's schema for its type (empty when it conforms). */
export function schemaProblems(payload: { type?: string }): string[] {
  const validate = webhookValidators().get(String(payload.type));
  if (validate === undefined) return [`no webhook schema in the reference for type ${payload.type}`];
  if (validate(payload)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

/** How an integrator verifies a webhook: node:crypto only, over the exact bytes received. */
export function verifyAsIntegrator(publicKeyPem: string, rawBody: Buffer, header: string | undefined): boolean {
  if (header === undefined) return false;
  const { v, s } = JSON.parse(header) as { v: string; s: string };
  if (v !== '1') return false;
  const verifier = createVerify('SHA256');
  verifier.update(rawBody);
  return verifier.verify(publicKeyPem, Buffer.from(s, 'base64'));
}

export interface Hit {
  id: string;
  type: string;
  raw: Buffer;
  json: any;
  headers: IncomingHttpHeaders;
  signatureValid: boolean;
  schemaProblems: string[];
}

/** An answer: a status with an optional JSON body (after an optional delay), or none at all. */
export type Answer = { status: number; body?: unknown; delayMs?: number } | 'hang';

export interface Receiver {
  url: string;
  hits: Hit[];
  /** Decides the answer to each request (index counts every request received). */
  answer: (hit: Hit, index: number) => Answer;
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  /** Answers every request left hanging with `status`. */
  release(status?: number): void;
  close(): Promise<void>;
}

export async function startReceiver(
  publicKeyPem: string,
  answer: Receiver['answer'] = () => ({ status: 200 }),
): Promise<Receiver> {
  const hits: Hit[] = [];
  const hanging = new Set<ServerResponse>();
  const timers = new Set<NodeJS.Timeout>();
  const waiters: { count: number; resolve: () => void }[] = [];
  const reply = (res: ServerResponse, status: number, body?: unknown) => {
    hanging.delete(res);
    if (res.writableEnded || res.destroyed) return;
    const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json' }).end(text);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const json = JSON.parse(raw.toString('utf8'));
      const header = req.headers['x-grid-signature'];
      const hit: Hit = {
        id: json.id,
        type: json.type,
        raw,
        json,
        headers: req.headers,
        signatureValid: verifyAsIntegrator(publicKeyPem, raw, Array.isArray(header) ? header[0] : header),
        schemaProblems: schemaProblems(json),
      };
      hits.push(hit);
      for (const waiter of waiters.filter((w) => hits.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      const decided = receiver.answer(hit, hits.length - 1);
      if (decided === 'hang') {
        hanging.add(res);
        return;
      }
      if (decided.delayMs) {
        hanging.add(res);
        const timer = setTimeout(() => {
          timers.delete(timer);
          reply(res, decided.status, decided.body);
        }, decided.delayMs);
        timers.add(timer);
        return;
      }
      reply(res, decided.status, decided.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/webhooks`,
    hits,
    answer,
    waitFor(count, timeoutMs = 5000) {
      if (hits.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`the receiver got ${hits.length} requests, expected ${count}`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    release(status = 200) {
      for (const res of [...hanging]) reply(res, status);
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}

/** The platform's public key, as an integrator fetches it. */
export async function publicKeyOf(tenant: Tenant): Promise<string> {
  const reply = await tenant.raw('GET', '/_railyard/webhook-public-key');
  if (reply.status !== 200) throw new Error(`public key: ${reply.status}`);
  return reply.text;
}

/** A receiver for this tenant's webhooks, set as its endpoint (which sends a TEST first). */
export async function receiverFor(tenant: Tenant, answer?: Receiver['answer']): Promise<Receiver> {
  const receiver = await startReceiver(await publicKeyOf(tenant), answer);
  const reply = await tenant.api('PATCH', '/config', { body: { webhookEndpoint: receiver.url } });
  if (reply.status !== 200) throw new Error(`PATCH /config: ${reply.status} ${reply.text}`);
  return receiver;
}

export async function deliveries(tenant: Tenant, query = ''): Promise<any[]> {
  const reply = await tenant.raw('GET', `/_railyard/webhooks/deliveries${query}`);
  if (reply.status !== 200) throw new Error(`deliveries: ${reply.status} ${reply.text}`);
  return reply.body.data;
}

export async function delivery(tenant: Tenant, id: string): Promise<any> {
  const reply = await tenant.raw('GET', `/_railyard/webhooks/deliveries/${id}`);
  if (reply.status !== 200) throw new Error(`delivery ${id}: ${reply.status} ${reply.text}`);
  return reply.body;
}

/** Every hit came with a valid signature and a payload that conforms to the reference. */
export function expectAllConform(receiver: Receiver): void {
  const bad = receiver.hits.filter((h) => !h.signatureValid || h.schemaProblems.length > 0);
  if (bad.length > 0) {
    throw new Error(
      `non-conforming webhooks: ${JSON.stringify(bad.map((h) => ({ type: h.type, signatureValid: h.signatureValid, problems: h.schemaProblems })))}`,
    );
  }
}

export const ms = (seconds: number) => seconds * 1000;
export type { TestApp };

// ----------------------------------------------------------------------------- events

/**
 * Registers a first-party Solana wallet (on a platform with counterparty rules) and proves
 * its ownership: exactly one event, EXTERNAL_ACCOUNT.STATUS_UPDATED to ACTIVE.
 */
export async function activateWallet(tenant: Tenant): Promise<string> {
  const body = accountBody('SOLANA_WALLET');
  const created = await tenant.api('POST', '/platform/external-accounts', {
    body: { ...body, ownershipType: 'FIRST_PARTY' },
  });
  expect(created.status).toBe(201);
  expect(created.body.status).toBe('PENDING_OWNERSHIP_VERIFICATION');
  const id: string = created.body.id;
  expect(
    (await tenant.api('POST', `/platform/external-accounts/${id}/challenge`, { body: { method: 'WALLET_SIGNATURE' } }))
      .status,
  ).toBe(201);
  const verified = await tenant.api('POST', `/platform/external-accounts/${id}/verify`, {
    body: { signature: 'sandbox-valid-signature' },
  });
  expect(verified.body.status).toBe('ACTIVE');
  return id;
}

// ----------------------------------------------------------------------------- instances

/** A server instance on a store another instance may share (or open after it, for restarts). */
export interface Instance {
  app: FastifyInstance;
  deps: Deps;
  as(credentials: Credentials): Tenant;
  close(): Promise<void>;
}

export async function startInstance(options: {
  clock: Clock;
  dataDir?: string;
  pgSchema?: string;
  webhookTimeoutMs?: number;
}): Promise<Instance> {
  const config = testConfig({
    dataDir: options.dataDir ?? ':memory:',
    ...(options.webhookTimeoutMs ? { webhookTimeoutMs: options.webhookTimeoutMs } : {}),
  });
  const db = await openDb({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    pgSchema: options.pgSchema,
    pgPoolMax: 10,
  });
  const deps: Deps = {
    config,
    db,
    clock: options.clock,
    authCache: db.dialect === 'sqlite' ? new AuthCache() : undefined,
  };
  const app = await buildApp(deps);
  const as = (credentials: Credentials): Tenant => {
    const raw = async (method: string, path: string, request: RequestOptions = {}): Promise<Reply> => {
      const headers: Record<string, string> = {
        authorization: basic(credentials.clientId, credentials.clientSecret),
        ...request.headers,
      };
      const payload = request.body === undefined ? undefined : JSON.stringify(request.body);
      if (payload !== undefined) headers['content-type'] = 'application/json';
      const response = await app.inject({
        method: method as 'GET',
        url: path,
        headers,
        ...(payload !== undefined ? { payload } : {}),
      });
      let body: unknown;
      try {
        body = response.body === '' ? undefined : JSON.parse(response.body);
      } catch {
        body = response.body;
      }
      return { status: response.statusCode, body, headers: response.headers, text: response.body };
    };
    return { ...credentials, raw, api: (method, path, request) => raw(method, `${BASE_PATH}${path}`, request) };
  };
  return {
    app,
    deps,
    as,
    async close() {
      await app.close();
      await db.close();
    },
  };
}
