// Two server processes on one PostgreSQL schema, under concurrent load sent to both at once:
// transfer-outs and transfer-ins on one account that cannot cover them all, quotes created and
// executed (cross-currency, immediatelyExecute, one quote executed on both instances at once),
// clock advances on both instances while the traffic runs (005 transfers and 005 payout
// returns fall due during them), and webhooks to a receiver in this process that verifies every
// signature and answers 500 to some tries so retries happen. Then: no balance ever negative,
// final balances equal funding plus exactly the accepted movements, every payment once with
// its postings once, each job that must run once ran once, every event delivered (at least
// once, never more often than its recorded tries), and the books balanced on both instances.

import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { SENT_ONCE } from '../../src/events/delivery.js';
import { startReceiver, type Receiver } from '../events/support.js';
import { accountBody } from '../fixtures/accounts.js';
import { individualBody } from '../fixtures/customers.js';
import { startServer, TEST_CLIENT_ID, TEST_CLIENT_SECRET, type ServerProcess } from '../fixtures/server.js';
import { databaseUrl } from '../helper.js';
import { until as waitUntil } from '../fixtures/until.js';

/** The platform's USD account: funded with less than the traffic on it asks for. */
const PLATFORM_FUNDED = 100_000;
/** The customer's USD account: funded with more than its quotes need, so each contested quote has a winner. */
const CUSTOMER_FUNDED = 600_000;
/** Each clock advance sent while the traffic runs (a 005 outcome falls due 30 s after its start). */
const ADVANCE_SECONDS = 31;
/** The advance after the traffic: past every quote's expiry (15 minutes at most). */
const FINAL_ADVANCE_SECONDS = 16 * 60;
/** Each advance that walks the webhook retry ladder (30 s, then 60 s). */
const RETRY_ADVANCE_SECONDS = 61;
/** Requests in flight at once, over both instances. */
const WORKERS = 16;
/** Executes sent at once for one contested quote: half to each instance. */
const CONTENDERS = 6;

type Scenario = '000' | '005';
type Kind = 'OUT' | 'IN' | 'QUOTE';
type Owner = 'PLATFORM' | 'CUSTOMER';

/** A payment railyard accepted (a quote counts from its creation: it has its transaction then). */
interface Payment {
  kind: Kind;
  scenario: Scenario;
  owner: Owner;
  transactionId: string;
  amount: number;
  quoteId?: string;
  /** Quotes: executed (by a 200, or by immediatelyExecute). */
  executed?: boolean;
  how?: 'EXECUTE' | 'IMMEDIATE' | 'CONTESTED' | 'CONTESTED_ONE_KEY';
}

interface Reply {
  status: number;
  body: any;
}

