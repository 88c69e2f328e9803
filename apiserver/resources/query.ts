/**
 * Boolean query parameters read as kube-apiserver reads them (Go's strconv.ParseBool): client
 * libraries send `True`, `1` or `t` as well as `true`. Anything else is a 400 Status naming the parameter.
 */
import { queryString, type Query } from '../params.js'
import { badRequest } from './status.js'

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True'])
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False'])

/** The parameter's value; undefined when absent. */
export function queryFlag(q: Query, name: string): boolean | undefined {
  const v = queryString(q, name)
  if (v === undefined) return undefined
  if (TRUE.has(v)) return true
  if (FALSE.has(v)) return false
  throw badRequest(`${name}: invalid boolean value ${JSON.stringify(v)}`)
}
