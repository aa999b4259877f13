// Fault rules on a platform's Grid API requests, applied by two hooks of the Grid scope: one
// after authentication (the rules are the authenticated platform's) and before validation and
// the handler, one when the answer is about to leave.
//
// The hot path: the platform's row carries a tag of its rules (null while it has none that
// can fire), read with the credentials (src/http/auth.ts), so a platform without rules pays
// one comparison. With a tag, the rules are read once per tag and kept in this process; a
// change of the rules on any instance gives a new tag, so every instance reads them again.
//
// Firing is counted in the store, one statement per decision (src/faults/store.ts): a rule
// with `times` fires that many times in all across instances that share the store, and the
// n-th match of a rule with a probability takes the n-th draw of its seed's sequence. When a
// rule is used up, the platform's tag changes (to null when no rule is left to fire).

import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { BASE_PATH } from '../config.js';
import type { Deps } from '../http/deps.js';
import { markFault } from '../http/request-marks.js';
import { isOperationSchema } from '../http/route.js';
import {
  compilePath,
  draw,
  effectOf,
  type FaultEffect,
  type PathPattern,
  pathMatches,
  RETRY_AFTER_SECONDS_DEFAULT,
  type RequestRule,
  requestSegments,
} from './rules.js';
import * as store from './store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The tag of the authenticated platform's request fault rules (null: none can fire). */
    faultRules: string | null;
    /** What a fired rule still has to do when the answer leaves (latencyMs, lostResponse). */
    faultOnSend: OnSendFault | null;
  }
}

type OnSendFault = { ruleId: string } & ({ latencyMs: number } | { lostResponseStatus: number | undefined });

interface CompiledRule {
  id: string;
  rule: RequestRule;
  effect: FaultEffect;
  method: string | undefined;
  path: PathPattern | undefined;
  header: { name: string; value: string } | undefined;
}

interface CachedRules {
  tag: string;
  rules: CompiledRule[];
}

/** Platforms whose rules this process keeps (then it starts over: a bound, not a policy). */
const CACHED_PLATFORMS_MAX = 1000;
// note: keyed by platform id (ids never repeat across apps), and read by tag: what is kept
// is what the store held under that tag, whichever app of the process read it.
const CACHE = new Map<string, CachedRules>();

/** The operationIds of the Grid API (every app serves the same ones). */
const GRID_OPERATIONS = new Set<string>();

export function isGridOperation(operationId: string): boolean {
  return GRID_OPERATIONS.has(operationId);
}

function compile(row: store.RequestRuleRow): CompiledRule {
  const rule = JSON.parse(row.rule) as RequestRule;
  return {
    id: row.id,
    rule,
    effect: effectOf(rule),
    method: rule.method,
    path: rule.path === undefined ? undefined : compilePath(rule.path, BASE_PATH),
    header: rule.header === undefined ? undefined : { name: rule.header.name.toLowerCase(), value: rule.header.value },
  };
}

async function rulesOf(deps: Deps, platformId: string, tag: string): Promise<CompiledRule[]> {
  const cached = CACHE.get(platformId);
  if (cached?.tag === tag) return cached.rules;
  const rules = (await store.liveRequestRules(deps.db.k, platformId)).map(compile);
  if (CACHE.size >= CACHED_PLATFORMS_MAX) CACHE.clear();
  CACHE.set(platformId, { tag, rules });
  return rules;
}

function matches(rule: CompiledRule, request: FastifyRequest, operationId: string, segments: () => string[]) {
  if (rule.rule.operationId !== undefined && rule.rule.operationId !== operationId) return false;
  if (rule.method !== undefined && rule.method !== request.method) return false;
  if (rule.header !== undefined) {
    const sent = request.headers[rule.header.name];
    const value = rule.header.value;
    if (Array.isArray(sent) ? !sent.includes(value) : sent !== value) return false;
  }
  return rule.path === undefined || pathMatches(rule.path, segments());
}

/** Whether the rule fires on this request: counted in the store (see the header). */
async function fires(deps: Deps, platformId: string, rule: CompiledRule): Promise<boolean> {
  const db = deps.db.k;
  let matchCounted = false;
  if (rule.rule.probability !== undefined) {
    const n = await store.countMatch(db, rule.id);
    if (n === undefined || draw(rule.rule.seed ?? 0, n) >= rule.rule.probability) return false;
    matchCounted = true;
  }
  const counted = await store.countFiring(db, rule.id, matchCounted);
  if (counted === undefined) return false;
  if (counted.times !== null && counted.fired >= counted.times) {
    // Used up: every instance reads the rules again (and skips them if none is left).
    await store.refreshTag(db, 'request', platformId);
    deps.authCache?.clear();
  }
  return true;
}

/** What a fault's answer says, by status, and its code: one of that status's list in the reference. */
const ANSWERS: Record<number, [code: string, message: string]> = {
  429: ['RATE_LIMITED', 'Too many requests'],
  500: ['INTERNAL_ERROR', 'An internal error occurred'],
  // note: the reference lists no codes for 502 and 504; SERVICE_UNAVAILABLE (the code of 503:
  // a service behind the API did not answer) is the one that says what a gateway's 502 or 504 says.
  502: ['SERVICE_UNAVAILABLE', 'A gateway got no valid answer from the service'],
  503: ['SERVICE_UNAVAILABLE', 'The service is unavailable'],
  504: ['SERVICE_UNAVAILABLE', 'A gateway timed out waiting for the service'],
};

