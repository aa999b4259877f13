// A valid request for every operation railyard serves (its own /_railyard endpoints too),
// built on a world of resources made through the API: the fuzz suite mutates each of these.
// An operation without a row here fails the suite, so a new operation is not done until it
// has one (and passes the fuzzing that follows).

import { randomUUID } from 'node:crypto';
import { accountBody } from '../fixtures/accounts.js';
import { SoftAuthenticator } from '../fixtures/authenticator.js';
import { berlin } from '../fixtures/sca.js';
import {
  businessBody,
  type FilePart as MultipartFile,
  individualBody,
  JPEG,
  multipart,
  ownerBody,
  PDF,
  uniqueId,
} from '../fixtures/customers.js';
import { googleClaims, mintOidcToken } from '../fixtures/oidc.js';
import { clientKey, otpLogin, sealOtp, signed } from '../fixtures/wallet.js';
import { enableServerAdmin } from '../../src/sandbox/server-admin.js';
import type { Tenant, TestApp } from '../helper.js';

/** A file part of a baseline's form: every member given, so the mutations can change each. */
export type FilePart = Required<MultipartFile>;

export interface Baseline {
  params?: Record<string, string>;
  query?: Record<string, string | string[]>;
  headers?: Record<string, string>;
  /** A JSON body. */
  body?: unknown;
  /** A multipart/form-data body instead. */
  form?: { fields: Record<string, string>; files: FilePart[] };
}

export interface BaselineRow {
  make: (w: World) => Promise<Baseline> | Baseline;
  /**
   * When to make the baseline again: `success` after any 2xx (the operation used up its
   * target: a delete, an execution, a decision), `always` before every request (bodies that
   * must be unique, such as a new customer's platformCustomerId). Default: never.
   */
  renew?: 'success' | 'always';
  /** Run after every other operation (it changes settings the others rely on). */
  last?: boolean;
  /**
   * The status the baseline answers when no request of this operation can succeed in
   * railyard yet (the reason says why); the mutations are then checked for refusals only.
   */
  refusedBaseline?: { status: number; why: string };
  /**
   * A refusal the reference itself says changes something, recognised by its answer; the
   * baseline is made again after one.
   */
  refusalChanges?: { why: string; when: (answer: any) => boolean };
  /**
   * The baseline's target lasts a few seconds of real time (the sandbox clock runs with the
   * wall's): an answer this recognises means it lapsed before the request arrived (a loaded
   * machine), and the baseline is made again and sent again, a few times at most.
   */
  lapsed?: { why: string; when: (answer: any) => boolean };
}

const APPROVAL_WINDOW_PASSED: BaselineRow['lapsed'] = {
  why: "the platform's approval window of an incoming payment lasts 5 s of the platform's clock",
  when: (answer) => answer?.code === 'TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL',
};

const SIGNATURE_REFUSAL: BaselineRow['refusalChanges'] = {
  why: 'the reference: a signature that does not verify moves the account to UNVERIFIED (400), and a new challenge is needed',
  when: (answer) =>
    answer?.status === 400 && answer.details?.errors?.some((e: { field: string }) => e.field === 'signature') === true,
};

const FAILED_PROOF: BaselineRow['refusalChanges'] = {
  why: 'the reference: a wrong SCA proof counts as a failed login attempt, and the fifth locks the login (423)',
  when: (answer) =>
    answer?.status === 423 ||
    (answer?.status === 400 &&
      answer.details?.errors?.some((e: { message?: string }) => /failed attempts/.test(e.message ?? '')) === true),
};

/** The resources one platform holds for the fuzz suite, all made through the API. */
export interface World {
  t: TestApp;
  tenant: Tenant;
  individual: any;
  business: any;
  euCustomer: any;
  owner: any;
  document: any;
  token: any;
  platformUsd: any;
  customerUsd: any;
  usdcAccount: any;
  bank: any;
  mxnBank: any;
  customerBank: any;
  transaction: any;
  quote: any;
  verification: any;
  importJobId: string;
  delivery: any;
  /** A customer's EMBEDDED_WALLET (of euCustomer: email and phone), with two credentials and a live session. */
  wallet: { accountId: string; emailCredentialId: string; smsCredentialId: string; sessionId: string };
  /** A delegated key row of that wallet (written directly, to skip its three signed legs). */
  delegatedKeyId: string;
  /** A connected agent of `individual` (its code redeemed, its bearer token) and one not yet connected. */
  agent: { id: string; code: string; bearer: string };
  pendingAgentId: string;
  /** A transfer-out and a quote of `individual` (what its agent may read), and its MXN bank account. */
  customerTransaction: any;
  customerQuote: any;
  customerMxn: any;
  /** Agents of `individual` for money actions: one whose actions run at once (limits out of the way), one whose wait. */
  moneyAgent: { id: string; bearer: string };
  approvalAgent: { id: string; bearer: string };
  /** An action of moneyAgent. */
  agentActionId: string;
  /** Request helpers on this world's platform that fail loudly. */
  post(path: string, body?: unknown, expected?: number): Promise<any>;
}

/** An OIDC token the sandbox accepts now (a new subject each time, so each registers). */
function freshOidcToken(): string {
  const now = Math.floor(Date.now() / 1000);
  return mintOidcToken(googleClaims(Date.now(), { sub: String(now * 1000 + Math.floor(Math.random() * 1000)) }));
}

const MXN_ACCOUNT = () => accountBody('MXN_ACCOUNT', '000');

function jsonOf(reply: { status: number; text: string; body: any }, what: string, expected?: number) {
  if (reply.status >= 300 || (expected !== undefined && reply.status !== expected))
    throw new Error(`fuzz world: ${what} answered ${reply.status} ${reply.text.slice(0, 400)}`);
  return reply.body;
}

