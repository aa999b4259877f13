// The sandbox's magic values: every input that selects a simulated outcome, in one place.
// Each row names the behaviour it produces and where that behaviour is specified
// (SERVICE-SPEC.md section or behaviours.md paragraph). Services ask this module; they
// never compare suffixes themselves.

/**
 * The three characters that select a scenario: the end of the identifier, or for an
 * identifier with a domain part (user.002@bank.example) the end of the part before '@'.
 */
export function scenarioSuffix(identifier: string): string {
  const at = identifier.lastIndexOf('@');
  const local = at > 0 ? identifier.slice(0, at) : identifier;
  return local.slice(-3);
}

export interface MagicRow<Outcome> {
  suffix: string;
  outcome: Outcome;
  /** What the tester sees, in words. */
  behaviour: string;
  source: string;
}

function lookup<Outcome>(rows: readonly MagicRow<Outcome>[], fallback: Outcome, suffix: string): Outcome {
  return rows.find((row) => row.suffix === suffix)?.outcome ?? fallback;
}

// ---------------------------------------------------------------------------------------
// Beneficiary name verification at external-account creation (suffix of the primary
// identifier; the 1xx range does not collide with transfer or quote scenarios).

export type BeneficiaryVerificationOutcome =
  | {
      kind: 'status';
      status: 'MATCHED' | 'PARTIAL_MATCH' | 'NOT_MATCHED' | 'PENDING' | 'UNSUPPORTED' | 'CHECKED_BY_RECEIVING_FI';
    }
  | { kind: 'reject' };

const beneficiarySource = 'SERVICE-SPEC.md, Sandbox behaviour: beneficiary name verification';

export const BENEFICIARY_VERIFICATION: readonly MagicRow<BeneficiaryVerificationOutcome>[] = [
  {
    suffix: '102',
    outcome: { kind: 'status', status: 'NOT_MATCHED' },
    behaviour: 'beneficiaryVerificationStatus NOT_MATCHED',
    source: beneficiarySource,
  },
  {
    suffix: '103',
    outcome: { kind: 'status', status: 'PARTIAL_MATCH' },
    behaviour: 'beneficiaryVerificationStatus PARTIAL_MATCH, with a verified name that differs slightly',
    source: beneficiarySource,
  },
  {
    suffix: '104',
    outcome: { kind: 'status', status: 'PENDING' },
    behaviour: 'beneficiaryVerificationStatus PENDING',
    source: beneficiarySource,
  },
  {
    suffix: '105',
    outcome: { kind: 'reject' },
    behaviour: 'creation fails with 400 INVALID_BANK_ACCOUNT',
    source: beneficiarySource,
  },
  {
    suffix: '106',
    outcome: { kind: 'status', status: 'UNSUPPORTED' },
    behaviour: 'beneficiaryVerificationStatus UNSUPPORTED',
    source: beneficiarySource,
  },
  {
    suffix: '107',
    outcome: { kind: 'status', status: 'CHECKED_BY_RECEIVING_FI' },
    behaviour: 'beneficiaryVerificationStatus CHECKED_BY_RECEIVING_FI',
    source: beneficiarySource,
  },
];
export const BENEFICIARY_VERIFICATION_DEFAULT: BeneficiaryVerificationOutcome = { kind: 'status', status: 'MATCHED' };

export function beneficiaryVerificationFor(primaryIdentifier: string): BeneficiaryVerificationOutcome {
  return lookup(BENEFICIARY_VERIFICATION, BENEFICIARY_VERIFICATION_DEFAULT, scenarioSuffix(primaryIdentifier));
}

// ---------------------------------------------------------------------------------------
// Wallet ownership verification. Real signature checks run where the network's scheme is
// supported (Solana ed25519); this value passes on every network, as the hosted sandbox's
// legacy wallet-signature value does.

export const SANDBOX_VALID_SIGNATURE = 'sandbox-valid-signature';

// ---------------------------------------------------------------------------------------
// Embedded-wallet logins (SERVICE-SPEC.md, Authentication: sandbox specifics). HPKE, the
// stamps and WebAuthn run for real; what the sandbox fixes is the one-time code, a legacy
// passkey signature that skips the WebAuthn check, and an OIDC literal it no longer takes
// (not JWT-shaped, so 400 like any malformed token).

