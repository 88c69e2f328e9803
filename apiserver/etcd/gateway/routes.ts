/**
 * The gateway's paths, as etcd 3.4's rpc.proto (and v3lock/v3election) map them to RPCs. Every path is
 * served under /v3/ and under /v3beta/ (3.4 keeps the older prefix). Auth (/v3/auth/...) is served when
 * the Auth service is.
 */
/**
 * Bidi streams that end once the request body has ended and every answer is out, as etcd's do: its
 * LeaseKeepAlive returns when the client half-closes (so a POST of one keep-alive gets one answer, which
 * is how etcd3gw refreshes a lease), while its Watch stream stays open.
 */
export const ENDS_WITH_REQUEST_BODY = new Set(['LeaseKeepAlive'])

export const GATEWAY_ROUTES: Record<string, [service: string, method: string]> = {
  'auth/enable': ['etcdserverpb.Auth', 'AuthEnable'],
  'auth/disable': ['etcdserverpb.Auth', 'AuthDisable'],
  'auth/status': ['etcdserverpb.Auth', 'AuthStatus'],
  'auth/authenticate': ['etcdserverpb.Auth', 'Authenticate'],
  'auth/user/add': ['etcdserverpb.Auth', 'UserAdd'],
  'auth/user/get': ['etcdserverpb.Auth', 'UserGet'],
  'auth/user/list': ['etcdserverpb.Auth', 'UserList'],
  'auth/user/delete': ['etcdserverpb.Auth', 'UserDelete'],
  'auth/user/changepw': ['etcdserverpb.Auth', 'UserChangePassword'],
  'auth/user/grant': ['etcdserverpb.Auth', 'UserGrantRole'],
  'auth/user/revoke': ['etcdserverpb.Auth', 'UserRevokeRole'],
  'auth/role/add': ['etcdserverpb.Auth', 'RoleAdd'],
  'auth/role/get': ['etcdserverpb.Auth', 'RoleGet'],
  'auth/role/list': ['etcdserverpb.Auth', 'RoleList'],
  'auth/role/delete': ['etcdserverpb.Auth', 'RoleDelete'],
  'auth/role/grant': ['etcdserverpb.Auth', 'RoleGrantPermission'],
  'auth/role/revoke': ['etcdserverpb.Auth', 'RoleRevokePermission'],
  'kv/range': ['etcdserverpb.KV', 'Range'],
  'kv/put': ['etcdserverpb.KV', 'Put'],
  'kv/deleterange': ['etcdserverpb.KV', 'DeleteRange'],
  'kv/txn': ['etcdserverpb.KV', 'Txn'],
  'kv/compaction': ['etcdserverpb.KV', 'Compact'],
  watch: ['etcdserverpb.Watch', 'Watch'],
  'lease/grant': ['etcdserverpb.Lease', 'LeaseGrant'],
  'lease/revoke': ['etcdserverpb.Lease', 'LeaseRevoke'],
  'kv/lease/revoke': ['etcdserverpb.Lease', 'LeaseRevoke'],
  'lease/keepalive': ['etcdserverpb.Lease', 'LeaseKeepAlive'],
  'lease/timetolive': ['etcdserverpb.Lease', 'LeaseTimeToLive'],
  'kv/lease/timetolive': ['etcdserverpb.Lease', 'LeaseTimeToLive'],
  'lease/leases': ['etcdserverpb.Lease', 'LeaseLeases'],
  'kv/lease/leases': ['etcdserverpb.Lease', 'LeaseLeases'],
  'cluster/member/add': ['etcdserverpb.Cluster', 'MemberAdd'],
  'cluster/member/remove': ['etcdserverpb.Cluster', 'MemberRemove'],
  'cluster/member/update': ['etcdserverpb.Cluster', 'MemberUpdate'],
  'cluster/member/list': ['etcdserverpb.Cluster', 'MemberList'],
  'cluster/member/promote': ['etcdserverpb.Cluster', 'MemberPromote'],
  'maintenance/alarm': ['etcdserverpb.Maintenance', 'Alarm'],
  'maintenance/status': ['etcdserverpb.Maintenance', 'Status'],
  'maintenance/defragment': ['etcdserverpb.Maintenance', 'Defragment'],
  // etcd 3.4 maps Hash and HashKV to the same path; its gateway answers with Hash.
  'maintenance/hash': ['etcdserverpb.Maintenance', 'Hash'],
  'maintenance/snapshot': ['etcdserverpb.Maintenance', 'Snapshot'],
  'maintenance/transfer-leadership': ['etcdserverpb.Maintenance', 'MoveLeader'],
  'lock/lock': ['v3lockpb.Lock', 'Lock'],
  'lock/unlock': ['v3lockpb.Lock', 'Unlock'],
  'election/campaign': ['v3electionpb.Election', 'Campaign'],
  'election/proclaim': ['v3electionpb.Election', 'Proclaim'],
  'election/leader': ['v3electionpb.Election', 'Leader'],
  'election/observe': ['v3electionpb.Election', 'Observe'],
  'election/resign': ['v3electionpb.Election', 'Resign'],
}

/** grpc-gateway v1's HTTP status for a gRPC code (runtime.HTTPStatusFromCode). */
export function httpStatus(grpcCode: number): number {
  return [200, 408, 500, 400, 504, 404, 409, 403, 429, 412, 409, 400, 501, 500, 503, 500, 401][grpcCode] ?? 500
}
