/**
 * Generates assets/stamp-catalogue.json, the catalogue shipped with the
 * product, from the facts file kept beside the repository
 * (test/fixtures/stamp-catalogue-facts.json, a copy of shared/data's).
 *
 *   npx tsx scripts/build-catalogue.ts [facts.json] [output.json]
 *
 * Platform descriptions and connect messages are the product's own text and
 * live in this file; everything else (ids, names, icons, groups, providers,
 * titles, deprecation, weights, threshold) comes from the facts. The output
 * is validated with the same code that loads it at run time, so a catalogue
 * the service would refuse is never written. Formatting is stable (facts
 * order, two-space indentation, trailing newline) so that a rebuild from
 * unchanged facts produces no diff.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  parseCatalogue,
  type CatalogueFile,
  type CatalogueFileGroup,
  type CatalogueFilePlatform,
  type CatalogueFileStamp,
} from '../src/scoring/stamps/catalogue.js';

interface FactsProvider {
  name: string;
  title: string;
  deprecated: boolean;
  weight: string | null;
}

interface FactsPlatform {
  id: string;
  name: string;
  icon: string;
  website?: string | null;
  groups: { name: string; providers: FactsProvider[] }[];
}

interface Facts {
  threshold: string;
  platforms: FactsPlatform[];
  weights_without_platform?: Record<string, string>;
  weights_without_platform_notes?: Record<string, { former_platform: string; former_title: string; deprecated: boolean }>;
}

/** Platform id → [description, connect message]. */
const PLATFORM_TEXT: Record<string, readonly [description: string, connectMessage: string]> = {
  GtcStaking: ['Stake tokens on your own identity, or on someone you vouch for.', 'Verify your identity staking'],
  Gitcoin: ['Shows how much you have donated to projects in Gitcoin Grants rounds.', 'Verify your Gitcoin Grants donations'],
  Discord: ['Shows that you have an established, active Discord account.', 'Connect your Discord account'],
  Google: ['Shows that you own a Google account.', 'Connect your Google account'],
  Github: ['Shows how regularly you contribute code on GitHub.', 'Connect your GitHub account'],
  Linkedin: ['Shows that you own a LinkedIn account.', 'Connect your LinkedIn account'],
  Ens: ['Shows that your wallet owns an ENS name.', 'Verify your ENS name'],
  Brightid: ['Shows that other people have verified you as unique in BrightID.', 'Connect your BrightID account'],
  ETH: ['Shows how active your wallet has been on Ethereum.', 'Verify your Ethereum activity'],
  Snapshot: ['Shows that you have created governance proposals on Snapshot.', 'Verify your Snapshot proposals'],
  NFT: ['Shows that your wallet holds NFTs and how established a collector you are.', 'Verify your NFT collection'],
  ZkSync: ['Shows how active your wallet has been on zkSync Era.', 'Verify your zkSync Era activity'],
  Lens: ['Shows that your wallet owns a Lens handle.', 'Verify your Lens handle'],
  GnosisSafe: ['Shows that you are an owner of a Safe multi-signature wallet.', 'Verify your Safe ownership'],
  Coinbase: ['Shows that your wallet carries the Coinbase verified-account attestation.', 'Verify your Coinbase attestation'],
  GuildXYZ: ['Shows your roles and admin rights in Guild.xyz communities.', 'Verify your Guild.xyz memberships'],
  Idena: ['Shows your validated identity state in the Idena network.', 'Connect your Idena identity'],
  Civic: ['Shows that your wallet holds a Civic pass.', 'Verify your Civic passes'],
  TrustaLabs: ['Shows that TrustScan by Trusta Labs does not rate your wallet as a Sybil.', 'Verify your TrustScan result'],
  Outdid: ['Proves who you are from a passport scan without revealing it, using Outdid.', 'Verify your identity with Outdid'],
  AllowList: ['Shows that a partner community put your wallet on its guest list.', 'Check the guest list for your wallet'],
  Binance: ['Shows that your wallet holds a Binance Account Bound Token (BABT).', 'Verify your Binance BABT'],
  DeveloperList: ['Shows that you are on a curated list of developers.', 'Check the developer list for your account'],
  NFTHolder: ['Shows that your wallet holds an NFT from a partner collection.', 'Verify your NFT holdings'],
  CleanHands: ['Shows that your verified identity is not on sanctions lists, without revealing it.', 'Verify your Proof of Clean Hands'],
  HumanIdKyc: ['Shows that you hold a government-issued ID, without revealing it.', 'Verify your government ID'],
  HumanIdPhone: ['Shows that you control a real phone number, without revealing it.', 'Verify your phone number'],
  Biometrics: ['Shows with a private biometric check that you are a unique person.', 'Verify with a biometric check'],
  ZKEmail: ['Proves activity such as purchases or rides from your email receipts, privately.', 'Connect your email with ZK Email'],
  X: ['Shows that you own a verified X account.', 'Connect your X account'],
  Steam: ['Shows your history as a player on Steam.', 'Connect your Steam account'],
  POAP: ['Shows that you have held a POAP for more than 15 days.', 'Verify your POAPs'],
};

