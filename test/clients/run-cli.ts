/** Runs `node bin/kvlog ...` as a child process (KVLOG_ENDPOINT only when given) and collects its output. */
import { spawn } from 'node:child_process'
import { KVLOG_BIN } from '../support/server-process.js'
import { sleep } from '../support/wait.js'

export interface Run {
  code: number | null
  stdout: string
  stderr: string
  /** stdout as bytes (spawned runs only). */
  bytes?: Buffer
}

export function kvlog(args: string[], o: { endpoint?: string; input?: string | Buffer; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  const env = { ...process.env, ...o.env }
  delete env.KVLOG_ENDPOINT
  if (o.endpoint !== undefined) env.KVLOG_ENDPOINT = o.endpoint
  const child = spawn(process.execPath, [KVLOG_BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] })
  const out: Buffer[] = []
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => out.push(d))
  child.stderr.on('data', (d) => (stderr += d))
  child.stdin.on('error', () => undefined) // a command that does not read stdin may exit before it is written
  child.stdin.end(o.input ?? '')
  return new Promise((resolve) =>
    child.on('close', (code) => {
      const bytes = Buffer.concat(out)
      resolve({ code, stdout: bytes.toString('utf8'), stderr, bytes })
    }),
  )
}

export const jsonLines = (text: string) =>
  text
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>)

/**
 * The same command run in this process through the main() bin/kvlog calls (the server's for serve, the
 * offline tools' for snapshot restore, import and export, else the client CLI's), capturing its output: for the many
 * quick cases (usage errors) where spawning a node process each would cost most of the time.
 * Runs one at a time (it swaps process.stdout/stderr.write while the command runs).
 */
export async function kvlogInProcess(args: string[], endpoint?: string): Promise<Run> {
  const offline = args[0] === 'import' || args[0] === 'export' || (args[0] === 'snapshot' && args[1] === 'restore')
  const main =
    args[0] === 'serve'
      ? (await import('../../apiserver/main.js')).main
      : offline
        ? await toolsMain()
        : (await import('../../clients/cli/main.js')).main
  const out = { stdout: '', stderr: '' }
  const writes = { stdout: process.stdout.write, stderr: process.stderr.write }
  process.stdout.write = ((chunk: string) => ((out.stdout += chunk), true)) as typeof process.stdout.write
  process.stderr.write = ((chunk: string) => ((out.stderr += chunk), true)) as typeof process.stderr.write
  try {
    const code = await main(args, endpoint === undefined ? {} : { KVLOG_ENDPOINT: endpoint })
    return { code, ...out }
  } finally {
    process.stdout.write = writes.stdout
    process.stderr.write = writes.stderr
  }
}

async function toolsMain(): Promise<(args: string[], env: NodeJS.ProcessEnv) => Promise<number>> {
  const [{ main }, terminal] = await Promise.all([import('../../tools/main.js'), import('../../clients/cli/progress.js')])
  return (args) => main(args, terminal)
}

/** A running `kvlog watch`: its stdout lines as they come, and a way to stop it. */
export function watchProcess(args: string[], endpoint: string) {
  const env = { ...process.env, KVLOG_ENDPOINT: endpoint }
  const child = spawn(process.execPath, [KVLOG_BIN, 'watch', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let stderr = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (stderr += d))
  const exited = new Promise<number | string>((resolve) => child.on('close', (code, signal) => resolve(code ?? signal ?? -1)))
  return {
    lines: () => out.split('\n').filter((l) => l !== ''),
    stderr: () => stderr,
    exited,
    async waitLines(n: number, timeoutMs = 10_000): Promise<string[]> {
      const deadline = Date.now() + timeoutMs
      while (this.lines().length < n) {
        if (Date.now() > deadline) throw new Error(`watch printed ${this.lines().length} lines, wanted ${n}: ${stderr}`)
        if (child.exitCode !== null) throw new Error(`watch exited with ${child.exitCode}: ${stderr}`)
        await sleep(20)
      }
      return this.lines()
    },
    stop(signal: NodeJS.Signals = 'SIGTERM') {
      child.kill(signal)
      return exited
    },
  }
}

/** A `kvlog watch` run until it printed `n` lines, then stopped with SIGTERM: its lines. */
export async function watchLines(args: string[], endpoint: string, n: number): Promise<string[]> {
  const w = watchProcess(args, endpoint)
  try {
    return await w.waitLines(n, 30_000)
  } finally {
    await w.stop()
  }
}
