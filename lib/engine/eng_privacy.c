/* SPDX-License-Identifier: BSD-3-Clause */
/* Privacy plumbing: release planning (calibration counts), sigma calibration, events, the
 * budget guard, the one noise path, the discrete charging of secure runs, and the privacy
 * getters (dpdo_algorithm_privacy, _planned_releases, _privacy_source, _privacy_notes). */
#include "../data/data_impl.h"
#include "../model/model_impl.h"
#include "../rng/rng_impl.h"
#include "eng_handle.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

/* A public sampling object for an internal descriptor (the accountant's calibration takes one). */
static int sampling_of(const dpdo__sampling_desc *sd, dpdo_sampling **out)
{
    int rc = dpdo_sampling_create(out);
    if (rc) return rc;
    if (sd->kind == DPDO_SAMPLING_WOR)
        rc = dpdo_sampling_set_wor(*out, sd->n, sd->m);
    else if (sd->kind == DPDO_SAMPLING_POISSON)
        rc = dpdo_sampling_set_poisson(*out, sd->q);
    else
        rc = dpdo_sampling_set_none(*out);
    if (rc) {
        dpdo_sampling_destroy(*out);
        *out = NULL;
    }
    return rc;
}

double dpdo__eng_calib_count(const dpdo__eng *e, double pmax)
{
    double K = (double)DPDO__PI(e, DPDO_PARAM_CALIB_STEPS);
    if (K > 0) return K;
    double T = (double)DPDO__PI(e, DPDO_PARAM_MAX_ROUNDS);
    K = pmax >= 1 ? T : dpdo__binom_quantile(T, pmax, DPDO__PD(e, DPDO_PARAM_CALIB_TAIL));
    return K < 1 ? 1 : K;
}

double dpdo__eng_calib_counts(dpdo__eng *e, const double *pi, double pdef)
{
    double K = (double)DPDO__PI(e, DPDO_PARAM_CALIB_STEPS), Kmax = 0;
    for (int64_t i = 0; i < e->n; i++) {
        double p = pi ? pi[i] : e->node_p ? e->node_p[i] : pdef;
        double Ki = K > 0 ? K : dpdo__eng_calib_count(e, p > 1 ? 1.0 : p);
        e->pv.planned[i] = Ki >= 9.2e18 ? INT64_MAX : (int64_t)ceil(Ki);
        Kmax = Ki > Kmax ? Ki : Kmax;
    }
    return Kmax < 1 ? 1 : Kmax;
}

void dpdo__eng_set_planned(dpdo__eng *e, double count)
{
    for (int64_t i = 0; i < e->n; i++)
        e->pv.planned[i] = count >= 9.2e18 ? INT64_MAX : (int64_t)ceil(count);
}

void dpdo__eng_note_wor_floor(dpdo__eng *e, const dpdo__sampling_desc *sd, double sens,
                              double releases, double sigma)
{
    if (sd->kind != DPDO_SAMPLING_WOR || !(sd->q < 1) || !(sigma > 0)) return;
    dpdo_sampling *s = NULL;
    if (dpdo_sampling_create(&s) || dpdo_sampling_set_poisson(s, sd->q)) {
        dpdo_sampling_destroy(s);
        return;
    }
    double sp = 0;
    /* the accountant's calibration may fail for the Poisson twin (unreachable): then say nothing */
    int rc =
        dpdo_accountant_calibrate_sigma(e->acc, s, sens, releases, e->o.epsilon, e->o.delta, &sp);
    dpdo_sampling_destroy(s);
    if (rc || !(sp > 0) || !(sigma > 4 * sp)) return;
    char buf[400];
    snprintf(
        buf, sizeof buf,
        "accounting floor: the without-replacement bound gives little or no amplification for "
        "batch %lld of "
        "%lld rows over %.0f releases, so it, not the sensitivity, sets sigma = %.4g (%.1fx the "
        "Poisson-sampled "
        "figure at the same rate); a smaller batch, more rows per node or fewer releases lowers it",
        (long long)sd->m, (long long)sd->n, releases, sigma, sigma / sp);
    dpdo__eng_warn(e, buf);
}

