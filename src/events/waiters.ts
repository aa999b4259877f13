// Requests that wait for an event to be recorded (GET /_railyard/events?wait=…). A waiter
// holds no database connection while it waits: it reads, and if nothing matched yet, sleeps
// until an event of its platform commits (in this process, or on PostgreSQL in another one:
// the `events` notifications of db/notify.ts), then reads again, until its deadline. A wake-up
// that comes between a read and the sleep after it is kept, so none is missed.
//
// Waiters are bounded per process (EVENT_WAITERS_MAX): beyond, a request is refused at once
// rather than queued. When the server closes, every waiter is woken to answer what it has:
// a draining server answers the requests it holds instead of cutting them.

import type { Queryable } from '../db/index.js';
import { listen, type Subscription } from '../db/notify.js';
import { apiError } from '../http/errors.js';
import { EVENTS_CHANNEL } from './store.js';

/** Requests one process holds at once waiting for events. */
export const EVENT_WAITERS_MAX = 100;
/** The longest wait a request may ask for, in seconds. */
export const EVENT_WAIT_SECONDS_MAX = 30;

let waiting = 0;

/** How many requests of this process wait for events now. */
export function eventWaitersNow(): number {
  return waiting;
}

interface Waiter {
  platformId: string;
  /** An event of the platform committed since the waiter last began to read. */
  signalled: boolean;
  wake: (() => void) | undefined;
}

/** The waiters of one server (one store): woken by its platforms' events, all at its close. */
export class EventWaitRoom {
  private readonly waiters = new Set<Waiter>();
  private subscription: Subscription | undefined;
  private closingNow = false;

  constructor(private readonly q: Queryable) {}

  /**
   * Waits on `platformId`'s events: `read` is called, and again after each event of the
   * platform, until it answers `done`, the deadline (`waitMs` from now) passes, or the server
   * closes; answers its last result. `retryMs`, when `read` says so, is a time after which to
   * read again even without an event (an event it saw is not final yet). `gone`: the client
   * went away (its wait then ends at once).
   */
  async waitFor<T>(
    platformId: string,
    waitMs: number,
    read: () => Promise<{ result: T; done: boolean; retryMs?: number | undefined }>,
    gone?: AbortSignal,
  ): Promise<T> {
    if (waiting >= EVENT_WAITERS_MAX) {
      const error = apiError(
        'RATE_LIMITED',
        `${EVENT_WAITERS_MAX} requests already wait for events on this server, the most it holds at once; ask again shortly, or without wait`,
        { waitersMax: EVENT_WAITERS_MAX },
      );
      error.retryAfterSeconds = 1;
      throw error;
    }
    waiting++;
    const waiter: Waiter = { platformId, signalled: false, wake: undefined };
    this.waiters.add(waiter);
    const leave = () => waiter.wake?.();
    gone?.addEventListener('abort', leave);
    try {
      // On PostgreSQL, events of other processes are heard once the listening connection listens.
      if (!this.closingNow)
        this.subscription ??= listen(
          this.q,
          EVENTS_CHANNEL,
          (payload) => this.signal(payload),
          // Notifications may have been lost while the listening connection was down.
          () => this.signal(undefined),
        );
      await this.subscription?.ready;
      const deadline = performance.now() + waitMs;
      for (;;) {
        waiter.signalled = false;
        const { result, done, retryMs } = await read();
        const leftMs = deadline - performance.now();
        if (done || leftMs <= 0 || this.closingNow || gone?.aborted === true) return result;
        await this.sleep(waiter, Math.min(leftMs, retryMs ?? leftMs), gone);
      }
    } finally {
      gone?.removeEventListener('abort', leave);
      this.waiters.delete(waiter);
      waiting--;
    }
  }

  /** True once the server closes. */
  get closing(): boolean {
    return this.closingNow;
  }

  /** Wakes every waiter to answer what it has; no new wait starts. */
  close(): void {
    this.closingNow = true;
    this.subscription?.close();
    this.subscription = undefined;
    for (const waiter of this.waiters) waiter.wake?.();
  }

  private sleep(waiter: Waiter, ms: number, gone: AbortSignal | undefined): Promise<void> {
    if (waiter.signalled || this.closingNow || gone?.aborted === true) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => waiter.wake?.(), ms);
      waiter.wake = () => {
        clearTimeout(timer);
        waiter.wake = undefined;
        resolve();
      };
    });
  }

  /** An event of `platformId` committed (undefined: of any platform, maybe). */
  private signal(platformId: string | undefined): void {
    for (const waiter of this.waiters) {
      if (platformId !== undefined && waiter.platformId !== platformId) continue;
      waiter.signalled = true;
      waiter.wake?.();
    }
  }
}
