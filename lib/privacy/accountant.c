/* SPDX-License-Identifier: BSD-3-Clause */
/* The accountant handle: the built-in type objects (rdp, exact, zcdp, pure, pld, auto; each
 * kind in its own file, accountant_impl.h), user types, and the queries per node and worst
 * case. The guard and calibration are in accountant_guard.c, the formula functions in
 * accountant_formulas.c. */
#include "accountant_impl.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

int dpdo__accountant_calib_mech(dpdo_accountant *a, int mech)
{
    if (!a) return DPDO_MECH_GAUSSIAN;
    int old = a->calib_mech ? a->calib_mech : DPDO_MECH_GAUSSIAN;
    a->calib_mech = mech;
    return old;
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

static int any_charged(const double *ev, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        if (ev[k * DPDO_EV_FIELDS + DPDO_EV_COUNT] > 0) return 1;
    return 0;
}

/* ---- built-in types --------------------------------------------------------------- */

/* The public callbacks of every built-in type: the kind's own functions behind the handle's
 * common part (the source of the answer, an empty table). */
static int b_epsilon(void *user, const double *ev, int64_t n, double delta, double *eps,
                     double *order)
{
    dpdo__acc_base *b = user;
    *order = NAN;
    b->last_lo = 0.0;
    b->last_src = b->kind->name;
    if (!any_charged(ev, n)) {
        *eps = 0.0;
        return DPDO_OK;
    }
    return b->kind->epsilon(b, ev, n, delta, eps, order);
}

static int b_delta(void *user, const double *ev, int64_t n, double eps, double *delta)
{
    dpdo__acc_base *b = user;
    if (!any_charged(ev, n)) {
        *delta = 0.0;
        return DPDO_OK;
    }
    return b->kind->delta(b, ev, n, eps, delta);
}

static void b_release(void *user)
{
    dpdo__acc_base *b = user;
    if (b) b->kind->release(b);
}

static const dpdo_accountant_type TYPES[] = {
    {sizeof(dpdo_accountant_type), "rdp", b_epsilon, b_delta, b_release},
    {sizeof(dpdo_accountant_type), "exact", b_epsilon, b_delta, b_release},
    {sizeof(dpdo_accountant_type), "zcdp", b_epsilon, b_delta, b_release},
    {sizeof(dpdo_accountant_type), "pure", b_epsilon, b_delta, b_release},
    {sizeof(dpdo_accountant_type), "pld", b_epsilon, b_delta, b_release},
    {sizeof(dpdo_accountant_type), "auto", b_epsilon, b_delta, b_release},
};
#define N_TYPES ((int)(sizeof TYPES / sizeof TYPES[0]))
/* the kind behind TYPES[i] */
static const dpdo__acc_kind *const KINDS[N_TYPES] = {
    &dpdo__acc_rdp,  &dpdo__acc_exact, &dpdo__acc_zcdp,
    &dpdo__acc_pure, &dpdo__acc_pld,   &dpdo__acc_auto,
};

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

const char *dpdo_accountant_type_name(const dpdo_accountant_type *t)
{
    return t && t->name ? t->name : "";
}

static void opts_defaults(dpdo_accountant_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->conversion = DPDO_CONVERSION_IMPROVED;
    o->pld_interval = DPDO_PLD_DEFAULT_INTERVAL;
}

int dpdo_accountant_options_init(dpdo_accountant_options *o, size_t struct_size)
{
    dpdo_accountant_options d;
    opts_defaults(&d);
    return dpdo__options_init(o, struct_size, &d, sizeof d);
}

/* ---- handle --------------------------------------------------------------------- */

/* ---- handle --------------------------------------------------------------------- */

/* the options every kind accepts (checked for all kinds alike) */
static int opts_check(const dpdo_accountant_options *o, char *err)
{
    int64_t n = o->orders ? o->n_orders : 0;
    if (o->orders) {
        if (n < 1 || n > 100000)
            return dpdo__err(err, DPDO_E_INVAL, "n_orders = %lld is not in [1, 100000]",
                             (long long)n);
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
    if (!(o->pld_interval >= 1e-6 && o->pld_interval <= 1.0))
        return dpdo__err(err, DPDO_E_INVAL, "pld_interval = %g is not in [1e-6, 1]",
                         o->pld_interval);
    return DPDO_OK;
}

static int make_builtin(dpdo__acc_base **out, const dpdo__acc_kind *kind,
                        const dpdo_accountant_options *o, char *err)
{
    *out = NULL;
    int rc = opts_check(o, err);
    if (rc) return rc;
    dpdo__acc_base *b = NULL;
    if (kind->make(&b, o) != DPDO_OK) return DPDO_E_NOMEM;
    b->kind = kind;
    b->limit = -INFINITY;
    *out = b;
    return DPDO_OK;
}

dpdo__acc_base *dpdo__acc_builtin(dpdo_accountant *a)
{
    return a->is_builtin ? a->user : NULL;
}

static int acc_new(dpdo_accountant **out, const dpdo_accountant_type *type, void *user,
                   int is_builtin, dpdo_ledger *ledger)
{
    dpdo_accountant *a = dpdo__calloc(1, sizeof *a);
    if (!a) return DPDO_E_NOMEM;
    a->magic = DPDO__MAGIC_ACCOUNTANT;
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

static int create_custom(dpdo_accountant **out, const dpdo_accountant_type *type, void *user,
                         dpdo_ledger *ledger)
{
    if (type->struct_size < offsetof(dpdo_accountant_type, release) + sizeof(type->release))
        return dpdo__err(
            ledger->errmsg, DPDO_E_VERSION,
            "accountant type: struct_size = %zu does not cover the release field (%zu)",
            type->struct_size, offsetof(dpdo_accountant_type, release) + sizeof(type->release));
    if (!type->name || !type->epsilon)
        return dpdo__err(ledger->errmsg, DPDO_E_INVAL, "accountant type: name or epsilon is NULL");
    return acc_new(out, type, user, 0, ledger);
}

/* Failures of create leave their message on the borrowed ledger (no accountant exists). */
int dpdo_accountant_create(dpdo_accountant **out, const dpdo_accountant_type *type, void *user,
                           dpdo_ledger *ledger, const dpdo_accountant_options *opts)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (!ledger) return DPDO_E_INVAL;
    if (!type)
        return dpdo__err(ledger->errmsg, DPDO_E_INVAL,
                         "accountant type is NULL: choose one; the library's default is "
                         "dpdo_accountant_type_find(DPDO_ACCOUNTANT_DEFAULT), i.e. \"auto\" "
                         "(the smallest certified figure, docs/privacy.md)");
    dpdo_accountant_options o;
    opts_defaults(&o);
    int rc = dpdo__options_accept(&o, sizeof o, offsetof(dpdo_accountant_options, reserved), opts,
                                  "dpdo_accountant_options", ledger->errmsg);
    if (rc) return rc;
    int kind = builtin_kind(type);
    if (!kind) return create_custom(out, type, user, ledger);
    if (user)
        return dpdo__err(ledger->errmsg, DPDO_E_INVAL,
                         "accountant '%s' is built in: user must be NULL", type->name);
    dpdo__acc_base *b;
    rc = make_builtin(&b, KINDS[kind - 1], &o, ledger->errmsg);
    if (rc) return rc;
    rc = acc_new(out, type, b, 1, ledger);
    if (rc) b_release(b);
    return rc;
}

int dpdo_accountant_create_custom(dpdo_accountant **out, const dpdo_accountant_type *type,
                                  void *user, dpdo_ledger *ledger)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (!type || !ledger) return DPDO_E_INVAL;
    return create_custom(out, type, user, ledger);
}

static void acc_free(dpdo_accountant *a);

void dpdo_accountant_destroy(dpdo_accountant *a)
{
    if (!a || !DPDO__LIVE(a, DPDO__MAGIC_ACCOUNTANT)) return; /* NULL or destroyed */
    /* refused while a call runs on the handle (core_impl.h, dpdo__busy) */
    if (dpdo__busy_enter(&a->busy, 1, a->errmsg, "dpdo_accountant_destroy") != 1) return;
    DPDO__KILL(a);
    if (a->borrowers > 0) {
        a->doomed = 1; /* freed by the last borrowing algorithm */
        return;
    }
    acc_free(a);
}

void dpdo__accountant_retain(dpdo_accountant *a)
{
    a->borrowers++;
}

void dpdo__accountant_release(dpdo_accountant *a)
{
    if (a && --a->borrowers == 0 && a->doomed) acc_free(a);
}

static void acc_free(dpdo_accountant *a)
{
    if (a->type->release) a->type->release(a->user);
    if (a->ledger) dpdo__ledger_release(a->ledger);
    dpdo__free(a->rows);
    dpdo__free(a);
}

const char *dpdo_accountant_errmsg(const dpdo_accountant *a)
{
    return !a ? DPDO__NULL_TEXT("dpdo_accountant_errmsg", "acc")
           : DPDO__LIVE(a, DPDO__MAGIC_ACCOUNTANT)
               ? a->errmsg
               : DPDO__DEAD_TEXT("dpdo_accountant_errmsg", "acc");
}
const char *dpdo_accountant_name(const dpdo_accountant *a)
{
    return a ? dpdo_accountant_type_name(a->type) : "";
}

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

static int call_cb(dpdo_accountant *a, int want_delta, int64_t n, double x, double *out,
                   double *order)
{
    int rc;
    double ord = NAN;
    if (want_delta) {
        if (!a->type->delta)
            return dpdo__err(a->errmsg, DPDO_E_UNSUPPORTED, "accountant '%s' has no delta query",
                             a->type->name);
        rc = a->type->delta(a->user, a->rows, n, x, out);
    } else {
        rc = a->type->epsilon(a->user, a->rows, n, x, out, &ord);
    }
    if (order) *order = ord;
    if (rc == 0) {
        if (isnan(*out) || *out < 0)
            return dpdo__err(a->errmsg, DPDO_E_NUMERIC, "accountant '%s' returned %g",
                             a->type->name, *out);
        return DPDO_OK;
    }
    if (a->is_builtin) {
        dpdo__acc_base *b = a->user;
        return dpdo__err(a->errmsg, rc, "%s", b->msg);
    }
    return dpdo__err(a->errmsg, DPDO_E_CALLBACK, "accountant '%s' %s callback returned %d",
                     a->type->name, want_delta ? "delta" : "epsilon", rc);
}

int dpdo__acc_query(dpdo_accountant *a, int want_delta, const int64_t *nodes, int64_t n_sel,
                    const dpdo__event_desc *extra, double extra_count, double x, double *out,
                    double *order)
{
    dpdo_ledger *l = a->ledger;
    int64_t K = l->n_events, N = l->n_nodes;
    int all = nodes == NULL;
    int64_t ns = all ? N : n_sel;
    if (!all && (n_sel < 1 || n_sel > N))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "n_sel = %lld is not in [1, %lld]",
                         (long long)n_sel, (long long)N);
    for (int64_t i = 0; !all && i < ns; i++)
        if (nodes[i] < 0 || nodes[i] >= N)
            return dpdo__err(a->errmsg, DPDO_E_INVAL, "node %lld is not in [0, %lld)",
                             (long long)nodes[i], (long long)N);
    int64_t nrow = K + (extra ? 1 : 0);
    int rc = ensure_rows(a, nrow + 1);
    if (rc) return rc;
    for (int64_t k = 0; k < K; k++)
        desc_to_row(&l->ev[k], a->rows + k * DPDO_EV_FIELDS);
    if (extra) {
        desc_to_row(extra, a->rows + K * DPDO_EV_FIELDS);
        a->rows[K * DPDO_EV_FIELDS + DPDO_EV_COUNT] = extra_count;
    }
    double worst = 0.0, wo = NAN, wlo = 0.0, plo = 0.0;
    const char *wsrc = a->type->name, *psrc = a->type->name;
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
        double lo = 0.0;
        const char *src = a->type->name;
        if (same) {
            v = pv;
            o = po;
            lo = plo;
            src = psrc;
        } else {
            rc = call_cb(a, want_delta, nrow, x, &v, &o);
            if (rc) return rc;
            if (a->is_builtin) {
                dpdo__acc_base *b = a->user;
                lo = b->last_lo;
                if (b->last_src) src = b->last_src;
            }
        }
        if (i == 0 || v > worst) {
            worst = v;
            wo = o;
            wsrc = src;
        }
        if (lo > wlo) wlo = lo; /* the worst node is at least the largest lower bound */
        prev = node;
        pv = v;
        po = o;
        plo = lo;
        psrc = src;
    }
    *out = worst;
    if (order) *order = wo;
    a->last_lo = want_delta ? 0.0 : (wlo < worst ? wlo : worst);
    a->last_src = wsrc;
    return DPDO_OK;
}

