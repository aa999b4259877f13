// The background job runner sleeps until the next job falls due or new work is committed
// (src/jobs/runner.ts): no look at the store while nothing is due, a timer set to the next due
// time, a clock advance that brings work forward, and on PostgreSQL a notification from
// another instance (src/db/notify.ts). Outcomes, not speeds: what ran, and which statements
// the store received while the runner slept.

import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { dropPgSchema } from '../../src/db/index.js';
import { recordEvent } from '../../src/events/outbox.js';
import type { Deps } from '../../src/http/deps.js';
import { defineJob } from '../../src/jobs/queue.js';
import { JOB_SAFETY_POLL_MS, type JobRunner } from '../../src/jobs/runner.js';
import { createPlatform, platformNowOf } from '../../src/modules/platform/service.js';
import { startInstance } from '../events/support.js';
import { watchStatements } from '../fixtures/statements.js';
import { build, databaseUrl, type TestApp } from '../helper.js';
import { until as waitUntil } from '../fixtures/until.js';

// The effect of a test job is an event about its label, easy to look for.
const mark = defineJob<{ label: string }>('test.wakeup-mark', {
  mode: 'transaction',
  async run(tx, job, ctx) {
    await recordEvent(tx, {
      platformId: job.platformId,
      type: 'TEST',
      resourceId: job.payload.label,
      data: {},
      now: ctx.now,
    });
  },
});

/** Long enough that a test's outcome cannot come from the runner's safety look on PostgreSQL. */
const NO_SAFETY_LOOK_MS = 3 * 3_600_000;
/** A generous real-time bound for what must happen: the machine may be loaded. */
const DEADLINE_MS = 20_000;

async function schedule(deps: Deps, platformId: string, label: string, inMs: number): Promise<void> {
  const now = await platformNowOf(deps, platformId);
  await deps.db.transaction((tx) =>
    mark.schedule(tx, { platformId, payload: { label }, dueAt: new Date(now.getTime() + inMs), now }),
  );
}

async function ran(deps: Deps, label: string): Promise<boolean> {
  const row = await deps.db.k.selectFrom('events').select('id').where('resource_id', '=', label).executeTakeFirst();
  return row !== undefined;
}

const until = (what: string, check: () => boolean | Promise<boolean>, timeoutMs = DEADLINE_MS) =>
  waitUntil(what, check, timeoutMs, 10);

/** Starts the runner and waits until it has run what was due and sleeps. */
async function startedAndAsleep(t: TestApp): Promise<void> {
  await (t.deps.jobs as JobRunner).start();
  await until('the runner to sleep', () => (t.deps.jobs as JobRunner).asleep);
}

describe('the background job runner', () => {
  it('sends the store no statement while nothing is due', { timeout: 60_000 }, async () => {
    const t = await build();
    const runner = t.deps.jobs as JobRunner;
    try {
      await schedule(t.deps, t.platformId, 'before-idle', 0);
      await startedAndAsleep(t);
      expect(await ran(t.deps, 'before-idle')).toBe(true);
      // The count works: a read made while counting is seen.
      const probe = watchStatements();
      await t.deps.db.k.selectFrom('jobs').select('id').execute();
      probe.stop();
      expect(probe.texts.some((text) => text.includes('from "jobs"'))).toBe(true);
      // Nothing is due: on the embedded store the runner sleeps until woken; on PostgreSQL
      // until its safety look, JOB_SAFETY_POLL_MS after it fell asleep. The window ends before.
      let windowMs = 0;
      for (let tries = 0; windowMs < 1_000; tries++) {
        // A machine that stalled past most of the sleep: the next one, after the safety look.
        if (tries > 0) await until('the safety look to end', () => !runner.asleep);
        if (tries > 3) throw new Error('the runner never slept long enough to watch it');
        await until('the runner to sleep', () => runner.asleep);
        const wakeMs = runner.sleepingUntilMs;
        if (databaseUrl === undefined) expect(wakeMs).toBeUndefined();
        else expect(wakeMs).toBeLessThanOrEqual(systemClock.nowMs() + JOB_SAFETY_POLL_MS);
        windowMs = Math.min(3_000, (wakeMs ?? Number.POSITIVE_INFINITY) - systemClock.nowMs() - 500);
      }
      const watch = watchStatements();
      await sleep(windowMs);
      watch.stop();
      expect(watch.texts).toEqual([]);
      // Still asleep, and still able to work: new work wakes it.
      await schedule(t.deps, t.platformId, 'after-idle', 0);
      await until('the job after the idle time to run', () => ran(t.deps, 'after-idle'));
    } finally {
      await runner.stop();
    }
  });

  it('runs a job at its due time, set as a timer when the job commits', { timeout: 60_000 }, async () => {
    const t = await build();
    const runner = t.deps.jobs as JobRunner;
    runner.safetyPollMs = NO_SAFETY_LOOK_MS;
    try {
      await startedAndAsleep(t);
      const dueWallMs = systemClock.nowMs() + 1_500;
      await schedule(t.deps, t.platformId, 'in-1.5s', 1_500);
      // The commit set the sleep's end to the job's due time: no look before it.
      expect(runner.sleepingUntilMs).toBeDefined();
      expect(runner.sleepingUntilMs!).toBeLessThanOrEqual(dueWallMs + 100);
      expect(await ran(t.deps, 'in-1.5s')).toBe(false);
      await until('the job to run at its due time', () => ran(t.deps, 'in-1.5s'));
    } finally {
      await runner.stop();
    }
  });

  it('wakes when a clock advance brings a job forward, without running it early', { timeout: 60_000 }, async () => {
    const t = await build();
    const runner = t.deps.jobs as JobRunner;
    runner.safetyPollMs = NO_SAFETY_LOOK_MS;
    try {
      const dueMs = (await platformNowOf(t.deps, t.platformId)).getTime() + 3_600_000;
      await schedule(t.deps, t.platformId, 'in-an-hour', 3_600_000);
      await startedAndAsleep(t);
      expect(runner.sleepingUntilMs!).toBeGreaterThan(systemClock.nowMs() + 3_000_000);
      // To five seconds before it is due: the advance runs nothing ...
      const leftMs = dueMs - (await platformNowOf(t.deps, t.platformId)).getTime();
      expect((await t.advanceClock((leftMs - 5_000) / 1000)).jobsRun).toBe(0);
      expect(await ran(t.deps, 'in-an-hour')).toBe(false);
      // ... but the runner now sleeps until then, not for an hour: it runs the job long before
      // its first timer would have fired.
      await until('the runner to sleep again', () => runner.asleep && runner.sleepingUntilMs !== undefined);
      expect(runner.sleepingUntilMs!).toBeLessThan(systemClock.nowMs() + 60_000);
      await until('the job brought forward to run', () => ran(t.deps, 'in-an-hour'));
    } finally {
      await runner.stop();
    }
  });
});