/** The code every EMAIL_OTP and SMS_OTP challenge accepts; any other is 401 `Invalid OTP code`. */
export const SANDBOX_OTP_CODE = '000000';
/** As a passkey assertion's `signature`: accepted without the WebAuthn check (credential and challenge still must match). */
export const SANDBOX_VALID_PASSKEY_SIGNATURE = 'sandbox-valid-passkey-signature';
/** Refused: the sandbox once took it as an OIDC token. */
export const SANDBOX_RETIRED_OIDC_TOKEN = 'sandbox-valid-oidc-token';

// ---------------------------------------------------------------------------------------
// Customer onboarding. Names select outcomes by their last three characters, taken as they
// are (a name has no domain part).

function nameSuffix(value: string): string {
  return value.trim().slice(-3);
}

/** Individual KYC: the kycStatus a new individual gets, and how a complete submission ends. */
export interface IndividualKycOutcome {
  kycStatusAtCreation: 'PENDING' | 'REJECTED' | 'UNVERIFIED' | 'APPROVED';
  /**
   * What a complete POST /verifications yields: manual review, or (once) a poor-quality
   * identity document the platform must replace before resubmitting.
   */
  completeSubmission: 'PENDING_MANUAL_REVIEW' | 'POOR_QUALITY_DOCUMENT';
}

const individualSource = 'SERVICE-SPEC.md, Sandbox behaviour: Individual KYC (fullName suffix)';

export const INDIVIDUAL_KYC: readonly MagicRow<IndividualKycOutcome>[] = [
  {
    suffix: '001',
    outcome: { kycStatusAtCreation: 'PENDING', completeSubmission: 'PENDING_MANUAL_REVIEW' },
    behaviour: 'created PENDING; a complete submission with an identity document goes to PENDING_MANUAL_REVIEW',
    source: individualSource,
  },
  {
    suffix: '002',
    outcome: { kycStatusAtCreation: 'REJECTED', completeSubmission: 'PENDING_MANUAL_REVIEW' },
    behaviour: 'created REJECTED; POST /verifications answers 400',
    source: individualSource,
  },
  {
    suffix: '003',
    outcome: { kycStatusAtCreation: 'UNVERIFIED', completeSubmission: 'POOR_QUALITY_DOCUMENT' },
    behaviour:
      'created UNVERIFIED; the first complete submission is RESOLVE_ERRORS with POOR_QUALITY_DOCUMENT on the identity documents',
    source: individualSource,
  },
];
export const INDIVIDUAL_KYC_DEFAULT: IndividualKycOutcome = {
  kycStatusAtCreation: 'APPROVED',
  completeSubmission: 'PENDING_MANUAL_REVIEW',
};

/** undefined when there is no name to read: the customer starts UNVERIFIED and is validated like any other. */
export function individualKycFor(fullName: string | undefined): IndividualKycOutcome | undefined {
  if (fullName === undefined || fullName.trim() === '') return undefined;
  return lookup(INDIVIDUAL_KYC, INDIVIDUAL_KYC_DEFAULT, nameSuffix(fullName));
}

/** Business KYB on POST /verifications, by the registration number. */
export type BusinessKybOutcome = 'REJECT' | 'VALIDATE' | 'APPROVE';

const businessSource = 'SERVICE-SPEC.md, Sandbox behaviour: Business KYB (businessInfo.registrationNumber suffix)';

export const BUSINESS_KYB: readonly MagicRow<BusinessKybOutcome>[] = [
  {
    suffix: '002',
    outcome: 'REJECT',
    behaviour: 'kybStatus and verificationStatus REJECTED at once, nothing validated',
    source: businessSource,
  },
  {
    suffix: '001',
    outcome: 'VALIDATE',
    behaviour: 'full validation; RESOLVE_ERRORS until complete, then kybStatus PENDING (IN_PROGRESS)',
    source: businessSource,
  },
  {
    suffix: '003',
    outcome: 'VALIDATE',
    behaviour: 'full validation; RESOLVE_ERRORS until complete, then kybStatus PENDING (IN_PROGRESS)',
    source: businessSource,
  },
];
export const BUSINESS_KYB_DEFAULT: BusinessKybOutcome = 'APPROVE';

