/* SPDX-License-Identifier: BSD-3-Clause */
/* The pld accountant (the privacy loss distribution, pld.c) and auto, the library's default:
 * the smallest of the rdp, exact (when it applies) and pld figures, each a valid upper bound.
 * auto also carries the budget guard's look-ahead, which spares a pld composition per round. */
#include "accountant_impl.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- pld ------------------------------------------------------------------------- */

typedef struct {
    dpdo__acc_base base;
    dpdo__pld_acc *pld;
} pld_state;

static int pld_make(dpdo__acc_base **out, const dpdo_accountant_options *o)
{
    pld_state *s = dpdo__calloc(1, sizeof *s);
    if (!s) return DPDO_E_NOMEM;
    if (dpdo__pld_acc_new(&s->pld, o->pld_interval, 0) != DPDO_OK) {
        dpdo__free(s);
        return DPDO_E_NOMEM;
    }
    *out = &s->base;
    return DPDO_OK;
}

static int pld_epsilon(dpdo__acc_base *b, const double *ev, int64_t n, double delta, double *eps,
                       double *order)
{
    (void)order;
    double lo;
    int rc = dpdo__pld_acc_eps(((pld_state *)b)->pld, ev, n, delta, eps, &lo, b->msg);
    if (rc == DPDO_OK) b->last_lo = lo;
    return rc;
}

static int pld_delta(dpdo__acc_base *b, const double *ev, int64_t n, double eps, double *delta)
{
    return dpdo__pld_acc_delta(((pld_state *)b)->pld, ev, n, eps, delta, b->msg);
}

static void pld_release(dpdo__acc_base *b)
{
    dpdo__pld_acc_free(((pld_state *)b)->pld);
    dpdo__free(b);
}

const dpdo__acc_kind dpdo__acc_pld = {"pld", pld_make, pld_epsilon, pld_delta, pld_release, 0};

/* ---- auto ------------------------------------------------------------------------ */

typedef struct {
    dpdo__acc_base base;
    dpdo__rdp_acc rdp;
    dpdo__pld_acc *pld;
    double fine_n; /* fine lattice Gaussian releases in the last exact total */
    /* the guard: an event table (with counts) whose pld epsilon safe_eps is
     * within the limit: any table with the same events and counts <= these is
     * within it too (epsilon is non-decreasing in the counts); look: the
     * look-ahead (extra releases of the last row) tried next */
    double *safe_rows, *look_rows;
    int64_t safe_n, safe_cap;
    double safe_eps, look;
} auto_state;

/* auto: does the exact accountant apply (every charged event an unsampled continuous Gaussian)?
 * Fine lattice Gaussians go to pld as before 0.3: the engine's budget guard and its calibration
 * must meet the same accountant's figure (pld's is within 1e-3 of exact's). */
static int exact_applies(const double *ev, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        const double *r = ev + k * DPDO_EV_FIELDS;
        if (!(r[DPDO_EV_COUNT] > 0)) continue;
        if (r[DPDO_EV_MECH] != DPDO_MECH_GAUSSIAN) return 0;
        if (r[DPDO_EV_SAMPLING] != DPDO_SAMPLING_NONE && r[DPDO_EV_RATE] < 1.0) return 0;
    }
    return 1;
}

/* auto's guard (b->base.limit set, the hypothetical release in the last row): if
 * the table is covered by the safe table, the safe epsilon (<= limit) is
 * returned; else the componentwise maximum of the table and the safe table
 * (same events; else the table) plus `look` more of the growing row is tried once: if
 * its pld epsilon is within the limit it becomes the safe table and that
 * epsilon (an upper bound of this table's, as epsilon is non-decreasing in
 * the counts) is returned; if not, the look-ahead is quartered and 1 is
 * returned (compute this table as usual). rdp's *eps is kept when smaller. */
static int same_row_desc(const double *a, const double *b)
{
    for (int f = 0; f < DPDO_EV_COUNT; f++)
        if (a[f] != b[f]) return 0;
    return 1;
}

