/**
 * For the onchain tests: a deployed chain's attestation requests built, encoded and signed the way
 * an integrator would from the committed JSON (viem, not our service code), and the custom error a
 * call reverts with.
 */
import { createRequire } from 'node:module';
import {
  type Abi,
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  encodeAbiParameters,
  type Hex,
  parseAbiParameters,
  parseSignature,
  type PrivateKeyAccount,
  toHex,
} from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const abiDir = resolve(import.meta.dirname, '..', '..', 'contracts', 'abi');
export const schemaStrings = JSON.parse(readFileSync(join(abiDir, 'schemas.json'), 'utf8')) as { score: string; passport: string };
const eip712 = JSON.parse(readFileSync(join(abiDir, 'verifier-eip712.json'), 'utf8')) as {
  domain: { name: string; version: string };
  types: Record<string, { name: string; type: string }[]>;
};
export function abiOf(name: string): Abi {
  return (JSON.parse(readFileSync(join(abiDir, `${name}.json`), 'utf8')) as { abi: Abi }).abi;
}

/** anvil's funded development account `index` and its private key. */
export function anvilKey(index: number): Hex {
  const key = mnemonicToAccount('test test test test test test test test test test test junk', { addressIndex: index }).getHdKey().privateKey;
  if (!key) throw new Error('no private key');
  return toHex(key);
}

export interface ScoreFields {
  passing: boolean;
  scorerId: bigint;
  score: number;
  threshold: number;
  stamps: { provider: string; score: bigint }[];
}

export function encodeScore(fields: ScoreFields): Hex {
  return encodeAbiParameters(parseAbiParameters(schemaStrings.score), [
    fields.passing,
    4,
    fields.scorerId,
    fields.score,
    fields.threshold,
    fields.stamps,
  ]);
}

export interface PassportStampFields {
  provider: string;
  hash: Hex;
  issuance_date: bigint;
  expiration_date: bigint;
}

export function encodePassport(stamps: PassportStampFields[]): Hex {
  return encodeAbiParameters(parseAbiParameters(schemaStrings.passport), [stamps]);
}

export interface AttestationRequest {
  recipient: Address;
  attestations: { schema: Hex; expirationTime: bigint; data: Hex }[];
  nonce: bigint;
  deadline: bigint;
  fee: bigint;
}

export interface RequestSignature {
  v: number;
  r: Hex;
  s: Hex;
}

/** Signs `request` with the types of contracts/abi/verifier-eip712.json for the verifier at `verifier` on `chainId`. */
export async function signRequest(signer: PrivateKeyAccount, chainId: number, verifier: Address, request: AttestationRequest): Promise<RequestSignature> {
  const signature = await signer.signTypedData({
    domain: { ...eip712.domain, chainId, verifyingContract: verifier },
    types: eip712.types,
    primaryType: 'AttestationRequest',
    message: request as unknown as Record<string, unknown>,
  });
  const { r, s, v, yParity } = parseSignature(signature);
  return { r, s, v: v === undefined ? 27 + yParity : Number(v) };
}

/** The name of the custom error `call` reverted with (decoded with `abi`); fails when it did not revert. */
export async function revertName(call: Promise<unknown>): Promise<{ name: string; args: readonly unknown[] }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof BaseError) {
      const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
      if (reverted instanceof ContractFunctionRevertedError && reverted.data) {
        return { name: reverted.data.errorName, args: reverted.data.args ?? [] };
      }
      throw new Error(`reverted without a decodable custom error: ${error.shortMessage}`, { cause: error });
    }
    throw error;
  }
  throw new Error('the call did not revert');
}

/** eas-sdk, the independent implementation (loaded through require: its ESM entry point does not resolve under Node). */
export function easSdk(): { SchemaEncoder: new (schema: string) => { decodeData(data: string): { name: string; type: string; value: { value: unknown } }[] } } {
  return createRequire(import.meta.url)('@ethereum-attestation-service/eas-sdk');
}

/** A request of one score and one passport attestation for `recipient`, valid for an hour. */
export function scoreAndPassportRequest(
  deployment: { score_schema_uid: string; passport_schema_uid: string },
  recipient: Address,
  options: { nonce: bigint; now: bigint; fee?: bigint; score?: Partial<ScoreFields>; stamps?: PassportStampFields[] },
): AttestationRequest {
  const expirationTime = options.now + 90n * 86_400n;
  const score: ScoreFields = {
    passing: true,
    scorerId: 7n,
    score: 215_000,
    threshold: 200_000,
    stamps: [
      { provider: 'Google', score: 25_000n },
      { provider: 'Github', score: 190_000n },
    ],
    ...options.score,
  };
  const stamps = options.stamps ?? [
    { provider: 'Google', hash: toHex(1n, { size: 32 }), issuance_date: options.now - 86_400n, expiration_date: options.now + 30n * 86_400n },
    { provider: 'Github', hash: toHex(2n, { size: 32 }), issuance_date: options.now - 86_400n, expiration_date: options.now + 60n * 86_400n },
  ];
  return {
    recipient,
    attestations: [
      { schema: deployment.score_schema_uid as Hex, expirationTime, data: encodeScore(score) },
      { schema: deployment.passport_schema_uid as Hex, expirationTime, data: encodePassport(stamps) },
    ],
    nonce: options.nonce,
    deadline: options.now + 3600n,
    fee: options.fee ?? 0n,
  };
}

/** `n` as a bytes32 hex value. */
export function toHexSafe(n: bigint): Hex {
  return toHex(n, { size: 32 });
}
