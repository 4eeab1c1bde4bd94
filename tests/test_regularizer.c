/* SPDX-License-Identifier: BSD-3-Clause */
/* Regularizers: values against closed forms, gradients against central
 * differences, prox outputs against their optimality conditions (subgradient
 * inclusion) and against perturbations, the nonconvex prox against a dense
 * grid (global optimality), the dual-averaging map against brute-force
 * minimisation, user callbacks, bad input, out-of-memory. */
#include <float.h>
#include <stdint.h>
#include "dpdo/dpdo.h"
#include "dpdo/regularizer.h"
#include "core/core_impl.h"
#include "model/model_impl.h"
#include "harness.h"

/* small deterministic generator for test inputs (independent of lib/rng) */
static uint64_t tstate = 88172645463325252ull;
static double urand(void) { return h_urand(&tstate); }
static double nrand(void) { return sqrt(-2.0 * log(urand() + 1e-300)) * cos(6.283185307179586 * urand()); }

static dpdo_regularizer *mk(const char *name, int64_t dim, const double *p, int64_t np)
{
    dpdo_regularizer *r = NULL;
    int rc = dpdo_regularizer_create(&r, dpdo_regularizer_type_find(name), NULL, dim, p, np);
    CHECK_MSG(rc == DPDO_OK, "create %s: %d", name, rc);
    return r;
}

static void types_listed(void)
{
    const char *want[] = {"none", "l2", "l1", "elastic-net", "l2-ball", "box", "fedplt-nonconvex"};
    int k = 0;
    for (const dpdo_regularizer_type *t = dpdo_regularizer_type_next(NULL); t;
         t = dpdo_regularizer_type_next(t), k++) {
        CHECK(k < 7);
        if (k < 7) CHECK(strcmp(dpdo_regularizer_type_name(t), want[k]) == 0);
        CHECK(dpdo_regularizer_type_find(want[k < 7 ? k : 0]) == (k < 7 ? t : dpdo_regularizer_type_find("none")));
    }
    CHECK_EQ(k, 7);
    CHECK(dpdo_regularizer_type_find("L1") == NULL);
    CHECK(dpdo_regularizer_type_find(NULL) == NULL);
    CHECK(strcmp(dpdo_regularizer_type_name(NULL), "(null)") == 0);
}

static void values_closed_form(void)
{
    double x[3] = {1.5, -2.0, 0.25};
    double v;
    double p1[] = {0.3}, p2[] = {0.3, 0.7}, pr[] = {2.6}, pb[] = {-2.0, 1.5};
    dpdo_regularizer *r;
    r = mk("none", 3, NULL, 0);
    CHECK_EQ(dpdo_regularizer_value(r, x, 3, &v), DPDO_OK);
    CHECK(v == 0.0);
    dpdo_regularizer_destroy(r);
    r = mk("l2", 3, p1, 1);
    dpdo_regularizer_value(r, x, 3, &v);
    CHECK_REL(v, 0.15 * (2.25 + 4.0 + 0.0625), 1e-15);
    dpdo_regularizer_destroy(r);
    r = mk("l1", 3, p1, 1);
    dpdo_regularizer_value(r, x, 3, &v);
    CHECK_REL(v, 0.3 * 3.75, 1e-15);
    dpdo_regularizer_destroy(r);
    r = mk("elastic-net", 3, p2, 2);
    dpdo_regularizer_value(r, x, 3, &v);
    CHECK_REL(v, 0.3 * 3.75 + 0.35 * 6.3125, 1e-15);
    dpdo_regularizer_destroy(r);
    r = mk("l2-ball", 3, pr, 1); /* ||x|| = 2.5124... < 2.6 */
    dpdo_regularizer_value(r, x, 3, &v);
    CHECK(v == 0.0);
    double y[3] = {3, 0, 0};
    dpdo_regularizer_value(r, y, 3, &v);
    CHECK(isinf(v) && v > 0);
    dpdo_regularizer_destroy(r);
    r = mk("box", 3, pb, 2);
    dpdo_regularizer_value(r, x, 3, &v);
    CHECK(v == 0.0);
    dpdo_regularizer_value(r, y, 3, &v);
    CHECK(isinf(v));
    dpdo_regularizer_destroy(r);
    r = mk("fedplt-nonconvex", 3, p1, 1);
    dpdo_regularizer_value(r, x, 3, &v);
    CHECK_REL(v, 0.3 * (2.25 / 3.25 + 4.0 / 5.0 + 0.0625 / 1.0625), 1e-15);
    dpdo_regularizer_destroy(r);
}

