/* SPDX-License-Identifier: BSD-3-Clause */
/* Exact discrete Gaussian and discrete Laplace samplers and the power-of-two grid release
 * (docs/privacy.md "Floating-point-safe noise", section 11).
 *
 * Every random decision is the exact event {U < p} for a uniform real U in [0,1) and a number
 * p = exp(-x) with x rational (known exactly as integers), decided by LAZY COMPARISON:
 *   - U's first 64 bits u are drawn (U in [u 2^-64, (u+1) 2^-64)); p is approximated in double
 *     precision with a rigorous relative error bound eps (the rounding of x into double, glibc
 *     exp's documented < 1 ulp, the products; eps = (x + 1) 2^-48 is several times the sum);
 *     if U's interval lies below p (1 - eps) or above p (1 + eps) the event is decided, exactly;
 *   - otherwise (probability about 2 eps, ~2^-47) U is refined with 64 more random bits at a
 *     time and p is bracketed with MPFR (mpfr_exp is correctly rounded: with x bracketed by
 *     directed rounding, exp(-x_hi) rounded down <= p <= exp(-x_lo) rounded up) at precision
 *     64 bits above U's, until U's interval lies on one side of the bracket.
 * So the fast path and the fallback decide the SAME event {U < p}; the fallback is not a fresh
 * coin (that would be biased), it continues the comparison with more bits of the same U.
 *   - geom(t): G = floor(-t log U), so P(G >= k) = P(U < exp(-k/t)) = exp(-k/t) exactly: G is
 *     found from a double log with an error bound on -t log U; when an integer lies within the
 *     bound, G is settled by lazy comparisons U < exp(-k/t) of the same U;
 *   - dlap(t): G from geom(t), a sign bit, (-, 0) rejected: P(y) ~ exp(-|y|/t) (as CKS 2020
 *     Algorithm 2);
 *   - dgauss(S): Canonne-Kamath-Steinke 2020 Algorithm 3, N_Z(0, S^2): candidate Y = dlap(S+1),
 *     accepted with probability exp(-(|Y| - S^2/(S+1))^2 / (2 S^2)) = exp(-(A/M)^2 / 2),
 *     A = ||Y|(S+1) - S^2|, M = S (S+1), one lazy comparison with a fresh U.
 * A test build (DPDO_FAULT_INJECTION) can widen the band (dpdo__stream.exact_widen) so that
 * MPFR decides most comparisons, and keeps the previous all-integer CKS sampler (Algorithm 1
 * coins from exact rational Bernoullis) as dpdo__stream_dgauss_cks/_dlaplace_cks for a
 * cross-check. */
#include <gmp.h>
#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <string.h>

#include "rng_dtab.h"
#include "rng_impl.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DPDO_HAVE_X86_SIMD 1
#include <immintrin.h>
#endif

/* Keystream refills: the first of 64 blocks (1 KiB), then doubling to SRC_BLOCKS (8 KiB): a short
 * call reads little beyond its need, a long one refills rarely (each refill is one OpenSSL call,
 * ~0.1 us of set-up; the key schedule is made once per sampler call, src_init). */
enum { SRC_BLOCKS = 512, SRC_FIRST = 64 };

typedef struct {
    dpdo__stream *s;
    void *cipher; /* keyed streams: the AES context (dpdo__stream_cipher_new), else NULL */
    uint32_t w[4 * SRC_BLOCKS];
    int len;       /* words of the last refill: w[0 .. len) */
    int nw;        /* unused 32-bit words left: w[len - nw] .. */
    int next;      /* blocks of the next refill */
    size_t want;   /* blocks the caller expects to need (0: unknown) */
    uint64_t bits; /* bit reservoir */
    int nbits;
    double widen;         /* band multiplier: 1, or 2^exact_widen in a test build */
    double bias;          /* test build: the planted acceptance defect (1 = none) */
    int simd;             /* the CPU runs the AVX-512 candidate kernel (F, DQ, VL, BW) */
    uint64_t ncmp, nslow; /* lazy comparisons made / decided by MPFR (added to s at the end) */
    uint64_t ncand, nacc; /* table sampler: candidates drawn / accepted (added to s at the end) */
} src_t;

static void src_init(src_t *r, dpdo__stream *s)
{
    r->s = s;
    r->cipher = dpdo__stream_cipher_new(s);
    r->len = r->nw = 0;
    r->next = SRC_FIRST;
    r->want = 0;
    r->nbits = 0;
    r->bits = 0;
    r->widen = 1.0;
    r->bias = 1.0;
#ifdef DPDO_HAVE_X86_SIMD
    /* libgcc's CPU model (filled by its constructor, includes the OS's XSAVE support) */
    r->simd = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
              __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
#else
    r->simd = 0;
#endif
#ifdef DPDO_FAULT_INJECTION
    if (s->exact_widen > 0) r->widen = ldexp(1.0, s->exact_widen > 47 ? 47 : s->exact_widen);
    if (s->exact_bias) r->bias = 1.0 + 1e-4 * (double)s->exact_bias;
    if (s->exact_scalar) r->simd = 0;
#endif
    r->ncmp = r->nslow = r->ncand = r->nacc = 0;
}

static void src_done(src_t *r)
{
    r->s->exact_cmp += r->ncmp;
    r->s->exact_slow += r->nslow;
    r->s->exact_cand += r->ncand;
    r->s->exact_acc += r->nacc;
    dpdo__stream_cipher_free(r->cipher);
    r->cipher = NULL;
}

static void __attribute__((noinline)) src_refill(src_t *r)
{
    int nb = r->next;
    if (r->want > 0) { /* the caller's estimate of its need, then small refills */
        nb = r->want < SRC_BLOCKS ? (int)r->want : SRC_BLOCKS;
        r->want -= (size_t)nb;
        if (r->want == 0) r->next = 16;
    } else if (r->next < SRC_BLOCKS) {
        r->next *= 2;
    }
    dpdo__stream_blocks_c(r->s, r->cipher, r->w, (size_t)nb);
    r->len = r->nw = 4 * nb;
}

/* The keystream as a sequence of 32-bit words, in order. */
static inline uint32_t src_u32(src_t *r)
{
    if (r->nw == 0) src_refill(r);
    return r->w[r->len - r->nw--];
}

/* Two words, the first as the low half (the keystream's little-endian 64-bit word when aligned). */
static inline uint64_t src_u64(src_t *r)
{
    if (r->nw >= 2) {
        int i = r->len - r->nw;
        r->nw -= 2;
        return (uint64_t)r->w[i] | (uint64_t)r->w[i + 1] << 32;
    }
    uint64_t lo = src_u32(r);
    return lo | (uint64_t)src_u32(r) << 32;
}

