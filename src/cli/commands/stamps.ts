import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { AppError } from '../../errors.js';
import { type CliIo, report, withAppContext } from '../context.js';
import { addressArgument } from '../parsers.js';

export async function readJsonFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new AppError('invalid_request', `Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new AppError('invalid_request', `${file} is not valid JSON: ${(error as Error).message}.`);
  }
}

export function stampsCommand(program: Command, io: CliIo): void {
  const stamps = program.command('stamps').description('Manage stored stamps (verifiable credentials)');

  stamps
    .command('import')
    .description('Verify and store credentials from a JSON file: an array of credentials or of {"address","credentials":[…]} documents')
    .argument('<file>', 'JSON file')
    .option('--json', 'machine-readable output')
    .action(async (file: string, options: { json?: boolean }) => {
      const document = await readJsonFile(file);
      const result = await withAppContext(io, (ctx) => ctx.stamps.importCredentials(document));
      report(io, !!options.json, result, () => [
        ...result.results
          .filter((r) => r.status === 'rejected')
          .map((r) => `rejected [${r.index}]${r.provider ? ` ${r.provider}` : ''}: ${r.reason}`),
        `${result.stored} stored, ${result.unchanged} already stored, ${result.rejected} rejected.`,
      ]);
    });

  stamps
    .command('revoke')
    .description('Revoke stamps: they stop counting at the next scoring and cannot be stored again')
    .option('--digest <digest>', 'the stamp with this credential digest', (v: string) => v.toLowerCase())
    .option('--address <address>', 'the stamps of this address', addressArgument)
    .option('--provider <provider>', 'with --address: only this provider')
    .option('--json', 'machine-readable output')
    .action(async (options: { digest?: string; address?: string; provider?: string; json?: boolean }) => {
      const revoked = await withAppContext(io, (ctx) => ctx.stamps.revoke(options));
      report(io, !!options.json, { revoked }, () => [`Revoked ${revoked} stamp(s).`]);
    });

  stamps
    .command('list')
    .description('List the stored stamps of an address, newest first')
    .requiredOption('--address <address>', 'wallet address', addressArgument)
    .option('--json', 'machine-readable output')
    .action(async (options: { address: string; json?: boolean }) => {
      const list = await withAppContext(io, (ctx) => ctx.stamps.listForOperator(options.address));
      report(io, !!options.json, list, () =>
        list.length === 0
          ? ['No stamps.']
          : list.map((s) => `${s.id}\t${s.provider}\t${s.state}\texpires ${s.expirationDate.toISOString()}\t${s.issuer}\t${s.digest}`),
      );
    });
}
