import type { Command } from 'commander';
import type { FastifyInstance } from 'fastify';
import type { ImportResult } from '../../publicdata/import.js';
import { createLogger } from '../../logger.js';
import { loadConfig } from '../../config.js';
import { ensureDemoSetup, type DemoSetup } from '../../scoring/demo-setup.js';
import { buildServer, listen } from '../../server.js';
import { startBackgroundWork } from '../background-work.js';
import { type CliIo, openAppContext } from '../context.js';
import { untilSignal } from '../shutdown.js';

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
      const config = loadConfig(io.env);
      const logger = createLogger(config.logLevel);
      const ctx = await openAppContext(config, { log: logger, http: true });
      let app: FastifyInstance | undefined;
      let demo: DemoSetup | null;
      let demoData: ImportResult | null;
      try {
        demo = await ensureDemoSetup(ctx);
        demoData = config.publicDataApiEnabled ? await ctx.publicData.loadDemoDataIfEmpty() : null;
        app = await buildServer(ctx, { logger });
        await listen(app, config);
      } catch (error) {
        // Refused at start-up (a setting, a port in use): close what is open, or Redis and the
        // database pool would keep the process alive after the message.
        await app?.close().catch(() => {});
        await ctx.close().catch(() => {});
        throw error;
      }
      const server = app;
      const shownHost = config.host === null || config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
      const baseUrl = config.publicBaseUrl ?? `http://${shownHost}:${config.port}`;
      if (demo) for (const line of demoBanner(demo, baseUrl)) io.out(line);
      if (demoData) io.out(`Development database had no public data, so the demo data set was loaded: try ${baseUrl}/api/v0.1/bounties/`);
      io.out(`Stampgate is serving ${baseUrl} (API docs at ${baseUrl}/docs).`);

      if (options.worker) startBackgroundWork(ctx, logger, io);
      await untilSignal(async () => {
        server.log.info('shutting down');
        await server.close();
        await ctx.close();
      });
    });
}
