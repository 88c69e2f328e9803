/**
 * The columns `kubectl get` shows against kube-apiserver for the built-in kinds kvlog stores without
 * controllers: apps (deployments, replicasets, statefulsets, daemonsets), batch (jobs, cronjobs), core
 * services, serviceaccounts, endpoints, persistentvolumeclaims, and rbac. Counts nobody updates (no
 * controller runs) show as 0; a field kube-apiserver's defaulting would have set (replicas, suspend) shows
 * its default when absent. Priority 1 columns are the ones `-o wide` adds.
 */
import type { K8sObject } from './k8s-object.js'
import {
  AGE_COLUMN,
  age,
  column,
  duration,
  formatLabels,
  formatSelector,
  list,
  NAME_COLUMN,
  num,
  obj,
  str,
  type PrintColumn,
} from './print-columns.js'

const spec = (o: K8sObject) => obj(o.spec)
const status = (o: K8sObject) => obj(o.status)
const podSpec = (o: K8sObject) => obj(obj(spec(o).template).spec)
const jobPodSpec = (o: K8sObject) => obj(obj(obj(obj(spec(o).jobTemplate).spec).template).spec)

/** Containers, Images (and Selector) of a kind with a pod template, as `-o wide` shows them. */
function templateColumns(pods: (o: K8sObject) => Record<string, unknown>, selector?: (o: K8sObject) => unknown): PrintColumn[] {
  const containers = (o: K8sObject) => list(pods(o).containers)
  return [
    column(
      'Containers',
      (o) =>
        containers(o)
          .map((c) => str(c.name, ''))
          .join(','),
      { priority: 1 },
    ),
    column(
      'Images',
      (o) =>
        containers(o)
          .map((c) => str(c.image, ''))
          .join(','),
      { priority: 1 },
    ),
    ...(selector === undefined ? [] : [column('Selector', (o) => formatSelector(selector(o)), { priority: 1 })]),
  ]
}

const int = (name: string, cell: (o: K8sObject) => number) => column(name, cell, { type: 'integer' })
const ready = (o: K8sObject) => `${num(status(o).readyReplicas)}/${num(spec(o).replicas, 1)}`

function condition(o: K8sObject, type: string): boolean {
  return list(status(o).conditions).some((c) => c.type === type && c.status === 'True')
}

function jobStatus(o: K8sObject): string {
  if (condition(o, 'Complete')) return 'Complete'
  if (condition(o, 'Failed')) return 'Failed'
  if (o.metadata.deletionTimestamp !== undefined) return 'Terminating'
  if (condition(o, 'Suspended')) return 'Suspended'
  if (condition(o, 'FailureTarget')) return 'FailureTarget'
  if (condition(o, 'SuccessCriteriaMet')) return 'SuccessCriteriaMet'
  return 'Running'
}

