/* SPDX-License-Identifier: BSD-3-Clause */
/* do_adp_budget: why DO-ADP at the paper's eps = 0.01 ends worse than x = 0,
 * and how much any constant step size can gain (docs/reproductions.md).
 *
 * Logistic regression as in do_adp_logistic (n = 20 agents, q samples each,
 * unit-norm rows, coordinate clip G/sqrt(d) with G = 1, ||x||^2/(2q) inside
 * every per-sample loss, T = 6q rounds, activation p = 0.8, Top-k k/d = 0.3,
 * momentum beta = 0.15) with Theorem 1's noise
 *     sigma^2 = 160 (k/d) p^2 T log(1.25/delta_0) G^2 / (q^2 eps^2)
 * per coordinate. Over T rounds the average model moves by the signal
 * -alpha' p T g (g the mean clipped gradient at 0, alpha' = alpha/(1-beta))
 * plus a Gaussian noise of variance alpha'^2 sigma^2 p T / n per coordinate
 * (a random walk: alpha' p T lambda_max(H) << 1 at these sizes, so nothing
 * contracts it). A second-order model of f around 0 then gives
 *     E f(xbar_T) - f(0) = -alpha' p T |g|^2
 *                          + alpha'^2/2 [ (pT)^2 g'Hg + sigma^2 p T tr(H) / n ],
 * H the Hessian at 0 (1/4 mean a a' + I/q). Its minimum over alpha is the
 * most any constant step can gain over x = 0; the value at alpha = 0.001 is
 * what the paper's step gives. g, g'Hg and tr H are measured on the
 * epsilon-like generator (the first `rows` rows at each d; seed 42 as in
 * do_adp_logistic). The default d = 50, q = 3000 is do_adp_logistic's own
 * setting, where the prediction can be checked against a step-size sweep
 * (do_adp_logistic --figs 3 --alpha A); d = 2000, q = 20000 is the paper's.
 *
 * Usage: do_adp_budget [--rows N] [--eps E] */
#define EX_PROG "do_adp_budget"
#include "common.h"

#define NODES 20
#define P_ACT 0.8
#define KD 0.3
#define BETA 0.15
#define DELTA0 0.01

typedef struct {
    int64_t q, d;
} setting;

static int analyse(setting st, int64_t rows, double eps)
{
    int status = -1;
    dpdo_dataset *ds = NULL;
    double *b = NULL, *g = NULL, *m = NULL;
    dpdo_generate_options go;
    dpdo_generate_options_init(&go, sizeof go);
    go.n = rows;
    go.d = st.d;
    go.seed = 42;
    TRY(dpdo_dataset_create(&ds), "out of memory");
    TRY(dpdo_dataset_generate(ds, "epsilon-like", &go), dpdo_dataset_errmsg(ds));
    b = malloc(sizeof(double) * (size_t)rows);
    m = malloc(sizeof(double) * (size_t)rows);
    g = malloc(sizeof(double) * (size_t)st.d);
    if (!b || !m || !g) goto fail;
    TRY(dpdo_dataset_get_labels(ds, b, rows), dpdo_dataset_errmsg(ds));
    /* grad of log(1 + exp(-b a'x)) at 0 is -b a / 2; the mean, then the clip */
    TRY(dpdo_dataset_gemv(ds, 1, -0.5 / (double)rows, b, rows, 0.0, g, st.d),
        dpdo_dataset_errmsg(ds));
    double clip = 1.0 / sqrt((double)st.d), g2 = 0;
    for (int64_t j = 0; j < st.d; j++) {
        if (g[j] > clip) g[j] = clip;
        if (g[j] < -clip) g[j] = -clip;
        g2 += g[j] * g[j];
    }
    TRY(dpdo_dataset_margins(ds, g, st.d, m, rows), dpdo_dataset_errmsg(ds));
    double aga = 0, a2 = 0;
    for (int64_t i = 0; i < rows; i++) {
        double rn;
        TRY(dpdo_dataset_get_row_norm(ds, i, &rn), dpdo_dataset_errmsg(ds));
        aga += m[i] * m[i] / (double)rows;
        a2 += rn * rn / (double)rows;
    }
    const double q = (double)st.q, T = 6.0 * q, n = NODES, pT = P_ACT * T;
    double gHg = 0.25 * aga + g2 / q, trH = 0.25 * a2 + (double)st.d / q;
    double sigma2 = 160.0 * KD * P_ACT * P_ACT * T * log(1.25 / DELTA0) / (q * q * eps * eps);
    double lin = pT * g2, quad_sig = pT * pT * gHg, quad_noise = sigma2 * pT * trH / n;
    double a_star = lin / (quad_sig + quad_noise); /* alpha' */
    double gain_star = 0.5 * a_star * lin;
    double ap = 0.001 / (1 - BETA);
    double gain_paper = ap * lin - 0.5 * ap * ap * (quad_sig + quad_noise);
    double walk = ap * sqrt(sigma2 * pT / n);
    printf("  d = %-5lld q = %-6lld T = %-6.0f sigma = %-7.4g per coordinate (clip %.4g: "
           "noise/clip %.0f per step)\n",
           (long long)st.d, (long long)st.q, T, sqrt(sigma2), clip, sqrt(sigma2) / clip);
    printf("      |g| = %.4f at 0, tr H = %.3f; at alpha = 0.001 the noise moves every coordinate "
           "of xbar by %.2f (norm %.1f)\n",
           sqrt(g2), trH, walk, walk * sqrt((double)st.d));
    printf("      predicted E f(xbar_T) - f(0): %+.3f at the paper's alpha = 0.001 (noise part "
           "%+.3f); best constant step alpha = %.2g gains %.2g\n",
           -gain_paper, 0.5 * ap * ap * quad_noise,
           a_star * (1 - BETA), gain_star);
    status = 0;
fail:
    free(b);
    free(m);
    free(g);
    dpdo_dataset_destroy(ds);
    return status;
}

int main(int argc, char **argv)
{
    int64_t rows = 20000;
    double eps = 0.01;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rows") && i + 1 < argc) rows = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--eps") && i + 1 < argc) eps = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: do_adp_budget [--rows N] [--eps E]\n");
            return 2;
        }
    }
    if (rows < 100 || !(eps > 0)) {
        fprintf(stderr, "--rows must be >= 100 and --eps > 0\n");
        return 2;
    }
    printf("== DO-ADP at eps = %g, Theorem 1 noise, p = %.1f, k/d = %.1f, n = %d, T = 6q; "
           "second-order model of f around x = 0 (see the source's header)\n",
           eps, P_ACT, KD, NODES);
    const setting S[2] = {{3000, 50}, {20000, 2000}};
    const char *what[2] = {"do_adp_logistic's default setting", "the paper's setting"};
    for (int k = 0; k < 2; k++) {
        printf("  %s:\n", what[k]);
        if (analyse(S[k], rows, eps)) return 1;
    }
    return 0;
}
