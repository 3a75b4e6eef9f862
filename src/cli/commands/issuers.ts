import type { Command } from 'commander';
import { type CliIo, report, withAppContext } from '../context.js';

export function issuersCommand(program: Command, io: CliIo): void {
  const issuers = program.command('issuers').description('Manage the issuers whose stamps count');

  issuers
    .command('add')
    .description('Trust an issuer (kept in the database, seen by every process)')
    .argument('<did>', 'issuer DID, did:ethr:0x…')
    .option('--note <text>', 'why it is trusted', '')
    .option('--json', 'machine-readable output')
    .action(async (did: string, options: { note: string; json?: boolean }) => {
      const added = await withAppContext(io, (ctx) => ctx.issuers.add(did, options.note));
      report(io, !!options.json, added, () => [`Now trusting ${added.did}.`]);
    });

  issuers
    .command('list')
    .description('List trusted issuers and where their trust comes from')
    .option('--json', 'machine-readable output')
    .action(async (options: { json?: boolean }) => {
      const list = await withAppContext(io, (ctx) => ctx.issuers.list());
      report(io, !!options.json, list, () =>
        list.length === 0 ? ['No trusted issuers.'] : list.map((i) => `${i.did}\t${i.source}${i.note ? `\t${i.note}` : ''}`),
      );
    });

  issuers
    .command('remove')
    .description('Stop trusting an issuer added with `issuers add`')
    .argument('<did>', 'issuer DID')
    .option('--json', 'machine-readable output')
    .action(async (did: string, options: { json?: boolean }) => {
      const removed = await withAppContext(io, (ctx) => ctx.issuers.remove(did));
      report(io, !!options.json, { removed }, () => [`No longer trusting ${removed}.`]);
    });
}
