// Reads a CPU profile of the server (node --cpu-prof, written when the process exits) and says
// where the main thread's time went, by the source file of railyard's bundle that was running
// (mapped back through the bundle's source map) or the package, and for a few parts of the
// request path, the time spent in them and in everything they called. Used by the journal's
// part of the bench (bench/journal.ts, BENCH_PROFILE=1) to find what the request journal, the
// fault rules and the event waiters cost a request.

import { readdirSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Parts of the request path whose time counts with everything they call. */
export const PARTS: { name: string; files: string[] }[] = [
  { name: 'journal: capture (request path)', files: ['src/http/journal.ts', 'src/http/request-marks.ts'] },
  { name: 'journal: writer (rows, redaction, SQL)', files: ['src/modules/requests/journal.ts'] },
  { name: 'fault rules (request hooks)', files: ['src/faults/requests.ts'] },
  { name: 'event waiters', files: ['src/events/waiters.ts'] },
];

export interface ProfileSummary {
  /** Sampled time in all, ms (idle included). */
  totalMs: number;
  idleMs: number;
  gcMs: number;
  /** Inclusive time of each part of PARTS, ms. */
  parts: Map<string, number>;
  /** Self time by where it ran: a file of src/, a package, or a native function; ms. */
  selfByPlace: Map<string, number>;
}

/** Where a frame's code comes from, through the bundle's source maps. */
function placer(): (frame: CallFrame) => string {
  const maps = new Map<string, SourceMap | null>();
  const mapOf = (path: string): SourceMap | null => {
    let map = maps.get(path);
    if (map === undefined) {
      try {
        map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')));
      } catch {
        map = null;
      }
      maps.set(path, map);
    }
    return map;
  };
  return (frame) => {
    if (frame.url === '') return `(native) ${frame.functionName || '(anonymous)'}`;
    if (frame.url.startsWith('node:')) return 'node internals';
    const path = frame.url.startsWith('file://') ? fileURLToPath(frame.url) : frame.url;
    const packageName = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1];
    if (packageName !== undefined) return packageName;
    const entry = mapOf(path)?.findEntry(frame.lineNumber, frame.columnNumber) as { originalSource?: string };
    const source = entry?.originalSource;
    if (source === undefined) return path;
    const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source)?.[1];
    if (inPackage !== undefined) return inPackage;
    const inSrc = /(?:^|\/)((?:src|bench)\/.*)$/.exec(source)?.[1];
    return inSrc ?? source;
  };
}

export function summarize(profile: CpuProfile): ProfileSummary {
  const place = placer();
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const placeOf = new Map<number, string>();
  const placeOfNode = (id: number) => {
    let where = placeOf.get(id);
    if (where === undefined) {
      where = place(byId.get(id)!.callFrame);
      placeOf.set(id, where);
    }
    return where;
  };
  const summary: ProfileSummary = { totalMs: 0, idleMs: 0, gcMs: 0, parts: new Map(), selfByPlace: new Map() };
  for (const part of PARTS) summary.parts.set(part.name, 0);
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    summary.totalMs += ms;
    const leaf = byId.get(id)!.callFrame.functionName;
    if (leaf === '(idle)') {
      summary.idleMs += ms;
      continue;
    }
    if (leaf === '(garbage collector)') summary.gcMs += ms;
    const self = leaf === '(garbage collector)' || leaf === '(program)' ? leaf : placeOfNode(id);
    summary.selfByPlace.set(self, (summary.selfByPlace.get(self) ?? 0) + ms);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const where = placeOfNode(at);
      for (const part of PARTS) {
        if (!seen.has(part.name) && part.files.includes(where)) {
          seen.add(part.name);
          summary.parts.set(part.name, summary.parts.get(part.name)! + ms);
        }
      }
    }
  }
  return summary;
}

/** The profile node wrote in `dir` (the one file there). */
export function readProfile(dir: string): CpuProfile {
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error(`no .cpuprofile in ${dir}`);
  return JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
}

/**
 * Prints the summaries side by side, per 1,000 requests: `columns` names each profile and
 * how many requests its server answered while it was taken.
 */
export function printSummaries(columns: { label: string; summary: ProfileSummary; requests: number }[]): void {
  const per = (ms: number, requests: number) => ((ms * 1000) / requests).toFixed(1).padStart(12);
  const header = columns.map((column) => column.label.padStart(12)).join('');
  console.log(`  main-thread CPU, ms per 1,000 requests${' '.repeat(10)}${header}`);
  const line = (name: string, value: (summary: ProfileSummary) => number) =>
    console.log(`  ${name.padEnd(48)}${columns.map((column) => per(value(column.summary), column.requests)).join('')}`);
  line('busy (all but idle)', (summary) => summary.totalMs - summary.idleMs);
  line('garbage collection', (summary) => summary.gcMs);
  for (const part of PARTS) line(part.name, (summary) => summary.parts.get(part.name)!);
  const places = new Map<string, number>();
  for (const column of columns)
    for (const [where, ms] of column.summary.selfByPlace) places.set(where, Math.max(places.get(where) ?? 0, ms));
  console.log('  self time, the 25 largest places:');
  for (const [where] of [...places].sort((a, b) => b[1] - a[1]).slice(0, 25))
    line(`  ${where.slice(0, 46)}`, (summary) => summary.selfByPlace.get(where) ?? 0);
}
