// The main script of railyard's single executable (scripts/build-sea.mjs). Node's single
// executable applications run one CommonJS script whose require() reaches Node's own modules
// only, and load a native addon only from a file. So the executable carries the server as it
// ships in the npm package (dist/main.js and its chunk, the worker threads, the dashboard),
// its packages loaded at run time as one file each, and the SQLite driver with its compiled
// addon, all as assets; at start it writes them to a private directory (mode 0700, removed
// when the process exits) and runs the server from there, as `node dist/main.js` would.
'use strict';

const { getAsset, getAssetKeys } = require('node:sea');
const { mkdirSync, mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { dirname, join } = require('node:path');
const { createRequire } = require('node:module');

const dir = mkdtempSync(join(process.env.RAILYARD_UNPACK_DIR || tmpdir(), 'railyard-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
for (const key of getAssetKeys()) {
  const file = join(dir, key);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, new Uint8Array(getAsset(key)), { mode: key.endsWith('.node') ? 0o755 : 0o644 });
}
// start.cjs imports dist/main.js: a module read from a file has the whole module loader.
createRequire(join(dir, 'start.cjs'))('./start.cjs');
