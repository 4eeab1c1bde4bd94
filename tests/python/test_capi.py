#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The generated ctypes view of the C API (python/dpdo/_capi.py, scripts/gen-python.py; issue 22).

* every struct's ctypes size, alignment and field offsets equal what the C compiler gives
  (a C program generated from the struct list prints sizeof/_Alignof/offsetof);
* every DPDO_API function of the headers has a prototype, the library exports it, and the
  loaded library's functions carry exactly the generated restype/argtypes;
* the constants equal the C values (the same C program prints the enumerators and #defines);
* the generator notices header changes: a new field, a changed argument type, a new function
  and an unknown type (checked on a modified copy of include/) change the output or stop it;
* check-python-capi.sh (make check) fails on drift: run in a copy of the tree with one header
  edited (an enum value, a struct field, an argument type, a new function) or the generated file
  hand-edited, it exits non-zero and shows the difference;
* the Python parameter listing equals the C listing, and no key is probed.
Prints TAP and the summary line."""
import ctypes as C
import os
import re
import shutil
import subprocess
import sys
import tempfile

import _tap
from _tap import case, raises

import dpdo  # noqa: E402
from dpdo import _capi, _lib  # noqa: E402

REPO = _tap.REPO
GEN = os.path.join(REPO, "scripts", "gen-python.py")
CC = os.environ.get("CC", "cc")


def c_facts():
    """Compile and run a C program printing each struct's size, alignment and field offsets and
    every constant's value; returns {name: value-string}."""
    lines = ['#include <stddef.h>', '#include <stdio.h>', '#include "dpdo/dpdo.h"', 'int main(void) {']
    for s in _capi.STRUCTS:
        n = s.__name__
        lines.append('printf("%s sizeof %%zu\\n", sizeof(%s));' % (n, n))
        lines.append('printf("%s alignof %%zu\\n", _Alignof(%s));' % (n, n))
        for f, _ in s._fields_:
            lines.append('printf("%s.%s offsetof %%zu\\n", offsetof(%s, %s));' % (n, f, n, f))
    for k in _capi.CONSTANTS:
        v = getattr(_capi, k)
        if isinstance(v, float):
            lines.append('printf("%s %%.17g\\n", (double)(%s));' % (k, k))
        else:
            lines.append('printf("%s %%lld\\n", (long long)(%s));' % (k, k))
    lines.append("return 0; }")
    d = tempfile.mkdtemp()
    try:
        src, exe = os.path.join(d, "facts.c"), os.path.join(d, "facts")
        with open(src, "w") as f:
            f.write("\n".join(lines) + "\n")
        r = subprocess.run([CC, "-std=c11", "-I", os.path.join(REPO, "include"), src, "-o", exe],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    finally:
        shutil.rmtree(d)
    facts = {}
    for line in out.splitlines():
        k, v = line.rsplit(" ", 1)
        facts[k] = v
    return facts


FACTS = c_facts()


@case
def struct_layouts_match_the_c_compiler():
    n = 0
    for s in _capi.STRUCTS:
        name = s.__name__
        assert int(FACTS[name + " sizeof"]) == C.sizeof(s), (name, FACTS[name + " sizeof"], C.sizeof(s))
        assert int(FACTS[name + " alignof"]) == C.alignment(s), name
        for f, _ in s._fields_:
            off = getattr(s, f).offset
            assert int(FACTS["%s.%s offsetof" % (name, f)]) == off, (name, f, off)
            n += 1
    # the six layouts the binding used to copy by hand are among them
    for name in ("dpdo_algorithm_options", "dpdo_accountant_options", "dpdo_load_options", "dpdo_generate_options",
                 "dpdo_reference_options", "dpdo_progress", "dpdo_loss_type", "dpdo_solver_type"):
        assert hasattr(_capi, name), name
    assert len(_capi.STRUCTS) >= 19 and n > 100, (len(_capi.STRUCTS), n)
    print("# %d structs, %d fields: sizes, alignments and offsets as the C compiler lays them out"
          % (len(_capi.STRUCTS), n))


@case
def constants_match_the_c_values():
    for k in _capi.CONSTANTS:
        v = getattr(_capi, k)
        if isinstance(v, float):
            assert float(FACTS[k]) == v, (k, FACTS[k], v)
        else:
            assert int(FACTS[k]) == v, (k, FACTS[k], v)
    assert _capi.DPDO_E_CANCELED == _lib.E_CANCELED == -11
    assert _capi.DPDO_E_MISUSE == _lib.E_MISUSE == -12
    e = _lib.error(_lib.E_MISUSE, "busy")
    assert isinstance(e, dpdo.MisuseError) and isinstance(e, dpdo.StateError), type(e)
    assert "DPDO_E_MISUSE" in str(e), str(e)
    assert dpdo.RANDOMNESS_REPRODUCIBLE == _capi.DPDO_RANDOMNESS_REPRODUCIBLE
    # the package's version and ABI come from version.h through the generated module, and the
    # loaded library (built from the same headers) says the same at run time
    assert dpdo.ABI_MAJOR == int(FACTS["DPDO_ABI_MAJOR"]) == _lib.lib.dpdo_abi_major()
    assert dpdo.__version__ == dpdo.version(), (dpdo.__version__, dpdo.version())
    assert _lib.SONAME == "libdpdo.so.%s" % FACTS["DPDO_ABI_MAJOR"]
    print("# %d constants" % len(_capi.CONSTANTS))


@case
def every_api_function_has_its_generated_prototype():
    # the DPDO_API set of the headers (as scripts/gen-map.sh reads it, plus mpi.h's exclusion)
    out = subprocess.run(["sh", os.path.join(REPO, "scripts", "gen-map.sh")], capture_output=True, text=True,
                         check=True).stdout
    api = set(re.findall(r"^\s+(dpdo_[a-z0-9_]+);$", out, re.M))
    assert api == set(_capi.FUNCTIONS), (sorted(api - set(_capi.FUNCTIONS)), sorted(set(_capi.FUNCTIONS) - api))
    for name, (res, args) in _capi.FUNCTIONS.items():
        f = getattr(_lib.lib, name)
        assert f.restype == res and f.argtypes == args, name
    assert _lib.PROTOS is _capi.FUNCTIONS
    # spot checks against the header text
    assert _capi.FUNCTIONS["dpdo_algorithm_save"] == (C.c_int, [C.c_void_p, C.c_char_p,
                                                                C.POINTER(_capi.dpdo_checkpoint_options)])
    assert _capi.FUNCTIONS["dpdo_algorithm_type_param_next"] == (C.c_int, [C.c_void_p, C.c_int])
    assert _capi.FUNCTIONS["dpdo_algorithm_type_param_default"] == (C.c_int, [C.c_void_p, C.c_int, C.c_int64,
                                                                             C.POINTER(C.c_double)])
    assert _capi.FUNCTIONS["dpdo_dataset_create"] == (C.c_int, [C.POINTER(C.c_void_p)])
    print("# %d functions" % len(_capi.FUNCTIONS))


def gen(include):
    return subprocess.run([sys.executable, GEN, "--include", include], capture_output=True, text=True)


def edited_copy(d, header, old, new):
    inc = os.path.join(d, "include")
    if os.path.exists(inc):
        shutil.rmtree(inc)
    shutil.copytree(os.path.join(REPO, "include"), inc)
    p = os.path.join(inc, "dpdo", header)
    text = open(p).read()
    assert old in text, (header, old)
    with open(p, "w") as f:
        f.write(text.replace(old, new, 1))
    return inc


@case
def the_generator_follows_header_changes():
    d = tempfile.mkdtemp()
    try:
        base = gen(os.path.join(REPO, "include"))
        assert base.returncode == 0, base.stderr
        assert base.stdout == open(os.path.join(REPO, "python", "dpdo", "_capi.py")).read(), \
            "python/dpdo/_capi.py is not current (make map)"
        # a new field at the end of a public struct
        r = gen(edited_copy(d, "checkpoint.h", "} dpdo_checkpoint_options;",
                            "    int64_t added_field;\n} dpdo_checkpoint_options;"))
        assert r.returncode == 0 and '("added_field", C.c_int64)' in r.stdout and r.stdout != base.stdout
        # a count whose type changes (as the conventions issue made int32_t counts int64_t)
        r = gen(edited_copy(d, "algorithm.h", "dpdo_node *const *nodes, int64_t n_nodes,",
                            "dpdo_node *const *nodes, int32_t n_nodes,"))
        assert r.returncode == 0
        line = [x for x in r.stdout.splitlines() if '"dpdo_algorithm_setup"' in x][0]
        assert "C.POINTER(C.c_void_p), C.c_int32" in line, line
        # a new function
        r = gen(edited_copy(d, "checkpoint.h", "#ifdef __cplusplus\n}",
                            "DPDO_API int dpdo_checkpoint_new_thing(const double *x, size_t n);\n"
                            "#ifdef __cplusplus\n}"))
        assert '"dpdo_checkpoint_new_thing": (C.c_int, [C.POINTER(C.c_double), C.c_size_t])' in r.stdout
        # a type the generator does not know stops it, naming the type
        r = gen(edited_copy(d, "checkpoint.h", "#ifdef __cplusplus\n}",
                            "DPDO_API int dpdo_checkpoint_odd(long double x);\n#ifdef __cplusplus\n}"))
        assert r.returncode != 0 and "long double" in r.stderr, (r.returncode, r.stderr)
        # and the make check script reports a stale file
        r = subprocess.run(["sh", os.path.join(REPO, "scripts", "check-python-capi.sh")], capture_output=True,
                           text=True, env=dict(os.environ, PYTHON=sys.executable))
        assert r.returncode == 0 and "current" in r.stdout, r.stdout + r.stderr
    finally:
        shutil.rmtree(d)


def check_in_copy(d, header=None, old=None, new=None, capi_edit=None):
    """scripts/check-python-capi.sh (what make check runs) in a copy of the tree's scripts/, include/
    and python/dpdo/_capi.py, with one header edit or one edit of the committed _capi.py."""
    root = os.path.join(d, "tree")
    if os.path.exists(root):
        shutil.rmtree(root)
    os.makedirs(os.path.join(root, "scripts"))
    os.makedirs(os.path.join(root, "python", "dpdo"))
    for f in ("check-python-capi.sh", "gen-python.py"):
        shutil.copy(os.path.join(REPO, "scripts", f), os.path.join(root, "scripts", f))
    shutil.copytree(os.path.join(REPO, "include"), os.path.join(root, "include"))
    capi = open(os.path.join(REPO, "python", "dpdo", "_capi.py")).read()
    if capi_edit is not None:
        assert capi_edit[0] in capi, capi_edit[0]
        capi = capi.replace(capi_edit[0], capi_edit[1], 1)
    with open(os.path.join(root, "python", "dpdo", "_capi.py"), "w") as f:
        f.write(capi)
    if header is not None:
        p = os.path.join(root, "include", "dpdo", header)
        text = open(p).read()
        assert old in text, (header, old)
        with open(p, "w") as f:
            f.write(text.replace(old, new, 1))
    return subprocess.run(["sh", os.path.join(root, "scripts", "check-python-capi.sh")], capture_output=True,
                          text=True, env=dict(os.environ, PYTHON=sys.executable))


@case
def check_python_capi_fails_on_drift():
    d = tempfile.mkdtemp()
    try:
        r = check_in_copy(d)  # the copy unchanged: current
        assert r.returncode == 0 and r.stdout.endswith("current\n"), r.stdout + r.stderr
        drift = [  # (header, old, new, a line the diff must show)
            ("accountant.h", "DPDO_MECH_DISCRETE_GAUSSIAN_FINE = 5", "DPDO_MECH_DISCRETE_GAUSSIAN_FINE = 6",
             "+DPDO_MECH_DISCRETE_GAUSSIAN_FINE = 6"),
            ("checkpoint.h", "} dpdo_checkpoint_options;", "    int64_t added_field;\n} dpdo_checkpoint_options;",
             '+    ("added_field", C.c_int64),'),
            ("algorithm.h", "dpdo_node *const *nodes, int64_t n_nodes,", "dpdo_node *const *nodes, int32_t n_nodes,",
             "C.c_int32"),
            ("checkpoint.h", "#ifdef __cplusplus\n}", "DPDO_API int dpdo_checkpoint_new_thing(void);\n#ifdef __cplusplus\n}",
             '+    "dpdo_checkpoint_new_thing": (C.c_int, []),'),
        ]
        for header, old, new, shown in drift:
            r = check_in_copy(d, header, old, new)
            assert r.returncode != 0, (header, new, r.stdout)
            assert "differs from the headers" in r.stdout and shown in r.stdout, (shown, r.stdout)
        # a hand edit of the generated file is drift too
        r = check_in_copy(d, capi_edit=("DPDO_MECH_DISCRETE_GAUSSIAN_FINE = 5", "DPDO_MECH_DISCRETE_GAUSSIAN_FINE = 7"))
        assert r.returncode != 0 and "-DPDO_MECH_DISCRETE_GAUSSIAN_FINE = 7" in r.stdout, r.stdout
        # a header the generator cannot read fails the check too (not silently "current")
        r = check_in_copy(d, "checkpoint.h", "#ifdef __cplusplus\n}",
                          "DPDO_API int dpdo_checkpoint_odd(long double x);\n#ifdef __cplusplus\n}")
        assert r.returncode != 0 and "long double" in r.stdout + r.stderr, r.stdout + r.stderr
    finally:
        shutil.rmtree(d)


@case
def python_parameters_come_from_the_c_listing():
    for kind in dpdo.algorithm_types():
        t = _lib.lib.dpdo_algorithm_type_find(kind.encode())
        keys, k = [], _lib.lib.dpdo_algorithm_type_param_next(t, 0)
        while k > 0:
            keys.append(k)
            k = _lib.lib.dpdo_algorithm_type_param_next(t, k)
        ps = dpdo.parameters(kind)
        assert [p.key for p in ps] == keys, kind
        for p in ps:
            assert p.name == _lib.text(_lib.lib.dpdo_param_name(p.key)) and p.doc and p.lo <= p.hi, p
            assert dpdo.param_key(p.name) == p.key and dpdo.param_key(p.name.replace("-", "_")) == p.key
    assert [p.name for p in dpdo.parameters("do-adp")][-3:] == ["adp-p", "adp-beta", "adp-gamma"]
    raises(dpdo.InvalidArgument, dpdo.parameters, "no-such-algorithm", contains="unknown algorithm")
    raises(dpdo.InvalidArgument, dpdo.param_key, "no-such-param", contains="unknown parameter")
    # the binding no longer probes keys: no loop over a numeric key range in the package
    src = open(os.path.join(REPO, "python", "dpdo", "_core.py")).read()
    assert "range(1, 1000)" not in src
    # an algorithm's values by name: the defaults of a fresh one, then a set value
    ds = dpdo.Dataset.generate("epsilon-like", n=60, d=4, seed=3)
    loss = dpdo.Loss("logistic", 4)
    nodes = [dpdo.Node(s, loss) for s in ds.partition(3)]
    alg = dpdo.Algorithm("do-adp", nodes, dpdo.Network.ring(3), None, dpdo.Accountant(dpdo.Ledger(3)),
                         max_rounds=7, randomness=dpdo.RANDOMNESS_REPRODUCIBLE)
    v = alg.parameters()
    assert list(v) == [p.name for p in dpdo.parameters("do-adp")]
    assert v["max-rounds"] == 7 and v["adp-beta"] == 0.15 and v["adp-gamma"] == 0.05, v
    # type-level defaults (dpdo_algorithm_type_param_default) equal a fresh algorithm's values
    defaults = {p.name: p.default for p in dpdo.parameters("do-adp", n_nodes=3)}
    fresh = dpdo.Algorithm("do-adp", nodes, dpdo.Network.ring(3), None, dpdo.Accountant(dpdo.Ledger(3)))
    cur = fresh.parameters()
    assert set(defaults) == set(cur)
    for k, v in cur.items():
        assert v == defaults[k] or (v != v and defaults[k] != defaults[k]), (k, v, defaults[k])
    assert [p.default for p in dpdo.parameters("dp-dda", 8) if p.name == "dda-active"] == [2]
    assert [p.default for p in dpdo.parameters("dp-dda-baseline", 8) if p.name == "dda-active"] == [8]
    assert all(p.default is None for p in dpdo.parameters("dp-dda"))
    alg.set("adp_beta", 0.3)
    assert alg.parameters()["adp-beta"] == 0.3


_tap.summary()
