/**
 * A server's peak resident set size while something runs: VmRSS from /proc/<pid>/status sampled every few
 * milliseconds, and VmHWM (the kernel's own high-water mark, reset first through /proc/<pid>/clear_refs
 * where this process may write it), whichever is higher. A peak shorter than the sampling interval is
 * caught by VmHWM; where it cannot be reset, the samples alone count. RssAnon's peak (sampled) is kept
 * apart: RSS also counts the pages of files a server maps to read them (LevelDB's tables, etcd's bbolt
 * file), which the kernel can drop; anonymous memory (heaps, buffers) it cannot.
 */
import { readFile, writeFile } from 'node:fs/promises'

const SAMPLE_MS = 5

/** VmRSS, VmHWM and RssAnon of a process, bytes. */
export async function memoryOf(pid: number): Promise<{ rss: number; hwm: number; anon: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) * 1024
  return { rss: kb('VmRSS'), hwm: kb('VmHWM'), anon: kb('RssAnon') }
}

export interface PeakRss<T> {
  result: T
  /** VmRSS just before fn started. */
  before: number
  peak: number
  /** RssAnon just before fn started, and its highest sample. */
  anonBefore: number
  anonPeak: number
}

export async function peakRssDuring<T>(pid: number, fn: () => Promise<T>): Promise<PeakRss<T>> {
  // "5" resets the high-water mark to the present RSS (proc(5), clear_refs).
  const reset = await writeFile(`/proc/${pid}/clear_refs`, '5').then(
    () => true,
    () => false,
  )
  const { rss: before, anon: anonBefore } = await memoryOf(pid)
  let peak = before
  let anonPeak = anonBefore
  let sampling = true
  const sampler = (async () => {
    while (sampling) {
      const now = await memoryOf(pid)
      peak = Math.max(peak, now.rss)
      anonPeak = Math.max(anonPeak, now.anon)
      await new Promise((r) => setTimeout(r, SAMPLE_MS))
    }
  })()
  try {
    const result = await fn()
    const last = await memoryOf(pid)
    return { result, before, peak: Math.max(peak, last.rss, reset ? last.hwm : 0), anonBefore, anonPeak: Math.max(anonPeak, last.anon) }
  } finally {
    sampling = false
    await sampler
  }
}
