/** Developer portal settings: sign-up, sessions, usage counters, the built front end. */
import { fileURLToPath } from 'node:url';
import { integer, oneOf, type Settings } from './parse.js';

export type PortalSignup = 'open' | 'closed';

export interface PortalConfig {
  portalSignup: PortalSignup;
  portalSessionTtlSeconds: number;
  usageFlushMs: number;
  portalAssetsDir: string;
}

/** Where `npm run build` puts the portal's front end (vite, from portal/). */
export const DEFAULT_PORTAL_ASSETS_DIR = fileURLToPath(new URL('../../dist/portal-ui/', import.meta.url));

export const portalSettings: Settings<PortalConfig> = {
  portalSignup: {
    key: 'portalSignup',
    name: 'PORTAL_SIGNUP',
    description:
      '`open`: the first portal sign-in of a wallet creates its account (owned by that wallet, tier 1 keys); `closed`: only wallets that already own an account (`stampgate accounts create --owner 0x…`) can sign in',
    defaultText: 'open',
    parse: oneOf('PORTAL_SIGNUP', ['open', 'closed'] as const, 'open'),
  },

  portalSessionTtlSeconds: {
    key: 'portalSessionTtlSeconds',
    name: 'PORTAL_SESSION_TTL_SECONDS',
    description: 'How long a developer portal session (its cookie) lasts after sign-in',
    defaultText: '28800',
    parse: integer('PORTAL_SESSION_TTL_SECONDS', 60, 30 * 86_400, 28_800),
  },

  usageFlushMs: {
    key: 'usageFlushMs',
    name: 'USAGE_FLUSH_MS',
    description: 'How often the per-key daily usage counters (requests, 429s) kept in memory are added to the database (and at shutdown)',
    defaultText: '5000',
    parse: integer('USAGE_FLUSH_MS', 50, 600_000, 5000),
  },

  portalAssetsDir: {
    key: 'portalAssetsDir',
    name: 'PORTAL_ASSETS_DIR',
    description: 'Folder of the built portal front end served at `/portal` (`npm run build` writes it)',
    defaultText: 'dist/portal-ui',
    parse: (raw) => (raw === undefined || raw.trim() === '' ? DEFAULT_PORTAL_ASSETS_DIR : raw.trim()),
  },
};
