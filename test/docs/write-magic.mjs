// `npm run docs:magic`: rewrites every magic-value block of README.md and docs/*.md from
// src/rails/magic.ts (the rendering is test/docs/magic-docs.ts, which the test shares).
// Bundles that module in memory with esbuild, as the build does, so no TypeScript runner
// is needed.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const bundle = await build({
  entryPoints: ['test/docs/magic-docs.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  write: false,
  logLevel: 'warning',
});
const source = bundle.outputFiles[0].text;
const { rewriteMagicBlocks } = await import(`data:text/javascript;base64,${Buffer.from(source).toString('base64')}`);

const pages = [
  'README.md',
  ...readdirSync('docs')
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name)),
];
for (const page of pages) {
  const before = readFileSync(page, 'utf8');
  const after = rewriteMagicBlocks(before);
  if (after !== before) {
    writeFileSync(page, after);
    console.log(`docs:magic: rewrote ${page}`);
  }
}
