/**
 * The committed contract artifacts of `contracts/abi/` (written by `npm run build:contracts`), the
 * verifier's EIP-712 types and the two schema strings, loaded once and checked on the way in: a
 * production deploy reads these, never a compiler.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Abi, encodePacked, type Hex, keccak256 } from 'viem';

export type ContractName = 'StampgateVerifier' | 'StampgateResolver' | 'StampgateDecoder' | 'EAS' | 'SchemaRegistry';

export interface ContractArtifact {
  contractName: ContractName;
  abi: Abi;
  bytecode: Hex;
}

export interface SchemaStrings {
  score: string;
  passport: string;
  revocable: boolean;
  score_decimals: number;
}

export interface VerifierTypedData {
  domain: { name: string; version: string };
  primaryType: 'AttestationRequest';
  types: Record<'AttestationRequest' | 'AttestationData', { name: string; type: string }[]>;
}

/** src/onchain/ and dist/onchain/ both sit two levels below the repository's root. */
const artifactDir = fileURLToPath(new URL('../../contracts/abi/', import.meta.url));
const loaded = new Map<string, unknown>();

function readArtifactFile(file: string): unknown {
  let value = loaded.get(file);
  if (value === undefined) {
    value = JSON.parse(readFileSync(`${artifactDir}${file}`, 'utf8'));
    loaded.set(file, value);
  }
  return value;
}

export function contractArtifact(name: ContractName): ContractArtifact {
  const artifact = readArtifactFile(`${name}.json`) as Partial<ContractArtifact>;
  if (!Array.isArray(artifact.abi) || typeof artifact.bytecode !== 'string' || !/^0x([0-9a-f]{2})+$/.test(artifact.bytecode)) {
    throw new Error(`contracts/abi/${name}.json is not a contract artifact; rebuild it with \`npm run build:contracts\``);
  }
  return { contractName: name, abi: artifact.abi, bytecode: artifact.bytecode as Hex };
}

export function contractAbi(name: ContractName): Abi {
  return contractArtifact(name).abi;
}

export function schemaStrings(): SchemaStrings {
  const { score, passport, revocable, score_decimals } = readArtifactFile('schemas.json') as SchemaStrings;
  return { score, passport, revocable, score_decimals };
}

export function verifierTypedData(): VerifierTypedData {
  return readArtifactFile('verifier-eip712.json') as VerifierTypedData;
}

/** The SchemaRegistry's UID of a schema: keccak256(abi.encodePacked(schema, resolver, revocable)). */
export function schemaUid(schema: string, resolver: Hex, revocable = true): Hex {
  return keccak256(encodePacked(['string', 'address', 'bool'], [schema, resolver, revocable]));
}
