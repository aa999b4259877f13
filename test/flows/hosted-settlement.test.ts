// Settlement timing `hosted` (src/rails/settlement.ts, docs/hosted-differences.md): every
// rail an external account of railyard can be paid over keeps a payout PROCESSING for its
// sandbox time, then completes, with the events of an `instant` payout; the clock is moved
// to one millisecond before that time (nothing yet) and across it (COMPLETED). Then every
// transfer and quote magic value on a `hosted` platform, with the times it keeps; and what
// stays instant (wallets, pulls).

import { describe, expect, it } from 'vitest';
import { ACCOUNT_TYPES } from '../../src/modules/external-accounts/account-types.js';
import { PAYMENT_RAILS } from '../../src/modules/transactions/schemas.js';
import {
  QUOTE_EXECUTION_SCENARIOS,
  QUOTE_RETURN_AFTER_MS,
  QUOTE_SLOW_PAYOUT_MS,
  SPARK_QUOTE_EXECUTION_SCENARIOS,
  TRANSFER_SCENARIOS,
  TRANSFER_TIMEOUT_MS,
} from '../../src/rails/magic.js';
import { sandboxRail } from '../../src/rails/sandbox.js';
import { HOSTED_SETTLEMENT, hostedSettlementMs, withSettlementTime } from '../../src/rails/settlement.js';
import { accountBody, type AccountBody, randomDigits } from '../fixtures/accounts.js';
import {
  balances,
  eventsOf,
  expectBalancedBooks,
  externalAccount,
  fund,
  fundedUsd,
  platformAccount,
  transferIn,
  transferOut,
} from '../fixtures/money.js';
import { accountQuoteBody, createQuote, executeQuote, START_MS } from '../fixtures/quotes.js';
import { build, ManualClock, type TestApp } from '../helper.js';

const FUNDED = 1_000_000;
const SENT = 10_000;
const P = (type: string) => `OUTGOING_PAYMENT.${type}`;

/** A platform that settles `hosted`, on a clock that moves only when the test moves it. */
function hostedApp(): Promise<TestApp> {
  return build({ clock: new ManualClock(START_MS), settlementTiming: 'hosted' });
}

const secondsOf = (rail: string) => hostedSettlementMs(rail) / 1000;

// ----------------------------------------------------------------------------- the table

describe('the hosted settlement table', () => {
  it('gives every PaymentRail of the reference one time, each a whole number of seconds', () => {
    const listed = HOSTED_SETTLEMENT.flatMap((row) => row.rails);
    expect([...listed].sort()).toEqual([...PAYMENT_RAILS].sort());
    expect(new Set(listed).size).toBe(listed.length);
    for (const row of HOSTED_SETTLEMENT) {
      expect(Number.isInteger(row.seconds) && row.seconds > 0).toBe(true);
      expect(row.why.length).toBeGreaterThan(0);
    }
  });

  it('keeps ACH within the 60 to 180 seconds the hosted sandbox shows, and no rail beyond them', () => {
    expect(secondsOf('ACH')).toBe(120);
    for (const row of HOSTED_SETTLEMENT) expect(row.seconds).toBeLessThanOrEqual(180);
    // Real-time schemes are quicker than gross settlement, which is quicker than a batch.
    expect(secondsOf('RTP')).toBeLessThan(secondsOf('WIRE'));
    expect(secondsOf('WIRE')).toBeLessThan(secondsOf('ACH'));
    expect(secondsOf('ACH')).toBeLessThan(secondsOf('SWIFT'));
  });

  it('gives a payout over no bank rail no time', () => {
    expect(hostedSettlementMs(null)).toBe(0);
  });

  it('moves the completion, and what follows it, to the rail time; leaves failures and slower completions alone', () => {
    const done = { kind: 'COMPLETED' } as const;
    const failed = { kind: 'FAILED', failureReason: 'QUOTE_EXECUTION_FAILED' } as const;
    const returned = { kind: 'RETURNED', failureReason: 'PAYOUT_RETURNED' } as const;
    expect(withSettlementTime([{ afterMs: 0, outcome: done }], 120_000)).toEqual([{ afterMs: 120_000, outcome: done }]);
    expect(
      withSettlementTime(
        [
          { afterMs: 0, outcome: done },
          { afterMs: 30_000, outcome: returned },
        ],
        120_000,
      ),
    ).toEqual([
      { afterMs: 120_000, outcome: done },
      { afterMs: 150_000, outcome: returned },
    ]);
    expect(withSettlementTime([{ afterMs: 360_000, outcome: done }], 120_000)).toEqual([
      { afterMs: 360_000, outcome: done },
    ]);
    expect(withSettlementTime([{ afterMs: 30_000, outcome: failed }], 120_000)).toEqual([
      { afterMs: 30_000, outcome: failed },
    ]);
    expect(withSettlementTime([{ afterMs: 0, outcome: done }], 0)).toEqual([{ afterMs: 0, outcome: done }]);
  });
});

