/* SPDX-License-Identifier: BSD-3-Clause */
/* What the host controls besides parameters: the next round's computing nodes, per-node
 * activation probabilities, a transport (distributed runs, dist.c), and the test and bench
 * hooks (injection, probes, weakening). */
#include "dist_impl.h"
#include "eng_handle.h"
#include <string.h>

static int algorithm_set_next_active_body(dpdo_algorithm *a, const int32_t *flags, int64_t n)
{
    if (!a) return DPDO_E_INVAL;
    dpdo__eng *e = a->e;
    if (!e) return dpdo__err(a->errmsg, DPDO_E_STATE, "set_next_active: the algorithm is EMPTY");
    if (!e->vt->accepts_mask)
        return dpdo__err(a->errmsg, DPDO_E_UNSUPPORTED,
                         "set_next_active: %s chooses its own computing nodes", a->vt->name);
    if (a->state == DPDO_ALG_DONE || a->state == DPDO_ALG_FAILED)
        return dpdo__err(a->errmsg, DPDO_E_STATE,
                         "set_next_active: the run is over; call dpdo_algorithm_reset");
    if (!flags) {
        e->inj_active = NULL;
        return DPDO_OK;
    }
    if (n != e->n)
        return dpdo__err(a->errmsg, DPDO_E_INVAL,
                         "set_next_active: n = %lld, the algorithm has %lld nodes", (long long)n,
                         (long long)e->n);
    int64_t b = 0;
    for (int64_t i = 0; i < n; i++) {
        if (flags[i] != 0 && flags[i] != 1)
            return dpdo__err(a->errmsg, DPDO_E_INVAL,
                             "set_next_active: flags[%lld] = %d: must be 0 or 1", (long long)i,
                             (int)flags[i]);
        if (flags[i]) e->mask_list[b++] = i;
    }
    if (b == 0) return dpdo__err(a->errmsg, DPDO_E_INVAL, "set_next_active: no node is active");
    e->inj_active = e->mask_list;
    e->inj_b = b;
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_set_next_active(dpdo_algorithm *a, const int32_t *flags, int64_t n)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 1, "dpdo_algorithm_set_next_active",
                  algorithm_set_next_active_body(a, flags, n));
}

static int algorithm_set_node_probabilities_body(dpdo_algorithm *a, const double *p, int64_t n)
{
    if (!a) return DPDO_E_INVAL;
    dpdo__eng *e = a->e;
    if (!e)
        return dpdo__err(a->errmsg, DPDO_E_STATE, "set_node_probabilities: the algorithm is EMPTY");
    if (!e->vt->node_probs)
        return dpdo__err(a->errmsg, DPDO_E_UNSUPPORTED,
                         "set_node_probabilities: %s has no per-node activation", a->vt->name);
    if (a->state != DPDO_ALG_READY)
        return dpdo__err(a->errmsg, DPDO_E_STATE,
                         "set_node_probabilities: only at round 0 (READY)");
    if (!p) {
        dpdo__free(e->node_p);
        e->node_p = NULL;
        e->prepared = 0;
        return DPDO_OK;
    }
    if (n != e->n)
        return dpdo__err(a->errmsg, DPDO_E_INVAL,
                         "set_node_probabilities: n = %lld, the algorithm has %lld nodes",
                         (long long)n, (long long)e->n);
    for (int64_t i = 0; i < n; i++)
        if (!(p[i] > 0 && p[i] <= 1))
            return dpdo__err(a->errmsg, DPDO_E_INVAL,
                             "set_node_probabilities: p[%lld] = %g is not in (0, 1]", (long long)i,
                             p[i]);
    if (!e->node_p && !(e->node_p = dpdo__alloc_array((size_t)n, sizeof *e->node_p)))
        return dpdo__err(a->errmsg, DPDO_E_NOMEM, "set_node_probabilities: out of memory");
    memcpy(e->node_p, p, (size_t)n * sizeof *p);
    e->prepared = 0;
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_set_node_probabilities(dpdo_algorithm *a, const double *p, int64_t n)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 1, "dpdo_algorithm_set_node_probabilities",
                  algorithm_set_node_probabilities_body(a, p, n));
}

/* ---- injection and probes (tests, benches) ------------------------------------------------- */

int dpdo__algorithm_inject_active(dpdo_algorithm *a, const int64_t *nodes, int64_t b)
{
    if (!a || !a->e || b < 0 || b > a->e->n || (b > 0 && !nodes)) return DPDO_E_INVAL;
    for (int64_t i = 0; i < b; i++)
        if (nodes[i] < 0 || nodes[i] >= a->e->n || (i > 0 && nodes[i] <= nodes[i - 1]))
            return DPDO_E_INVAL;
    a->e->inj_active = b ? nodes : NULL;
    a->e->inj_b = b;
    return DPDO_OK;
}