/* n words into out, in keystream order. */
static inline void src_words(src_t *r, uint32_t *out, int n)
{
    while (n > 0) {
        if (r->nw == 0) src_refill(r);
        int k = n < r->nw ? n : r->nw;
        memcpy(out, r->w + r->len - r->nw, (size_t)k * sizeof *out);
        r->nw -= k, out += k, n -= k;
    }
}

/* used by the test build's reference sampler only (clang warns about unused static inlines) */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((unused))
#endif
static inline unsigned
src_bit(src_t *r)
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

/* ---- lazy comparison --------------------------------------------------------------------- */

enum { UW_MAX = 64 }; /* U known to at most 4096 bits; needing more has probability < 2^-4000 */

typedef struct {
    uint64_t w[UW_MAX]; /* U = 0.w[0] w[1] ... in binary, w[0] most significant */
    int nw;             /* words drawn so far */
} unif_t;

/* The exponent x, exactly: x = n / d (sq = 0) or (n / d)^2 / 2 (sq = 1); d >= 1. */
typedef struct {
    u128 n, d;
    int sq;
} xq_t;

static void mpz_set_u128(mpz_t z, u128 v)
{
    uint64_t w[2] = {(uint64_t)(v >> 64), (uint64_t)v};
    mpz_import(z, 2, 1, sizeof w[0], 0, 0, w);
}

/* x rounded in direction rnd (MPFR_RNDD / MPFR_RNDU) at out's precision. */
static void xq_mpfr(mpfr_t out, xq_t x, mpfr_rnd_t rnd)
{
    mpz_t z;
    mpfr_t n, d;
    mpz_init(z);
    mpfr_inits2(130, n, d, (mpfr_ptr)0);
    mpz_set_u128(z, x.n);
    mpfr_set_z(n, z, MPFR_RNDN); /* exact: 128 bits fit */
    mpz_set_u128(z, x.d);
    mpfr_set_z(d, z, MPFR_RNDN);
    mpfr_div(out, n, d, rnd);
    if (x.sq) { /* n/d >= 0: squaring and halving keep the direction */
        mpfr_sqr(out, out, rnd);
        mpfr_div_2ui(out, out, 1, rnd);
    }
    mpfr_clears(n, d, (mpfr_ptr)0);
    mpz_clear(z);
}

/* A factor of p: p = exp(-x) (a / b) 2^e (the table sampler's acceptance); a, b >= 1. */
typedef struct {
    uint64_t a, b;
    int64_t e;
} fac_t;

/* The fallback: U < exp(-x) f decided with MPFR brackets of exp(-x) f (f NULL: 1), refining U.
 * 1, 0, or -1 if U would need more than UW_MAX words. */
static int cmp_slow(src_t *r, unif_t *U, xq_t x, const fac_t *f)
{
    r->nslow++;
    mpz_t z;
    mpfr_t xl, xh, pl, ph, ul, uh;
    mpz_init(z);
    mpfr_inits2(64, xl, xh, pl, ph, ul, uh, (mpfr_ptr)0);
    int res = -1;
    for (;;) {
        mpfr_prec_t kb = (mpfr_prec_t)64 * U->nw, P = kb + 64;
        mpfr_set_prec(xl, P), mpfr_set_prec(xh, P), mpfr_set_prec(pl, P), mpfr_set_prec(ph, P);
        mpfr_set_prec(ul, kb + 2), mpfr_set_prec(uh, kb + 2);
        xq_mpfr(xl, x, MPFR_RNDD); /* xl <= x <= xh */
        xq_mpfr(xh, x, MPFR_RNDU);
        mpfr_neg(xl, xl, MPFR_RNDN), mpfr_neg(xh, xh, MPFR_RNDN); /* exact */
        mpfr_exp(pl, xh, MPFR_RNDD);                              /* pl <= exp(-x) <= ph */
        mpfr_exp(ph, xl, MPFR_RNDU);
        if (f) { /* pl <= exp(-x) a / b 2^e <= ph: directed roundings, the power of two exact */
            mpz_set_u128(z, f->a);
            mpfr_mul_z(pl, pl, z, MPFR_RNDD), mpfr_mul_z(ph, ph, z, MPFR_RNDU);
            mpz_set_u128(z, f->b);
            mpfr_div_z(pl, pl, z, MPFR_RNDD), mpfr_div_z(ph, ph, z, MPFR_RNDU);
            mpfr_mul_2si(pl, pl, (long)f->e, MPFR_RNDD),
                mpfr_mul_2si(ph, ph, (long)f->e, MPFR_RNDU);
        }
        mpz_import(z, (size_t)U->nw, 1, sizeof U->w[0], 0, 0, U->w);
        mpfr_set_z_2exp(ul, z, -kb, MPFR_RNDN); /* exact: U >= ul */
        mpz_add_ui(z, z, 1);
        mpfr_set_z_2exp(uh, z, -kb, MPFR_RNDN); /* exact: U < uh */
        if (mpfr_cmp(uh, pl) <= 0) {
            res = 1;
            break;
        }
        if (mpfr_cmp(ul, ph) >= 0) {
            res = 0;
            break;
        }
        if (U->nw == UW_MAX) break;
        U->w[U->nw++] = src_u64(r);
    }
    mpfr_clears(xl, xh, pl, ph, ul, uh, (mpfr_ptr)0);
    mpz_clear(z);
    mpfr_free_cache(); /* MPFR's constant caches: keep the library free of lasting state */
    return res;
}

/* 1 iff U < exp(-x) (U as drawn so far, refined if needed), 0 if not, -1 as cmp_slow.
 * xd: x in double with relative error below 2^-49 (the callers: n, d, a reciprocal or quotient,
 * a product, a square: at most 9.1 roundings of 2^-53). The band: a = exp(-xd) has relative error
 * below x 2^-49 (1.0001) + 2^-52 (glibc exp < 1 ulp), lo and hi two roundings of 2^-53 more:
 * eps = (xd + 1) 2^-48 covers all of them (exp(-xd) for xd > 700 is replaced by [0, 2^-1000]). */
/* The band for p = exp(-x) from xd (see cmp_exp): U < p is certain if u < *lt (then
 * (u + 1) 2^-64 <= lo <= p), U >= p is certain if u > *ht (then u 2^-64 > hi >= p); *ht =
 * UINT64_MAX when hi >= 1 (never certain). */
/* band2: the same for p = exp(-y) with y computed with absolute error below ey 2^-49 (band: y =
 * xd, ey = xd). */
static inline void band2(double xd, double ey, double widen, uint64_t *lt, uint64_t *ht)
{
    double lo, hi;
    if (xd > 700) { /* x > 699.9: p < 2^-1009 */
        lo = 0;
        hi = 0x1p-1000;
    } else {
        double a = exp(-xd), eps = (ey + 1) * 0x1p-48 * widen;
        if (eps > 0.5) eps = 0.5;
        lo = a * (1 - eps);
        hi = a * (1 + eps);
    }
    double los = lo * 0x1p64, his = hi * 0x1p64;     /* exact scalings; 0 <= lo < 1 */
    *lt = los < 0x1p64 ? (uint64_t)los : UINT64_MAX; /* truncation = floor */
    *ht = his < 0x1p64 ? (uint64_t)his : UINT64_MAX;
}

