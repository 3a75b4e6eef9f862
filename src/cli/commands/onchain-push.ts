import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { AppContext } from '../../app/container.js';
import { AppError, type ErrorCode } from '../../errors.js';
import type { PushResult } from '../../onchain/push.service.js';
import { type CliIo, UsageError, withAppContext } from '../context.js';
import { positiveInteger } from '../parsers.js';

// Refusals of the command's own arguments: exit 2, nothing queued.
const usageCodes = new Set<ErrorCode>(['onchain_not_configured', 'chain_not_found', 'scorer_not_found', 'invalid_address', 'invalid_request', 'not_found']);

const pagesOf = 500;
const lookEveryMs = 250;

export function usage<T>(work: () => Promise<T>): Promise<T> {
  return work().catch((error: unknown) => {
    if (error instanceof AppError && usageCodes.has(error.code)) throw new UsageError(`error: ${error.message}`);
    throw error;
  });
}

function line(result: PushResult, json: boolean): string {
  if (json) return JSON.stringify({ address: result.address, status: result.status, uid: result.uid, tx_hash: result.tx_hash, reason: result.reason });
  switch (result.status) {
    case 'attested':
      return `${result.address} attested ${result.uid} ${result.tx_hash}`;
    case 'failed':
      return `${result.address} failed ${result.reason}`;
    case 'sent':
      return `${result.address} sent ${result.tx_hash}`;
    default:
      return `${result.address} ${result.status}`;
  }
}

/** done/total on stderr: one line rewritten in place on this process's terminal, plain lines (at most one a second) otherwise. */
function progressReporter(io: CliIo) {
  const tty = io.env === process.env && process.stderr.isTTY === true;
  let shown = -1;
  let lastLine = 0;
  return (done: number, total: number, final: boolean) => {
    const text = `${done}/${total} done`;
    if (tty) {
      process.stderr.write(`\r${text}${final ? '\n' : ''}`);
    } else if (final || (done !== shown && Date.now() - lastLine >= 1000)) {
      shown = done;
      lastLine = Date.now();
      io.err(text);
    }
  };
}

const isOpen = (result: PushResult) => result.status === 'pending' || result.status === 'sent';

/**
 * Prints each address's outcome in list order as soon as it and all before it are final, until
 * every one is; returns how many failed. Says so on stderr while no worker is seen.
 */
async function follow(ctx: AppContext, io: CliIo, jobId: string, json: boolean): Promise<number> {
  const service = ctx.onchain.push.service;
  const progress = progressReporter(io);
  let printed = 0;
  let failed = 0;
  let warned = false;
  for (;;) {
    const job = await service.job(jobId);
    for (let more = true; more; ) {
      const page = await service.results(jobId, printed, pagesOf);
      const open = page.findIndex(isOpen);
      for (const result of open === -1 ? page : page.slice(0, open)) {
        io.out(line(result, json));
        if (result.status === 'failed') failed++;
        printed++;
      }
      more = open === -1 && page.length === pagesOf;
    }
    const done = job.total - job.counts.pending - job.counts.sent;
    if (printed >= job.total) {
      progress(job.total, job.total, true);
      return failed;
    }
    progress(done, job.total, false);
    const seen = await service.workerLastSeen();
    const absent = seen === null || Date.now() - seen > ctx.onchain.push.workerThresholdMs;
    if (absent && !warned) io.err('No worker is running: start `stampgate worker` (with the same ONCHAIN_SENDER_KEY) to send this push; waiting.');
    else if (!absent && warned) io.err('A worker is running again.');
    warned = absent;
    await new Promise((resolve) => setTimeout(resolve, lookEveryMs));
  }
}

async function printNow(ctx: AppContext, io: CliIo, jobId: string, json: boolean): Promise<void> {
  for (let from = 0; ; from += pagesOf) {
    const page = await ctx.onchain.push.service.results(jobId, from, pagesOf);
    for (const result of page) io.out(line(result, json));
    if (page.length < pagesOf) return;
  }
}

/** Follows a push to its end (one line per address on standard output); an error when any address failed. */
export async function finish(ctx: AppContext, io: CliIo, jobId: string, json: boolean): Promise<void> {
  const failed = await follow(ctx, io, jobId, json);
  if (failed > 0) throw new Error(`${failed} address(es) of push ${jobId} failed`);
}

/** `stampgate onchain push` and `stampgate onchain push-status`. */
export function onchainPushCommands(onchain: Command, io: CliIo): void {
  onchain
    .command('push')
    .description(
      'Attest a list of addresses\' scores on a chain with transactions sent from ONCHAIN_SENDER_KEY, as a durable job worked off by `stampgate worker`; ' +
        'waits for every receipt and prints one line per address: ADDRESS attested UID TX, ADDRESS skipped, or ADDRESS failed REASON',
    )
    .requiredOption('--chain <id>', 'chain id of the deployment file', positiveInteger)
    .requiredOption('--scorer <id>', 'the scorer whose scores are attested', positiveInteger)
    .requiredOption('--file <path>', 'the addresses: one a line, an optional first line `address` (a CSV column)')
    .option('--json', 'one JSON object per address and line: address, status, uid, tx_hash, reason')
    .option('--no-wait', 'queue the job and print its id (read it later with `onchain push-status ID`)')
    .action(async (options: { chain: number; scorer: number; file: string; json?: boolean; wait: boolean }) => {
      let text: string;
      try {
        text = readFileSync(options.file, 'utf8');
      } catch (error) {
        throw new UsageError(`error: cannot read ${options.file} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`);
      }
      await withAppContext(io, async (ctx) => {
        const job = await usage(() => ctx.onchain.push.service.create(options.chain, options.scorer, text));
        if (!options.wait) {
          io.out(options.json ? JSON.stringify({ job_id: job.id, total: job.total }) : job.id);
          return;
        }
        io.err(`Queued push ${job.id}: ${job.total} address(es) to chain ${job.chain_id} for scorer ${job.scorer_id}, from ${job.sender}.`);
        await finish(ctx, io, job.id, !!options.json);
      });
    });

  onchain
    .command('push-status')
    .description('The results of a push job (`onchain push`): waits until every address is done unless --no-wait, then one line per address as `onchain push` prints')
    .argument('<job>', 'the job id `onchain push --no-wait` printed')
    .option('--json', 'one JSON object per address and line')
    .option('--no-wait', 'print every address\'s state now (open ones as `pending`, or `sent TX`)')
    .action(async (jobId: string, options: { json?: boolean; wait: boolean }) => {
      await withAppContext(io, async (ctx) => {
        await usage(() => ctx.onchain.push.service.job(jobId));
        if (options.wait) await finish(ctx, io, jobId, !!options.json);
        else await printNow(ctx, io, jobId, !!options.json);
      });
    });
}
