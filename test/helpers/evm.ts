import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  type Abi,
  type Address,
  type Chain,
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hex,
  http,
  type PublicClient,
  type WalletClient,
  type Transport,
  type Account,
} from 'viem';
import { mnemonicToAccount } from 'viem/accounts';

/**
 * A real EVM for tests: an `anvil` node from the installed npm package on a free
 * loopback port, contracts from `contracts/` compiled with the installed `solc`
 * (standard JSON input), and viem clients with anvil's funded development accounts.
 */

const root = resolve(import.meta.dirname, '..', '..');
const anvilBinary = join(root, 'node_modules', '@foundry-rs', 'anvil-linux-amd64', 'bin', 'anvil');
const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk';

export interface Artifact {
  abi: Abi;
  bytecode: Hex;
}

const compiled = new Map<string, Record<string, Artifact>>();

/**
 * The contracts of the given `contracts/` files (default: every `.sol` file), by
 * contract name. The optimizer is off: it would triple the compile time and tests
 * do not care about gas. solc's output is kept in the temporary directory under the
 * hash of its exact input and solc version, so unchanged sources are compiled once,
 * not once per test file and run; any change to a source compiles again.
 */
export function compileContracts(...files: string[]): Record<string, Artifact> {
  const dir = join(root, 'contracts');
  const chosen = files.length > 0 ? files : readdirSync(dir).filter((f) => f.endsWith('.sol'));
  const cacheKey = [...chosen].sort().join(',');
  const cached = compiled.get(cacheKey);
  if (cached) return cached;
  const sources: Record<string, { content: string }> = {};
  for (const file of chosen) sources[file] = { content: readFileSync(join(dir, file), 'utf8') };
  const input = {
    language: 'Solidity',
    sources,
    settings: {
      optimizer: { enabled: false },
      evmVersion: 'cancun',
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  };
  const output = JSON.parse(solcCompile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  const artifacts: Record<string, Artifact> = {};
  for (const contracts of Object.values(output.contracts)) {
    for (const [name, c] of Object.entries(contracts)) artifacts[name] = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
  }
  compiled.set(cacheKey, artifacts);
  return artifacts;
}

function solcCompile(input: string): string {
  const require = createRequire(import.meta.url);
  const version = (JSON.parse(readFileSync(require.resolve('solc/package.json'), 'utf8')) as { version: string }).version;
  const dir = join(tmpdir(), 'stampgate-solc-cache');
  const file = join(dir, `${createHash('sha256').update(version).update('\0').update(input).digest('hex')}.json`);
  try {
    return readFileSync(file, 'utf8');
  } catch {
    // Not compiled yet.
  }
  const output = (require('solc') as { compile(input: string): string }).compile(input);
  const parsed = JSON.parse(output) as { errors?: { severity: string }[] };
  if (!(parsed.errors ?? []).some((e) => e.severity === 'error')) {
    mkdirSync(dir, { recursive: true });
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, output);
    renameSync(partial, file);
  }
  return output;
}

/** A TCP port nobody listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

export type TestWallet = WalletClient<Transport, Chain, Account>;

export interface Anvil {
  url: string;
  chain: Chain;
  publicClient: PublicClient;
  /** Wallet clients of anvil's first ten funded accounts. */
  wallets: TestWallet[];
  /** Mines `blocks` empty blocks. */
  mine(blocks: number): Promise<void>;
  blockNumber(): Promise<bigint>;
  deploy(wallet: TestWallet, artifact: Artifact, args?: readonly unknown[]): Promise<{ address: Address; blockNumber: bigint }>;
  /** Sends a contract call, waits for it to be mined, and returns its block number. */
  write(wallet: TestWallet, address: Address, abi: Abi, functionName: string, args: readonly unknown[]): Promise<bigint>;
  stop(): Promise<void>;
}

async function rpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** Starts anvil (instant mining, chain id 31337 unless told) and waits until it answers. */
export async function startAnvil(options: { chainId?: number } = {}): Promise<Anvil> {
  const chainId = options.chainId ?? 31337;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(anvilBinary, ['--host', '127.0.0.1', '--port', String(port), '--silent', '--chain-id', String(chainId)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let exited = false;
  const exit = new Promise<void>((done) =>
    child.once('exit', () => {
      exited = true;
      done();
    }),
  );

  const deadline = Date.now() + 15_000;
  for (;;) {
    if (exited) throw new Error(`anvil exited at start: ${stderr}`);
    try {
      await rpc(url, 'eth_chainId');
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`anvil did not answer on ${url} within 15 s: ${stderr}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  const chain = defineChain({
    id: chainId,
    name: 'anvil',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  });
  const transport = http(url, { retryCount: 0 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 50 }) as PublicClient;
  const wallets = Array.from({ length: 10 }, (_, i) =>
    createWalletClient({ chain, transport, account: mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: i }) }),
  );

  const anvil: Anvil = {
    url,
    chain,
    publicClient,
    wallets,
    async mine(blocks) {
      await rpc(url, 'anvil_mine', [`0x${blocks.toString(16)}`]);
    },
    blockNumber: () => publicClient.getBlockNumber({ cacheTime: 0 }),
    async deploy(wallet, artifact, args = []) {
      const hash = await wallet.deployContract({ abi: artifact.abi, bytecode: artifact.bytecode, args });
      const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
      if (!receipt.contractAddress || receipt.status !== 'success') throw new Error('deployment failed');
      return { address: receipt.contractAddress, blockNumber: receipt.blockNumber };
    },
    async write(wallet, address, abi, functionName, args) {
      const hash = await wallet.writeContract({ address, abi, functionName, args, chain, account: wallet.account });
      const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
      if (receipt.status !== 'success') throw new Error(`${functionName} reverted`);
      return receipt.blockNumber;
    },
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exit;
      clearTimeout(timer);
    },
  };
  return anvil;
}
