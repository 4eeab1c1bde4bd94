/* SPDX-License-Identifier: BSD-3-Clause */
/* The five Fed-PLT baselines (spec fed-plt.md §7) on the engine: T28 (all
 * converge to the same x* of a quadratic problem, x* from the normal
 * equations), fixed-point invariance of each method's stated fixed point,
 * the iterates against independent implementations of the §7 update
 * equations written here (own gradients A_i x - c_i, own cohort and L_r
 * draws from the documented streams), message counters per round,
 * determinism and reset, bad input, and the registry. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "dpdo/dpdo.h"
#include "dpdo/solver.h"
#include "engine/engine_impl.h"
#include "rng/rng_impl.h"
#include "core/core_impl.h"
#include "harness.h"

static uint64_t tstate = 0x9e3779b97f4a7c15ull;
static double urand(void) { return h_urand(&tstate); }
static double nrand(void) { return sqrt(-2.0 * log(urand() + 1e-300)) * cos(6.283185307179586 * urand()); }

extern void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w,
                   double *work, const int *lwork, int *info);
extern void dposv_(const char *uplo, const int *n, const int *nrhs, double *a, const int *lda, double *b,
                   const int *ldb, int *info);

enum { NMAX = 10, DMAX = 5, QMAX = 30 };
typedef struct fx {
    int n, q, d;
    double X[NMAX * QMAX * DMAX], Y[NMAX * QMAX];
    dpdo_dataset *ds;
    dpdo_shard *sh[NMAX];
    dpdo_loss *loss;
    dpdo_node *nodes[NMAX];
    dpdo_ledger *led;
    dpdo_accountant *acc;
    double A[NMAX][DMAX * DMAX], c[NMAX][DMAX]; /* f_i = 1/2 x'A_i x - c_i'x + const */
    double lo, hi;
    double xstar[DMAX];
} fx;

/* squared loss f_i = (1/q) sum 1/2 (a.x - y)^2 (heterogeneous: shifted features per agent) */
static void fx_make(fx *f, int n, int q, int d)
{
    memset(f, 0, sizeof *f);
    f->n = n, f->q = q, f->d = d;
    for (int i = 0; i < n * q; i++) {
        int ag = i / q;
        for (int k = 0; k < d; k++) f->X[i * d + k] = nrand() * (1.0 + 0.3 * k) + 0.5 * sin(ag + k);
        f->Y[i] = nrand() + 0.3 * ag;
    }
    CHECK_EQ(dpdo_dataset_create(&f->ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_dense(f->ds, n * q, d, f->X, f->Y, DPDO_COPY), DPDO_OK);
    CHECK_EQ(dpdo_loss_create(&f->loss, dpdo_loss_type_find("squared"), NULL, d), DPDO_OK);
    for (int i = 0; i < n; i++) {
        CHECK_EQ(dpdo_shard_create_range(&f->sh[i], f->ds, (int64_t)i * q, q), DPDO_OK);
        CHECK_EQ(dpdo_node_create(&f->nodes[i], f->sh[i], f->loss, 1.0), DPDO_OK);
    }
    CHECK_EQ(dpdo_ledger_create(&f->led, n), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&f->acc, dpdo_accountant_type_find("rdp"), NULL, f->led, NULL), DPDO_OK);
    double S[DMAX * DMAX] = {0}, cs[DMAX] = {0};
    f->lo = INFINITY, f->hi = 0;
    for (int i = 0; i < n; i++) {
        double *A = f->A[i];
        for (int r = 0; r < q; r++) {
            const double *a = f->X + (i * q + r) * d;
            for (int j = 0; j < d; j++) {
                for (int k = 0; k < d; k++) A[j * d + k] += a[j] * a[k] / q;
                f->c[i][j] += f->Y[i * q + r] * a[j] / q;
            }
        }
        for (int k = 0; k < d * d; k++) S[k] += A[k];
        for (int k = 0; k < d; k++) cs[k] += f->c[i][k];
        double B[DMAX * DMAX], w[DMAX], work[64];
        memcpy(B, A, sizeof B);
        int nn = d, lw = 64, info;
        dsyev_("N", "U", &nn, B, &nn, w, work, &lw, &info);
        f->lo = fmin(f->lo, w[0]);
        f->hi = fmax(f->hi, w[d - 1]);
    }
    int nn = d, one = 1, info;
    memcpy(f->xstar, cs, sizeof cs);
    dposv_("U", &nn, &one, S, &nn, f->xstar, &nn, &info);
    CHECK_EQ(info, 0);
}