double dpdo__eng_node_pmax(const dpdo__eng *e, double p)
{
    if (!e->node_p) return p;
    double m = 0;
    for (int64_t i = 0; i < e->n; i++)
        m = e->node_p[i] > m ? e->node_p[i] : m;
    return m;
}

/* The accountant that calibrates sigma and the guard: the run's own. Secure runs are charged as
 * the fine lattice Gaussian (dpdo__eng_secure_events), which every built-in accountant charges
 * (pld/auto through the continuous PLD plus a proven shift, docs/privacy.md section 11): the
 * calibration plans for that mechanism (dpdo__accountant_calib_mech), so the planned sigma and the
 * charged events agree. At calibration time pv.private_run is not yet known: the grid-noise
 * condition is tested without it. *tmp stays NULL (kept for the callers' shape). */
static dpdo_accountant *calib_accountant(dpdo__eng *e, dpdo_accountant **tmp)
{
    *tmp = NULL;
    if (e->o.randomness == DPDO_RANDOMNESS_SECURE && e->acc)
        dpdo__accountant_calib_mech(e->acc, DPDO_MECH_DISCRETE_GAUSSIAN_FINE);
    return e->acc;
}

static void calib_done(dpdo__eng *e)
{
    if (e->acc) dpdo__accountant_calib_mech(e->acc, DPDO_MECH_GAUSSIAN);
}

/* Secure runs are charged with sensitivity and noise each multiplied by (1 + eta)
 * (dpdo__eng_secure_events): the same ratio in exact arithmetic, but both products are rounded,
 * and an accountant's figure is not smooth in sigma at the level the calibration stops at (pld's
 * composition moves by ~1e-10 between neighbouring sigmas, the calibration by 1e-11). A sigma
 * calibrated for (sens, sigma) could then be charged a hair above the target, and the budget
 * guard, which reads the charged event, let one release fewer than planned through (DP-WOR-SGD:
 * 0 of its 1 per pass). So the event exactly as it will be charged must fit the target over the
 * planned releases; sigma grows by factors 1 + 2^-32, 2^-31, ... until it does. calib_boost > 0
 * (the engine's retry when an algorithm's own event still lands above the target, e.g. Fed-PLT
 * charges sqrt(2 gamma) (sigma / sqrt(2 gamma))) starts from a larger factor. */
static int fit_charged(dpdo__eng *e, dpdo_accountant *acc, const dpdo__sampling_desc *sd,
                       double sens, double releases, double *sigma)
{
    const double f = 1.0 + DPDO__GRID_ETA, s0 = *sigma;
    double s = s0, step = ldexp(1.0, -32 + 4 * e->pv.calib_boost);
    if (e->pv.calib_boost > 0) s = s0 * (1.0 + step);
    for (int it = 0; it < 48; it++, step *= 2, s = s0 * (1.0 + step)) {
        dpdo__event_desc ev;
        char err[DPDO__ERRMSG_LEN];
        double eps = INFINITY;
        int rc = dpdo__event_make(&ev, DPDO_MECH_DISCRETE_GAUSSIAN_FINE, sd, sens * f, s * f, err);
        if (rc) return dpdo__err(e->err, rc, "prepare: calibrating the secure noise: %s", err);
        rc = dpdo__accountant_epsilon_sel(acc, NULL, -1, &ev, releases, e->o.delta, &eps, NULL);
        if (rc)
            return dpdo__err(e->err, rc, "prepare: calibrating the secure noise: %s",
                             dpdo_accountant_errmsg(acc));
        if (eps <= e->o.epsilon) {
            *sigma = s;
            return DPDO_OK;
        }
    }
    return dpdo__err(e->err, DPDO_E_NUMERIC,
                     "prepare: the secure (grid) noise for %g releases per node does not fit "
                     "epsilon = %g at delta = %g even at %g x the calibrated sigma %g",
                     releases, e->o.epsilon, e->o.delta, s / s0, s0);
}

