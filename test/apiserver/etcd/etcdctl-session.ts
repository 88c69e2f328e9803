/**
 * An etcdctl session against one target: runs commands, normalizes their output (lease ids → L1, L2...,
 * cluster ids and terms → <id>; revisions kept) and records every step in a transcript. Two targets that
 * run the same sequence of commands on fresh stores must produce identical transcripts; `diffTranscripts`
 * lists every step where they do not.
 */
import { isDeepStrictEqual } from 'node:util'
import { etcdctl, LeaseNames, parseJsonLines, spawnEtcdctl, type EtcdctlProcess } from '../../support/etcdctl.js'

export interface Step {
  cmd: string
  code: number | null
  /** Normalized stdout: text, or the parsed and normalized JSON objects for `-w json`. */
  out: unknown
  error: string | undefined
}

export interface RunOptions {
  input?: string
  /** Leave the step out of the transcript (output that depends on timing, e.g. remaining TTLs). */
  unrecorded?: boolean
}

/**
 * etcdctl's own deadlines (2 s to connect and log in, 5 s a command) made generous: a transcript compares
 * answers, and a loaded machine must not turn a slow answer into a different one (a login whose password
 * check waits for a busy core, past the 2 s, fails with "context deadline exceeded"). A hang still ends
 * at RUN_DEADLINE_MS.
 */
const PATIENT = ['--dial-timeout=60s', '--command-timeout=60s']
const RUN_DEADLINE_MS = 90_000

/** Keys that lock and elect create as `<name>/<lease id in hex>`: their lease part is normalized too. */
export const LEASE_KEY_PREFIXES = ['lock1', 'elect1']

export class EtcdctlSession {
  readonly transcript: Step[] = []
  readonly leases = new LeaseNames()
  private failures: string[] = []

  constructor(readonly endpoint: string) {}

  /**
   * Compares without stopping the case, so the commands after a difference still run and the store's
   * revisions stay in step with the reference: one difference does not shift every revision after it.
   * `takeFailures` ends the case.
   */
  check(actual: unknown, expected: unknown, what: string): boolean {
    if (isDeepStrictEqual(actual, expected)) return true
    this.failures.push(`${what}\n    expected: ${JSON.stringify(expected)}\n    actual:   ${JSON.stringify(actual)}`)
    return false
  }

  /** Records a failure found some other way (a process that did not print what it should). */
  fail(what: string): void {
    this.failures.push(what)
  }

  takeFailures(): string[] {
    const f = this.failures
    this.failures = []
    return f
  }

  /** Lease ids → names, and this target's endpoint (host:port) → <endpoint>. */
  normalizeText(s: string): string {
    return this.leases.text(s, LEASE_KEY_PREFIXES).replaceAll(this.endpoint, '<endpoint>')
  }

  /** Runs one command; the result also carries raw stderr (not recorded: it holds timestamps). */
  async run(args: string[], o: RunOptions = {}): Promise<Step & { stderr: string }> {
    const r = await etcdctl(this.endpoint, [...PATIENT, ...args], { input: o.input, timeoutMs: RUN_DEADLINE_MS })
    const json = args.includes('json') && (args.includes('-w') || args.includes('--write-out'))
    const step: Step = {
      cmd: this.leases.args(args).join(' ') + (o.input !== undefined ? ` <<< ${JSON.stringify(o.input)}` : ''),
      code: r.code,
      out: json ? parseJsonLines(r.stdout).map((x) => this.leases.json(x)) : this.normalizeText(r.stdout),
      error: r.error,
    }
    if (o.unrecorded !== true) this.transcript.push(step)
    return { ...step, stderr: r.stderr }
  }

  /** Runs and returns the normalized text output; a failing etcdctl is a (soft) failure of the case. */
  async ok(...args: string[]): Promise<string> {
    const s = await this.run(args)
    if (s.code !== 0) this.fail(`etcdctl ${s.cmd} failed (${s.code}): ${s.error}`)
    return s.out as string
  }

  /** Runs with `-w json` and returns the one normalized JSON object it printed ({} when it failed). */
  async json(...args: string[]): Promise<Record<string, unknown>> {
    const s = await this.run([...args, '-w', 'json'])
    if (s.code !== 0) this.fail(`etcdctl ${s.cmd} failed (${s.code}): ${s.error}`)
    return (s.out as Record<string, unknown>[])[0] ?? {}
  }

  /** A long-running command (watch, lock, elect); record its output later with `record`. */
  spawn(...args: string[]): EtcdctlProcess {
    return spawnEtcdctl(this.endpoint, [...PATIENT, ...args])
  }

  /** Records what a long-running command printed (normalized) as one step. */
  record(cmd: string, lines: string[], code: number | string | null = null, stderr = ''): Step {
    const step: Step = {
      cmd,
      code: typeof code === 'number' ? code : null,
      out: this.normalizeText(lines.map((l) => `${l}\n`).join('')),
      error: stderr.split('\n').find((l) => l.startsWith('Error: ')),
    }
    this.transcript.push(step)
    return step
  }
}

/** Every step where `actual` differs from `reference`, described with both outputs. */
export function diffTranscripts(reference: Step[], actual: Step[]): string[] {
  const diffs: string[] = []
  const n = Math.max(reference.length, actual.length)
  for (let i = 0; i < n; i++) {
    const want = reference[i]
    const got = actual[i]
    if (JSON.stringify(want) === JSON.stringify(got)) continue
    diffs.push(
      `step ${i + 1}: etcdctl ${want?.cmd ?? got?.cmd}\n` +
        `  etcd : ${JSON.stringify(want && { code: want.code, out: want.out, error: want.error })}\n` +
        `  other: ${JSON.stringify(got && { ...(got.cmd !== want?.cmd ? { cmd: got.cmd } : {}), code: got.code, out: got.out, error: got.error })}`,
    )
  }
  return diffs
}
