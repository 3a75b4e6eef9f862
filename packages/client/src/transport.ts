/**
 * The `fetch` every request goes through: it turns network failures into {@link StampgateError}s and
 * retries reads (never writes) after 429/502/503/504 or a network failure, waiting what the
 * server's `Retry-After` asks, or an exponential backoff with full jitter when it says nothing.
 */
import { ClientErrorCode, StampgateError, parseRetryAfter } from './errors.js';

/** The time source and the wait the client uses; replace both together (tests, custom schedulers). */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`, or rejects when `signal` aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** How reads are retried. Writes (`POST`, `PUT`, `PATCH`, `DELETE`) are never retried by the client. */
export interface RetryOptions {
  /** Retries of one read after a 429, 502, 503, 504 or a network failure. Default 3; 0 turns retries off. */
  maxRetries?: number;
  /**
   * The longest `Retry-After` the client waits for by itself (default 30 000 ms). A longer one is not
   * waited for: the error is thrown at once with its `retryAfterMs`, so the caller can decide.
   */
  maxRetryAfterMs?: number;
  /** First backoff when the answer has no `Retry-After` (default 500 ms); doubles per retry, at most 10 s, with full jitter. */
  baseDelayMs?: number;
}

/** The `fetch` the client calls: it receives a complete `Request` (openapi-fetch builds it). */
export type FetchFunction = (input: Request) => Promise<Response>;

const RETRIED_STATUSES = new Set([429, 502, 503, 504]);
const MAX_BACKOFF_MS = 10_000;

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(abortError(signal));
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(abortError(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

export function abortError(signal: AbortSignal): StampgateError {
  return new StampgateError({ code: ClientErrorCode.aborted, status: 0, detail: 'The request was aborted by the caller.', cause: signal.reason });
}

/** Exponential backoff with full jitter: a random delay in [0, min(cap, base·2^attempt)]. */
export function backoffDelay(attempt: number, baseDelayMs: number, random: () => number = Math.random): number {
  return Math.round(random() * Math.min(MAX_BACKOFF_MS, baseDelayMs * 2 ** attempt));
}

/** One attempt: the answer, or a typed error when there was none. */
export async function fetchOnce(baseFetch: FetchFunction, request: Request): Promise<Response> {
  try {
    return await baseFetch(request);
  } catch (error) {
    if (error instanceof StampgateError) throw error;
    if (request.signal.aborted) throw abortError(request.signal);
    throw new StampgateError({
      code: ClientErrorCode.networkError,
      status: 0,
      detail: `No answer from ${new URL(request.url).origin}: ${error instanceof Error ? error.message : String(error)}`,
      cause: error,
    });
  }
}

/** Wraps `baseFetch` with the read retries described in {@link RetryOptions}. */
export function retryingFetch(baseFetch: FetchFunction, clock: Clock, options: RetryOptions = {}): FetchFunction {
  const maxRetries = options.maxRetries ?? 3;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 30_000;
  const baseDelayMs = options.baseDelayMs ?? 500;
  return async (request) => {
    const isRead = request.method === 'GET' || request.method === 'HEAD';
    if (!isRead || maxRetries === 0) return fetchOnce(baseFetch, request);
    for (let attempt = 0; ; attempt += 1) {
      let response: Response;
      try {
        // A read has no body, so a clone per attempt is cheap and keeps `request` reusable.
        response = await fetchOnce(baseFetch, request.clone());
      } catch (error) {
        if (!(error instanceof StampgateError) || error.code !== ClientErrorCode.networkError || attempt >= maxRetries) throw error;
        await clock.sleep(backoffDelay(attempt, baseDelayMs), request.signal);
        continue;
      }
      if (attempt >= maxRetries || !RETRIED_STATUSES.has(response.status)) return response;
      const retryAfter = parseRetryAfter(response.headers.get('retry-after'), clock.now());
      if (retryAfter !== null && retryAfter > maxRetryAfterMs) return response;
      await response.body?.cancel();
      await clock.sleep(retryAfter ?? backoffDelay(attempt, baseDelayMs), request.signal);
    }
  };
}
