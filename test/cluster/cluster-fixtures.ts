/**
 * The cluster test's stamps: credentials issued with the development issuer's key for a seeded set
 * of addresses, four groups of three of which share a nullifier, and the weight arithmetic that
 * cross-checks the service's scores.
 */
import { readFileSync } from 'node:fs';
import type { Hex } from 'viem';
import { type CandidateStamp, computeScore, type NullifierHold } from '../../src/scoring/scorers/engine.js';
import { loadCatalogue } from '../../src/scoring/stamps/catalogue.js';
import { issueCredential, type StampCredential } from '../../src/scoring/stamps/dev-issuer.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** mulberry32: a small seeded generator, so a failing run can be replayed with CLUSTER_SEED. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface CatalogueJson {
  platforms: { groups: { stamps: { name: string; weight: string; deprecated?: boolean }[] }[] }[];
}

/** The catalogue's stamps that can score: not deprecated, weight above zero. */
export function usableStamps(cataloguePath: string): { name: string; weight: string }[] {
  const catalogue = JSON.parse(readFileSync(cataloguePath, 'utf8')) as CatalogueJson;
  return catalogue.platforms.flatMap((p) => p.groups.flatMap((g) => g.stamps)).filter((s) => !s.deprecated && units(s.weight) > 0n);
}

/** Decimal text → integer count of 1e-5 (catalogue and override weights have ≤ 5 fraction digits). */
export function units(text: string): bigint {
  const [whole, fraction = ''] = text.split('.');
  if (fraction.length > 5) throw new Error(`unexpected precision in ${text}`);
  return BigInt(whole ?? '0') * 100_000n + BigInt(fraction.padEnd(5, '0'));
}

export function formatUnits(value: bigint): string {
  return `${value / 100_000n}.${(value % 100_000n).toString().padStart(5, '0')}`;
}

export interface IssuedStamp {
  id: string;
  provider: string;
  nullifiers: string[];
  issuanceDate: Date;
  expirationDate: Date;
}

export interface Wallet {
  address: string;
  stamps: IssuedStamp[];
  credentials: StampCredential[];
  /** The sharing group, for the first 12 addresses. */
  group: number | null;
}

export interface SharingGroup {
  provider: string;
  nullifier: string;
  members: string[];
}

export function buildFixtures(seed: number, privateKey: Hex, pool: string[], addressCount: number) {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const now = Date.now();
  const expiresAt = new Date(now + 90 * DAY);
  let stampId = 0;
  const groups: SharingGroup[] = [0, 1, 2, 3].map((g) => ({
    provider: pool[g] as string,
    nullifier: `cluster-test-${seed}-shared-${g}`,
    members: [],
  }));
  const wallets: Wallet[] = [];
  for (let i = 0; i < addressCount; i++) {
    const address = `0x${Array.from({ length: 40 }, () => pick([...'0123456789abcdef'])).join('')}`;
    const group = i < 12 ? Math.floor(i / 3) : null;
    const wallet: Wallet = { address, stamps: [], credentials: [], group };
    const issue = (provider: string, issuedAt: Date, nullifiers?: string[]) => {
      const credential = issueCredential({ privateKey, address, provider, nullifiers, issuedAt, expiresAt });
      wallet.credentials.push(credential);
      wallet.stamps.push({
        id: String(++stampId),
        provider,
        nullifiers: credential.credentialSubject.nullifiers,
        issuanceDate: new Date(credential.issuanceDate),
        expirationDate: new Date(credential.expirationDate),
      });
    };
    const sharing = group === null ? null : (groups[group] as SharingGroup);
    if (sharing) {
      sharing.members.push(address);
      issue(sharing.provider, new Date(now - HOUR), [sharing.nullifier]);
      // The third member also has an older stamp of the same provider with a nullifier of its
      // own: when another member holds the shared one, this one must count instead.
      if (i % 3 === 2) issue(sharing.provider, new Date(now - 3 * HOUR));
    }
    const others = pool.filter((p) => p !== sharing?.provider);
    const count = 1 + Math.floor(random() * 5);
    const chosen = new Set<string>();
    while (chosen.size < count) chosen.add(pick(others));
    for (const provider of chosen) issue(provider, new Date(now - HOUR - Math.floor(random() * HOUR)));
    wallets.push(wallet);
  }
  return { wallets, groups };
}

/**
 * Addresses whose service score differs from the engine's result over the stamps issued here and
 * the final nullifier holds (they decide which member of a sharing group got the shared stamp), or
 * from a plain sum of catalogue weights.
 */
export function scoreMismatches(options: {
  wallets: Wallet[];
  groups: SharingGroup[];
  holds: Map<string, NullifierHold>;
  scorer: { type: 'weighted' | 'binary'; threshold: string; weights: Record<string, string> };
  weightOf: (provider: string) => string;
  serviceScores: Map<string, string | null | undefined>;
}): string[] {
  const { wallets, groups, holds, scorer, weightOf, serviceScores } = options;
  const catalogue = loadCatalogue();
  const mismatches: string[] = [];
  for (const wallet of wallets) {
    const stamps: CandidateStamp[] = wallet.stamps.map((s) => ({ ...s, valid: true }));
    const engine = computeScore({
      address: wallet.address,
      scorer: { type: scorer.type, threshold: scorer.threshold, weights: scorer.weights },
      defaultWeights: catalogue.defaultWeights,
      now: new Date(),
      stamps,
      holds,
    });
    const providers = new Set<string>();
    for (const stamp of wallet.stamps) {
      const shared = stamp.nullifiers.find((n) => groups.some((g) => g.nullifier === n));
      if (shared === undefined || holds.get(shared)?.address === wallet.address) providers.add(stamp.provider);
    }
    const plainSum = formatUnits([...providers].reduce((sum, p) => sum + units(weightOf(p)), 0n));
    const actual = serviceScores.get(wallet.address);
    if (engine.score !== plainSum || actual !== engine.score) {
      mismatches.push(`${wallet.address} (group ${wallet.group}): service ${actual}, engine ${engine.score}, catalogue sum ${plainSum}`);
    }
  }
  return mismatches;
}
