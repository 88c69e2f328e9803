/**
 * Waiting until a process that was sent SIGSTOP has really stopped. kill(2) returns once the stop is
 * queued: one thread is woken to take it and stops the others in turn, and until then a thread of the
 * process that is woken by something else (a network message, say) runs on and may answer it. On a
 * loaded machine that lasts long enough for a request sent right after the kill to be served.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { sleep, waitFor } from './wait.js'

/** The state letter of each thread of process `pid` (Linux's /proc: R, S, D, T, ...). */
export function threadStates(pid: number): string[] {
  const states: string[] = []
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      states.push(stat.slice(stat.lastIndexOf(')') + 2)[0])
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return states
}

/** Whether every thread of process `pid` is stopped (T); a process that has ended runs nothing either. */
function stopped(pid: number): boolean {
  try {
    return threadStates(pid).every((s) => s === 'T')
  } catch {
    return true
  }
}

/** Resolves once every thread of process `pid` is stopped (T); fails only on a hang. */
export async function allThreadsStopped(pid: number, what: string): Promise<void> {
  await waitFor(`every thread of ${what} to stop`, () => stopped(pid), 30_000)
}

/** How long stopProcess waits for every thread to stop before it goes on. */
export const STOP_WAIT_MS = 5_000

/** Counts, in a soak's faults injected, a pause that went on with a thread still running. */
export function countUnstopped(injected: Record<string, number>): void {
  injected['pause-unstopped'] = (injected['pause-unstopped'] ?? 0) + 1
}

/**
 * Sends SIGSTOP to `pid` and waits until every thread has stopped, so that a fault's clock starts when
 * the pause has taken effect. Resolves true then, or false (with a line on stderr) when a thread still
 * runs after `timeoutMs`: the caller goes on and counts it, a run is not stalled by it.
 */
export async function stopProcess(pid: number, what: string, timeoutMs = STOP_WAIT_MS): Promise<boolean> {
  process.kill(pid, 'SIGSTOP')
  const deadline = Date.now() + timeoutMs
  while (!stopped(pid)) {
    if (Date.now() > deadline) {
      process.stderr.write(`SIGSTOP of ${what}: threads still running after ${timeoutMs} ms ; going on\n`)
      return false
    }
    await sleep(2)
  }
  return true
}
