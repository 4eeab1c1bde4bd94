/* SPDX-License-Identifier: BSD-3-Clause */
/* Full-batch gradient (and loss) of the built-in losses (logistic, hinge, squared) over short
 * dense rows (d <= DPDO__L8_DMAX = 16), in 8 lanes over a transposed copy of the rows (issue 19,
 * Fed-PLT: the local solvers' gradient steps).
 *
 * Layout. dpdo__tcopy_build copies a shard's q rows once into xt[j * qp + h] (feature j of
 * sample h, qp = q rounded up to a multiple of 32, zeros beyond q) and ny[h] = -y_h: (d + 1) qp
 * doubles, about the shard's own share of the data again (Fed-PLT's bench: 100 agents x 6 x 256
 * doubles = 1.2 MB beside the 1.0 MB of rows). A block of 8 consecutive samples is then d aligned
 * 8-double loads, no gather. Without a copy the block is gathered from the rows into the same
 * layout (same operations, same bits; slower).
 *
 * Order of the operations (every path, bit for bit; fma = one correctly rounded a b + c):
 *   per sample h:  m_h = fma(x_h,d-1, w_d-1, ... fma(x_h1, w_1, fma(x_h0, w_0, +0))) when
 *                  dpdo__l8_margin_fma (max row norm x max |w_j| <= 2^1015: no product can
 *                  overflow), else (...((0 + x_h0 w_0) + x_h1 w_1) + ...) + x_h,d-1 w_d-1 (two
 *                  roundings per term: an overflowing product is +-Inf, Inf - Inf NaN);
 *                  s_h = (-y_h) m_h;
 *                  logistic: e_h = exp(-|s_h|) (kernels_l8_exp.h, with fma), c_h = (-y_h) *
 *                    ((s_h >= 0 ? 1 : e_h) / (1 + e_h)), loss_h = (s_h > 0 ? s_h : 0) + log1p(e_h);
 *                  hinge: z = 1 + s_h (= 1 - y m exactly), c_h = z > 0 ? -y_h : 0,
 *                    loss_h = z > 0 ? z : 0;
 *                  squared: r = m_h + (-y_h) (= m - y exactly), c_h = r, loss_h = 0.5 r r;
 *                  (bit for bit the phi functions of lib/model/loss.c), clipped by dpdo__clip_coef
 *                  when clip > 0, a_h = scale * c_h; loss_h only when asked for;
 *   lane k = 0..7 accumulates, for h = k, k + 8, k + 16, ... < q in this order,
 *                  G_j[k] = fma(a_h, x_hj, G_j[k]) (from G_j[k] = +0) and L[k] += loss_h;
 *   at the end     grad[j] += ((G_j[0] + G_j[4]) + (G_j[1] + G_j[5])) +
 *                             ((G_j[2] + G_j[6]) + (G_j[3] + G_j[7])),
 *                  *loss_sum = the same tree over L.
 * Lanes beyond q (the last block) contribute exact zeros. Explicit fma only (the build's
 * -ffp-contract=off forbids contraction elsewhere), no reassociation: the scalar path (8
 * accumulators per feature, C99 fma()), GCC vectors compiled for SSE2 (xmm pairs, fma() per
 * lane: slow, only on CPUs without FMA), AVX2 with FMA (ymm, vfmadd) and AVX-512F (zmm, vfmadd)
 * execute the same IEEE operations on every element; fma is correctly rounded everywhere (IEEE
 * 754; glibc's fma() too when the CPU lacks the instruction), so the bits do not depend on the
 * CPU. (NaN results are NaN on every path; their sign and payload bits may differ.)
 * -DDPDO__L8_NO_FMA restores the previous arithmetic (two roundings, vmath_impl.h's exp) bit
 * for bit.
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
#else
#define L8_FMAS(a, b, c) ((a) * (b) + (c))
#define L8_EXP_NEG(x) dpdo__exp_neg(x)
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

/* samples h0 .. h0 + nv - 1 into b[j * sb + t] and ny[t], zeros in lanes nv <= t < sb */
static inline void l8_gather(const struct dpdo_dataset *ds, const int64_t *rows, int64_t first,
                             int64_t h0, int nv, int64_t d, int sb, double *b, double *ny)
{
    for (int t = 0; t < sb; t++) {
        if (t < nv) {
            int64_t r = l8_row(rows, first, h0 + t);
            const double *x = ds->X + (size_t)r * (size_t)d;
            for (int64_t j = 0; j < d; j++)
                b[j * sb + t] = x[j];
            ny[t] = -ds->y[r];
        } else {
            for (int64_t j = 0; j < d; j++)
                b[j * sb + t] = 0.0;
            ny[t] = 0.0;
        }
    }
}

