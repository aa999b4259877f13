// Operation metadata rides on each route's schema: operationId, tag, the permission it
// needs, its success responses and the error statuses the reference declares for it. The
// error handler, the auth hook and the OpenAPI document all read it from there.

import type { TSchema } from '@sinclair/typebox';
import type { ErrorStatus } from './errors.js';
import type { Permission } from './deps.js';
import { ERROR_SCHEMAS } from './schemas.js';
import { Type } from '@sinclair/typebox';

export interface OperationSpec {
  operationId: string;
  tag: string;
  summary: string;
  /** null: no credentials needed. */
  permission: Permission | null;
  /** 'agent': the caller is an agent with a bearer token (the AgentAuth scheme), not a platform. */
  auth?: 'agent';
  /** The request body may be left out (the reference marks it not required); an absent one reads as {}. */
  bodyOptional?: boolean;
  /** Success statuses; null means no body (204). */
  success: Record<number, TSchema | null>;
  errors: ErrorStatus[];
  /**
   * A multipart/form-data body, for the OpenAPI document only: Fastify does not validate
   * multipart bodies, the service checks the form it reads (see http/multipart.ts).
   */
  multipartBody?: TSchema;
}

export interface OperationSchema {
  operationId: string;
  tags: string[];
  summary: string;
  params?: TSchema;
  querystring?: TSchema;
  body?: TSchema;
  headers?: TSchema;
  response: Record<number, TSchema>;
  'x-permission': Permission | null;
  'x-auth'?: 'agent';
  'x-error-statuses': ErrorStatus[];
  'x-no-body-statuses': number[];
  'x-multipart-body'?: TSchema;
  'x-body-optional'?: boolean;
}

const NoBody = Type.Null();

type Part<T> = T extends TSchema ? T : undefined;

/** Builds a Fastify route schema from an operation's spec. */
export function op<
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  B extends TSchema | undefined = undefined,
  H extends TSchema | undefined = undefined,
>(spec: OperationSpec & { params?: P; querystring?: Q; body?: B; headers?: H }) {
  const response: Record<number, TSchema> = {};
  const noBody: number[] = [];
  for (const [status, schema] of Object.entries(spec.success)) {
    if (schema === null) noBody.push(Number(status));
    response[Number(status)] = schema ?? NoBody;
  }
  for (const status of spec.errors) response[status] = Type.Ref(ERROR_SCHEMAS[status]);
  const schema = {
    operationId: spec.operationId,
    tags: [spec.tag],
    summary: spec.summary,
    response,
    'x-permission': spec.permission,
    ...(spec.auth ? { 'x-auth': spec.auth } : {}),
    'x-error-statuses': spec.errors,
    'x-no-body-statuses': noBody,
    ...(spec.bodyOptional ? { 'x-body-optional': true } : {}),
    ...(spec.params ? { params: spec.params } : {}),
    ...(spec.querystring ? { querystring: spec.querystring } : {}),
    ...(spec.body ? { body: spec.body } : {}),
    ...(spec.headers ? { headers: spec.headers } : {}),
    ...(spec.multipartBody ? { 'x-multipart-body': spec.multipartBody } : {}),
  };
  // note: the response map is typed loosely on purpose: handlers return plain objects that
  // the serializer checks at run time, and typing every union here overwhelms the compiler.
  return schema as unknown as Omit<OperationSchema, 'params' | 'querystring' | 'body' | 'headers' | 'response'> & {
    params: Part<P>;
    querystring: Part<Q>;
    body: Part<B>;
    headers: Part<H>;
    response: unknown;
  };
}

export function isOperationSchema(schema: unknown): schema is OperationSchema {
  return typeof schema === 'object' && schema !== null && typeof (schema as OperationSchema).operationId === 'string';
}
