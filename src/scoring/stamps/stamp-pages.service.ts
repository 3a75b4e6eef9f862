import { AppError } from '../../errors.js';
import type { Catalogue, ProviderMetadata } from './catalogue.js';
import type { StampsRepository } from './stamps.repository.js';

export const stampItemVersion = '1.0.0';

export interface StampItem {
  version: string;
  /** The stored credential, parsed (always a JSON object). */
  credential: Record<string, unknown>;
  metadata?: ProviderMetadata | null;
}

export interface StampPage {
  items: StampItem[];
  /** Offsets of the neighbouring pages, or null when there is none. */
  nextOffset: number | null;
  prevOffset: number | null;
}

/**
 * Page tokens are opaque to clients; today they carry the offset of the page.
 * The `p1.` version prefix leaves room for a different cursor later.
 */
export function encodePageToken(offset: number): string {
  return `p1.${Buffer.from(String(offset)).toString('base64url')}`;
}

export function decodePageToken(token: string): number {
  const match = /^p1\.([A-Za-z0-9_-]{1,16})$/.exec(token);
  const decoded = match ? Buffer.from(match[1] as string, 'base64url').toString('utf8') : '';
  if (!/^\d{1,12}$/.test(decoded)) throw new AppError('invalid_token', 'The page token is not one this server issued.');
  return Number(decoded);
}

export function stampPageService(repo: StampsRepository, catalogue: Catalogue) {
  return {
    /** `metadataFor`: the catalogue entries to attach (default: the catalogue's own, icons as stored). */
    async page(
      address: string,
      options: { limit: number; offset: number; includeMetadata: boolean; metadataFor?: (provider: string) => ProviderMetadata | null },
    ): Promise<StampPage> {
      const metadataFor = options.metadataFor ?? catalogue.metadataFor;
      const { limit, offset } = options;
      const rows = limit === 0 ? [] : await repo.livePage(address, limit + 1, offset);
      const items = rows.slice(0, limit).map((row): StampItem => {
        const item: StampItem = { version: stampItemVersion, credential: JSON.parse(row.credential) as Record<string, unknown> };
        if (options.includeMetadata) item.metadata = metadataFor(row.provider);
        return item;
      });
      return {
        items,
        nextOffset: rows.length > limit ? offset + limit : null,
        prevOffset: offset > 0 && limit > 0 ? Math.max(0, offset - limit) : null,
      };
    },
  };
}

export type StampPageService = ReturnType<typeof stampPageService>;
