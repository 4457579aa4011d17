#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Call cycles between the C files of one folder (a library).

File A calls into B when A calls a function that B defines (not static).
A cycle is a set of files that call into each other, directly or round a
loop (a strongly connected component of more than one file); the style
rule is that none exists. Parsing is textual: definitions are lines at
column 0 that open a function body (on that line, as a one-line function,
or within the next few, before any `;`), calls are `name(` anywhere outside
comments and strings; good enough for this code base's style. A name
defined in two files of a folder is two backends of one API, one of which
is built: it makes no edge.

usage: scripts/cycles.py [--baseline FILE] [DIR ...]
  Prints every cycle, one line each: "folder: a.c b.c ...". With
  --baseline, exits 1 only for a cycle not in FILE (one line per known
  cycle, as printed); without, exits 1 when there is any.
"""
import os
import re
import sys

DEF = re.compile(r"^(?!static\b)(?:[A-Za-z_][\w \t\*]*?[\s\*])(\w+)\s*\(")
CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined", "__attribute__"}


def strip(text):
    """Comments and string/char literals out, newlines kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def scan(folder):
    defs, calls = {}, {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".c") or name.endswith(".bpf.c"):
            continue
        text = strip(open(os.path.join(folder, name), encoding="utf-8", errors="replace").read())
        lines = text.split("\n")
        mine = set()
        for k, line in enumerate(lines):
            m = DEF.match(line)
            if not m:
                continue
            # A definition: the body opens on this line or one of the next few.
            rest = "\n".join(lines[k:k + 6])
            if "{" in rest and rest.find("{") < (rest.find(";") if ";" in rest else len(rest)):
                mine.add(m.group(1))
        defs[name] = mine
        calls[name] = {c for c in CALL.findall(text) if c not in KEYWORDS}
    # A name defined in two files is two backends of one API (only one is
    # built, e.g. erg_bpf.c or erg_bpf_none.c): no edge to either.
    seen, twice = set(), set()
    for names in defs.values():
        twice |= seen & names
        seen |= names
    edges = {a: set() for a in defs}
    for a in defs:
        for b in defs:
            if a != b and calls[a] & (defs[b] - twice):
                edges[a].add(b)
    return edges


def sccs(edges):
    """Tarjan's strongly connected components."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return [c for c in out if len(c) > 1]


def main(argv):
    baseline = None
    if len(argv) > 1 and argv[1] == "--baseline":
        baseline = {l.strip() for l in open(argv[2]) if l.strip() and not l.startswith("#")}
        argv = argv[2:]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    folders = argv[1:] or sorted(
        os.path.join(dp) for dp, _, fs in os.walk(root)
        if any(f.endswith(".c") for f in fs)
        and not any(p in dp for p in ("/build", "/tests", "/.git", "/contrib")))
    found = []
    for folder in folders:
        rel = os.path.relpath(folder, root)
        for comp in sccs(scan(folder)):
            found.append(f"{rel}: {' '.join(comp)}")
    new = [f for f in found if baseline is None or f not in baseline]
    for f in found:
        print(("NEW " if baseline is not None and f in new else "") + f)
    print(f"{len(found)} cycles" + (f", {len(new)} new" if baseline is not None else ""))
    return 1 if new else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
