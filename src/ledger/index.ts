// The double-entry ledger: the only code that changes balances.
//
// Every movement is a posting of entries in one currency whose amounts sum to zero. Each
// internal account has two buckets: AVAILABLE (what it may spend, the API's `balance`) and
// HELD (reserved for an outgoing payment, or pending from an incoming one); the API's
// `totalBalance` is their sum. Their running balances are kept in ledger_accounts in the
// same database transaction as the entries, and neither may go below zero.
//
// The world outside railyard is two accounts per platform and currency: SANDBOX_FUNDING
// (where sandbox deposits come from) and EXTERNAL_RAILS (the other side of every transfer
// to or from an external account). They may go negative, so they are never checked or
// locked, and their balance is the sum of their entries: that keeps one hot row out of
// every transfer.
//
// Lifecycles: an outgoing payment is held when accepted (AVAILABLE -> HELD), settled when
// the rail completes (HELD -> EXTERNAL_RAILS) or released when it fails (HELD ->
// AVAILABLE); a payment returned after completion is reversed (EXTERNAL_RAILS ->
// AVAILABLE). An incoming payment is pending when accepted (EXTERNAL_RAILS -> HELD),
// completed (HELD -> AVAILABLE) or failed (HELD -> EXTERNAL_RAILS); one bound for an
// external account (a customer's default UMA deposit account) waits in SUSPENSE instead
// (EXTERNAL_RAILS -> SUSPENSE), then is passed on or sent back (SUSPENSE -> EXTERNAL_RAILS).
//
// Card transactions use the same movements: an authorization holds, each clearing settles
// what it clears, a clearing past the hold pulls the rest (a hold and a settlement of it at
// once), an expiry or a smaller advice releases; a return reverses a settlement, and a
// reversed return pulls it again. A card credit is an incoming payment: pending when
// authorized, completed by its clearing, failed by its expiry.
//
// Cross-currency payments add three system accounts per platform and currency:
// FX_LIQUIDITY (railyard's book in each currency: it takes the sending currency and gives
// the receiving one), FEES (the fees kept), and SUSPENSE (money received for a payment that
// is not on an internal account: real-time funding and pulls, incoming payments bound for
// an external account, and money whose refund failed). A conversion is two postings, one
// per currency:
//   sending:   funds -amount, FEES +(fees - platform's), the platform's internal account
//              +platform's fees, FX_LIQUIDITY +(amount - fees)
//   receiving: FX_LIQUIDITY -received, EXTERNAL_RAILS +received
// and a returned payout reverses both into the funds' owner.

import { iso } from '../clock.js';
import { sql } from 'kysely';
import { afterCommit, onPostgres, type Db, type Queryable } from '../db/index.js';
import { newId } from '../ids.js';
import * as store from './store.js';

export type Bucket = 'AVAILABLE' | 'HELD';

export type PostingKind =
  | 'FUND'
  | 'HOLD'
  | 'SETTLE'
  | 'RELEASE'
  | 'RETURN'
  | 'INCOMING_ACCEPT'
  | 'INCOMING_COMPLETE'
  | 'INCOMING_FAIL'
  | 'FUNDING_RECEIVED'
  | 'CONVERT'
  | 'PAYOUT'
  | 'PAYOUT_RETURN'
  | 'CONVERT_REVERSE'
  | 'REFUND'
  | 'REFUND_FAILED'
  | 'STABLECOIN_MINT'
  | 'STABLECOIN_BURN';

/**
 * The largest total (AVAILABLE + HELD) an account may hold: the reference's 9e15 amount
 * maximum, below 2^53, so `totalBalance` is an exact JSON number. A limit on the total, not on
 * each bucket, also means moving money between an account's buckets (a hold, its release,
 * an incoming payment's completion) can never be refused.
 */
export const BALANCE_MAX = 9_000_000_000_000_000n;

export type SystemAccountKind =
  | 'SANDBOX_FUNDING'
  | 'EXTERNAL_RAILS'
  | 'FX_LIQUIDITY'
  | 'FEES'
  | 'SUSPENSE'
  // Stablecoin issuance (opened per stablecoin by openStablecoinAccounts, not for every currency):
  // STABLECOIN_RESERVE holds the fiat backing a platform's tokens at its provider (in the
  // base currency); STABLECOIN_SUPPLY is the token side, whose negative balance is the supply
  // outstanding (in the stablecoin's own ledger currency). Neither fits an existing kind: the
  // reserve is not money in transit (SUSPENSE) nor railyard's own book (FX_LIQUIDITY).
  | 'STABLECOIN_RESERVE'
  | 'STABLECOIN_SUPPLY';

