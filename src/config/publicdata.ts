/** Public data API settings: caching, budgets, OAuth login, the legacy bounty reader. */
import { BadValue, type ConfigRule, forExample, integer, optionalContractAddress, optionalText, optionalUrl, type Settings, urlWithDefault } from './parse.js';
import type { ServerConfig } from './server.js';

/** A generated secret rather than a literal one, which would be copied into real deployments. */
const SESSION_SECRET_EXAMPLE = forExample('SESSION_SECRET', '$(openssl rand -base64 32)');

export interface PublicDataConfig {
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
}

export const publicdataSettings: Settings<PublicDataConfig> = {
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
    parse: integer('PUBLIC_RATE_LIMIT_PER_MINUTE', 1, 100_000_000, 600),
  },

  publicCacheMaxBytes: {
    key: 'publicCacheMaxBytes',
    name: 'PUBLIC_CACHE_MAX_BYTES',
    description: 'Most bytes the public data response cache holds per process (bodies, their gzip bodies and keys); the least recently used go first',
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
      if (value !== null && value.length < 32) throw new BadValue(`SESSION_SECRET must be at least 32 characters${SESSION_SECRET_EXAMPLE}`);
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
    description: 'OAuth 2.0 client secret of the code-hosting login; required when OAUTH_CLIENT_ID is set',
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
};

/** The grant team login served without what it needs. CLI commands that serve nothing are not affected. */
export const publicdataRules: ConfigRule<PublicDataConfig & Pick<ServerConfig, 'env' | 'publicDataApiEnabled'>>[] = [
  {
    // In production the cookie secret must be the same across restarts and processes: a random
    // one per process would sign every user out at each restart and on every other replica.
    scope: 'api',
    reads: ['publicDataApiEnabled', 'oauthClientId', 'env', 'sessionSecret'],
    check: (config) =>
      config.publicDataApiEnabled && config.oauthClientId !== null && config.env === 'production' && config.sessionSecret === null
        ? `SESSION_SECRET must be set (at least 32 characters) in production when OAUTH_CLIENT_ID enables the grant team login${SESSION_SECRET_EXAMPLE}`
        : null,
  },
  {
    scope: 'api',
    reads: ['publicDataApiEnabled', 'oauthClientId', 'oauthClientSecret'],
    check: (config) =>
      config.publicDataApiEnabled && config.oauthClientId !== null && config.oauthClientSecret === null
        ? `OAUTH_CLIENT_SECRET must be set when OAUTH_CLIENT_ID is set: the secret the code host issued with that client id${forExample('OAUTH_CLIENT_SECRET', '0123456789abcdef0123456789abcdef01234567')}`
        : null,
  },
];
