// The approval handshake of incoming payments: INCOMING_PAYMENT.PENDING and the receiver's
// answer (200, 403, 422, 202 then approve or reject, or nothing), and the approve/reject
// operations. Incoming transactions belong to the money area, so these tests stand in for
// it: they create the transaction view and ask for approval through the service.

import { afterEach, describe, expect, it } from 'vitest';
import { iso } from '../../src/clock.js';
import { newId } from '../../src/ids.js';
import {
  requestIncomingPaymentApproval, setIncomingPaymentHooks, snapshotHooks, type CounterpartyField, type DecisionInput,
} from '../../src/modules/payment-approvals/service.js';
import type { IncomingTransactionView } from '../../src/modules/payment-approvals/schemas.js';
import { platformNowOf } from '../../src/modules/platform/service.js';
import { build, ManualClock, type TestApp, type Tenant } from '../helper.js';
import { deliveries, delivery, expectAllConform, receiverFor, type Answer, type Receiver } from '../events/support.js';

const START_MS = Date.parse('2025-06-02T09:00:00.000Z');
const open: Receiver[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
  setIncomingPaymentHooks(snapshotHooks);
});

function incomingTransaction(now: Date): IncomingTransactionView {
  return {
    id: newId('Transaction'),
    status: 'PENDING',
    type: 'INCOMING',
    direction: 'CREDIT',
    source: { sourceType: 'UMA_ADDRESS', umaAddress: '$sam@sender.example.com' },
    destination: { destinationType: 'UMA_ADDRESS', umaAddress: '$alex@railyard.sandbox.uma.money' },
    customerId: 'Customer:019542f5-b3e7-7d02-8000-0000000000aa',
    platformCustomerId: 'alex-01',
    receivedAmount: { amount: 12_500, currency: { code: 'USD', name: 'United States Dollar', symbol: '$', decimals: 2 } },
    counterpartyInformation: { FULL_NAME: 'Sam Sender', NATIONALITY: 'FR' },
    reconciliationInstructions: { reference: 'RY-INCOMING-0001' },
    createdAt: iso(now),
  };
}

/** What the money area will do: store the transaction, then ask for approval in the same transaction. */
async function askApproval(t: TestApp, fields: CounterpartyField[] = [], tenant: Tenant = t) {
  const now = await platformNowOf(t.deps, tenant.platformId);
  const transaction = incomingTransaction(now);
  const asked = await t.deps.db.transaction((tx) =>
    requestIncomingPaymentApproval(tx, { platformId: tenant.platformId, transaction, requestedReceiverCustomerInfoFields: fields, now }),
  );
  return { transaction, ...asked };
}

async function current(t: TestApp, transactionId: string, platformId = t.platformId) {
  return snapshotHooks.findTransaction(t.deps.db.k, platformId, transactionId);
}

async function setup(answer: (hit: any) => Answer, options: { timeoutMs?: number } = {}) {
  const t = await build({ clock: new ManualClock(START_MS), ...(options.timeoutMs ? { config: { webhookTimeoutMs: options.timeoutMs } } : {}) });
  const receiver = await receiverFor(t, (hit) => (hit.type === 'TEST' ? { status: 200 } : answer(hit)));
  open.push(receiver);
  await t.runDueJobs();
  return { t, receiver };
}

const NATIONALITY: CounterpartyField[] = [{ name: 'NATIONALITY', mandatory: true }, { name: 'POSTAL_ADDRESS', mandatory: false }];

