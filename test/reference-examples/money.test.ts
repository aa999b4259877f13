// The reference's own examples for moving money: quotes (account and real-time funding
// sources, account and UMA destinations), transfers in and out, cards (create, update, every
// sandbox simulation) and crypto withdrawal fee estimates. A default platform takes every one,
// a platform in strict mode refuses exactly the values STRICT_REFUSALS lists for this area
// (none). Ids in the examples are replaced by resources made first.

import { beforeAll, describe, expect, it } from 'vitest';
import { accountBody } from '../fixtures/accounts.js';
import { individualBody } from '../fixtures/customers.js';
import { START_MS } from '../fixtures/quotes.js';
import { build, ManualClock, type Reply, type Tenant, type TestApp } from '../helper.js';
import { buildExample } from './builder.js';
import { MAGIC_EXAMPLES, ofArea, REFERENCE_BREAKS, STRICT_REFUSALS } from './expectations.js';
import {
  bodyFor,
  builtCases,
  distinct,
  edited,
  type ExampleCase,
  expectValidByReference,
  findingsOf,
  magicOf,
  namedCases,
  onBoth,
} from './support.js';

const casesOf = (operationId: string) => [...namedCases(operationId), ...builtCases(operationId)];

/** The sandbox's UMA test receiver in EUR, the currency of the examples' UMA destination. */
const UMA_RECEIVER = '$success.eur@sandbox.uma.money';
/** The reference's own example of senderCustomerInfo (REFERENCE_BREAKS: the sandbox receivers ask for FULL_NAME). */
const SENDER_INFO = buildExample('QuoteRequest').body.senderCustomerInfo;

const QUOTES = distinct(
  casesOf('createQuote').map((c) => {
    if (c.body.source.sourceType === 'REALTIME_FUNDING' && c.body.immediatelyExecute === true)
      return edited(c, 'immediatelyExecute false', (body) => {
        body.immediatelyExecute = false;
      });
    if (c.body.destination.destinationType === 'UMA_ADDRESS' && c.body.senderCustomerInfo === undefined)
      return edited(c, 'senderCustomerInfo of the reference', (body) => {
        body.senderCustomerInfo = SENDER_INFO;
      });
    return c;
  }),
);
const TRANSFERS = distinct([...casesOf('createTransferIn'), ...casesOf('createTransferOut')]);
const CARDS = distinct(
  casesOf('createCard').map((c) =>
    c.body.threeDSecurePassword === undefined
      ? c
      : edited(c, 'without threeDSecurePassword', (body) => {
          delete body.threeDSecurePassword;
        }),
  ),
);
/** The sandbox gives a customer one internal account per currency: a card has one source to bind. */
const CARD_UPDATES = casesOf('updateCardById').map((c) =>
  (c.body.fundingSources?.length ?? 0) > 1
    ? edited(c, 'one funding source', (body) => {
        body.fundingSources = body.fundingSources.slice(0, 1);
      })
    : c,
);

/** Each simulation: its path, and the state of the card transaction it acts on (none: it opens one). */
const SIMULATIONS: Record<string, { path: string; needs?: 'AUTHORIZED' | 'SETTLED' | 'REFUNDED' }> = {
  sandboxSimulateCardAuthorization: { path: 'authorization' },
  sandboxSimulateCardBalanceInquiry: { path: 'balance_inquiry' },
  sandboxSimulateCardCreditAuthorization: { path: 'credit_authorization' },
  sandboxSimulateCardFinancialAuthorization: { path: 'financial_authorization' },
  sandboxSimulateCardFinancialCreditAuthorization: { path: 'financial_credit_authorization' },
  sandboxSimulateCardCreditAuthorizationAdvice: { path: 'credit_authorization_advice' },
  sandboxSimulateCardClearing: { path: 'clearing', needs: 'AUTHORIZED' },
  sandboxSimulateCardAuthorizationAdvice: { path: 'authorization_advice', needs: 'AUTHORIZED' },
  sandboxSimulateCardReturn: { path: 'return', needs: 'SETTLED' },
  sandboxSimulateCardReturnReversal: { path: 'return_reversal', needs: 'REFUNDED' },
};
const SIMULATION_CASES = distinct(Object.keys(SIMULATIONS).flatMap(casesOf));
const ESTIMATES = distinct(casesOf('estimateCryptoWithdrawalFee'));

const ALL = [...QUOTES, ...TRANSFERS, ...CARDS, ...CARD_UPDATES, ...SIMULATION_CASES, ...ESTIMATES];