static int guard_lookahead(auto_state *b, const double *ev_in, int64_t n, double delta, double *eps)
{
    size_t cells = (size_t)n * DPDO_EV_FIELDS;
    if (n > b->safe_cap) {
        dpdo__free(b->safe_rows);
        dpdo__free(b->look_rows);
        b->safe_cap = 0;
        b->safe_n = 0;
        b->safe_rows = dpdo__alloc_array(cells, sizeof *b->safe_rows);
        b->look_rows = dpdo__alloc_array(cells, sizeof *b->look_rows);
        if (!b->safe_rows || !b->look_rows)
            return dpdo__err(b->base.msg, DPDO_E_NOMEM, "out of memory in the guard");
        b->safe_cap = n;
    }
    /* canonical table: the hypothetical release (last row) merged into the
     * ledger's row of the same event, if any; x = the row that grows */
    double *ev = b->look_rows;
    memcpy(ev, ev_in, cells * sizeof *ev);
    int64_t x = n - 1;
    for (int64_t k = 0; k < n - 1; k++)
        if (same_row_desc(ev + k * DPDO_EV_FIELDS, ev + (n - 1) * DPDO_EV_FIELDS)) {
            ev[k * DPDO_EV_FIELDS + DPDO_EV_COUNT] += ev[(n - 1) * DPDO_EV_FIELDS + DPDO_EV_COUNT];
            ev[(n - 1) * DPDO_EV_FIELDS + DPDO_EV_COUNT] = 0.0;
            x = k;
            break;
        }
    if (b->safe_n == n) {
        int cov = 1;
        for (int64_t k = 0; k < n && cov; k++) {
            const double *r = ev + k * DPDO_EV_FIELDS, *sr = b->safe_rows + k * DPDO_EV_FIELDS;
            for (int f = 0; f < DPDO_EV_COUNT; f++)
                if (r[f] != sr[f]) cov = 0;
            if (r[DPDO_EV_COUNT] > sr[DPDO_EV_COUNT]) cov = 0;
        }
        if (cov) {
            if (b->safe_eps < *eps) {
                *eps = b->safe_eps;
                b->base.last_src = "pld";
            }
            return 0;
        }
    }
    if (!(ev[x * DPDO_EV_FIELDS + DPDO_EV_COUNT] > 0)) return 1;
    /* per-node tables of one guard query differ: try a table that covers
     * both this one and the safe one (componentwise maximum of the counts) */
    if (b->safe_n == n) {
        int same = 1;
        for (int64_t k = 0; k < n && same; k++)
            same = same_row_desc(ev + k * DPDO_EV_FIELDS, b->safe_rows + k * DPDO_EV_FIELDS);
        if (same)
            for (int64_t k = 0; k < n; k++) {
                double c = b->safe_rows[k * DPDO_EV_FIELDS + DPDO_EV_COUNT];
                if (c > ev[k * DPDO_EV_FIELDS + DPDO_EV_COUNT])
                    ev[k * DPDO_EV_FIELDS + DPDO_EV_COUNT] = c;
            }
    }
    double total = 0.0;
    for (int64_t k = 0; k < n; k++)
        total += ev[k * DPDO_EV_FIELDS + DPDO_EV_COUNT];
    if (!(b->look >= 1.0)) b->look = floor(total / 16.0) + 1.0;
    ev[x * DPDO_EV_FIELDS + DPDO_EV_COUNT] += b->look;
    double hi, lo;
    char m2[DPDO__ERRMSG_LEN] = "pld accountant: out of memory";
    int rc = dpdo__pld_acc_eps(b->pld, b->look_rows, n, delta, &hi, &lo, m2);
    if (rc == DPDO_E_NOMEM) return dpdo__err(b->base.msg, rc, "%s", m2);
    if (rc == DPDO_OK && hi <= b->base.limit) {
        memcpy(b->safe_rows, b->look_rows, cells * sizeof *ev);
        b->safe_n = n;
        b->safe_eps = hi;
        if (hi < *eps) {
            *eps = hi;
            b->base.last_src = "pld";
        }
        b->look *= 2.0;
        return 0;
    }
    b->look = floor(b->look / 4.0);
    if (b->look < 1.0) b->look = 1.0;
    return 1;
}

/* auto: the smallest epsilon among rdp, exact (when it applies) and pld (when
 * it supports every event and delta). Each is a valid upper bound, so their
 * minimum is. An accountant that cannot answer is skipped (out of memory is
 * an error). */
