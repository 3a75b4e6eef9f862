/**
 * Verify a Stampgate score offline: fetch the score once as a signed EAS offchain attestation, then
 * check it with nothing but the signer addresses you trust (no call back to Stampgate).
 *
 * Usage:
 *   BASE_URL=http://localhost:8000 API_KEY=… SCORER_ID=1 CHAIN_ID=10 ADDRESS=0x… npx tsx examples/verify-offchain-score/verify.ts
 *
 * Environment:
 *   BASE_URL  the Stampgate service (default http://localhost:8000)
 *   API_KEY   an integrator API key with read_scores (required)
 *   SCORER_ID the scorer (default 1); CHAIN_ID the chain the attestation is for (default 10)
 *   ADDRESS   the wallet to score (required)
 *
 * In a real integration the trusted signers are pinned once (from GET /v2/onchain/chains, kept in
 * your configuration) and the attestation comes from the user or your cache: the check below needs
 * neither the network nor Stampgate.
 */
import { type OffchainScoreAttestation, verifyScoreAttestation } from '@stampgate/client';

const base = process.env.BASE_URL ?? 'http://localhost:8000';
const { API_KEY: apiKey, ADDRESS: address } = process.env;
if (!apiKey || !address) {
  console.error('API_KEY and ADDRESS are required');
  process.exit(2);
}
const chainId = Number(process.env.CHAIN_ID ?? 10);

// Once: the signers of the chain, with when each was trusted.
const listing = (await (await fetch(`${base}/v2/onchain/chains`)).json()) as { chains: { chain_id: number; signers: { address: string; added_at: string; removed_at: string | null }[] }[] };
const signers = listing.chains.find((chain) => chain.chain_id === chainId)?.signers ?? [];

// The attestation (what a user would hand you, or what you cached).
const res = await fetch(`${base}/v2/stamps/${process.env.SCORER_ID ?? '1'}/score/${address}/attestation?chain_id=${chainId}`, { headers: { 'x-api-key': apiKey } });
if (!res.ok) {
  console.error(`HTTP ${res.status}: ${await res.text()}`);
  process.exit(1);
}
const { attestation } = (await res.json()) as { attestation: OffchainScoreAttestation };

// Offline from here.
try {
  const score = await verifyScoreAttestation(attestation, signers);
  const decimals = 10 ** score.score_decimals;
  console.log(`verified ${score.uid}: ${score.recipient} scored ${score.score / decimals} (threshold ${score.threshold / decimals}), passing ${score.passing_score}, signed by ${score.signer}, expires ${new Date(Number(score.expirationTime) * 1000).toISOString()}`);
} catch (error) {
  console.log(`refused: ${(error as Error).message}`);
  process.exit(1);
}
