// The demo data set of `railyard seed`: customers in several countries with each KYC/KYB
// outcome, funded accounts, external accounts of several types, payouts in each sandbox
// outcome, and the webhook deliveries all of that produces. Everything is made through the
// Grid API in-process (app.inject), with a token the seed issues for itself and deletes at
// the end, so the data is what real requests produce. The outcomes come from the rows of
// the magic-value table (magic.ts), so the set follows it.
//
// Deterministic: one seed number draws the same names, countries, amounts and outcomes
// (ids, timestamps, UMA addresses and idempotency keys are the server's own, so they differ).

import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { platformNow } from '../clock.js';
import { BASE_PATH } from '../config.js';
import { PERMISSIONS } from '../http/deps.js';
import { apiError } from '../http/errors.js';
import { JOURNAL_HEADER } from '../http/journal.js';
import { issueToken } from '../modules/tokens/service.js';
import {
  BENEFICIAL_OWNER_KYC,
  BENEFICIARY_VERIFICATION,
  BUSINESS_KYB,
  INDIVIDUAL_KYC,
  TRANSFER_SCENARIOS,
} from '../rails/magic.js';
import { clabeOf, COUNTRIES, type Country, Draw, ibanOf, phoneOf, solanaAddressOf } from './seed-data.js';

export const SEED_DEFAULT = 1;
/** How many times the cast is repeated by default (each time with other people and amounts). */
export const SEED_SIZE_DEFAULT = 2;
export const SEED_SIZE_MAX = 20;

/** A suffix no magic table uses: the default outcome. */
const PLAIN = '210';

/** How the in-process receiver answers each webhook type while the seed runs (the rest: 200). */
export const SEED_RECEIVER_ANSWERS: Record<string, number> = {
  'OUTGOING_PAYMENT.FAILED': 500,
  'CUSTOMER.KYC_REJECTED': 409,
};

export const SeedSummarySchema = Type.Object({
  platformId: Type.String(),
  seed: Type.Integer(),
  size: Type.Integer(),
  created: Type.Record(Type.String(), Type.Integer(), { description: 'What the seed made, by kind' }),
  webhookEndpoint: Type.String({
    description: "Where the seed's webhooks went: the platform's endpoint, or 'railyard' (a receiver inside the seed)",
  }),
});

export interface SeedSummary {
  platformId: string;
  seed: number;
  size: number;
  created: Record<string, number>;
  webhookEndpoint: string;
}

interface Reply {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: the JSON answers of many operations, read field by field
  body: any;
}

class Api {
  readonly created: Record<string, number> = {};
  constructor(
    private readonly app: FastifyInstance,
    private readonly authorization: string,
  ) {}

  count(kind: string): void {
    this.created[kind] = (this.created[kind] ?? 0) + 1;
  }

  async send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
    const response = await this.app.inject({
      method: method as 'GET',
      url: path.startsWith('/_railyard') ? path : `${BASE_PATH}${path}`,
      headers: {
        authorization: this.authorization,
        // The seed's requests are not the app's: the request journal leaves them out.
        [JOURNAL_HEADER]: 'off',
        ...(body !== undefined && !Buffer.isBuffer(body) ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body === undefined ? {} : { payload: Buffer.isBuffer(body) ? body : JSON.stringify(body) }),
    });
    return { status: response.statusCode, body: response.body === '' ? undefined : JSON.parse(response.body) };
  }

  /** A request that must succeed with `expected`; anything else stops the seed with what the server said. */
  async expect(expected: number, method: string, path: string, body?: unknown, headers?: Record<string, string>) {
    const reply = await this.send(method, path, body, headers);
    if (reply.status !== expected)
      throw new Error(`seed: ${method} ${path} answered ${reply.status}: ${JSON.stringify(reply.body).slice(0, 500)}`);
    return reply.body;
  }
}

