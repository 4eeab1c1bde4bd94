#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tightness figure of docs/privacy-audit.md from the output of build/bench/bench_audit:
    build/bench/bench_audit > audit.txt; python3 scripts/plot-audit-tightness.py audit.txt out.png
For each true epsilon of the Gaussian mechanism: the audit's 95% lower bound and what the
statistics allow at that many runs (both divided by the true epsilon) against runs per dataset."""
import sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = []
part3 = False
for line in open(sys.argv[1]):
    if line.startswith("# 3."):
        part3 = True
    if part3 and line.startswith("| ") and not line.startswith("| true"):
        f = [x.strip() for x in line.strip().strip("|").split("|")]
        rows.append((float(f[0]), int(f[2]), float(f[4]), float(f[5])))
fig, ax = plt.subplots(figsize=(6.4, 4.0))
for k, eps in enumerate(sorted({r[0] for r in rows})):
    pts = sorted((r[1], r[2] / eps, r[3] / eps) for r in rows if r[0] == eps)
    c = "C%d" % k
    ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=c, label="audit, true eps = %g" % eps)
    ax.plot([p[0] for p in pts], [p[2] for p in pts], "x--", color=c, alpha=0.6)
ax.axhline(0.5, color="grey", lw=0.8, ls=":")
ax.set_xscale("log")
ax.set_xlabel("runs per dataset (half of them test the threshold)")
ax.set_ylabel("eps_lower / true eps  (95%, delta = 1e-5)")
ax.set_ylim(0, 1)
ax.set_title("Gaussian mechanism, worst-case pair: audit (o) vs statistics allow (x)")
ax.legend(fontsize=8, loc="lower right")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
