import type { Client } from 'openapi-fetch';
import { ClientErrorCode, StampgateError, errorFromResponse } from './errors.js';
import type { paths } from './generated/openapi.js';
import type { Clock, FetchFunction } from './transport.js';
import type { ScoreRead, SubmitPassportBody, SubmittedScore } from './types.js';

/** Per-call options of every helper. */
export interface CallOptions {
  /** Aborts the call (and any wait inside it); the promise rejects with code `aborted`. */
  signal?: AbortSignal;
}

/** Submission options: the optional wallet signature of the signing message, and its nonce. */
export interface SubmitOptions extends CallOptions {
  /** EIP-191 signature of `GET /registry/signing-message`'s message by the address (proves the caller holds the wallet). */
  signature?: SubmitPassportBody['signature'];
  /** The nonce that came with that signing message (single use). */
  nonce?: SubmitPassportBody['nonce'];
}

/** What the helpers share: the typed client, the clock, and a `fetch` without retries (for loops that pace themselves). */
export interface ClientContext {
  api: Client<paths>;
  clock: Clock;
  singleAttempt: FetchFunction;
}

/**
 * The body of a 2xx answer, or the {@link StampgateError} of any other. openapi-fetch has already
 * parsed JSON bodies; a body that is not JSON where JSON was documented is `invalid_response`.
 */
export async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch (error) {
    if (error instanceof StampgateError) throw error;
    throw new StampgateError({
      code: ClientErrorCode.invalidResponse,
      status: 0,
      detail: `The service's answer could not be read: ${error instanceof Error ? error.message : String(error)}`,
      cause: error,
    });
  }
  if (!result.response.ok) throw errorFromResponse(result.response, result.error);
  if (result.data === undefined) {
    throw new StampgateError({ code: ClientErrorCode.invalidResponse, status: result.response.status, detail: 'The service answered without a body.' });
  }
  return result.data;
}

export function submitPassport(context: ClientContext, scorerId: string | number, address: string, options: SubmitOptions): Promise<SubmittedScore> {
  const body: SubmitPassportBody = { address, scorer_id: String(scorerId) };
  if (options.signature !== undefined) body.signature = options.signature;
  if (options.nonce !== undefined) body.nonce = options.nonce;
  return unwrap(context.api.POST('/registry/submit-passport', { body, signal: options.signal }));
}

export function getScore(
  context: ClientContext,
  scorerId: string | number,
  address: string,
  options: CallOptions & { fetch?: FetchFunction },
): Promise<ScoreRead> {
  return unwrap(
    context.api.GET('/registry/score/{scorer_id}/{address}', {
      params: { path: { scorer_id: String(scorerId), address } },
      signal: options.signal,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    }),
  );
}
