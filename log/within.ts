/** A bound on how long a caller waits for a promise: used by the cluster engine and the health probes. */

/** `p`, or a rejection with `late()` if it has not settled within `ms` (p goes on; its outcome is dropped). */
export function within<T>(p: Promise<T>, ms: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), ms)
  })
  p.catch(() => undefined)
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer))
}