int dpdo__eng_calibrate_sigma(dpdo__eng *e, const dpdo__sampling_desc *sd, double sens,
                              double releases, double *sigma)
{
    dpdo_sampling *s = NULL;
    int rc = sampling_of(sd, &s);
    if (rc) return dpdo__err(e->err, rc, "prepare: cannot build the sampling for the calibration");
    dpdo_accountant *tmp = NULL, *acc = calib_accountant(e, &tmp);
    rc = dpdo_accountant_calibrate_sigma(acc, s, sens, releases, e->o.epsilon, e->o.delta, sigma);
    calib_done(e);
    dpdo_sampling_destroy(s);
    if (rc)
        rc = dpdo__err(e->err, rc, "prepare: calibrating the noise for %g releases per node: %s",
                       releases, dpdo_accountant_errmsg(acc));
    dpdo_accountant_destroy(tmp);
    if (rc) return rc;
    /* the grid-noise condition without pv.private_run (not yet known; calib_accountant) */
    if (e->o.randomness == DPDO_RANDOMNESS_SECURE && acc)
        return fit_charged(e, acc, sd, sens, releases, sigma);
    return DPDO_OK;
}

int dpdo__eng_grad_exceeds(dpdo__eng *e, double bound, int phi_only, int64_t *node, double *reach)
{
    for (int64_t i = 0; i < e->n; i++) {
        int kind = e->nodes[i]->loss->kind;
        double Li = 0;
        if (kind == DPDO_LOSS_KIND_BATCH || (phi_only && kind != DPDO_LOSS_KIND_PHI))
            continue; /* no per-row bound to check */
        if (dpdo_node_lipschitz(e->nodes[i], INFINITY, &Li) == DPDO_OK &&
            Li > bound * (1 + 1e-12)) {
            *node = i;
            *reach = Li;
            return 1;
        }
    }
    return 0;
}

int dpdo__eng_guard_short(const dpdo__eng *e)
{
    if (!e->pv.private_run || e->o.noise_mode != DPDO_NOISE_RIGOROUS) return 0;
    for (int64_t i = 0; i < e->n; i++)
        if (e->pv.planned[i] > 0 && e->pv.allow[i] < e->pv.planned[i]) return 1;
    return 0;
}

int dpdo__eng_events_wor(dpdo__eng *e, int64_t B, double sens, double sigma,
                         dpdo__sampling_desc *samp)
{
    e->pv.nev = 0;
    for (int64_t i = 0; i < e->n; i++) {
        dpdo__sampling_desc sd = {DPDO_SAMPLING_WOR, (double)B / (double)e->q[i], e->q[i], B};
        if (samp) samp[i] = sd;
        if (!e->pv.private_run) continue;
        int32_t k = 0;
        while (k < e->pv.nev && e->pv.ev[k].samp.n != e->q[i])
            k++;
        if (k == e->pv.nev) {
            char err[DPDO__ERRMSG_LEN];
            int rc = dpdo__event_make(&e->pv.ev[k], DPDO_MECH_GAUSSIAN, &sd, sens, sigma, err);
            if (rc) return dpdo__err(e->err, rc, "prepare: node %lld: %s", (long long)i, err);
            e->pv.nev++;
        }
        e->pv.node_ev[i] = k;
    }
    return DPDO_OK;
}

