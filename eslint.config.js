// The linter of `npm test` (`npm run lint`): ESLint's and typescript-eslint's recommended rules.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'packages/client/dist/**', 'packages/client/src/generated/**', 'coverage/**', 'bench/results/**', 'loadtest/results/**', 'portal/dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      // `_name` marks a binding kept on purpose (a destructured field left out of a copy).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Migrations and the dialect helpers they share run against whatever schema a database has at
    // that step (Kysely<any>, as Kysely's migration guide prescribes), never the live table types.
    files: ['src/db/migrations/**', 'src/db/migrate.ts', 'src/db/dialect.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Tests build hostile and partial shapes on purpose.
    files: ['test/**', 'bench/**', 'loadtest/**', 'examples/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
);
