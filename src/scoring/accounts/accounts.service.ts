import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { AppError } from '../../errors.js';
import { isScorerType, type ScorerType, scorerTypeNames, scorerTypeOf } from '../scorers/registry.js';
import type { AccountsRepository, ScorerRow } from './accounts.repository.js';

export interface Scorer {
  id: number;
  accountId: number;
  name: string;
  type: ScorerType;
  threshold: string;
  weights: Record<string, string>;
  /** The type's own settings, as stored (its defaults fill what is absent when scoring). */
  settings: Record<string, unknown>;
  requiresSignature: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface Account {
  id: number;
  name: string;
  createdAt: Date;
  /** Lower-case wallet address that owns the account (developer portal), or null. */
  ownerAddress: string | null;
}

function toAccount(row: { id: number; name: string; created_at: number; owner_address: string | null }): Account {
  return { id: row.id, name: row.name, createdAt: new Date(row.created_at), ownerAddress: row.owner_address };
}

/** What creating or updating a scorer may set; absent fields keep their value (or default). */
export interface ScorerChanges {
  name?: string;
  type?: string;
  threshold?: string;
  weights?: Record<string, string>;
  /** The type's own settings; replaces the stored ones. */
  settings?: Record<string, unknown>;
  requiresSignature?: boolean;
}

const decimalPattern = /^\d+(\.\d+)?$/;

export function toScorer(row: ScorerRow): Scorer {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    type: row.type as ScorerType,
    threshold: row.threshold,
    weights: JSON.parse(row.weights) as Record<string, string>,
    settings: JSON.parse(row.settings) as Record<string, unknown>,
    requiresSignature: row.requires_signature === 1,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

function checkName(name: string, what: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > 200) {
    throw new AppError('invalid_request', `The ${what} name must be 1 to 200 characters.`);
  }
  return trimmed;
}

function checkType(type: string): ScorerType {
  if (!isScorerType(type)) {
    const names = scorerTypeNames.map((name) => `"${name}"`).join(' or ');
    throw new AppError('invalid_request', `Scorer type must be ${names}, not "${type}".`);
  }
  return type;
}

function checkSettings(type: ScorerType, settings: Record<string, unknown>): Record<string, unknown> {
  const definition = scorerTypeOf(type);
  // Absent settings take the type's defaults when scoring, so each one is optional here.
  const problem = Value.Errors(Type.Partial(definition.settings), settings).First();
  if (problem) {
    const where = problem.path === '' ? 'settings' : `setting ${problem.path.slice(1)}`;
    throw new AppError('invalid_request', `The ${type} scorer's ${where} is not valid: ${problem.message}.`);
  }
  return settings;
}

function checkThreshold(threshold: string): string {
  if (!decimalPattern.test(threshold)) {
    throw new AppError('invalid_request', `Threshold must be a non-negative decimal number such as 20 or 15.5, not "${threshold}".`);
  }
  return threshold;
}

function checkWeights(weights: Record<string, string>): Record<string, string> {
  for (const [provider, weight] of Object.entries(weights)) {
    if (provider.trim() === '') throw new AppError('invalid_request', 'A weight override names an empty provider.');
    if (typeof weight !== 'string' || !decimalPattern.test(weight)) {
      throw new AppError('invalid_request', `The weight of ${provider} must be a non-negative decimal number.`);
    }
  }
  return weights;
}

export interface AccountServiceOptions {
  /** How long a looked-up scorer is reused from memory (submissions and reads look one up each time). */
  scorerCacheTtlMs: number;
  /** Threshold of a new scorer when none is given (the catalogue's). */
  defaultThreshold?: string;
  /** Tells other processes to drop a changed scorer from their caches. */
  notifyScorerChange?: (scorerId: number) => Promise<void>;
}

/** Whether `id` can name a scorer at all: scorer ids are 32-bit integer columns, and a larger number must not reach SQL. */
export function isScorerId(id: number): boolean {
  return Number.isSafeInteger(id) && id >= 1 && id <= 2_147_483_647;
}

export function accountService(
  repo: AccountsRepository,
  options: AccountServiceOptions = { scorerCacheTtlMs: 0 },
  clock: () => number = Date.now,
) {
  const scorerCache = new Map<number, { scorer: Scorer | null; readAt: number }>();

  async function findScorer(id: number): Promise<Scorer | null> {
    if (!isScorerId(id)) return null;
    const now = clock();
    const cached = scorerCache.get(id);
    if (cached && now - cached.readAt < options.scorerCacheTtlMs) return cached.scorer;
    const row = await repo.findScorer(id);
    const scorer = row ? toScorer(row) : null;
    if (options.scorerCacheTtlMs > 0) {
      if (scorerCache.size >= 10_000) scorerCache.delete(scorerCache.keys().next().value as number);
      scorerCache.set(id, { scorer, readAt: now });
    }
    return scorer;
  }

  return {
    /** `ownerAddress`: the wallet that owns the account (one account per wallet). */
    async createAccount(name: string, ownerAddress: string | null = null): Promise<Account> {
      if (ownerAddress !== null && !/^0x[0-9a-f]{40}$/.test(ownerAddress)) {
        throw new AppError('invalid_address', 'The owner must be 0x followed by 40 lower-case hexadecimal digits.');
      }
      if (ownerAddress !== null && (await repo.findAccountByOwner(ownerAddress))) {
        throw new AppError('invalid_request', `The wallet ${ownerAddress} already owns an account.`);
      }
      return toAccount(await repo.insertAccount(checkName(name, 'account'), clock(), ownerAddress));
    },

    /** The account a wallet owns, or null. */
    async accountOfOwner(ownerAddress: string): Promise<Account | null> {
      const row = await repo.findAccountByOwner(ownerAddress);
      return row ? toAccount(row) : null;
    },

    async getAccount(id: number): Promise<Account> {
      const row = await repo.findAccount(id);
      if (!row) throw new AppError('not_found', `There is no account ${id}.`);
      return toAccount(row);
    },

    async listAccounts(): Promise<Account[]> {
      return (await repo.listAccounts()).map(toAccount);
    },

    async hasAnyAccount(): Promise<boolean> {
      return (await repo.countAccounts()) > 0;
    },

    async createScorer(accountId: number, settings: ScorerChanges & { name: string }): Promise<Scorer> {
      if (!(await repo.findAccount(accountId))) throw new AppError('not_found', `There is no account ${accountId}.`);
      const now = clock();
      const type = checkType(settings.type ?? 'weighted');
      const row = await repo.insertScorer({
        account_id: accountId,
        name: checkName(settings.name, 'scorer'),
        type,
        threshold: checkThreshold(settings.threshold ?? options.defaultThreshold ?? '20'),
        weights: JSON.stringify(checkWeights(settings.weights ?? {})),
        settings: JSON.stringify(checkSettings(type, settings.settings ?? {})),
        requires_signature: settings.requiresSignature ? 1 : 0,
        created_at: now,
        updated_at: now,
      });
      return toScorer(row);
    },

    async updateScorer(id: number, settings: ScorerChanges): Promise<Scorer> {
      const changes: Parameters<AccountsRepository['updateScorer']>[1] = { updated_at: clock() };
      if (settings.name !== undefined) changes.name = checkName(settings.name, 'scorer');
      if (settings.type !== undefined) changes.type = checkType(settings.type);
      if (settings.type !== undefined || settings.settings !== undefined) {
        // A type's settings mean nothing to another type: changing the type without settings resets them.
        const type = changes.type ?? (await findScorer(id))?.type ?? 'weighted';
        changes.settings = JSON.stringify(checkSettings(type as ScorerType, settings.settings ?? {}));
      }
      if (settings.threshold !== undefined) changes.threshold = checkThreshold(settings.threshold);
      if (settings.weights !== undefined) changes.weights = JSON.stringify(checkWeights(settings.weights));
      if (settings.requiresSignature !== undefined) changes.requires_signature = settings.requiresSignature ? 1 : 0;
      const row = await repo.updateScorer(id, changes);
      scorerCache.delete(id);
      if (!row) throw new AppError('scorer_not_found', `There is no scorer ${id}.`);
      await options.notifyScorerChange?.(id);
      return toScorer(row);
    },

    /** Drops a scorer from this process's cache (another process changed it). */
    forgetScorer(id: number): void {
      scorerCache.delete(id);
    },

    async getScorer(id: number): Promise<Scorer> {
      const scorer = await findScorer(id);
      if (!scorer) throw new AppError('scorer_not_found', `There is no scorer ${id}.`);
      return scorer;
    },

    async listScorers(accountId?: number): Promise<Scorer[]> {
      return (await repo.listScorers(accountId)).map(toScorer);
    },

    /** The scorer if it exists and belongs to the account; otherwise not found (never "forbidden"). */
    async scorerOfAccount(scorerId: number, accountId: number): Promise<Scorer> {
      const scorer = await findScorer(scorerId);
      if (!scorer || scorer.accountId !== accountId) {
        throw new AppError('scorer_not_found', `There is no scorer ${scorerId} for this API key.`);
      }
      return scorer;
    },
  };
}

export type AccountService = ReturnType<typeof accountService>;
