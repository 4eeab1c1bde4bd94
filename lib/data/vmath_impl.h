/* SPDX-License-Identifier: BSD-3-Clause */
/* Branch-free exp(x) for x <= 0 and log1p(e) for e in [0, 1], written once as
 * a macro over the element type so that the scalar path (double) and the
 * vector kernels (GCC vectors of 4 doubles, on SSE2 or AVX2) execute the very
 * same IEEE operations on every element: no FMA (the build uses
 * -ffp-contract=off), no table, no libm call. Results are therefore identical
 * on every x86-64 CPU and for every vector width, which libm or SLEEF (whose
 * AVX2/AVX-512 variants use FMA and are chosen at run time) would not give.
 *
 * Error bounds (docs/performance.md, tested in tests/test_loss.c against libm):
 *   dpdo__exp_neg(x), x in [-708.39, 0]: Cody-Waite reduction x = k ln2 + r,
 *     |r| <= ln2/2, Taylor polynomial of degree 13 (truncation < 5e-18
 *     relative), Estrin's scheme with the 1 added last; at most 1.5 ulp from the
 *     exact value (measured: 0.97 ulp over 10^7 points). x < -708.39: 0 (the exact value is below
 *     2.3e-308). NaN: NaN.
 *   dpdo__log1p01(e), e in [0, 1]: log(1+e) = a + 2 atanh(s) with s = e/(2+e),
 *     a = 0 for e <= sqrt(2)-1, else s = (e-1)/(3+e), a = ln 2 (hi + lo);
 *     |s| <= 0.1716, odd series to s^23 (truncation < 1e-19 relative); at most
 *     3 ulp (measured: 2.1 ulp). log1p01(0) = 0 exactly. */
#ifndef DPDO_VMATH_IMPL_H
#define DPDO_VMATH_IMPL_H

#include <stdint.h>
#include <string.h>

#define DPDO__EXP_SHIFT 0x1.8p52
#define DPDO__INV_LN2 0x1.71547652b82fep0
#define DPDO__LN2_HI                                                                               \
    0x1.62e42fee00000p-1 /* 32 significant bits: k * LN2_HI is exact for |k| < 2^21 */
#define DPDO__LN2_LO 0x1.a39ef35793c76p-33
#define DPDO__EXP_MIN (-708.39)

/* Taylor coefficients 1/k!, k = 0 .. 13 (correctly rounded), evaluated by Estrin's scheme
 * (independent pairs, then powers r^2, r^4, r^8): a short dependency chain, so the vector
 * kernel is not latency-bound. R2, R4, R8 are r^2, r^4, r^8 computed by the caller. */
#define DPDO__EXP_POLY(r, R2, R4, R8)                                                              \
    (1.0 + ((r) + ((R2) * (0x1p-1 + (r)*0x1.5555555555555p-3) +                                    \
                   ((R4) * ((0x1.5555555555555p-5 + (r)*0x1.1111111111111p-7) +                    \
                            (R2) * (0x1.6c16c16c16c17p-10 + (r)*0x1.a01a01a01a01ap-13)) +          \
                    (R8) * (((0x1.a01a01a01a01ap-16 + (r)*0x1.71de3a556c734p-19) +                 \
                             (R2) * (0x1.27e4fb7789f5cp-22 + (r)*0x1.ae64567f544e4p-26)) +         \
                            (R4) * (0x1.1eed8eff8d898p-29 + (r)*0x1.6124613a86d09p-33))))))

/* 2/(2k+1), k = 1 .. 11 */
#define DPDO__ATANH_POLY(z)                                                                        \
    ((z) *                                                                                         \
     (0x1.5555555555555p-1 +                                                                       \
      (z) *                                                                                        \
          (0x1.999999999999ap-2 +                                                                  \
           (z) *                                                                                   \
               (0x1.2492492492492p-2 +                                                             \
                (z) *                                                                              \
                    (0x1.c71c71c71c71cp-3 +                                                        \
                     (z) * (0x1.745d1745d1746p-3 +                                                 \
                            (z) * (0x1.3b13b13b13b14p-3 +                                          \
                                   (z) * (0x1.1111111111111p-3 +                                   \
                                          (z) * (0x1.e1e1e1e1e1e1ep-4 +                            \
                                                 (z) * (0x1.af286bca1af28p-4 +                     \
                                                        (z) * (0x1.8618618618618p-4 +              \
                                                               (z)*0x1.642c8590b2164p-4)))))))))))

static inline double dpdo__bits_to_double(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}
static inline uint64_t dpdo__double_to_bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* exp(x) for x <= 0 (see the bounds above); scalar reference of the vector form */
static inline double dpdo__exp_neg(double x)
{
    double t = x * DPDO__INV_LN2 + DPDO__EXP_SHIFT;
    double kd = t - DPDO__EXP_SHIFT;
    double r = (x - kd * DPDO__LN2_HI) - kd * DPDO__LN2_LO;
    int64_t ki = (int64_t)(dpdo__double_to_bits(t) - dpdo__double_to_bits(DPDO__EXP_SHIFT));
    double scale = dpdo__bits_to_double((uint64_t)(ki + 1023) << 52);
    double r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
    double p = DPDO__EXP_POLY(r, r2, r4, r8) * scale;
    return x < DPDO__EXP_MIN ? 0.0 : p;
}

/* log(1 + e) for e in [0, 1] */
static inline double dpdo__log1p01(double e)
{
    double big = e > 0x1.a827999fcef34p-2 ? 1.0 : 0.0; /* sqrt(2) - 1 */
    double num = e - big, den = 2.0 + (e + big);       /* e - 1, 3 + e  or  e, 2 + e */
    double s = num / den, z = s * s;
    return big * DPDO__LN2_HI + ((s + s) + (s * DPDO__ATANH_POLY(z) + big * DPDO__LN2_LO));
}

#endif /* DPDO_VMATH_IMPL_H */
