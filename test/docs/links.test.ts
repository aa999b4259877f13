// Every relative link of README.md and docs/*.md points at a file that exists, and at a
// heading of it when it names an anchor. The two pages other branches bring
// (docs/dashboard.md, docs/reset-and-seed.md) are skipped only while they do not exist.

import { existsSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchors, docPages, links, ROOT, readPage } from './markdown.js';

const PENDING_PAGES = new Set(['docs/dashboard.md', 'docs/reset-and-seed.md']);

/** The broken links of one page, as "line: target (why)". */
function brokenLinks(
  page: string,
  markdown: string,
  read: (path: string) => string | undefined,
  exists: (path: string) => boolean,
): string[] {
  const broken: string[] = [];
  for (const { target, line } of links(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
    const [pathPart = '', anchor] = target.split('#', 2) as [string, string | undefined];
    const path = pathPart === '' ? page : normalize(join(dirname(page), pathPart));
    if (path.startsWith('..')) {
      broken.push(`${line}: ${target} (outside the repository)`);
      continue;
    }
    if (!exists(path)) {
      if (PENDING_PAGES.has(path)) continue;
      broken.push(`${line}: ${target} (no file ${path})`);
      continue;
    }
    if (anchor === undefined) continue;
    const text = path === page ? markdown : read(path);
    if (text === undefined || !path.endsWith('.md') || !anchors(text).has(anchor))
      broken.push(`${line}: ${target} (no heading #${anchor} in ${path})`);
  }
  return broken;
}

const onDisk = {
  read: (path: string) => (existsSync(join(ROOT, path)) ? readPage(path) : undefined),
  exists: (path: string) => existsSync(join(ROOT, path)),
};

describe('links of README.md and docs/', () => {
  it.each(docPages())('%s links only to files and headings that exist', (page) => {
    expect(brokenLinks(page, readPage(page), onDisk.read, onDisk.exists)).toEqual([]);
  });

  it('the README links to every page of docs/, directly or through docs/README.md', () => {
    const reached = new Set<string>();
    for (const page of ['README.md', 'docs/README.md'])
      for (const { target } of links(readPage(page)))
        reached.add(relative(ROOT, join(ROOT, dirname(page), target.split('#')[0]!)));
    const missing = docPages().filter((page) => page !== 'README.md' && !reached.has(page));
    expect(missing).toEqual([]);
  });
});

describe('the link check', () => {
  const pages: Record<string, string> = {
    'docs/a.md': '# A page\n\n## Second part\n',
  };
  const read = (path: string) => pages[path];
  const exists = (path: string) => path in pages;
  const check = (markdown: string) => brokenLinks('docs/b.md', markdown, read, exists);

  it('finds a missing file, a missing heading and a link out of the repository', () => {
    expect(check('See [a](a.md), [part](a.md#second-part), [web](https://example.com).')).toEqual([]);
    expect(check('See [gone](gone.md).')).toEqual(['1: gone.md (no file docs/gone.md)']);
    expect(check('\nSee [part](a.md#third-part).')).toEqual([
      '2: a.md#third-part (no heading #third-part in docs/a.md)',
    ]);
    expect(check('[up](../../x.md)')).toEqual(['1: ../../x.md (outside the repository)']);
  });

  it('checks anchors within the page itself, and ignores links in code', () => {
    expect(brokenLinks('docs/a.md', '# A page\n\n[self](#a-page) [none](#nowhere)', read, exists)).toEqual([
      '3: #nowhere (no heading #nowhere in docs/a.md)',
    ]);
    expect(check('`[gone](gone.md)`\n```\n[gone](gone.md)\n```')).toEqual([]);
  });

  it('skips the dashboard and reset-and-seed pages only while they are missing', () => {
    expect(check('[d](dashboard.md) [r](reset-and-seed.md)')).toEqual([]);
    expect(check('[other](other.md)')).toEqual(['1: other.md (no file docs/other.md)']);
    const withDashboard = (path: string) => path === 'docs/dashboard.md' || path in pages;
    const noAnchor = (path: string) => (path === 'docs/dashboard.md' ? '# Dashboard\n' : pages[path]);
    expect(brokenLinks('docs/b.md', '[d](dashboard.md#nope)', noAnchor, withDashboard)).toEqual([
      '1: dashboard.md#nope (no heading #nope in docs/dashboard.md)',
    ]);
  });
});
