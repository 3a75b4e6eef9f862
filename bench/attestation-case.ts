/** The `attestation` case: the v2 score of a primed 20-stamp address as a signed EAS offchain attestation. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { schemaStrings } from '../src/onchain/interface-files.js';
import type { LoadCase } from './load.js';

/** The chain the benchmark's deployment file lists (its contracts are never called: the route signs offline). */
export const BENCH_CHAIN_ID = 10;

/** A deployment file of one made-up chain, for the target's ONCHAIN_CONFIG_FILE. */
export function benchDeploymentFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'stampgate-bench-onchain-')), 'onchain.json');
  const address = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
  const chain = {
    chain_id: BENCH_CHAIN_ID,
    eas: '0x4200000000000000000000000000000000000021',
    schema_registry: address(1),
    verifier: address(2),
    resolver: address(3),
    decoder: address(4),
    score_schema: schemaStrings.score,
    score_schema_uid: `0x${'ab'.repeat(32)}`,
    passport_schema: schemaStrings.passport,
    passport_schema_uid: `0x${'cd'.repeat(32)}`,
    eas_version: '1.3.0',
    signers: [],
  };
  writeFileSync(file, JSON.stringify({ chains: [chain] }));
  return file;
}

/** As v2-score, scored again from the stored stamps (nothing changed, nothing written), then signed. */
export function attestationLoad(apiKey: string, scorerId: number, pick: (n: number) => string): Omit<LoadCase, 'url' | 'connections' | 'warmupSeconds' | 'seconds' | 'around'> {
  return {
    method: 'GET',
    headers: { 'x-api-key': apiKey },
    path: (n) => `/v2/stamps/${scorerId}/score/${pick(n)}/attestation?chain_id=${BENCH_CHAIN_ID}`,
    checkDuringLoad: true,
    checkBody: (body) => {
      const answer = JSON.parse(body) as { attestation?: { signature?: { r?: unknown } }; uid?: unknown };
      if (typeof answer.uid !== 'string') return 'no uid';
      return typeof answer.attestation?.signature?.r === 'string' ? null : 'no signature';
    },
  };
}
