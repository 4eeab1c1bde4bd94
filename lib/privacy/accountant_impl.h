/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to the accountant files of lib/privacy: the accountant handle, the state every
 * built-in accountant kind starts with, and the kinds' function tables.
 *
 *   accountant.c           the handle, the built-in type objects, the queries per node
 *   accountant_rdp.c       rdp: the RDP curve over a grid of orders, its branch-and-bound search
 *   accountant_closed.c    exact, zcdp, pure: closed forms of unsampled compositions
 *   accountant_auto.c      pld (the privacy loss distribution) and auto (the smallest of rdp,
 *                          exact and pld, with the budget guard's look-ahead)
 *   accountant_guard.c     the budget guard and the calibration of sigma and of steps
 *   accountant_formulas.c  the public formula functions (dpdo_rdp_gaussian, ...) */
#ifndef DPDO_ACCOUNTANT_IMPL_H
#define DPDO_ACCOUNTANT_IMPL_H
#include "privacy_impl.h"

struct dpdo_accountant {
    uint32_t magic; /* DPDO__MAGIC_* while alive, 0 after destroy (core_impl.h) */
    const dpdo_accountant_type *type;
    void *user; /* built-in kinds: their dpdo__acc_base (first member of their state) */
    int is_builtin;
    dpdo_ledger *ledger;
    int has_budget;
    double budget_eps, budget_delta;
    double last_lo;       /* worst-node lower bound of the last epsilon query */
    const char *last_src; /* accountant behind the last answer */
    double *rows;         /* [(rows_cap) * DPDO_EV_FIELDS] */
    int64_t rows_cap;
    int64_t borrowers; /* algorithms borrowing this accountant (core_impl.h, borrowed handles) */
    int doomed;        /* destroy requested while borrowed */
    int calib_mech;    /* the Gaussian mechanism calibrate_sigma/_steps plan for
                          (dpdo__accountant_calib_mech) */
    dpdo__busy busy;   /* taken by the queries, which write the caches (DPDO__GUARDED) */
    char errmsg[DPDO__ERRMSG_LEN];
};

typedef struct dpdo__acc_kind dpdo__acc_kind;

/* The head of every built-in kind's state (the `user` pointer of a built-in accountant). */
typedef struct dpdo__acc_base {
    const dpdo__acc_kind *kind;
    double limit;         /* guard (would_exceed): an answer <= limit may be returned as soon as
                           * it is known to fit; -inf otherwise (auto) */
    int rdp_only;         /* first pass of a two-pass calibration: answer with rdp alone (auto) */
    double last_lo;       /* lower bound of the last epsilon answer (0: none known) */
    const char *last_src; /* accountant that produced the last answer */
    char msg[DPDO__ERRMSG_LEN];
} dpdo__acc_base;

/* A built-in kind. The queries see only the charged tables (at least one count > 0): the
 * handle answers 0 for an empty table itself. make receives options already checked by
 * accountant.c and fails only for memory. */
struct dpdo__acc_kind {
    const char *name;
    int (*make)(dpdo__acc_base **out, const dpdo_accountant_options *o);
    int (*epsilon)(dpdo__acc_base *b, const double *ev, int64_t n, double delta, double *eps,
                   double *order);
    int (*delta)(dpdo__acc_base *b, const double *ev, int64_t n, double eps, double *delta);
    void (*release)(dpdo__acc_base *b);
    int two_pass_calibration; /* calibrate_sigma: rdp's sigma first, then refine (auto) */
};

extern const dpdo__acc_kind dpdo__acc_rdp, dpdo__acc_exact, dpdo__acc_zcdp, dpdo__acc_pure,
    dpdo__acc_pld, dpdo__acc_auto;

/* ---- rdp state (accountant_rdp.c), also held by auto ---- */

/* The RDP orders, a log table for the integer-order sums, and a cache of per-event RDP vectors
 * indexed like the ledger's event list (the last slot also serves hypothetical events of
 * calibration/would_exceed). */
typedef struct dpdo__rdp_acc {
    int32_t conv;
    int64_t n_orders;
    double *orders;
    double *logtab;
    int64_t logtab_n, logtab_fill; /* allocated / filled entries */
    int64_t cache_cap;
    dpdo__event_desc *keys;  /* [cache_cap]; mech 0 = empty */
    double *vals;            /* [cache_cap * n_orders] */
    double *tot;             /* [n_orders] */
    unsigned char *deferred; /* [n_orders] 1 = fractional order computed only when needed */
    double *convc;           /* [n_orders] epsilon = r + convc[o] at delta = conv_delta */
    double *loga, *l1ma;     /* [n_orders] log(a) and log1p(-1/a) of the orders */
    double conv_delta, kl_thr;
    int64_t *lower; /* [n_orders] largest non-deferred order <= this one, or -1 */
    struct dpdo__rdp_cand {
        double lb;
        int64_t o;
    } * cands;     /* [n_orders] scratch */
    double *memo;  /* [cache_cap * DPDO__PG_MEMO] per-event kernel memo (Poisson Gaussian) */
    int64_t *perm; /* [n_orders] order indices sorted by increasing order */
    int64_t kmax;  /* largest integer order used as a convexity point (<= DPDO__PG_NI - 1) */
    double *bnd;   /* [cache_cap * 3 * n_orders] per event: lower bound, upper bound (convexity),
                    * lower bound from a stopped series (0 = none) */
    int64_t *bsig; /* [cache_cap] integer points the bounds were built from (-1 = none) */
    double *lbv, *ubv; /* [n_orders] scratch: bounds of the composed RDP */
    char *msg;         /* the owning accountant's message buffer */
} dpdo__rdp_acc;

/* Allocate and fill the order tables from checked options; DPDO_E_NOMEM (then fini). */
int dpdo__rdp_acc_init(dpdo__rdp_acc *r, const dpdo_accountant_options *o, char *msg);
void dpdo__rdp_acc_fini(dpdo__rdp_acc *r);
/* epsilon (and its order) / delta of a charged event table; DPDO_E_NOMEM in r->msg */
int dpdo__rdp_acc_epsilon(dpdo__rdp_acc *r, const double *ev, int64_t n, double delta, double *eps,
                          double *order);
int dpdo__rdp_acc_delta(dpdo__rdp_acc *r, const double *ev, int64_t n, double eps, double *delta);

/* ---- the exact accountant's closed form (accountant_closed.c), also used by auto ---- */

/* mu^2 of the composed Gaussians of a charged table and the number of fine lattice Gaussian
 * releases among them; DPDO_E_UNSUPPORTED (message in msg) for an event it cannot take. */
int dpdo__acc_exact_total(const double *ev, int64_t n, double *mu2, double *fine_n, char *msg);
double dpdo__acc_exact_eps(double mu, double fine_n, double delta);
double dpdo__acc_exact_delta(double mu, double fine_n, double eps);

/* ---- the handle (accountant.c), for the guard and calibration ---- */

/* The worst value over the selected nodes (nodes NULL: all); extra: a hypothetical event
 * charged extra_count times to each of them. want_delta: delta at x = eps, else epsilon at
 * x = delta. */
int dpdo__acc_query(dpdo_accountant *a, int want_delta, const int64_t *nodes, int64_t n_sel,
                    const dpdo__event_desc *extra, double extra_count, double x, double *out,
                    double *order);
/* The built-in state of a, NULL for a user accountant. */
dpdo__acc_base *dpdo__acc_builtin(dpdo_accountant *a);

#endif
