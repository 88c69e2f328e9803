/**
 * The layering rules of eslint.config.js fire. The project's own eslint.config.js is copied into a temp
 * folder laid out as the house (docs/architecture.md): the contracts at the top of log/ (the Log contract,
 * the replication contract, the index that opens a log through log/level/open.ts), the engines in log/level/ and
 * log/jetstream/, the front doors under apiserver/, the offline tools in tools/, clients/, compaction/, config/,
 * examples/. Each case
 * file there holds one forbidden import and must be rejected by the rule that owns it; the allowed files
 * must lint clean. Imports are real relative paths that resolve to real files, as in the code base.
 */
import { expect } from 'chai'
import { copyFile, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ESLint } from 'eslint'

const REPO = fileURLToPath(new URL('../../../', import.meta.url))

const ZONE = 'import-x/no-restricted-paths'
const PACKAGE = 'no-restricted-imports'
const CYCLE = 'import-x/no-cycle'

/** Modules the cases import: each exports one value. */
const TARGETS = [
  'log/backend.ts',
  'log/replica.ts',
  'log/level/open.ts',
  'log/watch/hub.ts',
  'log/level/engine.ts',
  'log/jetstream/engine.ts',
  'apiserver/shared.ts',
  'apiserver/http/door.ts',
  'apiserver/resources/door.ts',
  'apiserver/etcd/door.ts',
  'apiserver/ui/door.ts',
  'clients/index.ts',
  'clients/internal.ts',
  'compaction/policy.ts',
  'config/index.ts',
  'config/args.ts',
  'tools/restore.ts',
  'wire/native-api.ts',
]

interface Case {
  file: string
  from: string
  rule: string
  /** A fragment of the rule's message that names the layer rule (not only the generic rule id). */
  says: string
  /** The case file passes the module's value on under this name instead of using it. */
  reexports?: string
}

const CLIENTS = 'clients/ imports no server code'
const LOG = 'log/ is the bottom layer'
const CONTRACT = 'compaction/ uses the Log contract only'
const COMPACTION = 'compaction/ sits beside log/'
const CONFIG = 'config/ is read by all'
const ENGINE = 'apiserver/ reaches an engine through the Log contract'
const SERVER = 'the server never imports the client side'
const DOORS = 'front doors are siblings'
const EXAMPLE_INTERNALS = 'examples import the client package'
const EXAMPLE_SERVER = 'examples use the client package only'
const LEVELDB = 'only the LevelDB engine (log/level/) touches LevelDB'
const CLASSIC_LEVEL = 'the engine loads classic-level through log/level/classic-level.ts'
const NATS = 'only the cluster engine (log/jetstream/) talks to NATS'
const NETWORK = 'log/ knows nothing of HTTP, WebSocket or gRPC'
const ENGINES_APART = 'engines do not know each other'
const REEXPORT = 'the contract (log/*.ts) names no engine'
const OFFLINE_ROOM = 'nothing the server runs imports the offline tools'
const OFFLINE_REACH = 'tools/ reaches no front door and no client code'
const WIRE = "wire/ holds the native API's types that every side shares"