static void fx_free(fx *f)
{
    dpdo_accountant_destroy(f->acc);
    dpdo_ledger_destroy(f->led);
    for (int i = 0; i < f->n; i++) {
        dpdo_node_destroy(f->nodes[i]);
        dpdo_shard_destroy(f->sh[i]);
    }
    dpdo_loss_destroy(f->loss);
    dpdo_dataset_destroy(f->ds);
}

/* independent gradient: A_i x - c_i */
static void grad(const fx *f, int i, const double *x, double *g)
{
    for (int j = 0; j < f->d; j++) {
        g[j] = -f->c[i][j];
        for (int k = 0; k < f->d; k++) g[j] += f->A[i][j * f->d + k] * x[k];
    }
}

static const char *const NAMES[] = {"fedpd", "fedlin", "tamuna", "led", "5gcs"};

static dpdo_algorithm *mk(fx *f, const char *name, int64_t T, uint64_t seed)
{
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = DPDO_NOISE_NONE;
    o.max_rounds = T;
    o.seed = seed;
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find(name)), DPDO_OK);
    int rc = dpdo_algorithm_setup(a, f->nodes, f->n, NULL, NULL, NULL, &o);
    CHECK_MSG(rc == DPDO_OK, "setup %s: %s", name, dpdo_algorithm_errmsg(a));
    return a;
}

static dpdo_solver *mksolver(const char *type, int d, double lo, double hi)
{
    dpdo_solver *s = NULL;
    CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find(type), NULL, d), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "lambda_lo", lo), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "lambda_hi", hi), DPDO_OK);
    return s;
}

/* fixed small steps for every method (documented in the test, not derived by the library) */
typedef struct steps {
    double a, eta, beta, tau, mu, ls;
} steps;

static steps fixed_steps(const fx *f, int ne)
{
    steps s;
    s.a = 0.5 / (ne * f->hi);
    s.eta = 1.0;
    s.beta = 0.5 / ne;
    s.mu = f->lo;
    s.tau = 2.0 * f->hi;
    s.ls = 1.0 / (f->hi + s.tau);
    return s;
}

static void set_steps(dpdo_algorithm *a, int m, const steps *s, int ne)
{
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_FED_EPOCHS, ne), DPDO_OK);
    if (m == 4) { /* 5GCS: primal gamma, dual tau, mu, inner step */
        CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_5GCS_TAU, s->tau), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_5GCS_MU, s->mu), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_5GCS_LOCAL_STEP, s->ls), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_STEP_SIZE, 1.0 / (2.0 * s->tau * (double)dpdo_algorithm_nodes(a))),
                 DPDO_OK);
        return;
    }
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_STEP_SIZE, s->a), DPDO_OK);
    if (m == 0) CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_FEDPD_ETA, s->eta), DPDO_OK);
    if (m == 3) CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_LED_BETA, s->beta), DPDO_OK);
}

static double err_out(dpdo_algorithm *a, const fx *f, int point)
{
    double worst = 0, x[DMAX];
    for (int i = 0; i < f->n; i++) {
        if (point) dpdo_algorithm_get_output(a, i, x, f->d);
        else dpdo_algorithm_get_iterate(a, i, x, f->d);
        double e = 0;
        for (int k = 0; k < f->d; k++) e += (x[k] - f->xstar[k]) * (x[k] - f->xstar[k]);
        worst = fmax(worst, sqrt(e));
    }
    return worst;
}

/* ---- registry ---------------------------------------------------------------------- */

static void test_registry(void)
{
    for (int m = 0; m < 5; m++) {
        const dpdo_algorithm_type *t = dpdo_algorithm_type_find(NAMES[m]);
        CHECK_MSG(t != NULL, "%s not found", NAMES[m]);
        if (!t) continue;
        CHECK(strcmp(dpdo_algorithm_type_name(t), NAMES[m]) == 0);
        CHECK(strlen(dpdo_algorithm_type_title(t)) > 10);
        int listed = 0;
        for (const dpdo_algorithm_type *u = dpdo_algorithm_type_next(NULL); u; u = dpdo_algorithm_type_next(u))
            listed += u == t;
        CHECK_EQ(listed, 1);
    }
    CHECK(dpdo_algorithm_type_find("FedPD") == NULL);
    CHECK_STR_CONTAINS(dpdo_param_name(DPDO_PARAM_TAMUNA_ETA), "tamuna");
    CHECK_EQ(dpdo_param_type(DPDO_PARAM_5GCS_LOCAL_STEP), 1);
}

