/* SPDX-License-Identifier: BSD-3-Clause */
/* make check-long: exactness of the secure samplers at scale (docs/privacy.md "The table sampler").
 *
 * For each case, N draws (default 10^8; DPDO_LONG_N to change) from a keyed (AES) stream:
 *   - chi-square against the exact PMF: the Gaussian N_Z(0, S^2) at S = 3, 50, 2^12 (= 2^12 sqrt d,
 *     d = 1), 183172 (= ceil(2^12 sqrt 2000)) and 2^31, in bins of S/4 (one integer each at S = 3)
 *     on |z| < 4.5 S and both tails in two bins each, [4.5 S, 5 S) and [5 S, inf) (about 340 and 29
 *     expected draws per tail bin at 10^8); the discrete Laplace at T = 2, 50, 2^12, 2^20, 2^30
 *     (T/2 bins on |z| < 12 T, tails [12 T, 14 T) and [14 T, inf)). Bin probabilities: exact sums
 *     over the integers (geometric sums in closed form for the Laplace; for S = 2^31 the
 *     Euler-Maclaurin formula with erfc, error below 10^-20 relative). Critical value: the
 *     chi-square 1 - 1e-6 quantile (Wilson-Hilferty);
 *   - the acceptance rate: the table sampler accepts a candidate with probability L Z / (2^33 B)
 *     exactly; the count of acceptances is binomial: |z| < 5.3 (two-sided 1e-7).
 * Then a PLANTED DEFECT (test-build hook dpdo__stream.exact_bias: the acceptance probability of
 * candidates with |z| < S multiplied by 1 + k 1e-4) at k = 1 and k = 30 on S = 2^12: the run
 * reports which statistic detects it. Exit status: 0 iff every correct case passes and the k = 1
 * defect is detected by at least one statistic. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dpdo/dpdo.h"
#include "rng/rng_impl.h"

enum { MAXB = 128 };

typedef struct {
    int lap;
    double P;
    int nb;
    int64_t lo[MAXB]; /* bin k = [lo[k], lo[k+1]) (lo[0] = -inf, lo[nb] = +inf as sentinels) */
    double pr[MAXB];
} bins_t;

/* sum of f over the integers a..b (a <= b), f = exp(-z^2/(2 S^2)) */
static double gsum(double S, int64_t a, int64_t b)
{
    if (S <= (double)(1 << 21)) { /* directly */
        long double s = 0;
        for (int64_t z = a; z <= b; z++)
            s += expl(-(long double)z * z / (2.0L * S * S));
        return (double)s;
    }
    /* Euler-Maclaurin: integral + (f(a) + f(b))/2 - (f'(a) - f'(b))/12 (next term ~ S^-3 / 720) */
    double r = sqrt(2.0) * S;
    double I = 0.5 * sqrt(M_PI) * r * (erfc((double)a / r) - erfc((double)b / r));
    double fa = exp(-(double)a * a / (r * r)), fb = exp(-(double)b * b / (r * r));
    double dfa = -(double)a / (S * S) * fa, dfb = -(double)b / (S * S) * fb;
    return I + 0.5 * (fa + fb) + (dfb - dfa) / 12;
}

/* sum of exp(-|z|/T) over the integers a..b, 0 <= a <= b (b may be INT64_MAX: to infinity) */
static double lsum(double T, int64_t a, int64_t b)
{
    double q = -expm1(-1.0 / T); /* 1 - r */
    double head = exp(-(double)a / T);
    double tail = b == INT64_MAX ? 0 : exp(-(double)(b + 1) / T);
    return (head - tail) / q;
}

