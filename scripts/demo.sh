#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# `make demo`: a small instance of Figure 1 of the DP-DDA paper (Liu,
# Johansson, Shi): L2-regularised hinge SVM over 20 nodes on synthetic
# epsilon-like and rcv1-like data, DP-DDA with node sampling ratios 0.1 and
# 0.2 against the baseline where every node computes (examples/dp_dda_svm.c),
# run twice: with the paper's noise rule and with the noise calibrated by a
# sound privacy accountant to the same nominal epsilon = 0.8 at delta = 0.01/n
# (n rows over all nodes: far below 1/n; the paper's delta_0 = 0.01 is >= 1/n
# and is kept only for the paper's rule). "Better than not training" is
# judged by training accuracy against always predicting the majority class.
# Progress on stderr; on stdout the paper's orderings with PASS/FAIL (each by
# two standard errors over independent seeds), the privacy every curve
# really spends (with the accountant that computed it), and at the end a few
# plain sentences that say what the numbers mean. About 30 s of CPU time.
# What each figure of the paper gives here: docs/reproductions.md.
set -eu
BUILD=${1:-build}
echo "== libdpdo demo: DP-DDA, L2-SVM, 20 nodes, eps = 0.8 (see docs/reproductions.md)" >&2
# --no-fail-exit: the demo shows which of the paper's orderings survive honest accounting, so a
# FAIL is one of its results, not an error of the run (the example alone exits 1 on a FAIL)
exec "$BUILD/examples/dp_dda_svm" --quick --no-fail-exit --out "$BUILD/dp_dda_svm"
