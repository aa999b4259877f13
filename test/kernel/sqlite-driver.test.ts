// The embedded store's driver by Node version: better-sqlite3 13 (Node-API) from Node 24.19
// on, when installed, else 12; see src/db/sqlite-driver.ts for why.

import { describe, expect, it } from 'vitest';
import { loadSqlite, sqlitePackages } from '../../src/db/sqlite-driver.js';

describe('the SQLite driver', () => {
  it('prefers better-sqlite3 13 from Node 24.19 on and uses 12 before', () => {
    expect(sqlitePackages('20.20.2')).toEqual(['better-sqlite3']);
    expect(sqlitePackages('22.23.3')).toEqual(['better-sqlite3']);
    expect(sqlitePackages('24.18.1')).toEqual(['better-sqlite3']);
    expect(sqlitePackages('24.19.0')).toEqual(['better-sqlite3-napi', 'better-sqlite3']);
    expect(sqlitePackages('24.21.0')).toEqual(['better-sqlite3-napi', 'better-sqlite3']);
    expect(sqlitePackages('25.1.0')).toEqual(['better-sqlite3-napi', 'better-sqlite3']);
  });

  it('loads a driver that opens a database', () => {
    const { name, driver } = loadSqlite();
    expect(sqlitePackages()).toContain(name);
    const db = new driver(':memory:');
    try {
      expect(db.prepare('SELECT 1 + 1 AS two').get()).toEqual({ two: 2 });
    } finally {
      db.close();
    }
  });
});
