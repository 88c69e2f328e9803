/** Starts a real `kvlog serve` for a benchmark (fresh data dir, port 0) and stops it. */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const BIN = fileURLToPath(new URL('../../../bin/kvlog', import.meta.url))

export interface BenchServer {
  http: string
  child: ChildProcess
  stop(): Promise<void>
}

/** Starts a fresh server, or uses the one at $KVLOG_BENCH_HTTP (e.g. one started under a profiler). */
export async function startKvlog(args: string[] = []): Promise<BenchServer> {
  const external = process.env.KVLOG_BENCH_HTTP
  if (external) return { http: external, child: undefined as unknown as ChildProcess, stop: async () => undefined }
  const dir = await mkdtemp(join(tmpdir(), 'kvlog-bench-'))
  const ready = join(dir, 'ready.json')
  const child = spawn(
    process.execPath,
    [BIN, 'serve', '--data-dir', join(dir, 'data'), '--listen-http', '127.0.0.1:0', '--ready-file', ready, '--log-level', 'warn', ...args],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  )
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  const deadline = Date.now() + 20_000
  for (;;) {
    try {
      const { http } = JSON.parse(await readFile(ready, 'utf8')) as { http: string }
      return {
        http,
        child,
        async stop() {
          child.kill('SIGTERM')
          await exited
          await rm(dir, { recursive: true, force: true })
        },
      }
    } catch {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error('kvlog serve did not start')
      await new Promise((r) => setTimeout(r, 50))
    }
  }
}
