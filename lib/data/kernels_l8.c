/* SPDX-License-Identifier: BSD-3-Clause */
/* Full-batch gradient (and loss) of the built-in losses (logistic, hinge, squared) over short
 * dense rows (d <= DPDO__L8_DMAX = 16), in 8 lanes over a transposed copy of the rows (Fed-PLT:
 * the local solvers' gradient steps; docs/performance.md).
 *
 * Layout. dpdo__tcopy_build copies a shard's q rows once, in blocks of 32 samples (PAD): feature j
 * of sample h at xt[(h / 32) 32 d + 32 j + h mod 32] (zeros beyond q, q rounded up to qp, a
 * multiple of 32), and ny[h] = -y_h: (d + 1) qp doubles, about the shard's own share of the data
 * again (Fed-PLT's bench: 100 agents x 6 x 256 doubles = 1.2 MB beside the 1.0 MB of rows). A
 * block of 8 consecutive samples is then d aligned 8-double loads at fixed offsets from one
 * pointer, no gather. When every label of the shard is +1 or -1 (px) the copy holds -y_h x_h,
 * exactly: its margins are s_h directly and the coefficient needs no multiply by -y_h (the same
 * bits: fma, products and sums commute with an exact sign change, and the only difference, the
 * sign of a zero margin, changes no coefficient or loss). Without a copy the block is gathered
 * from the rows into the same layout (same operations, same bits; slower).
 *
 * Order of the operations (every path, bit for bit; fma = one correctly rounded a b + c):
 *   per sample h:  m_h = fma(x_h,d-1, w_d-1, ... fma(x_h1, w_1, fma(x_h0, w_0, +0))) when
 *                  dpdo__l8_margin_fma (max row norm x max |w_j| <= 2^1015: no product can
 *                  overflow), else (...((0 + x_h0 w_0) + x_h1 w_1) + ...) + x_h,d-1 w_d-1 (two
 *                  roundings per term: an overflowing product is +-Inf, Inf - Inf NaN);
 *                  s_h = (-y_h) m_h;
 *                  logistic: e_h = exp(-|s_h|) (kernels_l8_exp.h: table-driven, with fma; the
 *                    argument clamped at -708.39), c_h = (-y_h) *
 *                    ((s_h >= 0 ? 1 : e_h) / (1 + e_h)), loss_h = (s_h > 0 ? s_h : 0) + log1p(e_h);
 *                  hinge: z = 1 + s_h (= 1 - y m exactly), c_h = z > 0 ? -y_h : 0,
 *                    loss_h = z > 0 ? z : 0;
 *                  squared: r = m_h + (-y_h) (= m - y exactly), c_h = r, loss_h = 0.5 r r;
 *                  (bit for bit the phi functions of lib/model/loss.c), clipped by dpdo__clip_coef
 *                  when clip > 0; loss_h only when asked for;
 *   lane k = 0..7 accumulates, for h = k, k + 8, k + 16, ... < q in this order,
 *                  G_j[k] = fma(c_h, x_hj, G_j[k]) (from G_j[k] = +0) and L[k] += loss_h;
 *   at the end     grad[j] += scale * (((G_j[0] + G_j[4]) + (G_j[1] + G_j[5])) +
 *                                      ((G_j[2] + G_j[6]) + (G_j[3] + G_j[7]))),
 *                  *loss_sum = the same tree over L (without the scale).
 * Lanes beyond q (the last block) contribute exact zeros. Explicit fma only (the build's
 * -ffp-contract=off forbids contraction elsewhere), no reassociation: the scalar path (8
 * accumulators per feature, C99 fma()), GCC vectors compiled for SSE2 (xmm pairs, fma() per
 * lane: slow, only on CPUs without FMA), AVX2 with FMA (ymm, vfmadd) and AVX-512F (zmm, vfmadd)
 * execute the same IEEE operations on every element; fma is correctly rounded everywhere (IEEE
 * 754; glibc's fma() too when the CPU lacks the instruction), so the bits do not depend on the
 * CPU. (NaN results are NaN on every path; their sign and payload bits may differ.)
 * -DDPDO__L8_NO_FMA restores the arithmetic before the FMA change (two roundings, vmath_impl.h's
 * exp with its cut to 0 below -708.39, G_j[k] += (scale c_h) x_hj and no scale at the end) bit for
 * bit. The common logistic call (copy with -y_h x_h, fma margins, gradient only, no clipping,
 * d <= 8) runs a software-pipelined instance on AVX-512 and AVX2 (L8P_KERNEL below): the same
 * operations in the same order per accumulator, so the same bits.
 *
 * This is a different summation order from dpdo__lin_grad_logistic's (4 interleaved sums per
 * 256-row chunk) and from the row kernels' (dpdo__lin_grad): a deliberate numeric change of
 * full-batch results of the built-in losses on short dense rows (docs/performance.md). */
