// What a fault rule is and how it matches, with no database and no HTTP: the rule as stored,
// its path pattern, and the seeded draw of a rule with a probability. The request hook
// (requests.ts), webhook delivery (src/events/faults.ts) and the endpoints (service.ts) share it.

/** The statuses a `status` rule may answer with. */
export const FAULT_STATUSES = [429, 500, 502, 503, 504] as const;
export type FaultStatus = (typeof FAULT_STATUSES)[number];

/** The statuses a `lostResponse` rule may answer with instead of closing the connection. */
export const LOST_RESPONSE_STATUSES = [500, 502, 503, 504] as const;

export const FAULT_EFFECTS = ['status', 'latencyMs', 'reset', 'lostResponse'] as const;
export type FaultEffect = (typeof FAULT_EFFECTS)[number];

export const WEBHOOK_FAULT_EFFECTS = ['duplicate', 'delay', 'outOfOrder', 'drop'] as const;
export type WebhookFaultEffect = (typeof WEBHOOK_FAULT_EFFECTS)[number];

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** The longest delay a `latencyMs` rule may add. */
export const LATENCY_MS_MAX = 60_000;
/** The Retry-After a 429 carries when the rule names none. */
export const RETRY_AFTER_SECONDS_DEFAULT = 1;
export const RETRY_AFTER_SECONDS_MAX = 86_400;
/** The longest delay of a webhook `delay` rule: the retry window of a delivery. */
export const DELAY_SECONDS_MAX = 7 * 24 * 3600;
/** Rules of each kind a platform may hold at once. */
export const RULES_PER_PLATFORM_MAX = 100;
export const TIMES_MAX = 1_000_000;
export const SEED_MAX = 4_294_967_295;
export const PATH_CHARS_MAX = 500;
export const HEADER_NAME_CHARS_MAX = 200;
export const HEADER_VALUE_CHARS_MAX = 1000;

/** A request fault rule as stored (the `rule` column) and listed. */
export interface RequestRule {
  operationId?: string;
  method?: string;
  path?: string;
  header?: { name: string; value: string };
  times?: number;
  probability?: number;
  seed?: number;
  status?: FaultStatus;
  retryAfterSeconds?: number;
  latencyMs?: number;
  reset?: true;
  lostResponse?: true;
  lostResponseStatus?: number;
}

/** A webhook fault rule as stored and listed. */
export interface WebhookRule {
  eventType?: string;
  effect: WebhookFaultEffect;
  times?: number;
  delaySeconds?: number;
}

export function effectOf(rule: RequestRule): FaultEffect {
  if (rule.status !== undefined) return 'status';
  if (rule.latencyMs !== undefined) return 'latencyMs';
  if (rule.reset === true) return 'reset';
  return 'lostResponse';
}

// ----------------------------------------------------------------------------- paths

/**
 * A path pattern, matched against the request's path under the base path (the query left
 * out, a trailing slash ignored), segment by segment:
 * - a literal segment matches that segment (compared after percent-decoding, so
 *   `/quotes/Quote:1` matches `/quotes/Quote%3A1`);
 * - `*`, `{name}` or `:name` matches exactly one segment, whatever it holds (so a route's
 *   template, `/quotes/{quoteId}/execute`, matches every request of that route);
 * - `**` matches any number of segments, none included.
 * A pattern may start with the base path (`/grid/2025-10-13/quotes`): it is left out.
 */
export type PathPattern = readonly string[];

const ONE_SEGMENT = '*';
const ANY_SEGMENTS = '**';

function splitPath(path: string): string[] {
  const segments = path.split('/').slice(1);
  if (segments.length > 0 && segments[segments.length - 1] === '') segments.pop();
  return segments;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** What is wrong with a path pattern, or null. */
export function pathPatternProblem(path: string): string | null {
  if (!path.startsWith('/')) return 'must start with /';
  if (/[?#\s]/.test(path)) return 'must be a path alone: no query, fragment or white space';
  for (const segment of splitPath(path)) {
    if (segment === '' && path !== '/') return 'must not hold an empty segment (//)';
    const wildcard = segment.includes('*') || segment.includes('{') || segment.includes('}');
    if (wildcard && !isParameter(segment) && segment !== ONE_SEGMENT && segment !== ANY_SEGMENTS)
      return `has a segment ${JSON.stringify(segment)} that mixes a wildcard with text: use *, ** or {name} alone`;
  }
  return null;
}

function isParameter(segment: string): boolean {
  return /^\{[^{}/]+\}$/.test(segment) || /^:[A-Za-z0-9_]+$/.test(segment);
}

/** The pattern of a valid path (see pathPatternProblem), relative to `basePath`. */
export function compilePath(path: string, basePath: string): PathPattern {
  const relative = path === basePath || path.startsWith(`${basePath}/`) ? path.slice(basePath.length) || '/' : path;
  return splitPath(relative).map((segment) => (isParameter(segment) ? ONE_SEGMENT : segment));
}

/** Whether `segments` (a request's path under the base path, split) match the pattern. */
export function pathMatches(pattern: PathPattern, segments: readonly string[], from = 0, at = 0): boolean {
  for (let p = from, s = at; ; p++, s++) {
    if (p === pattern.length) return s === segments.length;
    const expected = pattern[p]!;
    if (expected === ANY_SEGMENTS) {
      for (let skip = s; skip <= segments.length; skip++) if (pathMatches(pattern, segments, p + 1, skip)) return true;
      return false;
    }
    if (s === segments.length) return false;
    if (expected !== ONE_SEGMENT && decodeSegment(segments[s]!) !== decodeSegment(expected)) return false;
  }
}

/** A request's path under `basePath`, split into segments (the query left out). */
export function requestSegments(url: string, basePath: string): string[] {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  return splitPath(path.startsWith(basePath) ? path.slice(basePath.length) || '/' : path);
}

// ----------------------------------------------------------------------------- draws

/**
 * The `n`-th number (n = 1, 2, …) of the sequence a seed stands for, in [0, 1). Each number
 * depends on the seed and its position alone (a counter-based generator: the position is
 * mixed with the seed by the 32-bit finaliser of MurmurHash3), so every instance sharing a
 * store draws the same number for the same position, and a rule's matches, counted in the
 * store, give a repeatable run.
 */
export function draw(seed: number, n: number): number {
  let h = (seed ^ Math.imul(n, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 16), 0x27d4eb2f);
  h ^= h >>> 15;
  return (h >>> 0) / 4_294_967_296;
}
