import { readFile } from 'node:fs/promises';
import { type Database, writeTransaction } from '../../db/connection.js';
import { AppError } from '../../errors.js';
import { cachePrefix, type PublicCache } from '../cache.js';
import type { Problem } from './import-fields.js';
import {
  readBounty,
  readContribution,
  readGrant,
  readProfile,
  readRound,
} from './import-records.js';
import { importRepository, type UpsertCount } from './import.repository.js';
import { bountyPeople } from '../bounties/bounty-vocabulary-records.js';
import { handleKey } from '../profiles.js';

/** Sections of an import document, in the order they are stored (later ones refer to earlier ones). */
export const IMPORT_SECTIONS = ['profiles', 'rounds', 'grants', 'contributions', 'bounties'] as const;
export type ImportSection = (typeof IMPORT_SECTIONS)[number];

export interface SectionResult extends UpsertCount {
  rejected: number;
}

export interface ImportResult {
  /** The file name, when the document came from one. */
  source: string | null;
  sections: Record<ImportSection, SectionResult>;
  /** Every refused record's problems, `bounties[3].value_in_token: not a decimal`. */
  problems: Problem[];
}

/** The shipped demo data set (docs/public-data-import.md describes the format). */
export const DEMO_DATA_URL = new URL('../../../assets/demo-public-data.json', import.meta.url);

interface Indexed<T> {
  index: number;
  value: T;
}

/** The last record per key wins, as if the document were imported record by record. */
function lastPerKey<T>(items: Indexed<T>[], key: (value: T) => string | number): Indexed<T>[] {
  return [...new Map(items.map((item) => [key(item.value), item])).values()];
}

/** Problems by section, then record position (checks of references run later than field checks). */
function inDocumentOrder(problems: Problem[]): Problem[] {
  const rank = (p: Problem) => {
    const match = /^(\w+)\[(\d+)\]/.exec(p.at);
    const section = IMPORT_SECTIONS.indexOf((match?.[1] ?? p.at) as ImportSection);
    return [section, match ? Number(match[2]) : -1] as const;
  };
  return problems
    .map((problem, order) => ({ problem, order, rank: rank(problem) }))
    .sort((a, b) => a.rank[0] - b.rank[0] || a.rank[1] - b.rank[1] || a.order - b.order)
    .map((p) => p.problem);
}

/**
 * `data import`: validates every record on its own, stores the good ones in one
 * transaction per document (insert or update by natural key, so importing again
 * updates and never duplicates), then drops the cached responses it affected.
 */