/** Without a registration number there is no suffix: the submission is validated (and names it). */
export function businessKybFor(registrationNumber: string | undefined): BusinessKybOutcome {
  if (registrationNumber === undefined || registrationNumber.trim() === '') return 'VALIDATE';
  return lookup(BUSINESS_KYB, BUSINESS_KYB_DEFAULT, nameSuffix(registrationNumber));
}

/** Beneficial owners, resolved when their business is approved or rejected. */
const ownerSource = 'SERVICE-SPEC.md, Sandbox behaviour: Beneficial owner KYC (personalInfo.lastName suffix)';

export const BENEFICIAL_OWNER_KYC: readonly MagicRow<'PENDING' | 'REJECTED' | 'APPROVED'>[] = [
  {
    suffix: '001',
    outcome: 'PENDING',
    behaviour: 'the owner stays PENDING when the business resolves',
    source: ownerSource,
  },
  {
    suffix: '002',
    outcome: 'REJECTED',
    behaviour: 'the owner is REJECTED when the business resolves',
    source: ownerSource,
  },
];
export const BENEFICIAL_OWNER_KYC_DEFAULT = 'APPROVED' as const;

export function beneficialOwnerKycFor(lastName: string): 'PENDING' | 'REJECTED' | 'APPROVED' {
  return lookup(BENEFICIAL_OWNER_KYC, BENEFICIAL_OWNER_KYC_DEFAULT, nameSuffix(lastName));
}

/**
 * Contact verification (verify-email / verify-phone confirm): no message is sent in the
 * sandbox and this is the only code accepted; any other code is a 400.
 * Source: behaviours.md 1.1 (ContactVerificationConfirmRequest.code).
 */
export const CONTACT_VERIFICATION_CODE = '123456';

// Same-currency transfers (POST /transfer-in, POST /transfer-out), by the suffix of the
// external account's primary identifier. The rail simulator (src/rails/sandbox.ts) turns the
// outcome into a timeline that jobs carry out. A transfer that "fails at once" is still
// created (201) and answered in FAILED with its failure reason: the rail, not the request,
// failed, and an integrator handles it exactly as a failure reported by a real bank.

export interface TransferScenario {
  /** null: the transfer succeeds at once. */
  failAfterMs: number | null;
  /** OutgoingTransactionFailureReason for transfer-out (the reference has no insufficient-funds reason). */
  outgoingFailureReason?: string;
  /** IncomingTransactionFailureReason for transfer-in (a pull that fails is a failed collection). */
  incomingFailureReason?: string;
}

const transferSource =
  'SERVICE-SPEC.md, Sandbox behaviour: transfer in and transfer out; behaviours.md 1.5 (instant except 005)';

/** How long a 005 transfer stays pending before it fails. */
export const TRANSFER_TIMEOUT_MS = 30_000;

export const TRANSFER_SCENARIOS: readonly MagicRow<TransferScenario>[] = [
  {
    suffix: '002',
    outcome: { failAfterMs: 0, outgoingFailureReason: 'LIMIT_EXCEEDED', incomingFailureReason: 'COLLECTION_FAILED' },
    behaviour:
      'insufficient funds at the bank: FAILED at once (transfer-out LIMIT_EXCEEDED, transfer-in COLLECTION_FAILED), hold released',
    source: transferSource,
  },
  {
    suffix: '003',
    outcome: { failAfterMs: 0, outgoingFailureReason: 'ACCOUNT_INVALID', incomingFailureReason: 'COLLECTION_FAILED' },
    behaviour:
      'account closed or invalid: FAILED at once (transfer-out ACCOUNT_INVALID, transfer-in COLLECTION_FAILED), hold released',
    source: transferSource,
  },
  {
    suffix: '004',
    outcome: {
      failAfterMs: 0,
      outgoingFailureReason: 'ACCOUNT_CANNOT_RECEIVE',
      incomingFailureReason: 'COLLECTION_FAILED',
    },
    behaviour:
      'the bank rejects the transfer: FAILED at once (transfer-out ACCOUNT_CANNOT_RECEIVE, transfer-in COLLECTION_FAILED), hold released',
    source: transferSource,
  },
  {
    suffix: '005',
    outcome: {
      failAfterMs: TRANSFER_TIMEOUT_MS,
      outgoingFailureReason: 'QUOTE_EXECUTION_FAILED',
      incomingFailureReason: 'COLLECTION_FAILED',
    },
    behaviour:
      'pending (transfer-out PROCESSING, transfer-in PENDING) for 30 s of sandbox time, then FAILED (QUOTE_EXECUTION_FAILED / COLLECTION_FAILED), hold released',
    source: transferSource,
  },
];
export const TRANSFER_SCENARIO_DEFAULT: TransferScenario = { failAfterMs: null };

