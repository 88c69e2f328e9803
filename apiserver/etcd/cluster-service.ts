/**
 * etcd's Cluster service for one member. MemberList answers with this member; changing membership is not
 * served: kvlog is a single member with no raft group to change (docs/api.md).
 */
import type { sendUnaryData, UntypedServiceImplementation } from '@grpc/grpc-js'
import type { EtcdDeps } from './deps.js'
import { unimplemented } from './errors.js'
import type { Message } from './proto.js'
import { unary } from './unary.js'

const SINGLE_MEMBER = 'kvlog is a single member; membership changes are not supported'

export function clusterService({ headers, config, clientUrl }: EtcdDeps): UntypedServiceImplementation {
  const notServed = (_call: unknown, callback: sendUnaryData<Message>) => callback(unimplemented(SINGLE_MEMBER))
  return {
    MemberList: unary(() => ({
      // etcd's MemberList header carries no revision.
      header: headers.header(0),
      members: [{ ID: headers.identity.memberId, name: config.memberName, peerURLs: [], clientURLs: [clientUrl()], isLearner: false }],
    })),
    MemberAdd: notServed,
    MemberRemove: notServed,
    MemberUpdate: notServed,
    MemberPromote: notServed,
  }
}
