// Which build of better-sqlite3 this process uses. Version 12 (compiled here from source)
// is the faster one, but from Node 24.19 on its statements and databases abort the process
// when a background garbage collection frees one (node::ObjectWrap's destructor then runs
// with no environment: nodejs/node#65446). Version 13 is built on Node-API, which does not
// have that problem, and ships its own binaries, but needs Node 22 or later (on Node 20 it
// crashes while loading) and runs statements more slowly. It is an optional dependency
// under the name better-sqlite3-napi, which npm leaves out on Node 20. So Node 24.19 and
// later take 13 when it is there; every other version takes 12.

import { createRequire } from 'node:module';
import type SQLite from 'better-sqlite3';

const require = createRequire(import.meta.url);

export type SqlitePackage = 'better-sqlite3' | 'better-sqlite3-napi';

/** The packages this Node version may use, the preferred one first. */
export function sqlitePackages(nodeVersion = process.versions.node): SqlitePackage[] {
  const [major = 0, minor = 0] = nodeVersion.split('.').map(Number);
  const objectWrapBroken = major > 24 || (major === 24 && minor >= 19);
  return objectWrapBroken ? ['better-sqlite3-napi', 'better-sqlite3'] : ['better-sqlite3'];
}

export interface LoadedSqlite {
  name: SqlitePackage;
  driver: typeof SQLite;
  /** The module's resolved file: a worker thread loads it by this path (checkpointer.ts). */
  path: string;
}

let loaded: LoadedSqlite | undefined;

/** The better-sqlite3 module this process uses (and its package name and path). */
export function loadSqlite(): LoadedSqlite {
  if (loaded !== undefined) return loaded;
  const candidates = sqlitePackages();
  for (const [i, name] of candidates.entries()) {
    try {
      loaded = { name, driver: require(name) as typeof SQLite, path: require.resolve(name) };
      if (i > 0) {
        process.emitWarning(
          `${candidates[0]} is not installed; better-sqlite3 12 may abort this process under Node ${process.versions.node} (reinstall without --omit=optional)`,
        );
      }
      return loaded;
    } catch (err) {
      // Not installed (npm left the optional package out, or --omit=optional): the next one.
      if (i === candidates.length - 1 || (err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
    }
  }
  throw new Error('unreachable');
}
