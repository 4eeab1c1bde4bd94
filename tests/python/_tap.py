# SPDX-License-Identifier: BSD-3-Clause
"""Tiny TAP harness shared by the Python tests (prints "# summary: N passed, M failed")."""
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LIBFILE = os.path.join(REPO, os.environ.get("BUILD", "build"), "lib", "libdpdo.so.1")
sys.path.insert(0, os.path.join(REPO, "python"))
if "DPDO_LIBRARY" not in os.environ:
    os.environ["DPDO_LIBRARY"] = LIBFILE

counts = {"passed": 0, "failed": 0}


def case(fn):
    """Run fn now as one test case."""
    t0 = time.monotonic()
    try:
        fn()
        counts["passed"] += 1
        print("ok %d - %s (%.2f s)" % (counts["passed"] + counts["failed"], fn.__name__, time.monotonic() - t0))
    except Exception:  # noqa: BLE001 - a test runner reports everything
        counts["failed"] += 1
        print("not ok %d - %s" % (counts["passed"] + counts["failed"], fn.__name__))
        for line in traceback.format_exc().splitlines():
            print("#   " + line)
    sys.stdout.flush()
    return fn


def raises(exc, fn, *args, contains=None, **kw):
    """fn(*args, **kw) must raise exc (with `contains` in its message); returns the exception."""
    try:
        fn(*args, **kw)
    except exc as e:
        if contains is not None and contains not in str(e):
            raise AssertionError("%s raised, but %r is not in %r" % (exc.__name__, contains, str(e)))
        return e
    raise AssertionError("%s not raised" % exc.__name__)


def summary():
    """Print the summary line and exit with 1 on failures."""
    print("# summary: %d passed, %d failed" % (counts["passed"], counts["failed"]))
    sys.exit(1 if counts["failed"] else 0)
