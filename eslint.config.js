// Lint rules, including the layering of docs/architecture.md (dependencies point down only):
//
//   clients/ ──(network)──▶ apiserver/ ──▶ log/ ◀── compaction/        config/ is read by all
//                           tools/ ──▶ (apiserver/ below its doors, log/, compaction/, config/)
//
// Project files are checked on resolved paths (import-x/no-restricted-paths with the TypeScript resolver,
// which maps a `.js` specifier to its `.ts` source), so '../resources/x.js' from apiserver/http is caught
// as an import of apiserver/resources whatever its spelling. Packages are checked by name
// (no-restricted-imports): a bare package name is the same text from every file. test/lint/layering.test.ts
// lints a fixture tree against this file and fails if any zone or package rule stops firing.
import path from 'node:path'
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import importX from 'eslint-plugin-import-x'
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript'

const ROOT = import.meta.dirname

// The engines behind the Log contract; only the wiring (apiserver/server.ts, apiserver/main.ts) names one.
const ENGINES = ['log/level', 'log/jetstream']
// The etcd follower's first copy writes a data directory of the LevelDB engine with etcd's revisions
// (StoreImport), as the offline tools in tools/ do: like the wiring, it may name the engine. Paths under
// apiserver/.
const STORE_WRITERS = ['etcd-follow/import-etcd.ts']
const WIRING = ['server.ts', 'main.ts']
const CONTRACT_NAMES_NO_ENGINE = 'the contract (log/*.ts) names no engine: it offers the LevelDB engine only through log/level/open.ts.'
// The front doors: siblings that never import each other.
const DOORS = ['apiserver/http', 'apiserver/resources', 'apiserver/etcd', 'apiserver/ui']
const SERVER = ['apiserver', 'log', 'compaction', 'config']

/**
 * Globs for every .ts file under `dir` but the `allowed` ones (paths relative to `dir`): one glob for the
 * files directly in it, one for its other subfolders, and the same again inside each subfolder that holds
 * an allowed file.
 */
function allBut(dir, allowed) {
  const here = allowed.filter((file) => !file.includes('/')).map((file) => file.replace(/\.ts$/, ''))
  const subs = [...new Set(allowed.filter((file) => file.includes('/')).map((file) => file.split('/')[0]))]
  return [
    here.length > 0 ? `${dir}/!(${here.join('|')}).ts` : `${dir}/*.ts`,
    subs.length > 0 ? `${dir}/!(${subs.join('|')})/**` : `${dir}/*/**`,
    ...subs.flatMap((sub) =>
      allBut(
        `${dir}/${sub}`,
        allowed.filter((file) => file.startsWith(`${sub}/`)).map((file) => file.slice(sub.length + 1)),
      ),
    ),
  ]
}

export const zones = [
  {
    target: 'clients',
    from: SERVER.filter((layer) => layer !== 'config'),
    message: 'clients/ imports no server code (apiserver/, log/, compaction/, config/): it speaks to kvlog over the network.',
  },
  {
    target: 'log',
    from: ['apiserver', 'clients', 'compaction'],
    message: 'log/ is the bottom layer: it imports no front door, client or compaction policy.',
  },
  {
    // Globs in `except` are matched against absolute paths, hence ROOT.
    target: 'compaction',
    from: 'log/**',
    except: [`${ROOT}/log/*.ts`, `${ROOT}/log/watch/**`],
    message: 'compaction/ uses the Log contract only (log/*.ts, log/watch/), never an engine.',
  },
  {
    target: 'compaction',
    from: ['apiserver', 'clients'],
    message: 'compaction/ sits beside log/ and below the front doors: it imports no front door or client.',
  },
  {
    target: 'config',
    from: ['log', 'apiserver', 'clients', 'compaction'],
    message: 'config/ is read by all and imports none of them.',
  },
  {
    // Every apiserver file except the wiring and the follower's store writer.
    target: allBut('apiserver', [...WIRING, ...STORE_WRITERS]),
    from: ENGINES,
    message:
      'apiserver/ reaches an engine through the Log contract; only the wiring (server.ts, main.ts) and the store writer of the etcd follower name one.',
  },
  // The engines do not know each other: the cluster engine's local copy is reached through the
  // replication contract (log/replica.ts), which the wiring fills with an engine.
  ...ENGINES.map((engine) => ({
    target: engine,
    from: ENGINES.filter((other) => other !== engine),
    message: 'engines do not know each other: a local copy is reached through the replication contract (log/replica.ts).',
  })),
  // The contract files (log/index.ts among them) name no engine, so nothing reaches one through a
  // re-export: log/index.ts offers the LevelDB engine only through log/level/open.ts, as the contract.
  {
    target: 'log/*.ts',
    from: 'log/level',
    except: ['./open.ts'],
    message: CONTRACT_NAMES_NO_ENGINE,
  },
  {
    target: 'log/*.ts',
    from: 'log/jetstream',
    message: CONTRACT_NAMES_NO_ENGINE,
  },
  {
    target: 'apiserver',
    from: 'clients',
    message: 'the server never imports the client side.',
  },
  ...DOORS.map((door) => ({
    target: door,
    from: DOORS.filter((other) => other !== door),
    message: 'front doors are siblings: share code through apiserver/watch or apiserver/*.ts below them.',
  })),
  {
    target: 'examples',
    from: 'clients',
    except: ['index.ts'],
    message: 'examples import the client package (clients/index.js), not its internals.',
  },
  {
    target: 'examples',
    from: SERVER,
    message: 'examples use the client package only, never the server side.',
  },
]