export function transferScenarioFor(primaryIdentifier: string): TransferScenario {
  return lookup(TRANSFER_SCENARIOS, TRANSFER_SCENARIO_DEFAULT, scenarioSuffix(primaryIdentifier));
}

// ---------------------------------------------------------------------------------------
// Executing a cross-currency quote to an external account, by the suffix of the destination
// account's primary identifier. Every outcome moves the money through the ledger: funds are
// held (or received) at execution, then converted and paid out, released, or refunded.

export type QuoteExecutionScenario =
  | { kind: 'COMPLETE'; afterMs: number }
  /**
   * `refund` absent: nothing was exchanged and held funds are released. `afterMs`: the
   * payment stays PROCESSING that long first (absent: it fails at once).
   */
  | { kind: 'FAIL'; failureReason: string; refund?: 'COMPLETED' | 'FAILED'; afterMs?: number }
  | { kind: 'RETURN'; returnAfterMs: number }
  | { kind: 'CANCEL' };

const quoteSource = 'SERVICE-SPEC.md, Sandbox behaviour: quote execution to an external account destination';

/** How long a 003 payout takes, and how long after completion a 005 payout comes back (sandbox time). */
export const QUOTE_SLOW_PAYOUT_MS = 6 * 60 * 1000;
// note: about 30 s, as for every 005 pattern of the sandbox (behaviours.md 1.3 and the
// transfer table); integration tests written against the hosted sandbox wait about that long.
export const QUOTE_RETURN_AFTER_MS = 30 * 1000;

export const QUOTE_EXECUTION_SCENARIOS: readonly MagicRow<QuoteExecutionScenario>[] = [
  {
    suffix: '002',
    outcome: { kind: 'FAIL', failureReason: 'QUOTE_EXECUTION_FAILED' },
    behaviour:
      'execution fails at once: FAILED (QUOTE_EXECUTION_FAILED), nothing exchanged, the held funds are released',
    source: quoteSource,
  },
  {
    suffix: '003',
    outcome: { kind: 'COMPLETE', afterMs: QUOTE_SLOW_PAYOUT_MS },
    behaviour: 'PROCESSING for 6 minutes of sandbox time, then COMPLETED',
    source: quoteSource,
  },
  {
    suffix: '004',
    outcome: { kind: 'FAIL', failureReason: 'ACCOUNT_CANNOT_RECEIVE', refund: 'COMPLETED' },
    behaviour:
      'delivery to the counterparty fails: FAILED (ACCOUNT_CANNOT_RECEIVE), then a refund to the payer that completes',
    source: quoteSource,
  },
  {
    suffix: '005',
    outcome: { kind: 'RETURN', returnAfterMs: QUOTE_RETURN_AFTER_MS },
    behaviour:
      'COMPLETED, then 30 seconds later returned by the receiving bank: FAILED (PAYOUT_RETURNED), refunded to the payer',
    source: `${quoteSource}; behaviours.md 1.3 (about 30 s for the 005 patterns)`,
  },
  {
    suffix: '006',
    outcome: { kind: 'CANCEL' },
    behaviour:
      'cancelled by the user: the payer gets the money back (a hold is released; money that came from outside is refunded from SUSPENSE), reason USER_CANCELLATION, then the payment is closed COMPLETED (events REFUND_PENDING, REFUND_COMPLETED, COMPLETED)',
    source: `${quoteSource}; behaviours.md 2.1 (the webhook sequence of a cancellation)`,
  },
  {
    suffix: '007',
    outcome: { kind: 'FAIL', failureReason: 'ACCOUNT_INVALID', refund: 'FAILED' },
    behaviour:
      "payout fails (ACCOUNT_INVALID) and so does the refund: FAILED, refund FAILED, the funds wait in the ledger's SUSPENSE account",
    source: quoteSource,
  },
];
export const QUOTE_EXECUTION_DEFAULT: QuoteExecutionScenario = { kind: 'COMPLETE', afterMs: 0 };