/* Budget allowances per node (number of releases the guard lets through). */
int dpdo__eng_compute_guard(dpdo__eng *e)
{
    dpdo__priv_state *pv = &e->pv;
    double g = DPDO__PD(e, DPDO_PARAM_MAX_EPSILON);
    if (g == 0) g = e->o.noise_mode == DPDO_NOISE_RIGOROUS ? e->o.epsilon : INFINITY;
    pv->guard_eps = pv->private_run ? g : INFINITY;
    for (int64_t i = 0; i < e->n; i++)
        pv->allow[i] = INT64_MAX;
    if (!(pv->guard_eps < INFINITY)) return DPDO_OK;
    for (int32_t k = 0; k < pv->nev; k++) {
        /* the step calibration is Gaussian; algorithms with Laplace events (dpdo, cpgt) guard
         * the summed pure epsilon themselves in plan() against pv->guard_eps */
        if (pv->ev[k].mech != DPDO_MECH_GAUSSIAN && pv->ev[k].mech != DPDO_MECH_DISCRETE_GAUSSIAN &&
            pv->ev[k].mech != DPDO_MECH_DISCRETE_GAUSSIAN_FINE)
            continue;
        dpdo_sampling *s = NULL;
        /* the discrete Gaussian is charged without Poisson amplification (math.c): plan the same */
        dpdo__sampling_desc none = {DPDO_SAMPLING_NONE, 1.0, 0, 0};
        int disc_poisson = pv->ev[k].mech == DPDO_MECH_DISCRETE_GAUSSIAN &&
                           pv->ev[k].samp.kind == DPDO_SAMPLING_POISSON;
        int rc = sampling_of(disc_poisson ? &none : &pv->ev[k].samp, &s);
        if (rc) return dpdo__err(e->err, rc, "prepare: budget guard: cannot build the sampling");
        double steps = 0;
        dpdo_accountant *tmp = NULL, *acc = e->acc;
        int old =
            dpdo__accountant_calib_mech(acc, pv->ev[k].mech); /* plan for the charged mechanism */
        rc = dpdo_accountant_calibrate_steps(acc, s, pv->ev[k].sens, pv->ev[k].noise, pv->guard_eps,
                                             e->o.delta, &steps);
        dpdo__accountant_calib_mech(acc, old);
        dpdo_sampling_destroy(s);
        if (rc)
            rc = dpdo__err(e->err, rc, "prepare: budget guard: %s", dpdo_accountant_errmsg(acc));
        dpdo_accountant_destroy(tmp);
        if (rc) return rc;
        int64_t allow = steps >= 4e18 ? INT64_MAX : (int64_t)steps;
        for (int64_t i = 0; i < e->n; i++)
            if (pv->node_ev[i] == k) pv->allow[i] = allow;
    }
    return DPDO_OK;
}

#define TAP(e, node, out, n, g)                                                                    \
    do {                                                                                           \
        if ((e)->tap && !((e)->tap_sent && (e)->tap_message))                                      \
            (e)->tap((e)->tap_user, node, out, n, g);                                              \
    } while (0)

/* Fed-PLT's noise is drawn inside the local solver, on the grid too (dpdo__solver_run_grid); the
 * other solver-using algorithms are not private. */
int dpdo__eng_grid_noise(const dpdo__eng *e)
{
    return DPDO__SECURE(e);
}

/* The one noise path of both mechanisms: reproducible runs add continuous draws from the seeded
 * stream; secure runs add exact discrete draws on a grid (l1 = 1: discrete Laplace, rounding
 * measured in L1). `scale` is sigma or the Laplace scale b. */
/* A draw of `scale` for this node's data counts as a release of it (private runs, sens > 0). */
static int count_release(dpdo__eng *e, int64_t node, double scale, double sens)
{
    int rc;
    if (e->pv.private_run && sens > 0) {
        if ((rc = DPDO__ENG_ASSERT(e, node, scale > 0 && scale < INFINITY && sens < INFINITY)))
            return rc;
        if (node >= 0 && node < e->n) e->pv.released[node]++;
    }
    return DPDO_OK;
}

/* the scale actually drawn; test builds (DPDO__WEAKEN_*): half of it, half on the grid path
 * only, or none at node n - 1 */
static double drawn_scale(const dpdo__eng *e, int64_t node, double scale)
{
    (void)node;
    if (DPDO__WEAKENED(e, DPDO__WEAKEN_NO_NOISE_NODE) && node == e->n - 1) return 0.0;
    if (DPDO__WEAKENED(e, DPDO__WEAKEN_SECURE_SIGMA_HALF) && dpdo__eng_grid_noise(e)) scale *= 0.5;
    return DPDO__WEAKENED(e, DPDO__WEAKEN_SIGMA_HALF) ? 0.5 * scale : scale;
}

