// The payouts of Grid's published sample application, with the bodies it sends: a customer
// with only the five fields its form asks for, a bank account whose beneficiary has a type, a
// name and a country of residence, a quote funded in real time from US dollars with the sending
// side locked, and the sandbox's simulated payment of its instructions. Each payout completes,
// and its PROCESSING and COMPLETED webhooks reach a real receiver, signed.

import { afterEach, describe, expect, it } from 'vitest';
import { expectAllConform, type Receiver, receiverFor } from '../events/support.js';
import { uniqueId } from '../fixtures/customers.js';
import { expectBalancedBooks } from '../fixtures/money.js';
import { buildAtStart } from '../fixtures/quotes.js';

const open: Receiver[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

interface Destination {
  currency: string;
  /** The account as the sample's form builds it. */
  accountInfo: Record<string, unknown>;
  /** The beneficiary's country of residence. */
  country: string;
  fullName: string;
  /** What the quote adds: the reference says a purpose may be asked for some geographies, India among them. */
  quote?: Record<string, unknown>;
}

const DESTINATIONS: Destination[] = [
  {
    currency: 'MXN',
    // The sample's own CLABE, whose check digit is not the one the CLABE algorithm gives: the
    // reference asks only for 18 digits, and so does railyard unless strict.
    accountInfo: { accountType: 'MXN_ACCOUNT', clabeNumber: '014027000005555601', paymentRails: ['SPEI'] },
    country: 'MX',
    fullName: 'Carlos García',
  },
  {
    currency: 'INR',
    accountInfo: { accountType: 'INR_ACCOUNT', vpa: 'priya.sharma@okaxis', paymentRails: ['UPI'] },
    country: 'IN',
    fullName: 'Priya Sharma',
    quote: { purposeOfPayment: 'FAMILY_SUPPORT' },
  },
  {
    currency: 'BRL',
    accountInfo: {
      accountType: 'BRL_ACCOUNT',
      pixKey: 'joao.silva@exemplo.com.br',
      pixKeyType: 'EMAIL',
      taxId: '52998224725',
      paymentRails: ['PIX'],
    },
    country: 'BR',
    fullName: 'João Silva',
  },
  {
    currency: 'EUR',
    accountInfo: { accountType: 'EUR_ACCOUNT', iban: 'DE89370400440532013000', paymentRails: ['SEPA'] },
    country: 'DE',
    fullName: 'Anna Müller',
  },
  {
    currency: 'GBP',
    accountInfo: {
      accountType: 'GBP_ACCOUNT',
      sortCode: '040004',
      accountNumber: '41926819',
      paymentRails: ['FASTER_PAYMENTS'],
    },
    country: 'GB',
    fullName: 'Oliver Smith',
  },
];

describe("the sample application's payouts", () => {
  it.each(DESTINATIONS.map((d) => [d.currency, d] as const))(
    'USD to %s: customer, account, real-time funded quote, sandbox send; COMPLETED, webhooks signed',
    { timeout: 60_000 },
    async (_currency, destination) => {
      const t = await buildAtStart();
      const receiver = await receiverFor(t);
      open.push(receiver);

      // The sender: a customer of a US platform, with only what the sample's form asks.
      const customer = await t.api('POST', '/customers', {
        body: {
          platformCustomerId: uniqueId('sample'),
          customerType: 'INDIVIDUAL',
          fullName: 'Jordan Rivera',
          nationality: 'US',
          birthDate: '1991-03-14',
        },
      });
      expect(customer.status, customer.text).toBe(201);

      const account = await t.api('POST', '/customers/external-accounts', {
        body: {
          customerId: customer.body.id,
          currency: destination.currency,
          platformAccountId: uniqueId('acct'),
          accountInfo: {
            ...destination.accountInfo,
            beneficiary: {
              beneficiaryType: 'INDIVIDUAL',
              fullName: destination.fullName,
              countryOfResidence: destination.country,
            },
          },
        },
      });
      expect(account.status, account.text).toBe(201);
      expect(account.body).toMatchObject({ status: 'ACTIVE', currency: destination.currency });

      const quote = await t.api('POST', '/quotes', {
        body: {
          source: { sourceType: 'REALTIME_FUNDING', currency: 'USD', customerId: customer.body.id },
          destination: { destinationType: 'ACCOUNT', accountId: account.body.id },
          lockedCurrencySide: 'SENDING',
          lockedCurrencyAmount: 25_000,
          ...destination.quote,
        },
      });
      expect(quote.status, quote.text).toBe(201);
      expect(quote.body).toMatchObject({ status: 'PENDING', totalSendingAmount: 25_000 });
      expect(quote.body.paymentInstructions).toHaveLength(1);

      const sent = await t.api('POST', '/sandbox/send', { body: { quoteId: quote.body.id, currencyCode: 'USD' } });
      expect(sent.status, sent.text).toBe(200);
      expect(sent.body).toMatchObject({ id: quote.body.transactionId, type: 'OUTGOING', status: 'COMPLETED' });
      const transaction = await t.api('GET', `/transactions/${quote.body.transactionId}`);
      expect(transaction.body.status).toBe('COMPLETED');
      expect(transaction.body.receivedAmount.currency.code).toBe(destination.currency);

      const ofPayment = (type: string) =>
        receiver.hits.filter((h) => h.type === type && h.json.data?.id === quote.body.transactionId);
      // Deliveries are jobs; the tests run them (no background poll). The receiver checks each
      // payload against the reference, whose first read takes seconds on a loaded machine.
      await expect
        .poll(
          async () => {
            await t.runDueJobs();
            return ofPayment('OUTGOING_PAYMENT.COMPLETED').length;
          },
          { timeout: 30_000 },
        )
        .toBe(1);
      for (const type of ['OUTGOING_PAYMENT.PROCESSING', 'OUTGOING_PAYMENT.COMPLETED']) {
        const [hit, ...more] = ofPayment(type);
        expect(more, type).toEqual([]);
        expect(hit?.signatureValid, type).toBe(true);
        expect(hit?.json.data.status, type).toBe(type.split('.')[1]);
      }
      expectAllConform(receiver);
      await expectBalancedBooks(t);
    },
  );
});

describe("the sample application's CLABE in strict mode", () => {
  it('is refused for its check digit, naming the field, as a Mexican bank would bounce it', async () => {
    const t = await buildAtStart();
    const strict = await t.newPlatform({ strictIdentifiers: true });
    const mxn = DESTINATIONS[0]!;
    const body = {
      currency: 'MXN',
      accountInfo: {
        ...mxn.accountInfo,
        beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: mxn.fullName, countryOfResidence: mxn.country },
      },
    };
    const refused = await strict.api('POST', '/platform/external-accounts', { body });
    expect(refused.status).toBe(400);
    expect(refused.body.details.errors).toEqual([
      {
        field: 'accountInfo.clabeNumber',
        constraint: { format: 'clabe' },
        message: 'is not a valid CLABE (check digit mismatch) (strict identifiers)',
      },
    ]);
    expect((await t.api('POST', '/platform/external-accounts', { body })).status).toBe(201);
  });
});
