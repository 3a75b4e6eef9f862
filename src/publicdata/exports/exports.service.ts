import { AppError } from '../../errors.js';
import { type CachedDocument, cachePrefix, type PublicCache, toDocument } from '../cache.js';
import type { ExportAuthService, ExportCaller } from './export-auth.service.js';
import type { ExportsRepository } from './exports.repository.js';
import { formatDateTime } from '../values.js';

/** What an `export_addresses/<file>` name asks for. */
export type AddressExportFile =
  | { kind: 'all' }
  | { kind: 'round'; round: number }
  | { kind: 'grant'; grant: number; round: number | null };

const ROUND_FILE = /^round(\d{1,9})\.json$/;
const GRANT_FILE = /^grant(\d{1,9})\.json$/;
// Both spellings of the interface: grant12_round3.json and grant12_round_3.json.
const GRANT_ROUND_FILE = /^grant(\d{1,9})_round_?(\d{1,9})\.json$/;

/** Parses an address export file name; null when it is none of the served shapes. */
export function parseAddressExportFile(file: string): AddressExportFile | null {
  if (file === 'all.json') return { kind: 'all' };
  let match = ROUND_FILE.exec(file);
  if (match) return { kind: 'round', round: Number(match[1]) };
  match = GRANT_FILE.exec(file);
  if (match) return { kind: 'grant', grant: Number(match[1]), round: null };
  match = GRANT_ROUND_FILE.exec(file);
  if (match) return { kind: 'grant', grant: Number(match[1]), round: Number(match[2]) };
  return null;
}

/** Parses an `export_info/<file>` name (`grant<id>_round<n>.json` or `grant<id>_round_<n>.json`). */
export function parseInfoExportFile(file: string): { grant: number; round: number } | null {
  const match = GRANT_ROUND_FILE.exec(file);
  return match ? { grant: Number(match[1]), round: Number(match[2]) } : null;
}

export interface ExportMeta {
  generated_at: string;
  count: number;
  round: number | null;
  grant: number | null;
  api_key?: { _key: string; _secret: string | null };
}

export interface ContributorInfo {
  handle: string | null;
  picture: string | null;
  anonymized: boolean;
  comment: string;
}

export function exportService(repo: ExportsRepository, auth: ExportAuthService, cache: PublicCache, clock: () => number = Date.now) {
  function meta(count: number, round: number | null, grant: number | null): ExportMeta {
    return { generated_at: formatDateTime(clock()), count, round, grant };
  }

  async function addressDocument(key: string, grant: number | null, round: number | null): Promise<CachedDocument> {
    return cache.document(key, async () => {
      const addresses = await repo.addresses({ grantId: grant ?? undefined, roundNumber: round ?? undefined });
      return { meta: meta(addresses.length, round, grant), addresses };
    });
  }

  async function requireRound(round: number): Promise<void> {
    if (!(await repo.roundExists(round))) throw new AppError('not_found', `There is no grant round ${round}.`);
  }

  /** The grant and round exist, and the caller is on the grant's team. */
  async function authorise(caller: ExportCaller, grant: number, round: number | null): Promise<void> {
    if (!(await repo.grant(grant))) throw new AppError('not_found', `There is no grant ${grant}.`);
    if (round !== null) await requireRound(round);
    if (caller.profileId === null) {
      throw new AppError('not_team_member', `No profile has the handle ${caller.handle}, so it is on no grant’s team.`);
    }
    if (!(await repo.isTeamMember(grant, caller.profileId))) {
      throw new AppError('not_team_member', `This export is only for the admin and team members of grant ${grant}.`);
    }
    await caller.recordUse();
  }

  /** A session call also gets the caller's `_key`/`_secret` in `meta.api_key`. */
  async function forCaller(caller: ExportCaller, document: CachedDocument, takeSecret: boolean): Promise<CachedDocument> {
    if (caller.via !== 'session' || caller.profileId === null) return document;
    const value = JSON.parse(document.body) as { meta: ExportMeta };
    const issued = await auth.credentialsFor(caller.profileId, takeSecret);
    if (issued !== null) value.meta.api_key = issued;
    return toDocument(value, document.builtAt);
  }

  return {
    /** `/grants/grants.json`: `[{title, admin_address, token_address, contract_address, network}]`. */
    async grantsJson(): Promise<CachedDocument> {
      return cache.document(`${cachePrefix.exports}grants.json`, () => repo.activeGrants());
    },

    async allAddresses(): Promise<CachedDocument> {
      return addressDocument(`${cachePrefix.exports}all`, null, null);
    },

    async roundAddresses(round: number): Promise<CachedDocument> {
      await requireRound(round);
      return addressDocument(`${cachePrefix.exports}round:${round}`, null, round);
    },

    /** A grant's (or a grant's round's) contributor addresses, for its team. */
    async grantAddresses(caller: ExportCaller, grant: number, round: number | null, takeSecret: boolean): Promise<CachedDocument> {
      await authorise(caller, grant, round);
      const document = await addressDocument(`${cachePrefix.exports}grant:${grant}:round:${round ?? '*'}`, grant, round);
      return forCaller(caller, document, takeSecret);
    },

    /** Contributor social info of a grant's round, for its team; anonymized contributions show no handle or picture. */
    async contributorInfo(caller: ExportCaller, grant: number, round: number, takeSecret: boolean): Promise<CachedDocument> {
      await authorise(caller, grant, round);
      const document = await cache.document(`${cachePrefix.exports}info:${grant}:round:${round}`, async () => {
        const rows = await repo.contributorInfo(grant, round);
        const contributors: ContributorInfo[] = rows.map((row) =>
          row.anonymized === 1
            ? { handle: null, picture: null, anonymized: true, comment: row.comment }
            : { handle: row.handle, picture: row.avatar_url, anonymized: false, comment: row.comment },
        );
        return { meta: meta(contributors.length, round, grant), contributors };
      });
      return forCaller(caller, document, takeSecret);
    },
  };
}

export type ExportService = ReturnType<typeof exportService>;
