/**
 * No document points at a file the repository lacks: every relative link of every markdown file, and
 * every `*.md` a code comment cites, resolves to a file or folder in the repository. Addresses (http:,
 * https:, mailto:) and in-page anchors are not checked; links inside fenced or inline code are not links.
 */
import { expect } from 'chai'
import { readdir, readFile, stat } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const REPO = fileURLToPath(new URL('../../../', import.meta.url))
/** Folders that are not the repository's own text: installed, built, or written at run time. */
const SKIP = new Set(['node_modules', 'dist', '.git', 'kvlog-data'])
const CODE = /\.(ts|js|mjs|cjs)$/

async function files(dir: string, out: string[] = []): Promise<string[]> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue
    const path = join(dir, entry.name)
    if (entry.isDirectory()) await files(path, out)
    else if (entry.isFile()) out.push(path)
  }
  return out
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  )
}

/** A markdown text without its fenced code blocks. */
function withoutCode(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')
}

/** The relative link targets of a markdown text, outside fenced and inline code. */
export function markdownLinks(text: string): string[] {
  const prose = withoutCode(text).replace(/`[^`\n]*`/g, '')
  const out: string[] = []
  for (const m of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = m[1]
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue
    out.push(decodeURIComponent(target.replace(/[#?].*$/, '')))
  }
  return out
}

/** The `*.md` names cited in the comments of a source file (not inside an address). */
export function citedDocuments(text: string): string[] {
  const comments = [...text.matchAll(/\/\*[\s\S]*?\*\/|(?<!:)\/\/[^\n]*/g)].map((m) => m[0])
  const out: string[] = []
  for (const comment of comments) {
    const words = comment.replace(/[a-z][a-z0-9+.-]*:\/\/\S+/gi, '')
    for (const m of words.matchAll(/[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md\b/g)) out.push(m[0].replace(/^\.\//, ''))
  }
  return out
}

/** Where a cited name is: beside the citing file, at the repository's root, or in docs/. */
async function resolve(file: string, name: string): Promise<string | undefined> {
  const places = [join(dirname(file), name), join(REPO, name)]
  if (!name.includes('/')) places.push(join(REPO, 'docs', name))
  for (const place of places) if (await exists(place)) return place
  return undefined
}

/** Citations of a section in a code comment: a document's name, a comma, the heading in double quotes. */
export function citedSections(text: string): Array<{ name: string; section: string }> {
  return [...text.matchAll(/([A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md),\s*\n?\s*\*?\s*"([^"\n]+)"/g)].map((m) => ({ name: m[1], section: m[2] }))
}

/** The headings of a markdown text. */
function headings(text: string): Set<string> {
  return new Set([...withoutCode(text).matchAll(/^#{1,6}\s+(.+?)\s*$/gm)].map((m) => m[1]))
}

describe('docs: links and citations', function () {
  this.timeout(60_000)
  let all: string[]

  before(async () => {
    all = await files(REPO)
  })

  it('finds links and citations where they are written, and only there', () => {
    const md = '[a](docs/a.md) [b](https://x.org/b.md) [c](#c) ![d](img/d.png "t") `[e](e.md)`\n```\n[f](f.md)\n```\n'
    expect(markdownLinks(md)).to.deep.equal(['docs/a.md', 'img/d.png'])
    // Put together, so that this file's own comments cite nothing.
    const slash = '/'
    const ts = `${slash}/ see docs/a.md\n${slash}** (b.md, https://x.org/c.md) */\nconst s = 'd.md'\n`
    expect(citedDocuments(ts)).to.deep.equal(['docs/a.md', 'b.md'])
    expect(citedSections(`(see docs/a.md, "One writer, group commit")`)).to.deep.equal([
      { name: 'docs/a.md', section: 'One writer, group commit' },
    ])
  })

  it('every relative link in a markdown file resolves to a file in the repository', async () => {
    const broken: string[] = []
    for (const file of all.filter((f) => f.endsWith('.md'))) {
      for (const target of markdownLinks(await readFile(file, 'utf8'))) {
        if (!(await exists(join(dirname(file), target)))) broken.push(`${relative(REPO, file)}: ${target}`)
      }
    }
    expect(broken).to.deep.equal([])
  })

  it('every *.md a code comment cites is a file in the repository', async () => {
    const missing: string[] = []
    const sources = all.filter((f) => CODE.test(f) || relative(REPO, f) === join('bin', 'kvlog'))
    expect(sources.length).to.be.greaterThan(100)
    for (const file of sources) {
      for (const name of citedDocuments(await readFile(file, 'utf8'))) {
        if ((await resolve(file, name)) === undefined) missing.push(`${relative(REPO, file)}: ${name}`)
      }
    }
    expect(missing).to.deep.equal([])
  })

  it('every section a code comment cites (docs/x.md, "Section") is a heading of that document', async () => {
    const missing: string[] = []
    let cited = 0
    for (const file of all.filter((f) => CODE.test(f))) {
      for (const { name, section } of citedSections(await readFile(file, 'utf8'))) {
        const doc = await resolve(file, name)
        if (doc === undefined) continue // reported by the test above
        cited++
        if (!headings(await readFile(doc, 'utf8')).has(section)) missing.push(`${relative(REPO, file)}: ${name}, "${section}"`)
      }
    }
    expect(cited).to.be.greaterThan(10)
    expect(missing).to.deep.equal([])
  })
})