const SYSTEM_KINDS: readonly SystemAccountKind[] = [
  'SANDBOX_FUNDING',
  'EXTERNAL_RAILS',
  'FX_LIQUIDITY',
  'FEES',
  'SUSPENSE',
];

/** Deterministic ids, so a posting names them without a lookup. */
export function systemAccountId(platformId: string, kind: SystemAccountKind, currency: string): string {
  return `LedgerAccount:${kind}:${currency}:${platformId}`;
}

function isInternal(accountId: string): boolean {
  return accountId.startsWith('InternalAccount:');
}

export interface Balance {
  available: bigint;
  held: bigint;
}

/** The funds check failed: the available balance does not cover the amount. */
export class InsufficientFunds extends Error {
  constructor(
    readonly accountId: string,
    readonly available: bigint,
    readonly amount: bigint,
  ) {
    super(`available balance ${available} of ${accountId} does not cover ${amount}`);
  }
}

/** A credit would take a balance past BALANCE_MAX. */
export class BalanceLimitExceeded extends Error {
  constructor(
    readonly accountId: string,
    readonly balance: bigint,
    readonly amount: bigint,
  ) {
    super(`crediting ${amount} to ${accountId} would take its balance past ${BALANCE_MAX}`);
  }
}

interface Entry {
  accountId: string;
  bucket: Bucket;
  amount: bigint;
}

/** Creates the ledger account of a new internal account, and the platform's system accounts of its currency. */
export async function openAccounts(
  tx: Queryable,
  input: { platformId: string; internalAccountId: string; currency: string; now: Date },
): Promise<void> {
  const now = iso(input.now);
  await store.createAccount(tx, {
    id: input.internalAccountId,
    platform_id: input.platformId,
    currency: input.currency,
    kind: 'INTERNAL',
    created_at: now,
    updated_at: now,
  });
  await openSystemAccounts(tx, input);
}

/** Platform and currency pairs whose system accounts are known to exist (committed). */
const systemAccountsOpened = new Set<string>();
const systemAccountsOpenedMax = 100_000;

/**
 * The ledger accounts of internal accounts created in this transaction (fresh ids), in one
 * statement with, for a platform created in it too (`newPlatform`), its system accounts in
 * their currencies; otherwise the system accounts come from openSystemAccounts.
 */
export async function openFreshAccounts(
  tx: Queryable,
  input: {
    platformId: string;
    now: Date;
    accounts: { internalAccountId: string; currency: string }[];
    newPlatform: boolean;
  },
): Promise<void> {
  const now = iso(input.now);
  const { platformId } = input;
  const rows = input.accounts.map((account) => ({
    id: account.internalAccountId,
    platform_id: platformId,
    currency: account.currency,
    kind: 'INTERNAL',
    created_at: now,
    updated_at: now,
  }));
  const currencies = [...new Set(input.accounts.map((account) => account.currency))];
  if (input.newPlatform) {
    for (const currency of currencies) {
      for (const kind of SYSTEM_KINDS) {
        rows.push({
          id: systemAccountId(platformId, kind, currency),
          platform_id: platformId,
          currency,
          kind,
          created_at: now,
          updated_at: now,
        });
      }
    }
    afterCommit(tx, () => {
      for (const currency of currencies) rememberSystemAccounts(`${platformId}:${currency}`);
    });
  }
  await store.insertFreshAccounts(tx, rows);
  if (!input.newPlatform) {
    for (const currency of currencies) await openSystemAccounts(tx, { platformId, currency, now: input.now });
  }
}

function rememberSystemAccounts(key: string): void {
  if (systemAccountsOpened.size >= systemAccountsOpenedMax) systemAccountsOpened.clear();
  systemAccountsOpened.add(key);
}

/** Creates the system accounts of a currency that are missing (a conversion may touch a currency no internal account holds). */
export async function openSystemAccounts(
  tx: Queryable,
  input: { platformId: string; currency: string; now: Date },
): Promise<void> {
  const key = `${input.platformId}:${input.currency}`;
  if (systemAccountsOpened.has(key)) return;
  // Remembered only once committed: a rolled-back transaction must not leave the cache claiming rows it never wrote.
  afterCommit(tx, () => rememberSystemAccounts(key));
  const now = iso(input.now);
  for (const kind of SYSTEM_KINDS) {
    await store.createAccount(tx, {
      id: systemAccountId(input.platformId, kind, input.currency),
      platform_id: input.platformId,
      currency: input.currency,
      kind,
      created_at: now,
      updated_at: now,
    });
  }
}

