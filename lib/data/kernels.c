/* SPDX-License-Identifier: BSD-3-Clause */
/* Linear-model kernels over dense and CSR rows.
 *
 * Dense rows use our own dot/axpy with a fixed summation order (8 partial
 * sums), not BLIS ddotv/daxpyv: the result then does not depend on which
 * BLIS kernel the CPU selects at run time, so iterates are bit-identical on
 * every x86-64 machine (DESIGN: determinism). GCC turns the 8 independent
 * partial sums into SIMD code at -O2 (SLP) without -ffast-math. The fused
 * gradient reads each row once from memory: the dot product brings it into
 * L1/L2 and the axpy reuses it there (bench/bench_data.c measures it
 * against a STREAM triad). */
#include "data_impl.h"
#include "vmath_impl.h"
#include <math.h>

/* Dense row kernels. The dot product keeps 8 partial sums s0..s7 (lane k
 * of the accumulators holds s_k) and combines them as
 * ((s0+s4)+(s1+s5)) + ((s2+s6)+(s3+s7)); every variant below (scalar,
 * SSE2 2-lane, AVX2 4-lane) uses exactly this order and no FMA, so all give
 * bit-identical results: the AVX2 path is chosen at run time and a binary
 * still runs on any x86-64. */
DPDO__UNUSED static inline double dot_scalar(const double *restrict x, const double *restrict w,
                                             int64_t d)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
    int64_t j = 0;
    for (; j + 8 <= d; j += 8) {
        s0 += x[j] * w[j];
        s1 += x[j + 1] * w[j + 1];
        s2 += x[j + 2] * w[j + 2];
        s3 += x[j + 3] * w[j + 3];
        s4 += x[j + 4] * w[j + 4];
        s5 += x[j + 5] * w[j + 5];
        s6 += x[j + 6] * w[j + 6];
        s7 += x[j + 7] * w[j + 7];
    }
    for (; j < d; j++)
        s0 += x[j] * w[j];
    return ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7));
}

DPDO__UNUSED static inline void axpy_scalar(double a, const double *restrict x, double *restrict y,
                                            int64_t d)
{
    for (int64_t j = 0; j < d; j++)
        y[j] += a * x[j];
}

#if defined(__GNUC__) || defined(__clang__)
#define DPDO__VEC 1 /* GCC/Clang generic vectors (SSE2 on x86-64) */
typedef double v2d __attribute__((vector_size(16), aligned(8), may_alias));
typedef double v4d __attribute__((vector_size(32), aligned(8), may_alias));
typedef int64_t v4di __attribute__((vector_size(32), aligned(8), may_alias));

/* pf (may be NULL): the next row's memory to prefetch while this loop runs,
 * one cache line per 8 elements shifted right by `sh` (0: pf[0..d), 1:
 * pf[0..d/2)), so that fetching the next row from DRAM overlaps the
 * computation on this one. */
#define PREFETCH(pf, j, sh)                                                                        \
    do {                                                                                           \
        if (pf) __builtin_prefetch((pf) + ((j) >> (sh)), 0, 2);                                    \
    } while (0)

static inline double dot_sse2(const double *restrict x, const double *restrict w, int64_t d,
                              const double *pf, int sh)
{
    v2d a0 = {0, 0}, a1 = {0, 0}, a2 = {0, 0}, a3 = {0, 0};
    int64_t j = 0;
    for (; j + 8 <= d; j += 8) {
        PREFETCH(pf, j, sh);
        a0 += *(const v2d *)(x + j) * *(const v2d *)(w + j);
        a1 += *(const v2d *)(x + j + 2) * *(const v2d *)(w + j + 2);
        a2 += *(const v2d *)(x + j + 4) * *(const v2d *)(w + j + 4);
        a3 += *(const v2d *)(x + j + 6) * *(const v2d *)(w + j + 6);
    }
    double s0 = a0[0];
    for (; j < d; j++)
        s0 += x[j] * w[j];
    return ((s0 + a2[0]) + (a0[1] + a2[1])) + ((a1[0] + a3[0]) + (a1[1] + a3[1]));
}

static inline void axpy_sse2(double a, const double *restrict x, double *restrict y, int64_t d,
                             const double *pf, int sh)
{
    v2d av = {a, a};
    int64_t j = 0;
    for (; j + 8 <= d; j += 8) {
        PREFETCH(pf, j, sh);
        *(v2d *)(y + j) += av * *(const v2d *)(x + j);
        *(v2d *)(y + j + 2) += av * *(const v2d *)(x + j + 2);
        *(v2d *)(y + j + 4) += av * *(const v2d *)(x + j + 4);
        *(v2d *)(y + j + 6) += av * *(const v2d *)(x + j + 6);
    }
    for (; j < d; j++)
        y[j] += a * x[j];
}

#if defined(__x86_64__)
#define DPDO__X86 1
#define AVX2 __attribute__((target("avx2")))
AVX2 static inline double dot_avx2(const double *restrict x, const double *restrict w, int64_t d,
                                   const double *pf, int sh)
{
    v4d a0 = {0, 0, 0, 0}, a1 = {0, 0, 0, 0};
    int64_t j = 0;
    for (; j + 8 <= d; j += 8) {
        PREFETCH(pf, j, sh);
        a0 += *(const v4d *)(x + j) * *(const v4d *)(w + j);
        a1 += *(const v4d *)(x + j + 4) * *(const v4d *)(w + j + 4);
    }
    double s0 = a0[0];
    for (; j < d; j++)
        s0 += x[j] * w[j];
    return ((s0 + a1[0]) + (a0[1] + a1[1])) + ((a0[2] + a1[2]) + (a0[3] + a1[3]));
}

AVX2 static inline void axpy_avx2(double a, const double *restrict x, double *restrict y, int64_t d,
                                  const double *pf, int sh)
{
    v4d av = {a, a, a, a};
    int64_t j = 0;
    for (; j + 8 <= d; j += 8) {
        PREFETCH(pf, j, sh);
        *(v4d *)(y + j) += av * *(const v4d *)(x + j);
        *(v4d *)(y + j + 4) += av * *(const v4d *)(x + j + 4);
    }
    for (; j < d; j++)
        y[j] += a * x[j];
}

/* Four rows at a time (same per-row summation order as dot_avx2, same
 * per-element update order as four axpy_avx2 calls, hence bit-identical):
 * w is loaded once per four rows and grad is loaded and stored once per
 * four rows, which halves the L1/L2 traffic. p0/p1 (may be NULL) are rows
 * of the next block, prefetched one cache line per iteration. */
AVX2 static inline void dot4_avx2(const double *const *x, const double *restrict w, int64_t d,
                                  const double *p0, const double *p1, double *out)
{
    const double *x0 = x[0], *x1 = x[1], *x2 = x[2], *x3 = x[3];
    v4d z = {0, 0, 0, 0};
    v4d a00 = z, a01 = z, a10 = z, a11 = z, a20 = z, a21 = z, a30 = z, a31 = z;
    int64_t j = 0;
    for (; j + 8 <= d; j += 8) {
        v4d w0 = *(const v4d *)(w + j), w1 = *(const v4d *)(w + j + 4);
        if (p0) __builtin_prefetch(p0 + j, 0, 2);
        if (p1) __builtin_prefetch(p1 + j, 0, 2);
        a00 += *(const v4d *)(x0 + j) * w0;
        a01 += *(const v4d *)(x0 + j + 4) * w1;
        a10 += *(const v4d *)(x1 + j) * w0;
        a11 += *(const v4d *)(x1 + j + 4) * w1;
        a20 += *(const v4d *)(x2 + j) * w0;
        a21 += *(const v4d *)(x2 + j + 4) * w1;
        a30 += *(const v4d *)(x3 + j) * w0;
        a31 += *(const v4d *)(x3 + j + 4) * w1;
    }
    double s0 = a00[0], s1 = a10[0], s2 = a20[0], s3 = a30[0];
    for (int64_t t = j; t < d; t++) {
        s0 += x0[t] * w[t];
        s1 += x1[t] * w[t];
        s2 += x2[t] * w[t];
        s3 += x3[t] * w[t];
    }
#define DPDO__RED(s, a, b)                                                                         \
    (((s) + (b)[0]) + ((a)[1] + (b)[1])) + (((a)[2] + (b)[2]) + ((a)[3] + (b)[3]))
    out[0] = DPDO__RED(s0, a00, a01);
    out[1] = DPDO__RED(s1, a10, a11);
    out[2] = DPDO__RED(s2, a20, a21);
    out[3] = DPDO__RED(s3, a30, a31);
#undef DPDO__RED
}