static inline void band(double xd, double widen, uint64_t *lt, uint64_t *ht)
{
    band2(xd, xd, widen, lt, ht);
}

static inline int cmp_exp(src_t *r, unif_t *U, xq_t x, double xd)
{
    r->ncmp++;
    if (x.n == 0) return 1; /* p = 1 > U */
    uint64_t lt, ht;
    band(xd, r->widen, &lt, &ht);
    uint64_t u = U->w[0];
    if (u < lt) return 1;
    if (u > ht) return 0;
    return cmp_slow(r, U, x, NULL);
}

#define V_CAP (UINT64_C(1) << 62)

/* G = floor(-t log U): P(G >= k) = P(U < exp(-k/t)) = exp(-k/t), t >= 1, t <= 2^40. The slow
 * part: an integer lies within the error bound of the double estimate L (or u = 0): settle G
 * with exact lazy comparisons of the same U, starting from the estimate. 0, or -1 if G >= 2^62
 * (probability exp(-2^62 / t) <= exp(-2^22)) or U ran out of words. */
static int __attribute__((noinline))
geom_slow(src_t *r, uint64_t t, uint64_t u, double L, uint64_t *g)
{
    unif_t U;
    U.w[0] = u;
    U.nw = 1;
    const double td = (double)t;
    uint64_t k = !(L < (double)V_CAP) ? (uint64_t)(td * 44.37)
                 : L > 0              ? (uint64_t)L
                                      : 0; /* 64 ln 2 */
    if (k >= V_CAP - 1) k = V_CAP - 2;
    for (; k > 0; k--) { /* want U < exp(-k/t), i.e. G >= k */
        int c = cmp_exp(r, &U, (xq_t){k, t, 0}, (double)k / td);
        if (c < 0) return -1;
        if (c) break;
    }
    for (;;) { /* G >= k; is G >= k + 1? */
        if (k + 1 >= V_CAP) return -1;
        int c = cmp_exp(r, &U, (xq_t){k + 1, t, 0}, (double)(k + 1) / td);
        if (c < 0) return -1;
        if (!c) break;
        k++;
    }
    *g = k;
    return 0;
}

enum { NB = 64 }; /* candidates per batch: independent work the CPU overlaps */

#define T32_MAX (UINT64_C(1) << 22) /* up to this t, U's first 32 bits usually settle G */

/* Up to NB discrete Laplace draws P(y) ~ exp(-|y|/t) into y (those not rejected as (-, 0), as
 * CKS 2020 Algorithm 2): the count, or -1 (see geom_slow). Every candidate uses its own U, read
 * lazily: for t <= 2^22 its first 32 bits (G is settled by them unless an integer lies within the
 * error bound, probability about 2 e <= 2^-8), then 32 more, then (geom_slow) 64 at a time. */
static int lap_batch(src_t *r, uint64_t t, int64_t *y)
{
    uint64_t G[NB], u[NB];
    double L[NB];
    unsigned char slow[NB];
    const double td = (double)t; /* exact: t <= 2^40 */
    int k32 = t <= T32_MAX;
    if (k32) {
        uint32_t w[NB];
        src_words(r, w, NB);
        for (int j = 0; j < NB; j++) {
            /* U in [u 2^-32, (u+1) 2^-32): |log U - log(u 2^-32)| < log(1 + 1/u) < 1/u; (double)u
             * is exact, log (< 1 ulp relative), the product (2^-53): |L - (-t log U)| < e. */
            double ud = (double)w[j];
            double l = -td * log(ud * 0x1p-32);
            double e = (td * (2.0 / ud) + (l + td) * 0x1p-48) * r->widen;
            double a = l - e, b = l + e;
            int ok = a >= 0 && b < (double)V_CAP; /* u = 0: l = +inf, not ok */
            uint64_t ka = ok ? (uint64_t)a : 0, kb = ok ? (uint64_t)b : 1; /* truncation = floor */
            G[j] = ka;
            u[j] = w[j];
            slow[j] = ka != kb;
        }
    } else {
        for (int j = 0; j < NB; j++)
            u[j] = src_u64(r);
        for (int j = 0; j < NB; j++) {
            /* U in [u 2^-64, (u+1) 2^-64): |log U - log(u 2^-64)| < 1/u; (double)u, log (< 1 ulp
             * relative), the product: relative 2^-53, 2^-52, 2^-53: |L - (-t log U)| < e. */
            double ud = (double)u[j];
            double l = -td * log(ud * 0x1p-64);
            double e = (td * (2.0 / ud) + (l + td) * 0x1p-48) * r->widen;
            double a = l - e, b = l + e;
            int ok = a >= 0 && b < (double)V_CAP;
            uint64_t ka = ok ? (uint64_t)a : 0, kb = ok ? (uint64_t)b : 1;
            G[j] = ka;
            L[j] = l;
            slow[j] = ka != kb;
        }
    }
    uint64_t sign = src_u64(r);
    int m = 0;
    for (int j = 0; j < NB; j++) {
        if (__builtin_expect(slow[j], 0)) {
            if (k32) { /* U's bits 33..64, then the 64-bit estimate */
                u[j] = u[j] << 32 | src_u32(r);
                double ud = (double)u[j];
                double l = -td * log(ud * 0x1p-64);
                double e = (td * (2.0 / ud) + (l + td) * 0x1p-48) * r->widen;
                double a = l - e, b = l + e;
                int ok = a >= 0 && b < (double)V_CAP;
                uint64_t ka = ok ? (uint64_t)a : 0, kb = ok ? (uint64_t)b : 1;
                G[j] = ka;
                L[j] = l;
                slow[j] = ka != kb;
            }
            if (slow[j] && geom_slow(r, t, u[j], L[j], &G[j])) return -1;
        }
        uint64_t B =
            (sign >> j) & 1u; /* branch-free: the sign is a fair coin, a branch mispredicts half */
        y[m] = (int64_t)((G[j] ^ (0 - B)) + B); /* -G if B (two's complement), G < 2^62 */
        m += (int)!(B & (G[j] == 0));
    }
    return m;
}

/* n discrete Laplace draws, 1 <= t <= 2^40. 0 or -1. */
static int dlap_n(src_t *r, uint64_t t, int64_t *out, size_t n)
{
    int64_t y[NB];
    size_t f = 0;
    while (f < n) {
        int m = lap_batch(r, t, y);
        if (m < 0) return -1;
        for (int j = 0; j < m && f < n; j++)
            out[f++] = y[j];
    }
    return 0;
}