/** Where the money for an outgoing payment sits: an internal account's HELD bucket, or SUSPENSE. */
export interface Funds {
  accountId: string;
  bucket: Bucket;
}

export interface ConversionLegs {
  sendingCurrency: string;
  /** Everything taken from the funds, fees included. */
  sendingAmount: bigint;
  fees: bigint;
  /** The platform's part of `fees`, credited to `platformFeeAccountId` (its internal account) when there is one, else kept in FEES. */
  platformFees: bigint;
  platformFeeAccountId: string | null;
  receivingCurrency: string;
  receivingAmount: bigint;
  /** An internal account the receiving amount is credited to (AVAILABLE); null: it leaves through EXTERNAL_RAILS. */
  payoutAccountId: string | null;
}

/** The two legs of a stablecoin mint or burn: fiat in the base currency, tokens in their own ledger currency. */
export interface StablecoinLegs {
  fiatCurrency: string;
  /** Smallest unit of the fiat currency (cents). */
  fiatAmount: bigint;
  tokenCurrency: string;
  /** Smallest unit of the token. */
  tokenAmount: bigint;
}

/**
 * Creates the accounts a stablecoin's mints and burns post to (those missing): the fiat
 * currency's EXTERNAL_RAILS and STABLECOIN_RESERVE, the token currency's EXTERNAL_RAILS and
 * STABLECOIN_SUPPLY.
 */
export async function openStablecoinAccounts(
  tx: Queryable,
  input: { platformId: string; fiatCurrency: string; tokenCurrency: string; now: Date },
): Promise<void> {
  const now = iso(input.now);
  const wanted: [SystemAccountKind, string][] = [
    ['EXTERNAL_RAILS', input.fiatCurrency],
    ['STABLECOIN_RESERVE', input.fiatCurrency],
    ['EXTERNAL_RAILS', input.tokenCurrency],
    ['STABLECOIN_SUPPLY', input.tokenCurrency],
  ];
  for (const [kind, currency] of wanted) {
    await store.createAccount(tx, {
      id: systemAccountId(input.platformId, kind, currency),
      platform_id: input.platformId,
      currency,
      kind,
      created_at: now,
      updated_at: now,
    });
  }
}

/** The balances of an internal account (no lock). */
export async function balanceOf(q: Queryable, platformId: string, accountId: string): Promise<Balance | undefined> {
  const row = await store.findBalance(q, platformId, accountId);
  return row && { available: BigInt(row.available), held: BigInt(row.held) };
}

/**
 * The books of one database transaction: every posting goes through here. A posting is
 * checked at once against the balances (read on first use) and kept; flush() writes the
 * postings, their entries and each changed balance in a few statements. The caller flushes
 * before the transaction ends (recordBalanceUpdates in the internal-accounts service does,
 * as it needs the written balances). The books also remember each internal account's
 * balances from before the first posting, to tell which accounts changed.
 *
 * Concurrency: the balances are read without a lock, and flush() writes each one as an
 * increment guarded by the same limits (never below zero, no credit past BALANCE_MAX), which
 * takes the row lock on PostgreSQL. A payment that passed the check on a balance another
 * transaction has since spent is refused there, with the same error, and its whole
 * transaction rolls back (the caller must let the error end it: the postings of the flush are
 * written by then). The lock is held only from the flush to the commit, so payments from one
 * account queue for a few statements, not for their whole transaction; and one flush takes
 * its locks in ascending id order, so two flushes never wait for each other in a cycle.
 * (SQLite transactions are exclusive: there the check at posting time is final.)
 */
export class Books {
  private readonly before = new Map<string, Balance>();
  private readonly current = new Map<string, Balance>();
  /** Each account's balances as last read or written, which the next flush adds to. */
  private readonly stored = new Map<string, Balance>();
  private readonly dirty = new Set<string>();
  private postings: store.PostingRow[] = [];
  private entries: store.EntryRow[] = [];

  constructor(
    private readonly tx: Queryable,
    private readonly platformId: string,
    private readonly now: Date,
  ) {}

  /** Sandbox deposit: SANDBOX_FUNDING -> AVAILABLE. */
  fund(accountId: string, currency: string, amount: bigint): Promise<void> {
    return this.post('FUND', currency, null, [
      {
        accountId: systemAccountId(this.platformId, 'SANDBOX_FUNDING', currency),
        bucket: 'AVAILABLE',
        amount: -amount,
      },
      { accountId, bucket: 'AVAILABLE', amount },
    ]);
  }

