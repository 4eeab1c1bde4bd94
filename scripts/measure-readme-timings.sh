#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Measure the timings README.md quotes, as a newcomer meets them: a fresh `git clone` of the
# committed tree (HEAD), then
#   1. `make demo`  (builds the library, tools and examples in parallel, then runs the demo),
#   2. `make demo`  again (already built: the demo alone),
#   3. `make check` (builds the tests, runs everything; its "N passed, M failed" line is quoted),
# each with its wall time, its CPU time (user + system of every process it ran) and the load
# average around it (the 1-minute figure sampled every 5 s: min / mean / max), on a machine
# described by nproc and the model name of /proc/cpuinfo.
# Output: a report on stdout (paste it into the README's "Timings" paragraph or the release
# note); the logs of each step in OUT (default: a temporary directory that is kept).
# Usage: scripts/measure-readme-timings.sh [OUT]     (JOBS=N to override make's -j$(nproc))
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$(mktemp -d /var/tmp/dpdo-timings.XXXXXX)}
mkdir -p "$out"; out=$(cd "$out" && pwd)
src="$out/clone"
rm -rf "$src"
git clone -q "$top" "$src"
git -C "$src" checkout -q "$(git -C "$top" rev-parse HEAD)"

# run "$@" in the clone; print "wall cpu loadmin loadmean loadmax" (seconds, seconds, load)
timed() {
    log=$1; shift
    python3 - "$log" "$src" "$@" <<'EOF'
import os, resource, subprocess, sys, threading, time
log, cwd, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
loads, done = [], threading.Event()
def sample():
    while not done.is_set():
        loads.append(os.getloadavg()[0])
        done.wait(5)
t = threading.Thread(target=sample, daemon=True)
t.start()
before = resource.getrusage(resource.RUSAGE_CHILDREN)
t0 = time.monotonic()
with open(log, "w") as f:
    rc = subprocess.call(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT)
wall = time.monotonic() - t0
after = resource.getrusage(resource.RUSAGE_CHILDREN)
done.set(); t.join()
loads.append(os.getloadavg()[0])
cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
print("%.0f %.0f %.1f %.1f %.1f %d" % (wall, cpu, min(loads), sum(loads) / len(loads), max(loads), rc))
EOF
}

mmss() { printf '%d min %02d s' $(($1 / 60)) $(($1 % 60)); }
report() { # name wall cpu lmin lmean lmax rc
    printf '%-26s %4s s wall (%s), %4s s CPU, load %s / %s / %s (min / mean / max)%s\n' "$1" "$2" \
        "$(mmss "$2")" "$3" "$4" "$5" "$6" "$([ "$7" = 0 ] || echo ", FAILED rc $7")"
}

cpus=$(nproc)
model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo "measure-readme-timings: fresh clone of $(git -C "$top" rev-parse --short HEAD) in $src"
echo "machine: $cpus CPUs ($model); load at start $(cut -d' ' -f1-3 /proc/loadavg); make -j${JOBS:-$cpus}"
set -- $(timed "$out/demo1.log" make demo ${JOBS:+JOBS=$JOBS}); report "make demo (fresh clone)" "$@"
d1=$1
set -- $(timed "$out/demo2.log" make demo ${JOBS:+JOBS=$JOBS}); report "make demo (built)" "$@"
set -- $(timed "$out/check.log" make check ${JOBS:+JOBS=$JOBS}); report "make check (after demo)" "$@"
summary=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$out/check.log" | tail -n 1 || true)
echo "make check said: ${summary:-no summary line (see $out/check.log)}"
echo "logs: $out/{demo1,demo2,check}.log"
[ "$d1" -gt 0 ]