/* n draws of N_Z(0, S^2), 1 <= S <= 2^31 (CKS Algorithm 3: candidate Y from the discrete
 * Laplace with t = S + 1, accepted iff U < exp(-(A/M)^2 / 2), A = ||Y|(S+1) - S^2|, M = S (S+1),
 * U fresh). Accepted candidates are kept in order, the surplus of the last batch dropped
 * (independent of the kept ones). 0 or -1 (see geom_slow). */
static int dgauss_n(src_t *r, uint64_t S, int64_t *out, size_t n)
{
    const u128 S2 = (u128)S * S, M = (u128)S * (S + 1);
    const double invM = 1.0 / (double)M;
    int64_t y[NB];
    double xd[NB];
    u128 A[NB];
    uint32_t u[NB];
    unsigned char code[NB];
    size_t f = 0;
    const double margin = 0x1p-46 * r->widen;
    while (f < n) {
        int m = lap_batch(r, S + 1, y);
        if (m < 0) return -1;
        src_words(r, u, m); /* the first 32 bits of each candidate's U; more only if undecided */
        for (int j = 0; j < m; j++) {
            uint64_t ya = y[j] < 0 ? -(uint64_t)y[j] : (uint64_t)y[j];
            double Ad;
            if (__builtin_expect(ya < (UINT64_C(1) << 32), 1)) { /* |y| (S+1) < 2^64, S^2 < 2^62 */
                uint64_t ay = ya * (S + 1), s2 = (uint64_t)S2;
                uint64_t a64 = ay >= s2 ? ay - s2 : s2 - ay;
                A[j] = a64;
                Ad = (double)a64;
            } else {
                u128 ay = (u128)ya * (S + 1); /* < 2^94 */
                A[j] = ay >= S2 ? ay - S2 : S2 - ay;
                Ad = (A[j] >> 64) ? (double)A[j] : (double)(uint64_t)A[j];
            }
            /* A, M, 1/M, the product, the square: relative error below 9.1 2^-53 < 2^-49 */
            double v = Ad * invM;
            xd[j] = 0.5 * v * v;
        }
        r->ncmp += (uint64_t)m;
        for (int j = 0; j < m; j++) {
            /* Bounds on p = exp(-x) without exp, against U in [ud, ud + 2^-32):
             *  x <= 1: 1 - x + x^2/2 - x^3/6 <= exp(-x) <= 1 - x + x^2/2 (Taylor, alternating);
             *  x > 1:  0 <= exp(-x) <= 1 / (1 + x + x^2/2 + x^3/6 + x^4/24) (e^x >= its Taylor
             *          polynomial for x >= 0); accepting needs exp (below).
             * Both widened by 2^-46: the error of xd (below x 2^-49) moves them by at most x 2^-49
             * times their slope (|slope| <= 1 for x <= 1; <= 1 / (1 + x) for the reciprocal, whose
             * derivative is -q'/q^2 with q' <= q), and their evaluation (at most 16 roundings of
             * 2^-53, values <= 1) by less than 2^-48. code: 1 accept, 0 reject, 2 undecided. */
            double x = xd[j], ud = (double)u[j] * 0x1p-32; /* exact */
            double x2 = x * x, q = 1 - x + 0.5 * x2;
            double rq =
                1.0 /
                (1 + x * (1 + x * (0.5 + x * (1.0 / 6 + x * (1.0 / 24))))); /* both, branch-free */
            double lo = x <= 1 ? q - x2 * x * (1.0 / 6) - margin : -1.0;
            double hi = (x <= 1 ? q : rq) + margin;
            unsigned acc = ud + 0x1p-32 <= lo, rej = ud >= hi;
            code[j] = (unsigned char)(acc | (~(acc | rej) & 1u) << 1);
        }
        for (int j = 0; j < m && f < n; j++) {
            int c = code[j];
            if (__builtin_expect(c == 2, 0)) {
                /* U's bits 33..64, then the double band around exp(-xd), then MPFR: the same U */
                uint64_t u64 = (uint64_t)u[j] << 32 | src_u32(r);
                uint64_t lt, ht;
                band(xd[j], r->widen, &lt, &ht);
                c = u64 < lt;
                if (__builtin_expect(!c && u64 <= ht, 0)) { /* undecided (A > 0 here: p < 1) */
                    unif_t U;
                    U.w[0] = u64;
                    U.nw = 1;
                    c = cmp_slow(r, &U, (xq_t){A[j], M, 1}, NULL);
                    if (c < 0) return -1;
                }
            }
            out[f] = y[j];
            f += (size_t)c;
        }
    }
    return 0;
}

static inline double exp_neg_small(double d)
{
    return 1 + d * (-1 + d * (1.0 / 2 + d * (-1.0 / 6 + d * (1.0 / 24 + d * (-1.0 / 120)))));
}

/* U < exp(-phi(a)) L 2^e / den for U = u64 2^-64 + (more bits): the double band, then MPFR. */
static int tab_cmp(src_t *r, const dpdo__dtab *t, uint64_t a, uint64_t den, int64_t e, uint64_t u64)
{
    const double ad = (double)a;
    double xd = t->lap ? ad / (double)t->P : 0.5 * (ad / (double)t->P) * (ad / (double)t->P);
    double lg = log((double)t->L / (double)den);
    /* y = xd - lg - e ln 2: xd (4 roundings), lg (the ratio and log: 2^-52 |lg| + 2^-53), the
     * sum: absolute error below (xd + |lg| + e) 2^-49 */
    double y = xd - lg - (double)e * 0.69314718055994530942;
    uint64_t lt, ht;
    band2(y, xd + fabs(lg) + (double)e, r->widen, &lt, &ht);
    if (u64 < lt) return 1;
    if (u64 > ht) return 0;
    unif_t U;
    U.w[0] = u64;
    U.nw = 1;
    fac_t f = {t->L, den, e};
    return cmp_slow(r, &U, t->lap ? (xq_t){a, t->P, 0} : (xq_t){a, t->P, 1}, &f);
}

/* A tail candidate: 1 with *z set (accepted), 0 (rejected), -1 (a > 2^62: probability below
 * 2^-(2^62 / Bt) < exp(-2^22)). */
static int __attribute__((noinline)) tab_tail(src_t *r, const dpdo__dtab *t, int64_t *z)
{
    uint64_t j = 0, w;
    const uint64_t jcap = (V_CAP - t->X0) >> t->bt;
    while ((w = src_u64(r)) == 0) {
        j += 64;
        if (j > jcap) return -1;
    }
    j += (uint64_t)__builtin_ctzll(w);
    if (j >= jcap) return -1;
    uint64_t off = src_u64(r), sg = off >> 63;
    off &= (UINT64_C(1) << t->bt) - 1; /* bt <= 41 */
    uint64_t a = t->X0 + (j << t->bt) + off;
    r->ncmp++;
    int c = tab_cmp(r, t, a, t->WT, (int64_t)j, src_u64(r));
    *z = sg ? -(int64_t)a : (int64_t)a;
    return c;
}

