// Small readers of the project's Markdown pages, for the docs tests.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(__dirname, '../..');

/** README.md and every page of docs/, as paths relative to the repository. */
export function docPages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

export function readPage(page: string): string {
  return readFileSync(join(ROOT, page), 'utf8');
}

/** The text with fenced code blocks blanked out (their lines kept, so line numbers hold). */
export function withoutFences(markdown: string): string {
  let fenced = false;
  return markdown
    .split('\n')
    .map((line) => {
      if (line.startsWith('```')) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line;
    })
    .join('\n');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a page's headings make, with GitHub's -1, -2 … for repeated ones. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of withoutFences(markdown).split('\n')) {
    const match = /^#{1,6} (.+)$/.exec(line);
    if (!match) continue;
    const base = slug(match[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.add(count === 0 ? base : `${base}-${count}`);
  }
  return out;
}

export interface Link {
  target: string;
  line: number;
}

/** Inline links and images, outside code fences and code spans. */
export function links(markdown: string): Link[] {
  const out: Link[] = [];
  withoutFences(markdown)
    .split('\n')
    .forEach((text, i) => {
      const prose = text.replace(/`[^`]*`/g, '');
      for (const match of prose.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g))
        out.push({ target: match[1]!, line: i + 1 });
    });
  return out;
}
