// Request validation with Ajv: bodies are checked exactly as sent (no type coercion);
// query strings and path parameters are coerced from text. Every error of a request is
// collected (allErrors) and turned into the reference's FieldError list.

import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';
import type { FieldError } from './errors.js';
import { components, formatCheck, formats, STRICT_KEYWORD, type StrictRules } from './schemas.js';

// ajv-formats is published as CommonJS with a default export.
type AddFormats = (ajv: Ajv) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ??
  addFormatsModule) as unknown as AddFormats;

/** Drops what Ajv cannot take (discriminator mappings) without touching the original. */
function forAjv(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(forAjv);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'discriminator' && value && typeof value === 'object') {
      out[key] = { propertyName: (value as { propertyName: string }).propertyName };
    } else {
      out[key] = forAjv(value);
    }
  }
  return out;
}

// ----------------------------------------------------------------------------- strict mode

/** Marks a parsed body as sent by a platform in strict mode; see StrictRules. */
const STRICT_BODY = Symbol('railyard.strictBody');

/**
 * Marks `body` so that validating it applies the strict rules of its schema. The mark is a
 * symbol, invisible to JSON and to the services, so the body is otherwise the one sent.
 */
export function markStrict(body: unknown): void {
  if (body !== null && typeof body === 'object')
    Object.defineProperty(body, STRICT_BODY, { value: true, enumerable: false });
}

interface StrictProblem {
  rule: keyof StrictRules;
  limit: string | number;
  problem: string;
}

/** What breaks the first strict rule `value` fails, or null. */
function strictProblem(rules: StrictRules, value: unknown): StrictProblem | null {
  if (Array.isArray(value)) {
    if (rules.minItems !== undefined && value.length < rules.minItems)
      return { rule: 'minItems', limit: rules.minItems, problem: `must have at least ${rules.minItems} item(s)` };
    if (rules.uniqueItems === true && new Set(value.map((item) => JSON.stringify(item))).size < value.length)
      return { rule: 'uniqueItems', limit: 1, problem: 'must not repeat an item' };
    return null;
  }
  if (typeof value !== 'string') return null;
  if (rules.minLength !== undefined && value.length < rules.minLength)
    return {
      rule: 'minLength',
      limit: rules.minLength,
      problem: rules.minLength === 1 ? 'must not be empty' : `must be at least ${rules.minLength} characters long`,
    };
  if (rules.pattern !== undefined && !new RegExp(rules.pattern, 'u').test(value))
    return { rule: 'pattern', limit: rules.pattern, problem: `must match the pattern ${rules.pattern}` };
  if (rules.format !== undefined) {
    const problem = formatCheck(rules.format)?.(value) ?? null;
    if (problem !== null) return { rule: 'format', limit: rules.format, problem };
  }
  return null;
}

type StrictKeywordCheck = ((
  rules: StrictRules,
  data: unknown,
  parentSchema: unknown,
  context: { rootData: unknown },
) => boolean) & { errors?: Partial<ErrorObject>[] };

/** The STRICT_KEYWORD keyword: passes unless the body is marked strict and a rule fails. */
const strictKeyword: StrictKeywordCheck = function checkStrict(rules, data, _parentSchema, context) {
  const root = context.rootData as Record<symbol, unknown> | null;
  if (root === null || typeof root !== 'object' || root[STRICT_BODY] !== true) return true;
  const found = strictProblem(rules, data);
  if (found === null) return true;
  strictKeyword.errors = [{ keyword: STRICT_KEYWORD, message: found.problem, params: { ...found } }];
  return false;
};

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    discriminator: true,
    strict: false,
    // A JSON number past the double range (1e309) parses as Infinity: no amount, count or
    // limit, so it fails `number` and `integer` like NaN does.
    strictNumbers: true,
    useDefaults: true,
    coerceTypes: coerce ? 'array' : false,
    removeAdditional: false,
    verbose: true,
  });
  addFormats(ajv);
  for (const [name, check] of formats())
    ajv.addFormat(name, { type: 'string', validate: (value: string) => check(value) === null });
  ajv.addKeyword({ keyword: STRICT_KEYWORD, schemaType: 'object', errors: true, validate: strictKeyword as never });
  for (const schema of components().values()) ajv.addSchema(forAjv(schema) as object);
  return ajv;
}

