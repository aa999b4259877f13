// Input that once answered 500 or left the error envelope, each as a new user met it: a
// tagged union given something that is not an object, a path the router cannot decode or
// match, headers or a request line Node's parser refuses, and bodies over the size limit
// sent several at a time over real sockets.

import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { Type } from '@sinclair/typebox';
import { BODY_LIMIT_BYTES } from '../../src/app.js';
import { BODY_DEPTH_MAX } from '../../src/http/validation.js';
import { DISCARDED_BODY_BYTES_MAX } from '../../src/http/error-handler.js';
import { op } from '../../src/http/route.js';
import { PATH_PARAM_CHARS_MAX } from '../../src/http/url.js';
import { accountBody } from '../fixtures/accounts.js';
import { customerWithAccounts, fund } from '../fixtures/money.js';
import { basic, build, type TestApp } from '../helper.js';

const envelope = (status: number, code: string) => ({ status, code, message: expect.any(String) });
const NOT_OBJECTS: [string, unknown][] = [
  ['null', null],
  ['a number', 5],
  ['a negative number', -1],
  ['a string', 'USD_ACCOUNT'],
  ['a boolean', true],
  ['an array', [{ accountType: 'USD_ACCOUNT' }]],
];

async function rowCounts(t: TestApp) {
  const k = t.deps.db.k;
  const count = async (table: 'external_accounts' | 'quotes' | 'customers') =>
    Number(
      (
        await k
          .selectFrom(table)
          .select((e) => e.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    externalAccounts: await count('external_accounts'),
    quotes: await count('quotes'),
    customers: await count('customers'),
  };
}

describe('a tagged union given something that is not an object', () => {
  it.each(NOT_OBJECTS)(
    'accountInfo as %s is a 400 naming accountInfo, on both external-account creations',
    async (_name, value) => {
      const t = await build();
      const { customer } = await customerWithAccounts(t);
      const before = await rowCounts(t);
      for (const [path, extra] of [
        ['/platform/external-accounts', {}],
        ['/customers/external-accounts', { customerId: customer.id }],
      ] as const) {
        const reply = await t.api('POST', path, { body: { currency: 'USD', ...extra, accountInfo: value } });
        expect(reply.status, path).toBe(400);
        expect(reply.body).toMatchObject(envelope(400, 'INVALID_INPUT'));
        expect(reply.body.details.errors).toEqual([{ field: 'accountInfo', message: 'must be an object' }]);
      }
      expect(await rowCounts(t)).toEqual(before);
    },
  );

  it.each(NOT_OBJECTS)('a quote source and destination as %s are a 400 naming both', async (_name, value) => {
    const t = await build();
    const before = await rowCounts(t);
    const reply = await t.api('POST', '/quotes', {
      body: { source: value, destination: value, lockedCurrencySide: 'SENDING', lockedCurrencyAmount: 100 },
    });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject(envelope(400, 'INVALID_INPUT'));
    expect(reply.body.details.errors).toEqual([
      { field: 'source', message: 'must be an object' },
      { field: 'destination', message: 'must be an object' },
    ]);
    expect(await rowCounts(t)).toEqual(before);
  });

  it('a customer body that is not an object is a 400 naming the body', async () => {
    const t = await build();
    for (const payload of ['5', '"INDIVIDUAL"', '[]', 'true']) {
      const reply = await t.api('POST', '/customers', { payload, headers: { 'content-type': 'application/json' } });
      expect(reply.status, payload).toBe(400);
      expect(reply.body.details.errors).toEqual([{ field: 'body', message: 'must be an object' }]);
    }
  });

  it('a duplicated key counts as its last value: an object then a string is a 400, a string then an object is valid', async () => {
    const t = await build();
    const info = JSON.stringify(accountBody('USD_ACCOUNT').accountInfo);
    const last = await t.api('POST', '/platform/external-accounts', {
      payload: `{"currency":"USD","accountInfo":${info},"accountInfo":"USD_ACCOUNT"}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(last.status).toBe(400);
    expect(last.body.details.errors).toEqual([{ field: 'accountInfo', message: 'must be an object' }]);
    const first = await t.api('POST', '/platform/external-accounts', {
      payload: `{"currency":"USD","accountInfo":"USD_ACCOUNT","accountInfo":${info}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(first.status).toBe(201);
    expect((await rowCounts(t)).externalAccounts).toBe(1);
  });
});

describe('a path the router cannot use', () => {
  it.each([
    ['broken percent-encoding in an id', 'GET', '/customers/%E0%A4%A'],
    ['a lone % in an id', 'GET', '/transactions/Transaction%3A%'],
    ['an invalid escape in an id', 'POST', '/quotes/Quote%3Azz%GG/execute'],
    [`an id over ${PATH_PARAM_CHARS_MAX} characters`, 'GET', `/customers/Customer:${'a'.repeat(PATH_PARAM_CHARS_MAX)}`],
    ['an id of 5,000 characters', 'DELETE', `/platform/external-accounts/${'b'.repeat(5_000)}`],
  ])('%s is 404 REFERENCE_NOT_FOUND in the envelope', async (_name, method, path) => {
    const t = await build();
    const reply = await t.api(method, path, method === 'POST' ? { body: {} } : {});
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({ status: 404, code: 'REFERENCE_NOT_FOUND', message: expect.any(String) });
  });

  it('broken percent-encoding in a fixed part of the path is an unknown route, named as sent', async () => {
    const t = await build();
    const reply = await t.api('GET', '/cust%ZZomers');
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({
      status: 404,
      code: 'REFERENCE_NOT_FOUND',
      message: 'No operation at GET /grid/2025-10-13/cust%ZZomers',
    });
  });

  it('an id that cannot name anything is a 400 naming it where the operation declares 400 and not 404', async () => {
    const t = await build({
      extraRoutes: async (app) => {
        app.get(
          '/kernel-test/lookup/:address',
          {
            schema: op({
              operationId: 'kernelTestLookup',
              tag: 'Test',
              summary: 'test',
              permission: 'VIEW',
              params: Type.Object({ address: Type.String() }),
              success: { 200: Type.Object({ address: Type.String() }) },
              errors: [400, 401, 500],
            }),
          },
          async (request) => ({ address: (request.params as { address: string }).address }),
        );
      },
    });
    expect((await t.api('GET', '/kernel-test/lookup/alice')).body).toEqual({ address: 'alice' });
    for (const path of [
      '/kernel-test/lookup/%E0%A4%A',
      `/kernel-test/lookup/${'x'.repeat(PATH_PARAM_CHARS_MAX + 1)}`,
      '/kernel-test/lookup/a%00b',
    ]) {
      const reply = await t.api('GET', path);
      expect(reply.status, path).toBe(400);
      expect(reply.body).toMatchObject({
        ...envelope(400, 'INVALID_INPUT'),
        details: { errors: [{ field: 'address', message: expect.stringContaining('identifier') }] },
      });
    }
  });

  it('an id that is still possible text is looked up as usual, an encoded slash included', async () => {
    const t = await build();
    for (const id of [`Customer:${'a'.repeat(PATH_PARAM_CHARS_MAX - 'Customer:'.length)}`, '..%2F..%2Fconfig']) {
      const reply = await t.api('GET', `/customers/${id}`);
      expect(reply.status, id).toBe(404);
      expect(reply.body).toEqual({ status: 404, code: 'USER_NOT_FOUND', message: expect.any(String) });
    }
  });
});

// ----------------------------------------------------------------------------- real sockets

interface RawAnswer {
  status?: number;
  body?: any;
  /** A socket error seen while sending or reading (EPIPE, ECONNRESET), even after the answer. */
  error?: string;
  /** Bytes of the body handed to the socket before it closed. */
  sent: number;
}

/**
 * Sends `body` in 64 KiB pieces over a fresh connection and reads the answer whenever it
 * comes; resolves once the connection is done with, so an error after the answer counts too.
 */
function post(
  port: number,
  path: string,
  authorization: string,
  contentType: string,
  body: Buffer,
  chunked = false,
): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const answer: RawAnswer = { sent: 0 };
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path,
        agent: false,
        headers: { authorization, 'content-type': contentType, ...(chunked ? {} : { 'content-length': body.length }) },
      },
      (response) => {
        let text = '';
        answer.status = response.statusCode!;
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => (answer.body = JSON.parse(text)));
      },
    );
    request.on('error', (err: NodeJS.ErrnoException) => (answer.error ??= err.code ?? err.message));
    request.on('close', () => resolve(answer));
    let offset = 0;
    const pump = () => {
      while (offset < body.length && !request.destroyed) {
        const piece = body.subarray(offset, offset + 65_536);
        offset += piece.length;
        answer.sent = offset;
        if (!request.write(piece)) return void request.once('drain', pump);
      }
      request.end();
    };
    pump();
  });
}

