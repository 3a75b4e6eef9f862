import { AppError } from '../errors.js';
import type { AccountService, ScorerChanges } from '../scoring/accounts/accounts.service.js';
import type { ApiKey, ApiKeyService, Caller } from '../scoring/accounts/api-keys.service.js';
import { defaultPermissions, isPermission, type Permission } from '../scoring/accounts/permissions.js';
import { dayText, type UsageCounter, utcDay } from './usage-counter.js';
import type { UsageRepository } from './usage.repository.js';

export interface AccountPortalDeps {
  accounts: AccountService;
  apiKeys: ApiKeyService;
  usageRepo: UsageRepository;
  usage: UsageCounter;
  clock?: () => number;
}

/** The rate-limit tier of keys made through the account routes; an operator raises it with the CLI. */
export const SELF_SERVICE_KEY_TIER = 1;

/**
 * What the account routes do for an authenticated caller (a portal session or an API key with
 * `create_scorers`), always inside the caller's own account: another account's scorer or key is
 * not found, never forbidden.
 */
export function accountPortalService(deps: AccountPortalDeps) {
  const clock = deps.clock ?? Date.now;

  async function keyOfAccount(accountId: number, prefix: string): Promise<ApiKey> {
    const key = (await deps.apiKeys.list(accountId)).find((candidate) => candidate.prefix === prefix);
    if (!key) throw new AppError('not_found', `There is no key with prefix ${prefix} in this account.`);
    return key;
  }

  return {
    account: (caller: Caller) => deps.accounts.getAccount(caller.accountId),

    scorers: (caller: Caller) => deps.accounts.listScorers(caller.accountId),

    createScorer: (caller: Caller, settings: ScorerChanges & { name: string }) => deps.accounts.createScorer(caller.accountId, settings),

    async updateScorer(caller: Caller, scorerId: number, changes: ScorerChanges) {
      await deps.accounts.scorerOfAccount(scorerId, caller.accountId);
      return deps.accounts.updateScorer(scorerId, changes);
    },

    keys: (caller: Caller) => deps.apiKeys.list(caller.accountId),

    /**
     * A new tier-1 key of the caller's account. An API key can only hand out permissions it has
     * itself (a portal session, the account's owner, has them all).
     */
    async createKey(caller: Caller, name: string, permissions: readonly string[] | undefined) {
      const unknown = (permissions ?? []).filter((p) => !isPermission(p));
      if (unknown.length > 0) throw new AppError('invalid_request', `Unknown permission ${unknown.map((p) => `"${p}"`).join(', ')}.`);
      const wanted = (permissions ?? defaultPermissions) as readonly Permission[];
      const beyond = wanted.filter((p) => !caller.permissions.includes(p));
      if (beyond.length > 0) {
        throw new AppError('permission_denied', `This API key cannot give a new key permissions it does not have: ${beyond.join(', ')}.`);
      }
      return deps.apiKeys.create(caller.accountId, { name, permissions: wanted, tier: SELF_SERVICE_KEY_TIER });
    },

    async revokeKey(caller: Caller, prefix: string): Promise<ApiKey> {
      await keyOfAccount(caller.accountId, prefix);
      return deps.apiKeys.revoke(prefix);
    },

    /**
     * Requests and 429 answers per key and UTC day over the last `days` days (today included),
     * zeros where nothing was counted; this process's not yet stored counts are included.
     */
    async usage(caller: Caller, days: number) {
      const today = utcDay(clock());
      const fromDay = today - days + 1;
      const keys = await deps.apiKeys.list(caller.accountId);
      const ids = new Set(keys.map((key) => key.id));
      const rows = [...(await deps.usageRepo.read([...ids], fromDay, today)), ...deps.usage.unflushed(ids, fromDay, today)];
      const series = new Map(keys.map((key) => [key.id, { requests: new Array<number>(days).fill(0), rateLimited: new Array<number>(days).fill(0) }]));
      for (const row of rows) {
        const entry = series.get(row.key_id);
        if (!entry) continue;
        entry.requests[row.day - fromDay]! += row.requests;
        entry.rateLimited[row.day - fromDay]! += row.rate_limited;
      }
      return {
        days: Array.from({ length: days }, (_, i) => dayText(fromDay + i)),
        keys: keys.map((key) => ({
          prefix: key.prefix,
          name: key.name,
          revoked: key.revokedAt !== null,
          requests: series.get(key.id)!.requests,
          rate_limited: series.get(key.id)!.rateLimited,
        })),
      };
    },
  };
}

export type AccountPortalService = ReturnType<typeof accountPortalService>;