  /** Reserves funds for an outgoing payment; throws InsufficientFunds when they fall short. */
  hold(accountId: string, currency: string, amount: bigint, transactionId: string): Promise<void> {
    return this.post('HOLD', currency, transactionId, [
      { accountId, bucket: 'AVAILABLE', amount: -amount },
      { accountId, bucket: 'HELD', amount },
    ]);
  }

  /** The rail completed an outgoing payment: the held funds leave. */
  settle(accountId: string, currency: string, amount: bigint, transactionId: string): Promise<void> {
    return this.post('SETTLE', currency, transactionId, [
      { accountId, bucket: 'HELD', amount: -amount },
      { accountId: systemAccountId(this.platformId, 'EXTERNAL_RAILS', currency), bucket: 'AVAILABLE', amount },
    ]);
  }

  /** An outgoing payment failed before completion: the held funds become available again. */
  release(accountId: string, currency: string, amount: bigint, transactionId: string): Promise<void> {
    return this.post('RELEASE', currency, transactionId, [
      { accountId, bucket: 'HELD', amount: -amount },
      { accountId, bucket: 'AVAILABLE', amount },
    ]);
  }

  /** A settled outgoing payment came back (a return): the settlement is reversed into AVAILABLE. */
  reverseSettlement(accountId: string, currency: string, amount: bigint, transactionId: string): Promise<void> {
    return this.post('RETURN', currency, transactionId, [
      { accountId: systemAccountId(this.platformId, 'EXTERNAL_RAILS', currency), bucket: 'AVAILABLE', amount: -amount },
      { accountId, bucket: 'AVAILABLE', amount },
    ]);
  }

  /** An incoming payment was accepted: pending funds count in the total, not yet available. */
  acceptIncoming(accountId: string, currency: string, amount: bigint, transactionId: string): Promise<void> {
    return this.post('INCOMING_ACCEPT', currency, transactionId, [
      { accountId: systemAccountId(this.platformId, 'EXTERNAL_RAILS', currency), bucket: 'AVAILABLE', amount: -amount },
      { accountId, bucket: 'HELD', amount },
    ]);
  }

  completeIncoming(accountId: string, currency: string, amount: bigint, transactionId: string): Promise<void> {
    return this.post('INCOMING_COMPLETE', currency, transactionId, [
      { accountId, bucket: 'HELD', amount: -amount },
      { accountId, bucket: 'AVAILABLE', amount },
    ]);
  }

  failIncoming(accountId: string, currency: string, amount: bigint, transactionId: string): Promise<void> {
    return this.post('INCOMING_FAIL', currency, transactionId, [
      { accountId, bucket: 'HELD', amount: -amount },
      { accountId: systemAccountId(this.platformId, 'EXTERNAL_RAILS', currency), bucket: 'AVAILABLE', amount },
    ]);
  }

  /** Money for a payment arrived from outside (real-time funding, a pull): EXTERNAL_RAILS -> SUSPENSE. */
  receiveFunding(currency: string, amount: bigint, transactionId: string): Promise<void> {
    return this.post('FUNDING_RECEIVED', currency, transactionId, [
      { accountId: systemAccountId(this.platformId, 'EXTERNAL_RAILS', currency), bucket: 'AVAILABLE', amount: -amount },
      { accountId: systemAccountId(this.platformId, 'SUSPENSE', currency), bucket: 'AVAILABLE', amount },
    ]);
  }

  /** Money in SUSPENSE is passed on to an outside account it was bound for: SUSPENSE -> EXTERNAL_RAILS. */
  forwardExternally(currency: string, amount: bigint, transactionId: string): Promise<void> {
    return this.outOfSuspense('PAYOUT', currency, amount, transactionId);
  }

  /** Money in SUSPENSE goes back to whoever sent it: SUSPENSE -> EXTERNAL_RAILS. */
  refundExternally(currency: string, amount: bigint, transactionId: string): Promise<void> {
    return this.outOfSuspense('REFUND', currency, amount, transactionId);
  }

  private outOfSuspense(kind: PostingKind, currency: string, amount: bigint, transactionId: string): Promise<void> {
    return this.post(kind, currency, transactionId, [
      { accountId: systemAccountId(this.platformId, 'SUSPENSE', currency), bucket: 'AVAILABLE', amount: -amount },
      { accountId: systemAccountId(this.platformId, 'EXTERNAL_RAILS', currency), bucket: 'AVAILABLE', amount },
    ]);
  }

