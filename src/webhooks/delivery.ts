/**
 * One webhook delivery attempt, and the retry policy around attempts.
 *
 * `deliverWebhook` POSTs the JSON payload with Standard Webhooks headers (see signing.ts) to a target that passed the
 * guard (target-guard.ts) at this moment, connecting only to the addresses the guard validated. Outcomes:
 * - `delivered`: the receiver answered 2xx;
 * - `failed`: any other status (3xx included: redirects are never followed, since a redirect could point anywhere the
 *   guard would refuse), a connection or TLS error, or no complete answer within `timeoutMs`;
 * - `refused`: the guard refused the URL; nothing was sent.
 * `timeoutMs` bounds the whole attempt: DNS, connect, TLS, request and response headers. After the status line,
 * at most `maxResponseBytes` of the body are read (within the same deadline) and discarded; the outcome is decided
 * by the status alone, so a receiver that answers 200 and then stalls its body still counts as delivered.
 * Nothing here throws for receiver behaviour; errors are short, fixed phrases fit for the account's delivery log.
 *
 * Retry policy (spec v2 "Webhooks and the event feed"): after failed attempt n (1-based) the next one waits about
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, each scaled by a jitter factor in [0.8, 1.2); after the 8th attempt the
 * delivery is given up. An endpoint whose failures started at least 3 days ago (no success since) is disabled.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { checkWebhookTarget, connectHost, pinnedLookup, type HostResolver, type TargetRefusal } from './target-guard.js';
import { signWebhook } from './signing.js';

export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;
const DEFAULT_USER_AGENT = 'Stampgate-Webhooks/1';

export interface DeliverWebhookInput {
  url: string;
  /** The endpoint's `whsec_` secret (or both secrets during a rotation's grace period). */
  secret: string | readonly string[];
  /** Becomes `webhook-id`; the same on every retry of this event. */
  eventId: string | number;
  /** Serialized once with JSON.stringify; the signature covers exactly the bytes sent. */
  payload: unknown;
  timeoutMs: number;
  allowPrivateTargets: boolean;
  production: boolean;
  maxResponseBytes?: number;
  maxUrlLength?: number;
  userAgent?: string;
  /** Clock for `webhook-timestamp`; defaults to the system clock. */
  now?: () => Date;
  /** DNS for the guard; defaults to dns.lookup with all addresses. */
  resolve?: HostResolver;
}

export interface DeliveryResult {
  outcome: 'delivered' | 'failed' | 'refused';
  /** The receiver's HTTP status, when it answered. */
  status?: number;
  durationMs: number;
  error?: string;
  /** Why the guard refused the target (outcome `refused` only). */
  refusal?: TargetRefusal;
}

class DeadlineError extends Error {}

function describeNetworkError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection reset';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'host unreachable';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not resolvable';
  if (typeof code === 'string' && (code.startsWith('ERR_TLS') || code.includes('CERT') || code.startsWith('ERR_SSL'))) {
    return `TLS error (${code})`;
  }
  return typeof code === 'string' ? `network error (${code})` : 'network error';
}

/** Reads and discards at most `limit` bytes of the body, then lets the socket go. */
function drain(response: IncomingMessage, limit: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const finish = (): void => {
      response.removeAllListeners('data');
      resolve();
    };
    response.on('data', (chunk: Buffer) => {
      seen += chunk.length;
      if (seen >= limit) {
        response.destroy();
        finish();
      }
    });
    response.once('end', finish);
    response.once('error', finish);
    response.once('close', finish);
  });
}

export async function deliverWebhook(input: DeliverWebhookInput): Promise<DeliveryResult> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new DeadlineError());
    }, input.timeoutMs);
  });
  deadline.catch(() => undefined);
  const timedOut = (): DeliveryResult => ({
    outcome: 'failed',
    durationMs: elapsed(),
    error: `timed out after ${input.timeoutMs} ms`,
  });

  try {
    let check;
    try {
      check = await Promise.race([
        checkWebhookTarget(input.url, {
          production: input.production,
          allowPrivateTargets: input.allowPrivateTargets,
          maxUrlLength: input.maxUrlLength,
          resolve: input.resolve,
        }),
        deadline,
      ]);
    } catch (error) {
      if (error instanceof DeadlineError) return timedOut();
      throw error;
    }
    if (!check.ok) {
      const { refusal } = check;
      return { outcome: 'refused', durationMs: elapsed(), error: `target refused: ${refusal.reason}`, refusal };
    }

    const body: string | undefined = JSON.stringify(input.payload);
    if (body === undefined) throw new TypeError('webhook payload is not JSON-serializable');
    const headers = signWebhook({
      secret: input.secret,
      id: String(input.eventId),
      body,
      timestamp: (input.now ?? (() => new Date()))(),
    });
    const { url } = check;
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    let response: IncomingMessage;
    try {
      response = await Promise.race([
        new Promise<IncomingMessage>((resolve, reject) => {
          const req = send(
            {
              protocol: url.protocol,
              host: connectHost(url),
              port: url.port === '' ? undefined : Number(url.port),
              path: `${url.pathname}${url.search}`,
              method: 'POST',
              // No pooled sockets: each attempt connects to the addresses validated for it, and no more.
              agent: false,
              lookup: pinnedLookup(check.addresses),
              signal: controller.signal,
              headers: {
                ...headers,
                'content-type': 'application/json',
                'content-length': Buffer.byteLength(body),
                'user-agent': input.userAgent ?? DEFAULT_USER_AGENT,
              },
            },
            resolve,
          );
          req.on('error', reject);
          req.end(body);
        }),
        deadline,
      ]);
    } catch (error) {
      if (error instanceof DeadlineError || controller.signal.aborted) return timedOut();
      return { outcome: 'failed', durationMs: elapsed(), error: describeNetworkError(error) };
    }

    const status = response.statusCode ?? 0;
    response.on('error', () => undefined);
    await Promise.race([drain(response, input.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES), deadline]).catch(
      () => response.destroy(),
    );
    if (status >= 200 && status < 300) return { outcome: 'delivered', status, durationMs: elapsed() };
    const error = status >= 300 && status < 400 ? `redirect (HTTP ${status}) not followed` : `HTTP ${status}`;
    return { outcome: 'failed', status, durationMs: elapsed(), error };
  } finally {
    clearTimeout(timer);
  }
}

const RETRY_DELAYS_MS = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
] as const;

/** Attempts made before a delivery is given up: the first one plus one per scheduled retry. */
export const MAX_DELIVERY_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
export const DEFAULT_DISABLE_AFTER_MS = 3 * 24 * 3_600_000;

/**
 * Milliseconds to wait after failed attempt `attempt` (1 = the first attempt) before the next one, or null when the
 * schedule is exhausted. `random` is a number in [0, 1) (Math.random in production, fixed in tests).
 */
export function nextAttemptDelay(attempt: number, random: number): number | null {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError('attempt must be an integer from 1');
  if (!(random >= 0 && random < 1)) throw new RangeError('random must be in [0, 1)');
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined) return null;
  return Math.round(base * (0.8 + 0.4 * random));
}

/**
 * True when an endpoint has been failing without a single success since `firstFailureAt` for at least
 * `disableAfterMs` (3 days by default). `firstFailureAt` null means it is not failing.
 */
export function shouldDisable(
  firstFailureAt: Date | null,
  now: Date,
  disableAfterMs: number = DEFAULT_DISABLE_AFTER_MS,
): boolean {
  if (firstFailureAt === null) return false;
  return now.getTime() - firstFailureAt.getTime() >= disableAfterMs;
}