function jobCompletions(o: K8sObject): string {
  const succeeded = num(status(o).succeeded)
  if (typeof spec(o).completions === 'number') return `${succeeded}/${num(spec(o).completions)}`
  const parallelism = num(spec(o).parallelism)
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`
}

function jobDuration(o: K8sObject): string {
  const start = status(o).startTime
  if (typeof start !== 'string') return ''
  const end = status(o).completionTime
  return duration(Date.parse(start), typeof end === 'string' ? Date.parse(end) : Date.now())
}

function serviceExternalIps(o: K8sObject): string {
  const s = spec(o)
  const external = (Array.isArray(s.externalIPs) ? s.externalIPs : []).map(String)
  switch (str(s.type, 'ClusterIP')) {
    case 'ExternalName':
      return str(s.externalName)
    case 'LoadBalancer': {
      const ingress = list(obj(status(o).loadBalancer).ingress).map((i) => str(i.ip, '') || str(i.hostname, ''))
      const all = [...ingress, ...external].filter((a) => a !== '')
      return all.length === 0 ? '<pending>' : all.join(',')
    }
    default:
      return external.length === 0 ? '<none>' : external.join(',')
  }
}

function servicePorts(o: K8sObject): string {
  const ports = list(spec(o).ports).map((p) => {
    const node = typeof p.nodePort === 'number' && p.nodePort > 0 ? `:${p.nodePort}` : ''
    return `${num(p.port)}${node}/${str(p.protocol, 'TCP')}`
  })
  return ports.length === 0 ? '<none>' : ports.join(',')
}

/** Address:port pairs of an Endpoints object: the first three, then how many more. */
function endpointList(o: K8sObject): string {
  const pairs: string[] = []
  for (const subset of list(o.subsets)) {
    const ports = list(subset.ports)
    for (const a of list(subset.addresses)) {
      if (ports.length === 0) pairs.push(str(a.ip, ''))
      for (const p of ports) pairs.push(`${str(a.ip, '')}:${num(p.port)}`)
    }
  }
  if (pairs.length === 0) return '<none>'
  return pairs.length > 3 ? `${pairs.slice(0, 3).join(',')} + ${pairs.length - 3} more...` : pairs.join(',')
}

const ACCESS_MODES: Record<string, string> = {
  ReadWriteOnce: 'RWO',
  ReadOnlyMany: 'ROX',
  ReadWriteMany: 'RWX',
  ReadWriteOncePod: 'RWOP',
}

const subjects = (o: K8sObject, kind: string) =>
  list(o.subjects)
    .filter((s) => s.kind === kind)
    .map((s) => (kind === 'ServiceAccount' ? `${str(s.namespace, '')}:${str(s.name, '')}` : str(s.name, '')))
    .join(', ')

const CREATED_AT = column('Created At', (o) => o.metadata.creationTimestamp ?? '', { format: 'date-time' })
const BINDING: PrintColumn[] = [
  NAME_COLUMN,
  column('Role', (o) => `${str(obj(o.roleRef).kind, '')}/${str(obj(o.roleRef).name, '')}`),
  AGE_COLUMN,
  column('Users', (o) => subjects(o, 'User'), { priority: 1 }),
  column('Groups', (o) => subjects(o, 'Group'), { priority: 1 }),
  column('ServiceAccounts', (o) => subjects(o, 'ServiceAccount'), { priority: 1 }),
]
const RBAC = 'rbac.authorization.k8s.io'

export const WORKLOAD_COLUMNS: Record<string, PrintColumn[]> = {
  'apps/deployments': [
    NAME_COLUMN,
    column('Ready', ready),
    int('Up-to-date', (o) => num(status(o).updatedReplicas)),
    int('Available', (o) => num(status(o).availableReplicas)),
    AGE_COLUMN,
    ...templateColumns(podSpec, (o) => spec(o).selector),
  ],
  'apps/replicasets': [
    NAME_COLUMN,
    int('Desired', (o) => num(spec(o).replicas, 1)),
    int('Current', (o) => num(status(o).replicas)),
    int('Ready', (o) => num(status(o).readyReplicas)),
    AGE_COLUMN,
    ...templateColumns(podSpec, (o) => spec(o).selector),
  ],
  'apps/statefulsets': [NAME_COLUMN, column('Ready', ready), AGE_COLUMN, ...templateColumns(podSpec)],
  'apps/daemonsets': [
    NAME_COLUMN,
    int('Desired', (o) => num(status(o).desiredNumberScheduled)),
    int('Current', (o) => num(status(o).currentNumberScheduled)),
    int('Ready', (o) => num(status(o).numberReady)),
    int('Up-to-date', (o) => num(status(o).updatedNumberScheduled)),
    int('Available', (o) => num(status(o).numberAvailable)),
    column('Node Selector', (o) => formatLabels(podSpec(o).nodeSelector)),
    AGE_COLUMN,
    ...templateColumns(podSpec, (o) => spec(o).selector),
  ],
  'batch/jobs': [
    NAME_COLUMN,
    column('Status', jobStatus),
    column('Completions', jobCompletions),
    column('Duration', jobDuration),
    AGE_COLUMN,
    ...templateColumns(podSpec, (o) => spec(o).selector),
  ],
  'batch/cronjobs': [
    NAME_COLUMN,
    column('Schedule', (o) => str(spec(o).schedule, '')),
    column('Timezone', (o) => str(spec(o).timeZone)),
    column('Suspend', (o) => (spec(o).suspend === true ? 'True' : 'False'), { type: 'boolean' }),
    int('Active', (o) => list(status(o).active).length),
    column('Last Schedule', (o) => (typeof status(o).lastScheduleTime === 'string' ? age(status(o).lastScheduleTime as string) : '<none>')),
    AGE_COLUMN,
    ...templateColumns(jobPodSpec, (o) => obj(obj(spec(o).jobTemplate).spec).selector),
  ],
  '/services': [
    NAME_COLUMN,
    column('Type', (o) => str(spec(o).type, 'ClusterIP')),
    column('Cluster-IP', (o) => str(spec(o).clusterIP)),
    column('External-IP', serviceExternalIps),
    column('Port(s)', servicePorts),
    AGE_COLUMN,
    column('Selector', (o) => formatLabels(spec(o).selector), { priority: 1 }),
  ],
  '/serviceaccounts': [NAME_COLUMN, int('Secrets', (o) => list(o.secrets).length), AGE_COLUMN],
  '/endpoints': [NAME_COLUMN, column('Endpoints', endpointList), AGE_COLUMN],
  '/persistentvolumeclaims': [
    NAME_COLUMN,
    column('Status', (o) => (o.metadata.deletionTimestamp !== undefined ? 'Terminating' : str(status(o).phase, 'Pending'))),
    column('Volume', (o) => str(spec(o).volumeName, '')),
    column('Capacity', (o) => str(obj(status(o).capacity).storage, '')),
    column('Access Modes', (o) =>
      (Array.isArray(status(o).accessModes) ? (status(o).accessModes as unknown[]) : [])
        .map((m) => ACCESS_MODES[String(m)] ?? String(m))
        .join(','),
    ),
    column('StorageClass', (o) => str(spec(o).storageClassName, '')),
    column('VolumeAttributesClass', (o) => str(spec(o).volumeAttributesClassName, '<unset>')),
    AGE_COLUMN,
    column('VolumeMode', (o) => str(spec(o).volumeMode, 'Filesystem'), { priority: 1 }),
  ],
  [`${RBAC}/roles`]: [NAME_COLUMN, CREATED_AT],
  [`${RBAC}/clusterroles`]: [NAME_COLUMN, CREATED_AT],
  [`${RBAC}/rolebindings`]: BINDING,
  [`${RBAC}/clusterrolebindings`]: BINDING,
}
