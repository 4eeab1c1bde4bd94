#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# libdpdo_mpi across hosts: three Linux network namespaces ("hosts" h0, h1, h2) joined to a
# fourth (hub) by two veth links each: eth0 for the ranks' data (10.77.0.1-3/24, bridge br1 in hub)
# and eth1 for Hydra's control connections (10.77.1.1-3/24, bridge br0 = 10.77.1.254), all
# created here and removed on exit; traffic goes only to those addresses. MPICH's Hydra
# runs in hub and starts one proxy per host through a launcher that enters the host's
# namespace (`ip netns exec`); each host holds its own nodes' data and keys (mpi_run and
# test_mpi load or draw only their nodes'). Added latency and loss: tc netem on the hosts' data
# links, or where the kernel has no sch_netem, tests/mpi/delay_switch.py (a user-space switch in
# hub). Usage: netns.sh BUILD [full | quick (no full test_mpi run) | check (only 1 and 3: make
# check-mpi) | vanish (1 and 3, the killed host twice)]
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
# two links per host: eth0, the data link (10.77.0.k+1; the ranks' traffic, through bridge br1 or
# the user-space delay switch), and eth1, the control link of Hydra (10.77.1.k+1, bridge br0,
# where mpiexec listens on 10.77.1.254)
ip -n ${P}hub link add br0 type bridge
ip -n ${P}hub addr add 10.77.1.254/24 dev br0
ip -n ${P}hub link set br0 up
ip -n ${P}hub link add br1 type bridge
ip -n ${P}hub link set br1 up
for k in 0 1 2; do
    ip netns add ${P}h$k || skip "ip netns add failed"
    ip -n ${P}hub link add d$k type veth peer name eth0 netns ${P}h$k || skip "no veth pairs"
    ip -n ${P}hub link add c$k type veth peer name eth1 netns ${P}h$k
    ip -n ${P}hub link set d$k master br1 up
    ip -n ${P}hub link set c$k master br0 up
    ip -n ${P}h$k link set lo up
    ip -n ${P}h$k addr add 10.77.0.$((k + 1))/24 dev eth0
    ip -n ${P}h$k addr add 10.77.1.$((k + 1))/24 dev eth1
    ip -n ${P}h$k link set eth0 up
    ip -n ${P}h$k link set eth1 up
    # frames of at most one MTU (no GSO/GRO super-frames), so the switch can pass each one on
    ip -n ${P}h$k link set eth0 gso_max_segs 1 2>/dev/null
    ip -n ${P}hub link set d$k promisc on
done
# static neighbour entries on the data links: no ARP to lose or delay (again after a link was down)
neigh() {
    for k in 0 1 2; do
        mac=$(ip -n ${P}h$k -o link show eth0 | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
        for j in 0 1 2; do
            [ $j = $k ] || ip -n ${P}h$j neigh replace 10.77.0.$((k + 1)) lladdr "$mac" dev eth0 nud permanent
        done
    done
}
neigh
reap() { # end what a run left in the hosts (ranks that did not leave MPI_Finalize)
    for k in 0 1 2; do for pid in $(ip netns pids ${P}h$k 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done; done
}
# the launcher Hydra calls as `rsh HOST COMMAND...`: COMMAND runs in HOST's namespace
cat > "$T/enter" <<EOS
#!/bin/sh
host=\$1; shift
case \$host in
10.77.1.1) ns=${P}h0 ;; 10.77.1.2) ns=${P}h1 ;; 10.77.1.3) ns=${P}h2 ;;
*) echo "enter: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec \$ns sh -c "\$*"
EOS
chmod +x "$T/enter"
# UCX (MPICH's ch4:ucx) over TCP on the veth; the ranks share nothing else
export UCX_TLS=tcp,self UCX_NET_DEVICES=eth0 UCX_WARN_UNUSED_ENV_VARS=n
HOSTS=10.77.1.1,10.77.1.2,10.77.1.3
mpirun3() { # mpirun3 TIMEOUT ARGS...: one rank per host
    to=$1; shift
    timeout -k 5 "$to" ip netns exec ${P}hub mpiexec -iface br0 -launcher rsh -launcher-exec "$T/enter" \
        -hosts $HOSTS -n 3 -ppn 1 "$@"
}
# mpirun_log LOG DONE_RE TIMEOUT ARGS...: mpirun3 with its output in LOG; once LOG has a line
# matching DONE_RE (the run's last line) the processes get 20 s to leave MPI_Finalize, then they
# are ended (UCX over these links sometimes never returns from it). Sets rc: mpiexec's status,
# or 124 when the run had to be ended.
mpirun_log() {
    log=$1 done_re=$2; shift 2
    mpirun3 "$@" > "$log" 2>&1 &
    job=$!
    n=0 grace=-1
    while kill -0 $job 2>/dev/null; do
        if [ $grace -lt 0 ] && grep -q -E "$done_re" "$log"; then grace=200; fi
        if [ $grace -eq 0 ]; then reap; kill $job 2>/dev/null; break; fi
        [ $grace -gt 0 ] && grace=$((grace - 1))
        sleep 0.1
    done
    wait $job; rc=$?
    reap
}
SWITCH=
netem() { # netem DELAY_MS LOSS_PCT: DELAY_MS added one way between any two hosts' data links
    [ -n "$SWITCH" ] && { kill "$SWITCH" 2>/dev/null; wait "$SWITCH" 2>/dev/null; SWITCH=; }
    if [ "$1" = 0 ] && [ "$2" = 0 ]; then
        for k in 0 1 2; do ip -n ${P}hub link set d$k master br1; done
        return 0
    fi
    if [ -z "${DPDO_NETNS_SWITCH:-}" ] && tc -n ${P}h0 qdisc replace dev eth0 root netem delay 1ms 2>/dev/null; then
        for k in 0 1 2; do tc -n ${P}h$k qdisc replace dev eth0 root netem delay "$1"ms loss "$2"% || return 1; done
        return 0
    fi
    # no sch_netem in this kernel: the user-space switch (tests/mpi/delay_switch.py) in hub
    command -v python3 >/dev/null 2>&1 || return 1
    for k in 0 1 2; do ip -n ${P}hub link set d$k nomaster; done
    : > "$T/switch.log"
    ip netns exec ${P}hub python3 "$(dirname "$0")/delay_switch.py" d0,d1,d2 "$1" "$2" 1800 > "$T/switch.log" 2>&1 &
    SWITCH=$!
    n=0; while [ $n -lt 100 ] && ! grep -q ready "$T/switch.log"; do sleep 0.1; n=$((n + 1)); done
    grep -q ready "$T/switch.log"
}
fail=0
[ -n "${DPDO_NETNS_SETUP_ONLY:-}" ] && return 0
say() { echo "check-mpi-hosts: $*"; }

