import type { Command } from 'commander';
import { pino } from 'pino';
import { loadConfig } from '../../config.js';
import { logWorkerEvents } from '../../scoring/scoring-worker.js';
import { type CliIo, openAppContext } from '../context.js';
import { untilSignal } from '../shutdown.js';

export function workerCommand(program: Command, io: CliIo): void {
  program
    .command('worker')
    .description('Run scoring workers only (no HTTP), until SIGTERM/SIGINT')
    .action(async () => {
      const config = loadConfig(io.env);
      const logger = pino({ level: config.logLevel });
      const ctx = await openAppContext(config, { log: logger });
      logWorkerEvents(ctx.worker, logger);
      ctx.worker.start();
      io.out(`Scoring worker ${ctx.worker.owner} started.`);
      await untilSignal(async () => {
        await ctx.close();
      });
    });
}
