/* SPDX-License-Identifier: BSD-3-Clause */
/* Accountant type objects (rdp, exact, zcdp, pure), the accountant handle
 * (queries per node and worst case), the budget guard, calibration, and the
 * public formula functions. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "privacy_impl.h"

enum { K_RDP = 1, K_EXACT = 2, K_ZCDP = 3, K_PURE = 4 };

/* Built-in state: the RDP orders, a log table for the integer-order sums, and
 * a cache of per-event RDP vectors indexed like the ledger's event list (the
 * last slot also serves hypothetical events of calibration/would_exceed). */
typedef struct builtin {
    int kind;
    int32_t conv;
    int64_t n_orders;
    double *orders;
    double *logtab;
    int64_t logtab_n;
    int64_t cache_cap;
    dpdo__event_desc *keys; /* [cache_cap]; mech 0 = empty */
    double *vals;           /* [cache_cap * n_orders] */
    double *tot;            /* [n_orders] */
    unsigned char *deferred; /* [n_orders] 1 = fractional order computed only when needed */
    double *convc;           /* [n_orders] epsilon = r + convc[o] at delta = conv_delta */
    double conv_delta, kl_thr;
    int64_t *lower;          /* [n_orders] largest non-deferred order <= this one, or -1 */
    struct cand {
        double lb;
        int64_t o;
    } * cands; /* [n_orders] scratch */
    char msg[DPDO__ERRMSG_LEN];
} builtin;

/* Branch and bound over the orders. Each order of the Poisson-subsampled
 * Gaussian costs a series (fractional) or O(alpha) terms (integer). An epsilon
 * query computes a geometric skeleton of the orders first (each >= 1.5x the
 * previous) and then another order only if its lower bound -- the composed
 * RDP at the next lower skeleton order (RDP is non-decreasing in alpha) pushed
 * through the conversion (non-decreasing in RDP) -- could beat the best
 * epsilon so far. This is exact pruning: the result equals the full minimum;
 * skipped orders stay uncomputed (NaN) in the cache until a query needs them. */

struct dpdo_accountant {
    const dpdo_accountant_type *type;
    void *user;
    int is_builtin;
    dpdo_ledger *ledger;
    int has_budget;
    double budget_eps, budget_delta;
    double *rows; /* [(rows_cap) * DPDO_EV_FIELDS] */
    int64_t rows_cap;
    char errmsg[DPDO__ERRMSG_LEN];
};

static void row_to_desc(const double *r, dpdo__event_desc *d)
{
    memset(d, 0, sizeof *d);
    d->mech = (int32_t)r[DPDO_EV_MECH];
    d->samp.kind = (int32_t)r[DPDO_EV_SAMPLING];
    d->samp.q = r[DPDO_EV_RATE];
    d->samp.n = (int64_t)r[DPDO_EV_N];
    d->samp.m = (int64_t)r[DPDO_EV_M];
    d->sens = r[DPDO_EV_SENS];
    d->noise = r[DPDO_EV_NOISE];
}

static void desc_to_row(const dpdo__event_desc *d, double *r)
{
    r[DPDO_EV_MECH] = d->mech;
    r[DPDO_EV_SAMPLING] = d->samp.kind;
    r[DPDO_EV_RATE] = d->samp.q;
    r[DPDO_EV_N] = (double)d->samp.n;
    r[DPDO_EV_M] = (double)d->samp.m;
    r[DPDO_EV_SENS] = d->sens;
    r[DPDO_EV_NOISE] = d->noise;
}

static int same_desc(const dpdo__event_desc *a, const dpdo__event_desc *b)
{
    return a->mech == b->mech && a->samp.kind == b->samp.kind && a->samp.q == b->samp.q &&
           a->samp.n == b->samp.n && a->samp.m == b->samp.m && a->sens == b->sens &&
           a->noise == b->noise;
}

/* RDP vector of event row k (cached). NULL on allocation failure. */
static const double *rdp_vec(builtin *b, int64_t k, const double *row)
{
    if (k >= b->cache_cap) {
        int64_t nc = b->cache_cap ? b->cache_cap : 8;
        while (nc <= k) nc *= 2;
        size_t cells;
        if (!dpdo__mul_size((size_t)nc, (size_t)b->n_orders, &cells)) return NULL;
        dpdo__event_desc *keys = dpdo__calloc((size_t)nc, sizeof *keys);
        double *vals = dpdo__alloc_array(cells, sizeof *vals);
        if (!keys || !vals) {
            dpdo__free(keys);
            dpdo__free(vals);
            return NULL;
        }
        if (b->cache_cap) {
            memcpy(keys, b->keys, (size_t)b->cache_cap * sizeof *keys);
            memcpy(vals, b->vals, (size_t)(b->cache_cap * b->n_orders) * sizeof *vals);
        }
        dpdo__free(b->keys);
        dpdo__free(b->vals);
        b->keys = keys;
        b->vals = vals;
        b->cache_cap = nc;
    }
    dpdo__event_desc d;
    row_to_desc(row, &d);
    double *v = b->vals + k * b->n_orders;
    if (!same_desc(&b->keys[k], &d)) {
        for (int64_t o = 0; o < b->n_orders; o++)
            v[o] = b->deferred[o] ? NAN : dpdo__rdp_event(&d, b->orders[o], b->logtab, b->logtab_n);
        b->keys[k] = d;
    }
    return v;
}