static double hval(dpdo_regularizer *r, const double *x, int64_t n)
{
    double v = NAN;
    dpdo_regularizer_value(r, x, n, &v);
    return v;
}

static void gradients_fd(void)
{
    const char *names[] = {"none", "l2", "fedplt-nonconvex", "elastic-net", "l1"};
    double params[][2] = {{0, 0}, {0.7, 0}, {0.9, 0}, {0.0, 0.4}, {0.0, 0}};
    int np[] = {0, 1, 1, 2, 1};
    const int64_t n = 6;
    for (int k = 0; k < 5; k++) {
        dpdo_regularizer *r = mk(names[k], n, params[k], np[k]);
        double x[6], g[6], xp[6];
        for (int t = 0; t < 5; t++) {
            for (int j = 0; j < n; j++) x[j] = 3.0 * nrand();
            CHECK_EQ(dpdo_regularizer_grad(r, x, n, g), DPDO_OK);
            for (int j = 0; j < n; j++) {
                double hstep = 1e-6 * fmax(1.0, fabs(x[j]));
                memcpy(xp, x, sizeof x);
                xp[j] = x[j] + hstep;
                double fp = hval(r, xp, n);
                xp[j] = x[j] - hstep;
                double fm = hval(r, xp, n);
                double fd = (fp - fm) / (2 * hstep);
                CHECK_MSG(fabs(fd - g[j]) <= 1e-7 * fmax(1.0, fabs(g[j])), "%s: g[%d]=%g fd=%g",
                          names[k], j, g[j], fd);
            }
        }
        dpdo_regularizer_destroy(r);
    }
    /* nonsmooth ones refuse */
    double p1[] = {0.5}, p2[] = {0.5, 1.0}, pr[] = {1.0}, pb[] = {-1, 1};
    double x[2] = {0.1, 0.2}, g[2];
    dpdo_regularizer *r = mk("l1", 2, p1, 1);
    CHECK_EQ(dpdo_regularizer_grad(r, x, 2, g), DPDO_E_UNSUPPORTED);
    CHECK_STR_CONTAINS(dpdo_regularizer_errmsg(r), "not differentiable");
    dpdo_regularizer_destroy(r);
    r = mk("elastic-net", 2, p2, 2);
    CHECK_EQ(dpdo_regularizer_grad(r, x, 2, g), DPDO_E_UNSUPPORTED);
    dpdo_regularizer_destroy(r);
    r = mk("l2-ball", 2, pr, 1);
    CHECK_EQ(dpdo_regularizer_grad(r, x, 2, g), DPDO_E_UNSUPPORTED);
    dpdo_regularizer_destroy(r);
    r = mk("box", 2, pb, 2);
    CHECK_EQ(dpdo_regularizer_grad(r, x, 2, g), DPDO_E_UNSUPPORTED);
    dpdo_regularizer_destroy(r);
}

/* (v - u)/t in the subdifferential of h at u, checked per regularizer. */
static int prox_optimal(const char *name, const double *p, const double *v, const double *u,
                        int64_t n, double t)
{
    const double rt = 1e-12;
    if (!strcmp(name, "none")) {
        for (int j = 0; j < n; j++)
            if (u[j] != v[j]) return 0;
        return 1;
    }
    if (!strcmp(name, "l2") || !strcmp(name, "l1") || !strcmp(name, "elastic-net")) {
        double l1 = 0, l2 = 0;
        if (!strcmp(name, "l2")) l2 = p[0];
        else if (!strcmp(name, "l1")) l1 = p[0];
        else l1 = p[0], l2 = p[1];
        for (int j = 0; j < n; j++) {
            /* s = (v - u)/t - l2 u must lie in l1 * d|u| ; compare t*s with t*l1 */
            double ts = (v[j] - u[j]) - t * l2 * u[j];
            double scale = fabs(v[j]) + fabs(u[j]) + t * l1 + 1e-300;
            if (u[j] > 0) {
                if (fabs(ts - t * l1) > rt * scale) return 0;
            } else if (u[j] < 0) {
                if (fabs(ts + t * l1) > rt * scale) return 0;
            } else if (fabs(ts) > t * l1 + rt * scale)
                return 0;
        }
        return 1;
    }
    if (!strcmp(name, "l2-ball")) {
        double nv = 0, nu = 0;
        for (int j = 0; j < n; j++) nv += v[j] * v[j], nu += u[j] * u[j];
        nv = sqrt(nv), nu = sqrt(nu);
        if (nv <= p[0]) {
            for (int j = 0; j < n; j++)
                if (u[j] != v[j]) return 0;
            return 1;
        }
        if (fabs(nu - p[0]) > 4 * DBL_EPSILON * p[0] || nu > p[0] * (1 + 8 * DBL_EPSILON)) return 0;
        /* v - u = c u with c = nv/r - 1 >= 0 (normal cone) */
        double c = nv / p[0] - 1.0;
        for (int j = 0; j < n; j++)
            if (fabs((v[j] - u[j]) - c * u[j]) > 1e-12 * nv) return 0;
        return 1;
    }
    if (!strcmp(name, "box")) {
        for (int j = 0; j < n; j++) {
            if (u[j] < p[0] || u[j] > p[1]) return 0;
            if (u[j] > p[0] && u[j] < p[1] && u[j] != v[j]) return 0;
            if (u[j] == p[0] && v[j] > p[0] && p[0] < p[1]) return 0;
            if (u[j] == p[1] && v[j] < p[1] && p[0] < p[1]) return 0;
        }
        return 1;
    }
    return 0;
}