/** Builds the world of one platform (`tenant` on the app `t`). */
export async function buildWorld(t: TestApp, tenant: Tenant): Promise<World> {
  const post = async (path: string, body?: unknown, expected?: number) =>
    jsonOf(await tenant.api('POST', path, body === undefined ? {} : { body }), `POST ${path}`, expected);
  const get = async (path: string) => jsonOf(await tenant.api('GET', path), `GET ${path}`);

  const individual = await post('/customers', individualBody('Jordan Rivera'));
  const business = await post('/customers', businessBody('HF-2016-778'));
  const euCustomer = await post(
    '/customers',
    individualBody('Lena Vogel', { address: berlin, nationality: 'DE', phoneNumber: '+4915123456789' }),
  );
  // Its verified phone and SCA session (authorizing its payments needs one).
  await tenant.api('POST', `/customers/${euCustomer.id}/verify-phone`);
  await post(`/customers/${euCustomer.id}/verify-phone/confirm`, { code: '123456' }, 200);
  const login = await post(`/sca/login/start?customerId=${euCustomer.id}`, { factor: 'SMS_OTP' }, 200);
  await post(
    `/sca/login/complete?customerId=${euCustomer.id}`,
    { factor: 'SMS_OTP', challengeId: login.challengeId, code: '123456', endUserIpAddress: '198.51.100.23' },
    200,
  );
  const owner = await post('/beneficial-owners', ownerBody(business.id, 'Chen'));
  const documentReply = await tenant.api(
    'POST',
    '/documents',
    multipart(
      {
        documentHolder: individual.id,
        documentType: 'PASSPORT',
        country: 'US',
        documentNumber: 'P1234567',
        issuingAuthority: 'US Department of State',
      },
      [{ name: 'file', fileName: 'passport.jpg', data: JPEG(), contentType: 'image/jpeg' }],
    ),
  );
  const document = jsonOf(documentReply, 'POST /documents');
  const token = await post('/tokens', { name: 'fuzz reader', permissions: ['VIEW'] });

  const platformUsd = (await get('/platform/internal-accounts?currency=USD')).data[0];
  const usdcAccount = (await get('/platform/internal-accounts?currency=USDC')).data[0];
  await post(`/sandbox/internal-accounts/${platformUsd.id}/fund`, { amount: 1_000_000_000 });
  const customerUsd = (
    await get(`/customers/internal-accounts?customerId=${encodeURIComponent(individual.id)}&currency=USD`)
  ).data[0];
  await post(`/sandbox/internal-accounts/${customerUsd.id}/fund`, { amount: 1_000_000_000 });
  const euUsd = (await get(`/customers/internal-accounts?customerId=${encodeURIComponent(euCustomer.id)}&currency=USD`))
    .data[0];
  await post(`/sandbox/internal-accounts/${euUsd.id}/fund`, { amount: 1_000_000_000 });

  const bank = await post('/platform/external-accounts', accountBody('USD_ACCOUNT', '000'));
  const customerBank = await post('/customers/external-accounts', {
    ...accountBody('USD_ACCOUNT', '000'),
    customerId: individual.id,
  });
  const transaction = await post('/transfer-out', {
    source: { accountId: platformUsd.id },
    destination: { accountId: bank.id },
    amount: 1_000,
  });
  const mxnBank = await post('/platform/external-accounts', MXN_ACCOUNT());
  const quote = await post('/quotes', quoteBody(platformUsd.id, mxnBank.id));
  const reviewed = await post('/customers', individualBody('Sam Review 001'));
  const verification = await post('/verifications', { customerId: reviewed.id }, 200);
  const csv =
    'umaAddress,platformCustomerId,customerType,fullName,birthDate,addressLine1,city,state,postalCode,country\n' +
    `fuzz.csv@pay.example.com,${uniqueId('csv')},INDIVIDUAL,Casey Imported,1990-02-03,1 Main St,Austin,TX,78701,US\n`;
  const imported = jsonOf(
    await tenant.api(
      'POST',
      '/customers/bulk/csv',
      multipart({}, [{ name: 'file', fileName: 'customers.csv', data: Buffer.from(csv), contentType: 'text/csv' }]),
    ),
    'POST /customers/bulk/csv',
  );
  await post('/sandbox/webhooks/test');
  await t.runDueJobs();
  const delivery = jsonOf(await tenant.raw('GET', '/_railyard/webhooks/deliveries?limit=1'), 'GET deliveries').data[0];
  if (delivery === undefined) throw new Error('fuzz world: no webhook delivery');

  const euWallet = (
    await get(`/customers/internal-accounts?customerId=${encodeURIComponent(euCustomer.id)}&type=EMBEDDED_WALLET`)
  ).data[0];
  const emailCredential = (await get(`/auth/credentials?accountId=${euWallet.id}`)).data[0];
  const { session, key } = await otpLogin(tenant, emailCredential.id);
  const sms = await signed(tenant, 'POST', '/auth/credentials', key, { type: 'SMS_OTP', accountId: euWallet.id });
  const smsCredential = jsonOf(sms.reply, 'POST /auth/credentials (signed)', 201);
  const delegatedKeyId = await insertDelegatedKey(t, tenant.platformId, euWallet.id);

  const connected = await post('/agents', agentBody(individual.id));
  const redeemed = jsonOf(
    await tenant.api('POST', `/agents/device-codes/${connected.deviceCode.code}/redeem`, { auth: null }),
    'POST /agents/device-codes/{code}/redeem',
  );
  const pendingAgent = await post('/agents', agentBody(individual.id));
  const customerTransaction = await post('/transfer-out', {
    source: { accountId: customerUsd.id },
    destination: { accountId: customerBank.id },
    amount: 1_500,
  });
  const customerMxn = await post('/customers/external-accounts', { ...MXN_ACCOUNT(), customerId: individual.id });
  const customerQuote = await post('/quotes', quoteBody(customerUsd.id, customerMxn.id));
  const roomyLimits = { currency: 'USD', perTransactionLimit: 1_000_000_000, dailyTransactionLimit: 1_000_000 };
  const moneyAgent = await fuzzAgent(tenant, post, individual.id, { spendingLimits: roomyLimits });
  const approvalAgent = await fuzzAgent(tenant, post, individual.id, {
    spendingLimits: roomyLimits,
    defaultExecutionMode: 'APPROVAL_REQUIRED',
  });
  const agentAction = jsonOf(
    await tenant.api('POST', '/agents/me/transfer-out', {
      auth: null,
      headers: { authorization: moneyAgent.bearer },
      body: { source: { accountId: customerUsd.id }, destination: { accountId: customerBank.id }, amount: 1_200 },
    }),
    'POST /agents/me/transfer-out',
    201,
  );

  return {
    t,
    tenant,
    individual,
    business,
    euCustomer,
    owner,
    document,
    token,
    platformUsd,
    customerUsd,
    usdcAccount,
    bank,
    mxnBank,
    customerBank,
    transaction,
    quote,
    verification,
    importJobId: imported.jobId,
    delivery,
    wallet: {
      accountId: euWallet.id,
      emailCredentialId: emailCredential.id,
      smsCredentialId: smsCredential.id,
      sessionId: session.id,
    },
    delegatedKeyId,
    agent: {
      id: connected.agent.id,
      code: connected.deviceCode.code,
      bearer: `Bearer ${redeemed.accessToken}`,
    },
    pendingAgentId: pendingAgent.agent.id,
    customerTransaction,
    customerQuote,
    customerMxn,
    moneyAgent,
    approvalAgent,
    agentActionId: agentAction.id,
    post,
  };
}

/** A connected agent of a customer with `policy` over agentBody's. */
async function fuzzAgent(
  tenant: Tenant,
  post: World['post'],
  customerId: string,
  policy: Record<string, unknown>,
): Promise<{ id: string; bearer: string }> {
  const body = agentBody(customerId);
  const created = await post('/agents', { ...body, policy: { ...body.policy, ...policy } });
  const redeemed = jsonOf(
    await tenant.api('POST', `/agents/device-codes/${created.deviceCode.code}/redeem`, { auth: null }),
    'POST /agents/device-codes/{code}/redeem',
  );
  return { id: created.agent.id, bearer: `Bearer ${redeemed.accessToken}` };
}

/** A new customer with an address in Germany (SCA applies), its id. */
async function freshEuCustomer(w: World): Promise<string> {
  const body = individualBody('Mia Krause', { address: berlin, nationality: 'DE', phoneNumber: '+4915123456780' });
  const id = (await w.post('/customers', body)).id as string;
  await w.tenant.api('POST', `/customers/${id}/verify-phone`);
  await w.post(`/customers/${id}/verify-phone/confirm`, { code: '123456' }, 200);
  return id;
}

/** A new external account of the EU customer, trusted when asked: its id. */
async function euBeneficiary(w: World, trusted: boolean): Promise<string> {
  const account = await w.post('/customers/external-accounts', { ...MXN_ACCOUNT(), customerId: w.euCustomer.id });
  if (trusted) {
    await w.post(`/customers/external-accounts/${account.id}/trust`, undefined, 200);
    await w.post(`/customers/external-accounts/${account.id}/trust/confirm`, { code: '123456' }, 200);
  }
  return account.id;
}

/** A new ACTIVE card of `individual`, funded from its USD account. */
async function activeCard(w: World): Promise<string> {
  const card = await w.post('/cards', {
    cardholderId: w.individual.id,
    form: 'VIRTUAL',
    fundingSources: [w.customerUsd.id],
  });
  await w.t.runDueJobs();
  return card.id;
}

/**
 * A new card transaction of an ACTIVE card of `individual`, brought to `status` through the
 * simulators (their effects run as jobs): the card's id and the transaction's.
 */
async function cardTransaction(
  w: World,
  status: 'AUTHORIZED' | 'SETTLED' | 'REFUNDED',
): Promise<{ id: string; cardTransactionId: string }> {
  const id = await activeCard(w);
  const simulate = async (path: string, body: unknown) => {
    const { issuerTransactionToken } = await w.post(`/sandbox/cards/${id}/simulate/${path}`, body);
    await w.t.runDueJobs();
    const record = await w.tenant.raw('GET', `/_railyard/card-simulations/${issuerTransactionToken}`);
    return jsonOf(record, `card simulation ${path}`);
  };
  const auth = await simulate('authorization', {
    amount: 2_000,
    currency: { code: 'USD' },
    merchant: { descriptor: 'FUZZ DINER', mcc: '5812', country: 'US' },
  });
  const cardTransactionId = auth.cardTransactionId as string;
  if (status !== 'AUTHORIZED') await simulate('clearing', { cardTransactionId, amount: 2_000 });
  if (status === 'REFUNDED') await simulate('return', { cardTransactionId, amount: 2_000 });
  return { id, cardTransactionId };
}

