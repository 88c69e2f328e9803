import { expect } from 'chai'
import { readFileSync } from 'node:fs'
import { parseSettingValue } from '../../config/parse-values.js'
import { formatDefault, renderConfigDocs } from '../../config/print-docs.js'
import { DEFAULT_CONFIG, SCHEMA, SETTING_KEYS, SETTINGS, type Config } from '../../config/schema.js'

const TYPES = ['string', 'integer', 'boolean', 'enum', 'bytes', 'duration', 'address']
const NUMERIC = ['integer', 'bytes', 'duration']
const MiB = 2 ** 20

/** The settings and defaults kvlog promises (docs and deployments rely on these). */
const EXPECTED_DEFAULTS: Config = {
  dataDir: './kvlog-data',
  fsync: 'always',
  segmentMaxEntries: 100_000,
  segmentMaxBytes: 64 * MiB,
  maxRequestBytes: 1_572_864,
  maxTxnOps: 128,
  maxTxnDepth: 32,
  maxBatchTxns: 2048,
  inlineWriteMaxTxns: 1,
  rangePageCounts: 1024,
  compactionBatchRevisions: 250,
  compactionMinBatchRevisions: 50,
  compactionBatchesPerRead: 5,
  compactionMaxDutyPercent: 25,
  compactionThread: true,
  compactionThreadNice: 19,
  compactionMethod: 'drop',
  compactionCompactsRange: true,
  deferFileDeletes: true,
  fileDeleteBytesPerSecond: 1024 * 1024 * 1024,
  tableSyncInterval: 20,
  leveldbWriteBufferSize: 32 * MiB,
  leveldbCacheSize: 64 * MiB,
  leveldbMaxFileSize: 8 * MiB,
  leveldbWalPreallocateBytes: 4 * MiB,
  v8AllocationSitePretenuring: false,
  autoCompactionMode: 'off',
  autoCompactionRetention: '0',
  quotaBackendBytes: 2 * 1024 * MiB,
  compactionMinRetain: 1000,
  compactionCheckInterval: 10_000,
  cursorMaxLag: 1_000_000,
  listenHttp: '127.0.0.1:8379',
  ui: 'auto',
  keyTreeMaxChildren: 1000,
  historyMaxBuckets: 1000,
  listenGrpc: '127.0.0.1:2379',
  readyFile: '',
  logLevel: 'info',
  logFormat: 'auto',
  logFailedRequestsPerSecond: 100,
  watchRingSize: 10_000,
  watchCatchUpBatch: 1000,
  watchProgressInterval: 5_000,
  resourceNamespaceMustExist: true,
  resourceDeleteCollectionPage: 500,
  maxWatchersPerConnection: 10_000,
  wsMaxPayload: 4 * MiB,
  wsHeartbeatInterval: 30_000,
  wsMaxBufferedBytes: 8 * MiB,
  shutdownTimeout: 10_000,
  leaseMinTtl: 2,
  leaseCheckInterval: 500,
  etcdVersion: '3.5.16',
  memberName: 'default',
  grpcKeepaliveInterval: 7_200_000,
  grpcKeepaliveTimeout: 20_000,
  tlsCertFile: '',
  tlsKeyFile: '',
  tlsClientCaFile: '',
  grpcMaxQueuedMessages: 4096,
  grpcMaxQueuedBytes: 64 * 1024 * 1024,
  maxConcurrentStreams: 1000,
  grpcKeepaliveMinTime: 5000,
  clientPortMaxConnections: 5000,
  clientPortMaxStreams: 10_000,
  clientPortIdleTimeout: 300_000,
  clientPortUnknownProtocolTimeout: 10_000,
  http2MaxHeaderListSize: 64 * 1024,
  http2MaxHeaderListPairs: 128,
  http2MaxSessionMemory: 32 * 1024 * 1024,
  http2MaxSettings: 32,
  http2MaxOutstandingPings: 10,
  http2MaxSessionInvalidFrames: 100,
  http2MaxSessionRejectedStreams: 100,
  natsUrl: '',
  clusterName: 'kvlog',
  natsReplicas: 3,
  advertiseClientUrls: '',
  advertisePeerUrls: '',
  natsCreds: '',
  natsTlsCa: '',
  natsPingInterval: 500,
  natsMaxPingsOut: 2,
  natsReconnectWait: 250,
  leaderLease: 2500,
  natsPublishTimeout: 2000,
  natsCallTimeout: 2000,
  clusterTailMessages: 10_000,
  clusterDiskReserve: 64 * 1024 * 1024,
  clusterRequestTimeout: 10_000,
  clusterMaxGroupCommands: 1024,
  clusterMaxGroupBytes: 512 * 1024,
  clusterSnapshotInterval: 10_000,
  clusterSnapshotKeep: 2,
  clusterSnapshotCheckInterval: 10_000,
  clusterCorruptCheckInterval: 300_000,
  clusterPurgeGrace: 300_000,
  clusterApplyMaxAhead: 512,
  clusterApplyHoldMax: 64,
  clusterConsumerStallTimeout: 1500,
  clusterConsumerInactiveThreshold: 30_000,
  clusterFillRetryInterval: 1000,
  clusterStrictReconfigCheck: true,
  clusterTailReplyBytes: 256 * 1024,
  authTokenTtl: 300_000,
  authToken: 'simple',
  authPasswordHashCost: 14,
  authMaxPendingLogins: 64,
  authHashThreadNice: 10,
  authHashNormalPerSecond: 10,
  clientCertAuth: false,
  tokenAuthFile: '',
  followEtcd: '',
  followEtcdStatusInterval: 1000,
  followEtcdCutoverTimeout: 60_000,
  followEtcdCaFile: '',
  followEtcdCertFile: '',
  followEtcdKeyFile: '',
  followEtcdUser: '',
  maxTxnTotalOps: 1024,
  maxJsonDepth: 512,
  authorAgentMaxChars: 64,
  cors: '',
  hostWhitelist: '',
  loginMaxFailuresPerSource: 10,
  loginMaxFailuresPerUser: 20,
  loginMaxPendingPerSource: 4,
  loginFailureWindow: 60_000,
}