static void prox_optimality_conditions(void)
{
    const char *names[] = {"none", "l2", "l1", "elastic-net", "l2-ball", "box"};
    double params[][2] = {{0, 0}, {0.8, 0}, {0.6, 0}, {0.5, 1.3}, {1.7, 0}, {-0.4, 0.9}};
    int np[] = {0, 1, 1, 2, 1, 2};
    double ts[] = {1e-14, 1e-3, 0.5, 1.0, 7.0, 1e3, 1e14};
    const int64_t n = 5;
    for (int k = 0; k < 6; k++) {
        dpdo_regularizer *r = mk(names[k], n, params[k], np[k]);
        for (int it = 0; it < 7; it++) {
            for (int rep = 0; rep < 20; rep++) {
                double v[5], u[5];
                for (int j = 0; j < n; j++) v[j] = (rep % 3 == 0 ? 100.0 : 2.0) * nrand();
                if (rep == 1 && np[k] >= 1) /* v at the soft-threshold kink */
                    for (int j = 0; j < n; j++) v[j] = (j % 2 ? -1 : 1) * ts[it] * params[k][0];
                if (rep == 2) memset(v, 0, sizeof v);
                CHECK_EQ(dpdo_regularizer_prox(r, v, n, ts[it], u), DPDO_OK);
                CHECK_MSG(prox_optimal(names[k], params[k], v, u, n, ts[it]),
                          "%s prox not optimal at t=%g rep=%d", names[k], ts[it], rep);
                /* and no perturbation does better (independent of the conditions) */
                double hu = hval(r, u, n), phi_u = hu;
                for (int j = 0; j < n; j++) phi_u += (u[j] - v[j]) * (u[j] - v[j]) / (2 * ts[it]);
                for (int q = 0; q < 10; q++) {
                    double w[5], phi_w;
                    double sc = pow(10.0, -(q % 5)) * (fabs(v[0]) + 1);
                    for (int j = 0; j < n; j++) w[j] = u[j] + sc * nrand();
                    phi_w = hval(r, w, n);
                    if (isinf(phi_w)) continue;
                    for (int j = 0; j < n; j++) phi_w += (w[j] - v[j]) * (w[j] - v[j]) / (2 * ts[it]);
                    CHECK_MSG(phi_u <= phi_w + 1e-12 * (fabs(phi_w) + 1), "%s: perturbation better",
                              names[k]);
                }
                /* aliasing out == v gives the same */
                double va[5];
                memcpy(va, v, sizeof v);
                CHECK_EQ(dpdo_regularizer_prox(r, va, n, ts[it], va), DPDO_OK);
                CHECK(memcmp(va, u, sizeof u) == 0);
            }
        }
        dpdo_regularizer_destroy(r);
    }
    /* soft-threshold exactly at the threshold gives 0, just beyond gives the difference */
    double p[] = {0.5};
    dpdo_regularizer *r = mk("l1", 2, p, 1);
    double v[2] = {1.0, -1.0000001}, u[2];
    dpdo_regularizer_prox(r, v, 2, 2.0, u);
    CHECK(u[0] == 0.0);
    CHECK_NEAR(u[1], -1e-7, 1e-15);
    dpdo_regularizer_destroy(r);
}

/* nonconvex: global optimality against a dense grid on [0, |v|] refined twice */
static double ncvx_phi(double u, double v, double lam, double t)
{
    return lam * u * u / (1 + u * u) + (u - v) * (u - v) / (2 * t);
}

