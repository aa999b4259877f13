// Ids that a sandbox suffix rule reads are drawn again until their ending picks no scenario,
// so a random id never changes what a caller gets.

import { describe, expect, it } from 'vitest';
import { newIdWhere } from '../../src/ids.js';
import { CARD_ISSUANCE_DEFAULT, cardIssuanceFor } from '../../src/rails/magic.js';

describe('newIdWhere', () => {
  it('draws again until the id is acceptable, and keeps the type prefix', () => {
    const seen: string[] = [];
    const id = newIdWhere('Customer', (candidate) => {
      seen.push(candidate);
      return seen.length === 4;
    });
    expect(seen).toHaveLength(4);
    expect(new Set(seen).size).toBe(4);
    expect(id).toBe(seen[3]);
    expect(id).toMatch(/^Customer:[0-9a-f-]{36}$/);
  });

  it('reads a rejected ending the way the card issuance rule does', () => {
    expect(cardIssuanceFor('Customer:0190-…-000000000001')).not.toBe(CARD_ISSUANCE_DEFAULT);
    expect(cardIssuanceFor('Customer:0190-…-000000000004')).toBe(CARD_ISSUANCE_DEFAULT);
  });
});
