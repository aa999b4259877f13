// Webhooks of one resource reach the receiver in the order of its events: the next one is sent
// only once the receiver has answered the one before, while other resources' go side by side.
// The receiver here takes its time over each payment's first event, so a sender that did not
// keep the order would deliver the payment's COMPLETED while its PROCESSING still waits.

import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { externalAccount, fundedUsd, transferOut } from '../fixtures/money.js';
import type { Queryable } from '../../src/db/index.js';
import type { JobRunner } from '../../src/jobs/runner.js';
import { build, databaseUrl } from '../helper.js';

interface Arrival {
  type: string;
  resourceId: string;
  arrivedMs: number;
  answeredMs?: number;
}

const servers: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A receiver that answers every PROCESSING event after `slowMs`, everything else at once. */
async function slowFirstReceiver(slowMs: number) {
  const arrivals: Arrival[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const arrival: Arrival = {
        type: event.type,
        resourceId: event.data?.id ?? '',
        arrivedMs: performance.now(),
      };
      arrivals.push(arrival);
      const answer = () => {
        arrival.answeredMs = performance.now();
        response.writeHead(200).end();
      };
      if (event.type === 'OUTGOING_PAYMENT.PROCESSING') setTimeout(answer, slowMs);
      else answer();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, arrivals };
}

describe('webhook delivery order', () => {
  it("sends each payment's events in order, the next after the answer to the one before, payments side by side", async () => {
    const t = await build();
    const receiver = await slowFirstReceiver(150);
    expect((await t.api('PATCH', '/config', { body: { webhookEndpoint: receiver.url } })).status).toBe(200);
    const source = await fundedUsd(t, 1_000_000);
    const destination = await externalAccount(t, 'USD_ACCOUNT');
    const payments = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        transferOut(t, source.id, destination.id, 100 + i, { 'idempotency-key': `order-${i}` }),
      ),
    );
    for (const reply of payments) expect(reply.status, reply.text).toBe(201);
    const ids = payments.map((reply) => reply.body.id as string);
    const deadline = Date.now() + 15_000;
    const done = () =>
      ids.every((id) => receiver.arrivals.some((a) => a.resourceId === id && a.type === 'OUTGOING_PAYMENT.COMPLETED'));
    // The test app has no background runner: its due jobs (the deliveries) run when asked.
    while (!done() && Date.now() < deadline) await t.runDueJobs();
    expect(done(), JSON.stringify(receiver.arrivals.map((a) => [a.type, a.resourceId]))).toBe(true);

    for (const id of ids) {
      const own = receiver.arrivals.filter((a) => a.resourceId === id);
      expect(own.map((a) => a.type)).toEqual(['OUTGOING_PAYMENT.PROCESSING', 'OUTGOING_PAYMENT.COMPLETED']);
      // COMPLETED left railyard only after PROCESSING had its (slow) answer.
      expect(own[1]!.arrivedMs).toBeGreaterThanOrEqual(own[0]!.answeredMs!);
    }
    // Different payments did not wait for each other: their PROCESSING events all arrived
    // before the first of them was answered.
    const processing = receiver.arrivals.filter((a) => a.type === 'OUTGOING_PAYMENT.PROCESSING');
    const firstAnswer = Math.min(...processing.map((a) => a.answeredMs!));
    expect(processing.filter((a) => a.arrivedMs < firstAnswer).length).toBeGreaterThan(1);
  });
});