AVX2 static inline void axpy4_avx2(const double *a, const double *const *x, double *restrict y,
                                   int64_t d, const double *p0, const double *p1)
{
    const double *x0 = x[0], *x1 = x[1], *x2 = x[2], *x3 = x[3];
    v4d b0 = {a[0], a[0], a[0], a[0]}, b1 = {a[1], a[1], a[1], a[1]};
    v4d b2 = {a[2], a[2], a[2], a[2]}, b3 = {a[3], a[3], a[3], a[3]};
    int64_t j = 0;
    for (; j + 8 <= d; j += 8) {
        if (p0) __builtin_prefetch(p0 + j, 0, 2);
        if (p1) __builtin_prefetch(p1 + j, 0, 2);
        v4d g0 = *(v4d *)(y + j), g1 = *(v4d *)(y + j + 4);
        g0 += b0 * *(const v4d *)(x0 + j);
        g1 += b0 * *(const v4d *)(x0 + j + 4);
        g0 += b1 * *(const v4d *)(x1 + j);
        g1 += b1 * *(const v4d *)(x1 + j + 4);
        g0 += b2 * *(const v4d *)(x2 + j);
        g1 += b2 * *(const v4d *)(x2 + j + 4);
        g0 += b3 * *(const v4d *)(x3 + j);
        g1 += b3 * *(const v4d *)(x3 + j + 4);
        *(v4d *)(y + j) = g0;
        *(v4d *)(y + j + 4) = g1;
    }
    for (; j < d; j++) {
        double g = y[j];
        g += a[0] * x0[j];
        g += a[1] * x1[j];
        g += a[2] * x2[j];
        g += a[3] * x3[j];
        y[j] = g;
    }
}

/* AVX-512F: one 8-lane accumulator per row holds exactly the 8 partial sums
 * s0..s7 of the canonical order, so eight rows fit in registers and the
 * result is again bit-identical. p (may hold NULLs) are the next block's
 * rows, four prefetched during the dots and four during the axpys. */
#define AVX512 __attribute__((target("avx512f")))
typedef double v8d __attribute__((vector_size(64), aligned(8), may_alias));

AVX512 static inline void dot8_avx512(const double *const *x, const double *restrict w, int64_t d,
                                      const double *const *p, double *out)
{
    v8d a[8];
    for (int t = 0; t < 8; t++)
        a[t] = (v8d){0, 0, 0, 0, 0, 0, 0, 0};
    int64_t j = 0;
    for (; j + 8 <= d; j += 8) {
        v8d w0 = *(const v8d *)(w + j);
        for (int t = 0; t < 4; t++)
            if (p[t]) __builtin_prefetch(p[t] + j, 0, 2);
        for (int t = 0; t < 8; t++)
            a[t] += *(const v8d *)(x[t] + j) * w0;
    }
    for (int t = 0; t < 8; t++) {
        double s0 = a[t][0];
        for (int64_t u = j; u < d; u++)
            s0 += x[t][u] * w[u];
        out[t] =
            ((s0 + a[t][4]) + (a[t][1] + a[t][5])) + ((a[t][2] + a[t][6]) + (a[t][3] + a[t][7]));
    }
}

AVX512 static inline void axpy8_avx512(const double *a, const double *const *x, double *restrict y,
                                       int64_t d, const double *const *p)
{
    v8d b[8];
    for (int t = 0; t < 8; t++)
        b[t] = (v8d){a[t], a[t], a[t], a[t], a[t], a[t], a[t], a[t]};
    int64_t j = 0;
    for (; j + 8 <= d; j += 8) {
        for (int t = 4; t < 8; t++)
            if (p[t]) __builtin_prefetch(p[t] + j, 0, 2);
        v8d g = *(v8d *)(y + j);
        for (int t = 0; t < 8; t++)
            g += b[t] * *(const v8d *)(x[t] + j);
        *(v8d *)(y + j) = g;
    }
    for (; j < d; j++) {
        double g = y[j];
        for (int t = 0; t < 8; t++)
            g += a[t] * x[t][j];
        y[j] = g;
    }
}

static int have_avx512(void)
{
    return __builtin_cpu_supports("avx512f");
}

/* __builtin_cpu_supports reads libgcc's CPU model (filled by a constructor
 * before main); no state of ours. */
static int have_avx2(void)
{
    return __builtin_cpu_supports("avx2");
}
#endif /* __x86_64__ */
#endif /* DPDO__VEC */

static inline double dot_dense(const double *restrict x, const double *restrict w, int64_t d)
{
#ifdef DPDO__VEC
    return dot_sse2(x, w, d, NULL, 0);
#else
    return dot_scalar(x, w, d);
#endif
}

static inline void axpy_dense(double a, const double *restrict x, double *restrict y, int64_t d)
{
#ifdef DPDO__VEC
    axpy_sse2(a, x, y, d, NULL, 0);
#else
    axpy_scalar(a, x, y, d);
#endif
}

static inline double dot_csr(const struct dpdo_dataset *ds, int64_t r, const double *w)
{
    int64_t b = ds->rowptr[r], e = ds->rowptr[r + 1];
    const int32_t *ci = ds->colidx;
    const double *v = ds->val;
    double s0 = 0, s1 = 0;
    int64_t k = b;
    for (; k + 2 <= e; k += 2) {
        s0 += v[k] * w[ci[k]];
        s1 += v[k + 1] * w[ci[k + 1]];
    }
    if (k < e) s0 += v[k] * w[ci[k]];
    return s0 + s1;
}

static inline void axpy_csr(const struct dpdo_dataset *ds, int64_t r, double a, double *y)
{
    int64_t b = ds->rowptr[r], e = ds->rowptr[r + 1];
    const int32_t *ci = ds->colidx;
    const double *v = ds->val;
    for (int64_t k = b; k < e; k++)
        y[ci[k]] += a * v[k];
}

/* Coefficient of one sample: c = phi'(margin), clipped so |c|*||x|| <= clip
 * (per-sample gradient clipping for DP; the per-sample gradient of a linear
 * model is c*x, so its norm is |c|*||x||): c' = c * clip / g, written so that
 * |c'| * ||x|| <= clip holds after rounding too. */
static inline double clip_coef(const struct dpdo_dataset *ds, int64_t r, double c, double clip,
                               int64_t *ncl)
{
    return dpdo__clip_coef(ds, r, c, clip, ncl); /* data_impl.h: shared with kernels_l8.c */
}

static inline double coef(const struct dpdo_dataset *ds, int64_t r, double margin, dpdo__phi_fn phi,
                          const void *ctx, double clip, double *loss_acc, int64_t *ncl)
{
    double loss = 0.0;
    double c = phi(ctx, margin, ds->y[r], &loss);
    *loss_acc += loss;
    return clip > 0.0 ? clip_coef(ds, r, c, clip, ncl) : c;
}

