// The error catalogue against the reference, both ways, and the source against the catalogue.

import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/http/errors.js';
import { referenceSpec } from '../reference.js';

const spec = referenceSpec();

function referenceCatalogue(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, schema] of Object.entries<any>(spec.components.schemas)) {
    const match = /^Error(\d{3})$/.exec(name);
    if (match) out[match[1]!] = schema.properties.code.enum;
  }
  return out;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('error catalogue', () => {
  it('lists exactly the codes of every Error<status> schema of the reference', () => {
    const mine = Object.fromEntries(Object.entries(ERROR_CODES).map(([status, codes]) => [status, [...codes].sort()]));
    const theirs = Object.fromEntries(
      Object.entries(referenceCatalogue()).map(([status, codes]) => [status, [...codes].sort()]),
    );
    expect(mine).toEqual(theirs);
  });

  it('is the only source of codes: every code the source sends is in the catalogue under its status', () => {
    const allCodes = new Set(Object.values(ERROR_CODES).flat());
    const offenders: string[] = [];
    for (const file of sourceFiles(join(__dirname, '../../src'))) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(/apiError\(\s*'([A-Z_]+)'/g))
        if (!allCodes.has(match[1]! as never)) offenders.push(`${file}: ${match[1]}`);
      for (const match of text.matchAll(/status: (\d{3}), code: '([A-Z_]+)'/g)) {
        const codes = (ERROR_CODES as Record<string, readonly string[]>)[match[1]!];
        if (!codes?.includes(match[2]!)) offenders.push(`${file}: ${match[1]} ${match[2]}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
