/* SPDX-License-Identifier: BSD-3-Clause */
/* Distributed runs (dist.c): the engine's side of dpdo/transport.h. dist.c keeps its own state
 * (struct dpdo__dist, private to dist.c; e->dist is NULL in one process) and uses the engine
 * only through engine_impl.h; the engine files call it, never the other way round. */
#ifndef DPDO_DIST_IMPL_H
#define DPDO_DIST_IMPL_H

#include "engine_impl.h"

/* Attach transport t: ask for the layout, check it (each process hosts one contiguous block of
 * nodes) and replace e->dist. Message into e->err; on failure e->dist is unchanged. */
int dpdo__dist_attach(dpdo__eng *e, const dpdo_transport_type *t, void *user);
/* Back to one process (e->dist = NULL). */
void dpdo__dist_detach(dpdo__eng *e);

/* The pieces of the stage runner (eng_round.c) that move data between processes:
 * seq_local: local() of a sequential stage s, the baton passed from process to process in node
 *   order (*rc, *fail_node: the first failure, also one reported by another process);
 * exchange: after local(), move the stage's messages and shared rows; *stop = 1 when a process
 *   failed (the round ends there);
 * local_charges: sum the charges decided inside local() (plan entries from nplan on) over the
 *   processes, one per node;
 * agree: the processes agree on the round's outcome (the lowest failing node's status/message).
 * Each returns DPDO_OK or the transport's failure (its message in e->err). */
int dpdo__dist_seq_local(dpdo__eng *e, dpdo__plan *p, int32_t s, int *rc, int64_t *fail_node);
int dpdo__dist_exchange(dpdo__eng *e, dpdo__plan *p, int32_t s, int rc, int *stop);
int dpdo__dist_local_charges(dpdo__eng *e, dpdo__plan *p, int64_t nplan, int *rc,
                             int64_t *fail_node);
int dpdo__dist_agree(dpdo__eng *e, int rc, int64_t fail_node);
/* Every process receives every node's state rows (blocks of n rows) and the coordinator's. */
int dpdo__dist_share_state(dpdo__eng *e);
/* Upload the rows of block vt->init_gather to the coordinator before round 1. */
int dpdo__dist_init_gather(dpdo__eng *e);

/* For checkpoints of distributed runs (checkpoint.c): this process's number; the process of
 * node i (i = n: the coordinator's); collective: the number of processes, and the element-wise
 * sum of v[count] over the processes (a transport failure breaks the run, message in e->err). */
int64_t dpdo__dist_self(const dpdo__eng *e);
int64_t dpdo__dist_proc(const dpdo__eng *e, int64_t i);
int dpdo__dist_count(dpdo__eng *e, int64_t *nproc);
int dpdo__dist_sum(dpdo__eng *e, int64_t *v, int64_t count);

#endif /* DPDO_DIST_IMPL_H */