#include "data_impl.h"
#include "kernels_l8_exp.h"
#include "vmath_impl.h"
#include <math.h>
#include <string.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

/* Fused multiply-adds (the default) or, compiled with -DDPDO__L8_NO_FMA, the previous FMA-free
 * arithmetic (the build's -ffp-contract=off keeps a * b + c two roundings): the switch reproduces
 * the kernel's results before the FMA change bit for bit (docs/performance.md). */
#ifndef DPDO__L8_NO_FMA
#define L8_FMAS(a, b, c) fma(a, b, c)
#define L8_EXP_NEG(x) dpdo__l8_exp_neg(x)
/* G accumulates c_h x_hj; the scale multiplies each lane tree at the end */
#define L8_SCALE_LATE 1
#else
#define L8_FMAS(a, b, c) ((a) * (b) + (c))
#define L8_EXP_NEG(x) dpdo__exp_neg(x)
/* a_h = scale c_h accumulated (the order before the FMA change) */
#define L8_SCALE_LATE 0
#endif

#ifndef DPDO__NO_LOGIT8
int dpdo__full8_applies(const struct dpdo_dataset *ds)
{
    return ds->layout == DPDO__DS_DENSE && ds->d >= 1 && ds->d <= DPDO__L8_DMAX;
}
#else
int dpdo__full8_applies(const struct dpdo_dataset *ds)
{
    (void)ds;
    return 0;
}
#endif

static inline int64_t l8_row(const int64_t *rows, int64_t first, int64_t h)
{
    return rows ? rows[h] : first + h;
}

/* samples h0 .. h0 + nv - 1 into b[j * st + t] and ny[t], zeros in lanes nv <= t < sb */
static inline void l8_gather(const struct dpdo_dataset *ds, const int64_t *rows, int64_t first,
                             int64_t h0, int nv, int64_t d, int sb, int st, double *b, double *ny)
{
    for (int t = 0; t < sb; t++) {
        if (t < nv) {
            int64_t r = l8_row(rows, first, h0 + t);
            const double *x = ds->X + (size_t)r * (size_t)d;
            for (int64_t j = 0; j < d; j++)
                b[j * st + t] = x[j];
            ny[t] = -ds->y[r];
        } else {
            for (int64_t j = 0; j < d; j++)
                b[j * st + t] = 0.0;
            ny[t] = 0.0;
        }
    }
}

/* the copy's samples from h0 (blocks of DPDO__L8_PAD samples, feature j of sample h at
 * xt[(h / PAD) PAD d + j PAD + h mod PAD]) */
static inline const double *l8_tblock(const struct dpdo__tcopy *tc, int64_t h0)
{
    return tc->xt + (size_t)(h0 / DPDO__L8_PAD) * (size_t)(DPDO__L8_PAD * tc->d) +
           (size_t)(h0 % DPDO__L8_PAD);
}

#define L8_TREE(v)                                                                                 \
    ((((v)[0] + (v)[4]) + ((v)[1] + (v)[5])) + (((v)[2] + (v)[6]) + ((v)[3] + (v)[7])))

