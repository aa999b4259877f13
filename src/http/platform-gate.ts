// The requests of each platform that this process is serving, so that work replacing a
// platform's whole state (a snapshot's restore, a reset) runs between its requests, never in
// the middle of one. A database transaction alone would not do: a request that reads in
// several statements outside a transaction (a list's page and its count, a customer and then
// its accounts) could read the first before the restore and the second after it.
//
// A request is admitted once its platform is known (app.ts, after authentication) and leaves
// when it has been answered or its client has gone. `exclusive` closes the gate of one
// platform: requests that arrive meanwhile wait at it (and authenticate again when it opens,
// since what they read of the platform may have changed); the ones already admitted are
// waited for, up to REQUESTS_WAIT_MS; then the work runs, and the gate opens again. Other
// platforms' requests never wait. Requests served by other server instances on a shared
// PostgreSQL store are not seen here: for them, each transaction is before or after the work
// (see src/sandbox/exclusive.ts), not each request.

import type { FastifyBaseLogger, FastifyRequest } from 'fastify';

/** How long exclusive work waits for the platform's requests already running to end. */
export const REQUESTS_WAIT_MS = 2_000;

const ADMITTED = Symbol('railyard.admittedPlatform');
type Admitted = FastifyRequest & { [ADMITTED]?: string };

interface Closed {
  /** Settles when the gate opens again. */
  opened: Promise<void>;
  /** How many requests have come to the closed gate. */
  arrived: number;
  /** Set while the work waits for the platform's running requests to end. */
  drained?: () => void;
}

export class PlatformGate {
  private readonly running = new Map<string, number>();
  private readonly closed = new Map<string, Closed>();

  /**
   * Admits a request of `platformId`: undefined when it may go on now; otherwise a promise
   * that settles when the gate opens, after which the request must authenticate again and
   * ask to be admitted anew.
   */
  admit(request: FastifyRequest, platformId: string): Promise<void> | undefined {
    const closed = this.closed.get(platformId);
    if (closed !== undefined) {
      closed.arrived++;
      return closed.opened;
    }
    (request as Admitted)[ADMITTED] = platformId;
    this.running.set(platformId, (this.running.get(platformId) ?? 0) + 1);
    return undefined;
  }

  /** What the gate of `platformId` counts: requests running, and requests that came while it was closed (if it is). */
  state(platformId: string): { running: number; arrived: number | undefined } {
    return { running: this.running.get(platformId) ?? 0, arrived: this.closed.get(platformId)?.arrived };
  }

  /** The request has ended (answered, or its client went away); a second call does nothing. */
  leave(request: FastifyRequest): void {
    const platformId = (request as Admitted)[ADMITTED];
    if (platformId === undefined) return;
    (request as Admitted)[ADMITTED] = undefined;
    const count = (this.running.get(platformId) ?? 1) - 1;
    if (count > 0) {
      this.running.set(platformId, count);
      return;
    }
    this.running.delete(platformId);
    this.closed.get(platformId)?.drained?.();
  }

  /**
   * Runs `work` with the platform's gate closed, once the requests it had admitted have ended
   * (or REQUESTS_WAIT_MS has passed: then it runs anyway, and logs which were still running).
   * `own`: the request asking for it, which does not wait for itself.
   */
  async exclusive<T>(
    platformId: string,
    own: FastifyRequest | undefined,
    log: FastifyBaseLogger | undefined,
    work: () => Promise<T>,
    waitMs = REQUESTS_WAIT_MS,
  ): Promise<T> {
    if (own !== undefined) this.leave(own);
    // One at a time per platform: a second one waits for the first to open the gate.
    for (let other = this.closed.get(platformId); other !== undefined; other = this.closed.get(platformId))
      await other.opened;
    let open!: () => void;
    const closed: Closed = { opened: new Promise<void>((resolve) => (open = resolve)), arrived: 0 };
    this.closed.set(platformId, closed);
    try {
      if ((this.running.get(platformId) ?? 0) > 0) {
        let timer: NodeJS.Timeout | undefined;
        await new Promise<void>((resolve) => {
          closed.drained = resolve;
          timer = setTimeout(resolve, waitMs);
        });
        clearTimeout(timer);
        closed.drained = undefined;
        const still = this.running.get(platformId) ?? 0;
        if (still > 0)
          log?.warn({ platformId, requests: still, waitMs }, 'requests of the platform still running; going ahead');
      }
      return await work();
    } finally {
      this.closed.delete(platformId);
      open();
    }
  }
}