// ----------------------------------------------------------------------------- every rail

/** How a test reaches a rail: a same-currency transfer-out in USD, or a quote from USD. */
interface Route {
  via: 'transfer' | 'quote';
  body: () => AccountBody;
}

const usd = (): AccountBody => accountBody('USD_ACCOUNT');
const typed = (accountType: string) => () => accountBody(accountType);
const upi = (): AccountBody => {
  const body = accountBody('INR_ACCOUNT');
  const { accountNumber: _n, ifsc: _i, ...info } = body.accountInfo;
  return { ...body, accountInfo: { ...info, vpa: `maria.${randomDigits(5)}000@okbank` } };
};

const ROUTES: Record<string, Route> = {
  ACH: { via: 'transfer', body: usd },
  WIRE: { via: 'transfer', body: usd },
  RTP: { via: 'transfer', body: usd },
  FEDNOW: { via: 'transfer', body: usd },
  SEPA: { via: 'quote', body: typed('EUR_ACCOUNT') },
  SEPA_INSTANT: { via: 'quote', body: typed('EUR_ACCOUNT') },
  FASTER_PAYMENTS: { via: 'quote', body: typed('GBP_ACCOUNT') },
  SPEI: { via: 'quote', body: typed('MXN_ACCOUNT') },
  PIX: { via: 'quote', body: typed('BRL_ACCOUNT') },
  UPI: { via: 'quote', body: upi },
  NEFT: { via: 'quote', body: typed('INR_ACCOUNT') },
  RTGS: { via: 'quote', body: typed('INR_ACCOUNT') },
  PAYNOW: { via: 'quote', body: typed('SGD_ACCOUNT') },
  FAST: { via: 'quote', body: typed('SGD_ACCOUNT') },
  BANK_TRANSFER: { via: 'quote', body: typed('NGN_ACCOUNT') },
  MOBILE_MONEY: { via: 'quote', body: typed('KES_ACCOUNT') },
  SWIFT: { via: 'quote', body: typed('SWIFT_ACCOUNT') },
};

/** The rails some external account type of railyard lists: the ones a payout can take. */
const REACHABLE = [...new Set(ACCOUNT_TYPES.flatMap((def) => def.paymentRails ?? []))].sort();

/** Starts a payout over `rail` from the platform's USD account; answers its transaction id. */
async function payOver(t: TestApp, rail: string, sourceId: string): Promise<{ id: string; events: string[] }> {
  const route = ROUTES[rail]!;
  const created = await t.api('POST', '/platform/external-accounts', { body: route.body() });
  expect(created.status).toBe(201);
  expect(created.body.accountInfo.paymentRails).toContain(rail);
  if (route.via === 'transfer') {
    const reply = await t.api('POST', '/transfer-out', {
      body: {
        source: { accountId: sourceId },
        destination: { accountId: created.body.id, paymentRail: rail },
        amount: SENT,
      },
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ status: 'PROCESSING', paymentRail: rail, railSelectionMode: 'MANUAL' });
    return { id: reply.body.id, events: [] };
  }
  const quote = await createQuote(
    t,
    accountQuoteBody(sourceId, created.body.id, {
      amount: SENT,
      extra: {
        destination: { destinationType: 'ACCOUNT', accountId: created.body.id, paymentRail: rail },
        // Payments in rupees name their purpose.
        ...(created.body.currency === 'INR' ? { purposeOfPayment: 'FAMILY_SUPPORT' } : {}),
      },
    }),
  );
  expect(quote.status).toBe(201);
  const executed = await executeQuote(t, quote.body.id);
  expect(executed.status).toBe(200);
  expect(executed.body.status).toBe('PROCESSING');
  return { id: quote.body.transactionId, events: [P('PENDING')] };
}