enum { TB = 64 }; /* candidates per batch */

/* One batch's candidates after the fast decision: the value +-a, the code (1 accept, 0 reject,
 * 2 undecided, 3 tail), the entry and U's first bits (for the slow path). */
typedef struct {
    int64_t z[TB];
    uint32_t code[TB], ent[TB], uu[TB];
} cand_t;

/* The fast decision of TB candidates from the words w (one 64-bit word each, see tab_n); the
 * portable kernel. bias: the test build's planted defect (1 = none). */
static void cand_scalar(const dpdo__dtab *t, const uint64_t *w, int k, double margin, double bias,
                        cand_t *cd)
{
    const uint32_t nmask = (UINT32_C(1) << t->n) - 1, M = t->M;
    const uint32_t amask = (uint32_t)((UINT64_C(1) << t->A) - 1);
    const int nb = t->n, b = t->b, ub = t->ub, A = t->A;
    const uint32_t bmask = (UINT32_C(1) << b) - 1;
    const double ulp = ldexp(1.0, -ub), inv = t->inv, Bd = (double)(UINT64_C(1) << b);
    const int lap = t->lap;
    const uint64_t *ta = t->ta;
    const double *cm = t->c;
    for (int j = 0; j < k; j++) {
        uint32_t lo = (uint32_t)w[j] & amask, col = lo & nmask, th = lo >> nb;
        uint64_t tc = ta[col];
        uint32_t e = th < (uint32_t)tc ? col : (uint32_t)(tc >> 32);
        uint32_t hi = (uint32_t)(w[j] >> A);
        uint32_t off = hi & bmask, sg = (hi >> b) & 1u, u = hi >> (b + 1);
        uint32_t ec = e < M ? e : M; /* c[M] = 0: never accepted here */
        uint64_t a = ((uint64_t)ec << b) + off;
        double od = (double)off, amd = (double)ec * Bd; /* exact */
        /* delta = phi(a) - phi(m B): (a - m B)(a + m B) / (2 S^2) or (a - m B) / T */
        double d = lap ? od * inv : od * ((amd + amd + od) * inv);
        double p = cm[ec] * exp_neg_small(d) * bias;
        double uf = (double)u * ulp;
        unsigned acc = uf + ulp <= p - margin, rej = uf >= p + margin;
        unsigned neg0 = sg & (a == 0); /* (-, 0): rejected */
        acc &= !neg0;
        rej |= neg0 | (e > M);
        cd->code[j] = e == M ? 3u : acc ? 1u : rej ? 0u : 2u;
        cd->z[j] = sg ? -(int64_t)a : (int64_t)a;
        cd->ent[j] = e;
        cd->uu[j] = u;
    }
}

/* Candidates j < k of a batch, in order, into out[*f ..] up to n: the fast decisions, the tail
 * and the undecided ones (64 more bits of U, then tab_cmp). 0, or -1 (see tab_tail, cmp_slow). */
static int cand_out(src_t *r, const dpdo__dtab *t, cand_t *cd, int k, int64_t *out, size_t *f,
                    size_t n)
{
    const int ub = t->ub;
    int j = 0;
    for (; j < k && *f < n; j++) {
        int c = (int)cd->code[j];
        if (__builtin_expect(c >= 2, 0)) {
            if (c == 3) {
                c = tab_tail(r, t, &cd->z[j]);
            } else {
                r->ncmp++;
                uint64_t a = (uint64_t)(cd->z[j] < 0 ? -cd->z[j] : cd->z[j]);
                uint64_t u64 = (uint64_t)cd->uu[j] << (64 - ub) | src_u64(r) >> ub;
                c = tab_cmp(r, t, a, t->W[cd->ent[j]], 0, u64);
            }
            if (c < 0) return -1;
        }
        out[*f] = cd->z[j];
        *f += (size_t)c;
        r->nacc += (uint64_t)c;
    }
    r->ncand += (uint64_t)j;
    return 0;
}

#ifdef DPDO_HAVE_X86_SIMD
/* The same with AVX-512, 8 candidates per vector (the table lookups are gathers), and the output
 * of a group of 8 without a tail or undecided candidate by one compress-store. The decisions are
 * those of cand_scalar up to the rounding of p (fused multiply-adds in the polynomial): both decide
 * only outside the error bound, so both make exact comparisons (docs/privacy.md). */
