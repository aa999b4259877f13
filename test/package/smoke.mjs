// The railyard package as an integrator's project uses it, run by .ci/run in an empty project
// where the packed tarball was installed: startRailyard in memory, a customer, a funded account,
// an ACH payout that stays PROCESSING as on the hosted sandbox (a new platform's settlement
// timing: 2 minutes of sandbox time), a slow payout from USD to a ringgit account (a
// destination ending in 003 stays PROCESSING for 6 minutes), the clock moved past both,
// OUTGOING_PAYMENT.COMPLETED awaited through events.waitFor, the integration report read, and
// close(). Any step that goes wrong throws: the process fails.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startRailyard } from 'railyard';

const railyard = await startRailyard();
try {
  const auth = `Basic ${Buffer.from(`${railyard.clientId}:${railyard.clientSecret}`).toString('base64')}`;
  const api = async (method, path, body, key) => {
    const reply = await fetch(`${railyard.baseURL}${path}`, {
      method,
      headers: {
        authorization: auth,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(key === undefined ? {} : { 'idempotency-key': key }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const parsed = await reply.json();
    assert.ok(reply.ok, `${method} ${path}: ${reply.status} ${JSON.stringify(parsed)}`);
    return parsed;
  };
  const key = () => randomBytes(8).toString('hex');

  const customer = await api(
    'POST',
    '/customers',
    {
      customerType: 'INDIVIDUAL',
      platformCustomerId: `smoke-${randomBytes(3).toString('hex')}-000`,
      fullName: 'Dana Okafor',
      birthDate: '1990-02-17',
      nationality: 'US',
      address: { line1: '18 Orchard Lane', city: 'Portland', state: 'OR', postalCode: '97205', country: 'US' },
    },
    key(),
  );
  const accounts = await api('GET', `/customers/internal-accounts?customerId=${customer.id}&currency=USD`);
  const usd = accounts.data[0];
  assert.ok(usd, 'the customer has a USD internal account');
  await api('POST', `/sandbox/internal-accounts/${usd.id}/fund`, { amount: 50_000 });

  // An ordinary ACH payout is PROCESSING until 2 minutes of sandbox time have passed.
  const checking = await api(
    'POST',
    '/customers/external-accounts',
    {
      customerId: customer.id,
      currency: 'USD',
      accountInfo: {
        accountType: 'USD_ACCOUNT',
        accountNumber: '4400123456',
        routingNumber: '021000021',
        beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Dana Okafor' },
      },
    },
    key(),
  );
  const ach = await api(
    'POST',
    '/transfer-out',
    { source: { accountId: usd.id }, destination: { accountId: checking.id }, amount: 5_000 },
    key(),
  );
  assert.equal(ach.status, 'PROCESSING');
  assert.equal(ach.paymentRail, 'ACH');

  const bank = await api(
    'POST',
    '/customers/external-accounts',
    {
      customerId: customer.id,
      currency: 'MYR',
      accountInfo: {
        accountType: 'MYR_ACCOUNT',
        accountNumber: '514880276003',
        bankName: 'Maybank',
        swiftCode: 'MBBEMYKL',
        beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Dana Okafor' },
      },
    },
    key(),
  );
  const quote = await api(
    'POST',
    '/quotes',
    {
      source: { sourceType: 'ACCOUNT', accountId: usd.id },
      destination: { destinationType: 'ACCOUNT', accountId: bank.id },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 20_000,
      description: 'Rent for March',
    },
    key(),
  );
  const executed = await api('POST', `/quotes/${quote.id}/execute`, undefined, key());
  assert.equal(executed.status, 'PROCESSING');

  // Nothing completes until the sandbox clock passes the payout's 6 minutes.
  const waiting = railyard.events.waitFor(
    { type: 'OUTGOING_PAYMENT.COMPLETED', resourceId: quote.transactionId },
    { timeoutMs: 30_000 },
  );
  await railyard.clock.advance(6 * 60 + 1);
  const completed = await waiting;
  assert.equal(completed.resourceId, quote.transactionId);
  assert.equal(completed.data.status, 'COMPLETED');
  assert.equal((await api('GET', `/transactions/${ach.id}`)).status, 'COMPLETED');

  const report = await railyard.requests.report();
  const operations = Object.fromEntries(report.operations.map((o) => [o.operationId, o.requests]));
  assert.equal(operations.createCustomer, 1);
  assert.equal(operations.executeQuote, 1);
  assert.deepEqual(report.missingIdempotencyKeys, [], 'every money-moving POST carried a key');
  console.log(
    `railyard package: payouts ${ach.id} (ACH) and ${quote.transactionId} COMPLETED after the clock advance; the report covers ${report.window.requests} requests`,
  );
} finally {
  await railyard.close();
}
