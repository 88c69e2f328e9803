/**
 * Keys: the key space as a tree by `/` segments with a key count per subtree (GET /v1/keys/tree, paged),
 * a prefix search, and the state of the selected prefix at the picked revision: a virtualized list read
 * page by page at that one revision (GET /v1/kv with continue), and the selected key's value, JSON
 * pretty-printed. Keys under /registry/ are shown by kind, namespace and name.
 * URL: #/keys?prefix=P&key=K&rev=R
 */
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, text, type Kv, type TreeChild } from './api.js'
import { html, Problem, RevisionPicker, useAsync } from './common.js'
import { pretty } from './diff.js'
import { href, revParam, type Route } from './route.js'
import { VirtualList } from './virtual-list.js'

/** kind, namespace and name of a /registry/ key (kube-apiserver's layout: [group/]resource/[namespace/]name). */
export function registryParts(key: string): { kind: string; namespace: string; name: string } | undefined {
  if (!key.startsWith('/registry/')) return undefined
  const parts = key.slice('/registry/'.length).split('/')
  if (parts.length < 2) return undefined
  const grouped = parts[0].includes('.') && parts.length >= 3
  const kind = grouped ? `${parts[1]}.${parts[0]}` : parts[0]
  const rest = parts.slice(grouped ? 2 : 1)
  return { kind, namespace: rest.length >= 2 ? rest[0] : '', name: rest.slice(rest.length >= 2 ? 1 : 0).join('/') }
}