describe('hosted settlement over every rail', () => {
  it('reaches every rail an external account can be paid over', () => {
    expect(Object.keys(ROUTES).sort()).toEqual(REACHABLE);
  });

  it.each(REACHABLE)(
    '%s: PROCESSING until its time has passed, then COMPLETED with the events of an instant payout',
    async (rail) => {
      const t = await hostedApp();
      const source = await fundedUsd(t, FUNDED);
      const { id, events: before } = await payOver(t, rail, source.id);
      const seconds = secondsOf(rail);
      expect(seconds).toBeGreaterThan(0);
      const processing = [...before, P('PROCESSING')];

      const read = async () => (await t.api('GET', `/transactions/${id}`)).body;
      let tx = await read();
      expect(tx).toMatchObject({ status: 'PROCESSING', paymentRail: rail });
      expect(tx.settledAt).toBeUndefined();
      expect((await eventsOf(t, id)).map((e) => e.type)).toEqual(processing);
      expect(await balances(t, source.id)).toEqual({ balance: FUNDED - SENT, totalBalance: FUNDED });

      // A millisecond short of the rail's time: nothing has moved.
      await t.advanceClock(seconds - 0.001);
      tx = await read();
      expect(tx.status).toBe('PROCESSING');
      expect((await eventsOf(t, id)).map((e) => e.type)).toEqual(processing);
      expect(await balances(t, source.id)).toEqual({ balance: FUNDED - SENT, totalBalance: FUNDED });

      // Across it: settled at exactly that time, one COMPLETED event carrying the transaction.
      await t.advanceClock(0.001);
      tx = await read();
      expect(tx).toMatchObject({ status: 'COMPLETED', paymentRail: rail });
      expect(tx.settledAt).toBe(new Date(START_MS + seconds * 1000).toISOString());
      const events = await eventsOf(t, id);
      expect(events.map((e) => e.type)).toEqual([...processing, P('COMPLETED')]);
      expect(events.at(-1)!.data).toEqual(tx);
      expect(await balances(t, source.id)).toEqual({ balance: FUNDED - SENT, totalBalance: FUNDED - SENT });
      await expectBalancedBooks(t);
    },
  );

  it.each(PAYMENT_RAILS.filter((rail) => !REACHABLE.includes(rail)))(
    '%s (no account type pays over it yet): the rail plans the completion at its time',
    (rail) => {
      const settlement = { timing: 'hosted', paymentRail: rail } as const;
      const ms = hostedSettlementMs(rail);
      expect(ms).toBeGreaterThan(0);
      expect(sandboxRail.plan({ direction: 'OUTGOING', counterpartyIdentifier: '000123456000' }, settlement)).toEqual([
        { afterMs: ms, outcome: { kind: 'COMPLETED' } },
      ]);
      expect(
        sandboxRail.planPayout(
          { destinationType: 'ACCOUNT', counterpartyIdentifier: '000123456000', accountType: 'USD_ACCOUNT' },
          settlement,
        ),
      ).toEqual([{ afterMs: ms, outcome: { kind: 'COMPLETED' } }]);
    },
  );

  it('pays a quote from a stablecoin account to an ACH account (a wallet to a bank) over 120 s', async () => {
    const t = await hostedApp();
    const usdc = await platformAccount(t, 'USDC');
    await fund(t, usdc.id, 500_000_000);
    const bank = await externalAccount(t, 'USD_ACCOUNT');
    const quote = await createQuote(t, accountQuoteBody(usdc.id, bank.id, { amount: 100_000_000 }));
    expect(quote.status).toBe(201);
    expect((await executeQuote(t, quote.body.id)).body.status).toBe('PROCESSING');
    await t.advanceClock(119.999);
    expect((await t.api('GET', `/quotes/${quote.body.id}`)).body.status).toBe('PROCESSING');
    await t.advanceClock(0.001);
    expect((await t.api('GET', `/quotes/${quote.body.id}`)).body.status).toBe('COMPLETED');
    expect((await eventsOf(t, quote.body.transactionId)).map((e) => e.type)).toEqual([
      P('PENDING'),
      P('PROCESSING'),
      P('COMPLETED'),
    ]);
    await expectBalancedBooks(t);
  });
});

// ----------------------------------------------------------------------------- what stays instant

describe('hosted settlement leaves alone', () => {
  it('a payout to a wallet (no bank rail): COMPLETED at once', async () => {
    const t = await hostedApp();
    const usdc = await platformAccount(t, 'USDC');
    await fund(t, usdc.id, 1_000_000);
    const wallet = await externalAccount(t, 'SOLANA_WALLET');
    const reply = await transferOut(t, usdc.id, wallet.id, 250_000);
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ status: 'COMPLETED' });
    expect(reply.body.paymentRail).toBeNull();
  });

  it('a pull from a bank account (transfer-in): COMPLETED at once', async () => {
    const t = await hostedApp();
    const account = await platformAccount(t, 'USD');
    const bank = await externalAccount(t, 'USD_ACCOUNT');
    const reply = await transferIn(t, bank.id, account.id, 5_000);
    expect(reply.status).toBe(201);
    expect(reply.body.status).toBe('COMPLETED');
  });
});

