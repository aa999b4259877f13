// `railyard seed` as a function of its seed: the demo set is made through the API, holds every
// outcome it promises, and the same seed makes the same set (names, amounts, outcomes).

import { describe, expect, it } from 'vitest';
import { BENEFICIARY_VERIFICATION, BUSINESS_KYB, INDIVIDUAL_KYC, TRANSFER_SCENARIOS } from '../../src/rails/magic.js';
import { seedPlatform } from '../../src/sandbox/seed.js';
import { build, type Tenant } from '../helper.js';

async function all(tenant: Tenant, path: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | undefined;
  for (;;) {
    const separator = path.includes('?') ? '&' : '?';
    const reply = await tenant.raw('GET', `${path}${separator}limit=100${cursor ? `&cursor=${cursor}` : ''}`);
    expect(reply.status, reply.text).toBe(200);
    out.push(...reply.body.data);
    if (!reply.body.hasMore) return out;
    cursor = reply.body.nextCursor;
  }
}

/** What a seed decides, without the ids and times the server draws. */
async function projection(tenant: Tenant) {
  const customers = await all(tenant, '/grid/2025-10-13/customers');
  const accounts = await all(tenant, '/grid/2025-10-13/customers/external-accounts');
  const transactions = await all(tenant, '/grid/2025-10-13/transactions');
  const deliveries = await all(tenant, '/_railyard/webhooks/deliveries');
  const sorted = (rows: string[]) => rows.sort();
  return {
    customers: sorted(
      customers.map((c) =>
        [c.customerType, c.fullName ?? c.businessInfo?.legalName, c.address?.country, c.kycStatus ?? c.kybStatus].join(
          '|',
        ),
      ),
    ),
    accounts: sorted(
      accounts.map((a) =>
        [JSON.stringify(a.accountInfo), a.currency, a.status, a.beneficiaryVerificationStatus ?? '-'].join('|'),
      ),
    ),
    transactions: sorted(
      transactions.map((t) =>
        [t.type, t.status, t.failureReason ?? '-', JSON.stringify(t.sentAmount ?? t.receivedAmount)].join('|'),
      ),
    ),
    deliveries: sorted(deliveries.map((d) => [d.type, d.status, d.attemptCount].join('|'))),
  };
}

