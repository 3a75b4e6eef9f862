import type { Command } from 'commander';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../app/container.js';
import { drainServer, ServiceLifecycle } from '../../http/lifecycle.js';
import type { ImportResult } from '../../publicdata/import/import.service.js';
import { createLogger } from '../../logger.js';
import { loadConfig } from '../../config/index.js';
import { ensureDemoSetup, type DemoSetup } from '../../scoring/accounts/demo-setup.js';
import { buildServer, listen } from '../../app/server.js';
import { startupChecks } from '../../app/startup-checks.js';
import { startBackgroundWork } from '../background-work.js';
import { type CliIo, createServiceContext, waitForDatabase } from '../context.js';
import { ShutdownSignal, startedByPackageRunner } from '../shutdown.js';

function demoBanner(demo: DemoSetup, baseUrl: string): string[] {
  return [
    '',
    'Development database was empty, so a demo setup was created:',
    `  account   ${demo.account.id} (${demo.account.name})`,
    `  scorer    ${demo.scorer.id} (${demo.scorer.type}, threshold ${demo.scorer.threshold})`,
    `  API key   ${demo.key}   (tier 1; shown only now)`,
    '',
    'Try it:',
    `  curl -H 'X-API-KEY: ${demo.key}' ${baseUrl}/registry/signing-message`,
    '',
  ];
}

export function serveCommand(program: Command, io: CliIo): void {
  program
    .command('serve')
    .description('Run the HTTP server, a scoring worker and the staking indexer if configured (migrates the database first)')
    .option('--no-worker', 'serve HTTP only; scoring jobs are left to `stampgate worker` processes')
    .action(async (options: { worker: boolean }) => {
      const config = loadConfig(io.env, 'serve', startupChecks);
      const logger = createLogger(config.logLevel);
      const shutdown = new ShutdownSignal({ watchParent: startedByPackageRunner(io.env) });
      // Listening starts before the database answers: liveness 200, readiness 503 meanwhile.
      const lifecycle = new ServiceLifecycle('starting');
      let ctx: AppContext | undefined;
      let app: FastifyInstance | undefined;
      let demo: DemoSetup | null = null;
      let demoData: ImportResult | null = null;
      try {
        ctx = await createServiceContext(config, { log: logger, http: true });
        app = await buildServer(ctx, { logger, lifecycle });
        await listen(app, config);
        if (await waitForDatabase(ctx.database, logger, shutdown.aborted)) {
          demo = await ensureDemoSetup(ctx);
          demoData = config.publicDataApiEnabled ? await ctx.publicData.loadDemoDataIfEmpty() : null;
        }
      } catch (error) {
        // Refused at start-up (a setting, a port in use, a failed migration): close what is open.
        await app?.close().catch(() => {});
        await ctx?.close().catch(() => {});
        shutdown.finish();
        throw error;
      }
      if (shutdown.aborted.aborted) {
        // Stopped while waiting for the database.
        await shutdown.shutDown(async () => {
          await app.close();
          await ctx.close();
        }, config.shutdownTimeoutMs + 5000);
        return;
      }
      lifecycle.state = 'serving';
      const context = ctx;
      // Waiting submissions hear at once when a worker of another process settles their job.
      void context.signals.listen();
      const server = app;
      const shownHost = config.host === null || config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
      const baseUrl = config.publicBaseUrl ?? `http://${shownHost}:${config.port}`;
      if (demo) for (const line of demoBanner(demo, baseUrl)) io.out(line);
      if (demoData) io.out(`Development database had no public data, so the demo data set was loaded: try ${baseUrl}/api/v0.1/bounties/`);
      io.out(`Stampgate is serving ${baseUrl} (API docs at ${baseUrl}/docs).`);

      if (options.worker) startBackgroundWork(context, logger, io);
      // Also with its own worker: that one may be stuck, and others may share the queue.
      context.workerWatch.start();
      context.onchain.push.watch?.start();
      const cause = await shutdown.received;
      await shutdown.shutDown(async () => {
        server.log.info({ cause }, 'shutting down');
        // Waiting submissions answer with what they have now, rather than when their wait ends.
        await Promise.all([drainServer(server, lifecycle, config.shutdownTimeoutMs), context.scores.drain(), context.stopBackgroundWork()]);
        await context.close();
        server.log.info('shut down');
      }, config.shutdownTimeoutMs + 5000);
    });
}