/* composed RDP at order o over the charged rows (vectors already cached) */
static double tot_at(builtin *b, const double *ev, int64_t n, int64_t o)
{
    double t = 0.0;
    for (int64_t k = 0; k < n; k++) {
        double c = ev[k * DPDO_EV_FIELDS + DPDO_EV_COUNT];
        if (!(c > 0)) continue;
        double *v = b->vals + k * b->n_orders;
        if (isnan(v[o])) v[o] = dpdo__rdp_event(&b->keys[k], b->orders[o], b->logtab, b->logtab_n);
        if (v[o] != 0.0) t += c * v[o];
    }
    return t;
}

static int cand_cmp(const void *x, const void *y)
{
    const struct cand *a = x, *c = y;
    return a->lb < c->lb ? -1 : a->lb > c->lb ? 1 : (a->o < c->o ? -1 : a->o > c->o);
}

static int any_charged(const double *ev, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        if (ev[k * DPDO_EV_FIELDS + DPDO_EV_COUNT] > 0) return 1;
    return 0;
}

static int rdp_prepare(builtin *b, const double *ev, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        const double *r = ev + k * DPDO_EV_FIELDS;
        if (!(r[DPDO_EV_COUNT] > 0)) continue;
        if (!rdp_vec(b, k, r)) return dpdo__err(b->msg, DPDO_E_NOMEM, "out of memory in the RDP cache");
    }
    return DPDO_OK;
}

static int rdp_total(builtin *b, const double *ev, int64_t n)
{
    int rc = rdp_prepare(b, ev, n);
    if (rc) return rc;
    for (int64_t o = 0; o < b->n_orders; o++) b->tot[o] = tot_at(b, ev, n, o);
    return DPDO_OK;
}

/* the conversion at one order, with the delta-only parts cached per delta
 * (same formulas as dpdo__rdp_eps_one) */
static void conv_prepare(builtin *b, double delta)
{
    if (b->conv_delta == delta) return;
    for (int64_t o = 0; o < b->n_orders; o++) {
        double a = b->orders[o];
        if (a == INFINITY)
            b->convc[o] = 0.0;
        else if (b->conv == DPDO_CONVERSION_CLASSIC)
            b->convc[o] = -log(delta) / (a - 1.0);
        else
            b->convc[o] = log1p(-1.0 / a) - (log(delta) + log(a)) / (a - 1.0);
    }
    /* improved: r <= -log(1 - delta^2) gives epsilon 0 (TV bound via KL) */
    b->kl_thr = b->conv == DPDO_CONVERSION_CLASSIC ? -1.0 : -log1p(-delta * delta);
    b->conv_delta = delta;
}

static double eps_at(const builtin *b, int64_t o, double r)
{
    if (r == INFINITY || isnan(r)) return INFINITY;
    if (r <= b->kl_thr) return 0.0;
    double e = r + b->convc[o];
    return e > 0 ? e : 0.0;
}

/* min over orders of the converted epsilon, with exact pruning (see above) */
static int rdp_epsilon(builtin *b, const double *ev, int64_t n, double delta, double *eps, double *order)
{
    int rc = rdp_prepare(b, ev, n);
    if (rc) return rc;
    conv_prepare(b, delta);
    double best = INFINITY;
    int64_t bo = -1;
    for (int64_t o = 0; o < b->n_orders; o++) {
        if (b->deferred[o]) continue;
        b->tot[o] = tot_at(b, ev, n, o);
        double e = eps_at(b, o, b->tot[o]);
        if (e < best || (e == best && bo >= 0 && o < bo)) {
            best = e;
            bo = o;
        }
    }
    int64_t nc = 0;
    for (int64_t o = 0; o < b->n_orders; o++) {
        if (!b->deferred[o]) continue;
        double lb = eps_at(b, o, b->lower[o] >= 0 ? b->tot[b->lower[o]] : 0.0);
        if (!(lb <= best * (1.0 + 1e-12)) && best != INFINITY) continue; /* cannot win */
        b->cands[nc].lb = lb;
        b->cands[nc].o = o;
        nc++;
    }
    qsort(b->cands, (size_t)nc, sizeof *b->cands, cand_cmp);
    for (int64_t i = 0; i < nc; i++) {
        if (b->cands[i].lb > best * (1.0 + 1e-12)) break; /* sorted: nothing later can win */
        int64_t o = b->cands[i].o;
        b->tot[o] = tot_at(b, ev, n, o);
        double e = eps_at(b, o, b->tot[o]);
        if (e < best || (e == best && (bo < 0 || o < bo))) {
            best = e;
            bo = o;
        }
    }
    *eps = best;
    *order = bo >= 0 ? b->orders[bo] : NAN;
    return DPDO_OK;
}

static const char *mech_name(double m) { return m == DPDO_MECH_GAUSSIAN ? "Gaussian" : "Laplace"; }
static const char *samp_name(double s)
{
    return s == DPDO_SAMPLING_POISSON ? "Poisson-sampled" : s == DPDO_SAMPLING_WOR ? "WOR-sampled" : "unsampled";
}

