import { type Command, InvalidArgumentError } from 'commander';
import { ConfigError } from '../../config/index.js';
import type { IndexRun } from '../../staking/staking-indexer.js';
import { type CliIo, report, withAppContext } from '../context.js';
import { readJsonFile } from './stamps.js';

function blockNumber(value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError(`"${value}" is not a block number.`);
  return Number(value);
}

function describeRun(run: IndexRun): string[] {
  const behind = `head ${run.head}, ${run.confirmations} confirmation(s), safe block ${run.safeBlock}`;
  if (run.fromBlock === null || run.toBlock === null) {
    return [
      run.lastBlock === null
        ? `Nothing to index yet for ${run.contract} (${behind}).`
        : `Up to date: ${run.contract} is indexed to block ${run.lastBlock} (${behind}).`,
    ];
  }
  return [
    `Indexed blocks ${run.fromBlock}-${run.toBlock} of ${run.contract} in ${run.requests} request(s) (${behind}).`,
    `${run.logs} staking log(s): ${run.stored} new, ${run.unchanged} already stored.`,
  ];
}

/** `stampgate stake index|import`. */
export function stakeCommand(program: Command, io: CliIo): void {
  const stake = program.command('stake').description('Staking events: index them from the chain or import them from a file');

  stake
    .command('index')
    .description('Read the staking contract’s selfStake/xStake logs up to head − STAKING_CONFIRMATIONS, once, and store them')
    .option('--from-block <n>', 're-read from this block (stored events are never counted twice)', blockNumber)
    .option('--json', 'machine-readable output')
    .action(async (options: { fromBlock?: number; json?: boolean }) => {
      const run = await withAppContext(io, async (ctx) => {
        if (!ctx.staking.indexer) {
          throw new ConfigError([
            'STAKING_RPC_URL and STAKING_CONTRACT_ADDRESS must both be set to index staking events (or use `stampgate stake import FILE`); ' +
              'for example STAKING_RPC_URL=https://rpc.example.org STAKING_CONTRACT_ADDRESS=0x0123456789abcdef0123456789abcdef01234567',
          ]);
        }
        return ctx.staking.indexer.runOnce({ fromBlock: options.fromBlock });
      });
      report(io, !!options.json, run, () => describeRun(run));
    });

  stake
    .command('import')
    .description(
      'Store staking events from a JSON file: an array of {type:"selfStake"|"xStake", roundId, staker, user?, amount, staked, txHash, logIndex, blockNumber}; ' +
        'bad records are reported by index and field, good ones kept; a re-import counts nothing twice',
    )
    .argument('<file>', 'JSON file')
    .option('--json', 'machine-readable output')
    .action(async (file: string, options: { json?: boolean }) => {
      const document = await readJsonFile(file);
      const result = await withAppContext(io, (ctx) => ctx.staking.stakes.importEvents(document));
      report(io, !!options.json, result, () => [
        ...result.rejections.map((r) => `rejected [${r.index}] ${r.field}: ${r.reason}`),
        `${result.stored} stored, ${result.unchanged} already stored, ${result.rejected} rejected.`,
      ]);
    });
}
