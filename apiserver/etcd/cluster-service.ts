/**
 * etcd's Cluster service. MemberList answers with this member, or in cluster mode with every member of the
 * roster or whose record is alive (ids derived from the names: cluster-info.ts). A cluster member joins by starting with
 * the cluster's --nats-url and --cluster-name; MemberRemove takes a member off the roster whose majority
 * acknowledges writes (a member gone for good); MemberPromote answers as etcd does for a member that is not
 * a learner (kvlog has none). Other membership changes are not served, nor is any on a single node
 * (docs/api.md).
 *
 * With auth enabled, as etcd: every membership change (MemberAdd, MemberRemove, MemberUpdate,
 * MemberPromote) needs role root, checked before anything else (also where kvlog does not serve it);
 * MemberList needs nothing.
 */
import type { UntypedServiceImplementation } from '@grpc/grpc-js'
import type { EtcdDeps } from './deps.js'
import { status } from '@grpc/grpc-js'
import { grpcError, unimplemented } from './errors.js'
import { callerOf } from './caller.js'
import { unary } from './unary.js'
import { memberIdOf, type ClusterInfo } from '../cluster-info.js'

const SINGLE_MEMBER = 'kvlog is a single member; membership changes are not supported'

export function clusterService({ headers, config, clientUrl, cluster, auth }: EtcdDeps): UntypedServiceImplementation {
  const notServed = unary((_request, call) => {
    auth.checkAdmin(callerOf(auth, call))
    throw unimplemented(SINGLE_MEMBER)
  })
  const members = async () =>
    cluster === undefined
      ? [{ ID: headers.identity.memberId, name: config.memberName, peerURLs: [], clientURLs: [clientUrl()], isLearner: false }]
      : await clusterMembers(cluster)
  /** The name of the member a change (asked by root) names by its id; etcd's "member not found" if none. */
  const adminNamed = async (request: { ID?: unknown }, call: Parameters<typeof callerOf>[1]): Promise<string> => {
    auth.checkAdmin(callerOf(auth, call))
    const id = String(request.ID)
    const name = cluster === undefined ? undefined : (await clusterMembers(cluster)).find((m) => m.ID === id)?.name
    if (name === undefined) throw grpcError(status.NOT_FOUND, 'etcdserver: member not found')
    return name
  }
  return {
    // etcd's MemberList header carries no revision.
    MemberList: unary(async () => ({ header: headers.header(0), members: await members() })),
    MemberAdd: notServed,
    MemberRemove:
      cluster === undefined
        ? notServed
        : unary(async (request, call) => {
            const name = await adminNamed(request, call)
            await cluster.removeMember(name)
            return { header: headers.header(0), members: (await members()).filter((m) => m.name !== name) }
          }),
    MemberUpdate: notServed,
    // Every kvlog member votes (counts toward the durable majority) from its first start: there are no
    // learners, so etcd's answer for promoting a voting member is the answer for every member.
    MemberPromote:
      cluster === undefined
        ? notServed
        : unary(async (request, call) => {
            await adminNamed(request, call)
            throw grpcError(status.FAILED_PRECONDITION, 'etcdserver: can only promote a learner member')
          }),
  }
}

/**
 * The members with a live record, and those on the roster that are down with the client URLs last seen
 * for them (as etcd lists a dead member: clients that dial them report it unreachable), by name.
 */
async function clusterMembers(cluster: ClusterInfo) {
  const live = await cluster.members()
  const down = cluster.roster
    .filter((name) => !live.some((m) => m.name === name))
    .map((name) => ({ name, clientUrls: cluster.lastClientUrls(name) }))
  return [...live, ...down]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((m) => ({ ID: memberIdOf(cluster, m.name), name: m.name, peerURLs: [], clientURLs: m.clientUrls, isLearner: false }))
}
