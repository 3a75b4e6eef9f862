/**
 * Environment → one validated, typed configuration object. Every variable is
 * declared once in `settings`; the README's configuration table and the
 * `stampgate config` command are generated from the same list, so they cannot drift.
 */

import { isIP } from 'node:net';

export type Environment = 'development' | 'production';

export interface Config {
  env: Environment;
  port: number;
  /** null: unset, which production refuses at start-up (development binds 127.0.0.1). */
  host: string | null;
  databaseUrl: string;
  publicBaseUrl: string | null;
  iconBaseUrl: string | null;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  dataDir: string;
  bodyLimitBytes: number;
  nonceTtlSeconds: number;
  apiKeyCacheTtlMs: number;
  rateLimitTier4: number;
  rateLimitWindowMs: number;
  trustedIssuers: string[];
  stampCatalogueFile: string | null;
  credentialCacheSize: number;
  maxStampsPerRequest: number;
  credentialMaxDepth: number;
  credentialMaxStringLength: number;
  credentialMaxValues: number;
  walletBodyLimitBytes: number;
  submitWaitMs: number;
  scoringConcurrency: number;
  scoringLeaseMs: number;
  scoringPollMs: number;
  scoringMaxAttempts: number;
  scoringBackoffMs: number;
  databaseConnectTimeoutMs: number;
  databaseQueryTimeoutMs: number;
  retryAfterSeconds: number;
  shutdownTimeoutMs: number;
  scoringApiEnabled: boolean;
  publicDataApiEnabled: boolean;
  corsOrigins: string[];
  walletSessionTtlSeconds: number;
  siweAllowedChainIds: number[];
  governanceToken: string;
  stakeEventsRateLimitPerMinute: number;
  stakingRpcUrl: string | null;
  stakingContractAddress: string | null;
  stakingStartBlock: number;
  stakingConfirmations: number;
  stakingBlockRange: number;
  stakingPollMs: number;
  publicCacheTtlSeconds: number;
  publicRateLimitPerMinute: number;
  publicCacheMaxBytes: number;
  sessionSecret: string | null;
  oauthClientId: string | null;
  oauthClientSecret: string | null;
  oauthAuthorizeUrl: string;
  oauthTokenUrl: string;
  oauthUserInfoUrl: string;
  oauthScope: string;
  ethRpcUrl: string | null;
  legacyBountyIndexAddress: string | null;
  redisUrl: string | null;
  metricsEnabled: boolean;
  workerPort: number | null;
  trustProxy: string[];
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  outboundTimeoutMs: number;
  metricsPort: number | null;
  metricsPublic: boolean;
  bodyMaxDepth: number;
}

interface Setting<K extends keyof Config> {
  key: K;
  name: string;
  description: string;
  /** Shown in the README; `undefined` means "unset". */
  defaultText: string;
  parse: (raw: string | undefined, env: NodeJS.ProcessEnv) => Config[K];
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

class BadValue extends Error {}

function integer(name: string, min: number, max: number, fallback: number) {
  return (raw: string | undefined): number => {
    if (raw === undefined || raw === '') return fallback;
    if (!/^\d+$/.test(raw.trim())) throw new BadValue(`${name}=${JSON.stringify(raw)} is not a whole number`);
    const value = Number(raw.trim());
    if (value < min || value > max) throw new BadValue(`${name}=${raw} must be between ${min} and ${max}`);
    return value;
  };
}

function oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T) {
  return (raw: string | undefined): T => {
    if (raw === undefined || raw === '') return fallback;
    const value = raw.trim().toLowerCase() as T;
    if (!allowed.includes(value)) {
      throw new BadValue(`${name}=${JSON.stringify(raw)} must be one of: ${allowed.join(', ')}`);
    }
    return value;
  };
}

function databaseUrl(raw: string | undefined, env: NodeJS.ProcessEnv): string {
  if (raw === undefined || raw === '') return `sqlite:${(env.DATA_DIR ?? '').trim() || './data'}/stampgate.sqlite`;
  const value = raw.trim();
  if (/^postgres(ql)?:\/\/.+/.test(value) || /^sqlite:.+/.test(value)) return value;
  throw new BadValue(
    `DATABASE_URL=${JSON.stringify(raw)} must start with postgres:// (PostgreSQL) or sqlite: (for example sqlite:./data/stampgate.sqlite or sqlite::memory:)`,
  );
}