function multipart(fields: Record<string, string>, file: Buffer, fileName: string, contentType: string) {
  const boundary = `----railyardseed${randomUUID().replace(/-/g, '')}`;
  const chunks: Buffer[] = [];
  for (const [name, value] of Object.entries(fields))
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  chunks.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: ${contentType}\r\n\r\n`,
    ),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { payload: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

// Files recognised by their first bytes (the content of a sandbox document does not matter).
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(256, 7)]);
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(256, 32), Buffer.from('\n%%EOF\n')]);

async function upload(api: Api, holder: string, documentType: string, country: string, identity: boolean) {
  const fields: Record<string, string> = { documentHolder: holder, documentType, country };
  if (identity) Object.assign(fields, { documentNumber: 'P4471902', issuingAuthority: 'Passport office' });
  const form = identity
    ? multipart(fields, JPEG, 'passport.jpg', 'image/jpeg')
    : multipart(fields, PDF, `${documentType.toLowerCase()}.pdf`, 'application/pdf');
  await api.expect(201, 'POST', '/documents', form.payload, { 'content-type': form.contentType });
  api.count('documents');
}

function personName(draw: Draw, country: Country) {
  return { first: draw.pick(country.firstNames), last: draw.pick(country.lastNames) };
}

function individualBody(draw: Draw, country: Country, fullName: string, platformCustomerId: string) {
  const { first, last } = { first: fullName.split(' ')[0]!, last: fullName.split(' ')[1]! };
  return {
    customerType: 'INDIVIDUAL',
    platformCustomerId,
    fullName,
    birthDate: `19${draw.int(60, 99)}-0${draw.int(1, 9)}-1${draw.int(0, 9)}`,
    nationality: country.code,
    address: { ...country.address, country: country.code },
    ...(country.code === 'US'
      ? { idType: 'SSN', identifier: `${draw.digits(3)}-${draw.digits(2)}-${draw.digits(4)}` }
      : { idType: 'NON_US_TAX_ID', identifier: draw.digits(11) }),
    email: `${first}.${last}@example.com`.toLowerCase(),
    phoneNumber: phoneOf(draw, country),
  };
}

interface Unit {
  api: Api;
  draw: Draw;
  seed: number;
  index: number;
}

/** Rotates through `codes` by the unit's index, so a larger set spreads over more countries. */
function countryOf(unit: Unit, codes: string[]): Country {
  return COUNTRIES[codes[unit.index % codes.length]!]!;
}

async function verifyContact(api: Api, customerId: string): Promise<void> {
  for (const channel of ['email', 'phone']) {
    await api.expect(204, 'POST', `/customers/${customerId}/verify-${channel}`);
    await api.expect(200, 'POST', `/customers/${customerId}/verify-${channel}/confirm`, { code: '123456' });
  }
}

/** One individual per KYC row of the magic table (and one for the default outcome), plus an EEA one. */
async function seedIndividuals(unit: Unit): Promise<{ payerId: string; others: { id: string; country: Country }[] }> {
  const { api, draw } = unit;
  const rows = [
    { suffix: '', countries: ['US'], submit: false },
    ...INDIVIDUAL_KYC.map((row, i) => ({
      suffix: row.suffix,
      // A submission is what decides these two: manual review, or a poor-quality document.
      submit: row.outcome.kycStatusAtCreation === 'PENDING' || row.outcome.kycStatusAtCreation === 'UNVERIFIED',
      countries: [
        ['GB', 'MX', 'PH'],
        ['BR', 'NG', 'US'],
        ['MX', 'PH', 'GB'],
      ][i % 3]!,
    })),
    { suffix: '', countries: ['DE', 'FR'], submit: false },
  ];
  let payerId = '';
  const others: { id: string; country: Country }[] = [];
  for (const [i, row] of rows.entries()) {
    const country = countryOf(unit, row.countries);
    const { first, last } = personName(draw, country);
    const fullName = row.suffix === '' ? `${first} ${last}` : `${first} ${last} ${row.suffix}`;
    const body = individualBody(draw, country, fullName, `demo-${unit.seed}-${unit.index}-person-${i}`);
    const customer = await api.expect(201, 'POST', '/customers', body);
    api.count('individuals');
    if (country.eea) await verifyContact(api, customer.id);
    if (row.submit) {
      await upload(api, customer.id, 'PASSPORT', country.code, true);
      await api.expect(200, 'POST', '/verifications', { customerId: customer.id });
      api.count('verifications');
    }
    if (i === 0) payerId = customer.id;
    else others.push({ id: customer.id, country });
  }
  return { payerId, others };
}

async function addOwner(unit: Unit, businessId: string, country: Country, lastSuffix: string, percentage: number) {
  const { first, last } = personName(unit.draw, country);
  await unit.api.expect(201, 'POST', '/beneficial-owners', {
    customerId: businessId,
    roles: ['UBO', 'DIRECTOR'],
    ownershipPercentage: percentage,
    personalInfo: {
      firstName: first,
      lastName: lastSuffix === '' ? last : `${last} ${lastSuffix}`,
      birthDate: `19${unit.draw.int(55, 90)}-0${unit.draw.int(1, 9)}-2${unit.draw.int(0, 8)}`,
      nationality: country.code,
      address: { ...country.address, country: country.code },
      idType: 'NON_US_TAX_ID',
      identifier: unit.draw.digits(10),
    },
  });
  unit.api.count('beneficialOwners');
}

/** One business per KYB row of the magic table and one for the default, each submitted. */
async function seedBusinesses(unit: Unit): Promise<void> {
  const { api, draw } = unit;
  const cases = [
    {
      suffix: PLAIN,
      countries: ['US', 'GB'],
      owners: ['', ...BENEFICIAL_OWNER_KYC.map((row) => row.suffix)],
      documents: false,
    },
    ...BUSINESS_KYB.map((row) => ({
      suffix: row.suffix,
      countries: row.outcome === 'REJECT' ? ['MX', 'US'] : ['GB', 'BR'],
      owners: [''],
      // A validated business with every document and an owner goes to review; the other
      // validated row is submitted bare, and answered with what is missing.
      documents:
        row.outcome === 'VALIDATE' && row.suffix === BUSINESS_KYB.find((r) => r.outcome === 'VALIDATE')!.suffix,
    })),
  ];
  for (const [i, kase] of cases.entries()) {
    const country = countryOf(unit, kase.countries);
    const legalName = draw.pick(country.businessNames);
    const business = await api.expect(201, 'POST', '/customers', {
      customerType: 'BUSINESS',
      platformCustomerId: `demo-${unit.seed}-${unit.index}-business-${i}`,
      email: `finance@${legalName.split(' ')[0]!.toLowerCase()}.example.com`,
      phoneNumber: phoneOf(draw, country),
      address: { ...country.address, country: country.code },
      businessInfo: {
        legalName,
        country: country.code,
        registrationNumber: `RN${draw.digits(6)}${kase.suffix}`,
        incorporatedOn: `20${draw.int(10, 22)}-0${draw.int(1, 9)}-01`,
        entityType: 'LLC',
        taxId: `${draw.digits(2)}-${draw.digits(7)}`,
        countriesOfOperation: [country.code],
        businessType: 'PROFESSIONAL_SCIENTIFIC_AND_TECHNICAL_SERVICES',
      },
    });
    api.count('businesses');
    const needsOwners =
      kase.suffix === PLAIN ||
      kase.documents ||
      BUSINESS_KYB.find((r) => r.suffix === kase.suffix)?.outcome === 'REJECT';
    if (needsOwners) {
      const share = Math.floor(90 / kase.owners.length);
      for (const suffix of kase.owners) await addOwner(unit, business.id, country, suffix, share);
    }
    if (kase.documents) {
      await upload(api, business.id, 'CERTIFICATE_OF_INCORPORATION', country.code, false);
      await upload(api, business.id, 'SHAREHOLDER_REGISTER', country.code, false);
      await upload(api, business.id, 'UTILITY_BILL', country.code, false);
    }
    await api.expect(200, 'POST', '/verifications', { customerId: business.id });
    api.count('verifications');
  }
}

function usdAccount(draw: Draw, holder: string, suffix: string) {
  return {
    currency: 'USD',
    accountInfo: {
      accountType: 'USD_ACCOUNT',
      accountNumber: `${draw.digits(9)}${suffix}`,
      routingNumber: '021000021',
      bankAccountType: 'CHECKING',
      bankName: 'Chase',
      beneficiary: {
        beneficiaryType: 'INDIVIDUAL',
        fullName: holder,
        address: { ...COUNTRIES.US!.address, country: 'US' },
      },
    },
  };
}

/** An external account of a type that suits the country, whose identifier ends in `suffix`. */
function localAccount(draw: Draw, country: Country, holder: string, suffix: string) {
  const beneficiary = { beneficiaryType: 'INDIVIDUAL', fullName: holder };
  switch (country.code) {
    case 'DE':
    case 'FR':
      return {
        currency: 'EUR',
        accountInfo: {
          accountType: 'EUR_ACCOUNT',
          iban: ibanOf(draw, country.code, country.code === 'DE' ? 18 : 23, suffix),
          beneficiary: { ...beneficiary, countryOfResidence: country.code },
        },
      };
    case 'GB':
      return {
        currency: 'GBP',
        accountInfo: {
          accountType: 'GBP_ACCOUNT',
          sortCode: '040004',
          accountNumber: `${draw.digits(5)}${suffix}`,
          beneficiary,
        },
      };
    case 'MX':
      return {
        currency: 'MXN',
        accountInfo: { accountType: 'MXN_ACCOUNT', clabeNumber: clabeOf(draw, suffix), beneficiary },
      };
    case 'BR':
      return {
        currency: 'BRL',
        accountInfo: {
          accountType: 'BRL_ACCOUNT',
          pixKey: `${holder.split(' ')[0]!.toLowerCase()}.${draw.digits(4)}${suffix}@pix.example.com`,
          pixKeyType: 'EMAIL',
          taxId: draw.digits(11),
          beneficiary,
        },
      };
    default:
      return { currency: 'USDC', accountInfo: { accountType: 'SOLANA_WALLET', address: solanaAddressOf(draw) } };
  }
}

async function usdInternalAccount(api: Api, customerId: string | null): Promise<string> {
  const list =
    customerId === null
      ? await api.expect(200, 'GET', '/platform/internal-accounts?currency=USD')
      : await api.expect(
          200,
          'GET',
          `/customers/internal-accounts?customerId=${encodeURIComponent(customerId)}&currency=USD`,
        );
  const account = list.data.find((a: { type: string }) => a.type === 'INTERNAL_FIAT') ?? list.data[0];
  if (account === undefined) throw new Error('seed: the platform does not support USD, which the demo set pays in');
  return account.id;
}

/** Money: funded accounts, a payout to an account of each transfer outcome, and a pull. */
async function seedMoney(unit: Unit, payerId: string, others: { id: string; country: Country }[]): Promise<void> {
  const { api, draw } = unit;
  const fund = async (accountId: string, amount: number) => {
    await api.expect(200, 'POST', `/sandbox/internal-accounts/${accountId}/fund`, { amount });
    api.count('fundings');
  };
  const payerAccount = await usdInternalAccount(api, payerId);
  await fund(payerAccount, draw.int(2_500, 9_000) * 100);
  await fund(await usdInternalAccount(api, null), draw.int(10_000, 50_000) * 100);
  const payer = await api.expect(200, 'GET', `/customers/${payerId}`);

  // One payee account per transfer outcome of the magic table, and one for success.
  for (const suffix of [PLAIN, ...TRANSFER_SCENARIOS.map((row) => row.suffix)]) {
    const account = await api.expect(201, 'POST', '/customers/external-accounts', {
      customerId: payerId,
      ...usdAccount(draw, payer.fullName, suffix),
    });
    api.count('externalAccounts');
    await api.expect(
      201,
      'POST',
      '/transfer-out',
      { source: { accountId: payerAccount }, destination: { accountId: account.id }, amount: draw.int(10, 400) * 100 },
      { 'idempotency-key': randomUUID() },
    );
    api.count('transfers');
    if (suffix === PLAIN) {
      await api.expect(
        201,
        'POST',
        '/transfer-in',
        {
          source: { accountId: account.id },
          destination: { accountId: payerAccount },
          amount: draw.int(50, 500) * 100,
        },
        { 'idempotency-key': randomUUID() },
      );
      api.count('transfers');
    }
  }

  // The others: funded if approved, and holding accounts of their country's kind, one in
  // each beneficiary verification outcome that creates an account (105 refuses it).
  const verification = BENEFICIARY_VERIFICATION.filter((row) => row.outcome.kind === 'status').map((row) => row.suffix);
  const customers = [];
  for (const other of others) customers.push(await api.expect(200, 'GET', `/customers/${other.id}`));
  for (const [j, suffix] of verification.entries()) {
    const i = j % others.length;
    const holder: string = customers[i].fullName.replace(/ \d{3}$/, '');
    await api.expect(201, 'POST', '/customers/external-accounts', {
      customerId: others[i]!.id,
      ...localAccount(draw, others[i]!.country, holder, suffix),
    });
    api.count('externalAccounts');
  }
  for (const [i, customer] of customers.entries())
    if (customer.kycStatus === 'APPROVED')
      await fund(await usdInternalAccount(api, others[i]!.id), draw.int(100, 2_000) * 100);
}

/** A receiver for the seed's webhooks when the platform has no endpoint: answers by event type. */
async function startReceiver(): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk) => (text += chunk));
    request.on('end', () => {
      let type = '';
      try {
        type = String(JSON.parse(text).type ?? '');
      } catch {
        type = '';
      }
      response.writeHead(SEED_RECEIVER_ANSWERS[type] ?? 200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ received: type }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}/railyard-seed-webhooks`, server };
}