/* exact: mu^2; zcdp: rho; pure: eps. Reject what the accountant cannot do. */
static int closed_total(builtin *b, const double *ev, int64_t n, double *out)
{
    double s = 0.0;
    for (int64_t k = 0; k < n; k++) {
        const double *r = ev + k * DPDO_EV_FIELDS;
        double c = r[DPDO_EV_COUNT];
        if (!(c > 0)) continue;
        int gauss = r[DPDO_EV_MECH] == DPDO_MECH_GAUSSIAN;
        int sampled = r[DPDO_EV_SAMPLING] != DPDO_SAMPLING_NONE && r[DPDO_EV_RATE] < 1.0;
        double x = r[DPDO_EV_SENS] / r[DPDO_EV_NOISE];
        if (b->kind == K_PURE) {
            if (gauss)
                return dpdo__err(b->msg, DPDO_E_UNSUPPORTED,
                                 "pure-DP accountant: event %lld is Gaussian (no finite pure epsilon); use rdp, exact or zcdp",
                                 (long long)k);
            dpdo__event_desc d;
            row_to_desc(r, &d);
            s += c * dpdo__pure_eps_event(&d);
            continue;
        }
        if (sampled)
            return dpdo__err(b->msg, DPDO_E_UNSUPPORTED,
                             "%s accountant: event %lld is a %s %s mechanism; only unsampled events are supported (use rdp)",
                             b->kind == K_EXACT ? "exact" : "zcdp", (long long)k, samp_name(r[DPDO_EV_SAMPLING]),
                             mech_name(r[DPDO_EV_MECH]));
        if (b->kind == K_EXACT) {
            if (!gauss)
                return dpdo__err(b->msg, DPDO_E_UNSUPPORTED,
                                 "exact accountant: event %lld is a Laplace mechanism; only Gaussian events are supported",
                                 (long long)k);
            s += c * x * x; /* mu^2 of the composition */
        } else {
            s += gauss ? c * x * x / 2.0 : c * x * x / 2.0; /* Gaussian: D^2/(2s^2); Laplace eps-DP: eps^2/2 */
        }
    }
    *out = s;
    return DPDO_OK;
}

static int b_epsilon(void *user, const double *ev, int64_t n, double delta, double *eps, double *order)
{
    builtin *b = user;
    *order = NAN;
    if (!any_charged(ev, n)) {
        *eps = 0.0;
        return DPDO_OK;
    }
    if (b->kind == K_RDP) {
        return rdp_epsilon(b, ev, n, delta, eps, order);
    }
    double s;
    int rc = closed_total(b, ev, n, &s);
    if (rc) return rc;
    if (b->kind == K_EXACT)
        *eps = dpdo__gauss_eps(sqrt(s), delta);
    else if (b->kind == K_ZCDP)
        *eps = dpdo__zcdp_eps(s, delta, b->conv);
    else
        *eps = s;
    return DPDO_OK;
}

static int b_delta(void *user, const double *ev, int64_t n, double eps, double *delta)
{
    builtin *b = user;
    if (!any_charged(ev, n)) {
        *delta = 0.0;
        return DPDO_OK;
    }
    if (b->kind == K_RDP) {
        int rc = rdp_total(b, ev, n);
        if (rc) return rc;
        *delta = dpdo__rdp_delta(b->orders, b->tot, b->n_orders, eps, b->conv, NULL);
        return DPDO_OK;
    }
    double s;
    int rc = closed_total(b, ev, n, &s);
    if (rc) return rc;
    if (b->kind == K_EXACT)
        *delta = dpdo__gauss_delta(sqrt(s), eps);
    else if (b->kind == K_ZCDP)
        *delta = dpdo__zcdp_delta(s, eps, b->conv);
    else
        *delta = eps >= s ? 0.0 : 1.0;
    return DPDO_OK;
}

static void b_release(void *user)
{
    builtin *b = user;
    if (!b) return;
    dpdo__free(b->orders);
    dpdo__free(b->logtab);
    dpdo__free(b->keys);
    dpdo__free(b->vals);
    dpdo__free(b->tot);
    dpdo__free(b->deferred);
    dpdo__free(b->convc);
    dpdo__free(b->lower);
    dpdo__free(b->cands);
    dpdo__free(b);
}

static const dpdo_accountant_type TYPES[] = {
    {sizeof(dpdo_accountant_type), "rdp", b_epsilon, b_delta, b_release},
    {sizeof(dpdo_accountant_type), "exact", b_epsilon, b_delta, b_release},
    {sizeof(dpdo_accountant_type), "zcdp", b_epsilon, b_delta, b_release},
    {sizeof(dpdo_accountant_type), "pure", b_epsilon, b_delta, b_release},
};
#define N_TYPES ((int)(sizeof TYPES / sizeof TYPES[0]))

static int builtin_kind(const dpdo_accountant_type *t)
{
    for (int i = 0; i < N_TYPES; i++)
        if (t == &TYPES[i]) return i + 1;
    return 0;
}

const dpdo_accountant_type *dpdo_accountant_type_find(const char *name)
{
    if (!name) return NULL;
    for (int i = 0; i < N_TYPES; i++)
        if (strcmp(TYPES[i].name, name) == 0) return &TYPES[i];
    return NULL;
}

const dpdo_accountant_type *dpdo_accountant_type_next(const dpdo_accountant_type *prev)
{
    if (!prev) return &TYPES[0];
    int k = builtin_kind(prev);
    return (k > 0 && k < N_TYPES) ? &TYPES[k] : NULL;
}