/* ---- T28: every baseline converges to the same x* ------------------------------------------------ */

static void test_converge(void)
{
    enum { N = 6, D = 3 };
    fx f;
    fx_make(&f, N, 12, D);
    int ne = 5;
    steps s = fixed_steps(&f, ne);
    int64_t T = h_quick() ? 1500 : 3000;
    /* configurations: method, cohort (0 = N), solver for 5gcs (NULL = built-in inner GD) */
    struct cfg {
        int m, c;
        const char *solver;
    } cf[] = {{0, 0, NULL}, {1, 0, NULL}, {2, 0, NULL}, {2, N / 2, NULL}, {3, 0, NULL},
              {4, 0, NULL}, {4, N / 2, NULL}, {4, 0, "gd"}, {4, N / 2, "agd"}};
    for (size_t k = 0; k < sizeof cf / sizeof cf[0]; k++) {
        dpdo_algorithm *a = mk(&f, NAMES[cf[k].m], T, 7);
        set_steps(a, cf[k].m, &s, ne);
        if (cf[k].c) CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_FED_ACTIVE, cf[k].c), DPDO_OK);
        dpdo_solver *sv = NULL;
        if (cf[k].solver) {
            sv = mksolver(cf[k].solver, D, f.lo, f.hi);
            CHECK_EQ(dpdo_algorithm_set_solver(a, sv), DPDO_OK);
        }
        int rc = dpdo_algorithm_run(a, 0, NULL);
        CHECK_MSG(rc == DPDO_DONE, "%s c=%d: %d %s", NAMES[cf[k].m], cf[k].c, rc, dpdo_algorithm_errmsg(a));
        double eo = err_out(a, &f, 1), ei = err_out(a, &f, 0);
        CHECK_MSG(eo < 1e-8, "%s c=%d %s: output error %g", NAMES[cf[k].m], cf[k].c, cf[k].solver ? cf[k].solver : "",
                  eo);
        if (!cf[k].c) CHECK_MSG(ei < 1e-8, "%s: iterate error %g", NAMES[cf[k].m], ei);
        CHECK_STR_CONTAINS(dpdo_algorithm_privacy_notes(a), "not private");
        dpdo_algorithm_destroy(a);
        dpdo_solver_destroy(sv);
    }
    /* the defaults derived from the solver's lambda bounds also converge */
    for (int m = 0; m < 5; m++) {
        dpdo_algorithm *a = mk(&f, NAMES[m], T, 1);
        dpdo_solver *sv = mksolver("gd", D, f.lo, f.hi);
        CHECK_EQ(dpdo_algorithm_set_solver(a, sv), DPDO_OK);
        int rc = dpdo_algorithm_run(a, 0, NULL);
        double eo = err_out(a, &f, 1);
        CHECK_MSG(rc == DPDO_DONE && eo < 1e-8, "%s defaults: rc %d error %g (%s)", NAMES[m], rc, eo,
                  dpdo_algorithm_errmsg(a));
        dpdo_algorithm_destroy(a);
        dpdo_solver_destroy(sv);
    }
    fx_free(&f);
}

/* ---- fixed-point invariance ------------------------------------------------------------------------------- */

static double *blk(dpdo_algorithm *a, const char *name)
{
    dpdo__eng *e = dpdo__algorithm_eng(a);
    for (int b = 0; b < e->nblk; b++)
        if (e->blk[b].name && strcmp(e->blk[b].name, name) == 0) return e->blk[b].cur;
    CHECK_MSG(0, "no block %s", name);
    return NULL;
}

