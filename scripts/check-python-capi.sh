#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Prove that python/dpdo/_capi.py (the binding's prototypes, struct layouts and constants) is what
# scripts/gen-python.py makes of today's include/dpdo/*.h: regenerate into a temporary file and
# compare (run 'make map', which regenerates it with lib/libdpdo.map, when this fails).
set -eu
cd "$(dirname "$0")/.."
py=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$py" scripts/gen-python.py "$tmp/_capi.py" 2> "$tmp/log" || { cat "$tmp/log"; exit 1; }
if ! cmp -s "$tmp/_capi.py" python/dpdo/_capi.py; then
    echo "check-python-capi: python/dpdo/_capi.py differs from the headers (run 'make map'):"
    diff -u python/dpdo/_capi.py "$tmp/_capi.py" | head -40 || true
    exit 1
fi
echo "check-python-capi: $(sed 's/^gen-python: [^:]*: //' "$tmp/log"), current"
