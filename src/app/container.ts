import { EventEmitter } from 'node:events';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config/index.js';
import { jobSignals } from '../db/job-signals.js';
import { PostgresNotices, postgresBusTransport } from '../db/pg-notices.js';
import { connectRedis, RedisWatch, redisTransport } from '../db/redis.js';
import { EventBus, inProcessTransport } from '../events/bus.js';
import { defaultPeerTimings, type PeerTimings } from '../events/bus-peers.js';
import { ScoreReadCache } from '../scoring/scores/score-read-cache.js';
import type { Database } from '../db/connection.js';
import { accountService } from '../scoring/accounts/accounts.service.js';
import { accountsRepository } from '../scoring/accounts/accounts.repository.js';
import { apiKeyService } from '../scoring/accounts/api-keys.service.js';
import { apiKeysRepository } from '../scoring/accounts/api-keys.repository.js';
import { loadCatalogue } from '../scoring/stamps/catalogue.js';
import { CredentialVerifier } from '../scoring/stamps/credentials.js';
import { issuerDidFromPrivateKey, loadOrCreateIssuerKey } from '../scoring/stamps/dev-issuer.js';
import { trustedIssuerService } from '../scoring/stamps/issuers.service.js';
import { issuersRepository } from '../scoring/stamps/issuers.repository.js';
import { nonceService } from '../scoring/scores/nonces.service.js';
import { noncesRepository } from '../scoring/scores/nonces.repository.js';
import { scorePassport } from '../scoring/jobs/passport-scoring.js';
import { scoringJobsRepository } from '../scoring/jobs/scoring-jobs.repository.js';
import { inlineScoring } from '../scoring/jobs/inline-scoring.js';
import { type JobSettled, ScoringWorker } from '../scoring/jobs/scoring-worker.js';
import { workerHeartbeatsRepository } from '../scoring/jobs/worker-heartbeats.repository.js';
import { WorkerWatch } from '../events/worker-watch.js';
import { scoreService } from '../scoring/scores/scores.service.js';
import { scoresRepository } from '../scoring/scores/scores.repository.js';
import { createV2Services } from '../scoring/scores/v2.module.js';
import { submissionService } from '../scoring/scores/submission.service.js';
import { stampPageService } from '../scoring/stamps/stamp-pages.service.js';
import { stampService } from '../scoring/stamps/stamps.service.js';
import { stampsRepository } from '../scoring/stamps/stamps.repository.js';
import { createStakingServices } from '../staking/staking.module.js';
import { createWalletServices } from '../scoring/wallet/wallet.module.js';
import { walletOwnership } from '../chain/wallet-ownership.js';
import { createPublicDataModule } from '../publicdata/publicdata.module.js';
import { createWebhookServices, type WebhookServicesOptions } from '../webhooks/webhooks.module.js';
import { insertOutboxRows } from '../webhooks/delivery-queue.repository.js';
import { createBatchServices } from '../scoring/batches/batches.module.js';
import { createPortalServices } from '../portal/portal.module.js';
import { createModelsModule } from '../models/models.module.js';
import { createOnchainModule } from '../onchain/onchain.module.js';

export interface ContextOptions {
  /** Where infrastructure warnings go (the server passes its logger). */
  log?: Pick<FastifyBaseLogger, 'warn' | 'info'>;
  /** This process serves HTTP and needs the shared rate-limit store. */
  http?: boolean;
  /** How often an HTTP process announces itself to publishers, and its lease (tests; bus-peers.ts). */
  busPeers?: PeerTimings;
  /** Clock, jitter and DNS of the webhook worker (tests). */
  webhooks?: Omit<WebhookServicesOptions, 'accounts' | 'appendScoreEvent'>;
}

const silentLog = { warn: () => {}, info: () => {} };

// How often a waiting submission re-reads its score while no notice of its job can be counted on.
const submitPollMs = 50;

/**
 * Wires repositories into domain services once per process. The HTTP server,
 * the CLI and workers all use the same context, so they share one behaviour.
 */