export interface Validators {
  body: Ajv;
  text: Ajv;
  compile(schema: TSchema, part: 'body' | 'text'): ValidateFunction;
}

let shared: Validators | undefined;

/**
 * The validators of the process. Schemas are module constants, so one pair of Ajv
 * instances serves every app built in this process, and each schema compiles once.
 */
export function createValidators(): Validators {
  if (shared !== undefined) return shared;
  // Made on first use: each takes a few hundred milliseconds (its meta-schema and every
  // component schema), which a start-up need not wait for.
  let bodyAjv: Ajv | undefined;
  let textAjv: Ajv | undefined;
  const ajvFor = (part: 'body' | 'text'): Ajv => {
    if (part === 'body') {
      bodyAjv ??= makeAjv(false);
      return bodyAjv;
    }
    textAjv ??= makeAjv(true);
    return textAjv;
  };
  const compiled = { body: new WeakMap<object, ValidateFunction>(), text: new WeakMap<object, ValidateFunction>() };
  // note: Fastify hands response schemas over as copies, new objects for every app, so they
  // are also found by their text; without it each app compiled some 400 schemas again
  // (about 200 ms per app, most of a test's start).
  const byText = { body: new Map<string, ValidateFunction>(), text: new Map<string, ValidateFunction>() };
  shared = {
    get body() {
      return ajvFor('body');
    },
    get text() {
      return ajvFor('text');
    },
    compile(schema, part) {
      let validate = compiled[part].get(schema);
      if (validate === undefined) {
        const key = JSON.stringify(schema);
        validate = byText[part].get(key);
        if (validate === undefined) {
          validate =
            part === 'body'
              ? ajvFor('body').compile(forAjv(schema) as object)
              : finiteOnly(ajvFor('text').compile(forAjv(schema) as object));
          byText[part].set(key, validate);
        }
        compiled[part].set(schema, validate);
      }
      return validate;
    },
  };
  return shared;
}

/**
 * A validator compiled when it is first called. Fastify reads a failed validation's errors
 * from the function's `errors`, as Ajv leaves them, so the wrapper carries them over.
 */
export function lazyValidator(compile: () => ValidateFunction): ValidateFunction {
  let validate: ValidateFunction | undefined;
  const lazy = ((data: unknown) => {
    validate ??= compile();
    const valid = validate(data);
    lazy.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  return lazy;
}

/** Whether a value holds a number that is not finite, at any depth (no allocation: most hold none). */
function hasNonFinite(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (value === null || typeof value !== 'object') return false;
  for (const key in value)
    if (Object.hasOwn(value, key) && hasNonFinite((value as Record<string, unknown>)[key])) return true;
  return false;
}

/** The JSON pointers of the numbers in a value that are not finite. */
function nonFinite(value: unknown, at = ''): string[] {
  if (typeof value === 'number') return Number.isFinite(value) ? [] : [at];
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, item]) => nonFinite(item, `${at}/${key}`));
}

/**
 * A text validator that also refuses numbers that are not finite. Ajv coerces the text
 * `1e309` or `Infinity` into Infinity and then checks no bound on it (strictNumbers applies
 * to values that are numbers already), so `limit=1e309` would pass as an integer.
 */
function finiteOnly(validate: ValidateFunction): ValidateFunction {
  const checked = ((data: unknown) => {
    if (!validate(data)) {
      checked.errors = validate.errors;
      return false;
    }
    if (!hasNonFinite(data)) {
      checked.errors = [];
      return true;
    }
    const bad = nonFinite(data);
    checked.errors = bad.map((instancePath) => ({
      instancePath,
      schemaPath: '#',
      keyword: 'finite',
      params: {},
      message: 'must be a finite number',
    }));
    return bad.length === 0;
  }) as ValidateFunction;
  checked.schema = validate.schema;
  return checked;
}

