/** Tables of staking events and the indexer's progress. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface StakingTables {}
