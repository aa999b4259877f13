// The cases of the reference-example suites and what each asserts of an answer: a body from
// the reference's examples (a named request example, or one built from the schema per
// variant), sent with real ids to a default platform (2xx) and to a platform in strict mode
// (2xx, or 400 naming exactly the fields STRICT_REFUSALS expects).

import { expect } from 'vitest';
import type { Reply } from '../helper.js';
import { buildEveryVariant, referenceProblems, requestBodyOf, withIds, type BuildOptions } from './builder.js';
import { leaves, magicValues, REFUSED_EXAMPLES, strictFindings, type StrictRefusal } from './expectations.js';

export interface ExampleCase {
  /** How a failure names it: the operation, then `named <example>` or `built <variants>`. */
  name: string;
  operationId: string;
  /** The body, example ids still in it (withIds replaces them per platform). */
  body: any;
  /** Paths filled with a minimal value (FILLS in builder.ts), not an example of the reference. */
  filled: string[];
}

/** One case per named request example of the operation. */
export function namedCases(operationId: string): ExampleCase[] {
  return Object.entries(requestBodyOf(operationId).examples).map(([name, body]) => ({
    name: `${operationId} named ${name}`,
    operationId,
    body,
    filled: [],
  }));
}

/** One case per combination of the variants of the operation's body schema. */
export function builtCases(operationId: string, options: BuildOptions = {}): ExampleCase[] {
  return buildEveryVariant(requestBodyOf(operationId).schema, options).map((built) => {
    const variants = Object.entries(built.variants).map(([path, tag]) => `${path || 'body'}=${tag}`);
    return {
      name: `${operationId} built ${variants.join(' ') || '(no variants)'}`,
      operationId,
      body: built.body,
      filled: built.filled,
    };
  });
}

/** The cases whose body no earlier case of the same operation sends already. */
export function distinct(cases: ExampleCase[]): ExampleCase[] {
  const seen = new Set<string>();
  return cases.filter((c) => {
    const key = `${c.operationId} ${JSON.stringify(c.body)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** A copy of the case with its body changed by `edit` (a REFERENCE_BREAKS correction). */
export function edited(c: ExampleCase, note: string, edit: (body: any) => void): ExampleCase {
  const body = structuredClone(c.body);
  edit(body);
  return { ...c, name: `${c.name} (${note})`, body };
}

/** The body of `c` for one platform: its example ids replaced (every one must be). */
export function bodyFor(c: ExampleCase, ids: Record<string, string>): any {
  return withIds(c.body, ids);
}

/** The case's body passes the reference's own JSON schema (checked with the fuzz suite's validator). */
export function expectValidByReference(c: ExampleCase, body: unknown = c.body): void {
  expect(referenceProblems(c.operationId, body), `${c.name}: the reference's schema refuses it`).toEqual([]);
}

/** A default platform takes the body. */
export function expectAccepted(c: ExampleCase, reply: Reply): void {
  expect(reply.status, `${c.name} on a default platform: ${reply.text.slice(0, 600)}`).toBeGreaterThanOrEqual(200);
  expect(reply.status, `${c.name} on a default platform: ${reply.text.slice(0, 600)}`).toBeLessThan(300);
}

/**
 * A platform in strict mode refuses the body exactly where a strict rule applies: 400 naming
 * exactly those fields, each message ending `(strict identifiers)`; otherwise it takes it.
 */
export function expectStrictAnswer(c: ExampleCase, body: unknown, reply: Reply): StrictRefusal[] {
  const findings = strictFindings(c.operationId, body);
  const what = `${c.name} on a strict platform: ${reply.text.slice(0, 600)}`;
  if (findings.length === 0) {
    expect(reply.status, what).toBeGreaterThanOrEqual(200);
    expect(reply.status, what).toBeLessThan(300);
    return findings;
  }
  expect(reply.status, what).toBe(400);
  expect(reply.body.code, what).toBe('INVALID_INPUT');
  const errors: { field: string; message: string }[] = reply.body.details?.errors ?? [];
  expect(errors.map((e) => e.field).sort(), what).toEqual(findings.map((f) => f.field).sort());
  for (const error of errors) expect(error.message, what).toMatch(/\(strict identifiers\)$/);
  return findings;
}

/**
 * What the answer to a case must be: the refusal REFUSED_EXAMPLES names for it on either
 * platform; otherwise 2xx on a default platform, the strict answer on a strict one. The strict
 * rules read no id, so the case's body stands for the one sent with real ids.
 */
export function expectAnswer(c: ExampleCase, strict: boolean, reply: Reply): void {
  const refused = REFUSED_EXAMPLES[c.name];
  if (refused !== undefined) {
    expect(reply.status, `${c.name}: ${reply.text}`).toBe(refused.status);
    expect(reply.body.details.errors.map((e: { field: string }) => e.field).sort(), c.name).toEqual(refused.fields);
  } else if (strict) expectStrictAnswer(c, c.body, reply);
  else expectAccepted(c, reply);
}

/**
 * Sends a case to a default platform, then to a strict one (`send` makes the request, with
 * the ids of that platform's resources), and checks each answer (expectAnswer).
 */
export async function onBoth<W>(
  c: ExampleCase,
  worlds: ReadonlyMap<boolean, W>,
  send: (world: W, strict: boolean) => Promise<Reply>,
): Promise<Reply[]> {
  const replies: Reply[] = [];
  for (const strict of [false, true]) {
    const reply = await send(worlds.get(strict)!, strict);
    expectAnswer(c, strict, reply);
    replies.push(reply);
  }
  return replies;
}

/** The strict findings of every case, as `field value` lines (for comparing with STRICT_REFUSALS). */
export function findingsOf(cases: { operationId: string; body: unknown }[]): string[] {
  const lines = cases.flatMap((c) =>
    strictFindings(c.operationId, c.body).map((f) => `${f.field} ${f.value} ${f.rule}`),
  );
  return [...new Set(lines)].sort();
}

/** The example values of the cases that end in a magic suffix. */
export function magicOf(cases: ExampleCase[]): string[] {
  return [...magicValues(cases.map((c) => c.body))].sort();
}

/** Every string of every case, to check a list of expected values against. */
export function valuesOf(cases: ExampleCase[]): Set<string> {
  return new Set(cases.flatMap((c) => leaves(c.body).map((l) => l.value)));
}
