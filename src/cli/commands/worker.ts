import type { Command } from 'commander';
import { createLogger } from '../../logger.js';
import { loadConfig } from '../../config/index.js';
import { buildWorkerServer } from '../../app/worker-server.js';
import { listenHost } from '../../app/server.js';
import { startupChecks } from '../../app/startup-checks.js';
import { startBackgroundWork } from '../background-work.js';
import { drainServer, ServiceLifecycle } from '../../http/lifecycle.js';
import { type CliIo, createServiceContext, waitForDatabase } from '../context.js';
import { ShutdownSignal, startedByPackageRunner } from '../shutdown.js';

export function workerCommand(program: Command, io: CliIo): void {
  program
    .command('worker')
    .description('Run scoring workers and the staking indexer (no HTTP), until SIGTERM/SIGINT')
    .action(async () => {
      const config = loadConfig(io.env, 'worker', startupChecks);
      const logger = createLogger(config.logLevel);
      const shutdown = new ShutdownSignal({ watchParent: startedByPackageRunner(io.env) });
      const lifecycle = new ServiceLifecycle('starting');
      const ctx = await createServiceContext(config, { log: logger }).catch((error: unknown) => {
        shutdown.finish();
        throw error;
      });
      let monitoring: Awaited<ReturnType<typeof buildWorkerServer>> | null = null;
      let ready: boolean;
      try {
        monitoring = config.workerPort === null ? null : await buildWorkerServer(ctx, lifecycle);
        if (monitoring) await monitoring.listen({ port: config.workerPort ?? 0, host: listenHost(config) });
        if (monitoring) io.out(`Metrics and health checks on port ${config.workerPort}.`);
        ready = await waitForDatabase(ctx.database, logger, shutdown.aborted);
      } catch (error) {
        await monitoring?.close().catch(() => {});
        await ctx.close().catch(() => {});
        shutdown.finish();
        throw error;
      }
      if (ready) {
        lifecycle.state = 'serving';
        startBackgroundWork(ctx, logger, io);
      }
      const server = monitoring;
      const cause = await shutdown.received;
      await shutdown.shutDown(async () => {
        logger.info({ cause }, 'shutting down');
        if (server) await drainServer(server, lifecycle, config.shutdownTimeoutMs);
        await ctx.close();
        logger.info('shut down');
      }, config.shutdownTimeoutMs + 5000);
    });
}
