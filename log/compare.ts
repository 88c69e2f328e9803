/**
 * Evaluates transaction compares with etcd's semantics: every key of the compare's range must satisfy it;
 * an empty range compares as a zero kv (version 0, create 0, mod 0, lease 0), except that a VALUE compare on
 * missing keys is always false (there is no value to compare).
 */
import { readBounds, type StateView } from './state-view.js'
import type { KeyValue } from './types.js'
import type { NCompare } from './validate.js'

const ZERO: KeyValue = {
  key: Buffer.alloc(0),
  value: Buffer.alloc(0),
  createRevision: 0,
  modRevision: 0,
  version: 0,
  lease: 0n,
}

export async function comparesHold(view: StateView, compares: NCompare[]): Promise<boolean> {
  for (const c of compares) {
    const kvs = await readBounds(view, c.bounds)
    if (kvs.length === 0) {
      if (c.target === 'VALUE' || !holds(c, ZERO)) return false
      continue
    }
    for (const kv of kvs) if (!holds(c, kv)) return false
  }
  return true
}

function holds(c: NCompare, kv: KeyValue): boolean {
  let cmp: number
  switch (c.target) {
    case 'VALUE':
      cmp = Buffer.compare(kv.value, c.value as Buffer)
      break
    case 'VERSION':
      cmp = sign(kv.version - (c.value as number))
      break
    case 'CREATE':
      cmp = sign(kv.createRevision - (c.value as number))
      break
    case 'MOD':
      cmp = sign(kv.modRevision - (c.value as number))
      break
    case 'LEASE': {
      const v = c.value as bigint
      cmp = kv.lease === v ? 0 : kv.lease < v ? -1 : 1
      break
    }
  }
  switch (c.result) {
    case 'EQUAL':
      return cmp === 0
    case 'NOT_EQUAL':
      return cmp !== 0
    case 'LESS':
      return cmp < 0
    case 'GREATER':
      return cmp > 0
  }
}

function sign(n: number): number {
  return n < 0 ? -1 : n > 0 ? 1 : 0
}
