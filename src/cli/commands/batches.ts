import { createWriteStream, readFileSync } from 'node:fs';
import { once } from 'node:events';
import type { Command } from 'commander';
import type { AppContext } from '../../app/container.js';
import type { BatchView } from '../../scoring/batches/batch.schema.js';
import { addressesFromCsv, addressesFromJson } from '../../scoring/batches/address-list.js';
import { operator } from '../../scoring/batches/batches.service.js';
import { type CliIo, report, UsageError, withAppContext } from '../context.js';
import { positiveInteger } from '../parsers.js';
import { finish as finishPush, usage } from './onchain-push.js';

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

interface RunOptions {
  scorer: number;
  out?: string;
  /** A chain to attest every address's score on once the batch is done (`onchain push`). */
  onchainPush?: number;
}

/** Queues the push that waits for `batchId` (checked before the batch was created). */
async function queuePush(ctx: AppContext, io: CliIo, chainId: number, scorerId: number, batchId: string, input: ReturnType<typeof readInput>): Promise<string> {
  const max = ctx.config.batchMaxAddresses;
  const addresses = typeof input === 'string' ? addressesFromCsv(input, max) : addressesFromJson(input.addresses, max);
  const job = await ctx.onchain.push.service.createAfterBatch(chainId, scorerId, batchId, addresses);
  io.err(`Queued push ${job.id}: ${job.total} address(es) to chain ${chainId} once batch ${batchId} is done, from ${job.sender}.`);
  return job.id;
}

async function runBatch(ctx: AppContext, io: CliIo, file: string, options: RunOptions): Promise<BatchView> {
  const { scorer: scorerId, out, onchainPush } = options;
  // Everything the push needs is checked before the batch exists: a refused push queues nothing.
  if (onchainPush !== undefined) await usage(() => ctx.onchain.push.service.check(onchainPush, scorerId));
  const input = readInput(file);
  const { batch } = await ctx.batches.service.createAsOperator(scorerId, input);
  io.err(`Created batch ${batch.id} (${batch.total} addresses) for scorer ${scorerId}.`);
  const pushId = onchainPush === undefined ? null : await queuePush(ctx, io, onchainPush, scorerId, batch.id, input);
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
  if (pushId !== null) ctx.onchain.push.worker.start();
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
  if (pushId !== null) {
    try {
      await finishPush(ctx, io, pushId, false);
    } finally {
      await ctx.onchain.push.worker.stop();
    }
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
    .option(
      '--onchain-push <chain>',
      'once the batch is done, attest each address\'s score on this chain from ONCHAIN_SENDER_KEY as `onchain push` does, printing its lines on standard output (needs --out)',
      positiveInteger,
    )
    .action(async (file: string, options: RunOptions) => {
      if (options.onchainPush !== undefined && options.out === undefined) {
        throw new UsageError('error: --onchain-push needs --out: the standard output carries the push\'s lines');
      }
      await withAppContext(io, (ctx) => runBatch(ctx, io, file, options));
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
