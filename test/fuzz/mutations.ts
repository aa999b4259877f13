// The fuzz suite's mutations: from a valid request (a baseline), requests that differ in one
// place each: a property of the body (wrong JSON types, null, empty and huge strings, U+0000,
// lone surrogates, emoji and right-to-left text, negative, huge and fractional numbers, 1e309,
// nesting 200 deep, a missing or unknown member, a duplicated key), the body as a whole
// (empty, malformed, an array, a string, the wrong content type, over the size limit), a path
// parameter (very long, %00, broken percent-encoding, ..%2F, another platform's id, an id of
// another kind) or a query parameter. Which ones each operation gets is drawn from a seeded
// generator, so a run is repeatable from its seed.

import { randomUUID } from 'node:crypto';
import type { Baseline, FilePart } from './baselines.js';

/** JSON text written as is (numbers JSON can carry but JavaScript cannot: 1e309, 2^53 + 1). */
export class Raw {
  constructor(readonly text: string) {}
}

/** An object written member by member, so a key can appear twice. */
export class Pairs {
  constructor(readonly pairs: [string, unknown][]) {}
}

export function toJson(value: unknown): string {
  if (value instanceof Raw) return value.text;
  if (value instanceof Pairs) return `{${value.pairs.map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(',')}}`;
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/** A request as the suite sends it: the baseline's parts, each of which a mutation may replace. */
export interface Shape {
  params: Record<string, string>;
  /** Path parameters already percent-encoded (broken encodings are sent as they are). */
  rawParams: Record<string, string>;
  query: [string, string][];
  /** A query string sent as is, after the encoded `query`. */
  rawQuery?: string;
  headers: Record<string, string>;
  body?:
    | { kind: 'json'; value: unknown }
    | { kind: 'text'; text: string | Buffer; contentType?: string }
    | { kind: 'form'; fields: [string, string][]; files: FilePart[] };
}

export interface Mutation {
  label: string;
  where: 'body' | 'path' | 'query' | 'header' | 'baseline';
  shape: Shape;
  /** The request names another platform's resource: only a 404 is right. */
  foreign?: boolean;
}

export function shapeOf(baseline: Baseline): Shape {
  const query: [string, string][] = [];
  for (const [name, value] of Object.entries(baseline.query ?? {}))
    for (const v of Array.isArray(value) ? value : [value]) query.push([name, v]);
  const shape: Shape = { params: { ...baseline.params }, rawParams: {}, query, headers: { ...baseline.headers } };
  if (baseline.body !== undefined) shape.body = { kind: 'json', value: baseline.body };
  if (baseline.form !== undefined)
    shape.body = { kind: 'form', fields: Object.entries(baseline.form.fields), files: baseline.form.files };
  return shape;
}

// ----------------------------------------------------------------------------- seeded choice

/** mulberry32: a small seeded generator, enough to draw mutations repeatably. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(random: () => number, items: readonly T[], count: number): T[] {
  const pool = [...items];
  const out: T[] = [];
  while (out.length < count && pool.length > 0) out.push(pool.splice(Math.floor(random() * pool.length), 1)[0]!);
  return out;
}

// ----------------------------------------------------------------------------- catalogues

const nested = (depth: number, leaf: unknown = 1): unknown => {
  let value: unknown = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? { a: value } : [value];
  return value;
};

type Named = [string, unknown];

const TYPE_SWAPS: Named[] = [
  ['null', null],
  ['the number 0', 0],
  ['the number -1', -1],
  ['a string', 'text'],
  ['true', true],
  ['false', false],
  ['an empty array', []],
  ['an empty object', {}],
];
const STRING_VALUES: Named[] = [
  ['an empty string', ''],
  ['whitespace', '   '],
  ['a 100,000-character string', 'x'.repeat(100_000)],
  ['U+0000', 'a\u0000b'],
  ['a lone surrogate', 'ab\uD800cd'],
  ['emoji and right-to-left text', '💸 \u202Eعربي\u202C 𝔘𝔫𝔦'],
  ['control characters', '\u0007\u001b[31mred\r\n'],
  ['5,000 astral characters', '𝔘'.repeat(5_000)],
  ['a SQL-looking string', "x'); DROP TABLE customers; --"],
  ['a number as text', '12.50'],
];
const NUMBER_VALUES: Named[] = [
  ['-1', -1],
  ['0', 0],
  ['a fraction', 1.5],
  ['a tiny fraction', 1e-7],
  ['2^53 + 1', new Raw('9007199254740993')],
  ['1e309', new Raw('1e309')],
  ['-1e309', new Raw('-1e309')],
  ['a 30-digit integer', new Raw('123456789012345678901234567890')],
  ['-0', new Raw('-0')],
  ['9e15', 9e15],
  ['2^63', new Raw('9223372036854775808')],
];
const BOOLEAN_VALUES: Named[] = [
  ['the string "true"', 'true'],
  ['the number 1', 1],
];
const ARRAY_VALUES: Named[] = [
  ['nesting 200 deep', nested(200)],
  ['10,000 nulls', new Array(10_000).fill(null)],
  ['an array of itself', [[[]]]],
];
const OBJECT_VALUES: Named[] = [
  ['nesting 200 deep', nested(200)],
  ['an object with 2,000 members', Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`k${i}`, i]))],
];

const PATH_VALUES: [string, string][] = [
  ['a 300-character id', 'x'.repeat(300)],
  ['%00 in the id', 'abc%00def'],
  ['broken percent-encoding', '%E0%A4%A'],
  ['a lone %', 'abc%'],
  ['an encoded ../', '..%2F..%2Fconfig'],
  ['emoji', encodeURIComponent('💸ü')],
  ['an encoded space', 'a%20b'],
];
const QUERY_VALUES: [string, string][] = [
  ['an empty value', ''],
  ['letters', 'abc'],
  ['U+0000', 'a\u0000b'],
  ['-1', '-1'],
  ['0', '0'],
  ['1.5', '1.5'],
  ['101', '101'],
  ['1e309', '1e309'],
  ['a 3,000-character value', 'q'.repeat(3_000)],
  ['true', 'true'],
  ['an impossible date', '2025-13-45T99:99:99Z'],
  ['emoji', '💸'],
];

/** The nodes of a JSON value below its root, each with its path (arrays: the first two items). */
function nodes(value: unknown, path: (string | number)[] = []): { path: (string | number)[]; value: unknown }[] {
  const out: { path: (string | number)[]; value: unknown }[] = [];
  if (Array.isArray(value)) {
    for (const [i, item] of value.slice(0, 2).entries())
      out.push({ path: [...path, i], value: item }, ...nodes(item, [...path, i]));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value))
      out.push({ path: [...path, key], value: item }, ...nodes(item, [...path, key]));
  }
  return out;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** A copy of `root` with the node at `path` replaced (or, with `remove`, deleted). */