const kebab = (key: string): string => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)
const screaming = (key: string): string => kebab(key).replace(/-/g, '_').toUpperCase()

describe('config/schema', () => {
  it('has the promised settings with the promised defaults', () => {
    expect(DEFAULT_CONFIG).to.deep.equal(EXPECTED_DEFAULTS)
    expect(SETTING_KEYS).to.deep.equal(Object.keys(EXPECTED_DEFAULTS))
  })

  it('freezes DEFAULT_CONFIG', () => {
    expect(Object.isFrozen(DEFAULT_CONFIG)).to.equal(true)
  })

  it('lists each setting once, under its own key', () => {
    expect(SETTINGS.map((s) => s.key)).to.deep.equal(Object.keys(SCHEMA))
    for (const [key, setting] of Object.entries(SCHEMA)) expect(setting.key).to.equal(key)
    expect(new Set(SETTINGS.map((s) => s.flag)).size).to.equal(SETTINGS.length)
    expect(new Set(SETTINGS.map((s) => s.env)).size).to.equal(SETTINGS.length)
  })

  for (const setting of SETTINGS) {
    describe(setting.key, () => {
      it('is camelCase, with a kebab-case flag and a KVLOG_ environment variable', () => {
        expect(setting.key).to.match(/^[a-z][a-zA-Z0-9]*$/)
        expect(setting.flag).to.equal(`--${kebab(setting.key)}`)
        expect(setting.env).to.equal(`KVLOG_${screaming(setting.key)}`)
      })

      it('has a known type and a one-line description', () => {
        expect(TYPES).to.include(setting.type)
        expect(setting.description).to.be.a('string').and.not.equal('')
        expect(setting.description).not.to.match(/[\n|]/)
      })

      it('has bounds only where they mean something, and consistent ones', () => {
        if (!NUMERIC.includes(setting.type)) expect(setting).not.to.have.any.keys('min', 'max')
        if (setting.min !== undefined) expect(Number.isSafeInteger(setting.min)).to.equal(true)
        if (setting.max !== undefined) expect(Number.isSafeInteger(setting.max)).to.equal(true)
        if (setting.min !== undefined && setting.max !== undefined) expect(setting.min).to.be.at.most(setting.max)
        if (setting.type === 'enum') expect(setting.values?.length).to.be.greaterThan(0)
        else expect(setting).not.to.have.property('values')
        if (setting.nonEmpty !== undefined) expect(setting.type).to.equal('string')
      })

      it('has a default that is valid for its own type and bounds', () => {
        expect(parseSettingValue(setting, setting.default)).to.equal(setting.default)
      })

      it('has a default that reads back from its documented spelling', () => {
        const shown = formatDefault(setting)
        expect(parseSettingValue(setting, shown === '""' ? '' : shown)).to.equal(setting.default)
      })
    })
  }
})

describe('docs/configuration.md', () => {
  const docs = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8')

  it('is the output of config/print-docs.ts (regenerate: node dist/config/print-docs.js > docs/configuration.md)', () => {
    expect(docs).to.equal(renderConfigDocs())
  })

  for (const setting of SETTINGS) {
    it(`documents ${setting.key}: flag, environment variable and default in one row`, () => {
      const row = docs.split('\n').find((line) => line.startsWith(`| ${setting.key} |`))
      expect(row, `no table row for ${setting.key}`).to.be.a('string')
      expect(row).to.contain(`\`${setting.flag}\``)
      expect(row).to.contain(`\`${setting.env}\``)
      expect(row).to.contain(`\`${formatDefault(setting)}\``)
    })
  }

  it('documents the config file, its formats and the precedence of sources', () => {
    for (const word of [
      '--config',
      'KVLOG_CONFIG',
      'JSON',
      'YAML',
      'config file  <  KVLOG_* environment variables  <  command-line flags',
    ]) {
      expect(docs).to.contain(word)
    }
  })
})