function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let received = '';
    socket.on('data', (chunk) => (received += chunk));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
}

async function listening(t: TestApp): Promise<number> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return (t.app.server.address() as { port: number }).port;
}

describe('bodies over the size limit, over real sockets', () => {
  it('each of several concurrent uploads over the limit (12 MB JSON, 6 MB CSV) gets its 400 and no socket error, with and without Content-Length', async () => {
    const t = await build();
    const port = await listening(t);
    const authorization = basic(t.clientId, t.clientSecret);
    const json = Buffer.concat([Buffer.from('{"fullName":"'), Buffer.alloc(12 * 1024 * 1024, 'a'), Buffer.from('"}')]);
    const boundary = 'railyard-upload';
    const form = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="customers.csv"\r\nContent-Type: text/csv\r\n\r\n`,
      ),
      Buffer.alloc(6 * 1024 * 1024, 'b'),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const answers = await Promise.all([
      ...Array.from({ length: 6 }, (_, i) =>
        post(port, '/grid/2025-10-13/customers', authorization, 'application/json', json, i % 2 === 1),
      ),
      ...Array.from({ length: 4 }, (_, i) =>
        post(
          port,
          '/grid/2025-10-13/customers/bulk/csv',
          authorization,
          `multipart/form-data; boundary=${boundary}`,
          form,
          i % 2 === 1,
        ),
      ),
    ]);
    for (const answer of answers.slice(0, 6)) {
      expect(answer).toEqual({
        sent: json.length,
        status: 400,
        body: {
          status: 400,
          code: 'INVALID_INPUT',
          message: 'Request body too large',
          details: { errors: [{ field: 'body', message: 'is larger than the server accepts' }] },
        },
      });
    }
    for (const answer of answers.slice(6)) {
      expect(answer).toMatchObject({ sent: form.length, status: 400 });
      expect(answer.error).toBeUndefined();
      expect(answer.body.details.errors).toEqual([
        { field: 'file', message: expect.stringMatching(/^is larger than/) },
      ]);
    }
    expect((await t.api('GET', '/customers')).body.totalCount).toBe(0);
  });

  it('keeps the connection for the next request once the refused body is read', async () => {
    const t = await build();
    const port = await listening(t);
    const body = 'x'.repeat(BODY_LIMIT_BYTES + 1);
    const request = (path: string, payload: string) =>
      `POST /grid/2025-10-13${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${basic(t.clientId, t.clientSecret)}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`;
    const text = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.write(request('/tokens', body) + request('/tokens', '{"name":"after","permissions":["VIEW"]}')),
      );
      let received = '';
      socket.on('data', (chunk) => {
        received += chunk;
        if (received.includes('"after"')) socket.end();
      });
      socket.on('close', () => resolve(received));
    });
    expect(text.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 400', 'HTTP/1.1 201']);
  });

  it(`stops reading a refused body after ${DISCARDED_BODY_BYTES_MAX / 1024 / 1024} MiB more and closes the connection`, async () => {
    const t = await build();
    const port = await listening(t);
    const size = 4 * DISCARDED_BODY_BYTES_MAX;
    const answer = await post(
      port,
      '/grid/2025-10-13/tokens',
      basic(t.clientId, t.clientSecret),
      'application/json',
      Buffer.alloc(size, 'c'),
    );
    // Whether the 400 arrives before the reset is up to the client's timing; what the server
    // owes is to stop reading: the connection ends long before the body does.
    expect(answer.error).toMatch(/^(EPIPE|ECONNRESET)$/);
    expect(answer.sent).toBeLessThan(size / 2);
    expect((await t.api('GET', '/tokens')).status).toBe(200);
  });
});

describe("requests Node's HTTP parser refuses", () => {
  it('answers headers over the size limit and a malformed request with 400 in the envelope', async () => {
    const t = await build();
    const port = await listening(t);
    const huge = await rawExchange(
      port,
      `GET /grid/2025-10-13/config HTTP/1.1\r\nHost: x\r\nX-Big: ${'h'.repeat(20_000)}\r\n\r\n`,
    );
    const broken = await rawExchange(port, 'GET /grid/2025-10-13/config HTTP/1.1\r\nHost: x\r\nNot a header\r\n\r\n');
    for (const [text, field] of [
      [huge, 'headers'],
      [broken, 'request'],
    ] as const) {
      expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
      expect(body).toMatchObject({
        ...envelope(400, 'INVALID_INPUT'),
        details: { errors: [{ field, message: expect.any(String) }] },
      });
    }
  });
});

// Found by the fuzz suite (test/fuzz).
describe('numbers past the double range', () => {
  it('1e309 in a body is a 400 naming the field, not an amount of Infinity', async () => {
    const t = await build();
    const usdc = (await t.api('GET', '/platform/internal-accounts?currency=USDC')).body.data[0];
    const reply = await t.api('POST', '/crypto/estimate-withdrawal-fee', {
      payload: `{"internalAccountId":"${usdc.id}","currency":"USDC","cryptoNetwork":"ETHEREUM","amount":1e309,"destinationAddress":"0x${'ab'.repeat(20)}"}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors).toEqual([{ field: 'amount', message: 'must be an integer' }]);
  });

  it.each(['1e309', 'Infinity', '-Infinity'])('limit=%s is a 400 naming limit', async (value) => {
    const t = await build();
    const reply = await t.api('GET', `/tokens?limit=${value}`);
    expect(reply.status).toBe(400);
    expect(reply.body.details.errors).toEqual([{ field: 'limit', message: 'must be a finite number' }]);
  });
});

