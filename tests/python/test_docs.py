#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every ```python block of docs/python.md runs as written, in order, in one namespace (the
blocks build on each other), from a scratch directory. Prints TAP and the summary line."""
import io
import os
import re
import sys
import tempfile
from contextlib import redirect_stdout

from _tap import REPO, case, summary

DOC = os.path.join(REPO, "docs", "python.md")
text = open(DOC).read()
blocks = re.findall(r"```python\n(.*?)```", text, re.S)
ns = {"__name__": "__docs__"}
cwd = os.getcwd()


def make(i, code):
    def run():
        line = text[:text.index(code)].count("\n") + 1
        with tempfile.TemporaryDirectory() as tmp:
            os.chdir(tmp)
            out = io.StringIO()
            try:
                with redirect_stdout(out):
                    exec(compile(code, "%s:%d" % (DOC, line), "exec"), ns)
            finally:
                os.chdir(cwd)
        for s in out.getvalue().splitlines()[:3]:
            print("#   | " + s)
    run.__name__ = "docs_python_md_block_%d" % (i + 1)
    return run


assert len(blocks) >= 8, len(blocks)
for i, code in enumerate(blocks):
    if i == 0 and not os.path.exists("/usr/share/datasets/fashion-mnist"):
        print("# Fashion-MNIST absent: the quick-start block is not run")
        ns["np"] = __import__("numpy")
        continue
    case(make(i, code))
summary()
