import { writeFileSync } from 'node:fs';
import type { Address } from 'viem';
import type { ChainDeployment } from '../../src/onchain/deployment-file.js';
import { schemaStrings } from '../../src/onchain/interface-files.js';

const fakeAddress = (n: number): Address => `0x${n.toString(16).padStart(40, '0')}`;

/** One chain's entry of a deployment file; contract addresses made up unless given. */
export function chainEntry(chainId: number, overrides: Partial<ChainDeployment> = {}): ChainDeployment {
  return {
    chain_id: chainId,
    eas: '0xa1207f3bba224e2c9c3c6d5af63d0eb1582ce587',
    schema_registry: fakeAddress(chainId * 10 + 1),
    verifier: fakeAddress(chainId * 10 + 2),
    resolver: fakeAddress(chainId * 10 + 3),
    decoder: fakeAddress(chainId * 10 + 4),
    score_schema: schemaStrings.score,
    score_schema_uid: `0x${'ab'.repeat(31)}${(chainId % 256).toString(16).padStart(2, '0')}`,
    passport_schema: schemaStrings.passport,
    passport_schema_uid: `0x${'cd'.repeat(31)}${(chainId % 256).toString(16).padStart(2, '0')}`,
    eas_version: '1.3.0',
    signers: [],
    ...overrides,
  };
}

export function writeDeploymentFile(path: string, chains: ChainDeployment[]): void {
  writeFileSync(path, `${JSON.stringify({ chains }, null, 2)}\n`);
}