int dpdo__algorithm_inject_zeta(dpdo_algorithm *a, const double *zeta)
{
    if (!a || !a->e) return DPDO_E_INVAL;
    a->e->inj_zeta = zeta;
    return DPDO_OK;
}

void dpdo__algorithm_set_probe(dpdo_algorithm *a, dpdo__probe_fn fn, void *user)
{
    if (!a || !a->e) return;
    a->e->probe = fn;
    a->e->probe_user = user;
}

#ifdef DPDO_FAULT_INJECTION
int dpdo__algorithm_set_weaken(dpdo_algorithm *a, uint32_t bits)
{
    if (!a || bits & ~DPDO__WEAKEN_ALL) return DPDO_E_INVAL;
    if (!a->e) return DPDO_E_STATE;
    a->e->weaken = bits;
    return DPDO_OK;
}

int dpdo__algorithm_key_source(const dpdo_algorithm *a, int64_t node)
{
    if (!a || !a->e || node < 0 || node >= a->e->n) return -1;
    return a->e->key_src ? a->e->key_src[node] : DPDO__KEY_NONE;
}

#endif

int dpdo__algorithm_set_noise_tap(dpdo_algorithm *a,
                                  void (*tap)(void *user, int64_t node, const double *out, size_t n,
                                              double grid),
                                  void *user)
{
    if (!a) return DPDO_E_INVAL;
    if (!a->e) return DPDO_E_STATE;
    a->e->tap = tap;
    a->e->tap_user = user;
    return DPDO_OK;
}

/* ---- distributed runs (dpdo/transport.h; the mechanics are in dist.c) ----------------------- */

static int algorithm_set_transport_body(dpdo_algorithm *a, const dpdo_transport_type *t, void *user)
{
    if (!a) return DPDO_E_INVAL;
    dpdo__eng *e = a->e;
    if (!e) return dpdo__err(a->errmsg, DPDO_E_STATE, "set_transport: the algorithm is EMPTY");
    if (a->state != DPDO_ALG_READY || e->round != 0)
        return dpdo__err(a->errmsg, DPDO_E_STATE,
                         "set_transport: only at round 0 (READY); call reset first");
    if (!t) {
        dpdo__dist_detach(e);
        return DPDO_OK;
    }
    if (t->struct_size < sizeof(dpdo_transport_type))
        return dpdo__err(a->errmsg, DPDO_E_INVAL,
                         "set_transport: struct_size %zu is smaller than %zu", t->struct_size,
                         sizeof(dpdo_transport_type));
    if (!t->layout || !t->exchange || !t->agree || !t->share || !t->sum || !t->bcast || !t->send ||
        !t->recv)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "set_transport: type '%s' lacks a callback",
                         t->name ? t->name : "(unnamed)");
    if (!e->vt->distributable)
        return dpdo__err(a->errmsg, DPDO_E_UNSUPPORTED,
                         "set_transport: %s cannot run over a transport yet", e->vt->name);
    int rc = dpdo__dist_attach(e, t, user);
    if (rc) return rc;
    /* prepare everywhere and agree: a configuration error on one process fails all */
    /* always (re)prepare once attached: keys are drawn only for the nodes this process hosts (a
     * prepare before attach drew them for every node; those of other processes are wiped) */
    int st = dpdo__eng_prepare(a);
    int64_t node = -1;
    char msg[DPDO__ERRMSG_LEN];
    memcpy(msg, a->errmsg, sizeof msg);
    int xr = t->agree(user, &st, &node, msg, sizeof msg);
    if (xr) {
        dpdo__dist_detach(e);
        return dpdo__err(a->errmsg, xr, "set_transport: '%s': agree failed (code %d)", t->name, xr);
    }
    if (st) {
        msg[sizeof msg - 1] = 0;
        dpdo__dist_detach(e);
        memcpy(a->errmsg, msg, sizeof msg);
        return st;
    }
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_set_transport(dpdo_algorithm *a, const dpdo_transport_type *t,
                                          void *user)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 1, "dpdo_algorithm_set_transport",
                  algorithm_set_transport_body(a, t, user));
}

static int algorithm_share_state_body(dpdo_algorithm *a)
{
    if (!a) return DPDO_E_INVAL;
    if (!a->e) return dpdo__err(a->errmsg, DPDO_E_STATE, "share_state: the algorithm is EMPTY");
    if (!a->e->dist) return DPDO_OK;
    return dpdo__dist_share_state(a->e);
}

DPDO_API int dpdo_algorithm_share_state(dpdo_algorithm *a)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 1, "dpdo_algorithm_share_state",
                  algorithm_share_state_body(a));
}

DPDO_API int dpdo_algorithm_hosts(const dpdo_algorithm *a, int64_t node)
{
    if (!a || !a->e || node < 0 || node >= a->e->n) return 0;
    return dpdo__eng_hosted(a->e, node);
}
