// What a request's URL can carry that no operation can use: a path parameter that cannot name
// anything (U+0000 in it, longer than any id, or sent with broken percent-encoding) and a
// query value holding U+0000 (PostgreSQL cannot store the character in text). Each is
// answered in the error envelope with a status the operation declares, before validation.

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { apiError, invalidInput, type ApiError } from './errors.js';
import { isOperationSchema } from './route.js';
import { nulFields } from './validation.js';

/** No id, address or name railyard issues or looks up by path is longer than this. */
export const PATH_PARAM_CHARS_MAX = 256;

/**
 * How long a path parameter may be before the router gives up matching the route. It is
 * well above PATH_PARAM_CHARS_MAX, so an over-long id still finds its operation and is
 * answered as that operation declares; only a URL longer than any request line Node
 * accepts by default (16 KiB of headers) could pass it.
 */
export const ROUTER_PARAM_CHARS_MAX = 16 * 1024;

/** Requests whose path had broken percent-encoding (and was rewritten so it can be routed). */
const badlyEncoded = new WeakSet<IncomingMessage>();

/**
 * Fastify's rewriteUrl hook. The router refuses a path it cannot percent-decode with a reply
 * of its own, outside the error envelope and before any route is known. Such a path is
 * rewritten here with every `%` escaped, so it reaches its route with the broken text kept
 * as is in the parameter, and the request is remembered so checkUrl refuses it.
 */
export function rewriteBadlyEncodedUrl(request: IncomingMessage): string {
  const url = request.url ?? '/';
  if (!url.includes('%')) return url;
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  try {
    decodeURIComponent(path);
    return url;
  } catch {
    badlyEncoded.add(request);
    return path.replaceAll('%', '%25') + (queryAt === -1 ? '' : url.slice(queryAt));
  }
}

/** The path parameters of a request that cannot name anything. */
function unusableParams(request: FastifyRequest): string[] {
  const params = request.params as Record<string, string> | undefined;
  if (params === undefined) return [];
  const broken = badlyEncoded.has(request.raw);
  const names: string[] = [];
  for (const [name, value] of Object.entries(params)) {
    if (typeof value !== 'string') continue;
    if (value.length > PATH_PARAM_CHARS_MAX || value.includes('\u0000') || (broken && value.includes('%')))
      names.push(name);
  }
  return names;
}

/** A parameter that names nothing: 404 where the operation declares it, else a 400 naming it. */
function unusableParamError(request: FastifyRequest, names: string[]): ApiError {
  const schema = request.routeOptions.schema;
  const declares = (status: number) =>
    isOperationSchema(schema) && schema['x-error-statuses'].includes(status as never);
  if (!isOperationSchema(schema) || declares(404) || !declares(400))
    return apiError('REFERENCE_NOT_FOUND', 'No such resource');
  return invalidInput(
    names.map((field) => ({
      field,
      message: `must be a valid identifier (at most ${PATH_PARAM_CHARS_MAX} characters, no U+0000, well-formed percent-encoding)`,
    })),
  );
}

/**
 * The query of an operation that declares no 400, which therefore cannot refuse it: a value
 * given twice counts once (the first), and a value holding U+0000, or one its parameter does
 * not take (`limit=abc`, `limit=0`), counts as not given (so a default applies).
 */
function readQueryLeniently(query: Record<string, unknown>, schema: QuerySchema | undefined): void {
  for (const [name, value] of Object.entries(query)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === 'string' && (first.includes('\u0000') || !fits(first, schema?.properties?.[name]))) {
      delete query[name];
    } else query[name] = first;
  }
}

interface QueryProperty {
  type?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
}
interface QuerySchema {
  properties?: Record<string, QueryProperty>;
}

/** Whether a query value is one its parameter takes (an integer in range, a boolean, one of an enum). */
function fits(text: string, property: QueryProperty | undefined): boolean {
  if (property === undefined) return true;
  if (property.enum !== undefined && !property.enum.includes(text)) return false;
  if (property.type === 'boolean') return text === 'true' || text === 'false';
  if (property.type === 'integer') {
    if (!/^-?\d{1,15}$/.test(text)) return false;
    const n = Number(text);
    return (
      (property.minimum === undefined || n >= property.minimum) &&
      (property.maximum === undefined || n <= property.maximum)
    );
  }
  return true;
}

/**
 * preValidation hook of every route: refuses path parameters that name nothing and query
 * values holding U+0000. An operation that declares no 400 reads its query leniently instead.
 */
export function checkUrl(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) {
  const params = unusableParams(request);
  if (params.length > 0) return done(unusableParamError(request, params));
  const schema = request.routeOptions.schema;
  if (isOperationSchema(schema) && !schema['x-error-statuses'].includes(400)) {
    if (request.query !== null && typeof request.query === 'object')
      readQueryLeniently(request.query as Record<string, unknown>, schema.querystring as QuerySchema | undefined);
    return done();
  }
  if (!request.url.includes('%00')) return done();
  const query = nulFields(request.query);
  done(query.length > 0 ? invalidInput(query) : undefined);
}
