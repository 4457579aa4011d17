#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every command line the docs show is one the programs accept (issue 36).

Collects the `erg ...`, `erg-pdusim ...`, `erg-agent ...` and `ergd ...`
command lines of README.md, docs/*.md and docs/man/* (code blocks, inline
code, the man pages' examples) and runs each through its program's option
parser without letting it do anything: a sentinel option that no program
knows is appended, so the parser stops there with "unrecognized option
'--zz-doctest-sentinel'" exactly when every option before it was accepted
with its value. An unknown option, a missing value or an unknown command
names something else and fails the test, with the file and line.
`erg check-config` ([--agent] FILE), `erg keygen` (PREFIX) and `erg
version` take no options to parse and are checked for their shape.
Synopses with placeholders in brackets, alternatives (a|b) or "..." are
not examples and are left out. A --config FILE is replaced by a minimal
ergd config, which these commands read before their other options.

  doc_commands.py SOURCE_DIR ERG ERG_PDUSIM ERG_AGENT ERGD
"""
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

SRC, ERG, PDUSIM, AGENT, ERGD = sys.argv[1:6]
PROGS = {"erg": ERG, "erg-pdusim": PDUSIM, "erg-agent": AGENT, "ergd": ERGD}
SUBS = {"check-config", "fit", "pdu", "report", "jobs", "graph", "keygen", "version"}
SENTINEL = "--zz-doctest-sentinel"
# A command starts a line or a code span, or follows a prompt, sudo,
# runuser's "--", exec, a cron schedule or a shell separator.
START = re.compile(r"(?:^|(?<=`)|(?<=\$ )|(?<=sudo )|(?<=-- )|(?<=exec )|(?<=\* )|(?<=&& )|(?<=; ))"
                   r"(erg-pdusim|erg-agent|ergd|erg)(?=\s|$)")
CUT = re.compile(r"\s(?:\||>|2>|&&|;|#|&)(?:\s|$|>)|\s(?:>>|2>>|>|2>&1)\S*")


def commands_in(text):
    """(line number, command text) for each command started in text."""
    out = []
    for m in START.finditer(text):
        cmd = text[m.start():]
        cut = CUT.search(cmd)
        if cut:
            cmd = cmd[:cut.start()]
        out.append(cmd.strip().rstrip("`").strip())
    return out


def md_lines(path):
    """Code lines of a markdown file (fenced or indented, continuations
    joined) and inline code spans, with their line numbers."""
    lines = open(path, encoding="utf-8").read().split("\n")
    fenced = False
    i = 0
    while i < len(lines):
        line, no = lines[i], i + 1
        if line.lstrip().startswith("```"):
            fenced = not fenced
            i += 1
            continue
        if fenced or line.startswith("    ") or line.startswith("\t"):
            while line.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line.rstrip()[:-1] + " " + lines[i].strip()
            for c in commands_in(line.strip()):
                yield no, c, "example"
        else:
            for span in re.findall(r"`([^`]+)`", line):
                if START.match(span.strip()):
                    for c in commands_in(span.strip()):
                        yield no, c, "mention"
        i += 1


def roff_text(s):
    s = re.sub(r"\\f[BIRP]", "", s)
    return s.replace("\\-", "-").replace("\\(em", "-").replace("\\e", "\\").replace("\\ ", " ")


def man_lines(path):
    """Example lines of a man page: between .EX/.EE or .nf/.fi, and .B/.BR
    lines that start with a command."""
    lines = open(path, encoding="utf-8").read().split("\n")
    ex = False
    for i, raw in enumerate(lines):
        if raw.startswith((".EX", ".nf")):
            ex = True
            continue
        if raw.startswith((".EE", ".fi")):
            ex = False
            continue
        text = roff_text(raw)
        if ex and not raw.startswith("."):
            for c in commands_in(text.strip()):
                yield i + 1, c, "example"
        elif raw.startswith(".B ") and START.match(text[3:].strip()):
            for c in commands_in(text[3:].strip()):
                yield i + 1, c, "mention"


def is_example(tokens):
    """Not a synopsis: no [optional] parts, alternatives or ellipses."""
    for t in tokens:
        if any(ch in t for ch in "[]{}<>()…") or "..." in t or re.match(r"^-.*\|", t):
            return False
        if "|" in t and not t.startswith(("'", '"')):
            return False
    return True


TIME_OPTS = {"--from", "--to"}


def placeholder(prev, tok):
    """A value for a placeholder the docs leave to the reader (START, N,
    HOST:PORT): parsers check values as they go, and a refused "START"
    would hide the options after it."""
    if not re.fullmatch(r"[A-Z][A-Z0-9_]*(?::[A-Z][A-Z0-9_]*)?", tok):
        return tok
    if prev in TIME_OPTS or tok in ("T", "START", "END"):
        return "-1h" if prev != "--to" and tok != "END" else "now"
    if ":" in tok:
        return "127.0.0.1:9"
    if tok in ("N", "S", "X", "Y", "ROW", "SECONDS", "W") or tok.endswith("_S"):
        return "1"
    return "x" + tok.lower()


def unknown_named(err, name):
    """Whether err says that option name is not known."""
    return re.search(r"(?:unrecognized|unknown|invalid) option[^\n]*" + re.escape(name), err)


def run(prog, args, tmp):
    try:
        p = subprocess.run([PROGS[prog], *args], capture_output=True, text=True, timeout=10,
                           cwd=tmp, stdin=subprocess.DEVNULL)
        return p.returncode, p.stderr + p.stdout
    except subprocess.TimeoutExpired:
        return -1, "(still running after 10 s)"


def check(prog, args, kind, tmp):
    """None when the parser takes args, else what it said."""
    if "--version" in args or "--help" in args:
        rc, out = run(prog, args, tmp)
        return None if rc == 0 and out.strip() else out[:200]
    if prog == "erg" and args[0] in ("check-config", "keygen", "version"):
        rest = args[1:]
        if kind == "mention":
            return None if all(a == "--agent" for a in rest if a.startswith("-")) else \
                f"erg {args[0]} has no option {rest}"
        ok = {"check-config": rest[:1] == ["--agent"] and len(rest) == 2
              or len(rest) == 1 and not rest[0].startswith("-"),
              "keygen": len(rest) == 1 and not rest[0].startswith("-"),
              "version": rest == []}[args[0]]
        return None if ok else f"erg {args[0]} does not take these arguments"
    rc, err = run(prog, [*args, SENTINEL], tmp)
    if unknown_named(err, SENTINEL):
        return None
    first = next((l for l in err.splitlines() if "option" in l or "usage" in l), err[:200]).strip()
    if re.search(r"unknown command|(?:unrecognized|unknown|invalid) option", err):
        return first
    if kind == "example" and re.search(r"requires an argument|missing value", err):
        return first
    # A check of values or of their combination stopped the parser before
    # the sentinel (a mention such as `erg fit --group`): each option
    # alone, with its value, must at least be a known one.
    sub = [a for a in args[:2] if not a.startswith("-")][: 2 if args[:1] == ["pdu"] else 1]
    if prog != "erg":
        sub = []
    rest = args[len(sub):]
    for i, a in enumerate(rest):
        if not a.startswith("-") or a == "-":
            continue
        one = [a] + ([rest[i + 1]] if i + 1 < len(rest) and not rest[i + 1].startswith("-") else [])
        _, err1 = run(prog, [*sub, *one, SENTINEL], tmp)
        if unknown_named(err1, a.split("=")[0]):
            return next((l for l in err1.splitlines() if "option" in l), err1[:200]).strip()
    return None


def main():
    tmp = tempfile.mkdtemp(prefix="erg-doctest-")
    conf = os.path.join(tmp, "ergd.conf")
    with open(conf, "w") as f:
        f.write(f"[collector]\ndata_dir = {tmp}/data\n")
    agent_conf = os.path.join(tmp, "agent.conf")
    open(agent_conf, "w").close()
    files = [os.path.join(SRC, "README.md")] + sorted(glob.glob(os.path.join(SRC, "docs", "*.md")))
    mans = sorted(glob.glob(os.path.join(SRC, "docs", "man", "*.[18]")))
    found = []
    for p in files:
        found += [(p, *x) for x in md_lines(p)]
    for p in mans:
        found += [(p, *x) for x in man_lines(p)]
    seen, failures, checked = set(), [], 0
    for path, no, cmd, kind in found:
        try:
            tokens = shlex.split(cmd)
        except ValueError:
            continue  # prose with a stray quote, not a command line
        if not tokens or (len(tokens) < 2 and tokens[0] != "ergd"):
            continue
        prog = tokens[0]
        if prog == "erg" and tokens[1] not in SUBS:
            continue  # prose: "erg uses ...", "erg turns ..."
        if not is_example(tokens) or (cmd, kind) in seen:
            continue
        seen.add((cmd, kind))
        args = tokens[1:]
        args = [placeholder(args[i - 1] if i else "", a) for i, a in enumerate(args)]
        # --config / -c files are read before the other options: real ones.
        for i in range(1, len(args)):
            if args[i - 1] in ("--config", "-c"):
                args[i] = agent_conf if prog == "erg-agent" else conf
        checked += 1
        why = check(prog, args, kind, tmp)
        if why:
            failures.append(f"{os.path.relpath(path, SRC)}:{no}: {cmd}\n    {why}")
    for f in failures:
        print("FAIL", f)
    print(f"{checked} command lines from the docs checked, {len(failures)} refused")
    subprocess.run(["rm", "-rf", tmp])
    if checked < 50:
        print(f"FAIL: only {checked} command lines found: is the extraction broken?")
        return 1
    return 1 if failures else 0


sys.exit(main())
