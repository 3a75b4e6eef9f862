/** The onchain layer: the attestation signer, the deployment file, RPC endpoints, the push sender. */
import { BadValue, forExample, integer, optionalText, type Settings } from './parse.js';

export interface OnchainConfig {
  /** secp256k1 private key (0x + 64 hex) that signs attestation requests and offchain attestations; null: generated into DATA_DIR in development, the routes refuse in production. */
  attestationSignerKey: string | null;
  /** The deployment file written by `stampgate onchain deploy`; null: `DATA_DIR/onchain.json`. */
  onchainConfigFile: string | null;
  /** RPC URL per chain id from `ONCHAIN_RPC_URL_<chain id>`; wins over the deployment file's `rpc_url`. */
  onchainRpcUrls: Record<number, string>;
  attestationTtlDays: number;
  /** Private key the operator push sends its transactions from; null: no push. */
  onchainSenderKey: string | null;
  /** A push job's lease: a worker that died holding a job frees it after this long. */
  onchainPushLeaseMs: number;
  /** Transactions a push worker has in flight at once (consecutive nonces, receipts awaited). */
  onchainPushConcurrency: number;
}

const PRIVATE_KEY = /^0x[0-9a-fA-F]{64}$/;
// A secret's example is the command that makes one: a literal would be copied into deployments.
const keyExample = (name: string) => forExample(name, '$(printf 0x%s $(openssl rand -hex 32))');

function privateKey(name: string) {
  return (raw: string | undefined): string | null => {
    const text = optionalText(raw);
    if (text === null) return null;
    if (!PRIVATE_KEY.test(text)) throw new BadValue(`${name} is not a secp256k1 private key (0x and 64 hex digits)${keyExample(name)}`);
    if (/^0x0{64}$/.test(text)) throw new BadValue(`${name} is zero, which is not a private key${keyExample(name)}`);
    return text.toLowerCase();
  };
}

const RPC_PREFIX = 'ONCHAIN_RPC_URL_';

export function onchainRpcUrls(_raw: string | undefined, env: NodeJS.ProcessEnv): Record<number, string> {
  const urls: Record<number, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(RPC_PREFIX) || value === undefined || value.trim() === '') continue;
    const id = name.slice(RPC_PREFIX.length);
    if (!/^[1-9][0-9]{0,15}$/.test(id)) {
      throw new BadValue(`${name}: the part after ${RPC_PREFIX} must be a chain id${forExample(`${RPC_PREFIX}10`, 'https://mainnet.optimism.io')}`);
    }
    let url: URL | null;
    try {
      url = new URL(value.trim());
    } catch {
      url = null;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new BadValue(`${name} is not an http(s) URL${forExample(name, 'https://mainnet.optimism.io')}`);
    }
    urls[Number(id)] = url.toString();
  }
  return urls;
}

export const onchainSettings: Settings<OnchainConfig> = {
  attestationSignerKey: {
    key: 'attestationSignerKey',
    name: 'ATTESTATION_SIGNER_KEY',
    description:
      'secp256k1 private key (0x + 64 hex) that signs onchain attestation requests and offchain score attestations; its address is what integrators trust (`GET /v2/onchain/chains`). Required in production for the onchain routes; in development one is generated into DATA_DIR/attestation-signer.key. Never logged',
    defaultText: '(generated in development)',
    parse: privateKey('ATTESTATION_SIGNER_KEY'),
  },
  onchainConfigFile: {
    key: 'onchainConfigFile',
    name: 'ONCHAIN_CONFIG_FILE',
    description: 'The deployment file `stampgate onchain deploy` writes and the service reads (contract addresses, schema UIDs, signers per chain)',
    defaultText: 'DATA_DIR/onchain.json',
    parse: optionalText,
  },
  onchainRpcUrls: {
    key: 'onchainRpcUrls',
    name: 'ONCHAIN_RPC_URL_<chain id>',
    description: 'RPC URL of one chain of the deployment file (one variable per chain, e.g. `ONCHAIN_RPC_URL_10`); wins over the file\'s `rpc_url`, so a URL with a secret stays out of the file',
    defaultText: '(the file\'s rpc_url)',
    parse: onchainRpcUrls,
  },
  attestationTtlDays: {
    key: 'attestationTtlDays',
    name: 'ATTESTATION_TTL_DAYS',
    description: 'Longest life of an attestation, counted from its signing: its expirationTime is the score\'s (or earliest stamp\'s) expiry capped at this many days',
    defaultText: '90',
    parse: integer('ATTESTATION_TTL_DAYS', 1, 3650, 90),
  },
  onchainSenderKey: {
    key: 'onchainSenderKey',
    name: 'ONCHAIN_SENDER_KEY',
    description: 'Private key (0x + 64 hex) the operator push (`stampgate onchain push`) sends its transactions from and pays their gas with; unset: no push. Never logged',
    defaultText: '(none)',
    parse: privateKey('ONCHAIN_SENDER_KEY'),
  },
  onchainPushLeaseMs: {
    key: 'onchainPushLeaseMs',
    name: 'ONCHAIN_PUSH_LEASE_MS',
    description: 'Lease of a push job held by a worker, renewed as its items finish: another worker takes over a crashed worker\'s job (re-broadcasting its signed, unconfirmed transactions) once it ran out',
    defaultText: '30000',
    parse: integer('ONCHAIN_PUSH_LEASE_MS', 1000, 3_600_000, 30_000),
  },
  onchainPushConcurrency: {
    key: 'onchainPushConcurrency',
    name: 'ONCHAIN_PUSH_CONCURRENCY',
    description: 'Transactions one push worker has in flight at once (sent with consecutive nonces, each receipt awaited)',
    defaultText: '8',
    parse: integer('ONCHAIN_PUSH_CONCURRENCY', 1, 64, 8),
  },
};
