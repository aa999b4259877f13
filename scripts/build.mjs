// Bundles the TypeScript sources into dist/ with esbuild. The server (dist/main.js) carries
// its dependencies inside it: resolving, reading and linking the several hundred files of
// fastify, ajv, kysely and the rest one by one was most of a start (about 1.6 s of CPU on the
// 2-core VM, against about 0.9 s bundled). Left outside: the native SQLite drivers, the
// packages loaded on first use (src/lazy.ts: PostgreSQL, wallet and passkey cryptography),
// and pino, whose transports run in worker threads that load it by path. The bench's entries
// keep every package external, as before. The dashboard's front
// end (dashboard/) is bundled for the browser into dist/dashboard/ (app.js and app.css), with
// Preact inside it: the server serves those two files and needs nothing at run time.
import { build } from 'esbuild';
import { copyFileSync, existsSync, readdirSync, rmSync } from 'node:fs';

// The CommonJS packages inside a bundle call require() for Node's own modules.
const requireBanner = {
  js: "import { createRequire as railyardRequire } from 'node:module'; const require = railyardRequire(import.meta.url);",
};

// The server (dist/main.js, the `railyard` command) and the package's entry (dist/index.js,
// `import { startRailyard } from 'railyard'`) share their code in one chunk beside them
// (chunk-<hash>.js): in dist/ itself, as the code finds its worker threads and the dashboard
// beside the file it runs from.
const server = await build({
  entryPoints: { main: 'src/main.ts', index: 'src/package/index.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  chunkNames: 'chunk-[hash]',
  platform: 'node',
  target: 'node20',
  format: 'esm',
  external: [
    'better-sqlite3',
    'better-sqlite3-napi',
    'pg',
    '@turnkey/crypto',
    '@simplewebauthn/server',
    '@simplewebauthn/server/helpers',
    'pino',
  ],
  banner: requireBanner,
  sourcemap: true,
  sourcesContent: false,
  metafile: true,
  logLevel: 'warning',
});

// Chunks of an earlier build would be left beside the new ones (and packed): removed once the
// new ones are written, so that a server starting meanwhile (a test run beside this build)
// never finds its chunk missing.
const written = new Set(Object.keys(server.metafile.outputs).map((path) => path.replace(/^dist\//, '')));
for (const file of readdirSync('dist'))
  if (/^chunk-.*\.js(\.map)?$/.test(file) && !written.has(file)) rmSync(`dist/${file}`);

// The package's declarations: the public types (src/package/types.ts holds types only, so it
// is a declaration file as it stands) and the entry's exports (src/package/public.d.ts, which
// src/package/index.ts is checked against).
copyFileSync('src/package/types.ts', 'dist/types.d.ts');
copyFileSync('src/package/public.d.ts', 'dist/index.d.ts');

// The threads of the webhook sender (src/events/sender.ts), of the embedded store's
// checkpoints (src/db/checkpointer.ts) and of the request journal's file
// (src/modules/requests/journal-file.ts), loaded by path beside the server's bundle. The
// sender carries undici inside it.
await build({
  entryPoints: {
    'send-worker': 'src/events/send-worker.js',
    'checkpoint-worker': 'src/db/checkpoint-worker.js',
    'journal-worker': 'src/modules/requests/journal-worker.js',
  },
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  banner: requireBanner,
  logLevel: 'warning',
});

const entryPoints = {};
if (existsSync('bench/run.ts'))
  Object.assign(entryPoints, {
    bench: 'bench/run.ts',
    baseline: 'bench/baseline.ts',
    floor: 'bench/floor.ts',
    'floor-pg': 'bench/floor-pg.ts',
  });

if (Object.keys(entryPoints).length > 0)
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
