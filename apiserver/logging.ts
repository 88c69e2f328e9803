/**
 * The server's log: one pino logger (fastify's), one format for every line. JSON by default (pino's
 * shape: numeric level, `time` as an ISO 8601 string, `msg`, fields), or text for people:
 *
 *   2026-11-25T04:50:00.123Z INFO  request failed method=GET url="/v1/kv?key=a" statusCode=404 ms=1
 *
 * (--log-format text, or 'auto' on a terminal). Lines: the start with the addresses, the stop, every
 * request answered with an error status (4xx at info, 5xx at warn), every etcd gRPC call that fails
 * (apiserver/etcd/server.ts), and the errors the server meets.
 */
import { hostname } from 'node:os'
import type { LogFormat, LogLevel } from '../config/index.js'

interface Out {
  isTTY?: boolean
  write(text: string): unknown
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' }
/** pino's own fields, shown first (time, level, msg) or not at all. */
const OWN = new Set(['time', 'level', 'msg', 'pid', 'hostname', 'v'])

/** fastify's `logger` option: pino's options (false: no logging). */
export function loggerOptions(o: { logLevel: LogLevel; logFormat: LogFormat }, out: Out = process.stdout): false | Record<string, unknown> {
  if (o.logLevel === 'silent') return false
  const text = o.logFormat === 'text' || (o.logFormat === 'auto' && out.isTTY === true)
  return {
    level: o.logLevel,
    // pino's stdTimeFunctions.isoTime: readable times instead of epoch milliseconds.
    timestamp: () => `,"time":"${new Date().toISOString()}"`,
    ...(text ? { stream: { write: (line: string) => out.write(textLine(line)) } } : {}),
  }
}

export type LineLevel = 'debug' | 'info' | 'warn' | 'error'
export type LineLogger = (level: LineLevel, msg: string, fields?: Record<string, unknown>) => void
const LEVEL_NUMBERS: Record<LogLevel, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity }

/** Whether lines at `level` are written at the configured level (a caller skips building the ones that are not). */
export function logsAt(o: { logLevel: LogLevel }, level: LineLevel): boolean {
  return LEVEL_NUMBERS[level] >= LEVEL_NUMBERS[o.logLevel]
}

/**
 * Lines written outside fastify's logger (before it exists: the cluster member opening its log; beside
 * it: the cluster engine's and the follower's progress lines, Node's process warnings), in its format and
 * on its stream, so a JSON log stays JSON throughout.
 */
export function lineLogger(o: { logLevel: LogLevel; logFormat: LogFormat }, out: Out = process.stdout): LineLogger {
  const text = o.logFormat === 'text' || (o.logFormat === 'auto' && out.isTTY === true)
  const host = hostname()
  return (level, msg, fields = {}) => {
    const n = LEVEL_NUMBERS[level]
    if (n < LEVEL_NUMBERS[o.logLevel]) return
    const json = JSON.stringify({ level: n, time: new Date().toISOString(), pid: process.pid, hostname: host, ...fields, msg })
    out.write(text ? textLine(json) : json + '\n')
  }
}

/** One pino JSON line as text: time, level, message, then key=value for every other field. */
export function textLine(json: string): string {
  let rec: Record<string, unknown>
  try {
    rec = JSON.parse(json) as Record<string, unknown>
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`
  }
  const level = LEVELS[rec.level as number] ?? String(rec.level)
  const fields = Object.entries(rec)
    .filter(([k]) => !OWN.has(k))
    .map(([k, v]) => `${k}=${value(v)}`)
  return `${String(rec.time)} ${level.padEnd(5)} ${String(rec.msg ?? '')}${fields.length > 0 ? ` ${fields.join(' ')}` : ''}\n`
}

function value(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v)
  if (typeof v === 'object' && v !== null && 'message' in v && 'type' in v) {
    // A serialized error: its type and message (the stack stays in JSON).
    const e = v as { type: string; message: string }
    return JSON.stringify(`${e.type}: ${e.message}`)
  }
  return JSON.stringify(v)
}