/** How long the seed waits for its webhooks' first tries, which a server's runner may be making. */
const FIRST_TRIES_WAIT_MS = 10_000;

/**
 * Runs the platform's due jobs here, then waits until every delivery has been tried once:
 * in a running server the background runner takes deliveries as they are scheduled, so some
 * may still be under way elsewhere in the process.
 */
async function firstTries(app: FastifyInstance, platformId: string): Promise<void> {
  const { deps } = app;
  const deadline = performance.now() + FIRST_TRIES_WAIT_MS;
  for (;;) {
    await deps.jobs?.runDue(platformId);
    const untried = await deps.db.k
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('platform_id', '=', platformId)
      .where('status', '=', 'PENDING')
      .where('attempts', '=', 0)
      .limit(1)
      .execute();
    if (untried.length === 0 || performance.now() >= deadline) return;
    await sleep(20);
  }
}

/**
 * Fills the platform with the demo set (`size` copies of the cast). 409 CONFLICT when the
 * platform already holds a set of this seed (its platformCustomerIds would collide).
 */
export async function seedPlatform(
  app: FastifyInstance,
  platformId: string,
  options: { seed?: number | undefined; size?: number | undefined } = {},
): Promise<SeedSummary> {
  const seed = options.seed ?? SEED_DEFAULT;
  const size = options.size ?? SEED_SIZE_DEFAULT;
  const { deps } = app;
  const token = await issueToken(deps.db.k, {
    platformId,
    name: 'railyard seed (deleted when the seed ends)',
    permissions: [...PERMISSIONS],
    now: platformNow(deps.clock, 0),
  });
  const api = new Api(app, `Basic ${Buffer.from(`${token.clientId}:${token.clientSecret}`).toString('base64')}`);
  let receiver: { url: string; server: Server } | undefined;
  try {
    const taken = await api.expect(200, 'GET', `/customers?platformCustomerId=demo-${seed}-0-person-0`);
    if (taken.data.length > 0)
      throw apiError(
        'CONFLICT',
        `This platform already holds the demo set of seed ${seed}: reset it, or seed another number`,
        {
          seed,
        },
      );
    const config = await api.expect(200, 'GET', '/config');
    let webhookEndpoint: string = config.webhookEndpoint ?? '';
    if (webhookEndpoint === '') {
      receiver = await startReceiver();
      await api.expect(200, 'PATCH', '/config', { webhookEndpoint: receiver.url });
      webhookEndpoint = 'railyard';
    }
    for (let index = 0; index < size; index++) {
      // Each copy of the cast draws from its own sequence, so a larger set keeps the smaller one as its start.
      const unit: Unit = { api, draw: new Draw(seed * 7919 + index), seed, index };
      const { payerId, others } = await seedIndividuals(unit);
      await seedBusinesses(unit);
      await seedMoney(unit, payerId, others);
    }
    // Every webhook gets its first try before the seed answers (and before the receiver
    // goes): the retries of the failed ones stay scheduled, as they would be.
    await firstTries(app, platformId);
    if (receiver !== undefined) await api.expect(200, 'PATCH', '/config', { webhookEndpoint: '' });
    const deliveries = await api.expect(200, 'GET', '/_railyard/webhooks/deliveries?limit=1');
    api.created.webhookDeliveries = deliveries.totalCount ?? deliveries.data.length;
    return { platformId, seed, size, created: api.created, webhookEndpoint };
  } finally {
    receiver?.server.close();
    await deps.db.k.deleteFrom('api_tokens').where('id', '=', token.id).execute();
    deps.authCache?.clear();
  }
}