static int add_noise(dpdo__eng *e, dpdo__stream *st, int64_t node, double scale, double sens,
                     double *out, size_t n, int l1)
{
    double s = drawn_scale(e, node, scale);
    int rc;
    if ((rc = count_release(e, node, scale, sens))) return rc;
    if (DPDO__WEAKENED(e, DPDO__WEAKEN_NO_NOISE_NODE) && !(s > 0)) { /* test build: no noise */
        TAP(e, node, out, n, 0.0);
        return DPDO_OK;
    }
    if (!dpdo__eng_grid_noise(e)) {
        if (l1)
            for (size_t k = 0; k < n; k++)
                out[k] += dpdo__stream_laplace(st, s);
        else
            dpdo__stream_add_normals(st, s, out, n);
        TAP(e, node, out, n, 0.0);
    } else if (n > 0) {
        char err[DPDO__ERRMSG_LEN];
        double g;
        uint64_t S;
        if ((rc = dpdo__grid_choose(s, sens > 0 ? sens : s, n, DPDO__GRID_ETA, l1, &g, &S, err)) ||
            (rc = l1 ? dpdo__grid_add_dlaplace(st, S, g, out, n, err)
                     : dpdo__grid_add_dgauss(st, S, g, out, n, err)))
            return dpdo__eng_err(e, rc, node, "secure noise: %s", err);
        TAP(e, node, out, n, g);
    }
    return dpdo__eng_noise_status(e, st, node);
}

int dpdo__eng_noise_gauss(dpdo__eng *e, dpdo__stream *st, int64_t node, double sigma, double sens,
                          double *out, size_t n)
{
    return add_noise(e, st, node, sigma, sens, out, n, 0);
}

int dpdo__eng_noise_gauss_fused(dpdo__eng *e, int64_t node, double sigma, double sens,
                                double *scale)
{
    *scale = NAN;
    if (e->tap) return DPDO_OK; /* the tap sees the noised vector: the unfused path */
    if (dpdo__eng_grid_noise(e)) return DPDO_OK;
    int rc = count_release(e, node, sigma, sens);
    if (!rc) *scale = drawn_scale(e, node, sigma);
    return rc;
}

void dpdo__eng_normals_prefetching(dpdo__stream *st, double *buf, size_t n,
                                   const struct dpdo_shard *sh, const int64_t *idx, int64_t m)
{
    /* even: every chunk but the last takes whole generator blocks (the bits of one call). 256,
     * not 512: each part of the hints waits for fill buffers, and smaller bursts stall less
     * (DP-DDA b = 2: 0.2-0.3 us of 13 per round, 2026-11-25; 128 loses it to the calls) */
    enum { CHUNK = 256 };
    int parts = (int)((n + CHUNK - 1) / CHUNK);
    for (int q = 0; q < parts; q++) {
        size_t k0 = (size_t)q * CHUNK, len = n - k0 < CHUNK ? n - k0 : CHUNK;
        dpdo__shard_prefetch_part(sh, idx, m, q, parts);
        dpdo__stream_normals(st, buf + k0, len);
    }
}

