// The memo of values made from lists of texts (src/db/text-memo.ts): one value per list, made
// once; past its bound, values are made at every call and not kept.

import { describe, expect, it } from 'vitest';
import { TextMemo } from '../../src/db/text-memo.js';

describe('TextMemo', () => {
  it('makes one value per list of texts, once, and tells lists apart by every text in order', () => {
    const memo = new TextMemo<string>(100);
    let made = 0;
    const make = (texts: string[]) => memo.get(texts, () => `${texts.join('+')}#${++made}`);
    expect(make(['a', 'b'])).toBe('a+b#1');
    expect(make(['a', 'b'])).toBe('a+b#1');
    expect(make(['b', 'a'])).toBe('b+a#2');
    expect(make(['a'])).toBe('a#3');
    expect(make(['a', 'b', 'c'])).toBe('a+b+c#4');
    expect(made).toBe(4);
  });

  it('keeps nothing more past its bound, and still answers', () => {
    const memo = new TextMemo<number>(2);
    let made = 0;
    expect(memo.get(['x', 'y'], () => ++made)).toBe(1);
    // Both steps are used: a new list is made each time.
    expect(memo.get(['z'], () => ++made)).toBe(2);
    expect(memo.get(['z'], () => ++made)).toBe(3);
    expect(memo.get(['x', 'y'], () => ++made)).toBe(1);
  });
});
