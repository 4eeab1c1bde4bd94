#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Every claim check of the four reproduction examples can fail: each example runs a small
# instance with --plant-contrary (every comparison is fed a contradicting result,
# examples/common.h) and must then print FAIL for every claim it checks (NO-SIGNAL,
# NOT-REPRODUCED-HERE, INFO and SKIP lines aside), end with the line
# "0 PASS, M FAIL, K NOT-REPRODUCED-HERE" with M > 0, and exit 1; with --no-fail-exit as
# well it exits 0. make check runs the two cheap examples (dp_dda_svm, do_adp_logistic; the
# --no-fail-exit run on the first only: one exit rule in common.h for all); make check-long
# (DPDO_TEST_LONG=1) all four, each with its --no-fail-exit run (DP-WOR-SGD's and Fed-PLT's runs
# cost minutes of CPU). Usage: examples_verdicts.sh [BUILD]   (make check-verdicts)
set -u
BUILD=${1:-build}
E=$BUILD/examples
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
fail=0 nf=0 ran=0
run() { # name, then the command
    name=$1; shift
    "$@" --plant-contrary --out "$out/$name" > "$out/$name.log" 2> "$out/$name.err"
    rc=$?
    ran=$((ran + 1))
    last=$(grep -v '^$' "$out/$name.log" | tail -n 1)
    npass=$(grep -cE '^ +PASS ' "$out/$name.log")
    nfail=$(grep -cE '^ +FAIL ' "$out/$name.log")
    if [ $rc -ne 1 ] || [ "$npass" -ne 0 ] || [ "$nfail" -eq 0 ] ||
       ! echo "$last" | grep -qE "^0 PASS, $nfail FAIL, [0-9]+ NOT-REPRODUCED-HERE$"; then
        echo "not ok - $name: exit $rc, $npass PASS and $nfail FAIL lines, last line '$last'"
        grep -E '^ +PASS ' "$out/$name.log" | head -5
        tail -n 3 "$out/$name.err"
        fail=$((fail + 1))
    else
        echo "ok - $name: $nfail checks FAIL on a contrary result, exit 1"
    fi
    if [ $ran -gt 1 ] && [ "${DPDO_TEST_LONG:-0}" = 0 ]; then return; fi
    nf=$((nf + 1))
    "$@" --plant-contrary --no-fail-exit --out "$out/$name-nf" > /dev/null 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then echo "not ok - $name --no-fail-exit: exit $rc"; fail=$((fail + 1));
    else echo "ok - $name --no-fail-exit: exit 0"; fi
}
run dp_dda_svm "$E/dp_dda_svm" --quick --seeds 2 --noise rigorous --reproducible
run do_adp_logistic "$E/do_adp_logistic" --quick --seeds 2 --reproducible
if [ "${DPDO_TEST_LONG:-0}" != 0 ]; then
    run dp_wor_sgd_classify "$E/dp_wor_sgd_classify" --quick --seeds 2 --reproducible
    run fed_plt_tables "$E/fed_plt_tables" --quick --runs 2 --tables 4,6,7,8 --reproducible
else
    echo "# dp_wor_sgd_classify, fed_plt_tables and the other --no-fail-exit runs: make check-long"
fi
echo "# summary: $((ran + nf - fail)) passed, $fail failed"
[ $fail -eq 0 ]