int dpdo__accountant_epsilon_sel(dpdo_accountant *a, const int64_t *nodes, int64_t n_sel,
                                 const dpdo__event_desc *extra, double extra_count, double delta,
                                 double *eps, double *order)
{
    return dpdo__acc_query(a, 0, nodes, n_sel, extra, extra_count, delta, eps, order);
}

static int check_node(dpdo_accountant *a, int64_t node, int64_t *sel, const int64_t **nodes,
                      int64_t *n_sel)
{
    if (node == -1) {
        *nodes = NULL;
        *n_sel = -1;
        return DPDO_OK;
    }
    if (node < 0 || node >= a->ledger->n_nodes)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "node = %lld is not -1 or in [0, %lld)",
                         (long long)node, (long long)a->ledger->n_nodes);
    *sel = node;
    *nodes = sel;
    *n_sel = 1;
    return DPDO_OK;
}

static int accountant_epsilon_body(dpdo_accountant *a, int64_t node, double delta, double *eps,
                                   double *order)
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
    rc = dpdo__acc_query(a, 0, nodes, n_sel, NULL, 0, delta, eps, order);
    if (!rc) dpdo__err_clear(a->errmsg);
    return rc;
}

int dpdo_accountant_epsilon(dpdo_accountant *a, int64_t node, double delta, double *eps,
                            double *order)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ACCOUNTANT, 1, "dpdo_accountant_epsilon",
                  accountant_epsilon_body(a, node, delta, eps, order));
}

