/**
 * Codes the client itself produces when there is no usable HTTP answer. Server codes (such as
 * `invalid_address`, `not_submitted`, `rate_limited`) come from the response body unchanged.
 */
export const ClientErrorCode = {
  /** The request never got an HTTP answer (DNS, refused connection, reset, CORS refusal in a browser). */
  networkError: 'network_error',
  /** `submitAndWait` (or a retry wait) reached its deadline before the score settled. */
  deadlineExceeded: 'deadline_exceeded',
  /** The caller's `AbortSignal` fired. */
  aborted: 'aborted',
  /** The server answered something that is not the documented shape (for example HTML from a proxy). */
  invalidResponse: 'invalid_response',
  /** A 4xx/5xx answer whose body has no `code`. */
  httpError: 'http_error',
} as const;

/** The fields of a {@link StampgateError} (see there); for wrapping or re-creating one. */
export interface StampgateErrorInit {
  /** See {@link StampgateError.code}. */
  code: string;
  /** See {@link StampgateError.status}. */
  status: number;
  /** See {@link StampgateError.detail}. */
  detail: string;
  /** See {@link StampgateError.body}. */
  body?: unknown;
  /** See {@link StampgateError.retryAfterMs}. */
  retryAfterMs?: number | null;
  /** See {@link StampgateError.requestId}. */
  requestId?: string | null;
  /** The underlying failure (a `fetch` TypeError, an AbortSignal reason…), kept as the error's `cause`. */
  cause?: unknown;
}

/**
 * The one error type the client throws.
 *
 * For an HTTP error answer, `status` is its status code and `code` / `detail` are the server's
 * `{"detail","code"}` body. When there was no HTTP answer (network failure, deadline, abort),
 * `status` is `0` (as `fetch` reports opaque failures) and `code` is one of {@link ClientErrorCode}.
 *
 * @example
 * ```ts
 * try { await client.submitAndWait(scorerId, address) }
 * catch (error) {
 *   if (error instanceof StampgateError && error.code === 'rate_limited') retryLater(error.retryAfterMs)
 *   else throw error
 * }
 * ```
 */
export class StampgateError extends Error {
  /** Machine-readable, snake_case: the server's `code`, or a {@link ClientErrorCode}. */
  readonly code: string;
  /** HTTP status of the answer; `0` when there was no HTTP answer. */
  readonly status: number;
  /** A sentence for a person: the server's `detail`, or the client's own explanation. */
  readonly detail: string;
  /** The parsed error body as received (it may carry more fields, such as `address`). */
  readonly body: unknown;
  /** The answer's `Retry-After`, in milliseconds, when it had one. */
  readonly retryAfterMs: number | null;
  /** The answer's `X-Request-Id`, to quote to the service's operator. */
  readonly requestId: string | null;

  constructor(init: StampgateErrorInit) {
    super(`${init.status > 0 ? `${init.status} ` : ''}${init.code}: ${init.detail}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'StampgateError';
    this.code = init.code;
    this.status = init.status;
    this.detail = init.detail;
    this.body = init.body;
    this.retryAfterMs = init.retryAfterMs ?? null;
    this.requestId = init.requestId ?? null;
  }
}

/** Builds the error of a non-2xx answer from its (already parsed, possibly absent) body. */
export function errorFromResponse(response: Response, body: unknown): StampgateError {
  const record = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const code = typeof record.code === 'string' ? record.code : ClientErrorCode.httpError;
  const detail =
    typeof record.detail === 'string'
      ? record.detail
      : `${response.status} ${response.statusText || 'error'} from ${new URL(response.url || 'http://unknown/').pathname}`;
  return new StampgateError({
    code,
    status: response.status,
    detail,
    body,
    retryAfterMs: parseRetryAfter(response.headers.get('retry-after')),
    requestId: response.headers.get('x-request-id'),
  });
}

/**
 * `Retry-After` as milliseconds from now: either delay-seconds or an HTTP date (RFC 9110 §10.2.3).
 * Null when absent or unreadable.
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - now);
}