interface World {
  tenant: Tenant;
  customerId: string;
  usd: string;
  usdBank: string;
  mxnBank: string;
  sparkWallet: string;
  platformUsdc: string;
}

describe('reference examples: quotes, transfers, cards, crypto withdrawal fees', () => {
  let t: TestApp;
  const worlds = new Map<boolean, World>();

  beforeAll(async () => {
    t = await build({ clock: new ManualClock(START_MS) });
    for (const strict of [false, true]) {
      const tenant = await t.newPlatform({ strictIdentifiers: strict });
      const ok = async (reply: Promise<Reply>) => {
        const answer = await reply;
        expect(answer.status, answer.text).toBeLessThan(300);
        return answer.body;
      };
      const customer = await ok(tenant.api('POST', '/customers', { body: individualBody('Jordan Example') }));
      const accounts = await ok(
        tenant.api('GET', `/customers/internal-accounts?customerId=${encodeURIComponent(customer.id)}&currency=USD`),
      );
      const usd = accounts.data[0].id;
      await ok(tenant.api('POST', `/sandbox/internal-accounts/${usd}/fund`, { body: { amount: 100_000_000 } }));
      const external = (type: string) =>
        ok(
          tenant.api('POST', '/customers/external-accounts', {
            body: { ...accountBody(type, '000'), customerId: customer.id },
          }),
        );
      const platformUsdc = (await ok(tenant.api('GET', '/platform/internal-accounts?currency=USDC'))).data[0].id;
      worlds.set(strict, {
        tenant,
        customerId: customer.id,
        usd,
        usdBank: (await external('USD_ACCOUNT')).id,
        mxnBank: (await external('MXN_ACCOUNT')).id,
        sparkWallet: (await external('SPARK_WALLET')).id,
        platformUsdc,
      });
    }
  });

  const both = (c: ExampleCase, send: (w: World, strict: boolean) => Promise<Reply>) => onBoth(c, worlds, send);

  it('sends bodies the reference schema takes, from its examples', () => {
    for (const c of ALL) expectValidByReference(c);
    // QuoteRequest.lockedCurrencySide is a required enum without an example: its first value.
    expect([...new Set(ALL.flatMap((c) => c.filled))].sort()).toEqual(['lockedCurrencySide']);
    expect(findingsOf(ALL)).toEqual(ofArea(STRICT_REFUSALS, 'money', (r) => `${r.field} ${r.value} ${r.rule}`));
    expect(magicOf(ALL)).toEqual(ofArea(MAGIC_EXAMPLES, 'money', (_e, value) => value));
    for (const where of ['createQuote, named example realTimeFundingToSparkWallet', 'createCard (property examples)'])
      expect(REFERENCE_BREAKS.some((b) => b.where === where)).toBe(true);
  });

  it.each(QUOTES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    await both(c, async (w) => {
      const ids: Record<string, string> = {};
      if (c.body.source.sourceType === 'ACCOUNT') ids['source.accountId'] = w.usd;
      if (c.body.source.customerId !== undefined) ids['source.customerId'] = w.customerId;
      const customer = encodeURIComponent(w.customerId);
      let lookup: Reply;
      if (c.body.destination.destinationType === 'ACCOUNT') {
        // The real-time funded example pays a Spark wallet; the others a bank account abroad.
        const destination = c.body.source.sourceType === 'REALTIME_FUNDING' ? w.sparkWallet : w.mxnBank;
        ids['destination.accountId'] = destination;
        lookup = await w.tenant.api('GET', `/receiver/external-account/${destination}?customerId=${customer}`);
      } else {
        // An address is a reference too: the sandbox's receiver in the example's currency.
        ids['destination.umaAddress'] = UMA_RECEIVER;
        lookup = await w.tenant.api('GET', `/receiver/uma/${encodeURIComponent(UMA_RECEIVER)}?customerId=${customer}`);
      }
      expect(lookup.status, lookup.text).toBe(200);
      if (c.body.lookupId !== undefined) ids.lookupId = lookup.body.lookupId;
      return w.tenant.api('POST', '/quotes', { body: bodyFor(c, ids) });
    });
  });

  it.each(TRANSFERS.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const replies = await both(c, (w) =>
      c.operationId === 'createTransferIn'
        ? w.tenant.api('POST', '/transfer-in', {
            body: bodyFor(c, { 'source.accountId': w.usdBank, 'destination.accountId': w.usd }),
          })
        : w.tenant.api('POST', '/transfer-out', {
            body: bodyFor(c, { 'source.accountId': w.usd, 'destination.accountId': w.usdBank }),
          }),
    );
    for (const reply of replies) expect(reply.body.status, c.name).not.toBe('FAILED');
  });

  it.each(CARDS.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const replies = await both(c, (w) =>
      w.tenant.api('POST', '/cards', {
        body: bodyFor(c, { cardholderId: w.customerId, 'fundingSources[0]': w.usd }),
      }),
    );
    await t.runDueJobs();
    for (const [i, reply] of replies.entries()) {
      const card = await worlds.get(i === 1)!.tenant.api('GET', `/cards/${reply.body.id}`);
      // card-emp-aary-001 ends in the issuance suffix 001: the card stays PROCESSING (MAGIC_EXAMPLES).
      expect(card.body.state, c.name).toBe(c.body.platformCardId?.endsWith('-001') ? 'PROCESSING' : 'ACTIVE');
    }
  });

  it('updateCardById named and built examples, in the reference order, on an ACTIVE card', async () => {
    const cards = new Map<boolean, string>();
    for (const [strict, w] of worlds) cards.set(strict, await activeCard(w));
    for (const c of CARD_UPDATES) {
      if (c.name.includes(' built ')) {
        for (const [strict, w] of worlds) cards.set(strict, await activeCard(w));
      }
      await both(c, (w, strict) =>
        w.tenant.api('PATCH', `/cards/${cards.get(strict)}`, {
          body: bodyFor(c, idsOfSources(c.body, w)),
        }),
      );
    }
  });

  it.each(SIMULATION_CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const { path, needs } = SIMULATIONS[c.operationId]!;
    const replies = await both(c, async (w) => {
      const card = await activeCard(w);
      const ids: Record<string, string> = {};
      if (needs !== undefined) ids.cardTransactionId = await cardTransaction(w, card, needs);
      return w.tenant.api('POST', `/sandbox/cards/${card}/simulate/${path}`, { body: bodyFor(c, ids) });
    });
    await t.runDueJobs();
    for (const [i, reply] of replies.entries()) {
      const record = await worlds
        .get(i === 1)!
        .tenant.raw('GET', `/_railyard/card-simulations/${reply.body.issuerTransactionToken}`);
      // AMAZON RETAIL US-002 ends in the decision suffix 002: declined for insufficient funds (MAGIC_EXAMPLES).
      if (c.body.merchant?.descriptor?.endsWith('-002'))
        expect(record.body, c.name).toMatchObject({ status: 'DECLINED', reason: 'INSUFFICIENT_FUNDS' });
      else expect(record.body.status, `${c.name}: ${record.text}`).not.toMatch(/DECLINED|NOT_APPLIED/);
    }
  });

  it.each(ESTIMATES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    await both(c, (w) =>
      w.tenant.api('POST', '/crypto/estimate-withdrawal-fee', {
        body: bodyFor(c, { internalAccountId: w.platformUsdc }),
      }),
    );
  });

  /** A new ACTIVE card of the world's customer, funded from its USD account. */
  async function activeCard(w: World): Promise<string> {
    const card = await w.tenant.api('POST', '/cards', {
      body: { cardholderId: w.customerId, form: 'VIRTUAL', fundingSources: [w.usd] },
    });
    expect(card.status, card.text).toBe(201);
    await t.runDueJobs();
    return card.body.id;
  }

  /** A card transaction of `card` brought to `status` through the simulators: its id. */
  async function cardTransaction(w: World, card: string, status: 'AUTHORIZED' | 'SETTLED' | 'REFUNDED') {
    const simulate = async (path: string, body: unknown) => {
      const accepted = await w.tenant.api('POST', `/sandbox/cards/${card}/simulate/${path}`, { body });
      expect(accepted.status, accepted.text).toBe(202);
      await t.runDueJobs();
      return (await w.tenant.raw('GET', `/_railyard/card-simulations/${accepted.body.issuerTransactionToken}`)).body;
    };
    const merchant = { descriptor: 'HARBOR DINER', mcc: '5812', country: 'US' };
    const auth = await simulate('authorization', { amount: 4_000, currency: { code: 'USD' }, merchant });
    const id = auth.cardTransactionId as string;
    if (status !== 'AUTHORIZED') await simulate('clearing', { cardTransactionId: id, amount: 4_000 });
    if (status === 'REFUNDED') await simulate('return', { cardTransactionId: id, amount: 4_000 });
    return id;
  }
});

function idsOfSources(body: any, w: World): Record<string, string> {
  return Array.isArray(body.fundingSources) ? { 'fundingSources[0]': w.usd } : {};
}