function publicBaseUrl(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new BadValue(`PUBLIC_BASE_URL=${JSON.stringify(raw)} is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new BadValue(`PUBLIC_BASE_URL=${JSON.stringify(raw)} must use http or https`);
  }
  return url.toString().replace(/\/+$/, '');
}

function iconBaseUrl(raw: string | undefined): string | null {
  if (raw === undefined || raw.trim() === '') return null;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new BadValue(`ICON_BASE_URL=${JSON.stringify(raw)} is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BadValue(`ICON_BASE_URL=${JSON.stringify(raw)} must use http or https`);
  if (url.search !== '' || url.hash !== '') throw new BadValue(`ICON_BASE_URL=${JSON.stringify(raw)} must not carry a query or fragment`);
  return url.toString().replace(/\/+$/, '');
}

const settings: { [K in keyof Config]: Setting<K> } = {
  env: {
    key: 'env',
    name: 'STAMPGATE_ENV',
    description:
      '`development` (demo account on first start, development issuer trusted) or `production` (creates nothing, prints no secrets)',
    defaultText: 'development',
    parse: oneOf('STAMPGATE_ENV', ['development', 'production'] as const, 'development'),
  },
  port: {
    key: 'port',
    name: 'PORT',
    description: 'TCP port the HTTP server listens on',
    defaultText: '8000',
    parse: integer('PORT', 0, 65535, 8000),
  },
  host: {
    key: 'host',
    name: 'HOST',
    description:
      'Interface the HTTP server binds to (`0.0.0.0` for every interface, as a container needs). Required in production; in development unset = `127.0.0.1` (this machine only)',
    defaultText: '127.0.0.1 (development); required in production',
    parse: (raw, env) => (raw === undefined || raw.trim() === '' ? (isProduction(env) ? null : '127.0.0.1') : raw.trim()),
  },
  databaseUrl: {
    key: 'databaseUrl',
    name: 'DATABASE_URL',
    description: '`sqlite:<file>` for the embedded database, or `postgres://user@host:5432/db` for PostgreSQL',
    defaultText: 'sqlite:<DATA_DIR>/stampgate.sqlite',
    parse: databaseUrl,
  },
  publicBaseUrl: {
    key: 'publicBaseUrl',
    name: 'PUBLIC_BASE_URL',
    description: 'Absolute URL clients reach this server at: the Sign-In with Ethereum domain, login redirects and pagination links. Required in production; in development unset = taken from the request',
    defaultText: '(unset)',
    parse: publicBaseUrl,
  },
  iconBaseUrl: {
    key: 'iconBaseUrl',
    name: 'ICON_BASE_URL',
    description:
      'Absolute URL of a directory (a CDN, say) holding the catalogue icon files: every `icon` is rendered as `<ICON_BASE_URL>/<file>`. Unset = this server\'s own `/static/icons/<file>` under PUBLIC_BASE_URL (in development, the request origin)',
    defaultText: '(unset)',
    parse: iconBaseUrl,
  },
  logLevel: {
    key: 'logLevel',
    name: 'LOG_LEVEL',
    description: 'pino log level: fatal, error, warn, info, debug, trace or silent',
    defaultText: 'info',
    parse: oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
  },
  dataDir: {
    key: 'dataDir',
    name: 'DATA_DIR',
    description: 'Directory for local state (the SQLite file by default, the development issuer key)',
    defaultText: './data',
    parse: (raw) => (raw === undefined || raw.trim() === '' ? './data' : raw.trim()),
  },
  bodyLimitBytes: {
    key: 'bodyLimitBytes',
    name: 'BODY_LIMIT_BYTES',
    description: 'Largest request body accepted; larger bodies get 413',
    defaultText: '1048576',
    parse: integer('BODY_LIMIT_BYTES', 1024, 64 * 1024 * 1024, 1024 * 1024),
  },
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
    description: 'Requests per window for tier-4 keys (tiers 1–3 are fixed at 125, 350 and 2000)',
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
  maxStampsPerRequest: {
    key: 'maxStampsPerRequest',
    name: 'MAX_STAMPS_PER_REQUEST',
    description: 'Most credentials in one wallet stamp write; more gets 400 (an import file is screened credential by credential, whatever its length)',
    defaultText: '100',
    parse: integer('MAX_STAMPS_PER_REQUEST', 1, 10_000, 100),
  },
  credentialMaxDepth: {
    key: 'credentialMaxDepth',
    name: 'CREDENTIAL_MAX_DEPTH',
    description: 'Deepest nesting of objects and arrays in a credential (a real stamp has 6 levels); deeper is refused before any hashing',
    defaultText: '8',
    parse: integer('CREDENTIAL_MAX_DEPTH', 6, 64, 8),
  },
  credentialMaxStringLength: {
    key: 'credentialMaxStringLength',
    name: 'CREDENTIAL_MAX_STRING_LENGTH',
    description: 'Longest string or property name in a credential, in characters (a real stamp\'s longest is its 132-character signature); longer is refused before any hashing',
    defaultText: '1024',
    parse: integer('CREDENTIAL_MAX_STRING_LENGTH', 256, 1_048_576, 1024),
  },
  credentialMaxValues: {
    key: 'credentialMaxValues',
    name: 'CREDENTIAL_MAX_VALUES',
    description: 'Most values (objects, arrays, strings, numbers) in a credential (a real stamp has about 100, one more per extra nullifier); more is refused before any hashing',
    defaultText: '400',
    parse: integer('CREDENTIAL_MAX_VALUES', 128, 1_000_000, 400),
  },
  walletBodyLimitBytes: {
    key: 'walletBodyLimitBytes',
    name: 'WALLET_BODY_LIMIT_BYTES',
    description: 'Largest request body of the wallet routes (`/registry/wallet/*`), at most BODY_LIMIT_BYTES; larger bodies get 413',
    defaultText: '524288',
    parse: integer('WALLET_BODY_LIMIT_BYTES', 1024, 64 * 1024 * 1024, 512 * 1024),
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
    description: 'Scoring jobs one worker runs at the same time',
    defaultText: '4',
    parse: integer('SCORING_CONCURRENCY', 1, 256, 4),
  },
  scoringLeaseMs: {
    key: 'scoringLeaseMs',
    name: 'SCORING_LEASE_MS',
    description: "How long a worker's claim on a job lasts; a job of a dead worker is taken over after it",
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
  databaseConnectTimeoutMs: {
    key: 'databaseConnectTimeoutMs',
    name: 'DATABASE_CONNECT_TIMEOUT_MS',
    description: 'How long opening a PostgreSQL connection, or waiting for a free pooled one, may take before the request is answered 503 `database_unavailable`',
    defaultText: '1000',
    parse: integer('DATABASE_CONNECT_TIMEOUT_MS', 100, 60_000, 1000),
  },
  databaseQueryTimeoutMs: {
    key: 'databaseQueryTimeoutMs',
    name: 'DATABASE_QUERY_TIMEOUT_MS',
    description:
      'How long one statement (PostgreSQL `statement_timeout`, SQLite lock wait) may take before it fails with 503 `database_unavailable`',
    defaultText: '5000',
    parse: integer('DATABASE_QUERY_TIMEOUT_MS', 100, 600_000, 5000),
  },
  retryAfterSeconds: {
    key: 'retryAfterSeconds',
    name: 'RETRY_AFTER_SECONDS',
    description: 'The `Retry-After` of 503 answers (`database_unavailable`, `shutting_down`)',
    defaultText: '5',
    parse: integer('RETRY_AFTER_SECONDS', 1, 3600, 5),
  },
  shutdownTimeoutMs: {
    key: 'shutdownTimeoutMs',
    name: 'SHUTDOWN_TIMEOUT_MS',
    description: 'On SIGTERM/SIGINT, how long requests and scoring jobs in progress may take to finish before connections are closed',
    defaultText: '10000',
    parse: integer('SHUTDOWN_TIMEOUT_MS', 0, 600_000, 10_000),
  },
  scoringApiEnabled: {
    key: 'scoringApiEnabled',
    name: 'SCORING_API_ENABLED',
    description: 'Serve the scoring service (`/registry/…`)',
    defaultText: 'true',
    parse: flag('SCORING_API_ENABLED', true),
  },
  publicDataApiEnabled: {
    key: 'publicDataApiEnabled',
    name: 'PUBLIC_DATA_API_ENABLED',
    description: 'Serve the public data API (`/api/v0.1/…` and `/grants/…`)',
    defaultText: 'true',
    parse: flag('PUBLIC_DATA_API_ENABLED', true),
  },
  corsOrigins: {
    key: 'corsOrigins',
    name: 'CORS_ORIGINS',
    description: 'Comma-separated browser origins allowed to call the API (`*` for any); unset = no cross-origin access',
    defaultText: '(none)',
    parse: originList,
  },
  walletSessionTtlSeconds: {
    key: 'walletSessionTtlSeconds',
    name: 'WALLET_SESSION_TTL_SECONDS',
    description: 'Lifetime of a wallet session token obtained with Sign-In with Ethereum',
    defaultText: '900',
    parse: integer('WALLET_SESSION_TTL_SECONDS', 60, 86_400, 900),
  },
  siweAllowedChainIds: {
    key: 'siweAllowedChainIds',
    name: 'SIWE_ALLOWED_CHAIN_IDS',
    description: 'Comma-separated EIP-155 Chain IDs a wallet sign-in message may name; the first is the one offered by `GET /registry/wallet/siwe-nonce`',
    defaultText: '1',
    parse: chainIdList,
  },
  governanceToken: {
    key: 'governanceToken',
    name: 'GOVERNANCE_TOKEN',
    description: 'Symbol in the staking route `/registry/{token}-stake/{address}` (lower-cased); `govtoken-stake` always works',
    defaultText: 'gtc',
    parse: (raw) => {
      if (raw === undefined || raw.trim() === '') return 'gtc';
      const value = raw.trim().toLowerCase();
      if (!/^[a-z0-9]{1,20}$/.test(value)) throw new BadValue(`GOVERNANCE_TOKEN=${JSON.stringify(raw)} must be 1 to 20 letters or digits`);
      return value;
    },
  },
  stakeEventsRateLimitPerMinute: {
    key: 'stakeEventsRateLimitPerMinute',
    name: 'STAKE_EVENTS_RATE_LIMIT_PER_MINUTE',
    description: 'Requests per minute from one client address to the keyless per-round staking events route `/registry/{token}-stake/{address}/{round_id}`',
    defaultText: '600',
    parse: integer('STAKE_EVENTS_RATE_LIMIT_PER_MINUTE', 1, 1_000_000, 600),
  },
  stakingRpcUrl: {
    key: 'stakingRpcUrl',
    name: 'STAKING_RPC_URL',
    description: 'Ethereum JSON-RPC endpoint the staking indexer reads logs from; unset = no indexer (use `stampgate stake import`)',
    defaultText: '(unset)',
    parse: optionalUrl('STAKING_RPC_URL'),
  },
  stakingContractAddress: {
    key: 'stakingContractAddress',
    name: 'STAKING_CONTRACT_ADDRESS',
    description: 'Address of the staking contract whose `selfStake`/`xStake` events are indexed',
    defaultText: '(unset)',
    parse: optionalContractAddress('STAKING_CONTRACT_ADDRESS'),
  },
  stakingStartBlock: {
    key: 'stakingStartBlock',
    name: 'STAKING_START_BLOCK',
    description: 'First block the staking indexer reads (the contract deployment block)',
    defaultText: '0',
    parse: integer('STAKING_START_BLOCK', 0, Number.MAX_SAFE_INTEGER, 0),
  },
  stakingConfirmations: {
    key: 'stakingConfirmations',
    name: 'STAKING_CONFIRMATIONS',
    description: 'Blocks behind the chain head the indexer stays, so that a reorganisation of the newest blocks cannot be counted',
    defaultText: '12',
    parse: integer('STAKING_CONFIRMATIONS', 0, 10_000, 12),
  },
  stakingBlockRange: {
    key: 'stakingBlockRange',
    name: 'STAKING_BLOCK_RANGE',
    description: 'Blocks per `eth_getLogs` request',
    defaultText: '2000',
    parse: integer('STAKING_BLOCK_RANGE', 1, 1_000_000, 2000),
  },
  stakingPollMs: {
    key: 'stakingPollMs',
    name: 'STAKING_POLL_MS',
    description: 'How often a worker looks for new staking blocks',
    defaultText: '15000',
    parse: integer('STAKING_POLL_MS', 100, 3_600_000, 15_000),
  },
  publicCacheTtlSeconds: {
    key: 'publicCacheTtlSeconds',
    name: 'PUBLIC_CACHE_TTL',
    description: 'Seconds list and export responses of the public data API may be served from cache',
    defaultText: '3600',
    parse: integer('PUBLIC_CACHE_TTL', 0, 86_400, 3600),
  },
  publicRateLimitPerMinute: {
    key: 'publicRateLimitPerMinute',
    name: 'PUBLIC_RATE_LIMIT_PER_MINUTE',
    description: 'Requests per minute one client address may make to the public data API (`/api/v0.1/…`, `/grants/…`); more get 429',
    defaultText: '600',
    parse: integer('PUBLIC_RATE_LIMIT_PER_MINUTE', 1, 1_000_000, 600),
  },
  publicCacheMaxBytes: {
    key: 'publicCacheMaxBytes',
    name: 'PUBLIC_CACHE_MAX_BYTES',
    description: 'Most bytes the public data response cache holds per process (bodies and keys); the least recently used go first',
    defaultText: '67108864 (64 MB)',
    parse: integer('PUBLIC_CACHE_MAX_BYTES', 65_536, 68_719_476_736, 67_108_864),
  },
  sessionSecret: {
    key: 'sessionSecret',
    name: 'SESSION_SECRET',
    description: 'Secret (≥ 32 characters) that signs browser session cookies; required in production when OAuth login is configured',
    defaultText: '(random per process in development)',
    parse: (raw) => {
      const value = optionalText(raw);
      if (value !== null && value.length < 32) throw new BadValue('SESSION_SECRET must be at least 32 characters');
      return value;
    },
  },
  oauthClientId: {
    key: 'oauthClientId',
    name: 'OAUTH_CLIENT_ID',
    description: 'OAuth 2.0 client id of the code-hosting login (grant team members); unset = login off',
    defaultText: '(unset)',
    parse: optionalText,
  },
  oauthClientSecret: {
    key: 'oauthClientSecret',
    name: 'OAUTH_CLIENT_SECRET',
    description: 'OAuth 2.0 client secret of the code-hosting login',
    defaultText: '(unset)',
    parse: optionalText,
  },
  oauthAuthorizeUrl: {
    key: 'oauthAuthorizeUrl',
    name: 'OAUTH_AUTHORIZE_URL',
    description: 'Authorization endpoint of the code-hosting login',
    defaultText: 'https://github.com/login/oauth/authorize',
    parse: urlWithDefault('OAUTH_AUTHORIZE_URL', 'https://github.com/login/oauth/authorize'),
  },
  oauthTokenUrl: {
    key: 'oauthTokenUrl',
    name: 'OAUTH_TOKEN_URL',
    description: 'Token endpoint of the code-hosting login',
    defaultText: 'https://github.com/login/oauth/access_token',
    parse: urlWithDefault('OAUTH_TOKEN_URL', 'https://github.com/login/oauth/access_token'),
  },
  oauthUserInfoUrl: {
    key: 'oauthUserInfoUrl',
    name: 'OAUTH_USERINFO_URL',
    description: 'User-info endpoint; its `login` (or `preferred_username`) is matched to a profile handle',
    defaultText: 'https://api.github.com/user',
    parse: urlWithDefault('OAUTH_USERINFO_URL', 'https://api.github.com/user'),
  },
  oauthScope: {
    key: 'oauthScope',
    name: 'OAUTH_SCOPE',
    description: 'Scope requested from the code-hosting login',
    defaultText: 'read:user',
    parse: (raw) => optionalText(raw) ?? 'read:user',
  },
  ethRpcUrl: {
    key: 'ethRpcUrl',
    name: 'ETH_RPC_URL',
    description: 'Ethereum JSON-RPC endpoint for the legacy bounty read',
    defaultText: '(unset)',
    parse: optionalUrl('ETH_RPC_URL'),
  },
  legacyBountyIndexAddress: {
    key: 'legacyBountyIndexAddress',
    name: 'LEGACY_BOUNTY_INDEX_ADDRESS',
    description: 'Address of the legacy bounty index contract (`bountydetails(string)`)',
    defaultText: '(unset)',
    parse: optionalContractAddress('LEGACY_BOUNTY_INDEX_ADDRESS'),
  },
  redisUrl: {
    key: 'redisUrl',
    name: 'REDIS_URL',
    description: 'Redis for state shared by several processes (rate-limit budgets, cache invalidation); unset = per process',
    defaultText: '(unset)',
    parse: (raw) => {
      const value = optionalText(raw);
      if (value !== null && !/^rediss?:\/\/.+/.test(value)) throw new BadValue(`REDIS_URL=${JSON.stringify(raw)} must start with redis:// or rediss://`);
      return value;
    },
  },
  metricsEnabled: {
    key: 'metricsEnabled',
    name: 'METRICS_ENABLED',
    description: 'Collect Prometheus metrics and serve them at `/metrics`: on METRICS_PORT, and on the main listener when METRICS_PUBLIC is true',
    defaultText: 'true',
    parse: flag('METRICS_ENABLED', true),
  },
  workerPort: {
    key: 'workerPort',
    name: 'WORKER_PORT',
    description:
      'Port on which `stampgate worker` serves `/metrics` and `/health/*` (on HOST) for monitoring; unset = a worker serves no HTTP',
    defaultText: '(unset)',
    parse: (raw) => (raw === undefined || raw.trim() === '' ? null : integer('WORKER_PORT', 1, 65535, 0)(raw)),
  },
  trustProxy: {
    key: 'trustProxy',
    name: 'TRUST_PROXY',
    description:
      'Comma-separated addresses or CIDR ranges of your reverse proxies (or `loopback`, `linklocal`, `uniquelocal`): only requests from them may set the client address with `X-Forwarded-For`/`Forwarded` (and host and scheme with `X-Forwarded-Host`/`-Proto`); unset = the socket address is the client',
    defaultText: '(none)',
    parse: proxyList,
  },
  requestTimeoutMs: {
    key: 'requestTimeoutMs',
    name: 'REQUEST_TIMEOUT_MS',
    description: 'Longest time a client may take to send a whole request (headers and body); then the connection is closed',
    defaultText: '30000',
    parse: integer('REQUEST_TIMEOUT_MS', 100, 3_600_000, 30_000),
  },
  headersTimeoutMs: {
    key: 'headersTimeoutMs',
    name: 'HEADERS_TIMEOUT_MS',
    description: 'Longest time a client may take to send the request headers (slow-loris clients are cut off)',
    defaultText: '10000',
    parse: integer('HEADERS_TIMEOUT_MS', 100, 3_600_000, 10_000),
  },
  keepAliveTimeoutMs: {
    key: 'keepAliveTimeoutMs',
    name: 'KEEP_ALIVE_TIMEOUT_MS',
    description: 'How long an idle keep-alive connection is kept open for a next request',
    defaultText: '5000',
    parse: integer('KEEP_ALIVE_TIMEOUT_MS', 100, 3_600_000, 5000),
  },
  outboundTimeoutMs: {
    key: 'outboundTimeoutMs',
    name: 'OUTBOUND_TIMEOUT_MS',
    description: 'Time limit of every call this service makes: Ethereum JSON-RPC requests and the OAuth token and user-info requests',
    defaultText: '10000',
    parse: integer('OUTBOUND_TIMEOUT_MS', 100, 600_000, 10_000),
  },
  metricsPort: {
    key: 'metricsPort',
    name: 'METRICS_PORT',
    description: 'Port of a listener of its own (on HOST) that serves only `/metrics`, for the monitoring network; unset = none (0 = any free port)',
    defaultText: '(unset)',
    parse: (raw) => (raw === undefined || raw.trim() === '' ? null : integer('METRICS_PORT', 0, 65535, 0)(raw)),
  },
  metricsPublic: {
    key: 'metricsPublic',
    name: 'METRICS_PUBLIC',
    description: 'Also serve `/metrics` on the main (public) listener',
    defaultText: 'false in production, true in development',
    parse: (raw, env) => flag('METRICS_PUBLIC', !isProduction(env))(raw),
  },
  bodyMaxDepth: {
    key: 'bodyMaxDepth',
    name: 'BODY_MAX_DEPTH',
    description: 'Deepest nesting of arrays and objects accepted in a JSON request body over 64 KiB; deeper bodies get 400 before they are parsed (smaller ones parse in about a millisecond whatever their shape)',
    defaultText: '64',
    parse: integer('BODY_MAX_DEPTH', 8, 10_000, 64),
  },
};

function isProduction(env: NodeJS.ProcessEnv): boolean {
  return (env.STAMPGATE_ENV ?? '').trim().toLowerCase() === 'production';
}

const PROXY_KEYWORDS = ['loopback', 'linklocal', 'uniquelocal'];

/** Trusted proxies: IP addresses and CIDR ranges, as Fastify's `trustProxy` (proxy-addr) reads them. */
function proxyList(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  const entries = raw.split(',').map((e) => e.trim()).filter(Boolean);
  for (const entry of entries) {
    if (PROXY_KEYWORDS.includes(entry.toLowerCase())) continue;
    const [address = '', prefix, extra] = entry.split('/');
    const version = isIP(address);
    const bits = version === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (version === 0 || !prefixOk || extra !== undefined) {
      throw new BadValue(
        `TRUST_PROXY has ${JSON.stringify(entry)}, which is not an IP address, a CIDR range such as 10.0.0.0/8, or one of ${PROXY_KEYWORDS.join(', ')}`,
      );
    }
  }
  return entries.map((e) => (PROXY_KEYWORDS.includes(e.toLowerCase()) ? e.toLowerCase() : e));
}

function flag(name: string, fallback: boolean) {
  return (raw: string | undefined): boolean => {
    if (raw === undefined || raw.trim() === '') return fallback;
    const value = raw.trim().toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(value)) return true;
    if (['0', 'false', 'no', 'off'].includes(value)) return false;
    throw new BadValue(`${name}=${JSON.stringify(raw)} must be true or false`);
  };
}

function optionalUrl(name: string) {
  return (raw: string | undefined): string | null => {
    if (raw === undefined || raw.trim() === '') return null;
    return httpUrl(name, raw);
  };
}

function urlWithDefault(name: string, fallback: string) {
  return (raw: string | undefined): string => (raw === undefined || raw.trim() === '' ? fallback : httpUrl(name, raw));
}

function httpUrl(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new BadValue(`${name}=${JSON.stringify(raw)} is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BadValue(`${name}=${JSON.stringify(raw)} must use http or https`);
  return raw.trim();
}

function optionalContractAddress(name: string) {
  return (raw: string | undefined): string | null => {
    if (raw === undefined || raw.trim() === '') return null;
    if (!/^0x[0-9a-fA-F]{40}$/.test(raw.trim())) throw new BadValue(`${name}=${JSON.stringify(raw)} is not 0x followed by 40 hexadecimal digits`);
    return raw.trim().toLowerCase();
  };
}

function optionalText(raw: string | undefined): string | null {
  return raw === undefined || raw.trim() === '' ? null : raw.trim();
}

function originList(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  const origins = raw.split(',').map((o) => o.trim()).filter(Boolean);
  for (const origin of origins) {
    if (origin === '*') continue;
    let url: URL | null = null;
    try {
      url = new URL(origin);
    } catch {
      url = null;
    }
    if (!url || url.origin !== origin.replace(/\/$/, '')) {
      throw new BadValue(`CORS_ORIGINS has ${JSON.stringify(origin)}, which is not an origin such as https://app.example.org or *`);
    }
  }
  return origins.map((o) => o.replace(/\/$/, ''));
}

