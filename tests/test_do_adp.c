/* SPDX-License-Identifier: BSD-3-Clause */
/* DO-ADP on the engine: spec do-adp.md §8 T-13 (average dynamics), T-14
 * (inactive agents), T-15 (p = 1, k = d, sigma = 0 equals decentralized
 * momentum SGD written here), T-19 (message content = Top-k of the
 * residual, delivered exactly), T-20 (communication counters, utilisation
 * p k/d), T-22 (coordinate clipping), n = 1 reduces to momentum SGD, the
 * paper sigma of T-1 through the engine, determinism, bad input, and a
 * user-defined nonconvex model (a two-layer network as a batch-kind loss)
 * that trains. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "dpdo/dpdo.h"
#include "dpdo/compressor.h"
#include "engine/engine_impl.h"
#include "core/core_impl.h"
#include "harness.h"

static uint64_t tstate = 0x853c49e6748fea9bull;
static double urand(void) { return h_urand(&tstate); }
static double nrand(void) { return sqrt(-2.0 * log(urand() + 1e-300)) * cos(6.283185307179586 * urand()); }

enum { NMAX = 20, DMAX = 64, QMAX = 60 };
typedef struct fx {
    int n, q, d;
    double X[NMAX * QMAX * DMAX], Y[NMAX * QMAX];
    dpdo_dataset *ds;
    dpdo_shard *sh[NMAX];
    dpdo_loss *loss;
    dpdo_node *nodes[NMAX];
    dpdo_network *net;
    dpdo_ledger *led;
    dpdo_accountant *acc;
} fx;

static void fx_make(fx *f, int n, int q, int d, int circ)
{
    memset(f, 0, sizeof *f);
    f->n = n, f->q = q, f->d = d;
    for (int i = 0; i < n * q; i++) {
        double nn = 0;
        for (int k = 0; k < d; k++) {
                double v = nrand();
                f->X[i * d + k] = v;
                nn += v * v;
            }
        for (int k = 0; k < d; k++) f->X[i * d + k] /= sqrt(nn);
        f->Y[i] = urand() < 0.5 ? -1 : 1;
    }
    CHECK_EQ(dpdo_dataset_create(&f->ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_dense(f->ds, n * q, d, f->X, f->Y, DPDO_COPY), DPDO_OK);
    CHECK_EQ(dpdo_loss_create(&f->loss, dpdo_loss_type_find("logistic"), NULL, d), DPDO_OK);
    for (int i = 0; i < n; i++) {
        CHECK_EQ(dpdo_shard_create_range(&f->sh[i], f->ds, (int64_t)i * q, q), DPDO_OK);
        CHECK_EQ(dpdo_node_create(&f->nodes[i], f->sh[i], f->loss, 1.0), DPDO_OK);
    }
    CHECK_EQ(dpdo_network_create(&f->net), DPDO_OK);
    if (n == 1) CHECK_EQ(dpdo_network_set_complete(f->net, 1), DPDO_OK);
    else if (circ) {
        CHECK_EQ(dpdo_network_set_circulant(f->net, n, 3), DPDO_OK);
    } else CHECK_EQ(dpdo_network_set_ring(f->net, n), DPDO_OK);
    CHECK_EQ(dpdo_ledger_create(&f->led, n), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&f->acc, dpdo_accountant_type_find("rdp"), NULL, f->led, NULL), DPDO_OK);
}

static void fx_free(fx *f)
{
    dpdo_accountant_destroy(f->acc);
    dpdo_ledger_destroy(f->led);
    dpdo_network_destroy(f->net);
    for (int i = 0; i < f->n; i++) {
        dpdo_node_destroy(f->nodes[i]);
        dpdo_shard_destroy(f->sh[i]);
    }
    dpdo_loss_destroy(f->loss);
    dpdo_dataset_destroy(f->ds);
}

static dpdo_algorithm *mk(fx *f, int mode, int64_t T, double sigma, double p, dpdo_compressor *c)
{
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = mode;
    o.max_rounds = T;
    o.sigma = sigma;
    o.step_size = 0.05;
    o.max_epsilon = INFINITY;
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("do-adp")), DPDO_OK);
    int rc = dpdo_algorithm_setup(a, f->nodes, f->n, f->net, NULL, f->acc, &o);
    CHECK_MSG(rc == DPDO_OK, "setup: %s", dpdo_algorithm_errmsg(a));
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_ADP_P, p), DPDO_OK);
    if (c) CHECK_EQ(dpdo_algorithm_set_compressor(a, c), DPDO_OK);
    return a;
}

static dpdo_compressor *topk(int d, int k)
{
    dpdo_compressor *c = NULL;
    CHECK_EQ(dpdo_compressor_create(&c, dpdo_compressor_type_find("top-k"), NULL, d), DPDO_OK);
    CHECK_EQ(dpdo_compressor_set_k(c, k), DPDO_OK);
    return c;
}

/* ---- T-13, T-14, T-19, T-20 in one run --------------------------------------- */

