#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Test the code blocks of README.md and docs/**/*.md (`make check-doc`, run by `make check`).

Every ```c, ```sh and ```python block is compiled or run, unless the line just before its fence
(blank lines allowed) is an HTML comment that says otherwise:

  <!-- sketch -->  or  <!-- sketch: why -->
        not code to run (pseudo-code, a design record, a transcript of a long run); skipped and
        counted as a sketch.
  <!-- doctest: KEY[=VALUE] ... -->
        context=objects  (C) the block is a fragment of a function body. It is compiled (and run)
                         inside `static void fragment(void)` of a program whose globals are the
                         objects docs talk about, already set up: ds (2000 x 20 epsilon-like
                         rows), shards[20], loss (logistic), nodes[20], n = 20, d = dim = 20, net
                         (ring), reg (L2), ledger, acc ("auto"), alg (dp-dda, set up), o (its
                         options), path (a LIBSVM file of 50 rows), x[20], train/test
                         (datasets) and the other names of scripts/doctest.py's OBJECTS (rng,
                         ref, pol, w, v, r, idx, val, ...). Declarations of the fragment shadow
                         them.
        context=file     (C) file-scope definitions: compiled into a program with an empty main.
        context=mpi      (C) a fragment of main(argc, argv) of an MPI program (mpicc, -ldpdo_mpi);
                         globals m (dpdo_mpi), node[8], my_shard[8], rows[8], loss, alg, net,
                         reg, acc, opts; locals i, n = 8. Compiled, not run.
        compile-only     compile (C), `python3 -m py_compile` (Python) or `bash -n` (sh); do not run.
        dry-run          (sh) `bash -n`, then each `make ...` line as `make -n ...` in the source
                         tree (targets and variables exist; nothing is built).
        timeout=S        run for at most S seconds (default 60).
        slow             run only with DOCTEST_SLOW=1 (longer than a few seconds); otherwise only
                         compiled (C, Python) or syntax-checked (sh).

Otherwise: a C block with `int main` is compiled against the built library and run; a C block
without one must carry a context. A Python block runs with /usr/bin/python3 and the in-tree
package against build/lib (DPDO_LIBRARY); the blocks of one file share a namespace, in order, like
a notebook. A sh block whose lines start with `$ ` is a transcript: each `$` command runs with
build/bin first on PATH (the output shown is not compared); any other sh block runs with bash -e
in a scratch directory. C programs are built with -Werror for implicit declarations and pointer or
integer mismatches, so a renamed function or a wrong argument type fails.
Ends with "doctest: N blocks: C compiled/ran, ... ; S sketches; F failed" and exits 1 on a failure.
"""
import concurrent.futures as cf
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(TOP, os.environ.get("BUILD", "build"))
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
CC = os.environ.get("CC", "cc")
CFLAGS = ["-std=c11", "-D_DEFAULT_SOURCE", "-I" + os.path.join(TOP, "include"),
          "-Werror=implicit-function-declaration", "-Werror=incompatible-pointer-types",
          "-Werror=int-conversion", "-Werror=implicit-int"]
LIBS = ["-L" + os.path.join(BUILD, "lib"), "-ldpdo", "-lm"]

PRELUDE = """#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <dpdo/dpdo.h>
"""

OBJECTS = PRELUDE + r"""
/* the objects the docs talk about, set up by main() below */
static dpdo_dataset *ds, *train, *test;
static dpdo_shard *shards[20];
static dpdo_loss *loss;
static dpdo_node *nodes[20], *node;
static int32_t n = 20, M = 20;
static int64_t d = 20, dim = 20, i, k = 5, q = 100, T = 100, n_m = 100;
static dpdo_network *net;
static dpdo_regularizer *reg, *reg_l2_1_over_q;
static dpdo_ledger *ledger;
static dpdo_accountant *acc;
static dpdo_algorithm *alg;
static dpdo_algorithm_options o, alg_opts;
static dpdo_audit_options audit_opts;
static dpdo_reference *ref;
static dpdo_policy *pol;
static dpdo_compressor *topk;
static dpdo_rng *rng;
static const char *path = "doc.svm";
static double x[20], y[20], w[20], v[20], r[20], xhat[20], val[20], p[200], xstar[20];
static double F, Fstar, fstar, rho = 1.0, eps, delta, eps_rdp;
static int64_t idx[20], active[2] = {0, 1}, n_active = 2;
static int32_t valid;
static uint64_t node_id, doc_round;
#define round doc_round
static int rc;
static int my_progress(int64_t done, int64_t total, void *user) { (void)done; (void)total; (void)user; return 0; }

static void doc_run(int which);

#define MUST(call) do { int rc_ = (call); if (rc_ < 0) { \
    fprintf(stderr, "doctest context: %s failed: %s\n", #call, dpdo_strerror(rc_)); exit(2); } } while (0)

int main(int argc, char **argv)
{
    FILE *f = fopen(path, "w");
    for (int j = 0; j < 50; j++) fprintf(f, "%d 1:%g 3:%g\n", j % 2 ? 1 : -1, 0.01 * j, 0.5 - 0.01 * j);
    fclose(f);
    dpdo_generate_options g;
    dpdo_generate_options_init(&g, sizeof g);
    g.n = 2000; g.d = 20; g.seed = 7;
    MUST(dpdo_dataset_create(&ds)); MUST(dpdo_dataset_generate(ds, "epsilon-like", &g));
    g.n = 500; g.seed = 8;
    MUST(dpdo_dataset_create(&train)); MUST(dpdo_dataset_generate(train, "epsilon-like", &g));
    g.n = 200; g.seed = 9;
    MUST(dpdo_dataset_create(&test)); MUST(dpdo_dataset_generate(test, "epsilon-like", &g));
    MUST(dpdo_dataset_partition(ds, 20, NULL, 1, shards));
    MUST(dpdo_loss_create(&loss, dpdo_loss_type_find("logistic"), NULL, 20));
    for (int j = 0; j < 20; j++) MUST(dpdo_node_create(&nodes[j], shards[j], loss, 1.0));
    node = nodes[0];
    double lam = 0.1, lam_q = 1.0 / 100;
    MUST(dpdo_regularizer_create(&reg, dpdo_regularizer_type_find("l2"), NULL, 20, &lam, 1));
    MUST(dpdo_regularizer_create(&reg_l2_1_over_q, dpdo_regularizer_type_find("l2"), NULL, 20, &lam_q, 1));
    MUST(dpdo_network_create(&net)); MUST(dpdo_network_set_ring(net, 20));
    MUST(dpdo_ledger_create(&ledger, 20));
    MUST(dpdo_accountant_create(&acc, dpdo_accountant_type_find("auto"), NULL, ledger, NULL));
    MUST(dpdo_rng_create(&rng, dpdo_rng_type_find("philox4x32-10"), NULL, 1));
    dpdo_algorithm_options_init(&o, sizeof o);
    o.max_rounds = 50; o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    dpdo_algorithm_options_init(&alg_opts, sizeof alg_opts);
    dpdo_audit_options_init(&audit_opts, sizeof audit_opts);
    audit_opts.runs = 20;
    for (int j = 0; j < 20; j++) { x[j] = 0.01 * j; r[j] = 1.0 - 0.1 * j; }
    MUST(dpdo_algorithm_create(&alg, dpdo_algorithm_type_find("dp-dda")));
    MUST(dpdo_algorithm_setup(alg, nodes, 20, net, reg, acc, &o));
    doc_run(argc > 1 ? atoi(argv[1]) : 0);
    return 0;
}

"""


CONTEXTS = {
    "file": (PRELUDE, "\nint main(void) { return 0; }\n", False),
    "mpi": (PRELUDE + "#include <dpdo/mpi.h>\n"
            "static dpdo_mpi *m;\nstatic dpdo_node *node[8];\nstatic dpdo_shard *my_shard[8];\nstatic int64_t rows[8];\n"
            "static dpdo_loss *loss;\nstatic dpdo_algorithm *alg;\nstatic dpdo_network *net;\n"
            "static dpdo_regularizer *reg;\nstatic dpdo_accountant *acc;\nstatic dpdo_algorithm_options opts;\n"
            "int main(int argc, char **argv)\n{\n    int64_t i, n = 8;\n",
            "\n    return 0;\n}\n", True),
}


def blocks():
    files = [os.path.join(TOP, "README.md")] + sorted(glob.glob(os.path.join(TOP, "docs", "*.md"))) + \
        sorted(glob.glob(os.path.join(TOP, "docs", "*", "*.md")))
    for f in files:
        lines = open(f, encoding="utf-8").read().split("\n")
        i = 0
        while i < len(lines):
            m = re.match(r"^```(\w*)\s*$", lines[i])
            if not m:
                i += 1
                continue
            lang, j = m.group(1), i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            marker = lines[k].strip() if k >= 0 and lines[k].strip().startswith("<!--") else ""
            if lang in ("c", "sh", "python"):
                yield {"file": os.path.relpath(f, TOP), "line": i + 1, "lang": lang, "marker": marker,
                       "code": "\n".join(lines[i + 1:j]) + "\n"}
            i = j + 1


