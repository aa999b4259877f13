// Fails when the modules under src/ import each other in a circle, and lists every circle;
// fails when a file imports one on a higher floor (FLOORS below: an import only goes down);
// fails too when a file imports the store of another area (src/modules/<area>/store.ts is
// that area's SQL: other code calls its service).
//
// Every import between two files of src/ is an edge: `import`, `import type`, `export … from`,
// a type written as `import('…')` and a dynamic `import('…')` alike. Type-only imports count
// on purpose: a type two modules both need belongs to a third, lower one that imports
// nothing of theirs (`src/http/deps.ts`, `src/rails/types.ts`), so that a reader can tell
// which side is the lower layer; and a dynamic import is no way out of a circle either.
//
// The files are read with TypeScript's parser (a dependency the project already has), so
// an import in a comment or a string is not one. Circles are found as the strongly
// connected components of the graph (Tarjan); for each component the check prints its
// members and, for every edge inside it, the shortest circle through that edge, so that
// each import that closes a circle is named once.
//
// Usage: node scripts/check-imports.mjs [root]   (root defaults to src; exit 1 on a finding)

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(process.argv[2] ?? 'src');

// The floors of src/, highest first (CONTRIBUTING.md, "Layers"). A file may import files of its
// own floor or of a lower one, never of a higher one. Each name is a folder or a file of src/
// (without its extension); a file's floor is that of the longest name it falls under, so a file
// can sit below its folder (the error catalogue imports nothing, and every floor throws its
// errors). A file under no name fails the check until it is given a floor here.
const FLOORS = [
  ['main', 'package'], // what starts the server: the command line, startRailyard
  ['app'], // the server assembled
  ['sandbox'], // above every area: seed, reset, snapshots, server administration, the dashboard
  ['modules'], // the API's areas (among them, only circles and foreign stores are refused)
  ['rails'], // the payment rails, their simulation and the sandbox's magic values
  ['events', 'faults', 'jobs', 'rates'],
  ['ledger', 'http'],
  ['db', 'crypto'],
  [
    'clock',
    'config',
    'currencies',
    'full-collection',
    'ids',
    'json',
    'lazy',
    'memory',
    'passkey-origins',
    'regions',
    'http/errors',
  ],
];
const extensions = ['.ts', '.js', '.mjs'];

function listFiles(dir) {
  const files = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files.push(...listFiles(path));
    else if (extensions.some((ext) => name.endsWith(ext)) && !name.endsWith('.d.ts')) files.push(path);
  }
  return files.sort();
}

const files = listFiles(root);
const known = new Set(files);

/** The file under src that a relative specifier names (`./x.js` is written for `./x.ts`). */
function resolveSpecifier(from, specifier) {
  if (!specifier.startsWith('.')) return null;
  const base = resolve(dirname(from), specifier);
  const stem = base.replace(/\.(js|mjs|ts)$/, '');
  for (const candidate of [base, `${stem}.ts`, `${stem}.js`, `${stem}.mjs`, join(base, 'index.ts')]) {
    if (known.has(candidate)) return candidate;
  }
  return null;
}

/** The specifiers a file imports, read from its syntax tree. */
function importsOf(file) {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const specifiers = [];
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) specifiers.push(node.moduleSpecifier.text);
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument;
      if (ts.isLiteralTypeNode(arg) && ts.isStringLiteral(arg.literal)) specifiers.push(arg.literal.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      specifiers.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers;
}

const edges = new Map();
for (const file of files) {
  const targets = new Set();
  for (const specifier of importsOf(file)) {
    const target = resolveSpecifier(file, specifier);
    if (target && target !== file) targets.add(target);
  }
  edges.set(file, [...targets].sort());
}

// Tarjan's strongly connected components, iteratively (no recursion limit to meet).
function components() {
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const found = [];
  for (const start of files) {
    if (index.has(start)) continue;
    const work = [[start, 0]];
    index.set(start, counter);
    low.set(start, counter);
    counter += 1;
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [node, next] = frame;
      const targets = edges.get(node);
      if (next < targets.length) {
        frame[1] += 1;
        const target = targets[next];
        if (!index.has(target)) {
          index.set(target, counter);
          low.set(target, counter);
          counter += 1;
          stack.push(target);
          onStack.add(target);
          work.push([target, 0]);
        } else if (onStack.has(target)) {
          low.set(node, Math.min(low.get(node), index.get(target)));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(node)));
      }
      if (low.get(node) === index.get(node)) {
        const members = [];
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          members.push(member);
        } while (member !== node);
        if (members.length > 1) found.push(members.sort());
      }
    }
  }
  return found;
}

