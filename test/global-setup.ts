import { execFileSync } from 'node:child_process';

// Tests that run the `railyard` command need the bundle; build it once per run.
export default function setup(): void {
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
}