static void test_mechanics(void)
{
    enum { N = 10, D = 20, K = 6 };
    static fx f;
    fx_make(&f, N, 30, D, 1);
    dpdo_compressor *c = topk(D, K);
    dpdo_algorithm *a = mk(&f, DPDO_NOISE_FIXED, 300, 0.3, 0.7, c);
    double alpha = 0.05, beta = 0.15, gamma = 0.05;
    int bad_avg = 0, bad_inactive = 0, bad_msg = 0, active_total = 0;
    static double x0[N * D], m0[N * D], h0[N * D], x1[N * D], m1[N * D], h1[N * D];
    for (int t = 0; t < 300; t++) {
        for (int i = 0; i < N; i++) {
            dpdo_algorithm_get_state(a, "x", i, x0 + i * D, D);
            dpdo_algorithm_get_state(a, "m", i, m0 + i * D, D);
            dpdo_algorithm_get_state(a, "xhat", i, h0 + i * D, D);
        }
        CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
        int32_t fl[N];
        dpdo_algorithm_get_active(a, fl, N);
        for (int i = 0; i < N; i++) {
            dpdo_algorithm_get_state(a, "x", i, x1 + i * D, D);
            dpdo_algorithm_get_state(a, "m", i, m1 + i * D, D);
            dpdo_algorithm_get_state(a, "xhat", i, h1 + i * D, D);
            active_total += fl[i];
        }
        /* T-13: mean x moves by -(alpha/n) sum over active m_i' */
        for (int k = 0; k < D; k++) {
            double before = 0, after = 0, mv = 0, sc = 0;
            for (int i = 0; i < N; i++) {
                before += x0[i * D + k] / N;
                after += x1[i * D + k] / N;
                if (fl[i]) mv += alpha * m1[i * D + k] / N;
                sc += fabs(x1[i * D + k]) + fabs(alpha * m1[i * D + k]);
            }
            if (fabs(after - (before - mv)) > 1e-12 * (sc + 1e-300)) bad_avg++;
        }
        for (int i = 0; i < N; i++) {
            /* cons_i from the stored copies (ring of circulant offsets: weights from the network) */
            if (!fl[i]) { /* T-14 */
                for (int k = 0; k < D; k++)
                    if (m1[i * D + k] != beta * m0[i * D + k]) bad_inactive++;
                if (memcmp(h0 + i * D, h1 + i * D, sizeof(double) * D)) bad_inactive++;
            } else { /* T-19: xhat_i grew by Top-k(x_i' - xhat_i) exactly */
                double r[D], absr[D];
                for (int k = 0; k < D; k++) r[k] = x1[i * D + k] - h0[i * D + k], absr[k] = fabs(r[k]);
                int nsel = 0;
                for (int k = 0; k < D; k++) {
                    int larger = 0; /* rank with ties to the lower index */
                    for (int j = 0; j < D; j++) larger += absr[j] > absr[k] || (absr[j] == absr[k] && j < k);
                    double want = h0[i * D + k] + (larger < K ? r[k] : 0.0);
                    if (larger < K) nsel++;
                    if (h1[i * D + k] != want) bad_msg++;
                }
                if (nsel != K) bad_msg++;
            }
        }
    }
    (void)gamma;
    CHECK_EQ(bad_avg, 0);
    CHECK_EQ(bad_inactive, 0);
    CHECK_EQ(bad_msg, 0);
    /* T-20: every active agent sends k values + k indices to each of its 6 neighbours */
    int64_t msgs, sc, by;
    dpdo_algorithm_comm(a, DPDO_NODE_ALL, &msgs, &sc, &by);
    CHECK_EQ(msgs, 6 * active_total);
    CHECK_EQ(sc, 6 * K * active_total);
    CHECK_EQ(by, 6 * 12 * K * active_total);
    double util = (double)active_total * K / (300.0 * N * D), se = sqrt(0.7 * 0.3 / (300.0 * N)) * K / D;
    CHECK_MSG(fabs(util - 0.7 * K / D) < 4 * se, "utilisation %g vs %g", util, 0.7 * K / D);
    /* charges: one release per active round */
    int64_t tot = 0;
    for (int i = 0; i < N; i++) tot += dpdo_ledger_charges(f.led, i);
    CHECK_EQ(tot, active_total);
    dpdo_algorithm_destroy(a);
    dpdo_compressor_destroy(c);
    fx_free(&f);
}