ARGS="--algorithm dp-dda --nodes 6 --reproducible --seed 7" # mpi_run's runs: 2 nodes per host

# 1. one rank per host: each rank sees its own namespace's address
got=$(mpirun3 60 sh -c 'ip -o -4 addr show dev eth0' 2>&1 | grep inet | awk '{print $4}' | sort | tr '\n' ' ')
if [ "$got" = "10.77.0.1/24 10.77.0.2/24 10.77.0.3/24 " ]; then say "ok   3 ranks on 3 hosts ($got)"
else say "FAIL 3 ranks on 3 hosts: '$got'"; fail=1; fi

# 2. every algorithm type across the hosts, bit-identical to one process (tests/mpi/test_mpi.c)
tm() { # tm NAME ONLY: test_mpi across the hosts
    if [ -n "$2" ]; then mpirun_log "$T/tm.log" '^# summary' 900 env DPDO_MPI_TEST_ONLY="$2" "$TEST"
    else mpirun_log "$T/tm.log" '^# summary' 900 "$TEST"; fi # all cases, the failure ones too
    s=$(grep '^# summary' "$T/tm.log")
    if echo "$s" | grep -q ' 0 failed'; then
        say "ok   test_mpi across 3 hosts, $1: ${s#\# summary: }$([ $rc -ne 0 ] && echo " (then exit $rc: MPI_Finalize did not return)")"
    elif [ -z "$s" ] && [ -n "$SWITCH" ]; then say "NOT MEASURED test_mpi, $1 (user-space switch; exit $rc)"
    else say "FAIL test_mpi across 3 hosts, $1 (exit $rc):"; grep -E '^(not ok|#)' "$T/tm.log" | head -10; tail -5 "$T/tm.log"; fail=1; fi
}
if [ "$MODE" = full ]; then tm "no added latency" ""; fi
# 3. a host that disappears: its link goes down, or its process is killed, mid-run. Every
#    surviving rank must stop with DPDO_E_IO and its message within --timeout (5 s) + slack.
vanish() { # vanish HOW
    TO=5
    ( mpirun3 120 -disable-auto-cleanup "$RUN" $ARGS --rounds 100000 --timeout $TO > "$T/v.log" 2>&1 ) &
    bg=$!
    # start-up (Hydra, MPI_Init over UCX, data, prepare) takes 1-2 s on a quiet machine and
    # more under load: a fixed pause let the host vanish during MPI_Init on a loaded machine,
    # where nothing can time out, so the kill waits for the run's first line, then some rounds
    n=0
    while [ $n -lt 1200 ] && ! grep -q 'over 3 ranks' "$T/v.log" 2>/dev/null; do sleep 0.1; n=$((n + 1)); done
    grep -q 'over 3 ranks' "$T/v.log" || { say "FAIL host h2 gone ($1): the run did not start"; tail -5 "$T/v.log"; fail=1; }
    sleep 1
    t0=$(date +%s.%N)
    if [ "$1" = link ]; then ip -n ${P}h2 link set eth0 down; ip -n ${P}h2 link set eth1 down
    else for pid in $(ip netns pids ${P}h2); do
        [ "$(cat /proc/$pid/comm 2>/dev/null)" = mpi_run ] && kill -9 "$pid"; done; fi
    n=0
    while [ $n -lt 300 ] && [ "$(grep -c 'stops every rank' "$T/v.log")" -lt 2 ]; do sleep 0.1; n=$((n + 1)); done
    t1=$(date +%s.%N)
    for pid in $(ip netns pids ${P}hub) $(ip netns pids ${P}h0) $(ip netns pids ${P}h1) $(ip netns pids ${P}h2); do
        kill -9 "$pid" 2>/dev/null; done
    wait $bg 2>/dev/null
    [ "$1" = link ] && ip -n ${P}h2 link set eth0 up && ip -n ${P}h2 link set eth1 up && neigh
    secs=$(echo "$t1 - $t0" | bc -l 2>/dev/null || python3 -c "print($t1 - $t0)")
    r0=$(grep -c 'rank 0 stops every rank' "$T/v.log"); r1=$(grep -c 'rank 1 stops every rank' "$T/v.log")
    msg=$(grep -m1 'I/O\|no answer\|MPI error' "$T/v.log")
    if [ "$r0" -ge 1 ] && [ "$r1" -ge 1 ] && [ -n "$msg" ] && python3 -c "import sys; sys.exit(not $secs < $TO + 10)"; then
        say "ok   host h2 gone ($1): ranks 0 and 1 stopped with DPDO_E_IO after $(printf '%.1f' $secs) s (timeout $TO s): $msg"
    else say "FAIL host h2 gone ($1): after $(printf '%.1f' $secs) s"; tail -8 "$T/v.log"; fail=1; fi
}
vanish link
vanish kill
[ "$MODE" = vanish ] && vanish kill

