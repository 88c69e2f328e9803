/**
 * Kubernetes' name and label rules (apimachinery's validation package): DNS-1123 subdomains and labels,
 * qualified names (label and annotation keys), label values. Each check returns the problems found as
 * kube-style messages (empty = valid), so callers can collect every bad field into one 422 Invalid.
 */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/

export const MAX_ANNOTATIONS_BYTES = 256 * 1024

/** A check of a length bound and a pattern, returning kube-style messages. */
function rule(max: number, pattern: RegExp, message: string): (value: string) => string[] {
  return (value) => [...(value.length > max ? [`must be no more than ${max} characters`] : []), ...(pattern.test(value) ? [] : [message])]
}

export const dns1123Label = rule(
  63,
  DNS1123_LABEL,
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
)

export const dns1123Subdomain = rule(
  253,
  DNS1123_SUBDOMAIN,
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
)

export const labelValue = rule(
  63,
  LABEL_VALUE,
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
)

/** A label or annotation key: `[prefix/]name`, prefix a DNS-1123 subdomain, name at most 63 characters. */
export function qualifiedName(value: string): string[] {
  const parts = value.split('/')
  if (parts.length > 2)
    return ["a qualified name must consist of alphanumeric characters, '-', '_' or '.', with an optional DNS subdomain prefix and '/'"]
  const name = parts.at(-1)!
  const out: string[] = []
  if (parts.length === 2) {
    if (parts[0] === '') out.push('prefix part must be non-empty')
    else out.push(...dns1123Subdomain(parts[0]).map((m) => `prefix part ${m}`))
  }
  if (name === '') out.push('name part must be non-empty')
  else if (name.length > 63) out.push('name part must be no more than 63 characters')
  else if (!QUALIFIED_NAME.test(name)) {
    out.push("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character")
  }
  return out
}

/** Is the name usable as a path segment at all (kube's path-segment rule)? */
export function pathSegmentName(value: string): string[] {
  if (value === '.' || value === '..') return [`may not be '${value}'`]
  if (value.includes('/') || value.includes('%')) return ["may not contain '/' or '%'"]
  return []
}