const char *dpdo_accountant_type_name(const dpdo_accountant_type *t) { return t && t->name ? t->name : ""; }

/* ---- options ------------------------------------------------------------------- */

#define N_DEFAULT_ORDERS 156

int64_t dpdo_accountant_default_orders(double *out, int64_t cap)
{
    if (out) {
        int64_t n = 0;
        for (int i = 1; i <= 99 && n < cap; i++) out[n++] = 1.0 + i / 10.0;
        for (int i = 11; i <= 63 && n < cap; i++) out[n++] = i;
        for (int i = 128; i <= 1024 && n < cap; i *= 2) out[n++] = i;
    }
    return N_DEFAULT_ORDERS;
}

static void opts_defaults(dpdo_accountant_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->conversion = DPDO_CONVERSION_IMPROVED;
}

int dpdo_accountant_options_init(dpdo_accountant_options *o, size_t struct_size)
{
    if (!o) return DPDO_E_INVAL;
    if (struct_size < sizeof(size_t)) return DPDO_E_VERSION;
    dpdo_accountant_options d;
    opts_defaults(&d);
    size_t n = struct_size < sizeof d ? struct_size : sizeof d;
    if (struct_size > sizeof d) memset((char *)o + sizeof d, 0, struct_size - sizeof d);
    memcpy(o, &d, n);
    o->struct_size = struct_size;
    return DPDO_OK;
}

/* ---- handle --------------------------------------------------------------------- */

static int make_builtin(builtin **out, int kind, const dpdo_accountant_options *o, char *err)
{
    *out = NULL;
    int64_t n = o->orders ? o->n_orders : N_DEFAULT_ORDERS;
    if (o->orders) {
        if (n < 1 || n > 100000)
            return dpdo__err(err, DPDO_E_INVAL, "n_orders = %lld is not in [1, 100000]", (long long)n);
        for (int64_t i = 0; i < n; i++) {
            double a = o->orders[i];
            if (!(a > 1.0) || (a > 1e6 && a != INFINITY))
                return dpdo__err(err, DPDO_E_INVAL, "orders[%lld] = %g must be in (1, 1e6] or +inf",
                                 (long long)i, a);
        }
    }
    if (o->conversion != DPDO_CONVERSION_IMPROVED && o->conversion != DPDO_CONVERSION_CLASSIC)
        return dpdo__err(err, DPDO_E_INVAL, "conversion = %d is not a DPDO_CONVERSION_* value",
                         (int)o->conversion);
    if (o->reserved0 != 0) return dpdo__err(err, DPDO_E_INVAL, "reserved0 must be 0");
    builtin *b = dpdo__calloc(1, sizeof *b);
    if (!b) return DPDO_E_NOMEM;
    b->kind = kind;
    b->conv = o->conversion;
    b->n_orders = n;
    b->orders = dpdo__alloc_array((size_t)n, sizeof *b->orders);
    b->tot = dpdo__alloc_array((size_t)n, sizeof *b->tot);
    b->deferred = dpdo__alloc_array((size_t)n, 1);
    b->convc = dpdo__alloc_array((size_t)n, sizeof *b->convc);
    b->conv_delta = -1.0;
    b->lower = dpdo__alloc_array((size_t)n, sizeof *b->lower);
    b->cands = dpdo__alloc_array((size_t)n, sizeof *b->cands);
    if (!b->orders || !b->tot || !b->deferred || !b->convc || !b->lower || !b->cands) goto nomem;
    if (o->orders)
        memcpy(b->orders, o->orders, (size_t)n * sizeof *b->orders);
    else
        dpdo_accountant_default_orders(b->orders, n);
    /* skeleton: in increasing order, an order is computed eagerly if it is at
     * least 1.5 times the previous eager one (or infinite); the others are
     * deferred. lower[o]: the largest eager order <= orders[o]. */
    for (int64_t i = 0; i < n; i++) {
        b->cands[i].lb = b->orders[i];
        b->cands[i].o = i;
    }
    qsort(b->cands, (size_t)n, sizeof *b->cands, cand_cmp);
    int64_t last = -1;
    double last_val = 0.0;
    for (int64_t i = 0; i < n; i++) {
        int64_t oi = b->cands[i].o;
        double a = b->orders[oi];
        int eager = a == INFINITY || last < 0 || a >= 1.5 * last_val;
        b->deferred[oi] = (unsigned char)!eager;
        if (eager) {
            last = oi;
            last_val = a;
        }
        b->lower[oi] = last == oi ? oi : last;
    }
    double maxint = 2;
    for (int64_t i = 0; i < n; i++)
        if (b->orders[i] != INFINITY && ceil(b->orders[i]) > maxint) maxint = ceil(b->orders[i]);
    b->logtab_n = (int64_t)(maxint < 4096 ? maxint : 4096) + 1;
    b->logtab = dpdo__alloc_array((size_t)b->logtab_n, sizeof *b->logtab);
    if (!b->logtab) goto nomem;
    b->logtab[0] = -INFINITY;
    for (int64_t k = 1; k < b->logtab_n; k++) b->logtab[k] = log((double)k);
    *out = b;
    return DPDO_OK;
nomem:
    b_release(b);
    return DPDO_E_NOMEM;
}