static void test_fixed_point(void)
{
    enum { N = 5, D = 3 };
    fx f;
    fx_make(&f, N, 10, D);
    const int nes[] = {1, 5, 20};
    for (int m = 0; m < 5; m++)
        for (int q = 0; q < 3; q++)
            for (int coh = 0; coh < 2; coh++) {
                if (coh && m != 2 && m != 4) continue;
                int ne = nes[q];
                steps s = fixed_steps(&f, ne);
                dpdo_algorithm *a = mk(&f, NAMES[m], 10, 3);
                set_steps(a, m, &s, ne);
                if (coh) dpdo_algorithm_set_int(a, DPDO_PARAM_FED_ACTIVE, 2);
                CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
                double gstar[N][D], *xs = f.xstar;
                for (int i = 0; i < N; i++) grad(&f, i, xs, gstar[i]);
                double *X = blk(a, "x");
                for (int i = 0; i < N; i++) memcpy(X + i * D, xs, sizeof(double) * D);
                double a_step = 0;
                dpdo_algorithm_get_double(a, DPDO_PARAM_STEP_SIZE, &a_step);
                if (m == 0) { /* lambda_i = -grad f_i(x*), x0 = x* */
                    double *L = blk(a, "lambda");
                    for (int i = 0; i < N; i++)
                        for (int k = 0; k < D; k++) L[i * D + k] = -gstar[i][k];
                    memcpy(blk(a, "x0"), xs, sizeof(double) * D);
                } else if (m == 1) {
                    memcpy(blk(a, "xhat"), xs, sizeof(double) * D);
                } else if (m == 2) { /* h_i = grad f_i(x*) */
                    double *H = blk(a, "h");
                    for (int i = 0; i < N; i++) memcpy(H + i * D, gstar[i], sizeof(double) * D);
                    memcpy(blk(a, "xbar"), xs, sizeof(double) * D);
                } else if (m == 3) { /* y_i = -(alpha/beta) grad f_i(x*) */
                    double *Y = blk(a, "y");
                    for (int i = 0; i < N; i++)
                        for (int k = 0; k < D; k++) Y[i * D + k] = -(a_step / s.beta) * gstar[i][k];
                } else { /* u_i = grad f_i(x*) - mu x*, v = sum u_i, x = x* */
                    double *U = blk(a, "u"), *V = blk(a, "v");
                    memset(V, 0, sizeof(double) * D);
                    for (int i = 0; i < N; i++)
                        for (int k = 0; k < D; k++) {
                            U[i * D + k] = gstar[i][k] - s.mu * xs[k];
                            V[k] += U[i * D + k];
                        }
                    memcpy(blk(a, "xs"), xs, sizeof(double) * D);
                }
                /* snapshot every block, one round, compare */
                dpdo__eng *e = dpdo__algorithm_eng(a);
                double before[8][N * D];
                for (int b = 0; b < e->nblk; b++)
                    memcpy(before[b], e->blk[b].cur, sizeof(double) * (size_t)(e->blk[b].rows * D));
                CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
                double worst = 0;
                for (int b = 0; b < e->nblk; b++)
                    for (int64_t k = 0; k < e->blk[b].rows * D; k++)
                        worst = fmax(worst, fabs(e->blk[b].cur[k] - before[b][k]) / (1 + fabs(before[b][k])));
                CHECK_MSG(worst < 1e-11, "%s N_e = %d cohort %d: fixed point moved by %g", NAMES[m], ne, coh, worst);
                dpdo_algorithm_destroy(a);
            }
    fx_free(&f);
}

/* ---- independent implementations of §7 (10 rounds, to 1e-12 relative) ------------------------------------- */

typedef struct ref {
    int n, d, ne, m;
    double x[NMAX][DMAX], s2[NMAX][DMAX], c[DMAX], v[DMAX];
} ref;

static void cohort_of(dpdo_algorithm *a, uint64_t t, int n, int m, int *in)
{
    memset(in, 0, sizeof(int) * (size_t)n);
    if (m >= n) {
        for (int i = 0; i < n; i++) in[i] = 1;
        return;
    }
    int64_t S[NMAX];
    dpdo__stream st;
    dpdo__stream_open(&st, dpdo__algorithm_eng(a)->rng, DPDO__NET_GLOBAL_NODE, t, DPDO_PURPOSE_ACTIVATION);
    dpdo__stream_subset(&st, n, m, S);
    for (int k = 0; k < m; k++) in[S[k]] = 1;
}

