// Bundles the TypeScript sources into dist/ with esbuild. Packages stay external,
// so native modules (better-sqlite3) load from node_modules as usual. The dashboard's front
// end (dashboard/) is bundled for the browser into dist/dashboard/ (app.js and app.css), with
// Preact inside it: the server serves those two files and needs nothing at run time.
import { build } from 'esbuild';
import { existsSync } from 'node:fs';

const entryPoints = { main: 'src/main.ts' };
if (existsSync('bench/run.ts'))
  Object.assign(entryPoints, {
    bench: 'bench/run.ts',
    baseline: 'bench/baseline.ts',
    floor: 'bench/floor.ts',
    'floor-pg': 'bench/floor-pg.ts',
  });

await build({
  entryPoints,
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
});

await build({
  entryPoints: { app: 'dashboard/src/main.tsx' },
  outdir: 'dist/dashboard',
  bundle: true,
  platform: 'browser',
  target: ['chrome109', 'firefox115', 'safari16'],
  format: 'esm',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  minify: true,
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
});
