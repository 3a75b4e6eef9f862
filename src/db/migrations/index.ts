import type { Migration } from 'kysely';
import type { DialectName } from '../dialect.js';
import { foundation } from './0001-foundation.js';
import { scoring } from './0002-scoring.js';
import { walletSessions } from './0006-wallet-sessions.js';
import { staking } from './0007-staking.js';
import { publicData } from './0008-public-data.js';
import { scoreRecord } from './0009-score-record.js';
import { bountyVocabulary } from './0010-bounty-vocabulary.js';
import { shippedEmpty } from './placeholders.js';
import { security } from './0011-security.js';
import { scorerSettings } from './0012-scorer-settings.js';
import { scoreEvents } from './0013-score-events.js';
import { keyPermissions } from './0014-key-permissions.js';
import { webhooks } from './0015-webhooks.js';
import { batches } from './0016-batches.js';
import { stakeContract } from './0017-stake-contract.js';
import { portal } from './0018-portal.js';
import { bountyBodies } from './0020-bounty-bodies.js';
import { bountyCountIndexes } from './0021-bounty-count-indexes.js';
import { scoringReads } from './0022-scoring-reads.js';
import { modelScores } from './0023-model-scores.js';
import { bountyOrderFields } from './0024-bounty-order-fields.js';
import { webhookFairness } from './0025-webhook-fairness.js';
import { batchUploads } from './0026-batch-uploads.js';
import { accountBatchUsage } from './0027-account-batch-usage.js';
import { workerHeartbeats } from './0028-worker-heartbeats.js';
import { onchainPush } from './0029-onchain-push.js';
import { pushAfterBatch } from './0030-push-after-batch.js';
import { scoreCounts } from './0031-score-counts.js';

/** Every migration in order. Names sort lexically; never rename or edit a shipped one. */
export function allMigrations(dialect: DialectName): Record<string, Migration> {
  return {
    '0001-foundation': foundation(dialect),
    '0002-scoring': scoring(dialect),
    '0003-wallet-sessions': shippedEmpty,
    '0004-staking': shippedEmpty,
    '0005-public-data': shippedEmpty,
    '0006-wallet-sessions': walletSessions(dialect),
    '0007-staking': staking(dialect),
    '0008-public-data': publicData(dialect),
    '0009-score-record': scoreRecord(dialect),
    '0010-bounty-vocabulary': bountyVocabulary(dialect),
    '0011-security': security(dialect),
    '0012-scorer-settings': scorerSettings(dialect),
    '0013-score-events': scoreEvents(dialect),
    '0014-key-permissions': keyPermissions(dialect),
    '0015-webhooks': webhooks(dialect),
    '0016-batches': batches(dialect),
    '0017-stake-contract': stakeContract(dialect),
    '0018-portal': portal(dialect),
    '0020-bounty-bodies': bountyBodies(dialect),
    '0021-bounty-count-indexes': bountyCountIndexes(dialect),
    '0022-scoring-reads': scoringReads(dialect),
    '0023-model-scores': modelScores(dialect),
    '0024-bounty-order-fields': bountyOrderFields(dialect),
    '0025-webhook-fairness': webhookFairness(dialect),
    '0026-batch-uploads': batchUploads(),
    '0027-account-batch-usage': accountBatchUsage(dialect),
    '0028-worker-heartbeats': workerHeartbeats(dialect),
    '0029-onchain-push': onchainPush(dialect),
    '0030-push-after-batch': pushAfterBatch(dialect),
    '0031-score-counts': scoreCounts(dialect),
  };
}