def parse_marker(marker):
    if re.match(r"^<!--\s*sketch\b", marker):
        return {"sketch": True}
    m = re.match(r"^<!--\s*doctest:(.*?)-->$", marker)
    opts = {}
    if m:
        for item in m.group(1).split():
            k, _, v = item.partition("=")
            opts[k] = v or True
    return opts


def run(cmd, cwd, timeout, env=None, inp=None):
    try:
        r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, input=inp)
        return r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        return -1, "timed out after %s s" % timeout


def env_for(tmp):
    e = dict(os.environ)
    e["LD_LIBRARY_PATH"] = os.path.join(BUILD, "lib") + (":" + e["LD_LIBRARY_PATH"] if e.get("LD_LIBRARY_PATH") else "")
    e["PATH"] = os.path.join(BUILD, "bin") + ":" + e.get("PATH", "/usr/bin:/bin")
    e["PYTHONPATH"] = os.path.join(TOP, "python")
    e["DPDO_LIBRARY"] = os.path.join(BUILD, "lib", "libdpdo.so.1")
    e["DPDO_TOP"] = TOP
    return e


def c_code(b):
    # an elided part of a fragment: a line of "..." or "{ ... }"
    return re.sub(r"(?m)^(\s*)\.\.\.\s*$", r"\1;", b["code"]).replace("{ ... }", "{ }")


