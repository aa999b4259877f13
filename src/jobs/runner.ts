// Runs due jobs: in the background, and on demand when a platform's clock moves. In the
// background the runner sleeps until the next job becomes due (a timer set to that moment,
// read from the store) or new work is committed: by this process (its commit wakes the
// runner, or moves the timer earlier) or, on PostgreSQL, by another one (a notification,
// db/notify.ts). A clock advance wakes it too, since its platform's jobs then fall due
// sooner. Transactional jobs run one after another; external jobs (network calls) run side
// by side, up to a bound, so one slow receiver does not hold up the others. stop() lets
// running jobs finish before the process exits.

import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import { platformNow } from '../clock.js';
import type { Deps } from '../http/deps.js';
import { BACKGROUND, type Queryable } from '../db/index.js';
import { listen, type Subscription } from '../db/notify.js';
import {
  announceJobs,
  claimDueExternal,
  claimNext,
  JOBS_CHANNEL,
  jobKind,
  markDone,
  markFailedAttempt,
  markRunning,
  nextClaimableAtMs,
  registerRunner,
  releaseAbandonedJobs,
  renewLeases,
  toJob,
  unfinishedDueChanges,
  type ClaimedRow,
  type ExternalJobKind,
} from './queue.js';

/**
 * On PostgreSQL, the longest the background runner sleeps without looking at the store (one
 * read of the next due time, then a claim only if something is due: an idle instance sends one
 * statement every few seconds). note: the
 * wake-ups cover everything this process commits and, through notifications, what the
 * others commit; but another process notifies after its commit (db/notify.ts), so one that
 * dies in between leaves its work unannounced, and a listening connection that silently
 * stops hearing (a half-open socket) would not be noticed. This look bounds both. The
 * embedded store needs none: one process owns it, and every commit passes its hooks.
 */
export const JOB_SAFETY_POLL_MS = 5_000;
/**
 * The first pause before looking again when a job is due but was not claimed (another
 * instance's claim holds it, or its lease has not lapsed yet); doubled at each look that finds
 * it so, up to JOB_BUSY_RETRY_MS_MAX.
 */
const JOB_BUSY_RETRY_MS = 50;
const JOB_BUSY_RETRY_MS_MAX = 1_000;
/** The pause after a look that failed (the store is unreachable), before the next. */
const JOB_LOOK_FAILED_RETRY_MS = 1_000;
/** setTimeout's longest delay; a longer sleep wakes then and looks again. */
const TIMER_MS_MAX = 2 ** 31 - 1;
/** Jobs one runDue call may run; a bound against a job that keeps rescheduling itself at once. */
export const JOBS_PER_RUN_MAX = 10_000;
/**
 * External jobs one runDue call keeps in flight at once. It claims more only once half of them
 * have ended, so a backlog is claimed in batches: one claim per job that ends would cost a
 * transaction per job, each waiting behind the requests' (with a bound of 32 and one job per
 * claim, a saturating load's backlog of one hot account's webhooks waited 10 s at the median).
 */
export const EXTERNAL_JOBS_IN_FLIGHT_MAX = 256;
/**
 * External jobs handed over at scheduling that may run at once; beyond, new ones wait for a
 * claim (in the store, not in memory). A saturating load with a webhook endpoint keeps
 * hundreds in flight, most of them the platform account's balance events waiting their turn
 * (up to about 2,000 before the sender batched its messages).
 */
export const ADOPTED_JOBS_IN_FLIGHT_MAX = 2048;
/** How long a clock advance waits for due jobs other instances hold before it answers anyway. */
export const CLOCK_ADVANCE_WAIT_MS_MAX = 10_000;
/** The pause between two looks at the due jobs other instances hold. */
const ELSEWHERE_POLL_MS = 20;
/**
 * How often an instance extends the leases of the external jobs it is running. A lease lasts
 * a few of these, so an instance that dies (SIGKILL, a lost machine) gives its jobs up within
 * seconds, while a live one keeps them through a try of any length.
 */
export const LEASE_RENEW_MS = 4_000;

type Outcome = 'ran' | 'none';

/** A job's turn among the jobs of its order key (see JobRunner.takePlace). */
interface Place {
  /** Its transaction ended (or, for a claimed job, it was claimed). */
  settled: boolean;
  /** A job left for a claim. */
  leaves: boolean;
  /** What its turn starts; nothing for a transaction that rolled back. */
  go: (() => void) | undefined;
}

