import { randomBytes } from 'node:crypto';
import secp256k1 from 'secp256k1';
import { getAddress, type Address, type Hex } from 'viem';
import { addressFromPrivateKey } from '../chain/signatures.js';
import type { Config } from '../config/index.js';
import { loadOrCreateKeyFile } from '../config/key-files.js';

export const ATTESTATION_SIGNER_KEY_FILE = 'attestation-signer.key';

/** The private key is never logged nor answered: only the address leaves the process. */
export type AttestationSigner = { readonly privateKey: Hex; readonly address: Address };

function generate(): string {
  for (let candidate = randomBytes(32); ; candidate = randomBytes(32)) if (secp256k1.privateKeyVerify(candidate)) return `0x${candidate.toString('hex')}`;
}

function parse(contents: string, path: string): Hex {
  const key = contents.trim().toLowerCase();
  if (!/^0x[0-9a-f]{64}$/.test(key) || !secp256k1.privateKeyVerify(Buffer.from(key.slice(2), 'hex'))) throw new Error(`${path} does not hold a 0x-prefixed secp256k1 private key`);
  return key as Hex;
}

/** ATTESTATION_SIGNER_KEY; in development a key generated into DATA_DIR; in production without it, none (the onchain routes answer 503). */
export async function loadAttestationSigner(config: Pick<Config, 'attestationSignerKey' | 'env' | 'dataDir'>): Promise<AttestationSigner | null> {
  const key = (config.attestationSignerKey as Hex | null) ?? (config.env === 'development' ? await loadOrCreateKeyFile(config.dataDir, ATTESTATION_SIGNER_KEY_FILE, { generate, parse }) : null);
  return key === null ? null : { privateKey: key, address: getAddress(addressFromPrivateKey(key)) };
}
