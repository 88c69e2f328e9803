// Lint rules, including the layering of DESIGN.md ("dependencies point down only"):
//
//   clients/ ──(network)──▶ apiserver/ ──▶ log/ ◀── compaction/        config/ is read by all
//
// - log/ knows nothing of the front doors, compaction policies or clients.
// - compaction/ may use log/ and config/ only.
// - the front doors (apiserver/http, apiserver/resources, apiserver/etcd) never import each other;
//   what they share lives in apiserver/watch or apiserver/*.ts below them.
// - clients/ imports nothing from the server side (bin/kvlog sends serve and snapshot restore to apiserver/main.ts).
// - examples/ use the client package only (clients/index.js), like a user's program would.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

const forbid = (...groups) => ({
  'no-restricted-imports': ['error', {
    patterns: groups.map(([group, message]) => ({ group, message })),
  }],
})

const SERVER = ['**/log/**', '**/compaction/**', '**/apiserver/**']

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'kvlog-data/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    files: ['log/**/*.ts'],
    rules: forbid(
      [['**/apiserver/**', '**/clients/**', '**/compaction/**', '!./compaction/**'], 'log/ is the bottom layer: it must not import front doors, clients or compaction (DESIGN.md).'],
      [['fastify', 'ws', '@grpc/*', 'node:http', 'node:http2', 'http', 'http2'], 'log/ knows nothing of HTTP, WebSocket or gRPC (DESIGN.md).'],
    ),
  },
  {
    files: ['config/**/*.ts'],
    rules: forbid([['**/log/**', '**/apiserver/**', '**/clients/**', '**/compaction/**'], 'config/ is read by all and imports none of them.']),
  },
  {
    files: ['compaction/**/*.ts'],
    rules: forbid([['**/apiserver/**', '**/clients/**'], 'compaction/ sits beside log/ and below the front doors (DESIGN.md).']),
  },
  {
    files: ['apiserver/**/*.ts'],
    rules: forbid(
      [['**/clients/**'], 'the server never imports the client side.'],
      [['classic-level', 'level', 'abstract-level'], 'no front door touches LevelDB: go through log/ (DESIGN.md).'],
    ),
  },
  {
    files: ['apiserver/http/**/*.ts'],
    rules: forbid(
      [['**/apiserver/resources/**', '**/apiserver/etcd/**'], 'front doors are siblings: share code through apiserver/watch or apiserver/*.ts.'],
      [['classic-level', 'level', 'abstract-level'], 'no front door touches LevelDB.'],
      [['**/clients/**'], 'the server never imports the client side.'],
    ),
  },
  {
    files: ['apiserver/resources/**/*.ts'],
    rules: forbid(
      [['**/apiserver/http/**', '**/apiserver/etcd/**'], 'front doors are siblings: share code through apiserver/watch or apiserver/*.ts.'],
      [['classic-level', 'level', 'abstract-level'], 'no front door touches LevelDB.'],
      [['**/clients/**'], 'the server never imports the client side.'],
    ),
  },
  {
    files: ['apiserver/etcd/**/*.ts'],
    rules: forbid(
      [['**/apiserver/http/**', '**/apiserver/resources/**'], 'front doors are siblings: share code through apiserver/watch or apiserver/*.ts.'],
      [['classic-level', 'level', 'abstract-level'], 'no front door touches LevelDB.'],
      [['**/clients/**'], 'the server never imports the client side.'],
    ),
  },
  {
    files: ['clients/**/*.ts'],
    rules: forbid([[...SERVER, '**/config/**'], 'the client side imports nothing from the server side, config/ included.']),
  },
  {
    files: ['examples/**/*.ts'],
    rules: forbid(
      [SERVER, 'examples use the client package only, never the server side.'],
      [['**/clients/**', '!**/clients/index.js'], 'examples import the client package (clients/index.js), not its internals.'],
    ),
  },
)
