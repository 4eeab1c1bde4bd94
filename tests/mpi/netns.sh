#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# libdpdo_mpi across hosts: three Linux network namespaces ("hosts" h0, h1, h2, addresses
# 10.77.0.1-3/24 on a veth each) joined by a bridge in a fourth namespace (hub, 10.77.0.254),
# all created here and removed on exit; traffic goes only to those addresses. MPICH's Hydra
# runs in hub and starts one proxy per host through a launcher that enters the host's
# namespace (`ip netns exec`); each host holds its own nodes' data and keys (mpi_run and
# test_mpi load or draw only their nodes'). Usage: netns.sh BUILD [quick]
# Prints "check-mpi-hosts: SKIPPED (...)" and exits 0 where namespaces cannot be made.
set -u
BUILD=${1:-build}
MODE=${2:-full}
TEST=$BUILD/tests/mpi/test_mpi
RUN=$BUILD/examples/mpi_run
P=dpdo$$
T=$(mktemp -d)
skip() { echo "check-mpi-hosts: SKIPPED ($*)"; rm -rf "$T"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root for ip netns"
command -v ip >/dev/null 2>&1 || skip "no iproute2"
command -v mpiexec >/dev/null 2>&1 || skip "no mpiexec"
[ -x "$TEST" ] && [ -x "$RUN" ] || { echo "check-mpi-hosts: build $TEST and $RUN first"; exit 1; }
ip netns add ${P}hub 2>/dev/null || skip "ip netns add is not permitted here"
cleanup() {
    for ns in ${P}h0 ${P}h1 ${P}h2 ${P}hub; do
        for pid in $(ip netns pids $ns 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
        ip netns del $ns 2>/dev/null
    done
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
ip -n ${P}hub link set lo up
ip -n ${P}hub link add br0 type bridge
ip -n ${P}hub addr add 10.77.0.254/24 dev br0
ip -n ${P}hub link set br0 up
for k in 0 1 2; do
    ip netns add ${P}h$k || skip "ip netns add failed"
    ip -n ${P}hub link add v$k type veth peer name eth0 netns ${P}h$k || skip "no veth pairs"
    ip -n ${P}hub link set v$k master br0 up
    ip -n ${P}h$k link set lo up
    ip -n ${P}h$k addr add 10.77.0.$((k + 1))/24 dev eth0
    ip -n ${P}h$k link set eth0 up
done
# the launcher Hydra calls as `rsh HOST COMMAND...`: COMMAND runs in HOST's namespace
cat > "$T/enter" <<EOS
#!/bin/sh
host=\$1; shift
case \$host in
10.77.0.1) ns=${P}h0 ;; 10.77.0.2) ns=${P}h1 ;; 10.77.0.3) ns=${P}h2 ;;
*) echo "enter: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec \$ns sh -c "\$*"
EOS
chmod +x "$T/enter"
# UCX (MPICH's ch4:ucx) over TCP on the veth; the ranks share nothing else
export UCX_TLS=tcp,self UCX_NET_DEVICES=eth0 UCX_WARN_UNUSED_ENV_VARS=n
HOSTS=10.77.0.1,10.77.0.2,10.77.0.3
mpirun3() { # mpirun3 TIMEOUT ARGS...: one rank per host
    to=$1; shift
    timeout -k 5 "$to" ip netns exec ${P}hub mpiexec -iface br0 -launcher rsh -launcher-exec "$T/enter" \
        -hosts $HOSTS -n 3 -ppn 1 "$@"
}
netem() { # netem DELAY_MS LOSS_PCT: on every host's outgoing link (one way: DELAY_MS added)
    for k in 0 1 2; do
        tc -n ${P}h$k qdisc replace dev eth0 root netem delay "$1"ms loss "$2"% 2>/dev/null || return 1
    done
}
fail=0
say() { echo "check-mpi-hosts: $*"; }

# 1. one rank per host: each rank sees its own namespace's address
got=$(mpirun3 60 sh -c 'ip -o -4 addr show dev eth0' 2>&1 | awk '{print $4}' | sort | tr '\n' ' ')
if [ "$got" = "10.77.0.1/24 10.77.0.2/24 10.77.0.3/24 " ]; then say "ok   3 ranks on 3 hosts ($got)"
else say "FAIL 3 ranks on 3 hosts: '$got'"; fail=1; fi

# 2. every algorithm type across the hosts, bit-identical to one process (tests/mpi/test_mpi.c);
#    then with 1 ms delay and 1 % loss on every link (DP-DDA and DO-ADP cases)
tm() { # tm NAME ONLY: test_mpi across the hosts
    mpirun3 900 env DPDO_MPI_TEST_ONLY="$2" "$TEST" > "$T/tm.log" 2>&1
    rc=$?
    s=$(grep '^# summary' "$T/tm.log")
    if [ $rc -eq 0 ] && echo "$s" | grep -q ' 0 failed'; then say "ok   test_mpi across 3 hosts, $1: ${s#\# summary: }"
    else say "FAIL test_mpi across 3 hosts, $1 (exit $rc):"; grep -E '^(not ok|#)' "$T/tm.log" | head -10; tail -5 "$T/tm.log"; fail=1; fi
}
if [ "$MODE" = full ]; then tm "no added latency" ""; fi
if netem 1 1; then tm "1 ms delay, 1 % loss" "dp-dda matching"; netem 0 0 2>/dev/null
else say "SKIPPED the runs with added latency: tc netem is unavailable (this kernel has no sch_netem)"; fi

