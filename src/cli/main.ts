import { pathToFileURL } from 'node:url';
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config/index.js';
import { AppError } from '../errors.js';
import { packageVersion } from '../version.js';
import { accountsCommand } from './commands/accounts.js';
import { credentialsCommand } from './commands/credentials.js';
import { dataCommand } from './commands/data.js';
import { issuersCommand } from './commands/issuers.js';
import { keysCommand } from './commands/keys.js';
import { migrateCommand } from './commands/migrate.js';
import { onchainCommand } from './commands/onchain.js';
import { scorersCommand } from './commands/scorers.js';
import { serveCommand } from './commands/serve.js';
import { stakeCommand } from './commands/stake.js';
import { stampsCommand } from './commands/stamps.js';
import { workerCommand } from './commands/worker.js';
import { batchesCommand } from './commands/batches.js';
import { type CliIo, UsageError } from './context.js';

const processIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
};

export function buildProgram(io: CliIo): Command {
  const program = new Command('stampgate')
    .description('Stampgate: passport scoring service and public data API')
    .version(packageVersion)
    .addHelpText(
      'after',
      [
        '',
        'Configuration is by environment variables (DATABASE_URL, PORT, STAMPGATE_ENV, …), read by every',
        'command alike; each is described in docs/configuration.md. Commands that report a result accept',
        '--json: one JSON document with snake_case keys, as the HTTP API spells them.',
      ].join('\n'),
    )
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.out(text.trimEnd()), writeErr: (text) => io.err(text.trimEnd()) });
  serveCommand(program, io);
  migrateCommand(program, io);
  accountsCommand(program, io);
  scorersCommand(program, io);
  keysCommand(program, io);
  issuersCommand(program, io);
  stampsCommand(program, io);
  credentialsCommand(program, io);
  workerCommand(program, io);
  stakeCommand(program, io);
  dataCommand(program, io);
  batchesCommand(program, io);
  onchainCommand(program, io);
  for (const command of program.commands) {
    command.exitOverride();
    for (const sub of command.commands) sub.exitOverride();
  }
  return program;
}

/** Runs the CLI and returns the process exit code: 0 ok, 1 refused, 2 bad usage or configuration. */
export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  try {
    await buildProgram(io).parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are printed by commander and are not failures.
      return error.exitCode === 0 ? 0 : 2;
    }
    if (error instanceof UsageError) {
      io.err(error.message);
      return 2;
    }
    if (error instanceof ConfigError) {
      io.err(error.message);
      return 2;
    }
    if (error instanceof AppError) {
      io.err(`error: ${error.message}`);
      return 1;
    }
    io.err(`error: ${(error as Error).message ?? String(error)}`);
    return 1;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await main(process.argv.slice(2));
}