static double grid_min(double v, double lam, double t, double *argmin)
{
    double lo = fmin(0, v) - 0.5, hi = fmax(0, v) + 0.5;
    double best = INFINITY, bu = 0;
    for (int round = 0; round < 3; round++) {
        const int G = 20000;
        for (int i = 0; i <= G; i++) {
            double u = lo + (hi - lo) * i / G;
            double f = ncvx_phi(u, v, lam, t);
            if (f < best) best = f, bu = u;
        }
        double w = (hi - lo) / G * 2;
        lo = bu - w, hi = bu + w;
    }
    *argmin = bu;
    return best;
}

static void nonconvex_prox_global(void)
{
    double lams[] = {0.5, 1.0, 5.0, 40.0};
    double tss[] = {1e-3, 0.3, 1.0, 3.0, 10.0, 100.0};
    int nonconvex_cases = 0, two_minima = 0;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 6; b++)
            for (int c = 0; c < 25; c++) {
                double lam = lams[a], t = tss[b];
                double v = (c < 20) ? 8.0 * nrand() : (c - 22) * 1.7;
                double u = dpdo__ncvx_prox1(v, lam, t);
                double um, fm = grid_min(v, lam, t, &um);
                double fu = ncvx_phi(u, v, lam, t);
                CHECK_MSG(fu <= fm + 1e-12 * (1 + fabs(fm)), "lam=%g t=%g v=%g: prox %g (%.17g) vs grid %g (%.17g)",
                          lam, t, v, u, fu, um, fm);
                /* stationarity: phi'(u) = 0 */
                double dphi = 2 * lam * u / ((1 + u * u) * (1 + u * u)) + (u - v) / t;
                CHECK_MSG(fabs(dphi) * t <= 1e-12 * (1 + fabs(v)), "stationarity %g", dphi);
                if (t * lam > 2) {
                    nonconvex_cases++;
                    /* count cases with two local minima: phi' changes sign 3 times on [0,|v|] */
                    int sc = 0;
                    double prev = NAN;
                    for (int i = 1; i <= 4000; i++) {
                        double w = fabs(v) * i / 4000.0;
                        double d = 2 * lam * w / ((1 + w * w) * (1 + w * w)) + (w - fabs(v)) / t;
                        if (i > 1 && (d > 0) != (prev > 0)) sc++;
                        prev = d;
                    }
                    if (sc >= 3) two_minima++;
                }
            }
    CHECK(nonconvex_cases > 100);
    CHECK_MSG(two_minima > 5, "only %d cases with two local minima exercised", two_minima);
    /* handle-level prox uses the same map per coordinate */
    double p[] = {2.0};
    dpdo_regularizer *r = mk("fedplt-nonconvex", 3, p, 1);
    double v[3] = {0.5, -3.0, 10.0}, u[3];
    CHECK_EQ(dpdo_regularizer_prox(r, v, 3, 4.0, u), DPDO_OK);
    for (int j = 0; j < 3; j++) CHECK(u[j] == dpdo__ncvx_prox1(v[j], 2.0, 4.0));
    double mu;
    dpdo_regularizer_modulus(r, &mu);
    CHECK(mu == -1.0);
    /* extreme t and v stay finite and sensible */
    CHECK_REL(dpdo__ncvx_prox1(1e300, 1.0, 1.0), 1e300, 1e-15);
    CHECK(fabs(dpdo__ncvx_prox1(3.0, 1.0, 1e-300) - 3.0) < 1e-12);
    double ub = dpdo__ncvx_prox1(3.0, 1.0, 1e300);
    CHECK(isfinite(ub) && fabs(ub) <= 3.0);
    dpdo_regularizer_destroy(r);
}

/* brute-force minimisation of <z,x> + kappa h(x) + gamma/2 ||x||^2 in 2-D by
 * nested grid refinement (independent of the closed forms) */
static double da_obj(dpdo_regularizer *r, const double *z, double kappa, double gamma,
                     const double *x)
{
    double h = hval(r, x, 2);
    if (isinf(h)) return INFINITY;
    return z[0] * x[0] + z[1] * x[1] + (kappa > 0 ? kappa * h : 0) + 0.5 * gamma * (x[0] * x[0] + x[1] * x[1]);
}

