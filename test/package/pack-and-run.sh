#!/usr/bin/env bash
# The railyard package, as an integrator gets it (run by .ci/run after the main install): `npm
# pack` (which builds dist/), the tarball installed into an empty project in a temporary
# directory (outside this tree, so nothing resolves from its node_modules), then there
# test/package/smoke.mjs (startRailyard in memory, a payout awaited through events.waitFor,
# the report, close) and `npx railyard help`.
#
# The dependencies come from npm's cache, filled by the main install (--prefer-offline: the
# registry only for what the cache lacks). Install scripts are off and better-sqlite3's native
# addon is the one the main install built, when the versions match: its install script would
# otherwise compile SQLite again (prebuild-install finds no binary offline), minutes of CPU that
# prove nothing the main install did not. Another version is rebuilt as npm would.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DIR="$(mktemp -d "${TMPDIR:-/tmp}/railyard-package.XXXXXX")"
trap 'rm -rf "$DIR"' EXIT

cd "$ROOT"
TARBALL="$DIR/$(npm pack --silent --pack-destination "$DIR" | tail -n 1)"
FILES="$(tar -tzf "$TARBALL")"
echo "packed $(basename "$TARBALL"): $(echo "$FILES" | wc -l) files, $(du -k "$TARBALL" | cut -f1) kB"
# The package carries its built code, and none of the sources or tests.
# (grep reads a here-string: `echo | grep -q` under pipefail fails when grep stops reading early.)
for file in package/dist/main.js package/dist/index.js package/dist/index.d.ts package/dist/types.d.ts \
  package/dist/send-worker.js package/dist/checkpoint-worker.js package/dist/journal-worker.js package/bin/railyard.js; do
  grep -qx "$file" <<< "$FILES" || { echo "package: $file is missing from the tarball"; exit 1; }
done
if grep -E '^package/(src|test)/' <<< "$FILES"; then echo "package: sources or tests in the tarball"; exit 1; fi

mkdir "$DIR/project"
cd "$DIR/project"
printf '{ "name": "railyard-package-check", "private": true, "type": "module" }\n' > package.json
npm install --prefer-offline --ignore-scripts --no-audit --no-fund --loglevel=error "$TARBALL"
[ ! -d node_modules/esbuild ] || { echo "package: a dev dependency (esbuild) was installed"; exit 1; }
ours="$(node -p 'require(process.argv[1]).version' "$ROOT/node_modules/better-sqlite3/package.json")"
theirs="$(node -p 'require(process.argv[1]).version' "$DIR/project/node_modules/better-sqlite3/package.json")"
if [ "$ours" = "$theirs" ] && [ -f "$ROOT/node_modules/better-sqlite3/build/Release/better_sqlite3.node" ]; then
  mkdir -p node_modules/better-sqlite3/build/Release
  cp "$ROOT/node_modules/better-sqlite3/build/Release/better_sqlite3.node" node_modules/better-sqlite3/build/Release/
else
  npm rebuild --no-audit --no-fund better-sqlite3
fi

cp "$ROOT/test/package/smoke.mjs" .
node smoke.mjs
npx --offline railyard help
