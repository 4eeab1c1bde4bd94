#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""An Ethernet switch in user space that delays every frame and drops some IPv4 frames: the
stand-in for `tc netem` where the kernel has no sch_netem (tests/mpi/netns.sh runs it in the hub
namespace it created, on the veth ends of the hosts' data links, and nowhere else).

    delay_switch.py IF0,IF1,... DELAY_MS LOSS_PCT SECONDS

Frames are forwarded by learned destination MAC (flooded while unknown) DELAY_MS after they
arrived; LOSS_PCT % of IPv4 frames are dropped (seeded, so runs repeat); ARP is never dropped.
The switch stops by itself after SECONDS."""
import array
import heapq
import random
import select
import socket
import sys
import time

ETH_P_ALL = 3
DEBUG = 0


def csum16(data):
    if len(data) % 2:
        data += b"\0"
    t = sum(array.array("H", data))
    while t >> 16:
        t = (t & 0xFFFF) + (t >> 16)
    return ~t & 0xFFFF


def fix_checksum(frame):
    """Frames taken from a veth may carry a partial TCP/UDP checksum (the sender's checksum
    offload): compute it, as a NIC would, before passing the frame on."""
    if frame[12:14] != b"\x08\x00":
        return frame
    ihl = (frame[14] & 15) * 4
    proto, ip_end = frame[23], 14 + int.from_bytes(frame[16:18], "big")
    off = {6: 16, 17: 6}.get(proto)
    if off is None or ip_end > len(frame):
        return frame
    seg = bytearray(frame[14 + ihl:ip_end])
    seg[off:off + 2] = b"\0\0"
    pseudo = frame[26:34] + bytes([0, proto]) + len(seg).to_bytes(2, "big")
    c = csum16(pseudo + bytes(seg))
    if proto == 17 and c == 0:
        c = 0xFFFF
    seg[off:off + 2] = c.to_bytes(2, "little")  # csum16 summed native (little-endian) words
    return frame[:14 + ihl] + bytes(seg) + frame[ip_end:]


def main():
    names = sys.argv[1].split(",")
    delay = float(sys.argv[2]) / 1000.0
    loss = float(sys.argv[3]) / 100.0
    stop = time.monotonic() + float(sys.argv[4])
    socks = []
    for n in names:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        s.bind((n, ETH_P_ALL))
        s.setblocking(False)
        socks.append(s)
    where, queue, seq, rng = {}, [], 0, random.Random(20261207)
    print("switch ready", flush=True)
    while time.monotonic() < stop:
        now = time.monotonic()
        while queue and queue[0][0] <= now:
            _, _, port, frame = heapq.heappop(queue)
            try:
                socks[port].send(frame)
            except OSError as e:
                if DEBUG: print("tx error", port, e, flush=True)
        wait = min(queue[0][0] - now, 0.5) if queue else 0.5
        ready, _, _ = select.select(socks, [], [], max(wait, 0.0))
        for s in ready:
            i = socks.index(s)
            while True:
                try:
                    frame, addr = s.recvfrom(65536)
                except (BlockingIOError, OSError):
                    break
                if addr[2] == socket.PACKET_OUTGOING:
                    continue  # our own sends, seen again
                where[frame[6:12]] = i
                if DEBUG: print("rx", i, len(frame), frame[:14].hex(), addr, flush=True)
                if loss > 0 and frame[12:14] == b"\x08\x00" and rng.random() < loss:
                    continue
                frame = fix_checksum(frame)
                dst = frame[0:6]
                outs = [where[dst]] if dst in where else [j for j in range(len(socks)) if j != i]
                t = time.monotonic() + delay
                for j in outs:
                    if j != i:
                        heapq.heappush(queue, (t, seq, j, frame))
                        seq += 1


if __name__ == "__main__":
    main()
