/* SPDX-License-Identifier: BSD-3-Clause */
/* The per-node work of a round on threads: see par_impl.h for the contract, docs/architecture.md
 * ("Threads") for the choice of POSIX threads. */
#include "../core/pool_impl.h"
#include "../model/model_impl.h"
#include "../net/compress_impl.h"
#include "../solver/solver_impl.h"
#include "eng_handle.h"
#include "par_impl.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct dpdo__par {
    int32_t width;  /* requested: workspace copies (slots) */
    int32_t active; /* threads the rounds use (decided at prepare) */
    int vouched; /* options.num_threads >= 1 or a host pool: user callbacks may run concurrently */
    dpdo_parallel_fn host_run;
    void *host;
    dpdo__pool *pool;
    int32_t *slot_of; /* n: task of each node in the running stage */
    int running;      /* a parallel phase is under way (messages muted, slots valid) */
    /* the phase being run */
    dpdo__eng *e;
    dpdo__plan *p;
    int32_t s, who, phase, ntasks;
    int64_t cnt, *fail_node;
    void (*for_fn)(void *, int64_t); /* dpdo__par_for */
    void *for_arg;
    int64_t for_cnt;
    int32_t for_tasks;
    int64_t
        bnd[DPDO__MAX_THREADS + 1]; /* task k runs positions bnd[k] .. bnd[k+1]-1 of the stage */
    int rc[DPDO__MAX_THREADS];
    int64_t fail[DPDO__MAX_THREADS]; /* first failing position of each task, or cnt */
};

static int env_threads(int32_t *out, char *err)
{
    const char *v = getenv("DPDO_NUM_THREADS");
    *out = 0;
    if (!v || !*v) return DPDO_OK;
    char *end = NULL;
    errno = 0;
    long t = strtol(v, &end, 10);
    if (errno || end == v || *end || t < 1 || t > DPDO__MAX_THREADS)
        return dpdo__err(err, DPDO_E_INVAL,
                         "setup: DPDO_NUM_THREADS=\"%.40s\": must be an integer in [1, %d]", v,
                         DPDO__MAX_THREADS);
    *out = (int32_t)t;
    return DPDO_OK;
}

int dpdo__par_create(dpdo__eng *e, dpdo_parallel_fn host_run, void *host, int32_t host_width,
                     char *err)
{
    int32_t env = 0;
    int rc;
    if (!host_run && e->o.num_threads == 0 && (rc = env_threads(&env, err))) return rc;
    struct dpdo__par *P = dpdo__calloc(1, sizeof *P);
    if (!P) return DPDO_E_NOMEM;
    P->slot_of = dpdo__calloc((size_t)e->n, sizeof *P->slot_of);
    if (!P->slot_of) {
        dpdo__free(P);
        return DPDO_E_NOMEM;
    }
    P->host_run = host_run;
    P->host = host;
    P->vouched = host_run != NULL || e->o.num_threads >= 1;
    P->width = host_run                ? host_width
               : e->o.num_threads >= 1 ? e->o.num_threads
               : env >= 1              ? env
                                       : 1;
    if (P->width > e->n) P->width = e->n > 0 ? (int32_t)e->n : 1; /* never more tasks than nodes */
    P->active = 1;
    e->par = P;
    return DPDO_OK;
}

void dpdo__par_free(dpdo__eng *e)
{
    if (!e || !e->par) return;
    dpdo__pool_destroy(e->par->pool);
    dpdo__free(e->par->slot_of);
    dpdo__free(e->par);
    e->par = NULL;
}

/* the algorithms whose local()/combine() touch only their node's rows and per-task workspaces */
static int checked_algorithm(const dpdo__eng *e)
{
    if (e->vt->local_charges) return 0; /* charges decided inside local() go to one shared plan */
    if (!e->vt->parallel) return 0;     /* the algorithm's vtable says whether it may */
    return e->vt->uses_solver ? dpdo__solver_concurrent(e->solver) : 1;
}

static int user_callbacks(const dpdo__eng *e)
{
    for (int64_t i = 0; i < e->n; i++)
        if (e->nodes[i]->loss && e->nodes[i]->loss->builtin < 0) return 1;
    if (e->reg && e->reg->kind == DPDO__REG_USER) return 1;
    if (!dpdo__compressor_concurrent(e->comp)) return 1;
    return 0;
}

