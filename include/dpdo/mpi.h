/* SPDX-License-Identifier: BSD-3-Clause */
/* libdpdo_mpi: runs of libdpdo algorithms spread over MPI processes.
 * Separate library (link -ldpdo_mpi -ldpdo, pkg-config dpdo-mpi) so that
 * libdpdo itself has no MPI dependency. See docs/distributed.md.
 *
 *     MPI_Init(&argc, &argv);
 *     dpdo_mpi_create(&m, MPI_COMM_WORLD, n, NULL, NULL);   (block layout)
 *     for i in 0..n-1: i in [dpdo_mpi_first_node(m), dpdo_mpi_end_node(m))
 *         ? dpdo_node_create(&node[i], my shard, loss, 1)   (data on this rank only)
 *         : dpdo_node_create_remote(&node[i], loss, q_i, 1) (just the row count)
 *     dpdo_algorithm_setup(alg, node, n, net, reg, acc, &opts);   (same on every rank)
 *     dpdo_mpi_attach(m, alg, net);                 (collective; prepares)
 *     while (dpdo_algorithm_step(alg) == DPDO_ROUND) ...;   (collective)
 *     dpdo_algorithm_share_state(alg);               (collective; optional)
 *
 * Every rank runs the same algorithm with the same seed and parameters; rank
 * r computes for its block of nodes only, and only what the algorithm sends
 * crosses the wire: gossip messages between the ranks hosting neighbours
 * (neighbourhood collectives on a distributed graph communicator built from
 * the network), uploads to and broadcasts from the coordinator's rank, and
 * the DP-WOR-SGD turn. Results are bit-identical to the one-process run with
 * the same seed, for any number of ranks.
 *
 * Failures: the library sets MPI_ERRORS_RETURN on its own communicators and
 * waits for every operation at most `timeout` seconds; a peer that fails,
 * vanishes or stops taking part gives DPDO_E_IO on the others within that
 * time, never a hang. After such an error the handle is broken (every later
 * call returns DPDO_E_IO): end the run (MPI_Abort is the usual way out).
 *
 * Threads: one handle per algorithm, used by one thread (MPI_THREAD_SINGLE is
 * enough). */
#ifndef DPDO_MPI_H
#define DPDO_MPI_H

#include "algorithm.h"
#include "export.h"
#include "transport.h"
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== ADVANCED ZONE: MPI transport ==== */

typedef struct dpdo_mpi dpdo_mpi;

typedef struct dpdo_mpi_options {
    size_t struct_size;  /* sizeof(dpdo_mpi_options) as compiled by the caller        0.1 */
    int32_t root;        /* rank of the coordinator (federated algorithms); default 0 0.1 */
    int32_t reserved0;   /* must be 0                                                 0.1 */
    double timeout;      /* seconds to wait for any peer, > 0; default 60             0.1 */
    double spin;         /* seconds a wait polls MPI without pausing, >= 0; default
                            5e-5. Then it sleeps between polls (naps of the kernel's
                            timer slack, ~50 us), which leaves the core to a peer that
                            shares it (more ranks than cores, or other processes:
                            docs/distributed.md). With one rank per dedicated core a
                            large value (e.g. 1: never pause) gives the lowest latency 0.2 */
    int64_t reserved[3]; /* must be 0 (set by _init): room for later fields, docs/abi.md 0.2 */
} dpdo_mpi_options;

/* Defaults above; o->struct_size = struct_size. Returns DPDO_OK, DPDO_E_INVAL (o NULL),
 * DPDO_E_VERSION (struct_size < sizeof(size_t)); any older (smaller, e.g. a 0.1 caller's
 * without `spin`) or newer (larger) struct_size is accepted (docs/abi.md, "Options structs").
 * Thread-safe. Since 0.1. The spin field: since version 0.2. */
DPDO_API int dpdo_mpi_options_init(dpdo_mpi_options *o, size_t struct_size);

/* Create a handle for a run of n_nodes nodes over the ranks of comm
 * (duplicated; the caller keeps comm). first[size + 1] (may be NULL): rank r
 * hosts nodes first[r] .. first[r+1]-1, non-decreasing, first[0] = 0,
 * first[size] = n_nodes (a rank may host none); NULL = balanced blocks (the
 * first n mod size ranks get one more). Collective over comm (MPI_Comm_dup).
 * Returns DPDO_OK, DPDO_E_INVAL (NULL out, n_nodes outside [1, 2^31), bad
 * first, timeout <= 0, spin < 0 or NaN, root outside the ranks, reserved0 != 0),
 * DPDO_E_VERSION (opts: struct_size < sizeof(size_t), or a non-zero byte beyond the
 * fields this library knows, docs/abi.md), DPDO_E_NOMEM, DPDO_E_IO (MPI
 * failed). *out is NULL on failure. Since 0.1. */
DPDO_API int dpdo_mpi_create(dpdo_mpi **out, MPI_Comm comm, int64_t n_nodes, const int64_t *first,
                             const dpdo_mpi_options *opts);
/* Free the handle and its communicators (collective: MPI_Comm_free). NULL
 * is a no-op. Detach it from algorithms first (or destroy them). Since 0.1. */
DPDO_API void dpdo_mpi_destroy(dpdo_mpi *m);
/* Message about the last failure; "" if none; "dpdo_mpi_errmsg: m is NULL" for NULL.
 * Since 0.1. */
DPDO_API const char *dpdo_mpi_errmsg(const dpdo_mpi *m);
/* This rank, the number of ranks (-1 for NULL). Since 0.1. */
DPDO_API int dpdo_mpi_rank(const dpdo_mpi *m);
DPDO_API int dpdo_mpi_size(const dpdo_mpi *m);
/* The nodes this rank hosts: [first_node, end_node) (0, 0 for NULL). Since 0.1. */
DPDO_API int64_t dpdo_mpi_first_node(const dpdo_mpi *m);
DPDO_API int64_t dpdo_mpi_end_node(const dpdo_mpi *m);

/* Attach the handle to alg (BORROWED; same n) as its transport: builds the
 * rank graph from net (BORROWED, may be NULL for federated algorithms; then
 * only gather/broadcast and world collectives are used) and calls
 * dpdo_algorithm_set_transport, which prepares alg on every rank and agrees
 * on the outcome. Collective. Returns DPDO_OK, DPDO_E_INVAL, DPDO_E_NOMEM,
 * DPDO_E_IO, or the error of dpdo_algorithm_set_transport (message in
 * dpdo_algorithm_errmsg(alg)). Since 0.1. */
DPDO_API int dpdo_mpi_attach(dpdo_mpi *m, dpdo_algorithm *alg, dpdo_network *net);

/* What this rank put on the wire since create: algorithm messages (one per
 * message and receiving rank) and their bytes (payload plus an 8-byte size
 * per piece), and control bytes (sizes, outcomes, shared bookkeeping,
 * broadcasts counted once per receiving rank). Any output may be NULL.
 * Returns DPDO_OK or DPDO_E_INVAL. Since 0.1. */
DPDO_API int dpdo_mpi_traffic(const dpdo_mpi *m, int64_t *messages, int64_t *bytes,
                              int64_t *control_bytes);

#ifdef __cplusplus
}
#endif
#endif /* DPDO_MPI_H */