// Spark wallets have a table of their own: 003 and 005 mean what they mean for transfers
// (unavailable at once; pending 30 s, then failed), 002 and 004 what they mean for banks,
// and every other suffix succeeds.
const sparkSource = 'behaviours.md 1.3 (the suffix table of Spark wallet destinations)';

export const SPARK_QUOTE_EXECUTION_SCENARIOS: readonly MagicRow<QuoteExecutionScenario>[] = [
  { ...QUOTE_EXECUTION_SCENARIOS.find((row) => row.suffix === '002')!, source: sparkSource },
  {
    suffix: '003',
    outcome: { kind: 'FAIL', failureReason: 'ACCOUNT_CANNOT_RECEIVE' },
    behaviour:
      'the wallet is unavailable: FAILED at once (ACCOUNT_CANNOT_RECEIVE), nothing exchanged, the held funds are released',
    source: sparkSource,
  },
  { ...QUOTE_EXECUTION_SCENARIOS.find((row) => row.suffix === '004')!, source: sparkSource },
  {
    suffix: '005',
    outcome: { kind: 'FAIL', failureReason: 'QUOTE_EXECUTION_FAILED', afterMs: TRANSFER_TIMEOUT_MS },
    behaviour:
      'PROCESSING for 30 s of sandbox time, then FAILED (QUOTE_EXECUTION_FAILED), nothing exchanged, the held funds are released',
    source: sparkSource,
  },
];

/** The outcome of paying a quote to an external account of type `accountType` (undefined: the bank table). */
export function quoteExecutionScenarioFor(primaryIdentifier: string, accountType?: string): QuoteExecutionScenario {
  const table = accountType === 'SPARK_WALLET' ? SPARK_QUOTE_EXECUTION_SCENARIOS : QUOTE_EXECUTION_SCENARIOS;
  return lookup(table, QUOTE_EXECUTION_DEFAULT, scenarioSuffix(primaryIdentifier));
}

// ---------------------------------------------------------------------------------------
// Executing a quote that pulls its funds from an external bank account, by the suffix of
// that (source) account's primary identifier.

export type PullSourceScenario = { kind: 'INSUFFICIENT_FUNDS' };

export const PULL_SOURCE_SCENARIOS: readonly MagicRow<PullSourceScenario>[] = [
  {
    suffix: '002',
    outcome: { kind: 'INSUFFICIENT_FUNDS' },
    behaviour:
      'the pull finds no funds: executing the quote is refused with 400 INVALID_AMOUNT (insufficient funds) and nothing changes (the quote keeps its status; with immediatelyExecute no quote is created)',
    source: 'behaviours.md 1.5 (quote execution from a 002 account)',
  },
];

export function pullSourceScenarioFor(primaryIdentifier: string): PullSourceScenario | undefined {
  return lookup<PullSourceScenario | undefined>(PULL_SOURCE_SCENARIOS, undefined, scenarioSuffix(primaryIdentifier));
}

/**
 * Strong Customer Authentication: the only code that satisfies a challenge in the sandbox.
 * Source: behaviours.md (123456 for all SCA proofs, quote authorize included).
 */
export const SCA_SANDBOX_CODE = '123456';

// ---------------------------------------------------------------------------------------
// UMA test addresses: `$<name>@<domain>` on either sandbox UMA domain (the reference's docs
// use one spelling, its examples the other). The name picks what paying that address does,
// and for POST /sandbox/uma/receive what a payment from that sender does. Any other name on
// these domains, and any other domain, has no receiver: 404 UMA_NOT_FOUND.

export const SANDBOX_UMA_DOMAINS = ['sandbox.uma.money', 'sandbox.grid.uma.money'] as const;

