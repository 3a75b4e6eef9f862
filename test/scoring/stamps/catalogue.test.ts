import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keccak256, toBytes } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import { CatalogueError, loadCatalogue, parseCatalogue, type CatalogueFile } from '../../../src/scoring/stamps/catalogue.js';

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const shippedPath = join(repoRoot, 'assets', 'stamp-catalogue.json');
// A copy of shared/data's facts file, kept in the repository so the comparison always runs.
const factsPath = join(repoRoot, 'test', 'fixtures', 'stamp-catalogue-facts.json');

interface Facts {
  threshold: string;
  platforms: { id: string; name: string; icon: string; groups: { name: string; providers: { name: string; title: string; weight: string | null }[] }[] }[];
  weights_without_platform: Record<string, string>;
}

const tempDir = mkdtempSync(join(tmpdir(), 'stampgate-catalogue-'));
afterAll(() => rmSync(tempDir, { recursive: true, force: true }));

let fileCounter = 0;
function writeCatalogue(content: string): string {
  const path = join(tempDir, `catalogue-${++fileCounter}.json`);
  writeFileSync(path, content);
  return path;
}

function validFile(): CatalogueFile {
  return {
    threshold: '20',
    platforms: [
      {
        id: 'Google',
        name: 'Google',
        icon: 'googleStampIcon.svg',
        description: 'Shows that you own a Google account.',
        connectMessage: 'Connect your Google account',
        website: 'https://www.google.com/',
        groups: [{ name: 'Account Verification', stamps: [{ name: 'Google', description: 'Google account', weight: '0.525' }] }],
      },
      {
        id: 'Github',
        name: 'GitHub',
        icon: 'githubStampIcon.svg',
        description: 'Shows how regularly you contribute code on GitHub.',
        connectMessage: 'Connect your GitHub account',
        groups: [
          {
            name: 'Developer Activity',
            stamps: [
              { name: 'githubContributionActivityGte#30', description: 'Regular Contributor', weight: '1.879' },
              { name: 'githubContributionActivityGte#60', description: 'Active Developer', weight: '1.888', deprecated: true },
            ],
          },
        ],
      },
    ],
  };
}

/** Loads a variant of the valid file and returns the CatalogueError it must cause. */
function errorFor(change: (file: Record<string, any>) => void): CatalogueError {
  const file = validFile() as unknown as Record<string, any>;
  change(file);
  return errorForText(JSON.stringify(file, null, 2));
}

function errorForText(text: string): CatalogueError {
  const path = writeCatalogue(text);
  try {
    loadCatalogue(path);
  } catch (error) {
    expect(error).toBeInstanceOf(CatalogueError);
    expect((error as CatalogueError).message).toContain(path);
    expect((error as CatalogueError).file).toBe(path);
    return error as CatalogueError;
  }
  throw new Error('the catalogue was accepted');
}