__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma"))) static int
tab_batch_avx512(src_t *r, const dpdo__dtab *t, const unsigned char *wb, int kb, double margin,
                 int64_t *out, size_t *f, size_t n)
{
    const int nb = t->n, b = t->b, ub = t->ub, cb = t->cb;
    const __m256i nmask = _mm256_set1_epi32((int)((UINT32_C(1) << nb) - 1));
    const __m256i amask = _mm256_set1_epi32((int)((UINT64_C(1) << t->A) - 1));
    const __m128i sA = _mm_cvtsi32_si128(t->A);
    /* 6-byte candidates: 16-bit words 3k, 3k+1, 3k+2 of the group into lane k (the fourth word
     * is masked off) */
    const __m512i perm =
        _mm512_set_epi16(23, 23, 22, 21, 20, 20, 19, 18, 17, 17, 16, 15, 14, 14, 13, 12, 11, 11, 10,
                         9, 8, 8, 7, 6, 5, 5, 4, 3, 2, 2, 1, 0);
    const __m512i m48 = _mm512_set1_epi64((long long)((UINT64_C(1) << 48) - 1));
    const __m256i bmask = _mm256_set1_epi32((int)((UINT32_C(1) << b) - 1));
    const __m256i one = _mm256_set1_epi32(1), Mv = _mm256_set1_epi32((int)t->M);
    const __m128i snb = _mm_cvtsi32_si128(nb), sb = _mm_cvtsi32_si128(b),
                  sb1 = _mm_cvtsi32_si128(b + 1);
    const __m512d ulp = _mm512_set1_pd(ldexp(1.0, -ub)), inv = _mm512_set1_pd(t->inv),
                  Bd = _mm512_set1_pd((double)(UINT64_C(1) << b)), mg = _mm512_set1_pd(margin);
    const int lap = t->lap;
    cand_t cd;
    for (int j = 0; j < kb && *f < n; j += 8) {
        __m512i wv = _mm512_loadu_si512((const void *)(wb + (size_t)cb * (size_t)j));
        if (cb == 6) wv = _mm512_and_si512(_mm512_permutexvar_epi16(perm, wv), m48);
        __m256i lo = _mm256_and_si256(_mm512_cvtepi64_epi32(wv), amask),
                hi = _mm512_cvtepi64_epi32(_mm512_srl_epi64(wv, sA));
        __m256i col = _mm256_and_si256(lo, nmask), th = _mm256_srl_epi32(lo, snb);
        __m512i tav = _mm512_i32gather_epi64(col, (const void *)t->ta, 8);
        __m256i tv = _mm512_cvtepi64_epi32(tav),
                av = _mm512_cvtepi64_epi32(_mm512_srli_epi64(tav, 32));
        __m256i e = _mm256_blendv_epi8(av, col, _mm256_cmpgt_epi32(tv, th)); /* < 2^30: signed ok */
        __m256i off = _mm256_and_si256(hi, bmask);
        __m256i sg = _mm256_and_si256(_mm256_srl_epi32(hi, sb), one);
        __m256i u = _mm256_srl_epi32(hi, sb1);
        __m256i ec = _mm256_min_epu32(e, Mv);
        __m512d od = _mm512_cvtepi32_pd(off), amd = _mm512_mul_pd(_mm512_cvtepi32_pd(ec), Bd);
        __m512d d =
            lap ? _mm512_mul_pd(od, inv)
                : _mm512_mul_pd(od, _mm512_mul_pd(_mm512_add_pd(_mm512_add_pd(amd, amd), od), inv));
        __m512d q = _mm512_set1_pd(-1.0 / 120);
        q = _mm512_fmadd_pd(q, d, _mm512_set1_pd(1.0 / 24));
        q = _mm512_fmadd_pd(q, d, _mm512_set1_pd(-1.0 / 6));
        q = _mm512_fmadd_pd(q, d, _mm512_set1_pd(0.5));
        q = _mm512_fmadd_pd(q, d, _mm512_set1_pd(-1.0));
        q = _mm512_fmadd_pd(q, d, _mm512_set1_pd(1.0));
        __m512d p = _mm512_mul_pd(_mm512_i32gather_pd(ec, t->c, 8), q);
        __m512d uf = _mm512_mul_pd(_mm512_cvtepi32_pd(u), ulp);
        __mmask8 acc = _mm512_cmp_pd_mask(_mm512_add_pd(uf, ulp), _mm512_sub_pd(p, mg), _CMP_LE_OQ);
        __mmask8 rej = _mm512_cmp_pd_mask(uf, _mm512_add_pd(p, mg), _CMP_GE_OQ);
        __m256i a32 = _mm256_or_si256(e, off); /* 0 iff a = 0 (e = 0 and off = 0) */
        __mmask8 neg = _mm256_cmpeq_epi32_mask(sg, one);
        __mmask8 neg0 = neg & _mm256_cmpeq_epi32_mask(a32, _mm256_setzero_si256());
        __mmask8 tail = _mm256_cmpeq_epi32_mask(e, Mv), fill = _mm256_cmpgt_epu32_mask(e, Mv);
        acc &= (__mmask8)~neg0;
        rej |= neg0 | fill;
        __m512i a = _mm512_add_epi64(_mm512_sll_epi64(_mm512_cvtepu32_epi64(ec), sb),
                                     _mm512_cvtepu32_epi64(off));
        a = _mm512_mask_sub_epi64(a, neg, _mm512_setzero_si512(), a);
        __mmask8 special = (__mmask8)(tail | ~(acc | rej));
        if (__builtin_expect(!special && n - *f >= 8, 1)) {
            _mm512_mask_compressstoreu_epi64(out + *f, acc, a);
            unsigned k = (unsigned)__builtin_popcount(acc);
            *f += k;
            r->nacc += k;
            r->ncand += 8;
            continue;
        }
        /* code: 2 by default, 0 on reject, 1 on accept, 3 on tail */
        __m256i code = _mm256_set1_epi32(2);
        code = _mm256_mask_mov_epi32(code, rej, _mm256_setzero_si256());
        code = _mm256_mask_mov_epi32(code, acc, one);
        code = _mm256_mask_mov_epi32(code, tail, _mm256_set1_epi32(3));
        _mm512_storeu_si512((void *)cd.z, a);
        _mm256_storeu_si256((__m256i *)cd.code, code);
        _mm256_storeu_si256((__m256i *)cd.ent, e);
        _mm256_storeu_si256((__m256i *)cd.uu, u);
        if (cand_out(r, t, &cd, 8, out, f, n)) return -1;
    }
    return 0;
}
#endif

/* n draws from the table sampler. Each candidate takes cb = 6 or 8 bytes of the keystream, read as
 * a little-endian integer (48 or 64 bits): bits 0..n-1 the alias column, n..A-1 the threshold,
 * then b bits of offset, the sign, and U's first ub >= 8 bits.
 * Candidates are kept in order, the surplus of the last batch dropped (independent of the kept
 * ones). 0, or -1 (see tab_tail, cmp_slow). */
static int tab_n(src_t *r, const dpdo__dtab *t, int64_t *out, size_t n)
{
    /* the error of p: Taylor 2^-27.4, Horner 2^-50, c_m 2^-45, delta (4 roundings, times the
     * slope <= 1) 2^-54: below 2^-27.3; the margin 2^-26 (the test build may widen it) */
    const double margin = 0x1p-26 * r->widen;
    size_t f = 0;
    cand_t cd;
    while (f < n) {
        uint64_t w[TB];
        uint32_t pk[2 * TB + 4]; /* the batch's keystream words (+ slack for 64-byte loads) */
        /* candidates of this batch: TB, or (near the end) the need plus a few, in groups of 8 */
        size_t need = n - f + (n - f) / 64 + 2;
        int kb = need >= TB ? TB : (int)((need + 7) & ~(size_t)7);
        src_words(r, pk, t->cb * kb / 4);
#if defined(DPDO_HAVE_X86_SIMD) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (r->simd && r->bias == 1.0) {
            if (tab_batch_avx512(r, t, (const unsigned char *)pk, kb, margin, out, &f, n))
                return -1;
            continue;
        }
#endif
        for (int j = 0; j < kb; j += 2) { /* two candidates from 2 (cb = 8) or 1.5 (cb = 6) words */
            const uint32_t *q = pk + (t->cb / 2) * j / 2;
            if (t->cb == 8) {
                w[j] = q[0] | (uint64_t)q[1] << 32;
                w[j + 1] = q[2] | (uint64_t)q[3] << 32;
            } else {
                w[j] = q[0] | (uint64_t)(q[1] & 0xFFFFu) << 32;
                w[j + 1] = q[1] >> 16 | (uint64_t)q[2] << 16;
            }
        }
        cand_scalar(t, w, kb, margin, r->bias, &cd);
        if (cand_out(r, t, &cd, kb, out, &f, n)) return -1;
    }
    return 0;
}

/* Keystream blocks n table draws are expected to take: cb bytes a candidate, about 1.006
 * candidates a draw from S = 50 on (more at the smallest scales: then small refills follow). */
static size_t tab_blocks(const dpdo__dtab *t, size_t n)
{
    return (size_t)((double)n * t->cb * 1.01 / 16) + 3;
}

