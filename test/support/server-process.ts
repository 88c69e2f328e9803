/**
 * Starts a real `kvlog serve` process for integration tests: port 0, a temp data dir, waits for the ready
 * file, and stops it with a real signal.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const KVLOG_BIN = fileURLToPath(new URL('../../../bin/kvlog', import.meta.url))

export interface ServerProcess {
  child: ChildProcess
  http: string
  /** The etcd gRPC endpoint, "host:port". */
  grpc: string
  dataDir: string
  stderr(): string
  /** What it printed on stdout (its log lines). */
  stdout(): string
  /** All it printed: its log lines (stdout), then stderr. */
  output(): string
  /** Sends the signal and resolves with the exit code (or the signal name). */
  stop(signal?: NodeJS.Signals): Promise<number | string>
  cleanup(): Promise<void>
}

export interface StartOptions {
  /** How long to wait for the ready file (default 15 s; a loaded machine may need more). */
  readyTimeoutMs?: number
  /** The kvlog executable to run (default: this checkout's bin/kvlog; e.g. an installed package's). */
  bin?: string
  /** Node flags for the server process (e.g. a heap limit). */
  nodeArgs?: string[]
}

export async function startServerProcess(extraArgs: string[] = [], dataDir?: string, options: StartOptions = {}): Promise<ServerProcess> {
  const dir = dataDir ?? (await mkdtemp(join(tmpdir(), 'kvlog-it-')))
  const readyFile = join(dir, '..', `${dir.split('/').pop()}.ready.json`)
  const child = spawn(
    process.execPath,
    [
      ...(options.nodeArgs ?? []),
      options.bin ?? KVLOG_BIN,
      'serve',
      '--data-dir',
      dir,
      '--listen-http',
      '127.0.0.1:0',
      '--listen-grpc',
      '127.0.0.1:0',
      '--ready-file',
      readyFile,
      '--log-level',
      'warn',
      ...extraArgs,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let stderr = ''
  let stdout = ''
  child.stderr!.on('data', (d) => (stderr += d))
  child.stdout!.on('data', (d) => (stdout += d))
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)))
  const deadline = Date.now() + (options.readyTimeoutMs ?? 15_000)
  let http: string | undefined
  let grpc = ''
  while (http === undefined) {
    if (child.exitCode !== null) throw new Error(`kvlog serve exited with ${child.exitCode}: ${stderr}`)
    if (Date.now() > deadline) {
      child.kill('SIGKILL') // never leave a half-started server behind
      throw new Error(`kvlog serve did not get ready in ${options.readyTimeoutMs ?? 15_000} ms: ${stderr}`)
    }
    try {
      const ready = JSON.parse(await readFile(readyFile, 'utf8')) as { http: string; grpc: string }
      http = ready.http
      grpc = ready.grpc
    } catch {
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  return {
    child,
    http,
    grpc,
    dataDir: dir,
    stderr: () => stderr,
    stdout: () => stdout,
    output: () => `${stdout}${stderr}`,
    stop: (signal = 'SIGTERM') => {
      child.kill(signal)
      return exited
    },
    cleanup: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL')
        await exited
      }
      await rm(readyFile, { force: true })
      if (dataDir === undefined) await rm(dir, { recursive: true, force: true })
    },
  }
}
