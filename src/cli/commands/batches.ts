import { createWriteStream, readFileSync } from 'node:fs';
import { once } from 'node:events';
import type { Command } from 'commander';
import type { AppContext } from '../../app/container.js';
import type { BatchView } from '../../scoring/batches/batch.schema.js';
import { operator } from '../../scoring/batches/batches.service.js';
import { type CliIo, report, withAppContext } from '../context.js';
import { positiveInteger } from '../parsers.js';

function describe(batch: BatchView): string {
  return `${batch.id}\tscorer ${batch.scorer_id}\t${batch.status}\t${batch.done + batch.failed}/${batch.total} (${batch.failed} failed)\tcreated ${batch.created_at}`;
}

/** The file's addresses: a JSON `{"addresses":[…]}` (a .json file), otherwise one address per line. */
function readInput(file: string): { addresses: unknown[] } | string {
  const text = readFileSync(file, 'utf8');
  if (file.toLowerCase().endsWith('.json')) return JSON.parse(text) as { addresses: unknown[] };
  return text;
}

/** One progress line, rewritten in place on a terminal (\r), a line every few seconds otherwise. */
function progressReporter(io: CliIo) {
  // Only the real terminal of this process gets \r rewrites (tests and pipes get plain lines).
  const tty = io.env === process.env && process.stderr.isTTY === true;
  const started = Date.now();
  let lastLine = 0;
  return {
    update(batch: BatchView, final = false) {
      const finished = batch.done + batch.failed;
      const seconds = (Date.now() - started) / 1000;
      const rate = seconds > 0 ? Math.round(finished / seconds) : 0;
      const width = 30;
      const filled = batch.total === 0 ? width : Math.round((finished / batch.total) * width);
      const line = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${finished}/${batch.total} scored, ${batch.failed} failed, ${rate}/s`;
      if (tty) {
        process.stderr.write(`\r${line}${final ? '\n' : ''}`);
      } else if (final || Date.now() - lastLine >= 5000) {
        lastLine = Date.now();
        io.err(line);
      }
    },
  };
}

async function runBatch(ctx: AppContext, io: CliIo, file: string, scorerId: number, out: string | undefined): Promise<BatchView> {
  const { batch } = await ctx.batches.service.createAsOperator(scorerId, readInput(file));
  io.err(`Created batch ${batch.id} (${batch.total} addresses) for scorer ${scorerId}.`);
  const progress = progressReporter(io);
  // Worked off in this process (at least one chunk at a time); workers elsewhere may help.
  const worker = ctx.batches.worker;
  if (ctx.config.batchConcurrency > 0) worker.start();
  let current = await ctx.batches.service.get(operator, batch.id);
  while (current.status !== 'DONE' && current.status !== 'CANCELLED') {
    progress.update(current);
    await new Promise((resolve) => setTimeout(resolve, 250));
    current = await ctx.batches.service.get(operator, batch.id);
  }
  progress.update(current, true);
  await worker.stop();
  const lines = await ctx.batches.service.results(operator, batch.id, 'ndjson', 0);
  if (out) {
    const stream = createWriteStream(out);
    for await (const text of lines) if (!stream.write(text)) await once(stream, 'drain');
    stream.end();
    await once(stream, 'finish');
    io.err(`Results written to ${out}.`);
  } else {
    for await (const text of lines) io.out(text.trimEnd());
  }
  return current;
}

export function batchesCommand(program: Command, io: CliIo): void {
  const batches = program.command('batches').description('Score many addresses at once (asynchronous batches)');

  batches
    .command('run')
    .description('Create a batch from FILE (one address per line, optional header `address`; or a .json {"addresses":[…]}), score it here, write its results (NDJSON)')
    .argument('<file>', 'the addresses')
    .requiredOption('--scorer <id>', 'scorer id (the batch belongs to its account)', positiveInteger)
    .option('--out <file>', 'write the results here instead of standard output')
    .action(async (file: string, options: { scorer: number; out?: string }) => {
      await withAppContext(io, (ctx) => runBatch(ctx, io, file, options.scorer, options.out));
    });

  batches
    .command('status')
    .description('Show a batch and its progress')
    .argument('<id>', 'batch id')
    .option('--json', 'machine-readable output')
    .action(async (id: string, options: { json?: boolean }) => {
      const batch = await withAppContext(io, (ctx) => ctx.batches.service.get(operator, id));
      report(io, !!options.json, batch, () => [describe(batch)]);
    });

  batches
    .command('cancel')
    .description('Cancel a batch: addresses not scored yet are not scored')
    .argument('<id>', 'batch id')
    .option('--json', 'machine-readable output')
    .action(async (id: string, options: { json?: boolean }) => {
      const batch = await withAppContext(io, (ctx) => ctx.batches.service.cancel(operator, id));
      report(io, !!options.json, batch, () => [describe(batch)]);
    });
}