// The offline tools (tools/: restore, import and export of etcd data, the follow cutover commands) may
// import the server's layers, as etcd's etcdutl imports etcd's packages; nothing the server runs imports
// them, and they reach no front door. wire/ (types only) is shared by the store, the server, the client and
// the browser UI. Of config/, the client side uses the one command-line parser only.
const TOOLS = 'tools'
export const roomZones = [
  {
    target: ['apiserver', 'log', 'compaction', 'config', 'clients', 'examples'],
    from: TOOLS,
    message: 'nothing the server runs imports the offline tools (tools/): bin/kvlog starts them.',
  },
  {
    target: TOOLS,
    from: [...DOORS, 'apiserver/watch', 'clients'],
    message: 'tools/ reaches no front door and no client code: it works on a data directory, or speaks HTTP to a server.',
  },
  {
    target: 'wire',
    from: ['log', 'config', 'compaction', 'apiserver', 'tools', 'clients', 'examples'],
    message: "wire/ holds the native API's types that every side shares (the browser's too): it imports nothing.",
  },
  {
    target: 'clients',
    from: 'config',
    except: ['./args.ts'],
    message: 'clients/ imports no server code: of config/, only the command-line parser (config/args.ts).',
  },
]

// Package names as anchored expressions: a gitignore-style group such as 'level/*' would also match the
// relative path '../log/level/x.js'.
const pkg = (...names) => `^(${names.join('|')})(/.*)?$`
const LEVELDB = {
  regex: pkg('classic-level', 'abstract-level', 'level'),
  message: 'only the LevelDB engine (log/level/) touches LevelDB; everything else goes through the Log contract.',
}
const CLASSIC_LEVEL = {
  regex: pkg('classic-level'),
  message: "the engine loads classic-level through log/level/classic-level.ts, which picks kvlog's LevelDB addon.",
}
const NATS = {
  regex: pkg('nats', '@nats-io/[^/]+'),
  message: 'only the cluster engine (log/jetstream/) talks to NATS.',
}
const NETWORK = {
  regex: pkg('fastify', '@fastify/[^/]+', 'ws', '@grpc/[^/]+', 'node:http', 'node:http2', 'http', 'http2'),
  message: 'log/ knows nothing of HTTP, WebSocket or gRPC.',
}
const packages = (...patterns) => ({ 'no-restricted-imports': ['error', { patterns }] })

const SOURCE = ['wire', 'apiserver', 'tools', 'clients', 'compaction', 'config', 'examples'].map((dir) => `${dir}/**/*.ts`)

export default tseslint.config(
  // classic-level's JavaScript layer as kvlog loads it keeps classic-level's own code (log/level/native/).
  {
    ignores: ['dist/**', 'node_modules/**', 'kvlog-data/**', 'log/level/native/build/**', 'log/level/native/deps/**'].concat(
      ['index', 'iterator', 'chained-batch'].map((name) => `log/level/native/classic-level/${name}.cjs`),
    ),
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  // Plain scripts that run before the TypeScript is compiled (npm's postinstall) run on Node.
  { files: ['**/*.mjs'], languageOptions: { globals: { process: 'readonly', console: 'readonly' } } },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', __dirname: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      // no-cycle parses the imported files: it needs to know they are TypeScript.
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: path.join(ROOT, 'tsconfig.json') })],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { basePath: ROOT, zones: [...zones, ...roomZones] }],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
  // Package rules: the file sets below do not overlap, since a later entry would replace an earlier one's
  // no-restricted-imports options for the files both match.
  { files: SOURCE, rules: packages(LEVELDB, NATS) },
  { files: ['log/**/*.ts'], ignores: ENGINES.map((engine) => `${engine}/**`), rules: packages(LEVELDB, NATS, NETWORK) },
  { files: ['log/level/**/*.ts'], ignores: ['log/level/classic-level.ts'], rules: packages(CLASSIC_LEVEL, NATS, NETWORK) },
  { files: ['log/level/classic-level.ts'], rules: packages(NATS, NETWORK) },
  { files: ['log/jetstream/**/*.ts'], rules: packages(LEVELDB, NETWORK) },
)
