import { type Command, InvalidArgumentError } from 'commander';
import type { Address, Hex } from 'viem';
import { type Config, loadConfig } from '../../config/index.js';
import { addSigner, type AdminOptions, removeSigner, revokeAddress, setFee, type SignersResult } from '../../onchain/chain-admin.service.js';
import { connectChain, deployedChain, deploymentFilePath, OnchainAdminError } from '../../onchain/chain-connection.js';
import { readDecoder } from '../../onchain/decoder-reader.js';
import { deployOnchain } from '../../onchain/deploy.service.js';
import { loadAttestationSigner } from '../../onchain/signer-key.js';
import { type CliIo, report } from '../context.js';
import { positiveInteger } from '../parsers.js';
import { onchainPushCommands } from './onchain-push.js';

/** None of these commands but `push` and `push-status` (onchain-push.ts) opens the database: the chain and the deployment file are all they use. */

const OWNER_KEY_ENV = 'ONCHAIN_OWNER_KEY';
const ownerKeyHelp = `the verifier owner's private key (0x + 64 hex); better in the environment as ${OWNER_KEY_ENV}, since an option shows in the process list`;

function privateKey(value: string): Hex {
  if (!/^0x[0-9a-fA-F]{64}$/.test(value)) throw new InvalidArgumentError('not a private key: 0x followed by 64 hexadecimal digits.');
  return value.toLowerCase() as Hex;
}

function checksumless(value: string): Address {
  if (!/^0x[0-9a-fA-F]{40}$/.test(value)) throw new InvalidArgumentError(`"${value}" is not 0x followed by 40 hexadecimal digits.`);
  return value as Address;
}

function wholeNumber(value: string): bigint {
  if (!/^\d{1,78}$/.test(value)) throw new InvalidArgumentError(`"${value}" is not a whole number.`);
  return BigInt(value);
}

function scorerId(value: string): bigint {
  const id = wholeNumber(value);
  if (id < 1n || id >= 2n ** 128n) throw new InvalidArgumentError(`"${value}" is not a scorer id.`);
  return id;
}

function ownerKeyOf(io: CliIo, option: Hex | undefined): Hex {
  if (option) return option;
  const fromEnv = io.env[OWNER_KEY_ENV]?.trim();
  if (!fromEnv) throw new OnchainAdminError(`the verifier owner's key is needed: set ${OWNER_KEY_ENV} (or pass --owner-key)`);
  try {
    return privateKey(fromEnv);
  } catch {
    throw new OnchainAdminError(`${OWNER_KEY_ENV} is not a private key: 0x followed by 64 hexadecimal digits`);
  }
}

function adminOptions(io: CliIo, config: Config, chainId: number, ownerKey: Hex | undefined): AdminOptions {
  return { config, chainId, ownerKey: ownerKeyOf(io, ownerKey), timeoutMs: config.outboundTimeoutMs };
}

function describeSigners(result: SignersResult): string[] {
  return [
    result.transaction ? `Chain ${result.chain_id}: verifier ${result.verifier} updated in ${result.transaction}.` : `Chain ${result.chain_id}: verifier ${result.verifier} already so; nothing sent.`,
    ...result.signers.map((s) => `  ${s.address}  added ${s.added_at}${s.removed_at ? `  removed ${s.removed_at}` : '  trusted'}`),
  ];
}