describe('railyard seed', () => {
  // note: one test, so the three seeds share one app (and its compiled validators): CI time.
  it('holds every outcome it lists, made by the real operations, and the same set again from the same seed', async () => {
    const t = await build();
    const twin = await t.newPlatform();
    const stranger = await t.newPlatform();
    const summary = await seedPlatform(t.app, t.platformId, { seed: 7, size: 1 });
    const second = await seedPlatform(t.app, twin.platformId, { seed: 7, size: 1 });
    await seedPlatform(t.app, stranger.platformId, { seed: 8, size: 1 });

    // Same seed, same set (names, countries, amounts, outcomes); another seed, another set.
    expect(second.created).toEqual(summary.created);
    const mine = await projection(t);
    expect(await projection(twin)).toEqual(mine);
    const theirs = await projection(stranger);
    expect(theirs.customers).not.toEqual(mine.customers);
    expect(theirs.transactions).not.toEqual(mine.transactions);
    // The same seed again on a platform that holds it is refused, and changes nothing.
    const again = await seedPlatform(t.app, t.platformId, { seed: 7, size: 1 }).catch((err) => err);
    expect(again).toMatchObject({ code: 'CONFLICT' });
    expect(await projection(t)).toEqual(mine);

    expect(summary).toMatchObject({
      platformId: t.platformId,
      seed: 7,
      size: 1,
      webhookEndpoint: 'railyard',
      created: { individuals: 5, businesses: 4, externalAccounts: 10 },
    });
    const customers = await all(t, '/grid/2025-10-13/customers');
    const individuals = customers.filter((c) => c.customerType === 'INDIVIDUAL');
    const businesses = customers.filter((c) => c.customerType === 'BUSINESS');
    // Each KYC row of the magic table, and the default.
    for (const row of INDIVIDUAL_KYC)
      expect(individuals.find((c) => c.fullName.endsWith(` ${row.suffix}`))?.kycStatus, row.suffix).toBe(
        row.outcome.kycStatusAtCreation,
      );
    expect(individuals.filter((c) => /[a-z]$/.test(c.fullName)).map((c) => c.kycStatus)).toEqual([
      'APPROVED',
      'APPROVED',
    ]);
    expect(new Set(individuals.map((c) => c.address.country)).size).toBeGreaterThanOrEqual(4);
    // Each KYB row, and the default: approved, rejected, in review, and sent back for what is missing.
    const kyb = (suffix: string) =>
      businesses.find((c) => c.businessInfo.registrationNumber.endsWith(suffix))?.kybStatus;
    expect(BUSINESS_KYB.map((row) => [row.suffix, kyb(row.suffix)])).toEqual([
      ['002', 'REJECTED'],
      ['001', 'PENDING'],
      ['003', 'UNVERIFIED'],
    ]);
    expect(businesses.filter((c) => c.kybStatus === 'APPROVED')).toHaveLength(1);
    const owners = businesses.flatMap((c) => c.beneficialOwners ?? []).map((o: any) => o.kycStatus);
    expect(new Set(owners)).toEqual(new Set(['APPROVED', 'PENDING', 'REJECTED']));
    const verifications = await all(t, '/grid/2025-10-13/verifications');
    expect(new Set(verifications.map((v) => v.verificationStatus))).toEqual(
      new Set(['APPROVED', 'REJECTED', 'IN_PROGRESS', 'PENDING_MANUAL_REVIEW', 'RESOLVE_ERRORS']),
    );

    // External accounts of several types, in each beneficiary verification that creates one.
    const accounts = await all(t, '/grid/2025-10-13/customers/external-accounts');
    expect(new Set(accounts.map((a) => a.accountInfo.accountType)).size).toBeGreaterThanOrEqual(4);
    const verified = new Set(accounts.map((a) => a.beneficiaryVerificationStatus));
    for (const row of BENEFICIARY_VERIFICATION)
      if (row.outcome.kind === 'status') expect(verified.has(row.outcome.status), row.suffix).toBe(true);
    expect(verified.has('MATCHED')).toBe(true);

    // A payout in each transfer outcome, and a pull; the slow one fails once its time comes.
    const outcomes = async () =>
      (await all(t, '/grid/2025-10-13/transactions'))
        .map((x) => `${x.type} ${x.status} ${x.failureReason ?? ''}`.trim())
        .sort();
    const expected = [
      'INCOMING COMPLETED',
      'OUTGOING COMPLETED',
      ...TRANSFER_SCENARIOS.map((row) =>
        row.outcome.failAfterMs === 0 ? `OUTGOING FAILED ${row.outcome.outgoingFailureReason}` : 'OUTGOING PROCESSING',
      ),
    ].sort();
    expect(await outcomes()).toEqual(expected);
    await t.advanceClock(35);
    expect(await outcomes()).toEqual(
      expected.map((o) => (o === 'OUTGOING PROCESSING' ? 'OUTGOING FAILED QUOTE_EXECUTION_FAILED' : o)).sort(),
    );

    // Funded accounts; books that balance.
    const platformUsd = (await t.api('GET', '/platform/internal-accounts?currency=USD')).body.data[0];
    expect(platformUsd.balance.amount).toBeGreaterThan(0);
    expect((await t.raw('GET', '/_railyard/ledger')).body.balanced).toBe(true);

    // Deliveries: delivered, refused as a duplicate, and failed (retried later).
    const deliveries = await all(t, '/_railyard/webhooks/deliveries');
    expect(deliveries.length).toBe(summary.created.webhookDeliveries);
    expect(new Set(deliveries.map((d) => d.status))).toEqual(new Set(['DELIVERED', 'PENDING']));
    const rejected = deliveries.find((d) => d.type === 'CUSTOMER.KYC_REJECTED');
    const detail = await t.raw('GET', `/_railyard/webhooks/deliveries/${rejected.id}`);
    expect(detail.body.attempts.map((a: any) => a.outcome)).toEqual(['DUPLICATE']);
    expect(deliveries.filter((d) => d.status === 'PENDING').every((d) => d.type === 'OUTGOING_PAYMENT.FAILED')).toBe(
      true,
    );

    // The seed leaves no endpoint and no token of its own behind.
    expect((await t.api('GET', '/config')).body.webhookEndpoint).toBeUndefined();
    expect((await t.api('GET', '/tokens')).body.data).toHaveLength(1);
  }, 120_000);
});
