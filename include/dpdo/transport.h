/* SPDX-License-Identifier: BSD-3-Clause */
/* Transports: carrying an algorithm's messages between processes.
 *
 * In one process the engine needs no transport: a receiver reads the
 * sender's message where the sender wrote it. To spread the nodes of one run
 * over several processes (machines), every process creates the same
 * algorithm (same type, seed, parameters, network and node metadata; nodes it
 * does not host are made with dpdo_node_create_remote) and attaches the same
 * kind of transport. Each process then computes only for the nodes it hosts,
 * and the transport moves, per stage of a round, the messages the algorithm
 * sends from the processes hosting the senders to the processes hosting the
 * receivers. The MPI transport (libdpdo_mpi, dpdo/mpi.h) implements this
 * interface; tests implement it in-process. docs/distributed.md describes
 * what crosses the wire.
 *
 * Every callback is collective: all processes call it in the same order with
 * the same arguments, except for the data. A callback returns 0 or a
 * DPDO_E_* code (DPDO_E_IO for a peer that failed or did not answer in time);
 * a non-zero return fails the round with that code on this process, and
 * the transport must return non-zero from every later call (the processes
 * are no longer in step). */
#ifndef DPDO_TRANSPORT_H
#define DPDO_TRANSPORT_H

#include "algorithm.h"
#include "export.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== ADVANCED ZONE: transports for distributed runs (user types) ==== */

/* A piece of a message: `bytes` bytes at `data` on the sender. On a receiver
 * the same piece is written to its own `data` (the same place in its copy of
 * the algorithm's state); at most `cap` bytes fit there. A sender's `bytes`
 * may differ from what a receiver expects (sparse messages): the transport
 * carries the size. */
typedef struct dpdo_segment {
    void *data;
    int64_t bytes, cap;
} dpdo_segment;

/* One message: from node `src` (or DPDO_NODE_COORDINATOR) to the nodes
 * dst[0..ndst-1] (may include src itself and DPDO_NODE_COORDINATOR; a
 * process never sends to itself). */
typedef struct dpdo_message {
    int64_t src;
    int64_t ndst;
    const int64_t *dst;
    int32_t nseg;
    dpdo_segment seg[3];
} dpdo_message;

typedef struct dpdo_transport_type {
    size_t struct_size; /* sizeof(dpdo_transport_type) as compiled by the implementer */
    const char *name;
    /* Where nodes live: proc[i] = the process hosting node i (0 <= i < n),
     * proc[n] = the process of the coordinator; *self = this process. Called
     * once at attach. Processes are numbered 0 .. P-1. */
    int (*layout)(void *user, int64_t n, int64_t *proc, int64_t *self);
    /* Move the messages of one stage: msg[k] with a src hosted here is sent
     * to every other process hosting one of its destinations; a message from
     * another process to a node hosted here is written to its segments.
     * `status` is this process's status so far (non-zero: its computation
     * failed; it sends nothing but still takes part). *any_failed = 1 when
     * some process passed a non-zero status (no data then needs to move). */
    int (*exchange)(void *user, int status, const dpdo_message *msg, int64_t nmsg,
                    int32_t *any_failed);
    /* Agree on the round's outcome: every process passes its status, failing
     * node (or -1) and message (a NUL-terminated text in msg[cap]); on return
     * all hold the status, node and message of the lowest failing node
     * (status 0 if none). */
    int (*agree)(void *user, int *status, int64_t *node, char *msg, size_t cap);
    /* Make row i (row_bytes at base + i * row_bytes) of every node i visible
     * to every process: the process hosting i sends it to all (n rows). */
    int (*share)(void *user, void *base, int64_t row_bytes, int64_t n);
    /* Element-wise sum of v[count] over all processes, result on all. */
    int (*sum)(void *user, int64_t *v, int64_t count);
    /* bytes at buf from process `from` to all. */
    int (*bcast)(void *user, int64_t from, void *buf, int64_t bytes);
    /* Point to point, for stages that run node after node (DP-WOR-SGD). */
    int (*send)(void *user, int64_t to, const void *buf, int64_t bytes);
    int (*recv)(void *user, int64_t from, void *buf, int64_t bytes);
    /* Optional (may be NULL): the transport's message about its last failure, quoted in the
     * algorithm's message ("no answer from rank 3 within 60 s"). */
    const char *(*errmsg)(void *user);
} dpdo_transport_type;

/* Run `alg` as one part of a run spread over processes: type (BORROWED,
 * static) and user (BORROWED) must outlive the algorithm. Collective. Call
 * after dpdo_algorithm_setup and the parameter setters, at round 0 (READY);
 * it prepares the algorithm (dpdo_algorithm_prepare) and agrees on the
 * outcome with the other processes, so a configuration error on one process
 * fails attach on all. Afterwards step() computes only for the nodes this
 * process hosts; iterates of other nodes are not current on this process
 * until dpdo_algorithm_share_state() (the tolerance stop rule shares them at
 * each test). The objective helpers need every node's data and return
 * DPDO_E_UNSUPPORTED with remote nodes. NULL type detaches (back to one
 * process). Returns DPDO_OK, DPDO_E_INVAL
 * (NULL alg, struct_size too small, a missing callback, a layout that does
 * not host every node exactly once), DPDO_E_STATE (not READY at round 0),
 * DPDO_E_UNSUPPORTED (an algorithm that cannot run distributed), the
 * transport's or prepare's error. Since 0.1. */
DPDO_API int dpdo_algorithm_set_transport(dpdo_algorithm *alg, const dpdo_transport_type *type,
                                          void *user);

/* Collective: bring every state row (every node's, the coordinator's) to
 * every process, so that the getters (iterate, output, state) see the whole
 * run on any process. Moves n * (state size) values; call it when needed, not
 * every round. Without a transport it does nothing. Returns DPDO_OK,
 * DPDO_E_INVAL, DPDO_E_STATE (EMPTY), the transport's error. Since 0.1. */
DPDO_API int dpdo_algorithm_share_state(dpdo_algorithm *alg);

/* 1 when this process computes for `node` (always 1 without a transport), 0
 * otherwise or for bad arguments. Since 0.1. */
DPDO_API int dpdo_algorithm_hosts(const dpdo_algorithm *alg, int64_t node);

#ifdef __cplusplus
}
#endif
#endif /* DPDO_TRANSPORT_H */