static void ref_round(ref *r, const fx *f, int meth, const steps *s, double a, uint64_t t, dpdo_algorithm *alg,
                      int64_t *Lr)
{
    int n = r->n, d = r->d;
    double g[DMAX], w[NMAX][DMAX], nw[NMAX][DMAX], mean[DMAX] = {0};
    int in[NMAX];
    cohort_of(alg, t, n, r->m, in);
    int cnt = 0;
    for (int i = 0; i < n; i++) cnt += in[i];
    if (meth == 0) { /* FedPD: x = x_i, s2 = lambda_i, c = x0 */
        for (int i = 0; i < n; i++) {
            memcpy(w[i], r->x[i], sizeof w[i]);
            for (int l = 0; l < r->ne; l++) {
                grad(f, i, w[i], g);
                for (int k = 0; k < d; k++) w[i][k] -= a * (g[k] + r->s2[i][k] + (w[i][k] - r->c[k]) / s->eta);
            }
            for (int k = 0; k < d; k++) {
                r->s2[i][k] += (w[i][k] - r->c[k]) / s->eta;
                mean[k] += (w[i][k] + s->eta * r->s2[i][k]) / n;
            }
            memcpy(r->x[i], w[i], sizeof w[i]);
        }
        memcpy(r->c, mean, sizeof mean);
    } else if (meth == 1) { /* FedLin: c = xhat */
        double gi[NMAX][DMAX], gb[DMAX] = {0};
        for (int i = 0; i < n; i++) {
            grad(f, i, r->c, gi[i]);
            for (int k = 0; k < d; k++) gb[k] += gi[i][k] / n;
        }
        for (int i = 0; i < n; i++) {
            memcpy(w[i], r->c, sizeof w[i]);
            for (int l = 0; l < r->ne; l++) {
                grad(f, i, w[i], g);
                for (int k = 0; k < d; k++) w[i][k] -= a * (g[k] - gi[i][k] + gb[k]);
            }
            for (int k = 0; k < d; k++) mean[k] += w[i][k] / n;
            memcpy(r->x[i], w[i], sizeof w[i]);
        }
        memcpy(r->c, mean, sizeof mean);
    } else if (meth == 2) { /* TAMUNA: s2 = h_i, c = xbar */
        dpdo__stream st;
        dpdo__stream_open(&st, dpdo__algorithm_eng(alg)->rng, DPDO__NET_GLOBAL_NODE, t, DPDO_PURPOSE_USER + 1);
        int64_t L = 1 + (int64_t)dpdo__stream_geometric(&st, 1.0 / r->ne);
        *Lr = L;
        for (int i = 0; i < n; i++) {
            if (!in[i]) continue;
            memcpy(w[i], r->c, sizeof w[i]);
            for (int64_t l = 0; l < L; l++) {
                grad(f, i, w[i], g);
                for (int k = 0; k < d; k++) w[i][k] -= a * (g[k] - r->s2[i][k]);
            }
            for (int k = 0; k < d; k++) mean[k] += w[i][k] / cnt;
        }
        double eta = 1.0 / r->ne;
        for (int i = 0; i < n; i++) {
            if (!in[i]) continue;
            for (int k = 0; k < d; k++) r->s2[i][k] += eta / a * (mean[k] - w[i][k]);
            memcpy(r->x[i], w[i], sizeof w[i]);
        }
        memcpy(r->c, mean, sizeof mean);
    } else if (meth == 3) { /* LED: s2 = y_i */
        for (int i = 0; i < n; i++) {
            memcpy(w[i], r->x[i], sizeof w[i]);
            for (int l = 0; l < r->ne; l++) {
                grad(f, i, w[i], g);
                for (int k = 0; k < d; k++) w[i][k] -= a * g[k] + s->beta * r->s2[i][k];
            }
            for (int k = 0; k < d; k++) mean[k] += w[i][k] / n;
        }
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < d; k++) r->s2[i][k] += w[i][k] - mean[k];
            memcpy(r->x[i], mean, sizeof mean);
        }
    } else { /* 5GCS: s2 = u_i, c = server x, v */
        double xh[DMAX], sum[DMAX] = {0};
        for (int k = 0; k < d; k++) xh[k] = (r->c[k] - a * r->v[k]) / (1 + a * n * s->mu);
        for (int i = 0; i < n; i++) {
            if (!in[i]) continue;
            memcpy(w[i], xh, sizeof xh);
            for (int l = 0; l < r->ne; l++) {
                grad(f, i, w[i], g);
                for (int k = 0; k < d; k++)
                    w[i][k] -= s->ls * (g[k] - s->mu * w[i][k] + s->tau * (w[i][k] - xh[k]) - r->s2[i][k]);
            }
            grad(f, i, w[i], g);
            for (int k = 0; k < d; k++) {
                nw[i][k] = g[k] - s->mu * w[i][k];
                sum[k] += nw[i][k] - r->s2[i][k];
            }
            memcpy(r->s2[i], nw[i], sizeof nw[i]);
            memcpy(r->x[i], w[i], sizeof w[i]);
        }
        for (int k = 0; k < d; k++) {
            r->v[k] += sum[k];
            r->c[k] = xh[k] - a * (double)n / cnt * sum[k];
        }
    }
}