export function importService(database: Database, cache: PublicCache, clock: () => number = Date.now) {
  async function importDocument(document: unknown, source: string | null = null): Promise<ImportResult> {
    if (typeof document !== 'object' || document === null || Array.isArray(document)) {
      throw new AppError(
        'invalid_request',
        `${source ?? 'The document'} must be a JSON object with any of the arrays ${IMPORT_SECTIONS.join(', ')}.`,
      );
    }
    const input = document as Record<string, unknown>;
    const problems: Problem[] = [];
    for (const name of Object.keys(input)) {
      if (!(IMPORT_SECTIONS as readonly string[]).includes(name)) {
        problems.push({ at: name, problem: `unknown section (expected ${IMPORT_SECTIONS.join(', ')})` });
      }
    }
    const records = (section: ImportSection): unknown[] => {
      const value = input[section];
      if (value === undefined || value === null) return [];
      if (!Array.isArray(value)) {
        problems.push({ at: section, problem: 'not an array' });
        return [];
      }
      return value;
    };
    const now = clock();
    const valid = <T>(section: ImportSection, read: (path: string, record: unknown) => T | null): Indexed<T>[] =>
      records(section).flatMap((record, index) => {
        const value = read(`${section}[${index}]`, record);
        return value === null ? [] : [{ index, value }];
      });

    const profiles = lastPerKey(valid('profiles', (p, r) => readProfile(p, r, problems)), (v) => v.handle_key);
    const rounds = lastPerKey(valid('rounds', (p, r) => readRound(p, r, problems)), (v) => v.number);
    const grants = lastPerKey(valid('grants', (p, r) => readGrant(p, r, problems, now)), (v) => v.row.id);
    const contributions = lastPerKey(valid('contributions', (p, r) => readContribution(p, r, problems)), (v) => v.row.id);
    const bounties = lastPerKey(valid('bounties', (p, r) => readBounty(p, r, problems)), (v) => v.id);

    const counts = {} as Record<ImportSection, UpsertCount>;
    const problemsBefore = problems.length;
    await writeTransaction(database, async (trx) => {
      // writeTransaction may run this again (a prepared statement gone stale): from the same problems.
      problems.length = problemsBefore;
      const repo = importRepository(trx);
      counts.profiles = await repo.upsertProfiles(profiles.map(({ value }) => ({ ...value, created_at: now, updated_at: now })));
      counts.rounds = await repo.upsertRounds(rounds.map(({ value }) => value));

      const grantHandles = grants.flatMap(({ value }) => [value.adminHandle ?? [], ...value.teamHandles].flat());
      const profileIds = await repo.profileIds(grantHandles.map(handleKey));
      const unknownProfile = (path: string, handle: string): number | null => {
        const id = profileIds.get(handleKey(handle));
        if (id === undefined) problems.push({ at: path, problem: `unknown profile "${handle}"` });
        return id ?? null;
      };
      const storedGrants = grants.flatMap(({ index, value }) => {
        const before = problems.length;
        const adminId = value.adminHandle === null ? null : unknownProfile(`grants[${index}].admin_profile`, value.adminHandle);
        const team = value.teamHandles.map((h, i) => unknownProfile(`grants[${index}].team_members[${i}]`, h));
        if (problems.length > before) return [];
        return [{ row: { ...value.row, admin_profile_id: adminId }, team: team as number[] }];
      });
      counts.grants = await repo.upsertGrants(storedGrants.map((g) => g.row));
      await repo.replaceTeams(new Map(storedGrants.map((g) => [g.row.id, g.team])));

      const grantIds = await repo.existingGrantIds(contributions.map(({ value }) => value.row.grant_id));
      const roundNumbers = await repo.existingRoundNumbers(contributions.flatMap(({ value }) => value.row.round_number ?? []));
      const contributorIds = await repo.profileIds(contributions.flatMap(({ value }) => (value.contributorHandle ? [handleKey(value.contributorHandle)] : [])));
      const storedContributions = contributions.flatMap(({ index, value }) => {
        const before = problems.length;
        const at = (field: string) => `contributions[${index}].${field}`;
        if (!grantIds.has(value.row.grant_id)) problems.push({ at: at('grant'), problem: `unknown grant ${value.row.grant_id}` });
        if (value.row.round_number !== null && !roundNumbers.has(value.row.round_number)) {
          problems.push({ at: at('round'), problem: `unknown round ${value.row.round_number}` });
        }
        const profileId = value.contributorHandle === null ? null : (contributorIds.get(handleKey(value.contributorHandle)) ?? null);
        if (value.contributorHandle !== null && profileId === null) {
          problems.push({ at: at('contributor'), problem: `unknown profile "${value.contributorHandle}"` });
        }
        return problems.length > before ? [] : [{ ...value.row, profile_id: profileId }];
      });
      counts.contributions = await repo.upsertContributions(storedContributions);
      counts.bounties = await repo.upsertBounties(bounties.map(({ value }) => value));
      await repo.replaceBountyPeople(bounties.map(({ value }) => value.id), bounties.flatMap(({ value }) => bountyPeople(value)));
    });

    const changed = new Set<string>();
    if (counts.profiles.created + counts.profiles.updated > 0) changed.add(cachePrefix.grants).add(cachePrefix.exports);
    if (counts.grants.created + counts.grants.updated > 0) changed.add(cachePrefix.grants).add(cachePrefix.exports);
    if (counts.rounds.created + counts.rounds.updated + counts.contributions.created + counts.contributions.updated > 0) {
      changed.add(cachePrefix.exports);
    }
    if (counts.bounties.created + counts.bounties.updated > 0) changed.add(cachePrefix.bounties);
    if (changed.size > 0) await cache.invalidate([...changed]);

    const rejected = (section: ImportSection) =>
      new Set(problems.filter((p) => p.at.startsWith(`${section}[`)).map((p) => p.at.slice(0, p.at.indexOf(']') + 1))).size;
    const sections = Object.fromEntries(
      IMPORT_SECTIONS.map((section) => [section, { ...counts[section], rejected: rejected(section) }]),
    ) as Record<ImportSection, SectionResult>;
    return { source, sections, problems: inDocumentOrder(problems) };
  }

  return {
    importDocument,

    /** Loads the shipped demo data set into a database that holds no public data yet; null when not empty. */
    async loadDemoDataIfEmpty(): Promise<ImportResult | null> {
      if (!(await importRepository(database.db).isEmpty())) return null;
      const document = JSON.parse(await readFile(DEMO_DATA_URL, 'utf8')) as unknown;
      return importDocument(document, 'assets/demo-public-data.json');
    },
  };
}

export type ImportService = ReturnType<typeof importService>;