if [ "$MODE" != vanish ] && [ "$MODE" != check ]; then
# 4. mpi_run (DP-DDA, 6 nodes, 2 per host, reproducible): the output's bits equal the
#    one-process run's at every added latency; rounds/s and bytes/round for docs/distributed.md
ref=$("$RUN" $ARGS --rounds 40 2>&1 | sed -n 's/^output hash \([0-9a-f]*\).*/\1/p')
say "one process: output hash $ref"
for spec in 0:0:100 1:0:100 10:0:40 50:0:20 10:2:40; do
    ms=${spec%%:*}; rest=${spec#*:}; loss=${rest%%:*}; rounds=${rest#*:}
    if [ "$ms" != 0 ] || [ "$loss" != 0 ]; then netem "$ms" "$loss" || { say "SKIPPED delay $ms ms, loss $loss %: no tc netem"; continue; }; fi
    mpirun_log "$T/run.log" '^wire:' 90 "$RUN" $ARGS --rounds $rounds --timeout 30
    h=$(sed -n 's/^output hash \([0-9a-f]*\).*/\1/p' "$T/run.log")
    rps=$(sed -n 's/.*(\([0-9.]*\) rounds\/s).*/\1/p' "$T/run.log")
    wire=$(sed -n 's/^wire: \([0-9]*\) messages, \([0-9]*\) bytes.*/\1 \2/p' "$T/run.log")
    if [ $rounds = 40 ]; then want=$ref; else want=$("$RUN" $ARGS --rounds $rounds 2>&1 | sed -n 's/^output hash \([0-9a-f]*\).*/\1/p'); fi
    line="delay $ms ms, loss $loss %: $rounds rounds, $rps rounds/s, wire $wire (messages bytes), hash $h"
    if [ -n "$h" ] && [ "$h" = "$want" ]; then say "ok   $line$([ $rc -ne 0 ] && echo " (then exit $rc: MPI_Finalize did not return)")"
    elif [ -z "$h" ] && [ -n "$SWITCH" ]; then
        # through the user-space switch on a loaded machine, MPICH/UCX may not even connect (ARP
        # and SYN at the mercy of a Python process): not a result about libdpdo, not counted
        say "NOT MEASURED $line (user-space switch; exit $rc: $(grep -m1 -o 'unreachable\|timed out\|no answer[^(]*' "$T/run.log"))"
    else say "FAIL $line (one process: $want; exit $rc)"; tail -5 "$T/run.log"; fail=1; fi
done
netem 0 0 2>/dev/null

# 5. test_mpi with 1 ms delay and 1 % loss on every data link
if netem 1 1; then tm "1 ms delay, 1 % loss" "dp-dda matching"; netem 0 0 2>/dev/null
else say "SKIPPED the runs with added latency: no tc netem and no python3"; fi

fi

[ $fail -eq 0 ] && say "all passed" || say "FAILED"
exit $fail