static int acc_new(dpdo_accountant **out, const dpdo_accountant_type *type, void *user, int is_builtin,
                   dpdo_ledger *ledger)
{
    dpdo_accountant *a = dpdo__calloc(1, sizeof *a);
    if (!a) return DPDO_E_NOMEM;
    a->rows_cap = 8;
    a->rows = dpdo__calloc((size_t)a->rows_cap * DPDO_EV_FIELDS, sizeof *a->rows);
    if (!a->rows) {
        dpdo__free(a);
        return DPDO_E_NOMEM;
    }
    a->type = type;
    a->user = user;
    a->is_builtin = is_builtin;
    a->ledger = ledger;
    ledger->borrowers++;
    *out = a;
    return DPDO_OK;
}

int dpdo_accountant_create(dpdo_accountant **out, const dpdo_accountant_type *type, dpdo_ledger *ledger,
                           const dpdo_accountant_options *opts)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    int kind = type ? builtin_kind(type) : 0;
    if (!kind || !ledger) return DPDO_E_INVAL;
    dpdo_accountant_options o;
    opts_defaults(&o);
    char err[DPDO__ERRMSG_LEN];
    int rc = dpdo__opts_copy(&o, sizeof o, opts, err);
    if (rc) return rc;
    builtin *b;
    rc = make_builtin(&b, kind, &o, err);
    if (rc) return rc;
    rc = acc_new(out, type, b, 1, ledger);
    if (rc) b_release(b);
    return rc;
}

int dpdo_accountant_create_custom(dpdo_accountant **out, const dpdo_accountant_type *type, void *user,
                                  dpdo_ledger *ledger)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (!type || !ledger) return DPDO_E_INVAL;
    if (type->struct_size < offsetof(dpdo_accountant_type, release) + sizeof(type->release))
        return DPDO_E_VERSION;
    if (!type->name || !type->epsilon) return DPDO_E_INVAL;
    return acc_new(out, type, user, 0, ledger);
}

void dpdo_accountant_destroy(dpdo_accountant *a)
{
    if (!a) return;
    if (a->type->release) a->type->release(a->user);
    if (a->ledger) a->ledger->borrowers--;
    dpdo__free(a->rows);
    dpdo__free(a);
}

const char *dpdo_accountant_errmsg(const dpdo_accountant *a) { return a ? a->errmsg : "(null handle)"; }
const char *dpdo_accountant_name(const dpdo_accountant *a) { return a ? dpdo_accountant_type_name(a->type) : ""; }

/* ---- queries -------------------------------------------------------------------- */

static int ensure_rows(dpdo_accountant *a, int64_t n)
{
    if (n <= a->rows_cap) return DPDO_OK;
    int64_t nc = a->rows_cap * 2;
    if (nc < n) nc = n;
    size_t cells;
    if (!dpdo__mul_size((size_t)nc, DPDO_EV_FIELDS, &cells))
        return dpdo__err(a->errmsg, DPDO_E_NOMEM, "event table too large");
    double *r = dpdo__calloc(cells, sizeof *r);
    if (!r) return dpdo__err(a->errmsg, DPDO_E_NOMEM, "out of memory for the event table");
    dpdo__free(a->rows);
    a->rows = r;
    a->rows_cap = nc;
    return DPDO_OK;
}

static int call_cb(dpdo_accountant *a, int want_delta, int64_t n, double x, double *out, double *order)
{
    int rc;
    double ord = NAN;
    if (want_delta) {
        if (!a->type->delta)
            return dpdo__err(a->errmsg, DPDO_E_UNSUPPORTED, "accountant '%s' has no delta query", a->type->name);
        rc = a->type->delta(a->user, a->rows, n, x, out);
    } else {
        rc = a->type->epsilon(a->user, a->rows, n, x, out, &ord);
    }
    if (order) *order = ord;
    if (rc == 0) {
        if (isnan(*out) || *out < 0)
            return dpdo__err(a->errmsg, DPDO_E_NUMERIC, "accountant '%s' returned %g", a->type->name, *out);
        return DPDO_OK;
    }
    if (a->is_builtin) {
        builtin *b = a->user;
        return dpdo__err(a->errmsg, rc, "%s", b->msg);
    }
    return dpdo__err(a->errmsg, DPDO_E_CALLBACK, "accountant '%s' %s callback returned %d", a->type->name,
                     want_delta ? "delta" : "epsilon", rc);
}

