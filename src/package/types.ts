// The public types of the railyard package (`import { startRailyard } from 'railyard'`). This
// file holds types only and imports nothing: the build ships it as the package's declarations
// (dist/types.d.ts), and src/package/index.ts checks the answers' schemas against it.

/** How to start railyard in-process. Every field is optional. */
export interface RailyardOptions {
  /**
   * Where railyard keeps its data: `'memory'` (the default: nothing is kept after close), a
   * directory for the embedded SQLite store, or a `postgres://` URL.
   */
  store?: 'memory' | (string & {});
  /** The port to listen on; 0 (the default) takes a free one. */
  port?: number;
  /** The address to listen on (default 127.0.0.1). */
  host?: string;
  /** The first platform, whose credentials the result carries. */
  platform?: PlatformOptions;
  /** The server-admin token (16+ printable characters, no spaces); drawn at random when left out. */
  adminToken?: string;
  /** The server's log level (default 'silent'); logs are JSON lines on stdout. */
  logLevel?: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** How many of each platform's latest requests the request journal keeps (default 10000; 0 turns it off). */
  journalSize?: number;
  /** How long a webhook endpoint has to answer a try, in ms (1 to 30000; default 30000). */
  webhookTimeoutMs?: number;
  /**
   * How the payouts of every platform this server makes settle, unless the platform's own
   * options say (default 'hosted'; see PlatformOptions.settlementTiming).
   */
  settlementTiming?: SettlementTiming;
}

/**
 * 'hosted': an outgoing bank payout stays PROCESSING for its rail's sandbox time (ACH 120 s,
 * wire 60 s, RTP 10 s, …) before it completes, as on the hosted sandbox; `clock.advance`
 * gets past it at once. 'instant': it completes when it is accepted.
 */
export type SettlementTiming = 'instant' | 'hosted';

export interface PlatformOptions {
  name?: string;
  /** The counterparty rules of self-custody wallets (the EU Travel Rule); off by default. */
  counterpartyRules?: boolean;
  /** How its payouts settle; the server's `settlementTiming` (default 'hosted') when left out. */
  settlementTiming?: SettlementTiming;
}

/** A page of a railyard list. */
export interface Page<T> {
  data: T[];
  hasMore: boolean;
  nextCursor?: string;
  totalCount?: number;
}

/** An event of the platform: what a webhook delivers, whether or not an endpoint is set. */
export interface RailyardEvent {
  id: string;
  /** A webhook type, such as OUTGOING_PAYMENT.COMPLETED. */
  type: string;
  /** The id of the object the event is about. */
  resourceId: string;
  /** When it happened, on the platform's sandbox clock. */
  timestamp: string;
  /** The object as it stood right after the change. */
  data: unknown;
  /** Its webhook's delivery, when the platform had an endpoint as the event was recorded. */
  delivery?: {
    status: 'PENDING' | 'DELIVERED' | 'FAILED';
    attemptCount: number;
    lastAttemptAt?: string;
    nextAttemptAt?: string;
    deliveredAt?: string;
  };
}

/** Which events to list or wait for. */
export interface EventFilter {
  /** One type, or several (any of them matches). */
  type?: string | string[];
  resourceId?: string;
  /** An event id: only events recorded after it (oldest first). */
  after?: string;
}

export interface WaitOptions {
  /** How long to wait in all, in ms (default 10000). */
  timeoutMs?: number;
}

/** The fault rule that fired on a request. */
export interface FaultMark {
  ruleId: string;
  effect: 'status' | 'latencyMs' | 'reset' | 'lostResponse';
  value?: number;
}

/** One request of the journal: what the app sent to the Grid API and how railyard answered. */
export interface JournalEntry {
  id: string;
  /** Arrival on the server's clock. */
  receivedAt: string;
  /** Arrival on the platform's sandbox clock. */
  sandboxTime: string;
  method: string;
  path: string;
  operationId?: string;
  /** Absent when railyard produced no answer. */
  status?: number;
  /** False when the answer did not reach the connection whole. */
  answered: boolean;
  errorCode?: string;
  durationMs: number;
  requestId: string;
  idempotencyKey?: string;
  tokenId?: string;
  agentId?: string;
  fault?: FaultMark;
  requestBody?: unknown;
  responseBody?: unknown;
}

/** Filters of the journal (combined with AND), and its paging. */
export interface JournalFilter {
  operationId?: string;
  status?: number;
  /** The error code of the answer. */
  code?: string;
  idempotencyKey?: string;
  /** A date-time on the server's clock (inclusive). */
  since?: string;
  limit?: number;
  cursor?: string;
}

