/**
 * The columns `kubectl get` shows for each built-in kind (kube-apiserver's table printers): the column
 * definitions of a Table and how each cell is computed from an object. Priority 1 columns are the extra
 * ones `-o wide` shows. Kinds not listed here (custom resources) get Name, their CRD's
 * additionalPrinterColumns and Age (table.ts).
 */
import type { K8sObject } from './k8s-object.js'
import { age, AGE_COLUMN, column, list, NAME_COLUMN, obj, str, type PrintColumn } from './print-columns.js'
import { CRD_GROUP } from './registry.js'
import { WORKLOAD_COLUMNS } from './workload-printers.js'

export { age, AGE_COLUMN, NAME_COLUMN, type PrintColumn }

function podStatus(pod: K8sObject): string {
  if (pod.metadata.deletionTimestamp !== undefined) return 'Terminating'
  const status = obj(pod.status)
  for (const c of list(status.containerStatuses)) {
    const state = obj(c.state)
    const reason = obj(state.waiting).reason ?? obj(state.terminated).reason
    if (typeof reason === 'string' && reason !== '') return reason
  }
  return str(status.reason, str(status.phase, 'Pending'))
}

function nodeStatus(node: K8sObject): string {
  const ready = list(obj(node.status).conditions).find((c) => c.type === 'Ready')
  const state = ready === undefined ? 'Unknown' : ready.status === 'True' ? 'Ready' : 'NotReady'
  return obj(node.spec).unschedulable === true ? `${state},SchedulingDisabled` : state
}

function nodeRoles(node: K8sObject): string {
  const roles = Object.keys(node.metadata.labels ?? {})
    .filter((k) => k.startsWith('node-role.kubernetes.io/'))
    .map((k) => k.slice('node-role.kubernetes.io/'.length))
  return roles.length === 0 ? '<none>' : roles.sort().join(',')
}

function nodeAddress(node: K8sObject, type: string): string {
  return str(list(obj(node.status).addresses).find((a) => a.type === type)?.address)
}

const keyCount = (...maps: unknown[]): number => maps.reduce<number>((n, m) => n + Object.keys(obj(m)).length, 0)

function eventObject(ev: K8sObject): string {
  const o = obj(ev.involvedObject)
  return `${String(o.kind ?? '').toLowerCase()}/${String(o.name ?? '')}`
}

const COLUMNS: Record<string, PrintColumn[]> = {
  ...WORKLOAD_COLUMNS,
  '/namespaces': [NAME_COLUMN, column('Status', (o) => str(obj(o.status).phase, '')), AGE_COLUMN],
  '/configmaps': [NAME_COLUMN, column('Data', (o) => keyCount(o.data, o.binaryData), { type: 'integer' }), AGE_COLUMN],
  '/secrets': [
    NAME_COLUMN,
    column('Type', (o) => str(o.type, 'Opaque')),
    column('Data', (o) => keyCount(o.data), { type: 'integer' }),
    AGE_COLUMN,
  ],
  '/pods': [
    NAME_COLUMN,
    column(
      'Ready',
      (o) => `${list(obj(o.status).containerStatuses).filter((c) => c.ready === true).length}/${list(obj(o.spec).containers).length}`,
    ),
    column('Status', podStatus),
    column(
      'Restarts',
      (o) => list(obj(o.status).containerStatuses).reduce((n, c) => n + (typeof c.restartCount === 'number' ? c.restartCount : 0), 0),
      { type: 'integer' },
    ),
    AGE_COLUMN,
    column('IP', (o) => str(obj(o.status).podIP), { priority: 1 }),
    column('Node', (o) => str(obj(o.spec).nodeName), { priority: 1 }),
    column('Nominated Node', (o) => str(obj(o.status).nominatedNodeName), { priority: 1 }),
    column('Readiness Gates', () => '<none>', { priority: 1 }),
  ],
  '/nodes': [
    NAME_COLUMN,
    column('Status', nodeStatus),
    column('Roles', nodeRoles),
    AGE_COLUMN,
    column('Version', (o) => str(obj(obj(o.status).nodeInfo).kubeletVersion, '')),
    column('Internal-IP', (o) => nodeAddress(o, 'InternalIP'), { priority: 1 }),
    column('External-IP', (o) => nodeAddress(o, 'ExternalIP'), { priority: 1 }),
    column('OS-Image', (o) => str(obj(obj(o.status).nodeInfo).osImage, '<unknown>'), { priority: 1 }),
    column('Kernel-Version', (o) => str(obj(obj(o.status).nodeInfo).kernelVersion, '<unknown>'), { priority: 1 }),
    column('Container-Runtime', (o) => str(obj(obj(o.status).nodeInfo).containerRuntimeVersion, '<unknown>'), { priority: 1 }),
  ],
  '/events': [
    column('Last Seen', (o) => age(str(o.lastTimestamp, '') || str(o.eventTime, '') || o.metadata.creationTimestamp)),
    column('Type', (o) => str(o.type, '')),
    column('Reason', (o) => str(o.reason, '')),
    column('Object', eventObject),
    column('Subobject', (o) => str(obj(o.involvedObject).fieldPath, ''), { priority: 1 }),
    column('Source', (o) => str(obj(o.source).component, str(o.reportingComponent, '')), { priority: 1 }),
    column('Message', (o) => str(o.message, '')),
    column('First Seen', (o) => age(str(o.firstTimestamp, '') || str(o.eventTime, '') || o.metadata.creationTimestamp), { priority: 1 }),
    column('Count', (o) => (typeof o.count === 'number' ? o.count : 1), { type: 'integer', priority: 1 }),
    column('Name', (o) => o.metadata.name ?? '', { format: 'name', priority: 1 }),
  ],
  'coordination.k8s.io/leases': [NAME_COLUMN, column('Holder', (o) => str(obj(o.spec).holderIdentity, '')), AGE_COLUMN],
  [`${CRD_GROUP}/customresourcedefinitions`]: [
    NAME_COLUMN,
    column('Created At', (o) => o.metadata.creationTimestamp ?? '', { format: 'date-time' }),
  ],
}

/** The columns of a built-in kind, or undefined for a custom resource. */
export function builtinColumns(group: string, resource: string, crd: string | undefined): PrintColumn[] | undefined {
  return crd === undefined ? COLUMNS[`${group}/${resource}`] : undefined
}
