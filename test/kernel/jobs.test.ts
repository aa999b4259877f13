// The durable job queue: due by the platform's clock, run once, retried, durable.

import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Tx } from '../../src/db/index.js';
import { defineJob, markDone } from '../../src/jobs/queue.js';
import { LEASE_RENEW_MS } from '../../src/jobs/runner.js';
import { recordEvent } from '../../src/events/outbox.js';
import { platformNowOf } from '../../src/modules/platform/service.js';
import { build, databaseUrl, type TestApp } from '../helper.js';

// Test job kinds: their effect is an event row, easy to count.
const touch = defineJob<{ label: string }>('test.touch', {
  mode: 'transaction',
  async run(tx, job, ctx) {
    await recordEvent(tx, {
      platformId: job.platformId,
      type: 'TEST',
      resourceId: job.payload.label,
      data: { at: ctx.now.toISOString() },
      now: ctx.now,
    });
  },
});

let failuresLeft = 0;
const flaky = defineJob<{ label: string }>('test.flaky', {
  mode: 'transaction',
  attemptsMax: 3,
  retryDelayMs: (attempt) => attempt * 10_000,
  async run(tx, job, ctx) {
    await recordEvent(tx, {
      platformId: job.platformId,
      type: 'TEST',
      resourceId: `${job.payload.label}-partial`,
      data: {},
      now: ctx.now,
    });
    if (failuresLeft > 0) {
      failuresLeft--;
      throw new Error('receiver unavailable');
    }
    await recordEvent(tx, {
      platformId: job.platformId,
      type: 'TEST',
      resourceId: job.payload.label,
      data: {},
      now: ctx.now,
    });
  },
});

const outside: string[] = [];
const external = defineJob<{ label: string }>('test.external', {
  mode: 'external',
  leaseMs: 60_000,
  async run(job) {
    outside.push(job.payload.label);
  },
});

async function schedule(t: TestApp, job: typeof touch, label: string, inSeconds: number, platformId = t.platformId) {
  const now = await platformNowOf(t.deps, platformId);
  await t.deps.db.transaction((tx) =>
    job.schedule(tx, { platformId, payload: { label }, dueAt: new Date(now.getTime() + inSeconds * 1000), now }),
  );
}

async function effects(t: TestApp, label: string): Promise<number> {
  const rows = await t.deps.db.k.selectFrom('events').select('id').where('resource_id', '=', label).execute();
  return rows.length;
}

describe('jobs', () => {
  it('run when the platform clock reaches their due time, once', async () => {
    const t = await build();
    await schedule(t, touch, 'in-30s', 30);
    expect(await t.runDueJobs()).toBe(0);
    expect((await t.advanceClock(29)).jobsRun).toBe(0);
    expect(await effects(t, 'in-30s')).toBe(0);
    const advanced = await t.advanceClock(2);
    expect(advanced.jobsRun).toBe(1);
    expect(await effects(t, 'in-30s')).toBe(1);
    await t.advanceClock(3600);
    expect(await t.runDueJobs()).toBe(0);
    expect(await effects(t, 'in-30s')).toBe(1);
  });

  it('follow each platform clock separately', async () => {
    const t = await build();
    const other = await t.newPlatform();
    await schedule(t, touch, 'mine', 60);
    await schedule(t, touch, 'theirs', 60, other.platformId);
    await t.advanceClock(61);
    expect(await effects(t, 'mine')).toBe(1);
    expect(await effects(t, 'theirs')).toBe(0);
  });

  it('run once when several runners race for them', async () => {
    const t = await build();
    for (let i = 0; i < 20; i++) await schedule(t, touch, `race-${i}`, 0);
    const counts = await Promise.all([t.runDueJobs(), t.runDueJobs(), t.runDueJobs(), t.runDueJobs()]);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(20);
    for (let i = 0; i < 20; i++) expect(await effects(t, `race-${i}`)).toBe(1);
  });

  it('roll back a failed attempt, retry after the delay, and give up after the last attempt', async () => {
    const t = await build();
    failuresLeft = 1;
    await schedule(t, flaky, 'flaky-ok', 0);
    expect(await t.runDueJobs()).toBe(1);
    expect(await effects(t, 'flaky-ok-partial')).toBe(0); // the failed attempt left nothing
    expect(await effects(t, 'flaky-ok')).toBe(0);
    await t.advanceClock(9);
    expect(await effects(t, 'flaky-ok')).toBe(0);
    await t.advanceClock(2);
    expect(await effects(t, 'flaky-ok')).toBe(1);

    failuresLeft = 10;
    await schedule(t, flaky, 'flaky-never', 0);
    await t.runDueJobs();
    await t.advanceClock(10);
    await t.advanceClock(20);
    const row = await t.deps.db.k
      .selectFrom('jobs')
      .selectAll()
      .where('kind', '=', 'test.flaky')
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
    expect(row).toMatchObject({ status: 'FAILED', attempts: 3, last_error: 'receiver unavailable' });
    await t.advanceClock(3600);
    expect(await effects(t, 'flaky-never')).toBe(0);
    failuresLeft = 0;
  });

  it('run external work outside a transaction and mark it done', async () => {
    const t = await build();
    await schedule(t, external as unknown as typeof touch, 'network-call', 5);
    await t.advanceClock(5);
    expect(outside).toContain('network-call');
    const row = await t.deps.db.k.selectFrom('jobs').selectAll().where('kind', '=', 'test.external').executeTakeFirst();
    expect(row?.status).toBe('DONE');
  });

  it('run in the background when the runner is started, and stop cleanly', async () => {
    const t = await build();
    t.deps.jobs!.start();
    await schedule(t, touch, 'background', 0);
    t.deps.jobs!.wake();
    for (let i = 0; i < 100 && (await effects(t, 'background')) === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await effects(t, 'background')).toBe(1);
    await t.deps.jobs!.stop();
  });
});

