/** Limits and network hardening: intake limits, proxies, timeouts, metrics exposure. */
import { chainIdList, type ConfigRule, flag, forExample, integer, isProduction, proxyList, type Settings } from './parse.js';

export interface SecurityConfig {
  maxStampsPerRequest: number;
  credentialMaxDepth: number;
  credentialMaxStringLength: number;
  credentialMaxValues: number;
  walletBodyLimitBytes: number;
  siweAllowedChainIds: number[];
  trustProxy: string[];
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  outboundTimeoutMs: number;
  metricsPort: number | null;
  metricsPublic: boolean;
  bodyMaxDepth: number;
}

export const securitySettings: Settings<SecurityConfig> = {
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

  siweAllowedChainIds: {
    key: 'siweAllowedChainIds',
    name: 'SIWE_ALLOWED_CHAIN_IDS',
    description: 'Comma-separated EIP-155 Chain IDs a wallet sign-in message may name; the first is the one offered by `GET /registry/wallet/siwe-nonce`',
    defaultText: '1',
    parse: chainIdList,
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
    description: 'Longest time a client may take to send the request headers, at most REQUEST_TIMEOUT_MS (slow-loris clients are cut off)',
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
    description: 'Time limit of every call this service makes: Ethereum JSON-RPC requests, the OAuth token and user-info requests, and model-service requests (docs/models.md)',
    defaultText: '10000',
    parse: integer('OUTBOUND_TIMEOUT_MS', 100, 600_000, 10_000),
  },

  metricsPort: {
    key: 'metricsPort',
    name: 'METRICS_PORT',
    description: 'Port of a listener of its own (on HOST) that serves only `/metrics`, for the monitoring network; unset = none (0 = any free port)',
    defaultText: '(unset)',
    parse: (raw) => (raw === undefined || raw.trim() === '' ? null : integer('METRICS_PORT', 0, 65535, 9100)(raw)),
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

export const securityRules: ConfigRule<SecurityConfig>[] = [
  {
    // Node's HTTP server would cut every request off at the shorter of the two anyway.
    scope: 'api',
    reads: ['headersTimeoutMs', 'requestTimeoutMs'],
    check: ({ headersTimeoutMs, requestTimeoutMs }) =>
      headersTimeoutMs > requestTimeoutMs
        ? `HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not be longer than REQUEST_TIMEOUT_MS (${requestTimeoutMs}): the headers are part of the request` +
          forExample('HEADERS_TIMEOUT_MS', String(Math.min(10_000, requestTimeoutMs)))
        : null,
  },
];
