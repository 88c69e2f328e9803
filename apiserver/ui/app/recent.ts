/**
 * The landing page's latest writes: the newest ones from the history when the page opens, then the live
 * watch's. Both lists are merged by revision and key, so a write the history load and the watch both saw
 * is shown once, newest first.
 */
import { api, text, type HistoryEvent } from './api.js'

/** How many writes the list shows. */
export const RECENT = 50

/** The newest `n` events of the history: the last `n` revisions, read forward and the tail kept. */
export async function loadLatest(n = RECENT): Promise<HistoryEvent[]> {
  const { revision: head, compactRevision } = await api.status()
  let from = Math.max(compactRevision, head - n + 1, 1)
  let kept: HistoryEvent[] = []
  for (;;) {
    const page = await api.history('', { all: true, from, to: head, limit: n })
    kept = [...kept, ...page.events].slice(-n)
    if (!page.more) break
    from = page.nextRevision
  }
  return kept.reverse()
}

const id = (e: HistoryEvent) => `${e.revision}\u0000${text(e.kv, 'key')}`

/** `a` and `b` (each newest first) as one list, newest first, without repeats, at most `n` long. */
export function mergeRecent(a: HistoryEvent[], b: HistoryEvent[], n = RECENT): HistoryEvent[] {
  const seen = new Set<string>()
  const out: HistoryEvent[] = []
  for (const e of [...a, ...b].sort((x, y) => y.revision - x.revision)) {
    if (seen.has(id(e))) continue
    seen.add(id(e))
    out.push(e)
  }
  return out.slice(0, n)
}