static double fsum(const bins_t *B, int64_t a, int64_t b) /* a <= b, any signs */
{
    if (!B->lap) {
        if (a == INT64_MIN) return gsum(B->P, -b, B->P > 1e6 ? (int64_t)(60 * B->P) : (int64_t)(40 * B->P) + 100);
        if (b == INT64_MAX) return gsum(B->P, a, B->P > 1e6 ? (int64_t)(60 * B->P) : (int64_t)(40 * B->P) + 100);
        return gsum(B->P, a, b);
    }
    if (a >= 0) return lsum(B->P, a, b);
    if (b < 0) return lsum(B->P, -b, a == INT64_MIN ? INT64_MAX : -a);
    return lsum(B->P, 0, b) + lsum(B->P, 1, a == INT64_MIN ? INT64_MAX : -a);
}

static void bins_make(bins_t *B, int lap, double P)
{
    B->lap = lap, B->P = P;
    double w = lap ? P / 2 : P / 4, in = lap ? 12 * P : 4.5 * P, out = lap ? 14 * P : 5 * P;
    if (w < 1) w = 1;
    int64_t e[MAXB];
    int ne = 0;
    e[ne++] = INT64_MIN;
    e[ne++] = -(int64_t)ceil(out) + 1; /* (-inf, -out] */
    e[ne++] = -(int64_t)ceil(in) + 1;  /* (-out, -in] */
    int64_t inner = (int64_t)ceil(in) - 1;
    for (double x = -(double)inner; x < (double)inner; x += w) {
        int64_t v = (int64_t)floor(x);
        if (v > e[ne - 1]) e[ne++] = v;
    }
    e[ne++] = inner + 1;          /* [in, out) */
    e[ne++] = (int64_t)ceil(out); /* [out, inf) */
    B->nb = ne;                   /* bins 0..ne-1: [e[k], e[k+1]) with e[ne] = +inf */
    double Z = 0;
    for (int k = 0; k < ne; k++) {
        int64_t a = e[k], b = k + 1 < ne ? e[k + 1] - 1 : INT64_MAX;
        B->pr[k] = fsum(B, a, b);
        Z += B->pr[k];
        B->lo[k] = e[k];
    }
    for (int k = 0; k < ne; k++)
        B->pr[k] /= Z;
}