async function jobOf(t: TestApp, label: string): Promise<{ id: string; status: string; locked_by: string | null }> {
  const rows = await t.deps.db.k
    .selectFrom('jobs')
    .select(['id', 'status', 'locked_by', 'payload'])
    .where('platform_id', '=', t.platformId)
    .execute();
  const row = rows.find((r) => JSON.parse(r.payload).label === label);
  if (row === undefined) throw new Error(`no job ${label}`);
  return { id: row.id, status: row.status, locked_by: row.locked_by };
}

/** Marks a job RUNNING under another instance's lease, as that instance's claim of an external job does. */
async function leaseElsewhere(t: TestApp, label: string, leaseMs: number): Promise<string> {
  const { id } = await jobOf(t, label);
  await t.deps.db.k
    .updateTable('jobs')
    .set({ status: 'RUNNING', locked_by: 'instance-b', locked_until_ms: t.deps.clock.nowMs() + leaseMs })
    .where('id', '=', id)
    .execute();
  return id;
}

/**
 * Another instance's claim of a transactional job: a transaction holding the job's row for
 * `holdMs`, then doing `then` (running it) before it commits. Resolves once the row is held,
 * with the promise of that transaction.
 */
async function claimElsewhere(
  t: TestApp,
  label: string,
  holdMs: number,
  then?: (tx: Tx, id: string) => Promise<void>,
): Promise<{ done: Promise<void> }> {
  const { id } = await jobOf(t, label);
  let claimed!: () => void;
  const claim = new Promise<void>((resolve) => (claimed = resolve));
  const done = t.deps.db.transaction(async (tx) => {
    await sql`SELECT id FROM jobs WHERE id = ${id} FOR UPDATE`.execute(tx);
    claimed();
    await sleep(holdMs);
    await then?.(tx, id);
  });
  await claim;
  return { done };
}

