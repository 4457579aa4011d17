#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# erg-pdusim over Modbus TCP read by a real, independent client (mbpoll):
# power is within the model's range and the joule counter advances at the
# rate of the power shown.
set -euo pipefail
PDUSIM=$1
. "$(dirname "$0")/lib.sh"
erg_need mbpoll
port=$(free_port)
"$PDUSIM" --modbus 127.0.0.1:$port --node a --node b --idle 80 --slope 50 --update 0.2 &
sim=$!
trap 'kill $sim 2>/dev/null || true' EXIT
wait_port "$port"
read_float() { mbpoll -m tcp -p "$port" -a "$1" -t 3:float -B -r "$2" -c 1 -1 127.0.0.1 | awk -F'\t' '/^\[/ {print $2}'; }
read_u32() { mbpoll -m tcp -p "$port" -a "$1" -t 3:int -B -r "$2" -c 1 -1 127.0.0.1 | awk -F'\t' '/^\[/ {print $2}'; }
w=$(read_float 2 53)
e0=$(read_u32 1 4097)
sleep 2
e1=$(read_u32 1 4097)
python3 - "$w" "$e0" "$e1" <<'PY'
import sys
w, e0, e1 = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
assert 80 <= w <= 130, f"unit 2 shows {w} W, outside idle..idle+slope"
rate = (e1 - e0) / 2.0
assert 70 <= rate <= 140, f"counter advanced {rate} J/s"
print(f"ok: {w:.1f} W, counter {rate:.1f} J/s")
PY
# A unit id that is not a node gets a Modbus exception, not a value.
if mbpoll -m tcp -p "$port" -a 9 -t 3:float -B -r 53 -c 1 -1 127.0.0.1 >/dev/null 2>&1; then
  echo "FAIL: unit 9 answered"; exit 1
fi