/** The error envelope of a fault's status. */
function envelope(status: number, ruleId: string): string {
  const [code, message] = ANSWERS[status]!;
  return JSON.stringify({
    status,
    code,
    message: `${message} (fault rule ${ruleId})`,
    details: { faultRuleId: ruleId },
  });
}

/**
 * Ends the connection at once, with no answer (a reset, where the platform allows one).
 * Returns false for an injected request (app.inject), which has no socket: its answer is
 * destroyed instead, and nothing must be written to it after.
 */
function closeConnection(request: FastifyRequest, reply: FastifyReply): boolean {
  const socket = request.raw.socket as { resetAndDestroy?: () => void; destroy?: () => void } | null;
  if (typeof socket?.resetAndDestroy === 'function') socket.resetAndDestroy();
  else if (typeof socket?.destroy === 'function') socket.destroy();
  else {
    reply.raw.destroy();
    return false;
  }
  return true;
}

function fire(request: FastifyRequest, reply: FastifyReply, rule: CompiledRule, done: (err?: Error) => void) {
  const { id, effect } = rule;
  const value =
    effect === 'status'
      ? rule.rule.status
      : effect === 'latencyMs'
        ? rule.rule.latencyMs
        : rule.rule.lostResponseStatus;
  markFault(request, { ruleId: id, effect, ...(value !== undefined ? { value } : {}) });
  request.log.info({ faultRuleId: id, effect, ...(value !== undefined ? { value } : {}) }, 'fault rule fired');
  switch (effect) {
    case 'status': {
      const status = rule.rule.status!;
      if (status === 429 || rule.rule.retryAfterSeconds !== undefined)
        reply.header('retry-after', String(rule.rule.retryAfterSeconds ?? RETRY_AFTER_SECONDS_DEFAULT));
      reply.code(status).type('application/json; charset=utf-8').send(envelope(status, id));
      return;
    }
    case 'reset':
      reply.hijack();
      closeConnection(request, reply);
      return;
    case 'latencyMs':
      request.faultOnSend = { ruleId: id, latencyMs: rule.rule.latencyMs! };
      return done();
    case 'lostResponse':
      request.faultOnSend = { ruleId: id, lostResponseStatus: rule.rule.lostResponseStatus };
      return done();
  }
}

/** Registers the hooks on the Grid scope; call before its routes are registered. */
export function installRequestFaults(grid: FastifyInstance, deps: Deps): void {
  grid.decorateRequest('faultOnSend', null);
  grid.addHook('onRoute', (route: RouteOptions) => {
    if (isOperationSchema(route.schema)) GRID_OPERATIONS.add(route.schema.operationId);
  });

  grid.addHook('preValidation', (request, reply, done) => {
    const tag = request.faultRules;
    if (tag === null) return done();
    const platformId = request.ctx.platformId;
    const operationId = (request.routeOptions.schema as { operationId: string }).operationId;
    let segments: string[] | undefined;
    const segmentsOf = () => {
      segments ??= requestSegments(request.url, BASE_PATH);
      return segments;
    };
    const decide = async () => {
      for (const rule of await rulesOf(deps, platformId, tag)) {
        if (matches(rule, request, operationId, segmentsOf) && (await fires(deps, platformId, rule))) return rule;
      }
      return undefined;
    };
    decide().then(
      (rule) => (rule === undefined ? done() : fire(request, reply, rule, done)),
      (err: Error) => done(err),
    );
  });

  // Delays held for answers, so a closing server sends them at once instead of waiting out
  // a long latency rule (and holds back no answer that comes after).
  const delayed = new Map<NodeJS.Timeout, () => void>();
  let closing = false;
  grid.addHook('preClose', (done) => {
    closing = true;
    for (const [timer, send] of delayed) {
      clearTimeout(timer);
      send();
    }
    delayed.clear();
    done();
  });

  grid.addHook('onSend', (request, reply, payload, done) => {
    const fault = request.faultOnSend;
    if (fault === null) return done(null, payload);
    request.faultOnSend = null;
    if ('latencyMs' in fault) {
      if (closing) return done(null, payload);
      const send = () => done(null, payload);
      const timer = setTimeout(() => {
        delayed.delete(timer);
        send();
      }, fault.latencyMs);
      delayed.set(timer, send);
      return;
    }
    // The operation ran and committed (a command's transaction ends before its answer is
    // made); now its answer is lost on the way.
    const status = fault.lostResponseStatus;
    if (status === undefined) {
      // Fastify's write of the answer then goes nowhere, and its request ends as usual.
      if (closeConnection(request, reply)) done(null, payload);
      return;
    }
    reply.code(status).type('application/json; charset=utf-8');
    done(null, envelope(status, fault.ruleId));
  });
}
