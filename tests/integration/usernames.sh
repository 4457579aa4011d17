#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# User names end to end (issue 15). A real user (useradd, removed on exit)
# and a uid whose passwd entry is hostile (markup, a control byte, invalid
# UTF-8, a leading '[': seen only by the agent, through a copy of
# /etc/passwd bind-mounted in the agent's own mount namespace) run busy
# processes in a cgroup that one erg-agent --scope reports as node "un1".
# The agent resolves the names on the node and sends them; ergd keeps them
# sanitised beside the uid-keyed archives. Checked: /metrics labels the user
# keys with user="<name>" (promtool-valid), erg report --by user shows the
# names and uids, and the node page names both users, escaped.
set -euo pipefail
ERGD=$1 AGENT=$2 PDUSIM=$3 ERG=$4
. "$(dirname "$0")/lib.sh"
erg_need useradd userdel setpriv unshare mount promtool curl python3
erg_cgroup2
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (useradd, cgroups, bind mount)"; exit 77; }
tag=erg-un-$$
user=ergu$$
evil_uid=$((61000 + $$ % 3000))
cg_cleanup() {
  erg_cg_remove "$tag"
  userdel "$user" 2>/dev/null || true
}
erg_setup un
ERG_CLEANUP=cg_cleanup
mkdir "$CG2/$tag" 2>/dev/null || { echo "SKIP: cannot create cgroup $CG2/$tag"; exit 77; }
useradd --system --no-create-home --no-user-group --shell /usr/sbin/nologin "$user"
uid=$(id -u "$user")
getent passwd "$evil_uid" >/dev/null && { echo "SKIP: uid $evil_uid exists"; exit 77; }
cp /etc/passwd "$work/passwd"
printf '[<script>x\001y\377:x:%s:%s::/:/bin/false\n' "$evil_uid" "$evil_uid" >>"$work/passwd"
chmod 644 "$work/passwd"
evil_shown='?<script>x?y?' # what ergd keeps: '[' -> '?', control and invalid bytes -> '?'

erg_ports
erg_ergd_conf <<CONF
step_seconds = 2
settle_steps = 1
poll_seconds = 0.5
page_interval_seconds = 2
key_min_share = 0
$(erg_sim_meter)
[node.un1]
power = sim:1
idle_watts = 40
CONF
erg_start_pdusim --node un1=$SIMPREFIX/$tag --idle 40 --slope 100 --update 0.5
erg_start_ergd
# The agent alone sees the crafted passwd (its own mount namespace).
unshare -m sh -c 'mount --bind "$0" /etc/passwd && exec "$@"' "$work/passwd" \
  "$AGENT" --node un1 --collector "tcp://127.0.0.1:$ZP" --scope "/$tag" --interval 0.5 \
  >>"$work/agent-un1.log" 2>&1 &
pids+=($!)
sleep 2
in_cg() { erg_in_cg "$tag" "$@"; }
in_cg setpriv --reuid="$uid" --regid=65534 --clear-groups timeout 14 sha256sum /dev/zero & pids+=($!)
in_cg setpriv --reuid="$evil_uid" --regid=65534 --clear-groups timeout 14 md5sum /dev/zero & pids+=($!)

metrics=$work/metrics.txt
for _ in $(seq 1 60); do
  sleep 0.5
  curl -sf "http://127.0.0.1:$HP/metrics" -o "$metrics" || continue
  grep -qF "kind=\"user\",key=\"$uid\",user=\"$user\"}" "$metrics" &&
    grep -qF "kind=\"user\",key=\"$evil_uid\",user=\"$evil_shown\"}" "$metrics" && break
done
grep -qF "erg_key_energy_joules_total{node=\"un1\",kind=\"user\",key=\"$uid\",user=\"$user\"}" "$metrics" ||
  { echo "FAIL: /metrics has no user=\"$user\" label"; grep 'kind="user"' "$metrics" || true
    tail -20 "$work/ergd.log" "$work/agent-un1.log"; exit 1; }
grep -qF "key=\"$evil_uid\",user=\"$evil_shown\"}" "$metrics" ||
  { echo "FAIL: /metrics: hostile name not sanitised as expected"; grep 'kind="user"' "$metrics" | cat -v; exit 1; }
grep -qF 'erg_agent_user_names_sanitized_total{node="un1"} 1' "$metrics" ||
  { echo "FAIL: sanitised names not counted"; grep user_names "$metrics"; exit 1; }
promtool check metrics <"$metrics"
echo "ok: /metrics user labels, promtool-valid"

sleep 14 # the processes end; their cells are written
curl -sf "http://127.0.0.1:$HP/metrics" -o "$metrics"
"$ERG" report --data-dir "$work/data" --from -5m --by user --format csv >"$work/report.csv"
python3 - "$work/report.csv" "$user" "$uid" "$evil_shown" "$evil_uid" <<'PY'
import csv, sys
path, user, uid, evil, evil_uid = sys.argv[1:]
rows = {(r["user"], r["uid"]): r for r in csv.DictReader(open(path, newline=""))}
for name, u in ((user, uid), (evil, evil_uid)):
    r = rows.get((name, u))
    assert r and float(r["energy_joules"]) > 0, f"report: no row ({name!r}, {u}) in {list(rows)}"
print("ok: erg report --by user names", user, "and the hostile uid")
PY
page=$work/data/www/node-hour-un1.html
for _ in $(seq 1 20); do
  grep -qF "$user ($uid)" "$page" 2>/dev/null && break
  sleep 0.5
done
grep -qF "$user ($uid)" "$page" || { echo "FAIL: page does not name $user"; grep users "$page"; exit 1; }
grep -qF "?&lt;script&gt;x?y? ($evil_uid)" "$page" && ! grep -q '<script' "$page" ||
  { echo "FAIL: page: hostile name not escaped"; grep users "$page" | cat -v; exit 1; }
echo "ok: node page names both users, escaped"