/* ---- portable scalar path: 8 accumulators per feature ------------------------------------ */
static void l8_scalar(const struct dpdo_dataset *ds, const int64_t *rows, int64_t first, int64_t q,
                      const struct dpdo__tcopy *tc, int kind, const double *w, double clip,
                      double scale, double *grad, double *loss_sum, int64_t *ncl, int mf)
{
    const int64_t d = ds->d, st = tc ? DPDO__L8_PAD : 8;
    const int px = tc && tc->px; /* the copy holds -y_h x_h: the margin is s_h */
    double G[DPDO__L8_DMAX][8], LS[8], buf[DPDO__L8_DMAX * 8], nyb[8];
    memset(G, 0, sizeof G);
    memset(LS, 0, sizeof LS);
    for (int64_t h0 = 0; h0 < q; h0 += 8) {
        const int nv = q - h0 < 8 ? (int)(q - h0) : 8;
        const double *xb = buf, *nyp = nyb;
        if (tc)
            xb = l8_tblock(tc, h0), nyp = tc->ny + h0;
        else
            l8_gather(ds, rows, first, h0, nv, d, 8, 8, buf, nyb);
        double C[8];
        for (int t = 0; t < 8; t++) {
            double m = 0.0;
            for (int64_t j = 0; j < d; j++)
                m = mf ? L8_FMAS(xb[j * st + t], w[j], m) : m + xb[j * st + t] * w[j];
            double s = px ? m : nyp[t] * m, c, l;
            if (kind == DPDO__L8_LOGISTIC) {
                double e = L8_EXP_NEG(s < 0 ? s : -s);
                c = (s >= 0 ? 1.0 : e) / (1.0 + e);
                if (!px) c = nyp[t] * c;
                l = loss_sum ? (s > 0 ? s : 0.0) + dpdo__log1p01(e) : 0.0;
            } else if (kind == DPDO__L8_HINGE) {
                double z = 1.0 + s; /* 1 - y m */
                c = z > 0.0 ? (px ? 1.0 : nyp[t]) : 0.0;
                l = z > 0.0 ? z : 0.0;
            } else {
                double r = (px ? nyp[t] * m : m) + nyp[t]; /* m - y */
                c = px ? nyp[t] * r : r;
                l = 0.5 * r * r;
            }
            C[t] = t < nv ? c : 0.0;
            if (loss_sum) LS[t] += t < nv ? l : 0.0;
        }
        if (clip > 0.0)
            for (int t = 0; t < nv; t++)
                C[t] = dpdo__clip_coef(ds, l8_row(rows, first, h0 + t), C[t], clip, ncl);
        if (scale != 0.0)
            for (int t = 0; t < 8; t++) {
                double a = L8_SCALE_LATE ? C[t] : scale * C[t];
                for (int64_t j = 0; j < d; j++)
                    G[j][t] = L8_FMAS(a, xb[j * st + t], G[j][t]);
            }
    }
    if (scale != 0.0)
        for (int64_t j = 0; j < d; j++)
            grad[j] += L8_SCALE_LATE ? scale * L8_TREE(G[j]) : L8_TREE(G[j]);
    if (loss_sum) *loss_sum = L8_TREE(LS);
}

/* ---- vector paths: GCC vectors, one 8-double vector (AVX-512) or two 4-double vectors (AVX2,
 * SSE2: GCC splits those into xmm pairs) per block of 8 samples ------------------------------ */
#if defined(__GNUC__) || defined(__clang__)
#define L8_VEC 1
typedef double l8d __attribute__((vector_size(64), aligned(8), may_alias));
typedef int64_t l8i __attribute__((vector_size(64), aligned(8), may_alias));
typedef double l4d __attribute__((vector_size(32), aligned(8), may_alias));
typedef int64_t l4i __attribute__((vector_size(32), aligned(8), may_alias));
/* L8_TREE of the 8 lanes of one AVX-512 vector in registers: ((0+4) + (1+5)) + ((2+6) + (3+7)) */
#if defined(__x86_64__)
static inline __attribute__((always_inline, target("avx512f"))) double l8_hsum8(l8d v)
{
    const __m256d a = _mm256_add_pd(_mm512_castpd512_pd256((__m512d)v),
                                    _mm512_extractf64x4_pd((__m512d)v, 1)); /* 0+4 .. 3+7 */
    const __m256d h = _mm256_hadd_pd(a, a); /* (0+4)+(1+5), ., (2+6)+(3+7), . */
    return _mm_cvtsd_f64(_mm_add_sd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1)));
}
#define L8_HSUM8(V) l8_hsum8(V)
#endif
#define L8_HSUM_NONE(V) ((void)(V), 0.0) /* 4-lane paths: the tree through memory */
/* the j and u loops of the kernels unrolled (G and the block's x in registers) */
#define L8_UNROLL _Pragma("GCC unroll 16")
/* lane-wise mask ? a : b for vector type VD / integer vector type VI */
#define L8SEL(VD, VI, mask, a, b) ((VD)(((VI)(a) & (mask)) | ((VI)(b) & ~(mask))))
/* FM(a, b, c) = a b + c of the vector type, one rounding (hardware FMA; SSE2: C99 fma per lane);
 * L8_EXP_POLY: exp(R) for the reduced argument (kernels_l8_exp.h), VZ the kernel's zero vector */
