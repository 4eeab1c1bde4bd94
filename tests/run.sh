#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Test runner. Usage: run.sh TESTBIN... [-- MAKE_TARGET...]
# Runs each test binary (optionally under $DPDO_TEST_WRAP, e.g. valgrind),
# adds up the cases from each "# summary: N passed, M failed" line, counts a
# crash or a missing summary as a failure, then runs each make target after
# "--" as one pass/fail case. Ends with the line "N passed, M failed".
set -u
BUILD=${BUILD:-build}
LOG=${BUILD}/test-logs
mkdir -p "$LOG"
passed=0; failed=0; failures=""
export BLIS_NUM_THREADS=1
mode=bin
for t in "$@"; do
    if [ "$t" = "--" ]; then mode=make; continue; fi
    name=$(basename "$t")
    if [ $mode = bin ]; then
        ${DPDO_TEST_WRAP:-} "$t" > "$LOG/$name.log" 2>&1
        rc=$?
        line=$(grep '^# summary: ' "$LOG/$name.log" | tail -n 1)
        p=$(echo "$line" | sed -n 's/^# summary: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p')
        f=$(echo "$line" | sed -n 's/^# summary: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p')
        if [ -z "$p" ]; then p=0; f=1; fi
        if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi   # crash, sanitizer or valgrind error
        passed=$((passed + p)); failed=$((failed + f))
        if [ "$f" -ne 0 ]; then
            failures="$failures $name"
            echo "FAIL $name ($p passed, $f failed, exit $rc); log: $LOG/$name.log"
            grep -E '^(not ok|#  )' "$LOG/$name.log" | head -n 20
            tail -n 5 "$LOG/$name.log" | grep -v '^#' | head -n 5
        else
            echo "ok   $name ($p passed)"
        fi
    else
        if make --no-print-directory -s BUILD="$BUILD" "$t" > "$LOG/make-$t.log" 2>&1; then
            passed=$((passed + 1)); echo "ok   make $t"
        else
            failed=$((failed + 1)); failures="$failures make-$t"
            echo "FAIL make $t; log: $LOG/make-$t.log"; tail -n 15 "$LOG/make-$t.log"
        fi
    fi
done
[ -n "$failures" ] && echo "failed:$failures"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
