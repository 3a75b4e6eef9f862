import type { Command } from 'commander';
import { type CliIo, report, withAppContext } from '../context.js';

export function accountsCommand(program: Command, io: CliIo): void {
  const accounts = program.command('accounts').description('Manage accounts (owners of scorers and API keys)');

  accounts
    .command('create')
    .description('Create an account')
    .requiredOption('--name <name>', 'account name')
    .option('--owner <address>', 'wallet address that owns the account and signs in to the developer portal')
    .option('--json', 'machine-readable output')
    .action(async (options: { name: string; owner?: string; json?: boolean }) => {
      const owner = options.owner?.toLowerCase() ?? null;
      const account = await withAppContext(io, (ctx) => ctx.accounts.createAccount(options.name, owner));
      report(io, !!options.json, account, () => [`Created account ${account.id} (${account.name}).`]);
    });

  accounts
    .command('list')
    .description('List accounts')
    .option('--json', 'machine-readable output')
    .action(async (options: { json?: boolean }) => {
      const list = await withAppContext(io, (ctx) => ctx.accounts.listAccounts());
      report(io, !!options.json, list, () =>
        list.length === 0 ? ['No accounts.'] : list.map((a) => `${a.id}\t${a.name}\tcreated ${a.createdAt.toISOString()}${a.ownerAddress ? `\towner ${a.ownerAddress}` : ''}`),
      );
    });
}
