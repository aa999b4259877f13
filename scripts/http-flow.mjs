// A short integrator's flow against a running railyard over HTTP, for the checks of the
// container image and of the single executable (scripts/container-check.sh,
// scripts/sea-check.sh): only Node's own modules, so it runs with any Node 20+ on the host and
// needs no node_modules. Each phase throws (exit code 1) on the first thing that is not as
// expected, and prints one line on success.
//
//   node scripts/http-flow.mjs first --origin URL --client-id ID --client-secret SECRET \
//     --listen ADDRESS --webhook-host HOST --state FILE
//       health; the printed credentials work and a wrong secret is refused; a webhook receiver
//       on this machine (listening on ADDRESS, reached by the server as HOST) gets the TEST
//       webhook; a customer, its USD account funded, a USD bank account, a transfer-out that
//       stays PROCESSING (hosted settlement timing) until the sandbox clock is moved past its
//       rail's time, then completes, and its OUTGOING_PAYMENT.COMPLETED webhook, signed with the
//       platform's key.
//       What was made goes to FILE.
//   node scripts/http-flow.mjs again --origin URL --client-id ID --client-secret SECRET --state FILE
//       after a restart on the same store: everything FILE names is still there, unchanged,
//       and the request journal still holds the transfer-out.
//   node scripts/http-flow.mjs held --origin URL --client-id ID --client-secret SECRET --state FILE \
//     --marker FILE
//       a fault rule holds one answer 2 s; the request goes, then MARKER is written (the caller
//       sends SIGTERM then); the held answer must still arrive, 200, before the server exits.

import assert from 'node:assert/strict';
import { createVerify, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const BASE_PATH = '/grid/2025-10-13';
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    origin: { type: 'string' },
    'client-id': { type: 'string' },
    'client-secret': { type: 'string' },
    listen: { type: 'string' },
    'webhook-host': { type: 'string' },
    state: { type: 'string' },
    marker: { type: 'string' },
  },
});
const phase = positionals[0];
const need = (name) => values[name] ?? fail(`--${name} is required for "${phase}"`);
function fail(message) {
  throw new Error(message);
}

const origin = need('origin').replace(/\/$/, '');
const auth = `Basic ${Buffer.from(`${need('client-id')}:${need('client-secret')}`).toString('base64')}`;
const key = () => `flow-${randomBytes(8).toString('hex')}`;

