/**
 * The password hasher's thread (passwords.ts has the main thread's side): scrypt, one request at a time,
 * at the CPU priority it is given. On Linux a thread has a nice value of its own (setpriority(2) with
 * who = 0 sets the calling thread's), so a flood of logins leaves most of a shared core to the event
 * loop; elsewhere the thread runs at the process's priority.
 */
import { scryptSync } from 'node:crypto'
import { setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'

export interface HashRequest {
  id: number
  password: string
  salt: Buffer
  n: number
  r: number
  p: number
  keyBytes: number
}

export type HashAnswer = { id: number; key: Uint8Array } | { id: number; error: string }

const { nice } = workerData as { nice: number }
if (process.platform === 'linux' && nice > 0) {
  try {
    setPriority(0, nice)
  } catch {
    // Not permitted here: hash at the process's priority.
  }
}

const port = parentPort!
port.on('message', (m: HashRequest) => {
  try {
    const key = scryptSync(m.password, Buffer.from(m.salt), m.keyBytes, { N: m.n, r: m.r, p: m.p, maxmem: 256 * m.n * m.r + 1024 * 1024 })
    port.postMessage({ id: m.id, key } satisfies HashAnswer)
  } catch (err) {
    port.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) } satisfies HashAnswer)
  }
})
