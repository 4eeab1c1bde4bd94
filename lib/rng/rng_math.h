/* SPDX-License-Identifier: BSD-3-Clause */
/* Scalar reference kernels of the RNG layer: Philox4x32-10 and the exact
 * word -> double transforms (uniform, log, sincos, Box-Muller).
 *
 * These functions DEFINE the output of libdpdo's random draws. The SIMD
 * kernels in rng_simd.c repeat exactly the same IEEE operations in the same
 * order (same constants, same fma() calls, same reductions), so they produce
 * bit-identical doubles; tests/test_rng.c checks that. When changing anything
 * here, change rng_simd.c the same way, and vice versa.
 *
 * Only correctly rounded operations are used (+ - * / sqrt and fma), never
 * libm's log/sin/cos, whose last bits differ between libm versions. The
 * build uses -ffp-contract=off, so a*b+c is two roundings unless written
 * fma(a, b, c). */
#ifndef DPDO_RNG_MATH_H
#define DPDO_RNG_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- Philox4x32-10 (Salmon, Moraes, Dror, Shaw, SC'11) ------------------ */
#define DPDO__PHILOX_M0 0xD2511F53u
#define DPDO__PHILOX_M1 0xCD9E8D57u
#define DPDO__PHILOX_W0 0x9E3779B9u
#define DPDO__PHILOX_W1 0xBB67AE85u