describe('a body nested deeper than any walk of it can go', () => {
  const nestedText = (depth: number) =>
    `${'['.repeat(Math.ceil(depth / 2))}${'{"a":'.repeat(Math.floor(depth / 2))}1${'}'.repeat(Math.floor(depth / 2))}${']'.repeat(Math.ceil(depth / 2))}`;

  it(`is a 400 naming the body past ${BODY_DEPTH_MAX} levels, with and without an Idempotency-Key, and moves nothing`, async () => {
    const t = await build();
    const { usd, external } = await customerWithAccounts(t);
    await fund(t, usd.id, 10_000);
    const transfer = `{"source":{"accountId":"${usd.id}"},"destination":{"accountId":"${external.id}"},"amount":100`;
    for (const headers of [{}, { 'idempotency-key': 'deep-1' }] as Record<string, string>[]) {
      const deep = await t.api('POST', '/transfer-out', {
        payload: `${transfer},"deep":${nestedText(10_000)}}`,
        headers: { 'content-type': 'application/json', ...headers },
      });
      expect(deep.status).toBe(400);
      expect(deep.body.details.errors).toEqual([
        { field: 'body', message: `nests deeper than ${BODY_DEPTH_MAX} levels` },
      ]);
      const justOver = await t.api('POST', '/transfer-out', {
        payload: `${transfer},"deep":${nestedText(BODY_DEPTH_MAX)}}`,
        headers: { 'content-type': 'application/json', ...headers },
      });
      expect(justOver.status).toBe(400);
    }
    expect((await t.api('GET', '/transactions')).body.totalCount).toBe(0);
    // At the limit (the outer object counts as one level), the member is just an unknown one.
    const atLimit = await t.api('POST', '/transfer-out', {
      payload: `${transfer},"deep":${nestedText(BODY_DEPTH_MAX - 1)}}`,
      headers: { 'content-type': 'application/json', 'idempotency-key': 'deep-2' },
    });
    expect(atLimit.status).toBe(201);
    // Brackets inside strings are text, not nesting.
    const bracketsInText = await t.api('POST', '/transfer-out', {
      payload: `${transfer},"note":"${'[{'.repeat(2_000)}"}`,
      headers: { 'content-type': 'application/json', 'idempotency-key': 'deep-3' },
    });
    expect(bracketsInText.status).toBe(201);
  });

  it('is ignored by an operation that takes no body', async () => {
    const t = await build();
    const token = await t.api('POST', '/tokens', { body: { name: 'spare', permissions: ['VIEW'] } });
    const deleted = await t.api('DELETE', `/tokens/${token.body.id}`, {
      payload: `{"deep":${nestedText(10_000)}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(deleted.status).toBe(204);
  });
});

describe('an optional body', () => {
  it('given as JSON null is a 400 naming the body, not an empty body', async () => {
    const t = await build();
    for (const path of [
      '/transactions/Transaction:0193f1d2-0000-7000-8000-000000000000/approve',
      '/transactions/Transaction:0193f1d2-0000-7000-8000-000000000000/reject',
    ]) {
      const reply = await t.api('POST', path, { payload: 'null', headers: { 'content-type': 'application/json' } });
      expect(reply.status, path).toBe(400);
      expect(reply.body.details.errors).toEqual([{ field: 'body', message: 'must be an object' }]);
      // Left out, it reads as {} and the request goes on to find no such payment.
      expect((await t.api('POST', path)).status).toBe(404);
    }
  });
});

describe('the query of an operation that cannot refuse it (it declares no 400)', () => {
  it('reads a parameter given twice as its first value', async () => {
    const t = await build();
    const once = await t.api('GET', '/uma-providers?countryCode=US&limit=2');
    const twice = await t.api('GET', '/uma-providers?countryCode=US&countryCode=MX&limit=2&limit=50');
    expect(twice.status).toBe(200);
    expect(twice.body).toEqual(once.body);
  });
});
