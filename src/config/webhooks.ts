/** Webhooks and the event feed. */
import { BadValue, flag, forExample, integer, type Settings } from './parse.js';

export interface WebhooksConfig {
  webhookSecretKey: string | null;
  webhookAllowPrivateTargets: boolean;
  webhookTimeoutMs: number;
  webhookExpiringLeadHours: number;
  webhookMaxPerScorer: number;
  webhookEndpointsPerAccount: number;
  webhookInflightPerAccount: number;
  webhookManualRetriesPerDelivery: number;
  webhookDeliveryConcurrency: number;
  webhookPollMs: number;
  webhookRotationGraceHours: number;
}

function secretKey(raw: string | undefined): string | null {
  if (raw === undefined || raw.trim() === '') return null;
  if (raw.trim().length < 32) throw new BadValue(`WEBHOOK_SECRET_KEY must be at least 32 characters${forExample('WEBHOOK_SECRET_KEY', '$(openssl rand -base64 32)')}`);
  return raw.trim();
}

export const webhooksSettings: Settings<WebhooksConfig> = {
  webhookSecretKey: {
    key: 'webhookSecretKey',
    name: 'WEBHOOK_SECRET_KEY',
    description:
      'Master key (≥ 32 characters) every webhook signing secret is derived from (nothing secret is stored in the database); required in production for webhooks to be registered and sent; in development one is generated into DATA_DIR/webhook-secret.key. Changing it changes every endpoint\'s secret',
    defaultText: '(generated in development)',
    parse: secretKey,
  },
  webhookAllowPrivateTargets: {
    key: 'webhookAllowPrivateTargets',
    name: 'WEBHOOK_ALLOW_PRIVATE_TARGETS',
    description: 'Allow webhook URLs that resolve to loopback, private, link-local or metadata addresses (local testing only: it lets accounts make this service call your internal network)',
    defaultText: 'false',
    parse: flag('WEBHOOK_ALLOW_PRIVATE_TARGETS', false),
  },
  webhookTimeoutMs: {
    key: 'webhookTimeoutMs',
    name: 'WEBHOOK_TIMEOUT_MS',
    description: 'Time limit of one webhook delivery attempt (connect, send, response headers); a slower receiver counts as a failure and is retried',
    defaultText: '10000',
    parse: integer('WEBHOOK_TIMEOUT_MS', 100, 60_000, 10_000),
  },
  webhookExpiringLeadHours: {
    key: 'webhookExpiringLeadHours',
    name: 'WEBHOOK_EXPIRING_LEAD_HOURS',
    description: '`score.expiring` is sent when the earliest counted stamp of a score expires within this many hours (once per expiry date)',
    defaultText: '72',
    parse: integer('WEBHOOK_EXPIRING_LEAD_HOURS', 1, 24 * 90, 72),
  },
  webhookMaxPerScorer: {
    key: 'webhookMaxPerScorer',
    name: 'WEBHOOK_MAX_PER_SCORER',
    description: 'Most webhook endpoints one scorer may have; one more gets 409',
    defaultText: '10',
    parse: integer('WEBHOOK_MAX_PER_SCORER', 1, 1000, 10),
  },
  webhookEndpointsPerAccount: {
    key: 'webhookEndpointsPerAccount',
    name: 'WEBHOOK_ENDPOINTS_PER_ACCOUNT',
    description: 'Most webhook endpoints one account may have over all its scorers; one more gets 409 (webhook_account_limit_reached)',
    defaultText: '10',
    parse: integer('WEBHOOK_ENDPOINTS_PER_ACCOUNT', 1, 10_000, 10),
  },
  webhookInflightPerAccount: {
    key: 'webhookInflightPerAccount',
    name: 'WEBHOOK_INFLIGHT_PER_ACCOUNT',
    description: 'Most webhook attempts of one account in flight at once, over every worker process: endpoints that hang hold at most this many delivery slots',
    defaultText: '4',
    parse: integer('WEBHOOK_INFLIGHT_PER_ACCOUNT', 1, 1000, 4),
  },
  webhookManualRetriesPerDelivery: {
    key: 'webhookManualRetriesPerDelivery',
    name: 'WEBHOOK_MANUAL_RETRIES_PER_DELIVERY',
    description: 'Most manual retries of one delivery (POST …/deliveries/{id}/retry); one more gets 409 (delivery_retry_limit_reached)',
    defaultText: '5',
    parse: integer('WEBHOOK_MANUAL_RETRIES_PER_DELIVERY', 0, 1000, 5),
  },
  webhookDeliveryConcurrency: {
    key: 'webhookDeliveryConcurrency',
    name: 'WEBHOOK_DELIVERY_CONCURRENCY',
    description: 'Webhook deliveries one worker process sends at the same time (never two at once to one endpoint)',
    defaultText: '8',
    parse: integer('WEBHOOK_DELIVERY_CONCURRENCY', 1, 1000, 8),
  },
  webhookPollMs: {
    key: 'webhookPollMs',
    name: 'WEBHOOK_POLL_MS',
    description: 'How often an idle worker looks for webhook work written by other processes (score events, due retries)',
    defaultText: '1000',
    parse: integer('WEBHOOK_POLL_MS', 10, 3_600_000, 1000),
  },
  webhookRotationGraceHours: {
    key: 'webhookRotationGraceHours',
    name: 'WEBHOOK_ROTATION_GRACE_HOURS',
    description: 'After a secret rotation, deliveries carry signatures of both the old and the new secret for this many hours (0 = the old secret stops at once)',
    defaultText: '24',
    parse: integer('WEBHOOK_ROTATION_GRACE_HOURS', 0, 24 * 30, 24),
  },
};
