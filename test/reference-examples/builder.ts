// Request bodies built from the reference's own example values, read from grid-openapi.yaml
// at run time (never copied here): the suites in this folder send them to railyard, which
// must take everything the reference takes.
//
// A body is built from a schema by walking it:
// - allOf parts are merged; a discriminated oneOf takes the variant the caller names for it
//   (by the union's path in the body), else the first of its mapping;
// - a property takes its own `example`, else the one the enclosing schema's object-level
//   `example` gives it, else (objects and arrays) what its own schema builds;
// - an optional property is sent only when it carries an example (or builds something that
//   does); a required property without one gets a minimal valid value from FILLS below, and
//   building fails if FILLS has none, so no value is ever made up silently;
// - readOnly properties are left out (they appear in answers only).
// Every property filled is reported, with its path, so a test can say which values are not
// the reference's.

import { referenceSpec } from '../reference.js';
import { referenceOperation } from '../fuzz/oracle.js';

type Schema = Record<string, any>;

/**
 * Minimal valid values for required properties that have no example anywhere in the
 * reference, matched against `<schema that declares the property>.<property>`. Each says why.
 */
export const FILLS: readonly { where: RegExp; value: unknown; why: string }[] = [
  {
    where: /^[A-Za-z]+Beneficiary\.fullName$/,
    value: 'Ana Example',
    why: 'every bank beneficiary requires fullName and none of their schemas gives it an example',
  },
  {
    where: /^[A-Za-z]+Beneficiary\.countryOfResidence$/,
    value: 'US',
    why: "required of some bank beneficiaries (EUR, GTQ, JMD…) without an example: Address.country's example",
  },
  {
    where: /^[A-Za-z]+Beneficiary\.phoneNumber$/,
    value: '+1234567890',
    why: 'required of the GTQ and JMD beneficiaries without an example: the phone example of the account schemas',
  },
  {
    where: /^BusinessBeneficiary\.legalName$/,
    value: 'Example Holdings Ltd',
    why: 'a business beneficiary requires legalName and the reference gives it no example',
  },
  {
    where: /^EndUserTermsConsentRequest\.acceptedAt$/,
    value: '2025-05-30T12:00:00Z',
    why: "required date-time of the terms consent without an example: a moment before the suites' clock (June 2025)",
  },
];

export interface Built {
  body: any;
  /** Paths in the body whose value is a fill (FILLS) rather than an example of the reference. */
  filled: string[];
  /** The variant taken at each discriminated union of the body, by the union's path. */
  variants: Record<string, string>;
}

export interface BuildOptions {
  /** The variant of each discriminated union, by the union's path in the body ('' for the root). */
  variants?: Record<string, string>;
}

function schemas(): Record<string, Schema> {
  return referenceSpec().components.schemas;
}

function refName(ref: string): string {
  return ref.split('/').pop()!;
}

/** A union's variants: its discriminator's tags with the schema each selects. */
export function variantsOf(union: Schema | string): { tag: string; schema: string }[] {
  const node = typeof union === 'string' ? schemas()[union]! : union;
  const mapping: Record<string, string> = node.discriminator?.mapping ?? {};
  return Object.entries(mapping).map(([tag, ref]) => ({ tag, schema: refName(ref) }));
}

interface Walk {
  options: BuildOptions;
  filled: string[];
  /** The unions met, in order, with their tags. */
  unions: { path: string; tags: string[]; chosen: string }[];
}

const join = (path: string, key: string) => (path === '' ? key : `${path}.${key}`);

/** An object schema flattened: its properties, required names and object-level example, through allOf and $ref. */
interface Flat {
  properties: Map<string, { schema: Schema; owner: string }>;
  required: Set<string>;
  example: Record<string, unknown>;
}

