import type { Static } from '@sinclair/typebox';
import type { ProfileSchema } from './publicdata.schema.js';
import type { Selectable } from 'kysely';
import type { ProfilesTable } from '../db/tables/public-data.js';

export type ProfileRow = Selectable<ProfilesTable>;
import { decimalAsNumber, parseStoredJson } from './values.js';

/** A profile as the interface shows it (grant admins and team members). */
export type Profile = Static<typeof ProfileSchema>;

/** `url` is the profile page given by the import, else the code-hosting profile. */
export function renderProfile(row: ProfileRow): Profile {
  return {
    id: row.id,
    url: row.url ?? row.github_url,
    handle: row.handle,
    keywords: parseStoredJson(row.keywords),
    position: row.position,
    avatar_url: row.avatar_url,
    github_url: row.github_url,
    total_earned: decimalAsNumber(row.total_earned) ?? 0,
    organizations: parseStoredJson(row.organizations),
  };
}

/** The import and login key of a handle: handles match case-insensitively. */
export function handleKey(handle: string): string {
  return handle.trim().toLowerCase();
}
