// CI's verdict on a conformance report (openapi-conformance check --report FILE): every
// recorded response conforms to the reference and no invalid request was accepted with 2xx,
// except the statuses railyard knowingly answers outside the reference, each listed with its
// reason in src/http/reference-deviations.json (operationId, method, path, status, why). Such
// a response is allowed only if its body is the reference's error envelope for that status:
// the tool checks an undeclared status's body against the Error<status> schema the reference
// uses elsewhere, and the gate fails when that check failed or there is no such schema.
// Anything else fails the gate, and so do log lines the tool could not read and a report with
// no responses at all. Requests that match no operation are counted, not judged (as the tool's
// own --fail-on-nonconforming does).
//
//   node scripts/conformance-gate.mjs <report.json> [deviations.json]

import { readFileSync } from 'node:fs';

const [reportPath, deviationsPath = new URL('../src/http/reference-deviations.json', import.meta.url)] =
  process.argv.slice(2);
if (!reportPath) {
  console.error('usage: node scripts/conformance-gate.mjs <report.json> [deviations.json]');
  process.exit(2);
}
const report = JSON.parse(readFileSync(reportPath, 'utf8'));
const deviations = JSON.parse(readFileSync(deviationsPath, 'utf8'));
if (report.tool !== 'openapi-conformance' || !report.totals || !Array.isArray(report.operations)) {
  console.error(`conformance gate: ${reportPath} is not an openapi-conformance report`);
  process.exit(2);
}

const problems = [];
const fail = (line) => problems.push(line);
const errorList = (errors) =>
  (errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message}${e.path ? ` [${e.path}]` : ''}`).join('; ');

// The deviations railyard declares, by operationId and status.
const allowed = new Map();
for (const d of deviations.undeclaredStatuses ?? []) {
  const key = `${d.operationId} ${d.status}`;
  if (!d.operationId || !d.method || !d.path || !Number.isInteger(d.status) || !d.why) {
    fail(
      `reference-deviations.json: an entry lacks operationId, method, path, an integer status or why: ${JSON.stringify(d)}`,
    );
  } else if (allowed.has(key)) {
    fail(`reference-deviations.json: ${key} is listed twice`);
  } else {
    allowed.set(key, { ...d, seen: 0, refused: 0 });
  }
}

let allowedResponses = 0;
let explained = 0;
let acceptedWith2xx = 0;
for (const op of report.operations) {
  const name = `${op.operation} (${op.operationId})`;
  for (const [status, found] of Object.entries(op.undeclaredStatuses ?? {})) {
    explained += found.count;
    const deviation = allowed.get(`${op.operationId} ${status}`);
    let refusal = null;
    if (deviation === undefined) {
      refusal = `${found.count} response(s) with status ${status}, which the reference does not declare and reference-deviations.json does not list`;
    } else if (`${deviation.method.toUpperCase()} ${deviation.path}` !== op.operation) {
      refusal = `reference-deviations.json lists ${deviation.operationId} as ${deviation.method} ${deviation.path}`;
    } else if (found.errorSchema === null) {
      refusal = `status ${status} is an allowed deviation, but the reference has no Error${status} envelope to check its ${found.count} body(ies) against`;
    } else if (found.schemaErrors.length > 0) {
      // The tool keeps the distinct errors, not which response had them: all of them fail.
      refusal = `status ${status} is an allowed deviation, but not every body of its ${found.count} response(s) is the ${found.errorSchema} envelope: ${errorList(found.schemaErrors)}`;
    }
    if (refusal !== null) {
      fail(`${name}: ${refusal}`);
      if (deviation !== undefined) deviation.refused += found.count;
    } else {
      deviation.seen += found.count;
      allowedResponses += found.count;
    }
  }
  for (const [status, f] of Object.entries(op.responseSchemaFailures?.byStatus ?? {})) {
    explained += f.count;
    fail(`${name}: ${f.count} response(s) with status ${status} do not conform: ${errorList(f.errors)}`);
  }
  const accepted = op.requestBodyFailures?.acceptedWith2xx ?? 0;
  acceptedWith2xx += accepted;
  if (accepted > 0) {
    const examples = op.requestBodyFailures.errors.filter((e) => e.accepted);
    fail(`${name}: ${accepted} invalid request(s) accepted with 2xx: ${errorList(examples)}`);
  }
}

const t = report.totals;
if (t.responses === 0) fail('the report holds no responses: nothing was recorded');
if (t.responses - t.responsesConforming !== explained) {
  fail(
    `the report's totals do not add up: ${t.responses - t.responsesConforming} non-conforming responses, ${explained} found per operation`,
  );
}
if (t.invalidRequestsAcceptedWith2xx !== acceptedWith2xx) {
  fail(
    `the report's totals do not add up: ${t.invalidRequestsAcceptedWith2xx} invalid requests accepted with 2xx, ${acceptedWith2xx} found per operation`,
  );
}
if (t.malformedLogLines > 0)
  fail(`${t.malformedLogLines} line(s) of the exchange log could not be read, so were not checked`);
if (t.proxyErrors > 0) fail(`${t.proxyErrors} proxy error(s)`);

console.log(
  `conformance gate: ${t.responsesConforming}/${t.responses} responses conform, ${allowedResponses} more are allowed deviations, ` +
    `${t.responses - t.responsesConforming - allowedResponses} are not; ${t.invalidRequestsAcceptedWith2xx} invalid requests accepted with 2xx; ` +
    `${t.unmatchedRequests} requests matched no operation (not judged)`,
);
for (const d of allowed.values()) {
  if (d.seen > 0)
    console.log(`  allowed: ${d.method} ${d.path} (${d.operationId}) -> ${d.status}, x${d.seen}: ${d.why}`);
  if (d.refused > 0)
    console.log(
      `  listed, but refused (see below): ${d.method} ${d.path} (${d.operationId}) -> ${d.status}, x${d.refused}`,
    );
  if (d.seen + d.refused === 0)
    console.log(`  listed, not seen in this run: ${d.method} ${d.path} (${d.operationId}) -> ${d.status}`);
}
if (problems.length > 0) {
  console.error(`conformance gate: FAILED, ${problems.length} problem(s):`);
  for (const line of problems) console.error(`  ✗ ${line}`);
  process.exit(1);
}
console.log('conformance gate: passed');