int dpdo__par_prepare(dpdo__eng *e, char *err)
{
    struct dpdo__par *P = e->par;
    if (!P) return DPDO_OK;
    int32_t w = P->width;
    if (w > 1 && (e->dist || !checked_algorithm(e) || (!P->vouched && user_callbacks(e)))) w = 1;
    P->active = w;
    if (w > 1 && !P->host_run && (!P->pool || dpdo__pool_width(P->pool) != w)) {
        dpdo__pool_destroy(P->pool);
        P->pool = NULL;
        int rc = dpdo__pool_create(&P->pool, w);
        if (rc) {
            P->active = 1;
            return dpdo__err(err, rc, "prepare: cannot start %d threads", (int)w);
        }
    }
    return DPDO_OK;
}

int32_t dpdo__par_slots(const dpdo__eng *e)
{
    return e && e->par ? e->par->width : 1;
}
int32_t dpdo__par_width(const dpdo__eng *e)
{
    return e && e->par ? e->par->active : 1;
}

int32_t dpdo__par_slot(const dpdo__eng *e, int64_t node)
{
    return e->par && e->par->running && node >= 0 ? e->par->slot_of[node] : 0;
}

#define WHO(P, c) ((P)->who == DPDO__RUN_ALL ? (c) : (P)->p->comp[c])

static void task(void *arg, int32_t k)
{
    struct dpdo__par *P = arg;
    dpdo__eng *e = P->e;
    int64_t b = P->bnd[k], end = P->bnd[k + 1];
    P->rc[k] = DPDO_OK;
    P->fail[k] = P->cnt;
    for (int64_t c = b; c < end; c++) {
        int rc = P->phase == 0 ? e->vt->local(e, e->priv, P->p, P->s, WHO(P, c))
                               : e->vt->combine(e, e->priv, P->p, P->s, WHO(P, c));
        if (rc) {
            P->rc[k] = rc;
            P->fail[k] = c;
            return;
        }
    }
}

static void host_task(void *arg, int32_t k)
{
    task(arg, k);
}

/* one phase on the tasks; the status of the first failing position, its message written by a
 * serial rerun of that node alone */
static int run_phase(struct dpdo__par *P, int phase)
{
    dpdo__eng *e = P->e;
    P->phase = phase;
    P->running = 1;
    e->par_mute = 1;
    if (P->host_run)
        P->host_run(P->host, P->ntasks, host_task, P);
    else
        dpdo__pool_run(P->pool, P->ntasks, task, P);
    int64_t first = P->cnt;
    for (int32_t k = 0; k < P->ntasks; k++)
        if (P->fail[k] < first) first = P->fail[k];
    P->running = 0;
    e->par_mute = 0;
    if (first == P->cnt) return DPDO_OK;
    /* the rerun writes the message (its workspace is slot 0) */
    *P->fail_node = WHO(P, first);
    int rc = phase == 0 ? e->vt->local(e, e->priv, P->p, P->s, WHO(P, first))
                        : e->vt->combine(e, e->priv, P->p, P->s, WHO(P, first));
    if (!rc) { /* not reproducible on a rerun: report the status the task saw */
        for (int32_t k = 0; k < P->ntasks; k++)
            if (P->fail[k] == first) rc = P->rc[k];
        dpdo__eng_err(e, rc, WHO(P, first), "%s failed in a worker thread but not when run again",
                      phase == 0 ? "local step" : "combine step");
    }
    return rc;
}

