/**
 * A virtualized list: only the rows in view (plus a margin) are in the DOM, so a list of a million rows
 * costs as much as one screenful. Rows have a fixed height. `onNearEnd` asks for the next page when the
 * view gets close to the last loaded row.
 */
import type { VNode } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { html } from './common.js'

export interface VirtualListProps {
  count: number
  rowHeight: number
  height: number
  render: (i: number) => VNode | string
  onNearEnd?: () => void
  label: string
}

export function VirtualList({ count, rowHeight, height, render, onNearEnd, label }: VirtualListProps) {
  const ref = useRef<HTMLDivElement>(null)
  const [top, setTop] = useState(0)
  const first = Math.max(0, Math.floor(top / rowHeight) - 10)
  const last = Math.min(count, Math.ceil((top + height) / rowHeight) + 10)
  useEffect(() => {
    if (onNearEnd && last >= count - 20) onNearEnd()
  }, [last, count])
  const rows = []
  for (let i = first; i < last; i++)
    rows.push(
      html`<div class="vlist-row" role="listitem" style=${`top:${i * rowHeight}px;height:${rowHeight}px;line-height:${rowHeight}px`}>
        ${render(i)}
      </div>`,
    )
  return html`<div
    class="vlist"
    ref=${ref}
    role="list"
    aria-label=${label}
    tabindex="0"
    style=${`height:${Math.min(height, Math.max(count, 1) * rowHeight + 2)}px`}
    onScroll=${(e: Event) => setTop((e.target as HTMLElement).scrollTop)}
  >
    <div style=${`height:${count * rowHeight}px`}></div>
    ${rows}
  </div>`
}
