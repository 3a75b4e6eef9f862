/**
 * Standard Webhooks signing (https://www.standardwebhooks.com/) for outgoing score webhooks, and the matching
 * verifier for receivers.
 *
 * Every delivery carries three headers:
 * - `webhook-id`: the event id, identical on every retry, so receivers can de-duplicate (delivery is at least once);
 * - `webhook-timestamp`: Unix seconds of this attempt (each retry is signed afresh, so receivers' replay window of
 *   five minutes never rejects a late retry);
 * - `webhook-signature`: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`.
 *
 * The HMAC itself is computed by the maintained `standardwebhooks` package, never by hand here, so sender and
 * receivers agree with every other Standard Webhooks implementation.
 *
 * Secrets have the form `whsec_<base64 of 32 random bytes>`; the specification asks for 24 to 64 bytes of key, and
 * `isWebhookSecret` accepts exactly that range. The body that is signed must be the exact bytes that are sent: sign
 * the serialized JSON string, not an object.
 */
import { randomBytes } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;
const MIN_SECRET_BYTES = 24;
const MAX_SECRET_BYTES = 64;
const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

// A type alias, not an interface, so it is assignable to plain header records.
export type WebhookSignatureHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

/** A fresh endpoint secret, shown to the account once at registration or rotation. */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** True for `whsec_` followed by standard base64 of 24 to 64 bytes. */
export function isWebhookSecret(value: string): boolean {
  if (!value.startsWith(WEBHOOK_SECRET_PREFIX)) return false;
  const encoded = value.slice(WEBHOOK_SECRET_PREFIX.length);
  if (encoded.length === 0 || !STANDARD_BASE64.test(encoded)) return false;
  const bytes = Buffer.from(encoded, 'base64').length;
  return bytes >= MIN_SECRET_BYTES && bytes <= MAX_SECRET_BYTES;
}

export interface SignWebhookInput {
  /** Several secrets (both sides of a rotation) give one space-separated signature each, as the specification allows. */
  secret: string | readonly string[];
  /** The event id; becomes `webhook-id`. */
  id: string;
  /** The exact request body that will be sent. */
  body: string;
  /** When this attempt is made; only whole seconds are signed. */
  timestamp: Date;
}

/** The three Standard Webhooks headers for one delivery attempt. Throws on a malformed secret. */
export function signWebhook(input: SignWebhookInput): WebhookSignatureHeaders {
  const secrets = typeof input.secret === 'string' ? [input.secret] : input.secret;
  if (secrets.length === 0 || !secrets.every(isWebhookSecret)) throw new TypeError('not a whsec_ webhook secret');
  if (input.id.length === 0 || /[\s,.]/.test(input.id)) {
    // The id is part of the signed "<id>.<timestamp>.<body>" string and travels in a header.
    throw new TypeError('webhook id must be non-empty, without spaces, commas or dots');
  }
  const seconds = Math.floor(input.timestamp.getTime() / 1000);
  if (!Number.isSafeInteger(seconds) || seconds < 0) throw new TypeError('invalid webhook timestamp');
  const signature = secrets.map((secret) => new Webhook(secret).sign(input.id, input.timestamp, input.body)).join(' ');
  return { 'webhook-id': input.id, 'webhook-timestamp': String(seconds), 'webhook-signature': signature };
}

/** Headers as a receiver sees them: node:http's IncomingHttpHeaders, a fetch `Headers`, or a plain object. */
export type ReceivedHeaders =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

export type WebhookVerification =
  | { valid: true; id: string; timestamp: Date; payload: unknown }
  | { valid: false; reason: 'missing_headers' | 'invalid_signature' | 'stale_timestamp' | 'invalid_body' };

function headerValue(headers: ReceivedHeaders, name: string): string | undefined {
  if (typeof headers.get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  for (const key of Object.keys(record)) {
    if (key.toLowerCase() !== name) continue;
    const value = record[key];
    // A repeated signature header is ambiguous; refuse it rather than pick one.
    return typeof value === 'string' ? value : undefined;
  }
  return undefined;
}

/**
 * Verifies a received webhook: the signature over the raw body (pass the body exactly as received, before any JSON
 * parsing) and a timestamp within five minutes of now (the library's replay window). Several secrets may be given
 * for a receiver that accepts both sides of a rotation for a while; any one matching is enough.
 */
export function verifyWebhook(input: {
  secret: string | readonly string[];
  body: string | Buffer;
  headers: ReceivedHeaders;
}): WebhookVerification {
  const id = headerValue(input.headers, 'webhook-id');
  const timestamp = headerValue(input.headers, 'webhook-timestamp');
  const signature = headerValue(input.headers, 'webhook-signature');
  if (!id || !timestamp || !signature) return { valid: false, reason: 'missing_headers' };
  if (!/^\d{1,15}$/.test(timestamp)) return { valid: false, reason: 'invalid_signature' };
  const body = typeof input.body === 'string' ? input.body : input.body.toString('utf8');
  const secrets = typeof input.secret === 'string' ? [input.secret] : input.secret;
  const headers = { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature };
  let reason: 'invalid_signature' | 'stale_timestamp' = 'invalid_signature';
  for (const secret of secrets) {
    if (!isWebhookSecret(secret)) continue;
    try {
      new Webhook(secret).verify(body, headers, { jsonParse: false });
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      if (/timestamp/i.test(error.message)) reason = 'stale_timestamp';
      continue;
    }
    let payload: unknown;
    try {
      payload = body === '' ? undefined : JSON.parse(body);
    } catch {
      return { valid: false, reason: 'invalid_body' };
    }
    return { valid: true, id, timestamp: new Date(Number(timestamp) * 1000), payload };
  }
  return { valid: false, reason };
}
