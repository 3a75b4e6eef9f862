/**
 * The dependency rules of the house (docs/architecture.md), checked by `npm test` (`npm run lint:deps`).
 * Floors, bottom up: a module may import its own floor and the floors below it, never one above.
 * When a rule complains, the design is wrong, not the rule.
 */
const floors = [
  // Foundations: know no capability.
  ['src/errors.ts', 'src/logger.ts', 'src/version.ts', 'src/config/', 'src/db/', 'src/http/', 'src/chain/', 'src/events/'],
  // Pure scoring domain and the sign-in mechanism every wallet flow shares.
  ['src/scoring/scorers/', 'src/scoring/timestamps.ts', 'src/sessions/'],
  ['src/scoring/accounts/'],
  ['src/scoring/stamps/', 'src/staking/', 'src/publicdata/', 'src/models/'],
  // The score record (score rows, the event log, nullifier holds), then the job queue that writes it.
  ['src/scoring/records/'],
  ['src/scoring/jobs/'],
  ['src/scoring/scores/'],
  ['src/scoring/batches/', 'src/scoring/wallet/', 'src/webhooks/', 'src/onchain/'],
  ['src/portal/'],
  // The composition root and the command line: the only modules that see every capability.
  ['src/app/', 'src/cli/'],
];

const pattern = (paths) => `^(${paths.map((p) => p.replace(/[.]/g, '\\.')).join('|')})`;

const floorRules = floors.slice(0, -1).map((floor, index) => ({
  name: `floor-${index}-imports-nothing-above`,
  comment: `${floor.join(', ')} may not import a module of a higher floor (${floors
    .slice(index + 1)
    .flat()
    .join(', ')}).`,
  severity: 'error',
  from: { path: pattern(floor) },
  to: { path: pattern(floors.slice(index + 1).flat()) },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import circle ties two modules into one: move what both need into a module both import.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'only-the-cli-uses-the-composition-root',
      comment: 'src/app/ builds everything; below it nothing may know it (tests and benches may).',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(app|cli)/' },
      to: { path: '^src/app/' },
    },
    {
      name: 'migrations-are-frozen',
      comment: 'A shipped migration must not change when live code changes: it imports nothing outside src/db/ but its own helpers.',
      severity: 'error',
      from: { path: '^src/db/migrations/' },
      to: { path: '^src/', pathNot: '^src/db/(migrations/|dialect\\.ts$|connection\\.ts$)' },
    },
    {
      name: 'every-module-has-a-floor',
      comment: 'A new top-level module of src/ needs its floor in .dependency-cruiser.cjs (and docs/architecture.md).',
      severity: 'error',
      from: { path: '^src/', pathNot: pattern(floors.flat()) },
      to: {},
    },
    {
      name: 'no-unresolvable-imports',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    ...floorRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