/* ---- T-15: p = 1, k = d, sigma = 0 is decentralized momentum SGD --------------- */

static void test_reduction(void)
{
    enum { N = 6, D = 5, Q = 20, T = 80 };
    static fx f;
    fx_make(&f, N, Q, D, 0);
    dpdo_algorithm *a = mk(&f, DPDO_NOISE_NONE, T, NAN, 1.0, NULL);
    dpdo_algorithm_set_double(a, DPDO_PARAM_CLIP, INFINITY); /* no clamp: the reference has none */
    double alpha = 0.05, beta = 0.15, gamma = 0.05;
    /* W of the ring with Metropolis weights: 1/3 on the closed neighbourhood */
    double x[N][D] = {{0}}, m[N][D] = {{0}}, worst = 0;
    for (int t = 1; t <= T; t++) {
        /* the sample each agent draws: read it back from the engine's sampler stream */
        dpdo__eng *e = dpdo__algorithm_eng(a);
        double xn[N][D];
        for (int i = 0; i < N; i++) {
            int64_t r = 0;
            {
                dpdo__stream st;
                dpdo__stream_open(&st, e->rng, (uint64_t)i, (uint64_t)t, DPDO_PURPOSE_SAMPLE);
                int64_t cnt;
                dpdo__sampling_desc sd = {DPDO_SAMPLING_WOR, 1.0 / Q, Q, 1};
                CHECK_EQ(dpdo__sampling_draw(&sd, &st, Q, &r, &cnt), DPDO_OK);
            }
            const double *c = f.X + (i * Q + r) * D;
            double yy = f.Y[i * Q + r], mm = 0;
            for (int k = 0; k < D; k++) mm += c[k] * x[i][k];
            double gs = -yy / (1 + exp(yy * mm));
            for (int k = 0; k < D; k++) {
                m[i][k] = gs * c[k] + beta * m[i][k];
                double cons = 0;
                int l = (i + N - 1) % N, rr = (i + 1) % N;
                cons = gamma * ((x[l][k] - x[i][k]) + (x[rr][k] - x[i][k])) / 3.0;
                xn[i][k] = x[i][k] - alpha * m[i][k] + cons;
            }
        }
        memcpy(x, xn, sizeof x);
        CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
        for (int i = 0; i < N; i++) {
            double xi[D];
            dpdo_algorithm_get_iterate(a, i, xi, D);
            for (int k = 0; k < D; k++) worst = fmax(worst, fabs(xi[k] - x[i][k]));
        }
    }
    CHECK_MSG(worst < 1e-14, "worst difference %g", worst);
    dpdo_algorithm_destroy(a);
    fx_free(&f);
}

