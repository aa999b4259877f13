// The reference decides what is accepted. This walks every request body railyard's own OpenAPI
// document declares beside the reference's body for the same operation, leaf by leaf (allOf
// merged, discriminated unions matched by their tag), and fails on any constraint railyard
// applies that the reference does not state, unless it is one of the few kinds below, each
// with its reason. Strict rules (the x-strict keyword) are left out: they apply only to
// platforms in strict mode. A new check digit, prefix or shape in a schema fails here.

import { describe, expect, it } from 'vitest';
import { STRICT_KEYWORD } from '../../src/http/schemas.js';
import { build } from '../helper.js';
import { referenceSpec } from '../reference.js';

type Node = Record<string, any>;

interface Leaf {
  constraints: Record<string, unknown>;
  required: Set<string>;
  /** The reference's description of the leaf (or of the array holding it). */
  description: string;
}

const CONSTRAINTS = [
  'pattern',
  'format',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minItems',
  'maxItems',
  'uniqueItems',
  'enum',
  'const',
] as const;

function resolver(doc: Node) {
  const schemas = doc.components?.schemas ?? {};
  return (node: Node | undefined): Node | undefined => {
    let current = node;
    for (let hops = 0; current?.$ref !== undefined && hops < 20; hops++) {
      const { $ref, ...rest } = current;
      current = { ...schemas[String($ref).split('/').pop()!], ...rest };
    }
    return current;
  };
}

/** Every leaf of a schema by its path; a union's branches as `path<tag>`. */
function flatten(doc: Node, root: Node): Map<string, Leaf> {
  const resolve = resolver(doc);
  const out = new Map<string, Leaf>();
  const walk = (raw: Node | undefined, path: string, depth: number, inherited: string) => {
    const node = resolve(raw);
    if (node === undefined || depth > 14) return;
    const description = typeof node.description === 'string' ? node.description : inherited;
    for (const part of node.allOf ?? []) walk(part, path, depth + 1, description);
    let leaf = out.get(path);
    if (leaf === undefined) {
      leaf = { constraints: {}, required: new Set(), description: '' };
      out.set(path, leaf);
    }
    if (description !== '') leaf.description = description;
    for (const key of CONSTRAINTS) if (node[key] !== undefined) leaf.constraints[key] = node[key];
    for (const name of node.required ?? []) leaf.required.add(name);
    for (const [name, child] of Object.entries<Node>(node.properties ?? {}))
      walk(child, path === '' ? name : `${path}.${name}`, depth + 1, '');
    if (node.items !== undefined) walk(node.items, `${path}[]`, depth + 1, description);
    const branches: Node[] | undefined = node.oneOf ?? node.anyOf;
    if (branches === undefined) return;
    const tag: string | undefined = node.discriminator?.propertyName;
    branches.forEach((branch, i) => {
      let key = String(i);
      if (tag !== undefined) {
        const tagLeaf = flatten(doc, branch).get(tag);
        key = String(
          (tagLeaf?.constraints.enum as unknown[] | undefined)?.join('|') ?? tagLeaf?.constraints.const ?? i,
        );
      }
      walk(branch, `${path}<${key}>`, depth + 1, '');
    });
  };
  walk(root, '', 0, '');
  return out;
}

interface Allowance {
  why: string;
  applies(field: string, keyword: string, value: unknown, reference: Leaf | undefined): boolean;
}

const lastName = (path: string) =>
  path
    .replace(/<[^>]*>/g, '')
    .split('.')
    .pop() ?? '';

/** The kinds of constraint railyard adds on purpose, each with its reason. */
const ALLOWED: Allowance[] = [
  {
    why: 'the reference describes the field as an ISO 3166-1 alpha-2 code: two capital letters',
    applies: (_field, keyword, value, reference) =>
      /ISO 3166-1 alpha-2/.test(reference?.description ?? '') &&
      ((keyword === 'pattern' && value === '^[A-Z]{2}$') ||
        ((keyword === 'minLength' || keyword === 'maxLength') && value === 2)),
  },
  {
    why: "the reference states the length in the field's description (as `1-100 characters`)",
    applies: (_field, keyword, value, reference) => {
      const stated = /(\d+)\s*-\s*(\d+) characters/.exec(reference?.description ?? '');
      return (
        stated !== null &&
        ((keyword === 'minLength' && value === Number(stated[1])) ||
          (keyword === 'maxLength' && value === Number(stated[2])))
      );
    },
  },
  {
    why: 'an empty id, key, code or currency names nothing: a 400 rather than a 404',
    applies: (field, keyword, value) =>
      keyword === 'minLength' &&
      value === 1 &&
      /(Id|Ids\[\]|Uma|umaAddress|umaDomain|currency|currencyCode|sourceCurrency|cryptoNetwork|code|TokenIdentifier|fundingSources\[\])$/.test(
        lastName(field),
      ),
  },
  {
    why: 'cryptographic material railyard really verifies (keys, signatures, WebAuthn, OIDC, HPKE bundles, secrets)',
    applies: (field, keyword) =>
      (keyword === 'minLength' || keyword === 'pattern') &&
      /^(signature|oidcToken|credentialId|clientDataJson|authenticatorData|attestationObject|challenge|encryptedOtpBundle|clientPublicKey|apiClientSecret|threeDSecurePassword)$/.test(
        lastName(field),
      ),
  },
  {
    why: 'stored text and lists are bounded (maxLength, maxItems), far above any real value',
    applies: (_field, keyword) => keyword === 'maxLength' || keyword === 'maxItems',
  },
  {
    why: 'money: amounts are positive and at most 9e15 minor units, limits are not negative (the ledger invariants)',
    applies: (field, keyword) =>
      (keyword === 'minimum' || keyword === 'maximum') &&
      /^(amount|amountToSend|currencyAmount|maxSpendPerTransaction|\w*Limit)$/.test(lastName(field)),
  },
  {
    why: 'the sandbox docs say an invalid Spark address is refused on external-account create (behaviours.md 1.3)',
    applies: (field, keyword, value) =>
      keyword === 'format' && value === 'spark-address' && lastName(field) === 'address',
  },
];