/* The dense loops, instantiated once per instruction set so that the row
 * kernels inline into them. */
enum { PF_AHEAD = 8 };
static inline void prefetch_row(const double *x, size_t d)
{
    for (size_t j = 0; j < d; j += 8)
        __builtin_prefetch(x + j, 0, 3);
    __builtin_prefetch(x + d - 1, 0, 3);
}

#define DENSE_MARGINS(NAME, ATTR, DOT)                                                             \
    ATTR static void NAME(const struct dpdo_dataset *ds, const int64_t *rows, int64_t m,           \
                          const double *w, double *margins)                                        \
    {                                                                                              \
        const size_t d = (size_t)ds->d;                                                            \
        /* short rows of a gathered batch: the next row's prefetch comes too late (a dot of        \
         * a few hundred bytes is faster than a cache miss), so prefetch PF_AHEAD rows ahead */    \
        const int ahead = rows && d * sizeof(double) <= 1024;                                      \
        if (ahead)                                                                                 \
            for (int64_t q = 0; q < m && q < PF_AHEAD; q++)                                        \
                prefetch_row(ds->X + (size_t)rows[q] * d, d);                                      \
        for (int64_t k = 0; k < m; k++) {                                                          \
            int64_t r = rows ? rows[k] : k;                                                        \
            if (ahead && k + PF_AHEAD < m)                                                         \
                prefetch_row(ds->X + (size_t)rows[k + PF_AHEAD] * d, d);                           \
            const double *nx =                                                                     \
                k + 1 < m ? ds->X + (size_t)(rows ? rows[k + 1] : k + 1) * d : NULL;               \
            margins[k] = DOT(ds->X + (size_t)r * d, w, ds->d, nx, 0);                              \
        }                                                                                          \
    }

#define DENSE_GRAD(NAME, ATTR, DOT, AXPY)                                                          \
    ATTR static void NAME(const struct dpdo_dataset *ds, const int64_t *rows, int64_t m,           \
                          const double *w, dpdo__phi_fn phi, const void *ctx, double clip,         \
                          double scale, double *grad, double *loss_acc, int64_t *ncl)              \
    {                                                                                              \
        const size_t d = (size_t)ds->d;                                                            \
        for (int64_t k = 0; k < m; k++) {                                                          \
            int64_t r = rows ? rows[k] : k;                                                        \
            const double *x = ds->X + (size_t)r * d;                                               \
            const double *nx =                                                                     \
                k + 1 < m ? ds->X + (size_t)(rows ? rows[k + 1] : k + 1) * d : NULL;               \
            double mg = DOT(x, w, ds->d, nx, 1);                                                   \
            double a = scale * coef(ds, r, mg, phi, ctx, clip, loss_acc, ncl);                     \
            if (a != 0.0) AXPY(a, x, grad, ds->d, nx ? nx + d / 2 : NULL, 1);                      \
        }                                                                                          \
    }

#ifdef DPDO__VEC
DENSE_MARGINS(margins_base, , dot_sse2)
DENSE_GRAD(grad_base, , dot_sse2, axpy_sse2)
#else
#define dot_scalar_pf(x, w, d, pf, sh) dot_scalar(x, w, d)
#define axpy_scalar_pf(a, x, y, d, pf, sh) axpy_scalar(a, x, y, d)
DENSE_MARGINS(margins_base, , dot_scalar_pf)
DENSE_GRAD(grad_base, , dot_scalar_pf, axpy_scalar_pf)
#endif

#ifdef DPDO__X86
DENSE_MARGINS(margins_avx2, AVX2, dot_avx2)
/* rows k0 .. m-1 of the list (rows NULL: row k is k) */
AVX2 static void grad_avx2(const struct dpdo_dataset *ds, const int64_t *rows, int64_t k0,
                           int64_t m, const double *w, dpdo__phi_fn phi, const void *ctx,
                           double clip, double scale, double *grad, double *loss_acc, int64_t *ncl)
{
    const size_t d = (size_t)ds->d;
    int64_t k = k0;
    for (; k + 4 <= m; k += 4) {
        const double *x[4], *nx[4];
        int64_t r[4];
        for (int t = 0; t < 4; t++) {
            r[t] = rows ? rows[k + t] : k + t;
            x[t] = ds->X + (size_t)r[t] * d;
            int64_t q = k + 4 + t;
            nx[t] = q < m ? ds->X + (size_t)(rows ? rows[q] : q) * d : NULL;
        }
        double mg[4], a[4];
        dot4_avx2(x, w, ds->d, nx[0], nx[1], mg);
        int nz = 0;
        for (int t = 0; t < 4; t++) {
            a[t] = scale * coef(ds, r[t], mg[t], phi, ctx, clip, loss_acc, ncl);
            nz += a[t] != 0.0;
        }
        if (nz == 4) {
            axpy4_avx2(a, x, grad, ds->d, nx[2], nx[3]);
        } else {
            /* a zero coefficient skips its row, exactly as the row loop does */
            for (int t = 0; t < 4; t++)
                if (a[t] != 0.0) axpy_avx2(a[t], x[t], grad, ds->d, NULL, 0);
        }
    }
    for (; k < m; k++) {
        int64_t r = rows ? rows[k] : k;
        const double *x = ds->X + (size_t)r * d;
        const double *nx = k + 1 < m ? ds->X + (size_t)(rows ? rows[k + 1] : k + 1) * d : NULL;
        double mg = dot_avx2(x, w, ds->d, nx, 1);
        double a = scale * coef(ds, r, mg, phi, ctx, clip, loss_acc, ncl);
        if (a != 0.0) axpy_avx2(a, x, grad, ds->d, nx ? nx + d / 2 : NULL, 1);
    }
}
AVX512 static void grad_avx512(const struct dpdo_dataset *ds, const int64_t *rows, int64_t m,
                               const double *w, dpdo__phi_fn phi, const void *ctx, double clip,
                               double scale, double *grad, double *loss_acc, int64_t *ncl)
{
    const size_t d = (size_t)ds->d;
    int64_t k = 0;
    for (; k + 8 <= m; k += 8) {
        const double *x[8], *nx[8];
        int64_t r[8];
        for (int t = 0; t < 8; t++) {
            r[t] = rows ? rows[k + t] : k + t;
            x[t] = ds->X + (size_t)r[t] * d;
            int64_t q = k + 8 + t;
            nx[t] = q < m ? ds->X + (size_t)(rows ? rows[q] : q) * d : NULL;
        }
        double mg[8], a[8];
        dot8_avx512(x, w, ds->d, nx, mg);
        int nz = 0;
        for (int t = 0; t < 8; t++) {
            a[t] = scale * coef(ds, r[t], mg[t], phi, ctx, clip, loss_acc, ncl);
            nz += a[t] != 0.0;
        }
        if (nz == 8) {
            axpy8_avx512(a, x, grad, ds->d, nx);
        } else {
            for (int t = 0; t < 8; t++)
                if (a[t] != 0.0) axpy_sse2(a[t], x[t], grad, ds->d, NULL, 0);
        }
    }
    if (k < m) grad_avx2(ds, rows, k, m, w, phi, ctx, clip, scale, grad, loss_acc, ncl);
}

#endif

/* ---- built-in logistic loss over a batch of short dense rows (d <= 16) ----------------
 * Four rows at a time, one per lane of a 4-double GCC vector: the lanes hold the rows'
 * features j (a transpose of a 4 x d block), the margins, the branch-free exp of vmath_impl.h,
 * the coefficients, and per-feature gradient accumulators G[j] (lane t sums the rows k = t mod 4
 * in order); at the end grad[j] += (G0 + G1) + (G2 + G3). The margin of a row is summed over j in
 * order, as dot_scalar does for d < 8. Compiled for SSE2 and AVX2 (run-time choice); both execute
 * the same element-wise IEEE operations, so the result does not depend on the CPU. This is the
 * Fed-PLT / DP-WOR-SGD shape (d = 5, 50): the row-at-a-time kernel spends most of its time in
 * call overhead there. loss_acc NULL: the loss values are not computed (gradient only). */