// ----------------------------------------------------------------------------- magic values on top

interface Point {
  /** Seconds after the payout was accepted. */
  at: number;
  status: 'PROCESSING' | 'COMPLETED' | 'FAILED';
  failureReason?: string;
  refund?: { status: 'COMPLETED' | 'FAILED'; reason: string };
  events: string[];
}

/**
 * Checks each point of a payout's life: a millisecond before its time the payout is still as
 * the previous point left it, at its time it is as the point says; an hour later nothing else
 * has happened, and the books balance.
 */
async function follow(t: TestApp, transactionId: string, points: Point[]): Promise<void> {
  const expectPoint = async (point: Point) => {
    const tx = (await t.api('GET', `/transactions/${transactionId}`)).body;
    expect({
      status: tx.status,
      failureReason: tx.failureReason,
      refund: tx.refund && { status: tx.refund.status, reason: tx.refund.reason },
    }).toEqual({
      status: point.status,
      failureReason: point.failureReason,
      refund: point.refund,
    });
    expect((await eventsOf(t, transactionId)).map((e) => e.type)).toEqual(point.events);
  };
  let now = 0;
  let previous: Point | undefined;
  for (const point of points) {
    if (point.at > now) {
      await t.advanceClock(point.at - now - 0.001);
      await expectPoint(previous!);
      await t.advanceClock(0.001);
      now = point.at;
    }
    await expectPoint(point);
    previous = point;
  }
  await t.advanceClock(3_600);
  await expectPoint(previous!);
  await expectBalancedBooks(t);
}

const ACH = 120;
const returnAfter = QUOTE_RETURN_AFTER_MS / 1000;
const slowPayout = QUOTE_SLOW_PAYOUT_MS / 1000;
const transferTimeout = TRANSFER_TIMEOUT_MS / 1000;

const TRANSFER_POINTS: Record<string, Point[]> = {
  '002': [{ at: 0, status: 'FAILED', failureReason: 'LIMIT_EXCEEDED', events: [P('PROCESSING'), P('FAILED')] }],
  '003': [{ at: 0, status: 'FAILED', failureReason: 'ACCOUNT_INVALID', events: [P('PROCESSING'), P('FAILED')] }],
  '004': [{ at: 0, status: 'FAILED', failureReason: 'ACCOUNT_CANNOT_RECEIVE', events: [P('PROCESSING'), P('FAILED')] }],
  // The magic value's 30 s, not the rail's 120: a bank that gives up does so while it processes.
  '005': [
    { at: 0, status: 'PROCESSING', events: [P('PROCESSING')] },
    {
      at: transferTimeout,
      status: 'FAILED',
      failureReason: 'QUOTE_EXECUTION_FAILED',
      events: [P('PROCESSING'), P('FAILED')],
    },
  ],
};
const TRANSFER_DEFAULT: Point[] = [
  { at: 0, status: 'PROCESSING', events: [P('PROCESSING')] },
  { at: ACH, status: 'COMPLETED', events: [P('PROCESSING'), P('COMPLETED')] },
];

describe('transfer magic values on a hosted platform (ACH, 120 s)', () => {
  it('covers every row of the transfer table', () => {
    expect(TRANSFER_SCENARIOS.map((row) => row.suffix).sort()).toEqual(Object.keys(TRANSFER_POINTS).sort());
  });

  for (const [suffix, points] of [...Object.entries(TRANSFER_POINTS), ['000', TRANSFER_DEFAULT] as const]) {
    it(`${suffix}: ${points.map((p) => `${p.status} at ${p.at} s`).join(', ')}`, async () => {
      const t = await hostedApp();
      const source = await fundedUsd(t, FUNDED);
      const destination = await externalAccount(t, 'USD_ACCOUNT', suffix);
      const reply = await transferOut(t, source.id, destination.id, SENT);
      expect(reply.status).toBe(201);
      expect(reply.body.paymentRail).toBe('ACH');
      await follow(t, reply.body.id, points);
      const settled = points.at(-1)!.status === 'COMPLETED';
      expect(await balances(t, source.id)).toEqual(
        settled ? { balance: FUNDED - SENT, totalBalance: FUNDED - SENT } : { balance: FUNDED, totalBalance: FUNDED },
      );
    });
  }
});