describe('the shipped default catalogue', () => {
  const catalogue = loadCatalogue();

  it('loads from assets/stamp-catalogue.json with the default threshold', () => {
    expect(catalogue.source).toBe(shippedPath);
    expect(catalogue.threshold).toBe('20');
    expect(catalogue.platforms.length).toBeGreaterThan(0);
  });

  it('has the API shape of GET /registry/stamp-metadata', () => {
    for (const platform of catalogue.platforms) {
      expect(Object.keys(platform)).toEqual(['id', 'icon', 'name', 'description', 'connectMessage', 'groups']);
      for (const text of [platform.id, platform.icon, platform.name, platform.description, platform.connectMessage]) {
        expect(text).toMatch(/^\S(.*\S)?$/);
        expect(text).not.toContain('\n');
      }
      for (const group of platform.groups) {
        expect(Object.keys(group)).toEqual(['name', 'stamps']);
        for (const stamp of group.stamps) {
          expect(Object.keys(stamp)).toEqual(['name', 'description', 'hash']);
          expect(stamp.hash).toBe(keccak256(toBytes(stamp.name)));
        }
      }
    }
  });

  it('hashes provider names with keccak256 of their UTF-8 bytes', () => {
    const google = catalogue.platforms.find((p) => p.id === 'Google')?.groups[0]?.stamps[0];
    // Independently computed keccak256("Google").
    expect(google?.hash).toBe('0xf610f88085f5955bccb50431e1315a28335522d87be5000ff334274cc9985741');
    expect(google?.hash).toBe(keccak256(toBytes('Google')));
  });

  it('describes a known provider and returns null for an unknown one', () => {
    expect(catalogue.metadataFor('Google')).toEqual({
      name: 'Google',
      description: 'Verify Google Account Ownership',
      hash: keccak256(toBytes('Google')),
      group: 'Account Verification',
      platform: {
        id: 'Google',
        name: 'Google',
        icon: 'googleStampIcon.svg',
        description: 'Shows that you own a Google account.',
        connectMessage: 'Connect your Google account',
      },
    });
    expect(catalogue.metadataFor('ETHScore#90')).toMatchObject({ group: 'Network Participation Levels', platform: { id: 'ETH' } });
    expect(catalogue.metadataFor('NoSuchProvider')).toBeNull();
    expect(catalogue.metadataFor('constructor')).toBeNull();
    expect(catalogue.metadataFor('google')).toBeNull();
  });

  it('cannot be changed by a caller', () => {
    const platform = catalogue.platforms[0];
    expect(Object.isFrozen(catalogue.platforms)).toBe(true);
    expect(Object.isFrozen(platform)).toBe(true);
    expect(Object.isFrozen(platform?.groups[0]?.stamps[0])).toBe(true);
    expect(Object.isFrozen(catalogue.metadataFor('Google')?.platform)).toBe(true);
  });

  it('gives every stamp a default weight and every weight a stamp', () => {
    const providers = catalogue.platforms.flatMap((p) => p.groups.flatMap((g) => g.stamps.map((s) => s.name)));
    expect(new Set(providers).size).toBe(providers.length);
    expect([...catalogue.defaultWeights.keys()].sort()).toEqual([...providers].sort());
  });

  describe('agrees with the facts file', () => {
    const facts = JSON.parse(readFileSync(factsPath, 'utf8')) as Facts;

    it('has every platform of the facts, in order, with its name and icon', () => {
      expect(catalogue.platforms.map((p) => [p.id, p.name, p.icon])).toEqual(facts.platforms.map((p) => [p.id, p.name, p.icon]));
    });

    it('has every provider of the facts with its title, group and weight (no weight = "0")', () => {
      for (const platform of facts.platforms ?? []) {
        for (const group of platform.groups) {
          for (const provider of group.providers) {
            expect(catalogue.defaultWeights.get(provider.name), provider.name).toBe(provider.weight ?? '0');
            expect(catalogue.metadataFor(provider.name), provider.name).toMatchObject({
              description: provider.title,
              group: group.name,
              platform: { id: platform.id },
            });
          }
        }
      }
    });

    it('keeps the weights of retired providers, under their former platform', () => {
      expect(Object.keys(facts.weights_without_platform ?? {}).length).toBeGreaterThan(0);
      for (const [provider, weight] of Object.entries(facts.weights_without_platform ?? {})) {
        expect(catalogue.defaultWeights.get(provider)).toBe(weight);
      }
      expect(catalogue.metadataFor('BinanceBABT')?.platform.id).toBe('Binance');
      expect(catalogue.metadataFor('CoinbaseDualVerification')?.platform.id).toBe('Coinbase');
    });

    it('is exactly what scripts/build-catalogue.ts generates from the facts', () => {
      const output = join(tempDir, 'generated.json');
      execFileSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'scripts', 'build-catalogue.ts'), factsPath, output], {
        cwd: repoRoot,
        stdio: 'pipe',
      });
      expect(readFileSync(output, 'utf8')).toBe(readFileSync(shippedPath, 'utf8'));
    });
  });
});

