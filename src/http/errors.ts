// The error catalogue: every code the reference allows, under the one HTTP status whose
// `Error<status>.code` enum lists it. Services throw `apiError(code, message, details)`;
// the status always comes from here. test/http/errors.test.ts checks this table against
// the reference in both directions.

export const ERROR_CODES = {
  400: [
    'INVALID_INPUT',
    'END_USER_TERMS_VERSION_NOT_FOUND',
    'MISSING_MANDATORY_USER_INFO',
    'INVITATION_ALREADY_CLAIMED',
    'INVITATIONS_NOT_CONFIGURED',
    'INVALID_UMA_ADDRESS',
    'INVITATION_CANCELLED',
    'QUOTE_REQUEST_FAILED',
    'INVALID_PAYREQ_RESPONSE',
    'INVALID_RECEIVER',
    'PARSE_PAYREQ_RESPONSE_ERROR',
    'CERT_CHAIN_INVALID',
    'CERT_CHAIN_EXPIRED',
    'INVALID_PUBKEY_FORMAT',
    'MISSING_REQUIRED_UMA_PARAMETERS',
    'SENDER_NOT_ACCEPTED',
    'AMOUNT_OUT_OF_RANGE',
    'INVALID_CURRENCY',
    'INVALID_TIMESTAMP',
    'INVALID_NONCE',
    'INVALID_REQUEST_FORMAT',
    'INVALID_BANK_ACCOUNT',
    'SELF_PAYMENT',
    'LOOKUP_REQUEST_FAILED',
    'PARSE_LNURLP_RESPONSE_ERROR',
    'INVALID_AMOUNT',
    'WEBHOOK_ENDPOINT_NOT_SET',
    'WEBHOOK_DELIVERY_ERROR',
    'LOW_QUALITY',
    'DATA_MISMATCH',
    'EXPIRED',
    'SUSPECTED_FRAUD',
    'UNSUITABLE_DOCUMENT',
    'INCOMPLETE',
    'EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS',
    'SMS_OTP_CREDENTIAL_ALREADY_EXISTS',
    'PASSKEY_CREDENTIAL_ALREADY_EXISTS',
    'STABLECOIN_PROVIDER_ACCOUNT_INVALID',
    'STABLECOIN_PROVIDER_ACCOUNT_REVOKED',
    'STABLECOIN_PROVIDER_ACCOUNT_SELECTION_REQUIRED',
    'CARDHOLDER_KYC_NOT_APPROVED',
    'TRANSACTION_SIZE_LIMIT_EXCEEDED',
    'EXTERNAL_ACCOUNT_VERIFICATION_REQUIRED',
  ],
  401: [
    'UNAUTHORIZED',
    'INVALID_SIGNATURE',
    'WALLET_SIGNATURE_MISSING',
    'WALLET_SIGNATURE_MALFORMED',
    'WALLET_SIGNATURE_BODY_MISMATCH',
    'WALLET_SIGNATURE_INVALID',
    'REQUEST_ID_MISSING',
  ],
  403: [
    'FORBIDDEN',
    'USER_NOT_READY',
    'COUNTERPARTY_NOT_ALLOWED',
    'VELOCITY_LIMIT_EXCEEDED',
    'END_USER_TERMS_NOT_ACCEPTED',
  ],
  404: [
    'TRANSACTION_NOT_FOUND',
    'INVITATION_NOT_FOUND',
    'USER_NOT_FOUND',
    'QUOTE_NOT_FOUND',
    'LOOKUP_REQUEST_NOT_FOUND',
    'TOKEN_NOT_FOUND',
    'BULK_UPLOAD_JOB_NOT_FOUND',
    'REFERENCE_NOT_FOUND',
    'UMA_NOT_FOUND',
    'STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND',
  ],
  405: ['METHOD_NOT_ALLOWED'],
  409: [
    'TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL',
    'TRANSACTION_NOT_CANCELLABLE',
    'UMA_ADDRESS_EXISTS',
    'EMAIL_OTP_EMAIL_ALREADY_EXISTS',
    'EMAIL_OTP_CREDENTIAL_SET_CHANGED',
    'PASSKEY_ALREADY_ENROLLED',
    'SCA_SESSION_REQUIRED',
    'BENEFICIARY_TRUSTED',
    'INVALID_STATE_TRANSITION',
    'CARD_ALREADY_CLOSED',
    'CARD_NOT_MUTABLE',
    'CONFLICT',
  ],
  410: ['CUSTOMER_DELETED'],
  412: ['UNSUPPORTED_UMA_VERSION'],
  423: ['ACCOUNT_LOCKED'],
  424: [
    'PAYREQ_REQUEST_FAILED',
    'COUNTERPARTY_PUBKEY_FETCH_ERROR',
    'NO_COMPATIBLE_UMA_VERSION',
    'LNURLP_REQUEST_FAILED',
    'EMAIL_OTP_CREDENTIAL_SYNC_FAILED',
  ],
  429: ['RATE_LIMITED', 'DAILY_VOLUME_LIMIT_EXCEEDED'],
  500: ['GRID_SWITCH_ERROR', 'INTERNAL_ERROR'],
  501: ['UNRECOGNIZED_MANDATORY_PAYEE_DATA_KEY', 'NOT_IMPLEMENTED'],
  503: ['SERVICE_UNAVAILABLE'],
} as const;

type Catalogue = typeof ERROR_CODES;
export type ErrorStatus = keyof Catalogue;
export type ErrorCode = Catalogue[ErrorStatus][number];

const STATUS_OF_CODE = new Map<string, ErrorStatus>();
for (const [status, codes] of Object.entries(ERROR_CODES)) {
  for (const code of codes) STATUS_OF_CODE.set(code, Number(status) as ErrorStatus);
}

export function statusOf(code: ErrorCode): ErrorStatus {
  const status = STATUS_OF_CODE.get(code);
  if (status === undefined) throw new Error(`unknown error code ${code}`);
  return status;
}

/** One invalid field of a request, as the reference's FieldError describes it. */
export interface FieldError {
  field: string;
  constraint?: { format?: string; pattern?: string; enum?: string[]; minLength?: number; maxLength?: number };
  message: string;
}

export interface ErrorBody {
  status: number;
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export class ApiError extends Error {
  readonly status: ErrorStatus;
  /** Seconds for a Retry-After header (429). */
  retryAfterSeconds?: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.status = statusOf(code);
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { status: this.status, code: this.code, message: this.message };
    if (this.details !== undefined) body.details = this.details;
    return body;
  }
}

export function apiError(code: ErrorCode, message: string, details?: Record<string, unknown>): ApiError {
  return new ApiError(code, message, details);
}

/** A 400 INVALID_INPUT that lists every invalid field at once. */
export function invalidInput(errors: FieldError[], message?: string): ApiError {
  const text =
    message ??
    (errors.length === 1
      ? `${errors[0]!.field} ${errors[0]!.message}`
      : `${errors.length} fields are invalid: ${errors.map((e) => e.field).join(', ')}`);
  return new ApiError('INVALID_INPUT', text, { errors });
}

/** Collects field errors during a service's own checks and throws them together. */
export class FieldErrors {
  readonly errors: FieldError[] = [];
  add(field: string, message: string, constraint?: FieldError['constraint']): void {
    this.errors.push(constraint === undefined ? { field, message } : { field, constraint, message });
  }
  get empty(): boolean {
    return this.errors.length === 0;
  }
  throwIfAny(message?: string): void {
    if (this.errors.length > 0) throw invalidInput(this.errors, message);
  }
}
