import type { Config } from '../config/index.js';
import type { Database } from '../db/connection.js';
import type { AccountService } from '../scoring/accounts/accounts.service.js';
import { deliveryQueueRepository } from './delivery-queue.repository.js';
import type { HostResolver } from './target-guard.js';
import { webhookEndpointsRepository } from './webhook-endpoints.repository.js';
import { derivedWebhookSecrets, loadOrCreateWebhookKey } from './webhook-secrets.js';
import { WebhookWorker } from './webhook-worker.js';
import { webhookService } from './webhooks.service.js';
import { type AppendScoreEvent, expiringScan } from './expiring-scan.js';
import { eventFeedService, scoreEventFeed } from './score-event-feed.js';

export interface WebhookServicesOptions {
  accounts: AccountService;
  /** The score event log's one insert (score.expiring events go through it too). */
  appendScoreEvent: AppendScoreEvent;
  /** Scheduling clock of the worker and the services (tests drive it); the system clock otherwise. */
  clock?: () => number;
  random?: () => number;
  resolve?: HostResolver;
  /** How often the score.expiring scan runs, by `clock` (default one minute). */
  expiringScanMs?: number;
}

/**
 * Webhooks and the event feed: endpoint management for the routes, and the worker that `worker` and `serve`
 * start (src/cli/background-work.ts). Without WEBHOOK_SECRET_KEY in production, registration answers 503 and
 * nothing is sent; in development the key is generated once into DATA_DIR.
 */
export async function createWebhookServices(config: Config, database: Database, options: WebhookServicesOptions) {
  const masterKey = config.webhookSecretKey ?? (config.env === 'development' ? await loadOrCreateWebhookKey(config.dataDir) : null);
  const secrets = masterKey ? derivedWebhookSecrets(masterKey) : null;
  const production = config.env === 'production';
  const queue = deliveryQueueRepository(database);
  const endpoints = webhookService(webhookEndpointsRepository(database), options.accounts, secrets, {
    maxPerScorer: config.webhookMaxPerScorer,
    maxPerAccount: config.webhookEndpointsPerAccount,
    manualRetriesPerDelivery: config.webhookManualRetriesPerDelivery,
    checkTimeoutMs: Math.min(config.webhookTimeoutMs, 5000),
    allowPrivateTargets: config.webhookAllowPrivateTargets,
    production,
    rotationGraceMs: config.webhookRotationGraceHours * 3_600_000,
    resolve: options.resolve,
    clock: options.clock,
  });
  const feed = scoreEventFeed(database);
  const worker = new WebhookWorker(
    {
      queue,
      secrets,
      loadPayload: (eventId) => feed.payload(eventId),
      scanExpiring: expiringScan(database, options.appendScoreEvent, config.webhookExpiringLeadHours * 3_600_000),
      clock: options.clock,
      random: options.random,
    },
    {
      concurrency: config.webhookDeliveryConcurrency,
      inFlightPerAccount: config.webhookInflightPerAccount,
      pollMs: config.webhookPollMs,
      timeoutMs: config.webhookTimeoutMs,
      allowPrivateTargets: config.webhookAllowPrivateTargets,
      production,
      expiringScanMs: options.expiringScanMs ?? 60_000,
      resolve: options.resolve,
    },
  );
  return { configured: secrets !== null, endpoints, feed: eventFeedService(feed, options.accounts), queue, worker };
}

export type WebhookServices = Awaited<ReturnType<typeof createWebhookServices>>;
