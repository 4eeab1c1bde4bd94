#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run the reproduction examples and write their tallies into docs/reproductions.md.

Usage: scripts/collect-reproductions.py [--build DIR] [--out DIR] [--jobs N] [--runs N]
                                        [--only NAME[,NAME]] [--long] [--no-doc] [--reuse]

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
  * the verdict lines of the first run of every command.
Default commands: the --quick instance of each of the four examples (x runs, default 3) and the
DP-WOR-SGD default run once per noise rule; --long adds the full default runs of dp_dda_svm (both noise
rules, 3 runs, about 8 minutes of CPU each) and do_adp_logistic (3 runs per noise rule, 1-1.5
minutes of CPU each since the secure samplers keep the tables of a scale that changes every round).
"""
import argparse
import concurrent.futures as cf
import datetime
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- collect-reproductions: begin -->"
END = "<!-- collect-reproductions: end -->"

# (name, arguments, runs: None = --runs)
QUICK = [
    ("dp_dda_svm-quick", ["dp_dda_svm", "--quick"], None),
    ("do_adp_logistic-quick", ["do_adp_logistic", "--quick"], None),
    ("dp_wor_sgd_classify-quick", ["dp_wor_sgd_classify", "--quick", "--seeds", "3"], None),
    ("fed_plt_tables-quick", ["fed_plt_tables", "--quick"], None),
    ("dp_wor_sgd_classify", ["dp_wor_sgd_classify"], 1),
    ("dp_wor_sgd_classify-rigorous", ["dp_wor_sgd_classify", "--noise", "rigorous"], 1),
]
LONG = [
    ("dp_dda_svm", ["dp_dda_svm"], 3),
    ("do_adp_logistic", ["do_adp_logistic"], 3),
    ("do_adp_logistic-rigorous", ["do_adp_logistic", "--noise", "rigorous"], 3),
]

VERDICT = re.compile(r"^\s+(PASS|FAIL|NO-SIGNAL|NOT-REPRODUCED-HERE|INFO\(1 seed\))\s+(\S*)\s+(.*)$")
TALLY = re.compile(r"^(\d+) PASS, (\d+) FAIL, (\d+) NOT-REPRODUCED-HERE$")
NOSIG = re.compile(r"(\d+) NO-SIGNAL")


def run_one(build, out, name, args, i):
    tag = f"{name}-{i + 1}"
    odir = os.path.join(out, tag)
    log = os.path.join(out, tag + ".log")
    cmd = ["nice", os.path.join(build, "examples", args[0])] + args[1:] + ["--no-fail-exit", "--out", odir]
    t0 = time.time()
    # CPU time of the child: wait4's rusage (the pool runs several at once)
    with open(log, "w") as f, open(os.path.join(out, tag + ".err"), "w") as e:
        p = subprocess.Popen(cmd, stdout=f, stderr=e, cwd=ROOT)
        _, status, ru = os.wait4(p.pid, 0)
    rc = os.waitstatus_to_exitcode(status)
    return dict(name=name, tag=tag, cmd=" ".join(["nice", os.path.relpath(cmd[1], ROOT)] + cmd[2:]),
                rc=rc, wall=time.time() - t0, cpu=ru.ru_utime + ru.ru_stime, log=log, dir=odir)


def parse(r):
    lines = open(r["log"], errors="replace").read().splitlines()
    r["verdicts"] = []
    r["tally"] = None
    r["nosig"] = None
    r["seed"] = None
    for ln in lines:
        m = VERDICT.match(ln)
        if m:
            claim = m.group(3).split(":")[0].strip()
            r["verdicts"].append((m.group(1), m.group(2), claim, ln.strip()))
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
    if r["rc"] != 0 or r["tally"] is None:
        return f"error (exit {r['rc']})"
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
            rng = ", ".join(f"{min(c)}" if min(c) == max(c) else f"{min(c)}–{max(c)}" for c in cols[:3])
            rng += "; " + (f"{min(cols[3])}" if min(cols[3]) == max(cols[3]) else f"{min(cols[3])}–{max(cols[3])}")
        cmdline = rs[0]["cmd"].replace("nice ", "").replace(" --no-fail-exit", "")
        cmdline = re.sub(r" --out \S+", "", cmdline)
        out.append(f"| `{cmdline}` | {len(rs)} | " + " / ".join(fmt_tally(r) for r in rs) +
                   f" | {rng} | " + " / ".join("—" if r["cpu"] != r["cpu"] else f"{r['cpu']:.0f}" for r in rs) + " |")
    fed = by.get("fed_plt_tables-quick", [])
    if len(fed) >= 2:
        lists = [[(v, w, c) for v, w, c, _ in r["verdicts"]] for r in fed]
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
    out += ["", "<details><summary>Verdict lines of the first run of each command</summary>", ""]
    for name, rs in by.items():
        r = rs[0]
        out.append(f"`{name}` (base seed {r['seed']}):")
        out.append("")
        out.append("```")
        out += [v[3] for v in r["verdicts"]]
        out.append("```")
        out.append("")
    out += ["</details>", "", END]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default=None)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default=None)
    ap.add_argument("--long", action="store_true")
    ap.add_argument("--no-doc", action="store_true")
    ap.add_argument("--reuse", action="store_true", help="parse OUT/runs.json's logs instead of running")
    a = ap.parse_args()
    build = os.path.join(ROOT, a.build) if not os.path.isabs(a.build) else a.build
    out = a.out or os.path.join(build, "reproductions")
    os.makedirs(out, exist_ok=True)
    cmds = QUICK + (LONG if a.long else [])
    if a.only:
        want = a.only.split(",")
        cmds = [c for c in cmds if c[0] in want]
    jobs = [(n, args, i) for n, args, k in cmds for i in range(k or a.runs)]
    jobs.sort(key=lambda j: (j[0] not in ("dp_wor_sgd_classify", "dp_wor_sgd_classify-rigorous") + tuple(c[0] for c in LONG)))
    results = []
    if a.reuse:  # the logs of an earlier collection (CPU times from its record, if it has one)
        rec_path = os.path.join(out, "runs.json")
        if os.path.exists(rec_path):
            rec = json.load(open(rec_path))
        else:  # an interrupted collection: its finished logs (those with a tally line), no CPU times
            rec = []
            for n, args, k in cmds:
                for i in range(k or a.runs):
                    log = os.path.join(out, f"{n}-{i + 1}.log")
                    if os.path.exists(log) and any(TALLY.match(x.strip()) for x in open(log, errors="replace")):
                        cmd = ["nice", os.path.join(a.build, "examples", args[0])] + args[1:] + \
                              ["--no-fail-exit", "--out", os.path.join(out, f"{n}-{i + 1}")]
                        rec.append(dict(name=n, tag=f"{n}-{i + 1}", cmd=" ".join(cmd), rc=0, wall=float("nan"),
                                        cpu=float("nan"), log=log, dir=os.path.join(out, f"{n}-{i + 1}")))
        results = [parse(r) for r in rec if any(r["name"] == n for n, _, _ in cmds)]
        cmds = [c for c in cmds if any(r["name"] == c[0] for r in results)]
    else:
        with cf.ThreadPoolExecutor(max_workers=a.jobs) as ex:  # the longest runs are submitted first
            futs = [ex.submit(run_one, build, out, n, args, i) for n, args, i in jobs]
            for fu in cf.as_completed(futs):
                r = parse(fu.result())
                results.append(r)
                print(f"{r['tag']}: {fmt_tally(r)}  ({r['cpu']:.0f} s CPU, {r['wall']:.0f} s wall)", flush=True)
        # keep the record of the commands not rerun now (--only reruns some of them)
        rec_path = os.path.join(out, "runs.json")
        names = {r["name"] for r in results}
        old = json.load(open(rec_path)) if os.path.exists(rec_path) else []
        keep = [r for r in old if r["name"] not in names and os.path.exists(r["log"])]
        json.dump(keep + [{k: r[k] for k in ("name", "tag", "cmd", "rc", "wall", "cpu", "log", "dir")} for r in results],
                  open(rec_path, "w"), indent=1)
        results = [parse(r) for r in keep] + results
        cmds = [c for c in QUICK + LONG if any(r["name"] == c[0] for r in results)]
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
