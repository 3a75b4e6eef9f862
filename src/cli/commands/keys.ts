import type { Command } from 'commander';
import type { ApiKey } from '../../scoring/accounts/api-keys.service.js';
import { type CliIo, report, withAppContext } from '../context.js';
import { positiveInteger, tier } from '../parsers.js';

function describe(key: ApiKey): string {
  const permissions = key.permissions.join(',') || 'none';
  const state = key.revokedAt ? `revoked ${key.revokedAt.toISOString()}` : 'active';
  return `${key.prefix}\taccount ${key.accountId}\t${key.name}\ttier ${key.tier}\t${permissions}\t${state}`;
}

export function keysCommand(program: Command, io: CliIo): void {
  const keys = program.command('keys').description('Manage API keys');

  keys
    .command('create')
    .description('Create an API key; the full key is printed once and never stored')
    .requiredOption('--account <id>', 'owning account id', positiveInteger)
    .option('--tier <tier>', 'rate-limit tier 1-4', tier, 1)
    .option('--name <name>', 'a label for the key', 'default')
    .option('--no-submit', 'without the submit_passports permission')
    .option('--no-read', 'without the read_scores permission')
    .option('--json', 'machine-readable output')
    .action(async (options: { account: number; tier: number; name: string; submit: boolean; read: boolean; json?: boolean }) => {
      const created = await withAppContext(io, (ctx) =>
        ctx.apiKeys.create(options.account, {
          tier: options.tier,
          name: options.name,
          canSubmit: options.submit,
          canRead: options.read,
        }),
      );
      report(io, !!options.json, { ...created.apiKey, key: created.key }, () => [
        `Created API key ${created.apiKey.prefix} (tier ${created.apiKey.tier}).`,
        `Key (shown once, store it now): ${created.key}`,
      ]);
    });

  keys
    .command('list')
    .description('List API keys (prefixes only; full keys are never stored)')
    .option('--account <id>', 'only this account', positiveInteger)
    .option('--json', 'machine-readable output')
    .action(async (options: { account?: number; json?: boolean }) => {
      const list = await withAppContext(io, (ctx) => ctx.apiKeys.list(options.account));
      report(io, !!options.json, list, () => (list.length === 0 ? ['No API keys.'] : list.map(describe)));
    });

  keys
    .command('revoke')
    .description('Revoke an API key by its prefix (the part before the dot)')
    .argument('<prefix>', 'key prefix')
    .option('--json', 'machine-readable output')
    .action(async (prefix: string, options: { json?: boolean }) => {
      const key = await withAppContext(io, (ctx) => ctx.apiKeys.revoke(prefix));
      report(io, !!options.json, key, () => [`Revoked API key ${key.prefix}.`]);
    });
}