def objects_program(bs):
    """One program with the fragments bs as fragment_0 ... (argv[1] picks one)."""
    src = [OBJECTS]
    for k, b in enumerate(bs):
        src.append("static void fragment_%d(void)\n{\n#line %d \"%s\"\n%s\n}\n" % (k, b["line"] + 1, b["file"], c_code(b)))
    src.append("static void doc_run(int which)\n{\n    switch (which) {\n")
    for k in range(len(bs)):
        src.append("    case %d: fragment_%d(); break;\n" % (k, k))
    src.append("    }\n}\n")
    return "".join(src)


def run_objects(bs, tmp):
    """Compile the fragments of context=objects into one program; [(status, msg)] or None when
    the program does not compile (then each is compiled alone, for its own error)."""
    c = os.path.join(tmp, "objects.c")
    open(c, "w").write(objects_program(bs))
    exe = os.path.join(tmp, "objects")
    rc, out = run([CC] + CFLAGS + [c, "-o", exe] + LIBS, tmp, 300)
    if rc != 0:
        return None
    res = []
    for k, b in enumerate(bs):
        if b["opts"].get("compile-only"):
            res.append(("compiled", ""))
            continue
        d = os.path.join(tmp, "run%d" % k)
        os.makedirs(d, exist_ok=True)
        rc, out = run([exe, str(k)], d, float(b["opts"].get("timeout", 60)), env_for(d))
        res.append(("ran", out) if rc == 0 else ("fail", "exit %d:\n%s" % (rc, out)))
    return res


def do_c(b, opts, tmp):
    ctx = opts.get("context")
    code = c_code(b)
    mpi = False
    if ctx == "objects":
        res = run_objects([b], tmp)
        if res is not None:
            return res[0]
        return "fail", run([CC] + CFLAGS + [os.path.join(tmp, "objects.c"), "-o", os.path.join(tmp, "x")] + LIBS,
                           tmp, 300)[1]
    if ctx:
        if ctx not in CONTEXTS:
            return "fail", "unknown context %r (known: %s)" % (ctx, ", ".join(CONTEXTS))
        pre, post, mpi = CONTEXTS[ctx]
        src = pre + "#line %d \"%s\"\n" % (b["line"] + 1, b["file"]) + code + post
    elif re.search(r"\bint\s+main\s*\(", code):
        src = "#line %d \"%s\"\n" % (b["line"] + 1, b["file"]) + code
    else:
        return "fail", "a C fragment without main: mark it <!-- doctest: context=... --> or <!-- sketch -->"
    c = os.path.join(tmp, "block.c")
    open(c, "w").write(src)
    exe = os.path.join(tmp, "block")
    cc = "mpicc" if mpi else CC
    if mpi and not shutil.which("mpicc"):
        return "skip", "no mpicc"
    libs = (["-L" + os.path.join(BUILD, "lib"), "-ldpdo_mpi"] if mpi else []) + LIBS
    rc, out = run([cc] + CFLAGS + [c, "-o", exe] + libs, tmp, 120)
    if rc != 0:
        return "fail", out
    if mpi or opts.get("compile-only"):
        return "compiled", ""
    rc, out = run([exe], tmp, float(opts.get("timeout", 60)), env_for(tmp))
    return ("ran", out) if rc == 0 else ("fail", "exit %d:\n%s" % (rc, out))