export type UmaScenario = 'SUCCESS' | 'PENDING_LONG' | 'FAIL_COMPLIANCE';

export interface SandboxUmaCounterparty {
  /** The currency the counterparty pays or is paid in. */
  currency: string;
  scenario: UmaScenario;
}

/** How long a PENDING_LONG payment stays pending before it completes (sandbox time). */
export const UMA_PENDING_LONG_MS = 60 * 60 * 1000;

const umaSource = 'SERVICE-SPEC.md, Sandbox behaviour: UMA destinations; behaviours.md 1.4';

export interface UmaMagicRow {
  name: string;
  outcome: SandboxUmaCounterparty;
  behaviour: string;
  source: string;
}

export const SANDBOX_UMA_ADDRESSES: readonly UmaMagicRow[] = [
  {
    name: 'success.usd',
    outcome: { currency: 'USD', scenario: 'SUCCESS' },
    behaviour: 'receives and pays in USD; payments succeed',
    source: umaSource,
  },
  {
    name: 'success.eur',
    outcome: { currency: 'EUR', scenario: 'SUCCESS' },
    behaviour: 'receives and pays in EUR; payments succeed',
    source: umaSource,
  },
  {
    name: 'success.mxn',
    outcome: { currency: 'MXN', scenario: 'SUCCESS' },
    behaviour: 'receives and pays in MXN; payments succeed',
    source: umaSource,
  },
  {
    name: 'pending.long.usd',
    outcome: { currency: 'USD', scenario: 'PENDING_LONG' },
    behaviour:
      'USD; payments stay pending for an hour of sandbox time, then complete (an incoming one after the platform approved it)',
    source: umaSource,
  },
  {
    name: 'fail.compliance.usd',
    outcome: { currency: 'USD', scenario: 'FAIL_COMPLIANCE' },
    behaviour:
      'USD; payments fail the compliance check (an incoming one is FAILED with COMPLIANCE_REJECTED before the platform is asked)',
    source: umaSource,
  },
];

/** `$name@domain`, lower-cased; undefined when the text is not shaped like a UMA address. */
export function parseUmaAddress(address: string): { name: string; domain: string } | undefined {
  const match = /^\$([A-Za-z0-9._+-]{1,64})@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)$/.exec(address.trim());
  if (!match) return undefined;
  return { name: match[1]!.toLowerCase(), domain: match[2]!.toLowerCase() };
}

/** The sandbox counterparty at a well-formed address; undefined when nobody is there. */
export function sandboxUmaCounterpartyFor(address: string): SandboxUmaCounterparty | undefined {
  const parsed = parseUmaAddress(address);
  if (parsed === undefined || !(SANDBOX_UMA_DOMAINS as readonly string[]).includes(parsed.domain)) return undefined;
  return SANDBOX_UMA_ADDRESSES.find((row) => row.name === parsed.name)?.outcome;
}

// ---------------------------------------------------------------------------------------
// Card issuance (suffix of platformCardId, else of cardholderId).

export type CardIssuance = { kind: 'STAYS_PROCESSING' } | { kind: 'REJECTED' } | { kind: 'ACTIVE'; afterMs: number };

const cardSource = 'behaviours.md 1.2, card issuance';

export const CARD_ACTIVATION_DELAY_MS = 30_000;

export const CARD_ISSUANCE: readonly MagicRow<CardIssuance>[] = [
  {
    suffix: '001',
    outcome: { kind: 'STAYS_PROCESSING' },
    behaviour: 'the card stays PROCESSING',
    source: cardSource,
  },
  {
    suffix: '002',
    outcome: { kind: 'REJECTED' },
    behaviour: 'the issuer rejects it: CLOSED with stateReason ISSUER_REJECTED',
    source: cardSource,
  },
  {
    suffix: '005',
    outcome: { kind: 'ACTIVE', afterMs: CARD_ACTIVATION_DELAY_MS },
    behaviour: 'ACTIVE 30 seconds (sandbox clock) after issuance',
    source: cardSource,
  },
];

export const CARD_ISSUANCE_DEFAULT: CardIssuance = { kind: 'ACTIVE', afterMs: 0 };

