/**
 * The CPU priority (nice value) of the calling thread alone, for background threads that should give the
 * cores to the writers whenever both want them (compact-worker.ts), as RocksDB lowers its compaction
 * threads to nice 19 (Env::LowerThreadPoolCPUPriority).
 *
 * os.setPriority(0, n) is setpriority(PRIO_PROCESS, 0, n). On Linux a thread is a task with a nice value
 * of its own, and that call sets the calling thread's only (man 2 setpriority, NOTES: "under the current
 * Linux/NPTL implementation of POSIX threads, the nice value is a per-thread attribute"). Elsewhere it
 * would set the whole process's, the writers' included, so there this does nothing.
 */
import { getPriority, setPriority } from 'node:os'

/** What lowerThreadPriority did: the thread's nice value after it, or why it left it alone. */
export type ThreadPriority = { nice: number } | { unchanged: string }

/**
 * Raises the calling thread's nice value to `nice` (0 to 19: higher runs later). It never lowers it:
 * a thread already at `nice` or above stays as it is (lowering needs privileges, and is not what is asked).
 */
export function lowerThreadPriority(nice: number, platform: NodeJS.Platform = process.platform): ThreadPriority {
  if (platform !== 'linux') return { unchanged: `per-thread priorities are Linux's; on ${platform} this would renice the whole process` }
  try {
    const current = getPriority(0)
    if (nice <= current) return { nice: current }
    setPriority(0, nice)
    return { nice: getPriority(0) }
  } catch (err) {
    return { unchanged: err instanceof Error ? err.message : String(err) }
  }
}