#ifndef DPDO__L8_NO_FMA
#define L8_FMA8(a, b, c) ((l8d)_mm512_fmadd_pd((__m512d)(a), (__m512d)(b), (__m512d)(c)))
#define L8_FMA4(a, b, c) ((l4d)_mm256_fmadd_pd((__m256d)(a), (__m256d)(b), (__m256d)(c)))
/* l8_fma4s takes 32-byte vectors on the SSE2 path: static and inlined, no ABI boundary (GCC
 * reports it at the end of the file, so the warning stays off to the end: no pop) */
#if defined(__clang__)
#if __has_warning("-Wpsabi")
#pragma clang diagnostic ignored "-Wpsabi"
#endif
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
static inline __attribute__((always_inline)) l4d l8_fma4s(l4d a, l4d b, l4d c)
{
    l4d r;
    for (int t = 0; t < 4; t++)
        r[t] = fma(a[t], b[t], c[t]);
    return r;
}
#define L8_FMA4S(a, b, c) l8_fma4s(a, b, c)
/* T[KI mod 16] of the exp's table (kernels_l8_exp.h): one two-register permute (AVX-512, the
 * index's low 4 bits), a gather (AVX2), lane by lane (SSE2) */
static inline __attribute__((always_inline)) l4d l8_look4s(l4i k)
{
    l4d r;
    for (int t = 0; t < 4; t++)
        r[t] = dpdo__l8e_table[k[t] & 15];
    return r;
}
#define L8_LOOK4S(KI) l8_look4s(KI)
#define L8_LOOK4(KI) ((l4d)_mm256_i64gather_pd(dpdo__l8e_table, (__m256i)((KI)&15), 8))
#define L8_LOOK8(KI) ((l8d)_mm512_permutex2var_pd((__m512d)TBL[0], (__m512i)(KI), (__m512d)TBL[1]))
/* x < -708.39 ? -708.39 : x, NaN stays NaN: (v)maxpd(a, b) = a > b ? a : b is that with a the bound
 */
#define L8_CLAMPG(X) L8SEL(__typeof__(X), l4i, (X) < DPDO__EXP_MIN, VZ + DPDO__EXP_MIN, X)
#define L8_CLAMP4(X) ((l4d)_mm256_max_pd((__m256d)(VZ + DPDO__EXP_MIN), (__m256d)(X)))
#define L8_CLAMP8(X) ((l8d)_mm512_max_pd((__m512d)(VZ + DPDO__EXP_MIN), (__m512d)(X)))
#define L8_K(c) (VZ + (c))
/* E = exp(NA) for NA <= 0 (kernels_l8_exp.h): LOOK(KI) the table entries T[KI mod 16] */
#define L8_EXPV(VD, VI, FM, LOOK, CLAMP, NA, E)                                                    \
    do {                                                                                           \
        const VD X_ = CLAMP(NA); /* NA < -708.39: -708.39; NaN stays NaN */                        \
        const VD T_ = FM(X_, VZ + DPDO__L8E_INV16, VZ + DPDO__EXP_SHIFT);                          \
        const VD KD_ = T_ - DPDO__EXP_SHIFT;                                                       \
        VD R_ = FM(KD_, VZ - DPDO__L8E_HI16, X_);                                                  \
        R_ = FM(KD_, VZ - DPDO__L8E_LO16, R_);                                                     \
        /* k's low 16 bits are T's: j = the low 4, 2^((k - j) / 16) the next 12 moved to the       \
         * exponent field */                                                                       \
        const VD S_ = (VD)((VI)LOOK((VI)T_) + (((VI)T_ >> 4) << 52));                              \
        E = FM(S_, DPDO__L8E_POLY(FM, L8_K, R_, R_ * R_), S_);                                     \
    } while (0)
