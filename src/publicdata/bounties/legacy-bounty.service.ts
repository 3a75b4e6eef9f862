import { type LegacyBountyRecord, normalizeIssueUrl } from '../../chain/legacy-bounty.js';
import { type CachedDocument, cachePrefix, type PublicCache } from '../cache.js';

/** What the service needs of `chain/legacy-bounty.ts#legacyBountyReader`. */
export interface LegacyBountySource {
  configured: boolean;
  read(issueUrl: string): Promise<LegacyBountyRecord>;
}

/**
 * The legacy bounty read cached like the public lists: a found record is kept as a
 * serialised document with its ETag for PUBLIC_CACHE_TTL seconds in the same
 * byte-bounded store, keyed by the normalised issue URL, so repeated reads of one
 * bounty cost no `eth_call`. Refusals (bad URL, not posted, unconfigured, RPC
 * failure) are errors and never cached: a bounty posted meanwhile, or an endpoint
 * back up, answers at once.
 */
export function legacyBountyService(source: LegacyBountySource, cache: PublicCache) {
  return {
    configured: source.configured,
    read: (issueUrl: string) => source.read(issueUrl),

    async document(issueUrl: string): Promise<CachedDocument> {
      return cache.document(`${cachePrefix.legacyBounty}${normalizeIssueUrl(issueUrl)}`, () => source.read(issueUrl));
    },
  };
}

export type LegacyBountyService = ReturnType<typeof legacyBountyService>;
