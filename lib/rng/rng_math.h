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

static inline void dpdo__philox4x32_10(const uint32_t key[2], const uint32_t in[4],
                                       uint32_t out[4])
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
#define DPDO__LN2_HI 0x1.62e42feep-1            /* 6.93147180369123816490e-01 */
#define DPDO__LN2_LO 0x1.a39ef35793c76p-33      /* 1.90821492927058770002e-10 */
#define DPDO__SQRT2 0x1.6a09e667f3bcdp+0
#define DPDO__MAGIC52 0x1p52                    /* 2^52: exact int <-> double */
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

/* ---- the Box-Muller angle from a 64-bit word ------------------------------
 * theta = (pi/2) (q + r) with q = x mod 4 (the quadrant, from the two lowest
 * bits) and r = (1 + (x >> 12) 2^-52) - 3/2 in [-1/2, 1/2) (exact; the top 52
 * bits). So theta is uniform on a grid of 2^54 points of the circle and the
 * kernel argument a = (pi/2) r has |a| <= pi/4. sin a and cos a use the
 * minimax polynomials S1..S6 and C1..C6 published with fdlibm's k_sin.c /
 * k_cos.c (error < 2^-58 on [-pi/4, pi/4]):
 *   sin a = a + (a z) P(z),  cos a = (1 - z/2) + z^2 Q(z),  z = a^2,
 * and the quadrant rotates (cos, sin) by q quarter turns (swap / negate,
 * exact). */
#define DPDO__PIO2 0x1.921fb54442d18p+0
#define DPDO__S1 -0x1.5555555555549p-3 /* -1.66666666666666324348e-01 */
#define DPDO__S2 0x1.111111110f8a6p-7  /*  8.33333333332248946124e-03 */
#define DPDO__S3 -0x1.a01a019c161d5p-13 /* -1.98412698298579493134e-04 */
#define DPDO__S4 0x1.71de357b1fe7dp-19 /*  2.75573137070700676789e-06 */
#define DPDO__S5 -0x1.ae5e68a2b9cebp-26 /* -2.50507602534068634195e-08 */
#define DPDO__S6 0x1.5d93a5acfd57cp-33 /*  1.58969099521155010221e-10 */
#define DPDO__C1 0x1.555555555554cp-5  /*  4.16666666666666019037e-02 */
#define DPDO__C2 -0x1.6c16c16c15177p-10 /* -1.38888888888741095749e-03 */
#define DPDO__C3 0x1.a01a019cb1590p-16 /*  2.48015872894767294178e-05 */
#define DPDO__C4 -0x1.27e4f809c52adp-22 /* -2.75573143513906633035e-07 */
#define DPDO__C5 0x1.1ee9ebdb4b1c4p-29 /*  2.08757232129817482790e-09 */
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

static inline void dpdo__angle(uint64_t x, double *sn, double *cs)
{
    double r = dpdo__f64((x >> 12) | 0x3FF0000000000000ull) - 1.5;
    double sv, cv;
    dpdo__sincos_kernel(r * DPDO__PIO2, &sv, &cv);
    /* angle = q pi/2 + a: q=1 -> (-sin, cos), q=2 -> (-cos, -sin), q=3 -> (sin, -cos) */
    double c = (x & 1) ? sv : cv;
    double s = (x & 1) ? cv : sv;
    uint64_t negc = ((x + 1) << 62) & 0x8000000000000000ull; /* q in {1, 2} */
    uint64_t negs = (x << 62) & 0x8000000000000000ull;       /* q in {2, 3} */
    *cs = dpdo__f64(dpdo__bits(c) ^ negc);
    *sn = dpdo__f64(dpdo__bits(s) ^ negs);
}

/* ---- Box-Muller on one block ----------------------------------------------
 * Block (w0, w1, w2, w3): u1 = u01(w0 | w1 << 32), theta from
 * x2 = w2 | w3 << 32 (dpdo__angle); rho = sqrt(-2 log u1);
 * z0 = rho cos theta, z1 = rho sin theta. */
static inline void dpdo__bm_block(const uint32_t w[4], double *z0, double *z1)
{
    double u1 = dpdo__u01(dpdo__w64(w[0], w[1]));
    double rho = sqrt(-2.0 * dpdo__log(u1));
    double sn, cs;
    dpdo__angle(dpdo__w64(w[2], w[3]), &sn, &cs);
    *z0 = rho * cs;
    *z1 = rho * sn;
}

#endif /* DPDO_RNG_MATH_H */