  /** A refund failed: the funds leave their bucket for SUSPENSE, where they wait for an operator. */
  strand(funds: Funds, currency: string, amount: bigint, transactionId: string): Promise<void> {
    if (funds.accountId === systemAccountId(this.platformId, 'SUSPENSE', currency)) return Promise.resolve();
    return this.post('REFUND_FAILED', currency, transactionId, [
      { accountId: funds.accountId, bucket: funds.bucket, amount: -amount },
      { accountId: systemAccountId(this.platformId, 'SUSPENSE', currency), bucket: 'AVAILABLE', amount },
    ]);
  }

  /** The payout of a cross-currency payment completed: convert the funds and pay the receiver. */
  async convertAndPayOut(funds: Funds, legs: ConversionLegs, transactionId: string): Promise<void> {
    const { sendingCurrency: send, receivingCurrency: receive } = legs;
    const sendingEntries: Entry[] = [
      { accountId: funds.accountId, bucket: funds.bucket, amount: -legs.sendingAmount },
      {
        accountId: systemAccountId(this.platformId, 'FX_LIQUIDITY', send),
        bucket: 'AVAILABLE',
        amount: legs.sendingAmount - legs.fees,
      },
    ];
    sendingEntries.push(...this.feeEntries(legs, 1n));
    await this.post('CONVERT', send, transactionId, sendingEntries);
    await this.post('PAYOUT', receive, transactionId, [
      {
        accountId: systemAccountId(this.platformId, 'FX_LIQUIDITY', receive),
        bucket: 'AVAILABLE',
        amount: -legs.receivingAmount,
      },
      {
        accountId: legs.payoutAccountId ?? systemAccountId(this.platformId, 'EXTERNAL_RAILS', receive),
        bucket: 'AVAILABLE',
        amount: legs.receivingAmount,
      },
    ]);
  }

  /**
   * A completed payout came back: both postings of convertAndPayOut are reversed into `to`
   * (AVAILABLE). The platform's fee is taken back from its internal account as far as its
   * available balance allows; what the platform already spent is absorbed by FEES, so the
   * payer is always refunded in full.
   */
  async reverseConversion(to: Funds, legs: ConversionLegs, transactionId: string): Promise<void> {
    const { sendingCurrency: send, receivingCurrency: receive } = legs;
    if (legs.platformFeeAccountId !== null && legs.platformFees > 0n) {
      // How much can be taken back depends on the fee account's balance as it is and will
      // stay: read under its row lock on PostgreSQL. (Taken before the flush, this lock is out
      // of the ascending order; a deadlock it causes aborts one transaction, a job that runs
      // again.)
      await this.load([legs.platformFeeAccountId], send, true);
      await this.load([to.accountId].filter(isInternal), send);
      const available = this.current.get(legs.platformFeeAccountId)?.available ?? 0n;
      if (available < legs.platformFees) legs = { ...legs, platformFees: available };
    }
    await this.post('PAYOUT_RETURN', receive, transactionId, [
      {
        accountId: systemAccountId(this.platformId, 'EXTERNAL_RAILS', receive),
        bucket: 'AVAILABLE',
        amount: -legs.receivingAmount,
      },
      {
        accountId: systemAccountId(this.platformId, 'FX_LIQUIDITY', receive),
        bucket: 'AVAILABLE',
        amount: legs.receivingAmount,
      },
    ]);
    const sendingEntries: Entry[] = [
      {
        accountId: systemAccountId(this.platformId, 'FX_LIQUIDITY', send),
        bucket: 'AVAILABLE',
        amount: -(legs.sendingAmount - legs.fees),
      },
      { accountId: to.accountId, bucket: 'AVAILABLE', amount: legs.sendingAmount },
    ];
    sendingEntries.push(...this.feeEntries(legs, -1n));
    await this.post('CONVERT_REVERSE', send, transactionId, sendingEntries);
  }

  /** Where a conversion's fees go (sign 1) or come back from (sign -1). */
  private feeEntries(legs: ConversionLegs, sign: bigint): Entry[] {
    const toPlatform = legs.platformFeeAccountId !== null && legs.platformFees > 0n ? legs.platformFees : 0n;
    const kept = legs.fees - toPlatform;
    const entries: Entry[] = [];
    if (kept > 0n)
      entries.push({
        accountId: systemAccountId(this.platformId, 'FEES', legs.sendingCurrency),
        bucket: 'AVAILABLE',
        amount: sign * kept,
      });
    if (toPlatform > 0n)
      entries.push({ accountId: legs.platformFeeAccountId!, bucket: 'AVAILABLE', amount: sign * toPlatform });
    return entries;
  }

