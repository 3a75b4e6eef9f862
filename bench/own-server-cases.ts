/**
 * The cases that start servers of their own (webhook receivers, hanging endpoints, upload
 * clients) instead of loading the shared bench server: request rates go to the results table,
 * delays and stalls to the set-up section with their own PASS/FAIL verdicts.
 */
import type { CaseName } from './options.js';
import type { DatabaseKind } from './protocol.js';
import type { CaseRecord } from './report.js';
import type { Verdict } from './verdicts.js';
import { runWebhookCases } from './webhook-delivery.js';
import { runWebhookFairnessCases } from './webhook-fairness.js';
import { runBatchUploadCases } from './batch-upload.js';

export const ownServerCases = ['webhooks', 'webhook-fairness', 'batch-upload'] as const satisfies readonly CaseName[];
export type OwnServerCase = (typeof ownServerCases)[number];

export function isOwnServerCase(name: CaseName): name is OwnServerCase {
  return (ownServerCases as readonly CaseName[]).includes(name);
}

export interface OwnServerResults {
  records: CaseRecord[];
  setupInfo: Record<string, unknown>;
  verdicts: Verdict[];
}

export async function runOwnServerCases(cases: readonly CaseName[], databases: DatabaseKind[], postgresUrl: string, loadText: () => string): Promise<OwnServerResults> {
  const results: OwnServerResults = { records: [], setupInfo: {}, verdicts: [] };
  if (cases.includes('webhooks')) results.records.push(...(await runWebhookCases(databases, postgresUrl, loadText)));
  if (cases.includes('webhook-fairness')) results.setupInfo['webhook-fairness'] = await runWebhookFairnessCases(databases, postgresUrl);
  if (cases.includes('batch-upload')) {
    const uploads = await runBatchUploadCases(databases, postgresUrl);
    results.setupInfo['batch-upload'] = uploads.results;
    results.verdicts.push(...uploads.verdicts);
  }
  return results;
}