/** The journal summed up. */
export interface RequestsReport {
  window: { size: number; requests: number; firstReceivedAt?: string; lastReceivedAt?: string };
  operations: {
    operationId: string;
    requests: number;
    unanswered: number;
    byStatus: Record<string, number>;
    byCode: Record<string, number>;
  }[];
  /** Money-moving requests sent without an Idempotency-Key. */
  missingIdempotencyKeys: { operationId: string; requests: number; requestIds: string[] }[];
  /** Idempotency-Keys sent again with another request. */
  reusedIdempotencyKeys: {
    operationId: string;
    idempotencyKey: string;
    requests: number;
    distinctRequests: number;
    requestIds: string[];
  }[];
  /** Answers of 5xx or 429, requests without an answer, and what the client did next. */
  failedAnswers: {
    requestId: string;
    receivedAt: string;
    method: string;
    path: string;
    operationId?: string;
    status?: number;
    answered: boolean;
    errorCode?: string;
    idempotencyKey?: string;
    retry: 'SAME_KEY' | 'NEW_KEY' | 'NO_KEY' | 'NOT_RETRIED';
    retryRequestId?: string;
  }[];
  /** Webhook deliveries whose latest try the platform's endpoint failed. */
  failedWebhookDeliveries: {
    deliveryId: string;
    type: string;
    resourceId: string;
    status: string;
    attemptCount: number;
    lastAttempt: { startedAt: string; url?: string; responseStatus?: number; responseExcerpt?: string; error?: string };
  }[];
}

export interface ClockReading {
  now: string;
  offsetSeconds: number;
}

export interface ResetResult {
  platformId: string;
  /** Rows deleted, by table. */
  removed: Record<string, number>;
  internalAccountIds: string[];
}

export interface SeedOptions {
  /** Which demo set (default 1). */
  seed?: number;
  /** How many copies of the cast (1 to 20, default 2). */
  size?: number;
}

/** What a seed made. */
export interface SeedSummary {
  platformId: string;
  seed: number;
  size: number;
  /** How many of each kind of object. */
  created: Record<string, number>;
  /** Where the seed's webhooks went: the platform's endpoint, or 'railyard' (a receiver inside the seed). */
  webhookEndpoint: string;
}

/** One platform of a running railyard, with its credentials and railyard's test helpers. */
export interface RailyardPlatform {
  /** The Grid API's base URL, for an SDK's `baseURL`. */
  baseURL: string;
  clientId: string;
  clientSecret: string;
  platformId: string;
  clock: {
    read(): Promise<ClockReading>;
    /** Moves the platform's sandbox clock forward; what fell due has run when it resolves. */
    advance(seconds: number): Promise<ClockReading & { jobsRun: number }>;
  };
  events: {
    list(filter?: EventFilter & { limit?: number; cursor?: string }): Promise<Page<RailyardEvent>>;
    /**
     * The first event matching `filter`: one already recorded (the newest, or with `after` the
     * first after that event), else the first to come. Rejects after `timeoutMs`.
     */
    waitFor(filter: EventFilter, options?: WaitOptions): Promise<RailyardEvent>;
  };
  requests: {
    list(filter?: JournalFilter): Promise<Page<JournalEntry>>;
    get(id: string): Promise<JournalEntry>;
    report(): Promise<RequestsReport>;
  };
  /** Deletes the platform's data, keeping its credentials and configuration. */
  reset(): Promise<ResetResult>;
  /** Fills the platform with a demo data set. */
  seed(options?: SeedOptions): Promise<SeedSummary>;
}

/** A railyard started in this process, serving its first platform. */
export interface Railyard extends RailyardPlatform {
  /** Where the server listens: http://host:port. */
  origin: string;
  /** The server-admin token (POST /_railyard/server/platforms, /reset, /seed). */
  adminToken: string;
  /** Another platform on the same server, with its own credentials, data and clock. */
  newPlatform(options?: PlatformOptions): Promise<RailyardPlatform>;
  /** Stops the server (requests in flight finish, jobs stop, the store closes). */
  close(): Promise<void>;
}

/** An answer outside 2xx, in railyard's error envelope. */
export interface RailyardErrorFields {
  status: number;
  code: string;
  details?: unknown;
}

export type StartRailyard = (options?: RailyardOptions) => Promise<Railyard>;
