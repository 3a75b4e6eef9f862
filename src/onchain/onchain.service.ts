/**
 * The service side of the onchain layer: the chains listing, the v2 score as a signed EAS
 * offchain attestation, and signed attestation requests the verifier contract accepts. It scores
 * through the v2 scoring service (so each answer is recorded as `GET /v2/stamps/…/score` records
 * it) and signs with the one attestation signer key.
 */
import { type Address, getAddress, type Hex } from 'viem';
import { checksumAddress } from '../chain/abi-words.js';
import { AppError } from '../errors.js';
import { isScorerId, type AccountService } from '../scoring/accounts/accounts.service.js';
import type { V2Score, V2ScoreService } from '../scoring/scores/v2-scores.service.js';
import type { TrustedIssuerService } from '../scoring/stamps/issuers.service.js';
import type { StampsRepository } from '../scoring/stamps/stamps.repository.js';
import { earliestExpiry, encodePassportData, encodeScoreData, expirationSeconds, passportStamps, type PassportStampSource, scoreFields, unitsText } from './attestation-data.js';
import type { ChainDeployments } from './chain-deployments.js';
import type { DecoderScoreReader } from './decoder-score-reads.js';
import type { ChainDeployment } from './deployment-file.js';
import { signAttestationRequest } from './attestation-request.js';
import { schemaStrings } from './interface-files.js';
import { type SignedOffchainAttestation, signOffchainAttestation } from './offchain-attestation.js';
import type { AttestationSigner } from './signer-key.js';
import type { RsvSignature } from './typed-signing.js';
import type { VerifierReader } from './verifier-reads.js';

/** How long a signed attestation request stays submittable (its `deadline`). */
export const REQUEST_LIFETIME_SECONDS = 3600;

export interface OnchainServiceDeps {
  v2: Pick<V2ScoreService, 'scoreNow'>;
  accounts: Pick<AccountService, 'scorerOfAccount' | 'getScorer'>;
  stamps: Pick<StampsRepository, 'liveForScoring'>;
  issuers: Pick<TrustedIssuerService, 'current'>;
  deployments: ChainDeployments;
  /** Null: no key (production without ATTESTATION_SIGNER_KEY). */
  signer: AttestationSigner | null;
  readVerifier: VerifierReader;
  readDecoderScore: DecoderScoreReader;
  attestationTtlDays: number;
  clock?: () => number;
}

/** Who asks for an attestation request: an API key's account, or a wallet signed in as an address. */
export type AttestationCaller = { accountId: number } | { walletAddress: string };

export interface AttestationRequestAnswer {
  chain_id: number;
  verifier: Address;
  request: {
    recipient: Address;
    attestations: { schema: Hex; expirationTime: string; data: Hex }[];
    nonce: string;
    deadline: string;
    fee: string;
  };
  signature: RsvSignature;
  score: V2Score;
}

function earliestStampExpiry(score: V2Score): number | null {
  let earliest: number | null = null;
  for (const stamp of Object.values(score.stamps)) {
    const at = Date.parse(stamp.expiration_date);
    if (!Number.isNaN(at) && (earliest === null || at < earliest)) earliest = at;
  }
  return earliest;
}

function scoreExpiry(score: V2Score): number | null {
  return score.expiration_timestamp === null ? earliestStampExpiry(score) : Date.parse(score.expiration_timestamp);
}

/** One chain's entry of the onchain score answer: what its decoder says, or why it could not be read. */
export type OnchainChainScore =
  | { chain_id: number; decoder: Address; attested: boolean; score: string; passing: boolean; time: string; expiration_time: string }
  | { chain_id: number; decoder: Address; error: { code: 'upstream_unavailable' | 'onchain_not_configured'; detail: string } };