/* n draws of N_Z(0, P^2) (lap 0, 1 <= P <= 2^31) or of the discrete Laplace of scale P (lap 1,
 * 1 <= P <= 2^40) from table t, or (t NULL: no memory, or a Laplace scale beyond the table's
 * range) the lazy CKS sampler. 0 or -1. */
static int draw_n(src_t *r, const dpdo__dtab *t, int lap, uint64_t P, int64_t *out, size_t n)
{
    if (t) return tab_n(r, t, out, n);
    return lap ? dlap_n(r, P, out, n) : dgauss_n(r, P, out, n);
}

#define S_MIN (UINT64_C(1) << 10)
#define S_MAX (UINT64_C(1) << 31)
#define T_MAX (UINT64_C(1) << 40)

static int stream_draw(dpdo__stream *s, int lap, uint64_t P, int64_t *out, size_t n, int lazy)
{
    if (P < 1 || P > (lap ? T_MAX : S_MAX)) return DPDO_E_INVAL;
    int tmp = 0;
    dpdo__dtab *t = lazy ? NULL : dpdo__dtab_get(s->rng, lap, P, &tmp);
    src_t r;
    src_init(&r, s);
    if (t) r.want = tab_blocks(t, n);
    int rc = draw_n(&r, t, lap, P, out, n) ? DPDO_E_NUMERIC : DPDO_OK;
    src_done(&r);
    dpdo__dtab_release(s->rng, t, tmp);
    return rc;
}

int dpdo__stream_dgauss(dpdo__stream *s, uint64_t S, int64_t *out, size_t n)
{
    return stream_draw(s, 0, S, out, n, 0);
}

int dpdo__stream_dlaplace(dpdo__stream *s, uint64_t T, int64_t *out, size_t n)
{
    return stream_draw(s, 1, T, out, n, 0);
}

#ifdef DPDO_FAULT_INJECTION
int dpdo__stream_dgauss_lazy(dpdo__stream *s, uint64_t S, int64_t *out, size_t n)
{
    return stream_draw(s, 0, S, out, n, 1);
}

int dpdo__stream_dlaplace_lazy(dpdo__stream *s, uint64_t T, int64_t *out, size_t n)
{
    return stream_draw(s, 1, T, out, n, 1);
}

int dpdo__dtab_info(const dpdo__stream *s, int lap, uint64_t P, uint64_t *L, uint64_t *B)
{
    int tmp;
    dpdo__dtab *t = dpdo__dtab_get(s->rng, lap, P, &tmp);
    if (!t) return -1;
    *L = t->L << (32 - t->A); /* the acceptance L Z / (2^(A+1) B) as L' Z / (2^33 B) */
    *B = UINT64_C(1) << t->b;
    dpdo__dtab_release(s->rng, t, tmp);
    return 0;
}
#endif

/* ---- the previous all-integer CKS sampler (test build: cross-check) ------------------------ */
#ifdef DPDO_FAULT_INJECTION
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
        if (rem == 0) return 0; /* N/D's expansion ended: U >= N/D (U = N/D has probability 0) */
    }
}

/* Bernoulli(1/K) for small K: the same comparison. */
static inline int bern_inv(src_t *r, uint64_t K)
{
    return K <= 1 ? 1 : bern_ratio(r, 1, K);
}

/* Bernoulli(exp(-1)) (CKS Algorithm 1 with x = 1: Bernoulli(1/1) = 1). */
static int bern_exp1(src_t *r)
{
    uint64_t K = 2;
    while (bern_inv(r, K))
        K++;
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
    while (bern_ratio(r, N, D) && bern_inv(r, K))
        K++;
    return (int)(K & 1);
}

/* CKS Algorithm 2: P(y) proportional to exp(-|y|/t), t >= 1, t <= 2^40. Returns 0, or -1 in the
 * event |y| >= 2^62 (probability below exp(-2^22)), where no value is returned. */
static int cks_dlap(src_t *r, uint64_t t, int64_t *y)
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
static int cks_dgauss(src_t *r, uint64_t S, int64_t *y)
{
    const u128 S2 = (u128)S * S, M = (u128)S * (S + 1);
    for (;;) {
        int64_t Y;
        if (cks_dlap(r, S + 1, &Y)) return -1;
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
            for (u128 k = 0; k < q && ok; k++)
                ok = bern_exp(r, q, 2);
            if (!ok) continue;
        }
        if (!bern_exp(r, q * rr, M)) continue;
        *y = Y;
        return 0;
    }
}

int dpdo__stream_dgauss_cks(dpdo__stream *s, uint64_t S, int64_t *out, size_t n)
{
    if (S < 1 || S > S_MAX) return DPDO_E_INVAL;
    src_t r;
    src_init(&r, s);
    int rc = DPDO_OK;
    for (size_t i = 0; i < n && !rc; i++)
        if (cks_dgauss(&r, S, &out[i])) rc = DPDO_E_NUMERIC;
    src_done(&r);
    return rc;
}

int dpdo__stream_dlaplace_cks(dpdo__stream *s, uint64_t T, int64_t *out, size_t n)
{
    if (T < 1 || T > T_MAX) return DPDO_E_INVAL;
    src_t r;
    src_init(&r, s);
    int rc = DPDO_OK;
    for (size_t i = 0; i < n && !rc; i++)
        if (cks_dlap(&r, T, &out[i])) rc = DPDO_E_NUMERIC;
    src_done(&r);
    return rc;
}

#endif /* DPDO_FAULT_INJECTION */

#define K_LIMIT 4503599627370496.0 /* 2^52 */

static int grid_check(double gamma, char *err)
{
    int ex;
    double m = frexp(gamma, &ex);
    if (!(m == 0.5) || ex - 1 < -1000 || ex - 1 > 900)
        return dpdo__err(err, DPDO_E_INVAL, "grid %g is not a power of two in [2^-1000, 2^900]",
                         gamma);
    return DPDO_OK;
}

/* The rounding to the grid and the |k + z| < 2^52 check for m coordinates: x[i] <- (rint(x[i] /
 * gamma) + z[i]) gamma where both |k| and |k + z| are below 2^52; at the first coordinate where
 * not, it stops and returns its index + 1, x[i] left as it was (0: all done). x / gamma = x (1 /
 * gamma) exactly (a power of two) unless it underflows; k + z is exact below 2^52 (|z| < 2^62: a
 * rounded sum below 2^52 is the exact one), and v gamma is exact (an integer below 2^52 times a
 * power of two). */
static size_t grid_round_scalar(double *x, const int64_t *zb, size_t m, double gamma, double ginv)
{
    for (size_t i = 0; i < m; i++) {
        double k = rint(x[i] * ginv);
        double v = k + (double)zb[i];
        if (!(fabs(k) < K_LIMIT && fabs(v) < K_LIMIT)) return i + 1;
        x[i] = v * gamma;
    }
    return 0;
}

