/**
 * Runs Debian's `etcdctl` (v3 API, 3.4) against one endpoint and normalizes what it prints, so the output
 * of a real etcd and of kvlog can be compared: ids that differ between two clusters (cluster_id,
 * member_id, raft_term, lease ids) are replaced by stable placeholders; revisions are kept as they are.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { sleep } from './wait.js'

export const ETCDCTL_BIN = process.env.ETCDCTL_BIN ?? '/usr/bin/etcdctl'

export interface EtcdctlRun {
  code: number | null
  stdout: string
  stderr: string
  /** The `Error: ...` line etcdctl prints on failure (its zap `{"level":"warn",...}` lines are noise). */
  error: string | undefined
}

function etcdctlEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ETCDCTL_API: '3' }
  delete env.ETCDCTL_ENDPOINTS
  return env
}

function errorLine(stderr: string): string | undefined {
  return stderr.split('\n').find((l) => l.startsWith('Error: '))
}

/** Runs `etcdctl --endpoints <endpoint> ...args`, feeding `input` on stdin; resolves when it exits. */
export function etcdctl(endpoint: string, args: string[], o: { input?: string; timeoutMs?: number } = {}): Promise<EtcdctlRun> {
  const child = spawn(ETCDCTL_BIN, ['--endpoints', endpoint, ...args], { env: etcdctlEnv(), stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  child.stdin.on('error', () => undefined) // etcdctl may exit before reading stdin
  child.stdin.end(o.input ?? '')
  const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 15_000)
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr, error: errorLine(stderr) })
    })
  })
}

/** A long-running etcdctl (watch, lock, elect): its stdout lines as they come, and a way to stop it. */
export interface EtcdctlProcess {
  child: ChildProcess
  lines(): string[]
  stderr(): string
  /** Waits until stdout has at least n lines. */
  waitLines(n: number, timeoutMs?: number): Promise<string[]>
  exited: Promise<number | string>
  /** Sends the signal (SIGINT makes lock/elect give up their lease) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<number | string>
}

export function spawnEtcdctl(endpoint: string, args: string[]): EtcdctlProcess {
  const child = spawn(ETCDCTL_BIN, ['--endpoints', endpoint, ...args], { env: etcdctlEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (err += d))
  const exited = new Promise<number | string>((resolve) => child.on('close', (code, signal) => resolve(code ?? signal ?? -1)))
  const lines = () => {
    const all = out.split('\n')
    all.pop() // the part after the last newline is not a complete line yet
    return all
  }
  return {
    child,
    lines,
    exited,
    stderr: () => err,
    async waitLines(n, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      while (lines().length < n) {
        if (Date.now() > deadline)
          throw new Error(`etcdctl ${args.join(' ')} printed ${JSON.stringify(lines())}, wanted ${n} lines; stderr: ${err}`)
        if (child.exitCode !== null) throw new Error(`etcdctl ${args.join(' ')} exited with ${child.exitCode}: ${err}`)
        await sleep(20)
      }
      return lines()
    },
    stop(signal: NodeJS.Signals = 'SIGINT') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    },
  }
}

/**
 * Parses etcdctl's `-w json` output. Its 64-bit ids (cluster_id, member_id, lease ids) are JSON numbers
 * beyond 2^53, which JSON.parse would round (lease ids that differ by 2 would become equal): they are
 * turned into decimal strings first. Values and keys are base64 strings, so no digit run inside a string
 * follows a ':' '[' or ','.
 */
export function parseJson(text: string): unknown {
  return JSON.parse(text.replace(/([:[,]\s*)(-?\d{16,})(?=\s*[,\]}])/g, '$1"$2"'))
}

/** Parses every line of `-w json` output that is JSON (a watch prints one object per response). */
export function parseJsonLines(text: string): unknown[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('{') || l.startsWith('['))
    .map(parseJson)
}

const CLUSTER_FIELDS = new Set(['cluster_id', 'member_id', 'raft_term', 'leader', 'raftIndex', 'raftTerm', 'raftAppliedIndex'])
const LEASE_FIELDS = new Set(['ID', 'id', 'lease'])

/**
 * Gives the lease ids of one transcript stable names in order of first appearance (L1, L2, ...), so
 * two stores that hand out different ids for the same sequence of grants print the same thing.
 */
export class LeaseNames {
  private readonly names = new Map<bigint, string>()

  name(id: bigint): string {
    if (id === 0n) return '0'
    let n = this.names.get(id)
    if (n === undefined) {
      n = `L${this.names.size + 1}`
      this.names.set(id, n)
    }
    return n
  }

  /** The lease id behind a name, in hex as etcdctl takes it (`lease revoke <hex>`, `put --lease=<hex>`). */
  hexOf(name: string): string {
    for (const [id, n] of this.names) if (n === name) return id.toString(16)
    throw new Error(`no lease named ${name} yet`)
  }

  /** Command arguments with known lease ids (`--lease=<hex>`, `lease revoke <hex>`) replaced by their names. */
  args(args: string[]): string[] {
    const known = new Map([...this.names].map(([id, n]) => [id.toString(16), n]))
    return args.map((a) =>
      a.replace(/^(--lease=)?([0-9a-f]+)$/, (all, flag: string | undefined, hex: string) => {
        const n = known.get(hex.replace(/^0+(?=.)/, ''))
        return n === undefined ? all : `${flag ?? ''}${n}`
      }),
    )
  }

  /** A lease id printed in hex (`lease list`, lock and election keys). */
  hex(hex: string): string {
    return this.name(BigInt(`0x${hex}`))
  }

  /** Replaces hex lease ids where etcdctl prints them: `lease <hex> ...`, and `<prefix>/<hex>` keys of lock and elect. */
  text(s: string, keyPrefixes: string[] = []): string {
    let out = s.replace(/\blease ([0-9a-f]+)\b/g, (_, hex: string) => `lease ${this.hex(hex)}`)
    for (const p of keyPrefixes) {
      out = out.replace(
        new RegExp(`^(${escapeRegExp(p)}/)([0-9a-f]+)(?= |$)`, 'gm'),
        (_, pre: string, hex: string) => `${pre}${this.hex(hex)}`,
      )
    }
    return out
  }

  /** Normalizes parsed `-w json` output: cluster ids and terms → placeholders, lease ids → names. */
  json(v: unknown): unknown {
    if (Array.isArray(v)) return v.map((x) => this.json(x))
    if (v === null || typeof v !== 'object') return v
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) {
      if (CLUSTER_FIELDS.has(k)) out[k] = '<id>'
      else if (LEASE_FIELDS.has(k) && (typeof x === 'string' || typeof x === 'number')) out[k] = this.name(BigInt(x))
      else out[k] = this.json(x)
    }
    return out
  }
}

/** A lease id as etcdctl prints it in text (hex) → decimal string for gRPC/JSON use. */
export function leaseFromHex(hex: string): string {
  return BigInt(`0x${hex}`).toString()
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
