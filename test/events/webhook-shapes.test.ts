// Every event the money paths record is a valid webhook of the reference once enveloped
// (id, type, timestamp, data): the right `type` enum and the `data` schema of that webhook.

import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { build } from '../helper.js';
import { accountBody } from '../fixtures/accounts.js';
import { customerWithAccounts, externalAccount, fund, fundedUsd, transferIn, transferOut } from '../fixtures/money.js';
import { referenceSpec } from '../reference.js';

type AddFormats = (ajv: Ajv2020) => Ajv2020;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ??
  addFormatsModule) as unknown as AddFormats;

/** The reference's schemas, without discriminator keywords (each oneOf branch fixes its tag anyway). */
function referenceValidator() {
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strip);
    if (node === null || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node)
        .filter(([key]) => key !== 'discriminator')
        .map(([key, value]) => [key, strip(value)]),
    );
  };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  for (const format of ['int32', 'int64', 'float', 'double']) ajv.addFormat(format, true);
  ajv.addSchema({
    $id: 'https://reference.invalid/spec.json',
    components: { schemas: strip(referenceSpec().components.schemas) },
  });
  return (name: string) => ajv.getSchema(`https://reference.invalid/spec.json#/components/schemas/${name}`)!;
}

const WEBHOOK_OF_TYPE: Record<string, string> = {
  OUTGOING_PAYMENT: 'OutgoingPaymentWebhook',
  INCOMING_PAYMENT: 'IncomingPaymentWebhook',
  INTERNAL_ACCOUNT: 'InternalAccountStatusWebhook',
  CUSTOMER: 'CustomerWebhook',
};

describe('events recorded by money movement', () => {
  it('validate against the reference webhook of their type', async () => {
    const t = await build();
    const usd = await fundedUsd(t, 100_000);
    const bank = await externalAccount(t, 'USD_ACCOUNT', '000');
    const slow = await externalAccount(t, 'USD_ACCOUNT', '005');
    const rejected = await externalAccount(t, 'USD_ACCOUNT', '004');
    await transferOut(t, usd.id, bank.id, 1_000);
    await transferOut(t, usd.id, rejected.id, 1_000);
    await transferIn(t, bank.id, usd.id, 500);
    await transferIn(t, rejected.id, usd.id, 500);
    const cancelled = await transferOut(t, usd.id, slow.id, 2_000);
    await t.api('POST', `/transactions/${cancelled.body.id}/cancel`, { body: { reason: 'duplicate' } });
    await transferOut(t, usd.id, slow.id, 3_000);
    await transferIn(t, slow.id, usd.id, 700);
    await t.advanceClock(31);
    const customer = await customerWithAccounts(t);
    const wallet = (await t.api('GET', '/customers/internal-accounts?type=EMBEDDED_WALLET')).body.data[0];
    await fund(t, wallet.id, 5_000_000);
    await fund(t, customer.usd.id, 5_000);
    await transferOut(t, customer.usd.id, customer.external.id, 5_000);
    const usdb = (await t.api('GET', '/platform/internal-accounts?currency=USDB')).body.data[0];
    await fund(t, usdb.id, 1_000_000);
    const spark = await t.api('POST', '/platform/external-accounts', {
      body: { ...accountBody('SPARK_WALLET'), currency: 'USDB' },
    });
    await transferOut(t, usdb.id, spark.body.id, 1_000);

    const schemaOf = referenceValidator();
    const events = await t.deps.db.k
      .selectFrom('events')
      .selectAll()
      .where('platform_id', '=', t.platformId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    const types = new Set(events.map((e) => e.type));
    expect([...types].sort()).toEqual([
      'CUSTOMER.KYC_APPROVED',
      'INCOMING_PAYMENT.COMPLETED',
      'INCOMING_PAYMENT.FAILED',
      'INCOMING_PAYMENT.PENDING',
      'INTERNAL_ACCOUNT.BALANCE_UPDATED',
      'OUTGOING_PAYMENT.COMPLETED',
      'OUTGOING_PAYMENT.FAILED',
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.REFUND_COMPLETED',
      'OUTGOING_PAYMENT.REFUND_PENDING',
    ]);
    for (const event of events) {
      const validate = schemaOf(WEBHOOK_OF_TYPE[event.type.split('.')[0]!]!);
      const envelope = { id: event.id, type: event.type, timestamp: event.created_at, data: JSON.parse(event.data) };
      const valid = validate(envelope);
      expect(valid ? [] : validate.errors, `${event.type} ${event.resource_id}`).toEqual([]);
      expect(envelope.id).toMatch(/^Webhook:[0-9a-f-]{36}$/);
    }
    // A mismatch is caught: the validator is not a rubber stamp.
    const broken = JSON.parse(events.find((e) => e.type === 'OUTGOING_PAYMENT.COMPLETED')!.data);
    expect(
      schemaOf('OutgoingPaymentWebhook')({
        id: 'Webhook:x',
        type: 'OUTGOING_PAYMENT.COMPLETED',
        timestamp: broken.createdAt,
        data: { ...broken, status: 'SETTLED' },
      }),
    ).toBe(false);
  });
});
