// Bundles the TypeScript sources into dist/ with esbuild. Packages stay external,
// so native modules (better-sqlite3) load from node_modules as usual.
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
