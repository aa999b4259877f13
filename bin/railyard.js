#!/usr/bin/env node
// The `railyard` command: runs the bundled CLI (built on install by `npm run build`).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = fileURLToPath(new URL('../dist/main.js', import.meta.url));
if (!existsSync(entry)) {
  console.error('railyard: dist/main.js is missing; run `npm run build` first');
  process.exit(1);
}
await import(entry);
