# SPDX-License-Identifier: GPL-3.0-or-later
"""What the GPU tests read back from ergd's store (collector_gpu.sh,
group_gpu.sh): `rrdtool fetch` output, and a kind's archives fetched one
after another (each after a "== PATH" line) by their original key."""
import os


def fetched(path):
    """One archive's `rrdtool fetch` output: (DS names, {time: [values]})."""
    names, out = None, {}
    for l in open(path):
        if ":" not in l:
            if l.split() and not l.startswith("=="):
                names = l.split()
            continue
        t, v = l.split(":", 1)
        out[int(t)] = [float(x) for x in v.split()]
    return names, out


def fetched_by_name(path):
    """The same as {time: {DS name: value}}."""
    names, rows = fetched(path)
    return {t: dict(zip(names, v)) for t, v in rows.items()}


def keys(work, node, kind, path):
    """A node's archives of one kind as fetched into path, by the original
    key that the kind's index.tsv names: {key: {time: watts}} (the first
    data source: a job archive's sd and var follow it)."""
    series, cur, index = {}, None, {}
    for l in open(path):
        if l.startswith("== "):
            cur = l[3:].strip()
            series[cur] = {}
        elif ":" in l:
            t, v = l.split(":", 1)
            series[cur][int(t)] = float(v.split()[0])  # watts (a job's: then sd, var)
    tsv = f"{work}/data/nodes/{node}/{kind}/index.tsv"
    for l in open(tsv) if os.path.exists(tsv) else ():
        f = l.rstrip("\n").split("\t")
        if len(f) >= 2:
            index[f"{work}/data/nodes/{node}/{kind}/{f[0]}.rrd"] = f[1]
    return {index.get(p, p): s for p, s in series.items()}