interface Line {
  places: Place[];
  /** Places of jobs left for a claim, up to the end of their turn. */
  leaving: number;
}

export class JobRunner {
  readonly instanceId = randomUUID();
  /** The background loop runs (start() until stop()). */
  private background = false;
  private stopping = false;
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Claims with their transactional job, running now (the background loop's included). */
  private readonly claims = new Set<Promise<unknown>>();
  /** A wake-up came since the background loop's current look began: it looks again. */
  private woken = false;
  /** The background loop's sleep, while it sleeps: when it ends, and how to end it sooner. */
  private sleeper:
    | {
        untilMs: number;
        timer: NodeJS.Timeout | undefined;
        end: () => void;
        /** Only the safety bound ends this sleep: no due time or wake-up has come into it. */
        safetyOnly: boolean;
      }
    | undefined;
  /** The earliest due time (wall clock) heard of during a look, for the sleep after it. */
  private heardDueMs: number | undefined;
  private busyRetryMs = JOB_BUSY_RETRY_MS;
  private subscription: Subscription | undefined;
  /** On PostgreSQL, the longest sleep without a look (JOB_SAFETY_POLL_MS; tests lengthen it). */
  safetyPollMs = JOB_SAFETY_POLL_MS;
  private adoptedInFlight = 0;
  private finished = 0;
  /** The bound on adopted jobs in flight (ADOPTED_JOBS_IN_FLIGHT_MAX; tests lower it). */
  adoptedInFlightMax = ADOPTED_JOBS_IN_FLIGHT_MAX;
  /**
   * Per order key (ExternalJobKind.orderKey), how many of its jobs were left for a claim
   * (too many ran) and committed. While a key has some, its later jobs are left too: one
   * handed over at once would start before an earlier one of its key (a webhook of the same
   * object, see events/delivery.ts). Other keys are not held back. Cleared whenever a
   * background claim finds nothing due.
   */
  private readonly waitingForClaim = new Map<string, number>();
  /** Per order key, the jobs of that key whose turn has not come yet (see takePlace). */
  private readonly lines = new Map<string, Line>();
  /** Settles at the next wake-up (a run waiting on external jobs also looks for new work then). */
  private wakeSignal: { promise: Promise<void>; resolve: () => void } | undefined;
  /** The external jobs running here, each with the length of its kind's lease. */
  private readonly held = new Map<string, number>();
  private renewTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: Deps,
    private readonly log: FastifyBaseLogger,
  ) {
    registerRunner(deps.db.k, {
      instanceId: this.instanceId,
      wake: () => this.wake(),
      dueAt: (wallMs) => this.dueAt(wallMs),
      inBackground: () => this.background && !this.stopping,
      adopting: (orderKey) =>
        this.background &&
        !this.stopping &&
        this.adoptedInFlight < this.adoptedInFlightMax &&
        (orderKey === undefined ||
          (!this.waitingForClaim.has(orderKey) && (this.lines.get(orderKey)?.leaving ?? 0) === 0)),
      takePlace: (orderKey, leaves) => this.takePlace(orderKey, leaves),
      wallNowMs: () => deps.clock.nowMs(),
      adopt: (row, prepared) => {
        // A runner that began to stop leaves the job to its lease: another run takes it over.
        if (this.stopping) return;
        this.adoptedInFlight++;
        void this.track(this.runExternal(row, prepared)).finally(() => this.adoptedInFlight--);
      },
    });
  }

  /**
   * Starts the background loop. On the embedded store, first hands back the jobs a previous
   * process left RUNNING (it died mid-try: see releaseAbandonedJobs). On PostgreSQL, first
   * listens for the work other processes commit.
   */
  async start(): Promise<void> {
    if (this.background) return;
    this.stopping = false;
    if (this.deps.db.dialect === 'sqlite') {
      const released = await releaseAbandonedJobs(this.deps.db.k, new Date(this.deps.clock.nowMs()));
      if (released > 0) this.log.info({ jobs: released }, 'took back jobs a previous process left running');
    }
    // From here on, work scheduled in this process counts on the background claims (see
    // adopting and leftForClaim), though the loop starts once the listening connection listens.
    this.background = true;
    this.subscription = listen(
      this.deps.db.k,
      JOBS_CHANNEL,
      (payload) => this.heard(payload),
      // Notifications may have been lost while the listening connection was down.
      () => this.wake(),
    );
    await this.subscription.ready;
    if (this.stopping) return;
    void this.track(this.work());
  }