/* the worst value over the selected nodes; extra: hypothetical event */
static int query_sel(dpdo_accountant *a, int want_delta, const int64_t *nodes, int64_t n_sel,
                     const dpdo__event_desc *extra, double extra_count, double x, double *out, double *order)
{
    dpdo_ledger *l = a->ledger;
    int64_t K = l->n_events, N = l->n_nodes;
    int all = nodes == NULL;
    int64_t ns = all ? N : n_sel;
    if (!all && (n_sel < 1 || n_sel > N))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "n_sel = %lld is not in [1, %lld]", (long long)n_sel, (long long)N);
    for (int64_t i = 0; !all && i < ns; i++)
        if (nodes[i] < 0 || nodes[i] >= N)
            return dpdo__err(a->errmsg, DPDO_E_INVAL, "node %lld is not in [0, %lld)", (long long)nodes[i], (long long)N);
    int64_t nrow = K + (extra ? 1 : 0);
    int rc = ensure_rows(a, nrow + 1);
    if (rc) return rc;
    for (int64_t k = 0; k < K; k++) desc_to_row(&l->ev[k], a->rows + k * DPDO_EV_FIELDS);
    if (extra) {
        desc_to_row(extra, a->rows + K * DPDO_EV_FIELDS);
        a->rows[K * DPDO_EV_FIELDS + DPDO_EV_COUNT] = extra_count;
    }
    double worst = 0.0, wo = NAN;
    int64_t prev = -1;
    double pv = 0.0, po = NAN;
    for (int64_t i = 0; i < ns; i++) {
        int64_t node = all ? i : nodes[i];
        int same = prev >= 0;
        for (int64_t k = 0; k < K; k++) {
            int64_t c = l->counts[k * N + node];
            if (same && c != l->counts[k * N + prev]) same = 0;
            a->rows[k * DPDO_EV_FIELDS + DPDO_EV_COUNT] = (double)c;
        }
        double v, o = NAN;
        if (same) {
            v = pv;
            o = po;
        } else {
            rc = call_cb(a, want_delta, nrow, x, &v, &o);
            if (rc) return rc;
        }
        if (i == 0 || v > worst) {
            worst = v;
            wo = o;
        }
        prev = node;
        pv = v;
        po = o;
    }
    *out = worst;
    if (order) *order = wo;
    return DPDO_OK;
}

int dpdo__accountant_epsilon_sel(dpdo_accountant *a, const int64_t *nodes, int64_t n_sel,
                                 const dpdo__event_desc *extra, double extra_count, double delta,
                                 double *eps, double *order)
{
    return query_sel(a, 0, nodes, n_sel, extra, extra_count, delta, eps, order);
}

static int check_node(dpdo_accountant *a, int64_t node, int64_t *sel, const int64_t **nodes, int64_t *n_sel)
{
    if (node == -1) {
        *nodes = NULL;
        *n_sel = -1;
        return DPDO_OK;
    }
    if (node < 0 || node >= a->ledger->n_nodes)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "node = %lld is not -1 or in [0, %lld)", (long long)node,
                         (long long)a->ledger->n_nodes);
    *sel = node;
    *nodes = sel;
    *n_sel = 1;
    return DPDO_OK;
}

int dpdo_accountant_epsilon(dpdo_accountant *a, int64_t node, double delta, double *eps, double *order)
{
    if (!a) return DPDO_E_INVAL;
    if (order) *order = NAN;
    if (!eps) return dpdo__err(a->errmsg, DPDO_E_INVAL, "eps is NULL");
    if (!(delta > 0 && delta < 1))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "delta = %g is not in (0, 1)", delta);
    int64_t sel;
    const int64_t *nodes = NULL;
    int64_t n_sel = -1;
    int rc = check_node(a, node, &sel, &nodes, &n_sel);
    if (rc) return rc;
    rc = query_sel(a, 0, nodes, n_sel, NULL, 0, delta, eps, order);
    if (!rc) dpdo__err_clear(a->errmsg);
    return rc;
}

int dpdo_accountant_delta(dpdo_accountant *a, int64_t node, double eps, double *delta)
{
    if (!a) return DPDO_E_INVAL;
    if (!delta) return dpdo__err(a->errmsg, DPDO_E_INVAL, "delta is NULL");
    if (!(eps >= 0) || !isfinite(eps)) return dpdo__err(a->errmsg, DPDO_E_INVAL, "eps = %g must be finite and >= 0", eps);
    int64_t sel;
    const int64_t *nodes = NULL;
    int64_t n_sel = -1;
    int rc = check_node(a, node, &sel, &nodes, &n_sel);
    if (rc) return rc;
    rc = query_sel(a, 1, nodes, n_sel, NULL, 0, eps, delta, NULL);
    if (!rc) dpdo__err_clear(a->errmsg);
    return rc;
}

int dpdo_accountant_set_budget(dpdo_accountant *a, double max_epsilon, double delta)
{
    if (!a) return DPDO_E_INVAL;
    if (!(max_epsilon > 0) || !isfinite(max_epsilon))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "max_epsilon = %g must be finite and > 0", max_epsilon);
    if (!(delta > 0 && delta < 1)) return dpdo__err(a->errmsg, DPDO_E_INVAL, "delta = %g is not in (0, 1)", delta);
    a->has_budget = 1;
    a->budget_eps = max_epsilon;
    a->budget_delta = delta;
    dpdo__err_clear(a->errmsg);
    return DPDO_OK;
}

int dpdo_accountant_would_exceed(dpdo_accountant *a, const dpdo_event *ev, int64_t count,
                                 const int64_t *nodes, int64_t n_sel, int32_t *exceed, double *eps_after)
{
    if (!a) return DPDO_E_INVAL;
    if (!ev || !exceed) return dpdo__err(a->errmsg, DPDO_E_INVAL, "ev and exceed must not be NULL");
    if (!a->has_budget) return dpdo__err(a->errmsg, DPDO_E_STATE, "no budget set (dpdo_accountant_set_budget)");
    if (ev->d.mech == 0) return dpdo__err(a->errmsg, DPDO_E_INVAL, "event is not set");
    if (count < 1) return dpdo__err(a->errmsg, DPDO_E_INVAL, "count = %lld must be >= 1", (long long)count);
    if (!nodes && n_sel != -1)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "nodes is NULL but n_sel = %lld (use -1 for all)", (long long)n_sel);
    double e;
    int rc = query_sel(a, 0, nodes, n_sel, &ev->d, (double)count, a->budget_delta, &e, NULL);
    if (rc) return rc;
    *exceed = e > a->budget_eps;
    if (eps_after) *eps_after = e;
    dpdo__err_clear(a->errmsg);
    return DPDO_OK;
}