/* ---- n = 1: plain momentum SGD -------------------------------------------------------------- */

static void test_single_agent(void)
{
    enum { Q = 25, D = 4, T = 60 };
    static fx f;
    fx_make(&f, 1, Q, D, 0);
    dpdo_algorithm *a = mk(&f, DPDO_NOISE_NONE, T, NAN, 1.0, NULL);
    dpdo_algorithm_set_double(a, DPDO_PARAM_CLIP, INFINITY);
    dpdo__eng *e = dpdo__algorithm_eng(a);
    double x[D] = {0}, m[D] = {0}, worst = 0;
    for (int t = 1; t <= T; t++) {
        int64_t r = 0, cnt;
        dpdo__stream st;
        dpdo__stream_open(&st, e->rng, 0, (uint64_t)t, DPDO_PURPOSE_SAMPLE);
        dpdo__sampling_desc sd = {DPDO_SAMPLING_WOR, 1.0 / Q, Q, 1};
        CHECK_EQ(dpdo__sampling_draw(&sd, &st, Q, &r, &cnt), DPDO_OK);
        const double *c = f.X + r * D;
        double yy = f.Y[r], mm = 0;
        for (int k = 0; k < D; k++) mm += c[k] * x[k];
        double gs = -yy / (1 + exp(yy * mm));
        for (int k = 0; k < D; k++) {
            m[k] = gs * c[k] + 0.15 * m[k];
            x[k] = x[k] - 0.05 * m[k];
        }
        CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
        double xi[D];
        dpdo_algorithm_get_iterate(a, 0, xi, D);
        for (int k = 0; k < D; k++) worst = fmax(worst, fabs(xi[k] - x[k]));
    }
    CHECK(worst < 1e-15);
    dpdo_algorithm_destroy(a);
    fx_free(&f);
}

/* ---- T-18: consensus with compression and random activation, alpha = 0 ------------------- */

static void test_consensus(void)
{
    enum { N = 20, D = 10, SEEDS = 8, T = 3000 };
    static fx f;
    fx_make(&f, N, 5, D, 1);
    dpdo_compressor *c = topk(D, 3);
    double e_mid = 0, e_end = 0, e0 = 0, drift = 0;
    for (int seed = 0; seed < SEEDS; seed++) {
        dpdo_algorithm_options o;
        dpdo_algorithm_options_init(&o, sizeof o);
        o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
        o.noise_mode = DPDO_NOISE_NONE;
        o.max_rounds = T;
        o.step_size = 0.0; /* alpha = 0: consensus only */
        o.seed = (uint64_t)seed;
        dpdo_algorithm *a = NULL;
        CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("do-adp")), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, N, f.net, NULL, NULL, &o), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_ADP_P, 0.8), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_set_compressor(a, c), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
        dpdo__eng *e = dpdo__algorithm_eng(a);
        double *X = NULL;
        for (int b = 0; b < e->nblk; b++)
            if (strcmp(e->blk[b].name, "x") == 0) X = e->blk[b].cur;
        for (int k = 0; k < N * D; k++) X[k] = nrand(); /* distinct starting points (white box) */
        double xbar0[D], xbar[D];
        dpdo_algorithm_get_iterate(a, DPDO_NODE_ALL, xbar0, D);
        double err = 0;
        for (int t = 0; t <= T; t++) {
            if (t == 0 || t == T / 2 || t == T) { /* e_t = sum ||x_i - xbar||^2 + ||x_i - xhat_i||^2 */
                double xi[D], hi[D], s = 0;
                dpdo_algorithm_get_iterate(a, DPDO_NODE_ALL, xbar, D);
                for (int i = 0; i < N; i++) {
                    dpdo_algorithm_get_iterate(a, i, xi, D);
                    dpdo_algorithm_get_state(a, "xhat", i, hi, D);
                    for (int k = 0; k < D; k++)
                        s += (xi[k] - xbar[k]) * (xi[k] - xbar[k]) + (xi[k] - hi[k]) * (xi[k] - hi[k]);
                }
                if (t == 0) e0 += s / SEEDS;
                if (t == T / 2) e_mid += s / SEEDS;
                if (t == T) e_end += s / SEEDS;
                for (int k = 0; k < D; k++) err = fmax(err, fabs(xbar[k] - xbar0[k]));
            }
            if (t < T) CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
        }
        drift = fmax(drift, err);
        dpdo_algorithm_destroy(a);
    }
    fprintf(stderr, "# T-18: e_0 %.3g, e_%d %.3g, e_%d %.3g, xbar drift %.2g\n", e0, T / 2, e_mid, T, e_end, drift);
    CHECK(drift < 1e-12);       /* alpha = 0: (W - I) 1 = 0 keeps the average */
    CHECK(e_mid < 0.1 * e0);    /* consensus with error feedback contracts ... */
    CHECK(e_end < 0.1 * e_mid); /* ... geometrically */
    dpdo_compressor_destroy(c);
    fx_free(&f);
}