describe('webhook delivery under concurrent sending', () => {
  it("keeps each resource's order, logs one successful try per event, and ends every job", async () => {
    const t = await build();
    const arrivals: { id: string; type: string; resourceId: string; balance?: number }[] = [];
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (event.type !== 'TEST')
          arrivals.push({
            id: event.id,
            type: event.type,
            resourceId: event.data?.id ?? '',
            balance: event.data?.balance?.amount,
          });
        response.writeHead(200).end();
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    const source = await fundedUsd(t, 1_000_000);
    const destination = await externalAccount(t, 'USD_ACCOUNT');
    expect((await t.api('PATCH', '/config', { body: { webhookEndpoint: url } })).status).toBe(200);
    // The background runner sends each try as its transaction commits, and records the tries
    // that finish together in one transaction.
    t.deps.jobs!.start();
    try {
      const count = 30;
      const payments = await Promise.all(
        Array.from({ length: count }, (_, i) =>
          transferOut(t, source.id, destination.id, 1_000 + i, { 'idempotency-key': `concurrent-${i}` }),
        ),
      );
      for (const reply of payments) expect(reply.status, reply.text).toBe(201);
      // The endpoint's TEST webhook, sent when it was set, aside.
      const logged = async () => {
        const body = (await t.raw('GET', '/_railyard/webhooks/deliveries?limit=100')).body;
        return { ...body, data: body.data.filter((d: any) => d.type !== 'TEST') };
      };
      const settled = (page: any) =>
        page.data.length >= count * 3 && page.data.every((d: any) => d.status === 'DELIVERED');
      const deadline = Date.now() + 15_000;
      let page = await logged();
      while (!settled(page) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        page = await logged();
      }
      expect(page.hasMore).toBe(false);
      expect(page.data).toHaveLength(count * 3);
      for (const d of page.data) expect(d, JSON.stringify(d)).toMatchObject({ status: 'DELIVERED', attemptCount: 1 });
      // Each event arrived once, and its one try is in the log.
      expect(new Set(arrivals.map((a) => a.id)).size).toBe(arrivals.length);
      expect(arrivals.map((a) => a.id).sort()).toEqual(page.data.map((d: any) => d.id).sort());
      for (const d of page.data.slice(0, 10)) {
        const detail = (await t.raw('GET', `/_railyard/webhooks/deliveries/${d.id}`)).body;
        expect(detail.attempts).toHaveLength(1);
        expect(detail.attempts[0]).toMatchObject({
          number: 1,
          trigger: 'EVENT',
          outcome: 'SUCCEEDED',
          responseStatus: 200,
        });
      }
      // The source account's balance events arrived in the order of the debits: each balance
      // is below the one before.
      const balances = arrivals
        .filter((a) => a.type === 'INTERNAL_ACCOUNT.BALANCE_UPDATED' && a.resourceId === source.id)
        .map((a) => a.balance!);
      expect(balances).toHaveLength(count);
      for (let i = 1; i < balances.length; i++) expect(balances[i]!).toBeLessThan(balances[i - 1]!);
      // Every delivery job ended.
      const open = await t.deps.db.k
        .selectFrom('jobs')
        .select('id')
        .where('kind', '=', 'webhook.deliver')
        .where('status', '!=', 'DONE')
        .execute();
      expect(open).toEqual([]);
    } finally {
      await t.deps.jobs!.stop();
    }
  });
});

/**
 * An app with a funded source account, an external account and a receiver that notes the
 * balances of the source's events, answering each try after `answerAfterMs`.
 */
