// Schema building blocks shared by every area. TypeBox schemas defined here validate
// requests, check responses (when RAILYARD_VALIDATE_RESPONSES=1) and become the
// project's own OpenAPI document, so there is one definition of each shape.

import { Type, type TSchema } from '@sinclair/typebox';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { FIRST_INSTANT_MS, LAST_INSTANT_MS } from '../clock.js';
import { ERROR_CODES, type ErrorStatus } from './errors.js';

/** Named schemas: registered once, referenced with Type.Ref, listed as OpenAPI components. */
const COMPONENTS = new Map<string, TSchema>();

export function component<T extends TSchema>(name: string, schema: T): T {
  const existing = COMPONENTS.get(name);
  if (existing !== undefined) return existing as T;
  const named = { ...schema, $id: name } as T;
  COMPONENTS.set(name, named);
  return named;
}

export function components(): ReadonlyMap<string, TSchema> {
  return COMPONENTS;
}

/** A named string format with its own check; the check returns null or what is wrong. */
export type FormatCheck = (value: string) => string | null;
const FORMATS = new Map<string, FormatCheck>();

export function defineFormat(name: string, check: FormatCheck): string {
  FORMATS.set(name, check);
  return name;
}

export function formats(): ReadonlyMap<string, FormatCheck> {
  return FORMATS;
}

type StandardFormat = RegExp | ((value: string) => boolean) | { validate: RegExp | ((value: string) => boolean) };

/** The check of a format: one defined here, else a standard one of ajv-formats (date, email…). */
export function formatCheck(name: string): FormatCheck | undefined {
  const own = FORMATS.get(name);
  if (own !== undefined) return own;
  const standard = (fullFormats as Record<string, StandardFormat | undefined>)[name];
  if (standard === undefined) return undefined;
  const test = standard instanceof RegExp || typeof standard === 'function' ? standard : standard.validate;
  const passes = test instanceof RegExp ? (value: string) => test.test(value) : test;
  return (value) => (passes(value) ? null : `must be a valid ${name}`);
}

/**
 * Rules railyard applies only for a platform in strict mode (`strictIdentifiers`): check
 * digits, checksums, encodings and shapes that the reference does not state. A request is
 * otherwise refused only for what the reference states, so fixtures built from its examples
 * work unchanged; strict mode catches what a production bank or chain would bounce. The rules
 * sit in the schema under STRICT_KEYWORD, so the OpenAPI document shows them, and the one
 * validator applies them when the body is marked strict (markStrict, http/validation.ts).
 */
export interface StrictRules {
  /** A format defined with defineFormat, whose check explains what is wrong. */
  format?: string;
  pattern?: string;
  minLength?: number;
  minItems?: number;
  uniqueItems?: boolean;
}

export const STRICT_KEYWORD = 'x-strict';

export function strictly<T extends TSchema>(schema: T, rules: StrictRules): T {
  return { ...schema, [STRICT_KEYWORD]: rules };
}

/** The strict rules most often given: a text that is not empty, a country of two capitals. */
export const NOT_EMPTY: StrictRules = { minLength: 1 };
export const COUNTRY_SHAPE: StrictRules = { pattern: '^[A-Z]{2}$' };

/** A string restricted to a list of values (an `enum`, so errors can name the allowed values). */
export function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

// ajv-formats' RFC 3339 check, which the date-time format below narrows (its entry for
// date-time is a definition object with a validate function).
const rfc3339DateTime = (fullFormats['date-time'] as { validate: (value: string) => boolean }).validate;

/**
 * RFC 3339 date-times that JavaScript's Date can hold, in years 0000 to 9999 of UTC. RFC 3339
 * also allows a leap second (second 60) and an offset of hours alone (`+01`); Date parses
 * neither, and every stored or compared date-time goes through Date, so those are refused as
 * input here rather than failing later.
 */
function checkDateTime(value: string): string | null {
  if (!rfc3339DateTime(value)) return 'must be a valid date-time';
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) {
    if (/[t\s]\d\d:\d\d:60/i.test(value))
      return 'must not be a leap second (second 60): give 59 seconds or the next minute';
    return 'must give its offset from UTC in hours and minutes (Z, ±hh:mm or ±hhmm)';
  }
  // Stored and compared as UTC text with a four-digit year: an offset must not carry the
  // instant out of years 0000 to 9999.
  if (ms < FIRST_INSTANT_MS || ms > LAST_INSTANT_MS) return 'must fall between years 0000 and 9999 in UTC';
  return null;
}

export const DateTime = Type.String({ format: defineFormat('date-time', checkDateTime) });

