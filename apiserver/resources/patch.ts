/**
 * PATCH bodies, by content type:
 *
 * - application/merge-patch+json: JSON merge patch (RFC 7386): objects merge, null deletes, the rest
 *   (arrays too) replaces.
 * - application/strategic-merge-patch+json: treated as a JSON merge patch. Our objects have no schema, so
 *   there are no list merge keys: lists are replaced whole. Directive keys kubectl adds
 *   (`$setElementOrder/...`, `$retainKeys`, `$deleteFromPrimitiveList/...`, `$patch`) are dropped.
 * - application/json-patch+json: JSON patch (RFC 6902): add, remove, replace, move, copy, test.
 *
 * Server-side apply (application/apply-patch+yaml) is not supported: 415.
 */
import { isDeepStrictEqual } from 'node:util'
import { KvlogError } from '../../log/errors.js'
import type { JsonObject } from '../codec.js'
import { badRequest } from './status.js'

export const PATCH_TYPES = [
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/json-patch+json',
] as const
export type PatchType = (typeof PATCH_TYPES)[number]

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The content type of a PATCH request, or 415 UnsupportedMediaType. */
export function patchType(contentType: string | undefined): PatchType {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase()
  if ((PATCH_TYPES as readonly string[]).includes(type)) return type as PatchType
  throw new KvlogError(
    'UNSUPPORTED_MEDIA_TYPE',
    `the body of the request was in an unknown format - accepted media types include: ${PATCH_TYPES.join(', ')}`,
  )
}

export function applyPatch(type: PatchType, target: JsonObject, patch: unknown): unknown {
  if (type === 'application/json-patch+json') return jsonPatch(target, patch)
  if (!isObject(patch)) throw badRequest('a merge patch must be a JSON object')
  return mergePatch(target, type === 'application/strategic-merge-patch+json' ? withoutDirectives(patch) : patch)
}

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch
  const out: JsonObject = isObject(target) ? { ...target } : {}
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k]
    else out[k] = mergePatch(out[k], v)
  }
  return out
}

function withoutDirectives(patch: unknown): unknown {
  if (Array.isArray(patch)) return patch.map(withoutDirectives)
  if (!isObject(patch)) return patch
  const out: JsonObject = {}
  for (const [k, v] of Object.entries(patch)) if (!k.startsWith('$')) out[k] = withoutDirectives(v)
  return out
}

// ---------------------------------------------------------------------------------------------------------
// RFC 6902

function pointer(path: unknown, field: string): string[] {
  if (typeof path !== 'string' || (path !== '' && !path.startsWith('/'))) throw badRequest(`${field}: must be a JSON pointer`)
  return path === ''
    ? []
    : path
        .slice(1)
        .split('/')
        .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
}

type Container = JsonObject | unknown[]

/** The parent container of a pointer and the last token (an index for arrays; '-' = the end). */
function parentOf(doc: unknown, tokens: string[], op: string): { parent: Container; last: string } {
  let node = doc
  for (const t of tokens.slice(0, -1)) {
    node = Array.isArray(node) ? node[arrayIndex(node, t, false, op)] : isObject(node) ? node[t] : undefined
    if (node === undefined) throw badRequest(`${op}: path does not exist`)
  }
  if (!Array.isArray(node) && !isObject(node)) throw badRequest(`${op}: path does not exist`)
  return { parent: node, last: tokens.at(-1)! }
}

function arrayIndex(arr: unknown[], token: string, forInsert: boolean, op: string): number {
  if (forInsert && token === '-') return arr.length
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw badRequest(`${op}: invalid array index ${JSON.stringify(token)}`)
  const i = Number(token)
  if (i > arr.length || (!forInsert && i === arr.length)) throw badRequest(`${op}: array index ${i} out of bounds`)
  return i
}

function getAt(doc: unknown, tokens: string[], op: string): unknown {
  if (tokens.length === 0) return doc
  const { parent, last } = parentOf(doc, tokens, op)
  const value = Array.isArray(parent) ? parent[arrayIndex(parent, last, false, op)] : Object.hasOwn(parent, last) ? parent[last] : undefined
  if (value === undefined) throw badRequest(`${op}: path does not exist`)
  return value
}

function removeAt(doc: unknown, tokens: string[], op: string): unknown {
  if (tokens.length === 0) throw badRequest(`${op}: cannot remove the whole document`)
  const value = getAt(doc, tokens, op)
  const { parent, last } = parentOf(doc, tokens, op)
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, false, op), 1)
  else delete parent[last]
  return value
}

function addAt(doc: unknown, tokens: string[], value: unknown, op: string): unknown {
  if (tokens.length === 0) return value
  const { parent, last } = parentOf(doc, tokens, op)
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, true, op), 0, value)
  else parent[last] = value
  return doc
}

export function jsonPatch(target: JsonObject, patch: unknown): unknown {
  if (!Array.isArray(patch)) throw badRequest('a JSON patch must be a JSON array of operations')
  let doc: unknown = structuredClone(target)
  patch.forEach((raw, i) => {
    const where = `patch[${i}]`
    if (!isObject(raw)) throw badRequest(`${where}: must be an object`)
    const path = pointer(raw.path, `${where}.path`)
    const needValue = () => {
      if (!Object.hasOwn(raw, 'value')) throw badRequest(`${where}: value is required`)
      return structuredClone(raw.value)
    }
    switch (raw.op) {
      case 'add':
        doc = addAt(doc, path, needValue(), where)
        break
      case 'remove':
        removeAt(doc, path, where)
        break
      case 'replace':
        getAt(doc, path, where)
        if (path.length === 0) doc = needValue()
        else {
          const v = needValue()
          removeAt(doc, path, where)
          doc = addAt(doc, path, v, where)
        }
        break
      case 'move':
      case 'copy': {
        const from = pointer(raw.from, `${where}.from`)
        if (raw.op === 'move' && path.length > from.length && from.every((t, j) => path[j] === t))
          throw badRequest(`${where}: cannot move a value into itself`)
        const value = raw.op === 'move' ? removeAt(doc, from, where) : structuredClone(getAt(doc, from, where))
        doc = addAt(doc, path, value, where)
        break
      }
      case 'test':
        if (!isDeepStrictEqual(getAt(doc, path, where), raw.value)) throw badRequest(`${where}: test failed`)
        break
      default:
        throw badRequest(`${where}: unknown op ${JSON.stringify(raw.op)}`)
    }
  })
  return doc
}