static void brute2(dpdo_regularizer *r, const double *z, double kappa, double gamma, double *best)
{
    if (!strcmp(dpdo_regularizer_name(r), "l2-ball")) {
        /* polar grid over the disk (a Cartesian grid resolves its boundary badly) */
        double R = r->p[0], c0 = 0.5 * R, c1 = 3.14159265358979, w0 = 0.5 * R, w1 = 3.14159265358979;
        double bf = INFINITY;
        for (int round = 0; round < 14; round++) {
            const int G = 80;
            double b0 = c0, b1 = c1;
            for (int i = 0; i <= G; i++)
                for (int j = 0; j <= G; j++) {
                    double rho = fmin(R, fmax(0.0, c0 - w0 + 2 * w0 * i / G));
                    double th = c1 - w1 + 2 * w1 * j / G;
                    double x[2] = {rho * cos(th), rho * sin(th)};
                    double f = da_obj(r, z, kappa, gamma, x);
                    if (f < bf) bf = f, b0 = rho, b1 = th;
                }
            c0 = b0, c1 = b1;
            w0 *= 4.0 / G, w1 *= 4.0 / G;
        }
        best[0] = c0 * cos(c1), best[1] = c0 * sin(c1);
        return;
    }
    double c[2] = {0, 0}, w = 20.0, bf = INFINITY;
    for (int round = 0; round < 12; round++) {
        const int G = 60;
        double b0 = c[0], b1 = c[1];
        for (int i = 0; i <= G; i++)
            for (int j = 0; j <= G; j++) {
                double x[2] = {c[0] - w + 2 * w * i / G, c[1] - w + 2 * w * j / G};
                double f = da_obj(r, z, kappa, gamma, x);
                if (f < bf) bf = f, b0 = x[0], b1 = x[1];
            }
        c[0] = b0, c[1] = b1;
        w = w * 4.0 / G;
    }
    best[0] = c[0], best[1] = c[1];
}

static void da_map_brute_force(void)
{
    const char *names[] = {"none", "l2", "l1", "elastic-net", "l2-ball", "box", "fedplt-nonconvex"};
    double params[][2] = {{0, 0}, {0.8, 0}, {0.6, 0}, {0.5, 1.3}, {1.2, 0}, {-0.4, 0.9}, {1.5, 0}};
    int np[] = {0, 1, 1, 2, 1, 2, 1};
    for (int k = 0; k < 7; k++) {
        dpdo_regularizer *r = mk(names[k], 2, params[k], np[k]);
        for (int rep = 0; rep < 12; rep++) {
            double z[2] = {3 * nrand(), 3 * nrand()};
            double kappa = rep % 4 == 0 ? 0.0 : 0.2 + 3 * urand();
            double gamma = 0.3 + 2 * urand();
            double x[2], xb[2];
            CHECK_EQ(dpdo_regularizer_da_map(r, z, 2, kappa, gamma, x), DPDO_OK);
            brute2(r, z, kappa, gamma, xb);
            double fx = da_obj(r, z, kappa, gamma, x), fb = da_obj(r, z, kappa, gamma, xb);
            CHECK_MSG(fx <= fb + 1e-9 * (1 + fabs(fb)), "%s: DA map %.12g vs brute %.12g", names[k], fx, fb);
            if (k != 6) /* strongly convex: the minimisers agree too */
                CHECK_MSG(fabs(x[0] - xb[0]) + fabs(x[1] - xb[1]) < 1e-5, "%s: x (%g,%g) vs (%g,%g)",
                          names[k], x[0], x[1], xb[0], xb[1]);
        }
        dpdo_regularizer_destroy(r);
    }
    /* gamma = 0: allowed only with kappa * modulus > 0 */
    double p[] = {0.5}, p2[] = {0.5, 2.0};
    double z[2] = {1.0, -4.0}, x[2];
    dpdo_regularizer *r = mk("l2", 2, p, 1);
    CHECK_EQ(dpdo_regularizer_da_map(r, z, 2, 2.0, 0.0, x), DPDO_OK);
    CHECK_REL(x[0], -1.0, 1e-15);
    CHECK_REL(x[1], 4.0, 1e-15);
    CHECK_EQ(dpdo_regularizer_da_map(r, z, 2, 0.0, 0.0, x), DPDO_E_INVAL);
    dpdo_regularizer_destroy(r);
    r = mk("l1", 2, p, 1);
    CHECK_EQ(dpdo_regularizer_da_map(r, z, 2, 2.0, 0.0, x), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_regularizer_errmsg(r), "gamma = 0");
    /* spec §2.6 closed form: x_k = -S_{kappa lambda}(z_k)/gamma */
    CHECK_EQ(dpdo_regularizer_da_map(r, z, 2, 2.0, 4.0, x), DPDO_OK);
    CHECK(x[0] == 0.0);
    CHECK_REL(x[1], 3.0 / 4.0, 1e-15);
    dpdo_regularizer_destroy(r);
    r = mk("elastic-net", 2, p2, 2);
    CHECK_EQ(dpdo_regularizer_da_map(r, z, 2, 2.0, 0.0, x), DPDO_OK);
    CHECK_REL(x[1], 3.0 / 4.0, 1e-15);
    dpdo_regularizer_destroy(r);
}