describe('the INCOMING_PAYMENT.PENDING webhook', () => {
  // [scenario, fields asked of the receiver, answer, transaction afterwards, delivery status]
  const cases: [string, CounterpartyField[], Answer, Partial<IncomingTransactionView>, string][] = [
    ['200 approves', [], { status: 200 }, { status: 'PROCESSING' }, 'DELIVERED'],
    ['200 with the asked receiver fields approves', NATIONALITY, { status: 200, body: { receiverCustomerInfo: { NATIONALITY: 'DE' } } }, { status: 'PROCESSING' }, 'DELIVERED'],
    ['200 without a mandatory receiver field fails the payment', NATIONALITY, { status: 200, body: { receiverCustomerInfo: { POSTAL_ADDRESS: 'Berlin' } } }, { status: 'FAILED', failureReason: 'MISSING_MANDATORY_PAYEE_DATA' }, 'DELIVERED'],
    ['403 rejects', [], { status: 403, body: { code: 'COUNTERPARTY_NOT_ALLOWED', message: 'not accepted', reason: 'sender on a block list' } }, { status: 'REJECTED' }, 'DELIVERED'],
    ['422 asks for more counterparty information', [], { status: 422, body: { code: 'MISSING_INFO', message: 'need more', requiredFields: ['TAX_ID', 'BIRTH_DATE'] } }, { status: 'PENDING', pendingReason: 'COUNTERPARTY_INFORMATION_REQUIRED' }, 'DELIVERED'],
    ['500 fails the payment and is not retried', [], { status: 500 }, { status: 'FAILED', failureReason: 'PAYMENT_APPROVAL_WEBHOOK_ERROR' }, 'FAILED'],
    ['no answer in time fails the payment', [], 'hang', { status: 'FAILED', failureReason: 'PAYMENT_APPROVAL_WEBHOOK_ERROR' }, 'FAILED'],
  ];

  it.each(cases)('%s', async (_name, fields, answer, expected, deliveryStatus) => {
    const { t, receiver } = await setup(() => answer, { timeoutMs: 200 });
    const { transaction, eventId } = await askApproval(t, fields);
    await t.runDueJobs();
    const [hit] = receiver.hits.filter((h) => h.type === 'INCOMING_PAYMENT.PENDING');
    expect(hit!.id).toBe(eventId);
    expect(hit!.json.data).toEqual(fields.length > 0 ? { ...transaction, requestedReceiverCustomerInfoFields: fields } : transaction);
    expectAllConform(receiver);

    const after = await current(t, transaction.id);
    expect(after).toMatchObject(expected);
    for (const key of ['pendingReason', 'failureReason'] as const) if (!(key in expected)) expect(after![key]).toBeUndefined();
    expect((await delivery(t, eventId)).status).toBe(deliveryStatus);
    // Sent once: never tried again, whatever the answer.
    await t.advanceClock(24 * 3600);
    expect(receiver.hits.filter((h) => h.type === 'INCOMING_PAYMENT.PENDING')).toHaveLength(1);
    const approve = await t.api('POST', `/transactions/${transaction.id}/approve`);
    expect(approve.status).toBe(409);
    expect(approve.body.code).toBe('TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL');
  });

  it('approves at once when the platform has no webhook endpoint: nobody to ask', async () => {
    const t = await build();
    const { transaction, decided } = await askApproval(t);
    expect(decided).toMatchObject({ id: transaction.id, status: 'PROCESSING' });
    expect((await t.api('POST', `/transactions/${transaction.id}/reject`)).status).toBe(409);
  });

  it('may ask again after the platform asked for more information', async () => {
    let answer: Answer = { status: 422, body: { requiredFields: ['TAX_ID'] } };
    const { t, receiver } = await setup(() => answer);
    const { transaction } = await askApproval(t);
    await t.runDueJobs();
    expect(await current(t, transaction.id)).toMatchObject({ status: 'PENDING', pendingReason: 'COUNTERPARTY_INFORMATION_REQUIRED' });
    answer = { status: 200 };
    const now = await platformNowOf(t.deps, t.platformId);
    const again = await t.deps.db.transaction((tx) =>
      requestIncomingPaymentApproval(tx, { platformId: t.platformId, transaction: { ...transaction, counterpartyInformation: { FULL_NAME: 'Sam Sender', TAX_ID: '123' } }, now }),
    );
    await t.runDueJobs();
    const pendings = receiver.hits.filter((h) => h.type === 'INCOMING_PAYMENT.PENDING');
    expect(pendings.map((h) => h.id)).toEqual([expect.any(String), again.eventId]);
    expect(await current(t, transaction.id)).toMatchObject({ status: 'PROCESSING' });
  });

  it('hands every decision to the money area through its hooks, in the deciding transaction', async () => {
    const decisions: DecisionInput[] = [];
    setIncomingPaymentHooks({
      async applyDecision(tx, input) {
        decisions.push(input);
        // The hook sees the decision already recorded in its transaction.
        const row = await tx.selectFrom('incoming_payment_approvals').select('status').where('transaction_id', '=', input.transactionId).executeTakeFirst();
        expect(row?.status).toBe(input.outcome.kind);
        return { ...input.transaction, status: 'COMPLETED', settledAt: iso(input.now) };
      },
      findTransaction: snapshotHooks.findTransaction,
    });
    const { t } = await setup((hit) => (hit.json.data.platformCustomerId === 'alex-01' ? { status: 202 } : { status: 200 }));
    const first = await askApproval(t, NATIONALITY);
    await t.runDueJobs();
    const approved = await t.api('POST', `/transactions/${first.transaction.id}/approve`, { body: { receiverCustomerInfo: { NATIONALITY: 'DE' } } });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ id: first.transaction.id, status: 'COMPLETED' });
    const second = await askApproval(t);
    await t.runDueJobs();
    await t.advanceClock(5);
    expect(decisions.map((d) => [d.transactionId, d.outcome])).toEqual([
      [first.transaction.id, { kind: 'APPROVED', by: 'API', receiverCustomerInfo: { NATIONALITY: 'DE' } }],
      [second.transaction.id, { kind: 'TIMED_OUT', by: 'TIMEOUT' }],
    ]);
  });
});

