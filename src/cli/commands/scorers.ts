import type { Command } from 'commander';
import type { Scorer } from '../../scoring/accounts/accounts.service.js';
import { type CliIo, report, withAppContext } from '../context.js';
import { scorerTypeNames } from '../../scoring/scorers/registry.js';
import { positiveInteger, settingEntry, weightEntry } from '../parsers.js';

function describe(scorer: Scorer): string {
  const weights = Object.keys(scorer.weights).length;
  const settings = Object.entries(scorer.settings).map(([name, value]) => `\t${name} ${String(value)}`).join('');
  return (
    `${scorer.id}\t${scorer.name}\t${scorer.type}\tthreshold ${scorer.threshold}${settings}` +
    `${scorer.requiresSignature ? '\tsignature required' : ''}${weights ? `\t${weights} weight override(s)` : ''}`
  );
}

interface ScorerOptions {
  name?: string;
  type?: string;
  threshold?: string;
  requiresSignature?: boolean;
  weight?: Record<string, string>;
  setting?: Record<string, string>;
  clearWeights?: boolean;
  json?: boolean;
}

export function scorersCommand(program: Command, io: CliIo): void {
  const scorers = program.command('scorers').description('Manage scorers');

  scorers
    .command('create')
    .description('Create a scorer')
    .requiredOption('--account <id>', 'owning account id', positiveInteger)
    .requiredOption('--name <name>', 'scorer name')
    .option('--type <type>', scorerTypeNames.join(', '), 'weighted')
    .option('--threshold <decimal>', 'the score needed to pass: a binary scorer answers 1 once the weighted sum reaches it, and v2 reports passing_score against it for every type (default: the catalogue’s, 20 as shipped)')
    .option('--requires-signature', 'require a wallet signature on every submission')
    .option('--weight <provider=weight>', 'override a provider weight (repeatable)', weightEntry)
    .option('--setting <name=value>', "a setting of the scorer's type, e.g. platform_cap=10 (repeatable)", settingEntry)
    .option('--json', 'machine-readable output')
    .action(async (options: ScorerOptions & { account: number; name: string }) => {
      const scorer = await withAppContext(io, (ctx) =>
        ctx.accounts.createScorer(options.account, {
          name: options.name,
          type: options.type,
          threshold: options.threshold,
          requiresSignature: options.requiresSignature ?? false,
          weights: options.weight ?? {},
          ...(options.setting ? { settings: options.setting } : {}),
        }),
      );
      report(io, !!options.json, scorer, () => [`Created scorer ${scorer.id}.`, describe(scorer)]);
    });

  scorers
    .command('list')
    .description('List scorers')
    .option('--account <id>', 'only this account', positiveInteger)
    .option('--json', 'machine-readable output')
    .action(async (options: { account?: number; json?: boolean }) => {
      const list = await withAppContext(io, (ctx) => ctx.accounts.listScorers(options.account));
      report(io, !!options.json, list, () => (list.length === 0 ? ['No scorers.'] : list.map(describe)));
    });

  scorers
    .command('update')
    .description('Change a scorer; options not given stay as they are')
    .argument('<id>', 'scorer id', positiveInteger)
    .option('--name <name>', 'new name')
    .option('--type <type>', `${scorerTypeNames.join(', ')} (resets the type's settings unless --setting is given)`)
    .option('--threshold <decimal>', 'new threshold')
    .option('--requires-signature', 'require a wallet signature')
    .option('--no-requires-signature', 'stop requiring a wallet signature')
    .option('--weight <provider=weight>', 'set a provider weight override (repeatable)', weightEntry)
    .option('--clear-weights', 'remove every weight override (applied before --weight)')
    .option('--setting <name=value>', "replace the settings of the scorer's type (repeatable)", settingEntry)
    .option('--json', 'machine-readable output')
    .action(async (id: number, options: ScorerOptions) => {
      const scorer = await withAppContext(io, async (ctx) => {
        let weights: Record<string, string> | undefined;
        if (options.clearWeights || options.weight) {
          const current = options.clearWeights ? {} : (await ctx.accounts.getScorer(id)).weights;
          weights = { ...current, ...(options.weight ?? {}) };
        }
        return ctx.accounts.updateScorer(id, {
          name: options.name,
          type: options.type,
          threshold: options.threshold,
          requiresSignature: options.requiresSignature,
          weights,
          settings: options.setting,
        });
      });
      report(io, !!options.json, scorer, () => [`Updated scorer ${scorer.id}.`, describe(scorer)]);
    });
}
