/** Small waiting helpers for tests that poll for something to happen. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** Polls `cond` every 10 ms until it holds; fails with `what` after `timeoutMs`. */
export async function waitFor(what: string, cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(10)
  }
}

/** Asks `cond` again every 200 ms (each answer awaited) until it holds; fails with `what` after `timeoutMs`. */
export async function waitUntil(what: string, cond: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(200)
  }
}

/**
 * `p`'s value, or a failure naming `what` if it has not settled after `timeoutMs`: for "ends at once"
 * checks, a deadline a hang misses and a slow machine does not.
 */
export async function settlesWithin<T>(what: string, p: Promise<T>, timeoutMs = 20_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle in ${timeoutMs} ms`)), timeoutMs)
  })
  try {
    return await Promise.race([p, deadline])
  } finally {
    clearTimeout(timer)
  }
}
