// startRailyard (the package's entry, src/package/index.ts) in this process: two at once, each
// on its own port with its own platform, the helpers it returns driving the real endpoints, and
// close() leaving nothing listening. On PostgreSQL (DATABASE_URL) both share the database, as
// several instances of one server do.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RailyardError, type RailyardPlatform, startRailyard } from '../../src/package/index.js';
import { individualBody } from '../fixtures/customers.js';
import { databaseUrl } from '../helper.js';

const store = databaseUrl ?? 'memory';
/** A guard against a hung run, not a speed limit: starts, seeds and waits take longer on a busy machine. */
const TIMEOUT_MS = 120_000;

async function api(platform: RailyardPlatform, method: string, path: string, body?: unknown) {
  const reply = await fetch(`${platform.baseURL}${path}`, {
    method,
    headers: {
      authorization: `Basic ${Buffer.from(`${platform.clientId}:${platform.clientSecret}`).toString('base64')}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: reply.status, body: (await reply.json()) as any };
}

/** Whether anything still answers at origin. */
async function answers(origin: string): Promise<boolean> {
  try {
    await fetch(`${origin}/health`);
    return true;
  } catch {
    return false;
  }
}

describe('startRailyard', { timeout: TIMEOUT_MS }, () => {
  it('runs two servers in one process, each with its own platform, and close() stops each', async () => {
    const [one, two] = await Promise.all([startRailyard({ store }), startRailyard({ store })]);
    try {
      expect(one.origin).not.toBe(two.origin);
      expect(one.platformId).not.toBe(two.platformId);
      expect(one.baseURL).toBe(`${one.origin}/grid/2025-10-13`);

      // The first platform's credentials work against the Grid API; its data is its own.
      const customer = await api(one, 'POST', '/customers', individualBody('Ines Halvorsen'));
      expect(customer.status).toBe(201);
      expect((await api(one, 'GET', `/customers/${customer.body.id}`)).status).toBe(200);
      expect((await api(two, 'GET', `/customers/${customer.body.id}`)).status).toBe(404);

      // The journal kept the request, with the platform's token; the other's journal is empty.
      const journal = await one.requests.list({ operationId: 'createCustomer' });
      expect(journal.data).toHaveLength(1);
      expect(journal.data[0]).toMatchObject({ method: 'POST', status: 201, path: '/grid/2025-10-13/customers' });
      expect((await two.requests.list()).data.filter((r) => r.operationId === 'createCustomer')).toEqual([]);
      const report = await one.requests.report();
      expect(report.operations.find((o) => o.operationId === 'createCustomer')).toMatchObject({
        requests: 1,
        byStatus: { '201': 1 },
      });

      // A platform's clock moves alone.
      const before = await two.clock.read();
      const moved = await one.clock.advance(3_600);
      expect(moved.offsetSeconds).toBe(3_600);
      expect((await two.clock.read()).offsetSeconds).toBe(before.offsetSeconds);

      // Another platform on the same server: its own credentials and data.
      const third = await one.newPlatform({ name: 'Second suite' });
      expect(third.baseURL).toBe(one.baseURL);
      expect(third.platformId).not.toBe(one.platformId);
      expect((await api(third, 'GET', `/customers/${customer.body.id}`)).status).toBe(404);

      // Seed, then reset: the customer is gone, the credentials still work.
      const seeded = await third.seed({ size: 1 });
      const customers = (seeded.created.individuals ?? 0) + (seeded.created.businesses ?? 0);
      expect(customers).toBeGreaterThan(0);
      expect((await api(third, 'GET', '/customers?limit=100')).body.data.length).toBe(customers);
      await third.reset();
      expect((await api(third, 'GET', '/customers')).body.data).toEqual([]);

      // An answer outside 2xx rejects with the envelope's status and code.
      const refused = await one.requests.get('Request:nothing-here').catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(RailyardError);
      expect(refused).toMatchObject({ status: 404 });
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
    expect(await answers(one.origin)).toBe(false);
    expect(await answers(two.origin)).toBe(false);
    // close() again is the same close.
    await one.close();
  });

  it('events.waitFor holds until the event is recorded, and rejects at its timeout', async () => {
    const railyard = await startRailyard({ store });
    try {
      const customer = await api(railyard, 'POST', '/customers', individualBody('Kai Lindqvist'));
      const event = await railyard.events.waitFor({ resourceId: customer.body.id }, { timeoutMs: 20_000 });
      expect(event.resourceId).toBe(customer.body.id);
      // The next event for it, after that one: none comes, so the wait times out.
      const late = await railyard.events
        .waitFor({ resourceId: customer.body.id, after: event.id }, { timeoutMs: 1_200 })
        .catch((err: unknown) => err);
      expect(late).toBeInstanceOf(RailyardError);
      expect(late).toMatchObject({ code: 'TIMEOUT' });
      // One that comes while waiting: a second customer's events are followed after the first's.
      const waiting = railyard.events.waitFor({ after: event.id, type: event.type }, { timeoutMs: 20_000 });
      const second = await api(railyard, 'POST', '/customers', individualBody('Noor Haddad'));
      expect((await waiting).resourceId).toBe(second.body.id);
    } finally {
      await railyard.close();
    }
  });

  it('keeps its data in a directory across a close and a new start', async () => {
    if (store !== 'memory') return;
    const dir = mkdtempSync(join(tmpdir(), 'railyard-package-'));
    try {
      const first = await startRailyard({ store: dir });
      const customer = await api(first, 'POST', '/customers', individualBody('Mateo Ruiz'));
      await first.close();
      const again = await startRailyard({ store: dir });
      try {
        // Each start makes a new first platform; the earlier one and its data are still there.
        expect(again.platformId).not.toBe(first.platformId);
        const earlier = { ...again, clientId: first.clientId, clientSecret: first.clientSecret };
        expect((await api(earlier, 'GET', `/customers/${customer.body.id}`)).status).toBe(200);
      } finally {
        await again.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses options it cannot use, naming the option', async () => {
    await expect(startRailyard({ adminToken: 'short' })).rejects.toThrow(/^startRailyard: adminToken/);
    await expect(startRailyard({ journalSize: -1 })).rejects.toThrow(/^startRailyard: journalSize/);
    const slow = 'slow' as 'hosted';
    await expect(startRailyard({ settlementTiming: slow })).rejects.toThrow(/^startRailyard: settlementTiming/);
    await expect(startRailyard({ platform: { settlementTiming: slow } })).rejects.toThrow(
      /^startRailyard: platform\.settlementTiming/,
    );
  });

  it('settles payouts hosted by default; the server and each platform can choose instant', async () => {
    const timing = async (platform: RailyardPlatform) =>
      (
        await fetch(`${platform.baseURL.replace(/\/grid\/.*$/, '')}/_railyard/platform`, {
          headers: {
            authorization: `Basic ${Buffer.from(`${platform.clientId}:${platform.clientSecret}`).toString('base64')}`,
          },
        }).then((reply) => reply.json())
      ).settlementTiming;
    const [plain, chosen] = await Promise.all([
      startRailyard({ store, platform: { settlementTiming: 'instant' } }),
      startRailyard({ store, settlementTiming: 'instant' }),
    ]);
    try {
      expect(await timing(plain)).toBe('instant');
      expect(await timing(await plain.newPlatform())).toBe('hosted');
      expect(await timing(await plain.newPlatform({ settlementTiming: 'instant' }))).toBe('instant');
      expect(await timing(chosen)).toBe('instant');
      expect(await timing(await chosen.newPlatform())).toBe('instant');
      expect(await timing(await chosen.newPlatform({ settlementTiming: 'hosted' }))).toBe('hosted');
    } finally {
      await Promise.all([plain.close(), chosen.close()]);
    }
  });
});
