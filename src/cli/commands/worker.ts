import type { Command } from 'commander';
import { createLogger } from '../../logger.js';
import { loadConfig } from '../../config.js';
import { buildWorkerServer } from '../../http/worker-server.js';
import { listenHost } from '../../server.js';
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
      const monitoring = config.workerPort === null ? null : await buildWorkerServer(ctx);
      try {
        if (monitoring) await monitoring.listen({ port: config.workerPort ?? 0, host: listenHost(config) });
      } catch (error) {
        await ctx.close().catch(() => {});
        throw error;
      }
      startBackgroundWork(ctx, logger, io);
      if (monitoring) io.out(`Metrics and health checks on port ${config.workerPort}.`);
      await untilSignal(async () => {
        await monitoring?.close();
        await ctx.close();
      });
    });
}