int dpdo__eng_noise_status(dpdo__eng *e, dpdo__stream *st, int64_t node)
{
    int rc = dpdo__stream_status(st);
    if (rc)
        return dpdo__eng_err(e, rc, node, "noise generator failed (code %d)",
                             dpdo__stream_cb_code(st));
    return DPDO_OK;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NOISE_X86 1
/* the AVX2 + FMA loops below (libgcc's CPU model, filled before main) */
static int have_fma(void)
{
    return __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx2");
}

__attribute__((target("avx2,fma"))) static void
noise_affine_fma(double *restrict out, const double *restrict z, double a, double s,
                 const double *restrict nz, size_t n)
{
    for (size_t k = 0; k < n; k++)
        out[k] = z[k] + a * __builtin_fma(s, nz[k], out[k]);
}

/* the normals in out itself (the caller drew them there) */
__attribute__((target("avx2,fma"))) static int
noise_affine_row_fma(double *restrict out, const double *restrict z, double a, double s, double c,
                     const double *restrict row, size_t n)
{
    uint64_t acc = 0;
    if (row)
        for (size_t k = 0; k < n; k++) {
            double g = 0.0 + c * row[k];
            acc |= dpdo__nf_bits(g);
            out[k] = z[k] + a * __builtin_fma(s, out[k], g);
        }
    else
        for (size_t k = 0; k < n; k++)
            out[k] = z[k] + a * __builtin_fma(s, out[k], 0.0);
    return !(acc >> 63);
}

__attribute__((target("avx2,fma"))) static void noise_add_fma(double *restrict out,
                                                              const double *restrict h, double s,
                                                              const double *restrict nz, size_t n)
{
    if (h)
        for (size_t k = 0; k < n; k++)
            out[k] = __builtin_fma(s, nz[k], out[k] + h[k]);
    else
        for (size_t k = 0; k < n; k++)
            out[k] = __builtin_fma(s, nz[k], out[k]);
}
#endif

void dpdo__eng_noise_add(double *out, const double *h, double scale, const double *buf, size_t n)
{
#ifdef NOISE_X86
    if (have_fma()) {
        noise_add_fma(out, h, scale, buf, n);
        return;
    }
#endif
    for (size_t k = 0; k < n; k++) /* fma() is exact: the same bits as the vector path */
        out[k] = fma(scale, buf[k], h ? out[k] + h[k] : out[k]);
}

void dpdo__eng_noise_affine(double *out, const double *z, double a, double scale, const double *buf,
                            size_t n)
{
#ifdef NOISE_X86
    if (have_fma()) {
        noise_affine_fma(out, z, a, scale, buf, n);
        return;
    }
#endif
    for (size_t k = 0; k < n; k++) /* fma() is exact: the same bits as the vector path */
        out[k] = z[k] + a * fma(scale, buf[k], out[k]);
}

int dpdo__eng_noise_affine_row(double *out, const double *z, double a, double scale, double c,
                               const double *row, size_t n)
{
    if (c == 0.0) row = NULL; /* a zero coefficient: the gradient is 0 (its row is not read) */
#ifdef NOISE_X86
    if (have_fma()) return noise_affine_row_fma(out, z, a, scale, c, row, n);
#endif
    int fin = 1;
    for (size_t k = 0; k < n; k++) { /* fma() is exact: the same bits as the vector path */
        double g = row ? 0.0 + c * row[k] : 0.0;
        fin &= isfinite(g) != 0;
        out[k] = z[k] + a * fma(scale, out[k], g);
    }
    return fin;
}

int dpdo__eng_noise_laplace(dpdo__eng *e, dpdo__stream *st, int64_t node, double b, double sens,
                            double *out, size_t n)
{
    return add_noise(e, st, node, b, sens, out, n, 1);
}

/* Secure private runs whose noise is drawn by the grid samplers are charged as the discrete
 * mechanisms: sensitivity and noise both scaled by (1 + eta), which bounds the rounded release's
 * sensitivity (sens + gamma sqrt(d) <= (1 + eta) sens) and its noise (gamma S >= (1 + eta) sigma)
 * in every draw (dpdo__grid_choose), so the charged ratio is never below the real one. */
void dpdo__eng_secure_events(dpdo__eng *e)
{
    if (!dpdo__eng_grid_noise(e)) return;
    for (int32_t k = 0; k < e->pv.nev; k++) {
        dpdo__event_desc *ev = &e->pv.ev[k];
        if (ev->mech != DPDO_MECH_GAUSSIAN && ev->mech != DPDO_MECH_LAPLACE) continue;
        /* the grid has S^2 >= 2^24 d (dpdo__grid_choose): the fine lattice Gaussian */
        ev->mech = ev->mech == DPDO_MECH_GAUSSIAN ? DPDO_MECH_DISCRETE_GAUSSIAN_FINE
                                                  : DPDO_MECH_DISCRETE_LAPLACE;
        ev->sens *= 1.0 + DPDO__GRID_ETA;
        ev->noise *= 1.0 + DPDO__GRID_ETA;
    }
}

/* ---- privacy ------------------------------------------------------------------------- */

static int algorithm_planned_releases_body(dpdo_algorithm *a, int64_t node, int64_t *count)
{
    if (!a || !count) return DPDO_E_INVAL;
    dpdo__eng *e = a->e;
    if (!e) return dpdo__err(a->errmsg, DPDO_E_STATE, "planned releases: the algorithm is EMPTY");
    if (node != DPDO_NODE_ALL && (node < 0 || node >= e->n))
        return dpdo__err(a->errmsg, DPDO_E_INVAL,
                         "planned releases: node %lld is not in [0, %lld) or DPDO_NODE_ALL",
                         (long long)node, (long long)e->n);
    if (!e->prepared)
        return dpdo__err(a->errmsg, DPDO_E_STATE,
                         "planned releases: not prepared yet (call dpdo_algorithm_prepare)");
    int64_t c = 0;
    for (int64_t i = 0; i < e->n; i++)
        if (node == DPDO_NODE_ALL || node == i) c = e->pv.planned[i] > c ? e->pv.planned[i] : c;
    if (c == 0)
        return dpdo__err(
            a->errmsg, DPDO_E_UNSUPPORTED,
            "planned releases: sigma was not calibrated by the accountant (noise mode %d%s)",
            e->o.noise_mode, e->pv.private_run ? "" : ", no noise");
    *count = c;
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_planned_releases(dpdo_algorithm *a, int64_t node, int64_t *count)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 0, "dpdo_algorithm_planned_releases",
                  algorithm_planned_releases_body(a, node, count));
}

