#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""erg report / erg graph against a store built by report_fixture, checked
against an independent integration of `rrdtool fetch` output (issue 7: energy
within 0.5 %). usage: test_report.py REPORT_MAIN REPORT_FIXTURE"""
import csv, io, json, math, os, shutil, subprocess, sys, tempfile, time

MAIN, FIXTURE = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def close(a, b, rel=0.005):
    return b != 0 and abs(a - b) / abs(b) <= rel


def report(*args, expect=0):
    p = subprocess.run([MAIN, "report", "--data-dir", DIR, *args], capture_output=True, text=True)
    if p.returncode != expect:
        print(p.stdout, p.stderr, file=sys.stderr)
    check(p.returncode == expect, f"exit {expect}: report {' '.join(args)}")
    return p


def rows_csv(*args):
    return list(csv.DictReader(io.StringIO(report("--format", "csv", *args).stdout)))


def fetch_energy(path, ds, start, end, res):
    """Σ value × step over known rows of `rrdtool fetch` in (start, end]."""
    out = subprocess.run(["rrdtool", "fetch", path, "AVERAGE", "-r", str(res), "-s", str(start),
                          "-e", str(end)], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    col = lines[0].split().index(ds)
    times = [int(l.split(":")[0]) for l in lines[2:] if ":" in l]
    step = times[1] - times[0]
    total = 0.0
    for l in lines[2:]:
        if ":" not in l:
            continue
        t, vals = l.split(":", 1)
        v = float(vals.split()[col])
        if start < int(t) <= end and not math.isnan(v):
            total += v * step
    return total, step


if not shutil.which("rrdtool"):
    print("rrdtool not installed")
    sys.exit(77)

tmp = tempfile.mkdtemp(prefix="erg-report-")
DIR = os.path.join(tmp, "store")
now = int(time.time())
a_end, b_end = map(int, subprocess.run([FIXTURE, DIR, str(now)], capture_output=True, text=True,
                                       check=True).stdout.split())
a_start, b_start = a_end - 7200, b_end - 7200
nodes = os.path.join(DIR, "nodes")
two_dir = [d for d in os.listdir(nodes) if d != "n1"][0]
n1_rrd, two_rrd = (os.path.join(nodes, d, "node.rrd") for d in ("n1", two_dir))
two_truth = sum(150 + 50 * math.sin(2 * math.pi * (t % 600) / 600)
                for t in range(b_start + 65, b_end + 1, 5)) * 5

# Recent window: the 5 s archive.
rows = {r["node"]: r for r in rows_csv("--from", str(b_start), "--to", str(b_end))}

# The text table (issue 36): a terminal's default; a pipe gets CSV. Numbers
# in fixed point, one unit per column (in the header), sacct's dashes.
import pty
piped = report("--from", str(b_start), "--to", str(b_end)).stdout
check(piped.startswith("node,energy_kwh,") and "e-0" not in piped and "e+0" not in piped,
      f"report piped: CSV in fixed point: {piped[:200]!r}")
mfd, sfd = pty.openpty()
tp = subprocess.run([MAIN, "report", "--data-dir", DIR, "--from", str(b_start), "--to", str(b_end)],
                    stdout=sfd, stderr=subprocess.PIPE, text=True)
os.close(sfd)
tty_out = b""
while True:
    try:
        chunk = os.read(mfd, 65536)
    except OSError:
        break
    if not chunk:
        break
    tty_out += chunk
os.close(mfd)
tty_lines = tty_out.decode().replace("\r\n", "\n").splitlines()
hdr = tty_lines[2].split() if len(tty_lines) > 2 else []
check(tp.returncode == 0 and len(tty_lines) >= 6 and tty_lines[0].startswith("Energy by node, ")
      and hdr[:1] == ["Node"] and hdr[1] in ("Energy[Wh]", "Energy[kWh]")
      and set(tty_lines[3].replace(" ", "")) == {"-"},
      f"report on a terminal: a table: {tty_lines[:6]}")
j_per = {"Energy[Wh]": 3600, "Energy[kWh]": 3.6e6}.get(hdr[1] if len(hdr) > 1 else "", 1)
tab = {}
for line in tty_lines[4:]:
    name = "node two" if line.startswith("node two") else line.split()[0]
    tab[name] = line[len(name):].split()
n1 = rows["n1"]
known = int(n1["known_s"])
check(set(tab) == {"n1", "node two"}
      and abs(float(tab["n1"][0]) * j_per - float(n1["energy_joules"])) <= 0.0005 * j_per + 0.1
      and tab["n1"][1] == n1["mean_w"] and tab["n1"][5] == f"{100 * float(n1['share']):.1f}%"
      and tab["n1"][6] == f"{known // 3600:02d}:{known % 3600 // 60:02d}:{known % 60:02d}",
      f"report table: n1's energy in the header's unit, MeanW, Share %, Known as sacct's elapsed: {tab} vs {n1}")
tj = report("--format", "table", "--by", "job", "--from", str(b_start), "--to", str(b_end)).stdout
tj_lines = tj.splitlines()
check(tj_lines[2].split()[:2] == ["Node", "Job"] and tj_lines[2].split()[2].startswith("Energy[")
      and any(l.split()[:2] == ["*", "1234"] for l in tj_lines[4:]),
      f"report --format table --by job: {tj_lines[:8]}")
check(set(rows) == {"n1", "node two"}, "node rows, original name from the name file")
for name, path in (("n1", n1_rrd), ("node two", two_rrd)):
    ref, step = fetch_energy(path, "measured", b_start, b_end, 5)
    got = float(rows[name]["energy_joules"])
    check(step == 5 and rows[name]["step_s"] == "5", f"{name}: recent period read at 5 s")
    check(close(got, ref), f"{name}: energy {got:.0f} J vs rrdtool fetch {ref:.0f} J")
    # Fixed point, 6 decimals: to the mWh (3.6 J; rounding at most half of it).
    check(abs(float(rows[name]["energy_kwh"]) * 3.6e6 - got) <= 1.85
          and len(rows[name]["energy_kwh"].split(".")[1]) == 6, f"{name}: kWh = J / 3.6e6")
check(close(float(rows["n1"]["energy_joules"]), 720000), "n1: 100 W x 2 h")
check(close(float(rows["n1"]["idle_kwh"]), 0.08) and close(float(rows["n1"]["dynamic_kwh"]), 0.12),
      "n1: idle and dynamic energy")
check(close(float(rows["node two"]["energy_joules"]), two_truth), "node two: energy vs formula")
check(close(float(rows["node two"]["peak_w"]), 200, 0.01), "node two: peak from MAX")
check(close(float(rows["n1"]["mean_w"]), 100, 1e-6), "n1: mean W")
check(close(float(rows["node two"]["known_s"]), 7200 - 60, 1e-6), "node two: unknown minute left out")
check(close(float(rows["n1"]["share"]) + float(rows["node two"]["share"]), 1, 1e-6), "shares add up")

# Three days back: only the 1-min archive still holds it.
rows = {r["node"]: r for r in rows_csv("--from", str(a_start), "--to", str(a_end))}
for name, path in (("n1", n1_rrd), ("node two", two_rrd)):
    ref, step = fetch_energy(path, "measured", a_start, a_end, 60)
    got = float(rows[name]["energy_joules"])
    check(step == 60 and rows[name]["step_s"] == "60", f"{name}: old period read at 60 s")
    check(close(got, ref), f"{name}: old energy {got:.0f} J vs rrdtool fetch {ref:.0f} J")
check(close(float(rows["n1"]["energy_joules"]), 720000), "n1: old window 100 W x 2 h")

# Relative times and ISO times.
rows = {r["node"]: r for r in rows_csv("--from", "-7d", "--to", "now")}
check(close(float(rows["n1"]["energy_joules"]), 1440000), "-7d..now: both windows of n1")
rows = {r["node"]: r for r in rows_csv("--from", "-12h", "--to", "now")}
check(close(float(rows["n1"]["energy_joules"]), 720000) and rows["n1"]["step_s"] == "5", "-12h..now")
iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(b_start))
rows = {r["node"]: r for r in rows_csv("--from", iso, "--to", str(b_end), "--node", "n1")}
check(list(rows) == ["n1"] and close(float(rows["n1"]["energy_joules"]), 720000), "ISO --from, --node")

# By command: names round-trip through CSV; shares of the node's energy.
text = report("--from", str(b_start), "--to", str(b_end), "--by", "command",
              "--cost-per-kwh", "0.25", "--currency", "EUR", "--co2-g-per-kwh", "400").stdout
check(text.startswith("node,command,energy_kwh,energy_joules,mean_w,peak_w,share_of_node"), "CSV header")
rows = {(r["node"], r["command"]): r for r in csv.DictReader(io.StringIO(text))}
check(("n1", 'a,b "q"') in rows, "comma and quote round-trip in CSV")
check(("n1", "<script>alert(1)</script>") in rows, "hostile name kept in CSV")
check(close(float(rows[("n1", "sleep")]["share_of_node"]), 0.1), "sleep: 10 % of n1")
check(close(float(rows[("n1", "sleep")]["energy_joules"]), 72000), "sleep: 10 W x 2 h")
burn_ref, _ = fetch_energy(os.path.join(nodes, two_dir, "command", "burn.rrd"), "watts",
                           b_start, b_end, 5)
check(close(float(rows[("node two", "burn")]["energy_joules"]), burn_ref), "burn vs rrdtool fetch")
c = rows[("n1", "sleep")]
check(close(float(c["cost"]), 0.02 * 0.25) and c["currency"] == "EUR", "cost column")
check(close(float(c["co2_grams"]), 0.02 * 400), "CO2 column")

# The same factors from ergd's config file ([collector] data_dir, [report]);
# a flag overrides the file.
conf = os.path.join(tmp, "ergd.conf")
with open(conf, "w") as f:
    f.write(f"[collector]\ndata_dir = {DIR}\n[node.x]\npower = m:1\n"
            "[report]\ncost_per_kwh = 0.25\ncurrency = EUR\nco2_g_per_kwh = 400\n")
def report_conf(*args):
    return subprocess.run([MAIN, "report", "--config", conf, "--from", str(b_start), "--to",
                           str(b_end), "--by", "command", *args], capture_output=True, text=True)
p = report_conf()
check(p.returncode == 0, f"report --config: {p.stderr}")
c = {(r["node"], r["command"]): r for r in csv.DictReader(io.StringIO(p.stdout))}[("n1", "sleep")]
check(close(float(c["cost"]), 0.02 * 0.25) and c["currency"] == "EUR"
      and close(float(c["co2_grams"]), 0.02 * 400), "cost and CO2 from [report]")
p = report_conf("--cost-per-kwh", "0.5")
c = {(r["node"], r["command"]): r for r in csv.DictReader(io.StringIO(p.stdout))}[("n1", "sleep")]
check(close(float(c["cost"]), 0.02 * 0.5), "--cost-per-kwh overrides [report]")
with open(conf, "a") as f:
    f.write("co2_per_kwh = 1\n")
p = report_conf()
check(p.returncode == 1 and "unknown key 'co2_per_kwh' in [report]" in p.stderr
      and conf in p.stderr, f"bad [report] key: {p.stderr}")

doc = json.loads(report("--from", str(b_start), "--to", str(b_end), "--by", "command",
                        "--format", "json").stdout)
check(len(doc["rows"]) == 8 and doc["by"] == "command",
      "JSON parses, 4 command rows and per node [idle], [unattributed]")
check(any(r["command"] == "<script>alert(1)</script>" for r in doc["rows"]), "JSON keeps names")

html = report("--from", str(b_start), "--to", str(b_end), "--by", "command", "--format", "html",
              "--out", os.path.join(tmp, "r.html")).stdout
html = open(os.path.join(tmp, "r.html")).read()
check("<script" not in html.lower() and "&lt;script&gt;" in html, "HTML escapes names")

# Errors.
p = report("--from", "yesterday-ish", expect=1)
check("yesterday-ish" in p.stderr, "bad --from names the value")
report("--from", "2026-13-01", expect=1)
report("--from", "-7", expect=1)
report("--to", "2026-02-30", expect=1)
report("--bogus", expect=1)
p = report("--by", "container", expect=2)
check("no container archives under" in p.stderr, "--by container without container archives")

# By job: cluster-wide rows from cluster/job (node "*"), within 0.5 % of
# rrdtool fetch of the cluster archive and of the per-node rows' sum.
period = ("--from", str(b_start), "--to", str(b_end))
hostile = '<b>j,"x"</b> ../1'
rows = {r["job"]: r for r in rows_csv(*period, "--by", "job")}
check(set(rows) == {"1234", "4242", hostile, "[idle]", "[unattributed]"}
      and all(r["node"] == "*" for r in rows.values()),
      "--by job: one cluster-wide row per job, and what no job carries")
cl_dir = os.path.join(DIR, "cluster", "job")
ref, _ = fetch_energy(os.path.join(cl_dir, "1234.rrd"), "watts", b_start, b_end, 5)
got = float(rows["1234"]["energy_joules"])
check(close(got, ref) and close(got, 80 * 7200), f"job 1234: {got:.0f} J vs rrdtool fetch {ref:.0f} J")
node_rows = {r["node"]: r for r in rows_csv(*period)}
all_j = sum(float(r["energy_joules"]) for r in node_rows.values())
check(abs(float(rows["1234"]["share_of_node"]) - got / all_j) <= 5.1e-7, "job share of all nodes' energy (6 decimals)")
per = {(r["node"], r["job"]): r for r in rows_csv(*period, "--by", "job", "--per-node")}
check(set(per) == {("n1", "1234"), ("n1", "4242"), ("node two", "1234"), ("node two", hostile),
                   ("node two", "[other]")}
      | {(n, k) for n in ("n1", "node two") for k in ("[idle]", "[unattributed]")},
      "--per-node: per-node job rows")
check(close(float(per[("n1", "1234")]["share_of_node"]), 0.5), "--per-node: n1 share 50 %")
check(close(float(per[("n1", "1234")]["energy_joules"]) + float(per[("node two", "1234")]["energy_joules"]),
            got), "per-node job energies add up to the cluster row")
sel = rows_csv(*period, "--by", "job", "--node", "n1")
check([(r["node"], r["job"]) for r in sel] == [("n1", "1234"), ("n1", "4242"), ("n1", "[idle]"),
                                              ("n1", "[unattributed]")],
      "--node selects per-node job rows")
doc = json.loads(report(*period, "--by", "job", "--format", "json").stdout)
check(any(r["job"] == hostile for r in doc["rows"]), "JSON keeps the hostile job name")
# By user: the per-node user archives.
rows = {(r["node"], r["user"]): r for r in rows_csv(*period, "--by", "user")}
evil = '<b>ev"il</b>,x'
check(set(rows) == {("n1", "alice"), ("n1", "bob"), ("n1", evil), ("n1", "1002"),
                    ("node two", "[system]")}
      | {(n, k) for n in ("n1", "node two") for k in ("[idle]", "[unattributed]")},
      "--by user rows: names from names.tsv, uid fallback")
check([rows[("n1", k)]["uid"] for k in ("bob", evil, "1002", "alice")] == ["1000", "1001", "1002", "alice"]
      and rows[("node two", "[system]")]["uid"] == "[system]", "--by user: uid column")
check(close(float(rows[("n1", "bob")]["energy_joules"]), 4 * 7195), "bob: 4 W")
doc = json.loads(report(*period, "--by", "user", "--format", "json").stdout)
check({(r["user"], r["uid"]) for r in doc["rows"]} >= {("bob", "1000"), (evil, "1001")}, "JSON: user and uid")
html = report(*period, "--by", "user", "--format", "html").stdout
check("<td class=\"t\">bob</td><td class=\"t\">1000</td>" in html and "&lt;b&gt;ev&quot;il&lt;/b&gt;,x" in html
      and "<b>ev" not in html, "HTML: user names, escaped")
check(close(float(rows[("n1", "alice")]["energy_joules"]), 60 * 7200), "alice: 60 W x 2 h")
sys_ref, _ = fetch_energy(os.path.join(nodes, two_dir, "user",
                                       [f for f in os.listdir(os.path.join(nodes, two_dir, "user"))
                                        if f.endswith(".rrd")][0]), "watts", b_start, b_end, 5)
check(close(float(rows[("node two", "[system]")]["energy_joules"]), sys_ref), "[system] vs rrdtool fetch")
p = report("--node", "nope", expect=2)
check("no node nope" in p.stderr, "unknown --node")
p = subprocess.run([MAIN, "report", "--data-dir", os.path.join(tmp, "missing")],
                   capture_output=True, text=True)
check(p.returncode == 2, "missing store: exit 2")

# Issue 25. (1) A job's energy does not depend on the period asked for.
# Job 4242 starts 40 s into a minute: its first 1-min row has 5 of 12 cells
# and is unknown there (xff 0.5), and its first hour is mostly before its
# archive existed; -7d read it at 60 s and -30d at 3600 s before. Each part
# of the period now comes from the finest archive that holds it.
t0 = b_end - 2960
job_w = lambda t: 20.5 + 2.5 * math.sin(2 * math.pi * (t % 300) / 300)
job_truth = sum(job_w(t) for t in range(t0, t0 + 1500, 5)) * 5
got = {}
for since in ("-1h", "-1d", "-7d", "-30d"):
    r = {x["job"]: x for x in rows_csv("--from", since, "--by", "job")}.get("4242", {})
    got[since] = float(r.get("energy_joules") or 0)
    # (2) its mean is over its own cells with energy, not the zeros after
    check(close(float(r.get("mean_w") or 0), job_truth / 1500, 1e-9)
          and r.get("span_s") == "1500", f"job 4242 {since}: mean_w {r.get('mean_w')} W over "
          f"span_s {r.get('span_s')}, want {job_truth / 1500:.4f} W over 1500 s")
check(all(close(e, job_truth, 1e-9) for e in got.values()),
      f"job 4242: the same joules over -1h, -1d, -7d, -30d: {got}, truth {job_truth:.3f} J")
r = {x["job"]: x for x in rows_csv("--from", "-30d", "--by", "job", "--per-node")
     if x["node"] == "n1"}.get("4242", {})
check(close(float(r.get("energy_joules") or 0), job_truth, 1e-9), "job 4242 on n1 over -30d")
# Node totals likewise: -7d = the old window (only the 1-min archive holds
# it) + the recent one read at 5 s (its first cell is unknown: at 60 s
# the minute counted 11 known cells for all 60 s).
week = {r["node"]: r for r in rows_csv("--from", "-7d")}
old = {r["node"]: r for r in rows_csv("--from", str(a_start - 60), "--to", str(a_end + 60))}
new = {r["node"]: r for r in rows_csv("--from", str(b_start - 60))}
for n in ("n1", "node two"):
    parts = float(old[n]["energy_joules"]) + float(new[n]["energy_joules"])
    check(close(float(week[n]["energy_joules"]), parts, 1e-9) and new[n]["step_s"] == "5"
          and week[n]["step_s"] == "60", f"{n}: -7d {week[n]['energy_joules']} J = old window "
          f"{old[n]['energy_joules']} J + recent {new[n]['energy_joules']} J")
# (2) erg jobs without sacct: the same joules whatever the period, the mean
# over the job's cells (span_source "cells", Start/End its first and last
# cell); (4) erg's own NodeList and User: the nodes with the job's
# archives, the user ergd stored (job/users.tsv -> uid 0 -> names.tsv).
def jobs_rows(*args, sacct="/nonexistent"):
    p = subprocess.run([MAIN, "jobs", "--data-dir", DIR, "--sacct", sacct, "--format", "json",
                        *args], capture_output=True, text=True)
    check(p.returncode == 0, f"jobs {' '.join(args)}: {p.stderr.strip()}")
    return {j["job_id"]: j for j in json.loads(p.stdout or '{"jobs": []}')["jobs"]}
iso = lambda t: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))

# ergd's writer holds an archive's lock for the few ms of an update, and
# librrd's readers fail at once on it ("could not lock RRD"; a CI run of
# slurm.jobs saw erg jobs stop there): readers wait for it. A process that
# holds the write lock (as librrd takes it: fcntl) for 0.4 s on the job's
# and the node's archives; erg report and erg jobs started meanwhile must
# give what they give unlocked.
locked = [os.path.join(DIR, "cluster", "job", "4242.rrd"), n1_rrd]
want_report = report("--format", "csv", "--from", str(b_start), "--to", str(b_end)).stdout
want_jobs = jobs_rows("--from", str(b_start), "--to", str(b_end))
holder = subprocess.Popen([sys.executable, "-c", """
import fcntl, sys, time
fs = [open(p, "r+b") for p in sys.argv[1:]]
for f in fs:
    fcntl.lockf(f, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(0.4)
""", *locked], stdout=subprocess.PIPE, text=True)
check(holder.stdout.readline().strip() == "locked", "lock holder: archives locked")
rep = subprocess.Popen([MAIN, "report", "--data-dir", DIR, "--format", "csv", "--from",
                        str(b_start), "--to", str(b_end)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
got_jobs = jobs_rows("--from", str(b_start), "--to", str(b_end))
r_out, r_err = rep.communicate()
holder.wait()
check(rep.returncode == 0 and r_out == want_report, f"report while an archive is locked: {r_err.strip()}")
check(got_jobs == want_jobs, f"jobs while an archive is locked: as unlocked ({got_jobs} vs {want_jobs})")
for since in ("-1h", "-30d"):
    j = jobs_rows("--from", since).get("4242", {})
    check(close(j.get("energy_joules") or 0, job_truth, 1e-9)
          and close(j.get("mean_w") or 0, job_truth / 1500, 1e-9) and j.get("span_source") == "cells"
          and j.get("start") == iso(t0 - 5) and j.get("end") == iso(t0 + 1495),
          f"jobs {since}: 4242 {j}")
    check(j.get("nodes") == "n1" and j.get("user") == "root", f"jobs {since}: 4242 ran on n1 as root")
    # JobName from the first command ergd stored (job/commands.tsv),
    # control bytes and invalid UTF-8 cleaned.
    check(j.get("job_name") == "<i>../x??", f"jobs {since}: 4242 named by its first command: "
          f"{j.get('job_name')!r}")
    # Its node (n1) has no GPU archives: not measured, not 0 (docs/gpu.md).
    check("gpu_energy_joules" in j and j["gpu_energy_joules"] is None,
          f"jobs {since}: 4242 GPUEnergyJ empty without GPU archives: {j.get('gpu_energy_joules')!r}")
j = jobs_rows("--from", "-1h").get("1234", {})
check(j.get("nodes") == "n1,node two" and j.get("user") is None and j.get("job_name") is None,
      f"jobs: 1234 on both nodes, no user or command stored: {j.get('nodes')!r} "
      f"{j.get('user')!r} {j.get('job_name')!r}")
# GPUEnergyJ: its gpu_job archive on node two (12 W of its 30 W there),
# integrated as the report integrates that node's job row over the same
# period (absolute: the two commands' "now" may be a second apart).
t_to = int(time.time())
j = jobs_rows("--from", str(t_to - 3600), "--to", str(t_to)).get("1234", {})
two = [r for r in rows_csv("--from", str(t_to - 3600), "--to", str(t_to), "--by", "job",
                           "--per-node")
       if r["node"] == "node two" and r["job"] == "1234"]
check(two and j.get("gpu_energy_joules") is not None
      and close(j["gpu_energy_joules"], 0.4 * float(two[0]["energy_joules"]), 1e-9)
      and j["gpu_energy_joules"] <= j["energy_joules"],
      f"jobs: 1234 GPUEnergyJ {j.get('gpu_energy_joules')} = 0.4 x node two's "
      f"{two[0]['energy_joules'] if two else None}")
# The 95 % interval (docs/model.md, "Uncertainty"): E +- 1.96 sqrt(SD^2 + VAR)
# with SD, VAR the integrals of the sd / var data sources of 1234's cluster job archive
# (rrdtool fetch), in erg jobs (energy_joules_low/high) and erg report's last
# columns; none for a job without those archives.
sd = fetch_energy(os.path.join(DIR, "cluster", "job", "1234.rrd"), "sd", t_to - 3600, t_to, 5)[0]
var = fetch_energy(os.path.join(DIR, "cluster", "job", "1234.rrd"), "var", t_to - 3600, t_to, 5)[0]
half = 1.959964 * math.sqrt(sd * sd + var)
check(sd > 0 and j.get("energy_joules_high") is not None
      and close(j["energy_joules_high"] - j["energy_joules"], half, 1e-3)
      and close(j["energy_joules"] - j["energy_joules_low"], half, 1e-3),
      f"jobs: 1234's interval [{j.get('energy_joules_low')}, {j.get('energy_joules_high')}] "
      f"= {j.get('energy_joules')} +- {half:.1f}")
j4242 = jobs_rows("--from", str(t_to - 3600), "--to", str(t_to)).get("4242", {})
check("energy_joules_low" in j4242 and j4242["energy_joules_low"] is None,
      f"jobs: 4242's archive has no sd/var, no interval: {j4242.get('energy_joules_low')!r}")
other = [r for r in rows_csv("--from", str(t_to - 3600), "--to", str(t_to), "--by", "job",
                             "--per-node") if r["job"] == "[other]"]
pn = rows_csv("--from", str(t_to - 3600), "--to", str(t_to), "--by", "job", "--per-node")
two_unc = [r for r in pn if r["node"] == "node two" and r["job"] == "1234"]
one_unc = [r for r in pn if r["node"] == "n1" and r["job"] == "1234"]
ks1 = float(one_unc[0]["known_s"]) if one_unc else 0
ohalf = 1.959964 * math.sqrt((2 * ks1) ** 2 + 20000 * ks1)
check(one_unc and one_unc[0]["energy_joules_high"] != ""
      and close(float(one_unc[0]["energy_joules_high"]) - float(one_unc[0]["energy_joules"]), ohalf, 1e-3),
      f"report --by job --per-node: n1's 1234 +- {ohalf:.0f} J from the older separate "
      f"job_sd/job_var archives: {one_unc}")
ks = float(two_unc[0]["known_s"]) if two_unc else 0  # node two's archives start late
thalf = 1.959964 * math.sqrt((1 * ks) ** 2 + 5000 * ks)
check(other and all(r.get("energy_joules_low") == "" for r in other) and two_unc
      and close(float(two_unc[0]["energy_joules_high"]) - float(two_unc[0]["energy_joules"]), thalf, 1e-3),
      f"report --by job --per-node: node two's 1234 +- {thalf:.0f} J from its archive's sd, var; "
      f"[other]'s never known, no interval: {other} {two_unc}")
rows_j = rows_csv("--from", str(t_to - 3600), "--to", str(t_to), "--by", "job")
r1234 = [r for r in rows_j if r["job"] == "1234"]
check(r1234 and list(r1234[0])[-2:] == ["energy_joules_low", "energy_joules_high"]
      and close(float(r1234[0]["energy_joules_high"]) - float(r1234[0]["energy_joules"]), half, 1e-3)
      and all(r["energy_joules_low"] == "" for r in rows_j if r["job"] != "1234"),
      f"report --by job: the interval as the last columns, 1234 only: {r1234}")
# Every kind's rows: node two's command burn from its archive's sd, var;
# n1's commands, whose archives have "watts" only, none.
rows_c = rows_csv("--from", str(t_to - 3600), "--to", str(t_to), "--by", "command")
burn = [r for r in rows_c if r["node"] == "node two" and r["command"] == "burn"]
bks = float(burn[0]["known_s"]) if burn else 0
bhalf = 1.959964 * math.sqrt((4 * bks) ** 2 + 8000 * bks)
check(burn and list(burn[0])[-2:] == ["energy_joules_low", "energy_joules_high"]
      and close(float(burn[0]["energy_joules_high"]) - float(burn[0]["energy_joules"]), bhalf, 1e-3)
      and close(float(burn[0]["energy_joules"]) - float(burn[0]["energy_joules_low"]), bhalf, 1e-3)
      and all(r["energy_joules_low"] == "" for r in rows_c if r["node"] == "n1"),
      f"report --by command: burn +- {bhalf:.0f} J from its archive's sd, var; n1's none: {burn}")
# Node rows: their dynamic energy's interval from nodes/N/dynamic_unc/node.rrd (sd, var).
rows_n = {r["node"]: r for r in rows_csv("--from", str(t_to - 3600), "--to", str(t_to))}
dsd = fetch_energy(os.path.join(nodes, two_dir, "dynamic_unc", "node.rrd"), "sd", t_to - 3600, t_to, 5)[0]
dvar = fetch_energy(os.path.join(nodes, two_dir, "dynamic_unc", "node.rrd"), "var", t_to - 3600, t_to, 5)[0]
dhalf, two_row = 1.959964 * math.sqrt(dsd * dsd + dvar), rows_n.get("node two", {})
check(dsd > 0 and list(two_row)[-2:] == ["dynamic_joules_low", "dynamic_joules_high"]
      and close(float(two_row["dynamic_joules_high"]) - float(two_row["dynamic_kwh"]) * 3.6e6, dhalf, 1e-2)
      and close(float(two_row["dynamic_kwh"]) * 3.6e6 - float(two_row["dynamic_joules_low"]), dhalf, 1e-2)
      and rows_n["n1"]["dynamic_joules_low"] == "",
      f"report --by node: node two's dynamic {two_row.get('dynamic_kwh')} kWh +- {dhalf:.0f} J: "
      f"[{two_row.get('dynamic_joules_low')}, {two_row.get('dynamic_joules_high')}]; n1 none")
# erg report's gpu_energy_joules (docs/report.md): the GPU part of job and
# node rows from their GPU archives, checked against rrdtool fetch of those
# archives and against the fixture's ratios; 0 for a job without GPU use
# where GPU archives exist, empty where none exist and for [idle] and
# [unattributed]; no such column where the rows' kind has no GPU archives.
span = (str(t_to - 3600), str(t_to))
gpu_ref = lambda path: fetch_energy(path, "watts", t_to - 3600, t_to, 5)[0]
rows = {r["job"]: r for r in rows_csv("--from", span[0], "--to", span[1], "--by", "job")}
g = rows.get("1234", {})
check("gpu_energy_joules" in g and g["gpu_energy_joules"]
      and close(float(g["gpu_energy_joules"]), 12 / 80 * float(g["energy_joules"]), 1e-9)
      and close(float(g["gpu_energy_joules"]), gpu_ref(os.path.join(DIR, "cluster", "gpu_job",
                                                                    "1234.rrd"))),
      f"report --by job: 1234's GPU part 12 of its 80 W, as rrdtool fetch: {g}")
check(rows.get(hostile, {}).get("gpu_energy_joules") == "0.0",
      f"report --by job: a job without a GPU archive: 0 J: {rows.get(hostile)}")
check(all(rows.get(k, {}).get("gpu_energy_joules", "x") == "" for k in ("[idle]", "[unattributed]")),
      "report --by job: [idle] and [unattributed] have no GPU part")
rows = {(r["node"], r["job"]): r for r in rows_csv("--from", span[0], "--to", span[1], "--by",
                                                   "job", "--per-node")}
g = rows.get(("node two", "1234"), {})
check(g.get("gpu_energy_joules")
      and close(float(g["gpu_energy_joules"]), 0.4 * float(g["energy_joules"]), 1e-9)
      and close(float(g["gpu_energy_joules"]),
                gpu_ref(os.path.join(nodes, two_dir, "gpu_job", "1234.rrd"))),
      f"report --per-node: node two's 1234 GPU part 12 of 30 W: {g}")
check(rows.get(("node two", hostile), {}).get("gpu_energy_joules") == "0.0"
      and rows.get(("n1", "1234"), {}).get("gpu_energy_joules", "x") == "",
      "report --per-node: 0 J for a job without GPU use on a GPU node, empty on a node without GPUs")
rows = {r["node"]: r for r in rows_csv("--from", span[0], "--to", span[1])}
g = rows.get("node two", {})
check(g.get("gpu_energy_joules")
      and close(float(g["gpu_energy_joules"]), gpu_ref(os.path.join(nodes, two_dir, "gpu",
                                                                    "node.rrd")))
      and close(float(g["gpu_energy_joules"]), 15 * float(g["known_s"]), 1e-6)
      and rows.get("n1", {}).get("gpu_energy_joules", "x") == "",
      f"report --by node: node two's GPU part 15 W, n1 none: {rows}")
p = report("--from", span[0], "--to", span[1], "--by", "job", "--format", "json")
js = json.loads(p.stdout)["rows"]
check(any(r.get("job") == "1234" and r.get("gpu_energy_joules") for r in js)
      and all("gpu_energy_joules" in r for r in js)
      and any(r.get("job") == "[idle]" and r["gpu_energy_joules"] is None for r in js),
      "report --format json: gpu_energy_joules, null where there is none")
check("gpu_energy_joules" not in report("--from", span[0], "--to", span[1], "--by",
                                        "command").stdout.splitlines()[0],
      "report --by command: no GPU column (commands have no GPU archives)")
# sacct adds what erg cannot know: a user where erg has none; erg's own
# NodeList and User stay.
fake = os.path.join(tmp, "sacct")
with open(fake, "w") as f:
    f.write("#!/bin/sh\nprintf '1234\\037bob\\037acct\\037part\\037name\\037COMPLETED\\037n[1-2]"
            "\\037Unknown\\037Unknown\\037\\n4242\\037alice\\037acct\\037part\\037x\\037COMPLETED"
            "\\037n9\\037Unknown\\037Unknown\\037\\n'\n")
os.chmod(fake, 0o755)
js = jobs_rows("--from", "-1h", sacct=fake)
check(js.get("1234", {}).get("user") == "bob" and js["1234"].get("nodes") == "n1,node two"
      and js.get("4242", {}).get("user") == "root" and js["4242"].get("nodes") == "n1"
      and js["4242"].get("slurm") is True and js["4242"].get("partition") == "part",
      f"jobs with sacct: erg's nodes and user kept, sacct's user where erg has none: {js}")
# (6) Every report adds up to the node's measured energy: key rows plus
# [idle] (the idle energy no key carries) and [unattributed].
nodes_e = {r["node"]: float(r["energy_joules"]) for r in rows_csv(*period)}
for kind, extra in (("command", ()), ("user", ()), ("job", ("--per-node",))):
    sums = {}
    for r in rows_csv(*period, "--by", kind, *extra):
        sums[r["node"]] = sums.get(r["node"], 0) + float(r["energy_joules"])
    check(all(close(sums.get(n, 0), e, 1e-9) for n, e in nodes_e.items()),
          f"--by {kind}: rows add up to each node's measured energy {sums} vs {nodes_e}")
cl = rows_csv(*period, "--by", "job")
check(close(sum(float(r["energy_joules"]) for r in cl), sum(nodes_e.values()), 1e-9),
      "--by job (cluster): rows add up to all nodes' measured energy")
cmd = {(r["node"], r["command"]): r for r in rows_csv(*period, "--by", "command")}
check(close(float(cmd[("n1", "[idle]")]["energy_joules"]), 40 * 7195, 1e-9)
      and abs(float(cmd[("n1", "[unattributed]")]["energy_joules"])) < 1e-6
      and close(float(cmd[("n1", "[idle]")]["share_of_node"]), 0.4, 1e-9),
      "n1 by command: [idle] 40 W, nothing unattributed")

# Carbon intensity over time and PUE (issue 15). "node two" draws
# 150 + 50 sin(2 pi t / 600) W, unknown for the window's first minute (the
# first cell of every archive in the window is unknown too: the gap since
# the old window). The intensity steps from 100 to 1000 gCO2/kWh during
# the high half of one period of the sine and back to 100, at times that
# are not on cell boundaries. CO2 must be the cell-by-cell integral of
# energy x intensity, not the total energy x the mean intensity.
def two_w(t):
    return 150 + 50 * math.sin(2 * math.pi * (t % 600) / 600)


def g_at(steps, t):
    return [g for (ts, g) in steps if ts <= t][-1]


def hand_co2(steps, watts, start, end, pue=1.0):
    """Σ over 5-s cells (t-5, t] of watts(t) x the seconds under each intensity."""
    total = 0.0
    for t in range(start + 5, end + 1, 5):
        w = watts(t)
        if w is None:
            continue
        cuts = sorted({t - 5, t} | {ts for ts, _ in steps if t - 5 < ts < t})
        for lo, hi in zip(cuts, cuts[1:]):
            total += w * (hi - lo) * pue * g_at(steps, lo) / 3.6e6
    return total


step_t = b_start + 3600 - b_start % 600 + 2  # inside a cell, where the sine rises
steps = [(b_start - 3600, 100.0), (step_t, 1000.0), (step_t + 300, 100.0)]
carbon = os.path.join(tmp, "carbon.csv")
with open(carbon, "w") as f:  # unsorted, a header, a comment, a repeated row, an ISO time
    f.write("time,gCO2_per_kWh\r\n")
    f.write(f"{step_t},1000\n# the grid gets dirtier\n{step_t + 300},100\n")
    f.write(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(b_start - 3600)) + ",100\n")
    f.write(f"{step_t}, 1000\n")
known = lambda w: (lambda t: w(t) if t >= b_start + 10 else None)
two_known = lambda t: two_w(t) if t > b_start + 60 else None
truth = hand_co2(steps, two_known, b_start, b_end)
e_two = sum(two_w(t) * 5 for t in range(b_start + 65, b_end + 1, 5))
naive = e_two / 3.6e6 * (100 * (b_end - b_start - 300) + 1000 * 300) / (b_end - b_start)
rows = {r["node"]: r for r in rows_csv(*period, "--carbon-csv", carbon)}
got = float(rows["node two"]["co2_grams"])
check(close(got, truth, 1e-4), f"node two: CO2 {got:.4f} g = hand integral {truth:.4f} g")
check(abs(got - naive) / naive > 0.01, f"test discriminates: total x mean intensity is {naive:.4f} g")
check(close(float(rows["n1"]["co2_grams"]), hand_co2(steps, known(lambda t: 100), b_start, b_end), 1e-4),
      "n1: CO2 with the step")
check("facility_energy_joules" not in rows["n1"], "no PUE: no facility column")
# Commands and --by user carry it too; the PUE multiplies facility energy and CO2.
rows = {(r["node"], r["command"]): r for r in
        rows_csv(*period, "--by", "command", "--carbon-csv", carbon, "--pue", "1.5")}
burn = rows[("node two", "burn")]
burn_truth = hand_co2(steps, lambda t: two_w(t) - 100 if t > b_start + 60 else None, b_start, b_end)
check(close(float(burn["co2_grams"]), 1.5 * burn_truth, 1e-4), "burn: CO2 on facility energy (x PUE)")
# Both printed to 0.1 J: at most 0.05 + 1.5 x 0.05 J apart.
check(abs(float(burn["facility_energy_joules"]) - 1.5 * float(burn["energy_joules"])) <= 0.13,
      "facility energy = IT energy x PUE")
p = report(*period, "--pue", "1.5", "--cost-per-kwh", "1", "--currency", "EUR")
r = {x["node"]: x for x in csv.DictReader(io.StringIO(p.stdout))}["n1"]
check(close(float(r["cost"]), 0.2 * 1.5), "cost on facility energy")
# A time-varying PUE (1.2, then 1.6 from step_t).
pue_csv = os.path.join(tmp, "pue.csv")
with open(pue_csv, "w") as f:
    f.write(f"{b_start - 10},1.2\n{step_t},1.6\n")
rows = {r["node"]: r for r in rows_csv(*period, "--pue-csv", pue_csv)}
# (hand_co2 with PUE for intensity: Σ W x s x PUE / 3.6e6; the cell holding step_t is split)
fac = hand_co2([(b_start - 10, 1.2), (step_t, 1.6)], known(lambda t: 100), b_start, b_end) * 3.6e6
check(close(float(rows["n1"]["facility_energy_joules"]), fac, 1e-6), "PUE over time, split cell")
# JSON and HTML carry the columns.
doc = json.loads(report(*period, "--format", "json", "--carbon-csv", carbon, "--pue", "2").stdout)
r = [x for x in doc["rows"] if x["node"] == "node two"][0]
check(close(r["co2_grams"], 2 * truth, 1e-4) and close(r["facility_energy_joules"], 2 * e_two, 1e-4)
      and close(r["energy_joules"], e_two), "JSON: energy_joules, facility_energy_joules, co2_grams")
html = report(*period, "--format", "html", "--carbon-csv", carbon, "--pue", "2").stdout
check("<th>facility_energy_joules</th>" in html and "<th>co2_grams</th>" in html, "HTML columns")
# The entry point for other commands: one key over [from, to).
p = subprocess.run([MAIN, "key-energy", DIR, "-", "job", "1234", str(b_start), str(b_end), carbon,
                    "1.5"], capture_output=True, text=True)
e, fj, g, known_s, _ = map(float, p.stdout.split() or [0] * 5)
check(p.returncode == 0 and close(e, 80 * 7200) and close(fj, 1.5 * e, 1e-9)
      and close(g, 1.5 * hand_co2(steps, known(lambda t: 80), b_start, b_end), 1e-4),
      f"erg_report_key_energy: cluster job 1234 {p.stdout.strip()} {p.stderr.strip()}")
p = subprocess.run([MAIN, "key-energy", DIR, "n1", "user", "alice", str(b_start), str(b_end)],
                   capture_output=True, text=True)
check(p.returncode == 0 and close(float(p.stdout.split()[0]), 60 * 7200)
      and p.stdout.split()[2] == "nan", "erg_report_key_energy: per-node key, no CO2 source")
# From ergd's [report]; a flag of the other kind wins; both in the file is refused.
with open(conf, "w") as f:
    f.write(f"[collector]\ndata_dir = {DIR}\n[report]\ncarbon_csv = {carbon}\npue = 1.25\n")
p = report_conf()
c = {(r["node"], r["command"]): r for r in csv.DictReader(io.StringIO(p.stdout))}[("node two", "burn")]
check(p.returncode == 0 and close(float(c["co2_grams"]), 1.25 * burn_truth, 1e-4),
      "carbon_csv and pue from [report] " + p.stderr)
p = report_conf("--co2-g-per-kwh", "400")
c = {(r["node"], r["command"]): r for r in csv.DictReader(io.StringIO(p.stdout))}[("n1", "sleep")]
check(p.returncode == 0 and close(float(c["co2_grams"]), 0.02 * 1.25 * 400), "--co2-g-per-kwh wins over carbon_csv")
with open(conf, "a") as f:
    f.write("co2_g_per_kwh = 300\n")
p = report_conf()
check(p.returncode == 1 and "co2_g_per_kwh" in p.stderr, "[report] with both co2_g_per_kwh and carbon_csv")
p = report(*period, "--co2-g-per-kwh", "1", "--carbon-csv", carbon, expect=1)
with open(conf, "a") as f:
    f.write("pue = 0.9\n")
p = report_conf()
check(p.returncode == 1 and "pue" in p.stderr and conf in p.stderr, "[report] pue < 1 refused")
report(*period, "--pue", "0.8", expect=1)
# Malformed CSVs: exit 2, FILE:LINE and the reason.
def bad_csv(name, text, want):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    p = report(*period, "--carbon-csv", path, expect=2)
    check(want.format(path=path) in p.stderr, f"{name}: {p.stderr.strip()}")
bad_csv("c1.csv", f"time,g\n{b_start - 10},100\n{b_start},abc\n", "{path}:3: bad value 'abc'")
bad_csv("c2.csv", f"{b_start - 10},100\nyesterday,200\n", "{path}:2: bad time 'yesterday'")
bad_csv("c3.csv", f"{b_start - 10},100\n{b_start},-5\n", "{path}:2: bad value '-5'")
bad_csv("c4.csv", f"{b_start - 10},100\n{b_start},1,2\n", "{path}:2: want two fields")
bad_csv("c5.csv", f"{b_start - 10},100\n{b_start},7\n{b_start - 10},200\n",
        "{path}:3: time " + str(b_start - 10) + " also on line 1 with another value")
bad_csv("c6.csv", f"{b_start + 10},100\n", "{path}: the carbon intensity starts at")
bad_csv("c7.csv", "# nothing\n", "{path}: no rows")
bad_csv("c8.csv", f"{b_start - 10},nan\n", "{path}:1: bad value 'nan'")
p = report(*period, "--carbon-csv", os.path.join(tmp, "absent.csv"), expect=2)
check("absent.csv: No such file" in p.stderr, "missing carbon CSV")
with open(os.path.join(tmp, "p1.csv"), "w") as f:
    f.write(f"{b_start - 10},0.7\n")
p = report(*period, "--pue-csv", os.path.join(tmp, "p1.csv"), expect=2)
check("p1.csv:1: bad value '0.7' (a number >= 1)" in p.stderr, "PUE CSV below 1")
# ISO times with an offset are moved to UTC.
with open(os.path.join(tmp, "c9.csv"), "w") as f:
    iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(step_t + 3600 - 2))
    f.write(f"{b_start - 10},100\n{iso}+01:00,500\n")
rows = {r["node"]: r for r in rows_csv(*period, "--carbon-csv", os.path.join(tmp, "c9.csv"))}
check(close(float(rows["n1"]["co2_grams"]), hand_co2([(0, 100), (step_t - 2, 500)], known(lambda t: 100),
                                                      b_start, b_end), 1e-4), "ISO time with +01:00")

# erg graph renders the pages in its own process (no render child): under
# ASan only full unwinding (librrd has no frame pointers) matches librrd's
# and the font stack's leaks to tests/web/lsan.supp, and it makes a render
# several times slower, so only erg graph gets it. Two renders: flags over
# ergd's config (PNG), then the config alone (SVG).
GRAPH_ENV = dict(os.environ, ASAN_OPTIONS=":".join(
    filter(None, (os.environ.get("ASAN_OPTIONS"), "fast_unwind_on_malloc=0"))))


def graph(*args):
    return subprocess.run([MAIN, "graph", *args], capture_output=True, text=True, env=GRAPH_ENV)


gconf = os.path.join(tmp, "ergd-graph.conf")
gwww = os.path.join(tmp, "www-conf")
with open(gconf, "w") as f:
    f.write(f"[collector]\ndata_dir = {DIR}\nwww_dir = {gwww}\npage_format = svg\n"
            "[node.x]\npower = m:1\n")
# erg graph --config with flags: --data-dir, --www-dir and --format win.
www = os.path.join(tmp, "www")
p = graph("--config", gconf, "--data-dir", DIR, "--www-dir", www, "--format", "png")
check(p.returncode == 0, "graph: exit 0 " + p.stderr.strip())
check(os.path.exists(os.path.join(www, "index.html")) and
      os.path.exists(os.path.join(www, f"node-hour-{two_dir}.html")), "graph: pages written")
check(os.path.exists(os.path.join(www, "total-day.png")) and not os.path.exists(gwww)
      and not os.path.exists(os.path.join(www, "total-day.svg")),
      "graph --config --www-dir --format png: the flags win")
check("node two" in open(os.path.join(www, "index.html")).read(), "graph: original node name")
check(os.path.exists(os.path.join(www, "job-1234.html")) and
      os.path.exists(os.path.join(www, "jobg-day-1234.png")), "graph: job page from cluster/job")
check("&lt;b&gt;j,&quot;x&quot;&lt;/b&gt; ../1" in open(os.path.join(www, "index.html")).read(),
      "graph: hostile job name escaped in the top-jobs table")
# erg graph --config: ergd's data_dir, www_dir and page_format (SVG).
p = graph("--config", gconf)
check(p.returncode == 0 and os.path.exists(os.path.join(gwww, "total-day.svg"))
      and not os.path.exists(os.path.join(gwww, "total-day.png")),
      "graph --config: ergd's www_dir and page_format " + p.stderr.strip())
check(p.returncode == 0 and open(os.path.join(gwww, "total-day.svg")).read().startswith("<?xml")
      and 'src="total-day.svg"' in open(os.path.join(gwww, "index.html")).read(), "graph: SVG pages")
page = open(os.path.join(gwww, "node-day-n1.html")).read()
check("bob (1000)" in page and "&lt;b&gt;ev&quot;il&lt;/b&gt;,x (1001)" in page and ", 1002" in page
      and "<b>ev" not in page, "graph: node page lists user names (uid), uid as fallback, escaped")
with open(gconf, "w") as f:  # one [collector] section: a second one is refused
    f.write(f"[collector]\ndata_dir = {DIR}\nwww_dir = {gwww}\npage_format = gif\n")
p = graph("--config", gconf)
check(p.returncode == 1 and "gif" in p.stderr and gconf + ":" in p.stderr,
      "graph --config: a bad page_format names the line " + p.stderr.strip())
p = graph("--data-dir", DIR, "--format", "gif")
check(p.returncode == 1 and "png or svg" in p.stderr, "graph: bad --format is a usage error")

# erg jobs takes CO2 and facility energy from the same per-cell integration
# (issue 15 follow-up), not energy x a constant; sacct is absent here.
def jobs(data_dir, *args, expect=0):
    p = subprocess.run([MAIN, "jobs", "--data-dir", data_dir, "--sacct", "/nonexistent", *period,
                        *args], capture_output=True, text=True)
    if p.returncode != expect:
        print(p.stdout, p.stderr, file=sys.stderr)
    check(p.returncode == expect, f"exit {expect}: jobs {' '.join(args)}")
    return p


# Without Slurm (issue 36): the table leaves out what no job fills
# (Account, Partition) and CO2g without a carbon setting; JobName from
# 4242's first command; State from the cells: 1234 has energy up to the
# archive's newest cell, 4242 ended 25 min before it.
p = jobs(DIR)
tl = p.stdout.splitlines()
thead = tl[0].split() if tl else []
scol = tl[0].find("State") if tl else -1
tstate = {l.split()[0]: l[scol:].split()[0] for l in tl[2:] if l.strip()} if scol >= 0 else {}
ncol = tl[0].find("JobName") if tl else -1
tname = {l.split()[0]: l[ncol:ncol + 12].strip() for l in tl[2:] if l.strip()} if ncol >= 0 else {}
check(thead[:1] == ["JobID"] and not {"Account", "Partition", "CO2g"} & set(thead)
      and "EnergyJ" in thead and tstate.get("1234") == "RUNNING" and tstate.get("4242") == "ENDED"
      and tname.get("4242") == "<i>../x??" and tname.get("1234") == "",
      f"jobs table without Slurm: no empty columns, State from the cells, JobName: {tl[:4]}")
p = jobs(DIR, "--co2-g-per-kwh", "100")
check("CO2g" in (p.stdout.splitlines() or [""])[0].split(), "jobs table: CO2g with a carbon setting")
p = jobs(DIR, "--parsable2")
check((p.stdout.splitlines() or [""])[0].split("|")[:6]
      == ["JobID", "User", "Account", "Partition", "JobName", "State"],
      "jobs parsable2 keeps every column for parsers")
pname = {l.split("|")[0]: l.split("|")[4] for l in p.stdout.splitlines()[1:] if l.count("|") > 4}
check(pname.get("4242") == "<i>../x??" and pname.get("1234") == "",
      f"jobs parsable2: JobName from the first command: {pname}")
job_truth = hand_co2(steps, known(lambda t: 80), b_start, b_end)
job_e = 80 * (b_end - b_start - 10)
co2_near = lambda got, want: abs(got - want) <= 0.05 + 1e-4 * want  # CSV/table: 0.1 g printed
p = jobs(DIR, "--format", "csv", "--carbon-csv", carbon, "--pue", "1.5")
j = {r["job_id"]: r for r in csv.DictReader(io.StringIO(p.stdout))}.get("1234", {})
check(co2_near(float(j.get("co2_grams") or 0), 1.5 * job_truth),
      f"jobs: CO2 {j.get('co2_grams')} g = 1.5 x hand integral {job_truth:.4f} g")
check(close(float(j.get("facility_energy_joules") or 0), 1.5 * float(j.get("energy_joules") or -1),
            1e-9), "jobs: facility energy = energy x PUE")
check(close(float(j.get("energy_joules") or 0), job_e, 0.005), "jobs: energy_joules")
cname = {r["job_id"]: r["job_name"] for r in csv.DictReader(io.StringIO(p.stdout))}
check(cname.get("4242") == "<i>../x??" and cname.get("1234") == "",
      f"jobs CSV: JobName from the first command: {cname}")
p = jobs(DIR, "--format", "json", "--pue-csv", pue_csv)
j = [x for x in json.loads(p.stdout or "{}").get("jobs", []) if x["job_id"] == "1234"]
fac = hand_co2([(b_start - 10, 1.2), (step_t, 1.6)], known(lambda t: 80), b_start, b_end) * 3.6e6
check(j and close(j[0]["facility_energy_joules"], fac, 1e-6) and j[0]["co2_grams"] is None,
      "jobs JSON: PUE over time, no CO2 source")
p = jobs(DIR, "--format", "json", "--carbon-csv", carbon, "--pue", "1.5")
j = [x for x in json.loads(p.stdout or "{}").get("jobs", []) if x["job_id"] == "1234"]
check(j and close(j[0]["co2_grams"], 1.5 * job_truth, 1e-4), "jobs JSON: CO2 = hand integral")
p = jobs(DIR, "--parsable2", "--carbon-csv", carbon)
head = p.stdout.splitlines()[0].split("|") if p.stdout else []
check("CO2g" in head and "FacilityJ" not in head, "jobs parsable2: CO2g, no FacilityJ without PUE")
# GPUEnergyJ beside EnergyJ; the columns before keep their places (sacct's
# parsers read EnergyJ as field 10), the rows have as many fields.
check(head[8:12] == ["NodeList", "EnergyJ", "GPUEnergyJ", "EnergyKWh"]
      and all(len(l.split("|")) == len(head) for l in p.stdout.splitlines()[1:]),
      f"jobs parsable2: GPUEnergyJ after EnergyJ: {head}")
p = jobs(DIR, "--parsable2", "--pue", "2")
check("FacilityJ" in (p.stdout.splitlines() or [""])[0], "jobs parsable2: FacilityJ with --pue")
# Without the cluster archives the rows are per node: summed per job.
pn = os.path.join(tmp, "pernode")
shutil.copytree(DIR, pn)
shutil.rmtree(os.path.join(pn, "cluster", "job"))
p = jobs(pn, "--format", "csv", "--carbon-csv", carbon)
j = {r["job_id"]: r for r in csv.DictReader(io.StringIO(p.stdout))}.get("1234", {})
check(co2_near(float(j.get("co2_grams") or 0), job_truth), "jobs per node: CO2 summed over nodes")
# Options and [report] as erg report: conflicts, and carbon_csv from the file.
p = jobs(DIR, "--co2-g-per-kwh", "1", "--carbon-csv", carbon, expect=1)
check("co2_g_per_kwh/carbon_csv" in p.stderr, "jobs: --co2-g-per-kwh with --carbon-csv refused")
jconf = os.path.join(tmp, "jobs.conf")
with open(jconf, "w") as f:
    f.write(f"[collector]\ndata_dir = {DIR}\n[report]\ncarbon_csv = {carbon}\npue = 1.25\n")
p = subprocess.run([MAIN, "jobs", "--config", jconf, "--sacct", "/nonexistent", *period,
                    "--format", "csv"], capture_output=True, text=True)
j = {r["job_id"]: r for r in csv.DictReader(io.StringIO(p.stdout))}.get("1234", {})
check(p.returncode == 0 and co2_near(float(j.get("co2_grams") or 0), 1.25 * job_truth),
      "jobs --config: carbon_csv and pue from [report] " + p.stderr.strip())

if failures:
    print(f"{len(failures)} failed; store kept in {tmp}")
    sys.exit(1)
shutil.rmtree(tmp)
print("all passed")