const FORBIDDEN: Case[] = [
  { file: 'clients/cli/serve.ts', from: '../../apiserver/shared.js', rule: ZONE, says: CLIENTS },
  { file: 'clients/to-log.ts', from: '../log/backend.js', rule: ZONE, says: CLIENTS },
  { file: 'clients/to-compaction.ts', from: '../compaction/policy.js', rule: ZONE, says: CLIENTS },
  { file: 'clients/cli/to-config.ts', from: '../../config/index.js', rule: ZONE, says: CLIENTS },
  { file: 'log/to-apiserver.ts', from: '../apiserver/shared.js', rule: ZONE, says: LOG },
  { file: 'log/level/to-compaction.ts', from: '../../compaction/policy.js', rule: ZONE, says: LOG },
  { file: 'log/watch/to-clients.ts', from: '../../clients/index.js', rule: ZONE, says: LOG },
  { file: 'compaction/to-level.ts', from: '../log/level/engine.js', rule: ZONE, says: CONTRACT },
  { file: 'compaction/to-jetstream.ts', from: '../log/jetstream/engine.js', rule: ZONE, says: CONTRACT },
  { file: 'compaction/to-door.ts', from: '../apiserver/http/door.js', rule: ZONE, says: COMPACTION },
  { file: 'config/to-log.ts', from: '../log/backend.js', rule: ZONE, says: CONFIG },
  { file: 'apiserver/watch/to-level.ts', from: '../../log/level/engine.js', rule: ZONE, says: ENGINE },
  { file: 'apiserver/paging.ts', from: '../log/jetstream/engine.js', rule: ZONE, says: ENGINE },
  { file: 'apiserver/resources/to-level.ts', from: '../../log/level/engine.js', rule: ZONE, says: ENGINE },
  // Beside the follower's store writer (apiserver/etcd-follow/import-etcd.ts may name the engine), a file that may not.
  { file: 'apiserver/etcd-follow/to-level.ts', from: '../../log/level/engine.js', rule: ZONE, says: ENGINE },
  { file: 'log/jetstream/to-level.ts', from: '../level/engine.js', rule: ZONE, says: ENGINES_APART },
  { file: 'log/level/to-jetstream.ts', from: '../jetstream/engine.js', rule: ZONE, says: ENGINES_APART },
  // An engine named through a re-export: the index (or any contract file) passes an engine on.
  { file: 'log/index.ts', from: './level/engine.js', rule: ZONE, says: REEXPORT, reexports: 'LevelLog' },
  { file: 'log/engines.ts', from: './jetstream/engine.js', rule: ZONE, says: REEXPORT, reexports: 'JetStreamLog' },
  { file: 'apiserver/to-clients.ts', from: '../clients/index.js', rule: ZONE, says: SERVER },
  // A sibling door by a relative path that never spells 'apiserver/'.
  { file: 'apiserver/http/to-resources.ts', from: '../resources/door.js', rule: ZONE, says: DOORS },
  { file: 'apiserver/resources/to-etcd.ts', from: '../etcd/door.js', rule: ZONE, says: DOORS },
  { file: 'apiserver/etcd/to-ui.ts', from: '../http/../ui/door.js', rule: ZONE, says: DOORS },
  { file: 'apiserver/ui/to-http.ts', from: '../http/door.js', rule: ZONE, says: DOORS },
  { file: 'examples/to-internals.ts', from: '../clients/internal.js', rule: ZONE, says: EXAMPLE_INTERNALS },
  { file: 'examples/to-server.ts', from: '../log/backend.js', rule: ZONE, says: EXAMPLE_SERVER },
  { file: 'apiserver/etcd/to-leveldb.ts', from: 'classic-level', rule: PACKAGE, says: LEVELDB },
  { file: 'log/to-leveldb.ts', from: 'classic-level', rule: PACKAGE, says: LEVELDB },
  { file: 'log/jetstream/to-leveldb.ts', from: 'classic-level', rule: PACKAGE, says: LEVELDB },
  { file: 'compaction/to-leveldb.ts', from: 'abstract-level', rule: PACKAGE, says: LEVELDB },
  { file: 'log/level/io/to-classic-level.ts', from: 'classic-level', rule: PACKAGE, says: CLASSIC_LEVEL },
  { file: 'apiserver/to-nats.ts', from: 'nats', rule: PACKAGE, says: NATS },
  { file: 'log/level/to-nats.ts', from: '@nats-io/jetstream', rule: PACKAGE, says: NATS },
  { file: 'clients/to-nats.ts', from: '@nats-io/transport-node', rule: PACKAGE, says: NATS },
  { file: 'log/watch/to-nats.ts', from: 'nats', rule: PACKAGE, says: NATS },
  { file: 'log/to-http.ts', from: 'fastify', rule: PACKAGE, says: NETWORK },
  { file: 'log/level/to-grpc.ts', from: '@grpc/grpc-js', rule: PACKAGE, says: NETWORK },
  { file: 'log/jetstream/to-ws.ts', from: 'ws', rule: PACKAGE, says: NETWORK },
  // The offline room: no door, no server file and no lower layer imports it.
  { file: 'apiserver/http/to-tools.ts', from: '../../tools/restore.js', rule: ZONE, says: OFFLINE_ROOM },
  { file: 'apiserver/resources/to-tools.ts', from: '../../tools/restore.js', rule: ZONE, says: OFFLINE_ROOM },
  { file: 'apiserver/etcd/to-tools.ts', from: '../../tools/restore.js', rule: ZONE, says: OFFLINE_ROOM },
  { file: 'apiserver/ui/to-tools.ts', from: '../../tools/restore.js', rule: ZONE, says: OFFLINE_ROOM },
  { file: 'apiserver/watch/to-tools.ts', from: '../../tools/restore.js', rule: ZONE, says: OFFLINE_ROOM },
  { file: 'apiserver/server-to-tools.ts', from: '../tools/restore.js', rule: ZONE, says: OFFLINE_ROOM },
  { file: 'log/to-tools.ts', from: '../tools/restore.js', rule: ZONE, says: OFFLINE_ROOM },
  { file: 'clients/cli/to-tools.ts', from: '../../tools/restore.js', rule: ZONE, says: OFFLINE_ROOM },
  { file: 'tools/to-door.ts', from: '../apiserver/etcd/door.js', rule: ZONE, says: OFFLINE_REACH },
  { file: 'tools/to-clients.ts', from: '../clients/index.js', rule: ZONE, says: OFFLINE_REACH },
  { file: 'wire/to-log.ts', from: '../log/backend.js', rule: ZONE, says: WIRE },
  { file: 'wire/to-clients.ts', from: '../clients/index.js', rule: ZONE, says: WIRE },
]

