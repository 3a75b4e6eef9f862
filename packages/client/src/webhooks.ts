/**
 * Verifying Stampgate's webhook deliveries (Standard Webhooks: `webhook-id`, `webhook-timestamp`,
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`).
 *
 * The HMAC is checked by `standardwebhooks`, the specification authors' own library, as the server
 * signs with it. It is plain JavaScript (no `node:crypto`, no `Buffer` needed, constant-time
 * comparison) and synchronous, so the same call works in Node, edge runtimes and browsers; WebCrypto
 * would have made the check asynchronous and unavailable outside secure contexts.
 */
import { Webhook, WebhookVerificationError as LibraryVerificationError } from 'standardwebhooks';
import { StampgateError } from './errors.js';
import type { ScoreEvent } from './types.js';

/** The headers of the received request: a fetch `Headers`, or Node's `IncomingHttpHeaders`/any plain record. */
export type WebhookHeaders = { get(name: string): string | null } | Readonly<Record<string, string | readonly string[] | undefined>>;

/** Input of {@link verifyWebhook}. */
export interface VerifyWebhookInput {
  /**
   * The endpoint's `whsec_…` secret (shown once when the webhook was created or rotated). Pass
   * several to accept both sides of a rotation for a while: any one matching is enough.
   */
  secret: string | readonly string[];
  /** The raw request body exactly as received, before any JSON parsing: a string, or its bytes. */
  body: string | Uint8Array;
  /** The request's headers; `webhook-id`, `webhook-timestamp` and `webhook-signature` are read, in any case. */
  headers: WebhookHeaders;
}

/** A delivery whose signature checked out. */
export interface VerifiedWebhook<Payload> {
  /** `webhook-id`: the event id, the same on every retry (deliveries are at least once: de-duplicate on it). */
  id: string;
  /** `webhook-timestamp` of this attempt. */
  timestamp: Date;
  /** The parsed JSON body. */
  payload: Payload;
}

/** Why a delivery was refused. */
export type WebhookRefusal = 'missing_headers' | 'invalid_signature' | 'stale_timestamp' | 'invalid_body';

/** Thrown by {@link verifyWebhook}: answer such a request with 400 and do not act on it. `code` says why. */
export class WebhookVerificationError extends StampgateError {
  override readonly code: WebhookRefusal;
  constructor(code: WebhookRefusal, detail: string) {
    super({ code, status: 0, detail });
    this.name = 'WebhookVerificationError';
    this.code = code;
  }
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof headers.get === 'function') return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  for (const key of Object.keys(record)) {
    if (key.toLowerCase() !== name) continue;
    const value = record[key];
    // A repeated header is ambiguous: refuse rather than pick one.
    return typeof value === 'string' ? value : undefined;
  }
  return undefined;
}

/**
 * Checks a webhook delivery's signature and its timestamp (within five minutes of now, the Standard
 * Webhooks replay window) and returns its id, time and parsed payload (typed as the event feed's
 * `data`, the same object; pass a type argument to narrow it). Throws
 * {@link WebhookVerificationError} otherwise.
 *
 * @example
 * ```ts
 * const { id, payload } = verifyWebhook({ secret: process.env.STAMPGATE_WEBHOOK_SECRET!, body: rawBody, headers: req.headers });
 * ```
 */
export function verifyWebhook<Payload = ScoreEvent['data']>(input: VerifyWebhookInput): VerifiedWebhook<Payload> {
  const id = header(input.headers, 'webhook-id');
  const timestamp = header(input.headers, 'webhook-timestamp');
  const signature = header(input.headers, 'webhook-signature');
  if (!id || !timestamp || !signature) {
    throw new WebhookVerificationError('missing_headers', 'webhook-id, webhook-timestamp and webhook-signature are all required.');
  }
  if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError('invalid_signature', 'webhook-timestamp is not Unix seconds.');
  let body: string;
  try {
    body = typeof input.body === 'string' ? input.body : new TextDecoder('utf-8', { fatal: true }).decode(input.body);
  } catch {
    throw new WebhookVerificationError('invalid_body', 'The body is not UTF-8 text.');
  }
  const secrets = typeof input.secret === 'string' ? [input.secret] : input.secret;
  let refusal: WebhookVerificationError = new WebhookVerificationError('invalid_signature', 'No signature matches the secret.');
  for (const secret of secrets) {
    let verifier: Webhook;
    try {
      verifier = new Webhook(secret);
    } catch (error) {
      // A configuration mistake, not a forged delivery: say so instead of refusing every delivery.
      throw new TypeError(`Not a webhook secret (expected whsec_ and base64): ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    try {
      verifier.verify(body, { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature }, { jsonParse: false });
    } catch (error) {
      if (!(error instanceof LibraryVerificationError)) throw error;
      if (/timestamp/i.test(error.message)) {
        refusal = new WebhookVerificationError('stale_timestamp', `webhook-timestamp is more than five minutes from now (${error.message}).`);
      }
      continue;
    }
    let payload: Payload;
    try {
      payload = JSON.parse(body) as Payload;
    } catch {
      throw new WebhookVerificationError('invalid_body', 'The signed body is not JSON.');
    }
    return { id, timestamp: new Date(Number(timestamp) * 1000), payload };
  }
  throw refusal;
}
