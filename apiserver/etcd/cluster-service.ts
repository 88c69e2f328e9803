/**
 * etcd's Cluster service. MemberList answers with this member, or in cluster mode with every member of the
 * roster or whose record is alive (ids derived from the names: cluster-info.ts). A cluster member joins by starting with
 * the cluster's --nats-url and --cluster-name; MemberRemove takes a member off the roster whose majority
 * acknowledges writes (a member gone for good). MemberAdd registers a member by its peer URLs before it
 * starts (the kvlog member started with one of them in --advertise-peer-urls joins as that member, with
 * the id MemberAdd answered), as a learner if asked: it applies the log but counts toward no majority
 * until MemberPromote, which waits until it has caught up (log/jetstream/membership.ts). MemberUpdate
 * gives a member new peer URLs: an added one is then taken by the member that starts with one of them; a
 * started one is listed with them (members talk through NATS: a peer URL only names a member). No change
 * is served on a single node (docs/api.md).
 *
 * With auth enabled, as etcd: every membership change (MemberAdd, MemberRemove, MemberUpdate,
 * MemberPromote) needs role root, checked before anything else (also where kvlog does not serve it);
 * MemberList needs nothing.
 */
import type { UntypedServiceImplementation } from '@grpc/grpc-js'
import type { EtcdDeps } from './deps.js'
import { KvlogError } from '../../log/errors.js'
import { unimplemented } from './errors.js'
import { callerOf } from './caller.js'
import { unary } from './unary.js'
import { memberIdOf, type ClusterInfo, type ClusterMember } from '../cluster-info.js'

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
  /** The member a change (asked by root) names by its id, as MemberList lists it; etcd's "member not found" if none. */
  const adminMember = async (request: { ID?: unknown }, call: Parameters<typeof callerOf>[1]) => {
    auth.checkAdmin(callerOf(auth, call))
    const id = String(request.ID)
    const member = cluster === undefined ? undefined : (await clusterMembers(cluster)).find((m) => m.ID === id)
    if (member === undefined) throw new KvlogError('MEMBER_NOT_FOUND', `no member has id ${id}`)
    return member
  }
  return {
    // etcd's MemberList header carries no revision.
    MemberList: unary(async () => ({ header: headers.header(0), members: await members() })),
    MemberAdd:
      cluster === undefined
        ? notServed
        : unary(async (request, call) => {
            auth.checkAdmin(callerOf(auth, call))
            const peerURLs = Array.isArray(request.peerURLs) ? request.peerURLs.map(String) : []
            const isLearner = request.isLearner === true
            const ID = await cluster.addMember(peerURLs, isLearner)
            return { header: headers.header(0), member: { ID, name: '', peerURLs, clientURLs: [], isLearner }, members: await members() }
          }),
    MemberRemove:
      cluster === undefined
        ? notServed
        : unary(async (request, call) => {
            const member = await adminMember(request, call)
            await cluster.removeMember(member.name, member.name === '' ? member.ID : undefined)
            return { header: headers.header(0), members: (await members()).filter((m) => m.ID !== member.ID) }
          }),
    MemberUpdate:
      cluster === undefined
        ? notServed
        : unary(async (request, call) => {
            const member = await adminMember(request, call)
            const peerURLs = Array.isArray(request.peerURLs) ? request.peerURLs.map(String) : []
            await cluster.updateMember(member.name, member.name === '' ? member.ID : undefined, peerURLs)
            return { header: headers.header(0), members: await members() }
          }),
    MemberPromote:
      cluster === undefined
        ? notServed
        : unary(async (request, call) => {
            const member = await adminMember(request, call)
            // An added member that has not started has nothing of the log yet.
            if (member.name === '' && member.isLearner) throw new KvlogError('LEARNER_NOT_READY', 'the learner has not started yet')
            await cluster.promoteMember(member.name)
            return { header: headers.header(0), members: await members() }
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
    .map((name): ClusterMember => ({ name, clientUrls: cluster.lastClientUrls(name) }))
  const started = [...live, ...down]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((m) => ({
      ID: memberIdOf(cluster, m.name),
      name: m.name,
      peerURLs: cluster.updatedPeerUrls(m.name) ?? m.peerUrls ?? [],
      clientURLs: m.clientUrls,
      isLearner: cluster.learners.includes(m.name),
    }))
  // Added and not started: no name yet, as etcd lists an unstarted member.
  const pending = cluster.pendingMembers.map((p) => ({ ID: p.id, name: '', peerURLs: p.peerUrls, clientURLs: [], isLearner: p.learner }))
  return [...started, ...pending]
}