/** Files whose imports are all allowed. */
const ALLOWED: Record<string, string[]> = {
  'apiserver/server.ts': ['../log/level/engine.js', '../log/jetstream/engine.js', './http/door.js', './resources/door.js'],
  'apiserver/main.ts': ['../log/level/engine.js', '../config/index.js', './shared.js'],
  'apiserver/http/routes.ts': ['../shared.js', '../../log/backend.js', '../../log/watch/hub.js', '../../config/index.js', 'fastify'],
  'compaction/auto.ts': ['../log/backend.js', '../log/watch/hub.js', '../config/index.js'],
  'log/level/writer.ts': ['../backend.js', '../watch/hub.js', '../../config/index.js', './classic-level.js'],
  'log/level/classic-level.ts': ['classic-level'],
  'log/jetstream/stream.ts': ['../backend.js', '../replica.js', 'nats'],
  'log/level/engine-open.ts': ['./engine.js', '../replica.js', './classic-level.js'],
  'log/contract.ts': ['./level/open.js', './replica.js', './backend.js'],
  // The follower's store writer may name the engine, as the wiring does (eslint.config.js, STORE_WRITERS).
  'apiserver/etcd-follow/import-etcd.ts': ['../../log/level/engine.js', '../../log/backend.js'],
  'clients/client.ts': ['./internal.js', 'ws'],
  'examples/controller.ts': ['../clients/index.js'],
  // The offline tools reach the server's layers below the doors, as etcdutl does; the client CLI uses
  // config/'s command-line parser.
  'tools/restore-to.ts': [
    '../log/level/engine.js',
    '../log/backend.js',
    '../apiserver/shared.js',
    '../config/index.js',
    '../compaction/policy.js',
  ],
  'clients/cli/args.ts': ['../../config/args.js'],
  // The wire types: the store, the server, the client and the browser UI share them.
  'log/watch/events.ts': ['../../wire/native-api.js'],
  'apiserver/codec.ts': ['../wire/native-api.js', '../log/backend.js'],
  'apiserver/ui/app/api.ts': ['../../../wire/native-api.js'],
  'clients/codec.ts': ['../wire/native-api.js', './internal.js'],
}

/** Two log/ files that import values from each other. */
const CYCLE_FILES: Record<string, string> = {
  'log/watch/cycle-a.ts': "import { b } from './cycle-b.js'\nexport const a = () => b\n",
  'log/watch/cycle-b.ts': "import { a } from './cycle-a.js'\nexport const b = () => a\n",
}

function importing(specifiers: string[]): string {
  const lines = specifiers.map((from, i) => `import * as m${i} from '${from}'`)
  const used = specifiers.map((_, i) => `m${i}`).join(', ')
  return `${lines.join('\n')}\nexport const used = [${used}]\n`
}

async function put(root: string, file: string, text: string): Promise<void> {
  await mkdir(dirname(join(root, file)), { recursive: true })
  await writeFile(join(root, file), text)
}

describe('lint: the layering rules of eslint.config.js', function () {
  this.timeout(120_000)
  let root: string
  const results = new Map<string, ESLint.LintResult>()

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'kvlog-layering-'))
    await copyFile(join(REPO, 'eslint.config.js'), join(root, 'eslint.config.js'))
    await symlink(await realpath(join(REPO, 'node_modules')), join(root, 'node_modules'), 'dir')
    await writeFile(join(root, 'package.json'), JSON.stringify({ type: 'module' }))
    await writeFile(
      join(root, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true },
        include: ['**/*.ts'],
      }),
    )
    for (const file of TARGETS) await put(root, file, `export const value = '${file}'\n`)
    for (const c of FORBIDDEN)
      await put(root, c.file, c.reexports === undefined ? importing([c.from]) : `export { value as ${c.reexports} } from '${c.from}'\n`)
    for (const [file, from] of Object.entries(ALLOWED)) await put(root, file, importing(from))
    for (const [file, text] of Object.entries(CYCLE_FILES)) await put(root, file, text)

    const eslint = new ESLint({ cwd: root })
    const files = [...FORBIDDEN.map((c) => c.file), ...Object.keys(ALLOWED), ...Object.keys(CYCLE_FILES)]
    for (const result of await eslint.lintFiles(files.map((file) => join(root, file)))) {
      results.set(result.filePath.slice(root.length + 1), result)
    }
  })

  after(async () => {
    if (root) await rm(root, { recursive: true, force: true })
  })

  for (const c of FORBIDDEN) {
    it(`rejects ${c.file} ${c.reexports === undefined ? 'importing' : 're-exporting'} '${c.from}' (${c.rule})`, () => {
      const messages = results.get(c.file)?.messages.map((m) => ({ rule: m.ruleId, layer: m.message.includes(c.says) }))
      expect(messages).to.deep.equal([{ rule: c.rule, layer: true }])
    })
  }

  it('rejects two log/ files that import each other (import-x/no-cycle)', () => {
    for (const file of Object.keys(CYCLE_FILES)) {
      expect(results.get(file)?.messages.map((m) => m.ruleId)).to.deep.equal([CYCLE])
    }
  })

  for (const [file, from] of Object.entries(ALLOWED)) {
    it(`accepts ${file} importing ${from.map((f) => `'${f}'`).join(', ')}`, () => {
      expect(results.get(file)?.messages).to.deep.equal([])
    })
  }
})