/* ---- T-22 clipping; paper sigma (T-1); determinism; bad input ------------------------ */

static void test_privacy_and_misuse(void)
{
    enum { N = 20, D = 10 };
    static fx f;
    fx_make(&f, N, 50, D, 1);
    /* T-1 through the engine: sigma^2 = 160 kd p^2 T log(1.25/delta0) G^2 / (q^2 eps^2) */
    dpdo_compressor *c = topk(D, 3);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = DPDO_NOISE_PAPER;
    o.max_rounds = 300;
    o.epsilon = 0.5;
    o.delta = 0.01;
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("do-adp")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, N, f.net, NULL, f.acc, &o), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_ADP_P, 0.8), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_compressor(a, c), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
    double sig;
    dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &sig);
    double want = sqrt(160.0 * 0.3 * 0.64 * 300 * log(1.25 / 0.01) / (50.0 * 50.0 * 0.25));
    CHECK_REL(sig, want, 1e-12);
    CHECK_STR_CONTAINS(dpdo_algorithm_privacy_notes(a), "k/d");
    CHECK_STR_CONTAINS(dpdo_algorithm_privacy_notes(a), "public");
    CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
    double ep, er;
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_PAPER, DPDO_NODE_ALL, &ep, NULL, NULL), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &er, NULL, NULL), DPDO_OK);
    CHECK(ep <= 0.5);
    /* the rigorous figure: Gaussian(WOR(1 of q), 2G, sigma) per active round of the worst node --
     * no k/d or p saving -- recomputed with a fresh accountant */
    {
        int64_t worst = 0;
        for (int i = 0; i < N; i++) worst = dpdo_ledger_charges(f.led, i) > worst ? dpdo_ledger_charges(f.led, i) : worst;
        dpdo_ledger *l2;
        dpdo_accountant *a2;
        dpdo_sampling *s2;
        dpdo_event *e2;
        dpdo_ledger_create(&l2, 1);
        dpdo_accountant_create(&a2, dpdo_accountant_type_find("rdp"), NULL, l2, NULL);
        dpdo_sampling_create(&s2);
        dpdo_sampling_set_wor(s2, 50, 1);
        dpdo_event_create(&e2);
        CHECK_EQ(dpdo_event_set_gaussian(e2, s2, 2.0, sig), DPDO_OK);
        CHECK_EQ(dpdo_ledger_charge(l2, e2, worst, NULL, -1), DPDO_OK);
        double ref;
        CHECK_EQ(dpdo_accountant_epsilon(a2, 0, 0.01, &ref, NULL), DPDO_OK);
        CHECK_REL(er, ref, 1e-12);
        CHECK(worst > 200 && worst < 280); /* about p T = 240 active rounds */
        dpdo_event_destroy(e2), dpdo_sampling_destroy(s2), dpdo_accountant_destroy(a2), dpdo_ledger_destroy(l2);
    }
    dpdo_algorithm_destroy(a);
    /* determinism: two handles, same seed, same bytes */
    double xa[D], xb[D];
    for (int r = 0; r < 2; r++) {
        dpdo_ledger_reset(f.led);
        a = mk(&f, DPDO_NOISE_FIXED, 50, 1.0, 0.8, c);
        CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
        dpdo_algorithm_get_output(a, DPDO_NODE_ALL, r ? xb : xa, D);
        dpdo_algorithm_destroy(a);
    }
    CHECK(memcmp(xa, xb, sizeof xa) == 0);
    /* T-22: with the default clamp every released gradient coordinate is within G/sqrt(d):
     * at sigma = 0, beta = 0, alpha = 1, gamma tiny, m' = g exactly */
    dpdo_ledger_reset(f.led);
    a = mk(&f, DPDO_NOISE_NONE, 5, NAN, 1.0, NULL);
    dpdo_algorithm_set_double(a, DPDO_PARAM_ADP_BETA, 0.0);
    CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
    double worst = 0;
    for (int i = 0; i < N; i++) {
        double m[D];
        dpdo_algorithm_get_state(a, "m", i, m, D);
        for (int k = 0; k < D; k++) worst = fmax(worst, fabs(m[k]));
    }
    CHECK(worst <= 1.0 / sqrt((double)D) * (1 + 1e-15));
    CHECK(worst > 0.05);
    /* misuse */
    dpdo_compressor *wrong = topk(D + 1, 2);
    CHECK_EQ(dpdo_algorithm_set_compressor(a, wrong), DPDO_E_STATE); /* DONE */
    CHECK_EQ(dpdo_algorithm_reset(a), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_compressor(a, wrong), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "dimension");
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_ADP_P, 0.0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_ADP_P, 1.5), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_ADP_BETA, 1.0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_solver(a, NULL), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_algorithm_set_compressor(a, NULL), DPDO_OK);
    dpdo_algorithm_destroy(a);
    dpdo_compressor_destroy(wrong);
    dpdo_compressor_destroy(c);
    fx_free(&f);
}