#define L8_TREE(v)                                                                                 \
    ((((v)[0] + (v)[4]) + ((v)[1] + (v)[5])) + (((v)[2] + (v)[6]) + ((v)[3] + (v)[7])))

/* ---- portable scalar path: 8 accumulators per feature ------------------------------------ */
static void l8_scalar(const struct dpdo_dataset *ds, const int64_t *rows, int64_t first, int64_t q,
                      const struct dpdo__tcopy *tc, int kind, const double *w, double clip,
                      double scale, double *grad, double *loss_sum, int64_t *ncl, int mf)
{
    const int64_t d = ds->d, st = tc ? tc->qp : 8;
    double G[DPDO__L8_DMAX][8], LS[8], buf[DPDO__L8_DMAX * 8], nyb[8];
    memset(G, 0, sizeof G);
    memset(LS, 0, sizeof LS);
    for (int64_t h0 = 0; h0 < q; h0 += 8) {
        const int nv = q - h0 < 8 ? (int)(q - h0) : 8;
        const double *xb = buf, *nyp = nyb;
        if (tc)
            xb = tc->xt + h0, nyp = tc->ny + h0;
        else
            l8_gather(ds, rows, first, h0, nv, d, 8, buf, nyb);
        double C[8];
        for (int t = 0; t < 8; t++) {
            double m = 0.0;
            for (int64_t j = 0; j < d; j++)
                m = mf ? L8_FMAS(xb[j * st + t], w[j], m) : m + xb[j * st + t] * w[j];
            double s = nyp[t] * m, c, l;
            if (kind == DPDO__L8_LOGISTIC) {
                double e = L8_EXP_NEG(s < 0 ? s : -s);
                c = nyp[t] * ((s >= 0 ? 1.0 : e) / (1.0 + e));
                l = loss_sum ? (s > 0 ? s : 0.0) + dpdo__log1p01(e) : 0.0;
            } else if (kind == DPDO__L8_HINGE) {
                double z = 1.0 + s; /* 1 - y m */
                c = z > 0.0 ? nyp[t] : 0.0;
                l = z > 0.0 ? z : 0.0;
            } else {
                double r = m + nyp[t]; /* m - y */
                c = r;
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
                double a = scale * C[t];
                for (int64_t j = 0; j < d; j++)
                    G[j][t] = L8_FMAS(a, xb[j * st + t], G[j][t]);
            }
    }
    if (scale != 0.0)
        for (int64_t j = 0; j < d; j++)
            grad[j] += L8_TREE(G[j]);
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
#define L8_K(c) (VZ + (c))
#define L8_EXP_POLY(FM, R) DPDO__L8E_POLY(FM, L8_K, R, (R) * (R), ((R) * (R)) * ((R) * (R)))
#define L8_AVX2_TARGET "avx2,fma"
#else
#define L8_FMA8(a, b, c) ((a) * (b) + (c))
#define L8_FMA4(a, b, c) ((a) * (b) + (c))
#define L8_FMA4S(a, b, c) ((a) * (b) + (c))
#define L8_EXP_POLY(FM, R)                                                                         \
    DPDO__EXP_POLY(R, (R) * (R), ((R) * (R)) * ((R) * (R)),                                        \
                   (((R) * (R)) * ((R) * (R))) * (((R) * (R)) * ((R) * (R))))
#define L8_AVX2_TARGET "avx2"
#endif

/* SB = 8, 16 or 32 samples per iteration (one to four 8-sample blocks; SSE2 8, AVX2 16, AVX-512 32:
 * the fastest measured on Zen 4) as NV = SB / W vectors of W lanes (VD, VI); vector v holds samples
 * h0 + v W .. h0 + v W + W - 1, i.e. lanes u W .. u W + W - 1 of the 8-lane order with u = v mod (8
 * / W), and the vectors of one iteration are accumulated in order of v (so the blocks of one
 * iteration are the same as one after the other). Each step is written as a loop over v, so that
 * the compiler interleaves the NV independent chains (the exp and the division have long
 * latencies). DD > 0: d is that constant (the j loops unroll), 0: ds->d. The copy and the gather
 * buffer hold whole iterations (qp: a multiple of DPDO__L8_PAD). */
/* the kernel body is laid out by hand (L8_UNROLL precedes its loops) */
/* clang-format off */
#define L8_KERNEL(NAME, ATTR, DD, VD, VI, W, SB, KL, FM)                                            \
    ATTR static void NAME(const struct dpdo_dataset *ds, const int64_t *rows, int64_t first,       \
                          int64_t q, const struct dpdo__tcopy *tc, int kind, const double *w,      \
                          double clip, double scale, double *grad, double *loss_sum, int64_t *ncl, \
                          int mf)                                                                  \
    {                                                                                              \
        enum { NU = 8 / W, NV = SB / W };                                                          \
        if (KL >= 0) kind = KL; /* a logistic instance: the other branches fold away */           \
        const int64_t d = DD > 0 ? DD : ds->d, st = tc ? tc->qp : SB;                              \
        const VD VZ = {0}, ONE = VZ + 1.0;                                                         \
        const VI SIGN = (VI){0} + INT64_MIN;                                                       \
        VI LANE;                                                                                   \
        for (int t = 0; t < W; t++)                                                                \
            LANE[t] = t;                                                                           \
        VD G[DPDO__L8_DMAX][NU], LS[NU], WB[DPDO__L8_DMAX]; /* WB: w_j in every lane */            \
        L8_UNROLL for (int j = 0; j < DPDO__L8_DMAX; j++) /* w_j, or +0 for -0: the same margin */ \
            WB[j] = VZ + (j < d ? w[j] : 0.0);                                                     \
        double buf[DPDO__L8_DMAX * SB], nyb[SB];                                                   \
        L8_UNROLL for (int u = 0; u < NU; u++) {                                                   \
            LS[u] = VZ;                                                                            \
            L8_UNROLL for (int64_t j = 0; j < d; j++)                                              \
                G[j][u] = VZ;                                                                      \
        }                                                                                          \
        for (int64_t h0 = 0; h0 < q; h0 += SB) {                                                   \
            const int nv = q - h0 < SB ? (int)(q - h0) : SB;                                       \
            const double *xb = buf, *nyp = nyb;                                                    \
            if (tc)                                                                                \
                xb = tc->xt + h0, nyp = tc->ny + h0;                                               \
            else                                                                                   \
                l8_gather(ds, rows, first, h0, nv, d, SB, buf, nyb);                               \
            VD NY[NV], M[NV], S[NV], NA[NV], E[NV], C[NV];                                         \
            L8_UNROLL for (int v = 0; v < NV; v++) NY[v] = *(const VD *)(nyp + v * W);             \
            L8_UNROLL for (int v = 0; v < NV; v++) M[v] = VZ;                                      \
            if (mf) {                                                                              \
                L8_UNROLL for (int64_t j = 0; j < d; j++)                                          \
                    L8_UNROLL for (int v = 0; v < NV; v++)                                         \
                        M[v] = FM(*(const VD *)(xb + j * st + v * W), WB[j], M[v]);                \
            } else {                                                                               \
                L8_UNROLL for (int64_t j = 0; j < d; j++)                                          \
                    L8_UNROLL for (int v = 0; v < NV; v++)                                         \
                        M[v] += *(const VD *)(xb + j * st + v * W) * WB[j];                        \
            }                                                                                      \
            L8_UNROLL for (int v = 0; v < NV; v++) S[v] = NY[v] * M[v];                            \
            VD LV[NV];                                                                             \
            if (kind == DPDO__L8_LOGISTIC) {                                                       \
                L8_UNROLL for (int v = 0; v < NV; v++)                                             \
                    NA[v] = (VD)((VI)S[v] | SIGN); /* -|s|; NaN stays NaN */                       \
                L8_UNROLL for (int v = 0; v < NV; v++) {                                           \
                    const VD T = FM(NA[v], VZ + DPDO__INV_LN2, VZ + DPDO__EXP_SHIFT);              \
                    const VD KD = T - DPDO__EXP_SHIFT;                                             \
                    const VD R = FM(-KD, VZ + DPDO__LN2_LO, FM(-KD, VZ + DPDO__LN2_HI, NA[v]));    \
                    const VI KI = (VI)T - (VI)(VZ + DPDO__EXP_SHIFT);                              \
                    E[v] = L8_EXP_POLY(FM, R) * (VD)((KI + 1023) << 52);                           \
                    E[v] = L8SEL(VD, VI, NA[v] < DPDO__EXP_MIN, VZ, E[v]);                         \
                }                                                                                  \
                L8_UNROLL for (int v = 0; v < NV; v++)                                             \
                    C[v] = NY[v] * (L8SEL(VD, VI, S[v] >= 0, ONE, E[v]) / (ONE + E[v]));           \
                if (loss_sum)                                                                      \
                    L8_UNROLL for (int v = 0; v < NV; v++) {                                       \
                        const VD BIG = L8SEL(VD, VI, E[v] > 0x1.a827999fcef34p-2, ONE, VZ);        \
                        const VD NU_ = E[v] - BIG, DE = (ONE + ONE) + (E[v] + BIG);                \
                        const VD SS = NU_ / DE, Z = SS * SS;                                       \
                        const VD L = BIG * DPDO__LN2_HI +                                          \
                                     ((SS + SS) + (SS * DPDO__ATANH_POLY(Z) + BIG * DPDO__LN2_LO)); \
                        LV[v] = L8SEL(VD, VI, S[v] > 0, S[v], VZ) + L;                             \
                    }                                                                              \
            } else if (kind == DPDO__L8_HINGE) {                                                   \
                L8_UNROLL for (int v = 0; v < NV; v++) {                                           \
                    const VD Z = ONE + S[v]; /* 1 - y m */                                         \
                    C[v] = L8SEL(VD, VI, Z > 0, NY[v], VZ);                                        \
                    LV[v] = L8SEL(VD, VI, Z > 0, Z, VZ);                                           \
                }                                                                                  \
            } else {                                                                               \
                L8_UNROLL for (int v = 0; v < NV; v++) {                                           \
                    const VD R = M[v] + NY[v]; /* m - y */                                         \
                    C[v] = R;                                                                      \
                    LV[v] = 0.5 * R * R;                                                           \
                }                                                                                  \
            }                                                                                      \
            if (nv < SB)                                                                           \
                L8_UNROLL for (int v = 0; v < NV; v++)                                             \
                    C[v] = L8SEL(VD, VI, LANE + v * W < (VI){0} + nv, C[v], VZ);                   \
            if (loss_sum)                                                                          \
                L8_UNROLL for (int v = 0; v < NV; v++) {                                           \
                    if (nv < SB) LV[v] = L8SEL(VD, VI, LANE + v * W < (VI){0} + nv, LV[v], VZ);    \
                    LS[v % NU] += LV[v];                                                           \
                }                                                                                  \
            if (clip > 0.0) { /* through memory here only (stores, not C's address) */            \
                double cs[SB];                                                                     \
                L8_UNROLL for (int v = 0; v < NV; v++)                                             \
                    *(VD *)(cs + v * W) = C[v];                                                    \
                for (int t = 0; t < nv; t++)                                                       \
                    cs[t] = dpdo__clip_coef(ds, l8_row(rows, first, h0 + t), cs[t], clip, ncl);    \
                L8_UNROLL for (int v = 0; v < NV; v++)                                             \
                    C[v] = *(const VD *)(cs + v * W);                                              \
            }                                                                                      \
            if (scale != 0.0) {                                                                    \
                VD A[NV];                                                                          \
                L8_UNROLL for (int v = 0; v < NV; v++) A[v] = scale * C[v];                        \
                L8_UNROLL for (int64_t j = 0; j < d; j++)                                          \
                    L8_UNROLL for (int v = 0; v < NV; v++)                                         \
                        G[j][v % NU] = FM(A[v], *(const VD *)(xb + j * st + v * W), G[j][v % NU]); \
            }                                                                                      \
        }                                                                                          \
        double t8[8]; /* stores of G and LS, not their addresses: they stay in registers */       \
        if (scale != 0.0)                                                                          \
            L8_UNROLL for (int64_t j = 0; j < d; j++) {                                            \
                L8_UNROLL for (int u = 0; u < NU; u++)                                             \
                    *(VD *)(t8 + u * W) = G[j][u];                                                 \
                grad[j] += L8_TREE(t8);                                                            \
            }                                                                                      \
        if (loss_sum) {                                                                            \
            L8_UNROLL for (int u = 0; u < NU; u++)                                                 \
                *(VD *)(t8 + u * W) = LS[u];                                                       \
            *loss_sum = L8_TREE(t8);                                                               \
        }                                                                                          \
    }

/* clang-format on */

typedef void (*l8_fn)(const struct dpdo_dataset *, const int64_t *, int64_t, int64_t,
                      const struct dpdo__tcopy *, int, const double *, double, double, double *,
                      double *, int64_t *, int);

/* logistic: one instance per d = 1 .. 8 and one for d = 9 .. 16; hinge and squared (a few
 * operations per sample beside the margin and the gradient): one instance for every d */
/* clang-format off */
#define L8_SET(SUF, ATTR, VD, VI, W, SB, FM)                                                       \
    L8_KERNEL(l8_1_##SUF, ATTR, 1, VD, VI, W, SB, 0, FM) L8_KERNEL(l8_2_##SUF, ATTR, 2, VD, VI, W, SB, 0, FM) \
    L8_KERNEL(l8_3_##SUF, ATTR, 3, VD, VI, W, SB, 0, FM) L8_KERNEL(l8_4_##SUF, ATTR, 4, VD, VI, W, SB, 0, FM) \
    L8_KERNEL(l8_5_##SUF, ATTR, 5, VD, VI, W, SB, 0, FM) L8_KERNEL(l8_6_##SUF, ATTR, 6, VD, VI, W, SB, 0, FM) \
    L8_KERNEL(l8_7_##SUF, ATTR, 7, VD, VI, W, SB, 0, FM) L8_KERNEL(l8_8_##SUF, ATTR, 8, VD, VI, W, SB, 0, FM) \
    L8_KERNEL(l8_n_##SUF, ATTR, 0, VD, VI, W, SB, 0, FM)                                           \
    L8_KERNEL(l8_g_##SUF, ATTR, 0, VD, VI, W, SB, -1, FM)                                          \
    static l8_fn l8_pick_##SUF(int64_t d, int kind)                                                \
    {                                                                                              \
        static const l8_fn f[9] = {l8_n_##SUF, l8_1_##SUF, l8_2_##SUF, l8_3_##SUF, l8_4_##SUF,     \
                                   l8_5_##SUF, l8_6_##SUF, l8_7_##SUF, l8_8_##SUF};                \
        return kind != DPDO__L8_LOGISTIC ? l8_g_##SUF : f[d <= 8 ? d : 0];                         \
    }
/* clang-format on */
L8_SET(sse2, , l4d, l4i, 4, 8, L8_FMA4S)
#if defined(__x86_64__)
#define L8_X86 1
L8_SET(avx2, __attribute__((target(L8_AVX2_TARGET))), l4d, l4i, 4, 16, L8_FMA4)
L8_SET(avx512, __attribute__((target("avx512f"))), l8d, l8i, 8, 32, L8_FMA8)
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
    for (int64_t h = 0; h < qp; h++) {
        if (h < q) {
            int64_t r = dpdo__shard_row(sh, h);
            const double *x = ds->X + (size_t)r * (size_t)d;
            for (int64_t j = 0; j < d; j++)
                tc->xt[(size_t)j * (size_t)qp + (size_t)h] = x[j];
            tc->ny[h] = -ds->y[r];
        } else {
            for (int64_t j = 0; j < d; j++)
                tc->xt[(size_t)j * (size_t)qp + (size_t)h] = 0.0;
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
