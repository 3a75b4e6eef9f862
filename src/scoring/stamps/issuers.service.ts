import { AppError } from '../../errors.js';
import type { IssuersRepository } from './issuers.repository.js';

export type IssuerSource = 'configuration' | 'database' | 'development';

export interface TrustedIssuer {
  did: string;
  source: IssuerSource;
  note: string;
}

const issuerDid = /^did:ethr:0x[0-9a-f]{40}$/;

/** Normalises a `did:ethr:0x…` issuer; anything else is refused. */
export function parseIssuerDid(raw: string): string {
  const did = raw.trim().toLowerCase();
  if (!issuerDid.test(did)) throw new AppError('invalid_request', `"${raw}" is not an issuer DID of the form did:ethr:0x<40 hex digits>.`);
  return did;
}

export interface TrustedIssuerOptions {
  /** From `TRUSTED_ISSUERS`. */
  configured: readonly string[];
  /** The development issuer, trusted only in development. */
  developmentIssuer: string | null;
  /** How long the database list is reused before it is read again. */
  cacheTtlMs: number;
  /** Tells other processes that the trusted list changed. */
  notifyChange?: () => Promise<void>;
}

/**
 * Which issuers' stamps count: the configured ones, the ones added with the
 * CLI (kept in the database so every process sees them), and in development
 * the local development issuer.
 */
export function trustedIssuerService(repo: IssuersRepository, options: TrustedIssuerOptions, clock: () => number = Date.now) {
  const fixed = new Map<string, IssuerSource>(options.configured.map((did) => [did, 'configuration']));
  if (options.developmentIssuer) fixed.set(options.developmentIssuer, 'development');
  let cached: { set: ReadonlySet<string>; readAt: number } | null = null;

  return {
    async add(raw: string, note = ''): Promise<TrustedIssuer> {
      const did = parseIssuerDid(raw);
      if (fixed.has(did)) throw new AppError('invalid_request', `${did} is already trusted by configuration (${fixed.get(did)}).`);
      if (!(await repo.add(did, note.trim(), clock()))) throw new AppError('invalid_request', `${did} is already trusted.`);
      cached = null;
      await options.notifyChange?.();
      return { did, source: 'database', note: note.trim() };
    },

    async remove(raw: string): Promise<string> {
      const did = parseIssuerDid(raw);
      if (!(await repo.remove(did))) {
        const why = fixed.has(did) ? ' It is trusted by configuration (TRUSTED_ISSUERS or development), not by the database.' : '';
        throw new AppError('not_found', `${did} is not in the database list of trusted issuers.${why}`);
      }
      cached = null;
      await options.notifyChange?.();
      return did;
    },

    /** Drops the cached list (another process changed it). */
    forget(): void {
      cached = null;
    },

    async list(): Promise<TrustedIssuer[]> {
      const stored = await repo.list();
      return [
        ...[...fixed].map(([did, source]) => ({ did, source, note: '' })),
        ...stored.filter((row) => !fixed.has(row.did)).map((row) => ({ did: row.did, source: 'database' as const, note: row.note })),
      ];
    },

    /** The current trusted set; cheap enough to call on every scoring. */
    async current(): Promise<ReadonlySet<string>> {
      const now = clock();
      if (cached && now - cached.readAt < options.cacheTtlMs) return cached.set;
      const set = new Set<string>(fixed.keys());
      for (const row of await repo.list()) set.add(row.did);
      cached = { set, readAt: now };
      return set;
    },
  };
}

export type TrustedIssuerService = ReturnType<typeof trustedIssuerService>;
