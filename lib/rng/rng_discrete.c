/* SPDX-License-Identifier: BSD-3-Clause */
/* Exact discrete Gaussian and discrete Laplace samplers and the power-of-two grid release
 * (docs/privacy.md "Floating-point-safe noise").
 *
 * Every random decision is an exact comparison of fresh uniform bits with a rational number:
 *   - bern_ratio(N, D): Bernoulli(N/D) for 128-bit integers, decided by comparing the binary
 *     expansion of N/D with random bits one at a time (2 bits on average, exact);
 *   - bern_exp(N, D): Bernoulli(exp(-N/D)), Canonne-Kamath-Steinke 2020 (CKS) Algorithm 1:
 *     exp(-1) coins for the integer part, then for x = N/D in [0,1): K = 1; while
 *     Bernoulli(x/K) K++; return K odd, with Bernoulli(x/K) = Bernoulli(x) AND Bernoulli(1/K);
 *   - dlap(t): CKS Algorithm 2 (discrete Laplace, P(y) ~ exp(-|y|/t), t a positive integer);
 *   - dgauss(S): CKS Algorithm 3 (discrete Gaussian N_Z(0, S^2), S a positive integer,
 *     candidates from dlap(S + 1)); its acceptance probability exp(-(|Y| - S^2/(S+1))^2 / (2 S^2))
 *     is split as exp(-q^2/2) exp(-q r / M) exp(-r^2 / (2 M^2)) with A = ||Y|(S+1) - S^2|,
 *     M = S (S+1), q = A div M, r = A mod M (exact: (A/M)^2 / 2 = q^2/2 + q r/M + r^2/(2M^2)),
 *     three independent exact coins whose product has the required probability.
 * No floating point and no libm enters any decision, so the output distribution is exactly the
 * stated one (for a uniform bit source). A "fast path" that decides exp coins with a double
 * approximation of exp(-x) and a margin is NOT exact if the undecided case simply falls back to
 * a fresh exact coin (it then returns 1 with probability l + w p instead of p, where [l, l + w)
 * is the undecided band), which is why it is not used here (docs/privacy.md). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "rng_impl.h"

typedef unsigned __int128 u128;

enum { SRC_BLOCKS = 16 }; /* 256 bytes = 4 ChaCha20 blocks per refill */

typedef struct {
    dpdo__stream *s;
    uint32_t w[4 * SRC_BLOCKS];
    int nw;        /* unused 64-bit words left: w64(idx) for idx = 2 * SRC_BLOCKS - nw .. */
    uint64_t bits; /* bit reservoir */
    int nbits;
} src_t;

static void src_init(src_t *r, dpdo__stream *s)
{
    r->s = s;
    r->nw = 0;
    r->nbits = 0;
    r->bits = 0;
}

static inline uint64_t src_u64(src_t *r)
{
    if (r->nw == 0) {
        dpdo__stream_blocks(r->s, r->w, SRC_BLOCKS);
        r->nw = 2 * SRC_BLOCKS;
    }
    int i = 2 * SRC_BLOCKS - r->nw--;
    return (uint64_t)r->w[2 * i] | (uint64_t)r->w[2 * i + 1] << 32;
}

static inline unsigned src_bit(src_t *r)
{
    if (r->nbits == 0) {
        r->bits = src_u64(r);
        r->nbits = 64;
    }
    unsigned b = (unsigned)(r->bits & 1u);
    r->bits >>= 1;
    r->nbits--;
    return b;
}

