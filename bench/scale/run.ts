/**
 * `npm run bench:scale -- [--build] [--size 0.1] [--small 0.001] [--database sqlite|postgres|both] [--batch-addresses 100000]`:
 * builds (or reuses) the scale data set (with its batch group) and a small one, then runs every
 * scale case on both in the same run and prints PASS/FAIL per target (bench/scale/cases.ts), then
 * the uncached bounty list at 10 000 and 100 000 bounties (bench/scale/bounty-case.ts), the batch case on the scale set (bench/scale/batch-case.ts) and, on PostgreSQL, the migration
 * probe (bench/scale/migration-probe.ts). `--build` alone only builds.
 * `--batch-addresses` defaults to 100 000 whatever the size (the target is stated for 100 000);
 * a run may ask fewer than the cached set holds without a rebuild.
 */
import { parseArgs } from 'node:util';
import { batchCase } from './batch-case.js';
import { bountyCase } from './bounty-case.js';
import { DEFAULT_BATCH_ADDRESSES } from './batch-group.js';
import { buildScaleDataset, type ScaleDatabase } from './build.js';
import { runScaleCases } from './cases.js';
import { migrationProbeCase } from './migration-probe.js';

const { values } = parseArgs({
  options: {
    build: { type: 'boolean', default: false },
    rebuild: { type: 'boolean', default: false },
    size: { type: 'string', default: '1' },
    small: { type: 'string', default: '0.001' },
    database: { type: 'string', default: 'both' },
    'batch-addresses': { type: 'string', default: String(DEFAULT_BATCH_ADDRESSES) },
  },
});
const size = Number(values.size);
const small = Number(values.small);
const batchAddresses = Number(values['batch-addresses']);
if (!(size > 0 && size <= 1) || !(small > 0 && small <= size)) throw new Error('--size and --small are fractions of the full set (0 < small <= size <= 1)');
if (!Number.isInteger(batchAddresses) || batchAddresses < 1) throw new Error('--batch-addresses is a whole number of addresses');
const databases: ScaleDatabase[] = values.database === 'both' ? ['sqlite', 'postgres'] : [values.database as ScaleDatabase];
const log = (line: string) => console.log(line);

let failed = false;
for (const database of databases) {
  const large = await buildScaleDataset(database, size, log, values.rebuild, batchAddresses);
  if (values.build) continue;
  const reference = await buildScaleDataset(database, small, log, values.rebuild);
  failed = !(await runScaleCases(reference, large, log)) || failed;
  failed = !(await bountyCase(database, log)) || failed;
  failed = !(await batchCase(large, batchAddresses, log)) || failed;
  if (database === 'postgres') failed = !(await migrationProbeCase(large, log)) || failed;
}
process.exitCode = failed ? 1 : 0;
