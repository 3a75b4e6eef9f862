/**
 * The deployment file (`ONCHAIN_CONFIG_FILE`, default `DATA_DIR/onchain.json`): what
 * `stampgate onchain deploy` wrote for each chain, read by the service to answer
 * `GET /v2/onchain/chains` and to sign for the right verifier. Its entries use the same field
 * names as `onchain deploy` prints and the chains listing answers, so one type serves all three.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

const AddressText = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' });
const Bytes32Text = Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' });

export const SignerRecordSchema = Type.Object({
  address: AddressText,
  /** ISO 8601 time the signer was authorised on the verifier. */
  added_at: Type.String(),
  /** ISO 8601 time it was removed, or null while it is trusted. */
  removed_at: Type.Union([Type.String(), Type.Null()]),
});
export type SignerRecord = Static<typeof SignerRecordSchema>;

export const ChainDeploymentSchema = Type.Object({
  chain_id: Type.Integer({ minimum: 1 }),
  /** Optional: `ONCHAIN_RPC_URL_<chain id>` overrides it (an operator's secret URL stays out of the file). */
  rpc_url: Type.Optional(Type.String()),
  eas: AddressText,
  schema_registry: AddressText,
  verifier: AddressText,
  resolver: AddressText,
  decoder: AddressText,
  score_schema: Type.String(),
  score_schema_uid: Bytes32Text,
  passport_schema: Type.String(),
  passport_schema_uid: Bytes32Text,
  /** The EAS contract's `version()`: the `version` of its EIP-712 domain for offchain attestations. */
  eas_version: Type.String(),
  signers: Type.Array(SignerRecordSchema),
});
export type ChainDeployment = Static<typeof ChainDeploymentSchema>;

export const DeploymentFileSchema = Type.Object({
  chains: Type.Array(ChainDeploymentSchema),
});
export type DeploymentFile = Static<typeof DeploymentFileSchema>;

export class DeploymentFileError extends Error {
  override name = 'DeploymentFileError';
}

/** The chains of the file at `path`; none when it does not exist. Throws naming the file when it is not a deployment file. */
export async function readDeploymentFile(path: string): Promise<DeploymentFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { chains: [] };
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new DeploymentFileError(`${path} is not JSON; it is written by \`stampgate onchain deploy\``);
  }
  if (!Value.Check(DeploymentFileSchema, parsed)) {
    const first = [...Value.Errors(DeploymentFileSchema, parsed)][0];
    throw new DeploymentFileError(`${path} is not a deployment file (${first?.path || '/'}: ${first?.message ?? 'invalid'})`);
  }
  const ids = new Set<number>();
  for (const chain of parsed.chains) {
    if (ids.has(chain.chain_id)) throw new DeploymentFileError(`${path} lists chain ${chain.chain_id} twice`);
    ids.add(chain.chain_id);
  }
  return parsed;
}

/**
 * Adds or replaces one chain's entry. Written aside and renamed into place, so that a reader
 * never sees half a file.
 */
export async function writeChainDeployment(path: string, chain: ChainDeployment): Promise<DeploymentFile> {
  const current = await readDeploymentFile(path);
  const chains = current.chains.filter((c) => c.chain_id !== chain.chain_id);
  chains.push(chain);
  chains.sort((a, b) => a.chain_id - b.chain_id);
  const next: DeploymentFile = { chains };
  await mkdir(dirname(path), { recursive: true });
  const pending = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(pending, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o644 });
  await rename(pending, path);
  return next;
}