def do_sh(b, opts, tmp):
    code = b["code"]
    if opts.get("dry-run"):
        # bash -n for the block, then every `make ...` line as `make -n ...` in the source tree:
        # the targets and variables it names exist and the recipe would run
        rc, out = run(["bash", "-n"], tmp, 30, inp=code)
        if rc != 0:
            return "fail", out
        for ln in code.split("\n"):
            ln = re.sub(r"\s+#.*$", "", ln.strip())
            if ln.startswith("make"):
                args = ln.split()[1:]
                rc, out = run(["make", "-n", "--no-print-directory", "MAKE=true"] + args, TOP, 60)
                if rc != 0:
                    return "fail", "make -n %s:\n%s" % (" ".join(args), out[-1500:])
        return "compiled", ""
    if opts.get("compile-only"):
        if re.search(r"(?m)^\$ ", code):   # a transcript: its commands only
            code = "\n".join(ln[2:] for ln in code.split("\n") if ln.startswith("$ ")) + "\n"
        rc, out = run(["bash", "-n"], tmp, 30, inp=code)
        return ("compiled", "") if rc == 0 else ("fail", out)
    lines = code.split("\n")
    if any(ln.startswith("$ ") for ln in lines):
        # a transcript: each command runs; it must succeed unless the output shown for it is an
        # error message of the tool ("tool: ..."), then it must fail cleanly (exit 1..127)
        cmds = []
        for ln in lines:
            if ln.startswith("$ "):
                cmds.append([ln[2:], []])
            elif cmds and cmds[-1][0].endswith("\\"):
                cmds[-1][0] += "\n" + ln
            elif cmds:
                cmds[-1][1].append(ln)
        outs = []
        for cmd, shown in cmds:
            tool = cmd.split()[0]
            expect_fail = any(o.startswith(tool + ": ") for o in shown)
            rc, out = run(["bash", "-o", "pipefail", "-c", cmd], tmp, float(opts.get("timeout", 60)), env_for(tmp))
            outs.append("$ %s\n%s" % (cmd, out))
            if (rc != 0) != expect_fail or rc < 0 or rc > 127:
                return "fail", "exit %d (expected %s):\n%s" % (rc, "failure" if expect_fail else "0", "".join(outs))
        return "ran", ""
    rc, out = run(["bash", "-e", "-o", "pipefail", "-c", code], tmp, float(opts.get("timeout", 60)), env_for(tmp))
    return ("ran", out) if rc == 0 else ("fail", "exit %d:\n%s" % (rc, out))


PY_RUNNER = r"""
import json, sys, traceback, os
blocks = json.load(open(sys.argv[1]))
ns = {"__name__": "__doctest__"}
res = []
for b in blocks:
    try:
        if b["compile_only"]:
            compile(b["code"], b["where"], "exec")
            res.append(["compiled", ""])
        else:
            exec(compile(b["code"], b["where"], "exec"), ns)
            res.append(["ran", ""])
    except BaseException:
        res.append(["fail", traceback.format_exc(limit=3)])
    sys.stdout.flush()
json.dump(res, open(sys.argv[2], "w"))
"""


