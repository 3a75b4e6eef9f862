import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeSettings } from '../../src/config/index.js';
import { readDeploymentFile } from '../../src/onchain/deployment-file.js';
import { runCli } from '../helpers/cli.js';
import { type Anvil, startAnvil } from '../helpers/evm.js';
import { anvilKey, scoreAndPassportRequest, signRequest, type AttestationRequest, type RequestSignature } from '../helpers/onchain.js';
import { verifierAbi } from '../helpers/onchain-chain.js';
import { buildCli, cliEnvironment } from '../helpers/processes.js';

const run = promisify(execFile);
const workDir = mkdtempSync(join(tmpdir(), 'stampgate-onchain-cli-'));
const dataDir = join(workDir, 'data');
const deploymentFile = join(workDir, 'onchain.json');
let cliPath = '';
let anvil: Anvil;
/** No database anywhere: a PostgreSQL URL on a port nothing listens on, which any use would fail on. */
const env = {
  STAMPGATE_ENV: 'development',
  DATA_DIR: dataDir,
  DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
  ONCHAIN_CONFIG_FILE: deploymentFile,
  ONCHAIN_OWNER_KEY: anvilKey(0),
};

async function stampgate(args: string[], extra: Record<string, string> = {}) {
  const childEnv = cliEnvironment(describeSettings().map((s) => s.name), { ...env, ...extra });
  try {
    const { stdout, stderr } = await run(process.execPath, [cliPath, ...args], { env: childEnv, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

async function submit(request: AttestationRequest, signature: RequestSignature, verifier: Address) {
  await anvil.write(anvil.wallets[1]!, verifier, verifierAbi, 'verifyAndAttest', [request, signature.v, signature.r, signature.s]);
}

beforeAll(async () => {
  [cliPath, anvil] = await Promise.all([buildCli(join(workDir, 'build')), startAnvil({ chainId: 10 })]);
}, 90_000);

afterAll(async () => {
  await anvil?.stop();
  rmSync(workDir, { recursive: true, force: true });
});

describe('stampgate onchain, as a real process with no database', () => {
  let deployment: Record<string, string>;
  const recipient = privateKeyToAccount(generatePrivateKey()).address;

  it('deploy prints one JSON object and authorises the development signer generated into DATA_DIR', async () => {
    const result = await stampgate(['onchain', 'deploy', '--rpc-url', anvil.url]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    deployment = JSON.parse(result.stdout);
    const signerKey = readFileSync(join(dataDir, 'attestation-signer.key'), 'utf8').trim() as Hex;
    expect(deployment).toEqual(
      expect.objectContaining({
        chain_id: 10,
        signer: privateKeyToAccount(signerKey).address,
        eas: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/),
        schema_registry: expect.any(String),
        verifier: expect.any(String),
        resolver: expect.any(String),
        decoder: expect.any(String),
        score_schema_uid: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        passport_schema_uid: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      }),
    );
    expect((await readDeploymentFile(deploymentFile)).chains).toEqual([expect.objectContaining({ chain_id: 10, verifier: deployment.verifier, rpc_url: anvil.url })]);
    expect(readdirSync(dataDir)).toEqual(['attestation-signer.key']);
  }, 60_000);

  it('read answers from the chain alone: the attested score and passport', async () => {
    const signer = privateKeyToAccount(readFileSync(join(dataDir, 'attestation-signer.key'), 'utf8').trim() as Hex);
    const now = (await anvil.publicClient.getBlock()).timestamp;
    const request = scoreAndPassportRequest(deployment as never, recipient, { nonce: 0n, now });
    await submit(request, await signRequest(signer, 10, deployment.verifier as Address, request), deployment.verifier as Address);

    const result = await stampgate(['onchain', 'read', '--chain', '10', '--address', recipient.toLowerCase(), '--scorer', '7', '--json']);
    expect(result.code).toBe(0);
    const read = JSON.parse(result.stdout);
    expect(read.address).toBe(recipient);
    expect(read.score).toEqual(expect.objectContaining({ scorer_id: '7', score: '215000', passing: true, is_human: true, expiration_time: String(now + 90n * 86_400n) }));
    expect(read.passport.map((s: { provider: string }) => s.provider)).toEqual(['Google', 'Github']);
    expect(existsSync(join(dataDir, 'stampgate.sqlite'))).toBe(false);
  }, 60_000);

  it('revoke revokes the address\'s score and passport; read then answers zeros and no stamps', async () => {
    const revoked = await runCli(['onchain', 'revoke', '--chain', '10', '--address', recipient, '--json'], env);
    expect(revoked.err).toBe('');
    expect(revoked.json()).toEqual(expect.objectContaining({ address: recipient, scores: [{ scorer_id: '7', uid: expect.any(String) }], passport_uid: expect.any(String) }));
    expect(revoked.json().transactions).toHaveLength(2);

    const read = await runCli(['onchain', 'read', '--chain', '10', '--address', recipient, '--scorer', '7', '--json'], env);
    expect(read.json().score).toEqual({ scorer_id: '7', score: '0', score_decimals: 4, passing: false, is_human: false, time: '0', expiration_time: '0' });
    expect(read.json().passport).toEqual([]);
    const again = await runCli(['onchain', 'revoke', '--chain', '10', '--address', recipient, '--json'], env);
    expect(again.json()).toEqual(expect.objectContaining({ scores: [], passport_uid: null, transactions: [] }));
  }, 60_000);

  it('signers add|remove and fee change the verifier and the file', async () => {
    const next = privateKeyToAccount(generatePrivateKey()).address;
    const added = await runCli(['onchain', 'signers', 'add', '--chain', '10', next, '--json'], env);
    expect(added.code).toBe(0);
    const isSigner = () => anvil.publicClient.readContract({ address: deployment.verifier as Address, abi: verifierAbi, functionName: 'isSigner', args: [next] });
    expect(await isSigner()).toBe(true);
    const removed = await runCli(['onchain', 'signers', 'remove', '--chain', '10', next], env);
    expect(removed.out).toContain(next);
    expect(await isSigner()).toBe(false);
    const signers = (await readDeploymentFile(deploymentFile)).chains[0]!.signers;
    expect(signers.map((s) => [s.address, s.removed_at === null])).toEqual([[deployment.signer, true], [next, false]]);

    expect((await runCli(['onchain', 'fee', '--chain', '10', '--wei', '12345'], env)).code).toBe(0);
    expect(await anvil.publicClient.readContract({ address: deployment.verifier as Address, abi: verifierAbi, functionName: 'fee' })).toBe(12345n);
  }, 60_000);

  it('refuses clearly: an unknown chain, a missing owner key, a bad address', async () => {
    const unknown = await runCli(['onchain', 'read', '--chain', '99', '--address', recipient], env);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('chain 99 is not in');
    const { ONCHAIN_OWNER_KEY: _omitted, ...withoutOwner } = env;
    const noKey = await runCli(['onchain', 'fee', '--chain', '10', '--wei', '1'], withoutOwner);
    expect(noKey.code).toBe(1);
    expect(noKey.err).toContain('ONCHAIN_OWNER_KEY');
    expect((await runCli(['onchain', 'read', '--chain', '10', '--address', '0x12'], env)).code).toBe(2);
  });
});
