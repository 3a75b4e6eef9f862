import { type Command, Option } from 'commander';
import type { ApiKey } from '../../scoring/accounts/api-keys.service.js';
import { normalizePermissions, type Permission, permissionNames } from '../../scoring/accounts/permissions.js';
import { type CliIo, report, withAppContext } from '../context.js';
import { permissionList, positiveInteger, tier } from '../parsers.js';

function permissionText(key: ApiKey): string {
  return key.permissions.join(',') || 'none';
}

function describe(key: ApiKey): string {
  const state = key.revokedAt ? `revoked ${key.revokedAt.toISOString()}` : 'active';
  return `${key.prefix}\taccount ${key.accountId}\t${key.name}\ttier ${key.tier}\t${permissionText(key)}\t${state}`;
}

function details(key: ApiKey): string[] {
  return [
    `API key ${key.prefix}`,
    `  account      ${key.accountId}`,
    `  name         ${key.name}`,
    `  tier         ${key.tier}`,
    `  permissions  ${permissionText(key)}`,
    `  created      ${key.createdAt.toISOString()}`,
    `  state        ${key.revokedAt ? `revoked ${key.revokedAt.toISOString()}` : 'active'}`,
  ];
}

const permissionHelp = `comma-separated, from ${permissionNames.join(', ')}`;

export function keysCommand(program: Command, io: CliIo): void {
  const keys = program.command('keys').description('Manage API keys');

  keys
    .command('create')
    .description('Create an API key; the full key is printed once and never stored')
    .requiredOption('--account <id>', 'owning account id', positiveInteger)
    .option('--tier <tier>', 'rate-limit tier 1-4', tier, 1)
    .option('--name <name>', 'a label for the key', 'default')
    .option('--permissions <list>', `the key's permissions, ${permissionHelp} (default: all but historical_endpoint)`, permissionList)
    .addOption(new Option('--no-submit', 'without the submit_passports permission').conflicts('permissions'))
    .addOption(new Option('--no-read', 'without the read_scores permission').conflicts('permissions'))
    .option('--json', 'machine-readable output')
    .action(
      async (options: { account: number; tier: number; name: string; permissions?: Permission[]; submit: boolean; read: boolean; json?: boolean }) => {
        const created = await withAppContext(io, (ctx) =>
          ctx.apiKeys.create(options.account, {
            tier: options.tier,
            name: options.name,
            ...(options.permissions ? { permissions: options.permissions } : { canSubmit: options.submit, canRead: options.read }),
          }),
        );
        report(io, !!options.json, { ...created.apiKey, key: created.key }, () => [
          `Created API key ${created.apiKey.prefix} (tier ${created.apiKey.tier}; ${permissionText(created.apiKey)}).`,
          `Key (shown once, store it now): ${created.key}`,
        ]);
      },
    );

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
    .command('show')
    .description('Show one API key with its permissions')
    .argument('<prefix>', 'key prefix')
    .option('--json', 'machine-readable output')
    .action(async (prefix: string, options: { json?: boolean }) => {
      const key = await withAppContext(io, (ctx) => ctx.apiKeys.find(prefix));
      report(io, !!options.json, key, () => details(key));
    });

  keys
    .command('permissions')
    .description("Change an API key's permissions (every API process sees the change from its next request)")
    .argument('<prefix>', 'key prefix')
    .addOption(new Option('--set <list>', `replace them with exactly these, ${permissionHelp}`).argParser(permissionList).conflicts(['add', 'remove']))
    .option('--add <list>', `grant these too, ${permissionHelp}`, permissionList)
    .option('--remove <list>', `take these away, ${permissionHelp}`, permissionList)
    .option('--json', 'machine-readable output')
    .action(async (prefix: string, options: { set?: Permission[]; add?: Permission[]; remove?: Permission[]; json?: boolean }) => {
      const key = await withAppContext(io, async (ctx) => {
        const current = await ctx.apiKeys.find(prefix);
        if (!options.set && !options.add && !options.remove) return current;
        const removed = new Set(options.remove ?? []);
        const wanted = options.set ?? [...current.permissions, ...(options.add ?? [])].filter((p) => !removed.has(p));
        return ctx.apiKeys.setPermissions(prefix, normalizePermissions(wanted));
      });
      report(io, !!options.json, key, () => [`API key ${key.prefix} permissions: ${permissionText(key)}.`]);
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