def do_python_file(bs, tmp):
    """All Python blocks of one file, in order, in one namespace."""
    spec = [{"code": b["code"], "where": "%s:%d" % (b["file"], b["line"] + 1),
             "compile_only": bool(b["opts"].get("compile-only"))} for b in bs]
    open(os.path.join(tmp, "blocks.json"), "w").write(json.dumps(spec))
    open(os.path.join(tmp, "runner.py"), "w").write(PY_RUNNER)
    timeout = sum(float(b["opts"].get("timeout", 60)) for b in bs)
    rc, out = run([PYTHON, "runner.py", "blocks.json", "res.json"], tmp, timeout, env_for(tmp))
    try:
        res = json.load(open(os.path.join(tmp, "res.json")))
    except (OSError, ValueError):
        return [("fail", "the Python runner died (exit %d):\n%s" % (rc, out[-2000:]))] * len(bs)
    return [(s, m) for s, m in res]


def main():
    all_blocks = list(blocks())
    results = {}
    jobs = []
    py_by_file = {}
    slow = 0
    for idx, b in enumerate(all_blocks):
        opts = parse_marker(b["marker"])
        if opts.get("slow") and not os.environ.get("DOCTEST_SLOW"):
            opts["compile-only"] = True
            slow += 1
        b["opts"] = opts
        if opts.get("sketch"):
            results[idx] = ("sketch", "")
        elif b["lang"] == "python":
            py_by_file.setdefault(b["file"], []).append(idx)
        else:
            jobs.append(idx)

    verbose = bool(os.environ.get("DOCTEST_VERBOSE"))

    def work(idx):
        b = all_blocks[idx]
        t0 = time.time()
        with tempfile.TemporaryDirectory() as tmp:
            res = (do_c if b["lang"] == "c" else do_sh)(b, b["opts"], tmp)
        if verbose:
            print("doctest: %-40s %-6s %-8s %.1f s" % ("%s:%d" % (b["file"], b["line"]), b["lang"], res[0],
                                                      time.time() - t0), flush=True)
        return idx, res

    def work_py(idxs):
        t0 = time.time()
        with tempfile.TemporaryDirectory() as tmp:
            res = list(zip(idxs, do_python_file([all_blocks[i] for i in idxs], tmp)))
        if verbose:
            print("doctest: %-40s python %d blocks %.1f s" % (all_blocks[idxs[0]]["file"], len(idxs), time.time() - t0))
        return res

    def work_objects(idxs):
        t0 = time.time()
        with tempfile.TemporaryDirectory() as tmp:
            res = run_objects([all_blocks[i] for i in idxs], tmp)
        if verbose:
            print("doctest: context=objects: %d C fragments, one program, %.1f s" % (len(idxs), time.time() - t0))
        if res is None:
            return [work(i) for i in idxs]
        return list(zip(idxs, res))

    obj = [i for i in jobs if all_blocks[i]["lang"] == "c" and all_blocks[i]["opts"].get("context") == "objects"]
    jobs = [i for i in jobs if i not in obj]
    with cf.ThreadPoolExecutor(max_workers=int(os.environ.get("DOCTEST_JOBS", "3"))) as ex:
        futs = [ex.submit(work_objects, obj)] + [ex.submit(work_py, v) for v in py_by_file.values()] + \
            [ex.submit(work, i) for i in jobs]
        for fu in futs:
            r = fu.result()
            for idx, res in (r if isinstance(r, list) else [r]):
                results[idx] = res
    counts = {}
    failed = 0
    for idx, b in enumerate(all_blocks):
        status, msg = results[idx]
        counts[(b["lang"], status)] = counts.get((b["lang"], status), 0) + 1
        if status == "fail":
            failed += 1
            print("doctest: FAIL %s:%d (%s)" % (b["file"], b["line"], b["lang"]))
            print("\n".join("    " + ln for ln in msg.strip().split("\n")[-25:]))

    def c(lang, st):
        return counts.get((lang, st), 0)
    sketches = sum(v for (lang, st), v in counts.items() if st == "sketch")
    skipped = sum(v for (lang, st), v in counts.items() if st == "skip")
    print("doctest: %d blocks in README.md and docs/: C %d compiled + %d ran, sh %d checked + %d ran, "
          "Python %d compiled + %d ran; %d sketches%s; %d failed"
          % (len(all_blocks), c("c", "compiled"), c("c", "ran"), c("sh", "compiled"), c("sh", "ran"),
             c("python", "compiled"), c("python", "ran"), sketches,
             ", %d skipped (no mpicc)" % skipped if skipped else "", failed))
    if slow:
        print("doctest: %d slow blocks were only compiled/checked (DOCTEST_SLOW=1 runs them too)" % slow)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
