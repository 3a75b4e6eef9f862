/** Scoring service settings: keys, nonces, stamps, the scoring worker, wallet sessions. */
import { integer, issuerList, type Settings } from './parse.js';

export interface ScoringConfig {
  nonceTtlSeconds: number;
  apiKeyCacheTtlMs: number;
  rateLimitTier4: number;
  rateLimitWindowMs: number;
  maxApiKeysPerAccount: number;
  trustedIssuers: string[];
  stampCatalogueFile: string | null;
  credentialCacheSize: number;
  submitWaitMs: number;
  scoringConcurrency: number;
  scoringLeaseMs: number;
  scoringPollMs: number;
  scoringMaxAttempts: number;
  scoringBackoffMs: number;
  walletSessionTtlSeconds: number;
  scoreCacheTtlMs: number;
  scoreCacheMaxEntries: number;
}

export const scoringSettings: Settings<ScoringConfig> = {
  nonceTtlSeconds: {
    key: 'nonceTtlSeconds',
    name: 'NONCE_TTL_SECONDS',
    description: 'How long a nonce can be used: from `GET /registry/signing-message` and the Sign-In with Ethereum nonce of `GET /registry/wallet/siwe-nonce`',
    defaultText: '600',
    parse: integer('NONCE_TTL_SECONDS', 10, 86_400, 600),
  },

  apiKeyCacheTtlMs: {
    key: 'apiKeyCacheTtlMs',
    name: 'API_KEY_CACHE_TTL_MS',
    description: 'How long a looked-up API key is reused from memory; also the longest a revoked key keeps working (0 disables)',
    defaultText: '5000',
    parse: integer('API_KEY_CACHE_TTL_MS', 0, 600_000, 5000),
  },

  rateLimitTier4: {
    key: 'rateLimitTier4',
    name: 'RATE_LIMIT_TIER4',
    description: 'Requests per window for tier-4 keys and accounts (tiers 1–3 are fixed at 125, 350 and 2000)',
    defaultText: '10000',
    parse: integer('RATE_LIMIT_TIER4', 2001, 100_000_000, 10_000),
  },

  rateLimitWindowMs: {
    key: 'rateLimitWindowMs',
    name: 'RATE_LIMIT_WINDOW_MS',
    description: 'Length of the rate-limit window',
    defaultText: '900000 (15 minutes)',
    parse: integer('RATE_LIMIT_WINDOW_MS', 1000, 86_400_000, 900_000),
  },

  maxApiKeysPerAccount: {
    key: 'maxApiKeysPerAccount',
    name: 'MAX_API_KEYS_PER_ACCOUNT',
    description: 'Live API keys one account may hold (account routes and CLI alike); one more is 409 `api_key_limit_reached`',
    defaultText: '20',
    parse: integer('MAX_API_KEYS_PER_ACCOUNT', 1, 10_000, 20),
  },

  trustedIssuers: {
    key: 'trustedIssuers',
    name: 'TRUSTED_ISSUERS',
    description: 'Comma-separated issuer DIDs (`did:ethr:0x…`) whose stamps count; more can be added with `stampgate issuers add`',
    defaultText: '(none)',
    parse: issuerList,
  },

  stampCatalogueFile: {
    key: 'stampCatalogueFile',
    name: 'STAMP_CATALOGUE_FILE',
    description: 'JSON stamp catalogue (platforms, stamps, default weights) replacing the shipped one; a malformed file stops start-up',
    defaultText: '(shipped catalogue)',
    parse: (raw) => (raw === undefined || raw.trim() === '' ? null : raw.trim()),
  },

  credentialCacheSize: {
    key: 'credentialCacheSize',
    name: 'CREDENTIAL_CACHE_SIZE',
    description: 'How many credential verification results are kept in memory (by credential digest)',
    defaultText: '50000',
    parse: integer('CREDENTIAL_CACHE_SIZE', 0, 10_000_000, 50_000),
  },

  submitWaitMs: {
    key: 'submitWaitMs',
    name: 'SUBMIT_WAIT_MS',
    description: 'How long `POST /registry/submit-passport` waits for the score before answering `PROCESSING`',
    defaultText: '1000',
    parse: integer('SUBMIT_WAIT_MS', 0, 55_000, 1000),
  },

  scoringConcurrency: {
    key: 'scoringConcurrency',
    name: 'SCORING_CONCURRENCY',
    description:
      'Scorings one process runs at the same time: queued jobs, and submissions scored at once in the submitting process (a submission that finds every slot taken waits in the queue)',
    defaultText: '16',
    parse: integer('SCORING_CONCURRENCY', 1, 256, 16),
  },

  scoreCacheTtlMs: {
    key: 'scoreCacheTtlMs',
    name: 'SCORE_CACHE_TTL_MS',
    description:
      'How long a finished score (DONE or ERROR) may be answered from memory by the single-score read (0 disables). Not what keeps it right: every score write is announced to every process before it is acknowledged (SQLite: the database file tells; PostgreSQL: Redis, or LISTEN/NOTIFY without Redis), and while a process cannot hear the others it reads the database; this bounds only an answer whose notice was lost',
    defaultText: '10000',
    parse: integer('SCORE_CACHE_TTL_MS', 0, 3_600_000, 10_000),
  },

  scoreCacheMaxEntries: {
    key: 'scoreCacheMaxEntries',
    name: 'SCORE_CACHE_MAX_ENTRIES',
    description: 'Most scores the single-score read keeps in memory (each about 1 KB)',
    defaultText: '50000',
    parse: integer('SCORE_CACHE_MAX_ENTRIES', 1, 10_000_000, 50_000),
  },

  scoringLeaseMs: {
    key: 'scoringLeaseMs',
    name: 'SCORING_LEASE_MS',
    description: "How long a worker's claim on a job lasts; a running job's lease is renewed every third of it (heartbeat), so a dead worker's job is taken over one lease after its last beat",
    defaultText: '30000',
    parse: integer('SCORING_LEASE_MS', 100, 3_600_000, 30_000),
  },

  scoringPollMs: {
    key: 'scoringPollMs',
    name: 'SCORING_POLL_MS',
    description: 'How often an idle worker looks for jobs (submissions in the same process wake it at once)',
    defaultText: '500',
    parse: integer('SCORING_POLL_MS', 10, 60_000, 500),
  },

  scoringMaxAttempts: {
    key: 'scoringMaxAttempts',
    name: 'SCORING_MAX_ATTEMPTS',
    description: 'Attempts at a failing scoring job before its score is set to `ERROR`',
    defaultText: '5',
    parse: integer('SCORING_MAX_ATTEMPTS', 1, 100, 5),
  },

  scoringBackoffMs: {
    key: 'scoringBackoffMs',
    name: 'SCORING_BACKOFF_MS',
    description: 'Delay before the first retry of a failed job; it doubles with each further attempt',
    defaultText: '1000',
    parse: integer('SCORING_BACKOFF_MS', 0, 3_600_000, 1000),
  },

  walletSessionTtlSeconds: {
    key: 'walletSessionTtlSeconds',
    name: 'WALLET_SESSION_TTL_SECONDS',
    description: 'Lifetime of a wallet session token obtained with Sign-In with Ethereum',
    defaultText: '900',
    parse: integer('WALLET_SESSION_TTL_SECONDS', 60, 86_400, 900),
  },
};