/** The shortest path from `from` to `to` inside `members`, breadth first. */
function shortestPath(from, to, members) {
  const previous = new Map([[from, null]]);
  const queue = [from];
  while (queue.length > 0) {
    const node = queue.shift();
    if (node === to) break;
    for (const target of edges.get(node)) {
      if (members.has(target) && !previous.has(target)) {
        previous.set(target, node);
        queue.push(target);
      }
    }
  }
  const path = [];
  for (let node = to; node !== null; node = previous.get(node)) path.unshift(node);
  return path;
}

const name = (file) => relative(root, file).replace(/\.(ts|js|mjs)$/, '');

/** `modules/<area>/store` imported from outside `modules/<area>/`. */
function foreignStoreImports() {
  const found = [];
  for (const [from, targets] of edges) {
    for (const to of targets) {
      const area = /^modules\/([^/]+)\/store$/.exec(name(to))?.[1];
      if (area !== undefined && !name(from).startsWith(`modules/${area}/`)) found.push([from, to]);
    }
  }
  return found;
}

/** The floor of a file (its index in FLOORS), or undefined when no name covers it. */
function floorOf(file) {
  const path = name(file);
  let best;
  for (const [index, names] of FLOORS.entries()) {
    for (const prefix of names) {
      if (
        (path === prefix || path.startsWith(`${prefix}/`)) &&
        (best === undefined || prefix.length > best.prefix.length)
      )
        best = { prefix, index };
    }
  }
  return best?.index;
}

/** Imports that climb to a higher floor, and files under no floor. */
function floorFindings() {
  const climbs = [];
  const unplaced = [];
  for (const [from, targets] of edges) {
    const fromFloor = floorOf(from);
    if (fromFloor === undefined) {
      unplaced.push(from);
      continue;
    }
    for (const to of targets) {
      const toFloor = floorOf(to);
      if (toFloor !== undefined && toFloor < fromFloor) climbs.push([from, to, fromFloor, toFloor]);
    }
  }
  return { climbs, unplaced };
}

const floorName = (index) => FLOORS[index].join(', ');
const { climbs, unplaced } = floorFindings();
for (const file of unplaced)
  console.log(`${name(file)} is on no floor: give it one in FLOORS (scripts/check-imports.mjs)`);
for (const [from, to, fromFloor, toFloor] of climbs) {
  console.log(
    `${name(from)} imports ${name(to)}: up from floor ${fromFloor + 1} (${floorName(fromFloor)}) to floor ${toFloor + 1} (${floorName(toFloor)})`,
  );
}

const storeImports = foreignStoreImports();
for (const [from, to] of storeImports) {
  console.log(`${name(from)} imports ${name(to)}: another area's store (call its service instead)`);
}
const circles = components();
const otherFindings = [
  storeImports.length > 0 ? `${storeImports.length} import(s) of another area's store` : '',
  climbs.length > 0 ? `${climbs.length} import(s) up to a higher floor` : '',
  unplaced.length > 0 ? `${unplaced.length} file(s) on no floor` : '',
].filter((text) => text !== '');
if (circles.length === 0) {
  if (otherFindings.length > 0) {
    console.error(`\ncheck-imports: ${otherFindings.join(', ')}. See CONTRIBUTING.md, "Layers".`);
    process.exit(1);
  }
  console.log(
    `check-imports: no import circles and no import up a floor among ${files.length} files of ${relative(process.cwd(), root)}/`,
  );
  process.exit(0);
}

let count = 0;
for (const members of circles) {
  const inside = new Set(members);
  console.log(`\nimport circle among ${members.length} modules: ${members.map(name).join(', ')}`);
  const seen = new Set();
  for (const from of members) {
    for (const to of edges.get(from)) {
      if (!inside.has(to)) continue;
      // The shortest circle through the edge from → to: the edge, then the way back.
      const back = shortestPath(to, from, inside);
      const circle = [from, ...back];
      const key = [...circle.slice(0, -1)].sort().join('|');
      if (seen.has(key)) continue;
      seen.add(key);
      count += 1;
      console.log(`  ${circle.map(name).join(' -> ')}`);
    }
  }
}
console.error(
  `\ncheck-imports: ${count} import circle(s) in ${circles.length} group(s)` +
    otherFindings.map((text) => `, ${text}`).join('') +
    '. Move what both sides need to the lower layer (see CONTRIBUTING.md, "Layers").',
);
process.exit(1);