int dpdo__par_stage(dpdo__eng *e, dpdo__plan *p, int32_t s, int64_t *fail_node)
{
    struct dpdo__par *P = e->par;
    int who = p->stage[s].who;
    int64_t cnt = who == DPDO__RUN_COORD ? 1 : who == DPDO__RUN_ALL ? e->n : p->ncomp;
    int rc = DPDO_OK;
    if (!P || P->active < 2 || who == DPDO__RUN_COORD || cnt < 2 || e->probe || p->stage[s].seq ||
        e->tap) {
#define SWHO(c)                                                                                    \
    (who == DPDO__RUN_COORD ? DPDO_NODE_COORDINATOR : who == DPDO__RUN_ALL ? (c) : p->comp[c])
        for (int64_t c = 0; c < cnt && !rc; c++)
            if ((rc = e->vt->local(e, e->priv, p, s, SWHO(c))) || (rc = p->charge_err))
                *fail_node = SWHO(c);
        dpdo__eng_probe(e, DPDO__PH_EXCHANGE);
        for (int64_t c = 0; c < cnt && !rc && e->vt->combine; c++)
            if ((rc = e->vt->combine(e, e->priv, p, s, SWHO(c)))) *fail_node = SWHO(c);
#undef SWHO
        return rc;
    }
    P->e = e;
    P->fail_node = fail_node;
    P->p = p;
    P->s = s;
    P->who = who;
    P->cnt = cnt;
    P->ntasks = cnt < P->active ? (int32_t)cnt : P->active;
    /* contiguous chunks of about equal work: a stage over all nodes weighs a computing node 4 and
     * another 1 (DO-ADP's inactive agents only mix their neighbours' copies), so that a random
     * active set does not load one thread with most of the computing nodes; the split changes no
     * bit (each node's work depends only on the node) */
    P->bnd[0] = 0;
    if (who == DPDO__RUN_ALL) {
        int64_t tot = 0, acc = 0, c = 0;
        for (int64_t i = 0; i < cnt; i++)
            tot += p->is_comp[i] ? 4 : 1;
        for (int32_t k = 1; k < P->ntasks; k++) {
            while (c < cnt && acc * P->ntasks < tot * k)
                acc += p->is_comp[c++] ? 4 : 1;
            P->bnd[k] = c;
        }
    } else {
        for (int32_t k = 1; k < P->ntasks; k++)
            P->bnd[k] = cnt * k / P->ntasks;
    }
    P->bnd[P->ntasks] = cnt;
    for (int32_t k = 0; k < P->ntasks; k++)
        for (int64_t c = P->bnd[k]; c < P->bnd[k + 1]; c++)
            P->slot_of[WHO(P, c)] = k;
    if ((rc = run_phase(P, 0))) return rc;
    if (e->vt->combine && (rc = run_phase(P, 1))) return rc; /* NULL: nothing to combine */
    return DPDO_OK;
}

static void for_task(void *arg, int32_t k)
{
    struct dpdo__par *P = arg;
    for (int64_t c = P->for_cnt * k / P->for_tasks, end = P->for_cnt * (k + 1) / P->for_tasks;
         c < end; c++)
        P->for_fn(P->for_arg, c);
}

void dpdo__par_for(dpdo__eng *e, int64_t cnt, void (*fn)(void *arg, int64_t c), void *arg)
{
    struct dpdo__par *P = e->par;
    if (!P || P->active < 2 || P->running || cnt < 2) {
        for (int64_t c = 0; c < cnt; c++)
            fn(arg, c);
        return;
    }
    P->for_fn = fn;
    P->for_arg = arg;
    P->for_cnt = cnt;
    P->for_tasks = cnt < P->active ? (int32_t)cnt : P->active;
    if (P->host_run)
        P->host_run(P->host, P->for_tasks, for_task, P);
    else
        dpdo__pool_run(P->pool, P->for_tasks, for_task, P);
}

/* ---- public: the host's pool, the width in use ------------------------------------------ */

static int algorithm_set_pool_body(dpdo_algorithm *a, dpdo_parallel_fn run, void *host,
                                   int32_t width)
{
    if (!a || !DPDO__LIVE(a, DPDO__MAGIC_ALGORITHM)) return DPDO_E_INVAL;
    if (run && (width < 1 || width > DPDO__MAX_THREADS))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "set_pool: width = %d: must be in [1, %d]",
                         (int)width, DPDO__MAX_THREADS);
    if (a->state == DPDO_ALG_RUNNING)
        return dpdo__err(a->errmsg, DPDO_E_STATE,
                         "set_pool: the algorithm is running; call it before setup");
    a->pool_run = run;
    a->pool_host = run ? host : NULL;
    a->pool_width = run ? width : 0;
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_set_pool(dpdo_algorithm *a, dpdo_parallel_fn run, void *host,
                                     int32_t width)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 1, "dpdo_algorithm_set_pool",
                  algorithm_set_pool_body(a, run, host, width));
}

DPDO_API int32_t dpdo_algorithm_threads(const dpdo_algorithm *a)
{
    if (!a) return 0;
    return a->e ? dpdo__par_width(a->e) : 1;
}
