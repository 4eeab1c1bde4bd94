#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run the reproduction examples and write their tallies into docs/reproductions.md.

Usage: scripts/collect-reproductions.py [--build DIR] [--out DIR] [--jobs N] [--runs N]
                                        [--only NAME[,NAME]] [--long] [--real] [--paper]
                                        [--no-doc] [--reuse]

Each run draws a fresh base seed (the examples' default), so the runs of one command are
independent replications. Every command runs with --no-fail-exit (a FAIL is a result here, not
an error: its exit status without the flag would be 1) under `nice`, N at a time (default 2).
Logs and output directories go to OUT (default BUILD/reproductions), with a record of the runs
(OUT/runs.json: a later --only NAME reruns NAME and keeps the other commands' runs). The block
between the markers "<!-- collect-reproductions: begin -->" and
"<!-- collect-reproductions: end -->" of docs/reproductions.md is replaced with:
  * one row per command: runs, the tally of each run (PASS, FAIL, NOT-REPRODUCED-HERE; NO-SIGNAL),
    their range, CPU seconds per run;
  * for `fed_plt_tables --quick`: whether the runs' verdict lists are identical (the claim of a
    check, with its verdict, in order) and whether their noiseless cells differ (fresh samples);
  * for every command, every check with each run's verdict and numbers (a folded table).
Default commands: the --quick instance of each of the four examples and the DP-WOR-SGD default run
under each noise rule (--runs each, default 3; 2-3 minutes of CPU per DP-WOR-SGD default run);
--long adds the full default runs of dp_dda_svm (both noise rules, 3 runs, about 7 minutes of CPU
each) and do_adp_logistic (3 runs per noise rule, 1-1.5 minutes of CPU each); --real the real-data
runs (one each: dp_dda_svm --figs 1 --real, do_adp_logistic --figs 3 on Fashion-MNIST and on the
Debian text set of `make data-debian-text`, each noise rule); --paper the paper-scale runs that fit
here (one each: fed_plt_tables at its default 100 runs per cell, dp_wor_sgd_classify --paper-scale,
do_adp_logistic --paper-scale --figs 3 --seeds 3 under each noise rule). --only NAME runs named commands of any group and
keeps the record of the others (several collections into one OUT may run at once).
"""
import argparse
import concurrent.futures as cf
import datetime
import fcntl
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FASHION = "/usr/share/datasets/fashion-mnist"
DEBIAN = "build/data/debian-text.svm"
BEGIN = "<!-- collect-reproductions: begin -->"
END = "<!-- collect-reproductions: end -->"

# (name, arguments, runs: None = --runs)
QUICK = [
    ("dp_dda_svm-quick", ["dp_dda_svm", "--quick"], None),
    ("do_adp_logistic-quick", ["do_adp_logistic", "--quick"], None),
    ("dp_wor_sgd_classify-quick", ["dp_wor_sgd_classify", "--quick", "--seeds", "3"], None),
    ("fed_plt_tables-quick", ["fed_plt_tables", "--quick"], None),
    ("dp_wor_sgd_classify", ["dp_wor_sgd_classify"], None),
    ("dp_wor_sgd_classify-rigorous", ["dp_wor_sgd_classify", "--noise", "rigorous"], None),
]
LONG = [
    ("dp_dda_svm", ["dp_dda_svm"], 3),
    ("do_adp_logistic", ["do_adp_logistic"], 3),
    ("do_adp_logistic-rigorous", ["do_adp_logistic", "--noise", "rigorous"], 3),
]
# --real: the real data sets (Fashion-MNIST, the Debian package descriptions of `make data-debian-text`)
REAL = [
    ("dp_dda_svm-real", ["dp_dda_svm", "--figs", "1", "--real"], 1),
    ("do_adp_logistic-fashion", ["do_adp_logistic", "--figs", "3", "--fashion", FASHION], 1),
    ("do_adp_logistic-fashion-rigorous", ["do_adp_logistic", "--figs", "3", "--fashion", FASHION,
                                          "--noise", "rigorous"], 1),
    ("do_adp_logistic-debian", ["do_adp_logistic", "--figs", "3", "--epsilon", DEBIAN], 1),
    ("do_adp_logistic-debian-rigorous", ["do_adp_logistic", "--figs", "3", "--epsilon", DEBIAN,
                                         "--noise", "rigorous"], 1),
]
# --paper: the papers' scales that fit in a few CPU-hours here (docs/reproductions.md, "Paper scale")
PAPER = [
    ("fed_plt_tables", ["fed_plt_tables"], 1),
    ("dp_wor_sgd_classify-paper", ["dp_wor_sgd_classify", "--paper-scale"], 1),
    ("do_adp_logistic-paper", ["do_adp_logistic", "--paper-scale", "--figs", "3", "--seeds", "3"], 1),
    ("do_adp_logistic-paper-rigorous", ["do_adp_logistic", "--paper-scale", "--figs", "3", "--seeds", "3",
                                        "--noise", "rigorous"], 1),
]
# rough CPU seconds per run (measured here), to start the longest first
COST = {"dp_wor_sgd_classify-paper": 3000, "fed_plt_tables": 460, "dp_dda_svm-real": 430, "dp_dda_svm": 430,
        "do_adp_logistic-paper": 350, "do_adp_logistic-paper-rigorous": 350, "dp_wor_sgd_classify-rigorous": 240,
        "do_adp_logistic-debian": 180, "do_adp_logistic-debian-rigorous": 180, "dp_wor_sgd_classify": 170}
GROUPS = [("quick", QUICK), ("long", LONG), ("real", REAL), ("paper", PAPER)]

VERDICT = re.compile(r"^\s+(PASS|FAIL|NO-SIGNAL|NOT-REPRODUCED-HERE|INFO\(1 seed\))\s+(\S*)\s+(.*)$")
TALLY = re.compile(r"^(\d+) PASS, (\d+) FAIL, (\d+) NOT-REPRODUCED-HERE$")
NOSIG = re.compile(r"(\d+) NO-SIGNAL")


def record(build, out, name, args, i):
    """The record of run i of a command: its tag, command line, log and output directory."""
    tag = f"{name}-{i + 1}"
    odir = os.path.join(out, tag)
    argv = ["nice", os.path.join(build, "examples", args[0])] + args[1:] + ["--no-fail-exit", "--out", odir]
    return dict(name=name, tag=tag, argv=argv, cmd=" ".join(["nice", os.path.relpath(argv[1], ROOT)] + argv[2:]),
                rc=0, wall=float("nan"), cpu=float("nan"), log=os.path.join(out, tag + ".log"), dir=odir)


def run_one(build, out, name, args, i):
    r = record(build, out, name, args, i)
    tag, log = r["tag"], r["log"]
    t0 = time.time()
    # CPU time of the child: wait4's rusage (the pool runs several at once)
    with open(log, "w") as f, open(os.path.join(out, tag + ".err"), "w") as e:
        p = subprocess.Popen(r["argv"], stdout=f, stderr=e, cwd=ROOT)
        _, status, ru = os.wait4(p.pid, 0)
    r.update(rc=os.waitstatus_to_exitcode(status), wall=time.time() - t0, cpu=ru.ru_utime + ru.ru_stime)
    return r


def split_check(verdict, where, line):
    """A verdict line "VERDICT where claim: numbers" as (claim, numbers)."""
    body = line[len(verdict):].strip()
    if body.startswith(where):
        body = body[len(where):].strip()
    if " (not at " in body:  # "... at every eps (not at eps=0.2: a vs b)": the eps varies by run
        claim, _, nums = body.partition(" (not at ")
        return claim, "(not at " + nums
    claim, _, nums = body.partition(": ")
    if not nums:  # "A 1.2e-01+-3e-03 < B ...": the claim is the text before the first number
        m = re.search(r"\s[-+]?\d", body)
        claim, nums = (body[:m.start()], body[m.start() + 1:]) if m else (body, "")
    return claim, nums


def parse(r):
    lines = open(r["log"], errors="replace").read().splitlines()
    r["verdicts"] = []
    r["tally"] = None
    r["nosig"] = None
    r["seed"] = None
    ctx, rule = "", ""
    for ln in lines:
        # the setting a check belongs to: the noise rule of the "== ..." header (dp_dda_svm runs
        # both rules in one process) and DP-WOR-SGD's "  -- table I: covtype-like, convex" headers
        if ln.startswith("== ") and " noise" in ln:
            rule = "rigorous" if "rigorous" in ln else "paper noise" if "(paper)" in ln else rule
        if ln.startswith("  -- "):
            ctx = ln[5:].split(": ", 1)[-1].strip()
        m = VERDICT.match(ln)
        if m:
            claim, nums = split_check(m.group(1), m.group(2), ln.strip())
            r["verdicts"].append(dict(verdict=m.group(1), where=m.group(2), claim=claim, nums=nums,
                                      ctx=ctx, rule=rule))
        m = TALLY.match(ln.strip())
        if m:
            r["tally"] = tuple(int(x) for x in m.groups())
        m = NOSIG.search(ln)
        if m and "margin" in ln:
            r["nosig"] = int(m.group(1))
        if ln.startswith("base seed:"):
            r["seed"] = ln.split()[2]
    return r


def fmt_tally(r):
    if r["rc"] != 0:
        return f"error (exit {r['rc']})"
    if r["tally"] is None:
        return "no tally line"
    p, f, n = r["tally"]
    return f"{p}, {f}, {n}; {r['nosig'] if r['nosig'] is not None else '?'}"


def fed_cells(r):
    """The noiseless Table II cells (mean rounds of every method and case) of a fed_plt_tables run."""
    path = os.path.join(r["dir"], "table2.csv")
    try:
        rows = open(path).read().splitlines()[1:]
    except OSError:
        return None
    return rows


def span(values):
    """'3' or '2–5'."""
    return f"{min(values)}" if min(values) == max(values) else f"{min(values)}–{max(values)}"


def esc(text):
    return text.replace("|", "\\|")


def block(results, date):
    by = {}
    for r in results:
        by.setdefault(r["name"], []).append(r)
    out = [BEGIN, "",
           f"Collected by `scripts/collect-reproductions.py` on {date} (fresh base seed per run, "
           "secure randomness, `--no-fail-exit`, under `nice` with other jobs on the 2-core machine).",
           "",
           "| command | runs | tally per run (PASS, FAIL, NOT-REPRODUCED-HERE; NO-SIGNAL) | range | CPU s per run |",
           "|---|---|---|---|---|"]
    for name, rs in by.items():
        ok = [r for r in rs if r["tally"] and r["rc"] == 0]
        rng = "—"
        if ok:
            cols = list(zip(*[r["tally"] + (r["nosig"] or 0,) for r in ok]))
            rng = ", ".join(span(c) for c in cols[:3]) + "; " + span(cols[3])
        cmdline = rs[0]["cmd"].replace("nice ", "").replace(" --no-fail-exit", "")
        cmdline = re.sub(r" --out \S+", "", cmdline)
        out.append(f"| `{cmdline}` | {len(rs)} | " + " / ".join(fmt_tally(r) for r in rs) +
                   f" | {rng} | " + " / ".join("—" if r["cpu"] != r["cpu"] else f"{r['cpu']:.0f}" for r in rs) + " |")
    fed = by.get("fed_plt_tables-quick", [])
    if len(fed) >= 2:
        lists = [[(v["verdict"], v["where"], v["claim"]) for v in r["verdicts"]] for r in fed]
        same = all(l == lists[0] for l in lists[1:])
        cells = [fed_cells(r) for r in fed]
        differ = all(cells[i] != cells[j] for i in range(len(cells)) for j in range(i + 1, len(cells)))
        out += ["", f"`fed_plt_tables --quick`, {len(fed)} fresh runs: verdict lists "
                f"{'**identical**' if same else '**differ**'} ({len(lists[0])} checks each); noiseless "
                f"Table II cells {'differ between every pair of runs (fresh samples)' if differ else '**repeat** between runs'}."]
        if not same:
            for i, l in enumerate(lists[1:], 2):
                for a, b in zip(lists[0], l):
                    if a != b:
                        out.append(f"  * run 1 vs run {i}: {a[0]} / {b[0]} — {a[2]}")
    # every check of every command, with each run's verdict and numbers (the runs of one command
    # print the same checks in the same order)
    for name, rs in by.items():
        ok = [r for r in rs if r["verdicts"]]
        if not ok:
            continue
        n = max(len(r["verdicts"]) for r in ok)
        both_rules = len({v["rule"] for r in ok for v in r["verdicts"]}) > 1
        out += ["", f"<details><summary><code>{name}</code>: every check, {len(ok)} run{'s' if len(ok) > 1 else ''} "
                f"(base seeds {', '.join(str(r['seed']) for r in ok)})</summary>", ""]
        if any(len(r["verdicts"]) != n for r in ok):
            out.append("(the runs printed different numbers of checks; rows are matched by position)")
            out.append("")
        out.append("| # | check | " + " | ".join(f"run {i + 1}" for i in range(len(ok))) + " |")
        out.append("|---|---|" + "---|" * len(ok))
        for j in range(n):
            head, cells = None, []
            for r in ok:
                if j >= len(r["verdicts"]):
                    cells.append("—")
                    continue
                v = r["verdicts"][j]
                tag = ", ".join(t for t in (v["rule"] if both_rules else "", v["ctx"]) if t)
                head = head or (f"[{tag}] " if tag else "") + (f"{v['where']} " if v["where"] else "") + v["claim"]
                cells.append(f"**{v['verdict']}** {v['nums']}".strip())
            out.append(f"| {j + 1} | {esc(head or '')} | " + " | ".join(esc(c) for c in cells) + " |")
        out += ["", "</details>"]
    out += [""]
    out += [END]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default=None)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default=None)
    ap.add_argument("--long", action="store_true")
    ap.add_argument("--real", action="store_true")
    ap.add_argument("--paper", action="store_true")
    ap.add_argument("--no-doc", action="store_true")
    ap.add_argument("--reuse", action="store_true", help="parse OUT/runs.json's logs instead of running")
    a = ap.parse_args()
    build = os.path.join(ROOT, a.build) if not os.path.isabs(a.build) else a.build
    out = a.out or os.path.join(build, "reproductions")
    os.makedirs(out, exist_ok=True)
    every = [c for _, g in GROUPS for c in g]
    if a.only:  # any command of any group, by name
        want = a.only.split(",")
        unknown = [w for w in want if w not in [c[0] for c in every]]
        if unknown:
            sys.exit(f"--only: no command named {', '.join(unknown)} (names: {', '.join(c[0] for c in every)})")
        cmds = [c for c in every if c[0] in want]
    elif a.reuse:  # every command with a record or a finished log
        cmds = every
    else:
        cmds = QUICK + (LONG if a.long else []) + (REAL if a.real else []) + (PAPER if a.paper else [])
    # the Debian text set is made in the build directory (make data-debian-text)
    debian = os.path.relpath(os.path.join(build, "data", "debian-text.svm"), ROOT)
    jobs = [(n, [debian if x == DEBIAN else x for x in args], i) for n, args, k in cmds for i in range(k or a.runs)]
    jobs.sort(key=lambda j: -COST.get(j[0], 60))
    results = []
    if a.reuse:  # the logs of an earlier collection (CPU times from its record, if it has one)
        rec_path = os.path.join(out, "runs.json")
        rec = json.load(open(rec_path)) if os.path.exists(rec_path) else []
        # and the finished logs (those with a tally line) of collections not yet recorded (still
        # running, or interrupted): no CPU times
        tags = {r["tag"] for r in rec}
        for n, args, i in jobs:
            r = record(build, out, n, args, i)
            if r["tag"] not in tags and os.path.exists(r["log"]) and \
                    any(TALLY.match(x.strip()) for x in open(r["log"], errors="replace")):
                rec.append(r)
        results = [parse(r) for r in rec if any(r["name"] == n for n, _, _ in cmds)]
        cmds = [c for c in cmds if any(r["name"] == c[0] for r in results)]
    else:
        with cf.ThreadPoolExecutor(max_workers=a.jobs) as ex:  # the longest runs are submitted first
            futs = [ex.submit(run_one, build, out, n, args, i) for n, args, i in jobs]
            for fu in cf.as_completed(futs):
                r = parse(fu.result())
                results.append(r)
                print(f"{r['tag']}: {fmt_tally(r)}  ({r['cpu']:.0f} s CPU, {r['wall']:.0f} s wall)", flush=True)
        # keep the record of the commands not rerun now (--only reruns some of them); under a lock,
        # read again just before writing, so collections of different commands may run at once
        rec_path = os.path.join(out, "runs.json")
        names = {r["name"] for r in results}
        with open(os.path.join(out, "runs.lock"), "w") as lk:
            fcntl.flock(lk, fcntl.LOCK_EX)
            old = json.load(open(rec_path)) if os.path.exists(rec_path) else []
            keep = [r for r in old if r["name"] not in names and os.path.exists(r["log"])]
            tmp = rec_path + ".tmp"
            json.dump(keep + [{k: r[k] for k in ("name", "tag", "argv", "cmd", "rc", "wall", "cpu", "log", "dir")}
                              for r in results], open(tmp, "w"), indent=1)
            os.replace(tmp, rec_path)
        results = [parse(r) for r in keep] + results
        cmds = [c for c in every if any(r["name"] == c[0] for r in results)]
    order = {n: k for k, (n, _, _) in enumerate(cmds)}
    results.sort(key=lambda r: (order[r["name"]], r["tag"]))
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%d %B %Y, %H:%M UTC")
    text = block(results, date)
    open(os.path.join(out, "block.md"), "w").write(text + "\n")
    if a.no_doc:
        print(text)
        return
    doc = os.path.join(ROOT, "docs", "reproductions.md")
    s = open(doc).read()
    if BEGIN not in s or END not in s:
        sys.exit(f"{doc}: no '{BEGIN}' ... '{END}' block")
    s = s[:s.index(BEGIN)] + text + s[s.index(END) + len(END):]
    open(doc, "w").write(s)
    print(f"wrote the block into {doc} (and {out}/block.md)")


if __name__ == "__main__":
    main()
