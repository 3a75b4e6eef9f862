import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../errors.js';
import type { AccountsRepository } from './accounts.repository.js';
import type { ApiKeyRow, ApiKeysRepository } from './api-keys.repository.js';

export type Tier = 1 | 2 | 3 | 4;

export interface ApiKey {
  id: number;
  accountId: number;
  prefix: string;
  name: string;
  tier: Tier;
  canSubmit: boolean;
  canRead: boolean;
  revokedAt: Date | null;
  createdAt: Date;
}

/** What an authenticated request knows about its caller. */
export interface Caller {
  keyId: number;
  accountId: number;
  prefix: string;
  tier: Tier;
  canSubmit: boolean;
  canRead: boolean;
}

const prefixAlphabet = 'abcdefghijkmnpqrstuvwxyz23456789';
const keyPattern = /^([a-z0-9]{8})\.([A-Za-z0-9_-]{43})$/;

function randomPrefix(): string {
  const bytes = randomBytes(8);
  let prefix = '';
  for (const byte of bytes) prefix += prefixAlphabet[byte % prefixAlphabet.length];
  return prefix;
}

/**
 * The secret carries 256 random bits, so a single SHA-256 is enough: a slow
 * password hash defends low-entropy secrets and would only slow every request.
 */
export function hashApiKey(fullKey: string): string {
  return createHash('sha256').update(fullKey).digest('hex');
}

function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    accountId: row.account_id,
    prefix: row.prefix,
    name: row.name,
    tier: row.tier as Tier,
    canSubmit: row.can_submit === 1,
    canRead: row.can_read === 1,
    revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at),
    createdAt: new Date(row.created_at),
  };
}

export interface NewKeyOptions {
  name?: string;
  tier?: number;
  canSubmit?: boolean;
  canRead?: boolean;
}

export interface KeyCacheOptions {
  ttlMs: number;
  maxEntries?: number;
  /** Tells other processes to drop a changed key from their caches. */
  notifyChange?: (prefix: string) => Promise<void>;
}

export function apiKeyService(
  repo: ApiKeysRepository,
  accounts: AccountsRepository,
  cacheOptions: KeyCacheOptions = { ttlMs: 0 },
  clock: () => number = Date.now,
) {
  // prefix → row and when it was read; a short TTL bounds how long a revocation takes to bite.
  const cache = new Map<string, { row: ApiKeyRow | undefined; readAt: number }>();
  const maxEntries = cacheOptions.maxEntries ?? 10_000;

  async function lookup(prefix: string): Promise<ApiKeyRow | undefined> {
    const now = clock();
    const cached = cache.get(prefix);
    if (cached && now - cached.readAt < cacheOptions.ttlMs) return cached.row;
    const row = await repo.findByPrefix(prefix);
    if (cacheOptions.ttlMs > 0) {
      if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
      cache.set(prefix, { row, readAt: now });
    }
    return row;
  }

  return {
    /** Creates a key; the full key is returned here once and never stored. */
    async create(accountId: number, options: NewKeyOptions = {}): Promise<{ key: string; apiKey: ApiKey }> {
      if (!(await accounts.findAccount(accountId))) throw new AppError('not_found', `There is no account ${accountId}.`);
      const tier = options.tier ?? 1;
      if (!Number.isInteger(tier) || tier < 1 || tier > 4) {
        throw new AppError('invalid_request', `Tier must be 1, 2, 3 or 4, not ${tier}.`);
      }
      const name = (options.name ?? 'default').trim();
      if (name.length === 0 || name.length > 200) throw new AppError('invalid_request', 'The key name must be 1 to 200 characters.');
      const prefix = randomPrefix();
      const key = `${prefix}.${randomBytes(32).toString('base64url')}`;
      const row = await repo.insert({
        account_id: accountId,
        prefix,
        key_hash: hashApiKey(key),
        name,
        tier,
        can_submit: options.canSubmit === false ? 0 : 1,
        can_read: options.canRead === false ? 0 : 1,
        revoked_at: null,
        created_at: clock(),
      });
      return { key, apiKey: toApiKey(row) };
    },

    /** Drops a key from this process's cache (another process changed it). */
    forget(prefix: string): void {
      cache.delete(prefix);
    },

    async list(accountId?: number): Promise<ApiKey[]> {
      return (await repo.list(accountId)).map(toApiKey);
    },

    async revoke(prefix: string): Promise<ApiKey> {
      const row = await repo.revoke(prefix, clock());
      cache.delete(prefix);
      if (row) await cacheOptions.notifyChange?.(prefix);
      if (!row) {
        const existing = await repo.findByPrefix(prefix);
        if (existing) throw new AppError('invalid_request', `The key ${prefix} is already revoked.`);
        throw new AppError('not_found', `There is no key with prefix ${prefix}.`);
      }
      return toApiKey(row);
    },

    /** Resolves a presented key to its caller, or throws 401. */
    async authenticate(presented: string | undefined): Promise<Caller> {
      if (presented === undefined || presented === '') {
        throw new AppError('missing_api_key', 'Send your API key in the X-API-KEY header.');
      }
      const match = keyPattern.exec(presented);
      const row = match ? await lookup(match[1] as string) : undefined;
      const expected = row ? Buffer.from(row.key_hash, 'hex') : undefined;
      const actual = Buffer.from(hashApiKey(presented), 'hex');
      if (!row || !expected || !timingSafeEqual(expected, actual) || row.revoked_at !== null) {
        throw new AppError('invalid_api_key', 'The API key is not valid or has been revoked.');
      }
      return {
        keyId: row.id,
        accountId: row.account_id,
        prefix: row.prefix,
        tier: row.tier as Tier,
        canSubmit: row.can_submit === 1,
        canRead: row.can_read === 1,
      };
    },
  };
}

export type ApiKeyService = ReturnType<typeof apiKeyService>;