static void test_reference(void)
{
    enum { N = 6, D = 4 };
    fx f;
    fx_make(&f, N, 10, D);
    int ne = 3;
    steps s = fixed_steps(&f, ne);
    const char *st2[] = {"lambda", "x", "h", "y", "u"};
    for (int m = 0; m < 5; m++)
        for (int coh = 0; coh < 2; coh++) {
            if (coh && m != 2 && m != 4) continue;
            dpdo_algorithm *a = mk(&f, NAMES[m], 100, 11);
            set_steps(a, m, &s, ne);
            int cm = coh ? N / 2 : N;
            dpdo_algorithm_set_int(a, DPDO_PARAM_FED_ACTIVE, cm);
            CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
            double step = 0;
            dpdo_algorithm_get_double(a, DPDO_PARAM_STEP_SIZE, &step);
            ref r;
            memset(&r, 0, sizeof r);
            r.n = N, r.d = D, r.ne = ne, r.m = cm;
            double worst = 0;
            int64_t Lmax = 0;
            int R = 12;
            for (int t = 1; t <= R; t++) {
                int64_t L = 0;
                ref_round(&r, &f, m, &s, step, (uint64_t)t, a, &L);
                Lmax = L > Lmax ? L : Lmax;
                CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
                double x[DMAX], y[DMAX];
                for (int i = 0; i < N; i++) {
                    dpdo_algorithm_get_iterate(a, i, x, D);
                    if (m != 1) dpdo_algorithm_get_state(a, st2[m], i, y, D);
                    for (int k = 0; k < D; k++) {
                        worst = fmax(worst, fabs(x[k] - r.x[i][k]) / (1 + fabs(r.x[i][k])));
                        if (m != 1) worst = fmax(worst, fabs(y[k] - r.s2[i][k]) / (1 + fabs(r.s2[i][k])));
                    }
                }
            }
            CHECK_MSG(worst < 1e-12, "%s cohort %d: differs from the reference by %g", NAMES[m], cm, worst);
            if (m == 2) CHECK(Lmax > 1); /* the geometric count varies */
            dpdo_algorithm_destroy(a);
        }
    /* the L_r law: Geom(1/N_e) on {1, 2, ...} has mean N_e */
    {
        dpdo_rng *rng = NULL;
        CHECK_EQ(dpdo_rng_create(&rng, dpdo_rng_type_find("philox4x32-10"), NULL, 5), DPDO_OK);
        double sum = 0;
        int K = 20000;
        for (int t = 1; t <= K; t++) {
            dpdo__stream st;
            dpdo__stream_open(&st, rng, DPDO__NET_GLOBAL_NODE, (uint64_t)t, DPDO_PURPOSE_USER + 1);
            sum += 1.0 + (double)dpdo__stream_geometric(&st, 0.2);
        }
        double mean = sum / K, sd = sqrt(20.0 / K); /* var = (1-p)/p^2 = 20 */
        CHECK_MSG(fabs(mean - 5.0) < 5 * sd, "mean L_r = %g", mean);
        dpdo_rng_destroy(rng);
    }
    fx_free(&f);
}

/* ---- counters -------------------------------------------------------------------------------------------- */

static void test_counters(void)
{
    enum { N = 6, D = 3 };
    fx f;
    fx_make(&f, N, 8, D);
    steps s = fixed_steps(&f, 2);
    /* uplinks and downlinks per participating agent per round */
    struct {
        int m, c, up, down;
    } cf[] = {{0, N, 1, 1}, {1, N, 2, 2}, {2, N, 1, 1}, {2, 2, 1, 2}, {3, N, 1, 1}, {4, N, 1, 1}, {4, 3, 1, 1}};
    for (size_t k = 0; k < sizeof cf / sizeof cf[0]; k++) {
        dpdo_algorithm *a = mk(&f, NAMES[cf[k].m], 100, 2);
        set_steps(a, cf[k].m, &s, 2);
        dpdo_algorithm_set_int(a, DPDO_PARAM_FED_ACTIVE, cf[k].c);
        int R = 4;
        int64_t part[N] = {0};
        for (int t = 0; t < R; t++) {
            CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
            int32_t fl[N];
            dpdo_algorithm_get_active(a, fl, N);
            int64_t act = 0;
            for (int i = 0; i < N; i++) act += fl[i], part[i] += fl[i];
            CHECK_EQ(act, cf[k].c);
        }
        int64_t msg, sc, by, cm, cs;
        dpdo_algorithm_comm(a, DPDO_NODE_ALL, &msg, &sc, &by);
        dpdo_algorithm_comm(a, DPDO_NODE_COORDINATOR, &cm, &cs, NULL);
        int64_t per = (int64_t)cf[k].c * R;
        CHECK_MSG(msg == per * (cf[k].up + cf[k].down), "%s c=%d: %lld messages", NAMES[cf[k].m], cf[k].c,
                  (long long)msg);
        CHECK_EQ(sc, per * (cf[k].up + cf[k].down) * D);
        CHECK_EQ(by, 8 * sc);
        CHECK_EQ(cm, per * cf[k].down);
        CHECK_EQ(cs, per * cf[k].down * D);
        for (int i = 0; i < N; i++) {
            int64_t mi;
            dpdo_algorithm_comm(a, i, &mi, NULL, NULL);
            CHECK_EQ(mi, part[i] * cf[k].up);
        }
        CHECK_EQ(dpdo_ledger_charges(f.led, 0), 0);
        dpdo_algorithm_destroy(a);
    }
    fx_free(&f);
}

