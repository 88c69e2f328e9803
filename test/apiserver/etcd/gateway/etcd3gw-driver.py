"""Drives an etcd v3 JSON gateway with OpenStack's etcd3gw client (Debian python3-etcd3gw).

Usage: python3 etcd3gw-driver.py HOST PORT. Prints one JSON array of [label, observation] pairs on stdout.
Observations keep only what two fresh stores must agree on: values, revisions, booleans, events; lease ids
and lock uuids (random by nature) are left out, remaining TTLs are checked against their bounds.
"""

import json
import queue
import sys
import threading

import etcd3gw
from etcd3gw import exceptions


def text(values):
    """get() answers values; get_prefix() and get_all() answer (value, metadata) pairs."""
    out = []
    for v in values:
        if isinstance(v, tuple):
            value, meta = v
            meta = dict(meta, key=meta["key"].decode("latin-1"))
            out.append([value.decode("latin-1"), meta])
        else:
            out.append(v.decode("latin-1"))
    return out


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    steps = []

    def record(label, observation):
        steps.append([label, observation])

    def error_name(fn):
        try:
            fn()
            return "no error"
        except exceptions.Etcd3Exception as ex:
            return type(ex).__name__

    # etcd3gw's default prefix is /v3alpha/, which etcd 3.4 no longer serves.
    default = etcd3gw.client(host=host, port=port)
    record("default /v3alpha/ prefix", error_name(lambda: default.get("a")))

    c = etcd3gw.Etcd3Client(host=host, port=port, api_path="/v3/")
    record("status has a version", "version" in c.status())
    record("members", len(c.members()))

    # KV
    record("put a", c.put("a", "1"))
    record("get a", text(c.get("a")))
    record("put a again", c.put("a", "2"))
    values = c.get("a", metadata=True)
    record("get a with metadata", [[v.decode(), m] for v, m in values])
    record("get absent", text(c.get("absent")))
    for k in ("p/1", "p/2", "p/3", "q"):
        c.put(k, "v-" + k)
    record("get_prefix p/", text(c.get_prefix("p/")))
    record("get_prefix p/ descending by key", text(c.get_prefix("p/", sort_order="descend", sort_target="key")))
    record("get_all", text(c.get_all()))
    record("delete p/2", c.delete("p/2"))
    record("delete absent", c.delete("absent"))
    record("get_prefix p/ after delete", text(c.get_prefix("p/")))
    record("delete_prefix p/", c.delete_prefix("p/"))
    record("get_prefix p/ after delete_prefix", text(c.get_prefix("p/")))

    # Txn: replace is a compare-and-swap on the value, create compares create_revision with 0.
    record("replace with the wrong value", c.replace("a", "1", "3"))
    record("replace with the right value", c.replace("a", "2", "3"))
    record("get a after replace", text(c.get("a")))
    record("create a (exists)", c.create("a", "x"))
    record("create n (new)", c.create("n", "x"))
    record("create n again", c.create("n", "y"))
    record("get n", text(c.get("n")))

    # Watch: events of puts and deletes made after the watch starts.
    events, cancel = c.watch_prefix("w/")
    seen = queue.Queue()

    def consume():
        for event in events:
            seen.put(event)

    threading.Thread(target=consume, daemon=True).start()
    c.put("w/1", "a")
    c.put("w/2", "b")
    c.put("other", "c")
    c.delete("w/1")
    got = []
    try:
        while len(got) < 3:
            e = seen.get(timeout=10)
            e["kv"]["key"] = e["kv"]["key"].decode()
            if "value" in e["kv"]:
                e["kv"]["value"] = e["kv"]["value"].decode()
            got.append(e)
    except queue.Empty:
        pass
    cancel()
    record("watch_prefix w/ events", got)

    # Lease: keys attached to a lease go away when it is revoked.
    lease = c.lease(ttl=60)
    record("lease id is positive", lease.id > 0)
    record("put l/1 with lease", c.put("l/1", "v", lease=lease))
    record("put l/2 with lease", c.put("l/2", "v", lease=lease))
    record("lease refresh", lease.refresh())
    ttl = lease.ttl()
    record("lease ttl within (50, 60]", 50 < ttl <= 60)
    record("lease keys", sorted(k.decode() for k in lease.keys()))
    record("lease revoke", lease.revoke())
    record("get_prefix l/ after revoke", text(c.get_prefix("l/")))
    record("lease ttl after revoke", lease.ttl())
    record("lease refresh after revoke", lease.refresh())

    # Lock: a txn that creates the lock key under a fresh lease, released by a compare on its uuid.
    first = c.lock("job", ttl=60)
    second = c.lock("job", ttl=60)
    record("lock acquire", first.acquire())
    record("lock is_acquired", first.is_acquired())
    record("other lock acquire while held", second.acquire())
    record("other lock is_acquired", second.is_acquired())
    record("other lock release (not holder)", second.release())
    record("lock refresh", first.refresh())
    record("lock release", first.release())
    record("lock is_acquired after release", first.is_acquired())
    record("other lock acquire after release", second.acquire())
    record("other lock release", second.release())
    with c.lock("ctx", ttl=60) as held:
        record("lock as a context manager", held.is_acquired())
    record("lock key gone after the context", text(c.get_prefix("/locks/ctx")))

    record("status still answers", "version" in c.status())
    print(json.dumps(steps, default=lambda b: b.decode("latin-1")))


if __name__ == "__main__":
    main()
