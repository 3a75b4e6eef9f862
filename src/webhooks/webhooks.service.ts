import { AppError } from '../errors.js';
import type { AccountService } from '../scoring/accounts/accounts.service.js';
import { formatScoringTimestamp } from '../scoring/timestamps.js';
import { checkWebhookTarget, type HostResolver, type TargetRefusal } from './target-guard.js';
import type { WebhookEndpointRow, WebhookEndpointsRepository } from './webhook-endpoints.repository.js';
import type { WebhookSecrets } from './webhook-secrets.js';
import type {
  CreatedWebhook,
  DeliveryAttemptView,
  RegisterWebhookInput,
  RotatedSecret,
  WebhookView,
} from './webhooks.schema.js';

export interface WebhookServiceOptions {
  maxPerScorer: number;
  /** Endpoints of one account over all its scorers. */
  maxPerAccount: number;
  /** Manual retries of one delivery (each gives it a fresh retry schedule, so they are limited). */
  manualRetriesPerDelivery: number;
  /** Bound of the registration's DNS check (the request must not wait on a slow resolver for long). */
  checkTimeoutMs: number;
  allowPrivateTargets: boolean;
  production: boolean;
  rotationGraceMs: number;
  resolve?: HostResolver;
  clock?: () => number;
}

function refusalSentence(refusal: TargetRefusal): string {
  switch (refusal.reason) {
    case 'invalid_url':
      return 'The webhook url is not an absolute URL.';
    case 'url_too_long':
      return `The webhook url is longer than ${refusal.maxLength} characters.`;
    case 'unsupported_scheme':
      return 'The webhook url must use https (or http outside production).';
    case 'https_required':
      return 'The webhook url must use https.';
    case 'userinfo_not_allowed':
      return 'The webhook url must not carry a user name or password.';
    case 'unresolvable_host':
      return `The host ${refusal.host} of the webhook url does not resolve.`;
    case 'forbidden_address':
      return `The host ${refusal.host} of the webhook url resolves to a ${refusal.kind.replace('_', '-')} address, which webhooks may not call.`;
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url.slice(0, 100);
  }
}

