/**
 * The nice values of this process's threads as the kernel has them (Linux's /proc), for tests of what runs
 * at which CPU priority (log/level/io/thread-priority.ts).
 */
import { readdirSync, readFileSync } from 'node:fs'

/** The nice value in a /proc stat line (its field 19; the command name before it may hold spaces). */
export function statNice(stat: string): number {
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])
}

/** The calling thread's nice value. */
export function threadNice(): number {
  return statNice(readFileSync('/proc/thread-self/stat', 'utf8'))
}

/** Every thread of this process: thread id → nice value (threads that end meanwhile are left out). */
export function processThreadsNice(): Map<number, number> {
  const out = new Map<number, number>()
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      out.set(Number(tid), statNice(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')))
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out
}
