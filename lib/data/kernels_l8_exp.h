/* SPDX-License-Identifier: BSD-3-Clause */
/* exp(x) for x <= 0 with fused multiply-adds and a 16-entry table: the logistic coefficient of the
 * 8-lane full-batch kernel (kernels_l8.c, Fed-PLT). The mini-batch kernels keep
 * vmath_impl.h's FMA-free dpdo__exp_neg.
 *
 * Every fma below is a correctly rounded fused multiply-add (IEEE 754 fusedMultiplyAdd): vfmadd on
 * the AVX2+FMA and AVX-512F paths, C99 fma() on the scalar and SSE2 paths (glibc's fma is correctly
 * rounded with or without the FMA instruction). The table lookup and the integer steps are exact.
 * The same expression tree with the same fma at the same places gives the same bits on every path
 * and every x86-64 CPU.
 *
 *   t = fma(x, 16/ln2, 0x1.8p52), k = t - 0x1.8p52 (16 x / ln2 rounded to an integer, k <= 0),
 *   r = fma(-k, LN2_HI/16, x) (exact: k LN2_HI/16 has 32 + 15 bits), r = fma(-k, LN2_LO/16, r),
 *   |r| <= ln2/32 + tiny; j = k mod 16, s = T[j] 2^((k - j)/16) (T[j] = 2^(j/16) rounded to
 *   double; the power of two added to T[j]'s exponent field: exact, s >= 2^-1022 down to the cut);
 *   r2 = r r, Q = fma(r2, fma(r2, c4, fma(c3, r, c2)), fma(c1, r, c0)) (Estrin),
 *   p = fma(r2, Q, r) (~ e^r - 1), exp(x) ~ fma(s, p, s).
 * c0 .. c4: a degree-4 weighted minimax fit (Lawson iterations, scripts/fit-l8-exp.py) of
 * (e^r - 1 - r) / r^2 on [-ln2/32, ln2/32] rounded to double, i.e. a degree-6 polynomial for e^r
 * with the 1 and the r exact; its relative error with these double coefficients is below 1.2e-17
 * (0.05 ulp). Bound 1.65 ulp: before the final rounding the relative error is below
 * 1.13 x 2^-53 (the table entry 2^-53, p's rounding 0.022 x 2^-53, the polynomial 0.11 x 2^-53),
 * up to 1.13 ulp of the result, plus 0.5 ulp the final fma; measured 1.11 ulp against expl over
 * 10^7 points (tests/test_vmath.c). x < -708.39 is clamped to -708.39: the result there is
 * exp(-708.39) = 2.27e-308 (a normal number; absolute error below 2.3e-308) where the previous
 * kernels return 0, which spares the vector paths a compare and a select per value (one max);
 * NaN: NaN; -Inf: 2.27e-308.
 *
 * (Until 2026-11-25 the kernel used a table-free degree-11 polynomial on [-ln2/2, ln2/2]: 15
 * multiplies per value against 10 now, on a kernel bound by its multiply pipes;
 * docs/performance.md.) */
#ifndef DPDO_KERNELS_L8_EXP_H
#define DPDO_KERNELS_L8_EXP_H

#include "vmath_impl.h"
#include <math.h>
#include <stdint.h>

#define DPDO__L8E_C0 0x1.fffffffffffb9p-2
#define DPDO__L8E_C1 0x1.555555548f734p-3
#define DPDO__L8E_C2 0x1.55555558fd1a2p-5
#define DPDO__L8E_C3 0x1.11123abe85651p-7
#define DPDO__L8E_C4 0x1.6c14c6c359c1bp-10
#define DPDO__L8E_INV16 0x1.71547652b82fep4  /* 16 DPDO__INV_LN2 */
#define DPDO__L8E_HI16 0x1.62e42fee00000p-5  /* DPDO__LN2_HI / 16 */
#define DPDO__L8E_LO16 0x1.a39ef35793c76p-37 /* DPDO__LN2_LO / 16 */

/* T[j] = 2^(j / 16) rounded to double, j = 0 .. 15 */
#define DPDO__L8E_TABLE                                                                            \
    {                                                                                              \
        0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0, 0x1.2387a6e756238p+0,    \
            0x1.306fe0a31b715p+0, 0x1.3dea64c123422p+0, 0x1.4bfdad5362a27p+0,                      \
            0x1.5ab07dd485429p+0, 0x1.6a09e667f3bcdp+0, 0x1.7a11473eb0187p+0,                      \
            0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0, 0x1.ae89f995ad3adp+0,                      \
            0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0, 0x1.ea4afa2a490dap+0                       \
    }
static const double dpdo__l8e_table[16] __attribute__((aligned(64))) = DPDO__L8E_TABLE;

/* The polynomial part: p ~ e^R - 1 for the reduced argument R (|R| <= ln2/32 + tiny), R2 = R R,
 * FMA(a, b, c) a correctly rounded a b + c of the caller's type, K(c) the constant c in that type.
 */
#define DPDO__L8E_POLY(FMA, K, R, R2)                                                              \
    FMA(R2,                                                                                        \
        FMA(R2, FMA(R2, K(DPDO__L8E_C4), FMA(K(DPDO__L8E_C3), R, K(DPDO__L8E_C2))),                \
            FMA(K(DPDO__L8E_C1), R, K(DPDO__L8E_C0))),                                             \
        R)

#define DPDO__L8E_ID(c) (c)

/* scalar reference (the scalar path of the kernel and the tests' model) */
static inline double dpdo__l8_exp_neg(double x)
{
    x = x < DPDO__EXP_MIN ? DPDO__EXP_MIN : x; /* NaN stays NaN */
    double t = fma(x, DPDO__L8E_INV16, DPDO__EXP_SHIFT);
    double kd = t - DPDO__EXP_SHIFT;
    double r = fma(-kd, DPDO__L8E_HI16, x);
    r = fma(-kd, DPDO__L8E_LO16, r);
    uint64_t ki = dpdo__double_to_bits(t) - dpdo__double_to_bits(DPDO__EXP_SHIFT);
    double s = dpdo__bits_to_double(dpdo__double_to_bits(dpdo__l8e_table[ki & 15]) +
                                    ((ki & ~(uint64_t)15) << 48));
    double r2 = r * r;
    double p = DPDO__L8E_POLY(fma, DPDO__L8E_ID, r, r2);
    return fma(s, p, s);
}

#endif /* DPDO_KERNELS_L8_EXP_H */