  /**
   * Takes in an internal account's balances the caller read in this transaction (an account
   * read with its balances), so its first posting need not read them again. As good as the
   * books' own unlocked read: flush() guards the write either way. Ignored once read.
   */
  know(accountId: string, balance: Balance): void {
    if (this.current.has(accountId)) return;
    for (const map of [this.before, this.current, this.stored]) map.set(accountId, { ...balance });
  }

  /**
   * An internal account's balances, read again under its row lock (PostgreSQL) and held until
   * the transaction ends: a decision taken on them (which funding source covers a card
   * payment, whether a post-hoc pull fits) stays true through the flush.
   */
  async lockedBalanceOf(accountId: string, currency: string): Promise<Balance> {
    await this.load([accountId], currency, true);
    return this.current.get(accountId)!;
  }

  /**
   * A stablecoin mint completed: the fiat paid in joins the reserve (EXTERNAL_RAILS ->
   * STABLECOIN_RESERVE, in the base currency) and the new tokens leave for the destination
   * wallet (STABLECOIN_SUPPLY -> EXTERNAL_RAILS, in the token's ledger currency).
   */
  async mintStablecoin(legs: StablecoinLegs, operationId: string): Promise<void> {
    await this.post('STABLECOIN_MINT', legs.fiatCurrency, operationId, [
      {
        accountId: systemAccountId(this.platformId, 'EXTERNAL_RAILS', legs.fiatCurrency),
        bucket: 'AVAILABLE',
        amount: -legs.fiatAmount,
      },
      {
        accountId: systemAccountId(this.platformId, 'STABLECOIN_RESERVE', legs.fiatCurrency),
        bucket: 'AVAILABLE',
        amount: legs.fiatAmount,
      },
    ]);
    await this.post('STABLECOIN_MINT', legs.tokenCurrency, operationId, [
      {
        accountId: systemAccountId(this.platformId, 'STABLECOIN_SUPPLY', legs.tokenCurrency),
        bucket: 'AVAILABLE',
        amount: -legs.tokenAmount,
      },
      {
        accountId: systemAccountId(this.platformId, 'EXTERNAL_RAILS', legs.tokenCurrency),
        bucket: 'AVAILABLE',
        amount: legs.tokenAmount,
      },
    ]);
  }

  /** A stablecoin burn completed: mintStablecoin in reverse (tokens retired, fiat paid out of the reserve). */
  async burnStablecoin(legs: StablecoinLegs, operationId: string): Promise<void> {
    await this.post('STABLECOIN_BURN', legs.tokenCurrency, operationId, [
      {
        accountId: systemAccountId(this.platformId, 'EXTERNAL_RAILS', legs.tokenCurrency),
        bucket: 'AVAILABLE',
        amount: -legs.tokenAmount,
      },
      {
        accountId: systemAccountId(this.platformId, 'STABLECOIN_SUPPLY', legs.tokenCurrency),
        bucket: 'AVAILABLE',
        amount: legs.tokenAmount,
      },
    ]);
    await this.post('STABLECOIN_BURN', legs.fiatCurrency, operationId, [
      {
        accountId: systemAccountId(this.platformId, 'STABLECOIN_RESERVE', legs.fiatCurrency),
        bucket: 'AVAILABLE',
        amount: -legs.fiatAmount,
      },
      {
        accountId: systemAccountId(this.platformId, 'EXTERNAL_RAILS', legs.fiatCurrency),
        bucket: 'AVAILABLE',
        amount: legs.fiatAmount,
      },
    ]);
  }

  /** An account's balances as the postings kept so far leave them (undefined if never touched). */
  balanceOf(accountId: string): Balance | undefined {
    return this.current.get(accountId);
  }

  /** Internal accounts whose balances differ now from before this transaction's first posting. */
  changedAccounts(): string[] {
    return [...this.current.entries()]
      .filter(([id, now]) => {
        const was = this.before.get(id)!;
        return was.available !== now.available || was.held !== now.held;
      })
      .map(([id]) => id);
  }

