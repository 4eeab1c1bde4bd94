/* SPDX-License-Identifier: BSD-3-Clause */
/* exp(x) for x <= 0 with fused multiply-adds: the logistic coefficient of the 8-lane full-batch
 * kernel (kernels_l8.c; issue 19, Fed-PLT). The mini-batch kernels keep vmath_impl.h's FMA-free
 * dpdo__exp_neg.
 *
 * Every fma below is a correctly rounded fused multiply-add (IEEE 754 fusedMultiplyAdd): vfmadd on
 * the AVX2+FMA and AVX-512F paths, C99 fma() on the scalar and SSE2 paths (glibc's fma is correctly
 * rounded with or without the FMA instruction). The same expression tree with the same fma at the
 * same places gives the same bits on every path and every x86-64 CPU.
 *
 *   t = fma(x, 1/ln2, 0x1.8p52), k = t - 0x1.8p52 (x / ln2 rounded to an integer),
 *   r = fma(-k, LN2_HI, x) (exact: k LN2_HI has 32 + 11 bits), r = fma(-k, LN2_LO, r), |r| <= ln2/2
 *   + tiny; pairs p01 = fma(c1, r, c0), p23, p45, p67, p89 likewise, r2 = r r, r4 = r2 r2,
 *   Q = fma(r4, fma(r4, p89, fma(r2, p67, p45)), fma(r2, p23, p01)) (Estrin),
 *   exp(r) ~ 1 + fma(r2, Q, r), times 2^k (exact: the result is >= 2^-1022 down to the cut).
 * c0 .. c9: a degree-9 weighted minimax fit (Lawson iterations, scripts/fit-l8-exp.py) of
 * (e^r - 1 - r) / r^2 on [-ln2/2, ln2/2] rounded to double, i.e. a degree-11 polynomial for e^r
 * with the 1 and the r exact; its relative error with these double coefficients is below 1.2e-17
 * (0.1 ulp); degree 10 would be 2.9e-16 (2.6 ulp) before rounding. Bound 1.5 ulp (0.1 polynomial,
 * 0.5 the final 1 + p, 0.25 each rounding r + r^2 Q and the reduced argument); measured 1.05 ulp
 * against expl over 10^7 points (tests/test_vmath.c). x < -708.39: 0 (the exact value is
 * below 2.3e-308); NaN: NaN; -Inf: 0. */
#ifndef DPDO_KERNELS_L8_EXP_H
#define DPDO_KERNELS_L8_EXP_H

#include "vmath_impl.h"
#include <math.h>
#include <stdint.h>

#define DPDO__L8E_C0 0x1.000000000000ap-1
#define DPDO__L8E_C1 0x1.55555555554fap-3
#define DPDO__L8E_C2 0x1.555555555088ap-5
#define DPDO__L8E_C3 0x1.1111111127b9cp-7
#define DPDO__L8E_C4 0x1.6c16c18426d4cp-10
#define DPDO__L8E_C5 0x1.a01a012a6ac16p-13
#define DPDO__L8E_C6 0x1.a0199a15e6c93p-16
#define DPDO__L8E_C7 0x1.71df2535edc65p-19
#define DPDO__L8E_C8 0x1.28ad6974c771ap-22
#define DPDO__L8E_C9 0x1.ad7f83d042debp-26

/* The polynomial part: exp(r) for the reduced argument R (|R| <= ln2/2 + tiny), FMA(a, b, c) a
 * correctly rounded a b + c of the caller's type, K(c) the constant c in that type. */
#define DPDO__L8E_POLY(FMA, K, R, R2, R4)                                                          \
    (K(1.0) + FMA(R2,                                                                              \
                  FMA(R4,                                                                          \
                      FMA(R4, FMA(K(DPDO__L8E_C9), R, K(DPDO__L8E_C8)),                            \
                          FMA(R2, FMA(K(DPDO__L8E_C7), R, K(DPDO__L8E_C6)),                        \
                              FMA(K(DPDO__L8E_C5), R, K(DPDO__L8E_C4)))),                          \
                      FMA(R2, FMA(K(DPDO__L8E_C3), R, K(DPDO__L8E_C2)),                            \
                          FMA(K(DPDO__L8E_C1), R, K(DPDO__L8E_C0)))),                              \
                  R))

#define DPDO__L8E_ID(c) (c)

/* scalar reference (the scalar path of the kernel and the tests' model) */
static inline double dpdo__l8_exp_neg(double x)
{
    double t = fma(x, DPDO__INV_LN2, DPDO__EXP_SHIFT);
    double kd = t - DPDO__EXP_SHIFT;
    double r = fma(-kd, DPDO__LN2_HI, x);
    r = fma(-kd, DPDO__LN2_LO, r);
    int64_t ki = (int64_t)(dpdo__double_to_bits(t) - dpdo__double_to_bits(DPDO__EXP_SHIFT));
    double scale = dpdo__bits_to_double((uint64_t)(ki + 1023) << 52);
    double r2 = r * r, r4 = r2 * r2;
    double p = DPDO__L8E_POLY(fma, DPDO__L8E_ID, r, r2, r4) * scale;
    return x < DPDO__EXP_MIN ? 0.0 : p;
}

#endif /* DPDO_KERNELS_L8_EXP_H */
