import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Abi, Address } from 'viem';
import type { Artifact } from './evm.js';
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

let decoderStandIn: Artifact | null = null;

/** The test-only decoder stand-in (test/fixtures/DecoderStandIn.sol): `getScore` answers what its `set` stored. */
export function decoderStandInArtifact(): Artifact {
  return (decoderStandIn ??= compileSolidityFile(new URL('../fixtures/DecoderStandIn.sol', import.meta.url)).DecoderStandIn!);
}

/** The contracts of one self-contained Solidity file outside `contracts/` (a test fixture, an example), by name. */
export function compileSolidityFile(file: URL): Record<string, Artifact> {
  const require = createRequire(import.meta.url);
  const path = fileURLToPath(file);
  const name = path.slice(path.lastIndexOf('/') + 1);
  const input = {
    language: 'Solidity',
    sources: { [name]: { content: readFileSync(path, 'utf8') } },
    settings: { evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const output = JSON.parse((require('solc') as { compile(input: string): string }).compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  const compiled = output.contracts[name] ?? {};
  return Object.fromEntries(Object.entries(compiled).map(([contract, c]) => [contract, { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` as const }]));
}
