#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# `make demo`: the main job. Until the algorithm engine lands this is private
# federated gradient descent on an epsilon-like data set, built from libdpdo's
# building blocks (examples/dp_gd_demo.c): progress on stderr, result on stdout.
set -eu
BUILD=${1:-build}
echo "== libdpdo demo: 20 nodes, logistic regression, (1, 1e-5)-DP per sample" >&2
exec "$BUILD/examples/dp_gd_demo" 100 1.0
