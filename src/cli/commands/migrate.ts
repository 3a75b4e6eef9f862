import type { Command } from 'commander';
import { loadConfig } from '../../config/index.js';
import { openDatabase } from '../../db/connection.js';
import { migrateToLatest } from '../../db/migrate.js';
import { type CliIo, report } from '../context.js';

export function migrateCommand(program: Command, io: CliIo): void {
  program
    .command('migrate')
    .description('Apply pending database migrations (serve also does this at start)')
    .option('--json', 'machine-readable output')
    .action(async (options: { json?: boolean }) => {
      const database = openDatabase(loadConfig(io.env).databaseUrl);
      try {
        // Progress of long steps on stderr, so that --json output stays one document.
        const applied = await migrateToLatest(database, { progress: (line) => io.err(line) });
        report(io, !!options.json, { applied }, () =>
          applied.length === 0 ? ['The database schema is up to date.'] : applied.map((name) => `Applied ${name}.`),
        );
      } finally {
        await database.close();
      }
    });
}