/** Members the reference leaves optional that railyard asks for, by operation, with the reason. */
const REQUIRED_ALLOWED: Record<string, { member: string; why: string }> = {
  createTransferOut: { member: 'amount', why: 'the reference does not say what a transfer without one would move' },
  createTransferIn: { member: 'amount', why: 'the reference does not say what a transfer without one would move' },
  agentCreateTransferOut: {
    member: 'amount',
    why: 'the reference does not say what a transfer without one would move',
  },
  agentCreateTransferIn: { member: 'amount', why: 'the reference does not say what a transfer without one would move' },
};

function strictRulesOf(doc: Node): unknown[] {
  const found: unknown[] = [];
  JSON.stringify(doc, (key, value) => {
    if (key === STRICT_KEYWORD) found.push(value);
    return value;
  });
  return found;
}

describe('what railyard accepts', () => {
  it('refuses no request body for a constraint the reference does not state, but the kinds it lists with their reason', async () => {
    const t = await build();
    const ours = (await t.raw('GET', '/grid/2025-10-13/openapi.json')).body as Node;
    const reference = referenceSpec() as Node;
    const beyond: string[] = [];
    let compared = 0;
    for (const [path, item] of Object.entries<Node>(reference.paths)) {
      for (const [method, operation] of Object.entries<Node>(item)) {
        const referenceBody = operation?.requestBody?.content?.['application/json']?.schema;
        const ourBody = ours.paths?.[path]?.[method]?.requestBody?.content?.['application/json']?.schema;
        if (referenceBody === undefined || ourBody === undefined) continue;
        compared++;
        const theirs = flatten(reference, referenceBody);
        for (const [field, leaf] of flatten(ours, ourBody)) {
          const stated = theirs.get(field);
          // A member the reference does not name is one railyard adds (an alias of the founding
          // specification's): a client of the reference never sends it.
          if (stated === undefined) continue;
          for (const [keyword, value] of Object.entries(leaf.constraints)) {
            const their = stated.constraints[keyword];
            const stricter =
              their === undefined
                ? !(keyword === 'enum' || keyword === 'const') || stated.constraints.enum === undefined
                : keyword === 'enum'
                  ? (their as unknown[]).some((v) => !(value as unknown[]).includes(v))
                  : keyword === 'pattern' || keyword === 'format' || keyword === 'const'
                    ? their !== value
                    : keyword.startsWith('min') || keyword === 'exclusiveMinimum'
                      ? (value as number) > (their as number)
                      : keyword.startsWith('max') || keyword === 'exclusiveMaximum'
                        ? (value as number) < (their as number)
                        : their !== value;
            if (!stricter) continue;
            if (ALLOWED.some((a) => a.applies(field, keyword, value, stated))) continue;
            beyond.push(`${operation.operationId} ${field}: ${keyword} ${JSON.stringify(value)}`);
          }
          for (const member of leaf.required) {
            if (stated.required.has(member)) continue;
            const allowed = REQUIRED_ALLOWED[operation.operationId];
            if (allowed?.member === member && field === '') continue;
            beyond.push(`${operation.operationId} ${field || 'body'}: requires ${member}`);
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(60);
    expect(beyond).toEqual([]);
  });

  it('names a format with a check for every strict rule, so none is silently skipped', async () => {
    const t = await build();
    const ours = (await t.raw('GET', '/grid/2025-10-13/openapi.json')).body as Node;
    const { formatCheck } = await import('../../src/http/schemas.js');
    const rules = strictRulesOf(ours) as { format?: string }[];
    expect(rules.length).toBeGreaterThan(20);
    const unknown = rules.filter((r) => r.format !== undefined && formatCheck(r.format) === undefined);
    expect(unknown).toEqual([]);
  });
});