enum { LOGIT_DMAX = 16, LOGIT_BLK = 64 };
/* lane-wise mask ? a : b (GCC's C front end has no vector ?:) */
#define VSEL(mask, a, b) ((v4d)(((v4di)(a) & (mask)) | ((v4di)(b) & ~(mask))))
#ifdef DPDO__VEC
/* The body of the small logistic kernels: DD > 0 a constant d (the j loops unroll), 0 ds->d.
 * Force-inlined into the thin per-ISA wrappers logit<d>_<isa> (LOGIT_WRAP): one body, compiled
 * in each wrapper for its instruction set, whose lines a debugger or sanitizer sees. */
static inline DPDO__ALWAYS_INLINE void logit_small(const struct dpdo_dataset *ds,
                                                   const int64_t *rows, int64_t m, const double *w,
                                                   double clip, double scale, double *grad,
                                                   double *loss_acc, int64_t *ncl, const int DD)
{
    const int64_t d = DD > 0 ? DD : ds->d; /* DD > 0: a constant, so the j loops unroll */
    const v4d ONE = {1, 1, 1, 1}, VZ = {0, 0, 0, 0};
    v4d G[LOGIT_DMAX], SV[LOGIT_BLK / 4], YV[LOGIT_BLK / 4];
    for (int64_t j = 0; j < d; j++)
        G[j] = VZ;
    for (int64_t k0 = 0; k0 < m; k0 += LOGIT_BLK) {
        const int64_t nb = m - k0 < LOGIT_BLK ? m - k0 : LOGIT_BLK, nv = (nb + 3) / 4;
        /* 1: margins s = -y <x, w> of 4 rows per vector (padding repeats the block's first
         * row) */
        for (int64_t v = 0; v < nv; v++) {
            const double *x[4];
            double yv[4];
            for (int t = 0; t < 4; t++) {
                int64_t q = 4 * v + t < nb ? k0 + 4 * v + t : k0;
                int64_t r = rows ? rows[q] : q;
                x[t] = ds->X + (size_t)r * (size_t)d;
                yv[t] = ds->y[r];
            }
            v4d M = VZ;
            for (int64_t j = 0; j < d; j++)
                M += (v4d){x[0][j], x[1][j], x[2][j], x[3][j]} * w[j];
            YV[v] = (v4d){yv[0], yv[1], yv[2], yv[3]};
            SV[v] = -YV[v] * M;
        }
        /* 2: coefficients c = -y sigma(s) (and loss values), independent per vector */
        for (int64_t v = 0; v < nv; v++) {
            v4d S = SV[v];
            v4d NA = VSEL(S < 0, S, -S); /* -|s|; NaN stays NaN */
            v4d T = NA * DPDO__INV_LN2 + DPDO__EXP_SHIFT;
            v4d KD = T - DPDO__EXP_SHIFT;
            v4d R = (NA - KD * DPDO__LN2_HI) - KD * DPDO__LN2_LO;
            v4di KI = (v4di)T - (v4di)(VZ + DPDO__EXP_SHIFT);
            v4d R2 = R * R, R4 = R2 * R2, R8 = R4 * R4;
            v4d E = DPDO__EXP_POLY(R, R2, R4, R8) * (v4d)((KI + 1023) << 52);
            E = VSEL(NA < DPDO__EXP_MIN, VZ, E);
            if (loss_acc) {
                v4d BIG = VSEL(E > 0x1.a827999fcef34p-2, ONE, VZ);
                v4d NU = E - BIG, DE = (ONE + ONE) + (E + BIG); /* e - 1, 3 + e  or  e, 2 + e */
                v4d SS = NU / DE, Z = SS * SS;
                v4d L = BIG * DPDO__LN2_HI +
                        ((SS + SS) + (SS * DPDO__ATANH_POLY(Z) + BIG * DPDO__LN2_LO));
                L = VSEL(S > 0, S, VZ) + L;
                for (int t = 0; t < 4 && 4 * v + t < nb; t++)
                    *loss_acc += L[t];
            }
            SV[v] = -YV[v] * (VSEL(S >= 0, ONE, E) / (ONE + E));
        }
        if (clip > 0.0)
            for (int64_t q = 0; q < nb; q++) {
                int64_t r = rows ? rows[k0 + q] : k0 + q;
                SV[q / 4][q % 4] = clip_coef(ds, r, SV[q / 4][q % 4], clip, ncl);
            }
        for (int64_t q = nb; q < 4 * nv; q++)
            SV[q / 4][q % 4] = 0.0; /* padding adds nothing */
        /* 3: gradient, lane t summing the rows q = t mod 4 in order */
        for (int64_t v = 0; v < nv; v++) {
            const double *x[4];
            for (int t = 0; t < 4; t++) {
                int64_t q = 4 * v + t < nb ? k0 + 4 * v + t : k0;
                x[t] = ds->X + (size_t)(rows ? rows[q] : q) * (size_t)d;
            }
            v4d A = scale * SV[v];
            for (int64_t j = 0; j < d; j++)
                G[j] += A * (v4d){x[0][j], x[1][j], x[2][j], x[3][j]};
        }
    }
    for (int64_t j = 0; j < d; j++)
        grad[j] += (G[j][0] + G[j][1]) + (G[j][2] + G[j][3]);
}

/* Coefficients c_k = -y_k sigma(s_k) of margins s_k = -y_k <x_k, w> (and, if loss_acc, the loss
 * values added in order), four at a time with the same operations as logit_small's phase 2. */
static inline DPDO__ALWAYS_INLINE void logit_coefs(const double *s, const double *y, int64_t m,
                                                   double *c, double *loss_acc)
{
    const v4d ONE = {1, 1, 1, 1}, VZ = {0, 0, 0, 0};
    for (int64_t k = 0; k < m; k += 4) {
        v4d S = VZ, Y = ONE;
        for (int t = 0; t < 4 && k + t < m; t++)
            S[t] = s[k + t], Y[t] = y[k + t];
        v4d NA = VSEL(S < 0, S, -S);
        v4d T = NA * DPDO__INV_LN2 + DPDO__EXP_SHIFT;
        v4d KD = T - DPDO__EXP_SHIFT;
        v4d R = (NA - KD * DPDO__LN2_HI) - KD * DPDO__LN2_LO;
        v4di KI = (v4di)T - (v4di)(VZ + DPDO__EXP_SHIFT);
        v4d R2 = R * R, R4 = R2 * R2, R8 = R4 * R4;
        v4d E = DPDO__EXP_POLY(R, R2, R4, R8) * (v4d)((KI + 1023) << 52);
        E = VSEL(NA < DPDO__EXP_MIN, VZ, E);
        if (loss_acc) {
            v4d BIG = VSEL(E > 0x1.a827999fcef34p-2, ONE, VZ);
            v4d NU = E - BIG, DE = (ONE + ONE) + (E + BIG);
            v4d SS = NU / DE, Z = SS * SS;
            v4d L =
                BIG * DPDO__LN2_HI + ((SS + SS) + (SS * DPDO__ATANH_POLY(Z) + BIG * DPDO__LN2_LO));
            L = VSEL(S > 0, S, VZ) + L;
            for (int t = 0; t < 4 && k + t < m; t++)
                *loss_acc += L[t];
        }
        v4d C = -Y * (VSEL(S >= 0, ONE, E) / (ONE + E));
        for (int t = 0; t < 4 && k + t < m; t++)
            c[k + t] = C[t];
    }
}
#endif /* DPDO__VEC */
#define LOGIT_COEFS(NAME, ATTR)                                                                    \
    ATTR static void NAME(const double *s, const double *y, int64_t m, double *c,                  \
                          double *loss_acc)                                                        \
    {                                                                                              \
        logit_coefs(s, y, m, c, loss_acc);                                                         \
    }

