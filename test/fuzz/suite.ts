// The fuzz suite: every operation railyard serves (its two OpenAPI documents list them) gets a
// valid baseline request (baselines.ts), then mutations of it (mutations.ts), sent over a
// real socket. For each answer:
//   - no 5xx, and no reset or timeout of the connection;
//   - a non-2xx is the error envelope {status, code, message, details?}, with a status the
//     reference declares for the operation (or one listed in src/http/reference-deviations.json)
//     and a code the reference lists for that status;
//   - nothing invalid is accepted: a request the reference finds invalid (oracle.ts) is not
//     answered 2xx by an operation that can refuse it (one that declares 400), and another
//     platform's id is a 404;
//   - a refused request changes nothing: every table's row count and latest updated_at are
//     the same before and after.
// Seeded and repeatable: FUZZ_SEED picks the draw (the summary line prints the seed used).
//
// The operations are dealt into parts (fuzz-1.test.ts, fuzz-2.test.ts), each a test file
// with a world of its own, so that two vitest workers can share the run.

import { request as httpRequest, Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_PREFIX, BASE_PATH } from '../../src/config.js';
import { sql } from '../../src/db/index.js';
import { UNDECLARED_STATUSES } from '../../src/http/deviations.js';
import { receiverFor, type Receiver } from '../events/support.js';
import { build, basic, type TestApp } from '../helper.js';
import { multipart } from '../fixtures/customers.js';
import { tables } from '../sandbox/support.js';
import { BASELINES, buildWorld, type World } from './baselines.js';
import { mutationsOf, seeded, shapeOf, toJson, type Mutation, type Shape } from './mutations.js';
import { errorCodesOf, referenceOperation, requestProblems, type RequestUnderTest } from './oracle.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261125);
const REQUEST_TIMEOUT_MS = 20_000;
/** Examples of each kind of violation kept for the failure message of an operation. */
const EXAMPLES_MAX = 8;

interface Operation {
  operationId: string;
  method: string;
  /** The full path template under the server root, as `/grid/2025-10-13/customers/{customerId}`. */
  template: string;
  declared: number[];
  takesJsonBody: boolean;
  admin: boolean;
  /** Query and header parameters railyard's document declares. */
  queryNames: string[];
  headerNames: string[];
}

type Violation = 'server error' | 'reset' | 'envelope' | 'accepted invalid' | 'changed state';

interface Tally {
  requests: number;
  violations: Record<Violation, number>;
}

/**
 * Defines part `part` (0-based) of `parts` of the suite in the calling test file: every
 * `parts`-th operation from the `part`-th, in the suite's order (the operations that must
 * come last still come last). Its state lives in this call, not in the module, which test
 * files running one after another in a worker share (vitest isolate: false).
 */