  /**
   * Writes the postings kept so far, their entries, and the balances they changed (last,
   * see the class comment). Throws InsufficientFunds or BalanceLimitExceeded when another
   * transaction changed a balance meanwhile and this one's change no longer fits.
   */
  async flush(): Promise<void> {
    if (this.postings.length === 0) return;
    await store.insertPostings(this.tx, this.postings);
    await store.insertEntries(this.tx, this.entries);
    const now = iso(this.now);
    for (const id of [...this.dirty].sort()) await this.writeBalance(id, now);
    this.postings = [];
    this.entries = [];
    this.dirty.clear();
  }

  private async writeBalance(id: string, now: string): Promise<void> {
    const wanted = this.current.get(id)!;
    const stored = this.stored.get(id)!;
    const change = { available: wanted.available - stored.available, held: wanted.held - stored.held };
    // Postings that cancel out (a hold released at once) leave the account as it was: no
    // write, so its updatedAt stays that of its last change, the one its last event shows.
    if (change.available === 0n && change.held === 0n) return;
    // A refusal is checked against a fresh read; a balance that fits again by then is tried
    // once more.
    for (let attempt = 0; attempt < 3; attempt++) {
      const row = await store.addToBalance(this.tx, id, change, BALANCE_MAX, now);
      if (row !== undefined) {
        const written = { available: BigInt(row.available), held: BigInt(row.held) };
        // What other transactions changed meanwhile moves `before` too, so before and current
        // still differ by this transaction's own postings.
        this.shift(id, { available: written.available - wanted.available, held: written.held - wanted.held });
        this.stored.set(id, written);
        return;
      }
      const fresh = await store.findBalance(this.tx, this.platformId, id);
      if (fresh === undefined) throw new Error(`ledger account ${id} does not exist`);
      const was = { available: BigInt(fresh.available), held: BigInt(fresh.held) };
      checkLimits(
        id,
        was,
        { available: was.available + change.available, held: was.held + change.held },
        'this transaction',
      );
    }
    throw new Error(`the balance of ${id} kept changing while it was written`);
  }

  /**
   * Reads the balances of internal accounts not read yet; with `lock`, reads them again under
   * the row lock (PostgreSQL) even when read already, and takes in what changed meanwhile.
   */
  private async load(ids: string[], currency: string, lock = false): Promise<void> {
    for (const id of ids) {
      if (this.current.has(id) && !lock) continue;
      const row = await store.findBalance(this.tx, this.platformId, id, lock);
      if (row === undefined) throw new Error(`ledger account ${id} does not exist`);
      if (row.currency !== currency) throw new Error(`ledger account ${id} holds ${row.currency}, not ${currency}`);
      const balance = { available: BigInt(row.available), held: BigInt(row.held) };
      const stored = this.stored.get(id);
      if (stored === undefined) {
        this.before.set(id, balance);
        this.current.set(id, balance);
      } else {
        this.shift(id, { available: balance.available - stored.available, held: balance.held - stored.held });
      }
      this.stored.set(id, balance);
    }
  }

  /** Takes in a change other transactions made to an account: its balances before and now move by it. */
  private shift(id: string, drift: Balance): void {
    for (const map of [this.before, this.current]) {
      const balance = map.get(id)!;
      map.set(id, { available: balance.available + drift.available, held: balance.held + drift.held });
    }
  }

  private async post(
    kind: PostingKind,
    currency: string,
    transactionId: string | null,
    entries: Entry[],
  ): Promise<void> {
    // Programmer errors, checked before anything is kept: a posting balances to zero and
    // moves a positive amount.
    const sum = entries.reduce((total, entry) => total + entry.amount, 0n);
    if (sum !== 0n) throw new Error(`unbalanced ${kind} posting: entries sum to ${sum}`);
    if (entries.length < 2 || entries.some((entry) => entry.amount === 0n))
      throw new Error(`${kind} posting must move a positive amount`);

    // The funds check below is made on the balances as read; flush() makes it again, under
    // the row lock, for the sum of the transaction's postings (see the class comment).
    const internalIds = [...new Set(entries.filter((e) => isInternal(e.accountId)).map((e) => e.accountId))].sort();
    await this.load(internalIds, currency);

    const next = new Map<string, Balance>();
    for (const id of internalIds) next.set(id, { ...this.current.get(id)! });
    for (const entry of entries) {
      const balance = next.get(entry.accountId);
      if (balance === undefined) continue;
      if (entry.bucket === 'AVAILABLE') balance.available += entry.amount;
      else balance.held += entry.amount;
    }
    for (const [id, balance] of next) checkLimits(id, this.current.get(id)!, balance, `a ${kind} posting`);

    // Past this line the posting is accepted; flush() writes it.
    const postingId = newId('Posting');
    const createdAt = iso(this.now);
    this.postings.push({ id: postingId, platformId: this.platformId, currency, kind, transactionId, createdAt });
    entries.forEach((entry, i) => {
      this.entries.push({
        postingId,
        line: i + 1,
        platformId: this.platformId,
        accountId: entry.accountId,
        bucket: entry.bucket,
        currency,
        amount: entry.amount,
      });
    });
    for (const [id, balance] of next) {
      this.current.set(id, balance);
      this.dirty.add(id);
    }
  }
}

