// Which build of better-sqlite3 this process uses. Version 12 (compiled here from source)
// runs on every Node line we support, but from Node 24.19 on its statements and databases
// abort the process when a background garbage collection frees one (node::ObjectWrap's
// destructor then runs with no environment). Version 13 is built on Node-API, which does
// not have that problem, and ships its own binaries, but needs Node 22 or later (on Node 20
// it crashes while loading). It is an optional dependency under the name
// better-sqlite3-napi, which npm leaves out on Node 20: Node 22 and later take it when it
// is there, everything else takes 12.

import { createRequire } from 'node:module';
import type SQLite from 'better-sqlite3';

const require = createRequire(import.meta.url);

export type SqlitePackage = 'better-sqlite3' | 'better-sqlite3-napi';

/** The packages this Node version may use, the preferred one first. */
export function sqlitePackages(nodeVersion = process.versions.node): SqlitePackage[] {
  const major = Number(nodeVersion.split('.')[0]);
  return major >= 22 ? ['better-sqlite3-napi', 'better-sqlite3'] : ['better-sqlite3'];
}

let loaded: { name: SqlitePackage; driver: typeof SQLite } | undefined;

/** The better-sqlite3 module this process uses (and its package name). */
export function loadSqlite(): { name: SqlitePackage; driver: typeof SQLite } {
  if (loaded !== undefined) return loaded;
  const candidates = sqlitePackages();
  for (const [i, name] of candidates.entries()) {
    try {
      loaded = { name, driver: require(name) as typeof SQLite };
      return loaded;
    } catch (err) {
      // Not installed (npm left the optional package out, or --omit=optional): the next one.
      if (i === candidates.length - 1 || (err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
    }
  }
  throw new Error('unreachable');
}
