import { type Command, InvalidArgumentError, Option } from 'commander';
import { AppError } from '../../errors.js';
import { issueCredential } from '../../scoring/stamps/dev-issuer.js';
import { type CliIo, report, withAppContext } from '../context.js';
import { addressArgument } from '../parsers.js';

const units: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

// Ten years: a credential must expire in a year that ISO 8601 can write.
const longestValidityMs = 3650 * 86_400_000;

export function duration(value: string): number {
  const match = /^(\d{1,12})([smhd])$/.exec(value);
  const ms = match ? Number(match[1]) * (units[match[2] as string] as number) : 0;
  if (!match || ms === 0 || ms > longestValidityMs) {
    throw new InvalidArgumentError(`"${value}" is not a duration from 1s to 3650d, such as 90d, 12h or 30m.`);
  }
  return ms;
}

function nullifier(value: string, previous: string[] = []): string[] {
  if (value.trim() === '') throw new InvalidArgumentError('A nullifier cannot be empty.');
  return [...previous, value];
}

export function credentialsCommand(program: Command, io: CliIo): void {
  const credentials = program.command('credentials').description('The development issuer (development only)');

  credentials
    .command('issue')
    .description('Sign a stamp credential with the local development issuer key and print it')
    .requiredOption('--address <address>', 'the stamp holder', addressArgument)
    .requiredOption('--provider <provider>', 'provider id, e.g. Google')
    .addOption(new Option('--expires-in <duration>', 'validity: 90d, 12h, 30m, 45s … up to 3650d').argParser(duration).default(90 * units.d!, '90d'))
    .option('--nullifier <value...>', 'nullifier(s) to use instead of the derived one', nullifier)
    .option('--import', 'also store it, as `stamps import` would')
    .option('--json', 'print only the credential (or, with --import, the credential and the outcome) as JSON')
    .action(async (options: { address: string; provider: string; expiresIn: number; nullifier?: string[]; import?: boolean; json?: boolean }) => {
      const result = await withAppContext(io, async (ctx) => {
        if (!ctx.devIssuerKey) {
          throw new AppError('permission_denied', 'The development issuer is off in production (STAMPGATE_ENV=production).');
        }
        const now = Date.now();
        const credential = issueCredential({
          privateKey: ctx.devIssuerKey,
          address: options.address,
          provider: options.provider,
          nullifiers: options.nullifier,
          issuedAt: new Date(now),
          expiresAt: new Date(now + options.expiresIn),
        });
        const imported = options.import ? await ctx.stamps.importCredentials([credential]) : null;
        return { credential, imported };
      });
      if (!options.import) {
        io.out(JSON.stringify(result.credential, null, 2));
        return;
      }
      const outcome = result.imported?.results[0];
      report(io, !!options.json, { credential: result.credential, outcome }, () => [
        JSON.stringify(result.credential, null, 2),
        outcome?.status === 'rejected' ? `Not stored: ${outcome.reason}` : `Stored for ${options.address} (${outcome?.status}).`,
      ]);
    });
}