/* ---- a user-defined nonconvex model trains: a 2-layer tanh network, batch kind ---- */

enum { IN = 4, HID = 5, NP = HID * IN + HID + HID + 1 }; /* W1, b1, w2, b2 */
typedef struct net2 { const double *X, *Y; } net2;

static double fwd(const double *th, const double *a, double *h)
{
    double o = th[NP - 1];
    for (int u = 0; u < HID; u++) {
        double s = th[HID * IN + u];
        for (int k = 0; k < IN; k++) s += th[u * IN + k] * a[k];
        h[u] = tanh(s);
        o += th[HID * IN + HID + u] * h[u];
    }
    return o;
}

static int net_batch(void *user, const double *th, int64_t dim, const int64_t *rows, int64_t m, double *loss_sum,
                     double *grad)
{
    (void)dim;
    const net2 *U = user;
    double L = 0;
    for (int64_t r = 0; r < m; r++) {
        const double *a = U->X + rows[r] * IN;
        double h[HID], o = fwd(th, a, h), e = o - U->Y[rows[r]];
        L += 0.5 * e * e;
        if (!grad) continue;
        grad[NP - 1] += e;
        for (int u = 0; u < HID; u++) {
            double w2 = th[HID * IN + HID + u], dh = e * w2 * (1 - h[u] * h[u]);
            grad[HID * IN + HID + u] += e * h[u];
            grad[HID * IN + u] += dh;
            for (int k = 0; k < IN; k++) grad[u * IN + k] += dh * a[k];
        }
    }
    *loss_sum = L;
    return 0;
}

