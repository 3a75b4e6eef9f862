import { hash, randomBytes } from 'node:crypto';
import { AppError } from '../../errors.js';
import type { AccountsRepository } from './accounts.repository.js';
import type { ApiKeyRow, ApiKeysRepository, AuthenticatedKeyRow } from './api-keys.repository.js';
import {
  defaultPermissions,
  isPermission,
  normalizePermissions,
  type Permission,
  permissionsFromColumns,
  permissionsToColumns,
  UnknownPermissionError,
} from './permissions.js';

export type { Permission } from './permissions.js';

export type Tier = 1 | 2 | 3 | 4;

export interface ApiKey {
  id: number;
  accountId: number;
  prefix: string;
  name: string;
  tier: Tier;
  /** In canonical order (`permissionNames`). */
  permissions: readonly Permission[];
  revokedAt: Date | null;
  createdAt: Date;
}

/** What an authenticated request knows about its caller. */
export interface Caller {
  keyId: number;
  accountId: number;
  prefix: string;
  /** The tier of the key's own budget; never above `accountTier`. */
  tier: Tier;
  /** The tier of the account's budget, which all its keys and its portal session share. */
  accountTier: Tier;
  /** The counter of the account's budget (`accountBudgetName`). */
  accountBudget: string;
  permissions: readonly Permission[];
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
  return hash('sha256', fullKey, 'hex');
}

function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    accountId: row.account_id,
    prefix: row.prefix,
    name: row.name,
    tier: row.tier as Tier,
    permissions: permissionsFromColumns(row),
    revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at),
    createdAt: new Date(row.created_at),
  };
}

export interface NewKeyOptions {
  name?: string;
  tier?: number;
  /** The key's permissions; by default every one but `historical_endpoint`. */
  permissions?: readonly Permission[];
  /** @deprecated Older shorthand: `false` drops `submit_passports` from the default set (ignored with `permissions`). */
  canSubmit?: boolean;
  /** @deprecated Older shorthand: `false` drops `read_scores` from the default set (ignored with `permissions`). */
  canRead?: boolean;
}

/** The permissions a new key gets from its options. */
function requestedPermissions(options: NewKeyOptions): Permission[] {
  if (options.permissions) return checkedPermissions(options.permissions);
  return defaultPermissions.filter(
    (p) => !(p === 'submit_passports' && options.canSubmit === false) && !(p === 'read_scores' && options.canRead === false),
  );
}

/** Callers outside TypeScript (HTTP bodies, the CLI) can hand over any string: refuse unknown names. */
function checkedPermissions(permissions: readonly string[]): Permission[] {
  const unknown = permissions.filter((p) => !isPermission(p));
  if (unknown.length > 0) throw new AppError('invalid_request', new UnknownPermissionError(unknown).message);
  return normalizePermissions(permissions as Permission[]);
}

/** Live keys an account may hold unless the operator sets MAX_API_KEYS_PER_ACCOUNT. */
export const DEFAULT_MAX_API_KEYS_PER_ACCOUNT = 20;

export interface KeyCacheOptions {
  ttlMs: number;
  maxEntries?: number;
  /** Live keys one account may hold (every way of creating one); default DEFAULT_MAX_API_KEYS_PER_ACCOUNT. */
  maxPerAccount?: number;
  /** Tells other processes to drop a changed key from their caches. */
  notifyChange?: (prefix: string) => Promise<void>;
}

