#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Long cgroup paths end to end: a busy process in a k8s-v2-shaped cgroup
# (kubepods.slice/.../cri-containerd-<64 hex>.scope, ~200 bytes) and short
# ones that exit inside an interval in a docker-<64 hex>.scope. Both
# collection paths must report the whole path, the unit and the container
# id (they were cut at 128 bytes, and a systemd-driver container's id was
# dropped). Real cgroups, the real agent (--dump).
set -euo pipefail
AGENT=$1
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: creating cgroups needs root"; exit 77; }
v2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[ -n "$v2" ] || { echo "SKIP: no cgroup2 mount"; exit 77; }
cid=$(printf '%064x' $$)
did=$(printf 'd%063x' $$)
top=erg-lk-$$.slice
pod="$top/kubepods-burstable.slice/kubepods-burstable-pod0f3c2e0e_8f3b_4a9e_9d55_2b0b8b8d1f11.slice"
k8s="$pod/cri-containerd-$cid.scope"
dock="$top/docker-$did.scope"
work=$(mktemp -d /tmp/erg-lk.XXXXXX)
busy= churn=
cleanup() {
  [ -n "$churn" ] && kill "$churn" 2>/dev/null
  [ -n "$busy" ] && kill "$busy" 2>/dev/null
  sleep 0.3
  for d in "$k8s" "$dock"; do
    for p in $(cat "$v2/$d/cgroup.procs" 2>/dev/null); do echo "$p" >"$v2/cgroup.procs" || true; done
  done
  for d in "$k8s" "$pod" "$top/kubepods-burstable.slice" "$dock" "$top"; do
    for _ in 1 2 3 4 5; do rmdir "$v2/$d" 2>/dev/null && break; sleep 0.2; done
  done
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$v2/$k8s" "$v2/$dock"
sh -c 'echo $$ >"$1/cgroup.procs"; exec sha256sum /dev/zero' sh "$v2/$k8s" &
busy=$!
# Processes of ~30 ms, each inside one interval: the eBPF path gets their
# keys from the kernel's cgroup id after they exited.
sh -c 'echo $$ >"$1/cgroup.procs"; while :; do timeout 0.03 sha256sum /dev/zero; sleep 0.1; done' \
  sh "$v2/$dock" &
churn=$!
sleep 0.3
for collection in proc bpf; do
  if [ $collection = bpf ] && [ ! -r /sys/kernel/btf/vmlinux ]; then
    echo "SKIP (bpf part): kernel without BTF"; continue
  fi
  "$AGENT" --dump --count 3 --interval 1 --collection $collection >"$work/$collection.json" \
    2>"$work/$collection.log" || { cat "$work/$collection.log"; exit 1; }
  python3 - "$work/$collection.json" "$collection" "/$k8s" "$cid" "/$dock" "$did" "$busy" <<'PY'
import json, sys
path, coll, k8s, cid, dock, did, busy = sys.argv[1:8]
objs = [json.loads(l) for l in open(path)]
assert objs[0]["collection"] == coll, objs[0]
procs = [p for o in objs if o["type"] == "sample" for p in o["procs"]]
mine = [p for p in procs if p["pid"] == int(busy)]
assert mine, f"{coll}: busy pid {busy} not reported"
for p in mine:
    assert p["cgroup"] == k8s, (coll, len(k8s), p["cgroup"])
    assert p["unit"] == f"cri-containerd-{cid}.scope" and p["container"] == cid, (coll, p)
# /proc sees a 30 ms process only if a sweep finds it alive: not required.
short = [p for p in procs if p["cgroup"] == dock]
assert short or coll == "proc", f"{coll}: no process of {dock}"
for p in short:
    assert p["unit"] == f"docker-{did}.scope" and p["container"] == did, (coll, p)
exited = [p for p in short if p.get("exited")]
if coll == "bpf":
    assert exited, f"bpf: no exited process of {dock}"
print(f"{coll}: {len(mine)} samples of the k8s process ({len(k8s)}-byte path), "
      f"{len(short)} docker-scope processes ({len(exited)} exited), keys whole")
PY
done
