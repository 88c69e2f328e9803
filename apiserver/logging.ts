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
