/**
 * `npm run bench:scale -- [--build] [--size 0.1] [--small 0.001] [--database sqlite|postgres|both]`:
 * builds (or reuses) the scale data set and a small one, then runs every scale case on both in the
 * same run and prints PASS/FAIL per target (bench/scale/cases.ts). `--build` alone only builds.
 */
import { parseArgs } from 'node:util';
import { buildScaleDataset, type ScaleDatabase } from './build.js';
import { runScaleCases } from './cases.js';

const { values } = parseArgs({
  options: {
    build: { type: 'boolean', default: false },
    rebuild: { type: 'boolean', default: false },
    size: { type: 'string', default: '1' },
    small: { type: 'string', default: '0.001' },
    database: { type: 'string', default: 'both' },
  },
});
const size = Number(values.size);
const small = Number(values.small);
if (!(size > 0 && size <= 1) || !(small > 0 && small <= size)) throw new Error('--size and --small are fractions of the full set (0 < small <= size <= 1)');
const databases: ScaleDatabase[] = values.database === 'both' ? ['sqlite', 'postgres'] : [values.database as ScaleDatabase];
const log = (line: string) => console.log(line);

let failed = false;
for (const database of databases) {
  const large = await buildScaleDataset(database, size, log, values.rebuild);
  if (values.build) continue;
  const reference = await buildScaleDataset(database, small, log, values.rebuild);
  failed = !(await runScaleCases(reference, large, log)) || failed;
}
process.exitCode = failed ? 1 : 0;