const repoRoot = new URL('..', import.meta.url);
const factsPath = process.argv[2] ?? fileURLToPath(new URL('test/fixtures/stamp-catalogue-facts.json', repoRoot));
const outputPath = process.argv[3] ?? fileURLToPath(new URL('assets/stamp-catalogue.json', repoRoot));

const facts = JSON.parse(readFileSync(factsPath, 'utf8')) as Facts;

const platforms = facts.platforms.map((platform): CatalogueFilePlatform => {
  const text = PLATFORM_TEXT[platform.id];
  if (text === undefined) {
    throw new Error(`platform ${platform.id} has no description yet: add one to PLATFORM_TEXT in scripts/build-catalogue.ts`);
  }
  const groups = platform.groups.map(
    (group): CatalogueFileGroup => ({
      name: group.name,
      // The facts carry no weight (null) for providers the reference scorer
      // gives no weight to; the scorer counts those as 0, so "0" is written.
      stamps: group.providers.map((provider) => stampEntry(provider.name, provider.title, provider.weight ?? '0', provider.deprecated)),
    }),
  );
  return {
    id: platform.id,
    name: platform.name,
    icon: platform.icon,
    description: text[0],
    connectMessage: text[1],
    ...(platform.website ? { website: platform.website } : {}),
    groups,
  };
});

// Providers retired from the platform configs still carry weight in the
// reference scorer, so stamps issued before their retirement keep counting.
// They go back, deprecated, into the platform they came from; that platform's
// only group is the one they belonged to.
for (const [provider, weight] of Object.entries(facts.weights_without_platform ?? {})) {
  const note = facts.weights_without_platform_notes?.[provider];
  if (note === undefined) throw new Error(`weights_without_platform.${provider} has no note naming its former platform`);
  const home = platforms.find((platform) => platform.id === note.former_platform);
  if (home === undefined) throw new Error(`${provider}: former platform ${note.former_platform} is not in the facts`);
  const [group, ...otherGroups] = home.groups;
  if (group === undefined || otherGroups.length > 0) {
    throw new Error(`${provider}: platform ${home.id} does not have exactly one group; decide where the retired stamp belongs`);
  }
  group.stamps.push(stampEntry(provider, note.former_title, weight, note.deprecated));
}

const catalogue: CatalogueFile = { threshold: facts.threshold, platforms };
const output = `${JSON.stringify(catalogue, null, 2)}\n`;
parseCatalogue(output, outputPath);
writeFileSync(outputPath, output);

const stampCount = platforms.reduce((sum, platform) => sum + platform.groups.reduce((n, group) => n + group.stamps.length, 0), 0);
console.log(`wrote ${outputPath}: ${platforms.length} platforms, ${stampCount} stamps, threshold ${facts.threshold}`);

function stampEntry(name: string, description: string, weight: string, deprecated: boolean): CatalogueFileStamp {
  return deprecated ? { name, description, weight, deprecated: true } : { name, description, weight };
}