#ifdef DPDO__VEC
/* one instance per d = 1 .. 8 (registers for G, unrolled loops) and one for d = 9 .. 16 */
/* a macro of macro instances, laid out by hand */
/* clang-format off */
#define LOGIT_WRAP(NAME, ATTR, DD)                                                                 \
    ATTR static void NAME(const struct dpdo_dataset *ds, const int64_t *rows, int64_t m,           \
                          const double *w, double clip, double scale, double *grad,                \
                          double *loss_acc, int64_t *ncl)                                          \
    {                                                                                              \
        logit_small(ds, rows, m, w, clip, scale, grad, loss_acc, ncl, DD);                         \
    }
#define LOGIT_SET(SUF, ATTR)                                                                       \
    LOGIT_WRAP(logit1_##SUF, ATTR, 1) LOGIT_WRAP(logit2_##SUF, ATTR, 2)                            \
    LOGIT_WRAP(logit3_##SUF, ATTR, 3) LOGIT_WRAP(logit4_##SUF, ATTR, 4)                            \
    LOGIT_WRAP(logit5_##SUF, ATTR, 5) LOGIT_WRAP(logit6_##SUF, ATTR, 6)                            \
    LOGIT_WRAP(logit7_##SUF, ATTR, 7) LOGIT_WRAP(logit8_##SUF, ATTR, 8)                            \
    LOGIT_WRAP(logitn_##SUF, ATTR, 0)                                                              \
    typedef void (*logit_fn_##SUF)(const struct dpdo_dataset *, const int64_t *, int64_t,          \
                                   const double *, double, double, double *, double *, int64_t *); \
    static logit_fn_##SUF logit_pick_##SUF(int64_t d)                                              \
    {                                                                                              \
        static const logit_fn_##SUF f[9] = {logitn_##SUF, logit1_##SUF, logit2_##SUF,              \
                                            logit3_##SUF, logit4_##SUF, logit5_##SUF,              \
                                            logit6_##SUF, logit7_##SUF, logit8_##SUF};             \
        return f[d <= 8 ? d : 0];                                                                  \
    }
/* clang-format on */
LOGIT_SET(base, )
LOGIT_COEFS(coefs_base, )
#ifdef DPDO__X86
LOGIT_SET(avx2, AVX2)
LOGIT_COEFS(coefs_avx2, AVX2)
#endif
#endif

#ifdef DPDO__X86
/* ---- built-in logistic loss over a gathered batch of long dense rows (d > 16) -----------
 * One pass over the rows in blocks of 8 (AVX-512F) or 4 (AVX2) rows that stay in L1: the
 * block's margins, their coefficients (the operations of LOGIT_COEFS, loss values added in row
 * order when loss_acc), clip_coef per row, then grad += (scale c_k) x_k while the rows are
 * still in L1. Bit for bit the margins pass + coefficient pass + dpdo__lin_grad it replaces
 * (DP-WOR-SGD; docs/performance.md), which gathered each random row two or three times:
 *  - margins in the canonical order of dot_scalar: 8 partial sums s_0..s_7 over j = 8i + t,
 *    the tail j >= 8 floor(d/8) added to s_0 one by one, then
 *    ((s_0 + s_4) + (s_1 + s_5)) + ((s_2 + s_6) + (s_3 + s_7));
 *  - per gradient element the rows' terms added one after another in row order, a row with a
 *    zero coefficient skipped (as the row kernels do).
 * The AVX-512 kernel keeps one 8-lane accumulator per row (lane t = s_t), transposes the 8 x 8
 * block of accumulators so that the reduction, the tail, the coefficients and the clipping run
 * on vectors of the 8 rows (the same IEEE operations per lane as the scalar order above), and
 * takes four blocks at a time: their margins, then their coefficients, then the gradient. */
static inline void prefetch_ahead(const struct dpdo_dataset *ds, const int64_t *rows, int64_t m,
                                  int64_t q0, int64_t nq)
{
    for (int64_t q = q0; q < m && q < q0 + nq; q++)
        prefetch_row(ds->X + (size_t)rows[q] * (size_t)ds->d, (size_t)ds->d);
}
enum { WOR_AHEAD = 16 }; /* rows prefetched ahead of the block being computed */

typedef int64_t v8di __attribute__((vector_size(64), aligned(8), may_alias));
#define VSEL8(mask, a, b) ((v8d)(((v8di)(a) & (mask)) | ((v8di)(b) & ~(mask))))
/* a lane permutation of (a, b): index k < 8 is a[k], k >= 8 is b[k - 8]; clang spells GCC's
 * __builtin_shuffle as __builtin_shufflevector (constant indices), the same permutation */
#if defined(__clang__)
#define SHUF8(a, b, ...) __builtin_shufflevector((a), (b), __VA_ARGS__)
#else
#define SHUF8(a, b, ...) __builtin_shuffle((a), (b), (v8di){__VA_ARGS__})
#endif

/* One block of 8 rows x[0..7] (rows nb.. repeat row 0): the margins <x_t, w>, lanes t < nb */
AVX512 static inline v8d block_margins(const double *const *x, int64_t nb, const double *w,
                                       int64_t d)
{
    const int64_t d8 = d & ~(int64_t)7;
    const v8d VZ = {0, 0, 0, 0, 0, 0, 0, 0};
    v8d MG = VZ;
    if (nb == 8) {
        v8d a0 = VZ, a1 = VZ, a2 = VZ, a3 = VZ, a4 = VZ, a5 = VZ, a6 = VZ, a7 = VZ;
        for (int64_t j = 0; j < d8; j += 8) {
            v8d W = *(const v8d *)(w + j);
            a0 += *(const v8d *)(x[0] + j) * W;
            a1 += *(const v8d *)(x[1] + j) * W;
            a2 += *(const v8d *)(x[2] + j) * W;
            a3 += *(const v8d *)(x[3] + j) * W;
            a4 += *(const v8d *)(x[4] + j) * W;
            a5 += *(const v8d *)(x[5] + j) * W;
            a6 += *(const v8d *)(x[6] + j) * W;
            a7 += *(const v8d *)(x[7] + j) * W;
        }
        /* transpose: c_t holds s_t of the 8 rows */
        /* clang-format off */
        v8d t0 = SHUF8(a0, a1, 0, 8, 2, 10, 4, 12, 6, 14), t1 = SHUF8(a0, a1, 1, 9, 3, 11, 5, 13, 7, 15);
        v8d t2 = SHUF8(a2, a3, 0, 8, 2, 10, 4, 12, 6, 14), t3 = SHUF8(a2, a3, 1, 9, 3, 11, 5, 13, 7, 15);
        v8d t4 = SHUF8(a4, a5, 0, 8, 2, 10, 4, 12, 6, 14), t5 = SHUF8(a4, a5, 1, 9, 3, 11, 5, 13, 7, 15);
        v8d t6 = SHUF8(a6, a7, 0, 8, 2, 10, 4, 12, 6, 14), t7 = SHUF8(a6, a7, 1, 9, 3, 11, 5, 13, 7, 15);
        v8d u0 = SHUF8(t0, t2, 0, 1, 8, 9, 4, 5, 12, 13), u2 = SHUF8(t0, t2, 2, 3, 10, 11, 6, 7, 14, 15);
        v8d u1 = SHUF8(t1, t3, 0, 1, 8, 9, 4, 5, 12, 13), u3 = SHUF8(t1, t3, 2, 3, 10, 11, 6, 7, 14, 15);
        v8d u4 = SHUF8(t4, t6, 0, 1, 8, 9, 4, 5, 12, 13), u6 = SHUF8(t4, t6, 2, 3, 10, 11, 6, 7, 14, 15);
        v8d u5 = SHUF8(t5, t7, 0, 1, 8, 9, 4, 5, 12, 13), u7 = SHUF8(t5, t7, 2, 3, 10, 11, 6, 7, 14, 15);
        v8d c0 = SHUF8(u0, u4, 0, 1, 2, 3, 8, 9, 10, 11), c4 = SHUF8(u0, u4, 4, 5, 6, 7, 12, 13, 14, 15);
        v8d c1 = SHUF8(u1, u5, 0, 1, 2, 3, 8, 9, 10, 11), c5 = SHUF8(u1, u5, 4, 5, 6, 7, 12, 13, 14, 15);
        v8d c2 = SHUF8(u2, u6, 0, 1, 2, 3, 8, 9, 10, 11), c6 = SHUF8(u2, u6, 4, 5, 6, 7, 12, 13, 14, 15);
        v8d c3 = SHUF8(u3, u7, 0, 1, 2, 3, 8, 9, 10, 11), c7 = SHUF8(u3, u7, 4, 5, 6, 7, 12, 13, 14, 15);
        /* clang-format on */
        for (int64_t j = d8; j < d; j++) /* the tail into s_0, in order */
            c0 += (v8d){x[0][j], x[1][j], x[2][j], x[3][j], x[4][j], x[5][j], x[6][j], x[7][j]} *
                  w[j];
        MG = ((c0 + c4) + (c1 + c5)) + ((c2 + c6) + (c3 + c7));
    } else { /* a short block: row by row (the same canonical order), no padding rows */
        for (int64_t t = 0; t < nb; t++)
            MG[t] = dot_avx2(x[t], w, d, NULL, 0);
    }
    return MG;
}

/* The coefficients of a block (clipped; loss values added in row order when loss_acc) */
AVX512 static inline v8d block_coefs(const struct dpdo_dataset *ds, const int64_t *r, int64_t nb,
                                     v8d MG, v8d Y, double clip, double *loss_acc, int64_t *ncl)
{
    const v8d ONE = {1, 1, 1, 1, 1, 1, 1, 1}, VZ = {0, 0, 0, 0, 0, 0, 0, 0};
    v8d S = -Y * MG;
    /* coefficients c = -y sigma(s): the operations of LOGIT_COEFS, 8 lanes */
    v8d NA = VSEL8(S < 0, S, -S);
    v8d T = NA * DPDO__INV_LN2 + DPDO__EXP_SHIFT;
    v8d KD = T - DPDO__EXP_SHIFT;
    v8d R = (NA - KD * DPDO__LN2_HI) - KD * DPDO__LN2_LO;
    v8di KI = (v8di)T - (v8di)(VZ + DPDO__EXP_SHIFT);
    v8d R2 = R * R, R4 = R2 * R2, R8 = R4 * R4;
    v8d E = DPDO__EXP_POLY(R, R2, R4, R8) * (v8d)((KI + 1023) << 52);
    E = VSEL8(NA < DPDO__EXP_MIN, VZ, E);
    if (loss_acc) {
        v8d BIG = VSEL8(E > 0x1.a827999fcef34p-2, ONE, VZ);
        v8d NU = E - BIG, DE = (ONE + ONE) + (E + BIG);
        v8d SS = NU / DE, Z = SS * SS;
        v8d L = BIG * DPDO__LN2_HI + ((SS + SS) + (SS * DPDO__ATANH_POLY(Z) + BIG * DPDO__LN2_LO));
        L = VSEL8(S > 0, S, VZ) + L;
        for (int64_t t = 0; t < nb; t++)
            *loss_acc += L[t];
    }
    v8d C = -Y * (VSEL8(S >= 0, ONE, E) / (ONE + E));
    if (clip > 0.0)
        for (int64_t t = 0; t < nb; t++)
            C[t] = clip_coef(ds, r[t], C[t], clip, ncl);
    return C;
}

/* grad += A_t x_t, t < nb, row after row (a zero coefficient skips its row) */
AVX512 static inline void block_axpy(const double *const *x, int64_t nb, v8d A, double *grad,
                                     int64_t d)
{
    const int64_t d8 = d & ~(int64_t)7;
    const v8d VZ = {0, 0, 0, 0, 0, 0, 0, 0};
    int nz = 0;
    for (int64_t t = 0; t < nb; t++)
        nz += A[t] != 0.0;
    if (nz == 8) {
        v8d b0 = VZ + A[0], b1 = VZ + A[1], b2 = VZ + A[2], b3 = VZ + A[3];
        v8d b4 = VZ + A[4], b5 = VZ + A[5], b6 = VZ + A[6], b7 = VZ + A[7];
        int64_t j = 0;
        for (; j < d8; j += 8) {
            v8d g = *(v8d *)(grad + j);
            g += b0 * *(const v8d *)(x[0] + j);
            g += b1 * *(const v8d *)(x[1] + j);
            g += b2 * *(const v8d *)(x[2] + j);
            g += b3 * *(const v8d *)(x[3] + j);
            g += b4 * *(const v8d *)(x[4] + j);
            g += b5 * *(const v8d *)(x[5] + j);
            g += b6 * *(const v8d *)(x[6] + j);
            g += b7 * *(const v8d *)(x[7] + j);
            *(v8d *)(grad + j) = g;
        }
        for (; j < d; j++) {
            double g = grad[j];
            for (int t = 0; t < 8; t++)
                g += A[t] * x[t][j];
            grad[j] = g;
        }
    } else if (nz > 0) {
        for (int64_t t = 0; t < nb; t++)
            if (A[t] != 0.0) axpy_avx2(A[t], x[t], grad, d, NULL, 0);
    }
}

/* Groups of LL_GROUP blocks (32 rows: 12.8 KB at d = 50, in L1 until their second pass): the
 * margins of every block, then their coefficients (independent chains the core overlaps), then
 * the gradient block after block; the same operations in the same order as block by block. */
enum { LL_GROUP = 4 };
AVX512 static void logit_long_avx512(const struct dpdo_dataset *ds, const int64_t *rows, int64_t m,
                                     const double *w, double clip, double scale, double *grad,
                                     double *loss_acc, int64_t *ncl)
{
    const int64_t d = ds->d;
    const v8d ONE = {1, 1, 1, 1, 1, 1, 1, 1};
    prefetch_ahead(ds, rows, m, 0, WOR_AHEAD);
    for (int64_t k0 = 0; k0 < m; k0 += 8 * LL_GROUP) {
        const double *x[LL_GROUP][8];
        int64_t r[LL_GROUP][8], nb[LL_GROUP];
        v8d MG[LL_GROUP], Y[LL_GROUP], A[LL_GROUP];
        int nblk = 0;
        for (int64_t k = k0; k < m && k < k0 + 8 * LL_GROUP; k += 8, nblk++) {
            nb[nblk] = m - k < 8 ? m - k : 8;
            Y[nblk] = ONE;
            for (int64_t t = 0; t < 8; t++) { /* a short block repeats its first row (unused) */
                r[nblk][t] = rows[k + (t < nb[nblk] ? t : 0)];
                x[nblk][t] = ds->X + (size_t)r[nblk][t] * (size_t)d;
                Y[nblk][t] = ds->y[r[nblk][t]];
            }
            prefetch_ahead(ds, rows, m, k + WOR_AHEAD, 8);
            MG[nblk] = block_margins(x[nblk], nb[nblk], w, d);
        }
        for (int q = 0; q < nblk; q++)
            A[q] = scale * block_coefs(ds, r[q], nb[q], MG[q], Y[q], clip, loss_acc, ncl);
        for (int q = 0; q < nblk; q++)
            block_axpy(x[q], nb[q], A[q], grad, d);
    }
}

AVX2 static void logit_long_avx2(const struct dpdo_dataset *ds, const int64_t *rows, int64_t m,
                                 const double *w, double clip, double scale, double *grad,
                                 double *loss_acc, int64_t *ncl)
{
    const int64_t d = ds->d;
    prefetch_ahead(ds, rows, m, 0, WOR_AHEAD);
    for (int64_t k = 0; k < m; k += 4) {
        const int64_t nb = m - k < 4 ? m - k : 4;
        const double *x[4];
        double mg[4], y[4], c[4], a[4];
        for (int64_t t = 0; t < nb; t++) {
            x[t] = ds->X + (size_t)rows[k + t] * (size_t)d;
            y[t] = ds->y[rows[k + t]];
        }
        prefetch_ahead(ds, rows, m, k + WOR_AHEAD, 4);
        if (nb == 4)
            dot4_avx2(x, w, d, NULL, NULL, mg);
        else
            for (int64_t t = 0; t < nb; t++)
                mg[t] = dot_avx2(x[t], w, d, NULL, 0);
        for (int64_t t = 0; t < nb; t++)
            mg[t] = -y[t] * mg[t];
        coefs_avx2(mg, y, nb, c, loss_acc);
        int nz = 0;
        for (int64_t t = 0; t < nb; t++) {
            a[t] = scale * (clip > 0.0 ? clip_coef(ds, rows[k + t], c[t], clip, ncl) : c[t]);
            nz += a[t] != 0.0;
        }
        if (nz == 4)
            axpy4_avx2(a, x, grad, d, NULL, NULL);
        else if (nz > 0)
            for (int64_t t = 0; t < nb; t++)
                if (a[t] != 0.0) axpy_avx2(a[t], x[t], grad, d, NULL, 0);
    }
}
#endif

/* Software prefetch of a sample's rows and labels (at most 256 KB of rows: more would evict what
 * it fetched), issued before work that does not need them (DP-DDA draws its noise meanwhile;
 * DP-WOR-SGD prefetches the next node step's rows while the current step computes). */

/* the byte spans of row r: its values (and, CSR, its column indices); returns their count */
static inline int row_spans(const struct dpdo_dataset *ds, int64_t r, const char **p, size_t *len)
{
    if (ds->layout == DPDO__DS_DENSE) {
        p[0] = (const char *)(ds->X + (size_t)r * (size_t)ds->d);
        len[0] = (size_t)ds->d * sizeof(double);
        return 1;
    }
    if (ds->layout == DPDO__DS_CSR) {
        size_t b = (size_t)ds->rowptr[r], e = (size_t)ds->rowptr[r + 1];
        p[0] = (const char *)(ds->val + b), len[0] = (e - b) * sizeof(double);
        p[1] = (const char *)(ds->colidx + b), len[1] = (e - b) * sizeof(int32_t);
        return 2;
    }
    return 0;
}

/* Whole rows (DP-WOR-SGD: the next step's rows while this step computes). Kept as its own loop:
 * expressed through dpdo__shard_prefetch_part(…, 0, 1) the same hints made that round 1.8x
 * slower on the reference machine (measured, not understood; 2026-11-25). */
void dpdo__shard_prefetch(const struct dpdo_shard *sh, const int64_t *idx, int64_t m)
{
    const struct dpdo_dataset *ds = sh->parent;
    size_t budget = (size_t)256 << 10;
    for (int64_t k = 0; k < m; k++) {
        int64_t r = dpdo__shard_row(sh, idx ? idx[k] : k);
        const char *p[2];
        size_t len[2];
        int np = row_spans(ds, r, p, len);
        for (int q = 0; q < np; q++) {
            if (len[q] > budget) return;
            budget -= len[q];
            dpdo__prefetch(p[q], len[q]);
        }
        if (ds->y) dpdo__prefetch(ds->y + r, sizeof *ds->y); /* the label: a line of its own */
    }
}

/* part `part` of `parts` of every row (by cache lines), so that a caller can spread the hints
 * over work it does meanwhile instead of issuing them all at once (they wait for fill buffers;
 * DP-DDA: a part per chunk of its noise draw) */
void dpdo__shard_prefetch_part(const struct dpdo_shard *sh, const int64_t *idx, int64_t m, int part,
                               int parts)
{
    const struct dpdo_dataset *ds = sh->parent;
    size_t budget = (size_t)256 << 10;
    for (int64_t k = 0; k < m; k++) {
        int64_t r = dpdo__shard_row(sh, idx ? idx[k] : k);
        const char *p[2];
        size_t len[2];
        int np = row_spans(ds, r, p, len);
        for (int q = 0; q < np; q++) {
            if (len[q] > budget) return;
            budget -= len[q];
            size_t lines = (len[q] + 63) / 64, a = lines * (size_t)part / (size_t)parts,
                   b = lines * (size_t)(part + 1) / (size_t)parts;
            if (b > a) dpdo__prefetch(p[q] + 64 * a, 64 * (b - a));
        }
        if (ds->y && part == 0) dpdo__prefetch(ds->y + r, sizeof *ds->y); /* the label */
    }
}

double dpdo__row_dot(const struct dpdo_dataset *ds, int64_t r, const double *w)
{
    if (ds->layout == DPDO__DS_DENSE) return dot_dense(ds->X + (size_t)r * (size_t)ds->d, w, ds->d);
    if (ds->layout == DPDO__DS_CSR) return dot_csr(ds, r, w);
    return 0.0;
}

void dpdo__row_axpy(const struct dpdo_dataset *ds, int64_t r, double alpha, double *y)
{
    if (ds->layout == DPDO__DS_DENSE)
        axpy_dense(alpha, ds->X + (size_t)r * (size_t)ds->d, y, ds->d);
    else if (ds->layout == DPDO__DS_CSR)
        axpy_csr(ds, r, alpha, y);
}

void dpdo__margins(const struct dpdo_dataset *ds, const int64_t *rows, int64_t m, const double *w,
                   double *margins)
{
    if (ds->layout == DPDO__DS_DENSE) {
#ifdef DPDO__X86
        if (have_avx2())
            margins_avx2(ds, rows, m, w, margins);
        else
#endif
            margins_base(ds, rows, m, w, margins);
    } else if (ds->layout == DPDO__DS_CSR) {
        for (int64_t k = 0; k < m; k++)
            margins[k] = dot_csr(ds, rows ? rows[k] : k, w);
    } else {
        for (int64_t k = 0; k < m; k++)
            margins[k] = 0.0;
    }
}

int dpdo__logit_long(const struct dpdo_dataset *ds, const int64_t *rows, int64_t m, const double *w,
                     double clip, double scale, double *grad, double *loss_sum, int64_t *nclipped,
                     int isa)
{
#ifdef DPDO__X86
    if (ds->layout != DPDO__DS_DENSE || ds->d <= LOGIT_DMAX || !rows || !have_avx2()) return 0;
    if (isa < 0) isa = have_avx512() ? 2 : 1;
    if (isa == 2 && !have_avx512()) return 0;
    double lacc = 0.0;
    int64_t ncl = 0;
    if (isa == 2)
        logit_long_avx512(ds, rows, m, w, clip, scale, grad, loss_sum ? &lacc : NULL, &ncl);
    else if (isa == 1)
        logit_long_avx2(ds, rows, m, w, clip, scale, grad, loss_sum ? &lacc : NULL, &ncl);
    else
        return 0;
    if (loss_sum) *loss_sum = lacc;
    if (nclipped) *nclipped = ncl;
    return 1;
#else
    (void)ds, (void)rows, (void)m, (void)w, (void)clip, (void)scale, (void)grad, (void)loss_sum;
    (void)nclipped, (void)isa;
    return 0;
#endif
}

/* the coefficients of dpdo__lin_grad_logistic's long-row path, handed to dpdo__lin_grad in row
 * order */
typedef struct pre_coef {
    const double *c;
    int64_t k;
} pre_coef;
static double phi_pre(const void *ctx, double m, double y, double *loss)
{
    (void)m, (void)y;
    pre_coef *p = (pre_coef *)ctx;
    *loss = 0.0;
    return p->c[p->k++];
}

int dpdo__lin_grad_logistic(const struct dpdo_dataset *ds, const int64_t *rows, int64_t m,
                            const double *w, double clip, double scale, double *grad,
                            double *loss_sum, int64_t *nclipped)
{
#ifdef DPDO__VEC
    if ((ds->layout == DPDO__DS_DENSE && ds->d > LOGIT_DMAX) || ds->layout == DPDO__DS_CSR) {
        /* long or sparse rows: margins by the row kernels, the coefficients vectorised, then the
         * row kernel's own gradient loop (same dot, same order) with those coefficients */
        if (!rows) return 0;
        /* the same bits in one fused pass (AVX2 or AVX-512F) */
        if (dpdo__logit_long(ds, rows, m, w, clip, scale, grad, loss_sum, nclipped, -1)) return 1;
        enum { CH = 256 };
        double mg[CH], c[CH], y[CH], lacc = 0.0;
        int64_t ncl = 0;
        for (int64_t off = 0; off < m; off += CH) {
            int64_t k = m - off < CH ? m - off : CH;
            dpdo__margins(ds, rows + off, k, w, mg);
            for (int64_t j = 0; j < k; j++)
                y[j] = ds->y[rows[off + j]], mg[j] = -y[j] * mg[j];
#ifdef DPDO__X86
            if (have_avx2())
                coefs_avx2(mg, y, k, c, loss_sum ? &lacc : NULL);
            else
#endif
                coefs_base(mg, y, k, c, loss_sum ? &lacc : NULL);
            pre_coef pc = {c, 0};
            double dummy = 0.0;
            int64_t nc = 0;
            dpdo__lin_grad(ds, rows + off, k, w, phi_pre, &pc, clip, scale, grad, &dummy, &nc);
            ncl += nc;
        }
        if (loss_sum) *loss_sum = lacc;
        if (nclipped) *nclipped = ncl;
        return 1;
    }
    if (ds->layout != DPDO__DS_DENSE) return 0;
    double loss_acc = 0.0;
    int64_t ncl = 0;
#ifdef DPDO__X86
    if (have_avx2())
        logit_pick_avx2(ds->d)(ds, rows, m, w, clip, scale, grad, loss_sum ? &loss_acc : NULL,
                               &ncl);
    else
#endif
        logit_pick_base(ds->d)(ds, rows, m, w, clip, scale, grad, loss_sum ? &loss_acc : NULL,
                               &ncl);
    if (loss_sum) *loss_sum = loss_acc;
    if (nclipped) *nclipped = ncl;
    return 1;
#else
    return 0;
#endif
}

/* y = 0 + a x over d coordinates (the bits of y = 0 then y += a x: 0 + (-0) is +0) and 1 if every
 * value is finite (exponent not all ones); compiled for AVX2 and the baseline, same bits */
#define STORE_AXPY(NAME, ATTR)                                                                     \
    ATTR static int NAME(double a, const double *restrict x, double *restrict y, size_t d)         \
    {                                                                                              \
        uint64_t acc = 0;                                                                          \
        for (size_t j = 0; j < d; j++) {                                                           \
            double v = 0.0 + a * x[j];                                                             \
            y[j] = v;                                                                              \
            acc |= dpdo__nf_bits(v);                                                               \
        }                                                                                          \
        return !(acc >> 63);                                                                       \
    }
STORE_AXPY(store_axpy_base, )
#ifdef DPDO__X86
STORE_AXPY(store_axpy_avx2, AVX2)
#endif

double dpdo__lin_coef1(const struct dpdo_dataset *ds, int64_t r, const double *w, dpdo__phi_fn phi,
                       const void *ctx, double clip, double scale, double *loss_sum,
                       int64_t *nclipped)
{
    double loss_acc = 0.0, mg;
    int64_t ncl = 0;
    dpdo__margins(ds, &r, 1, w, &mg); /* the dot of dpdo__lin_grad's row loop */
    double a = scale * coef(ds, r, mg, phi, ctx, clip, &loss_acc, &ncl);
    *loss_sum = loss_acc;
    *nclipped = ncl;
    return a;
}

int dpdo__lin_grad1(const struct dpdo_dataset *ds, int64_t r, const double *w, dpdo__phi_fn phi,
                    const void *ctx, double clip, double scale, double *grad, double *loss_sum,
                    int64_t *nclipped, int *finite)
{
    if (ds->layout != DPDO__DS_DENSE && ds->layout != DPDO__DS_CSR) return 0;
    double loss_acc;
    int64_t ncl;
    size_t d = (size_t)ds->d;
    double a = dpdo__lin_coef1(ds, r, w, phi, ctx, clip, scale, &loss_acc, &ncl);
    int fin = 1;
    if (ds->layout == DPDO__DS_DENSE && a != 0.0) {
        const double *x = ds->X + (size_t)r * d;
#ifdef DPDO__X86
        if (have_avx2())
            fin = store_axpy_avx2(a, x, grad, d);
        else
#endif
            fin = store_axpy_base(a, x, grad, d);
    } else {
        memset(grad, 0, d * sizeof *grad);
        if (a != 0.0) { /* CSR: the written coordinates (a repeated column adds up) */
            axpy_csr(ds, r, a, grad);
            for (int64_t k = ds->rowptr[r]; k < ds->rowptr[r + 1]; k++)
                fin &= isfinite(grad[ds->colidx[k]]) != 0;
        }
    }
    if (loss_sum) *loss_sum = loss_acc;
    if (nclipped) *nclipped = ncl;
    *finite = fin;
    return 1;
}

void dpdo__lin_grad(const struct dpdo_dataset *ds, const int64_t *rows, int64_t m, const double *w,
                    dpdo__phi_fn phi, const void *ctx, double clip, double scale, double *grad,
                    double *loss_sum, int64_t *nclipped)
{
    double loss_acc = 0.0;
    int64_t ncl = 0;
    if (ds->layout == DPDO__DS_DENSE) {
#ifdef DPDO__X86
        if (have_avx512())
            grad_avx512(ds, rows, m, w, phi, ctx, clip, scale, grad, &loss_acc, &ncl);
        else if (have_avx2())
            grad_avx2(ds, rows, 0, m, w, phi, ctx, clip, scale, grad, &loss_acc, &ncl);
        else
#endif
            grad_base(ds, rows, m, w, phi, ctx, clip, scale, grad, &loss_acc, &ncl);
    } else if (ds->layout == DPDO__DS_CSR) {
        for (int64_t k = 0; k < m; k++) {
            int64_t r = rows ? rows[k] : k;
            double mg = dot_csr(ds, r, w);
            double c = coef(ds, r, mg, phi, ctx, clip, &loss_acc, &ncl);
            double a = scale * c;
            if (a != 0.0) axpy_csr(ds, r, a, grad);
        }
    }
    if (loss_sum) *loss_sum = loss_acc;
    if (nclipped) *nclipped = ncl;
}
