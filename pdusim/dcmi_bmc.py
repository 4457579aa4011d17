#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""SIMULATED BMC answering DCMI Get Power Reading over IPMI 2.0 lanplus.

A real IPMI stack, python3-pyghmi's BMC server (RMCP+, RAKP, cipher suite
3, sessions), subclassed to answer DCMI Get Power Reading (netfn 0x2C,
command 0x02, group extension 0xDC) with the power of a simulated node:

  --watts W           a fixed reading
  --truth FILE --node NAME
                      follows erg-pdusim's --truth CSV: the node's last row
  --control FILE      re-read at every request when it exists; lines
                      KEY=VALUE override the above: watts=W, active=0|1,
                      cc=0xC1 (answer with that completion code), short=1
                      (a truncated answer), delay=S (answer S seconds late),
                      min=W max=W avg=W period_ms=N time=UNIX
  --delay S --async-delay
                      every answer S seconds late, sent by a timer thread
                      so that the other sessions are served meanwhile (one
                      process then stands for many slow BMCs: each client
                      session its own BMC; tests/bench/bmc_scale.sh)

Prints "ready PORT" once listening. For erg's tests and demos
(erg-pdusim(1)); not a BMC. Run with Debian's python3 (pyghmi is a Debian
package).
"""

import argparse
import os
import struct
import sys
import threading
import time

import pyghmi.ipmi.bmc as bmc


def last_truth_watts(path, node):
    """The watts of NAME's last row in erg-pdusim's truth CSV, or None."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 65536))
            lines = f.read().decode(errors="replace").splitlines()
    except OSError:
        return None
    for line in reversed(lines[:-1] if lines and not lines[-1] else lines):
        cols = line.split(",")
        if len(cols) >= 5 and cols[1] == node:
            try:
                return float(cols[4])
            except ValueError:
                return None
    return None


def read_control(path):
    out = {}
    if not path:
        return out
    try:
        with open(path) as f:
            for line in f:
                if "=" in line:
                    k, v = line.split("=", 1)
                    out[k.strip()] = v.strip()
    except OSError:
        pass
    return out


class DcmiBmc(bmc.Bmc):
    def __init__(self, args):
        super().__init__({args.user: args.password}, port=args.port, address=args.address)
        self.args = args
        self.requests = 0

    def power_reading(self):
        a = self.args
        ctl = read_control(a.control)
        watts = a.watts
        if a.truth:
            w = last_truth_watts(a.truth, a.node)
            watts = w if w is not None else 0
        if "watts" in ctl:
            watts = float(ctl["watts"])
        delay = float(ctl.get("delay", a.delay))
        if delay > 0 and not a.async_delay:
            time.sleep(delay)
        if "cc" in ctl:
            return int(ctl["cc"], 0), []
        cur = max(0, min(65535, int(round(watts))))
        active = int(ctl.get("active", "1"))
        data = [0xDC] + list(struct.pack(
            "<HHHHIIB", cur,
            int(float(ctl.get("min", cur))), int(float(ctl.get("max", cur))),
            int(float(ctl.get("avg", cur))),
            int(float(ctl.get("time", time.time()))) & 0xFFFFFFFF,
            int(ctl.get("period_ms", 1000)), 0x40 if active else 0))
        if ctl.get("short") == "1":
            data = data[:9]
        return 0, data

    def handle_raw_request(self, request, session):
        if request["netfn"] == 0x2C and request["command"] == 0x02 and \
                list(request["data"][:1]) == [0xDC]:
            self.requests += 1
            code, data = self.power_reading()
            if self.args.async_delay and self.args.delay > 0:
                t = threading.Timer(self.args.delay, session.send_ipmi_response,
                                    kwargs={"data": data, "code": code})
                t.daemon = True
                t.start()
                return None
            return session.send_ipmi_response(data=data, code=code)
        return super().handle_raw_request(request, session)

    def get_power_state(self):
        return "on"

    def is_active(self):
        return False


def main():
    p = argparse.ArgumentParser(prog="dcmi_bmc.py", description=__doc__.split("\n")[0])
    p.add_argument("--port", type=int, default=623)
    p.add_argument("--address", default="127.0.0.1")
    p.add_argument("--user", default="admin")
    p.add_argument("--password", default="password")
    p.add_argument("--password-file", help="the password's first line (instead of --password)")
    p.add_argument("--watts", type=float, default=250.0)
    p.add_argument("--truth")
    p.add_argument("--node")
    p.add_argument("--control")
    p.add_argument("--delay", type=float, default=0.0)
    p.add_argument("--async-delay", action="store_true",
                   help="answer --delay late from a timer, serving other sessions meanwhile")
    a = p.parse_args()
    if a.password_file:
        with open(a.password_file) as f:
            a.password = f.readline().rstrip("\r\n")
    if a.truth and not a.node:
        p.error("--truth needs --node")
    b = DcmiBmc(a)
    print("ready", a.port, flush=True)
    b.listen()


if __name__ == "__main__":
    sys.exit(main())