const Q = [P('PENDING'), P('PROCESSING')];
const SEPA = 120;
const QUOTE_POINTS: Record<string, Point[]> = {
  '002': [{ at: 0, status: 'FAILED', failureReason: 'QUOTE_EXECUTION_FAILED', events: [...Q, P('FAILED')] }],
  // Six minutes is slower than the rail: the magic value's time stands.
  '003': [
    { at: 0, status: 'PROCESSING', events: Q },
    { at: slowPayout, status: 'COMPLETED', events: [...Q, P('COMPLETED')] },
  ],
  '004': [
    {
      at: 0,
      status: 'FAILED',
      failureReason: 'ACCOUNT_CANNOT_RECEIVE',
      refund: { status: 'COMPLETED', reason: 'TRANSACTION_FAILED' },
      events: [...Q, P('FAILED'), P('REFUND_PENDING'), P('REFUND_COMPLETED')],
    },
  ],
  // Completes after the rail's time, and comes back 30 s after that.
  '005': [
    { at: 0, status: 'PROCESSING', events: Q },
    { at: SEPA, status: 'COMPLETED', events: [...Q, P('COMPLETED')] },
    {
      at: SEPA + returnAfter,
      status: 'FAILED',
      failureReason: 'PAYOUT_RETURNED',
      refund: { status: 'COMPLETED', reason: 'TRANSACTION_FAILED' },
      events: [...Q, P('COMPLETED'), P('FAILED'), P('REFUND_PENDING'), P('REFUND_COMPLETED')],
    },
  ],
  '006': [
    {
      at: 0,
      status: 'COMPLETED',
      refund: { status: 'COMPLETED', reason: 'USER_CANCELLATION' },
      events: [...Q, P('REFUND_PENDING'), P('REFUND_COMPLETED'), P('COMPLETED')],
    },
  ],
  '007': [
    {
      at: 0,
      status: 'FAILED',
      failureReason: 'ACCOUNT_INVALID',
      refund: { status: 'FAILED', reason: 'TRANSACTION_FAILED' },
      events: [...Q, P('FAILED'), P('REFUND_PENDING'), P('REFUND_FAILED')],
    },
  ],
};
const QUOTE_DEFAULT: Point[] = [
  { at: 0, status: 'PROCESSING', events: Q },
  { at: SEPA, status: 'COMPLETED', events: [...Q, P('COMPLETED')] },
];

async function quotePayout(t: TestApp, accountType: string, suffix: string): Promise<string> {
  const source = await fundedUsd(t, FUNDED);
  const destination = await externalAccount(t, accountType, suffix);
  const quote = await createQuote(t, accountQuoteBody(source.id, destination.id, { amount: SENT }));
  expect(quote.status).toBe(201);
  expect((await executeQuote(t, quote.body.id)).status).toBe(200);
  return quote.body.transactionId;
}

describe('quote magic values on a hosted platform (a EUR account over SEPA, 120 s)', () => {
  it('covers every row of the quote table', () => {
    expect(QUOTE_EXECUTION_SCENARIOS.map((row) => row.suffix).sort()).toEqual(Object.keys(QUOTE_POINTS).sort());
    expect(secondsOf('SEPA')).toBe(SEPA);
  });

  for (const [suffix, points] of [...Object.entries(QUOTE_POINTS), ['000', QUOTE_DEFAULT] as const]) {
    it(`${suffix}: ${points.map((p) => `${p.status} at ${p.at} s`).join(', ')}`, async () => {
      const t = await hostedApp();
      const id = await quotePayout(t, 'EUR_ACCOUNT', suffix);
      expect((await t.api('GET', `/transactions/${id}`)).body.paymentRail).toBe('SEPA');
      await follow(t, id, points);
    });
  }

  // A Spark wallet has no bank rail: its table plays as on an instant platform.
  it('Spark wallet 005: PROCESSING, FAILED at 30 s, as on an instant platform', async () => {
    expect(SPARK_QUOTE_EXECUTION_SCENARIOS.some((row) => row.suffix === '005')).toBe(true);
    const t = await hostedApp();
    const id = await quotePayout(t, 'SPARK_WALLET', '005');
    await follow(t, id, [
      { at: 0, status: 'PROCESSING', events: Q },
      { at: transferTimeout, status: 'FAILED', failureReason: 'QUOTE_EXECUTION_FAILED', events: [...Q, P('FAILED')] },
    ]);
  });

  it('Spark wallet 000: COMPLETED at once', async () => {
    const t = await hostedApp();
    const id = await quotePayout(t, 'SPARK_WALLET', '000');
    await follow(t, id, [{ at: 0, status: 'COMPLETED', events: [...Q, P('COMPLETED')] }]);
  });
});
