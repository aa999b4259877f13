// Acknowledged writes survive a crash: the server process is killed (SIGKILL) in the middle
// of a stream of transfers, restarted on the same embedded store, and every transfer it had
// answered 2xx is there, the books balance, and pending 005 transfers still fail on schedule.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { accountBody } from '../fixtures/accounts.js';
import { startServer, type ServerProcess } from '../fixtures/server.js';

const servers: ServerProcess[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.kill('SIGKILL')));
});

const FUNDED = 10_000_000;
const WORKERS = 8;

describe('SIGKILL in the middle of a stream of transfers', () => {
  it('keeps every acknowledged transfer, a balanced ledger, and the pending timeline', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'railyard-crash-'));
    const first = await startServer({ DATA_DIR: dataDir });
    servers.push(first);
    const usd = (await first.request('GET', '/platform/internal-accounts?currency=USD')).body.data[0];
    expect((await first.request('POST', `/sandbox/internal-accounts/${usd.id}/fund`, { amount: FUNDED })).status).toBe(
      200,
    );
    const bank = (await first.request('POST', '/platform/external-accounts', accountBody('USD_ACCOUNT', '000'))).body;
    const slow = (await first.request('POST', '/platform/external-accounts', accountBody('USD_ACCOUNT', '005'))).body;
    const transfer = (destination: string, amount: number) => ({
      source: { accountId: usd.id },
      destination: { accountId: destination },
      amount,
    });

    const pending: { id: string; amount: number }[] = [];
    for (let i = 0; i < 5; i++) {
      const reply = await first.request('POST', '/transfer-out', transfer(slow.id, 1_000 + i));
      expect(reply.body.status).toBe('PROCESSING');
      pending.push({ id: reply.body.id, amount: 1_000 + i });
    }

    // The stream: each worker sends transfers one after another with its own keys until the
    // process dies; the kill comes once enough answers have arrived.
    const acknowledged = new Map<string, { id: string; amount: number }>();
    const unanswered = new Set<string>();
    let sent = 0;
    let killed = false;
    const worker = async (w: number) => {
      for (let i = 0; !killed; i++) {
        const key = `crash-${w}-${i}`;
        const amount = 100 + ((w * 31 + i) % 50);
        sent++;
        try {
          const reply = await first.request('POST', '/transfer-out', transfer(bank.id, amount), {
            'idempotency-key': key,
          });
          if (reply.status >= 200 && reply.status < 300) acknowledged.set(key, { id: reply.body.id, amount });
          else throw new Error(`unexpected ${reply.status}`);
        } catch {
          unanswered.add(key);
          return;
        }
      }
    };
    const stream = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
    while (acknowledged.size < 150) await new Promise((r) => setTimeout(r, 5));
    first.child.kill('SIGKILL');
    killed = true;
    await stream;
    await first.kill('SIGKILL');
    expect(sent).toBeGreaterThan(150);

    const second = await startServer({ DATA_DIR: dataDir });
    servers.push(second);
    for (const [key, { id, amount }] of acknowledged) {
      const tx = await second.request('GET', `/transactions/${id}`);
      expect(tx.status, key).toBe(200);
      expect(tx.body).toMatchObject({ status: 'COMPLETED', sentAmount: { amount } });
    }
    // A request whose answer was lost is retried with its key: the replay, or the first run.
    for (const key of unanswered) {
      const [, w, i] = key.split('-').map(Number);
      const amount = 100 + ((w! * 31 + i!) % 50);
      const retry = await second.request('POST', '/transfer-out', transfer(bank.id, amount), {
        'idempotency-key': key,
      });
      expect(retry.status).toBe(201);
      acknowledged.set(key, { id: retry.body.id, amount });
    }
    const completed = (await second.request('GET', `/transactions?status=COMPLETED&limit=1`)).body.totalCount;
    expect(completed).toBe(acknowledged.size);
    const paid = [...acknowledged.values()].reduce((sum, t) => sum + t.amount, 0);
    const held = pending.reduce((sum, t) => sum + t.amount, 0);
    const account = (await second.request('GET', '/platform/internal-accounts?currency=USD')).body.data[0];
    expect(account.balance.amount).toBe(FUNDED - paid - held);
    expect(account.totalBalance.amount).toBe(FUNDED - paid);
    expect((await second.request('GET', '/_railyard/ledger')).body.balanced).toBe(true);

    // The pending transfers' 30 s timeout survived the crash and runs on the advanced clock.
    for (const p of pending)
      expect((await second.request('GET', `/transactions/${p.id}`)).body.status).toBe('PROCESSING');
    const usdPostings = async () =>
      (await second.request('GET', '/_railyard/ledger')).body.currencies.find(
        (c: { currency: string }) => c.currency === 'USD',
      ).postings;
    const postingsBefore = await usdPostings();
    const advanced = await second.request('POST', '/_railyard/clock/advance', { seconds: 31 });
    // The five timeouts run before the advance answers, each once: by this call, or some by
    // the background poll that saw them due first, so jobsRun alone says little (any of 0 to
    // 5). What must hold at the answer: exactly five releases, one per pending transfer.
    expect(advanced.status).toBe(200);
    expect(advanced.body.jobsRun).toBeLessThanOrEqual(5);
    expect(await usdPostings()).toBe(postingsBefore + 5);
    for (const p of pending) {
      expect((await second.request('GET', `/transactions/${p.id}`)).body).toMatchObject({
        status: 'FAILED',
        failureReason: 'QUOTE_EXECUTION_FAILED',
      });
    }
    const after = (await second.request('GET', '/platform/internal-accounts?currency=USD')).body.data[0];
    expect(after.balance.amount).toBe(FUNDED - paid);
    expect(after.totalBalance.amount).toBe(FUNDED - paid);
    expect((await second.request('GET', '/_railyard/ledger')).body.balanced).toBe(true);
  });
});