/** A deterministic shuffle (mulberry32), so every run sends the same mix in the same order. */
function shuffled<T>(items: T[], seed: number): T[] {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** until() with this file's bounds: 30 s, checked every 20 ms. */
const until = (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000, everyMs = 20) =>
  waitUntil(what, check, timeoutMs, everyMs);

/** How many of an event's first tries the receiver refuses with a 500 (none for kinds sent once). */
function refusalsFor(id: string, type: string): number {
  if (SENT_ONCE.has(type)) return 0;
  const byte = createHash('sha256').update(id).digest()[0]!;
  return byte % 8 === 0 ? 2 : byte % 4 === 0 ? 1 : 0;
}

const sorted = (values: string[]) => [...values].sort();

describe.skipIf(!databaseUrl)('two instances on one PostgreSQL under concurrent load from both', () => {
  const schema = `load_${randomBytes(5).toString('hex')}`;
  const servers: ServerProcess[] = [];
  let db: pg.Client | undefined;
  let receiver: Receiver | undefined;
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.kill('SIGKILL')));
    await receiver?.close();
    await db?.end();
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  });

  it('transfers, quote executes, clock advances and webhook retries from both: no overdraft, each payment, posting and job once, every webhook delivered within its tries', {
    timeout: 120_000,
  }, async () => {
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.end();
    const url = new URL(databaseUrl!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    // One after the other: the first start creates the pinned platform, the second finds it.
    servers.push(await startServer({ DATABASE_URL: url.toString() }));
    servers.push(await startServer({ DATABASE_URL: url.toString() }));
    const [a, b] = servers as [ServerProcess, ServerProcess];
    db = new pg.Client({ connectionString: url.toString() });
    await db.connect();
    const query = async (text: string, params: unknown[] = []) => (await db!.query(text, params)).rows as any[];
    const ok = async (reply: Promise<Reply>, status: number, what: string) => {
      const r = await reply;
      if (r.status !== status)
        throw new Error(`${what}: expected ${status}, got ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    };

    // ------------------------------------------------------------------ the receiver
    const authorization = `Basic ${Buffer.from(`${TEST_CLIENT_ID}:${TEST_CLIENT_SECRET}`).toString('base64')}`;
    const keyReply = await fetch(`${b.origin}/_railyard/webhook-public-key`, { headers: { authorization } });
    expect(keyReply.status).toBe(200);
    const publicKeyPem = await keyReply.text();
    /** What the receiver answered to each event id, in arrival order. */
    const answers = new Map<string, number[]>();
    receiver = await startReceiver(publicKeyPem, (hit) => {
      const given = answers.get(hit.id) ?? [];
      const status = given.length < refusalsFor(hit.id, hit.type) ? 500 : 200;
      given.push(status);
      answers.set(hit.id, given);
      return status === 500 ? { status: 500, body: { message: 'try again later' } } : { status: 200 };
    });
    const eventsBefore = new Set((await query('SELECT id FROM events')).map((r) => r.id as string));
    await ok(a.request('PATCH', '/config', { webhookEndpoint: receiver.url }), 200, 'PATCH /config');

    // ------------------------------------------------------------------ accounts
    const platformUsd = (
      await ok(b.request('GET', '/platform/internal-accounts?currency=USD'), 200, 'platform accounts')
    ).data[0];
    await ok(
      b.request('POST', `/sandbox/internal-accounts/${platformUsd.id}/fund`, { amount: PLATFORM_FUNDED }),
      200,
      'fund platform',
    );
    const platformExternal = async (server: ServerProcess, type: string, suffix: Scenario) =>
      (
        await ok(
          server.request('POST', '/platform/external-accounts', accountBody(type, suffix)),
          201,
          `${type} ${suffix}`,
        )
      ).id as string;
    const usd000 = await platformExternal(a, 'USD_ACCOUNT', '000');
    const usd005 = await platformExternal(b, 'USD_ACCOUNT', '005');
    const eur000 = await platformExternal(a, 'EUR_ACCOUNT', '000');
    const mxn000 = await platformExternal(b, 'MXN_ACCOUNT', '000');
    const mxn005 = await platformExternal(a, 'MXN_ACCOUNT', '005');

    const customer = await ok(a.request('POST', '/customers', individualBody('Jordan Rivera')), 201, 'customer');
    const customerUsd = (
      await ok(
        b.request('GET', `/customers/internal-accounts?customerId=${encodeURIComponent(customer.id)}&currency=USD`),
        200,
        'customer accounts',
      )
    ).data[0];
    await ok(
      a.request('POST', `/sandbox/internal-accounts/${customerUsd.id}/fund`, { amount: CUSTOMER_FUNDED }),
      200,
      'fund customer',
    );
    const customerExternal = async (server: ServerProcess, type: string, suffix: Scenario) =>
      (
        await ok(
          server.request('POST', '/customers/external-accounts', {
            ...accountBody(type, suffix),
            customerId: customer.id,
          }),
          201,
          `customer ${type} ${suffix}`,
        )
      ).id as string;
    const cEur000 = await customerExternal(b, 'EUR_ACCOUNT', '000');
    const cMxn000 = await customerExternal(a, 'MXN_ACCOUNT', '000');
    const cEur005 = await customerExternal(b, 'EUR_ACCOUNT', '005');

    // ------------------------------------------------------------------ the traffic
    const payments: Payment[] = [];
    const refused: { what: string; reply: Reply }[] = [];
    const wrong: string[] = [];
    const insufficient = (r: Reply) =>
      r.status === 400 && r.body?.code === 'INVALID_AMOUNT' && r.body?.details?.reason === 'INSUFFICIENT_BALANCE';
    const expectStatus = (what: string, r: Reply, status: number, bodyStatus?: string) => {
      if (r.status !== status || (bodyStatus !== undefined && r.body?.status !== bodyStatus)) {
        wrong.push(
          `${what}: expected ${status}${bodyStatus ? ` ${bodyStatus}` : ''}, got ${r.status} ${JSON.stringify(r.body)}`,
        );
        return false;
      }
      return true;
    };
    const accountOf = (owner: Owner) => (owner === 'PLATFORM' ? platformUsd.id : customerUsd.id) as string;
    const quoteBody = (owner: Owner, destination: string, amount: number, immediatelyExecute = false) => ({
      source: { sourceType: 'ACCOUNT', accountId: accountOf(owner) },
      destination: { destinationType: 'ACCOUNT', accountId: destination },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: amount,
      description: 'Invoice 2025-118',
      ...(immediatelyExecute ? { immediatelyExecute: true } : {}),
    });

    const transferOut = (server: ServerProcess, scenario: Scenario, amount: number, i: number) => async () => {
      const what = `transfer-out ${scenario} #${i}`;
      const r = await server.request(
        'POST',
        '/transfer-out',
        {
          source: { accountId: platformUsd.id },
          destination: { accountId: scenario === '005' ? usd005 : usd000 },
          amount,
        },
        { 'idempotency-key': `out-${i}` },
      );
      if (r.status === 201) {
        if (expectStatus(what, r, 201, scenario === '005' ? 'PROCESSING' : 'COMPLETED'))
          payments.push({ kind: 'OUT', scenario, owner: 'PLATFORM', transactionId: r.body.id, amount });
      } else if (insufficient(r)) refused.push({ what, reply: r });
      else wrong.push(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
    };
    const transferIn = (server: ServerProcess, scenario: Scenario, amount: number, i: number) => async () => {
      const what = `transfer-in ${scenario} #${i}`;
      const r = await server.request(
        'POST',
        '/transfer-in',
        {
          source: { accountId: scenario === '005' ? usd005 : usd000 },
          destination: { accountId: platformUsd.id },
          amount,
        },
        { 'idempotency-key': `in-${i}` },
      );
      if (expectStatus(what, r, 201, scenario === '005' ? 'PENDING' : 'COMPLETED'))
        payments.push({ kind: 'IN', scenario, owner: 'PLATFORM', transactionId: r.body.id, amount });
    };
    const quoted = (
      what: string,
      r: Reply,
      owner: Owner,
      scenario: Scenario,
      how: Payment['how'],
    ): Payment | undefined => {
      if (!expectStatus(what, r, 201)) return undefined;
      if (r.body.platformFeesIncluded !== 0) wrong.push(`${what}: platformFeesIncluded ${r.body.platformFeesIncluded}`);
      const payment: Payment = {
        kind: 'QUOTE',
        scenario,
        owner,
        transactionId: r.body.transactionId,
        amount: r.body.totalSendingAmount,
        quoteId: r.body.id,
        executed: false,
        how,
      };
      payments.push(payment);
      return payment;
    };
    // Created on one instance, executed on the other.
    const quoteThenExecute =
      (
        create: ServerProcess,
        execute: ServerProcess,
        owner: Owner,
        destination: string,
        scenario: Scenario,
        amount: number,
        i: number,
      ) =>
      async () => {
        const what = `quote ${owner} ${scenario} #${i}`;
        const created = await create.request('POST', '/quotes', quoteBody(owner, destination, amount), {
          'idempotency-key': `quote-${i}`,
        });
        const payment = quoted(what, created, owner, scenario, 'EXECUTE');
        if (payment === undefined || !expectStatus(what, created, 201, 'PENDING')) return;
        const r = await execute.request('POST', `/quotes/${payment.quoteId}/execute`, undefined, {
          'idempotency-key': `execute-${i}`,
        });
        if (r.status === 200) {
          if (expectStatus(`${what} execute`, r, 200, 'COMPLETED')) payment.executed = true;
        } else if (owner === 'PLATFORM' && insufficient(r)) refused.push({ what: `${what} execute`, reply: r });
        else wrong.push(`${what} execute: ${r.status} ${JSON.stringify(r.body)}`);
      };
    const immediate =
      (server: ServerProcess, owner: Owner, destination: string, scenario: Scenario, amount: number, i: number) =>
      async () => {
        const what = `immediatelyExecute ${owner} ${scenario} #${i}`;
        const r = await server.request('POST', '/quotes', quoteBody(owner, destination, amount, true), {
          'idempotency-key': `immediate-${i}`,
        });
        if (r.status === 201) {
          const payment = quoted(what, r, owner, scenario, 'IMMEDIATE');
          if (payment !== undefined && expectStatus(what, r, 201, 'COMPLETED')) payment.executed = true;
        } else if (owner === 'PLATFORM' && insufficient(r)) refused.push({ what, reply: r });
        else wrong.push(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
      };
    // One quote executed CONTENDERS times at once, half on each instance: one execution wins.
    const contested =
      (create: ServerProcess, destination: string, scenario: Scenario, amount: number, i: number, oneKey: boolean) =>
      async () => {
        const what = `contested quote ${scenario} #${i}${oneKey ? ' (one key)' : ''}`;
        const created = await create.request('POST', '/quotes', quoteBody('CUSTOMER', destination, amount));
        const payment = quoted(what, created, 'CUSTOMER', scenario, oneKey ? 'CONTESTED_ONE_KEY' : 'CONTESTED');
        if (payment === undefined) return;
        const replies = await Promise.all(
          Array.from({ length: CONTENDERS }, (_, k) =>
            (k % 2 === 0 ? a : b).request(
              'POST',
              `/quotes/${payment.quoteId}/execute`,
              undefined,
              oneKey ? { 'idempotency-key': `contested-${i}` } : { 'idempotency-key': `contested-${i}-${k}` },
            ),
          ),
        );
        const won = replies.filter((r) => r.status === 200);
        const lost = replies.filter((r) => r.status !== 200);
        if (oneKey) {
          if (won.length !== CONTENDERS || new Set(won.map((r) => JSON.stringify(r.body))).size !== 1) {
            wrong.push(
              `${what}: one key on both instances answered ${JSON.stringify(replies.map((r) => [r.status, r.body?.status ?? r.body?.code]))}`,
            );
          }
        } else if (won.length !== 1 || lost.some((r) => r.status !== 409 || r.body?.code !== 'CONFLICT')) {
          wrong.push(
            `${what}: expected one 200 and ${CONTENDERS - 1} 409 CONFLICT, got ${JSON.stringify(replies.map((r) => [r.status, r.body?.status ?? r.body?.code]))}`,
          );
        }
        if (won.length >= 1 && won[0]!.body.status === 'COMPLETED') payment.executed = true;
        else if (won.length >= 1) wrong.push(`${what}: the winner answered ${won[0]!.body.status}`);
      };

    const ops: (() => Promise<void>)[] = [];
    const on = (i: number) => (i % 2 === 0 ? a : b);
    const other = (i: number) => (i % 2 === 0 ? b : a);
    // On the platform account, 100,000 funded and 20,000 coming in: the transfer-outs alone ask
    // for 130,000 to keep, the quotes 54,000 more (and 26,000 for a while: the 005 holds and
    // payouts, which come back).
    for (let i = 0; i < 130; i++) ops.push(transferOut(on(i), '000', 700 + ((i * 37) % 7) * 100, i));
    for (let i = 130; i < 142; i++) ops.push(transferOut(on(i), '005', 500, i));
    for (let i = 0; i < 20; i++) ops.push(transferIn(on(i), '000', 1_000, i));
    for (let i = 20; i < 26; i++) ops.push(transferIn(on(i), '005', 700, i));
    for (let i = 0; i < 10; i++)
      ops.push(quoteThenExecute(on(i), other(i), 'PLATFORM', i % 2 === 0 ? eur000 : mxn000, '000', 3_000, i));
    for (let i = 10; i < 16; i++) ops.push(quoteThenExecute(on(i), other(i), 'PLATFORM', mxn005, '005', 2_000, i));
    for (let i = 0; i < 8; i++) ops.push(immediate(on(i), 'PLATFORM', i % 2 === 0 ? mxn000 : eur000, '000', 3_000, i));
    for (let i = 8; i < 12; i++) ops.push(immediate(on(i), 'PLATFORM', mxn005, '005', 2_000, i));
    // On the customer account, which covers everything asked of it.
    for (let i = 0; i < 8; i++) ops.push(contested(on(i), i % 2 === 0 ? cEur000 : cMxn000, '000', 5_000, i, false));
    for (let i = 8; i < 11; i++) ops.push(contested(on(i), cEur005, '005', 4_000, i, false));
    ops.push(contested(a, cMxn000, '000', 6_000, 11, true));
    for (let i = 12; i < 18; i++)
      ops.push(immediate(on(i), 'CUSTOMER', i % 2 === 0 ? cEur000 : cMxn000, '000', 5_000, i));
    for (let i = 18; i < 21; i++) ops.push(immediate(on(i), 'CUSTOMER', cEur005, '005', 4_000, i));
    const queue = shuffled(ops, 20251013);

    let done = 0;
    let failed = false;
    const advances: { seconds: number; reply: Reply }[] = [];
    const advance = async (server: ServerProcess, seconds: number) => {
      const reply = await server.request('POST', '/_railyard/clock/advance', { seconds });
      advances.push({ seconds, reply });
      if (reply.status !== 200) throw new Error(`clock advance: ${reply.status} ${JSON.stringify(reply.body)}`);
    };
    const workers = Array.from({ length: WORKERS }, async () => {
      for (let op = queue.shift(); op !== undefined; op = queue.shift()) {
        await op();
        done++;
      }
    });
    // Advances while the traffic runs, at points of its progress: to A, to B, to both at once, to B.
    const advancer = (async () => {
      for (const [share, targets] of [
        [0.2, [a]],
        [0.4, [b]],
        [0.6, [a, b]],
        [0.8, [b]],
      ] as [number, ServerProcess[]][]) {
        await until(`${share * 100}% of the traffic`, () => failed || done >= share * ops.length, 60_000, 5);
        if (failed) return;
        await Promise.all(targets.map((server) => advance(server, ADVANCE_SECONDS)));
      }
    })();
    await Promise.all(
      [...workers, advancer].map((p) =>
        p.catch((err) => {
          failed = true;
          throw err;
        }),
      ),
    );
    expect(wrong).toEqual([]);
    // The advances during the traffic ran 005 outcomes while requests were in flight.
    const [ranDuringTraffic] = await query(
      `SELECT COUNT(*) AS n FROM jobs WHERE kind = 'rail.outcome' AND status = 'DONE'`,
    );
    expect(Number(ranDuringTraffic.n)).toBeGreaterThan(0);

    // Everything still due: the 005 outcomes of the last stretch and every quote's expiry.
    await advance(a, FINAL_ADVANCE_SECONDS);
    const expectedOffset = advances.reduce((sum, x) => sum + x.seconds, 0);

    // ------------------------------------------------------------------ payments and money
    const byId = new Map(payments.map((p) => [p.transactionId, p]));
    expect(byId.size).toBe(payments.length);
    const outs000 = payments.filter((p) => p.kind === 'OUT' && p.scenario === '000');
    // More was asked of the platform account than it ever held: some transfer-outs were refused.
    expect(refused.filter((r) => r.what.startsWith('transfer-out')).length).toBeGreaterThan(0);
    expect(outs000.length).toBeGreaterThan(10);

    // Every transaction in the store is one this test was answered with, once.
    const rows = await query('SELECT id, type, status, failure_reason, internal_account_id FROM transactions');
    expect(rows.length).toBe(payments.length);
    expect(sorted(rows.map((r) => r.id))).toEqual(sorted(payments.map((p) => p.transactionId)));
    for (const server of [a, b])
      expect((await ok(server.request('GET', '/transactions?limit=1'), 200, 'transactions')).totalCount).toBe(
        payments.length,
      );

    const finalStatus = (p: Payment): [string, string | null] => {
      if (p.kind === 'QUOTE' && !p.executed) return ['EXPIRED', 'QUOTE_EXPIRED'];
      if (p.scenario === '000') return ['COMPLETED', null];
      if (p.kind === 'OUT') return ['FAILED', 'QUOTE_EXECUTION_FAILED'];
      if (p.kind === 'IN') return ['FAILED', 'COLLECTION_FAILED'];
      return ['FAILED', 'PAYOUT_RETURNED'];
    };
    const statusProblems = rows
      .filter((r) => JSON.stringify([r.status, r.failure_reason]) !== JSON.stringify(finalStatus(byId.get(r.id)!)))
      .map((r) => `${r.id} (${JSON.stringify(byId.get(r.id))}): ${r.status} ${r.failure_reason}`);
    expect(statusProblems).toEqual([]);

    // Postings: hold once, settle/release once, a return once.
    const expectedPostings = (p: Payment): string[] => {
      if (p.kind === 'OUT') return p.scenario === '000' ? ['HOLD', 'SETTLE'] : ['HOLD', 'RELEASE'];
      if (p.kind === 'IN')
        return p.scenario === '000' ? ['INCOMING_ACCEPT', 'INCOMING_COMPLETE'] : ['INCOMING_ACCEPT', 'INCOMING_FAIL'];
      if (!p.executed) return [];
      return p.scenario === '000'
        ? ['CONVERT', 'HOLD', 'PAYOUT']
        : ['CONVERT', 'CONVERT_REVERSE', 'HOLD', 'PAYOUT', 'PAYOUT_RETURN'];
    };
    const postings = new Map<string, string[]>();
    for (const r of await query('SELECT transaction_id, kind FROM ledger_postings WHERE transaction_id IS NOT NULL')) {
      postings.set(r.transaction_id, [...(postings.get(r.transaction_id) ?? []), r.kind]);
    }
    const postingProblems = payments
      .filter(
        (p) => JSON.stringify(sorted(postings.get(p.transactionId) ?? [])) !== JSON.stringify(expectedPostings(p)),
      )
      .map(
        (p) =>
          `${p.transactionId} (${p.kind} ${p.scenario} ${p.how ?? ''}): ${JSON.stringify(sorted(postings.get(p.transactionId) ?? []))}`,
      );
    expect([...postings.keys()].filter((id) => !byId.has(id))).toEqual([]);
    expect(postingProblems).toEqual([]);
    const funds = await query(`SELECT COUNT(*) AS n FROM ledger_postings WHERE kind = 'FUND'`);
    expect(Number(funds[0].n)).toBe(2);

    // Final balances: funding plus exactly the accepted movements that stayed.
    const moved = (owner: Owner) =>
      payments
        .filter((p) => p.owner === owner && p.scenario === '000' && (p.kind !== 'QUOTE' || p.executed))
        .reduce((sum, p) => sum + (p.kind === 'IN' ? p.amount : -p.amount), 0);
    const expected = { PLATFORM: PLATFORM_FUNDED + moved('PLATFORM'), CUSTOMER: CUSTOMER_FUNDED + moved('CUSTOMER') };
    expect(expected.PLATFORM).toBeGreaterThanOrEqual(0);
    for (const server of [a, b]) {
      const p = (await ok(server.request('GET', '/platform/internal-accounts?currency=USD'), 200, 'platform account'))
        .data[0];
      expect([p.balance.amount, p.totalBalance.amount]).toEqual([expected.PLATFORM, expected.PLATFORM]);
      const c = (
        await ok(
          server.request(
            'GET',
            `/customers/internal-accounts?customerId=${encodeURIComponent(customer.id)}&currency=USD`,
          ),
          200,
          'customer account',
        )
      ).data[0];
      expect([c.balance.amount, c.totalBalance.amount]).toEqual([expected.CUSTOMER, expected.CUSTOMER]);
    }

    // No balance either account ever reported was negative.
    const balanceEvents = await query(
      `SELECT resource_id, data FROM events WHERE type = 'INTERNAL_ACCOUNT.BALANCE_UPDATED'`,
    );
    expect(balanceEvents.length).toBeGreaterThan(outs000.length);
    const negative = balanceEvents
      .map((e) => ({ id: e.resource_id, data: JSON.parse(e.data) }))
      .filter((e) => e.data.balance.amount < 0 || e.data.totalBalance.amount < 0);
    expect(negative).toEqual([]);

    // The books, re-checked by each instance.
    for (const server of [a, b]) {
      const audit = await ok(server.request('GET', '/_railyard/ledger'), 200, 'ledger');
      for (const currency of audit.currencies) expect(currency.entriesSum).toBe('0');
      expect(audit.accounts.filter((x: any) => !x.consistent)).toEqual([]);
      expect(
        audit.accounts.filter((x: any) => x.kind === 'INTERNAL' && (BigInt(x.available) < 0n || BigInt(x.held) < 0n)),
      ).toEqual([]);
      expect(audit.balanced).toBe(true);
    }

    // ------------------------------------------------------------------ jobs and events
    // One rail outcome per 005 payment (a quote's only once it executed), each run to its end;
    // one expiry per quote created to be executed later (one executed at its creation has
    // nothing left to expire); nothing left behind, nothing given up.
    const jobs = await query('SELECT id, kind, status, payload FROM jobs');
    expect(
      jobs
        .filter((j) => j.kind !== 'webhook.deliver' && j.status !== 'DONE')
        .map((j) => `${j.kind} ${j.status} ${j.payload}`),
    ).toEqual([]);
    const jobsOf = (kind: string, key: string) => {
      const counts = new Map<string, number>();
      for (const j of jobs.filter((x) => x.kind === kind)) {
        const id = JSON.parse(j.payload)[key] as string;
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      return counts;
    };
    const railJobs = jobsOf('rail.outcome', 'transactionId');
    const railWanted = payments.filter((p) => p.scenario === '005' && (p.kind !== 'QUOTE' || p.executed));
    expect(sorted([...railJobs.keys()])).toEqual(sorted(railWanted.map((p) => p.transactionId)));
    expect([...railJobs].filter(([, n]) => n !== 1)).toEqual([]);
    const expiryJobs = jobsOf('quote.expire', 'transactionId');
    const quotes = payments.filter((p) => p.kind === 'QUOTE' && p.how !== 'IMMEDIATE');
    expect(sorted([...expiryJobs.keys()])).toEqual(sorted(quotes.map((p) => p.transactionId)));
    expect([...expiryJobs].filter(([, n]) => n !== 1)).toEqual([]);

    // Each transaction's events, each once: one FAILED per failed payment, one return, one expiry.
    const expectedEvents = (p: Payment): string[] => {
      const O = (t: string) => `OUTGOING_PAYMENT.${t}`;
      if (p.kind === 'OUT')
        return p.scenario === '000' ? [O('PROCESSING'), O('COMPLETED')] : [O('PROCESSING'), O('FAILED')];
      if (p.kind === 'IN')
        return p.scenario === '000'
          ? ['INCOMING_PAYMENT.PENDING', 'INCOMING_PAYMENT.COMPLETED']
          : ['INCOMING_PAYMENT.PENDING', 'INCOMING_PAYMENT.FAILED'];
      if (!p.executed) return [O('PENDING'), O('EXPIRED')];
      if (p.scenario === '000') return [O('PENDING'), O('PROCESSING'), O('COMPLETED')];
      return [O('PENDING'), O('PROCESSING'), O('COMPLETED'), O('FAILED'), O('REFUND_PENDING'), O('REFUND_COMPLETED')];
    };
    const events = await query(
      `SELECT id, type, resource_id, created_at FROM events WHERE type <> 'INTERNAL_ACCOUNT.BALANCE_UPDATED'`,
    );
    const eventsOf = new Map<string, { type: string; at: string }[]>();
    for (const e of events)
      eventsOf.set(e.resource_id, [...(eventsOf.get(e.resource_id) ?? []), { type: e.type, at: e.created_at }]);
    const eventProblems = payments
      .filter(
        (p) =>
          JSON.stringify(sorted((eventsOf.get(p.transactionId) ?? []).map((e) => e.type))) !==
          JSON.stringify(sorted(expectedEvents(p))),
      )
      .map(
        (p) =>
          `${p.transactionId} (${p.kind} ${p.scenario} ${p.how ?? ''}): ${JSON.stringify((eventsOf.get(p.transactionId) ?? []).map((e) => e.type))}`,
      );
    expect(eventProblems).toEqual([]);
    // A late outcome is recorded at the time its job ran: never before it fell due.
    const early = railWanted
      .map((p) => {
        const list = eventsOf.get(p.transactionId) ?? [];
        const first = Math.min(...list.map((e) => Date.parse(e.at)));
        const failure = list.find((e) => e.type.endsWith('.FAILED'));
        return { id: p.transactionId, first, failed: failure === undefined ? NaN : Date.parse(failure.at) };
      })
      .filter((x) => !(x.failed >= x.first + 30_000));
    expect(early).toEqual([]);

    for (const server of [a, b]) {
      expect((await ok(server.request('GET', '/_railyard/clock'), 200, 'clock')).offsetSeconds).toBe(expectedOffset);
    }

    // ------------------------------------------------------------------ webhooks
    // Walk the retry ladder: once no try is running or due, move the clock to the next one.
    const retryAdvances: number[] = [];
    await until(
      'every webhook delivered',
      async () => {
        const [pending] = await query(`SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'PENDING'`);
        if (Number(pending.n) === 0) return true;
        const [offset] = await query('SELECT CAST(clock_offset_ms AS TEXT) AS ms FROM platforms');
        const [busy] = await query(
          `SELECT COUNT(*) AS n FROM jobs WHERE kind = 'webhook.deliver' AND (status = 'RUNNING' OR (status = 'PENDING' AND due_at_ms <= $1))`,
          [Date.now() + Number(offset.ms)],
        );
        if (Number(busy.n) > 0) return false;
        if (retryAdvances.length >= 6)
          throw new Error(`deliveries still pending after ${retryAdvances.length} retry advances`);
        const server = retryAdvances.length % 2 === 0 ? b : a;
        retryAdvances.push(RETRY_ADVANCE_SECONDS);
        await advance(server, RETRY_ADVANCE_SECONDS);
        return false;
      },
      30_000,
      25,
    );

    // The delivery log, read page by page on one instance and counted on the other.
    const log: any[] = [];
    let cursor: string | undefined;
    do {
      const page = await ok(
        a.request(
          'GET',
          `/_railyard/webhooks/deliveries?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        ),
        200,
        'deliveries',
      );
      log.push(...page.data);
      cursor = page.hasMore ? page.nextCursor : undefined;
    } while (cursor !== undefined);
    expect((await ok(b.request('GET', '/_railyard/webhooks/deliveries?limit=1'), 200, 'deliveries')).totalCount).toBe(
      log.length,
    );

    // Every event recorded since the endpoint was set has its delivery; every delivery its event.
    const eventIds = (await query('SELECT id FROM events'))
      .map((r) => r.id as string)
      .filter((id) => !eventsBefore.has(id));
    expect(sorted(log.map((d) => d.id))).toEqual(sorted(eventIds));
    expect(log.length).toBeGreaterThan(payments.length * 2);

    const hits = new Map<string, number>();
    for (const hit of receiver.hits) hits.set(hit.id, (hits.get(hit.id) ?? 0) + 1);
    const tries = new Map<string, number[]>();
    for (const r of await query('SELECT delivery_id, response_status FROM webhook_attempts')) {
      tries.set(r.delivery_id, [...(tries.get(r.delivery_id) ?? []), Number(r.response_status)]);
    }
    const deliveryProblems = log
      .map((d) => {
        const got = hits.get(d.id) ?? 0;
        const given = answers.get(d.id) ?? [];
        const problems: string[] = [];
        if (d.status !== 'DELIVERED') problems.push(`status ${d.status}`);
        if (got < 1) problems.push('never reached the receiver');
        if (got > d.attemptCount)
          problems.push(`reached the receiver ${got} times in ${d.attemptCount} recorded tries`);
        // No crash and no lost answer here: no try follows a 2xx, so one event is accepted once.
        if (given.filter((s) => s === 200).length > 1)
          problems.push(`accepted ${given.filter((s) => s === 200).length} times`);
        const recorded = tries.get(d.id) ?? [];
        if (recorded.length !== d.attemptCount)
          problems.push(`${recorded.length} tries stored, attemptCount ${d.attemptCount}`);
        if (JSON.stringify(sorted(recorded.map(String))) !== JSON.stringify(sorted(given.map(String)))) {
          problems.push(`the receiver answered ${JSON.stringify(given)}, the log recorded ${JSON.stringify(recorded)}`);
        }
        return problems.length === 0 ? undefined : `${d.id} ${d.type}: ${problems.join('; ')}`;
      })
      .filter((x) => x !== undefined);
    expect(deliveryProblems).toEqual([]);
    const logged = new Set(log.map((d) => d.id));
    expect(receiver.hits.filter((h) => !logged.has(h.id)).map((h) => h.id)).toEqual([]);
    expect(receiver.hits.filter((h) => !h.signatureValid).map((h) => `${h.id} ${h.type}`)).toEqual([]);
    // Retries happened, and they were what brought the refused events in.
    const retried = log.filter((d) => d.attemptCount > 1);
    expect(retried.length).toBeGreaterThan(0);
    expect(receiver.hits.length).toBe(log.reduce((sum, d) => sum + d.attemptCount, 0));

    // Each webhook job ran to its end, one per delivery.
    const deliveryJobs = await query(`SELECT status, payload FROM jobs WHERE kind = 'webhook.deliver'`);
    expect(deliveryJobs.filter((j) => j.status !== 'DONE')).toEqual([]);
    const perDelivery = new Map<string, number>();
    for (const j of deliveryJobs) {
      const id = JSON.parse(j.payload).deliveryId as string;
      perDelivery.set(id, (perDelivery.get(id) ?? 0) + 1);
    }
    expect(
      log
        .filter((d) => d.type !== 'TEST' && perDelivery.get(d.id) !== 1)
        .map((d) => `${d.id} ${d.type} ${perDelivery.get(d.id)}`),
    ).toEqual([]);
  });
});
