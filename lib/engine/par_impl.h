/* SPDX-License-Identifier: BSD-3-Clause */
/* Running the independent per-node work of a round on threads (lib/engine/par.c).
 * Never installed.
 *
 * The engine runs a stage's local() calls, then its combine() calls, for the stage's nodes
 * (computing nodes or all nodes). When the run is parallel, the node list is cut into T
 * contiguous chunks (T = min(threads, nodes)), chunk k runs as task k, and the phase ends when
 * every task has returned. Each node's local()/combine() writes only that node's scratch rows,
 * draws from that node's keyed streams and reads state that no task writes, so the result is
 * the same bits for every T: the determinism contract needs nothing more. Reductions over
 * nodes, charges, counters and the ledger stay in commit()/check(), after the parallel part, in
 * node order.
 *
 * Shared per-call scratch (a gradient row, a solver's or a compressor's workspace) is given per
 * task: an algorithm declares dpdo__par_slots(e) copies at configure and uses copy
 * dpdo__par_slot(e, i) for node i (0 when the stage runs serially).
 *
 * Which runs go parallel (decided at prepare, dpdo__par_prepare): the algorithms whose
 * local/combine were checked for this (dp-dda, dp-dda-baseline, do-adp, fed-plt with the gd,
 * agd or noisy-gd solver); one process (not distributed); no bench probe or test tap; and,
 * when the thread count came from the default (options.num_threads = 0), no user callback in
 * the round (user loss, regularizer, compressor): those need not be thread-safe. An explicit
 * options.num_threads >= 1 or a host pool means the host vouches for its callbacks.
 *
 * Errors: while tasks run, dpdo__eng_err writes no message (e->par_mute); if some node
 * failed, the first failing node in the stage's order runs again alone, which writes exactly
 * the message (and returns the status) of a serial run. Failed rounds change no state, so the
 * extra work of the other tasks is invisible. */
#ifndef DPDO_PAR_IMPL_H
#define DPDO_PAR_IMPL_H

#include "dpdo/algorithm.h"
#include <stdint.h>

struct dpdo__eng;
struct dpdo__plan;

/* At setup, before configure: the requested width (host pool width, else options.num_threads,
 * else DPDO_NUM_THREADS, else 1). DPDO_E_INVAL with a message for a malformed environment
 * value; DPDO_E_NOMEM. */
int dpdo__par_create(struct dpdo__eng *e, dpdo_parallel_fn host_run, void *host, int32_t host_width,
                     char *err);
/* At prepare: decide the width actually used and start the library's pool if needed
 * (DPDO_E_NOMEM if a thread cannot be started). */
int dpdo__par_prepare(struct dpdo__eng *e, char *err);
void dpdo__par_free(struct dpdo__eng *e);
/* Workspace copies an algorithm declares (>= 1), and the copy of node i in the running stage. */
int32_t dpdo__par_slots(const struct dpdo__eng *e);
int32_t dpdo__par_slot(const struct dpdo__eng *e, int64_t node);
/* Threads rounds actually use (1 before prepare or when serial). */
int32_t dpdo__par_width(const struct dpdo__eng *e);
/* One in-process stage: local() for the stage's nodes, then combine(), exactly as the serial
 * loop (status of the first failing node in order, or DPDO_OK). */
int dpdo__par_stage(struct dpdo__eng *e, struct dpdo__plan *p, int32_t s, int64_t *fail_node);
/* fn(arg, c) for c = 0 .. cnt-1: on the round's threads when the run is parallel (contiguous
 * chunks, as a stage), else in order on the caller. For the per-node parts of check() and
 * commit() that touch only node c's rows (no reduction, no message, no allocation): the result
 * is the same bits either way. */
void dpdo__par_for(struct dpdo__eng *e, int64_t cnt, void (*fn)(void *arg, int64_t c), void *arg);

#endif /* DPDO_PAR_IMPL_H */