export function onchainService(deps: OnchainServiceDeps) {
  const clock = deps.clock ?? Date.now;

  function signer(): AttestationSigner {
    if (!deps.signer) throw new AppError('onchain_not_configured', 'Attestations are not configured on this server (ATTESTATION_SIGNER_KEY is not set).');
    return deps.signer;
  }

  function checkScorerId(scorerId: number): void {
    if (!isScorerId(scorerId)) throw new AppError('scorer_not_found', `There is no scorer ${scorerId} for this API key.`);
  }

  /** The address's live stamps of trusted issuers, unexpired at `now`: the passport, whatever a scorer's dedup did. */
  async function livePassport(address: string, now: number): Promise<PassportStampSource[]> {
    const [stamps, trusted] = await Promise.all([deps.stamps.liveForScoring(address), deps.issuers.current()]);
    return stamps.filter((stamp) => trusted.has(stamp.issuer) && stamp.expirationDate > now);
  }

  return {
    /** `GET /v2/onchain/chains`: what integrators pin. */
    async chains() {
      const chains = await deps.deployments.all();
      return {
        chains: chains.map((chain) => ({
          chain_id: chain.chain_id,
          eas: getAddress(chain.eas),
          schema_registry: getAddress(chain.schema_registry),
          verifier: getAddress(chain.verifier),
          resolver: getAddress(chain.resolver),
          decoder: getAddress(chain.decoder),
          score_schema: chain.score_schema,
          score_schema_uid: chain.score_schema_uid.toLowerCase(),
          passport_schema: chain.passport_schema,
          passport_schema_uid: chain.passport_schema_uid.toLowerCase(),
          signers: chain.signers.map((s) => ({ address: getAddress(s.address), added_at: s.added_at, removed_at: s.removed_at })),
        })),
      };
    },

    /**
     * The v2 score of `address` (scored and recorded now, as the v2 score route does) as an EAS
     * offchain attestation of the score schema for `chainId`. `address` is lower case.
     */
    async offchainScoreAttestation(scorerId: number, accountId: number, address: string, chainId: number) {
      const key = signer();
      const chain = await deps.deployments.find(chainId);
      checkScorerId(scorerId);
      const { score } = await deps.v2.scoreNow(scorerId, accountId, address);
      const time = Math.floor(clock() / 1000);
      const attestation: SignedOffchainAttestation = signOffchainAttestation(key.privateKey, {
        chainId: chain.chain_id,
        eas: chain.eas as Address,
        easVersion: chain.eas_version,
        schemaUid: chain.score_schema_uid as Hex,
        recipient: address as Address,
        data: encodeScoreData(scoreFields(score, scorerId)),
        time,
        expirationTime: expirationSeconds(scoreExpiry(score), time, deps.attestationTtlDays),
        revocable: schemaStrings.revocable,
      });
      return { attestation, signer: key.address, uid: attestation.uid };
    },

    /**
     * What each deployed chain's decoder says of `address` (lower case) for the scorer, read from
     * the chains only (nothing is scored or recorded), every chain at once. A chain that cannot be
     * read is an entry with its error; it never fails the answer. No chain deployed is no entry
     * (not 503): the question "what do the chains say" has an answer, and the portal asks it on
     * every lookup, on servers that never deploy too.
     */
    async onchainScores(scorerId: number, accountId: number, address: string) {
      const chains = await deps.deployments.deployed();
      checkScorerId(scorerId);
      await deps.accounts.scorerOfAccount(scorerId, accountId);
      const user = getAddress(address);
      const entries = await Promise.all(
        chains.map(async (chain): Promise<OnchainChainScore> => {
          const decoder = getAddress(chain.decoder);
          try {
            const read = await deps.readDecoderScore(deps.deployments.rpcUrl(chain), decoder, BigInt(scorerId), user);
            return {
              chain_id: chain.chain_id,
              decoder,
              attested: read.time > 0n,
              score: unitsText(read.score),
              passing: read.passing,
              time: read.time.toString(),
              expiration_time: read.expirationTime.toString(),
            };
          } catch (error) {
            if (!(error instanceof AppError) || (error.code !== 'upstream_unavailable' && error.code !== 'onchain_not_configured')) throw error;
            return { chain_id: chain.chain_id, decoder, error: { code: error.code, detail: error.message } };
          }
        }),
      );
      return { address, scorer_id: String(scorerId), chains: entries };
    },

    /**
     * A signed request for the verifier's `verifyAndAttest`: the score (scored and recorded now)
     * and the passport of `address`. The verifier's nonce and fee are read first, so that an RPC
     * failure (502) records nothing; no database transaction is open while they are read.
     */
    async attestationRequest(chainId: number, address: string, scorerId: number, caller: AttestationCaller): Promise<AttestationRequestAnswer> {
      const key = signer();
      const chain = await deps.deployments.find(chainId);
      const rpcUrl = deps.deployments.rpcUrl(chain);
      checkScorerId(scorerId);
      let accountId: number;
      if ('accountId' in caller) {
        accountId = (await deps.accounts.scorerOfAccount(scorerId, caller.accountId)).accountId;
      } else {
        if (caller.walletAddress.toLowerCase() !== address) {
          throw new AppError('permission_denied', 'A wallet session can only ask for the attestation of its own address.');
        }
        accountId = (await deps.accounts.getScorer(scorerId)).accountId;
      }
      const recipient = checksumAddress(address);
      const { nonce, fee } = await deps.readVerifier(rpcUrl, checksumAddress(chain.verifier), recipient);
      const { score } = await deps.v2.scoreNow(scorerId, accountId, address);
      const nowMs = clock();
      const now = Math.floor(nowMs / 1000);
      const passport = await livePassport(address, nowMs);
      return signRequest(key, chain, recipient, score, scorerId, passport, { nonce, fee, now, ttlDays: deps.attestationTtlDays });
    },

    /**
     * The operator push's request for `address`: `score` as already recorded, the live passport,
     * the verifier's nonce and fee read now (502 `upstream_unavailable` when the RPC fails).
     */
    async signedRequestFor(chain: ChainDeployment, address: string, scorerId: number, score: V2Score): Promise<AttestationRequestAnswer> {
      const key = signer();
      const recipient = getAddress(address);
      const { nonce, fee } = await deps.readVerifier(deps.deployments.rpcUrl(chain), getAddress(chain.verifier), recipient);
      const nowMs = clock();
      const passport = await livePassport(address, nowMs);
      return signRequest(key, chain, recipient, score, scorerId, passport, { nonce, fee, now: Math.floor(nowMs / 1000), ttlDays: deps.attestationTtlDays });
    },
  };
}

