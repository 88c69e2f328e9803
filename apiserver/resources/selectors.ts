/**
 * Label selectors (equality- and set-based) and field selectors, parsed as kube-apiserver parses them.
 *
 *   labelSelector:  app=web, tier!=db, env in (prod,staging), env notin (dev), gpu, !legacy, replicas>2
 *   fieldSelector:  metadata.name=foo, metadata.namespace!=kube-system, and a few per kind (strategy.ts)
 *
 * Malformed selectors are 400 BadRequest. An empty selector matches everything.
 */
import { badRequest } from './status.js'
import type { K8sObject } from './k8s-object.js'
import { labelValue, qualifiedName } from './validation.js'

type Op = '=' | '!=' | 'in' | 'notin' | 'exists' | '!' | '>' | '<'

interface Requirement {
  key: string
  op: Op
  values: string[]
}

export interface Selector {
  readonly empty: boolean
  matches(obj: K8sObject): boolean
}

const EVERYTHING: Selector = { empty: true, matches: () => true }

const SPECIAL = new Set(['!', '=', '(', ')', ',', '<', '>'])

/** Tokens: identifiers, and the operators ! = == != ( ) , < > (whitespace separates). */
function tokenize(text: string): string[] {
  const tokens: string[] = []
  let i = 0
  while (i < text.length) {
    const c = text[i]
    if (/\s/.test(c)) {
      i++
    } else if ((c === '=' || c === '!') && text[i + 1] === '=') {
      tokens.push(c === '=' ? '=' : '!=')
      i += 2
    } else if (SPECIAL.has(c)) {
      tokens.push(c)
      i++
    } else {
      let j = i
      while (j < text.length && !SPECIAL.has(text[j]) && !/\s/.test(text[j])) j++
      tokens.push(text.slice(i, j))
      i = j
    }
  }
  return tokens
}

const isIdentifier = (t: string | undefined): t is string => t !== undefined && !SPECIAL.has(t) && t !== '!='

function parseError(message: string): never {
  throw badRequest(`unable to parse requirement: ${message}`)
}

export function parseLabelSelector(text: string | undefined): Selector {
  if (text === undefined || text.trim() === '') return EVERYTHING
  const tokens = tokenize(text)
  const reqs: Requirement[] = []
  let i = 0
  const next = () => tokens[i++]
  while (i < tokens.length) {
    let req: Requirement
    if (tokens[i] === '!') {
      i++
      const key = next()
      if (!isIdentifier(key)) parseError('expected a label key after "!"')
      req = { key, op: '!', values: [] }
    } else {
      const key = next()
      if (!isIdentifier(key)) parseError(`expected a label key, found ${JSON.stringify(key)}`)
      const op = tokens[i]
      if (op === undefined || op === ',') req = { key, op: 'exists', values: [] }
      else if (op === 'in' || op === 'notin') {
        i++
        if (next() !== '(') parseError(`expected "(" after ${op}`)
        // value (',' value)* ')' — an empty value between separators is the empty string.
        const values: string[] = []
        if (tokens[i] !== ')') {
          for (;;) {
            values.push(isIdentifier(tokens[i]) ? next() : '')
            const sep = next()
            if (sep === ')') break
            if (sep !== ',') parseError(`expected "," or ")" in a value list, found ${JSON.stringify(sep ?? 'the end')}`)
          }
        } else i++
        if (values.length === 0) parseError(`for 'in', 'notin' operators, values set can't be empty`)
        req = { key, op, values }
      } else if (op === '=' || op === '!=' || op === '>' || op === '<') {
        i++
        const v = isIdentifier(tokens[i]) ? next() : ''
        if ((op === '>' || op === '<') && !/^-?[0-9]+$/.test(v)) parseError(`for '<', '>' operators, exactly one integer value is required`)
        req = { key, op, values: [v] }
      } else {
        parseError(`found ${JSON.stringify(op)}, expected one of =, ==, !=, in, notin, <, > or ","`)
      }
    }
    for (const m of qualifiedName(req.key)) parseError(`key: Invalid value: ${JSON.stringify(req.key)}: ${m}`)
    if (req.op !== '>' && req.op !== '<') {
      for (const v of req.values) for (const m of labelValue(v)) parseError(`values: Invalid value: ${JSON.stringify(v)}: ${m}`)
    }
    reqs.push(req)
    if (i < tokens.length && next() !== ',') parseError(`expected "," after the requirement on ${JSON.stringify(req.key)}`)
    if (i === tokens.length && tokens.at(-1) === ',') parseError('a selector must not end with ","')
  }
  return { empty: false, matches: (obj) => reqs.every((r) => matchesLabel(r, obj.metadata.labels ?? {})) }
}

function matchesLabel(r: Requirement, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, r.key)
  const value = has ? labels[r.key] : undefined
  switch (r.op) {
    case '=':
    case 'in':
      return has && r.values.includes(value!)
    case '!=':
    case 'notin':
      return !has || !r.values.includes(value!)
    case 'exists':
      return has
    case '!':
      return !has
    case '>':
    case '<': {
      if (!has || !/^-?[0-9]+$/.test(value!)) return false
      return r.op === '>' ? Number(value) > Number(r.values[0]) : Number(value) < Number(r.values[0])
    }
  }
}

/** Every kind: metadata.name and metadata.namespace. Kinds may add their own (strategy.ts). */
const COMMON_FIELDS = ['metadata.name', 'metadata.namespace']

/** A dotted path's value as a field selector compares it: missing is "", scalars as text. */
function fieldValue(obj: K8sObject, path: string): string {
  let node: unknown = obj
  for (const part of path.split('.')) node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[part] : undefined
  return node === undefined || node === null || typeof node === 'object' ? '' : String(node)
}

export function parseFieldSelector(text: string | undefined, kindFields: readonly string[] = []): Selector {
  if (text === undefined || text.trim() === '') return EVERYTHING
  const terms = text.split(',').map((term) => {
    const m = /^\s*([^=!\s]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(term)
    if (m === null) throw badRequest(`invalid selector: '${text}'; can't understand '${term}'`)
    const [, field, op, value] = m
    if (!COMMON_FIELDS.includes(field) && !kindFields.includes(field)) throw badRequest(`field label not supported: ${field}`)
    return { field, negate: op === '!=', value }
  })
  return { empty: false, matches: (obj) => terms.every((t) => (fieldValue(obj, t.field) === t.value) !== t.negate) }
}

/** Both selectors of a request as one. */
export function both(a: Selector, b: Selector): Selector {
  if (a.empty) return b
  if (b.empty) return a
  return { empty: false, matches: (obj) => a.matches(obj) && b.matches(obj) }
}
