import type { ApiKeysTable } from '../../db/tables/index.js';

/** What an API key may do; each guarded route names the one it needs (v2.md "v2 read API"). */
export const permissionNames = ['submit_passports', 'read_scores', 'create_scorers', 'historical_endpoint'] as const;

export type Permission = (typeof permissionNames)[number];

/** A new key gets every permission but the opt-in history endpoint. */
export const defaultPermissions: readonly Permission[] = ['submit_passports', 'read_scores', 'create_scorers'];

/** Where each permission lives on an `api_keys` row (one 0/1 column each). */
export const permissionColumns = {
  submit_passports: 'can_submit',
  read_scores: 'can_read',
  create_scorers: 'can_create_scorers',
  historical_endpoint: 'can_read_history',
} as const satisfies Record<Permission, keyof ApiKeysTable>;

export type PermissionColumns = { [P in Permission as (typeof permissionColumns)[P]]: number };

export function isPermission(name: string): name is Permission {
  return (permissionNames as readonly string[]).includes(name);
}

export class UnknownPermissionError extends Error {
  constructor(readonly names: string[]) {
    super(`Unknown permission${names.length === 1 ? '' : 's'} ${names.map((n) => `"${n}"`).join(', ')}; use ${permissionNames.join(', ')}.`);
  }
}

/**
 * Parses a comma-separated list such as `read_scores,historical_endpoint` (spaces ignored, empty
 * items skipped, so `""` is no permission at all). Throws UnknownPermissionError naming every
 * unknown entry. The result is in canonical order without repeats.
 */
export function parsePermissions(text: string): Permission[] {
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const unknown = names.filter((name) => !isPermission(name));
  if (unknown.length > 0) throw new UnknownPermissionError(unknown);
  return normalizePermissions(names as Permission[]);
}

/** Canonical order, no repeats: the stored and shown form of a permission list. */
export function normalizePermissions(permissions: Iterable<Permission>): Permission[] {
  const wanted = new Set(permissions);
  return permissionNames.filter((name) => wanted.has(name));
}

export function permissionsToColumns(permissions: Iterable<Permission>): PermissionColumns {
  const granted = new Set(permissions);
  return {
    can_submit: granted.has('submit_passports') ? 1 : 0,
    can_read: granted.has('read_scores') ? 1 : 0,
    can_create_scorers: granted.has('create_scorers') ? 1 : 0,
    can_read_history: granted.has('historical_endpoint') ? 1 : 0,
  };
}

export function permissionsFromColumns(row: PermissionColumns): Permission[] {
  return permissionNames.filter((name) => row[permissionColumns[name]] === 1);
}