/* ---- determinism, reset ------------------------------------------------------------------------------------ */

static void run_bytes(fx *f, int m, uint64_t seed, double *out, int R)
{
    steps s = fixed_steps(f, 5);
    dpdo_algorithm *a = mk(f, NAMES[m], R, seed);
    set_steps(a, m, &s, 5);
    dpdo_algorithm_set_int(a, DPDO_PARAM_FED_ACTIVE, f->n / 2);
    CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
    for (int i = 0; i < f->n; i++) dpdo_algorithm_get_iterate(a, i, out + i * f->d, f->d);
    /* reset reproduces the same bytes */
    double again[NMAX * DMAX];
    CHECK_EQ(dpdo_algorithm_reset(a), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
    for (int i = 0; i < f->n; i++) dpdo_algorithm_get_iterate(a, i, again + i * f->d, f->d);
    CHECK(memcmp(out, again, sizeof(double) * (size_t)(f->n * f->d)) == 0);
    dpdo_algorithm_destroy(a);
}

static void test_determinism(void)
{
    enum { N = 6, D = 3 };
    fx f;
    fx_make(&f, N, 8, D);
    for (int m = 2; m <= 4; m += 2) {
        double a1[N * D], a2[N * D], b[N * D];
        run_bytes(&f, m, 42, a1, 15);
        run_bytes(&f, m, 42, a2, 15);
        run_bytes(&f, m, 43, b, 15);
        CHECK(memcmp(a1, a2, sizeof a1) == 0);
        CHECK(memcmp(a1, b, sizeof a1) != 0);
    }
    fx_free(&f);
}

/* ---- bad input ----------------------------------------------------------------------------------------------- */

static void test_bad_input(void)
{
    enum { N = 4, D = 2 };
    fx f;
    fx_make(&f, N, 6, D);
    for (int m = 0; m < 5; m++) {
        /* noise modes other than NONE */
        dpdo_algorithm_options o;
        dpdo_algorithm_options_init(&o, sizeof o);
        o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
        dpdo_algorithm *a = NULL;
        CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find(NAMES[m])), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, N, NULL, NULL, f.acc, &o), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_E_UNSUPPORTED);
        CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "DPDO_NOISE_NONE");
        CHECK_EQ(dpdo_algorithm_step(a), DPDO_E_UNSUPPORTED);
        CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_READY);
        dpdo_algorithm_destroy(a);
        /* a regularizer */
        dpdo_regularizer *reg = NULL;
        double mu = 0.1;
        CHECK_EQ(dpdo_regularizer_create(&reg, dpdo_regularizer_type_find("l2"), NULL, D, &mu, 1), DPDO_OK);
        o.noise_mode = DPDO_NOISE_NONE;
        CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find(NAMES[m])), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, N, NULL, reg, NULL, &o), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_E_UNSUPPORTED);
        CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "regularizer");
        dpdo_algorithm_destroy(a);
        dpdo_regularizer_destroy(reg);
        /* no step and no lambda bounds: the default solver's lambda_hi comes from the data (issue 22),
         * a host solver without it is refused */
        a = mk(&f, NAMES[m], 10, 0);
        int rc = dpdo_algorithm_prepare(a);
        CHECK_MSG(rc == DPDO_OK, "%s without steps: %d %s", NAMES[m], rc, dpdo_algorithm_errmsg(a));
        CHECK_STR_CONTAINS(dpdo_algorithm_privacy_notes(a), "lambda_hi = ");
        CHECK_STR_CONTAINS(dpdo_algorithm_privacy_notes(a), "derived from the data");
        dpdo_solver *bare = NULL;
        CHECK_EQ(dpdo_solver_create(&bare, dpdo_solver_type_find("gd"), NULL, D), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_set_solver(a, bare), DPDO_OK);
        rc = dpdo_algorithm_prepare(a);
        CHECK_MSG(rc == DPDO_E_INVAL, "%s without steps: %d", NAMES[m], rc);
        CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "lambda_hi");
        CHECK_EQ(dpdo_algorithm_set_solver(a, NULL), DPDO_OK);
        dpdo_solver_destroy(bare);
        /* participation */
        steps s = fixed_steps(&f, 2);
        set_steps(a, m, &s, 2);
        CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_FED_ACTIVE, 2), DPDO_OK);
        rc = dpdo_algorithm_prepare(a);
        CHECK_EQ(rc, (m == 2 || m == 4) ? DPDO_OK : DPDO_E_INVAL);
        if (rc) CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "full participation");
        rc = dpdo_algorithm_set_int(a, DPDO_PARAM_FED_ACTIVE, N + 1); /* the engine or prepare refuses */
        CHECK(rc == DPDO_E_INVAL || (rc == DPDO_OK && dpdo_algorithm_prepare(a) == DPDO_E_INVAL));
        CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_FED_ACTIVE, N), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_FED_SAMPLER, DPDO_FED_SAMPLER_BERNOULLI), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_FED_P, 0.5), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_E_INVAL);
        CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "Bernoulli");
        CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_FED_P, 1.0), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
        /* keys */
        CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_FED_RHO, 1.0), DPDO_E_UNSUPPORTED);
        CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, 1), DPDO_E_UNSUPPORTED);
        CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_TAMUNA_ETA, 0.1), m == 2 ? DPDO_OK : DPDO_E_UNSUPPORTED);
        CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_FEDPD_ETA, 2.0), m == 0 ? DPDO_OK : DPDO_E_UNSUPPORTED);
        CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_LED_BETA, 0.1), m == 3 ? DPDO_OK : DPDO_E_UNSUPPORTED);
        CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_5GCS_MU, 0.1), m == 4 ? DPDO_OK : DPDO_E_UNSUPPORTED);
        CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_TAMUNA_ETA, 1.5), m == 2 ? DPDO_E_INVAL : DPDO_E_UNSUPPORTED);
        CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_FEDPD_ETA, 0.0), m == 0 ? DPDO_E_INVAL : DPDO_E_UNSUPPORTED);
        CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_5GCS_TAU, NAN), m == 4 ? DPDO_E_INVAL : DPDO_E_UNSUPPORTED);
        CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_FED_EPOCHS, 0), DPDO_E_INVAL);
        CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_FED_EPOCHS, 2.0), DPDO_E_INVAL); /* wrong type */
        CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_STEP_SIZE, 0.0), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_E_INVAL);
        dpdo_algorithm_destroy(a);
        /* divergence is reported, not hidden */
        a = mk(&f, NAMES[m], 400, 0);
        set_steps(a, m, &s, 2);
        if (m == 4) dpdo_algorithm_set_double(a, DPDO_PARAM_5GCS_LOCAL_STEP, 1e6);
        else dpdo_algorithm_set_double(a, DPDO_PARAM_STEP_SIZE, 1e6);
        rc = dpdo_algorithm_run(a, 0, NULL);
        CHECK_MSG(rc == DPDO_E_NUMERIC, "%s diverging: %d", NAMES[m], rc);
        CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_FAILED);
        dpdo_algorithm_destroy(a);
    }
    fx_free(&f);
}