  /**
   * The background loop: runs what is due, reads when the next job falls due, and sleeps
   * until then (at most safetyPollMs on PostgreSQL) or until woken.
   */
  private async work(): Promise<void> {
    /** The last sleep was ended by the safety bound alone. */
    let safetyLook = false;
    while (!this.stopping) {
      this.woken = false;
      this.heardDueMs = undefined;
      let sleepMs: number;
      try {
        let nextMs: number | undefined;
        // A look only the safety bound asked for reads the next due time first (one statement),
        // and claims only when something is due: an idle instance's look costs one round trip.
        if (safetyLook) nextMs = await nextClaimableAtMs(this.deps.db.k, this.deps.db.dialect, this.instanceId);
        if (!safetyLook || (nextMs !== undefined && nextMs <= this.deps.clock.nowMs())) {
          await this.runDue(undefined, true);
          if (this.woken || this.stopping) continue;
          nextMs = await nextClaimableAtMs(this.deps.db.k, this.deps.db.dialect, this.instanceId);
        }
        const atMs = Math.min(nextMs ?? Number.POSITIVE_INFINITY, this.heardDueMs ?? Number.POSITIVE_INFINITY);
        sleepMs = atMs - this.deps.clock.nowMs();
        if (sleepMs <= 0) {
          // Due, yet not claimed just now: held by a claim elsewhere. Look again soon, then
          // less often while it stays so.
          sleepMs = this.busyRetryMs;
          this.busyRetryMs = Math.min(this.busyRetryMs * 2, JOB_BUSY_RETRY_MS_MAX);
        } else {
          this.busyRetryMs = JOB_BUSY_RETRY_MS;
        }
      } catch (err) {
        this.log.error({ err }, 'looking for due jobs failed');
        sleepMs = JOB_LOOK_FAILED_RETRY_MS;
      }
      if (this.woken || this.stopping) continue;
      const bounded = this.deps.db.dialect === 'postgres' && sleepMs > this.safetyPollMs;
      if (bounded) sleepMs = this.safetyPollMs;
      safetyLook = (await this.sleep(sleepMs, bounded)) && !this.woken;
    }
  }

