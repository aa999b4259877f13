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

export interface Database {
  platforms: PlatformsTable;
  api_tokens: ApiTokensTable;
  external_accounts: ExternalAccountsTable;
  ownership_challenges: OwnershipChallengesTable;
  events: EventsTable;
  jobs: JobsTable;
  idempotency_keys: IdempotencyKeysTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  incoming_payment_approvals: IncomingPaymentApprovalsTable;
}

export type PlatformRow = Selectable<PlatformsTable>;
export type NewPlatformRow = Insertable<PlatformsTable>;
