'use strict';
// ESLint's flat config (ESLint 9): `make lint`, and `make unit` first runs it.
// What it covers is what `make lint` names: lib/, bin/, test/, bench/,
// scripts/ (test/fixtures holds captured output, not code of ours).

const js = require('@eslint/js');
const globals = require('globals');

module.exports = [
  {
    ignores: ['test/fixtures/**', 'node_modules/**', 'build/**'],
  },
  js.configs.recommended,
  {
    // bin/nodetrace is JavaScript without the extension.
    files: ['**/*.js', '**/*.cjs', 'bin/nodetrace'],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'commonjs',
      globals: { ...globals.node },
    },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: { ...globals.node },
    },
  },
  {
    files: ['test/**/*.js', 'test/**/*.mjs'],
    languageOptions: { globals: { ...globals.mocha } },
  },
  {
    rules: {
      // Code lines only: a long message, template, URL or comment reads
      // better whole than broken at an arbitrary column, and so does a
      // regular expression literal (most match a whole message).
      'max-len': ['error', {
        code: 120,
        ignoreStrings: true,
        ignoreTemplateLiterals: true,
        ignoreUrls: true,
        ignoreComments: true,
        ignoreRegExpLiterals: true,
      }],
      // Bytes from targets and tracers are matched with regexps; a control
      // character in one must be written as an escape someone can read.
      'no-control-regex': 'error',
      // `const { dropped, ...kept } = o` is how a field is left out of a copy.
      'no-unused-vars': ['error', { ignoreRestSiblings: true }],
    },
  },
];