/** What the stablecoin baselines stand on, made once per world: an ACTIVE link, a PROVISIONED coin with a completed mint, its accounts. */
interface StablecoinWorld {
  linkId: string;
  coinId: string;
  walletId: string;
  bankId: string;
  operationId: string;
}
const stablecoinWorlds = new WeakMap<World, Promise<StablecoinWorld>>();

function stablecoinWorld(w: World): Promise<StablecoinWorld> {
  let made = stablecoinWorlds.get(w);
  if (made === undefined) {
    made = (async () => {
      const key = () => ({ 'idempotency-key': randomUUID() });
      const send = async (path: string, body: unknown) =>
        jsonOf(await w.tenant.api('POST', path, { body, headers: key() }), `POST ${path}`, 201);
      const link = await send('/stablecoin-provider-accounts', {
        provider: 'BRALE',
        apiClientId: `${uniqueId('fuzz-client')}-000`,
        apiClientSecret: randomUUID(),
      });
      const coin = await send('/stablecoins', {
        providerTokenIdentifier: uniqueId('FZ'),
        networkTokenIdentifier: sparkTokenIdentifier(),
        network: 'SPARK',
        stablecoinProviderAccountId: link.id,
      });
      // The fuzz platforms follow counterparty rules: a first-party wallet proves ownership first.
      const walletPath = '/platform/external-accounts';
      const wallet = await challengedWallet(w, walletPath, { ...accountBody('SPARK_WALLET', '000') });
      await w.post(`${walletPath}/${wallet.id}/verify`, { signature: 'sandbox-valid-signature' }, 200);
      const bank = await w.post('/platform/external-accounts', accountBody('USD_ACCOUNT', '000'));
      const advance = async (seconds: number) =>
        jsonOf(await w.tenant.raw('POST', '/_railyard/clock/advance', { body: { seconds } }), 'clock advance', 200);
      await advance(120);
      const minted = await send(`/stablecoins/${coin.id}/mints`, {
        amount: '1000000000000',
        fundingSource: { type: 'ACH_DEBIT', externalAccountId: bank.id },
        destination: { accountId: wallet.id },
      });
      await advance(40);
      return { linkId: link.id, coinId: coin.id, walletId: wallet.id, bankId: bank.id, operationId: minted.id };
    })();
    stablecoinWorlds.set(w, made);
  }
  return made;
}

function sparkTokenIdentifier(): string {
  const charset = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
  let data = '';
  for (let i = 0; i < 40; i++) data += charset[Math.floor(Math.random() * 32)];
  return `btknrt1${data}`;
}

/** A new PENDING invitation of `individual`: its code. */
async function pendingInvitation(w: World): Promise<string> {
  return (await w.post('/invitations', { inviterUma: w.individual.umaAddress, firstName: 'Jordan' })).code;
}

/** An action of the approval agent, waiting for the platform's decision. */
async function heldAction(w: World): Promise<{ agentId: string; actionId: string }> {
  const reply = await w.tenant.api('POST', '/agents/me/transfer-out', {
    auth: null,
    headers: { authorization: w.approvalAgent.bearer },
    body: { source: { accountId: w.customerUsd.id }, destination: { accountId: w.customerBank.id }, amount: 900 },
  });
  const action = jsonOf(reply, 'POST /agents/me/transfer-out (held)', 201);
  return { agentId: w.approvalAgent.id, actionId: action.id };
}