static void test_user_network(void)
{
    enum { N = 8, Q = 40 };
    static double X[N * Q * IN], Y[N * Q];
    for (int i = 0; i < N * Q; i++) {
        for (int k = 0; k < IN; k++) X[i * IN + k] = 2 * urand() - 1;
        Y[i] = sin(2 * X[i * IN]) * X[i * IN + 1] + 0.5 * X[i * IN + 2] * X[i * IN + 3];
    }
    net2 U = {X, Y};
    dpdo_loss_type lt = {sizeof lt, "two-layer", NULL, net_batch, NULL, NULL, NULL, NULL};
    dpdo_dataset *ds;
    dpdo_loss *loss;
    CHECK_EQ(dpdo_dataset_create(&ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_dense(ds, N * Q, IN, X, Y, DPDO_BORROW), DPDO_OK);
    CHECK_EQ(dpdo_loss_create(&loss, &lt, &U, NP), DPDO_OK);
    dpdo_shard *sh[N];
    dpdo_node *nodes[N];
    for (int i = 0; i < N; i++) {
        CHECK_EQ(dpdo_shard_create_range(&sh[i], ds, (int64_t)i * Q, Q), DPDO_OK);
        CHECK_EQ(dpdo_node_create(&nodes[i], sh[i], loss, 1.0), DPDO_OK);
    }
    dpdo_network *net;
    dpdo_network_create(&net);
    dpdo_network_set_ring(net, N);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = DPDO_NOISE_NONE;
    o.max_rounds = h_quick() ? 1500 : 6000;
    o.step_size = 0.05;
    o.batch = 4;
    o.clip = INFINITY;
    dpdo_algorithm *a;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("do-adp")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(a, nodes, N, net, NULL, NULL, &o), DPDO_OK);
    dpdo_algorithm_set_double(a, DPDO_PARAM_ADP_P, 0.8);
    dpdo_algorithm_set_double(a, DPDO_PARAM_ADP_BETA, 0.5);
    dpdo_algorithm_set_double(a, DPDO_PARAM_ADP_GAMMA, 0.3);
    dpdo_compressor *c = topk(NP, NP / 2);
    CHECK_EQ(dpdo_algorithm_set_compressor(a, c), DPDO_OK);
    /* a nonzero public start (a random one shared by all agents would also do): set x_i = x0 */
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
    dpdo__eng *e = dpdo__algorithm_eng(a);
    double th0[NP];
    for (int k = 0; k < NP; k++) th0[k] = 0.5 * nrand();
    for (int b = 0; b < e->nblk; b++)
        if (strcmp(e->blk[b].name, "x") == 0)
            for (int i = 0; i < N; i++) memcpy(e->blk[b].cur + i * NP, th0, sizeof th0);
    double F0, F1;
    CHECK_EQ(dpdo_algorithm_objective(a, DPDO_POINT_ITERATE, DPDO_NODE_ALL, &F0), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
    CHECK_EQ(dpdo_algorithm_objective(a, DPDO_POINT_ITERATE, DPDO_NODE_ALL, &F1), DPDO_OK);
    CHECK_MSG(F1 < 0.5 * F0, "loss %g -> %g", F0, F1);
    dpdo_algorithm_destroy(a);
    dpdo_compressor_destroy(c);
    dpdo_network_destroy(net);
    for (int i = 0; i < N; i++) {
        dpdo_node_destroy(nodes[i]);
        dpdo_shard_destroy(sh[i]);
    }
    dpdo_loss_destroy(loss);
    dpdo_dataset_destroy(ds);
}

/* ---- no allocation inside step() after round 1 ------------------------------------------- */

static void test_no_alloc(void)
{
    enum { N = 10, D = 12 };
    static fx f;
    fx_make(&f, N, 20, D, 1);
    dpdo_compressor *c = topk(D, 4);
    dpdo_algorithm *a = mk(&f, DPDO_NOISE_FIXED, 300, 0.5, 0.8, c);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
    dpdo__fault_arm(0);
    int rc = DPDO_ROUND;
    for (int t = 0; t < 200 && rc == DPDO_ROUND; t++) rc = dpdo_algorithm_step(a);
    long allocs = dpdo__fault_allocs();
    dpdo__fault_arm(-1);
    CHECK_EQ(rc, DPDO_ROUND);
    CHECK_EQ(allocs, 0);
    dpdo_algorithm_destroy(a);
    dpdo_compressor_destroy(c);
    fx_free(&f);
}

/* ---- clip = inf refuses gradients beyond G (as DP-DDA does) ------------------------------- */

static void test_unbounded_refused(void)
{
    enum { N = 4, D = 3, Q = 10 };
    static fx f;
    fx_make(&f, N, Q, D, 0); /* rows of norm 1: logistic gradients <= 1 */
    for (int lip = 0; lip < 3; lip++) {
        /* lip 0: G = 1 covers the data; 1: G = 0.5 does not; 2: noise off (not private, accepted) */
        dpdo_algorithm_options o;
        dpdo_algorithm_options_init(&o, sizeof o);
        o.noise_mode = lip == 2 ? DPDO_NOISE_NONE : DPDO_NOISE_RIGOROUS;
        o.max_rounds = 50;
        o.epsilon = 1;
        o.delta = 1e-5;
        o.clip = INFINITY;
        o.lipschitz = lip == 1 ? 0.5 : 1.0;
        dpdo_algorithm *a = NULL;
        CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("do-adp")), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, N, f.net, NULL, f.acc, &o), DPDO_OK);
        int rc = dpdo_algorithm_prepare(a);
        if (lip == 1) {
            CHECK_EQ(rc, DPDO_E_INVAL);
            CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "clip = inf");
            CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "> G");
        } else {
            CHECK_MSG(rc == DPDO_OK, "lip %d: %s", lip, dpdo_algorithm_errmsg(a));
            if (lip == 0) CHECK_STR_CONTAINS(dpdo_algorithm_privacy_notes(a), "no clipping");
        }
        /* a finite clip or the default coordinate clamp bounds any data */
        if (lip == 1) {
            CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_CLIP, 0.5), DPDO_OK);
            CHECK_MSG(dpdo_algorithm_prepare(a) == DPDO_OK, "%s", dpdo_algorithm_errmsg(a));
        }
        dpdo_algorithm_destroy(a);
    }
    /* the squared loss has no per-sample bound at all: refused without clipping */
    dpdo_loss *sq = NULL;
    dpdo_node *nodes[N];
    CHECK_EQ(dpdo_loss_create(&sq, dpdo_loss_type_find("squared"), NULL, D), DPDO_OK);
    for (int i = 0; i < N; i++) CHECK_EQ(dpdo_node_create(&nodes[i], f.sh[i], sq, 1.0), DPDO_OK);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.noise_mode = DPDO_NOISE_RIGOROUS;
    o.max_rounds = 50;
    o.clip = INFINITY;
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("do-adp")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(a, nodes, N, f.net, NULL, f.acc, &o), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "per-sample gradients reach inf");
    dpdo_algorithm_destroy(a);
    for (int i = 0; i < N; i++) dpdo_node_destroy(nodes[i]);
    dpdo_loss_destroy(sq);
    fx_free(&f);
}

int main(void)
{
    RUN(test_mechanics);
    RUN(test_reduction);
    RUN(test_single_agent);
    RUN(test_consensus);
    RUN(test_privacy_and_misuse);
    RUN(test_user_network);
    RUN(test_no_alloc);
    RUN(test_unbounded_refused);
    return h_finish();
}