static int accountant_epsilon_bounds_body(dpdo_accountant *a, int64_t node, double delta,
                                          double *eps_lo, double *eps_hi)
{
    if (!a) return DPDO_E_INVAL;
    if (!eps_lo || !eps_hi)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "eps_lo and eps_hi must not be NULL");
    double e;
    int rc = accountant_epsilon_body(a, node, delta, &e, NULL);
    if (rc) return rc;
    *eps_hi = e;
    *eps_lo = a->last_lo;
    return DPDO_OK;
}

int dpdo_accountant_epsilon_bounds(dpdo_accountant *a, int64_t node, double delta, double *eps_lo,
                                   double *eps_hi)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ACCOUNTANT, 1, "dpdo_accountant_epsilon_bounds",
                  accountant_epsilon_bounds_body(a, node, delta, eps_lo, eps_hi));
}

const char *dpdo_accountant_source(const dpdo_accountant *a)
{
    if (!a) return "";
    return a->last_src ? a->last_src : dpdo_accountant_type_name(a->type);
}

static int accountant_delta_body(dpdo_accountant *a, int64_t node, double eps, double *delta)
{
    if (!a) return DPDO_E_INVAL;
    if (!delta) return dpdo__err(a->errmsg, DPDO_E_INVAL, "delta is NULL");
    if (!(eps >= 0) || !isfinite(eps))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "eps = %g must be finite and >= 0", eps);
    int64_t sel;
    const int64_t *nodes = NULL;
    int64_t n_sel = -1;
    int rc = check_node(a, node, &sel, &nodes, &n_sel);
    if (rc) return rc;
    rc = dpdo__acc_query(a, 1, nodes, n_sel, NULL, 0, eps, delta, NULL);
    if (!rc) dpdo__err_clear(a->errmsg);
    return rc;
}

int dpdo_accountant_delta(dpdo_accountant *a, int64_t node, double eps, double *delta)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ACCOUNTANT, 1, "dpdo_accountant_delta",
                  accountant_delta_body(a, node, eps, delta));
}

dpdo_ledger *dpdo__accountant_ledger(const dpdo_accountant *a)
{
    return a->ledger;
}