// Another instance is played at the database: a transaction that holds a job's row while it
// runs the job (as a claim of a transactional job does), or a job RUNNING under its lease.
describe.skipIf(!databaseUrl)('POST /_railyard/clock/advance with another instance on the store', () => {
  it('waits for a due job another instance claimed and is running', async () => {
    const t = await build();
    await schedule(t, touch, 'claimed-elsewhere', 30);
    const elsewhere = await claimElsewhere(t, 'claimed-elsewhere', 300, async (tx, id) => {
      const now = await platformNowOf(t.deps, t.platformId, tx);
      await recordEvent(tx, { platformId: t.platformId, type: 'TEST', resourceId: 'claimed-elsewhere', data: {}, now });
      await markDone(tx, id, now);
    });
    const advanced = await t.advanceClock(31);
    // The other instance ran it; this one waited for its commit.
    expect(advanced.jobsRun).toBe(0);
    expect(await effects(t, 'claimed-elsewhere')).toBe(1);
    expect((await jobOf(t, 'claimed-elsewhere')).status).toBe('DONE');
    await elsewhere.done;
  });

  it("does not wait for network work (an external job) running under another instance's lease", async () => {
    const t = await build();
    await schedule(t, external as unknown as typeof touch, 'leased-elsewhere', 30);
    const id = await leaseElsewhere(t, 'leased-elsewhere', 60_000);
    const started = performance.now();
    const advanced = await t.advanceClock(31);
    // It did not wait for the other instance's lease (60 s), nor for the longest wait (10 s).
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(advanced.jobsRun).toBe(0);
    // Still the other instance's, which goes on with it.
    expect(await jobOf(t, 'leased-elsewhere')).toMatchObject({ status: 'RUNNING', locked_by: 'instance-b' });
    expect(outside).not.toContain('leased-elsewhere');
    await t.deps.db.k
      .updateTable('jobs')
      .set({ status: 'DONE', locked_by: null, locked_until_ms: null })
      .where('id', '=', id)
      .execute();
  });

  it('takes over a due job whose lease lapsed with the instance that held it', async () => {
    const t = await build();
    await schedule(t, external as unknown as typeof touch, 'lease-lapsed', 30);
    await leaseElsewhere(t, 'lease-lapsed', -1);
    const advanced = await t.advanceClock(31);
    expect(advanced.jobsRun).toBe(1);
    expect(outside).toContain('lease-lapsed');
    expect(await jobOf(t, 'lease-lapsed')).toMatchObject({ status: 'DONE', locked_by: null });
  });

  it('answers after the maximum wait when another instance holds a due change longer', async () => {
    const t = await build();
    await schedule(t, touch, 'held-long', 0);
    const elsewhere = await claimElsewhere(t, 'held-long', 5_000);
    const dueBy = (await platformNowOf(t.deps, t.platformId)).getTime();
    const started = performance.now();
    expect(await t.deps.jobs!.runDueEverywhere(t.platformId, dueBy, 200)).toBe(0);
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(200);
    // It gave up at its own limit, well before the other instance let go.
    expect(waited).toBeLessThan(5_000);
    expect((await jobOf(t, 'held-long')).status).toBe('PENDING');
    await elsewhere.done;
  });
});

// An external job that runs until the test lets it finish.
let finishSlow: (() => void) | undefined;
const slow = defineJob<{ label: string }>('test.slow-external', {
  mode: 'external',
  leaseMs: 15_000,
  async run() {
    await new Promise<void>((resolve) => (finishSlow = resolve));
  },
});

describe('leases of external jobs', () => {
  it('are renewed while the job runs, so a long try keeps its claim', async () => {
    const t = await build();
    await schedule(t, slow as unknown as typeof touch, 'long-try', 0);
    const running = t.runDueJobs();
    const leaseEnd = async () =>
      Number(
        (
          await t.deps.db.k
            .selectFrom('jobs')
            .select('locked_until_ms')
            .where('kind', '=', 'test.slow-external')
            .executeTakeFirstOrThrow()
        ).locked_until_ms,
      );
    for (let i = 0; i < 200 && finishSlow === undefined; i++) await sleep(10);
    expect((await jobOf(t, 'long-try')).status).toBe('RUNNING');
    const first = await leaseEnd();
    await sleep(LEASE_RENEW_MS + 1_000);
    // Still running, and its lease now ends later than it did: renewed, not left to lapse.
    expect(await leaseEnd()).toBeGreaterThan(first);
    finishSlow!();
    await running;
    expect(await jobOf(t, 'long-try')).toMatchObject({ status: 'DONE', locked_by: null });
  });

  it.skipIf(databaseUrl)(
    'on the embedded store, a job a dead process left RUNNING is due again when the runner starts',
    async () => {
      const t = await build();
      await schedule(t, external as unknown as typeof touch, 'left-running', 30);
      // The previous process claimed it for a minute, then died (its store is this one).
      await leaseElsewhere(t, 'left-running', 60_000);
      await t.deps.jobs!.start();
      expect(await jobOf(t, 'left-running')).toMatchObject({ status: 'PENDING', locked_by: null });
      // Due 30 s from now by the sandbox clock: the advance runs it (or the started runner's
      // poll does, once the clock has moved; either way once).
      await t.advanceClock(31);
      for (let i = 0; i < 200 && (await jobOf(t, 'left-running')).status !== 'DONE'; i++) await sleep(10);
      await t.deps.jobs!.stop();
      expect(await jobOf(t, 'left-running')).toMatchObject({ status: 'DONE', locked_by: null });
      expect(outside.filter((label) => label === 'left-running')).toHaveLength(1);
    },
  );
});