#ifdef DPDO_HAVE_X86_SIMD
/* The same, 8 coordinates per vector (roundscale = rint in the default rounding mode; the same
 * IEEE operations, so the same bits). */
__attribute__((target("avx512f,avx512dq"))) static size_t
grid_round_avx512(double *x, const int64_t *zb, size_t m, double gamma, double ginv)
{
    const __m512d gi = _mm512_set1_pd(ginv), g = _mm512_set1_pd(gamma),
                  lim = _mm512_set1_pd(K_LIMIT);
    const __m512i absm = _mm512_set1_epi64(INT64_MAX);
    size_t i = 0;
    for (; i + 8 <= m; i += 8) {
        __m512d xv = _mm512_loadu_pd(x + i);
        __m512d k = _mm512_roundscale_pd(_mm512_mul_pd(xv, gi), _MM_FROUND_CUR_DIRECTION);
        __m512d v =
            _mm512_add_pd(k, _mm512_cvtepi64_pd(_mm512_loadu_si512((const void *)(zb + i))));
        __m512d ak = _mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(k), absm));
        __m512d av = _mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(v), absm));
        __mmask8 ok =
            _mm512_cmp_pd_mask(ak, lim, _CMP_LT_OQ) & _mm512_cmp_pd_mask(av, lim, _CMP_LT_OQ);
        if (__builtin_expect(ok != 0xFF, 0))
            return i + grid_round_scalar(x + i, zb + i, 8, gamma, ginv);
        _mm512_storeu_pd(x + i, _mm512_mul_pd(v, g));
    }
    size_t b = grid_round_scalar(x + i, zb + i, m - i, gamma, ginv);
    return b ? i + b : 0;
}
#endif

enum { GRID_CHUNK = 512 }; /* draws per sampler call of a grid release (4 KiB on the stack) */

static int grid_add_run(src_t *r, const dpdo__dtab *t, uint64_t P, double gamma, double *x,
                        size_t n, int gauss, char *err)
{
    int64_t zb[GRID_CHUNK];
    const double ginv = 1.0 / gamma; /* exact: gamma is a power of two in [2^-1000, 2^900] */
    for (size_t i0 = 0; i0 < n; i0 += GRID_CHUNK) {
        size_t m = n - i0 < GRID_CHUNK ? n - i0 : GRID_CHUNK;
        if (draw_n(r, t, !gauss, P, zb, m))
            return dpdo__err(err, DPDO_E_NUMERIC,
                             "coordinates %zu..: noise beyond 2^62 grid steps "
                             "(an event of probability below exp(-2^22)); nothing released",
                             i0);
        size_t bad;
#ifdef DPDO_HAVE_X86_SIMD
        if (r->simd)
            bad = grid_round_avx512(x + i0, zb, m, gamma, ginv);
        else
#endif
            bad = grid_round_scalar(x + i0, zb, m, gamma, ginv);
        if (bad) { /* the first coordinate that failed (x is not released) */
            size_t i = i0 + bad - 1;
            if (!(fabs(rint(x[i] * ginv)) < K_LIMIT))
                return dpdo__err(err, DPDO_E_NUMERIC,
                                 "coordinate %zu: value %g is not finite or exceeds "
                                 "2^52 grid steps of %g",
                                 i, x[i], gamma);
            return dpdo__err(err, DPDO_E_NUMERIC,
                             "coordinate %zu: value + noise exceeds 2^52 grid "
                             "steps of %g; nothing released",
                             i, gamma);
        }
    }
    return DPDO_OK;
}

static int grid_add(dpdo__stream *s, uint64_t P, double gamma, double *x, size_t n, int gauss,
                    char *err)
{
    int rc = grid_check(gamma, err);
    if (rc) return rc;
    if (gauss ? (P < S_MIN || P > S_MAX) : (P < 1 || P > T_MAX))
        return dpdo__err(err, DPDO_E_INVAL, "noise %llu grid steps is out of range",
                         (unsigned long long)P);
    int tmp = 0;
    dpdo__dtab *t = n > 0 ? dpdo__dtab_get(s->rng, !gauss, P, &tmp) : NULL;
    src_t r;
    src_init(&r, s);
    if (t) r.want = tab_blocks(t, n);
    rc = grid_add_run(&r, t, P, gamma, x, n, gauss, err);
    src_done(&r);
    dpdo__dtab_release(s->rng, t, tmp);
    return rc;
}

int dpdo__grid_add_dgauss(dpdo__stream *s, uint64_t S, double gamma, double *x, size_t n, char *err)
{
    return grid_add(s, S, gamma, x, n, 1, err);
}

int dpdo__grid_add_dlaplace(dpdo__stream *s, uint64_t T, double gamma, double *x, size_t n,
                            char *err)
{
    return grid_add(s, T, gamma, x, n, 0, err);
}

int dpdo__grid_choose(double sigma, double sens, size_t n, double eta, int l1, double *gamma,
                      uint64_t *S, char *err)
{
    if (!(sigma > 0) || !isfinite(sigma) || !(sens > 0) || !isfinite(sens) || n == 0 ||
        !(eta > 0 && eta < 1))
        return dpdo__err(err, DPDO_E_INVAL,
                         "grid: sigma %g, sensitivity %g, %zu coordinates: need finite > 0", sigma,
                         sens, n);
    double spread = l1 ? (double)n : sqrt((double)n);
    /* Gaussian: at least 2^12 sqrt(n) grid steps of noise (S^2 >= 2^24 n: the fine lattice Gaussian
     * the PLD accountant charges, DPDO_MECH_DISCRETE_GAUSSIAN_FINE), and at least S_MIN */
    double fine = 4096.0 * spread;
    double g1 = eta * sens / spread,
           g2 = l1 ? INFINITY : sigma / (fine > (double)S_MIN ? fine : (double)S_MIN);
    double g = g1 < g2 ? g1 : g2;
    int ex;
    frexp(g, &ex);                  /* g = m 2^ex, m in [0.5, 1) */
    double gm = ldexp(1.0, ex - 1); /* largest power of two <= g */
    if (gm > g) gm = ldexp(1.0, ex - 2);
    if (ex - 1 < -1000 || ex - 1 > 900)
        return dpdo__err(err, DPDO_E_UNSUPPORTED,
                         "grid: no usable power-of-two grid for sigma %g, sensitivity %g", sigma,
                         sens);
    double steps = ceil(sigma * (1.0 + eta) / gm);
    double cap = l1 ? (double)T_MAX : (double)S_MAX;
    if (!(steps <= cap))
        return dpdo__err(
            err, DPDO_E_UNSUPPORTED,
            "grid: noise %g is %.3g grid steps of %g (limit %.0f): noise too large relative to the "
            "sensitivity %g over %zu coordinates for the exact sampler",
            sigma, steps, gm, cap, sens, n);
    *gamma = gm;
    *S = (uint64_t)steps;
    return DPDO_OK;
}