/** A JSON request under the Grid base path (or `path` as it is when it starts with /_railyard). */
async function api(method, path, body, { expect = [200, 201], headers = {}, credentials = auth } = {}) {
  const url = `${origin}${path.startsWith('/_railyard') ? '' : BASE_PATH}${path}`;
  const reply = await fetch(url, {
    method,
    headers: {
      authorization: credentials,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await reply.text();
  const json = (reply.headers.get('content-type') ?? '').includes('json');
  const parsed = json && text !== '' ? JSON.parse(text) : text;
  assert.ok(expect.includes(reply.status), `${method} ${path}: ${reply.status} ${text}`);
  return { status: reply.status, body: parsed };
}

/** A webhook receiver: every delivery's raw body and signature header, answered 200. */
async function receiver(address) {
  const received = [];
  const waiters = [];
  const server = createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks);
      received.push({ raw, body: JSON.parse(raw.toString('utf8')), signature: request.headers['x-grid-signature'] });
      for (const wake of waiters.splice(0)) wake();
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise((resolve, reject) => server.once('error', reject).listen(0, address, resolve));
  return {
    port: server.address().port,
    /** The first delivery `match` accepts, waited for up to `ms`. */
    async waitFor(match, what, ms = 60_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const found = received.find(match);
        if (found !== undefined) return found;
        const left = deadline - Date.now();
        if (left <= 0) fail(`no ${what} webhook within ${ms} ms (received: ${received.map((r) => r.body.type)})`);
        await new Promise((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, Math.min(left, 500));
        });
      }
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

function verified(delivery, publicKeyPem) {
  const signature = JSON.parse(delivery.signature).s;
  return createVerify('SHA256').update(delivery.raw).verify(publicKeyPem, Buffer.from(signature, 'base64'));
}

async function first() {
  const health = await fetch(`${origin}/health`);
  assert.equal(health.status, 200);
  assert.equal((await health.json()).status, 'ok');
  await api('GET', '/config');
  const wrong = `Basic ${Buffer.from(`${need('client-id')}:not-the-secret-at-all`).toString('base64')}`;
  const refused = await api('GET', '/config', undefined, { expect: [401], credentials: wrong });
  assert.equal(refused.body.code, 'UNAUTHORIZED');

  const hooks = await receiver(need('listen'));
  try {
    const pem = (await api('GET', '/_railyard/webhook-public-key')).body;
    assert.match(pem, /BEGIN PUBLIC KEY/);
    const endpoint = `http://${need('webhook-host')}:${hooks.port}/grid-webhooks`;
    await api('PATCH', '/config', { webhookEndpoint: endpoint });
    const test = await hooks.waitFor((d) => d.body.type === 'TEST', 'TEST');
    assert.ok(verified(test, pem), 'the TEST webhook carries a valid signature');

    const customer = (
      await api(
        'POST',
        '/customers',
        {
          customerType: 'INDIVIDUAL',
          platformCustomerId: `container-${randomBytes(3).toString('hex')}`,
          fullName: 'Ines Duarte',
          birthDate: '1987-09-30',
          nationality: 'US',
          address: { line1: '401 Harbor Street', city: 'Oakland', state: 'CA', postalCode: '94607', country: 'US' },
        },
        { headers: { 'idempotency-key': key() } },
      )
    ).body;
    const accounts = await api('GET', `/customers/internal-accounts?customerId=${customer.id}&currency=USD`);
    const usd = accounts.body.data[0] ?? fail('the customer has no USD internal account');
    const funded = await api('POST', `/sandbox/internal-accounts/${usd.id}/fund`, { amount: 50_000 });
    assert.equal(funded.body.balance.amount, 50_000);
    const bank = (
      await api(
        'POST',
        '/customers/external-accounts',
        {
          customerId: customer.id,
          currency: 'USD',
          accountInfo: {
            accountType: 'USD_ACCOUNT',
            accountNumber: '4417062000',
            routingNumber: '021000021',
            bankAccountType: 'CHECKING',
            bankName: 'Chase',
            beneficiary: {
              beneficiaryType: 'INDIVIDUAL',
              fullName: 'Ines Duarte',
              address: { line1: '401 Harbor Street', city: 'Oakland', state: 'CA', postalCode: '94607', country: 'US' },
            },
          },
        },
        { headers: { 'idempotency-key': key() } },
      )
    ).body;
    const transfer = (
      await api(
        'POST',
        '/transfer-out',
        { source: { accountId: usd.id }, destination: { accountId: bank.id }, amount: 12_345 },
        { headers: { 'idempotency-key': key() } },
      )
    ).body;
    // A new platform settles bank payouts as the hosted sandbox does (docs/hosted-differences.md):
    // PROCESSING for the rail's time (ACH 2 minutes), which the sandbox clock passes at once.
    assert.equal(transfer.status, 'PROCESSING');
    const advanced = await api('POST', '/_railyard/clock/advance', { seconds: 120 });
    assert.ok(advanced.body.jobsRun >= 1, `the clock's advance settled the payout: ${JSON.stringify(advanced.body)}`);
    const settled = await api('GET', `/transactions/${transfer.id}`);
    assert.equal(settled.body.status, 'COMPLETED');
    const completed = await hooks.waitFor(
      (d) => d.body.type === 'OUTGOING_PAYMENT.COMPLETED' && d.body.data.id === transfer.id,
      'OUTGOING_PAYMENT.COMPLETED',
    );
    assert.ok(verified(completed, pem), 'the payment webhook carries a valid signature');
    assert.equal(completed.body.data.status, 'COMPLETED');
    const after = await api('GET', `/customers/internal-accounts?customerId=${customer.id}&currency=USD`);
    assert.equal(after.body.data[0].balance.amount, 50_000 - 12_345);
    writeFileSync(
      need('state'),
      `${JSON.stringify({ customer, usdId: usd.id, bankId: bank.id, transfer: settled.body, endpoint }, null, 2)}\n`,
    );
    console.log(
      `flow: customer ${customer.id}, funded 500.00 USD, transfer-out ${transfer.id} PROCESSING, COMPLETED once the clock passed its rail's time, ` +
        `TEST and OUTGOING_PAYMENT.COMPLETED webhooks received on the host with valid signatures`,
    );
  } finally {
    await hooks.close();
  }
}

async function again() {
  const state = JSON.parse(readFileSync(need('state'), 'utf8'));
  const customer = await api('GET', `/customers/${state.customer.id}`);
  assert.deepEqual(customer.body, state.customer);
  const transfer = await api('GET', `/transactions/${state.transfer.id}`);
  assert.equal(transfer.body.status, 'COMPLETED');
  assert.equal(transfer.body.id, state.transfer.id);
  const accounts = await api('GET', `/customers/internal-accounts?customerId=${state.customer.id}&currency=USD`);
  assert.equal(accounts.body.data[0].id, state.usdId);
  assert.equal(accounts.body.data[0].balance.amount, 50_000 - 12_345);
  const config = await api('GET', '/config');
  assert.equal(config.body.webhookEndpoint, state.endpoint);
  // The request journal (on the embedded store, a file of its own written by a thread of its
  // own) kept the transfer-out sent before the restart.
  const journal = await api('GET', '/_railyard/requests?operationId=createTransferOut');
  assert.ok(
    journal.body.data.some((entry) => entry.status === 201 && entry.responseBody?.id === state.transfer.id),
    `the journal holds the transfer-out: ${JSON.stringify(journal.body).slice(0, 500)}`,
  );
  console.log(
    `flow after restart: customer, transfer ${state.transfer.id} (COMPLETED), balance 376.55 USD, webhook endpoint and the request journal kept`,
  );
}

async function held() {
  const rule = await api('POST', '/_railyard/faults', {
    method: 'GET',
    path: '/config',
    header: { name: 'X-Test-Case', value: 'drain' },
    latencyMs: 2_000,
  });
  assert.equal(rule.status, 201);
  const sentAt = performance.now();
  const pending = api('GET', '/config', undefined, { headers: { 'x-test-case': 'drain' } });
  // The request is on its way once the server has had a moment to read it; SIGTERM comes then.
  await new Promise((resolve) => setTimeout(resolve, 500));
  writeFileSync(need('marker'), 'sent\n');
  const answer = await pending;
  assert.equal(answer.status, 200);
  console.log(
    `flow: the request in flight at SIGTERM was answered 200 after ${((performance.now() - sentAt) / 1000).toFixed(1)} s (a fault rule held it for 2 s; a stopping server sends held answers at once)`,
  );
}

const phases = { first, again, held };
if (!(phase in phases)) fail(`usage: http-flow.mjs first|again|held --origin URL … (got "${phase}")`);
await phases[phase]();
