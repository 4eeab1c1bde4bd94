/* SPDX-License-Identifier: BSD-3-Clause */
/* Fixed-width thread pool for per-node round work (see pool_impl.h). POSIX
 * threads rather than OpenMP: the pool belongs to one algorithm handle (no
 * process-wide runtime state, no interaction with a host's or BLIS's OpenMP
 * team, clean shutdown at destroy), and a host can replace it with its own
 * (dpdo_algorithm_set_pool). */
#include "core_impl.h"
#include "pool_impl.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

enum { SPIN = 4000 }; /* polls of the generation counter before sleeping (a few microseconds) */

struct dpdo__pool {
    int32_t width, started;
    pthread_t *th;
    pthread_mutex_t mu;
    pthread_cond_t go, cv_done;
    atomic_uint_fast64_t gen;   /* bumped by run(); workers wait for a change */
    atomic_uint_fast64_t claim; /* (ntasks << 32) | next task index to claim, one word so that a
                                 * claim and the run it belongs to cannot be torn apart */
    atomic_int done;            /* tasks finished in the current run */
    atomic_int stop;
    atomic_int sleepers;      /* workers waiting on go (registered under mu) */
    atomic_int caller_sleeps; /* the caller waits on cv_done (registered under mu) */
    dpdo__task_fn fn;
    void *arg;
    dpdo_allocator scope; /* the caller's allocator, current on the workers during a run */
    struct worker {
        dpdo__pool *p;
    } * w;
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Claim and run tasks until none is left. Any thread may run any task (a descheduled worker
 * leaves its share to the others, so an oversubscribed machine costs no more than a serial run);
 * what a task computes depends only on its index. The thread finishing the last task wakes the
 * caller if it went to sleep. */
static void run_tasks(dpdo__pool *p)
{
    for (;;) {
        uint_fast64_t w = atomic_load_explicit(&p->claim, memory_order_acquire);
        uint32_t nt = (uint32_t)(w >> 32), k = (uint32_t)w;
        if (k >= nt) return;
        /* a stale word (an earlier run) cannot match: its index or count differs, or it is the very
         * same claim of the same shape, which is then a valid claim of this run (fn/arg are read
         * after the exchange, which acquires the run's publication) */
        if (!atomic_compare_exchange_weak_explicit(&p->claim, &w, w + 1, memory_order_acq_rel,
                                                   memory_order_acquire))
            continue;
        dpdo__alloc_enter(&p->scope); /* the caller's allocator, published like fn and arg */
        p->fn(p->arg, (int32_t)k);
        /* the last task wakes the caller only if it went to sleep: it registers under the mutex
         * and then tests done again, and done and caller_sleeps are sequentially consistent, so
         * either it sees this increment or this thread sees its registration */
        if (atomic_fetch_add(&p->done, 1) + 1 == (int)nt && atomic_load(&p->caller_sleeps)) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->cv_done);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

static void *worker_main(void *v)
{
    struct worker *w = v;
    dpdo__pool *p = w->p;
    uint_fast64_t seen = 0;
    for (;;) {
        uint_fast64_t g;
        int spins = 0;
        while ((g = atomic_load_explicit(&p->gen, memory_order_acquire)) == seen &&
               !atomic_load_explicit(&p->stop, memory_order_acquire)) {
            if (++spins < SPIN) {
                cpu_relax();
                continue;
            }
            pthread_mutex_lock(&p->mu);
            atomic_fetch_add(&p->sleepers, 1); /* before the test: see pool_run */
            while (atomic_load(&p->gen) == seen &&
                   !atomic_load_explicit(&p->stop, memory_order_acquire))
                pthread_cond_wait(&p->go, &p->mu);
            atomic_fetch_sub(&p->sleepers, 1);
            pthread_mutex_unlock(&p->mu);
        }
        if (atomic_load_explicit(&p->stop, memory_order_acquire)) return NULL;
        seen = g;
        run_tasks(p);
    }
}

void dpdo__pool_destroy(dpdo__pool *p)
{
    if (!p) return;
    if (p->started) {
        pthread_mutex_lock(&p->mu);
        atomic_store_explicit(&p->stop, 1, memory_order_release);
        pthread_cond_broadcast(&p->go);
        pthread_mutex_unlock(&p->mu);
        for (int32_t k = 0; k < p->started; k++)
            pthread_join(p->th[k], NULL);
    }
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->cv_done);
    pthread_mutex_destroy(&p->mu);
    dpdo__free(p->th);
    dpdo__free(p->w);
    dpdo__free(p);
}

int dpdo__pool_create(dpdo__pool **out, int32_t width)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (width < 1 || width > DPDO__MAX_THREADS) return DPDO_E_INVAL;
    dpdo__pool *p = dpdo__calloc(1, sizeof *p);
    if (!p) return DPDO_E_NOMEM;
    p->width = width;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->cv_done, NULL);
    atomic_init(&p->gen, 0);
    atomic_init(&p->claim, 0);
    atomic_init(&p->done, 0);
    atomic_init(&p->stop, 0);
    atomic_init(&p->sleepers, 0);
    atomic_init(&p->caller_sleeps, 0);
    if (width > 1) {
        p->th = dpdo__calloc((size_t)width - 1, sizeof *p->th);
        p->w = dpdo__calloc((size_t)width - 1, sizeof *p->w);
        if (!p->th || !p->w) {
            dpdo__pool_destroy(p);
            return DPDO_E_NOMEM;
        }
        for (int32_t k = 0; k < width - 1; k++) {
            p->w[k].p = p;
            if (pthread_create(&p->th[k], NULL, worker_main, &p->w[k]) != 0) {
                dpdo__pool_destroy(p);
                return DPDO_E_NOMEM;
            }
            p->started++;
        }
    }
    *out = p;
    return DPDO_OK;
}

int32_t dpdo__pool_width(const dpdo__pool *p)
{
    return p ? p->width : 1;
}

void dpdo__pool_run(dpdo__pool *p, int32_t ntasks, dpdo__task_fn fn, void *arg)
{
    if (ntasks < 1) return;
    if (p->width == 1 || ntasks == 1) {
        for (int32_t k = 0; k < ntasks; k++)
            fn(arg, k);
        return;
    }
    p->fn = fn;
    p->arg = arg;
    dpdo__alloc_scope(&p->scope);
    atomic_store_explicit(&p->done, 0, memory_order_relaxed);
    atomic_store_explicit(&p->claim, (uint_fast64_t)ntasks << 32,
                          memory_order_release); /* publishes fn, arg */
    /* workers spinning on gen see the bump; a worker that went to sleep registered in sleepers
     * before its last test of gen, and gen and sleepers are sequentially consistent, so either
     * it sees the new gen or this thread sees it registered and wakes it (under the mutex, so
     * that the wake-up cannot fall between its test and its wait) */
    atomic_fetch_add(&p->gen, 1);
    if (atomic_load(&p->sleepers)) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->go);
        pthread_mutex_unlock(&p->mu);
    }
    run_tasks(p); /* the caller works too, and takes over what no worker has claimed */
    int spins = 0;
    while (atomic_load_explicit(&p->done, memory_order_acquire) != ntasks) {
        if (++spins < SPIN) {
            cpu_relax();
            continue;
        }
        pthread_mutex_lock(&p->mu);
        atomic_store(&p->caller_sleeps, 1); /* before the test: see run_tasks */
        while (atomic_load(&p->done) != ntasks)
            pthread_cond_wait(&p->cv_done, &p->mu);
        atomic_store(&p->caller_sleeps, 0);
        pthread_mutex_unlock(&p->mu);
    }
}