#define L8_AVX2_TARGET "avx2,fma"
#else
#define L8_FMA8(a, b, c) ((a) * (b) + (c))
#define L8_FMA4(a, b, c) ((a) * (b) + (c))
#define L8_FMA4S(a, b, c) ((a) * (b) + (c))
#define L8_LOOK4S(KI) VZ
#define L8_LOOK4(KI) VZ
#define L8_LOOK8(KI) VZ
#define L8_CLAMPG(X) (X)
#define L8_CLAMP4(X) (X)
#define L8_CLAMP8(X) (X)
#define L8_EXP_POLY(FM, R)                                                                         \
    DPDO__EXP_POLY(R, (R) * (R), ((R) * (R)) * ((R) * (R)),                                        \
                   (((R) * (R)) * ((R) * (R))) * (((R) * (R)) * ((R) * (R))))
/* the FMA-free exp of vmath_impl.h (dpdo__exp_neg) */
#define L8_EXPV(VD, VI, FM, LOOK, CLAMP, NA, E)                                                    \
    do {                                                                                           \
        const VD T_ = FM(NA, VZ + DPDO__INV_LN2, VZ + DPDO__EXP_SHIFT);                            \
        const VD KD_ = T_ - DPDO__EXP_SHIFT;                                                       \
        const VD R_ = FM(-KD_, VZ + DPDO__LN2_LO, FM(-KD_, VZ + DPDO__LN2_HI, NA));                \
        const VI KI_ = (VI)T_ - (VI)(VZ + DPDO__EXP_SHIFT);                                        \
        E = L8_EXP_POLY(FM, R_) * (VD)((KI_ + 1023) << 52);                                        \
        E = L8SEL(VD, VI, NA < DPDO__EXP_MIN, VZ, E);                                              \
    } while (0)
#define L8_AVX2_TARGET "avx2"
#endif

/* OUT = L8_TREE of one feature's NU accumulators GJ of W lanes: in registers (HSUM) for one
 * 8-lane vector, else through the 8 doubles T8 */
#define L8_LANE_TREE(VD, W, NU, HSUM, GJ, T8, OUT)                                                 \
    do {                                                                                           \
        if (W == 8) {                                                                              \
            OUT = HSUM((GJ)[0]);                                                                   \
        } else {                                                                                   \
            L8_UNROLL for (int u_ = 0; u_ < NU; u_++) * (VD *)((T8) + u_ * W) = (GJ)[u_];          \
            OUT = L8_TREE(T8);                                                                     \
        }                                                                                          \
    } while (0)

/* the kernels' constants: zero, one, the sign bit, the exp's table (kernels_l8_exp.h) in
 * registers, the lane numbers */
/* clang-format off */
#define L8_CONSTS(VD, VI, W)                                                                       \
    const VD VZ = {0}, ONE = VZ + 1.0;                                                             \
    const VI SIGN = (VI){0} + INT64_MIN;                                                           \
    VD TBL[16 / W];                                                                                \
    L8_UNROLL for (int i_ = 0; i_ < 16 / W; i_++)                                                  \
        TBL[i_] = *(const VD *)(dpdo__l8e_table + i_ * W);                                         \
    (void)TBL;                                                                                     \
    VI LANE;                                                                                       \
    for (int t_ = 0; t_ < W; t_++)                                                                 \
        LANE[t_] = t_
/* clang-format on */

typedef void (*l8_fn)(const struct dpdo_dataset *, const int64_t *, int64_t, int64_t,
                      const struct dpdo__tcopy *, int, const double *, double, double, double *,
                      double *, int64_t *, int);

/* the kernels: kernels_l8_body.h once per instruction set */
#define L8B_SUF sse2
#define L8B_ATTR
#define VD l4d
#define VI l4i
#define W 4
#define SB 8
#define FM L8_FMA4S
#define LOOK L8_LOOK4S
#define CLAMP L8_CLAMPG
#define HSUM L8_HSUM_NONE
#include "kernels_l8_body.h"
#if defined(__x86_64__)
#define L8_X86 1
#define L8B_SUF avx2
#define L8B_ATTR __attribute__((target(L8_AVX2_TARGET)))
#define VD l4d
#define VI l4i
#define W 4
#define SB 16
#define FM L8_FMA4
#define LOOK L8_LOOK4
#define CLAMP L8_CLAMP4
#define HSUM L8_HSUM_NONE
#include "kernels_l8_body.h"
#define L8B_SUF avx512
#define L8B_ATTR __attribute__((target("avx512f")))
#define VD l8d
#define VI l8i
#define W 8
#define SB 32
#define FM L8_FMA8
#define LOOK L8_LOOK8
#define CLAMP L8_CLAMP8
#define HSUM L8_HSUM8
#include "kernels_l8_body.h"
#ifndef DPDO__L8_NO_FMA
/* The common logistic call (a transposed copy holding -y_h x_h, fma margins, the gradient only,
 * no clipping, d <= 8), software-pipelined on the AVX-512 and AVX2 paths: iteration k computes
 * the coefficients of block k, whose margins are ready, then the margins of block k + 1 and the
 * gradient terms of block k - 1. The exp-and-divide chain of a block (~60 cycles of latency)
 * then overlaps independent work instead of waiting behind the margins it needs: Zen 4's
 * out-of-order window holds about one iteration, and l8_D_avx512 ran at 1.16 ns per sample
 * against 0.98 here (bench/bench_l8, Fed-PLT's shape). Per accumulator, the same operations on
 * the same values in the same order as the kernels of kernels_l8_body.h with kind = logistic, px,
 * mf, no loss and no clipping: the same bits (tests/test_dataset.c, test_logit8_paths). */
