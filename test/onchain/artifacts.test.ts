import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ARTIFACT_DIR, buildArtifacts } from '../../scripts/build-contracts.js';
import { contractArtifact, schemaStrings } from '../../src/onchain/contract-artifacts.js';

describe('committed contract artifacts', () => {
  it('are exactly what compiling contracts/ produces (npm run build:contracts)', () => {
    const built = buildArtifacts();
    expect(Object.keys(built).sort()).toEqual(['EAS.json', 'SchemaRegistry.json', 'StampgateDecoder.json', 'StampgateResolver.json', 'StampgateVerifier.json']);
    for (const [file, text] of Object.entries(built)) {
      expect(readFileSync(join(ARTIFACT_DIR, file), 'utf8'), `contracts/abi/${file} is stale: run npm run build:contracts`).toBe(text);
    }
  }, 180_000);

  it('load as typed artifacts with deployable bytecode', () => {
    for (const name of ['StampgateVerifier', 'StampgateResolver', 'StampgateDecoder', 'EAS', 'SchemaRegistry'] as const) {
      const artifact = contractArtifact(name);
      expect(artifact.bytecode.length).toBeGreaterThan(1000);
      expect(artifact.abi.some((item) => item.type === 'constructor' || item.type === 'function')).toBe(true);
    }
  });

  it('the resolver carries the schema strings of contracts/abi/schemas.json', () => {
    const source = readFileSync(join(ARTIFACT_DIR, '..', 'StampgateResolver.sol'), 'utf8');
    const { score, passport } = schemaStrings();
    expect(source).toContain(`"${score}"`);
    expect(source).toContain(`"${passport}"`);
  });
});
