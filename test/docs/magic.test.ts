// The docs' magic values are those of src/rails/magic.ts: every table and constant there
// is rendered in some page, every rendered block is exactly what magic.ts gives now, and no
// table outside the generated blocks claims a magic value. `npm run docs:magic` rewrites
// the blocks after a change to magic.ts.

import { describe, expect, it } from 'vitest';
import * as magic from '../../src/rails/magic.js';
import { CONSTANTS, findBlocks, renderBlock, rewriteMagicBlocks, SETTLEMENT_BLOCK, TABLES } from './magic-docs.js';
import { docPages, readPage, withoutFences } from './markdown.js';

type Kind = 'table' | 'constant' | 'default' | 'function';

function kindOf(name: string, value: unknown): Kind | undefined {
  if (typeof value === 'function') return 'function';
  if (name.endsWith('_DEFAULT')) return 'default';
  if (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((row) => typeof row === 'object' && row !== null && 'behaviour' in row && 'source' in row)
  )
    return 'table';
  if (typeof value === 'string' || typeof value === 'number') return 'constant';
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return 'constant';
  return undefined;
}

const exportsOfKind = (kind: Kind) =>
  Object.entries(magic)
    .filter(([name, value]) => kindOf(name, value) === kind)
    .map(([name]) => name)
    .sort();

const pages = docPages().map((page) => ({ page, text: readPage(page) }));
const blocks = pages.flatMap(({ page, text }) => findBlocks(text).map((block) => ({ page, ...block })));

describe('src/rails/magic.ts and the docs', () => {
  it('every export of magic.ts is a table, a constant, a fallback or a function', () => {
    const unknown = Object.entries(magic).filter(([name, value]) => kindOf(name, value) === undefined);
    expect(unknown.map(([name]) => name)).toEqual([]);
  });

  it('every magic table has a rendering, and every rendering a table', () => {
    expect(Object.keys(TABLES).sort()).toEqual(exportsOfKind('table'));
  });

  it('every constant has a description, and every description a constant', () => {
    expect(Object.keys(CONSTANTS).sort()).toEqual(exportsOfKind('constant'));
  });

  it.each(Object.entries(TABLES))("%s: the docs' fallback row is what the lookup gives", (name, spec) => {
    expect(spec.otherwise.probe()).toEqual(spec.otherwise.expected);
    const keys = (magic as unknown as Record<string, { suffix?: string; name?: string }[]>)[name]!.map(
      (row) => row[spec.key],
    );
    expect(keys.every((key) => typeof key === 'string' && key.length > 0)).toBe(true);
  });

  it('every exported fallback is the one its table documents', () => {
    const documented = Object.entries(TABLES)
      .filter(([, spec]) => spec.defaultExport !== undefined)
      .map(([, spec]) => [spec.defaultExport!, spec.otherwise.expected] as const);
    expect(documented.map(([name]) => name).sort()).toEqual(exportsOfKind('default'));
    for (const [name, expected] of documented) expect((magic as Record<string, unknown>)[name]).toEqual(expected);
  });

  it('every table and constant of magic.ts is shown in some page', () => {
    const shown = new Set(blocks.flatMap((block) => block.names));
    const missing = [...exportsOfKind('table'), ...exportsOfKind('constant')].filter((name) => !shown.has(name));
    expect(missing).toEqual([]);
  });

  it('the hosted settlement times of src/rails/settlement.ts are shown in some page', () => {
    expect(blocks.some((block) => block.names.join(' ') === SETTLEMENT_BLOCK)).toBe(true);
  });

  it.each(pages)('$page: every magic block is what magic.ts renders (npm run docs:magic rewrites them)', ({ text }) => {
    for (const block of findBlocks(text)) expect(block.body).toBe(`${renderBlock(block.names)}\n`);
    expect(rewriteMagicBlocks(text)).toBe(text);
  });

  it.each(pages)('$page: no table outside the generated blocks claims a magic value', ({ text }) => {
    let outside = text;
    for (const block of findBlocks(text).reverse()) outside = outside.slice(0, block.start) + outside.slice(block.end);
    outside = withoutFences(outside);
    const umaNames = magic.SANDBOX_UMA_ADDRESSES.map((row) => row.name);
    const claims = outside
      .split('\n')
      .filter((line) => line.startsWith('|'))
      .map((line) => line.split('|')[1]!.trim())
      .filter((cell) => /^`\d{3}`/.test(cell) || umaNames.some((name) => cell.includes(`\`${name}\``)));
    expect(claims).toEqual([]);
  });
});

describe('the magic blocks', () => {
  const page = '# Page\n\n<!-- magic: CARD_ISSUANCE -->\n| stale |\n<!-- /magic -->\n\nAfter.\n';

  it('are rewritten from magic.ts, leaving the rest of the page alone', () => {
    const rewritten = rewriteMagicBlocks(page);
    expect(rewritten).not.toBe(page);
    expect(rewritten.startsWith('# Page\n\n<!-- magic: CARD_ISSUANCE -->\n| Suffix | What happens |\n')).toBe(true);
    expect(rewritten.endsWith('<!-- /magic -->\n\nAfter.\n')).toBe(true);
    for (const row of magic.CARD_ISSUANCE) expect(rewritten).toContain(`| \`${row.suffix}\` |`);
    expect(rewriteMagicBlocks(rewritten)).toBe(rewritten);
  });

  it('show a changed behaviour as a difference', () => {
    const rewritten = rewriteMagicBlocks(page);
    const [block] = findBlocks(rewritten.replace('stays `PROCESSING`', 'stays `PENDING`'));
    expect(block!.body).not.toBe(`${renderBlock(block!.names)}\n`);
  });

  it('refuse a name magic.ts does not have', () => {
    expect(() => rewriteMagicBlocks('<!-- magic: NO_SUCH_TABLE -->\n<!-- /magic -->\n')).toThrow(/NO_SUCH_TABLE/);
  });

  it('render constants with their value from magic.ts', () => {
    const table = renderBlock(['SCA_SANDBOX_CODE', 'TRANSFER_TIMEOUT_MS', 'SANDBOX_UMA_DOMAINS']);
    expect(table).toContain(`| \`SCA_SANDBOX_CODE\` | \`${magic.SCA_SANDBOX_CODE}\` |`);
    expect(table).toContain(
      `| \`TRANSFER_TIMEOUT_MS\` | ${magic.TRANSFER_TIMEOUT_MS / 1000} seconds of sandbox time |`,
    );
    for (const domain of magic.SANDBOX_UMA_DOMAINS) expect(table).toContain(`\`${domain}\``);
  });
});