/* clang-format off */
/* M = the margins of the block at X; G += the gradient terms C of the block at X */
#define L8P_MARGINS(X, DD, VD, W, FM)                                                              \
    do {                                                                                           \
        L8_UNROLL for (int v = 0; v < NV; v++) M[v] = VZ;                                          \
        L8_UNROLL for (int j = 0; j < DD; j++)                                                     \
            L8_UNROLL for (int v = 0; v < NV; v++)                                                 \
                M[v] = FM(*(const VD *)((X) + j * st + v * W), WB[j], M[v]);                       \
    } while (0)
#define L8P_GRAD(X, DD, VD, W, FM)                                                                 \
    do {                                                                                           \
        L8_UNROLL for (int j = 0; j < DD; j++)                                                     \
            L8_UNROLL for (int v = 0; v < NV; v++)                                                 \
                G[j][v % NU] = FM(C[v], *(const VD *)((X) + j * st + v * W), G[j][v % NU]);        \
    } while (0)
#define L8P_KERNEL(NAME, ATTR, DD, VD, VI, W, FM, LOOK, CLAMP, HSUM)                               \
    ATTR static void NAME(const struct dpdo__tcopy *tc, int64_t q, const double *w, double scale,  \
                          double *grad)                                                            \
    {                                                                                              \
        enum { NU = 8 / W, NV = DPDO__L8_PAD / W, SB = DPDO__L8_PAD }; /* one copy block */        \
        const int64_t st = DPDO__L8_PAD;                                                           \
        L8_CONSTS(VD, VI, W);                                                                      \
        VD G[DD][NU], WB[DD], M[NV], C[NV];                                                        \
        L8_UNROLL for (int j = 0; j < DD; j++) {                                                   \
            WB[j] = VZ + w[j];                                                                     \
            L8_UNROLL for (int u = 0; u < NU; u++) G[j][u] = VZ;                                   \
        }                                                                                          \
        const double *xb = l8_tblock(tc, 0), *xp = NULL; /* this block's x, the previous one's */  \
        L8P_MARGINS(xb, DD, VD, W, FM);                                                            \
        for (int64_t h0 = 0; h0 < q; h0 += SB) {                                                   \
            VD E[NV], CN[NV];                                                                      \
            L8_UNROLL for (int v = 0; v < NV; v++) {                                               \
                const VD NA = (VD)((VI)M[v] | SIGN); /* -|s|; NaN stays NaN */                     \
                L8_EXPV(VD, VI, FM, LOOK, CLAMP, NA, E[v]);                                        \
            }                                                                                      \
            L8_UNROLL for (int v = 0; v < NV; v++)                                                 \
                CN[v] = L8SEL(VD, VI, M[v] >= 0, ONE, E[v]) / (ONE + E[v]);                        \
            const double *xn = xb;                                                                 \
            if (h0 + SB < q) { /* the margins of the next block */                                 \
                xn = l8_tblock(tc, h0 + SB);                                                       \
                L8P_MARGINS(xn, DD, VD, W, FM);                                                    \
            }                                                                                      \
            if (xp) L8P_GRAD(xp, DD, VD, W, FM); /* the gradient terms of the previous block */    \
            if (q - h0 < SB) /* the last block: lanes beyond q contribute exact zeros */           \
                L8_UNROLL for (int v = 0; v < NV; v++)                                             \
                    CN[v] = L8SEL(VD, VI, LANE + v * W < (VI){0} + (q - h0), CN[v], VZ);           \
            L8_UNROLL for (int v = 0; v < NV; v++) C[v] = CN[v];                                   \
            xp = xb, xb = xn;                                                                      \
        }                                                                                          \
        L8P_GRAD(xp, DD, VD, W, FM);                                                               \
        double t8[8];                                                                              \
        L8_UNROLL for (int j = 0; j < DD; j++) {                                                   \
            double tj;                                                                             \
            L8_LANE_TREE(VD, W, NU, HSUM, G[j], t8, tj);                                           \
            grad[j] += scale * tj;                                                                 \
        }                                                                                          \
    }