export function cardIssuanceFor(identifier: string): CardIssuance {
  return lookup(CARD_ISSUANCE, CARD_ISSUANCE_DEFAULT, scenarioSuffix(identifier));
}

// Binding an internal account to a card as a funding source (suffix of the account's id).
// The hosted sandbox's rule. Railyard makes the ids and never hands out one with these
// endings (internal-accounts/service.ts), so a card is never refused by chance; the rule
// applies to an id given such an ending, and its refusal says why.

export type CardFundingBinding = { kind: 'INELIGIBLE'; why: string } | { kind: 'ELIGIBLE' };

const cardFundingSource = 'behaviours.md 1.2, funding-source binding';

export const CARD_FUNDING_BINDING: readonly MagicRow<CardFundingBinding>[] = [
  {
    suffix: '002',
    outcome: { kind: 'INELIGIBLE', why: "fails the issuer's balance check (sandbox: an account id ending in 002)" },
    behaviour: 'FUNDING_SOURCE_INELIGIBLE: the balance check fails',
    source: cardFundingSource,
  },
  {
    suffix: '003',
    outcome: { kind: 'INELIGIBLE', why: 'is closed at the issuer (sandbox: an account id ending in 003)' },
    behaviour: 'FUNDING_SOURCE_INELIGIBLE: the account counts as closed',
    source: cardFundingSource,
  },
];

export function cardFundingBindingFor(accountId: string): CardFundingBinding {
  return lookup(CARD_FUNDING_BINDING, { kind: 'ELIGIBLE' }, accountId.slice(-3));
}

// ---------------------------------------------------------------------------------------
// Card authorization decisioning (suffix of merchant.descriptor), for every simulator that
// opens a card transaction: authorization, credit and financial authorizations, the credit
// advice and the balance inquiry.

export type CardDecision =
  | { kind: 'DECLINE'; reason: 'INSUFFICIENT_FUNDS' | 'CARD_PAUSED' }
  /** Approved; the pull on the funding source confirms at once, after `afterMs`, or fails. */
  | { kind: 'APPROVE'; pull: 'CONFIRMED' | 'FAILS'; afterMs: number };

const cardDecisionSource = 'behaviours.md 1.2, authorization decisioning';

export const CARD_PULL_DELAY_MS = 30_000;

export const CARD_DECISIONS: readonly MagicRow<CardDecision>[] = [
  {
    suffix: '002',
    outcome: { kind: 'DECLINE', reason: 'INSUFFICIENT_FUNDS' },
    behaviour: 'declined INSUFFICIENT_FUNDS: no card transaction, no money moves',
    source: cardDecisionSource,
  },
  {
    suffix: '003',
    outcome: { kind: 'DECLINE', reason: 'CARD_PAUSED' },
    behaviour: 'declined CARD_PAUSED, as a frozen card is',
    source: cardDecisionSource,
  },
  {
    suffix: '005',
    outcome: { kind: 'APPROVE', pull: 'CONFIRMED', afterMs: CARD_PULL_DELAY_MS },
    behaviour: 'approved; the pull stays pending (pullSummary.pendingCount 1) for 30 seconds of sandbox time',
    source: cardDecisionSource,
  },
  {
    suffix: '006',
    outcome: { kind: 'APPROVE', pull: 'FAILS', afterMs: 0 },
    behaviour: 'approved, then the pull is reported failed: the hold is released and the transaction is EXCEPTION',
    source: cardDecisionSource,
  },
];

export const CARD_DECISION_DEFAULT: CardDecision = { kind: 'APPROVE', pull: 'CONFIRMED', afterMs: 0 };

export function cardDecisionFor(merchantDescriptor: string): CardDecision {
  return lookup(CARD_DECISIONS, CARD_DECISION_DEFAULT, merchantDescriptor.slice(-3));
}

// ---------------------------------------------------------------------------------------
// Stablecoin issuance (behaviours.md 2.8 gives the statuses only; the timeline is railyard's).
// Provider links by the suffix of apiClientId; registrations by the suffix of
// providerTokenIdentifier; mints and burns by the suffix of the primary identifier of the
// account that receives the result (the mint's Spark wallet, the burn's bank account).

