#!/usr/bin/env python3
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
check(set(rows) == {"n1", "node two"}, "node rows, original name from the name file")
for name, path in (("n1", n1_rrd), ("node two", two_rrd)):
    ref, step = fetch_energy(path, "measured", b_start, b_end, 5)
    got = float(rows[name]["energy_joules"])
    check(step == 5 and rows[name]["step_s"] == "5", f"{name}: recent period read at 5 s")
    check(close(got, ref), f"{name}: energy {got:.0f} J vs rrdtool fetch {ref:.0f} J")
    check(close(float(rows[name]["energy_kwh"]) * 3.6e6, got, 1e-6), f"{name}: kWh = J / 3.6e6")
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
check(len(doc["rows"]) == 4 and doc["by"] == "command", "JSON parses, 4 command rows")
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
check(set(rows) == {"1234", hostile} and all(r["node"] == "*" for r in rows.values()),
      "--by job: one cluster-wide row per job")
cl_dir = os.path.join(DIR, "cluster", "job")
ref, _ = fetch_energy(os.path.join(cl_dir, "1234.rrd"), "watts", b_start, b_end, 5)
got = float(rows["1234"]["energy_joules"])
check(close(got, ref) and close(got, 80 * 7200), f"job 1234: {got:.0f} J vs rrdtool fetch {ref:.0f} J")
node_rows = {r["node"]: r for r in rows_csv(*period)}
all_j = sum(float(r["energy_joules"]) for r in node_rows.values())
check(close(float(rows["1234"]["share_of_node"]), got / all_j, 1e-6), "job share of all nodes' energy")
per = {(r["node"], r["job"]): r for r in rows_csv(*period, "--by", "job", "--per-node")}
check(set(per) == {("n1", "1234"), ("node two", "1234"), ("node two", hostile)},
      "--per-node: per-node job rows")
check(close(float(per[("n1", "1234")]["share_of_node"]), 0.5), "--per-node: n1 share 50 %")
check(close(float(per[("n1", "1234")]["energy_joules"]) + float(per[("node two", "1234")]["energy_joules"]),
            got), "per-node job energies add up to the cluster row")
sel = rows_csv(*period, "--by", "job", "--node", "n1")
check([(r["node"], r["job"]) for r in sel] == [("n1", "1234")], "--node selects per-node job rows")
doc = json.loads(report(*period, "--by", "job", "--format", "json").stdout)
check(any(r["job"] == hostile for r in doc["rows"]), "JSON keeps the hostile job name")
# By user: the per-node user archives.
rows = {(r["node"], r["user"]): r for r in rows_csv(*period, "--by", "user")}
check(set(rows) == {("n1", "alice"), ("node two", "[system]")}, "--by user rows")
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

# erg graph renders the pages once.
www = os.path.join(tmp, "www")
p = subprocess.run([MAIN, "graph", "--data-dir", DIR, "--www-dir", www], capture_output=True,
                   text=True)
check(p.returncode == 0, "graph: exit 0 " + p.stderr.strip())
check(os.path.exists(os.path.join(www, "index.html")) and
      os.path.exists(os.path.join(www, f"node-hour-{two_dir}.html")), "graph: pages written")
check("node two" in open(os.path.join(www, "index.html")).read(), "graph: original node name")
check(os.path.exists(os.path.join(www, "job-1234.html")) and
      os.path.exists(os.path.join(www, "jobg-day-1234.png")), "graph: job page from cluster/job")
check("&lt;b&gt;j,&quot;x&quot;&lt;/b&gt; ../1" in open(os.path.join(www, "index.html")).read(),
      "graph: hostile job name escaped in the top-jobs table")
svg = os.path.join(tmp, "www-svg")
p = subprocess.run([MAIN, "graph", "--data-dir", DIR, "--www-dir", svg, "--format", "svg"],
                   capture_output=True, text=True)
check(p.returncode == 0 and open(os.path.join(svg, "total-day.svg")).read().startswith("<?xml")
      and 'src="total-day.svg"' in open(os.path.join(svg, "index.html")).read(), "graph --format svg")
# erg graph --config: ergd's data_dir, www_dir and page_format; a flag wins.
gconf = os.path.join(tmp, "ergd-graph.conf")
gwww = os.path.join(tmp, "www-conf")
with open(gconf, "w") as f:
    f.write(f"[collector]\ndata_dir = {DIR}\nwww_dir = {gwww}\npage_format = svg\n"
            "[node.x]\npower = m:1\n")
p = subprocess.run([MAIN, "graph", "--config", gconf], capture_output=True, text=True)
check(p.returncode == 0 and os.path.exists(os.path.join(gwww, "total-day.svg"))
      and not os.path.exists(os.path.join(gwww, "total-day.png")),
      "graph --config: ergd's www_dir and page_format " + p.stderr.strip())
p = subprocess.run([MAIN, "graph", "--config", gconf, "--format", "png"], capture_output=True,
                   text=True)
check(p.returncode == 0 and os.path.exists(os.path.join(gwww, "total-day.png")),
      "graph --config --format png: the flag wins")
with open(gconf, "a") as f:
    f.write("[collector]\npage_format = gif\n")
p = subprocess.run([MAIN, "graph", "--config", gconf], capture_output=True, text=True)
check(p.returncode == 1 and "gif" in p.stderr and gconf + ":" in p.stderr,
      "graph --config: a bad page_format names the line " + p.stderr.strip())
p = subprocess.run([MAIN, "graph", "--data-dir", DIR, "--format", "gif"], capture_output=True,
                   text=True)
check(p.returncode == 1 and "png or svg" in p.stderr, "graph: bad --format is a usage error")

if failures:
    print(f"{len(failures)} failed; store kept in {tmp}")
    sys.exit(1)
shutil.rmtree(tmp)
print("all passed")
