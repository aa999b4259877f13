// Restores while the platform is in use, with real concurrent requests: a request sees the
// platform of one snapshot or of the other, never a mixture (a list whose page and count come
// from two states, a balance of one and books of the other); payments made during restores
// answer as usual and leave the books balanced; and another platform's traffic goes on
// untouched throughout. On whichever store the suite runs on (DATABASE_URL for PostgreSQL).

import { describe, expect, it } from 'vitest';
import { createCustomer, individualBody } from '../fixtures/customers.js';
import { expectBalancedBooks, externalAccount, fund, platformAccount, transferOut } from '../fixtures/money.js';
import { basic, build, type Tenant } from '../helper.js';
import { rowsOf } from './support.js';

const RESTORES = 8;
const READERS = 4;

/** One read of each kind, as a JSON text per kind (equal texts, equal states). */
async function read(t: Tenant, source: string): Promise<Record<string, string>> {
  const [transactions, customers, accounts, ledger] = await Promise.all([
    t.api('GET', '/transactions?limit=100'),
    t.api('GET', '/customers?limit=100'),
    t.api('GET', '/platform/internal-accounts?currency=USD'),
    t.raw('GET', '/_railyard/ledger'),
  ]);
  for (const reply of [transactions, customers, accounts, ledger]) expect(reply.status, reply.text).toBe(200);
  return {
    transactions: JSON.stringify({
      total: transactions.body.totalCount,
      ids: transactions.body.data.map((x: any) => x.id),
    }),
    customers: JSON.stringify({ total: customers.body.totalCount, ids: customers.body.data.map((x: any) => x.id) }),
    balance: JSON.stringify(accounts.body.data.find((a: any) => a.id === source).balance),
    ledger: JSON.stringify(ledger.body),
  };
}

async function restore(t: Tenant, name: string): Promise<void> {
  const reply = await t.raw('POST', `/_railyard/snapshots/${name}/restore`);
  expect(reply.status, reply.text).toBe(200);
}

describe('restores under concurrent requests', () => {
  it('each request sees one snapshot or the other, payments during restores keep the books, other platforms go on', async () => {
    const t = await build();
    const source = (await platformAccount(t, 'USD')).id;
    await fund(t, source, 1_000_000);
    const bank = (await externalAccount(t, 'USD_ACCOUNT', '000')).id;
    for (let i = 0; i < 3; i++) expect((await transferOut(t, source, bank, 100 + i)).status).toBe(201);
    await createCustomer(t, individualBody('Alma First'));
    expect((await t.raw('POST', '/_railyard/snapshots', { body: { name: 'a' } })).status).toBe(201);
    const a = await read(t, source);
    for (let i = 0; i < 5; i++) expect((await transferOut(t, source, bank, 200 + i)).status).toBe(201);
    await createCustomer(t, individualBody('Bruno Second'));
    await createCustomer(t, individualBody('Clara Third'));
    expect((await t.raw('POST', '/_railyard/snapshots', { body: { name: 'b' } })).status).toBe(201);
    const b = await read(t, source);
    for (const kind of Object.keys(a)) expect(b[kind], kind).not.toBe(a[kind]);

    // Another platform pays on throughout.
    const other = await t.newPlatform();
    const otherSource = (await platformAccount(other, 'USD')).id;
    await fund(other, otherSource, 1_000_000);
    const otherBank = (await externalAccount(other, 'USD_ACCOUNT', '000')).id;
    let otherPaid = 0;
    let done = false;
    const otherPayer = (async () => {
      while (!done) {
        const reply = await transferOut(other, otherSource, otherBank, 1);
        expect(reply.status, reply.text).toBe(201);
        otherPaid++;
      }
    })();

    // Readers against restores that swap the two states.
    const seen = { a: 0, b: 0 };
    const mixtures: Record<string, string>[] = [];
    const readers = Array.from({ length: READERS }, async () => {
      while (!done) {
        const state = await read(t, source);
        for (const [kind, text] of Object.entries(state)) {
          if (text === a[kind]) seen.a++;
          else if (text === b[kind]) seen.b++;
          else mixtures.push({ kind, text });
        }
        // Within one request the page and its count come from one state.
        const page = JSON.parse(state.transactions!);
        if (page.total !== page.ids.length) mixtures.push({ kind: 'transactions count', text: state.transactions! });
      }
    });
    for (let i = 0; i < RESTORES; i++) await restore(t, i % 2 === 0 ? 'a' : 'b');
    done = true;
    await Promise.all([...readers, otherPayer]);
    expect(mixtures).toEqual([]);
    expect(seen.a).toBeGreaterThan(0);
    expect(seen.b).toBeGreaterThan(0);

    // Payments racing restores: each answers as a payment does; the books stay balanced.
    done = false;
    const statuses: number[] = [];
    const payers = Array.from({ length: READERS }, async (_, n) => {
      for (let i = 0; !done; i++) {
        const reply = await transferOut(t, source, bank, 1, { 'idempotency-key': `race-${n}-${i}` });
        statuses.push(reply.status);
      }
    });
    const otherBefore = otherPaid;
    const otherPayer2 = (async () => {
      while (!done) {
        expect((await transferOut(other, otherSource, otherBank, 1)).status).toBe(201);
        otherPaid++;
      }
    })();
    for (let i = 0; i < RESTORES / 2; i++) {
      await restore(t, 'a');
      await expectBalancedBooks(t);
    }
    done = true;
    await Promise.all([...payers, otherPayer2]);
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status !== 201)).toEqual([]);
    expect(otherPaid).toBeGreaterThan(otherBefore);

    // Back to a once more, at rest: exactly a, and the other platform's payments all there.
    await restore(t, 'a');
    expect(await read(t, source)).toEqual(a);
    const otherTotal = (await other.api('GET', '/transactions?limit=1')).body.totalCount;
    expect(otherTotal).toBe(otherPaid);
    await expectBalancedBooks(other);
    expect((await rowsOf(t, other.platformId)).transactions).toHaveLength(otherPaid);
  }, 180_000);
});

describe('the platform gate and a client that leaves', () => {
  it('does not count a request whose client left while it waited for a restore to end', async () => {
    const t = await build();
    const origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const gate = t.deps.gate!;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const exclusive = gate.exclusive(t.platformId, undefined, undefined, () => held);

    // A request of the platform arrives at the closed gate; its client gives up.
    const controller = new AbortController();
    const left = fetch(`${origin}/grid/2025-10-13/customers`, {
      headers: { authorization: basic(t.clientId, t.clientSecret) },
      signal: controller.signal,
    }).catch((err: Error) => err.name);
    await expect.poll(() => gate.state(t.platformId).arrived, { timeout: 15_000 }).toBe(1);
    controller.abort();
    expect(await left).toBe('AbortError');
    // Its socket is closed on the server's side before the gate opens.
    await new Promise((resolve) => setTimeout(resolve, 200));
    release();
    await exclusive;

    // Admitted once the gate opened, it is not left counted as running.
    await expect.poll(() => gate.state(t.platformId).running, { timeout: 15_000 }).toBe(0);
    const reply = await fetch(`${origin}/grid/2025-10-13/customers`, {
      headers: { authorization: basic(t.clientId, t.clientSecret) },
    });
    expect(reply.status).toBe(200);
    expect(gate.state(t.platformId).running).toBe(0);
  });
});