const stablecoinSource = 'behaviours.md 2.8 (statuses only; outcomes and delays are railyard sandbox rules)';

export type StablecoinLinkOutcome = { kind: 'ACTIVE' } | { kind: 'INVALID' } | { kind: 'REVOKED'; afterMs: number };

/** How long after linking a 003 link is revoked by the provider (sandbox time). */
export const STABLECOIN_LINK_REVOKE_AFTER_MS = 60_000;

export const STABLECOIN_PROVIDER_LINKS: readonly MagicRow<StablecoinLinkOutcome>[] = [
  {
    suffix: '002',
    outcome: { kind: 'INVALID' },
    behaviour:
      'the credentials do not verify: the link is stored with status INVALID (no lastVerifiedAt) and cannot be used (400 STABLECOIN_PROVIDER_ACCOUNT_INVALID)',
    source: stablecoinSource,
  },
  {
    suffix: '003',
    outcome: { kind: 'REVOKED', afterMs: STABLECOIN_LINK_REVOKE_AFTER_MS },
    behaviour:
      'ACTIVE, then revoked at the provider 60 seconds later: status REVOKED, and its use answers 400 STABLECOIN_PROVIDER_ACCOUNT_REVOKED',
    source: stablecoinSource,
  },
];
export const STABLECOIN_PROVIDER_LINK_DEFAULT: StablecoinLinkOutcome = { kind: 'ACTIVE' };

export function stablecoinLinkOutcomeFor(apiClientId: string): StablecoinLinkOutcome {
  return lookup(STABLECOIN_PROVIDER_LINKS, STABLECOIN_PROVIDER_LINK_DEFAULT, scenarioSuffix(apiClientId));
}

export type StablecoinRegistrationOutcome = 'PROVISIONED' | 'REJECTED' | 'FAILED';

export const STABLECOIN_REGISTRATIONS: readonly MagicRow<StablecoinRegistrationOutcome>[] = [
  {
    suffix: '002',
    outcome: 'REJECTED',
    behaviour: 'the review rejects it: issuanceStatus REJECTED after 30 seconds, grid operations stay NOT_ENABLED',
    source: stablecoinSource,
  },
  {
    suffix: '003',
    outcome: 'FAILED',
    behaviour: 'provisioning fails: PROVISIONING after 30 seconds, then issuanceStatus FAILED after 60',
    source: stablecoinSource,
  },
];
export const STABLECOIN_REGISTRATION_DEFAULT: StablecoinRegistrationOutcome = 'PROVISIONED';

export function stablecoinRegistrationFor(providerTokenIdentifier: string): StablecoinRegistrationOutcome {
  return lookup(STABLECOIN_REGISTRATIONS, STABLECOIN_REGISTRATION_DEFAULT, scenarioSuffix(providerTokenIdentifier));
}

export type StablecoinOperationScenario =
  | { kind: 'COMPLETE' }
  | { kind: 'FAIL'; failureReason: string }
  | { kind: 'UNAVAILABLE' };

export const STABLECOIN_OPERATIONS: readonly MagicRow<StablecoinOperationScenario>[] = [
  {
    suffix: '002',
    outcome: { kind: 'FAIL', failureReason: 'PROVIDER_TRANSFER_FAILED' },
    behaviour:
      'the provider fails it: PROCESSING, then FAILED with failureReason PROVIDER_TRANSFER_FAILED; nothing is posted to the ledger',
    source: stablecoinSource,
  },
  {
    suffix: '003',
    outcome: { kind: 'UNAVAILABLE' },
    behaviour:
      'the provider is unavailable: the mint or burn is refused with 503 SERVICE_UNAVAILABLE and nothing is created',
    source: `${stablecoinSource}; the 503 the reference declares for mints and burns`,
  },
];
export const STABLECOIN_OPERATION_DEFAULT: StablecoinOperationScenario = { kind: 'COMPLETE' };

export function stablecoinOperationScenarioFor(primaryIdentifier: string): StablecoinOperationScenario {
  return lookup(STABLECOIN_OPERATIONS, STABLECOIN_OPERATION_DEFAULT, scenarioSuffix(primaryIdentifier));
}