static int algorithm_privacy_body(dpdo_algorithm *a, int kind, int64_t node, double *eps,
                                  double *delta, int32_t *valid)
{
    if (!a || !eps) return DPDO_E_INVAL;
    dpdo__eng *e = a->e;
    if (!e) return dpdo__err(a->errmsg, DPDO_E_STATE, "privacy: the algorithm is EMPTY");
    if (kind != DPDO_PRIVACY_RIGOROUS && kind != DPDO_PRIVACY_PAPER)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "privacy: kind %d is not a DPDO_PRIVACY_* value",
                         kind);
    if (node != DPDO_NODE_ALL && (node < 0 || node >= e->n))
        return dpdo__err(a->errmsg, DPDO_E_INVAL,
                         "privacy: node %lld is not in [0, %lld) or DPDO_NODE_ALL", (long long)node,
                         (long long)e->n);
    if (!e->prepared)
        return dpdo__err(a->errmsg, DPDO_E_STATE,
                         "privacy: not prepared yet (call dpdo_algorithm_prepare or step)");
    if (kind == DPDO_PRIVACY_RIGOROUS) {
        if (delta) *delta = e->o.delta;
        if (!e->pv.private_run) {
            *eps = INFINITY;
            if (valid) *valid = 0;
            return DPDO_OK;
        }
        int rc = dpdo_accountant_epsilon(e->acc, node, e->o.delta, eps, NULL);
        if (rc) return dpdo__err(a->errmsg, rc, "privacy: %s", dpdo_accountant_errmsg(e->acc));
        if (valid) *valid = 1;
        return DPDO_OK;
    }
    if (!e->pv.paper)
        return dpdo__err(a->errmsg, DPDO_E_UNSUPPORTED, "privacy: no paper bound for this run (%s)",
                         e->pv.private_run ? "the algorithm has none" : "noise disabled");
    int rc = e->vt->paper_update ? e->vt->paper_update(e, e->priv, e->pv.paper)
             : e->vt->paper_round
                 ? dpdo_paper_set(e->pv.paper, e->vt->paper_round, (double)e->round)
                 : DPDO_OK;
    if (!rc) rc = dpdo_paper_evaluate(e->pv.paper);
    double v = NAN, dl = NAN;
    if (!rc) rc = dpdo_paper_get(e->pv.paper, e->vt->paper_eps, &v);
    if (!rc) rc = dpdo_paper_get(e->pv.paper, e->vt->paper_delta, &dl);
    if (rc)
        return dpdo__err(a->errmsg, rc, "privacy: paper bound: %s", dpdo_paper_errmsg(e->pv.paper));
    *eps = v;
    if (delta) *delta = dl;
    if (valid) *valid = dpdo_paper_valid(e->pv.paper);
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_privacy(dpdo_algorithm *a, int kind, int64_t node, double *eps,
                                    double *delta, int32_t *valid)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 0, "dpdo_algorithm_privacy",
                  algorithm_privacy_body(a, kind, node, eps, delta, valid));
}

