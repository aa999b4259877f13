// Snapshot restore (issue 38): how long POST /_railyard/snapshots/{name}/restore takes on a
// seeded platform (`railyard seed`, size 2), one restore at a time as a test suite calls it
// between tests, on the embedded store and on PostgreSQL. Each server's own platform is
// seeded through the server-admin endpoint (the token is in its runtime file), saved once,
// then restored again and again; every answer is checked (200, every table's rows put back).
//
//   npm run bench -- snapshots      (this part alone)
//   BENCH_SNAPSHOT_SAMPLES=60
//
// Targets: p50 <= 50 ms on the embedded store, <= 200 ms on PostgreSQL. The PostgreSQL side
// uses DATABASE_URL when set, else a server the bench starts (bench/postgres.ts).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startPostgres } from './postgres.js';
import { databaseUrl, get, percentile, type ServerInfo, startRailyard, stopped } from './support.js';

export const SNAPSHOT_SCENARIO = 'snapshots';
const SAMPLES = Number(process.env.BENCH_SNAPSHOT_SAMPLES ?? 40);
const WARMUP = 5;
const SEED_SIZE = 2;
const P50_MAX_MS = { sqlite: 50, postgres: 200 } as const;

interface Figures {
  store: keyof typeof P50_MAX_MS;
  rows: number;
  sizeBytes: number;
  samplesMs: number[];
}

async function call(server: ServerInfo, method: string, path: string, auth: string, body?: unknown): Promise<any> {
  const reply = await fetch(`${server.origin}${path}`, {
    method,
    headers: { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await reply.text();
  if (!reply.ok) throw new Error(`${method} ${path} failed: ${reply.status} ${text}`);
  return JSON.parse(text);
}

const sum = (rows: Record<string, number>) => Object.values(rows).reduce((total, n) => total + n, 0);

/** One server on `store`: seed its platform, save, then time restores one after another. */
async function measure(store: Figures['store'], url?: string): Promise<Figures> {
  const railyard = await startRailyard({ databaseUrl: url });
  try {
    const server = railyard.info;
    const admin = `Bearer ${JSON.parse(readFileSync(join(railyard.dataDir, 'server.json'), 'utf8')).token}`;
    const platformId = (await get(server, '/config')).id as string;
    await call(server, 'POST', '/_railyard/server/seed', admin, { platformId, size: SEED_SIZE });
    const saved = await call(server, 'POST', '/_railyard/snapshots', server.auth, { name: 'bench-seeded' });
    const samplesMs: number[] = [];
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      const started = performance.now();
      const result = await call(server, 'POST', '/_railyard/snapshots/bench-seeded/restore', server.auth);
      const ms = performance.now() - started;
      // The platform's system ledger accounts stay through a restore: those are not put back.
      for (const [table, count] of Object.entries(saved.rows as Record<string, number>))
        if (table !== 'ledger_accounts' && result.restored[table] !== count)
          throw new Error(`restore put back ${result.restored[table]} rows of ${table}, the snapshot holds ${count}`);
      if (i >= WARMUP) samplesMs.push(ms);
    }
    return { store, rows: sum(saved.rows), sizeBytes: saved.sizeBytes, samplesMs };
  } finally {
    railyard.child.kill('SIGTERM');
    await stopped(railyard.child);
  }
}

/** Runs and prints the snapshot part; true when both targets passed. */
export async function snapshotPart(): Promise<boolean> {
  const results: Figures[] = [await measure('sqlite')];
  const own = databaseUrl === undefined ? await startPostgres() : undefined;
  let skipped: string | undefined;
  if (typeof own === 'string') skipped = own;
  else {
    try {
      results.push(await measure('postgres', databaseUrl ?? own!.url));
    } finally {
      own?.stop();
    }
  }
  console.log(
    `\nsnapshot restore of a seeded platform (seed size ${SEED_SIZE}), one at a time, ${SAMPLES} samples after ${WARMUP}`,
  );
  let ok = true;
  for (const figures of results) {
    const sorted = [...figures.samplesMs].sort((a, b) => a - b);
    const p50 = percentile(sorted, 50);
    const pass = p50 <= P50_MAX_MS[figures.store];
    ok &&= pass;
    console.log(
      `  ${figures.store.padEnd(9)}${String(figures.rows).padStart(6)} rows, ${(figures.sizeBytes / 1024).toFixed(0)} KB: ` +
        `p50 ${p50.toFixed(1)} ms  p99 ${percentile(sorted, 99).toFixed(1)} ms  max ${sorted[sorted.length - 1]!.toFixed(1)} ms` +
        `  (target p50 <= ${P50_MAX_MS[figures.store]} ms: ${pass ? 'PASS' : 'FAIL'})`,
    );
  }
  if (skipped !== undefined) console.log(`  postgres skipped: ${skipped}`);
  return ok;
}
