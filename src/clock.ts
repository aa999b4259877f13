// The only source of "now". Each platform sees the wall clock plus its own sandbox
// offset, which only ever grows (POST /_railyard/clock/advance), so a tester can move
// a platform's time forward without disturbing other platforms on a shared server.

/**
 * The range of instants railyard keeps: stored as UTC text with a four-digit year, so years
 * 0000 to 9999. Date-time input outside it is refused (http/schemas.ts).
 */
export const FIRST_INSTANT_MS = Date.parse('0000-01-01T00:00:00.000Z');
export const LAST_INSTANT_MS = Date.parse('9999-12-31T23:59:59.999Z');

export interface Clock {
  /** Milliseconds since the epoch, before any platform offset. */
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };

/** A clock for tests of code that runs outside a request (jobs, bootstrap). */
export class ManualClock implements Clock {
  constructor(private currentMs: number) {}
  nowMs(): number {
    return this.currentMs;
  }
  advance(ms: number): void {
    this.currentMs += ms;
  }
}

export function platformNow(clock: Clock, offsetMs: number): Date {
  return new Date(clock.nowMs() + offsetMs);
}

// A request formats its one `now` many times (row timestamps, postings, events), and often one
// other instant between them (a quote's expiry, a settlement): the strings of the last two
// instants formatted are kept.
let lastIsoMs = Number.NaN;
let lastIso = '';
let otherIsoMs = Number.NaN;
let otherIso = '';

/** Timestamps are stored and compared as fixed-width ISO-8601 strings (UTC, milliseconds). */
export function iso(date: Date): string {
  const ms = date.getTime();
  if (ms === lastIsoMs) return lastIso;
  const text = ms === otherIsoMs ? otherIso : date.toISOString();
  otherIsoMs = lastIsoMs;
  otherIso = lastIso;
  lastIsoMs = ms;
  lastIso = text;
  return text;
}