/* ---- user types -------------------------------------------------------- */
struct ureg {
    int fail_value, fail_prox, releases;
    double lambda;
};
static int u_value(void *user, const double *x, int64_t n, double *out)
{
    struct ureg *u = user;
    if (u->fail_value) return u->fail_value;
    double s = 0;
    for (int64_t j = 0; j < n; j++) s += x[j] * x[j] * x[j] * x[j];
    *out = u->lambda * s / 4; /* lambda/4 sum x^4 */
    return 0;
}
static int u_grad(void *user, const double *x, int64_t n, double *g)
{
    struct ureg *u = user;
    for (int64_t j = 0; j < n; j++) g[j] = u->lambda * x[j] * x[j] * x[j];
    return 0;
}
static int u_prox(void *user, const double *v, int64_t n, double t, double *out)
{
    struct ureg *u = user;
    if (u->fail_prox) return u->fail_prox;
    /* solve lambda t u^3 + u = v per coordinate by Newton */
    for (int64_t j = 0; j < n; j++) {
        double w = v[j];
        for (int it = 0; it < 100; it++) w -= (u->lambda * t * w * w * w + w - v[j]) / (3 * u->lambda * t * w * w + 1);
        out[j] = w;
    }
    return 0;
}
static void u_release(void *user) { ((struct ureg *)user)->releases++; }

static const dpdo_regularizer_type quartic = {sizeof(dpdo_regularizer_type), "quartic", u_value,
                                              u_grad, u_prox, NULL, u_release};
static const dpdo_regularizer_type value_only = {sizeof(dpdo_regularizer_type), "value-only",
                                                 u_value, NULL, NULL, NULL, u_release};

static void user_callbacks(void)
{
    struct ureg u = {0, 0, 0, 0.5};
    dpdo_regularizer *r = NULL;
    CHECK_EQ(dpdo_regularizer_create(&r, &quartic, &u, 3, NULL, 0), DPDO_OK);
    CHECK(strcmp(dpdo_regularizer_name(r), "quartic") == 0);
    double x[3] = {1.0, -0.5, 2.0}, g[3], v, xp[3];
    CHECK_EQ(dpdo_regularizer_grad(r, x, 3, g), DPDO_OK);
    for (int j = 0; j < 3; j++) {
        memcpy(xp, x, sizeof x);
        xp[j] += 1e-6;
        double fp = hval(r, xp, 3);
        xp[j] -= 2e-6;
        double fm = hval(r, xp, 3);
        CHECK_NEAR((fp - fm) / 2e-6, g[j], 1e-7 * fmax(1, fabs(g[j])));
    }
    /* DA map for a user type goes through its prox: check stationarity
     * z + kappa grad h(x) + gamma x = 0 */
    double z[3] = {1.0, -2.0, 0.3}, xd[3], gd[3];
    CHECK_EQ(dpdo_regularizer_da_map(r, z, 3, 2.0, 1.5, xd), DPDO_OK);
    dpdo_regularizer_grad(r, xd, 3, gd);
    for (int j = 0; j < 3; j++) CHECK_NEAR(z[j] + 2.0 * gd[j] + 1.5 * xd[j], 0.0, 1e-12);
    double mu = 7;
    CHECK_EQ(dpdo_regularizer_modulus(r, &mu), DPDO_OK);
    CHECK(mu == 0.0);
    /* failures: E_CALLBACK, code in message */
    u.fail_value = 42;
    CHECK_EQ(dpdo_regularizer_value(r, x, 3, &v), DPDO_E_CALLBACK);
    CHECK_STR_CONTAINS(dpdo_regularizer_errmsg(r), "returned 42");
    CHECK_STR_CONTAINS(dpdo_regularizer_errmsg(r), "quartic");
    u.fail_value = 0;
    u.fail_prox = -3;
    double out[3] = {9, 9, 9};
    CHECK_EQ(dpdo_regularizer_prox(r, x, 3, 1.0, out), DPDO_E_CALLBACK);
    CHECK_STR_CONTAINS(dpdo_regularizer_errmsg(r), "returned -3");
    CHECK_EQ(dpdo_regularizer_da_map(r, z, 3, 1.0, 1.0, out), DPDO_E_CALLBACK);
    u.fail_prox = 0;
    CHECK_EQ(dpdo_regularizer_value(r, x, 3, &v), DPDO_OK); /* works again afterwards */
    CHECK_EQ(u.releases, 0);
    dpdo_regularizer_destroy(r);
    CHECK_EQ(u.releases, 1);
    CHECK(dpdo_regularizer_type_next(&quartic) == NULL); /* not a built-in */
    /* a type without grad/prox */
    CHECK_EQ(dpdo_regularizer_create(&r, &value_only, &u, 2, NULL, 0), DPDO_OK);
    CHECK_EQ(dpdo_regularizer_grad(r, x, 2, g), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_regularizer_prox(r, x, 2, 1.0, g), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_regularizer_da_map(r, x, 2, 1.0, 1.0, g), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_regularizer_da_map(r, x, 2, 0.0, 1.0, g), DPDO_OK); /* kappa 0: -z/gamma */
    CHECK(g[0] == -1.0 && g[1] == 0.5);
    dpdo_regularizer_destroy(r);
    CHECK_EQ(u.releases, 2);
    /* a failed create does not run release */
    dpdo__fault_arm(0);
    CHECK_EQ(dpdo_regularizer_create(&r, &quartic, &u, 2, NULL, 0), DPDO_E_NOMEM);
    dpdo__fault_arm(-1);
    CHECK(r == NULL);
    CHECK_EQ(u.releases, 2);
    /* broken type objects */
    dpdo_regularizer_type bad = quartic;
    bad.value = NULL;
    CHECK_EQ(dpdo_regularizer_create(&r, &bad, &u, 2, NULL, 0), DPDO_E_INVAL);
    bad = quartic;
    bad.name = "";
    CHECK_EQ(dpdo_regularizer_create(&r, &bad, &u, 2, NULL, 0), DPDO_E_INVAL);
    bad = quartic;
    bad.struct_size = 8;
    CHECK_EQ(dpdo_regularizer_create(&r, &bad, &u, 2, NULL, 0), DPDO_E_VERSION);
    CHECK(r == NULL);
}

