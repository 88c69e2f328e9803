import { expect } from 'chai'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, loadConfig, parseArgv, type LoadConfigOptions } from '../../config/load.js'
import { DEFAULT_CONFIG, SETTINGS, type Setting } from '../../config/schema.js'

/** Runs loadConfig, expects a ConfigError, returns it. */
function loadError(options: LoadConfigOptions): ConfigError {
  try {
    loadConfig(options)
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError)
    return err as ConfigError
  }
  return expect.fail('expected a ConfigError')
}

describe('config/load', () => {
  let dir: string
  let n = 0
  /** Writes a config file with a fresh name and returns its path. */
  const file = (ext: string, text: string): string => {
    const path = join(dir, `cfg${++n}${ext}`)
    writeFileSync(path, text)
    return path
  }

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'kvlog-config-'))
  })
  after(() => {
    rmSync(dir, { recursive: true, force: true })
  })

  describe('precedence: defaults < file < env < flags', () => {
    it('uses the defaults when nothing is set', () => {
      const { config, args, sources, configFile } = loadConfig({ argv: [], env: {} })
      expect(config).to.deep.equal(DEFAULT_CONFIG)
      expect(config).not.to.equal(DEFAULT_CONFIG) // a copy the caller may change
      expect(args).to.deep.equal([])
      expect(configFile).to.equal(undefined)
      for (const setting of SETTINGS) expect(sources[setting.key]).to.equal('default')
    })

    it('lets the file override a default', () => {
      const path = file('.json', '{"maxTxnOps": 10}')
      const { config, sources } = loadConfig({ argv: ['--config', path], env: {} })
      expect(config.maxTxnOps).to.equal(10)
      expect(sources.maxTxnOps).to.equal('file')
      expect(sources.maxBatchTxns).to.equal('default')
    })

    it('lets the environment override the file', () => {
      const path = file('.json', '{"maxTxnOps": 10, "maxBatchTxns": 11}')
      const { config, sources } = loadConfig({ argv: ['--config', path], env: { KVLOG_MAX_TXN_OPS: '20' } })
      expect(config.maxTxnOps).to.equal(20)
      expect(sources.maxTxnOps).to.equal('env')
      expect(config.maxBatchTxns).to.equal(11)
      expect(sources.maxBatchTxns).to.equal('file')
    })

    it('lets a flag override the environment and the file', () => {
      const path = file('.yaml', 'maxTxnOps: 10\nfsync: never\nlogLevel: warn\n')
      const { config, sources } = loadConfig({
        argv: ['--config', path, '--max-txn-ops', '30'],
        env: { KVLOG_MAX_TXN_OPS: '20', KVLOG_LOG_LEVEL: 'debug' },
      })
      expect([config.maxTxnOps, sources.maxTxnOps]).to.deep.equal([30, 'flag'])
      expect([config.logLevel, sources.logLevel]).to.deep.equal(['debug', 'env'])
      expect([config.fsync, sources.fsync]).to.deep.equal(['never', 'file'])
      expect([config.dataDir, sources.dataDir]).to.deep.equal(['./kvlog-data', 'default'])
    })

    it('checks every value even if a later source overrides it', () => {
      const err = loadError({ argv: ['--max-txn-ops', '5'], env: { KVLOG_MAX_TXN_OPS: 'abc' } })
      expect([err.setting, err.source]).to.deep.equal(['maxTxnOps', 'env'])
    })
  })

  describe('config file', () => {
    it('reads YAML with every kind of value', () => {
      const path = file(
        '.yaml',
        [
          'dataDir: /var/lib/kvlog',
          'fsync: never',
          'maxRequestBytes: 1.5MiB',
          'segmentMaxBytes: 1048576',
          'watchProgressInterval: 1h30m',
          'shutdownTimeout: 2500',
          'listenGrpc: "[::1]:2379"',
          'listenHttp: 0.0.0.0:0',
          'readyFile: ""',
          '',
        ].join('\n'),
      )
      const { config, configFile } = loadConfig({ argv: ['--config', path], env: {} })
      expect(configFile).to.equal(path)
      expect(config).to.include({
        dataDir: '/var/lib/kvlog',
        fsync: 'never',
        maxRequestBytes: 1572864,
        segmentMaxBytes: 1048576,
        watchProgressInterval: 5_400_000,
        shutdownTimeout: 2500,
        listenGrpc: '[::1]:2379',
        listenHttp: '0.0.0.0:0',
        readyFile: '',
      })
    })

    it('reads .yml and JSON', () => {
      const yml = file('.yml', 'wsMaxPayload: 2MiB\n')
      expect(loadConfig({ argv: [`--config=${yml}`], env: {} }).config.wsMaxPayload).to.equal(2 * 2 ** 20)
      const json = file('.json', JSON.stringify({ wsMaxPayload: '1KiB', maxWatchersPerConnection: 5 }))
      expect(loadConfig({ argv: ['--config', json], env: {} }).config).to.include({ wsMaxPayload: 1024, maxWatchersPerConnection: 5 })
    })

    it('reads a file without a known extension as JSON, else as YAML', () => {
      const json = file('.conf', '{"watchRingSize": 7}')
      expect(loadConfig({ argv: ['--config', json], env: {} }).config.watchRingSize).to.equal(7)
      const yaml = file('', 'watchRingSize: 8\n')
      expect(loadConfig({ argv: ['--config', yaml], env: {} }).config.watchRingSize).to.equal(8)
    })

    it('accepts the kebab-case flag names as keys', () => {
      const path = file('.yaml', 'max-txn-ops: 64\nws-heartbeat-interval: 5s\n')
      expect(loadConfig({ argv: ['--config', path], env: {} }).config).to.include({ maxTxnOps: 64, wsHeartbeatInterval: 5000 })
    })

    it('rejects a setting given under both spellings', () => {
      const path = file('.yaml', 'maxTxnOps: 64\nmax-txn-ops: 65\n')
      const err = loadError({ argv: ['--config', path], env: {} })
      expect([err.setting, err.source]).to.deep.equal(['maxTxnOps', 'file'])
    })

    it('takes an empty file as setting nothing', () => {
      for (const path of [file('.yaml', ''), file('.yaml', '# nothing yet\n')]) {
        expect(loadConfig({ argv: ['--config', path], env: {} }).config).to.deep.equal(DEFAULT_CONFIG)
      }
    })

    it('rejects an unknown key, naming it and the file', () => {
      const path = file('.yaml', 'foo: 1\n')
      const err = loadError({ argv: ['--config', path], env: {} })
      expect(err.message).to.equal(`unknown setting "foo" in ${path}`)
      expect([err.setting, err.source, err.origin]).to.deep.equal(['foo', 'file', path])
    })

    it('suggests the setting a misspelt key was probably meant to be', () => {
      const path = file('.json', '{"maxTxnOp": 1}')
      expect(loadError({ argv: ['--config', path], env: {} }).message).to.contain('did you mean maxTxnOps?')
    })

    it('rejects invalid values, naming the key and the file', () => {
      const path = file('.yaml', 'maxTxnOps: lots\n')
      const err = loadError({ argv: ['--config', path], env: {} })
      expect(err.message).to.equal(`invalid value for maxTxnOps (file ${path}): "lots" is not an integer`)
      expect([err.setting, err.source]).to.deep.equal(['maxTxnOps', 'file'])
    })

    it('rejects values of the wrong JSON/YAML type', () => {
      for (const text of ['{"dataDir": 5}', '{"maxTxnOps": 1.5}', '{"maxTxnOps": [1]}', '{"readyFile": null}', '{"fsync": true}']) {
        const err = loadError({ argv: ['--config', file('.json', text)], env: {} })
        expect(err.source).to.equal('file')
      }
    })

    it('rejects out-of-range values', () => {
      const path = file('.yaml', 'segmentMaxBytes: 512\n')
      expect(loadError({ argv: ['--config', path], env: {} }).message).to.equal(
        `segmentMaxBytes (file ${path}) must be at least 1KiB, got 512B`,
      )
    })

    it('rejects a file that is not a mapping', () => {
      for (const path of [file('.yaml', '- a\n- b\n'), file('.json', '42')]) {
        expect(loadError({ argv: ['--config', path], env: {} }).message).to.contain('must be a mapping')
      }
    })

    it('rejects malformed JSON and YAML, naming the file', () => {
      for (const path of [file('.json', '{"maxTxnOps": '), file('.yaml', 'a: [\n'), file('.conf', 'a: b: c\n')]) {
        const err = loadError({ argv: ['--config', path], env: {} })
        expect(err.message).to.contain(`cannot parse config file ${path}`)
        expect([err.setting, err.source]).to.deep.equal(['config', 'file'])
      }
    })

    it('rejects a file that cannot be read', () => {
      const path = join(dir, 'missing.yaml')
      expect(loadError({ argv: ['--config', path], env: {} }).message).to.contain(`cannot read config file ${path}`)
    })

    it('is named by KVLOG_CONFIG too; --config wins; an empty path means no file', () => {
      const a = file('.yaml', 'maxTxnOps: 1\n')
      const b = file('.yaml', 'maxTxnOps: 2\n')
      expect(loadConfig({ argv: [], env: { KVLOG_CONFIG: a } }).config.maxTxnOps).to.equal(1)
      expect(loadConfig({ argv: ['--config', b], env: { KVLOG_CONFIG: a } }).config.maxTxnOps).to.equal(2)
      const none = loadConfig({ argv: ['--config='], env: { KVLOG_CONFIG: a } })
      expect([none.config.maxTxnOps, none.configFile]).to.deep.equal([128, undefined])
    })
  })

  describe('environment', () => {
    it('reads every kind of value', () => {
      const { config, sources } = loadConfig({
        argv: [],
        env: {
          KVLOG_DATA_DIR: '/data',
          KVLOG_SEGMENT_MAX_BYTES: '10MB',
          KVLOG_WS_HEARTBEAT_INTERVAL: '500ms',
          KVLOG_LISTEN_HTTP: '[::]:8379',
          KVLOG_FSYNC: 'never',
          KVLOG_READY_FILE: '',
        },
      })
      expect(config).to.include({
        dataDir: '/data',
        segmentMaxBytes: 10_000_000,
        wsHeartbeatInterval: 500,
        listenHttp: '[::]:8379',
        fsync: 'never',
        readyFile: '',
      })
      expect(sources.readyFile).to.equal('env')
    })

    it('ignores variables without the KVLOG_ prefix and unset ones', () => {
      const { config } = loadConfig({ argv: [], env: { PATH: '/bin', kvlog_max_txn_ops: '1', KVLOG_MAX_TXN_OPS: undefined } })
      expect(config).to.deep.equal(DEFAULT_CONFIG)
    })

    it('rejects an unknown KVLOG_ variable, naming it', () => {
      const err = loadError({ argv: [], env: { KVLOG_FOO: '1' } })
      expect(err.message).to.contain('KVLOG_FOO')
      expect([err.setting, err.source, err.origin]).to.deep.equal(['KVLOG_FOO', 'env', 'KVLOG_FOO'])
      expect(loadError({ argv: [], env: { KVLOG_MAX_TXN_OP: '1' } }).message).to.contain('did you mean KVLOG_MAX_TXN_OPS?')
    })

    it('names the setting and the variable when a value is out of range', () => {
      const err = loadError({ argv: [], env: { KVLOG_MAX_TXN_OPS: '0' } })
      expect(err.message).to.equal('maxTxnOps (env KVLOG_MAX_TXN_OPS) must be between 1 and 100000, got 0')
      expect([err.setting, err.source, err.origin]).to.deep.equal(['maxTxnOps', 'env', 'KVLOG_MAX_TXN_OPS'])
    })

    it('rejects invalid values of each type', () => {
      const bad = {
        KVLOG_MAX_BATCH_TXNS: '1.5',
        KVLOG_WS_MAX_PAYLOAD: '4M',
        KVLOG_SHUTDOWN_TIMEOUT: '10 seconds',
        KVLOG_LISTEN_GRPC: '::1:2379',
        KVLOG_LOG_LEVEL: 'loud',
        KVLOG_DATA_DIR: '',
      }
      for (const [name, value] of Object.entries(bad)) {
        const err = loadError({ argv: [], env: { [name]: value } })
        expect([err.source, err.origin]).to.deep.equal(['env', name])
        expect(err.message).to.contain(`(env ${name})`)
      }
    })
  })

  describe('flags', () => {
    it('takes --flag value and --flag=value', () => {
      const { config, sources } = loadConfig({
        argv: ['--data-dir', '/d', '--max-request-bytes=2MiB', '--watch-progress-interval', '0', '--listen-grpc=[::1]:0'],
        env: {},
      })
      expect(config).to.include({ dataDir: '/d', maxRequestBytes: 2 * 2 ** 20, watchProgressInterval: 0, listenGrpc: '[::1]:0' })
      expect(sources.dataDir).to.equal('flag')
    })

    it('keeps everything after the first = as the value, including an empty one', () => {
      const { config } = loadConfig({ argv: ['--data-dir=a=b', '--ready-file='], env: { KVLOG_READY_FILE: '/r' } })
      expect(config).to.include({ dataDir: 'a=b', readyFile: '' })
    })

    it('lets the last of a repeated flag win', () => {
      expect(loadConfig({ argv: ['--max-txn-ops', '1', '--max-txn-ops=2'], env: {} }).config.maxTxnOps).to.equal(2)
    })

    it('returns positional arguments in order, around flags', () => {
      const { args, config } = loadConfig({ argv: ['serve', '--fsync', 'never', 'extra', '-', 'last'], env: {} })
      expect(args).to.deep.equal(['serve', 'extra', '-', 'last'])
      expect(config.fsync).to.equal('never')
    })

    it('stops reading flags at --', () => {
      const { args, config } = loadConfig({ argv: ['get', '--fsync=never', '--', '--fsync', 'always', '--', '-x'], env: {} })
      expect(args).to.deep.equal(['get', '--fsync', 'always', '--', '-x'])
      expect(config.fsync).to.equal('never')
    })

    it('rejects an unknown flag, naming it', () => {
      const err = loadError({ argv: ['--foo'], env: {} })
      expect(err.message).to.equal('unknown flag --foo')
      expect([err.setting, err.source]).to.deep.equal(['foo', 'flag'])
      expect(loadError({ argv: ['--foo=1'], env: {} }).message).to.equal('unknown flag --foo')
      expect(loadError({ argv: ['-x'], env: {} }).message).to.equal('unknown flag -x')
      expect(loadError({ argv: ['--no-fsync'], env: {} }).message).to.contain('unknown flag --no-fsync')
    })

    it('suggests the flag a misspelt one was probably meant to be', () => {
      expect(loadError({ argv: ['--max-txn-op', '1'], env: {} }).message).to.equal(
        'unknown flag --max-txn-op (did you mean --max-txn-ops?)',
      )
    })

    it('rejects a missing value, rather than taking the next flag as the value', () => {
      for (const argv of [['--data-dir'], ['--data-dir', '--fsync', 'never'], ['--config']]) {
        const err = loadError({ argv, env: {} })
        expect(err.message).to.equal(`missing value for ${argv[0]} (flag)`)
        expect(err.source).to.equal('flag')
      }
    })

    it('names the flag when a value is invalid', () => {
      const err = loadError({ argv: ['--max-txn-ops', 'abc'], env: {} })
      expect(err.message).to.equal('invalid value for --max-txn-ops (flag): "abc" is not an integer')
      expect([err.setting, err.source, err.origin]).to.deep.equal(['maxTxnOps', 'flag', '--max-txn-ops'])
      expect(err).to.be.instanceOf(Error)
      expect(err.name).to.equal('ConfigError')
    })

    it('names the flag when a value is out of range, including negative values', () => {
      expect(loadError({ argv: ['--watch-ring-size', '-1'], env: {} }).message).to.equal(
        '--watch-ring-size (flag) must be between 0 and 10000000, got -1',
      )
      expect(loadError({ argv: ['--ws-heartbeat-interval=10ms'], env: {} }).message).to.equal(
        '--ws-heartbeat-interval (flag) must be at least 100ms, got 10ms',
      )
    })

    it('rejects invalid values of each type', () => {
      const bad = ['--fsync=sometimes', '--segment-max-bytes=lots', '--shutdown-timeout=1d', '--listen-http=localhost', '--data-dir=']
      for (const arg of bad) expect(loadError({ argv: [arg], env: {} }).source).to.equal('flag')
    })
  })

  describe('boolean flags (parseArgv with a boolean setting)', () => {
    const verbose = {
      key: 'verbose',
      type: 'boolean',
      default: false,
      description: 'test only',
      flag: '--verbose',
      env: 'KVLOG_VERBOSE',
    } as unknown as Setting
    const settings = [...SETTINGS, verbose]
    const raws = (argv: string[]): unknown[] => parseArgv(argv, settings).flags.map((f) => f.raw)

    it('reads --flag as true and never takes the next argument', () => {
      const parsed = parseArgv(['--verbose', 'false'], settings)
      expect(parsed.flags.map((f) => [f.setting.key, f.raw, f.flag])).to.deep.equal([['verbose', true, '--verbose']])
      expect(parsed.args).to.deep.equal(['false'])
    })

    it('reads --flag=value as written, for parseBoolean', () => {
      expect(raws(['--verbose=false', '--verbose=yes', '--verbose='])).to.deep.equal(['false', 'yes', ''])
    })

    it('reads --no-flag as false and rejects --no-flag=value', () => {
      expect(raws(['--no-verbose'])).to.deep.equal([false])
      expect(() => parseArgv(['--no-verbose=true'], settings)).to.throw(ConfigError, '--no-verbose (flag) takes no value')
    })

    it('does not invent --no- forms for other types', () => {
      expect(() => parseArgv(['--no-data-dir'], settings)).to.throw(ConfigError, 'unknown flag --no-data-dir')
    })

    it('returns --config separately from the settings', () => {
      const parsed = parseArgv(['--config', 'a.yaml', 'x', '--config=b.yaml'], settings)
      expect([parsed.configFile, parsed.flags, parsed.args]).to.deep.equal(['b.yaml', [], ['x']])
    })
  })
})
