/* SPDX-License-Identifier: BSD-3-Clause */
/* A small fixed-width thread pool (POSIX threads) for the independent per-node
 * work of a round. One pool per algorithm handle, created at prepare, so the
 * library keeps no global state and step() allocates nothing. Never installed.
 *
 * dpdo__pool_run(p, ntasks, fn, arg) calls fn(arg, k) once for every k in
 * [0, ntasks) and returns when all calls have returned. The calling thread and
 * the workers claim task indices from one atomic word, so a worker that the
 * operating system has not scheduled yet leaves its task to the others (an
 * oversubscribed machine costs about a serial run, not a time slice per
 * round). What a task computes must depend only on its index, never on the
 * thread. Workers spin briefly on the round's generation counter (a round of a few
 * tens of microseconds should not pay a futex wake-up), then sleep on a
 * condition variable. Not reentrant: one run at a time per pool. */
#ifndef DPDO_POOL_IMPL_H
#define DPDO_POOL_IMPL_H

#include <stdint.h>

#define DPDO__MAX_THREADS 256

typedef void (*dpdo__task_fn)(void *arg, int32_t task);
typedef struct dpdo__pool dpdo__pool;

/* width >= 1 (1: no thread is started; run() calls fn on the caller).
 * Returns DPDO_OK, DPDO_E_INVAL (width out of [1, DPDO__MAX_THREADS]),
 * DPDO_E_NOMEM (memory or a thread could not be created; nothing is left
 * running). */
int dpdo__pool_create(dpdo__pool **out, int32_t width);
void dpdo__pool_destroy(dpdo__pool *p); /* joins the workers; NULL is a no-op */
int32_t dpdo__pool_width(const dpdo__pool *p);
/* 1 <= ntasks <= width */
void dpdo__pool_run(dpdo__pool *p, int32_t ntasks, dpdo__task_fn fn, void *arg);

#endif /* DPDO_POOL_IMPL_H */
