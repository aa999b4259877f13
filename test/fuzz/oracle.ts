// The fuzz suite's oracle: what the reference (not railyard) says of a request and of an
// error answer. It reads grid-openapi.yaml on its own, with its own validator, so a mistake
// in railyard's schemas cannot hide the same mistake here.
//
// - Request bodies are checked against the operation's requestBody schema (JSON Schema
//   2020-12). A oneOf with a discriminator is checked against the variant its tag selects
//   (the reference gives every discriminator a mapping), readOnly members are not required.
//   Numbers must be finite: a JSON number past the double range (1e309) is no amount.
// - Query and header parameters are read from their text as the reference types them.
// - Multipart bodies are checked for their required parts only.

import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { referenceSpec } from '../reference.js';

type AddFormats = (ajv: Ajv2020) => Ajv2020;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ??
  addFormatsModule) as unknown as AddFormats;

export interface ReferenceParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: any;
  validate: ValidateFunction;
}

export interface ReferenceOperation {
  operationId: string;
  method: string;
  /** The path template, as `/customers/{customerId}`. */
  path: string;
  parameters: ReferenceParameter[];
  /** The media types of the request body, with whether one is required. */
  body: { required: boolean; json?: ValidateFunction; multipartRequired?: string[] } | undefined;
  declaredStatuses: number[];
}

export interface RequestUnderTest {
  query: Record<string, string[]>;
  headers: Record<string, string>;
  contentType: string | undefined;
  /** The raw body text, or undefined when there is none. */
  bodyText: string | undefined;
  /** The names of the parts of a multipart body, when it is one the test built. */
  multipartParts?: string[];
}

let loaded:
  | { operations: Map<string, ReferenceOperation>; errorCodes: Map<number, string[]>; ajv: Ajv2020 }
  | undefined;

/** The reference document with discriminated unions rewritten as if/then dispatch. */
function prepare(node: any, key?: string): any {
  if (Array.isArray(node)) return node.map((item) => prepare(item));
  if (node === null || typeof node !== 'object') return node;
  if (key === 'example' || key === 'examples') return undefined;
  const out: any = {};
  for (const [k, v] of Object.entries(node)) {
    const prepared = prepare(v, k);
    if (prepared !== undefined) out[k] = prepared;
  }
  // readOnly members appear in answers only; a request need not carry them.
  if (out.properties && Array.isArray(out.required)) {
    out.required = out.required.filter((name: string) => out.properties[name]?.readOnly !== true);
  }
  const union = out.oneOf ?? out.anyOf;
  if (node.discriminator?.mapping && Array.isArray(union)) {
    const prop: string = node.discriminator.propertyName;
    const mapping: Record<string, string> = node.discriminator.mapping;
    const tags = Object.keys(mapping);
    delete out.oneOf;
    delete out.anyOf;
    delete out.discriminator;
    out.type = 'object';
    out.required = [...new Set([...(out.required ?? []), prop])];
    out.properties = { ...(out.properties ?? {}), [prop]: { enum: tags } };
    out.allOf = [
      ...(out.allOf ?? []),
      ...tags.map((tag) => ({
        if: { properties: { [prop]: { const: tag } }, required: [prop] },
        // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, not a promise
        then: { $ref: `ref.json${mapping[tag]}` },
      })),
    ];
  }
  if (typeof out.$ref === 'string' && out.$ref.startsWith('#')) out.$ref = `ref.json${out.$ref}`;
  return out;
}