/** `stampgate onchain deploy|signers|fee|read|revoke|push|push-status`. */
export function onchainCommand(program: Command, io: CliIo): void {
  const onchain = program.command('onchain').description('Stampgate\'s attestation contracts on EAS: deploy, signers, fee, reads, revocations and the operator push');
  onchainPushCommands(onchain, io);

  onchain
    .command('deploy')
    .description(
      'Deploy (or with --eas reuse) EAS + SchemaRegistry, then the verifier, resolver and decoder; register both schemas, authorise the signer ' +
        'and add the chain to the deployment file (ONCHAIN_CONFIG_FILE). Prints one JSON object. Run once per chain',
    )
    .requiredOption('--rpc-url <url>', 'JSON-RPC URL of the chain')
    .option('--eas <address>', 'the chain\'s existing EAS contract (its SchemaRegistry is read from it)', checksumless)
    .option('--owner-key <key>', ownerKeyHelp, privateKey)
    .option('--signer <address>', 'authorise this address instead of ATTESTATION_SIGNER_KEY\'s (the signing key then need not be on this machine)', checksumless)
    .option('--no-save-rpc-url', 'leave the RPC URL out of the deployment file (when it carries a secret; set ONCHAIN_RPC_URL_<chain id> instead)')
    .action(async (options: { rpcUrl: string; eas?: Address; ownerKey?: Hex; signer?: Address; saveRpcUrl: boolean }) => {
      const config = loadConfig(io.env);
      const ownerKey = ownerKeyOf(io, options.ownerKey);
      const signerAddress = options.signer ?? (await loadAttestationSigner(config))?.address;
      if (!signerAddress) throw new OnchainAdminError('ATTESTATION_SIGNER_KEY is not set: set it, or name the signer to authorise with --signer ADDRESS');
      const result = await deployOnchain({
        rpcUrl: options.rpcUrl,
        ownerKey,
        ...(options.eas ? { easAddress: options.eas } : {}),
        signerAddress,
        deploymentFile: deploymentFilePath(config),
        saveRpcUrl: options.saveRpcUrl,
        timeoutMs: config.outboundTimeoutMs,
      });
      io.out(JSON.stringify(result, null, 2));
    });

  const signers = onchain.command('signers').description('Authorise or remove attestation signers on a chain\'s verifier (key rotation)');
  for (const action of ['add', 'remove'] as const) {
    signers
      .command(action)
      .description(action === 'add' ? 'Authorise ADDRESS to sign attestation requests' : 'Stop trusting ADDRESS; what it signed and was attested stays valid until it expires or is revoked')
      .requiredOption('--chain <id>', 'chain id of the deployment file', positiveInteger)
      .argument('<address>', 'the signer\'s address', checksumless)
      .option('--owner-key <key>', ownerKeyHelp, privateKey)
      .option('--json', 'machine-readable output')
      .action(async (address: Address, options: { chain: number; ownerKey?: Hex; json?: boolean }) => {
        const admin = adminOptions(io, loadConfig(io.env), options.chain, options.ownerKey);
        const result = action === 'add' ? await addSigner(admin, address) : await removeSigner(admin, address);
        report(io, !!options.json, result, () => describeSigners(result));
      });
  }

  onchain
    .command('fee')
    .description('Set the fee (wei) every attestation request must carry and pay; 0 for none')
    .requiredOption('--chain <id>', 'chain id of the deployment file', positiveInteger)
    .requiredOption('--wei <n>', 'the fee in wei', wholeNumber)
    .option('--owner-key <key>', ownerKeyHelp, privateKey)
    .option('--json', 'machine-readable output')
    .action(async (options: { chain: number; wei: bigint; ownerKey?: Hex; json?: boolean }) => {
      const result = await setFee(adminOptions(io, loadConfig(io.env), options.chain, options.ownerKey), options.wei);
      report(io, !!options.json, result, () => [`Chain ${result.chain_id}: fee ${result.fee} wei (${result.transaction}).`]);
    });

  onchain
    .command('read')
    .description('Read an address\'s score and passport from the chain\'s decoder over RPC only (no database)')
    .requiredOption('--chain <id>', 'chain id of the deployment file', positiveInteger)
    .requiredOption('--address <address>', 'the wallet address', checksumless)
    .option('--scorer <id>', 'the scorer whose score to read', scorerId)
    .option('--json', 'machine-readable output')
    .action(async (options: { chain: number; address: Address; scorer?: bigint; json?: boolean }) => {
      const config = loadConfig(io.env);
      const { deployment, rpcUrl } = await deployedChain(config, options.chain);
      const chain = await connectChain(rpcUrl, { timeoutMs: config.outboundTimeoutMs, expectedChainId: options.chain });
      const result = await readDecoder(chain, deployment.decoder as Address, options.address, options.scorer ?? null);
      report(io, !!options.json, result, () => [
        `Chain ${result.chain_id}, decoder ${result.decoder}, ${result.address}:`,
        ...(result.score
          ? [
              result.score.time === '0'
                ? `  scorer ${result.score.scorer_id}: no live score`
                : `  scorer ${result.score.scorer_id}: score ${result.score.score} (x10^${result.score.score_decimals}), ${result.score.is_human ? 'human' : 'not passing'}, attested ${result.score.time}, expires ${result.score.expiration_time}`,
            ]
          : []),
        `  ${result.passport.length} live stamp(s)${result.passport.map((s) => `\n    ${s.provider}  expires ${s.expiration_date}`).join('')}`,
      ]);
    });

  onchain
    .command('revoke')
    .description('Revoke every attestation of ADDRESS on the chain (its latest score per scorer and its passport), for a ban')
    .requiredOption('--chain <id>', 'chain id of the deployment file', positiveInteger)
    .requiredOption('--address <address>', 'the wallet address', checksumless)
    .option('--owner-key <key>', ownerKeyHelp, privateKey)
    .option('--json', 'machine-readable output')
    .action(async (options: { chain: number; address: Address; ownerKey?: Hex; json?: boolean }) => {
      const result = await revokeAddress(adminOptions(io, loadConfig(io.env), options.chain, options.ownerKey), options.address);
      report(io, !!options.json, result, () => [
        `Chain ${result.chain_id}, ${result.address}: revoked ${result.scores.length} score attestation(s)${result.passport_uid ? ' and the passport' : ''}.`,
        ...result.transactions.map((t) => `  ${t}`),
      ]);
    });
}