/** `work`, or `fallback` once `ms` have passed. */
async function withDeadline<T>(work: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

// Row ids are 32-bit integers on PostgreSQL: a larger id names no row (and must not reach the query).
const MAX_ROW_ID = 2_147_483_647;
const isRowId = (id: number): boolean => Number.isSafeInteger(id) && id >= 1 && id <= MAX_ROW_ID;

const time = (ms: number | null): string | null => (ms === null ? null : formatScoringTimestamp(ms));

function toView(row: WebhookEndpointRow): WebhookView {
  return {
    id: row.id,
    scorer_id: row.scorer_id,
    url: row.url,
    events: JSON.parse(row.events) as WebhookView['events'],
    description: row.description,
    enabled: row.enabled === 1,
    disabled_reason: row.disabled_reason,
    failing_since: time(row.failing_since),
    created_at: formatScoringTimestamp(row.created_at),
  };
}

/** Endpoint registration and management for the account that owns the scorer. */
export function webhookService(
  endpoints: WebhookEndpointsRepository,
  accounts: AccountService,
  secrets: WebhookSecrets | null,
  options: WebhookServiceOptions,
) {
  const clock = options.clock ?? Date.now;
  const requireSecrets = (): WebhookSecrets => {
    if (secrets) return secrets;
    throw new AppError('webhooks_not_configured', 'Webhooks are not configured on this server (WEBHOOK_SECRET_KEY is not set).');
  };
  const notFound = (id: number) => new AppError('webhook_not_found', `There is no webhook ${id} for this API key.`);
  const endpointOf = async (accountId: number, id: number): Promise<WebhookEndpointRow> => {
    const row = isRowId(id) ? await endpoints.findOfAccount(id, accountId) : undefined;
    if (!row) throw new AppError('webhook_not_found', `There is no webhook ${id} for this API key.`);
    return row;
  };

  return {
    async register(accountId: number, scorerId: number, input: RegisterWebhookInput): Promise<CreatedWebhook> {
      const keys = requireSecrets();
      const scorer = await accounts.scorerOfAccount(scorerId, accountId);
      const check = await withDeadline(
        checkWebhookTarget(input.url, {
          production: options.production,
          allowPrivateTargets: options.allowPrivateTargets,
          resolve: options.resolve,
        }),
        options.checkTimeoutMs,
        { ok: false, refusal: { reason: 'unresolvable_host', host: hostOf(input.url) } },
      );
      if (!check.ok) throw new AppError('invalid_webhook_url', refusalSentence(check.refusal));
      const row = await endpoints.insertWithin(options.maxPerScorer, options.maxPerAccount, {
        accountId,
        scorerId: scorer.id,
        url: check.url.href,
        events: [...new Set(input.events)],
        description: input.description?.trim() || null,
        now: clock(),
      });
      if (row === 'scorer_full') {
        throw new AppError('webhook_limit_reached', `Scorer ${scorer.id} has ${options.maxPerScorer} webhooks already; delete one first.`);
      }
      if (row === 'account_full') {
        throw new AppError(
          'webhook_account_limit_reached',
          `This account has ${options.maxPerAccount} webhooks already over all its scorers; delete one first.`,
        );
      }
      const view = toView(row);
      return {
        id: view.id,
        url: view.url,
        events: view.events,
        description: view.description,
        secret: keys.secretOf(row.id, row.secret_version),
        created_at: view.created_at,
      };
    },

    async list(accountId: number, scorerId: number): Promise<WebhookView[]> {
      const scorer = await accounts.scorerOfAccount(scorerId, accountId);
      return (await endpoints.listForScorer(scorer.id)).map(toView);
    },

    async remove(accountId: number, id: number): Promise<void> {
      if (!isRowId(id) || !(await endpoints.deleteOfAccount(id, accountId))) throw notFound(id);
    },

    async rotateSecret(accountId: number, id: number): Promise<RotatedSecret> {
      const keys = requireSecrets();
      const now = clock();
      const previousUntil = options.rotationGraceMs > 0 ? now + options.rotationGraceMs : null;
      const row = isRowId(id) ? await endpoints.rotate(id, accountId, now, previousUntil) : undefined;
      if (!row) throw notFound(id);
      return { id: row.id, secret: keys.secretOf(row.id, row.secret_version), previous_secret_valid_until: time(previousUntil) };
    },

    async deliveryLog(accountId: number, id: number, limit: number, before: number | null) {
      const endpoint = await endpointOf(accountId, id);
      const rows = await endpoints.attempts(endpoint.id, limit, before);
      const items: DeliveryAttemptView[] = rows.map((row) => ({
        delivery_id: row.delivery_id,
        event_id: String(row.event_id),
        delivery_state: row.state,
        attempt: row.attempt,
        status_code: row.status_code,
        duration_ms: row.duration_ms,
        error: row.error,
        created_at: formatScoringTimestamp(row.created_at),
        next_attempt_at: row.state === 'failed' ? formatScoringTimestamp(row.next_attempt_at) : null,
      }));
      const last = rows.at(-1);
      const next = rows.length === limit && last ? `/v2/webhooks/${endpoint.id}/deliveries?limit=${limit}&before=${last.id}` : null;
      return { items, next };
    },

    async retry(accountId: number, id: number, deliveryId: number): Promise<{ delivery_id: number; state: 'queued' }> {
      const endpoint = await endpointOf(accountId, id);
      const result = isRowId(deliveryId)
        ? await endpoints.retry(endpoint.id, deliveryId, clock(), options.manualRetriesPerDelivery)
        : undefined;
      if (result === undefined) throw new AppError('delivery_not_found', `Webhook ${id} has no delivery ${deliveryId}.`);
      if (result === 'running') throw new AppError('delivery_in_progress', `Delivery ${deliveryId} is being attempted right now.`);
      if (result === 'limit_reached') {
        throw new AppError(
          'delivery_retry_limit_reached',
          `Delivery ${deliveryId} was retried ${options.manualRetriesPerDelivery} times already; it is not retried again.`,
        );
      }
      return { delivery_id: deliveryId, state: 'queued' };
    },
  };
}

export type WebhookService = ReturnType<typeof webhookService>;
