import type { Command } from 'commander';
import type { ImportResult } from '../../publicdata/import/import.service.js';
import { IMPORT_SECTIONS } from '../../publicdata/import/import.service.js';
import { type CliIo, report, withAppContext } from '../context.js';
import { readJsonFile } from './stamps.js';

function summary(result: ImportResult): string {
  const parts = IMPORT_SECTIONS.map((section) => {
    const s = result.sections[section];
    return `${section} ${s.created} new, ${s.updated} updated${s.rejected > 0 ? `, ${s.rejected} rejected` : ''}`;
  });
  return `${result.source}: ${parts.join('; ')}.`;
}

/** `stampgate data import FILE…` and `stampgate data reset-key HANDLE`. */
export function dataCommand(program: Command, io: CliIo): void {
  const data = program.command('data').description('Public data API: grants, rounds, contributions, bounties and profiles');

  data
    .command('import')
    .description(
      'Insert or update public data from JSON files ({"profiles":[…],"grants":[…],"rounds":[…],"contributions":[…],"bounties":[…]}; ' +
        'see docs/public-data-import.md). Bad records are reported by position and field; good ones are stored.',
    )
    .argument('<files...>', 'JSON files, imported in order')
    .option('--json', 'machine-readable output')
    .action(async (files: string[], options: { json?: boolean }) => {
      const documents: { file: string; document: unknown }[] = [];
      for (const file of files) documents.push({ file, document: await readJsonFile(file) });
      const results = await withAppContext(io, async (ctx) => {
        const out: ImportResult[] = [];
        for (const { file, document } of documents) out.push(await ctx.publicData.imports.importDocument(document, file));
        return out;
      });
      report(io, !!options.json, results, () =>
        results.flatMap((result) => [
          ...result.problems.map((p) => `rejected ${result.source}: ${p.at}: ${p.problem}`),
          summary(result),
        ]),
      );
    });

  data
    .command('reset-key')
    .description('Delete the export credentials (_key/_secret) of a profile; its next login (or a POST /grants/export-credentials) creates new ones')
    .argument('<handle>', 'profile handle (any case)')
    .option('--json', 'machine-readable output')
    .action(async (handle: string, options: { json?: boolean }) => {
      const result = await withAppContext(io, (ctx) => ctx.publicData.exportAuth.resetCredentials(handle));
      report(io, !!options.json, result, () => [
        result.deleted ? `Deleted the export credentials of ${result.handle}.` : `${result.handle} had no export credentials.`,
      ]);
    });
}
