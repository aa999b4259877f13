// Test support for fault rules: requests over a real socket (a reset or a lost answer is a
// connection that ends, which only a socket shows), and adding rules through the API.

import { request as httpRequest } from 'node:http';
import { expect } from 'vitest';
import { BASE_PATH } from '../../src/config.js';
import { basic, type Tenant, type TestApp } from '../helper.js';

export interface SocketReply {
  status?: number;
  headers?: Record<string, string | string[] | undefined>;
  body?: any;
  /** Why no answer came (ECONNRESET, socket hang up). */
  error?: string;
  elapsedMs: number;
}

/** The port of the test app, listening on loopback (started on first use). */
export async function portOf(t: TestApp): Promise<number> {
  const address = t.app.server.address();
  if (address !== null && typeof address === 'object') return address.port;
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return (t.app.server.address() as { port: number }).port;
}

/** A Grid API request over a socket of its own (no keep-alive, so one request per connection). */
export function overSocket(
  port: number,
  tenant: Tenant,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<SocketReply> {
  const started = performance.now();
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve) => {
    let settled = false;
    const done = (reply: Omit<SocketReply, 'elapsedMs'>) => {
      if (settled) return;
      settled = true;
      resolve({ ...reply, elapsedMs: performance.now() - started });
    };
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path: `${BASE_PATH}${path}`,
        agent: false,
        headers: {
          authorization: basic(tenant.clientId, tenant.clientSecret),
          ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
          ...options.headers,
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          done({
            status: response.statusCode!,
            headers: response.headers,
            body: text === '' ? undefined : JSON.parse(text),
          });
        });
        response.on('error', (err: NodeJS.ErrnoException) => done({ error: err.code ?? err.message }));
      },
    );
    request.on('error', (err: NodeJS.ErrnoException) => done({ error: err.code ?? err.message }));
    request.end(payload);
  });
}

export async function addFaultRule(tenant: Tenant, rule: Record<string, unknown>): Promise<any> {
  const reply = await tenant.raw('POST', '/_railyard/faults', { body: rule });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

export async function faultRules(tenant: Tenant): Promise<any[]> {
  const reply = await tenant.raw('GET', '/_railyard/faults');
  expect(reply.status, reply.text).toBe(200);
  return reply.body.data;
}

export async function addWebhookFaultRule(tenant: Tenant, rule: Record<string, unknown>): Promise<any> {
  const reply = await tenant.raw('POST', '/_railyard/webhook-faults', { body: rule });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

/** The platform's tags of fault rules, as its row holds them. */
export async function faultTags(t: TestApp, platformId: string) {
  return t.deps.db.k
    .selectFrom('platforms')
    .select(['fault_rules', 'webhook_fault_rules'])
    .where('id', '=', platformId)
    .executeTakeFirstOrThrow();
}
