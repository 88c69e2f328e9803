/**
 * fdatasync/fsync calls of a running process, counted with a real strace (Debian's `strace`, ptrace): every
 * thread of the process is attached before `traceSyncs` resolves, and `stop` detaches and gives the calls
 * made meanwhile on files under a directory.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { waitFor } from './wait.js'

export interface SyncTrace {
  /** Detaches; the sync calls (one strace line each) on files under `dir`. */
  stop(dir: string): Promise<string[]>
}

/** A call's first line: a complete call, or the start of one another thread interrupted (not its "resumed" half). */
const SYNC_CALL = /^\d+ +(fdatasync|fsync)\((\d+)<([^>]*)>/

export async function traceSyncs(pid: number, timeoutMs = 30_000): Promise<SyncTrace> {
  const dir = await mkdtemp(join(tmpdir(), 'kvlog-strace-'))
  const out = join(dir, 'trace')
  const strace = spawn('strace', ['-f', '-y', '-e', 'trace=fdatasync,fsync', '-o', out, '-p', String(pid)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  strace.stderr.on('data', (d) => (stderr += d))
  const exited = new Promise<void>((resolve) => strace.on('exit', () => resolve()))
  // "Process N attached with T threads": strace attaches every thread before it says so.
  await waitFor(
    `strace attached to ${pid}`,
    () => new RegExp(`Process ${pid} attached`).test(stderr) || strace.exitCode !== null,
    timeoutMs,
  )
  if (strace.exitCode !== null) throw new Error(`strace exited with ${strace.exitCode}: ${stderr}`)
  return {
    async stop(under: string) {
      strace.kill('SIGINT')
      await exited
      const lines = (await readFile(out, 'utf8')).split('\n')
      await rm(dir, { recursive: true, force: true })
      return lines.filter((l) => SYNC_CALL.exec(l)?.[3].startsWith(under + '/'))
    },
  }
}