static int auto_epsilon(auto_state *b, const double *ev, int64_t n, double delta, double *eps,
                        double *order)
{
    int rc = dpdo__rdp_acc_epsilon(&b->rdp, ev, n, delta, eps, order);
    if (rc) return rc;
    b->base.last_src = "rdp";
    b->base.last_lo = 0.0;
    if (*eps <= b->base.limit || b->base.rdp_only)
        return DPDO_OK; /* the guard only needs to know it fits */
    if (exact_applies(ev, n)) {
        double s;
        if (dpdo__acc_exact_total(ev, n, &s, &b->fine_n, b->base.msg) == DPDO_OK) {
            double e = dpdo__acc_exact_eps(sqrt(s), b->fine_n, delta);
            if (e < *eps) {
                *eps = e;
                *order = NAN;
                b->base.last_src = "exact";
            }
            b->base.last_lo = b->fine_n > 0 ? 0.0 : e; /* exact: the tight value */
            return DPDO_OK;                            /* pld cannot beat the exact curve */
        }
    }
    double hi, lo;
    char m2[DPDO__ERRMSG_LEN] = "pld accountant: out of memory";
    if (b->base.limit > -INFINITY) { /* the guard: a look-ahead spares a composition per round */
        rc = guard_lookahead(b, ev, n, delta, eps);
        if (rc != 1) return rc; /* answered (0) or failed */
    }
    rc = dpdo__pld_acc_eps(b->pld, ev, n, delta, &hi, &lo, m2);
    if (rc == DPDO_E_NOMEM) return dpdo__err(b->base.msg, rc, "%s", m2);
    if (rc == DPDO_OK) {
        if (hi < *eps) {
            *eps = hi;
            *order = NAN;
            b->base.last_src = "pld";
        }
        b->base.last_lo = lo < *eps ? lo : *eps;
    }
    return DPDO_OK;
}

static int auto_delta(auto_state *b, const double *ev, int64_t n, double eps, double *delta)
{
    int rc = dpdo__rdp_acc_delta(&b->rdp, ev, n, eps, delta);
    if (rc) return rc;
    b->base.last_src = "rdp";
    double s, d;
    if (exact_applies(ev, n) &&
        dpdo__acc_exact_total(ev, n, &s, &b->fine_n, b->base.msg) == DPDO_OK) {
        d = dpdo__acc_exact_delta(sqrt(s), b->fine_n, eps);
        if (d < *delta) {
            *delta = d;
            b->base.last_src = "exact";
        }
        return DPDO_OK;
    }
    char m2[DPDO__ERRMSG_LEN] = "pld accountant: out of memory";
    rc = dpdo__pld_acc_delta(b->pld, ev, n, eps, &d, m2);
    if (rc == DPDO_E_NOMEM) return dpdo__err(b->base.msg, rc, "%s", m2);
    if (rc == DPDO_OK && d < *delta) {
        *delta = d;
        b->base.last_src = "pld";
    }
    return DPDO_OK;
}

static void auto_release(dpdo__acc_base *base)
{
    auto_state *b = (auto_state *)base;
    dpdo__rdp_acc_fini(&b->rdp);
    dpdo__pld_acc_free(b->pld);
    dpdo__free(b->safe_rows);
    dpdo__free(b->look_rows);
    dpdo__free(b);
}

/* auto keeps pld to windows that compose in milliseconds (2^17 bins: a loss
 * range of 131 at the default interval); beyond, rdp answers alone */
static int auto_make(dpdo__acc_base **out, const dpdo_accountant_options *o)
{
    auto_state *b = dpdo__calloc(1, sizeof *b);
    if (!b) return DPDO_E_NOMEM;
    if (dpdo__pld_acc_new(&b->pld, o->pld_interval, (int64_t)1 << 17) != DPDO_OK) {
        dpdo__free(b);
        return DPDO_E_NOMEM;
    }
    if (dpdo__rdp_acc_init(&b->rdp, o, b->base.msg) != DPDO_OK) {
        auto_release(&b->base);
        return DPDO_E_NOMEM;
    }
    *out = &b->base;
    return DPDO_OK;
}

static int k_epsilon(dpdo__acc_base *b, const double *ev, int64_t n, double delta, double *eps,
                     double *order)
{
    return auto_epsilon((auto_state *)b, ev, n, delta, eps, order);
}

static int k_delta(dpdo__acc_base *b, const double *ev, int64_t n, double eps, double *delta)
{
    return auto_delta((auto_state *)b, ev, n, eps, delta);
}

const dpdo__acc_kind dpdo__acc_auto = {"auto", auto_make, k_epsilon, k_delta, auto_release, 1};
