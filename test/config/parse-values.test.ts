import { expect } from 'chai'
import fc from 'fast-check'
import {
  formatBytes,
  formatDuration,
  parseAddress,
  parseBoolean,
  parseBytes,
  parseDuration,
  parseEnum,
  parseInteger,
  parseSettingValue,
  parseString,
  ValueError,
  type ValueErrorKind,
} from '../../config/parse-values.js'
import { SCHEMA } from '../../config/schema.js'

/** Runs fn, expects a ValueError of the given kind, returns it for further checks. */
function rejects(fn: () => unknown, kind: ValueErrorKind = 'invalid'): ValueError {
  try {
    fn()
  } catch (err) {
    expect(err).to.be.instanceOf(ValueError)
    expect((err as ValueError).kind).to.equal(kind)
    return err as ValueError
  }
  return expect.fail('expected a ValueError')
}

describe('config/parse-values', () => {
  describe('parseInteger', () => {
    const good: [unknown, number][] = [
      ['128', 128],
      [' 42 ', 42],
      ['-3', -3],
      ['+7', 7],
      ['0', 0],
      [5, 5],
      [1e3, 1000],
    ]
    for (const [raw, want] of good) it(`accepts ${JSON.stringify(raw)}`, () => expect(parseInteger(raw)).to.equal(want))

    const bad: unknown[] = ['abc', '1.5', '1e3', '0x10', '', ' ', '12abc', 1.5, Number.NaN, Infinity, true, null, {}, []]
    for (const raw of bad) it(`rejects ${String(JSON.stringify(raw))}`, () => rejects(() => parseInteger(raw)))

    it('names the value in the message', () => {
      expect(rejects(() => parseInteger('abc')).message).to.equal('"abc" is not an integer')
    })
    it('rejects integers beyond 2^53', () => {
      expect(rejects(() => parseInteger('99999999999999999999')).message).to.contain('too large')
      rejects(() => parseInteger(2 ** 60))
    })
  })

  describe('parseBoolean', () => {
    const good: [unknown, boolean][] = [
      ['true', true],
      ['false', false],
      ['1', true],
      ['0', false],
      ['yes', true],
      ['no', false],
      ['TRUE', true],
      ['No', false],
      [' yes ', true],
      [true, true],
      [false, false],
      [1, true],
      [0, false],
    ]
    for (const [raw, want] of good) it(`accepts ${JSON.stringify(raw)}`, () => expect(parseBoolean(raw)).to.equal(want))

    const bad: unknown[] = ['', 'on', 'off', 'y', 't', '2', 2, null, 'truthy']
    for (const raw of bad) it(`rejects ${JSON.stringify(raw)}`, () => rejects(() => parseBoolean(raw)))
  })

  describe('parseBytes', () => {
    const good: [unknown, number][] = [
      [1048576, 1048576],
      ['1048576', 1048576],
      ['0', 0],
      [0, 0],
      ['1.5MiB', 1572864],
      ['64MiB', 64 * 2 ** 20],
      ['512KiB', 512 * 1024],
      ['2GiB', 2 * 2 ** 30],
      ['1TiB', 2 ** 40],
      ['10MB', 10_000_000],
      ['1kb', 1000],
      ['3GB', 3e9],
      ['1.5KB', 1500],
      ['100B', 100],
      ['100b', 100],
      ['1 KiB', 1024],
      ['4Mi', 4 * 2 ** 20],
      ['1ki', 1024],
      ['0.5KiB', 512],
      [' 2MiB ', 2 * 2 ** 20],
    ]
    for (const [raw, want] of good) it(`reads ${JSON.stringify(raw)} as ${want}`, () => expect(parseBytes(raw)).to.equal(want))

    const bad: unknown[] = ['abc', '', 'MiB', '-1', -1, 1.5, '1.5.5MiB', '1,5MiB', '.5MiB', '1e6', true, null, {}]
    for (const raw of bad) it(`rejects ${JSON.stringify(raw)}`, () => rejects(() => parseBytes(raw)))

    it('rejects ambiguous and unknown units, listing the known ones', () => {
      for (const raw of ['64M', '1K', '2G', '5XB', '1kibs']) expect(rejects(() => parseBytes(raw)).message).to.contain('unknown unit')
      expect(rejects(() => parseBytes('64M')).message).to.contain('MiB')
    })
    it('rejects sizes that are not a whole number of bytes, without rounding', () => {
      for (const raw of ['1.1B', '0.1KiB', '1.1MiB', '1.0001KB']) {
        expect(rejects(() => parseBytes(raw)).message).to.contain('whole number of bytes')
      }
    })
    it('rejects sizes beyond 2^53 bytes', () => {
      expect(rejects(() => parseBytes('9999999TiB')).message).to.contain('too large')
    })
  })

  describe('parseDuration', () => {
    const good: [unknown, number][] = [
      ['500ms', 500],
      ['10s', 10_000],
      ['5m', 300_000],
      ['1h', 3_600_000],
      ['1h30m', 5_400_000],
      ['1.5s', 1500],
      ['0.5h', 1_800_000],
      ['2h45m30s500ms', 9_930_500],
      ['0s', 0],
      ['0', 0],
      ['1500', 1500],
      [1500, 1500],
      [0, 0],
      [' 10s ', 10_000],
    ]
    for (const [raw, want] of good) it(`reads ${JSON.stringify(raw)} as ${want}ms`, () => expect(parseDuration(raw)).to.equal(want))

    const bad: unknown[] = ['', 's', '10 s', '1h 30m', '1d', '10sec', '-5s', '-5', -1, 1.5, '1.5.5s', 'ms', '5mss', true, null]
    for (const raw of bad) it(`rejects ${JSON.stringify(raw)}`, () => rejects(() => parseDuration(raw)))

    it('rejects durations that are not a whole number of milliseconds', () => {
      expect(rejects(() => parseDuration('1.5ms')).message).to.contain('whole number of milliseconds')
      expect(rejects(() => parseDuration('0.0001s')).message).to.contain('whole number of milliseconds')
    })
    it('explains the format', () => {
      expect(rejects(() => parseDuration('soon')).message).to.contain('"10s"')
    })
  })

  describe('parseAddress', () => {
    const good: [string, string, number][] = [
      ['127.0.0.1:2379', '127.0.0.1', 2379],
      ['localhost:0', 'localhost', 0],
      ['0.0.0.0:65535', '0.0.0.0', 65535],
      ['[::1]:2379', '::1', 2379],
      ['[::]:0', '::', 0],
      ['[fe80::1:2]:80', 'fe80::1:2', 80],
      ['my-host.example.com:8379', 'my-host.example.com', 8379],
      [' 10.0.0.1:1 ', '10.0.0.1', 1],
    ]
    for (const [raw, host, port] of good) {
      it(`splits ${JSON.stringify(raw)}`, () => expect(parseAddress(raw)).to.deep.equal({ host, port }))
    }

    const bad: unknown[] = [
      '127.0.0.1',
      'localhost',
      '127.0.0.1:',
      'host:port',
      '127.0.0.1:-1',
      '127.0.0.1:65536',
      '127.0.0.1:99999',
      '300.1.1.1:80',
      '1.2.3:80',
      'a_b:80',
      '-host:80',
      '[zz]:80',
      '[127.0.0.1]:80',
      '[::1]',
      '[::1:80',
      '',
      2379,
      null,
    ]
    for (const raw of bad) it(`rejects ${JSON.stringify(raw)}`, () => rejects(() => parseAddress(raw)))

    it('asks for brackets around IPv6 hosts', () => {
      expect(rejects(() => parseAddress('::1:2379')).message).to.contain('[::1]:2379')
    })
    it('suggests 0.0.0.0 for an empty host', () => {
      expect(rejects(() => parseAddress(':2379')).message).to.contain('0.0.0.0:2379')
    })
    it('names the port range', () => {
      expect(rejects(() => parseAddress('localhost:65536')).message).to.contain('0..65535')
    })
  })

  describe('parseString and parseEnum', () => {
    it('accepts any string, including the empty one', () => {
      expect(parseString('')).to.equal('')
      expect(parseString(' a b ')).to.equal(' a b ')
    })
    it('rejects non-strings', () => {
      for (const raw of [1, true, null, [], {}]) rejects(() => parseString(raw))
    })
    it('accepts exactly the allowed values and lists them when rejecting', () => {
      expect(parseEnum('never', ['always', 'never'])).to.equal('never')
      expect(rejects(() => parseEnum('sometimes', ['always', 'never'])).message).to.equal('"sometimes" is not one of always, never')
      rejects(() => parseEnum('ALWAYS', ['always', 'never']))
      rejects(() => parseEnum(1, ['always', 'never']))
    })
  })

  describe('formatBytes and formatDuration', () => {
    it('format readably', () => {
      expect(formatBytes(64 * 2 ** 20)).to.equal('64MiB')
      expect(formatBytes(1572864)).to.equal('1.5MiB')
      expect(formatBytes(1024)).to.equal('1KiB')
      expect(formatBytes(1000)).to.equal('1000B')
      expect(formatBytes(0)).to.equal('0B')
      expect(formatDuration(5_400_000)).to.equal('1h30m')
      expect(formatDuration(10_000)).to.equal('10s')
      expect(formatDuration(1500)).to.equal('1s500ms')
      expect(formatDuration(0)).to.equal('0s')
    })
    it('parse back to the same number', () => {
      fc.assert(fc.property(fc.maxSafeNat(), (n) => parseBytes(formatBytes(n)) === n))
      fc.assert(fc.property(fc.nat({ max: 2 ** 40 }), (n) => parseBytes(formatBytes(n)) === n))
      fc.assert(fc.property(fc.maxSafeNat(), (n) => parseDuration(formatDuration(n)) === n))
    })
  })

  describe('parseSettingValue', () => {
    it('parses by the setting type', () => {
      expect(parseSettingValue(SCHEMA.maxTxnOps, '256')).to.equal(256)
      expect(parseSettingValue(SCHEMA.segmentMaxBytes, '128MiB')).to.equal(128 * 2 ** 20)
      expect(parseSettingValue(SCHEMA.shutdownTimeout, '1m')).to.equal(60_000)
      expect(parseSettingValue(SCHEMA.fsync, 'never')).to.equal('never')
      expect(parseSettingValue(SCHEMA.dataDir, '/var/lib/kvlog')).to.equal('/var/lib/kvlog')
      expect(parseSettingValue(SCHEMA.listenGrpc, ' [::1]:2379 ')).to.equal('[::1]:2379')
    })
    it('checks both bounds of an integer', () => {
      expect(rejects(() => parseSettingValue(SCHEMA.maxTxnOps, '0'), 'range').message).to.equal('must be between 1 and 100000, got 0')
      rejects(() => parseSettingValue(SCHEMA.maxTxnOps, 100_001), 'range')
      expect(parseSettingValue(SCHEMA.maxTxnOps, 1)).to.equal(1)
      expect(parseSettingValue(SCHEMA.maxTxnOps, 100_000)).to.equal(100_000)
    })
    it('shows byte and duration bounds in units', () => {
      expect(rejects(() => parseSettingValue(SCHEMA.maxRequestBytes, '65MiB'), 'range').message).to.equal(
        'must be between 256B and 64MiB, got 65MiB',
      )
      expect(rejects(() => parseSettingValue(SCHEMA.segmentMaxBytes, 1023), 'range').message).to.equal('must be at least 1KiB, got 1023B')
      expect(rejects(() => parseSettingValue(SCHEMA.wsHeartbeatInterval, '99ms'), 'range').message).to.equal(
        'must be at least 100ms, got 99ms',
      )
      expect(parseSettingValue(SCHEMA.wsHeartbeatInterval, '100ms')).to.equal(100)
    })
    it('allows 0 where 0 means off or none', () => {
      expect(parseSettingValue(SCHEMA.watchProgressInterval, '0')).to.equal(0)
      expect(parseSettingValue(SCHEMA.watchRingSize, '0')).to.equal(0)
      expect(parseSettingValue(SCHEMA.readyFile, '')).to.equal('')
    })
    it('rejects an empty data directory', () => {
      expect(rejects(() => parseSettingValue(SCHEMA.dataDir, ''), 'range').message).to.equal('must not be empty')
    })
    it('rejects values of the wrong type', () => {
      rejects(() => parseSettingValue(SCHEMA.maxTxnOps, 'many'))
      rejects(() => parseSettingValue(SCHEMA.fsync, 'sometimes'))
      rejects(() => parseSettingValue(SCHEMA.listenHttp, 'nowhere'))
      rejects(() => parseSettingValue(SCHEMA.dataDir, 42))
    })
  })
})
