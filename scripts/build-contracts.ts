/**
 * Compiles Stampgate's onchain contracts and writes their committed artifacts:
 *
 *   npm run build:contracts
 *
 * contracts/abi/StampgateVerifier.json, StampgateResolver.json, StampgateDecoder.json
 * ({contractName, abi, bytecode}, solc with the optimizer) and EAS.json, SchemaRegistry.json copied
 * from the artifacts of @ethereum-attestation-service/eas-contracts. They are committed so that a
 * production deploy needs neither the compiler nor a dev dependency; test/onchain/artifacts.test.ts
 * compiles the sources again and compares byte for byte, so they cannot drift from the sources.
 * Output is stable (two-space indentation, trailing newline).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const require = createRequire(import.meta.url);

/** The contracts we compile, each from its own file of `contracts/`. */
export const STAMPGATE_CONTRACTS = ['StampgateVerifier', 'StampgateResolver', 'StampgateDecoder'] as const;
/** The EAS contracts shipped as their package compiled them (solc 0.8.26), not recompiled. */
const EAS_ARTIFACTS = {
  EAS: 'artifacts/contracts/EAS.sol/EAS.json',
  SchemaRegistry: 'artifacts/contracts/SchemaRegistry.sol/SchemaRegistry.json',
} as const;

export const ARTIFACT_DIR = join(root, 'contracts', 'abi');

/** The solc settings of every build: changing one changes the bytecode (and so the committed artifacts). */
const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
};

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts?: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
}

/** An import of `@scope/package/path` from node_modules (the pinned dev dependencies); nothing else. */
function findImport(path: string): { contents: string } | { error: string } {
  if (!path.startsWith('@openzeppelin/contracts/') && !path.startsWith('@ethereum-attestation-service/eas-contracts/')) {
    return { error: `import ${path}: only @openzeppelin/contracts and @ethereum-attestation-service/eas-contracts are available` };
  }
  try {
    return { contents: readFileSync(join(root, 'node_modules', path), 'utf8') };
  } catch {
    return { error: `import ${path}: not found in node_modules` };
  }
}

function solcVersion(): string {
  return (JSON.parse(readFileSync(require.resolve('solc/package.json'), 'utf8')) as { version: string }).version;
}

/**
 * solc's output for our sources. Kept in the temporary directory under the hash of the exact input
 * (sources with their imports, settings) and the solc version, so an unchanged build is not redone.
 */
function compile(): SolcOutput {
  const sources: Record<string, { content: string }> = {};
  for (const name of STAMPGATE_CONTRACTS) sources[`${name}.sol`] = { content: readFileSync(join(root, 'contracts', `${name}.sol`), 'utf8') };
  const input = JSON.stringify({ language: 'Solidity', sources, settings: SETTINGS });
  const solc = require('solc') as { compile(input: string, options: { import: typeof findImport }): string };
  // The imported sources are pinned by their packages' exact versions: those go into the key.
  const hash = createHash('sha256').update(solcVersion()).update('\0').update(input);
  for (const dep of ['@openzeppelin/contracts/package.json', '@ethereum-attestation-service/eas-contracts/package.json']) {
    hash.update('\0').update(readFileSync(require.resolve(dep), 'utf8'));
  }
  const cacheDir = join(tmpdir(), 'stampgate-solc-cache');
  const cacheFile = join(cacheDir, `build-${hash.digest('hex')}.json`);
  try {
    return JSON.parse(readFileSync(cacheFile, 'utf8')) as SolcOutput;
  } catch {
    // Not compiled yet.
  }
  const output = JSON.parse(solc.compile(input, { import: findImport })) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  mkdirSync(cacheDir, { recursive: true });
  const partial = `${cacheFile}.${process.pid}.tmp`;
  writeFileSync(partial, JSON.stringify(output));
  renameSync(partial, cacheFile);
  return output;
}

function artifactText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Every committed artifact: file name in contracts/abi/ -> its exact text. */
export function buildArtifacts(): Record<string, string> {
  const output = compile();
  const files: Record<string, string> = {};
  for (const name of STAMPGATE_CONTRACTS) {
    const contract = output.contracts?.[`${name}.sol`]?.[name];
    if (!contract) throw new Error(`solc produced no ${name}`);
    files[`${name}.json`] = artifactText({ contractName: name, abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` });
  }
  for (const [name, path] of Object.entries(EAS_ARTIFACTS)) {
    const artifact = JSON.parse(readFileSync(require.resolve(`@ethereum-attestation-service/eas-contracts/${path}`), 'utf8')) as {
      abi: unknown[];
      bytecode: string;
    };
    files[`${name}.json`] = artifactText({ contractName: name, abi: artifact.abi, bytecode: artifact.bytecode });
  }
  return files;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  mkdirSync(ARTIFACT_DIR, { recursive: true });
  for (const [file, text] of Object.entries(buildArtifacts())) {
    writeFileSync(join(ARTIFACT_DIR, file), text);
    console.log(`wrote contracts/abi/${file}`);
  }
}