static inline void dpdo__philox4x32_10(const uint32_t key[2], const uint32_t in[4], uint32_t out[4])
{
    uint32_t c0 = in[0], c1 = in[1], c2 = in[2], c3 = in[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)DPDO__PHILOX_M0 * c0;
        uint64_t p1 = (uint64_t)DPDO__PHILOX_M1 * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        uint32_t n1 = (uint32_t)p1;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        uint32_t n3 = (uint32_t)p0;
        c0 = n0, c1 = n1, c2 = n2, c3 = n3;
        k0 += DPDO__PHILOX_W0; /* the bump after the last round is unused */
        k1 += DPDO__PHILOX_W1;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

/* ---- bit casts ---------------------------------------------------------- */
static inline double dpdo__f64(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}
static inline uint64_t dpdo__bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

/* ---- uniform -------------------------------------------------------------
 * From a 64-bit word x (= lo | hi << 32 for two stream words): k = x >> 12
 * (the top 52 bits) and u = (2k + 1) / 2^53, computed exactly as
 * (1 + k 2^-52) - (1 - 2^-53). So u lies in [2^-53, 1 - 2^-53], is never 0 or
 * 1, has mean exactly 1/2, and 1 - u has the same distribution as u. */
#define DPDO__ONE_MINUS_HALF_ULP 0x1.fffffffffffffp-1 /* 1 - 2^-53 */
static inline double dpdo__u01(uint64_t x)
{
    return dpdo__f64((x >> 12) | 0x3FF0000000000000ull) - DPDO__ONE_MINUS_HALF_ULP;
}
static inline uint64_t dpdo__w64(uint32_t lo, uint32_t hi)
{
    return (uint64_t)lo | (uint64_t)hi << 32;
}

/* ---- natural log for positive normal finite x ----------------------------
 * x = 2^e m with m in (sqrt(2)/2, sqrt(2)]; f = m - 1 (exact); s = f/(2+f);
 * log(m) = 2 atanh(s) = f - s (f - R), R = z (Lg1 + z (Lg2 + ... + z Lg7)),
 * z = s^2, with the minimax coefficients Lg1..Lg7 published with fdlibm's
 * e_log.c (|s| <= 0.1716, approximation error < 2^-58.45);
 * log x = e ln2_hi + (log m + e ln2_lo) with fdlibm's split of ln 2.
 * Max relative error measured against libm: see docs/rng.md. */
#define DPDO__LN2_HI 0x1.62e42feep-1       /* 6.93147180369123816490e-01 */
#define DPDO__LN2_LO 0x1.a39ef35793c76p-33 /* 1.90821492927058770002e-10 */
#define DPDO__SQRT2 0x1.6a09e667f3bcdp+0
#define DPDO__MAGIC52 0x1p52           /* 2^52: exact int <-> double */
#define DPDO__LG1 0x1.5555555555593p-1 /* 6.666666666666735130e-01 */
#define DPDO__LG2 0x1.999999997fa04p-2 /* 3.999999999940941908e-01 */
#define DPDO__LG3 0x1.2492494229359p-2 /* 2.857142874366239149e-01 */
#define DPDO__LG4 0x1.c71c51d8e78afp-3 /* 2.222219843214978396e-01 */
#define DPDO__LG5 0x1.7466496cb03dep-3 /* 1.818357216161805012e-01 */
#define DPDO__LG6 0x1.39a09d078c69fp-3 /* 1.531383769920937332e-01 */
#define DPDO__LG7 0x1.2f112df3e5244p-3 /* 1.479819860511658591e-01 */

static inline double dpdo__log(double x)
{
    uint64_t b = dpdo__bits(x);
    /* exponent as an exact double: (2^52 + biased) - (2^52 + 1023) */
    double dk = dpdo__f64((b >> 52) | 0x4330000000000000ull) - (DPDO__MAGIC52 + 1023.0);
    double m = dpdo__f64((b & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);
    if (m > DPDO__SQRT2) {
        m = m * 0.5;
        dk = dk + 1.0;
    }
    double f = m - 1.0;
    double s = f / (2.0 + f);
    double z = s * s;
    double p = DPDO__LG7;
    p = fma(p, z, DPDO__LG6);
    p = fma(p, z, DPDO__LG5);
    p = fma(p, z, DPDO__LG4);
    p = fma(p, z, DPDO__LG3);
    p = fma(p, z, DPDO__LG2);
    p = fma(p, z, DPDO__LG1);
    double R = p * z;
    double logm = f - s * (f - R);
    double lo = logm + dk * DPDO__LN2_LO;
    return dk * DPDO__LN2_HI + lo;
}

/* ---- sin and cos on [-pi/4, pi/4] -----------------------------------------
 * The minimax polynomials S1..S6 and C1..C6 published with fdlibm's k_sin.c /
 * k_cos.c (error < 2^-58 on [-pi/4, pi/4]):
 *   sin a = a + (a z) P(z),  cos a = (1 - z/2) + z^2 Q(z),  z = a^2.
 * The Box-Muller angle (dpdo__bm_angle) maps the arc onto the circle by
 * exact swaps and sign flips. */
#define DPDO__PIO2 0x1.921fb54442d18p+0
#define DPDO__S1 -0x1.5555555555549p-3  /* -1.66666666666666324348e-01 */
#define DPDO__S2 0x1.111111110f8a6p-7   /*  8.33333333332248946124e-03 */
#define DPDO__S3 -0x1.a01a019c161d5p-13 /* -1.98412698298579493134e-04 */
#define DPDO__S4 0x1.71de357b1fe7dp-19  /*  2.75573137070700676789e-06 */
#define DPDO__S5 -0x1.ae5e68a2b9cebp-26 /* -2.50507602534068634195e-08 */
#define DPDO__S6 0x1.5d93a5acfd57cp-33  /*  1.58969099521155010221e-10 */
#define DPDO__C1 0x1.555555555554cp-5   /*  4.16666666666666019037e-02 */
#define DPDO__C2 -0x1.6c16c16c15177p-10 /* -1.38888888888741095749e-03 */
#define DPDO__C3 0x1.a01a019cb1590p-16  /*  2.48015872894767294178e-05 */
#define DPDO__C4 -0x1.27e4f809c52adp-22 /* -2.75573143513906633035e-07 */
#define DPDO__C5 0x1.1ee9ebdb4b1c4p-29  /*  2.08757232129817482790e-09 */
#define DPDO__C6 -0x1.8fae9be8838d4p-37 /* -1.13596475577881948265e-11 */

/* sin and cos of a in [-pi/4, pi/4] */
static inline void dpdo__sincos_kernel(double a, double *sn, double *cs)
{
    double z = a * a;
    double ps = DPDO__S6;
    ps = fma(ps, z, DPDO__S5);
    ps = fma(ps, z, DPDO__S4);
    ps = fma(ps, z, DPDO__S3);
    ps = fma(ps, z, DPDO__S2);
    ps = fma(ps, z, DPDO__S1);
    *sn = fma(a * z, ps, a);
    double pc = DPDO__C6;
    pc = fma(pc, z, DPDO__C5);
    pc = fma(pc, z, DPDO__C4);
    pc = fma(pc, z, DPDO__C3);
    pc = fma(pc, z, DPDO__C2);
    pc = fma(pc, z, DPDO__C1);
    *cs = fma(z * z, pc, fma(z, -0.5, 1.0));
}

/* ---- -2 ln u for the Box-Muller radius, without a division ---------------
 * For u in [2^-1022, 1) (the generator passes u in [2^-53, 1 - 2^-53]):
 * u = 2^e m, m in [1, 2) (exact: exponent and mantissa bits). The top 4
 * fraction bits of m pick i in 0..15, m in [1 + i/16, 1 + (i+1)/16); the
 * table holds invc_i = 1/c_i rounded (c_i the interval midpoint; invc_15 =
 * 1/2 exactly) and -2 ln(invc_i) split into hi + lo parts (entry 15 is
 * -2 ln 2 split as fdlibm's ln2_hi + ln2_lo). Then
 *   r = fma(m, invc_i, -1),  |r| <= 1/32 (exact for i = 15),
 *   -2 ln u = -2 e ln2 - 2 ln(1/invc_i) - 2 log1p(r),
 *   -2 log1p(r) = -2 r + r^2 Q(r), Q the Taylor polynomial of
 *   -2 (log1p(r) - r) / r^2 to degree 9 (truncation < 2^-58.6 relative),
 *   evaluated by Estrin's scheme.
 * Evaluated as head = fma(e, -2 ln2_hi, H_i) (e ln2_hi is exact),
 * tail = fma(e, -2 ln2_lo, L_i), t = fma(r^2, Q(r), tail),
 * result = head + fma(r, -2, t). For u in [31/32, 1) (i = 15, e = -1) head
 * and tail are exactly 0, so results near 0 keep full relative accuracy.
 * Every constant is -2 times the natural one, which is an exact scaling: the
 * result equals -2 times the same evaluation of ln u. Measured error against
 * -2 log(u) of glibc: docs/rng.md. The tables were computed with 60-digit
 * decimal arithmetic (Python's decimal module). */
static const double DPDO__LOGT_INVC[16] = {
    0x1.f07c1f07c1f08p-1, 0x1.d41d41d41d41dp-1, 0x1.bacf914c1bad0p-1, 0x1.a41a41a41a41ap-1,
    0x1.8f9c18f9c18fap-1, 0x1.7d05f417d05f4p-1, 0x1.6c16c16c16c17p-1, 0x1.5c9882b931057p-1,
    0x1.4e5e0a72f0539p-1, 0x1.4141414141414p-1, 0x1.3521cfb2b78c1p-1, 0x1.29e4129e4129ep-1,
    0x1.1f7047dc11f70p-1, 0x1.15b1e5f75270dp-1, 0x1.0c9714fbcda3bp-1, 0x1.0000000000000p-1,
};
static const double DPDO__LOGT_M2HI[16] = {
    -0x1.f829b0e7832f8p-5, -0x1.6f0d28ae56b4ep-3, -0x1.29552f81ff521p-2, -0x1.9525a9cf456b6p-2,
    -0x1.fb9186d5e3e29p-2, -0x1.2e8e2bae11d31p-1, -0x1.5d1bdbf5809cap-1, -0x1.89a3386c1425bp-1,
    -0x1.b44f77bcc8f64p-1, -0x1.dd46a04c1c4a1p-1, -0x1.02552a5a5d0ffp+0, -0x1.154c3d2f4d5eap+0,
    -0x1.2795e1289b11bp+0, -0x1.393e0d3562a1ap+0, -0x1.4a4f85db03ebbp+0, -0x1.62e42fee00000p+0,
};
static const double DPDO__LOGT_M2LO[16] = {
    -0x1.33e3f04f1ef25p-59, 0x1.20db323097324p-58, -0x1.301771c407dc0p-56, 0x1.26fb3e2b1d1dap-56,
    -0x1.355519b0de535p-56, 0x1.1e99b72bd7bf2p-56, 0x1.7dc9c7c23801fp-55,  -0x1.2d38c40881e0bp-56,
    0x1.a0892a8b38eedp-60,  0x1.19d95b62e2476p-61, -0x1.e9c695d7ee800p-56, -0x1.98f33a3965e29p-56,
    -0x1.ade0fcf6e5a1dp-54, 0x1.38eef67f2483ap-54, 0x1.d76102e1644f2p-54,  -0x1.a39ef35793c76p-32,
};
#define DPDO__M2LN2_HI (-2.0 * DPDO__LN2_HI)
#define DPDO__M2LN2_LO (-2.0 * DPDO__LN2_LO)
/* Q(r) = sum_{n=2}^{11} -2 (-1)^(n+1) r^(n-2) / n */
#define DPDO__Q0 0x1.0000000000000p+0
#define DPDO__Q1 -0x1.5555555555555p-1
#define DPDO__Q2 0x1.0000000000000p-1
#define DPDO__Q3 -0x1.999999999999ap-2
#define DPDO__Q4 0x1.5555555555555p-2
#define DPDO__Q5 -0x1.2492492492492p-2
#define DPDO__Q6 0x1.0000000000000p-2
#define DPDO__Q7 -0x1.c71c71c71c71cp-3
#define DPDO__Q8 0x1.999999999999ap-3
#define DPDO__Q9 -0x1.745d1745d1746p-3

static inline double dpdo__m2log(double u)
{
    uint64_t b = dpdo__bits(u);
    double e = dpdo__f64((b >> 52) | 0x4330000000000000ull) - (DPDO__MAGIC52 + 1023.0);
    uint64_t mb = (b & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull;
    double m = dpdo__f64(mb);
    unsigned i = (unsigned)(mb >> 48) & 15u;
    double r = fma(m, DPDO__LOGT_INVC[i], -1.0);
    double head = fma(e, DPDO__M2LN2_HI, DPDO__LOGT_M2HI[i]);
    double tail = fma(e, DPDO__M2LN2_LO, DPDO__LOGT_M2LO[i]);
    double r2 = r * r;
    /* Estrin's scheme (shorter dependency chain than Horner) */
    double q01 = fma(DPDO__Q1, r, DPDO__Q0), q23 = fma(DPDO__Q3, r, DPDO__Q2);
    double q45 = fma(DPDO__Q5, r, DPDO__Q4), q67 = fma(DPDO__Q7, r, DPDO__Q6);
    double q89 = fma(DPDO__Q9, r, DPDO__Q8);
    double r4 = r2 * r2;
    double q03 = fma(q23, r2, q01), q47 = fma(q67, r2, q45);
    double q = fma(fma(q89, r4, q47), r4, q03);
    double t = fma(r2, q, tail);
    return head + fma(r, -2.0, t);
}

/* ---- Box-Muller on one block ----------------------------------------------
 * Block (w0, w1, w2, w3): x1 = w0 | w1 << 32, x2 = w2 | w3 << 32.
 *   u1 = (1 + k1 2^-52) - (1 - 2^-53) = (2 k1 + 1) / 2^53 in
 *        [2^-53, 1 - 2^-53], k1 = bits 62..11 of x1 (52 bits);
 *   rho = sqrt(dpdo__m2log(u1));
 *   a = (pi/2) ((1 + k2 2^-52) - 3/2), k2 = bits 62..11 of x2, so
 *        |a| <= pi/4 on a grid of 2^52 points; sin a, cos a by
 *        dpdo__sincos_kernel;
 *   (c, s) = (cos a, sin a), swapped if bit 0 of x2 is set; c is negated if
 *        bit 63 of x1 is set, s if bit 63 of x2 is set.
 *   z0 = rho c, z1 = rho s.
 * The swap and the two sign flips map the arc |a| <= pi/4 onto the whole
 * circle (the 8 symmetries of the square), so the angle is uniform.
 * "(x >> 11) | 0x3FF0..." puts bit 63 of x on the lowest exponent bit, which
 * is already set, so bit 63 is free for a sign. */
static inline double dpdo__bm_u1(uint64_t x1)
{
    return dpdo__f64((x1 >> 11) | 0x3FF0000000000000ull) - DPDO__ONE_MINUS_HALF_ULP;
}

static inline void dpdo__bm_angle(uint64_t x1, uint64_t x2, double *sn, double *cs)
{
    double r = dpdo__f64((x2 >> 11) | 0x3FF0000000000000ull) - 1.5;
    double sv, cv;
    dpdo__sincos_kernel(r * DPDO__PIO2, &sv, &cv);
    double c = (x2 & 1) ? sv : cv;
    double s = (x2 & 1) ? cv : sv;
    *cs = dpdo__f64(dpdo__bits(c) ^ (x1 & 0x8000000000000000ull));
    *sn = dpdo__f64(dpdo__bits(s) ^ (x2 & 0x8000000000000000ull));
}

static inline void dpdo__bm_block(const uint32_t w[4], double *z0, double *z1)
{
    uint64_t x1 = dpdo__w64(w[0], w[1]), x2 = dpdo__w64(w[2], w[3]);
    double rho = sqrt(dpdo__m2log(dpdo__bm_u1(x1)));
    double sn, cs;
    dpdo__bm_angle(x1, x2, &sn, &cs);
    *z0 = rho * cs;
    *z1 = rho * sn;
}

#endif /* DPDO_RNG_MATH_H */
