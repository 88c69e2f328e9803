/**
 * The cluster engine's options come from the config schema: one default per setting (config/schema.ts),
 * every cluster setting reaches the engine under its own name, and the lists the wiring passes are split.
 */
import { expect } from 'chai'
import { DEFAULT_CONFIG, type Config } from '../../../config/index.js'
import {
  DEFAULT_JETSTREAM_OPTIONS,
  JETSTREAM_LOG_SETTINGS,
  jetStreamLogOptions,
  jetStreamLogSettings,
} from '../../../log/jetstream/options.js'
import { levelReplicaStorage } from '../../../log/level/replica-storage.js'
import { connectionOptions } from '../../../log/jetstream/connection.js'

/** Settings the wiring turns into something else than a value of the same name. */
const WIRED = { natsUrl: 'natsUrls', advertiseClientUrls: 'clientUrls', advertisePeerUrls: 'peerUrls', memberName: 'memberName' } as const

/** A value of the same type as `value` that is not it. */
function other(key: string, value: unknown): unknown {
  if (typeof value === 'number') return value + 7
  if (typeof value === 'string') return `${value}-${key}`
  if (typeof value === 'boolean') return !value
  throw new Error(`${key}: no other value for ${typeof value}`)
}

describe('cluster engine options', () => {
  it('take every default from the config schema', () => {
    for (const key of JETSTREAM_LOG_SETTINGS) expect(DEFAULT_JETSTREAM_OPTIONS[key], key).to.equal(DEFAULT_CONFIG[key])
    expect(jetStreamLogSettings(DEFAULT_CONFIG)).to.deep.equal(
      Object.fromEntries(JETSTREAM_LOG_SETTINGS.map((key) => [key, DEFAULT_CONFIG[key]])),
    )
  })

  it('carry each setting of a Config to the engine under its own name', () => {
    const config: Record<string, unknown> = { ...DEFAULT_CONFIG }
    for (const key of JETSTREAM_LOG_SETTINGS) config[key] = other(key, DEFAULT_CONFIG[key])
    config.natsUrl = 'nats://a:4222, nats://b:4222,'
    config.advertiseClientUrls = 'https://m1:2379'
    config.advertisePeerUrls = 'http://m1:2380,http://m1b:2380'
    const copy = levelReplicaStorage({ dir: '/nowhere' })
    const o = jetStreamLogOptions(config as unknown as Config, { memberName: 'm1', copy })
    for (const key of JETSTREAM_LOG_SETTINGS) expect(o[key], key).to.equal(config[key]).and.not.equal(DEFAULT_CONFIG[key])
    expect(o.natsUrls).to.deep.equal(['nats://a:4222', 'nats://b:4222'])
    expect(o.clientUrls).to.deep.equal(['https://m1:2379'])
    expect(o.peerUrls).to.deep.equal(['http://m1:2380', 'http://m1b:2380'])
    expect(o.memberName).to.equal('m1')
    expect(o.copy).to.equal(copy)
  })

  it('leave no cluster setting of the schema behind', () => {
    const cluster = Object.keys(DEFAULT_CONFIG).filter((key) => /^(cluster|nats|leader|member|advertise)/.test(key))
    const reached = new Set<string>([...JETSTREAM_LOG_SETTINGS, ...Object.keys(WIRED)])
    expect(cluster.filter((key) => !reached.has(key))).to.deep.equal([])
  })

  it("set the NATS client's pings and reconnect wait", () => {
    const copy = levelReplicaStorage({ dir: '/nowhere' })
    const config = { ...DEFAULT_CONFIG, natsUrl: 'nats://a:4222', natsPingInterval: 700, natsMaxPingsOut: 3, natsReconnectWait: 40 }
    const o = connectionOptions(jetStreamLogOptions(config, { memberName: 'm1', copy }))
    expect(o).to.include({ pingInterval: 700, maxPingOut: 3, reconnectTimeWait: 40, maxReconnectAttempts: -1, name: 'kvlog kvlog/m1' })
    expect(o.servers).to.deep.equal(['nats://a:4222'])
  })
})