  /**
   * Sleeps `ms` (for ever when infinite), or until woken; dueAt() may end it sooner. Resolves
   * true when the sleep was `safety`'s (the safety bound) and nothing but its end came.
   */
  private sleep(ms: number, safety = false): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const sleeper = {
        untilMs: this.deps.clock.nowMs() + ms,
        timer: undefined as NodeJS.Timeout | undefined,
        safetyOnly: safety,
        end: () => {
          clearTimeout(sleeper.timer);
          if (this.sleeper === sleeper) this.sleeper = undefined;
          resolve(sleeper.safetyOnly);
        },
      };
      this.sleeper = sleeper;
      this.armSleep(ms);
    });
  }

  private armSleep(ms: number): void {
    const sleeper = this.sleeper!;
    clearTimeout(sleeper.timer);
    sleeper.timer = Number.isFinite(ms) ? setTimeout(sleeper.end, Math.min(Math.max(ms, 0), TIMER_MS_MAX)) : undefined;
    // The loop's sleep alone keeps no process alive.
    sleeper.timer?.unref();
  }

  /**
   * A job committed to fall due at `wallMs` (wall clock): the sleep ends then if it would
   * have lasted longer. No look at the store: the timer is simply moved.
   */
  private dueAt(wallMs: number): void {
    if (!this.background || this.stopping) return;
    const sleeper = this.sleeper;
    if (sleeper === undefined) {
      // A look is under way: its sleep will not be longer than this.
      this.heardDueMs = Math.min(this.heardDueMs ?? Number.POSITIVE_INFINITY, wallMs);
      return;
    }
    if (wallMs >= sleeper.untilMs) return;
    sleeper.untilMs = wallMs;
    sleeper.safetyOnly = false;
    this.armSleep(wallMs - this.deps.clock.nowMs());
  }

  /** A notification from another process: work due now, or at a wall-clock moment. */
  private heard(payload: string): void {
    const wallMs = Number(payload);
    if (Number.isFinite(wallMs) && wallMs > this.deps.clock.nowMs()) this.dueAt(wallMs);
    else this.wake();
  }

  /**
   * A place at the end of the line of `key`; the function answered settles it. A settled
   * place at the head of the line runs its `go` and leaves the line, and so on down the line.
   */
  private takePlace(key: string, leaves: boolean): (go: (() => void) | undefined) => void {
    let line = this.lines.get(key);
    if (line === undefined) {
      line = { places: [], leaving: 0 };
      this.lines.set(key, line);
    }
    const place: Place = { settled: false, leaves, go: undefined };
    line.places.push(place);
    if (leaves) line.leaving++;
    return (go) => {
      if (place.settled) return;
      place.settled = true;
      place.go = go;
      this.advance(key);
    };
  }

  /** Runs `go` now, or once the places before it in the line of `key` have had their turn. */
  private inTurn(key: string | undefined, go: () => void): void {
    const line = key === undefined ? undefined : this.lines.get(key);
    if (line === undefined) go();
    else line.places.push({ settled: true, leaves: false, go });
  }

  private advance(key: string): void {
    const line = this.lines.get(key);
    if (line === undefined) return;
    while (line.places[0]?.settled === true) {
      const place = line.places.shift()!;
      // A job left for a claim whose transaction committed waits for the claim from its turn
      // on; it is counted in `leaving` until then, so no later job of its key is handed over.
      if (place.leaves && place.go !== undefined) this.leftForClaim(key);
      place.go?.();
      if (place.leaves) line.leaving--;
    }
    if (line.places.length === 0) this.lines.delete(key);
  }

  private leftForClaim(key: string): void {
    // Only the background claims clear the counts: without them, nothing is handed over.
    if (!this.background) return;
    this.waitingForClaim.set(key, (this.waitingForClaim.get(key) ?? 0) + 1);
  }

  /** Keeps the leases of the external jobs running here from lapsing while they run. */
  private hold(id: string, leaseMs: number): void {
    this.held.set(id, leaseMs);
    if (this.renewTimer !== undefined) return;
    this.renewTimer = setInterval(() => {
      const wallNowMs = this.deps.clock.nowMs();
      const leases = new Map([...this.held].map(([jobId, ms]) => [jobId, wallNowMs + ms]));
      renewLeases(this.deps.db.k, this.instanceId, leases).catch((err) =>
        this.log.warn({ err }, 'could not renew job leases'),
      );
    }, LEASE_RENEW_MS);
    this.renewTimer.unref();
  }

  private release(id: string): void {
    this.held.delete(id);
    if (this.held.size > 0 || this.renewTimer === undefined) return;
    clearInterval(this.renewTimer);
    this.renewTimer = undefined;
  }

  /** Jobs run to their end so far, here (a measure of work, for src/memory.ts). */
  get jobsFinished(): number {
    return this.finished;
  }

  /** Asks the background loop to look for due jobs now (after a commit that scheduled some). */
  wake(): void {
    if (this.wakeSignal !== undefined) {
      this.wakeSignal.resolve();
      this.wakeSignal = undefined;
    }
    if (!this.background || this.stopping) return;
    this.woken = true;
    this.sleeper?.end();
  }

  /**
   * While the background loop sleeps: the wall-clock moment its sleep ends (undefined when it
   * sleeps until woken). Undefined too while it works, or when it does not run. For tests and
   * diagnostics.
   */
  get sleepingUntilMs(): number | undefined {
    const sleeper = this.sleeper;
    return sleeper === undefined || !Number.isFinite(sleeper.untilMs) ? undefined : sleeper.untilMs;
  }

  /** True while the background loop sleeps (it runs, and has nothing to do before it wakes). */
  get asleep(): boolean {
    return this.sleeper !== undefined;
  }

  private nextWake(): Promise<void> {
    if (this.wakeSignal === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.wakeSignal = { promise, resolve };
    }
    return this.wakeSignal.promise;
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.inFlight.add(promise);
    return promise.finally(() => this.inFlight.delete(promise));
  }

  /**
   * Waits for the transactional jobs other runs (the background poll) are carrying out now,
   * so a caller that ran the due jobs also sees the ones the poll took first. External jobs
   * (webhook deliveries) are not waited for: they may take a receiver's whole timeout.
   */
  async settleClaims(): Promise<void> {
    await Promise.allSettled([...this.claims]);
  }

  /**
   * Runs the platform's due jobs and returns once no state change (a job of a transaction
   * kind) due by `dueByMs` (its clock) is pending anywhere, however many instances share the
   * store: another instance may have claimed some first and still be running them. Each look
   * also runs what became free to claim meanwhile. After `waitMsMax` of waiting it answers
   * anyway, with a warning. Returns how many jobs this instance ran.
   */
  async runDueEverywhere(platformId: string, dueByMs: number, waitMsMax = CLOCK_ADVANCE_WAIT_MS_MAX): Promise<number> {
    try {
      return await this.runDueOfPlatform(platformId, dueByMs, waitMsMax);
    } finally {
      // The platform's later jobs now fall due sooner: whichever runner sleeps until one of
      // them reads their times again.
      announceJobs(this.deps.db.k, 'now');
    }
  }

  private async runDueOfPlatform(platformId: string, dueByMs: number, waitMsMax: number): Promise<number> {
    let count = await this.runDue(platformId);
    // The background poll may have taken some of them first: they too end before the answer.
    await this.settleClaims();
    // One process owns the embedded store, so nothing runs elsewhere.
    if (this.deps.db.dialect === 'sqlite') return count;
    // note: a real-time bound (not the sandbox clock, which is what just moved).
    const deadline = performance.now() + waitMsMax;
    while (!this.stopping) {
      const left = await unfinishedDueChanges(this.deps.db.k, platformId, dueByMs);
      if (left === 0) break;
      if (performance.now() >= deadline) {
        this.log.warn(
          { platformId, jobs: left, waitMsMax },
          'due jobs still unfinished elsewhere; answering without them',
        );
        break;
      }
      await sleep(ELSEWHERE_POLL_MS);
      count += await this.runDue(platformId);
    }
    return count;
  }

  /**
   * Runs every job that is due (for one platform, or all); returns how many ran.
   * `background`: the poll's own runs, whose transactions give way to requests' (see
   * group-commit.ts); a run someone waits for (the clock moved) does not.
   */
  async runDue(platformId?: string, background = false): Promise<number> {
    let count = 0;
    const external = new Set<Promise<void>>();
    try {
      while (count < JOBS_PER_RUN_MAX && !this.stopping) {
        const claim = this.track(this.runOne(platformId, external, background));
        this.claims.add(claim);
        const outcome = await claim.finally(() => this.claims.delete(claim));
        if (outcome === 'none') {
          // External jobs still running may make more work due (a webhook answer that
          // decides a payment, say): look again once one of them ends.
          if (external.size === 0) break;
          await Promise.race([...external, this.nextWake()]);
          continue;
        }
        count += outcome;
        if (external.size >= EXTERNAL_JOBS_IN_FLIGHT_MAX)
          while (external.size > EXTERNAL_JOBS_IN_FLIGHT_MAX / 2) await Promise.race(external);
      }
    } finally {
      await Promise.all(external);
    }
    return count;
  }

  /** Claims and runs one transactional job, or starts a batch of external ones; how many. */
  private async runOne(
    platformId: string | undefined,
    external: Set<Promise<void>>,
    background: boolean,
  ): Promise<number | 'none'> {
    const { db, clock } = this.deps;
    let claimedExternal: { row: ClaimedRow; prepared: unknown }[] = [];
    let failed: { row: ClaimedRow; error: unknown } | undefined;
    const outcome = await db
      .transaction(
        async (tx): Promise<Outcome> => {
          failed = undefined;
          claimedExternal = [];
          const wallNowMs = clock.nowMs();
          const row = await claimNext(tx, db.dialect, wallNowMs, platformId);
          if (row === undefined) {
            // Nothing due anywhere: every job left for a claim has been taken.
            if (platformId === undefined) this.waitingForClaim.clear();
            return 'none';
          }
          const now = platformNow(clock, Number(row.clock_offset_ms));
          const kind = jobKind(row.kind);
          if (kind?.mode === 'external') {
            // note: every other external job that is due comes along in this one claim. On
            // the embedded store each transaction waits its turn behind the requests', so
            // one claim per job would deliver no faster than one job per turn.
            const more = await claimDueExternal(
              tx,
              db.dialect,
              wallNowMs,
              platformId,
              EXTERNAL_JOBS_IN_FLIGHT_MAX - external.size - 1,
            );
            for (const claimed of [row, ...more.filter((other) => other.id !== row.id)]) {
              const claimedKind = jobKind(claimed.kind) as ExternalJobKind<unknown>;
              await markRunning(tx, claimed.id, this.instanceId, wallNowMs + claimedKind.leaseMs, now);
              const prepared =
                claimedKind.prepare === undefined ? undefined : await claimedKind.prepare(tx, toJob(claimed));
              claimedExternal.push({ row: claimed, prepared });
            }
            return 'ran';
          }
          if (kind === undefined) {
            await markFailedAttempt(tx, row, undefined, `no handler for job kind ${row.kind}`, now.getTime(), now);
            return 'ran';
          }
          try {
            await kind.run(tx, toJob(row), { deps: this.deps, platformId: row.platform_id, now, log: this.log });
          } catch (error) {
            failed = { row, error };
            throw error;
          }
          await markDone(tx, row.id, now);
          return 'ran';
        },
        { background },
      )
      .catch(async (error) => {
        if (failed === undefined) throw error;
        await this.recordFailure(failed.row, failed.error);
        return 'ran' as Outcome;
      });
    // In the order they were scheduled (their ids), not by due time: the first tries of one
    // key were due at the start of their requests, not in the order of their commits.
    claimedExternal.sort((a, b) => (a.row.id < b.row.id ? -1 : a.row.id > b.row.id ? 1 : 0));
    for (const { row, prepared } of claimedExternal) {
      const key = this.orderKeyOf(row, prepared);
      // Its first run starts before any later job of its key is handed over.
      if (row.attempts === 0) this.claimedInOrder(key);
      const running: Promise<void> = new Promise<void>((resolve) =>
        this.inTurn(key, () => void this.track(this.runExternal(row, prepared)).then(resolve)),
      ).finally(() => external.delete(running));
      external.add(running);
    }
    if (outcome === 'ran' && claimedExternal.length === 0) this.finished++;
    return outcome === 'ran' ? claimedExternal.length || 1 : 'none';
  }

  private orderKeyOf(row: ClaimedRow, prepared: unknown): string | undefined {
    const kind = jobKind(row.kind);
    return kind?.mode === 'external' ? kind.orderKey?.(prepared) : undefined;
  }

  /** A job left for a claim was claimed: one fewer of its key waits. */
  private claimedInOrder(key: string | undefined): void {
    const waiting = key === undefined ? undefined : this.waitingForClaim.get(key);
    if (waiting === undefined) return;
    if (waiting <= 1) this.waitingForClaim.delete(key!);
    else this.waitingForClaim.set(key!, waiting - 1);
  }

  /** Runs a claimed external job; never rejects (a failure is recorded on the job). */
  private async runExternal(row: ClaimedRow, prepared: unknown): Promise<void> {
    const kind = jobKind(row.kind);
    if (kind?.mode !== 'external') return;
    this.hold(row.id, kind.leaseMs);
    const now = platformNow(this.deps.clock, Number(row.clock_offset_ms));
    let markedDone = false;
    const markDoneIn = async (tx: Queryable) => {
      await markDone(tx, row.id, platformNow(this.deps.clock, Number(row.clock_offset_ms)));
      markedDone = true;
    };
    try {
      try {
        await kind.run(
          toJob(row),
          { deps: this.deps, platformId: row.platform_id, now, log: this.log, markDone: markDoneIn },
          prepared,
        );
      } catch (error) {
        await this.recordFailure(row, error);
        return;
      }
      if (!markedDone)
        await markDone(this.deps.db.k, row.id, platformNow(this.deps.clock, Number(row.clock_offset_ms)));
    } catch (err) {
      // The store went away (shutdown): the lease lapses and another run takes the job over.
      this.log.error({ err, jobId: row.id, kind: row.kind }, 'could not record the end of a job');
    } finally {
      this.release(row.id);
      this.finished++;
    }
  }

  private async recordFailure(row: ClaimedRow, error: unknown): Promise<void> {
    const now = platformNow(this.deps.clock, Number(row.clock_offset_ms));
    this.log.warn({ err: error, jobId: row.id, kind: row.kind }, 'job attempt failed');
    await this.deps.db.transaction(
      (tx) =>
        markFailedAttempt(
          tx,
          row,
          jobKind(row.kind),
          error instanceof Error ? error.message : String(error),
          now.getTime(),
          now,
        ),
      BACKGROUND, // the record of a failed attempt gives way to requests' transactions
    );
  }

  /** Stops taking new jobs and waits for the ones running to finish. */
  async stop(): Promise<void> {
    const wasRunning = this.background;
    this.stopping = true;
    this.background = false;
    this.subscription?.close();
    this.subscription = undefined;
    this.sleeper?.end();
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    // The work this runner would have run later is left to the other processes' runners,
    // which hear nothing of work a running runner schedules: they read their times again.
    if (wasRunning) announceJobs(this.deps.db.k, 'now');
  }
}