/**
 * Throws when an account's balances would leave their limits going from `was` to `next`:
 * InsufficientFunds below zero available, BalanceLimitExceeded when the total grows past
 * BALANCE_MAX. A negative HELD bucket would mean releasing or settling more than was
 * reserved: a bug of the caller.
 */
function checkLimits(id: string, was: Balance, next: Balance, what: string): void {
  if (next.available < 0n) throw new InsufficientFunds(id, was.available, was.available - next.available);
  if (next.held < 0n) throw new Error(`${what} would take the held balance of ${id} below zero`);
  const total = next.available + next.held;
  const credit = total - was.available - was.held;
  if (credit > 0n && total > BALANCE_MAX) throw new BalanceLimitExceeded(id, was.available + was.held, credit);
}

export function openBooks(tx: Queryable, platformId: string, now: Date): Books {
  return new Books(tx, platformId, now);
}

export interface LedgerAudit {
  balanced: boolean;
  currencies: { currency: string; entriesSum: string; postings: number }[];
  accounts: { id: string; kind: string; currency: string; available: string; held: string; consistent: boolean }[];
}

/**
 * Re-checks the books of a platform: entries sum to zero per currency, every internal
 * account's running balances equal the sums of its entries, and none is negative.
 */
export async function audit(q: Queryable, platformId: string): Promise<LedgerAudit> {
  const sums = await store.entrySums(q, platformId);
  const postings = await store.postingCounts(q, platformId);
  const accounts = await store.allAccounts(q, platformId);
  // An account's sum per bucket (the first row, as an account holds one currency), in a map:
  // a platform may have thousands of accounts.
  const sumOf = new Map<string, bigint>();
  for (const s of sums) {
    const key = `${s.account_id} ${s.bucket}`;
    if (!sumOf.has(key)) sumOf.set(key, BigInt(s.sum));
  }
  const entriesOf = (id: string, bucket: Bucket) => sumOf.get(`${id} ${bucket}`) ?? 0n;
  const checked = accounts.map((row) => {
    const internal = row.kind === 'INTERNAL';
    const available = internal ? BigInt(row.available) : entriesOf(row.id, 'AVAILABLE');
    const held = internal ? BigInt(row.held) : entriesOf(row.id, 'HELD');
    const consistent =
      !internal ||
      (available === entriesOf(row.id, 'AVAILABLE') &&
        held === entriesOf(row.id, 'HELD') &&
        available >= 0n &&
        held >= 0n);
    return {
      id: row.id,
      kind: row.kind,
      currency: row.currency,
      available: available.toString(),
      held: held.toString(),
      consistent,
    };
  });
  const totals = new Map<string, bigint>();
  for (const s of sums) totals.set(s.currency, (totals.get(s.currency) ?? 0n) + BigInt(s.sum));
  const currencies = [...totals.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([currency, sum]) => ({
      currency,
      entriesSum: sum.toString(),
      postings: Number(postings.find((p) => p.currency === currency)?.postings ?? 0),
    }));
  // Entries on an account the ledger does not know would escape the per-account checks.
  const known = new Set(accounts.map((a) => a.id));
  const orphaned = sums.some((s) => !known.has(s.account_id));
  return {
    balanced: !orphaned && currencies.every((c) => c.entriesSum === '0') && checked.every((a) => a.consistent),
    currencies,
    accounts: checked,
  };
}

/**
 * audit() on one snapshot of the books. On PostgreSQL its reads would otherwise each see the
 * payments committed by then, and a payment committing between two of them made correct books
 * look unbalanced; a repeatable-read transaction reads them all as of one moment.
 */
export async function auditBooks(db: Db, platformId: string): Promise<LedgerAudit> {
  return db.transaction(async (tx) => {
    if (onPostgres(tx)) await sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`.execute(tx);
    return audit(tx, platformId);
  });
}
