// Row types of every table, as Kysely sees them. Conventions on both stores:
// timestamps are ISO-8601 UTC strings (fixed width, so they sort as text), JSON is text,
// booleans are integers 0/1, money is a 64-bit integer column read through the ledger.

import type { ColumnType, Insertable, Selectable } from 'kysely';

/** A 64-bit integer column: PostgreSQL returns it as a string, SQLite as a number. */
export type Int64 = ColumnType<string | number, string | number | bigint, string | number | bigint>;

export interface PlatformsTable {
  id: string;
  name: string;
  /** JSON: the PlatformConfig fields that are stored as given. */
  config: string;
  /** JSON: railyard's own per-platform settings (see modules/platform/schemas.ts). */
  settings: string;
  clock_offset_ms: Int64;
  webhook_private_key: string;
  webhook_public_key: string;
  /** A new tag each time the platform's request fault rules change; null while none can fire (src/faults/). */
  fault_rules: string | null;
  /** The same for its webhook fault rules. */
  webhook_fault_rules: string | null;
  created_at: string;
  updated_at: string;
}

export interface ApiTokensTable {
  id: string;
  platform_id: string;
  name: string;
  /** JSON array of VIEW | TRANSACT | MANAGE. */
  permissions: string;
  client_id: string;
  secret_salt: string;
  secret_hash: string;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface ExternalAccountsTable {
  id: string;
  platform_id: string;
  customer_id: string | null;
  /** The customer id, or 'platform' for the platform's own accounts; scopes duplicates. */
  owner_key: string;
  status: string;
  currency: string;
  account_type: string;
  /** JSON: accountInfo as given at creation (without response-only fields). */
  account_info: string;
  /** accountType plus the normalized identifying fields; unique per owner among live rows. */
  identity_key: string;
  platform_account_id: string | null;
  ownership_type: string | null;
  default_uma_deposit: number;
  beneficiary_verification_status: string | null;
  beneficiary_verified_name: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface OwnershipChallengesTable {
  id: string;
  platform_id: string;
  external_account_id: string;
  method: string;
  message_to_sign: string | null;
  token: string | null;
  /** PENDING, then SUCCEEDED, FAILED or ABANDONED (a newer challenge replaced it). */
  status: string;
  expires_at: string;
  created_at: string;
  updated_at: string;
}

/** The outbox: one row per webhook-worthy event, written in the transaction that caused it. */
export interface EventsTable {
  /** `Webhook:<uuid>`, the envelope id the receiver sees on every delivery attempt. */
  id: string;
  platform_id: string;
  type: string;
  resource_id: string;
  /** JSON: the webhook's `data` object at the moment of the event. */
  data: string;
  created_at: string;
}

export interface JobsTable {
  id: string;
  platform_id: string;
  kind: string;
  /** JSON given when the job was scheduled. */
  payload: string;
  due_at_ms: Int64;
  /** PENDING, RUNNING (claimed by an instance), DONE or FAILED (gave up). */
  status: string;
  attempts: number;
  locked_by: string | null;
  locked_until_ms: Int64 | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

export interface IdempotencyKeysTable {
  platform_id: string;
  operation_id: string;
  key: string;
  /** SHA-256 of the canonical request (path parameters and body). */
  request_hash: string;
  response_status: number;
  /** The response body exactly as first sent. */
  response_body: string;
  created_at: string;
}

export interface CustomersTable {
  id: string;
  platform_id: string;
  /** INDIVIDUAL or BUSINESS. */
  customer_type: string;
  platform_customer_id: string;
  uma_address: string;
  region: string | null;
  /** JSON array of currency codes. */
  currencies: string;
  email: string | null;
  phone_number: string | null;
  /** kycStatus of an individual, kybStatus of a business. */
  status: string;
  /** JSON: the type's own fields (names, address, identification, businessInfo, EDD answers). */
  profile: string;
  /** JSON: the recorded EndUserTermsConsent, if any. */
  end_user_terms: string | null;
  /** JSON: per channel (email, phone) its status and when a code was last sent; null when not required. */
  contact_verification: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface BeneficialOwnersTable {
  id: string;
  platform_id: string;
  customer_id: string;
  /** JSON array of BeneficialOwnerRole. */
  roles: string;
  ownership_percentage: number;
  /** JSON: BeneficialOwnerPersonalInfo. */
  personal_info: string;
  kyc_status: string;
  created_at: string;
  updated_at: string;
}

export interface DocumentsTable {
  id: string;
  platform_id: string;
  /** The Customer or BeneficialOwner the document belongs to. */
  holder_id: string;
  /** The customer the holder belongs to (the holder itself, or the owner's business). */
  customer_id: string;
  document_type: string;
  side: string | null;
  country: string;
  document_number: string | null;
  issuing_authority: string | null;
  file_name: string;
  /** Detected from the file's first bytes: image/jpeg, image/png or application/pdf. */
  content_type: string;
  size_bytes: number;
  sha256: string;
  content: Buffer;
  /** Set when a verification found the file unusable (POOR_QUALITY_DOCUMENT); replacing clears it. */
  quality_issue: string | null;
  /** Set when a submission that included the document went to review or a decision. */
  submitted_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface VerificationsTable {
  id: string;
  platform_id: string;
  customer_id: string;
  status: string;
  /** JSON array of VerificationError. */
  errors: string;
  created_at: string;
  updated_at: string;
}

export interface KycLinksTable {
  id: string;
  platform_id: string;
  customer_id: string;
  /** The secret the hosted page's link carries. */
  token: string;
  redirect_uri: string | null;
  /** OPEN, then COMPLETED or REJECTED (a link is single-use). */
  status: string;
  expires_at: string;
  created_at: string;
  updated_at: string;
}

export interface CustomerImportJobsTable {
  id: string;
  platform_id: string;
  /** PENDING, PROCESSING, COMPLETED or FAILED. */
  status: string;
  /** The uploaded file, kept until the job has finished. */
  csv: string | null;
  total: number;
  processed: number;
  successful: number;
  failed: number;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

export interface CustomerImportErrorsTable {
  job_id: string;
  position: number;
  /** JSON: one BulkCustomerImportErrorEntry. */
  entry: string;
}

export interface InternalAccountsTable {
  /** `InternalAccount:<uuid>`; its balances live in ledger_accounts under the same id. */
  id: string;
  platform_id: string;
  /** null for the platform's own accounts. */
  customer_id: string | null;
  /** The customer id, or 'platform'; with type and currency it is unique. */
  owner_key: string;
  /** INTERNAL_FIAT, INTERNAL_CRYPTO or EMBEDDED_WALLET. */
  type: string;
  currency: string;
  status: string;
  /** EMBEDDED_WALLET: 1 when wallet privacy is on (set through a signed PATCH). */
  private_enabled?: number;
  created_at: string;
  updated_at: string;
}

/** The ledger's accounts: every internal account, plus the platform's accounts for the world outside. */
export interface LedgerAccountsTable {
  id: string;
  platform_id: string;
  currency: string;
  /** INTERNAL (id is the InternalAccount id), SANDBOX_FUNDING or EXTERNAL_RAILS. */
  kind: string;
  /** Running balances, kept in lockstep with the entries for INTERNAL accounts only. */
  available: Int64;
  held: Int64;
  created_at: string;
  updated_at: string;
}

/** One balanced movement of money in one currency. */
export interface LedgerPostingsTable {
  id: string;
  platform_id: string;
  currency: string;
  /** FUND, HOLD, SETTLE, RELEASE, RETURN, INCOMING_ACCEPT, INCOMING_COMPLETE, INCOMING_FAIL. */
  kind: string;
  transaction_id: string | null;
  created_at: string;
}

export interface LedgerEntriesTable {
  posting_id: string;
  line: number;
  platform_id: string;
  account_id: string;
  /** AVAILABLE or HELD (held for an outgoing payment, or pending from an incoming one). */
  bucket: string;
  currency: string;
  /** Signed, smallest unit; the entries of a posting sum to zero. */
  amount: Int64;
}

export interface TransactionsTable {
  /** `Transaction:<uuid>`. */
  id: string;
  platform_id: string;
  /** INCOMING or OUTGOING. */
  type: string;
  status: string;
  /** null for the platform's own transactions. */
  customer_id: string | null;
  /** The platform's id for the customer, as known when the transaction was created. */
  platform_customer_id: string | null;
  internal_account_id: string;
  external_account_id: string;
  source_account_id: string;
  destination_account_id: string;
  currency: string;
  amount: Int64;
  payment_rail: string | null;
  /** AUTO or MANUAL; null when no rail applies. */
  rail_selection_mode: string | null;
  failure_reason: string | null;
  /** JSON: the reference's Refund object, once a refund exists. */
  refund: string | null;
  /** The reconciliation reference (reconciliationInstructions.reference). */
  reference: string;
  /** JSON: request details kept as given (remittanceInformation, purposeOfPayment, cancellation reason). */
  details: string;
  settled_at: string | null;
  receipt_delivery_confirmed_at: string | null;
  created_at: string;
  updated_at: string;
  /** JSON: the cross-currency side of a quote's transaction (modules/transactions); null otherwise. */
  conversion: string | null;
}

/** One webhook delivery per event recorded while a webhook endpoint was set. */
export interface WebhookDeliveriesTable {
  /** The event's id, which is the envelope id. */
  id: string;
  platform_id: string;
  type: string;
  /** The id of the object the event is about. */
  resource_id: string;
  /** PENDING (a try is due or under way), DELIVERED or FAILED (no more tries). */
  status: string;
  attempts: number;
  job_id: string | null;
  round_started_at: string;
  /** EVENT or REPLAY: what started the current round (its tries carry it as their trigger). */
  round_trigger: string;
  last_attempt_at: string | null;
  delivered_at: string | null;
  created_at: string;
  updated_at: string;
  /** JSON: what a webhook fault rule did to the delivery (src/events/faults.ts); null when none did. */
  fault: string | null;
}

export interface WebhookAttemptsTable {
  id: string;
  platform_id: string;
  delivery_id: string;
  /** 1, 2, … over the delivery's whole life (replays continue the count). */
  number: number;
  /** EVENT (the event's own delivery and its retries), REPLAY or SEND_TEST. */
  trigger: string;
  /** Null when no endpoint was set at the time of the try. */
  url: string | null;
  started_at: string;
  latency_ms: number;
  response_status: number | null;
  response_excerpt: string | null;
  /** Why no HTTP answer came (timeout, connection error, no endpoint). */
  error: string | null;
  /** SUCCEEDED (2xx), DUPLICATE (409), FAILED. */
  outcome: string;
  /** `drop` (a rule kept the try from being sent) or `duplicate` (the second copy a rule sent). */
  fault: string | null;
}

export interface IncomingPaymentApprovalsTable {
  transaction_id: string;
  platform_id: string;
  event_id: string;
  /** AWAITING_WEBHOOK, AWAITING_DECISION (after a 202), or the decision reached. */
  status: string;
  transaction: string;
  requested_fields: string;
  decision_deadline: string | null;
  /** WEBHOOK, API, TIMEOUT or NO_ENDPOINT. */
  decided_by: string | null;
  decision: string | null;
  decided_at: string | null;
  created_at: string;
  updated_at: string;
}

/** One receiver lookup (lookupUma, lookupExternalAccount); a quote cites it by id. */
export interface ReceiverLookupsTable {
  /** `Lookup:<uuid>`. */
  id: string;
  platform_id: string;
  /** UMA or EXTERNAL_ACCOUNT. */
  kind: string;
  uma_address: string | null;
  external_account_id: string | null;
  /** The sender the lookup named (customerId query parameter), if any. */
  sender_customer_id: string | null;
  sender_uma_address: string | null;
  /** JSON: [{code, min, max}] the receiver accepts. */
  currencies: string;
  /** JSON: [{name, mandatory}] of payer data the receiver asks for. */
  required_payer_data_fields: string;
  /** SUCCESS, PENDING_LONG or FAIL_COMPLIANCE (the sandbox outcome of paying this receiver). */
  scenario: string;
  created_at: string;
}

export interface QuotesTable {
  /** `Quote:<uuid>`. */
  id: string;
  platform_id: string;
  customer_id: string | null;
  transaction_id: string;
  lookup_id: string | null;
  /** JSON: source and destination as presented. */
  source: string;
  destination: string;
  locked_side: string;
  locked_amount: Int64;
  sending_currency: string;
  receiving_currency: string;
  sending_amount: Int64;
  receiving_amount: Int64;
  /** The rate as an exact decimal, `<mantissa>e<exponent>` (src/rates). */
  exchange_rate: string;
  fees: Int64;
  platform_fees: Int64;
  /** JSON: OutgoingRateDetails. */
  rate_details: string;
  /** JSON: PaymentInstructions[], for real-time-funded quotes once they may be shown. */
  payment_instructions: string | null;
  /** JSON: the open SCA challenge. */
  sca_challenge: string | null;
  /** JSON: the senderCustomerInfo given for the receiver. */
  sender_customer_info: string | null;
  expires_at: string;
  created_at: string;
  updated_at: string;
}

export interface Database {
  platforms: PlatformsTable;
  api_tokens: ApiTokensTable;
  external_accounts: ExternalAccountsTable;
  ownership_challenges: OwnershipChallengesTable;
  events: EventsTable;
  jobs: JobsTable;
  idempotency_keys: IdempotencyKeysTable;
  customers: CustomersTable;
  beneficial_owners: BeneficialOwnersTable;
  documents: DocumentsTable;
  verifications: VerificationsTable;
  kyc_links: KycLinksTable;
  customer_import_jobs: CustomerImportJobsTable;
  customer_import_errors: CustomerImportErrorsTable;
  internal_accounts: InternalAccountsTable;
  ledger_accounts: LedgerAccountsTable;
  ledger_postings: LedgerPostingsTable;
  ledger_entries: LedgerEntriesTable;
  transactions: TransactionsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  incoming_payment_approvals: IncomingPaymentApprovalsTable;
  receiver_lookups: ReceiverLookupsTable;
  quotes: QuotesTable;
  wallet_orgs: WalletOrgsTable;
  wallet_credentials: WalletCredentialsTable;
  wallet_sessions: WalletSessionsTable;
  wallet_requests: WalletRequestsTable;
  delegated_keys: DelegatedKeysTable;
  agents: AgentsTable;
  agent_device_codes: AgentDeviceCodesTable;
  agent_actions: AgentActionsTable;
  sca_factors: ScaFactorsTable;
  sca_challenges: ScaChallengesTable;
  sca_login_states: ScaLoginStatesTable;
  sca_sessions: ScaSessionsTable;
  sca_resets: ScaResetsTable;
  sca_trusted_beneficiaries: ScaTrustedBeneficiariesTable;
  railyard_keys: RailyardKeysTable;
  cards: CardsTable;
  card_reveals: CardRevealsTable;
  card_simulations: CardSimulationsTable;
  invitations: InvitationsTable;
  stablecoin_provider_accounts: StablecoinProviderAccountsTable;
  stablecoins: StablecoinsTable;
  stablecoin_operations: StablecoinOperationsTable;
  fault_rules: FaultRulesTable;
  webhook_fault_rules: WebhookFaultRulesTable;
  snapshots: SnapshotsTable;
  request_journal: RequestJournalTable;
}

export interface FaultRulesTable {
  id: string;
  platform_id: string;
  /** JSON: the rule (matchers, effect, seed) as src/faults/rules.ts reads it. */
  rule: string;
  times: number | null;
  matched: number;
  fired: number;
  created_at: string;
}

export interface WebhookFaultRulesTable {
  id: string;
  platform_id: string;
  /** JSON: the rule (event type, effect, delay). */
  rule: string;
  times: number | null;
  fired: number;
  created_at: string;
}

/** One request of a platform's app, as railyard answered it (src/modules/requests/). */
export interface RequestJournalTable {
  id: string;
  platform_id: string;
  /** Arrival on the server's clock. */
  created_at: string;
  /** Arrival on the platform's sandbox clock. */
  sandbox_at: string;
  method: string;
  path: string;
  operation_id: string | null;
  /** Null when no answer was sent. */
  status: number | null;
  error_code: string | null;
  duration_ms: number;
  request_id: string;
  idempotency_key: string | null;
  token_id: string | null;
  agent_id: string | null;
  /** JSON text, secrets redacted. */
  request_body: string | null;
  response_body: string | null;
  request_hash: string | null;
  /** JSON FaultMark. */
  fault: string | null;
  /** 1 when the whole answer was sent. */
  answered: number;
}

export interface AgentsTable {
  id: string;
  platform_id: string;
  customer_id: string;
  name: string;
  is_paused: number;
  /** JSON AgentPolicy. */
  policy: string;
  token_hash: string | null;
  connected_at: string | null;
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface AgentDeviceCodesTable {
  code: string;
  platform_id: string;
  agent_id: string;
  expires_at: string;
  redeemed_at: string | null;
  invalidated_at: string | null;
  created_at: string;
}

export interface AgentActionsTable {
  id: string;
  platform_id: string;
  agent_id: string;
  customer_id: string;
  type: string;
  status: string;
  request: string;
  quote_id: string | null;
  transaction_id: string | null;
  limit_amount: Int64;
  rejection_reason: string | null;
  failure_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface WalletOrgsTable {
  platform_id: string;
  organization_id: string;
  signer_private_key: string;
  signer_public_key: string;
  created_at: string;
}

export interface WalletCredentialsTable {
  id: string;
  platform_id: string;
  account_id: string;
  /** EMAIL_OTP, SMS_OTP, PASSKEY or OAUTH. */
  type: string;
  nickname: string;
  credential_id: string | null;
  /** JSON StoredPasskey (crypto/webauthn.ts). */
  passkey: string | null;
  registration_challenge: string | null;
  /** JSON OidcIdentity (crypto/oidc.ts). */
  oidc_identity: string | null;
  otp_target_key: string | null;
  otp_expires_at: string | null;
  otp_failed_attempts: number;
  revoked_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface WalletSessionsTable {
  id: string;
  platform_id: string;
  account_id: string;
  credential_id: string;
  public_key: string;
  expires_at: string;
  revoked_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface WalletRequestsTable {
  id: string;
  platform_id: string;
  account_id: string;
  operation: string;
  target: string;
  body_hash: string;
  payload: string;
  signer: string;
  data: string;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

export interface DelegatedKeysTable {
  id: string;
  platform_id: string;
  account_id: string;
  card_id: string;
  funding_source_id: string;
  public_key: string;
  private_key?: string | null;
  nickname: string;
  status: string;
  created_at: string;
  updated_at: string;
}

export type PlatformRow = Selectable<PlatformsTable>;
export type NewPlatformRow = Insertable<PlatformsTable>;

export interface ScaFactorsTable {
  id: string;
  platform_id: string;
  customer_id: string;
  /** TOTP or PASSKEY. */
  factor: string;
  credential_id: string | null;
  name: string | null;
  secret: string | null;
  last_totp_step: Int64 | null;
  /** JSON StoredPasskey. */
  passkey: string | null;
  /** JSON array of sha256 hex. */
  recovery_codes: string | null;
  created_at: string;
}

export interface ScaChallengesTable {
  id: string;
  platform_id: string;
  customer_id: string;
  /** ENROLL, LOGIN, TRUST or UNTRUST. */
  purpose: string;
  factor: string;
  subject: string | null;
  challenge: string | null;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

export interface ScaLoginStatesTable {
  platform_id: string;
  customer_id: string;
  failed_attempts: number;
  locked_until: string | null;
  suspended: number;
  updated_at: string;
}

export interface ScaSessionsTable {
  id: string;
  platform_id: string;
  customer_id: string;
  factor: string;
  end_user_ip_address: string;
  expires_at: string;
  revoked_at: string | null;
  created_at: string;
}

export interface ScaResetsTable {
  id: string;
  platform_id: string;
  customer_id: string;
  factor: string;
  /** INITIATED, PENDING_REVIEW, LIVENESS_PASSED, COMPLETED, REJECTED or EXPIRED. */
  status: string;
  liveness_token_hash: string;
  expires_at: string;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ScaTrustedBeneficiariesTable {
  platform_id: string;
  external_account_id: string;
  customer_id: string;
  trusted_at: string;
}

export interface RailyardKeysTable {
  name: string;
  key: string;
  created_at: string;
}

export interface CardsTable {
  id: string;
  platform_id: string;
  cardholder_id: string;
  platform_card_id: string;
  state: string;
  state_reason: string | null;
  brand: string;
  form: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  /** JSON array of internal account ids. */
  funding_sources: string;
  max_spend_per_transaction: Int64 | null;
  currency: string;
  processor_ref: string;
  issuer_ref: string;
  sealed_details: string;
  created_at: string;
  updated_at: string;
}

export interface CardRevealsTable {
  token_hash: string;
  platform_id: string;
  card_id: string;
  expires_at: string;
  created_at: string;
}

export interface CardSimulationsTable {
  token: string;
  platform_id: string;
  card_id: string;
  kind: string;
  request: string;
  status: string;
  reason: string | null;
  card_transaction_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface InvitationsTable {
  code: string;
  platform_id: string;
  inviter_uma: string;
  invitee_uma: string | null;
  first_name: string | null;
  amount_to_send: Int64 | null;
  currency: string | null;
  status: string;
  expires_at: string | null;
  claimed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface StablecoinProviderAccountsTable {
  id: string;
  platform_id: string;
  provider: string;
  provider_account_id: string;
  provider_environment: string;
  /** ACTIVE, INVALID or REVOKED. */
  status: string;
  api_client_id: string;
  /** sealText() of the client secret under the stablecoin-provider key. */
  sealed_client_secret: string;
  last_verified_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface StablecoinsTable {
  id: string;
  platform_id: string;
  stablecoin_provider_account_id: string;
  provider: string;
  provider_environment: string;
  provider_token_identifier: string;
  network: string;
  network_token_identifier: string;
  name: string;
  symbol: string;
  base_currency: string;
  decimals: number;
  issuance_status: string;
  grid_operations_status: string;
  currency: string | null;
  created_at: string;
  updated_at: string;
}

export interface StablecoinOperationsTable {
  id: string;
  platform_id: string;
  stablecoin_id: string;
  operation_type: string;
  status: string;
  /** Decimal text, in the token's smallest unit. */
  amount: string;
  /** Cents of the stablecoin's base currency. */
  fiat_amount: Int64;
  provider: string;
  provider_environment: string;
  stablecoin_provider_account_id: string;
  /** JSON. */
  source: string;
  /** JSON. */
  destination: string;
  funding_instructions: string | null;
  estimated_delivery: string | null;
  expires_at: string | null;
  provider_status: string | null;
  failure_reason: string | null;
  description: string | null;
  scenario: string;
  created_at: string;
  updated_at: string;
}

/** A saved state of one platform (src/sandbox/snapshots/). */
export interface SnapshotsTable {
  platform_id: string;
  name: string;
  /** The last migration applied when it was saved. */
  schema_version: string;
  format: number;
  /** The platform's sandbox time at the save (epoch ms). */
  clock_ms: Int64;
  /** JSON: rows by table. */
  row_counts: string;
  size_bytes: number;
  /** JSON: the rows (src/sandbox/snapshots/store.ts). */
  content: string;
  /** Wall-clock ms of the save. */
  saved_at_ms: Int64;
  created_at: string;
}
