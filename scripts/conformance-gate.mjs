// CI's verdict on the conformance report (openapi-conformance check --report): every response
// conforms to the reference and no invalid request was accepted, except the statuses railyard
// knowingly answers outside the reference, each listed with its reason in
// src/http/reference-deviations.json. Such a response must still be the reference's error
// envelope for its status (the tool checks it against Error<status>).
//
//   node scripts/conformance-gate.mjs <report.json>

import { readFileSync } from 'node:fs';

const reportPath = process.argv[2];
if (!reportPath) {
  console.error('usage: node scripts/conformance-gate.mjs <report.json>');
  process.exit(2);
}
const report = JSON.parse(readFileSync(reportPath, 'utf8'));
const deviations = JSON.parse(readFileSync(new URL('../src/http/reference-deviations.json', import.meta.url), 'utf8'));
const allowed = new Map(deviations.undeclaredStatuses.map((d) => [`${d.operationId} ${d.status}`, d]));

const problems = [];
const used = [];
let allowedResponses = 0;
for (const op of report.operations) {
  let allowedHere = 0;
  let refusedHere = 0;
  for (const [status, found] of Object.entries(op.undeclaredStatuses ?? {})) {
    const deviation = allowed.get(`${op.operationId} ${status}`);
    if (deviation === undefined) {
      refusedHere += found.count;
      problems.push(
        `${op.operation} (${op.operationId}): ${found.count} answer(s) with status ${status}, which the reference does not declare`,
      );
    } else if (found.errorSchema === null || found.schemaErrors.length > 0) {
      refusedHere += found.count;
      problems.push(
        `${op.operation} (${op.operationId}): status ${status} is an allowed deviation, but its body is not the ${found.errorSchema ?? 'error'} envelope: ${JSON.stringify(found.schemaErrors)}`,
      );
    } else {
      allowedHere += found.count;
      used.push(`${op.operationId} ${status} x${found.count}: ${deviation.why}`);
    }
  }
  allowedResponses += allowedHere;
  // What is left once the undeclared statuses are counted: responses that fail their schema.
  const otherwise = op.calls - op.conformingResponses - allowedHere - refusedHere;
  if (otherwise > 0) {
    problems.push(
      `${op.operation} (${op.operationId}): ${otherwise} response(s) do not conform: ${JSON.stringify(op.responseSchemaFailures)}`,
    );
  }
  if (op.requestBodyFailures?.acceptedWith2xx > 0) {
    problems.push(
      `${op.operation} (${op.operationId}): ${op.requestBodyFailures.acceptedWith2xx} invalid request(s) accepted with 2xx`,
    );
  }
}

const t = report.totals;
if (problems.length === 0 && t.responses - t.responsesConforming !== allowedResponses) {
  problems.push(
    `${t.responses - t.responsesConforming} responses do not conform, of which ${allowedResponses} are allowed deviations`,
  );
}
if (problems.length === 0 && t.invalidRequestsAcceptedWith2xx > 0) {
  problems.push(`${t.invalidRequestsAcceptedWith2xx} invalid request(s) accepted with 2xx`);
}

console.log(
  `conformance gate: ${t.responsesConforming}/${t.responses} responses conform, ${allowedResponses} more are allowed deviations; ` +
    `${t.invalidRequestsAcceptedWith2xx} invalid requests accepted`,
);
for (const line of used) console.log(`  allowed: ${line}`);
if (problems.length > 0) {
  console.error('conformance gate: FAILED');
  for (const line of problems) console.error(`  ✗ ${line}`);
  process.exit(1);
}
console.log('conformance gate: passed');