function flatten(node: Schema, owner: string, path: string, walk: Walk, into?: Flat): Flat {
  const flat = into ?? { properties: new Map(), required: new Set(), example: {} };
  if (node.$ref) return flatten(schemas()[refName(node.$ref)]!, refName(node.$ref), path, walk, flat);
  if (node.discriminator && (node.oneOf || node.anyOf)) {
    const variants = variantsOf(node);
    const chosen = walk.options.variants?.[path] ?? variants[0]!.tag;
    const variant = variants.find((v) => v.tag === chosen);
    if (variant === undefined) throw new Error(`no variant ${chosen} at ${path || '(root)'}`);
    walk.unions.push({ path, tags: variants.map((v) => v.tag), chosen });
    flatten(schemas()[variant.schema]!, variant.schema, path, walk, flat);
    flat.properties.set(node.discriminator.propertyName, { schema: { enum: [chosen] }, owner });
    flat.required.add(node.discriminator.propertyName);
    return flat;
  }
  if (node.oneOf || node.anyOf) return flatten((node.oneOf ?? node.anyOf)[0], owner, path, walk, flat);
  for (const part of node.allOf ?? []) flatten(part, owner, path, walk, flat);
  if (node.example && typeof node.example === 'object' && !Array.isArray(node.example))
    flat.example = { ...node.example, ...flat.example };
  for (const [name, schema] of Object.entries<Schema>(node.properties ?? {})) {
    const known = flat.properties.get(name);
    // A later part that narrows a property (an enum of one tag) keeps the earlier example.
    flat.properties.set(name, known && !schema.example && known.schema.example ? known : { schema, owner });
  }
  for (const name of node.required ?? []) flat.required.add(name);
  return flat;
}

function resolve(node: Schema): Schema {
  return node.$ref ? resolve(schemas()[refName(node.$ref)]!) : node;
}

function isObjectSchema(node: Schema): boolean {
  const target = resolve(node);
  return (
    target.type === 'object' ||
    target.properties !== undefined ||
    target.allOf !== undefined ||
    (target.oneOf !== undefined && target.discriminator !== undefined)
  );
}

/** The value of one property, or undefined when an optional property has nothing to send. */
function propertyValue(
  node: Schema,
  owner: string,
  name: string,
  path: string,
  required: boolean,
  inherited: unknown,
  walk: Walk,
): unknown {
  if (node.readOnly === true || resolve(node).readOnly === true) return undefined;
  if (node.example !== undefined) return structuredClone(node.example);
  const target = resolve(node);
  if (target.example !== undefined && !isObjectSchema(node)) return structuredClone(target.example);
  if (inherited !== undefined) return structuredClone(inherited);
  if (isObjectSchema(node)) {
    const built = objectOf(node, owner, path, walk, required);
    if (built !== undefined) return built;
  } else if (target.type === 'array' && target.items) {
    const item = isObjectSchema(target.items)
      ? objectOf(target.items, owner, `${path}[0]`, walk, required)
      : resolve(target.items).example;
    if (item !== undefined) return [structuredClone(item)];
  }
  if (!required) return undefined;
  if (target.enum?.length === 1 || target.const !== undefined) return target.const ?? target.enum[0];
  if (Array.isArray(target.enum)) {
    // A required choice without an example: its first value, reported as filled.
    walk.filled.push(path);
    return target.enum[0];
  }
  const fill = FILLS.find((f) => f.where.test(`${owner}.${name}`));
  if (fill === undefined) throw new Error(`${path}: required, no example in the reference and no fill (${owner})`);
  walk.filled.push(path);
  return structuredClone(fill.value);
}

function objectOf(node: Schema, owner: string, path: string, walk: Walk, required: boolean): any {
  const flat = flatten(node, owner, path, walk);
  const out: Record<string, unknown> = {};
  let carriesExample = false;
  for (const [name, { schema, owner: declaredIn }] of flat.properties) {
    const isRequired = flat.required.has(name);
    const before = walk.filled.length;
    const value = propertyValue(schema, declaredIn, name, join(path, name), isRequired, flat.example[name], walk);
    if (value === undefined) continue;
    out[name] = value;
    const isTag = resolve(schema).enum?.length === 1;
    if (!isTag && walk.filled.length === before) carriesExample = true;
  }
  return carriesExample || required ? out : undefined;
}

/** A body for the schema `schemaName` (or a schema object) from the reference's examples. */
export function buildExample(schema: string | Schema, options: BuildOptions = {}): Built {
  const walk: Walk = { options, filled: [], unions: [] };
  const node = typeof schema === 'string' ? { $ref: `#/components/schemas/${schema}` } : schema;
  const body = objectOf(node, typeof schema === 'string' ? schema : '(inline)', '', walk, true);
  return { body, filled: walk.filled, variants: Object.fromEntries(walk.unions.map((u) => [u.path, u.chosen])) };
}