describe('loading an operator catalogue', () => {
  it('accepts a valid file, keeping weights as written', () => {
    const catalogue = loadCatalogue(writeCatalogue(JSON.stringify(validFile())));
    expect(catalogue.threshold).toBe('20');
    expect(Object.fromEntries(catalogue.defaultWeights)).toEqual({
      Google: '0.525',
      'githubContributionActivityGte#30': '1.879',
      'githubContributionActivityGte#60': '1.888',
    });
    expect(catalogue.platforms[1]).toEqual({
      id: 'Github',
      icon: 'githubStampIcon.svg',
      name: 'GitHub',
      description: 'Shows how regularly you contribute code on GitHub.',
      connectMessage: 'Connect your GitHub account',
      groups: [
        {
          name: 'Developer Activity',
          stamps: [
            { name: 'githubContributionActivityGte#30', description: 'Regular Contributor', hash: keccak256(toBytes('githubContributionActivityGte#30')) },
            { name: 'githubContributionActivityGte#60', description: 'Active Developer', hash: keccak256(toBytes('githubContributionActivityGte#60')) },
          ],
        },
      ],
    });
  });

  it('accepts a file URL, a byte-order mark, and a platform without groups', () => {
    const file = validFile();
    file.platforms.push({ id: 'Empty', name: 'Empty', icon: 'e.svg', description: 'Nothing yet.', connectMessage: 'Wait', groups: [] });
    const path = writeCatalogue(`\uFEFF${JSON.stringify(file)}`);
    const catalogue = loadCatalogue(new URL(`file://${path}`));
    expect(catalogue.source).toBe(path);
    expect(catalogue.platforms.map((p) => p.id)).toEqual(['Google', 'Github', 'Empty']);
  });

  it('hashes non-ASCII provider names as UTF-8 and hex-looking names as text', () => {
    const file = validFile();
    file.platforms[0]!.groups[0]!.stamps.push(
      { name: 'Zürich✓', description: 'x', weight: '1' },
      { name: '0x12', description: 'y', weight: '1' },
    );
    const catalogue = parseCatalogue(JSON.stringify(file), 'inline');
    expect(catalogue.metadataFor('Zürich✓')?.hash).toBe(keccak256(new TextEncoder().encode('Zürich✓')));
    expect(catalogue.metadataFor('0x12')?.hash).toBe(keccak256(new TextEncoder().encode('0x12')));
    expect(catalogue.metadataFor('0x12')?.hash).not.toBe(keccak256('0x12'));
  });

  describe('refuses a malformed file, naming the problem and where it is', () => {
    it('an unreadable file', () => {
      const path = join(tempDir, 'does-not-exist.json');
      expect(() => loadCatalogue(path)).toThrow(CatalogueError);
      expect(() => loadCatalogue(path)).toThrow(`stamp catalogue ${path}: cannot read the file (ENOENT`);
      expect(() => loadCatalogue(tempDir)).toThrow(/cannot read the file \(EISDIR/);
    });

    it('invalid JSON, with the line and column of the parser position', () => {
      expect(errorForText('{\n  "threshold": "20",\n  "platforms": [],\n}').problem).toMatch(
        /^invalid JSON at line 4, column 1: .* at position \d+$/,
      );
      expect(errorForText('{\n  "threshold": }').problem).toMatch(/^invalid JSON at line 2, column 16: Unexpected token/);
      expect(errorForText('{"threshold": "20", "platforms": [').problem).toMatch(/^invalid JSON at line 1, column 35: /);
      expect(errorForText('').problem).toBe('invalid JSON at line 1, column 1: Unexpected end of JSON input');
      expect(errorForText('{"threshold": "2\u0001"}').problem).toMatch(/^invalid JSON at line 1, column 17: /);
      expect(errorForText('{"threshold": "20"} x').problem).toMatch(/^invalid JSON at line 1, column 21: /);
    });

    it('a top level that is not an object', () => {
      expect(errorForText('[]').problem).toBe('top level: expected an object, got an array');
    });

    it('missing fields', () => {
      expect(errorFor((f) => delete f.threshold).problem).toBe('top level: missing field "threshold"');
      expect(errorFor((f) => delete f.platforms).problem).toBe('top level: missing field "platforms"');
      expect(errorFor((f) => delete f.platforms[1].connectMessage).problem).toBe('platforms[1]: missing field "connectMessage"');
      expect(errorFor((f) => delete f.platforms[0].groups[0].stamps[0].weight).problem).toBe(
        'platforms[0].groups[0].stamps[0]: missing field "weight"',
      );
    });

    it('wrong types', () => {
      expect(errorFor((f) => (f.platforms = {})).problem).toBe('platforms: expected an array, got an object');
      expect(errorFor((f) => (f.platforms[0] = 'Google')).problem).toBe('platforms[0]: expected an object, got the string "Google"');
      expect(errorFor((f) => (f.platforms[1].groups = null)).problem).toBe('platforms[1].groups: expected an array, got null');
      expect(errorFor((f) => (f.platforms[1].icon = 7)).problem).toBe('platforms[1].icon: expected a non-empty string, got number 7');
      expect(errorFor((f) => (f.platforms[1].name = '  ')).problem).toBe(
        'platforms[1].name: expected a non-empty string, got the blank string "  "',
      );
      expect(errorFor((f) => (f.platforms[0].website = false)).problem).toBe(
        'platforms[0].website: expected a non-empty string, got boolean false',
      );
      expect(errorFor((f) => (f.platforms[1].groups[0].stamps[1].deprecated = 'yes')).problem).toBe(
        'platforms[1].groups[0].stamps[1].deprecated: expected true or false, got the string "yes"',
      );
    });

    it('weights and thresholds that are not decimal strings', () => {
      expect(errorFor((f) => (f.platforms[1].groups[0].stamps[1].weight = 'abc')).problem).toBe(
        'platforms[1].groups[0].stamps[1].weight: "abc" is not a decimal number',
      );
      expect(errorFor((f) => (f.platforms[0].groups[0].stamps[0].weight = '1e3')).problem).toBe(
        'platforms[0].groups[0].stamps[0].weight: "1e3" is not a decimal number',
      );
      expect(errorFor((f) => (f.platforms[0].groups[0].stamps[0].weight = 0.525)).problem).toBe(
        'platforms[0].groups[0].stamps[0].weight: expected a decimal number written as a string (e.g. "1.5"), got number 0.525',
      );
      expect(errorFor((f) => (f.platforms[0].groups[0].stamps[0].weight = '-0.5')).problem).toBe(
        'platforms[0].groups[0].stamps[0].weight: "-0.5" is negative; it must be zero or more',
      );
      expect(errorFor((f) => (f.threshold = 20)).problem).toBe(
        'threshold: expected a decimal number written as a string (e.g. "1.5"), got number 20',
      );
      expect(errorFor((f) => (f.threshold = '')).problem).toBe('threshold: "" is not a decimal number');
    });

    it('duplicate provider names, platform ids and group names', () => {
      expect(
        errorFor((f) => f.platforms[1].groups[0].stamps.push({ name: 'Google', description: 'again', weight: '1' })).problem,
      ).toBe('platforms[1].groups[0].stamps[2].name: provider "Google" is already defined at platforms[0].groups[0].stamps[0]');
      expect(errorFor((f) => (f.platforms[1].id = 'Google')).problem).toBe(
        'platforms[1].id: platform id "Google" is already used by platforms[0]',
      );
      expect(
        errorFor((f) => f.platforms[1].groups.push({ name: 'Developer Activity', stamps: [] })).problem,
      ).toBe('platforms[1].groups[1].name: group name "Developer Activity" is already used by platforms[1].groups[0]');
    });

    it('unknown fields, so that a misspelling is not silently ignored', () => {
      expect(errorFor((f) => (f.platforms[1].groups[0].stamps[1].deprecatd = true)).problem).toBe(
        'platforms[1].groups[0].stamps[1]: unknown field "deprecatd" (allowed: name, description, weight, deprecated)',
      );
      expect(errorFor((f) => (f.weights = {})).problem).toBe('top level: unknown field "weights" (allowed: threshold, platforms)');
    });
  });
});
