/**
 * Grants and contributions of the scale data set, read by the import's own record readers
 * (`readGrant`, `readContribution`) from generated import records and written by its repository.
 */
import type { AppContext } from '../../src/app/container.js';
import type { Problem } from '../../src/publicdata/import/import-fields.js';
import { readContribution, readGrant } from '../../src/publicdata/import/import-records.js';
import { importRepository } from '../../src/publicdata/import/import.repository.js';
import { DAY_MS, scaleAddress, type ScaleCounts, unitRandom } from './generator.js';

const TOKENS = ['DAI', 'ETH', 'USDC', 'GTC'];
const CHUNK = 20_000;

export async function seedContributions(ctx: AppContext, counts: ScaleCounts): Promise<void> {
  const problems: Problem[] = [];
  const since = Date.UTC(2020, 0, 1);
  const grants = Array.from({ length: counts.grants }, (_, g) =>
    readGrant(`grants[${g}]`, {
      id: g + 1,
      title: `Scale grant ${g + 1}`,
      description: `Public goods work number ${g + 1}.`,
      admin_address: scaleAddress(g),
      created_on: new Date(since + Math.floor(unitRandom('grant', g) * 900) * DAY_MS).toISOString(),
    }, problems, Date.now()),
  );
  const repo = importRepository(ctx.database.db);
  await repo.upsertGrants(grants.map((g) => ({ ...g!.row, admin_profile_id: null })));
  for (let from = 0; from < counts.contributions; from += CHUNK) {
    const rows = [];
    for (let c = from; c < Math.min(counts.contributions, from + CHUNK); c++) {
      // Contributions concentrate on popular grants: the square of a uniform value falls along the ids.
      const grant = 1 + Math.floor(unitRandom('contribution-grant', c) ** 2 * counts.grants);
      const record = readContribution(`contributions[${c}]`, {
        id: c + 1,
        grant,
        address: scaleAddress(Math.floor(unitRandom('contributor', c) * counts.addresses)),
        amount: (unitRandom('amount', c) * 100).toFixed(2),
        token: TOKENS[c % TOKENS.length],
        created_on: new Date(since + Math.floor(unitRandom('contribution-day', c) * 1500 * DAY_MS)).toISOString(),
      }, problems);
      if (record) rows.push({ ...record.row, profile_id: null });
    }
    await repo.upsertContributions(rows);
  }
  if (problems.length > 0) throw new Error(`scale contributions: ${problems.length} records refused, first: ${JSON.stringify(problems[0])}`);
}