DPDO_API const char *dpdo_algorithm_privacy_source(const dpdo_algorithm *a, int kind)
{
    if (!a || !a->e) return "";
    if (kind == DPDO_PRIVACY_RIGOROUS) {
        if (!a->e->acc) return "";
        /* "auto" answers with its best member: name the one behind the latest figure */
        const char *src = dpdo_accountant_source(a->e->acc);
        return src && src[0] ? src : dpdo_accountant_name(a->e->acc);
    }
    if (kind == DPDO_PRIVACY_PAPER) return a->e->pv.paper && a->vt->paper ? a->vt->paper : "";
    return "";
}

DPDO_API const char *dpdo_algorithm_privacy_notes(const dpdo_algorithm *a)
{
    return a && a->e ? a->e->pv.notes : "";
}

/* ---- the one noise plan of every private type's prepare() ---------------------------------- */

int dpdo__eng_paper_verdict(dpdo__eng *e, dpdo_paper *pp, const char *theorem,
                            const char *invalid_note)
{
    if (dpdo_paper_valid(pp)) return DPDO_OK;
    if (e->o.strict)
        return dpdo__err(e->err, DPDO_E_INVAL, "prepare: %s does not apply (strict): %s", theorem,
                         dpdo_paper_violations(pp));
    char buf[400];
    snprintf(buf, sizeof buf, "%s: %s", invalid_note, dpdo_paper_violations(pp));
    dpdo__eng_warn(e, buf);
    return DPDO_OK;
}

int dpdo__eng_event_all(dpdo__eng *e, int mech, double sens, double noise)
{
    char err[DPDO__ERRMSG_LEN];
    int rc = dpdo__event_make(&e->pv.ev[0], mech, NULL, sens, noise, err);
    if (rc) return dpdo__err(e->err, rc, "prepare: %s", err);
    e->pv.nev = 1;
    for (int64_t i = 0; i < e->n; i++)
        e->pv.node_ev[i] = 0;
    return DPDO_OK;
}

int dpdo__eng_noise_plan(dpdo__eng *e, void *priv, const dpdo__noise_plan *np, double *sigma_out)
{
    int mode = e->o.noise_mode, rc = DPDO_OK;
    double sigma = 0;
    dpdo_paper_destroy(e->pv.paper);
    e->pv.paper = NULL;
    if (mode != DPDO_NOISE_NONE) {
        dpdo_paper *pp = NULL;
        if (np->paper) {
            if ((rc = dpdo_paper_create(&e->pv.paper, dpdo_paper_type_find(np->paper))))
                return dpdo__err(e->err, rc, "prepare: out of memory");
            pp = e->pv.paper;
            if ((rc = np->paper_set(e, priv, pp)) || (rc = dpdo_paper_evaluate(pp)))
                return dpdo__err(e->err, rc, "prepare: paper bound: %s", dpdo_paper_errmsg(pp));
        }
        if (mode == DPDO_NOISE_PAPER) {
            if ((rc = np->paper_sigma(e, priv, pp, &sigma))) return rc;
        } else if (mode == DPDO_NOISE_FIXED) {
            sigma = DPDO__PD(e, DPDO_PARAM_SIGMA);
            if (isnan(sigma))
                return dpdo__err(e->err, DPDO_E_INVAL,
                                 "prepare: DPDO_NOISE_FIXED but sigma is not set");
        } else if ((rc = np->rigorous(e, priv, &sigma))) {
            return rc;
        }
        if (np->check_sigma && (rc = np->check_sigma(e, priv, sigma))) return rc;
        if (pp && np->paper_sigma_key && sigma > 0 &&
            ((rc = dpdo_paper_set(pp, np->paper_sigma_key, sigma)) ||
             (rc = dpdo_paper_evaluate(pp))))
            return dpdo__err(e->err, rc, "prepare: paper bound: %s", dpdo_paper_errmsg(pp));
        if (pp && (rc = dpdo__eng_paper_verdict(e, pp, np->theorem, np->invalid_note))) return rc;
        if (np->notes) np->notes(e, priv);
    }
    e->pv.sigma = sigma;
    e->pv.private_run = mode != DPDO_NOISE_NONE && sigma > 0 && !np->no_release;
    if (!e->pv.private_run) dpdo__eng_note(e, "noise disabled: not private");
    *sigma_out = sigma;
    return DPDO_OK;
}