function chainIdList(raw: string | undefined): number[] {
  if (raw === undefined || raw.trim() === '') return [1];
  const items = raw.split(',').map((item) => item.trim()).filter(Boolean);
  const bad = items.filter((item) => !/^[1-9]\d{0,14}$/.test(item));
  if (items.length === 0 || bad.length > 0) {
    throw new BadValue(`SIWE_ALLOWED_CHAIN_IDS=${JSON.stringify(raw)} must be a comma-separated list of positive integers`);
  }
  return [...new Set(items.map(Number))];
}

function issuerList(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  const dids = raw.split(',').map((d) => d.trim().toLowerCase()).filter(Boolean);
  const bad = dids.filter((d) => !/^did:ethr:0x[0-9a-f]{40}$/.test(d));
  if (bad.length > 0) throw new BadValue(`TRUSTED_ISSUERS has ${bad.map((d) => JSON.stringify(d)).join(', ')}, not of the form did:ethr:0x<40 hex digits>`);
  return [...new Set(dids)];
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const config: Partial<Config> = {};
  for (const setting of Object.values(settings) as Setting<keyof Config>[]) {
    try {
      (config as Record<string, unknown>)[setting.key] = setting.parse(env[setting.name], env);
    } catch (error) {
      if (!(error instanceof BadValue)) throw error;
      problems.push(error.message);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config as Config;
}

/** The documented variables, in declaration order: name, default, description. */
export function describeSettings(): { name: string; defaultText: string; description: string }[] {
  return Object.values(settings).map(({ name, defaultText, description }) => ({ name, defaultText, description }));
}