/**
 * A body for every combination of variants of the schema's discriminated unions (those not
 * fixed in `options.variants`), nested unions included: one per variant of each.
 */
export function buildEveryVariant(schema: string | Schema, options: BuildOptions = {}): Built[] {
  const fixed = options.variants ?? {};
  const walk: Walk = { options: { variants: fixed }, filled: [], unions: [] };
  const node = typeof schema === 'string' ? { $ref: `#/components/schemas/${schema}` } : schema;
  objectOf(node, typeof schema === 'string' ? schema : '(inline)', '', walk, true);
  const open = walk.unions.find((u) => !(u.path in fixed));
  if (open === undefined) return [buildExample(schema, { variants: fixed })];
  return open.tags.flatMap((tag) => buildEveryVariant(schema, { variants: { ...fixed, [open.path]: tag } }));
}

/** The names of the properties a schema declares (through allOf), readOnly ones included. */
export function propertyNames(schemaName: string): string[] {
  const walk: Walk = { options: {}, filled: [], unions: [] };
  return [...flatten({ $ref: `#/components/schemas/${schemaName}` }, schemaName, '', walk).properties.keys()];
}

/** The request body schema of an operation, and its named examples. */
export function requestBodyOf(operationId: string): { schema: Schema; examples: Record<string, any> } {
  for (const item of Object.values<any>(referenceSpec().paths)) {
    for (const op of Object.values<any>(item)) {
      if (op?.operationId !== operationId) continue;
      const content = op.requestBody?.content?.['application/json'];
      if (!content) throw new Error(`${operationId} takes no JSON body`);
      const examples: Record<string, any> = {};
      for (const [name, example] of Object.entries<any>(content.examples ?? {}))
        examples[name] = structuredClone(example.value);
      return { schema: content.schema, examples };
    }
  }
  throw new Error(`no operation ${operationId} in the reference`);
}

/** What the reference's own schema finds wrong with `body` as the request of `operationId` ([] when nothing). */
export function referenceProblems(operationId: string, body: unknown): string[] {
  const validate = referenceOperation(operationId)?.body?.json;
  if (validate === undefined) throw new Error(`no JSON body schema for ${operationId}`);
  if (validate(body)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message}`);
}

// ------------------------------------------------------------------------------ real ids

/** The value at a dotted path (`a.b[0].c`). */
function getAt(body: any, path: string): unknown {
  let node = body;
  for (const key of splitPath(path)) {
    if (node === null || typeof node !== 'object') return undefined;
    node = node[key];
  }
  return node;
}

/** Sets the value at a dotted path; intermediate objects must exist. */
function setAt(body: any, path: string, value: unknown): void {
  const keys = splitPath(path);
  let node = body;
  for (const key of keys.slice(0, -1)) node = node[key];
  if (value === undefined) delete node[keys.at(-1)!];
  else node[keys.at(-1)!] = value;
}

function splitPath(path: string): (string | number)[] {
  return path
    .split('.')
    .flatMap((part) => part.split(/\[(\d+)\]/).filter((p) => p !== ''))
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
}

/** Ids of the reference's examples (`Customer:019542f5-…`): they name nothing in railyard. */
const EXAMPLE_ID = /^[A-Z][A-Za-z]+:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The paths of a body that hold an example id. */
function exampleIds(body: unknown, path = ''): string[] {
  if (typeof body === 'string') return EXAMPLE_ID.test(body) ? [path] : [];
  if (Array.isArray(body)) return body.flatMap((item, i) => exampleIds(item, `${path}[${i}]`));
  if (body !== null && typeof body === 'object')
    return Object.entries(body).flatMap(([k, v]) => exampleIds(v, join(path, k)));
  return [];
}

/**
 * `body` with real ids at the given paths. Every example id in the body must be replaced:
 * one left behind would make the test pass or fail on a 404 instead of on the body.
 */
export function withIds(body: any, ids: Record<string, string>): any {
  const out = structuredClone(body);
  for (const [path, id] of Object.entries(ids)) setAt(out, path, id);
  const left = exampleIds(body).filter((path) => getAt(out, path) === getAt(body, path));
  if (left.length > 0) throw new Error(`example ids left at ${left.join(', ')}`);
  return out;
}
