// The project's own OpenAPI 3.1 documents, built from the same schemas the routes validate
// with: every operation registered with op() metadata, and every named component. One
// document describes the Grid API under its base path, another railyard's own endpoints
// under /_railyard.

import type { FastifyInstance, RouteOptions } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import { type ADMIN_PREFIX, API_VERSION, BASE_PATH } from '../config.js';
import { isOperationSchema, type OperationSchema } from './route.js';
import { components } from './schemas.js';

interface CollectedOperation {
  method: string;
  url: string;
  schema: OperationSchema;
}

/** JSON copy of a schema with references pointed at #/components/schemas and $id dropped. */
function toOpenApi(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toOpenApi);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$id') continue;
    if (key === '$ref' && typeof value === 'string' && !value.startsWith('#'))
      out[key] = `#/components/schemas/${value}`;
    else out[key] = toOpenApi(value);
  }
  return out;
}

function parameters(schema: TSchema | undefined, location: 'path' | 'query' | 'header') {
  const object = schema as { properties?: Record<string, TSchema>; required?: string[] } | undefined;
  return Object.entries(object?.properties ?? {}).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || (object?.required ?? []).includes(name),
    schema: toOpenApi(property),
  }));
}

export class OpenApiCollector {
  private readonly operations: CollectedOperation[] = [];

  /** Registers the hook that sees every route; call before routes are added. */
  attach(app: FastifyInstance): void {
    app.addHook('onRoute', (route: RouteOptions) => {
      if (!isOperationSchema(route.schema)) return;
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods)
        this.operations.push({ method: method.toLowerCase(), url: route.url, schema: route.schema });
    });
  }

  /** The document of the operations under `prefix`: BASE_PATH (the Grid API) or ADMIN_PREFIX. */
  document(prefix: typeof BASE_PATH | typeof ADMIN_PREFIX = BASE_PATH): Record<string, unknown> {
    const paths: Record<string, Record<string, unknown>> = {};
    for (const { method, url, schema } of this.operations) {
      // HEAD routes are Fastify's automatic twins of GET routes, not operations of their own.
      if (!url.startsWith(`${prefix}/`) || method === 'head') continue;
      const path = url.slice(prefix.length).replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      const responses: Record<string, unknown> = {};
      for (const [status, body] of Object.entries(schema.response)) {
        const noBody = schema['x-no-body-statuses'].includes(Number(status));
        responses[status] = noBody
          ? { description: 'No content' }
          : {
              description: Number(status) < 300 ? 'Success' : 'Error',
              content: { 'application/json': { schema: toOpenApi(body) } },
            };
      }
      paths[path] ??= {};
      paths[path][method] = {
        operationId: schema.operationId,
        tags: schema.tags,
        summary: schema.summary,
        security:
          schema['x-permission'] === null
            ? []
            : schema['x-auth'] === 'agent'
              ? [{ AgentAuth: [] }]
              : [{ BasicAuth: [] }],
        ...(schema['x-permission'] && schema['x-auth'] !== 'agent'
          ? { 'x-railyard-permission': schema['x-permission'] }
          : {}),
        parameters: [
          ...parameters(schema.params, 'path'),
          ...parameters(schema.querystring, 'query'),
          ...parameters(schema.headers, 'header'),
        ],
        ...(schema.body
          ? {
              requestBody: {
                required: schema['x-body-optional'] !== true,
                content: { 'application/json': { schema: toOpenApi(schema.body) } },
              },
            }
          : {}),
        ...(schema['x-multipart-body']
          ? {
              requestBody: {
                required: true,
                content: { 'multipart/form-data': { schema: toOpenApi(schema['x-multipart-body']) } },
              },
            }
          : {}),
        responses,
      };
    }
    return {
      openapi: '3.1.0',
      info: {
        title:
          prefix === BASE_PATH
            ? 'railyard: the Grid API as a local sandbox server'
            : "railyard's own endpoints: clock, settings, ledger audit, webhook log",
        version: API_VERSION,
      },
      servers: [{ url: prefix }],
      paths,
      components: {
        securitySchemes: {
          AgentAuth: {
            type: 'http',
            scheme: 'bearer',
            description:
              'The accessToken an agent gets by redeeming its device code (POST /agents/device-codes/{code}/redeem).',
          },
          BasicAuth: {
            type: 'http',
            scheme: 'basic',
            description: 'Username: API token id or client id. Password: the client secret.',
          },
        },
        schemas: Object.fromEntries([...components()].map(([name, schema]) => [name, toOpenApi(schema)])),
      },
    };
  }
}