/* ---- calibration ---------------------------------------------------------------- */

static int cal_check(dpdo_accountant *a, const dpdo_sampling *s, double sens, double eps, double delta)
{
    if (!(sens > 0) || !isfinite(sens))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "sensitivity = %g must be finite and > 0", sens);
    if (!(eps > 0) || !isfinite(eps)) return dpdo__err(a->errmsg, DPDO_E_INVAL, "target epsilon = %g must be finite and > 0", eps);
    if (!(delta > 0 && delta < 1)) return dpdo__err(a->errmsg, DPDO_E_INVAL, "delta = %g is not in (0, 1)", delta);
    if (s) return dpdo__sampling_check(&s->d, a->errmsg);
    return DPDO_OK;
}

static int eps_with(dpdo_accountant *a, const dpdo_sampling *s, double sens, double sigma, double steps,
                    double delta, double *e)
{
    dpdo__event_desc d;
    int rc = dpdo__event_make(&d, DPDO_MECH_GAUSSIAN, s ? &s->d : NULL, sens, sigma, a->errmsg);
    if (rc) return rc;
    return query_sel(a, 0, NULL, -1, &d, steps, delta, e, NULL);
}

int dpdo_accountant_calibrate_sigma(dpdo_accountant *a, const dpdo_sampling *s, double sens, double steps,
                                    double eps, double delta, double *sigma)
{
    if (!a) return DPDO_E_INVAL;
    if (!sigma) return dpdo__err(a->errmsg, DPDO_E_INVAL, "sigma is NULL");
    int rc = cal_check(a, s, sens, eps, delta);
    if (rc) return rc;
    if (!(steps >= 1) || steps > 1e15 || steps != floor(steps))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "steps = %g must be an integer in [1, 1e15]", steps);
    const double smax = 1e12 * sens, smin = 1e-6 * sens;
    double e;
    rc = eps_with(a, s, sens, smax, steps, delta, &e);
    if (rc) return rc;
    if (e > eps)
        return dpdo__err(a->errmsg, DPDO_E_NUMERIC,
                         "target epsilon %g is unreachable: even sigma = %g gives epsilon %g at delta %g", eps, smax, e,
                         delta);
    double hi = sens, lo;
    rc = eps_with(a, s, sens, hi, steps, delta, &e);
    if (rc) return rc;
    if (e > eps) {
        do {
            lo = hi;
            hi *= 4.0;
            if (hi > smax) hi = smax;
            rc = eps_with(a, s, sens, hi, steps, delta, &e);
            if (rc) return rc;
        } while (e > eps);
    } else {
        for (;;) {
            lo = hi / 4.0;
            if (lo < smin) {
                *sigma = smin; /* any sigma >= 1e-6 * sensitivity meets the target */
                dpdo__err_clear(a->errmsg);
                return DPDO_OK;
            }
            rc = eps_with(a, s, sens, lo, steps, delta, &e);
            if (rc) return rc;
            if (e > eps) break;
            hi = lo;
        }
    }
    /* invariant: eps(lo) > target >= eps(hi) */
    for (int it = 0; it < 200 && hi / lo - 1.0 > 1e-13; it++) {
        double mid = sqrt(lo * hi);
        rc = eps_with(a, s, sens, mid, steps, delta, &e);
        if (rc) return rc;
        if (e > eps)
            lo = mid;
        else
            hi = mid;
    }
    *sigma = hi;
    dpdo__err_clear(a->errmsg);
    return DPDO_OK;
}

int dpdo_accountant_calibrate_steps(dpdo_accountant *a, const dpdo_sampling *s, double sens, double sigma,
                                    double eps, double delta, double *steps)
{
    if (!a) return DPDO_E_INVAL;
    if (!steps) return dpdo__err(a->errmsg, DPDO_E_INVAL, "steps is NULL");
    int rc = cal_check(a, s, sens, eps, delta);
    if (rc) return rc;
    if (!(sigma > 0) || !isfinite(sigma)) return dpdo__err(a->errmsg, DPDO_E_INVAL, "sigma = %g must be finite and > 0", sigma);
    double e;
    rc = eps_with(a, s, sens, sigma, 1, delta, &e);
    if (rc) return rc;
    if (e > eps) {
        *steps = 0;
        dpdo__err_clear(a->errmsg);
        return DPDO_OK;
    }
    double good = 1, bad = 2;
    for (;;) {
        if (bad > 1e15) {
            *steps = 1e15;
            dpdo__err_clear(a->errmsg);
            return DPDO_OK;
        }
        rc = eps_with(a, s, sens, sigma, bad, delta, &e);
        if (rc) return rc;
        if (e > eps) break;
        good = bad;
        bad *= 2;
    }
    while (bad - good > 1) {
        double mid = floor((good + bad) / 2);
        rc = eps_with(a, s, sens, sigma, mid, delta, &e);
        if (rc) return rc;
        if (e > eps)
            bad = mid;
        else
            good = mid;
    }
    *steps = good;
    dpdo__err_clear(a->errmsg);
    return DPDO_OK;
}