describe.skipIf(!databaseUrl)('the background job runner on PostgreSQL, at its safety looks', () => {
  it('reads the next due time alone while nothing is due, and runs work nobody announced', {
    timeout: 60_000,
  }, async () => {
    const t = await build();
    const runner = t.deps.jobs as JobRunner;
    runner.safetyPollMs = 300;
    try {
      // Announced, due in an hour: the runner's own timer is far off, its safety looks are not.
      await schedule(t.deps, t.platformId, 'unannounced', 3_600_000);
      await startedAndAsleep(t);
      const watch = watchStatements();
      const finishedBefore = runner.jobsFinished;
      await sleep(1_500);
      watch.stop();
      // Several looks, each one statement: the read of the next due time, no claim.
      expect(watch.texts.length).toBeGreaterThanOrEqual(2);
      for (const text of watch.texts) expect(text).toContain('clock_offset_ms');
      expect(watch.texts.some((text) => /^begin/i.test(text))).toBe(false);
      expect(runner.jobsFinished).toBe(finishedBefore);
      // Made due now behind the runner's back (no notification): the next safety look finds it.
      await t.deps.db.k
        .updateTable('jobs')
        .set({ due_at_ms: 0 })
        .where('kind', '=', 'test.wakeup-mark')
        .where('platform_id', '=', t.platformId)
        .execute();
      await until('the unannounced job to run', () => ran(t.deps, 'unannounced'));
    } finally {
      await runner.stop();
    }
  });
});

describe.skipIf(!databaseUrl)('the background job runner of another instance on the same PostgreSQL', () => {
  it('runs a job this instance committed, woken by a notification, not a look', { timeout: 90_000 }, async () => {
    const pgSchema = `t_wake_${process.pid}_${Date.now() % 100_000}`;
    const runnerSide = await startInstance({ clock: systemClock, pgSchema });
    const committing = await startInstance({ clock: systemClock, pgSchema });
    const runner = runnerSide.deps.jobs as JobRunner;
    runner.safetyPollMs = NO_SAFETY_LOOK_MS;
    try {
      const { platformId } = await createPlatform(committing.deps, { name: 'Wake', counterpartyRules: false });
      await runner.start();
      await until('the runner to sleep', () => runner.asleep);
      // Due now, committed by the other instance, whose runner does not work in the background.
      await schedule(committing.deps, platformId, 'due-now-elsewhere', 0);
      const committedAtMs = systemClock.nowMs();
      await until('the job committed elsewhere to run', () => ran(runnerSide.deps, 'due-now-elsewhere'));
      // Due in a second: the notification moves the runner's timer.
      await until('the runner to sleep', () => runner.asleep);
      await schedule(committing.deps, platformId, 'due-soon-elsewhere', 1_000);
      await until(
        'the timer to move',
        () => (runner.sleepingUntilMs ?? Number.POSITIVE_INFINITY) < systemClock.nowMs() + 60_000,
      );
      await until('the later job committed elsewhere to run', () => ran(runnerSide.deps, 'due-soon-elsewhere'));
      // Who ran them: the runner's instance (the committing one runs nothing in the background).
      const jobs = await runnerSide.deps.db.k
        .selectFrom('jobs')
        .select(['status', 'payload', 'updated_at'])
        .where('kind', '=', 'test.wakeup-mark')
        .execute();
      expect(jobs.map((job) => job.status)).toEqual(['DONE', 'DONE']);
      // For the record (not a bound: the machine may be loaded): from the commit to the
      // moment the runner claimed it (the platform's clock has not moved, so it is the wall's).
      const first = jobs.find((job) => job.payload.includes('due-now-elsewhere'))!;
      console.log(
        `a job committed by another instance was claimed ${Date.parse(first.updated_at) - committedAtMs} ms after its commit`,
      );
    } finally {
      await runner.stop();
      await committing.close();
      await runnerSide.close();
      await dropPgSchema(databaseUrl!, pgSchema);
    }
  });
});
