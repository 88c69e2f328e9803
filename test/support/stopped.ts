/**
 * Waiting until a process that was sent SIGSTOP has really stopped. kill(2) returns once the stop is
 * queued: one thread is woken to take it and stops the others in turn, and until then a thread of the
 * process that is woken by something else (a network message, say) runs on and may answer it. On a
 * loaded machine that lasts long enough for a request sent right after the kill to be served.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { waitFor } from './wait.js'

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

/** Resolves once every thread of process `pid` is stopped (T); fails only on a hang. */
export async function allThreadsStopped(pid: number, what: string): Promise<void> {
  await waitFor(`every thread of ${what} to stop`, () => threadStates(pid).every((s) => s === 'T'), 30_000)
}
