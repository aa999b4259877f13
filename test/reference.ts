// The reference contract, found beside the repository (or where RAILYARD_SHARED points).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';

function sharedDir(): string {
  const candidates = [process.env.RAILYARD_SHARED, join(__dirname, '../../shared'), '/work/shared'];
  for (const dir of candidates) if (dir && existsSync(join(dir, 'reference/grid-openapi.yaml'))) return dir;
  throw new Error('cannot find shared/reference/grid-openapi.yaml; set RAILYARD_SHARED');
}

let cached: any;
export function referenceSpec(): any {
  cached ??= YAML.parse(readFileSync(join(sharedDir(), 'reference/grid-openapi.yaml'), 'utf8'));
  return cached;
}