# 3. mpi_run (DP-DDA, 6 nodes, 2 per host, reproducible): the output's bits equal the
#    one-process run's at every added latency; rounds/s and bytes/round for docs/distributed.md
ARGS="--algorithm dp-dda --nodes 6 --reproducible --seed 7"
ref=$("$RUN" $ARGS --rounds 40 2>&1 | sed -n 's/^output hash \([0-9a-f]*\).*/\1/p')
say "one process: output hash $ref"
for spec in 0:0:200 1:0:100 10:0:40 50:0:40 10:2:40; do
    ms=${spec%%:*}; rest=${spec#*:}; loss=${rest%%:*}; rounds=${rest#*:}
    if [ "$ms" != 0 ] || [ "$loss" != 0 ]; then netem "$ms" "$loss" || { say "SKIPPED delay $ms ms, loss $loss %: no tc netem"; continue; }; fi
    mpirun3 600 "$RUN" $ARGS --rounds $rounds --timeout 30 > "$T/run.log" 2>&1
    rc=$?
    h=$(sed -n 's/^output hash \([0-9a-f]*\).*/\1/p' "$T/run.log")
    rps=$(sed -n 's/.*(\([0-9.]*\) rounds\/s).*/\1/p' "$T/run.log")
    wire=$(sed -n 's/^wire: \([0-9]*\) messages, \([0-9]*\) bytes.*/\1 \2/p' "$T/run.log")
    if [ $rounds = 40 ]; then want=$ref; else want=$("$RUN" $ARGS --rounds $rounds 2>&1 | sed -n 's/^output hash \([0-9a-f]*\).*/\1/p'); fi
    line="delay $ms ms, loss $loss %: $rounds rounds, $rps rounds/s, wire $wire (messages bytes), hash $h"
    if [ $rc -eq 0 ] && [ -n "$h" ] && [ "$h" = "$want" ]; then say "ok   $line"
    else say "FAIL $line (one process: $want; exit $rc)"; tail -5 "$T/run.log"; fail=1; fi
done
netem 0 0 2>/dev/null

# 4. a host that disappears: its link goes down, or its process is killed, mid-run. Every
#    surviving rank must stop with DPDO_E_IO and its message within --timeout (5 s) + slack.
vanish() { # vanish HOW
    TO=5
    ( mpirun3 120 -disable-auto-cleanup "$RUN" $ARGS --rounds 100000 --timeout $TO > "$T/v.log" 2>&1 ) &
    bg=$!
    sleep 6 # start-up, then some rounds
    t0=$(date +%s.%N)
    if [ "$1" = link ]; then ip -n ${P}h2 link set eth0 down
    else for pid in $(ip netns pids ${P}h2); do
        [ "$(cat /proc/$pid/comm 2>/dev/null)" = mpi_run ] && kill -9 "$pid"; done; fi
    n=0
    while [ $n -lt 300 ] && [ "$(grep -c 'stops every rank' "$T/v.log")" -lt 2 ]; do sleep 0.1; n=$((n + 1)); done
    t1=$(date +%s.%N)
    for pid in $(ip netns pids ${P}hub) $(ip netns pids ${P}h0) $(ip netns pids ${P}h1) $(ip netns pids ${P}h2); do
        kill -9 "$pid" 2>/dev/null; done
    wait $bg 2>/dev/null
    [ "$1" = link ] && ip -n ${P}h2 link set eth0 up
    secs=$(echo "$t1 - $t0" | bc -l 2>/dev/null || python3 -c "print($t1 - $t0)")
    r0=$(grep -c 'rank 0 stops every rank' "$T/v.log"); r1=$(grep -c 'rank 1 stops every rank' "$T/v.log")
    msg=$(grep -m1 'I/O\|no answer\|MPI error' "$T/v.log")
    if [ "$r0" -ge 1 ] && [ "$r1" -ge 1 ] && [ -n "$msg" ] && python3 -c "import sys; sys.exit(not $secs < $TO + 10)"; then
        say "ok   host h2 gone ($1): ranks 0 and 1 stopped with DPDO_E_IO after $(printf '%.1f' $secs) s (timeout $TO s): $msg"
    else say "FAIL host h2 gone ($1): after $(printf '%.1f' $secs) s"; tail -8 "$T/v.log"; fail=1; fi
}
vanish link
vanish kill

[ $fail -eq 0 ] && say "all passed" || say "FAILED"
exit $fail