/** A delegated key row as the three signed legs leave it (ACTIVE), written directly. */
export async function insertDelegatedKey(t: TestApp, platformId: string, accountId: string): Promise<string> {
  const id = `DelegatedKey:${randomUUID()}`;
  const now = new Date().toISOString();
  await t.deps.db.k
    .insertInto('delegated_keys')
    .values({
      id,
      platform_id: platformId,
      account_id: accountId,
      card_id: `Card:${randomUUID()}`,
      funding_source_id: `CardFundingSource:${randomUUID()}`,
      public_key: clientKey().publicKey,
      nickname: 'Card payments key',
      status: 'ACTIVE',
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

export function agentBody(customerId: string) {
  return {
    name: 'Household budget assistant',
    customerId,
    policy: {
      permissions: [
        'VIEW_TRANSACTIONS',
        'CREATE_TRANSFERS',
        'CREATE_QUOTES',
        'EXECUTE_QUOTES',
        'MANAGE_EXTERNAL_ACCOUNTS',
      ],
      defaultExecutionMode: 'AUTO',
      spendingLimits: { currency: 'USD', perTransactionLimit: 50_000, dailyLimit: 200_000, dailyTransactionLimit: 20 },
      approvalThresholds: { currency: 'USD', amount: 25_000 },
    },
  };
}

export function quoteBody(sourceAccountId: string, destinationAccountId: string) {
  return {
    source: { sourceType: 'ACCOUNT', accountId: sourceAccountId },
    destination: { destinationType: 'ACCOUNT', accountId: destinationAccountId },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 10_000,
    description: 'Invoice 2025-118 for Maria Lopez',
  };
}

/** A fresh customer in the EEA, whose email and phone need verifying. */
function euContact(w: World) {
  return w.post(
    '/customers',
    individualBody('Ida Brandt', { address: berlin, nationality: 'DE', phoneNumber: '+4915123456781' }),
  );
}

/** A fresh EEA customer with a code sent to its email or phone, and the sandbox code that confirms it. */
async function codeSent(w: World, channel: 'email' | 'phone'): Promise<Baseline> {
  const customer = await euContact(w);
  await w.post(`/customers/${customer.id}/verify-${channel}`);
  return { params: { customerId: customer.id }, body: { code: '123456' } };
}

/** A fresh EU customer's quote waiting for its SCA code (202 PENDING_AUTHORIZATION). */
async function pendingAuthorization(w: World) {
  const destination = await w.post('/platform/external-accounts', MXN_ACCOUNT());
  return w.post(
    '/quotes',
    {
      source: { sourceType: 'REALTIME_FUNDING', currency: 'USD', customerId: w.euCustomer.id },
      destination: { destinationType: 'ACCOUNT', accountId: destination.id },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 20_000,
    },
    202,
  );
}

/** A fresh incoming UMA payment waiting for the platform's decision (the receiver answered 202). */
async function awaitingDecision(w: World) {
  const payment = await w.post('/sandbox/uma/receive', {
    senderUmaAddress: '$success.usd@sandbox.uma.money',
    customerId: w.individual.id,
    receivingCurrencyCode: 'USD',
    receivingCurrencyAmount: 2_500,
  });
  await w.t.runDueJobs();
  return payment;
}

/** A fresh wallet of the platform waiting for proof of ownership, with its challenge issued. */
async function challengedWallet(w: World, path: string, extra: Record<string, unknown> = {}) {
  const wallet = await w.post(path, { ...accountBody('SOLANA_WALLET'), ownershipType: 'FIRST_PARTY', ...extra });
  await w.post(`${path}/${wallet.id}/challenge`, { method: 'WALLET_SIGNATURE' });
  return wallet;
}

export const BASELINES: Record<string, BaselineRow> = {
  // Platform configuration and tokens
  getPlatformConfig: { make: () => ({}) },
  updatePlatformConfig: {
    make: () => ({
      body: { umaDomain: 'pay.example.com', embeddedWalletConfig: { appName: 'Railyard fuzz', otpLength: 6 } },
    }),
    last: true,
  },
  listTokens: { make: () => ({ query: { limit: '5', name: 'fuzz reader', createdAfter: '2020-01-01T00:00:00Z' } }) },
  createToken: { make: () => ({ body: { name: 'fuzz writer', permissions: ['VIEW', 'TRANSACT'] } }) },
  getTokenById: { make: (w) => ({ params: { tokenId: w.token.id } }) },
  deleteTokenById: {
    make: async (w) => ({
      params: { tokenId: (await w.post('/tokens', { name: 'to delete', permissions: ['VIEW'] })).id },
    }),
    renew: 'success',
  },

  // External accounts
  listPlatformExternalAccounts: { make: () => ({ query: { currency: 'USD', limit: '10' } }) },
  createPlatformExternalAccount: { make: () => ({ body: accountBody('USD_ACCOUNT', '000') }), renew: 'always' },
  getPlatformExternalAccountById: { make: (w) => ({ params: { externalAccountId: w.bank.id } }) },
  deletePlatformExternalAccountById: {
    make: async (w) => ({
      params: {
        externalAccountId: (await w.post('/platform/external-accounts', accountBody('EUR_ACCOUNT', '000'))).id,
      },
    }),
    renew: 'success',
  },
  createPlatformExternalAccountOwnershipChallenge: {
    make: async (w) => ({
      params: {
        externalAccountId: (
          await w.post('/platform/external-accounts', { ...accountBody('SOLANA_WALLET'), ownershipType: 'FIRST_PARTY' })
        ).id,
      },
      body: { method: 'WALLET_SIGNATURE' },
    }),
    renew: 'success',
  },
  verifyPlatformExternalAccountOwnership: {
    make: async (w) => ({
      params: { externalAccountId: (await challengedWallet(w, '/platform/external-accounts')).id },
      body: { signature: 'sandbox-valid-signature' },
    }),
    renew: 'success',
    refusalChanges: SIGNATURE_REFUSAL,
  },
  listCustomerExternalAccounts: { make: (w) => ({ query: { customerId: w.individual.id, currency: 'USD' } }) },
  createCustomerExternalAccount: {
    make: (w) => ({ body: { ...accountBody('USD_ACCOUNT', '000'), customerId: w.individual.id } }),
    renew: 'always',
  },
  getCustomerExternalAccountById: { make: (w) => ({ params: { externalAccountId: w.customerBank.id } }) },
  deleteCustomerExternalAccountById: {
    make: async (w) => ({
      params: {
        externalAccountId: (
          await w.post('/customers/external-accounts', {
            ...accountBody('EUR_ACCOUNT', '000'),
            customerId: w.individual.id,
          })
        ).id,
      },
    }),
    renew: 'success',
  },
  createExternalAccountOwnershipChallenge: {
    make: async (w) => ({
      params: {
        externalAccountId: (
          await w.post('/customers/external-accounts', {
            ...accountBody('SOLANA_WALLET'),
            ownershipType: 'FIRST_PARTY',
            customerId: w.individual.id,
          })
        ).id,
      },
      body: { method: 'WALLET_SIGNATURE' },
    }),
    renew: 'success',
  },
  verifyExternalAccountOwnership: {
    make: async (w) => ({
      params: {
        externalAccountId: (await challengedWallet(w, '/customers/external-accounts', { customerId: w.individual.id }))
          .id,
      },
      body: { signature: 'sandbox-valid-signature' },
    }),
    renew: 'success',
    refusalChanges: SIGNATURE_REFUSAL,
  },

  // Customers and onboarding
  listCustomers: { make: () => ({ query: { customerType: 'INDIVIDUAL', limit: '10', isIncludingDeleted: 'false' } }) },
  createCustomer: { make: () => ({ body: individualBody('Morgan Lee') }), renew: 'always' },
  getEndUserTerms: { make: () => ({}) },
  getCustomerById: { make: (w) => ({ params: { customerId: w.individual.id } }) },
  updateCustomerById: {
    make: (w) => ({
      params: { customerId: w.individual.id },
      body: {
        customerType: 'INDIVIDUAL',
        email: 'jordan.rivera@example.org',
        address: { line1: '1 Main St', city: 'Austin', state: 'TX', postalCode: '78701', country: 'US' },
      },
    }),
  },
  deleteCustomerById: {
    make: async (w) => ({ params: { customerId: (await w.post('/customers', individualBody('Riley Gone'))).id } }),
    renew: 'success',
  },
  sendCustomerEmailVerification: {
    make: async (w) => ({ params: { customerId: (await euContact(w)).id } }),
    renew: 'success',
  },
  confirmCustomerEmailVerification: { make: (w) => codeSent(w, 'email'), renew: 'success' },
  sendCustomerPhoneVerification: {
    make: async (w) => ({ params: { customerId: (await euContact(w)).id } }),
    renew: 'success',
  },
  confirmCustomerPhoneVerification: { make: (w) => codeSent(w, 'phone'), renew: 'success' },
  uploadCustomersCsv: {
    make: () => ({
      form: {
        fields: {},
        files: [
          {
            name: 'file',
            fileName: 'customers.csv',
            contentType: 'text/csv',
            data: Buffer.from(
              `umaAddress,platformCustomerId,customerType,fullName,birthDate,addressLine1,city,state,postalCode,country\nfuzz.b@pay.example.com,${uniqueId('csv')},INDIVIDUAL,Bo Imported,1990-02-03,1 Main St,Austin,TX,78701,US\n`,
            ),
          },
        ],
      },
    }),
  },
  getBulkCustomerImportJob: { make: (w) => ({ params: { jobId: w.importJobId } }) },
  listVerifications: { make: (w) => ({ query: { customerId: w.verification.customerId, limit: '5' } }) },
  createVerification: {
    make: async (w) => ({ body: { customerId: (await w.post('/customers', individualBody('Pat Review 001'))).id } }),
    renew: 'success',
  },
  getVerification: { make: (w) => ({ params: { verificationId: w.verification.id } }) },
  createCustomerKycLink: {
    make: async (w) => ({
      params: { customerId: (await w.post('/customers', individualBody('Kim Hosted 001'))).id },
      body: { redirectUri: 'https://platform.example.com/kyc/done' },
    }),
    renew: 'success',
  },
  listBeneficialOwners: { make: (w) => ({ query: { customerId: w.business.id } }) },
  createBeneficialOwner: {
    make: async (w) => ({ body: ownerBody((await w.post('/customers', businessBody('NB-2020-001'))).id, 'Okafor') }),
    renew: 'success',
  },
  getBeneficialOwner: { make: (w) => ({ params: { beneficialOwnerId: w.owner.id } }) },
  updateBeneficialOwner: {
    make: (w) => ({
      params: { beneficialOwnerId: w.owner.id },
      body: { ownershipPercentage: 35, personalInfo: { email: 'chen@example.org' } },
    }),
  },
  listDocuments: { make: (w) => ({ query: { documentHolder: w.individual.id, limit: '5' } }) },
  uploadDocument: {
    make: (w) => ({
      form: {
        fields: { documentHolder: w.individual.id, documentType: 'PROOF_OF_ADDRESS', country: 'US' },
        files: [{ name: 'file', fileName: 'bill.pdf', data: PDF(), contentType: 'application/pdf' }],
      },
    }),
  },
  getDocument: { make: (w) => ({ params: { documentId: w.document.id } }) },
  replaceDocument: {
    make: (w) => ({
      params: { documentId: w.document.id },
      form: {
        fields: {
          documentHolder: w.individual.id,
          documentType: 'PASSPORT',
          country: 'US',
          documentNumber: 'P7654321',
          issuingAuthority: 'US Department of State',
        },
        files: [{ name: 'file', fileName: 'passport.jpg', data: JPEG(), contentType: 'image/jpeg' }],
      },
    }),
  },
  deleteDocument: {
    make: async (w) => {
      const reply = await w.tenant.api(
        'POST',
        '/documents',
        multipart({ documentHolder: w.individual.id, documentType: 'PROOF_OF_ADDRESS', country: 'US' }, [
          { name: 'file', fileName: 'bill.pdf', data: PDF(), contentType: 'application/pdf' },
        ]),
      );
      return { params: { documentId: jsonOf(reply, 'POST /documents').id } };
    },
    renew: 'success',
  },
  getDiscoveries: { make: () => ({ query: { country: 'MX', currency: 'MXN' } }) },
  listVasps: { make: () => ({ query: { limit: '5' } }) },

  // Internal accounts and money
  listCustomerInternalAccounts: { make: (w) => ({ query: { customerId: w.individual.id, currency: 'USD' } }) },
  listPlatformInternalAccounts: { make: () => ({ query: { currency: 'USD' } }) },
  sandboxFundInternalAccount: { make: (w) => ({ params: { accountId: w.platformUsd.id }, body: { amount: 5_000 } }) },
  createTransferIn: {
    make: (w) => ({
      body: { source: { accountId: w.bank.id }, destination: { accountId: w.platformUsd.id }, amount: 2_000 },
    }),
  },
  createTransferOut: {
    make: (w) => ({
      body: { source: { accountId: w.platformUsd.id }, destination: { accountId: w.bank.id }, amount: 1_500 },
      headers: { 'idempotency-key': uniqueId('fuzz-out') },
    }),
    renew: 'always',
  },
  listTransactions: {
    make: () => ({ query: { status: 'COMPLETED', type: 'OUTGOING', limit: '10', sortOrder: 'desc' } }),
  },
  getTransactionById: { make: (w) => ({ params: { transactionId: w.transaction.id } }) },
  confirmReceiptDelivery: {
    make: (w) => ({
      params: { transactionId: w.transaction.id },
      body: { receiptDeliveryConfirmedAt: '2025-01-02T03:04:05Z' },
    }),
  },
  cancelTransaction: {
    make: async (w) => {
      const slow = await w.post('/platform/external-accounts', accountBody('USD_ACCOUNT', '005'));
      const pending = await w.post('/transfer-out', {
        source: { accountId: w.platformUsd.id },
        destination: { accountId: slow.id },
        amount: 700,
      });
      return { params: { transactionId: pending.id }, body: { reason: 'customer changed their mind' } };
    },
    renew: 'success',
  },
  approvePendingPayment: {
    make: async (w) => ({ params: { transactionId: (await awaitingDecision(w)).id }, body: {} }),
    renew: 'success',
    lapsed: APPROVAL_WINDOW_PASSED,
  },
  rejectPendingPayment: {
    make: async (w) => ({
      params: { transactionId: (await awaitingDecision(w)).id },
      body: { reason: 'not expected' },
    }),
    renew: 'success',
    lapsed: APPROVAL_WINDOW_PASSED,
  },
  sendTestWebhook: { make: () => ({}) },

  // UMA, receivers, crypto
  lookupUma: {
    make: (w) => ({
      params: { receiverUmaAddress: '$success.usd@sandbox.uma.money' },
      query: { customerId: w.individual.id },
    }),
  },
  lookupExternalAccount: {
    make: (w) => ({ params: { accountId: w.bank.id }, query: { customerId: w.individual.id } }),
  },
  sandboxReceive: {
    make: (w) => ({
      body: {
        senderUmaAddress: '$success.usd@sandbox.uma.money',
        customerId: w.individual.id,
        receivingCurrencyCode: 'USD',
        receivingCurrencyAmount: 1_200,
      },
    }),
  },
  getAvailableUmaProviders: { make: () => ({ query: { countryCode: 'US', limit: '5' } }) },
  estimateCryptoWithdrawalFee: {
    make: (w) => ({
      body: {
        internalAccountId: w.usdcAccount.id,
        currency: 'USDC',
        cryptoNetwork: 'ETHEREUM',
        amount: 2_500_000,
        destinationAddress: `0x${'ab'.repeat(20)}`,
      },
    }),
  },

  // Quotes
  createQuote: {
    make: (w) => ({
      body: quoteBody(w.platformUsd.id, w.mxnBank.id),
      headers: { 'idempotency-key': uniqueId('fuzz-quote') },
    }),
    renew: 'always',
  },
  getQuoteById: { make: (w) => ({ params: { quoteId: w.quote.id } }) },
  executeQuote: {
    make: async (w) => ({
      params: { quoteId: (await w.post('/quotes', quoteBody(w.platformUsd.id, w.mxnBank.id))).id },
    }),
    renew: 'success',
  },
  authorizeQuote: {
    make: async (w) => ({ params: { quoteId: (await pendingAuthorization(w)).id }, body: { code: '123456' } }),
    renew: 'success',
    refusalChanges: FAILED_PROOF,
  },
  resendQuoteScaCode: { make: async (w) => ({ params: { quoteId: (await pendingAuthorization(w)).id } }) },
  sandboxSend: {
    make: async (w) => {
      const quote = await w.post('/quotes', {
        source: { sourceType: 'REALTIME_FUNDING', currency: 'USD', customerId: w.individual.id },
        destination: { destinationType: 'ACCOUNT', accountId: w.mxnBank.id },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 20_000,
      });
      return { body: { quoteId: quote.id, currencyCode: 'USD' } };
    },
    renew: 'success',
  },
  getExchangeRates: {
    make: () => ({ query: { sourceCurrency: 'USD', destinationCurrency: 'MXN', sendingAmount: '10000' } }),
  },

  // Embedded wallets
  listAuthCredentials: { make: (w) => ({ query: { accountId: w.wallet.accountId } }) },
  createAuthCredential: {
    make: (w) => ({
      body: { type: 'OAUTH', accountId: w.wallet.accountId, oidcToken: freshOidcToken() },
    }),
    renew: 'always',
  },
  revokeAuthCredential: { make: (w) => ({ params: { id: w.wallet.smsCredentialId } }) },
  challengeAuthCredential: { make: (w) => ({ params: { id: w.wallet.emailCredentialId }, body: {} }) },
  verifyAuthCredential: {
    make: async (w) => {
      const challenge = await w.post(`/auth/credentials/${w.wallet.emailCredentialId}/challenge`, {});
      const bundle = await sealOtp(challenge.otpEncryptionTargetBundle, '000000', clientKey());
      return { params: { id: w.wallet.emailCredentialId }, body: { type: 'EMAIL_OTP', encryptedOtpBundle: bundle } };
    },
    renew: 'always',
  },
  listAuthSessions: { make: (w) => ({ query: { accountId: w.wallet.accountId } }) },
  revokeAuthSession: { make: (w) => ({ params: { id: w.wallet.sessionId } }) },
  refreshAuthSession: {
    make: (w) => ({ params: { id: w.wallet.sessionId }, body: { clientPublicKey: clientKey().publicKey } }),
  },
  listDelegatedKeys: { make: (w) => ({ query: { accountId: w.wallet.accountId } }) },
  createDelegatedKey: {
    make: async (w) => {
      const card = await w.post('/cards', {
        cardholderId: w.euCustomer.id,
        form: 'VIRTUAL',
        fundingSources: [w.wallet.accountId],
      });
      return { body: { cardId: card.id, internalAccountId: w.wallet.accountId, nickname: 'Card payments key' } };
    },
  },
  getDelegatedKeyById: { make: (w) => ({ params: { id: w.delegatedKeyId } }) },
  revokeDelegatedKey: {
    make: async (w) => ({ params: { id: await insertDelegatedKey(w.t, w.tenant.platformId, w.wallet.accountId) } }),
    renew: 'success',
  },
  updateInternalAccount: { make: (w) => ({ params: { id: w.wallet.accountId }, body: { privateEnabled: true } }) },
  exportInternalAccount: {
    make: (w) => ({ params: { id: w.wallet.accountId }, body: { clientPublicKey: clientKey().publicKeyUncompressed } }),
  },

  // Agents
  createAgent: { make: (w) => ({ body: agentBody(w.individual.id) }) },
  listAgents: { make: (w) => ({ query: { customerId: w.individual.id, isConnected: 'true', limit: '5' } }) },
  getAgentById: { make: (w) => ({ params: { agentId: w.agent.id } }) },
  updateAgent: { make: (w) => ({ params: { agentId: w.agent.id }, body: { name: 'Renamed assistant' } }) },
  deleteAgent: {
    make: async (w) => ({ params: { agentId: (await w.post('/agents', agentBody(w.individual.id))).agent.id } }),
    renew: 'success',
  },
  updateAgentPolicy: {
    make: (w) => ({ params: { agentId: w.agent.id }, body: { spendingLimits: { perTransactionLimit: 60_000 } } }),
  },
  regenerateAgentDeviceCode: { make: (w) => ({ params: { agentId: w.pendingAgentId } }) },
  getAgentDeviceCodeStatus: { make: (w) => ({ params: { code: w.agent.code } }) },
  redeemAgentDeviceCode: {
    make: async (w) => ({ params: { code: (await w.post('/agents', agentBody(w.individual.id))).deviceCode.code } }),
    renew: 'success',
  },
  getAgentMe: { make: (w) => ({ headers: { authorization: w.agent.bearer } }) },
  agentListExternalAccounts: {
    make: (w) => ({ headers: { authorization: w.agent.bearer }, query: { currency: 'USD', limit: '5' } }),
  },
  agentCreateExternalAccount: {
    make: (w) => ({ headers: { authorization: w.agent.bearer }, body: accountBody('USD_ACCOUNT', '000') }),
    renew: 'always',
  },
  agentGetExternalAccount: {
    make: (w) => ({ headers: { authorization: w.agent.bearer }, params: { externalAccountId: w.customerBank.id } }),
  },
  agentDeleteExternalAccount: {
    make: async (w) => ({
      headers: { authorization: w.agent.bearer },
      params: {
        externalAccountId: (
          await w.post('/customers/external-accounts', {
            ...accountBody('EUR_ACCOUNT', '000'),
            customerId: w.individual.id,
          })
        ).id,
      },
    }),
    renew: 'success',
  },
  agentListTransactions: {
    make: (w) => ({ headers: { authorization: w.agent.bearer }, query: { limit: '5', sortOrder: 'asc' } }),
  },
  agentGetTransaction: {
    make: (w) => ({ headers: { authorization: w.agent.bearer }, params: { transactionId: w.customerTransaction.id } }),
  },
  agentGetQuote: {
    make: (w) => ({ headers: { authorization: w.agent.bearer }, params: { quoteId: w.customerQuote.id } }),
  },
  agentListInternalAccounts: {
    make: (w) => ({ headers: { authorization: w.agent.bearer }, query: { currency: 'USD', limit: '5' } }),
  },
  listAgentApprovals: {
    make: (w) => ({ query: { agentId: w.approvalAgent.id, limit: '5', sortOrder: 'asc' } }),
  },
  approveAgentAction: { make: async (w) => ({ params: await heldAction(w) }), renew: 'success' },
  rejectAgentAction: {
    make: async (w) => ({ params: await heldAction(w), body: { reason: 'Not before payday' } }),
    renew: 'success',
  },
  agentCreateQuote: {
    make: (w) => ({
      headers: { authorization: w.moneyAgent.bearer, 'idempotency-key': uniqueId('fuzz-agent-quote') },
      body: quoteBody(w.customerUsd.id, w.customerMxn.id),
    }),
    renew: 'always',
  },
  agentExecuteQuote: {
    make: async (w) => ({
      headers: { authorization: w.moneyAgent.bearer },
      params: { quoteId: (await w.post('/quotes', quoteBody(w.customerUsd.id, w.customerMxn.id))).id },
    }),
    renew: 'success',
  },
  agentCreateTransferOut: {
    make: (w) => ({
      headers: { authorization: w.moneyAgent.bearer, 'idempotency-key': uniqueId('fuzz-agent-out') },
      body: { source: { accountId: w.customerUsd.id }, destination: { accountId: w.customerBank.id }, amount: 1_500 },
    }),
    renew: 'always',
  },
  agentCreateTransferIn: {
    make: (w) => ({
      headers: { authorization: w.moneyAgent.bearer },
      body: { source: { accountId: w.customerBank.id }, destination: { accountId: w.customerUsd.id }, amount: 2_000 },
    }),
  },
  agentListActions: {
    make: (w) => ({ headers: { authorization: w.moneyAgent.bearer }, query: { status: 'APPROVED', limit: '5' } }),
  },
  agentGetAction: {
    make: (w) => ({ headers: { authorization: w.moneyAgent.bearer }, params: { actionId: w.agentActionId } }),
  },

  // Strong Customer Authentication
  listScaFactors: { make: (w) => ({ query: { customerId: w.euCustomer.id } }) },
  startScaFactorEnrollment: { make: (w) => ({ query: { customerId: w.euCustomer.id }, body: { type: 'PASSKEY' } }) },
  confirmScaFactorEnrollment: {
    make: async (w) => {
      const customerId = await freshEuCustomer(w);
      const started = await w.post(`/sca/factors?customerId=${customerId}`, { type: 'TOTP' }, 200);
      return { query: { customerId }, body: { type: 'TOTP', secret: started.secret, code: '123456' } };
    },
    renew: 'success',
  },
  deleteScaFactor: {
    make: async (w) => {
      const customerId = await freshEuCustomer(w);
      const started = await w.post(`/sca/factors?customerId=${customerId}`, { type: 'PASSKEY' }, 200);
      const authenticator = new SoftAuthenticator({ origin: 'http://localhost:3000' });
      await w.post(
        `/sca/factors/confirm?customerId=${customerId}`,
        {
          type: 'PASSKEY',
          origin: authenticator.origin,
          credential: authenticator.register(started.options.challenge),
        },
        200,
      );
      return { query: { customerId }, params: { credentialId: authenticator.credentialId } };
    },
    renew: 'success',
  },
  startScaLogin: { make: (w) => ({ query: { customerId: w.euCustomer.id }, body: { factor: 'SMS_OTP' } }) },
  completeScaLogin: {
    make: async (w) => {
      const customerId = await freshEuCustomer(w);
      const started = await w.post(`/sca/login/start?customerId=${customerId}`, { factor: 'SMS_OTP' }, 200);
      return {
        query: { customerId },
        body: {
          factor: 'SMS_OTP',
          challengeId: started.challengeId,
          code: '123456',
          endUserIpAddress: '198.51.100.23',
        },
      };
    },
    renew: 'success',
    refusalChanges: FAILED_PROOF,
  },
  recordSecurityEvent: {
    // A fresh customer: a password reset ends the SCA session the EU customer's quotes need.
    make: async (w) => ({
      query: { customerId: await freshEuCustomer(w) },
      body: { eventType: 'RESET_PASSWORD_COMPLETED' },
    }),
  },

  startTwoFactorReset: {
    // A fresh customer each time: 5 starts per customer and day.
    make: async (w) => ({ query: { customerId: await freshEuCustomer(w) }, body: { factor: 'SMS_OTP' } }),
    renew: 'success',
  },
  getTwoFactorResetStatus: {
    make: async (w) => {
      const customerId = await freshEuCustomer(w);
      const started = await w.post(`/sca/factors/reset?customerId=${customerId}`, { factor: 'SMS_OTP' }, 201);
      return { query: { customerId }, params: { resetId: started.resetId } };
    },
  },
  completeTwoFactorReset: {
    make: async (w) => {
      const customerId = await freshEuCustomer(w);
      const started = await w.post(`/sca/factors/reset?customerId=${customerId}`, { factor: 'SMS_OTP' }, 201);
      const passed = await w.tenant.raw('POST', `/_railyard/sca-resets/${started.livenessAccessToken}/pass`, {
        auth: null,
      });
      if (passed.status !== 200) throw new Error(`fuzz world: liveness pass answered ${passed.status}`);
      await w.t.advanceClock(5);
      return {
        query: { customerId },
        params: { resetId: started.resetId },
        body: { mobile: { countryCode: '+49', number: '15123450000' } },
      };
    },
    renew: 'success',
  },
  startBeneficiaryTrust: {
    make: async (w) => ({ params: { externalAccountId: await euBeneficiary(w, false) } }),
    renew: 'success',
  },
  confirmBeneficiaryTrust: {
    make: async (w) => {
      const externalAccountId = await euBeneficiary(w, false);
      const started = await w.post(`/customers/external-accounts/${externalAccountId}/trust`, undefined, 200);
      return { params: { externalAccountId }, body: { challengeId: started.scaChallenge.id, code: '123456' } };
    },
    renew: 'success',
  },
  startBeneficiaryUntrust: {
    make: async (w) => ({ params: { externalAccountId: await euBeneficiary(w, true) } }),
    renew: 'success',
  },
  confirmBeneficiaryUntrust: {
    make: async (w) => {
      const externalAccountId = await euBeneficiary(w, true);
      const started = await w.post(`/customers/external-accounts/${externalAccountId}/untrust`, undefined, 200);
      return { params: { externalAccountId }, body: { challengeId: started.scaChallenge.id, code: '123456' } };
    },
    renew: 'success',
  },

  // Cards
  createCard: {
    make: (w) => ({
      body: {
        cardholderId: w.individual.id,
        platformCardId: uniqueId('fuzz-card'),
        form: 'VIRTUAL',
        fundingSources: [w.customerUsd.id],
        maxSpendPerTransaction: 50_000,
      },
    }),
    renew: 'always',
  },
  listCards: {
    make: (w) => ({ query: { cardholderId: w.individual.id, state: 'ACTIVE', limit: '5', sortOrder: 'asc' } }),
  },
  getCardById: { make: async (w) => ({ params: { id: await activeCard(w) } }) },
  updateCardById: {
    make: async (w) => ({
      params: { id: await activeCard(w) },
      body: { state: 'FROZEN', maxSpendPerTransaction: 9_000 },
    }),
    renew: 'success',
  },
  revealCard: { make: async (w) => ({ params: { id: await activeCard(w) } }) },

  sandboxSimulateCardAuthorization: {
    make: async (w) => ({
      params: { id: await activeCard(w) },
      body: { amount: 1_250, currency: { code: 'USD' }, merchant: { descriptor: 'FUZZ COFFEE', mcc: '5814' } },
    }),
  },
  sandboxSimulateCardBalanceInquiry: {
    make: async (w) => ({ params: { id: await activeCard(w) }, body: { merchant: { descriptor: 'FUZZ FUEL 12' } } }),
  },
  sandboxSimulateCardCreditAuthorization: {
    make: async (w) => ({
      params: { id: await activeCard(w) },
      body: { amount: 2_500, currency: { code: 'USD' }, merchant: { descriptor: 'FUZZ MARKET' } },
    }),
  },
  sandboxSimulateCardFinancialAuthorization: {
    make: async (w) => ({
      params: { id: await activeCard(w) },
      body: { amount: 8_000, currency: { code: 'USD' }, merchant: { descriptor: 'FUZZ ATM', mcc: '6011' } },
    }),
  },
  sandboxSimulateCardFinancialCreditAuthorization: {
    make: async (w) => ({
      params: { id: await activeCard(w) },
      body: { amount: 4_000, currency: { code: 'USD' }, merchant: { descriptor: 'FUZZ PAYOUTS' } },
    }),
  },
  sandboxSimulateCardCreditAuthorizationAdvice: {
    make: async (w) => ({
      params: { id: await activeCard(w) },
      body: { amount: 2_500, currency: { code: 'USD' }, merchant: { descriptor: 'FUZZ ADVICE' } },
    }),
  },
  sandboxSimulateCardClearing: {
    make: async (w) => {
      const { id, cardTransactionId } = await cardTransaction(w, 'AUTHORIZED');
      return { params: { id }, body: { cardTransactionId, amount: 1_500 } };
    },
    renew: 'success',
  },
  sandboxSimulateCardAuthorizationAdvice: {
    make: async (w) => {
      const { id, cardTransactionId } = await cardTransaction(w, 'AUTHORIZED');
      return { params: { id }, body: { cardTransactionId, amount: 2_600 } };
    },
    renew: 'success',
  },
  sandboxSimulateCardReturn: {
    make: async (w) => {
      const { id, cardTransactionId } = await cardTransaction(w, 'SETTLED');
      return { params: { id }, body: { cardTransactionId, amount: 500 } };
    },
    renew: 'success',
  },
  sandboxSimulateCardReturnReversal: {
    make: async (w) => {
      const { id, cardTransactionId } = await cardTransaction(w, 'REFUNDED');
      return { params: { id }, body: { cardTransactionId } };
    },
    renew: 'success',
  },

  // Invitations
  createInvitation: {
    make: (w) => ({ body: { inviterUma: w.individual.umaAddress, firstName: 'Jordan', amountToSend: 1_000 } }),
  },
  getInvitation: { make: async (w) => ({ params: { invitationCode: await pendingInvitation(w) } }) },
  claimInvitation: {
    make: async (w) => ({
      params: { invitationCode: await pendingInvitation(w) },
      body: { inviteeUma: '$new.friend@other.example' },
    }),
    renew: 'success',
  },
  cancelInvitation: {
    make: async (w) => ({ params: { invitationCode: await pendingInvitation(w) } }),
    renew: 'success',
  },

  // Stablecoins
  linkStablecoinProviderAccount: {
    make: () => ({
      headers: { 'idempotency-key': randomUUID() },
      body: {
        provider: 'BRALE',
        apiClientId: `${uniqueId('fuzz-client')}-000`,
        apiClientSecret: randomUUID(),
        providerAccountId: uniqueId('acct'),
      },
    }),
    renew: 'always',
  },
  listStablecoinProviderAccounts: { make: () => ({ query: { provider: 'BRALE', status: 'ACTIVE', limit: '5' } }) },
  getStablecoinProviderAccount: {
    make: async (w) => ({ params: { stablecoinProviderAccountId: (await stablecoinWorld(w)).linkId } }),
  },
  registerStablecoin: {
    make: async (w) => ({
      headers: { 'idempotency-key': randomUUID() },
      body: {
        providerTokenIdentifier: uniqueId('FZ'),
        networkTokenIdentifier: sparkTokenIdentifier(),
        network: 'SPARK',
        stablecoinProviderAccountId: (await stablecoinWorld(w)).linkId,
      },
    }),
    renew: 'always',
  },
  listStablecoins: {
    make: () => ({
      query: { issuanceStatus: 'PROVISIONED', gridOperationsStatus: 'ENABLED', provider: 'BRALE', limit: '5' },
    }),
  },
  getStablecoin: { make: async (w) => ({ params: { stablecoinId: (await stablecoinWorld(w)).coinId } }) },
  createStablecoinMint: {
    make: async (w) => {
      const world = await stablecoinWorld(w);
      return {
        params: { stablecoinId: world.coinId },
        headers: { 'idempotency-key': randomUUID() },
        body: {
          amount: '2500000',
          fundingSource: { type: 'ACH_DEBIT', externalAccountId: world.bankId },
          destination: { accountId: world.walletId },
          description: 'Fuzz mint',
        },
      };
    },
    renew: 'always',
  },
  createStablecoinBurn: {
    make: async (w) => {
      const world = await stablecoinWorld(w);
      return {
        params: { stablecoinId: world.coinId },
        headers: { 'idempotency-key': randomUUID() },
        body: {
          amount: '1000000',
          source: { type: 'EXTERNAL_ACCOUNT' },
          destination: { type: 'EXTERNAL_ACCOUNT', externalAccountId: world.bankId, rail: 'ACH_CREDIT' },
          description: 'Fuzz burn',
        },
      };
    },
    renew: 'always',
  },
  listStablecoinOperations: {
    make: async (w) => ({
      params: { stablecoinId: (await stablecoinWorld(w)).coinId },
      query: { operationType: 'MINT', limit: '5' },
    }),
  },
  getStablecoinOperation: {
    make: async (w) => ({ params: { stablecoinOperationId: (await stablecoinWorld(w)).operationId } }),
  },
  railyardFundStablecoinOperation: {
    make: async (w) => {
      const world = await stablecoinWorld(w);
      const reply = await w.tenant.api('POST', `/stablecoins/${world.coinId}/mints`, {
        headers: { 'idempotency-key': randomUUID() },
        body: { amount: '1000000', fundingSource: { type: 'WIRE' }, destination: { accountId: world.walletId } },
      });
      return { params: { stablecoinOperationId: jsonOf(reply, 'POST /stablecoins/{id}/mints', 201).id } };
    },
    renew: 'success',
  },

  // Railyard's own endpoints
  railyardGetCardSimulation: {
    make: async (w) => {
      const accepted = await w.post(`/sandbox/cards/${await activeCard(w)}/simulate/balance_inquiry`, {
        merchant: { descriptor: 'FUZZ KIOSK' },
      });
      return { params: { issuerTransactionToken: accepted.issuerTransactionToken } };
    },
  },
  railyardGetPlatform: { make: () => ({}) },
  railyardUpdatePlatform: {
    make: () => ({ body: { name: 'Fuzzed platform', settlementTiming: 'instant' } }),
    last: true,
  },
  railyardGetClock: { make: () => ({}) },
  railyardAdvanceClock: { make: () => ({ body: { seconds: 1 } }), last: true },
  railyardLedgerAudit: { make: () => ({}) },
  railyardWebhookPublicKey: { make: () => ({}) },
  railyardDownloadDocument: { make: (w) => ({ params: { documentId: w.document.id } }) },
  railyardListWebhookDeliveries: { make: () => ({ query: { limit: '5' } }) },
  railyardGetWebhookDelivery: { make: (w) => ({ params: { deliveryId: w.delivery.id } }) },
  railyardReplayWebhookDelivery: { make: (w) => ({ params: { deliveryId: w.delivery.id } }) },
  railyardGetWebhookDeliveryRequest: { make: (w) => ({ params: { deliveryId: w.delivery.id } }) },
  railyardListEvents: { make: () => ({ query: { limit: '5', type: 'OUTGOING_PAYMENT.COMPLETED' } }) },
  railyardGetTransactionTimeline: { make: (w) => ({ params: { transactionId: w.transaction.id } }) },
  railyardListInternalAccountEntries: {
    make: (w) => ({ params: { accountId: w.platformUsd.id }, query: { limit: '5' } }),
  },
  railyardListSnapshots: { make: () => ({}) },
  railyardSaveSnapshot: { make: () => ({ body: { name: uniqueId('fuzz') } }), renew: 'always' },
  railyardDeleteSnapshot: {
    make: async (w) => ({ params: { name: await savedSnapshot(w.tenant) } }),
    renew: 'success',
  },
  // Brings the world's platform back to the moment of the make: after every other operation.
  railyardRestoreSnapshot: { make: async (w) => ({ params: { name: await savedSnapshot(w.tenant) } }), last: true },
  railyardListRequests: {
    make: () => ({
      query: { limit: '5', operationId: 'createTransferOut', status: '201', since: '2020-01-01T00:00:00Z' },
    }),
  },
  railyardGetRequest: {
    make: async (w) => {
      const latest = jsonOf(await w.tenant.raw('GET', '/_railyard/requests?limit=1'), 'GET /_railyard/requests');
      return { params: { requestId: latest.data[0].id } };
    },
  },
  railyardRequestsReport: { make: () => ({}) },
  // Wipes the world's platform: after every other operation.
  railyardResetPlatform: { make: () => ({}), last: true },
  // Fault rules: last too (and after the reset), as a mutation may turn the baseline's rule,
  // which matches a header no request sends, into one that answers every Grid request 503.
  railyardCreateFaultRule: {
    make: () => ({
      body: { operationId: 'getCustomerById', header: { name: 'x-fuzz-never', value: 'never-sent' }, status: 503 },
    }),
    last: true,
  },
  railyardListFaultRules: { make: () => ({}), last: true },
  railyardDeleteFaultRule: {
    make: async (w) => {
      const rule = jsonOf(
        await w.tenant.raw('POST', '/_railyard/faults', {
          body: { path: '/fuzz/never', latencyMs: 1, times: 1 },
        }),
        'POST /_railyard/faults',
        201,
      );
      return { params: { ruleId: rule.id } };
    },
    renew: 'success',
    last: true,
  },
  railyardDeleteFaultRules: { make: () => ({}), last: true },
  railyardCreateWebhookFaultRule: {
    make: () => ({ body: { eventType: 'BULK_UPLOAD.FAILED', effect: 'delay', delaySeconds: 60, times: 1 } }),
    last: true,
  },
  railyardListWebhookFaultRules: { make: () => ({}), last: true },
  railyardDeleteWebhookFaultRule: {
    make: async (w) => {
      const rule = jsonOf(
        await w.tenant.raw('POST', '/_railyard/webhook-faults', {
          body: { eventType: 'BULK_UPLOAD.FAILED', effect: 'drop' },
        }),
        'POST /_railyard/webhook-faults',
        201,
      );
      return { params: { ruleId: rule.id } };
    },
    renew: 'success',
    last: true,
  },
  railyardDeleteWebhookFaultRules: { make: () => ({}), last: true },

  // Railyard's server-admin endpoints (the token a server writes to its runtime file)
  railyardServerInfo: { make: (w) => ({ headers: serverAdminHeaders(w) }) },
  railyardServerCreatePlatform: {
    make: (w) => ({
      headers: serverAdminHeaders(w),
      body: { name: 'Fuzzed tenant', counterpartyRules: false, settlementTiming: 'hosted' },
    }),
  },
  railyardServerResetPlatform: {
    make: async (w) => ({ headers: serverAdminHeaders(w), body: { platformId: (await w.t.newPlatform()).platformId } }),
  },
  railyardServerListSnapshots: {
    make: (w) => ({ headers: serverAdminHeaders(w), query: { platformId: w.tenant.platformId } }),
  },
  railyardServerSaveSnapshot: {
    make: (w) => ({
      headers: serverAdminHeaders(w),
      body: { platformId: w.tenant.platformId, name: uniqueId('fuzz') },
    }),
    renew: 'always',
  },
  railyardServerRestoreSnapshot: {
    // A platform of its own: the world's stays as it is.
    make: async (w) => {
      const tenant = await w.t.newPlatform();
      const name = await savedSnapshot(tenant);
      return { headers: serverAdminHeaders(w), params: { name }, body: { platformId: tenant.platformId } };
    },
  },
  railyardServerDeleteSnapshot: {
    make: async (w) => ({
      headers: serverAdminHeaders(w),
      params: { name: await savedSnapshot(w.tenant) },
      query: { platformId: w.tenant.platformId },
    }),
    renew: 'success',
  },
  railyardServerSeedPlatform: {
    // A platform of its own each time: a seed number is taken once per platform.
    make: async (w) => ({
      headers: serverAdminHeaders(w),
      body: { platformId: (await w.t.newPlatform()).platformId, seed: 1, size: 1 },
    }),
    renew: 'success',
  },
};

/** A new snapshot of the tenant's platform; its name. The fuzzed saves may have used up the platform's quota: then room is made. */
async function savedSnapshot(tenant: Tenant): Promise<string> {
  const name = uniqueId('fuzz');
  let reply = await tenant.raw('POST', '/_railyard/snapshots', { body: { name } });
  if (reply.status === 409 && reply.body?.details?.reason === 'SNAPSHOTS_MAX') {
    for (const snapshot of jsonOf(await tenant.raw('GET', '/_railyard/snapshots'), 'GET /_railyard/snapshots').data)
      await tenant.raw('DELETE', `/_railyard/snapshots/${snapshot.name}`);
    reply = await tenant.raw('POST', '/_railyard/snapshots', { body: { name } });
  }
  jsonOf(reply, 'POST /_railyard/snapshots', 201);
  return name;
}

const SERVER_ADMIN_TOKEN = 'fuzz-server-admin-token';

/** The server-admin endpoints of the world's server accept SERVER_ADMIN_TOKEN. */
function serverAdminHeaders(w: World): Record<string, string> {
  enableServerAdmin(w.t.deps, SERVER_ADMIN_TOKEN, w.tenant.platformId);
  return { authorization: `Bearer ${SERVER_ADMIN_TOKEN}` };
}
