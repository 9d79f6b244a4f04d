// @ts-check
// Lint gate for `npm run lint` (and .ci/run): typescript-eslint's strict type-checked rules,
// with the few adjustments below, each for a stated reason. Zero warnings allowed.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', '.services/**', 'test-results/**', 'bench/peers/**/build/**'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Numbers (bigints included) and booleans read as themselves in messages and logs; objects and
      // nullish values still have to be made text on purpose.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // `() => void promise` and `(x) => set.add(x)` as callbacks are the house idiom.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // noUncheckedIndexedAccess is on: indexing inside bounds just checked (the scanner, the
      // codecs) asserts with `!` rather than inventing a fallback value that would hide a bug.
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Interface implementations are `async` even when they do not await, so a throw becomes a
      // rejection like every other implementation's.
      '@typescript-eslint/require-await': 'off',
      // A leading underscore marks a binding kept on purpose (a rest-omit, a positional argument).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // Worker threads' first code (gateway/threads/bootstrap.cjs, the SQLite writer): CommonJS on
    // purpose, so node runs it with no TypeScript loader; tsc checks it (checkJs).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
