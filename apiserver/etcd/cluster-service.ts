/**
 * etcd's Cluster service. MemberList answers with this member, or in cluster mode with every member whose
 * record is alive (ids derived from the names: cluster-info.ts). Changing membership is not served: a
 * single node has no group to change, and a cluster member joins by starting with the cluster's
 * --nats-url and --cluster-name (docs/api.md).
 */
import type { sendUnaryData, UntypedServiceImplementation } from '@grpc/grpc-js'
import type { EtcdDeps } from './deps.js'
import { unimplemented } from './errors.js'
import type { Message } from './proto.js'
import { unary } from './unary.js'
import { nameId } from '../cluster-info.js'

const SINGLE_MEMBER = 'kvlog is a single member; membership changes are not supported'

export function clusterService({ headers, config, clientUrl, cluster }: EtcdDeps): UntypedServiceImplementation {
  const notServed = (_call: unknown, callback: sendUnaryData<Message>) => callback(unimplemented(SINGLE_MEMBER))
  return {
    MemberList: unary(async () => ({
      // etcd's MemberList header carries no revision.
      header: headers.header(0),
      members:
        cluster === undefined
          ? [{ ID: headers.identity.memberId, name: config.memberName, peerURLs: [], clientURLs: [clientUrl()], isLearner: false }]
          : (await cluster.members()).map((m) => ({
              ID: nameId(cluster.clusterName, m.name),
              name: m.name,
              peerURLs: [],
              clientURLs: m.clientUrls,
              isLearner: false,
            })),
    })),
    MemberAdd: notServed,
    MemberRemove: notServed,
    MemberUpdate: notServed,
    MemberPromote: notServed,
  }
}
