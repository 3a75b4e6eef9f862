/** Process, HTTP server and shared infrastructure settings. */
import { isIP } from 'node:net';
import {
  BadValue,
  type ConfigRule,
  flag,
  forExample,
  iconBaseUrl,
  integer,
  isProduction,
  oneOf,
  optionalText,
  originList,
  publicBaseUrl,
  PUBLIC_BASE_URL_EXAMPLE,
  type Settings,
} from './parse.js';

export type Environment = 'development' | 'production';

export interface ServerConfig {
  env: Environment;
  port: number;
  /** null: unset, which production refuses at start-up (development binds 127.0.0.1). */
  host: string | null;
  publicBaseUrl: string | null;
  iconBaseUrl: string | null;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  dataDir: string;
  bodyLimitBytes: number;
  retryAfterSeconds: number;
  shutdownTimeoutMs: number;
  scoringApiEnabled: boolean;
  publicDataApiEnabled: boolean;
  corsOrigins: string[];
  redisUrl: string | null;
  metricsEnabled: boolean;
  workerPort: number | null;
}

const HOST_EXAMPLE = forExample('HOST', '0.0.0.0');
const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

/** What production refuses to bind without (and `listenHost` says when a tool binds regardless). */
export const HOST_REQUIRED =
  `HOST must be set in production: the interface to listen on, such as 0.0.0.0 (every interface) or 127.0.0.1 (this machine only)${HOST_EXAMPLE}`;

/**
 * An IP address or a host name, as `listen` takes it: a port (`0.0.0.0:8000`) or brackets
 * (`[::1]`) would otherwise surface only as a lookup failure once everything else has started.
 */
function listenHost(raw: string | undefined, env: NodeJS.ProcessEnv): string | null {
  if (raw === undefined || raw.trim() === '') return isProduction(env) ? null : '127.0.0.1';
  const value = raw.trim();
  const dottedNumbers = /^[\d.]+$/.test(value);
  if (isIP(value) === 0 && (dottedNumbers || !HOST_NAME.test(value))) {
    throw new BadValue(`HOST=${JSON.stringify(raw)} is not an IP address or host name (without a port or brackets)${HOST_EXAMPLE}`);
  }
  return value;
}

export const serverSettings: Settings<ServerConfig> = {
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
    parse: listenHost,
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

  redisUrl: {
    key: 'redisUrl',
    name: 'REDIS_URL',
    description: 'Redis for state shared by several processes (rate-limit budgets, cache invalidation); unset = per process',
    defaultText: '(unset)',
    parse: (raw) => {
      const value = optionalText(raw);
      if (value !== null && !/^rediss?:\/\/.+/.test(value)) {
        throw new BadValue(`REDIS_URL=${JSON.stringify(raw)} must start with redis:// or rediss://${forExample('REDIS_URL', 'redis://127.0.0.1:6379')}`);
      }
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
    parse: (raw) => (raw === undefined || raw.trim() === '' ? null : integer('WORKER_PORT', 1, 65535, 9101)(raw)),
  },
};

export const serverRules: ConfigRule<ServerConfig>[] = [
  {
    // HOST makes the operator say whether the service is reachable from other machines. Only where
    // a process binds: tools may build a production app without listening.
    scope: 'bind',
    reads: ['host'],
    check: (config) => (config.host === null ? HOST_REQUIRED : null),
  },
  {
    // Otherwise the service's own origin would come from the Host and X-Forwarded-* headers, which
    // callers control: a SIWE message signed for another site would be accepted here, and login
    // redirects and pagination links would point wherever the request said.
    scope: 'api',
    reads: ['env', 'publicBaseUrl'],
    check: (config) =>
      config.env === 'production' && config.publicBaseUrl === null
        ? `PUBLIC_BASE_URL must be set in production: wallet sign-in, the grant team login and pagination links are bound to it${PUBLIC_BASE_URL_EXAMPLE}`
        : null,
  },
];