/* ---- out of memory ------------------------------------------------------------------------------------------- */

static void test_oom(void)
{
    enum { N = 3, D = 2 };
    fx f;
    fx_make(&f, N, 4, D);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = DPDO_NOISE_NONE;
    for (int m = 0; m < 5; m++) {
        int ok = 0;
        for (int k = 0; k < 200 && !ok; k++) {
            dpdo_algorithm *a = NULL;
            CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find(NAMES[m])), DPDO_OK);
            dpdo__fault_arm(k);
            int rc = dpdo_algorithm_setup(a, f.nodes, N, NULL, NULL, NULL, &o);
            dpdo__fault_arm(-1);
            if (rc == DPDO_OK) ok = 1;
            else CHECK_EQ(rc, DPDO_E_NOMEM);
            CHECK_EQ(dpdo_algorithm_state(a), ok ? DPDO_ALG_READY : DPDO_ALG_EMPTY);
            dpdo_algorithm_destroy(a);
        }
        CHECK(ok);
    }
    fx_free(&f);
}

int main(void)
{
    RUN(test_registry);
    RUN(test_converge);
    RUN(test_fixed_point);
    RUN(test_reference);
    RUN(test_counters);
    RUN(test_determinism);
    RUN(test_bad_input);
    RUN(test_oom);
    return h_finish();
}