static void bad_input(void)
{
    dpdo_regularizer *r = (dpdo_regularizer *)1;
    const dpdo_regularizer_type *l1 = dpdo_regularizer_type_find("l1");
    double lam[] = {0.5}, neg[] = {-1.0}, nanp[] = {NAN}, zero[] = {0.0}, box[] = {2.0, 1.0};
    double box_empty[] = {INFINITY, INFINITY};
    CHECK_EQ(dpdo_regularizer_create(NULL, l1, NULL, 2, lam, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_create(&r, NULL, NULL, 2, lam, 1), DPDO_E_INVAL);
    CHECK(r == NULL);
    CHECK_EQ(dpdo_regularizer_create(&r, l1, NULL, 0, lam, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_create(&r, l1, NULL, 2, neg, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_create(&r, l1, NULL, 2, nanp, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_create(&r, l1, NULL, 2, NULL, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_create(&r, l1, NULL, 2, lam, 2), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_create(&r, l1, lam, 2, lam, 1), DPDO_E_INVAL); /* user != NULL */
    CHECK_EQ(dpdo_regularizer_create(&r, dpdo_regularizer_type_find("l2"), NULL, 2, neg, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_create(&r, dpdo_regularizer_type_find("l2-ball"), NULL, 2, zero, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_create(&r, dpdo_regularizer_type_find("l2-ball"), NULL, 2, neg, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_create(&r, dpdo_regularizer_type_find("box"), NULL, 2, box, 2), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_create(&r, dpdo_regularizer_type_find("box"), NULL, 2, box_empty, 2), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_create(&r, dpdo_regularizer_type_find("fedplt-nonconvex"), NULL, 2, neg, 1), DPDO_E_INVAL);
    double en_bad[] = {0.1, -0.1};
    CHECK_EQ(dpdo_regularizer_create(&r, dpdo_regularizer_type_find("elastic-net"), NULL, 2, en_bad, 2), DPDO_E_INVAL);
    CHECK(r == NULL);

    r = mk("l1", 2, lam, 1);
    double x[2] = {1, 2}, xn[2] = {1, NAN}, xi[2] = {INFINITY, 0}, out[2], v;
    CHECK_EQ(dpdo_regularizer_value(NULL, x, 2, &v), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_value(r, NULL, 2, &v), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_value(r, x, 2, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_value(r, x, 3, &v), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_regularizer_errmsg(r), "dimension 3");
    CHECK_EQ(dpdo_regularizer_value(r, xn, 2, &v), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_regularizer_errmsg(r), "x[1] is NaN");
    CHECK_EQ(dpdo_regularizer_value(r, xi, 2, &v), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_grad(NULL, x, 2, out), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_grad(r, x, 2, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_grad(r, xn, 2, out), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_prox(NULL, x, 2, 1.0, out), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_prox(r, NULL, 2, 1.0, out), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_prox(r, x, 2, 1.0, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_prox(r, x, 1, 1.0, out), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_prox(r, xn, 2, 1.0, out), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_prox(r, x, 2, 0.0, out), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_regularizer_errmsg(r), "t = 0");
    CHECK_EQ(dpdo_regularizer_prox(r, x, 2, -1.0, out), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_prox(r, x, 2, NAN, out), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_prox(r, x, 2, INFINITY, out), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_modulus(NULL, &v), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_modulus(r, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_da_map(NULL, x, 2, 1, 1, out), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_da_map(r, NULL, 2, 1, 1, out), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_da_map(r, x, 2, 1, 1, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_da_map(r, x, 3, 1, 1, out), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_da_map(r, xn, 2, 1, 1, out), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_da_map(r, x, 2, -1, 1, out), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_da_map(r, x, 2, 1, -1, out), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_da_map(r, x, 2, NAN, 1, out), DPDO_E_INVAL);
    CHECK_EQ(dpdo_regularizer_da_map(r, x, 2, 1, INFINITY, out), DPDO_E_INVAL);
    CHECK(strcmp(dpdo_regularizer_errmsg(NULL), "dpdo_regularizer_errmsg: reg is NULL") == 0);
    CHECK_EQ(dpdo_regularizer_dim(NULL), 0);
    CHECK_EQ(dpdo_regularizer_dim(r), 2);
    CHECK(strcmp(dpdo_regularizer_name(NULL), "(null)") == 0);
    dpdo_regularizer_destroy(r);
    dpdo_regularizer_destroy(NULL);
}

static void modulus_values(void)
{
    double p1[] = {0.7}, p2[] = {0.2, 0.9}, pr[] = {1.0}, pb[] = {0, 1}, mu;
    dpdo_regularizer *r = mk("l2", 2, p1, 1);
    dpdo_regularizer_modulus(r, &mu);
    CHECK(mu == 0.7);
    dpdo_regularizer_destroy(r);
    r = mk("elastic-net", 2, p2, 2);
    dpdo_regularizer_modulus(r, &mu);
    CHECK(mu == 0.9);
    dpdo_regularizer_destroy(r);
    r = mk("l1", 2, p1, 1);
    dpdo_regularizer_modulus(r, &mu);
    CHECK(mu == 0.0);
    dpdo_regularizer_destroy(r);
    r = mk("l2-ball", 2, pr, 1);
    dpdo_regularizer_modulus(r, &mu);
    CHECK(mu == 0.0);
    dpdo_regularizer_destroy(r);
    r = mk("box", 2, pb, 2);
    dpdo_regularizer_modulus(r, &mu);
    CHECK(mu == 0.0);
    dpdo_regularizer_destroy(r);
}

static void oom_create(void)
{
    const char *names[] = {"none", "l2", "box"};
    double p[][2] = {{0, 0}, {1, 0}, {-1, 1}};
    int np[] = {0, 1, 2};
    for (int k = 0; k < 3; k++) {
        int ok = 0;
        for (long f = 0; f < 10 && !ok; f++) {
            dpdo_regularizer *r = (dpdo_regularizer *)1;
            dpdo__fault_arm(f);
            int rc = dpdo_regularizer_create(&r, dpdo_regularizer_type_find(names[k]), NULL, 4,
                                             p[k], np[k]);
            dpdo__fault_arm(-1);
            if (rc == DPDO_OK) {
                ok = 1;
                dpdo_regularizer_destroy(r);
            } else {
                CHECK_EQ(rc, DPDO_E_NOMEM);
                CHECK(r == NULL);
            }
        }
        CHECK(ok);
    }
}

int main(void)
{
    RUN(types_listed);
    RUN(values_closed_form);
    RUN(gradients_fd);
    RUN(prox_optimality_conditions);
    RUN(nonconvex_prox_global);
    RUN(da_map_brute_force);
    RUN(user_callbacks);
    RUN(bad_input);
    RUN(modulus_values);
    RUN(oom_create);
    return h_finish();
}