export function fuzzSuite(part: number, parts: number): void {
  const tally: Tally = {
    requests: 0,
    violations: { 'server error': 0, reset: 0, envelope: 0, 'accepted invalid': 0, 'changed state': 0 },
  };
  const perOperation = new Map<string, number>();

  let t: TestApp;
  let port: number;
  let agent: Agent;
  const receivers: Receiver[] = [];
  let main: World;
  let foreign: World;
  let operations: Operation[];
  let fingerprintSql: string;

  async function documentOf(path: string): Promise<any> {
    const reply = await t.raw('GET', path, { auth: null });
    if (reply.status !== 200) throw new Error(`${path}: ${reply.status}`);
    return reply.body;
  }

  function operationsOf(doc: any, prefix: string, admin: boolean): Operation[] {
    const out: Operation[] = [];
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        out.push({
          operationId: op.operationId,
          method: method.toUpperCase(),
          template: `${prefix}${path}`,
          declared: Object.keys(op.responses).map(Number),
          takesJsonBody: op.requestBody?.content?.['application/json'] !== undefined,
          admin,
          queryNames: (op.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => p.name),
          headerNames: (op.parameters ?? [])
            .filter((p: any) => p.in === 'header')
            .map((p: any) => String(p.name).toLowerCase()),
        });
      }
    }
    return out;
  }

  /**
   * A number that moves with every write to the store: PostgreSQL's WAL insert position (every
   * data change is logged), or SQLite's count of rows changed on the one connection the app
   * writes with. While it stays, the fingerprint below cannot have changed.
   */
  async function writeMark(): Promise<string> {
    const query =
      t.deps.db.dialect === 'postgres'
        ? 'SELECT pg_current_wal_insert_lsn()::text AS m'
        : 'SELECT total_changes() AS m';
    const result = await sql.raw<{ m: unknown }>(query).execute(t.deps.db.k);
    return String(result.rows[0]!.m);
  }

  let lastFingerprint: { mark: string; value: string } | undefined;

  /**
   * One row per table: its row count and latest updated_at (when it has one). Counting every
   * table costs a few milliseconds a refusal on PostgreSQL, so it is taken again only when the
   * store was written since the last one (the mark is read first: a write between the two
   * readings only makes the next call count again).
   */
  async function fingerprint(): Promise<string> {
    const mark = await writeMark();
    if (lastFingerprint?.mark === mark) return lastFingerprint.value;
    const result = await sql.raw<{ t: string; n: unknown; u: unknown }>(fingerprintSql).execute(t.deps.db.k);
    // Sorted: PostgreSQL may answer the UNION ALL's rows in any order (a parallel append does).
    const value = result.rows
      .map((r) => `${r.t}:${String(r.n)}:${String(r.u)}`)
      .sort()
      .join('|');
    lastFingerprint = { mark, value };
    return value;
  }

  function changedTables(before: string, after: string): string {
    const was = new Set(before.split('|'));
    return after
      .split('|')
      .filter((part) => !was.has(part))
      .map((part) => part.split(':')[0])
      .join(', ');
  }

  async function prepareFingerprint(): Promise<void> {
    // This app's tables only (sandbox/support.ts): a listing of every schema's tables fails
    // when another test file drops its schema meanwhile (PostgreSQL: "schema ... does not exist").
    const parts: string[] = [];
    for (const table of await tables(t)) {
      // Delivery tries are written by the job runner as it sends, not by the request; what a
      // request adds (a delivery, a job) is counted, not when the runner later touches it. The
      // request journal records every request, refused ones too: that is its purpose.
      if (['webhook_attempts', 'request_journal'].includes(table.name)) continue;
      const counted = ['jobs', 'webhook_deliveries'].includes(table.name);
      const updated = !counted && table.columns.includes('updated_at') ? 'MAX(updated_at)' : "''";
      parts.push(`SELECT '${table.name}' AS t, COUNT(*) AS n, ${updated} AS u FROM ${table.name}`);
    }
    fingerprintSql = parts.join(' UNION ALL ');
  }

  interface Sent {
    status?: number;
    text?: string;
    error?: string;
  }

  interface Encoded {
    path: string;
    headers: Record<string, string>;
    payload?: string | Buffer;
    view: RequestUnderTest;
  }

  function encode(op: Operation, shape: Shape): Encoded {
    const path = op.template.replace(
      /\{([^}]+)\}/g,
      (_, name: string) => shape.rawParams[name] ?? encodeURIComponent(shape.params[name] ?? ''),
    );
    const query = [
      ...shape.query.map(([n, v]) => `${encodeURIComponent(n)}=${encodeURIComponent(v)}`),
      ...(shape.rawQuery !== undefined ? [shape.rawQuery] : []),
    ].join('&');
    const headers: Record<string, string> = {
      authorization: basic(main.tenant.clientId, main.tenant.clientSecret),
      ...shape.headers,
    };
    let payload: string | Buffer | undefined;
    let multipartParts: string[] | undefined;
    const body = shape.body;
    if (body?.kind === 'json') {
      payload = toJson(body.value);
      headers['content-type'] = 'application/json';
    } else if (body?.kind === 'text') {
      payload = body.text;
      if (body.contentType !== undefined) headers['content-type'] = body.contentType;
    } else if (body?.kind === 'form') {
      const encoded = multipart(body.fields, body.files, 'railyard-fuzz-boundary');
      payload = encoded.payload;
      Object.assign(headers, encoded.headers);
      multipartParts = [...body.fields.map(([n]) => n), ...body.files.map((f) => f.name)];
    }
    // Node's client sends a GET's or a DELETE's body with no length unless told one, and the
    // server would read those bytes as the next request.
    if (payload !== undefined) headers['content-length'] ??= String(Buffer.byteLength(payload));
    const decode = (text: string) => {
      try {
        return decodeURIComponent(text.replace(/\+/g, ' '));
      } catch {
        return text;
      }
    };
    const queryMap: Record<string, string[]> = {};
    if (query !== '') {
      for (const pair of query.split('&')) {
        const [name, value = ''] = pair.split('=');
        const key = decode(name!);
        queryMap[key] ??= [];
        queryMap[key].push(decode(value));
      }
    }
    const lowered = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    return {
      path: query === '' ? path : `${path}?${query}`,
      headers,
      ...(payload !== undefined ? { payload } : {}),
      view: {
        query: queryMap,
        headers: lowered,
        contentType: lowered['content-type'],
        bodyText: payload === undefined ? undefined : payload.toString(),
        ...(multipartParts !== undefined ? { multipartParts } : {}),
      },
    };
  }

  function send(op: Operation, encoded: Encoded): Promise<Sent> {
    return new Promise((resolve) => {
      let settled = false;
      const done = (sent: Sent) => {
        if (settled) return;
        settled = true;
        resolve(sent);
      };
      const request = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: op.method,
          path: encoded.path,
          headers: encoded.headers,
          agent,
          timeout: REQUEST_TIMEOUT_MS,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            done({ status: response.statusCode!, text: Buffer.concat(chunks).toString('utf8') }),
          );
          response.on('error', (err: NodeJS.ErrnoException) => done({ error: err.code ?? err.message }));
        },
      );
      request.on('timeout', () => {
        request.destroy();
        done({ error: 'timeout' });
      });
      request.on('error', (err: NodeJS.ErrnoException) => done({ error: err.code ?? err.message }));
      request.end(encoded.payload);
    });
  }

  function parsed(text: string): unknown {
    try {
      return JSON.parse(text);
    } catch {
      return undefined;
    }
  }

  /** What is wrong with a non-2xx answer as an error envelope of this operation. */
  function envelopeProblems(op: Operation, status: number, text: string): string[] {
    const problems: string[] = [];
    const declared = op.admin
      ? op.declared
      : [
          ...(referenceOperation(op.operationId)?.declaredStatuses ?? []),
          ...UNDECLARED_STATUSES.filter((d) => d.operationId === op.operationId).map((d) => d.status),
        ];
    if (!declared.includes(status))
      problems.push(`status ${status} is not declared (declared: ${declared.join(', ')})`);
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      return [...problems, 'the body is not JSON'];
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      return [...problems, 'the body is not an object'];
    const extra = Object.keys(body).filter((k) => !['status', 'code', 'message', 'details'].includes(k));
    if (extra.length > 0) problems.push(`unexpected members ${extra.join(', ')}`);
    if (body.status !== status) problems.push(`body.status ${body.status} is not the HTTP status`);
    if (!(errorCodesOf(status) ?? []).includes(body.code))
      problems.push(`code ${body.code} is not one the reference lists for ${status}`);
    if (typeof body.message !== 'string' || body.message === '') problems.push('no message');
    if (body.details !== undefined && (body.details === null || typeof body.details !== 'object'))
      problems.push('details is not an object');
    return problems;
  }

  beforeAll(async () => {
    t = await build({ counterpartyRules: true });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as { port: number }).port;
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
    // INCOMING_PAYMENT.PENDING gets 202, so such a payment waits for /approve or /reject.
    receivers.push(
      await receiverFor(t, (hit) => (hit.type === 'INCOMING_PAYMENT.PENDING' ? { status: 202 } : { status: 200 })),
    );
    const other = await t.newPlatform({ counterpartyRules: true });
    receivers.push(
      await receiverFor(other, (hit) => (hit.type === 'INCOMING_PAYMENT.PENDING' ? { status: 202 } : { status: 200 })),
    );
    main = await buildWorld(t, t);
    foreign = await buildWorld(t, other);
    operations = [
      ...operationsOf(await documentOf(`${BASE_PATH}/openapi.json`), BASE_PATH, false),
      ...operationsOf(await documentOf(`${ADMIN_PREFIX}/openapi.json`), ADMIN_PREFIX, true),
    ];
    await prepareFingerprint();
  }, 120_000);

  afterAll(async () => {
    agent?.destroy();
    await Promise.all(receivers.map((r) => r.close()));
    const v = tally.violations;
    // The line CI prints: every count after the first two must be 0.
    console.log(
      `fuzz part ${part + 1}/${parts}: ${tally.requests} requests over ${perOperation.size} operations (seed ${SEED}): ${v['server error']} 5xx, ${v.reset} resets, ` +
        `${v.envelope} envelope violations, ${v['accepted invalid']} accepted-invalid, ${v['changed state']} state changes on refusal`,
    );
  });

  describe(`the fuzz suite, part ${part + 1} of ${parts}`, () => {
    it('notices a change of state from the fingerprint, through its fast path', async () => {
      const before = await fingerprint();
      const renamed = await t.raw('PATCH', '/_railyard/platform', { body: { name: `Fuzz ${Date.now()}` } });
      expect(renamed.status, renamed.text).toBe(200);
      expect(changedTables(before, await fingerprint())).toContain('platforms');
    });

    it.skipIf(part !== 0)('has a baseline for exactly the operations railyard serves', () => {
      expect(operations.map((o) => o.operationId).sort()).toEqual(Object.keys(BASELINES).sort());
    });

    const order = Object.entries(BASELINES)
      .sort(([, a], [, b]) => Number(a.last ?? false) - Number(b.last ?? false))
      .filter((_, i) => i % parts === part);
    for (const [operationId, row] of order) {
      it(operationId, async () => {
        const op = operations.find((o) => o.operationId === operationId);
        if (op === undefined) throw new Error(`railyard serves no operation ${operationId}`);
        const reference = op.admin ? undefined : referenceOperation(operationId);
        if (!op.admin && reference === undefined) throw new Error(`the reference has no operation ${operationId}`);
        const canRefuse = op.admin ? op.declared.includes(400) : reference!.declaredStatuses.includes(400);
        const examples: string[] = [];
        const violation = (kind: Violation, mutation: Mutation, detail: string) => {
          tally.violations[kind]++;
          if (examples.length < EXAMPLES_MAX) examples.push(`${kind}: ${mutation.label}: ${detail}`);
        };
        let seedOffset = 0;
        for (const char of operationId) seedOffset = (seedOffset * 31 + char.charCodeAt(0)) >>> 0;

        const fresh = async () => {
          const base = shapeOf(await row.make(main));
          const other = shapeOf(await row.make(foreign));
          return mutationsOf(base, {
            foreign: other,
            otherKindId: operationId.toLowerCase().includes('token') ? main.platformUsd.id : main.token.id,
            random: seeded(SEED ^ seedOffset),
            takesJsonBody: op.takesJsonBody,
            queryNames: [
              ...new Set([
                ...op.queryNames,
                ...(reference?.parameters.filter((p) => p.in === 'query').map((p) => p.name) ?? []),
              ]),
            ],
            headerNames: [
              ...new Set([
                ...op.headerNames,
                ...(reference?.parameters.filter((p) => p.in === 'header').map((p) => p.name) ?? []),
              ]),
            ],
          });
        };

        // The baseline itself: accepted, and valid by the reference.
        let answered: Awaited<ReturnType<typeof send>> | undefined;
        for (let attempt = 1; ; attempt++) {
          const base = shapeOf(await row.make(main));
          const encodedBase = encode(op, base);
          if (reference !== undefined)
            expect(
              requestProblems(reference, encodedBase.view),
              `the baseline of ${operationId} is valid by the reference`,
            ).toEqual([]);
          answered = await send(op, encodedBase);
          tally.requests++;
          if (attempt >= 3 || row.lapsed === undefined || !row.lapsed.when(parsed(answered.text ?? ''))) break;
        }
        if (row.refusedBaseline !== undefined)
          expect(answered.status, `the baseline of ${operationId} (${row.refusedBaseline.why})`).toBe(
            row.refusedBaseline.status,
          );
        else
          expect(
            answered.status,
            `the baseline of ${operationId}: ${answered.text?.slice(0, 500) ?? answered.error}`,
          ).toBeLessThan(300);

        let list = await fresh();
        let before: string | undefined;
        for (let i = 0; i < list.length; i++) {
          if (row.renew === 'always' && i > 0) {
            list = await fresh();
            before = undefined;
          }
          const mutation = list[i]!;
          const encoded = encode(op, mutation.shape);
          before ??= await fingerprint();
          const sent = await send(op, encoded);
          tally.requests++;
          perOperation.set(operationId, (perOperation.get(operationId) ?? 0) + 1);
          if (sent.error !== undefined || sent.status === undefined) {
            violation('reset', mutation, sent.error ?? 'no answer');
            agent.destroy();
            agent = new Agent({ keepAlive: true, maxSockets: 1 });
            before = undefined;
            continue;
          }
          const status = sent.status;
          const text = sent.text ?? '';
          if (status >= 500) {
            violation('server error', mutation, `${status} ${text.slice(0, 300)}`);
            before = undefined;
            continue;
          }
          if (status < 300) {
            const problems = reference !== undefined ? requestProblems(reference, encoded.view) : [];
            if (mutation.foreign)
              violation('accepted invalid', mutation, `another platform's resource answered ${status}`);
            else if (problems.length > 0 && canRefuse)
              violation(
                'accepted invalid',
                mutation,
                `${status} for a request the reference refuses: ${problems.join('; ').slice(0, 300)}`,
              );
            before = undefined;
            if (row.renew === 'success') list = [...list.slice(0, i + 1), ...(await fresh()).slice(i + 1)];
            continue;
          }
          const wrong = envelopeProblems(op, status, text);
          if (wrong.length > 0)
            violation('envelope', mutation, `${status}: ${wrong.join('; ')}: ${text.slice(0, 200)}`);
          if (mutation.foreign && status !== 404)
            violation('accepted invalid', mutation, `another platform's resource answered ${status}, not 404`);
          const after = await fingerprint();
          if (after !== before) {
            if (row.refusalChanges?.when(parsed(text))) {
              list = [...list.slice(0, i + 1), ...(await fresh()).slice(i + 1)];
              before = undefined;
              continue;
            }
            violation(
              'changed state',
              mutation,
              `${status}, changed ${changedTables(before, after)}: ${text.slice(0, 200)}`,
            );
          }
          before = after;
        }
        expect(examples.join('\n'), `${operationId}: ${list.length} mutations`).toBe('');
      }, 300_000);
    }
  });
}
