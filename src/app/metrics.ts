import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { AppContext } from './container.js';
import { RequestMetrics } from '../http/request-metrics.js';
import type { RejectedBudget } from '../http/rate-limit.js';
import { observeResponses } from '../http/response-observers.js';
import { MemoryPublicCacheStore } from '../publicdata/cache.js';
import type { ScoringJobRow } from '../scoring/jobs/scoring-jobs.repository.js';
import type { JobSettled } from '../scoring/jobs/scoring-worker.js';
import type { InlineScored } from '../scoring/jobs/inline-scoring.js';
import type { AttemptEvent } from '../webhooks/webhook-worker.js';
import type { ItemScored } from '../scoring/batches/batch-worker.js';

/** Prometheus metrics of one process, in a registry of its own (tests build many apps). */
export function createMetrics(ctx: AppContext) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'stampgate_process_' });

  const requestMetrics = new RequestMetrics(registry, {
    requests: { name: 'stampgate_http_requests_total', help: 'HTTP requests by route, method and status.' },
    latency: {
      name: 'stampgate_http_request_duration_seconds',
      help: 'HTTP request latency by route, method and status.',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    },
  });
  const rateLimited = new Counter({
    name: 'stampgate_rate_limit_rejections_total',
    help: 'Requests refused with 429: by API-key tier (1-4), `wallet` for the wallet routes\' budgets, `stake_events` for the keyless per-round staking events route, `public` for the public data API.',
    labelNames: ['tier'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'stampgate_scoring_queue_depth',
    help: 'Scoring jobs queued or running (all processes).',
    registers: [registry],
    async collect() {
      try {
        this.set(await ctx.jobs.queueDepth());
      } catch {
        // The database is down: /health/ready says so; keep the last value.
      }
    },
  });
  const jobDuration = new Histogram({
    name: 'stampgate_scoring_job_duration_seconds',
    help: 'Time from claiming a scoring job to settling it, by outcome (a submission scored inline: from scoring to commit, outcome done).',
    labelNames: ['outcome'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    registers: [registry],
  });
  const jobOutcomes = new Counter({
    name: 'stampgate_scoring_jobs_total',
    help: 'Scoring jobs settled by this process, by outcome (done, rerun, error, lost); submissions scored inline, without a job, count as done.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'stampgate_credential_verifications_total',
    help: 'Credential proof checks by this process: cache hits and misses (real verifications).',
    labelNames: ['result'] as const,
    registers: [registry],
    collect() {
      const stats = ctx.verifier.stats();
      this.set({ result: 'hit' }, stats.hits);
      this.set({ result: 'miss' }, stats.misses);
    },
  });

  // The public data response cache, when it is this process's memory store.
  const cacheStore = ctx.publicData.cache.store;
  if (cacheStore instanceof MemoryPublicCacheStore) {
    new Gauge({
      name: 'stampgate_public_cache_bytes',
      help: 'Bytes held by the public data response cache of this process (bound: PUBLIC_CACHE_MAX_BYTES).',
      registers: [registry],
      collect() {
        this.set(cacheStore.bytes);
      },
    });
    new Counter({
      name: 'stampgate_public_cache_evictions_total',
      help: 'Public data responses dropped from the cache of this process to stay within PUBLIC_CACHE_MAX_BYTES.',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(cacheStore.evictions);
      },
    });
  }

  const webhookAttempts = new Counter({
    name: 'stampgate_webhook_deliveries_total',
    help: 'Webhook delivery attempts made by this process, by outcome: delivered, failed (a retry is scheduled), dead (the last attempt failed), lost (another worker had taken the delivery over).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  ctx.webhooks.worker.on('attempt', (attempt: AttemptEvent) => webhookAttempts.inc({ outcome: attempt.state }));
  new Gauge({
    name: 'stampgate_webhook_outbox_lag_seconds',
    help: 'Age of the oldest score event not yet delivered to an enabled webhook endpoint (0 when none is waiting; all processes).',
    registers: [registry],
    async collect() {
      try {
        const oldest = await ctx.webhooks.queue.oldestUndeliveredAt();
        this.set(oldest === null ? 0 : Math.max(0, Date.now() - oldest) / 1000);
      } catch {
        // The database is down: /health/ready says so; keep the last value.
      }
    },
  });
  const batchAddresses = new Counter({
    name: 'stampgate_batch_addresses_scored_total',
    help: 'Addresses of asynchronous batches finished by this process, by outcome (done, failed).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  ctx.batches.worker.on('scored', (item: ItemScored) => batchAddresses.inc({ outcome: item.outcome }));

  const startedAt = new Map<string, number>();
  ctx.worker.on('started', (job: ScoringJobRow) => startedAt.set(`${job.scorer_id}:${job.address}`, performance.now()));
  ctx.worker.on('settled', (settled: JobSettled) => {
    const key = `${settled.scorerId}:${settled.address}`;
    const start = startedAt.get(key);
    startedAt.delete(key);
    jobOutcomes.inc({ outcome: settled.outcome });
    if (start !== undefined) jobDuration.observe({ outcome: settled.outcome }, (performance.now() - start) / 1000);
  });
  ctx.worker.on('inlineScored', (scored: InlineScored) => {
    jobOutcomes.inc({ outcome: 'done' });
    jobDuration.observe({ outcome: 'done' }, scored.durationMs / 1000);
  });

  return {
    registry,
    rateLimitRejected(tier: RejectedBudget) {
      rateLimited.inc({ tier: String(tier) });
    },
    /** Both halves on one server (a worker's monitoring listener, or a development API server). */
    register(app: FastifyInstance) {
      observeResponses(app, [this.observeResponse]);
      this.serve(app);
    },
    /** Counts an answered request (for `observeResponses`). */
    observeResponse(request: FastifyRequest, reply: FastifyReply) {
      // Unknown URLs share one label so that scanners cannot blow up the series count.
      requestMetrics.record(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000);
    },
    /** Serves `/metrics` on `app`. */
    serve(app: FastifyInstance) {
      app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
        reply.header('content-type', registry.contentType);
        return registry.metrics();
      });
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