function signRequest(
  key: AttestationSigner,
  chain: ChainDeployment,
  recipient: Address,
  score: V2Score,
  scorerId: number,
  passport: PassportStampSource[],
  at: { nonce: bigint; fee: bigint; now: number; ttlDays: number },
): AttestationRequestAnswer {
  const scoreExpiryMs = scoreExpiry(score) ?? earliestExpiry(passport);
  const attestations = [
    { schema: chain.score_schema_uid.toLowerCase() as Hex, expirationTime: expirationSeconds(scoreExpiryMs, at.now, at.ttlDays), data: encodeScoreData(scoreFields(score, scorerId)) },
    { schema: chain.passport_schema_uid.toLowerCase() as Hex, expirationTime: expirationSeconds(earliestExpiry(passport), at.now, at.ttlDays), data: encodePassportData(passportStamps(passport)) },
  ];
  const deadline = BigInt(at.now + REQUEST_LIFETIME_SECONDS);
  const verifier = checksumAddress(chain.verifier);
  const signature = signAttestationRequest(key.privateKey, chain.chain_id, verifier, { recipient, attestations, nonce: at.nonce, deadline, fee: at.fee });
  return {
    chain_id: chain.chain_id,
    verifier,
    request: {
      recipient,
      attestations: attestations.map((a) => ({ schema: a.schema, expirationTime: a.expirationTime.toString(), data: a.data })),
      nonce: at.nonce.toString(),
      deadline: deadline.toString(),
      fee: at.fee.toString(),
    },
    signature,
    score,
  };
}

export type OnchainService = ReturnType<typeof onchainService>;
