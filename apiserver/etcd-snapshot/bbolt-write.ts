/**
 * Writes a bbolt database file (the B+tree store etcd keeps its backend in, go.etcd.io/bbolt 1.3) from
 * buckets whose entries are already sorted. The layout, all integers little-endian:
 *
 *   page header (16 bytes)   id u64, flags u16, count u16, overflow u32 (extra pages a node spans)
 *   meta pages 0 and 1       magic 0xED0CDAED, version 2, page size, flags, root bucket {root pgid,
 *                            sequence}, freelist pgid, high-water pgid, txid, FNV-1a 64 of the fields before it
 *   freelist page            count page ids (none here: every page is in use)
 *   leaf page                count elements {flags u32, pos u32, ksize u32, vsize u32}, then the keys and
 *                            values; pos counts from the element itself. flags 1 = the value is a bucket
 *   branch page              count elements {pos u32, ksize u32, pgid u64}: each child's first key
 *   bucket value             {root pgid u64, sequence u64}; root 0 = an inline bucket (a page follows)
 *
 * Every bucket gets its own pages (never inline: bbolt reads both), nodes are packed as full as a page
 * allows, an entry larger than a page gets a node that spans several pages (overflow), and every page
 * below the high-water mark is reachable, as `bbolt check` (and so `etcdctl snapshot status`) demands. Both
 * meta pages are valid; bbolt uses the one with the higher txid.
 */

export const PAGE_SIZE = 4096
export const PAGE_HEADER = 16
export const ELEMENT_SIZE = 16
export const BRANCH_PAGE = 0x01
export const LEAF_PAGE = 0x02
export const META_PAGE = 0x04
export const FREELIST_PAGE = 0x10
export const BUCKET_LEAF = 0x01
export const MAGIC = 0xed0cdaed
export const VERSION = 2
/** Bytes of the meta fields the checksum covers (everything before the checksum). */
export const META_SUMMED = 56

export interface BboltBucket {
  name: Buffer
  /** Keys in ascending byte order, each once. */
  entries: ReadonlyArray<readonly [Buffer, Buffer]>
}

interface Item {
  key: Buffer
  value: Buffer
  flags: number
  pgid: number
}

/** FNV-1a, 64 bits: bbolt's meta checksum. */
export function fnv1a64(bytes: Buffer): bigint {
  let h = 0xcbf29ce484222325n
  for (const b of bytes) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n)
  return h
}

/** The file's pages in order (their total length is the high-water mark times the page size). */
export function writeBbolt(buckets: readonly BboltBucket[], pageSize = PAGE_SIZE): Buffer[] {
  const sorted = [...buckets].sort((a, b) => Buffer.compare(a.name, b.name))
  const out: Out = { pages: [Buffer.alloc(0), Buffer.alloc(0), freelistPage(2, pageSize)], next: 3, pageSize }
  const rootItems: Item[] = []
  for (const bucket of sorted) {
    const items = bucket.entries.map(([key, value]) => ({ key, value, flags: 0, pgid: 0 }))
    const root = writeTree(items, out)
    const header = Buffer.alloc(16)
    header.writeBigUInt64LE(BigInt(root), 0)
    rootItems.push({ key: bucket.name, value: header, flags: BUCKET_LEAF, pgid: 0 })
  }
  const root = writeTree(rootItems, out)
  out.pages[0] = metaPage(0, 2, root, out.next, pageSize)
  out.pages[1] = metaPage(1, 3, root, out.next, pageSize)
  return out.pages
}

/** The pages written so far and the next free page id. */
interface Out {
  pages: Buffer[]
  next: number
  pageSize: number
}

/** Writes the leaves, then each branch level above them; returns the root's page id. */
function writeTree(items: Item[], out: Out): number {
  let level = pack(items, true, out.pageSize).map((node) => writeNode(node, true, out))
  while (level.length > 1) level = pack(level, false, out.pageSize).map((node) => writeNode(node, false, out))
  return level[0].pgid
}

/** Splits items into nodes of at most one page each (a node with a single oversized item spans several). */
function pack(items: Item[], leaf: boolean, pageSize: number): Item[][] {
  const nodes: Item[][] = [[]]
  let size = PAGE_HEADER
  for (const item of items) {
    const bytes = ELEMENT_SIZE + item.key.length + (leaf ? item.value.length : 0)
    if (size + bytes > pageSize && nodes[nodes.length - 1].length > 0) {
      nodes.push([])
      size = PAGE_HEADER
    }
    nodes[nodes.length - 1].push(item)
    size += bytes
  }
  return nodes
}

/** Appends the node's page(s); returns the item a parent branch points to it with. */
function writeNode(node: Item[], leaf: boolean, out: Out): Item {
  const size = node.reduce((n, it) => n + ELEMENT_SIZE + it.key.length + (leaf ? it.value.length : 0), PAGE_HEADER)
  const count = Math.max(1, Math.ceil(size / out.pageSize))
  const pgid = out.next
  out.next += count
  const page = Buffer.alloc(count * out.pageSize)
  page.writeBigUInt64LE(BigInt(pgid), 0)
  page.writeUInt16LE(leaf ? LEAF_PAGE : BRANCH_PAGE, 8)
  page.writeUInt16LE(node.length, 10)
  page.writeUInt32LE(count - 1, 12)
  let data = PAGE_HEADER + node.length * ELEMENT_SIZE
  node.forEach((it, i) => {
    const at = PAGE_HEADER + i * ELEMENT_SIZE
    if (leaf) {
      page.writeUInt32LE(it.flags, at)
      page.writeUInt32LE(data - at, at + 4)
      page.writeUInt32LE(it.key.length, at + 8)
      page.writeUInt32LE(it.value.length, at + 12)
    } else {
      page.writeUInt32LE(data - at, at)
      page.writeUInt32LE(it.key.length, at + 4)
      page.writeBigUInt64LE(BigInt(it.pgid), at + 8)
    }
    data += it.key.copy(page, data)
    if (leaf) data += it.value.copy(page, data)
  })
  out.pages.push(page)
  return { key: node.length > 0 ? node[0].key : Buffer.alloc(0), value: Buffer.alloc(0), flags: 0, pgid }
}

function freelistPage(pgid: number, pageSize: number): Buffer {
  const page = Buffer.alloc(pageSize)
  page.writeBigUInt64LE(BigInt(pgid), 0)
  page.writeUInt16LE(FREELIST_PAGE, 8)
  return page
}

function metaPage(pgid: number, txid: number, root: number, highWater: number, pageSize: number): Buffer {
  const page = Buffer.alloc(pageSize)
  page.writeBigUInt64LE(BigInt(pgid), 0)
  page.writeUInt16LE(META_PAGE, 8)
  const m = PAGE_HEADER
  page.writeUInt32LE(MAGIC, m)
  page.writeUInt32LE(VERSION, m + 4)
  page.writeUInt32LE(pageSize, m + 8)
  page.writeUInt32LE(0, m + 12)
  page.writeBigUInt64LE(BigInt(root), m + 16)
  page.writeBigUInt64LE(0n, m + 24)
  page.writeBigUInt64LE(2n, m + 32)
  page.writeBigUInt64LE(BigInt(highWater), m + 40)
  page.writeBigUInt64LE(BigInt(txid), m + 48)
  page.writeBigUInt64LE(fnv1a64(page.subarray(m, m + META_SUMMED)), m + META_SUMMED)
  return page
}
