/**
 * The settings a user sets first, by group, each with one line: `kvlog serve --help` shows these and
 * docs/configuration.md lists them first. Every other setting is tuning, shown by `--help-all` and in the
 * docs' second table with its full description (config/schema.ts).
 */
import type { Config } from './schema.js'

export interface EssentialGroup {
  readonly title: string
  /** Each setting with its one-line summary. */
  readonly settings: readonly (readonly [keyof Config, string])[]
}

export const ESSENTIALS: readonly EssentialGroup[] = [
  {
    title: 'Where',
    settings: [
      ['dataDir', 'the data directory (created if missing)'],
      ['listenHttp', 'the HTTP API, WebSocket watches and the UI'],
      ['listenGrpc', 'the etcd v3 API (gRPC and its JSON gateway)'],
    ],
  },
  {
    title: 'TLS',
    settings: [
      ['tlsCertFile', "the server's PEM certificate: both listeners serve TLS"],
      ['tlsKeyFile', "the certificate's private key"],
      ['tlsClientCaFile', 'clients must present a certificate signed by this CA'],
    ],
  },
  {
    title: 'Auth (enabled with "kvlog auth enable")',
    settings: [
      ['authToken', "'simple' or 'jwt,...', as etcd's --auth-token"],
      ['tokenAuthFile', "static bearer tokens, as kube-apiserver's --token-auth-file"],
      ['clientCertAuth', "a client certificate's CN is the user"],
    ],
  },
  {
    title: 'Cluster (NATS JetStream)',
    settings: [
      ['natsUrl', 'NATS servers holding the log; unset: a single node'],
      ['clusterName', "the cluster's stream and bucket names"],
      ['memberName', "this member's name, unique per member"],
      ['advertiseClientUrls', "this member's client URLs as MemberList reports them"],
    ],
  },
  {
    title: 'History and space',
    settings: [
      ['autoCompactionMode', "'revision' or 'periodic' retention, as etcd's"],
      ['autoCompactionRetention', 'revisions (10000) or a duration (1h) to keep'],
      ['quotaBackendBytes', 'size quota: above it, compaction hurries, then NO_SPACE'],
    ],
  },
  {
    title: 'Durability and logs',
    settings: [
      ['fsync', "'always': a write is acknowledged once on disk"],
      ['logLevel', 'lowest level of log lines written'],
      ['logFormat', "'json', 'text' or 'auto' (text on a terminal)"],
    ],
  },
]

const KEYS = new Set<keyof Config>(ESSENTIALS.flatMap((g) => g.settings.map(([key]) => key)))

export const isEssential = (key: keyof Config): boolean => KEYS.has(key)
