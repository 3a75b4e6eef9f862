import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import { type CliIo, openAppContext } from '../context.js';
import { untilSignal } from '../shutdown.js';

export function workerCommand(program: Command, io: CliIo): void {
  program
    .command('worker')
    .description('Run scoring workers only (no HTTP), until SIGTERM/SIGINT')
    .action(async () => {
      const ctx = await openAppContext(loadConfig(io.env));
      ctx.worker.start();
      io.out(`Scoring worker ${ctx.worker.owner} started.`);
      await untilSignal(async () => {
        await ctx.worker.stop();
        await ctx.database.close();
      });
    });
}
