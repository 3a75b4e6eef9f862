import type { Command } from 'commander';
import { createLogger } from '../../logger.js';
import { loadConfig } from '../../config.js';
import { startBackgroundWork } from '../background-work.js';
import { type CliIo, openAppContext } from '../context.js';
import { untilSignal } from '../shutdown.js';

export function workerCommand(program: Command, io: CliIo): void {
  program
    .command('worker')
    .description('Run scoring workers and the staking indexer (no HTTP), until SIGTERM/SIGINT')
    .action(async () => {
      const config = loadConfig(io.env);
      const logger = createLogger(config.logLevel);
      const ctx = await openAppContext(config, { log: logger });
      startBackgroundWork(ctx, logger, io);
      await untilSignal(async () => {
        await ctx.close();
      });
    });
}