export function apiKeyService(
  repo: ApiKeysRepository,
  accounts: AccountsRepository,
  cacheOptions: KeyCacheOptions = { ttlMs: 0 },
  clock: () => number = Date.now,
) {
  // prefix → what its row says, and when it was read; a short TTL bounds how long a revocation
  // takes to bite. The caller is built once: a hit allocates only the digest of the presented key.
  const cache = new Map<string, KnownKey>();
  const maxEntries = cacheOptions.maxEntries ?? 10_000;

  async function lookup(prefix: string): Promise<KnownKey> {
    const now = clock();
    const cached = cache.get(prefix);
    if (cached && now - cached.readAt < cacheOptions.ttlMs) return cached;
    const known = knownKey(await repo.findForAuthentication(prefix), now);
    if (cacheOptions.ttlMs > 0) {
      // Re-inserted, so the map runs oldest read first: stale entries (with the last key each
      // verified) are dropped from its front at every read, not kept until their prefix returns.
      cache.delete(prefix);
      for (const [oldest, entry] of cache) {
        if (now - entry.readAt < cacheOptions.ttlMs && cache.size < maxEntries) break;
        cache.delete(oldest);
      }
      cache.set(prefix, known);
    }
    return known;
  }

  /** The caller of `presented` if its key is cached and fresh; undefined when the database must say. */
  function cachedCaller(presented: string | undefined): Caller | undefined {
    if (presented === undefined || cacheOptions.ttlMs <= 0) return undefined;
    const match = keyPattern.exec(presented);
    const cached = match ? cache.get(match[1] as string) : undefined;
    if (!cached || clock() - cached.readAt >= cacheOptions.ttlMs) return undefined;
    return callerOf(cached, presented);
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
      const maxPerAccount = cacheOptions.maxPerAccount ?? DEFAULT_MAX_API_KEYS_PER_ACCOUNT;
      const row = await repo.insertWithin(maxPerAccount, {
        account_id: accountId,
        prefix,
        key_hash: hashApiKey(key),
        name,
        tier,
        ...permissionsToColumns(requestedPermissions(options)),
        revoked_at: null,
        created_at: clock(),
      });
      if (!row) {
        throw new AppError('api_key_limit_reached', `Account ${accountId} has ${maxPerAccount} live API keys already (MAX_API_KEYS_PER_ACCOUNT); revoke one first.`);
      }
      return { key, apiKey: toApiKey(row) };
    },

    /** Drops a key from this process's cache (another process changed it). */
    forget(prefix: string): void {
      cache.delete(prefix);
    },

    async list(accountId?: number): Promise<ApiKey[]> {
      return (await repo.list(accountId)).map(toApiKey);
    },

    /** One key by prefix (revoked ones too); `accountId` limits it to that account's keys. */
    async find(prefix: string, scope: { accountId?: number } = {}): Promise<ApiKey> {
      const row = await repo.findByPrefix(prefix);
      if (!row || (scope.accountId !== undefined && row.account_id !== scope.accountId)) {
        throw new AppError('not_found', `There is no key with prefix ${prefix}.`);
      }
      return toApiKey(row);
    },

    /**
     * Replaces a live key's permissions. Every process drops the key from its cache (the
     * `apiKeyChanged` event), so the change holds from the next request anywhere. `accountId`
     * limits it to that account's keys (another account's key is not found, never forbidden).
     */
    async setPermissions(prefix: string, permissions: readonly Permission[], scope: { accountId?: number } = {}): Promise<ApiKey> {
      const wanted = checkedPermissions(permissions);
      const existing = await repo.findByPrefix(prefix);
      if (!existing || (scope.accountId !== undefined && existing.account_id !== scope.accountId)) {
        throw new AppError('not_found', `There is no key with prefix ${prefix}.`);
      }
      const row = await repo.setPermissions(prefix, permissionsToColumns(wanted));
      if (!row) throw new AppError('invalid_request', `The key ${prefix} is revoked; its permissions can no longer change.`);
      cache.delete(prefix);
      await cacheOptions.notifyChange?.(prefix);
      return toApiKey(row);
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

    cachedCaller,

    /**
     * The account's budget: its tier, the highest among its live keys (an operator grants a tier by
     * creating a key of it; the account routes create tier-1 keys only), 1 without any, and its counter.
     */
    async accountBudget(accountId: number): Promise<{ tier: Tier; name: string }> {
      const row = await repo.accountBudget(accountId);
      if (!row) throw new AppError('not_found', `There is no account ${accountId}.`);
      return { tier: (row.tier ?? 1) as Tier, name: accountBudgetName(accountId, row.createdAt) };
    },

    /** Resolves a presented key to its caller, or throws 401. */
    async authenticate(presented: string | undefined): Promise<Caller> {
      if (presented === undefined || presented === '') {
        throw new AppError('missing_api_key', 'Send your API key in the X-API-KEY header.');
      }
      const match = keyPattern.exec(presented);
      return callerOf(match ? await lookup(match[1] as string) : unknownKey, presented);
    },
  };
}

/**
 * The name of an account's budget counter: its id and creation time, the same in every process, and
 * apart from an account of the same id of another database counting in the same Redis (a key's
 * prefix is random; an account id is not).
 */
export function accountBudgetName(accountId: number, createdAt: number): string {
  return `account:${accountId}.${createdAt}`;
}

/** What authentication needs of a key row (or of its absence). */
interface KnownKey {
  /** The stored SHA-256, hex. */
  hash: string | null;
  caller: Caller | null;
  readAt: number;
  /**
   * The full key last presented that matched `hash`, kept with the entry (in this process's memory
   * only, dropped with it): the same key presented again is compared with it in constant time
   * instead of being hashed again (SHA-256 was 3.6 % of a cached score read).
   */
  verified: string | null;
}

const unknownKey: KnownKey = Object.freeze({ hash: null, caller: null, readAt: 0, verified: null }) as KnownKey;

function knownKey(row: AuthenticatedKeyRow | undefined, readAt: number): KnownKey {
  if (!row || row.revoked_at !== null) return { hash: null, caller: null, readAt, verified: null };
  const caller: Caller = {
    keyId: row.id,
    accountId: row.account_id,
    prefix: row.prefix,
    tier: row.tier as Tier,
    // A live key is among the account's live keys, so this is never below its own tier.
    accountTier: Math.max(row.tier, Number(row.account_tier ?? row.tier)) as Tier,
    accountBudget: accountBudgetName(row.account_id, Number(row.account_created_at)),
    permissions: Object.freeze(permissionsFromColumns(row)),
  };
  return { hash: row.key_hash, caller: Object.freeze(caller), readAt, verified: null };
}

/** The key's caller when `presented` is that key (compared in constant time), else 401. */
function callerOf(known: KnownKey, presented: string): Caller {
  if (known.caller !== null && known.verified !== null && sameText(known.verified, presented)) return known.caller;
  // Hashed whatever was found, so that an unknown prefix answers no sooner than a wrong secret.
  const actual = hashApiKey(presented);
  if (!known.hash || !known.caller || !sameText(known.hash, actual)) {
    throw new AppError('invalid_api_key', 'The API key is not valid or has been revoked.');
  }
  known.verified = presented;
  return known.caller;
}

/**
 * Constant-time equality of two strings of one alphabet (hex digests, keys): every character is
 * compared whatever the first difference. In place of `timingSafeEqual` on Buffers: Node makes a
 * digest into a Buffer at about three times the cost of the hex string (0.7 against 0.3 µs), and
 * this check runs on every API request.
 */
function sameText(expected: string, actual: string): boolean {
  if (expected.length !== actual.length) return false;
  let difference = 0;
  for (let i = 0; i < expected.length; i++) difference |= expected.charCodeAt(i) ^ actual.charCodeAt(i);
  return difference === 0;
}

export type ApiKeyService = ReturnType<typeof apiKeyService>;