/* ---- formula functions ---------------------------------------------------------- */

static int bad_delta(double d) { return !(d > 0 && d < 1); }

int dpdo_rdp_gaussian(int kind, double rate, double z, double alpha, double *rdp)
{
    if (!rdp || !(z > 0) || !isfinite(z) || !(alpha > 1) || (alpha > 1e6 && alpha != INFINITY))
        return DPDO_E_INVAL;
    dpdo__event_desc d;
    memset(&d, 0, sizeof d);
    d.mech = DPDO_MECH_GAUSSIAN;
    d.samp.kind = kind;
    d.samp.q = kind == DPDO_SAMPLING_NONE ? 1.0 : rate;
    d.sens = 1.0;
    d.noise = z;
    if (kind == DPDO_SAMPLING_WOR) { /* only the ratio matters */
        if (!(rate > 0 && rate <= 1)) return DPDO_E_INVAL;
    } else if (kind != DPDO_SAMPLING_NONE && kind != DPDO_SAMPLING_POISSON) {
        return DPDO_E_INVAL;
    } else if (kind == DPDO_SAMPLING_POISSON && !(rate > 0 && rate <= 1)) {
        return DPDO_E_INVAL;
    }
    *rdp = dpdo__rdp_event(&d, alpha, NULL, 0);
    return DPDO_OK;
}

int dpdo_rdp_laplace(double lambda, double alpha, double *rdp)
{
    if (!rdp || !(lambda > 0) || !isfinite(lambda) || !(alpha > 1)) return DPDO_E_INVAL;
    *rdp = dpdo__rdp_laplace(lambda, alpha);
    return DPDO_OK;
}

static int check_curve(const double *orders, const double *rdp, int64_t n, int conv)
{
    if (!orders || !rdp || n < 1) return DPDO_E_INVAL;
    if (conv != DPDO_CONVERSION_IMPROVED && conv != DPDO_CONVERSION_CLASSIC) return DPDO_E_INVAL;
    for (int64_t i = 0; i < n; i++)
        if (!(orders[i] > 1) || !(rdp[i] >= 0)) return DPDO_E_INVAL;
    return DPDO_OK;
}

int dpdo_rdp_to_epsilon(const double *orders, const double *rdp, int64_t n, double delta, int conv,
                        double *eps, double *order)
{
    if (!eps || bad_delta(delta) || check_curve(orders, rdp, n, conv)) return DPDO_E_INVAL;
    *eps = dpdo__rdp_eps(orders, rdp, n, delta, conv, order);
    return DPDO_OK;
}

int dpdo_rdp_to_delta(const double *orders, const double *rdp, int64_t n, double eps, int conv,
                      double *delta, double *order)
{
    if (!delta || !(eps >= 0) || !isfinite(eps) || check_curve(orders, rdp, n, conv)) return DPDO_E_INVAL;
    *delta = dpdo__rdp_delta(orders, rdp, n, eps, conv, order);
    return DPDO_OK;
}

int dpdo_gaussian_delta(double mu, double eps, double *delta)
{
    if (!delta || !(mu >= 0) || !isfinite(mu) || !(eps >= 0) || !isfinite(eps)) return DPDO_E_INVAL;
    *delta = dpdo__gauss_delta(mu, eps);
    return DPDO_OK;
}

int dpdo_gaussian_epsilon(double mu, double delta, double *eps)
{
    if (!eps || !(mu >= 0) || !isfinite(mu) || bad_delta(delta)) return DPDO_E_INVAL;
    *eps = dpdo__gauss_eps(mu, delta);
    return DPDO_OK;
}

int dpdo_zcdp_epsilon(double rho, double delta, int conv, double *eps)
{
    if (!eps || !(rho >= 0) || !isfinite(rho) || bad_delta(delta)) return DPDO_E_INVAL;
    if (conv != DPDO_CONVERSION_IMPROVED && conv != DPDO_CONVERSION_CLASSIC) return DPDO_E_INVAL;
    *eps = dpdo__zcdp_eps(rho, delta, conv);
    return DPDO_OK;
}

int dpdo_dp_amplify(double eps, double gamma, double *out)
{
    if (!out || !(eps >= 0) || !isfinite(eps) || !(gamma >= 0 && gamma <= 1)) return DPDO_E_INVAL;
    *out = eps > 30 ? eps + log(gamma + (1 - gamma) * exp(-eps)) : log1p(gamma * expm1(eps));
    if (gamma == 0) *out = 0;
    return DPDO_OK;
}

int dpdo_dp_gaussian_sigma(double eps, double delta, double *s)
{
    if (!s || !(eps > 0 && eps < 1) || bad_delta(delta)) return DPDO_E_INVAL;
    *s = sqrt(2.0 * log(1.25 / delta)) / eps;
    return DPDO_OK;
}

int dpdo_dp_advanced_composition(double k, double eps0, double dp, double *eps)
{
    if (!eps || !(k >= 1) || !isfinite(k) || !(eps0 >= 0) || !isfinite(eps0) || bad_delta(dp))
        return DPDO_E_INVAL;
    *eps = sqrt(2.0 * k * log(1.0 / dp)) * eps0 + k * eps0 * expm1(eps0);
    return DPDO_OK;
}
