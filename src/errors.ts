/**
 * Every refusal the service can give, with its HTTP status. Domain code throws
 * `AppError` with one of these codes; the error handler in http/errors.ts is the only place
 * that turns errors into the `{"detail","code"}` body.
 */
export const errorStatus = {
  invalid_request: 400,
  invalid_json: 400,
  invalid_address: 400,
  invalid_limit: 400,
  invalid_offset: 400,
  invalid_timestamp: 400,
  invalid_signature: 400,
  invalid_nonce: 400,
  invalid_parameter: 400,
  invalid_token: 400,
  invalid_siwe_message: 400,
  invalid_credential: 400,
  invalid_webhook_url: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  invalid_session: 401,
  not_authenticated: 401,
  permission_denied: 403,
  csrf_rejected: 403,
  not_team_member: 403,
  not_found: 404,
  scorer_not_found: 404,
  not_submitted: 404,
  score_not_found: 404,
  webhook_not_found: 404,
  delivery_not_found: 404,
  batch_not_found: 404,
  model_not_found: 404,
  chain_not_found: 404,
  method_not_allowed: 405,
  webhook_limit_reached: 409,
  webhook_account_limit_reached: 409,
  api_key_limit_reached: 409,
  delivery_in_progress: 409,
  delivery_retry_limit_reached: 409,
  request_timeout: 408,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  headers_too_large: 431,
  rate_limited: 429,
  batch_quota_exceeded: 429,
  too_many_result_streams: 429,
  too_many_batch_uploads: 429,
  internal_error: 500,
  upstream_unavailable: 502,
  not_ready: 503,
  database_unavailable: 503,
  shutting_down: 503,
  webhooks_not_configured: 503,
  onchain_not_configured: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

/** Fields some errors add to the `{"detail","code"}` body (declared in http/errors.ts ErrorBody). */
export interface ErrorFields {
  /** The address an error is about (`score_not_found` of the v2 history, as the reference service). */
  address?: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly fields: ErrorFields;

  constructor(code: ErrorCode, detail: string, headers: Record<string, string> = {}, fields: ErrorFields = {}) {
    super(detail);
    this.name = 'AppError';
    this.code = code;
    this.status = errorStatus[code];
    this.headers = headers;
    this.fields = fields;
  }
}

/** The default `Retry-After` (seconds) of 503 answers; RETRY_AFTER_SECONDS overrides it. */
export const defaultRetryAfterSeconds = 5;

export function databaseUnavailableError(retryAfterSeconds = defaultRetryAfterSeconds): AppError {
  return new AppError('database_unavailable', 'The database is unavailable at the moment; try again shortly.', {
    'retry-after': String(retryAfterSeconds),
  });
}

export function shuttingDownError(retryAfterSeconds = defaultRetryAfterSeconds): AppError {
  return new AppError('shutting_down', 'This server is shutting down; send the request again (another server will take it).', {
    'retry-after': String(retryAfterSeconds),
    connection: 'close',
  });
}