/** Arrow keys move the focus between the links of a list; Home and End go to the ends. */
export function arrowKeys(e: KeyboardEvent): void {
  if (!['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(e.key)) return
  const links = [...(e.currentTarget as HTMLElement).querySelectorAll<HTMLAnchorElement>('a')]
  const i = links.indexOf(document.activeElement as HTMLAnchorElement)
  const next =
    e.key === 'Home'
      ? 0
      : e.key === 'End'
        ? links.length - 1
        : e.key === 'ArrowDown'
          ? Math.min(links.length - 1, i + 1)
          : Math.max(0, i - 1)
  links[next]?.focus()
  e.preventDefault()
}

function Tree({ prefix, rev, selected }: { prefix: string; rev: number | undefined; selected: string | undefined }) {
  const [pages, setPages] = useState<TreeChild[][]>([])
  const [cont, setCont] = useState<string | undefined>()
  const first = useAsync(() => api.tree(prefix, rev), [prefix, rev])
  useEffect(() => {
    if (first.data) {
      setPages([first.data.children])
      setCont(first.data.continue ?? (first.data.continueBase64 ? `base64:${first.data.continueBase64}` : undefined))
    }
  }, [first.data])
  const more = async () => {
    const r = await api.tree(prefix, first.data?.header.revision, cont)
    setPages((p) => [...p, r.children])
    setCont(r.continue ?? (r.continueBase64 ? `base64:${r.continueBase64}` : undefined))
  }
  if (first.error) return html`<${Problem} error=${first.error} />`
  const children = pages.flat()
  return html`<div>
    <div class="muted">${first.data ? `${first.data.count} keys under ${prefix || 'the root'}` : 'Loading…'}</div>
    <ul class="tree" aria-label="Key tree" onKeyDown=${arrowKeys}>
      ${children.map((c) => {
        const name = text(c, 'name')
        const full = prefix + name
        const link = c.leaf ? href('keys', { prefix, key: full, rev }) : href('keys', { prefix: full, rev })
        return html`<li>
          <a href=${link} aria-current=${c.leaf && selected === full ? 'true' : undefined} data-leaf=${String(c.leaf)}>
            <span>${c.leaf ? name : `${name}`}</span><span class="count">${c.leaf ? '' : c.count}</span></a
          >
        </li>`
      })}
    </ul>
    ${cont ? html`<button onClick=${more}>More…</button>` : ''}
  </div>`
}

function State({ prefix, rev, selected }: { prefix: string; rev: number | undefined; selected: string | undefined }) {
  const [kvs, setKvs] = useState<Kv[]>([])
  const [count, setCount] = useState(0)
  const [revision, setRevision] = useState<number | undefined>()
  const [error, setError] = useState<Error | undefined>()
  const cont = useRef<string | undefined>(undefined)
  const busy = useRef(false)
  const load = async (reset: boolean) => {
    if (busy.current || (!reset && cont.current === undefined)) return
    busy.current = true
    try {
      const r = await api.range(prefix, true, rev, 500, reset ? undefined : cont.current)
      cont.current = r.continue
      setRevision(r.header.revision)
      setKvs((old) => (reset ? r.kvs : [...old, ...r.kvs]))
      if (reset) setCount(r.count)
      setError(undefined)
    } catch (err) {
      setError(err as Error)
      setKvs([])
    } finally {
      busy.current = false
    }
  }
  useEffect(() => {
    cont.current = undefined
    void load(true)
  }, [prefix, rev])
  if (error) return html`<${Problem} error=${error} />`
  const registry = prefix.startsWith('/registry/')
  return html`<div>
    <div class="muted" data-testid="state-summary">
      ${count} keys at revision ${revision ?? '…'}${registry ? ' (kind · namespace · name)' : ''}
    </div>
    <${VirtualList}
      count=${kvs.length}
      rowHeight=${24}
      height=${360}
      label="Keys at the picked revision"
      onNearEnd=${() => void load(false)}
      render=${(i: number) => {
        const kv = kvs[i]
        const key = text(kv, 'key')
        const parts = registry ? registryParts(key) : undefined
        const label = parts ? `${parts.kind} · ${parts.namespace || '-'} · ${parts.name}` : key
        return html`<a href=${href('keys', { prefix, key, rev })} aria-current=${selected === key ? 'true' : undefined} title=${key}
            >${label}</a
          >
          <span class="count"> mod ${kv.modRevision}</span>`
      }}
    />
  </div>`
}

function Value({ keyText, rev }: { keyText: string; rev: number | undefined }) {
  const r = useAsync(() => api.range(keyText, false, rev, 1), [keyText, rev])
  if (r.error) return html`<${Problem} error=${r.error} />`
  if (!r.data) return html`<p class="loading">Loading…</p>`
  const kv = r.data.kvs[0]
  return html`<section class="panel" aria-label="Value">
    <h2><span data-testid="selected-key">${keyText}</span> at revision ${r.data.header.revision}</h2>
    ${
      kv === undefined
        ? html`<p data-testid="value-absent">The key did not exist at this revision.</p>`
        : html`<div class="meta muted">
              created ${kv.createRevision} · modified ${kv.modRevision} · version ${kv.version}${kv.lease ? ` · lease ${kv.lease}` : ''}
            </div>
            <pre data-testid="value">${pretty(text(kv, 'value'))}</pre>`
    }
    <a href=${href('key', { key: keyText, rev })}>History of this key</a>
  </section>`
}

export function KeysView({ route, head }: { route: Route; head: number | undefined }) {
  const prefix = route.params.get('prefix') ?? ''
  const selected = route.params.get('key') ?? undefined
  const rev = revParam(route.params)
  const [search, setSearch] = useState(prefix)
  useEffect(() => setSearch(prefix), [prefix])
  const crumbs: Array<[string, string]> = [['(root)', '']]
  let at = 0
  while (at < prefix.length) {
    const slash = prefix.indexOf('/', at)
    const end = slash < 0 ? prefix.length : slash + 1
    crumbs.push([prefix.slice(at, end), prefix.slice(0, end)])
    at = end
  }
  return html`<div>
    <${RevisionPicker} rev=${rev} head=${head} />
    <form
      class="pick"
      role="search"
      onSubmit=${(e: Event) => {
        e.preventDefault()
        location.hash = href('keys', { prefix: search, rev })
      }}
    >
      <label for="prefix-search">Prefix</label>
      <input
        id="prefix-search"
        value=${search}
        placeholder="/registry/pods/"
        onInput=${(e: Event) => setSearch((e.target as HTMLInputElement).value)}
      />
      <button type="submit">Go</button>
      <span class="muted">press <kbd>/</kbd> to search</span>
    </form>
    <nav class="crumbs" aria-label="Prefix">
      ${crumbs.map(([label, p]) => html`<a href=${href('keys', { prefix: p, rev })}>${label}</a>`)}
    </nav>
    <div class="cols">
      <section class="panel" aria-label="Tree">
        <h2>Tree</h2>
        <${Tree} prefix=${prefix} rev=${rev} selected=${selected} />
      </section>
      <div>
        ${selected !== undefined ? html`<${Value} keyText=${selected} rev=${rev} />` : ''}
        <section class="panel" aria-label="State">
          <h2>State of ${prefix || 'all keys'}</h2>
          <${State} prefix=${prefix} rev=${rev} selected=${selected} />
        </section>
      </div>
    </div>
  </div>`
}
