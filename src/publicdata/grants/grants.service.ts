import type { Static } from '@sinclair/typebox';
import type { GrantSchema } from './grant.schema.js';
import { createHash } from 'node:crypto';
import { AppError } from '../../errors.js';
import { type CachedDocument, cachePrefix, CountedList, type PublicCache } from '../cache.js';
import type { GrantListFilter, GrantRow, GrantsRepository } from './grants.repository.js';
import { renderProfile } from '../profiles.js';
import { checkPaging, checkText, parseStoredJson } from '../values.js';

/** The query of `GET /api/v0.1/grants/` after schema validation. */
export interface GrantListQuery {
  title?: string;
  description?: string;
  admin_address?: string;
  keyword?: string;
  grant_type?: string;
  pk?: number;
  limit: number;
  offset: number;
}

export type Grant = Static<typeof GrantSchema>;

/** Key of the exact, case-insensitive `title` filter (stored as `grants.title_key`). */
export function titleKey(title: string): string {
  return title.toLowerCase();
}

/** Key of the exact, case-insensitive `description` filter (stored as `grants.description_hash`). */
export function descriptionHash(description: string): string {
  return createHash('sha256').update(description.toLowerCase()).digest('hex');
}

const ADDRESS = /^0x[0-9a-f]{40}$/;

export function parseGrantQuery(query: GrantListQuery): GrantListFilter {
  checkPaging(query);
  const filter: GrantListFilter = { limit: query.limit, offset: query.offset };
  if (query.pk !== undefined) filter.id = query.pk;
  if (query.title !== undefined) filter.titleKey = titleKey(checkText('title', query.title));
  if (query.description !== undefined) filter.descriptionHash = descriptionHash(checkText('description', query.description));
  if (query.admin_address !== undefined) {
    const address = query.admin_address.trim().toLowerCase();
    if (!ADDRESS.test(address)) throw new AppError('invalid_address', '"admin_address" must be 0x followed by 40 hexadecimal digits.');
    filter.adminAddress = address;
  }
  if (query.grant_type !== undefined) filter.grantType = checkText('grant_type', query.grant_type);
  if (query.keyword !== undefined && query.keyword.trim() !== '') filter.keyword = checkText('keyword', query.keyword.trim());
  return filter;
}

export function grantService(grants: GrantsRepository, cache: PublicCache) {
  async function render(rows: GrantRow[]): Promise<Grant[]> {
    const members = await grants.teamMembers(rows.map((g) => g.id));
    const profileIds = new Set<number>(members.map((m) => m.profile_id));
    for (const row of rows) if (row.admin_profile_id !== null) profileIds.add(row.admin_profile_id);
    const profiles = new Map((await grants.profiles([...profileIds])).map((p) => [p.id, renderProfile(p)]));
    return rows.map((row) => ({
      id: row.id,
      active: row.active === 1,
      title: row.title,
      slug: row.slug,
      description: row.description,
      reference_url: row.reference_url,
      logo: row.logo,
      admin_address: row.admin_address,
      amount_received: row.amount_received,
      token_address: row.token_address,
      token_symbol: row.token_symbol,
      contract_address: row.contract_address,
      metadata: parseStoredJson(row.metadata),
      network: row.network,
      required_gas_price: row.required_gas_price,
      grant_type: row.grant_type,
      admin_profile: row.admin_profile_id === null ? null : (profiles.get(row.admin_profile_id) ?? null),
      team_members: members.filter((m) => m.grant_id === row.id).flatMap((m) => profiles.get(m.profile_id) ?? []),
    }));
  }

  return {
    /**
     * The active grants matching the query, as a cached JSON document with their total (see
     * `GrantsRepository.countActive`). A page that is not full gives the total itself, as the
     * bounty list's does, unless it is empty past the first page (the offset may be past the end).
     */
    async list(query: GrantListQuery): Promise<CachedDocument> {
      const filter = parseGrantQuery(query);
      return cache.document(`${cachePrefix.grants}${JSON.stringify(filter)}`, async () => {
        const rows = await grants.listActive(filter);
        const short = rows.length < filter.limit && (rows.length > 0 || filter.offset === 0);
        const total = short ? filter.offset + rows.length : await grants.countActive(filter);
        return new CountedList(await render(rows), total);
      });
    },
  };
}

export type GrantService = ReturnType<typeof grantService>;