function jsonPointerToPath(pointer: string): string {
  if (pointer === '') return '';
  let path = '';
  for (const raw of pointer.slice(1).split('/')) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    path += /^\d+$/.test(segment) ? `[${segment}]` : path === '' ? segment : `.${segment}`;
  }
  return path;
}

function join(base: string, name: string): string {
  return base === '' ? name : `${base}.${name}`;
}

function discriminatorValues(error: ErrorObject, root: Ajv): string[] | undefined {
  const parent = error.parentSchema as
    | { oneOf?: { $ref?: string; properties?: Record<string, { const?: string; enum?: string[] }> }[] }
    | undefined;
  const tag = (error.params as { tag: string }).tag;
  const values: string[] = [];
  for (let variant of parent?.oneOf ?? []) {
    if (variant.$ref) variant = (root.getSchema(variant.$ref)?.schema ?? {}) as typeof variant;
    const prop = variant.properties?.[tag];
    if (prop?.const !== undefined) values.push(prop.const);
    else if (prop?.enum) values.push(...prop.enum);
  }
  return values.length > 0 ? values : undefined;
}

function describe(error: ErrorObject, root: Ajv): FieldError {
  const at = jsonPointerToPath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { field: join(at, String(params.missingProperty)), message: 'is required' };
    case 'discriminator': {
      const field = join(at, String(params.tag));
      const allowed = discriminatorValues(error, root);
      if (
        params.error === 'tag' &&
        error.data &&
        typeof error.data === 'object' &&
        !(String(params.tag) in error.data)
      ) {
        return { field, message: 'is required', ...(allowed ? { constraint: { enum: allowed } } : {}) };
      }
      return allowed
        ? { field, constraint: { enum: allowed }, message: `must be one of: ${allowed.join(', ')}` }
        : { field, message: 'has an unsupported value' };
    }
    case 'enum':
    case 'const': {
      const allowed = (error.keyword === 'const' ? [params.allowedValue] : (params.allowedValues as unknown[])).map(
        String,
      );
      return { field: at || 'body', constraint: { enum: allowed }, message: `must be one of: ${allowed.join(', ')}` };
    }
    case 'pattern':
      return {
        field: at,
        constraint: { pattern: String(params.pattern) },
        message: `must match the pattern ${String(params.pattern)}`,
      };
    case 'format': {
      const check = formats().get(String(params.format));
      const problem = check && typeof error.data === 'string' ? check(error.data) : null;
      return {
        field: at,
        constraint: { format: String(params.format) },
        message: problem ?? `must be a valid ${String(params.format)}`,
      };
    }
    case STRICT_KEYWORD: {
      const { rule, limit, problem } = params as unknown as StrictProblem;
      const constraint = rule === 'minItems' || rule === 'uniqueItems' ? undefined : { [rule]: limit };
      return { field: at || 'body', message: `${problem} (strict identifiers)`, ...(constraint ? { constraint } : {}) };
    }
    case 'minLength':
      return {
        field: at,
        constraint: { minLength: Number(params.limit) },
        message: `must be at least ${String(params.limit)} characters long`,
      };
    case 'maxLength':
      return {
        field: at,
        constraint: { maxLength: Number(params.limit) },
        message: `must be at most ${String(params.limit)} characters long`,
      };
    case 'type':
      return { field: at || 'body', message: `must be ${article(String(params.type))}` };
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum': {
      const words = {
        minimum: 'at least',
        maximum: 'at most',
        exclusiveMinimum: 'greater than',
        exclusiveMaximum: 'less than',
      };
      return { field: at || 'body', message: `must be ${words[error.keyword]} ${String(params.limit)}` };
    }
    case 'minItems':
      return {
        field: at || 'body',
        message: `must have at least ${String(params.limit)} item${params.limit === 1 ? '' : 's'}`,
      };
    case 'maxItems':
      return { field: at || 'body', message: `must have at most ${String(params.limit)} items` };
    case 'uniqueItems':
      return { field: at || 'body', message: 'must not repeat an item' };
    case 'additionalProperties':
      return { field: join(at, String(params.additionalProperty)), message: 'is not a recognised field' };
    default:
      return { field: at || 'body', message: error.message ?? 'is invalid' };
  }
}