typedef void (*l8p_fn)(const struct dpdo__tcopy *, int64_t, const double *, double, double *);
#define L8P_SET(SUF, ATTR, VD, VI, W, FM, LK, CL, HS)                                              \
    L8P_KERNEL(l8p_1_##SUF, ATTR, 1, VD, VI, W, FM, LK, CL, HS) L8P_KERNEL(l8p_2_##SUF, ATTR, 2, VD, VI, W, FM, LK, CL, HS) \
    L8P_KERNEL(l8p_3_##SUF, ATTR, 3, VD, VI, W, FM, LK, CL, HS) L8P_KERNEL(l8p_4_##SUF, ATTR, 4, VD, VI, W, FM, LK, CL, HS) \
    L8P_KERNEL(l8p_5_##SUF, ATTR, 5, VD, VI, W, FM, LK, CL, HS) L8P_KERNEL(l8p_6_##SUF, ATTR, 6, VD, VI, W, FM, LK, CL, HS) \
    L8P_KERNEL(l8p_7_##SUF, ATTR, 7, VD, VI, W, FM, LK, CL, HS) L8P_KERNEL(l8p_8_##SUF, ATTR, 8, VD, VI, W, FM, LK, CL, HS)
#define L8P_ROW(SUF) {l8p_1_##SUF, l8p_2_##SUF, l8p_3_##SUF, l8p_4_##SUF, l8p_5_##SUF, l8p_6_##SUF, l8p_7_##SUF, l8p_8_##SUF}
L8P_SET(avx2, __attribute__((target(L8_AVX2_TARGET))), l4d, l4i, 4, L8_FMA4, L8_LOOK4, L8_CLAMP4,
        L8_HSUM_NONE)
L8P_SET(avx512, __attribute__((target("avx512f"))), l8d, l8i, 8, L8_FMA8, L8_LOOK8, L8_CLAMP8,
        L8_HSUM8)
static const l8p_fn l8p_tab[2][8] = {L8P_ROW(avx2), L8P_ROW(avx512)}; /* [path - 2][d - 1] */
/* clang-format on */
#define L8_PIPE 1
#endif
#endif
#endif /* GCC vectors */

int dpdo__l8_margin_fma(const struct dpdo_dataset *ds, const double *w)
{
#ifndef DPDO__L8_NO_FMA
    double wm = 0.0;
    for (int64_t j = 0; j < ds->d; j++) {
        const double a = fabs(w[j]);
        if (!(a <= 0x1p1015)) return 0; /* also NaN */
        wm = a > wm ? a : wm;
    }
    return ds->max_row_norm * wm <= 0x1p1015;
#else
    (void)ds, (void)w;
    return 0;
#endif
}

int dpdo__lin_grad_full8(const struct dpdo_dataset *ds, const int64_t *rows, int64_t first,
                         int64_t q, const struct dpdo__tcopy *tc, int kind, const double *w,
                         double clip, double scale, double *grad, double *loss_sum,
                         int64_t *nclipped, int path)
{
    if (ds->layout != DPDO__DS_DENSE || ds->d < 1 || ds->d > DPDO__L8_DMAX) return 0;
    if (kind != DPDO__L8_LOGISTIC && kind != DPDO__L8_HINGE && kind != DPDO__L8_SQUARED) return 0;
    if (tc && (tc->q != q || tc->d != ds->d)) tc = NULL; /* not this call's rows */
#ifdef L8_X86
#ifndef DPDO__L8_NO_FMA
    const int has2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    const int has2 = __builtin_cpu_supports("avx2");
#endif
    const int best = __builtin_cpu_supports("avx512f") ? 3 : has2 ? 2 : 1;
#elif defined(L8_VEC)
    const int best = 1;
#else
    const int best = 0;
#endif
    if (path < 0) path = best;
    if (path > best) return 0;
    const int mf = dpdo__l8_margin_fma(ds, w);
    int64_t ncl = 0;
    double lsum = 0.0;
    double *ls = loss_sum ? &lsum : NULL;
#ifdef L8_PIPE
    /* the common logistic call: software-pipelined (the same bits) */
    if ((path == 3 || path == 2) && kind == DPDO__L8_LOGISTIC && tc && tc->px && mf && !loss_sum &&
        !(clip > 0.0) && scale != 0.0 && ds->d <= 8) {
        l8p_tab[path - 2][ds->d - 1](tc, q, w, scale, grad);
        if (nclipped) *nclipped = 0;
        return 1;
    }
#endif
    switch (path) {
#ifdef L8_X86
    case 3:
        l8_pick_avx512(ds->d, kind)(ds, rows, first, q, tc, kind, w, clip, scale, grad, ls, &ncl,
                                    mf);
        break;
    case 2:
        l8_pick_avx2(ds->d, kind)(ds, rows, first, q, tc, kind, w, clip, scale, grad, ls, &ncl, mf);
        break;
#endif
#ifdef L8_VEC
    case 1:
        l8_pick_sse2(ds->d, kind)(ds, rows, first, q, tc, kind, w, clip, scale, grad, ls, &ncl, mf);
        break;
#endif
    default:
        l8_scalar(ds, rows, first, q, tc, kind, w, clip, scale, grad, ls, &ncl, mf);
        break;
    }
    if (loss_sum) *loss_sum = lsum;
    if (nclipped) *nclipped = ncl;
    return 1;
}

int dpdo__tcopy_build(const struct dpdo_shard *sh, struct dpdo__tcopy **out)
{
    *out = NULL;
    const struct dpdo_dataset *ds = sh->parent;
    if (!dpdo__full8_applies(ds) || sh->n < 1) return DPDO_OK;
    const int64_t q = sh->n, d = ds->d;
    if (q > INT64_MAX - DPDO__L8_PAD) return DPDO_E_NOMEM;
    const int64_t qp = (q + DPDO__L8_PAD - 1) / DPDO__L8_PAD * DPDO__L8_PAD;
    size_t n;
    if (!dpdo__mul_size((size_t)qp, (size_t)(d + 1) * sizeof(double), &n)) return DPDO_E_NOMEM;
    struct dpdo__tcopy *tc = dpdo__calloc(1, sizeof *tc);
    if (!tc) return DPDO_E_NOMEM;
    tc->xt = dpdo__alloc_aligned(n);
    if (!tc->xt) {
        dpdo__free(tc);
        return DPDO_E_NOMEM;
    }
    tc->q = q, tc->qp = qp, tc->d = d;
    tc->ny = tc->xt + (size_t)d * (size_t)qp;
    /* labels +-1 (every built-in classification data set): store -y_h x_h, exact, so that the
     * kernel's margin is s_h = -y_h m_h without a multiply (the same bits: fma and the sums are
     * symmetric under a sign change; kernels_l8.c) */
    tc->px = 1;
    for (int64_t h = 0; h < q && tc->px; h++) {
        const double y = ds->y[dpdo__shard_row(sh, h)];
        tc->px = y == 1.0 || y == -1.0;
    }
    for (int64_t h = 0; h < qp; h++) {
        if (h < q) {
            int64_t r = dpdo__shard_row(sh, h);
            const double *x = ds->X + (size_t)r * (size_t)d;
            double *b = (double *)l8_tblock(tc, h);
            for (int64_t j = 0; j < d; j++)
                b[j * DPDO__L8_PAD] = tc->px ? -ds->y[r] * x[j] : x[j];
            tc->ny[h] = -ds->y[r];
        } else {
            double *b = (double *)l8_tblock(tc, h);
            for (int64_t j = 0; j < d; j++)
                b[j * DPDO__L8_PAD] = 0.0;
            tc->ny[h] = 0.0;
        }
    }
    *out = tc;
    return DPDO_OK;
}

void dpdo__tcopy_free(struct dpdo__tcopy *tc)
{
    if (!tc) return;
    dpdo__free_aligned(tc->xt);
    dpdo__free(tc);
}