function load() {
  if (loaded !== undefined) return loaded;
  const spec = referenceSpec();
  const ajv = new Ajv2020({ strict: false, allErrors: true, strictNumbers: true, validateFormats: true });
  addFormats(ajv);
  for (const format of ['int64', 'int32', 'double', 'float', 'byte', 'binary', 'password']) ajv.addFormat(format, true);
  ajv.addSchema({ $id: 'ref.json', components: { schemas: prepare(spec.components.schemas) } });

  const parameter = (p: any): any => (p.$ref ? spec.components.parameters[p.$ref.split('/').pop()] : p);
  const operations = new Map<string, ReferenceOperation>();
  for (const [path, item] of Object.entries<any>(spec.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (typeof op?.operationId !== 'string') continue;
      const parameters: ReferenceParameter[] = [...(item.parameters ?? []), ...(op.parameters ?? [])]
        .map(parameter)
        .map((p: any) => ({
          name: p.in === 'header' ? String(p.name).toLowerCase() : p.name,
          in: p.in,
          required: p.required === true,
          schema: p.schema ?? {},
          validate: ajv.compile(prepare(p.schema ?? {})),
        }));
      let body: ReferenceOperation['body'];
      let requestBody = op.requestBody;
      if (requestBody?.$ref) requestBody = spec.components.requestBodies[requestBody.$ref.split('/').pop()];
      if (requestBody) {
        const content = requestBody.content ?? {};
        body = { required: requestBody.required === true };
        if (content['application/json']) body.json = ajv.compile(prepare(content['application/json'].schema));
        if (content['multipart/form-data']) {
          let schema = content['multipart/form-data'].schema;
          if (schema?.$ref) schema = spec.components.schemas[schema.$ref.split('/').pop()];
          body.multipartRequired = schema?.required ?? [];
        }
      }
      operations.set(op.operationId, {
        operationId: op.operationId,
        method: method.toUpperCase(),
        path,
        parameters,
        body,
        declaredStatuses: Object.keys(op.responses ?? {}).map(Number),
      });
    }
  }
  const errorCodes = new Map<number, string[]>();
  for (const [name, schema] of Object.entries<any>(spec.components.schemas)) {
    const match = /^Error(\d{3})$/.exec(name);
    if (match) errorCodes.set(Number(match[1]), schema.properties.code.enum);
  }
  loaded = { operations, errorCodes, ajv };
  return loaded;
}

export function referenceOperation(operationId: string): ReferenceOperation | undefined {
  return load().operations.get(operationId);
}

export function referenceOperations(): ReferenceOperation[] {
  return [...load().operations.values()];
}

/** The error codes the reference allows under a status (its Error<status> schema). */
export function errorCodesOf(status: number): string[] | undefined {
  return load().errorCodes.get(status);
}

/** A parameter's text read as its schema types it (the way a server would parse it). */
function readParameter(schema: any, values: string[]): unknown {
  let resolved = schema;
  if (resolved?.$ref) resolved = referenceSpec().components.schemas[resolved.$ref.split('/').pop()];
  const one = (text: string): unknown => {
    const type = resolved?.type === 'array' ? resolved.items?.type : resolved?.type;
    if (type === 'integer' || type === 'number')
      return /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text) ? Number(text) : text;
    if (type === 'boolean') return text === 'true' ? true : text === 'false' ? false : text;
    return text;
  };
  if (resolved?.type === 'array') return values.map(one);
  return values.length === 1 ? one(values[0]!) : values.map(one);
}

/** What the reference finds wrong with a request (empty when it finds nothing). */
export function requestProblems(op: ReferenceOperation, request: RequestUnderTest): string[] {
  const { ajv } = load();
  const problems: string[] = [];
  for (const p of op.parameters) {
    if (p.in === 'path') continue;
    const values =
      p.in === 'query'
        ? request.query[p.name]
        : request.headers[p.name] !== undefined
          ? [request.headers[p.name]!]
          : undefined;
    if (values === undefined || values.length === 0) {
      if (p.required) problems.push(`${p.in} ${p.name} is required`);
      continue;
    }
    if (values.some((v) => v.includes('\u0000'))) problems.push(`${p.in} ${p.name} holds U+0000`);
    const value = readParameter(p.schema, values);
    if (!p.validate(value)) problems.push(`${p.in} ${p.name}: ${ajv.errorsText(p.validate.errors)}`);
  }
  const body = op.body;
  const text = request.bodyText ?? '';
  if (body === undefined) return problems;
  const mediaType = (request.contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (text.trim() === '') {
    if (body.required) problems.push('the body is required');
    return problems;
  }
  if (body.json !== undefined && mediaType === 'application/json') {
    let parsed: unknown;
    try {
      // RFC 8259 lets a parser ignore a leading byte-order mark.
      parsed = JSON.parse(text.replace(/^\uFEFF/, ''));
    } catch {
      problems.push('the body is not JSON');
      return problems;
    }
    if (!body.json(parsed)) problems.push(`body: ${ajv.errorsText(body.json.errors)}`);
    // Not a rule of the reference but of every store railyard runs on: PostgreSQL cannot hold
    // U+0000 in text, so such a body must be refused, never stored.
    if (JSON.stringify(parsed).includes('\\u0000')) problems.push('the body holds U+0000');
    return problems;
  }
  if (body.multipartRequired !== undefined && mediaType === 'multipart/form-data') {
    if (request.multipartParts === undefined) return problems;
    for (const name of body.multipartRequired)
      if (!request.multipartParts.includes(name)) problems.push(`multipart part ${name} is required`);
    return problems;
  }
  problems.push(`the reference takes no ${mediaType || 'untyped'} body here`);
  return problems;
}
