import {
  type Address,
  concatHex,
  encodeAbiParameters,
  encodeDeployData,
  encodeFunctionData,
  getContractAddress,
  type Hex,
  keccak256,
  toHex,
} from 'viem';
import { type Anvil, type Artifact, compileContracts, type TestWallet } from './evm.js';

/**
 * Smart wallets on a local anvil for signature tests: an `OwnedWallet` deployed
 * directly (ERC-1271) and counterfactual ones from `OwnedWalletFactory` (ERC-6492),
 * all owned by the same development account.
 */

/** ERC-6492's magic suffix: a signature ending in it is (factory, calldata, signature) ABI-encoded. */
export const ERC6492_SUFFIX: Hex = `0x${'6492'.repeat(16)}`;

export interface Counterfactual {
  address: Address;
  /** The factory call that deploys it. */
  factoryData: Hex;
  /** `signature` wrapped per ERC-6492 with this wallet's factory and deploy calldata. */
  wrap(signature: Hex): Hex;
  /** Sends the factory call, so the wallet exists from then on. */
  deploy(): Promise<void>;
}

export interface SmartWallets {
  artifacts: Record<string, Artifact>;
  owner: TestWallet;
  stranger: TestWallet;
  /** An ERC-1271 wallet of `owner`, deployed. */
  deployed: Address;
  factory: Address;
  /** A wallet of `owner` at its CREATE2 address, not deployed (the caller deploys none). */
  counterfactual(label: string): Promise<Counterfactual>;
}

export async function setUpSmartWallets(anvil: Anvil): Promise<SmartWallets> {
  const artifacts = compileContracts('SmartWallet.sol');
  const wallet = artifacts.OwnedWallet!;
  const factoryArtifact = artifacts.OwnedWalletFactory!;
  const [deployer, owner, stranger] = anvil.wallets as [TestWallet, TestWallet, TestWallet];
  const deployed = (await anvil.deploy(deployer, wallet, [owner.account.address])).address;
  const factory = (await anvil.deploy(deployer, factoryArtifact)).address;

  async function counterfactual(label: string): Promise<Counterfactual> {
    const salt = keccak256(toHex(label));
    const address = getContractAddress({
      opcode: 'CREATE2',
      from: factory,
      salt,
      bytecode: encodeDeployData({ abi: wallet.abi, bytecode: wallet.bytecode, args: [owner.account.address] }),
    });
    // The factory's own view must agree with the CREATE2 rule, or the fixture is wrong.
    const fromFactory = await anvil.publicClient.readContract({
      address: factory,
      abi: factoryArtifact.abi,
      functionName: 'walletAddress',
      args: [owner.account.address, salt],
    });
    if ((fromFactory as string).toLowerCase() !== address.toLowerCase()) throw new Error('CREATE2 address mismatch');
    const factoryData = encodeFunctionData({ abi: factoryArtifact.abi, functionName: 'deploy', args: [owner.account.address, salt] });
    return {
      address,
      factoryData,
      wrap: (signature) =>
        concatHex([encodeAbiParameters([{ type: 'address' }, { type: 'bytes' }, { type: 'bytes' }], [factory, factoryData, signature]), ERC6492_SUFFIX]),
      deploy: async () => {
        await anvil.write(deployer, factory, factoryArtifact.abi, 'deploy', [owner.account.address, salt]);
      },
    };
  }

  return { artifacts, owner, stranger, deployed, factory, counterfactual };
}
