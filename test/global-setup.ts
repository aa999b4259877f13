import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  // Tests that run the `railyard` command need the bundle; build it once per run.
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  // The stores, recordings and browser profiles the tests make go into one directory of
  // this run, removed when it ends: left in the system's temporary directory they came to
  // about 40 MB a run. The test workers, and the servers they start, inherit TMPDIR.
  const runDir = mkdtempSync(join(tmpdir(), 'railyard-test-run-'));
  process.env.TMPDIR = runDir;
  return () => rmSync(runDir, { recursive: true, force: true });
}