/* Uniform on {0..n-1}, n >= 1 (Lemire's nearly divisionless method, exact). */
static uint64_t src_below(src_t *r, uint64_t n)
{
    if (n <= 1) return 0;
    u128 m = (u128)src_u64(r) * n;
    uint64_t l = (uint64_t)m;
    if (l < n) {
        uint64_t t = (0 - n) % n;
        while (l < t) {
            m = (u128)src_u64(r) * n;
            l = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

/* Bernoulli(N/D), D >= 1, D < 2^127: U < N/D for U uniform on [0,1), compared bit by bit. */
static int bern_ratio64(src_t *r, uint64_t N, uint64_t D) /* the same with D < 2^63 */
{
    uint64_t rem = N;
    for (;;) {
        rem <<= 1;
        unsigned digit = rem >= D;
        if (digit) rem -= D;
        unsigned b = src_bit(r);
        if (b != digit) return b < digit;
        if (rem == 0) return 0;
    }
}

static int bern_ratio(src_t *r, u128 N, u128 D)
{
    if (N >= D) return 1;
    if (N == 0) return 0;
    if (D < ((u128)1 << 63)) return bern_ratio64(r, (uint64_t)N, (uint64_t)D);
    u128 rem = N;
    for (;;) {
        rem <<= 1;
        unsigned digit = rem >= D;
        if (digit) rem -= D;
        unsigned b = src_bit(r);
        if (b != digit) return b < digit; /* first differing bit: U < N/D iff U's bit is 0 */
        if (rem == 0) return 0;           /* N/D's expansion ended: U >= N/D (U = N/D has probability 0) */
    }
}

/* Bernoulli(1/K) for small K: the same comparison. */
static inline int bern_inv(src_t *r, uint64_t K) { return K <= 1 ? 1 : bern_ratio(r, 1, K); }

/* Bernoulli(exp(-1)) (CKS Algorithm 1 with x = 1: Bernoulli(1/1) = 1). */
static int bern_exp1(src_t *r)
{
    uint64_t K = 2;
    while (bern_inv(r, K)) K++;
    return (int)(K & 1);
}

/* Bernoulli(exp(-N/D)), D >= 1, D < 2^127. */
static int bern_exp(src_t *r, u128 N, u128 D)
{
    while (N >= D) { /* exp(-N/D) = exp(-1) exp(-(N-D)/D): stops at the first failure */
        if (!bern_exp1(r)) return 0;
        N -= D;
    }
    if (N == 0) return 1;
    uint64_t K = 1;
    while (bern_ratio(r, N, D) && bern_inv(r, K)) K++;
    return (int)(K & 1);
}

#define V_CAP (UINT64_C(1) << 62)

/* CKS Algorithm 2: P(y) proportional to exp(-|y|/t), t >= 1, t <= 2^40. Returns 0, or -1 in the
 * event |y| >= 2^62 (probability below exp(-2^22)), where no value is returned. */
static int dlap(src_t *r, uint64_t t, int64_t *y)
{
    for (;;) {
        uint64_t U = src_below(r, t);
        if (!bern_exp(r, U, t)) continue;
        uint64_t V = 0;
        while (bern_exp1(r)) {
            V++;
            if (V >= V_CAP / t) return -1;
        }
        uint64_t X = U + t * V;
        unsigned B = src_bit(r);
        if (B && X == 0) continue;
        *y = B ? -(int64_t)X : (int64_t)X;
        return 0;
    }
}

/* CKS Algorithm 3: N_Z(0, S^2), 1 <= S <= 2^31. -1 as dlap. */
static int dgauss(src_t *r, uint64_t S, int64_t *y)
{
    const u128 S2 = (u128)S * S, M = (u128)S * (S + 1);
    for (;;) {
        int64_t Y;
        if (dlap(r, S + 1, &Y)) return -1;
        u128 ay = (u128)(Y < 0 ? -(uint64_t)Y : (uint64_t)Y) * (S + 1);
        u128 A = ay >= S2 ? ay - S2 : S2 - ay;
        u128 q = A / M, rr = A % M;
        /* exp(-r^2 / (2 M^2)) first: it is the coin that usually decides */
        if (!bern_exp(r, rr * rr, 2 * M * M)) continue;
        if (q == 0) {
            *y = Y;
            return 0;
        }
        if (q < (UINT64_C(1) << 32)) {
            if (!bern_exp(r, q * q, 2)) continue;
        } else { /* exp(-q^2/2) = exp(-q/2)^q; practically never reached */
            int ok = 1;
            for (u128 k = 0; k < q && ok; k++) ok = bern_exp(r, q, 2);
            if (!ok) continue;
        }
        if (!bern_exp(r, q * rr, M)) continue;
        *y = Y;
        return 0;
    }
}

#define S_MIN (UINT64_C(1) << 10)
#define S_MAX (UINT64_C(1) << 31)
#define T_MAX (UINT64_C(1) << 40)

int dpdo__stream_dgauss(dpdo__stream *s, uint64_t S, int64_t *out, size_t n)
{
    if (S < 1 || S > S_MAX) return DPDO_E_INVAL;
    src_t r;
    src_init(&r, s);
    for (size_t i = 0; i < n; i++)
        if (dgauss(&r, S, &out[i])) return DPDO_E_NUMERIC;
    return DPDO_OK;
}

int dpdo__stream_dlaplace(dpdo__stream *s, uint64_t T, int64_t *out, size_t n)
{
    if (T < 1 || T > T_MAX) return DPDO_E_INVAL;
    src_t r;
    src_init(&r, s);
    for (size_t i = 0; i < n; i++)
        if (dlap(&r, T, &out[i])) return DPDO_E_NUMERIC;
    return DPDO_OK;
}

#define K_LIMIT 4503599627370496.0 /* 2^52 */

static int grid_check(double gamma, char *err)
{
    int ex;
    double m = frexp(gamma, &ex);
    if (!(m == 0.5) || ex - 1 < -1000 || ex - 1 > 900)
        return dpdo__err(err, DPDO_E_INVAL, "grid %g is not a power of two in [2^-1000, 2^900]", gamma);
    return DPDO_OK;
}

static int grid_add(dpdo__stream *s, uint64_t P, double gamma, double *x, size_t n, int gauss, char *err)
{
    int rc = grid_check(gamma, err);
    if (rc) return rc;
    if (gauss ? (P < S_MIN || P > S_MAX) : (P < 1 || P > T_MAX))
        return dpdo__err(err, DPDO_E_INVAL, "noise %llu grid steps is out of range", (unsigned long long)P);
    src_t r;
    src_init(&r, s);
    for (size_t i = 0; i < n; i++) {
        double k = rint(x[i] / gamma); /* x / gamma is exact (power of two) unless it underflows */
        if (!(fabs(k) < K_LIMIT))
            return dpdo__err(err, DPDO_E_NUMERIC,
                             "coordinate %zu: value %g is not finite or exceeds 2^52 grid steps of %g", i, x[i], gamma);
        int64_t z;
        if (gauss ? dgauss(&r, P, &z) : dlap(&r, P, &z))
            return dpdo__err(err, DPDO_E_NUMERIC, "coordinate %zu: noise beyond 2^62 grid steps (an event of "
                             "probability below exp(-2^22)); nothing released", i);
        double v = k + (double)z; /* |z| < 2^62: exact when |k + z| < 2^52, checked below */
        if (!(fabs(v) < K_LIMIT) || (int64_t)v - (int64_t)k != z)
            return dpdo__err(err, DPDO_E_NUMERIC,
                             "coordinate %zu: value + noise exceeds 2^52 grid steps of %g; nothing released", i, gamma);
        x[i] = v * gamma; /* exact: an integer below 2^52 times a power of two */
    }
    return DPDO_OK;
}

int dpdo__grid_add_dgauss(dpdo__stream *s, uint64_t S, double gamma, double *x, size_t n, char *err)
{
    return grid_add(s, S, gamma, x, n, 1, err);
}

int dpdo__grid_add_dlaplace(dpdo__stream *s, uint64_t T, double gamma, double *x, size_t n, char *err)
{
    return grid_add(s, T, gamma, x, n, 0, err);
}

int dpdo__grid_choose(double sigma, double sens, size_t n, double eta, int l1, double *gamma, uint64_t *S,
                      char *err)
{
    if (!(sigma > 0) || !isfinite(sigma) || !(sens > 0) || !isfinite(sens) || n == 0 || !(eta > 0 && eta < 1))
        return dpdo__err(err, DPDO_E_INVAL, "grid: sigma %g, sensitivity %g, %zu coordinates: need finite > 0",
                         sigma, sens, n);
    double spread = l1 ? (double)n : sqrt((double)n);
    double g1 = eta * sens / spread, g2 = l1 ? INFINITY : sigma / (double)S_MIN;
    double g = g1 < g2 ? g1 : g2;
    int ex;
    frexp(g, &ex);             /* g = m 2^ex, m in [0.5, 1) */
    double gm = ldexp(1.0, ex - 1); /* largest power of two <= g */
    if (gm > g) gm = ldexp(1.0, ex - 2);
    if (ex - 1 < -1000 || ex - 1 > 900)
        return dpdo__err(err, DPDO_E_UNSUPPORTED, "grid: no usable power-of-two grid for sigma %g, sensitivity %g",
                         sigma, sens);
    double steps = ceil(sigma * (1.0 + eta) / gm);
    double cap = l1 ? (double)T_MAX : (double)S_MAX;
    if (!(steps <= cap))
        return dpdo__err(err, DPDO_E_UNSUPPORTED,
                         "grid: noise %g is %.3g grid steps of %g (limit %.0f): noise too large relative to the "
                         "sensitivity %g over %zu coordinates for the exact sampler", sigma, steps, gm, cap, sens, n);
    *gamma = gm;
    *S = (uint64_t)steps;
    return DPDO_OK;
}