describe('POST /transactions/{transactionId}/approve', () => {
  it('approves a payment the platform answered 202 for, within 5 s', async () => {
    const { t, receiver } = await setup(() => ({ status: 202 }));
    const { transaction, eventId } = await askApproval(t, NATIONALITY);
    await t.runDueJobs();
    expect((await delivery(t, eventId)).status).toBe('DELIVERED');
    await t.advanceClock(4.9);
    const approved = await t.api('POST', `/transactions/${transaction.id}/approve`, { body: { receiverCustomerInfo: { NATIONALITY: 'DE' } } });
    expect(approved.status).toBe(200);
    const { pendingReason: _p, ...rest } = transaction;
    expect(approved.body).toEqual({ ...rest, status: 'PROCESSING', updatedAt: expect.any(String) });
    const again = await t.api('POST', `/transactions/${transaction.id}/approve`, { body: { receiverCustomerInfo: { NATIONALITY: 'DE' } } });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ status: 409, code: 'TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL' });
    expect((await t.api('POST', `/transactions/${transaction.id}/reject`)).status).toBe(409);
    await t.advanceClock(10);
    expect(await current(t, transaction.id)).toMatchObject({ status: 'PROCESSING' });
    expect(receiver.hits).toHaveLength(2);
  });

  it('rejects the payment automatically when 5 s pass without a decision', async () => {
    const { t } = await setup(() => ({ status: 202 }));
    const { transaction } = await askApproval(t);
    await t.runDueJobs();
    expect((await t.advanceClock(4.999)).jobsRun).toBe(0);
    expect(await current(t, transaction.id)).toMatchObject({ status: 'PENDING' });
    expect((await t.advanceClock(0.001)).jobsRun).toBe(1);
    expect(await current(t, transaction.id)).toMatchObject({ status: 'FAILED', failureReason: 'PAYMENT_APPROVAL_TIMED_OUT' });
    const late = await t.api('POST', `/transactions/${transaction.id}/approve`);
    expect(late.status).toBe(409);
    expect(late.body.message).toContain('approval window has passed');
  });

  it('refuses once the window has passed even before the timeout job ran', async () => {
    const clock = new ManualClock(START_MS);
    const t = await build({ clock });
    open.push(await receiverFor(t, (hit) => (hit.type === 'TEST' ? { status: 200 } : { status: 202 })));
    await t.runDueJobs();
    const { transaction } = await askApproval(t);
    await t.runDueJobs();
    clock.advance(5000);
    const late = await t.api('POST', `/transactions/${transaction.id}/reject`, { body: { reason: 'too late' } });
    expect(late.status).toBe(409);
    expect(await current(t, transaction.id)).toMatchObject({ status: 'FAILED', failureReason: 'PAYMENT_APPROVAL_TIMED_OUT' });
    expect(await t.runDueJobs()).toBe(1);
    expect(await current(t, transaction.id)).toMatchObject({ status: 'FAILED', failureReason: 'PAYMENT_APPROVAL_TIMED_OUT' });
  });

  it('answers 400 MISSING_MANDATORY_USER_INFO naming each missing receiver field, and changes nothing', async () => {
    const { t } = await setup(() => ({ status: 202 }));
    const { transaction } = await askApproval(t, [...NATIONALITY, { name: 'BIRTH_DATE', mandatory: true }]);
    await t.runDueJobs();
    const missing = await t.api('POST', `/transactions/${transaction.id}/approve`, { body: { receiverCustomerInfo: { POSTAL_ADDRESS: 'Berlin' } } });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('MISSING_MANDATORY_USER_INFO');
    expect(missing.body.details.errors.map((e: { field: string }) => e.field)).toEqual(['receiverCustomerInfo.NATIONALITY', 'receiverCustomerInfo.BIRTH_DATE']);
    expect(await current(t, transaction.id)).toMatchObject({ status: 'PENDING' });
    const approved = await t.api('POST', `/transactions/${transaction.id}/approve`, { body: { receiverCustomerInfo: { NATIONALITY: 'DE', BIRTH_DATE: '1990-01-31' } } });
    expect(approved.status).toBe(200);
  });

  it('names every invalid field of the body', async () => {
    const { t } = await setup(() => ({ status: 202 }));
    const { transaction } = await askApproval(t);
    await t.runDueJobs();
    const approve = await t.api('POST', `/transactions/${transaction.id}/approve`, { body: { receiverCustomerInfo: 'DE' } });
    expect(approve.status).toBe(400);
    expect(approve.body.details.errors.map((e: { field: string }) => e.field)).toEqual(['receiverCustomerInfo']);
    const reject = await t.api('POST', `/transactions/${transaction.id}/reject`, { body: { reason: 42 } });
    expect(reject.status).toBe(400);
    expect(reject.body.details.errors.map((e: { field: string }) => e.field)).toEqual(['reason']);
    expect(await current(t, transaction.id)).toMatchObject({ status: 'PENDING' });
  });

  it('answers 404 for an unknown or foreign transaction, and needs TRANSACT', async () => {
    const { t } = await setup(() => ({ status: 202 }));
    const { transaction } = await askApproval(t);
    await t.runDueJobs();
    const unknown = await t.api('POST', '/transactions/Transaction:019542f5-b3e7-7d02-8000-000000000001/approve');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('TRANSACTION_NOT_FOUND');
    const other = await t.newPlatform();
    expect((await other.api('POST', `/transactions/${transaction.id}/approve`)).status).toBe(404);
    const created = await t.api('POST', '/tokens', { body: { name: 'ops', permissions: ['VIEW', 'MANAGE'] } });
    const denied = await t.api('POST', `/transactions/${transaction.id}/approve`, { auth: { username: created.body.clientId, password: created.body.clientSecret } });
    expect(denied.status).toBe(401);
    expect(denied.body.details.requiredPermission).toBe('TRANSACT');
    expect(await current(t, transaction.id)).toMatchObject({ status: 'PENDING' });
  });

  it('may decide while the webhook is still on its way; the late answer then changes nothing', async () => {
    const { t, receiver } = await setup(() => 'hang');
    const { transaction, eventId } = await askApproval(t);
    const running = t.runDueJobs();
    await receiver.waitFor(2);
    const approved = await t.api('POST', `/transactions/${transaction.id}/approve`);
    expect(approved.status).toBe(200);
    receiver.release(403);
    await running;
    expect(await current(t, transaction.id)).toMatchObject({ status: 'PROCESSING' });
    expect((await delivery(t, eventId)).attempts[0]).toMatchObject({ responseStatus: 403 });
  });
});

describe('POST /transactions/{transactionId}/reject', () => {
  it('rejects a payment the platform answered 202 for, with or without a body', async () => {
    const { t } = await setup(() => ({ status: 202 }));
    const first = await askApproval(t);
    const second = await askApproval(t);
    await t.runDueJobs();
    const withReason = await t.api('POST', `/transactions/${first.transaction.id}/reject`, { body: { reason: 'sender unknown to us' } });
    expect(withReason.status).toBe(200);
    expect(withReason.body).toMatchObject({ id: first.transaction.id, status: 'REJECTED' });
    const bare = await t.api('POST', `/transactions/${second.transaction.id}/reject`);
    expect(bare.status).toBe(200);
    expect(bare.body.status).toBe('REJECTED');
    const row = await t.deps.db.k.selectFrom('incoming_payment_approvals').selectAll().where('transaction_id', '=', first.transaction.id).executeTakeFirst();
    expect(row).toMatchObject({ status: 'REJECTED', decided_by: 'API', decision: JSON.stringify({ reason: 'sender unknown to us' }) });
    expect((await deliveries(t, '?type=INCOMING_PAYMENT.PENDING')).map((d) => d.status)).toEqual(['DELIVERED', 'DELIVERED']);
  });
});