/**
 * A `oneOf` whose branch is chosen by the value of one property, as the reference's
 * discriminated unions are. Validation reports errors of the chosen branch only.
 * `mapping` appears in the OpenAPI document; the validator ignores it.
 */
export function DiscriminatedUnion<S = unknown>(
  propertyName: string,
  variants: TSchema[],
  mapping?: Record<string, string>,
) {
  const discriminator: Record<string, unknown> = { propertyName };
  if (mapping !== undefined) discriminator.mapping = mapping;
  // note: `type: 'object'` is what refuses null, a number, a string or an array here. Ajv's
  // discriminator keyword applies to objects only, and it takes the place of the oneOf, so
  // without it a value that is not an object passed unchecked.
  return Type.Unsafe<S>({ type: 'object', oneOf: variants, discriminator });
}

const FieldConstraint = Type.Object({
  format: Type.Optional(Type.String()),
  pattern: Type.Optional(Type.String()),
  enum: Type.Optional(Type.Array(Type.String())),
  minLength: Type.Optional(Type.Integer()),
  maxLength: Type.Optional(Type.Integer()),
});

export const FieldErrorSchema = component(
  'FieldError',
  Type.Object({
    field: Type.String(),
    constraint: Type.Optional(FieldConstraint),
    message: Type.Optional(Type.String()),
  }),
);

function errorSchema(status: ErrorStatus) {
  const details =
    status === 400
      ? Type.Object({ errors: Type.Optional(Type.Array(Type.Ref(FieldErrorSchema))) }, { additionalProperties: true })
      : Type.Object({}, { additionalProperties: true });
  return component(
    `Error${status}`,
    Type.Object({
      status: Type.Integer({ enum: [status] }),
      code: StringEnum(ERROR_CODES[status]),
      message: Type.String(),
      details: Type.Optional(details),
    }),
  );
}

/** Error<status> component schemas, one per status of the catalogue. */
export const ERROR_SCHEMAS = Object.fromEntries(
  (Object.keys(ERROR_CODES).map(Number) as ErrorStatus[]).map((status) => [status, errorSchema(status)]),
) as unknown as Record<ErrorStatus, TSchema>;

/** The page envelope of every paginated list. */
export function PageOf<T extends TSchema>(name: string, item: T, options: { totalCount?: boolean } = {}) {
  const properties = {
    data: Type.Array(item),
    hasMore: Type.Boolean(),
    nextCursor: Type.Optional(Type.String()),
    ...(options.totalCount === false ? {} : { totalCount: Type.Optional(Type.Integer()) }),
  };
  return component(name, Type.Object(properties));
}

/** Query parameters shared by paginated lists. */
export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  cursor: Type.Optional(Type.String()),
};

/** The header of operations that accept an Idempotency-Key (names are lower-case here). */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
});

export const CreatedUpdatedQuery = {
  createdAfter: Type.Optional(DateTime),
  createdBefore: Type.Optional(DateTime),
  updatedAfter: Type.Optional(DateTime),
  updatedBefore: Type.Optional(DateTime),
};

type SchemaNode = {
  $ref?: string;
  type?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  oneOf?: SchemaNode[];
  discriminator?: { propertyName: string };
  enum?: unknown[];
  const?: unknown;
};

function resolve(node: SchemaNode): SchemaNode {
  let current = node;
  for (let depth = 0; current.$ref !== undefined && depth < 16; depth++) {
    const target = COMPONENTS.get(current.$ref.replace('#/components/schemas/', ''));
    if (target === undefined) throw new Error(`unknown schema reference ${current.$ref}`);
    current = target as SchemaNode;
  }
  return current;
}

/**
 * A copy of `value` holding only what `schema` describes (unknown members dropped, at any
 * depth, following references and discriminated unions). Used before storing client input,
 * so what is echoed back is exactly what the contract defines.
 */
export function prune(value: unknown, schema: TSchema): unknown {
  const node = resolve(schema as SchemaNode);
  if (Array.isArray(value)) return node.items ? value.map((item) => prune(item, node.items as TSchema)) : value;
  if (value === null || typeof value !== 'object') return value;
  if (node.oneOf && node.discriminator) {
    const tag = (value as Record<string, unknown>)[node.discriminator.propertyName];
    const variant = node.oneOf.find((v) => {
      const prop = resolve(v).properties?.[node.discriminator!.propertyName];
      return prop?.const === tag || prop?.enum?.includes(tag);
    });
    return variant ? prune(value, variant as TSchema) : value;
  }
  if (!node.properties) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(node.properties)) {
    const member = (value as Record<string, unknown>)[key];
    if (member !== undefined) out[key] = prune(member, child as TSchema);
  }
  return out;
}
