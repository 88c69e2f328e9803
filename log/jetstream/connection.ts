/**
 * The NATS side of a member: the connection (retried until a server answers, with a log line per try),
 * the cluster's stream (created on first start, checked on every start: a stream of the same name that
 * kvlog did not make, or made for another cluster, is refused) and the cluster's bucket (leader lease,
 * member records).
 */
import { readFileSync } from 'node:fs'
import {
  connect,
  credsAuthenticator,
  DiscardPolicy,
  Events,
  RetentionPolicy,
  StorageType,
  type ConnectionOptions,
  type JetStreamManager,
  type KV,
  type NatsConnection,
  type NatsError,
  type StreamInfo,
} from 'nats'
import { KvlogError } from '../errors.js'
import type { ClusterNames, JetStreamLogOptions } from './options.js'

/** JetStream's API error for a stream or bucket with more replicas than an unclustered nats-server keeps. */
const REPLICAS_NOT_CLUSTERED = 10074

/**
 * The member's NATS client options: it reconnects for ever, and takes a connection for dead after
 * natsMaxPingsOut pings unanswered (a stopped nats-server keeps the socket open, so only the pings tell).
 */
export function connectionOptions(o: JetStreamLogOptions): ConnectionOptions {
  return {
    servers: o.natsUrls,
    name: `kvlog ${o.clusterName}/${o.memberName}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: o.natsReconnectWait,
    pingInterval: o.natsPingInterval,
    maxPingOut: o.natsMaxPingsOut,
    timeout: 2000,
    ...(o.natsCreds !== '' ? { authenticator: credsAuthenticator(readFileSync(o.natsCreds)) } : {}),
    ...(o.natsTlsCa !== '' ? { tls: { caFile: o.natsTlsCa } } : {}),
  }
}

export async function connectNats(o: JetStreamLogOptions, closed: () => boolean): Promise<NatsConnection> {
  const say = (line: string) => o.log?.(line, 'warn')
  for (let attempt = 1; ; attempt++) {
    try {
      return await connect(connectionOptions(o))
    } catch (err) {
      if (closed()) throw err
      say(`kvlog: NATS at ${o.natsUrls.join(',')} unreachable (${(err as Error).message}); retrying (attempt ${attempt})`)
      await new Promise((r) => setTimeout(r, Math.min(2000, 200 * attempt)))
    }
  }
}

/**
 * Follows the connection's state until it closes: `lost` for each connection lost or taken for dead (its
 * pings unanswered), `back` with the server it reconnected to.
 */
export async function watchConnection(nc: NatsConnection, lost: (server: string) => void, back: (server: string) => void): Promise<void> {
  for await (const s of nc.status()) {
    if (s.type === Events.Disconnect) lost(String(s.data))
    else if (s.type === Events.Reconnect) back(String(s.data))
  }
}

/**
 * Runs a JetStream set-up step again while JetStream does not answer (a timeout, or no responders while
 * the servers elect their leaders after a restart), with a log line per try; other errors are thrown.
 * No responders is also what a nats-server without JetStream answers: the line says so (NO_JETSTREAM),
 * as the server may be started with it later. More replicas than an unclustered nats-server keeps is
 * thrown as INVALID_ARGUMENT naming --nats-replicas.
 */
export async function whileUnavailable<T>(what: string, o: JetStreamLogOptions, closed: () => boolean, step: () => Promise<T>): Promise<T> {
  const say = (line: string) => o.log?.(line, 'warn')
  for (let attempt = 1; ; attempt++) {
    try {
      return await step()
    } catch (err) {
      const code = (err as NatsError)?.code
      // 'no suitable peers for placement': the servers have not all joined the JetStream cluster yet.
      const forming = /no suitable peers for placement/.test((err as Error)?.message ?? '')
      if (apiErrorCode(err) === REPLICAS_NOT_CLUSTERED) throw notClustered(what, o.natsReplicas)
      if (closed() || (code !== 'TIMEOUT' && code !== '503' && !forming)) throw err
      say(
        code === '503'
          ? `kvlog: NO_JETSTREAM: ${what}: JetStream did not answer (no responders at ${o.natsUrls.join(',')}): JetStream may be off on the nats-server (start it with --jetstream, or jetstream {} in its config), or its servers are still electing their leaders; retrying (attempt ${attempt})`
          : `kvlog: JetStream does not answer yet (${what}: ${code}); retrying (attempt ${attempt})`,
      )
      await new Promise((r) => setTimeout(r, Math.min(2000, 200 * attempt)))
    }
  }
}

function notClustered(what: string, replicas: number): KvlogError {
  return new KvlogError(
    'INVALID_ARGUMENT',
    `${what}: the nats-server is not in a JetStream cluster and keeps one replica only, but --nats-replicas is ${replicas}: ` +
      'with one nats-server give --nats-replicas 1 (no copy survives losing it), or run three clustered nats-servers (docs/operations.md)',
    { field: 'natsReplicas', reason: 'NATS_NOT_CLUSTERED' },
  )
}

export function apiErrorCode(err: unknown): number | undefined {
  return (err as NatsError)?.api_error?.err_code
}

/** Creates the cluster's stream, or checks that the existing one is this cluster's kvlog log. */
export async function ensureStream(jsm: JetStreamManager, names: ClusterNames, replicas: number): Promise<StreamInfo> {
  let info: StreamInfo | undefined
  try {
    info = await jsm.streams.info(names.stream)
  } catch (err) {
    if (apiErrorCode(err) !== 10059) throw err // 10059: stream not found
  }
  if (info === undefined) {
    try {
      return await jsm.streams.add({
        name: names.stream,
        description: names.description,
        subjects: [names.subject],
        storage: StorageType.File,
        num_replicas: replicas,
        retention: RetentionPolicy.Limits,
        discard: DiscardPolicy.Old,
        max_msgs: -1,
        max_bytes: -1,
        max_age: 0,
        duplicate_window: 120_000_000_000,
      })
    } catch (err) {
      // Another member created it meanwhile: check that one.
      if (apiErrorCode(err) !== 10058) throw err
      info = await jsm.streams.info(names.stream)
    }
  }
  const c = info.config
  if (c.description !== names.description || c.subjects?.length !== 1 || c.subjects[0] !== names.subject) {
    throw new Error(
      `the JetStream stream ${names.stream} was not made by kvlog for cluster '${names.subject.split('.')[1]}' ` +
        `(description '${c.description ?? ''}', subjects ${JSON.stringify(c.subjects ?? [])}): refusing to start; ` +
        'check --cluster-name, or give the cluster a name whose stream is free',
    )
  }
  return info
}

/** The bucket's calls (lease renewals among them) wait at most `timeoutMs` for an answer. */
export async function openBucket(nc: NatsConnection, names: ClusterNames, replicas: number, ttlMs: number, timeoutMs: number): Promise<KV> {
  return nc
    .jetstream({ timeout: timeoutMs })
    .views.kv(names.bucket, { history: 1, ttl: ttlMs, replicas, description: `kvlog cluster ${names.bucket} leader and members` })
}
