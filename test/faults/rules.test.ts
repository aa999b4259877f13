// The pieces of a fault rule that need no server: path patterns and the seeded draw.

import { describe, expect, it } from 'vitest';
import { BASE_PATH } from '../../src/config.js';
import { compilePath, draw, pathMatches, pathPatternProblem, requestSegments } from '../../src/faults/rules.js';

const matches = (pattern: string, url: string) =>
  pathMatches(compilePath(pattern, BASE_PATH), requestSegments(`${BASE_PATH}${url}`, BASE_PATH));

describe('path patterns', () => {
  it.each([
    ['/quotes/*/execute', '/quotes/Quote:1/execute', true],
    ['/quotes/*/execute', '/quotes/Quote:1', false],
    ['/quotes/{quoteId}/execute', '/quotes/Quote:1/execute', true],
    ['/quotes/:quoteId/execute', '/quotes/Quote%3A1/execute?x=1', true],
    ['/quotes/Quote:1/execute', '/quotes/Quote%3A1/execute', true],
    ['/quotes/Quote:2/execute', '/quotes/Quote:1/execute', false],
    ['/customers', '/customers/', true],
    ['/customers', '/customers/Customer:1', false],
    ['/customers/**', '/customers', true],
    ['/customers/**', '/customers/Customer:1/kyc-link', true],
    ['/**/execute', '/quotes/Quote:1/execute', true],
    ['/**', '/anything/at/all', true],
    [`${BASE_PATH}/transfer-out`, '/transfer-out', true],
  ])('%s against %s: %s', (pattern, url, expected) => {
    expect(pathPatternProblem(pattern)).toBeNull();
    expect(matches(pattern, url)).toBe(expected);
  });

  it.each([
    ['quotes', 'must start with /'],
    ['/quotes?x=1', 'no query'],
    ['/quotes//execute', 'empty segment'],
    ['/quotes/Q*/execute', 'mixes a wildcard'],
    ['/quotes/{id}x', 'mixes a wildcard'],
  ])('refuses %s', (pattern, problem) => {
    expect(pathPatternProblem(pattern)).toContain(problem);
  });
});

describe('the seeded draw', () => {
  it('depends on the seed and the position alone, and spreads over [0, 1)', () => {
    const first = Array.from({ length: 1000 }, (_, i) => draw(42, i + 1));
    expect(Array.from({ length: 1000 }, (_, i) => draw(42, i + 1))).toEqual(first);
    expect(first.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(new Set(first).size).toBe(1000);
    // A probability of 0.3 fires on about 30% of the positions (this seed: a fixed count).
    const fired = first.filter((x) => x < 0.3).length;
    expect(fired).toBeGreaterThan(240);
    expect(fired).toBeLessThan(360);
    expect(Array.from({ length: 1000 }, (_, i) => draw(43, i + 1))).not.toEqual(first);
  });
});