static int bin_of(const bins_t *B, int64_t v)
{
    int lo = 0, hi = B->nb - 1; /* largest k with lo[k] <= v */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (B->lo[mid] <= v)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static double crit(int df) /* chi-square 1 - 1e-6 quantile, Wilson-Hilferty */
{
    double k = (double)df, z = 4.7534;
    double t = 1 - 2 / (9 * k) + z * sqrt(2 / (9 * k));
    return k * t * t * t;
}

typedef struct {
    double x2, cr, za;
    int df, valid; /* valid: every expected count >= 5 (else the chi-square is not used) */
} res_t;

static res_t run_case(dpdo_rng *rng, int lap, uint64_t P, int64_t N, int bias, uint64_t round)
{
    static bins_t B;
    bins_make(&B, lap, (double)P);
    static int64_t y[1 << 20];
    long long cnt[MAXB] = {0};
    dpdo__stream st;
    dpdo__stream_open(&st, rng, 0, round, DPDO_PURPOSE_NOISE);
    st.exact_bias = bias;
    for (int64_t done = 0; done < N;) {
        size_t m = (size_t)(N - done < (1 << 20) ? N - done : (1 << 20));
        int rc = lap ? dpdo__stream_dlaplace(&st, P, y, m) : dpdo__stream_dgauss(&st, P, y, m);
        if (rc) {
            fprintf(stderr, "sampler failed (%d)\n", rc);
            exit(2);
        }
        for (size_t i = 0; i < m; i++)
            cnt[bin_of(&B, y[i])]++;
        done += (int64_t)m;
    }
    res_t r;
    r.x2 = 0;
    r.valid = 1;
    for (int k = 0; k < B.nb; k++) {
        double e = (double)N * B.pr[k];
        r.x2 += ((double)cnt[k] - e) * ((double)cnt[k] - e) / e;
        r.valid &= e >= 5;
    }
    r.df = B.nb - 1;
    r.cr = crit(r.df);
    uint64_t L, Bw;
    dpdo__dtab_info(&st, lap, P, &L, &Bw);
    double Pd = (double)P, Z = lap ? 1.0 / tanh(0.5 / Pd) : sqrt(2 * M_PI) * Pd;
    double pa = (double)L * Z / (0x1p33 * (double)Bw), nc = (double)st.exact_cand;
    r.za = ((double)st.exact_acc - nc * pa) / sqrt(nc * pa * (1 - pa));
    printf("%s %-9s %-11llu chi2 %8.1f df %2d (critical %.1f: %s)  tails %lld + %lld observed, %.1f + %.1f expected  "
           "acceptance %llu / %llu, exact rate %.7f, z = %+.2f (%s)  MPFR %llu of %llu slow comparisons%s\n",
           bias ? "DEFECT" : "exact ", lap ? "dlaplace" : "dgauss", (unsigned long long)P, r.x2, r.df, r.cr,
           !r.valid ? "not valid: expected counts below 5 at this N" : r.x2 < r.cr ? "pass" : "FAIL", cnt[0] + cnt[1], cnt[B.nb - 1] + cnt[B.nb - 2],
           (double)N * (B.pr[0] + B.pr[1]), (double)N * (B.pr[B.nb - 1] + B.pr[B.nb - 2]),
           (unsigned long long)st.exact_acc, (unsigned long long)st.exact_cand, pa, r.za,
           fabs(r.za) < 5.3 ? "pass" : "FAIL", (unsigned long long)st.exact_slow, (unsigned long long)st.exact_cmp,
           bias ? " [planted]" : "");
    fflush(stdout);
    return r;
}

int main(void)
{
    const char *ne = getenv("DPDO_LONG_N");
    int64_t N = ne ? (int64_t)atof(ne) : 100000000;
    dpdo_rng *rng = NULL;
    if (dpdo_rng_create(&rng, NULL, NULL, 2026)) return 2;
    unsigned char key[32], has = 1;
    for (int b = 0; b < 32; b++)
        key[b] = (unsigned char)(b * 13 + 5);
    rng->keys = key, rng->has_key = &has, rng->nkeys = 1; /* keyed: AES-256-CTR, as secure runs */
    printf("# check-long: %lld draws per case (DPDO_LONG_N), significance 1e-6 (chi-square), two-sided 1e-7 (acceptance)\n",
           (long long)N);
    const struct {
        int lap;
        uint64_t P;
    } cases[] = {{0, 3},     {0, 50},       {0, 4096},         {0, 183172},       {0, UINT64_C(1) << 31},
                 {1, 2},     {1, 50},       {1, 4096},         {1, UINT64_C(1) << 20}, {1, UINT64_C(1) << 30}};
    int bad = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        res_t r = run_case(rng, cases[c].lap, cases[c].P, N, 0, 10 + c);
        bad |= (r.valid && !(r.x2 < r.cr)) || !(fabs(r.za) < 5.3);
    }
    /* the planted defect */
    res_t d1 = run_case(rng, 0, 4096, N, 1, 100);
    res_t d30 = run_case(rng, 0, 4096, N, 30, 101);
    int det1 = (d1.valid && !(d1.x2 < d1.cr)) || !(fabs(d1.za) < 5.3);
    printf("# planted defect 1e-4: %s (chi-square %s, acceptance %s); 3e-3: chi-square %s, acceptance %s\n",
           det1 ? "DETECTED" : "NOT detected", d1.x2 < d1.cr ? "silent" : "detects",
           fabs(d1.za) < 5.3 ? "silent" : "detects", d30.x2 < d30.cr ? "silent" : "detects",
           fabs(d30.za) < 5.3 ? "silent" : "detects");
    printf("# %s\n", bad ? "FAIL: a correct case failed" : det1 ? "ok" : "FAIL: the planted defect was not detected");
    rng->keys = NULL;
    dpdo_rng_destroy(rng);
    return bad || !det1;
}