async function balanceWatch(answerAfterMs = 0) {
  const t = await build();
  const balances: number[] = [];
  let sourceId = '';
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (event.type === 'INTERNAL_ACCOUNT.BALANCE_UPDATED' && event.data?.id === sourceId)
        balances.push(event.data.balance.amount);
      setTimeout(() => response.writeHead(200).end(), answerAfterMs);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const source = await fundedUsd(t, 1_000_000);
  sourceId = source.id;
  const destination = await externalAccount(t, 'USD_ACCOUNT');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  expect((await t.api('PATCH', '/config', { body: { webhookEndpoint: url } })).status).toBe(200);
  const arrived = async (count: number) => {
    const deadline = Date.now() + 15_000;
    while (balances.length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  };
  return { t, balances, source, destination, arrived };
}

describe('webhook delivery past the bound of sends in flight', () => {
  it("keeps each resource's order when later deliveries wait for a claim", async () => {
    // Each try is answered after a few milliseconds, so the sends in flight pile up.
    const { t, balances, source, destination, arrived } = await balanceWatch(10);
    // Deps names the runner by what the server calls on it; the bound is the class's own.
    const runner = t.deps.jobs as JobRunner;
    // Three deliveries a transfer, at most two handed over at once: most wait for a claim.
    runner.adoptedInFlightMax = 2;
    runner.start();
    try {
      // One transfer after another: deliveries are scheduled while earlier ones still run,
      // some handed over at once and some left for a claim.
      const count = 40;
      for (let i = 0; i < count; i++) {
        const reply = await transferOut(t, source.id, destination.id, 1_000 + i, { 'idempotency-key': `bound-${i}` });
        expect(reply.status, reply.text).toBe(201);
      }
      await arrived(count);
      // Every debit's balance event arrived once, in the order of the debits.
      expect(balances).toHaveLength(count);
      for (let i = 1; i < balances.length; i++) expect(balances[i]!).toBeLessThan(balances[i - 1]!);
    } finally {
      await runner.stop();
    }
  });

  it('claims a backlog in batches, not one claim per delivery that ends', async () => {
    const { t, balances, source, destination, arrived } = await balanceWatch(0);
    const runner = t.deps.jobs!;
    // The runner is not started: every delivery is left for a claim, and they pile up.
    const count = 60;
    for (let i = 0; i < count; i++) {
      const reply = await transferOut(t, source.id, destination.id, 1_000 + i, { 'idempotency-key': `backlog-${i}` });
      expect(reply.status, reply.text).toBe(201);
    }
    /** How many delivery jobs have a status `op` `status`. */
    const deliveries = async (q: Queryable, op: '=' | '!=', status: 'RUNNING' | 'DONE') =>
      Number(
        (
          await q
            .selectFrom('jobs')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('kind', '=', 'webhook.deliver')
            .where('status', op, status)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const due = await deliveries(t.deps.db.k, '!=', 'DONE');
    expect(due).toBeGreaterThanOrEqual(3 * count);
    // The transactions of the run that claimed deliveries: more of them running at their end
    // than at their start.
    const claims: number[] = [];
    const db = t.deps.db as { transaction: typeof t.deps.db.transaction };
    const transaction = db.transaction;
    db.transaction = (fn, options) =>
      transaction(async (tx) => {
        const before = await deliveries(tx, '=', 'RUNNING');
        const result = await fn(tx);
        const claimed = (await deliveries(tx, '=', 'RUNNING')) - before;
        if (claimed > 0) claims.push(claimed);
        return result;
      }, options);
    try {
      await runner.runDue();
    } finally {
      db.transaction = transaction;
    }
    await arrived(count);
    expect(balances).toHaveLength(count);
    for (let i = 1; i < balances.length; i++) expect(balances[i]!).toBeLessThan(balances[i - 1]!);
    // All of them in one claim (before: 31, then mostly one as each delivery ended).
    expect(claims).toEqual([due]);
  });
});

// On PostgreSQL, the order of two transactions that took the same row's lock one after the
// other is the order of their commits on the server; the order in which their commits are
// confirmed to railyard may differ, when the first one's server process is slow to answer.
// These tests step into the driver to make that happen on purpose.

const pg = createRequire(import.meta.url)('pg') as typeof import('pg');

/**
 * From now on, hands `onCommit` the COMMIT of each transaction that changed a ledger balance,
 * with the function that sends it. Answers the function that puts the driver back.
 */
function interceptBalanceCommits(onCommit: (send: () => Promise<unknown>) => Promise<unknown>): () => void {
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  const changedBalance = new WeakSet<object>();
  prototype.query = function (this: object, ...args: unknown[]) {
    const first = args[0] as string | { text?: string } | undefined;
    const text = typeof first === 'string' ? first : first?.text;
    if (typeof text === 'string') {
      if (/update "ledger_accounts"/i.test(text)) changedBalance.add(this);
      else if (/^\s*rollback\b/i.test(text)) changedBalance.delete(this);
      else if (/^\s*commit\b/i.test(text) && changedBalance.has(this)) {
        changedBalance.delete(this);
        return onCommit(() => original.apply(this, args) as Promise<unknown>);
      }
    }
    return original.apply(this, args);
  };
  return () => {
    prototype.query = original;
  };
}

describe.skipIf(databaseUrl === undefined)('webhook delivery when commits are confirmed out of order', () => {
  it("sends a resource's events in the order of its commits, not of their confirmations", async () => {
    const { t, balances, source, destination, arrived } = await balanceWatch();
    let committed!: () => void;
    const firstCommitted = new Promise<void>((resolve) => (committed = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    const restore = interceptBalanceCommits(async (send) => {
      if (held) return send();
      held = true;
      // The first debit commits on the server, and its confirmation is held back.
      const result = await send();
      committed();
      await released;
      return result;
    });
    t.deps.jobs!.start();
    try {
      const first = transferOut(t, source.id, destination.id, 1_000, { 'idempotency-key': 'held-1' });
      await firstCommitted;
      // The second debit takes the row after the first, and is confirmed first.
      const second = await transferOut(t, source.id, destination.id, 2_000, { 'idempotency-key': 'held-2' });
      expect(second.status, second.text).toBe(201);
      await new Promise((resolve) => setTimeout(resolve, 200));
      // Its balance event waits for the first one's.
      expect(balances).toEqual([]);
      release();
      expect((await first).status).toBe(201);
      await arrived(2);
      expect(balances).toEqual([999_000, 997_000]);
    } finally {
      release();
      restore();
      await t.deps.jobs!.stop();
    }
  });

  it('lets a transaction that rolled back give up its turn, and sends what its retry made', async () => {
    const { t, balances, source, destination, arrived } = await balanceWatch();
    let failed = false;
    const restore = interceptBalanceCommits(async (send) => {
      if (failed) return send();
      failed = true;
      // The first debit's COMMIT is never sent: it fails as a deadlock would, and is retried.
      throw Object.assign(new Error('deadlock detected (injected by the test)'), { code: '40P01' });
    });
    t.deps.jobs!.start();
    try {
      const first = await transferOut(t, source.id, destination.id, 1_000, { 'idempotency-key': 'retried-1' });
      expect(first.status, first.text).toBe(201);
      expect(failed).toBe(true);
      const second = await transferOut(t, source.id, destination.id, 2_000, { 'idempotency-key': 'retried-2' });
      expect(second.status, second.text).toBe(201);
      await arrived(2);
      expect(balances).toEqual([999_000, 997_000]);
    } finally {
      restore();
      await t.deps.jobs!.stop();
    }
  });
});