function replaced(root: unknown, path: (string | number)[], next: unknown, remove = false): unknown {
  if (path.length === 0) return next;
  const [head, ...rest] = path;
  if (Array.isArray(root)) {
    const copy = [...root];
    if (rest.length === 0 && remove) copy.splice(head as number, 1);
    else copy[head as number] = replaced(root[head as number], rest, next, remove);
    return copy;
  }
  const copy: Record<string, unknown> = { ...(root as Record<string, unknown>) };
  if (rest.length === 0 && remove) delete copy[head as string];
  else copy[head as string] = replaced(copy[head as string], rest, next, remove);
  return copy;
}

/** A copy of `root` where the object holding `path` lists its key twice: the original, then `last`. */
function duplicated(root: unknown, path: (string | number)[], last: unknown): unknown {
  const parentPath = path.slice(0, -1);
  const key = String(path.at(-1));
  let parent: unknown = root;
  for (const step of parentPath) parent = (parent as Record<string, unknown>)[step as string];
  const pairs = new Pairs([...Object.entries(parent as Record<string, unknown>), [key, last]]);
  return replaced(root, parentPath, pairs);
}

const label = (path: (string | number)[]) =>
  path
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`))
    .join('')
    .slice(1);

/** Every mutation of one baseline, drawn with `random`. */
export function mutationsOf(
  base: Shape,
  options: {
    foreign?: Shape;
    otherKindId: string;
    random: () => number;
    takesJsonBody: boolean;
    queryNames: string[];
    headerNames: string[];
  },
): Mutation[] {
  const { random } = options;
  const out: Mutation[] = [];
  const variant = (
    labelText: string,
    where: Mutation['where'],
    change: (shape: Shape) => void,
    extra: Partial<Mutation> = {},
  ) => {
    const shape: Shape = {
      params: { ...base.params },
      rawParams: { ...base.rawParams },
      query: [...base.query],
      headers: { ...base.headers },
      ...(base.body ? { body: base.body } : {}),
      ...(base.rawQuery !== undefined ? { rawQuery: base.rawQuery } : {}),
    };
    change(shape);
    out.push({ label: labelText, where, shape, ...extra });
  };

  // Path parameters.
  for (const name of Object.keys(base.params)) {
    for (const [what, raw] of PATH_VALUES) {
      variant(`path ${name}: ${what}`, 'path', (s) => {
        delete s.params[name];
        s.rawParams[name] = raw;
      });
    }
    if (options.foreign?.params[name] !== undefined && name.endsWith('Id')) {
      variant(
        `path ${name}: another platform's ${name}`,
        'path',
        (s) => (s.params[name] = options.foreign!.params[name]!),
        { foreign: true },
      );
      variant(`path ${name}: an id of another kind`, 'path', (s) => (s.params[name] = options.otherKindId));
    }
  }

  // Query parameters: every one the operation declares (in railyard's document or the
  // reference), whether the baseline gives it or not, and one the operation does not know.
  const given = new Set(base.query.map(([n]) => n));
  for (const name of [...new Set([...given, ...options.queryNames])]) {
    const values = [QUERY_VALUES[0]!, QUERY_VALUES[1]!, QUERY_VALUES[2]!, ...pick(random, QUERY_VALUES.slice(3), 3)];
    for (const [what, value] of values)
      variant(
        `query ${name}: ${what}`,
        'query',
        (s) => (s.query = [...s.query.filter(([n]) => n !== name), [name, value]]),
      );
    variant(`query ${name}: broken percent-encoding`, 'query', (s) => {
      s.query = s.query.filter(([n]) => n !== name);
      s.rawQuery = `${encodeURIComponent(name)}=%ZZ%E0%A4`;
    });
    if (!given.has(name)) continue;
    variant(`query ${name}: given twice`, 'query', (s) => s.query.push([name, s.query.find(([n]) => n === name)![1]]));
    variant(`query ${name}: left out`, 'query', (s) => (s.query = s.query.filter(([n]) => n !== name)));
  }
  variant('query: an unknown parameter', 'query', (s) => s.query.push(['unexpectedParameter', '1']));

  // Headers.
  if (base.headers['idempotency-key'] !== undefined || options.headerNames.includes('idempotency-key')) {
    variant('header Idempotency-Key: empty', 'header', (s) => (s.headers['idempotency-key'] = ''));
    variant(
      'header Idempotency-Key: 300 characters',
      'header',
      (s) => (s.headers['idempotency-key'] = 'k'.repeat(300)),
    );
  }

  const body = base.body;
  if (body?.kind === 'json') {
    for (const node of nodes(body.value)) {
      const at = label(node.path);
      const type = jsonType(node.value);
      const swaps = TYPE_SWAPS.filter(([, v]) => jsonType(v) !== type);
      const extras =
        type === 'string'
          ? pick(random, STRING_VALUES, 5)
          : type === 'number'
            ? NUMBER_VALUES
            : type === 'boolean'
              ? BOOLEAN_VALUES
              : type === 'array'
                ? pick(random, ARRAY_VALUES, 2)
                : type === 'object'
                  ? pick(random, OBJECT_VALUES, 1)
                  : [];
      for (const [what, value] of [...swaps, ...extras]) {
        variant(
          `body ${at}: ${what}`,
          'body',
          (s) => (s.body = { kind: 'json', value: replaced(body.value, node.path, value) }),
        );
      }
      if (typeof node.path.at(-1) === 'string') {
        variant(
          `body ${at}: left out`,
          'body',
          (s) => (s.body = { kind: 'json', value: replaced(body.value, node.path, undefined, true) }),
        );
        variant(
          `body ${at}: given twice, the second time null`,
          'body',
          (s) => (s.body = { kind: 'json', value: duplicated(body.value, node.path, null) }),
        );
      }
      if (type === 'object') {
        variant(
          `body ${at}: an unknown member`,
          'body',
          (s) =>
            (s.body = { kind: 'json', value: replaced(body.value, [...node.path, 'unexpectedMember'], 'surprise') }),
        );
      }
    }
  }
  if (body?.kind === 'form') {
    for (const [name] of body.fields) {
      const fields = (value: string | undefined) =>
        body.fields.flatMap(([n, v]): [string, string][] =>
          n !== name ? [[n, v]] : value === undefined ? [] : [[n, value]],
        );
      variant(`form ${name}: left out`, 'body', (s) => (s.body = { ...body, fields: fields(undefined) }));
      variant(`form ${name}: empty`, 'body', (s) => (s.body = { ...body, fields: fields('') }));
      for (const [what, value] of pick(
        random,
        STRING_VALUES.filter(([, v]) => typeof v === 'string' && (v as string).length < 70_000),
        2,
      )) {
        variant(`form ${name}: ${what}`, 'body', (s) => (s.body = { ...body, fields: fields(value as string) }));
      }
      variant(
        `form ${name}: 70,000 characters`,
        'body',
        (s) => (s.body = { ...body, fields: fields('f'.repeat(70_000)) }),
      );
    }
    variant('form: the file left out', 'body', (s) => (s.body = { ...body, files: [] }));
    variant(
      'form: an empty file',
      'body',
      (s) => (s.body = { ...body, files: body.files.map((f) => ({ ...f, data: Buffer.alloc(0) })) }),
    );
    variant(
      'form: the file under another name',
      'body',
      (s) => (s.body = { ...body, files: body.files.map((f) => ({ ...f, name: 'attachment' })) }),
    );
    variant(
      'form: a file name with U+0000',
      'body',
      (s) => (s.body = { ...body, files: body.files.map((f) => ({ ...f, fileName: 'a\u0000.pdf' })) }),
    );
    variant(
      'form: a JSON body instead',
      'body',
      (s) => (s.body = { kind: 'json', value: Object.fromEntries(body.fields) }),
    );
    variant(
      'form: a broken multipart body',
      'body',
      (s) =>
        (s.body = {
          kind: 'text',
          text: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nb',
          contentType: 'multipart/form-data; boundary=x',
        }),
    );
    variant(
      'form: 12 files',
      'body',
      (s) => (s.body = { ...body, files: Array.from({ length: 12 }, () => body.files[0]!).filter(Boolean) }),
    );
  }

  // A JSON body with a member nested 10,000 deep, far past what any walk of it could take
  // on the call stack, with an Idempotency-Key and without one (the key's request hash walks
  // the body), on every operation: refused with a 4xx envelope, or ignored by an operation
  // that takes no body; never a 5xx.
  const deepText = (() => {
    const depth = 10_000;
    const half = depth / 2;
    const nestedText = `${'['.repeat(half)}${'{"a":'.repeat(half)}1${'}'.repeat(half)}${']'.repeat(half)}`;
    const text = body?.kind === 'json' ? toJson(body.value) : '{}';
    return text.startsWith('{') && text !== '{}'
      ? text.replace(/^\{/, `{"deep":${nestedText},`)
      : `{"deep":${nestedText}}`;
  })();
  for (const withKey of [true, false])
    variant(`body: a member nested 10,000 deep, ${withKey ? 'with' : 'without'} an Idempotency-Key`, 'body', (s) => {
      s.body = { kind: 'text', text: deepText, contentType: 'application/json' };
      if (withKey) s.headers['idempotency-key'] = `deep-${randomUUID()}`;
      else delete s.headers['idempotency-key'];
    });

  // The body as a whole, for operations that take a JSON body (or may).
  if (options.takesJsonBody) {
    const text = body?.kind === 'json' ? toJson(body.value) : '{}';
    const whole: [string, Shape['body'] | undefined][] = [
      ['no body at all', undefined],
      ['an empty body typed as JSON', { kind: 'text', text: '', contentType: 'application/json' }],
      ['malformed JSON', { kind: 'text', text: '{"amount": ', contentType: 'application/json' }],
      ['a JSON array', { kind: 'json', value: [] }],
      ['a JSON string', { kind: 'json', value: 'body' }],
      ['a JSON number', { kind: 'json', value: 5 }],
      ['JSON null', { kind: 'json', value: null }],
      ['the JSON as text/plain', { kind: 'text', text, contentType: 'text/plain' }],
      ['a form-urlencoded body', { kind: 'text', text: 'amount=5', contentType: 'application/x-www-form-urlencoded' }],
      ['the JSON without a content type', { kind: 'text', text }],
      ['the JSON after a byte-order mark', { kind: 'text', text: `\uFEFF${text}`, contentType: 'application/json' }],
      [
        'a body over the size limit',
        { kind: 'text', text: `{"padding":"${'p'.repeat(1024 * 1024 + 16)}"}`, contentType: 'application/json' },
      ],
      ['an object nested 200 deep', { kind: 'json', value: nested(200) }],
      [
        '__proto__ as a key',
        {
          kind: 'text',
          text:
            text === '{}' ? '{"__proto__":{"polluted":true}}' : text.replace(/^\{/, '{"__proto__":{"polluted":true},'),
          contentType: 'application/json',
        },
      ],
    ];
    for (const [what, next] of whole)
      variant(`body: ${what}`, 'body', (s) => {
        if (next === undefined) delete s.body;
        else s.body = next;
      });
  }
  return out;
}