function article(type: string): string {
  return type === 'object' || type === 'array' || type === 'integer' ? `an ${type}` : `a ${type}`;
}

/**
 * Turns Ajv errors into FieldErrors, one per field: several broken rules of one field are
 * merged into one entry. `prefix` names where the value came from when it is not the body
 * (query parameters are named bare, as the client sent them).
 */
export function toFieldErrors(errors: ErrorObject[], root: Ajv): FieldError[] {
  const byField = new Map<string, FieldError>();
  for (const error of errors) {
    // A failed oneOf/if only summarises the errors already listed for its branches.
    if (error.keyword === 'oneOf' || error.keyword === 'anyOf' || error.keyword === 'if') continue;
    const next = describe(error, root);
    const seen = byField.get(next.field);
    if (seen === undefined) {
      byField.set(next.field, next);
    } else {
      if (!seen.message.includes(next.message)) seen.message = `${seen.message}; ${next.message}`;
      if (next.constraint) seen.constraint = { ...seen.constraint, ...next.constraint };
    }
  }
  if (byField.size === 0 && errors.length > 0) {
    const first = errors[0]!;
    return [{ field: jsonPointerToPath(first.instancePath) || 'body', message: first.message ?? 'is invalid' }];
  }
  return [...byField.values()];
}

/**
 * The FieldErrors of a validation failure Fastify attached to a request instead of throwing
 * (routes with `attachValidation: true`), so a service can add its own findings and answer
 * every problem of a body in one 400. Empty when the request was valid.
 */
export function attachedFieldErrors(
  error: { validation?: unknown; validationContext?: string } | undefined,
  headers?: { schema: TSchema; value: unknown },
): FieldError[] {
  if (error?.validation === undefined) return [];
  const validators = createValidators();
  const root = error.validationContext === 'body' ? validators.body : validators.text;
  const found = toFieldErrors(error.validation as ErrorObject[], root);
  // Fastify stops at the first part that fails, and the body comes before the headers: when
  // the body failed, `headers` (the route's header schema and the request's headers) are
  // checked here too, so one answer names both.
  if (error.validationContext === 'body' && headers !== undefined) {
    const validate = validators.compile(headers.schema, 'text');
    if (!validate({ ...(headers.value as object) }))
      found.push(...toFieldErrors(validate.errors ?? [], validators.text));
  }
  return found;
}

// ----------------------------------------------------------------------------- nesting

/**
 * How deep a JSON body may nest: no request of the reference comes near it, and every walk
 * of a body (its canonical form for the Idempotency-Key, its JSON for the journal) stays far
 * within the call stack below it.
 */
export const BODY_DEPTH_MAX = 512;

/**
 * Whether JSON text nests arrays and objects more than `max` levels deep, read without
 * parsing it (so a body nested past the stack is refused before anything walks it). Text
 * too short to nest that deep is not scanned.
 */
export function nestedDeeperThan(text: string, max = BODY_DEPTH_MAX): boolean {
  if (text.length <= 2 * max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

// ----------------------------------------------------------------------------- NUL characters

export const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';

/**
 * The fields of a parsed value whose text (a string, or a key) holds U+0000, named as field
 * errors name them (`source.accountId`, `items[0]`). PostgreSQL cannot hold that character
 * in text, so such input is refused on either store rather than failing in the database.
 */
export function nulFields(value: unknown, at = ''): FieldError[] {
  if (typeof value === 'string')
    return value.includes('\u0000') ? [{ field: at === '' ? 'body' : at, message: NUL_MESSAGE }] : [];
  if (value === null || typeof value !== 'object') return [];
  if (Array.isArray(value)) return value.flatMap((item, i) => nulFields(item, `${at}[${i}]`));
  return Object.entries(value).flatMap(([key, item]) => {
    const field = join(at, key);
    return key.includes('\u0000') ? [{ field, message: NUL_MESSAGE }] : nulFields(item, field);
  });
}