export async function createAppContext(config: Config, database: Database, options: ContextOptions = {}) {
  const log = options.log ?? silentLog;
  const redisWatch = config.redisUrl ? new RedisWatch(log) : null;
  // One LISTEN connection per PostgreSQL process carries job wake-ups, and the bus when there is no Redis.
  const notices = database.dialect === 'postgres' ? new PostgresNotices(database, log) : null;
  const transport = config.redisUrl && redisWatch ? redisTransport(config.redisUrl, redisWatch) : notices ? postgresBusTransport(notices, database) : null;
  // The score cache relies on the bus unless SQLite's file tells it of other processes' writes;
  // then a write is acknowledged only once every process answering from memory has heard it.
  const cacheOnBus = transport !== null && !database.writesElsewhere && config.scoreCacheTtlMs > 0;
  const bus = new EventBus(transport ?? inProcessTransport(), { peers: cacheOnBus ? (options.busPeers ?? defaultPeerTimings) : undefined });
  // Rate-limit budgets need Redis only where HTTP is served.
  const redis = config.redisUrl && redisWatch && options.http ? connectRedis(config.redisUrl, redisWatch) : null;
  // Scoring jobs announce themselves through the database, never through Redis.
  const signals = jobSignals(database, notices);
  // An HTTP process hears the others from the start: the score cache trusts itself only then.
  // A process whose writes wait for the peers hears the bus too (else each would wait a lease).
  if (options.http || cacheOnBus) void notices?.listen();
  if (options.http) bus.startServing();
  const catalogue = loadCatalogue(config.stampCatalogueFile ?? undefined);
  // The development issuer exists only in development; production never creates or trusts it.
  const devIssuerKey = config.env === 'development' ? await loadOrCreateIssuerKey(config.dataDir) : null;
  const accountsRepo = accountsRepository(database.db);
  const accounts = accountService(accountsRepo, {
    scorerCacheTtlMs: config.apiKeyCacheTtlMs,
    defaultThreshold: catalogue.threshold,
    notifyScorerChange: (scorerId) => bus.publish('scorerChanged', { scorerId }),
  });
  const issuers = trustedIssuerService(issuersRepository(database.db), {
    configured: config.trustedIssuers,
    developmentIssuer: devIssuerKey ? issuerDidFromPrivateKey(devIssuerKey) : null,
    cacheTtlMs: config.apiKeyCacheTtlMs,
    notifyChange: () => bus.publish('issuersChanged', {}),
  });
  const stampsRepo = stampsRepository(database);
  const credentialLimits = {
    maxDepth: config.credentialMaxDepth,
    maxStringLength: config.credentialMaxStringLength,
    maxValues: config.credentialMaxValues,
  };
  const verifier = new CredentialVerifier({ cacheSize: config.credentialCacheSize, limits: credentialLimits });
  const scoreReadCache = new ScoreReadCache({
    ttlMs: config.scoreCacheTtlMs,
    maxEntries: config.scoreCacheMaxEntries,
    // SQLite: other processes' commits show in the file's change counter (whatever the bus is);
    // PostgreSQL: only the bus (Redis or LISTEN/NOTIFY) tells, while its connection is up.
    epoch: database.writesElsewhere ?? (() => bus.generation()),
  });
  const scoresWritten = (scorerId: number, addresses: readonly string[]) =>
    bus.publishAll('scoreChanged', addresses.map((address) => ({ scorerId, address })));
  // Every score event reaches the webhook outbox in the transaction that appends it.
  const v2 = createV2Services(database, { stamps: stampsRepo, issuers, catalogue, accounts }, Date.now, scoresWritten, [insertOutboxRows]);
  const jobs = scoringJobsRepository(database, v2.events);
  const heartbeats = workerHeartbeatsRepository(database);
  const scoreFromStore = (scorerId: number, address: string, now: number) =>
    scorePassport({ stamps: stampsRepo, issuers, catalogue, accounts }, scorerId, address, now);
  const worker = new ScoringWorker(
    jobs,
    scoreFromStore,
    {
      concurrency: config.scoringConcurrency,
      leaseMs: config.scoringLeaseMs,
      pollMs: config.scoringPollMs,
      maxAttempts: config.scoringMaxAttempts,
      backoffBaseMs: config.scoringBackoffMs,
      scoresWritten,
      presence: heartbeats,
    },
  );
  // Started by `serve`: tells when jobs wait and no worker (of any process) looks for them.
  const workerWatch = new WorkerWatch(
    { waiting: (now) => jobs.dueJobs(now), lastSeen: () => heartbeats.lastSeen() },
    {
      leaseMs: config.scoringLeaseMs,
      pollMs: config.scoringPollMs,
      code: 'no_scoring_worker',
      work: 'scoring job',
      consequence: 'their submissions stay PROCESSING until a worker runs (`stampgate worker`, or `stampgate serve` without --no-worker).',
      log,
    },
  );
  const stamps = stampService(stampsRepo, verifier, issuers, Date.now, { limits: credentialLimits, maxStamps: config.maxStampsPerRequest });
  const apiKeys = apiKeyService(apiKeysRepository(database), accountsRepo, {
    ttlMs: config.apiKeyCacheTtlMs,
    maxPerAccount: config.maxApiKeysPerAccount,
    notifyChange: (prefix) => bus.publish('apiKeyChanged', { prefix }),
  });
  const staking = createStakingServices(config, database);
  const publicData = createPublicDataModule(config, database, {
    announce: async (prefixes) => {
      for (const prefix of prefixes) await bus.publish('publicDataChanged', { prefix });
    },
  });
  // Every process hears when a job settles, wherever it ran, so that a submission waiting in an
  // API process answers as soon as a worker elsewhere is done (not at its next look).
  const settledJobs = new EventEmitter().setMaxListeners(0);
  worker.on('settled', (settled: JobSettled) => signals.settled(settled.scorerId, settled.address));
  const scores = scoreService(scoresRepository(database.db), jobs, worker, {
    submitWaitMs: config.submitWaitMs,
    waitPollMs: submitPollMs,
    // True only while the LISTEN connection is up: every process's settled notices arrive then.
    noticesFromEveryProcess: () => notices?.generation != null,
    inline: inlineScoring(worker, jobs, scoreFromStore),
    eventAppended: () => webhooks.worker.notify(),
    settledJobs,
    announceJob: () => signals.queued(),
    retryAfterSeconds: config.retryAfterSeconds,
    readCache: scoreReadCache,
    scoresWritten,
  });
  signals.on((signal) => {
    // A submission queued a job: workers start on it now rather than at their next poll.
    if (signal.kind === 'queued') worker.notify();
    else settledJobs.emit('settled', { scorerId: signal.scorerId, address: signal.address });
  });
  bus.on('apiKeyChanged', ({ prefix }) => apiKeys.forget(prefix));
  bus.on('scorerChanged', ({ scorerId }) => {
    accounts.forgetScorer(scorerId);
    scoreReadCache.forgetScorer(scorerId);
  });
  bus.on('scoreChanged', ({ scorerId, address }) => scoreReadCache.invalidate(scorerId, address));
  bus.on('issuersChanged', () => issuers.forget());
  bus.on('publicDataChanged', ({ prefix }) => void publicData.cache.forget([prefix]));
  const webhooks = await createWebhookServices(config, database, { accounts, appendScoreEvent: v2.events.appendScoreEvent, ...options.webhooks });
  // A settled job may have appended a score event: this process's webhook worker looks at once.
  worker.on('settled', () => webhooks.worker.notify());
  const batches = createBatchServices(config, database, { accounts, v2: v2.scores });
  const nonces = nonceService(noncesRepository(database.db), config.nonceTtlSeconds);
  // One per process: it caches the smart-wallet endpoint's chain id.
  const ownership = walletOwnership(config);
  const portal = createPortalServices(config, database, { accounts, apiKeys, ownership, log });
  const onchain = await createOnchainModule(config, { database, v2: v2.scores, accounts, stamps: stampsRepo, issuers, batches: batches.service, log });
  if (options.http) portal.usage.start();
  return {
    config,
    database,
    catalogue,
    verifier,
    devIssuerKey,
    accounts,
    apiKeys,
    bus,
    redis,
    redisWatch,
    signals,
    /**
     * Stops the webhook, batch and push workers (no new claims; work in hand finishes). Shutdown calls it at
     * once, beside the HTTP drain, so that a delivery or chunk started during the drain cannot outlast
     * the shutdown budget and leave its lease held. The scoring worker keeps running until close():
     * submissions answered during the drain are scored.
     */
    async stopBackgroundWork(): Promise<void> {
      await Promise.all([webhooks.worker.stop(), batches.worker.stop(), onchain.push.worker.stop()]);
    },
    /** Stops the scoring worker and the staking indexer, and closes every connection this context opened. */
    async close(): Promise<void> {
      workerWatch.stop();
      onchain.push.watch?.stop();
      await scores.close();
      await portal.usage.stop();
      await Promise.all([worker.stop(), webhooks.worker.stop(), batches.worker.stop(), onchain.push.worker.stop()]);
      await staking.indexer?.stop();
      await signals.close();
      await bus.close();
      redis?.disconnect();
      await database.close();
    },
    nonces,
    submissions: submissionService({ accounts, nonces, scores, ownership }),
    issuers,
    stamps,
    stampPages: stampPageService(stampsRepo, catalogue),
    wallet: createWalletServices(config, database, { stamps, ownership }),
    staking,
    publicData,
    portal,
    jobs,
    worker,
    heartbeats,
    workerWatch,
    scores,
    scoreReadCache,
    v2,
    webhooks,
    batches,
    models: createModelsModule({ config, database }),
    onchain,
  };
}

export type AppContext = Awaited<ReturnType<typeof createAppContext>>;
