/* SPDX-License-Identifier: BSD-3-Clause */
/* Gossip application y = W x on n x d row-major state blocks: the sparse
 * path (one scaled copy + one axpy per stored off-diagonal entry, i.e.
 * O((n + 2m) d) flops) and the dense BLIS dgemm path for small dense W. */
#include "net_impl.h"
#include <blis.h>
#include <string.h>

/* y = sum_k val[k] * x[col[k]] for one row; y is written, never read first.
 * Neighbours are taken four at a time, but each sum is formed left to right,
 * ((((y + w0 x0) + w1 x1) + w2 x2) + w3 x3), and -ffp-contract=off forbids
 * fused multiply-adds, so the result is bit-identical to one axpy per entry
 * while y is loaded and stored a quarter as often. */
#if defined(__GNUC__) || defined(__clang__)
/* Two-lane vectors (SSE2 on x86-64, NEON on arm64) through the compiler's
 * vector extension; element-wise the same operations as the scalar code. */
typedef double v2d __attribute__((vector_size(16), aligned(8), may_alias));
#define DPDO__V2 1
#define LD(p) (*(const v2d *)(p))
#endif

/* One pass over a row: y = [y +] w0 a0 + ... + w(k-1) a(k-1), k in 1..4,
 * summed strictly left to right. With -ffp-contract=off (no fused
 * multiply-add) this is bit-identical to k separate axpys (or to a scaled
 * copy followed by k-1 axpys when init is set), but y is loaded and stored
 * once per pass instead of once per entry. */
static void row_pass(double *restrict y, int init, int k, const double *const *src, const double *w,
                     size_t D)
{
    const double *restrict a = src[0], *restrict b = src[k > 1 ? 1 : 0];
    const double *restrict e = src[k > 2 ? 2 : 0], *restrict f = src[k > 3 ? 3 : 0];
    double wa = w[0], wb = k > 1 ? w[1] : 0, we = k > 2 ? w[2] : 0, wf = k > 3 ? w[3] : 0;
    size_t c = 0;
#ifdef DPDO__V2
    v2d va = {wa, wa}, vb = {wb, wb}, ve = {we, we}, vf = {wf, wf};
#define VLOOP(expr)                                                                                \
    for (; c + 2 <= D; c += 2)                                                                     \
        *(v2d *)(y + c) = (expr);
#else
#define VLOOP(expr)
#endif
#define SLOOP(expr)                                                                                \
    for (; c < D; c++)                                                                             \
        y[c] = (expr);
    if (init) {
        switch (k) {
        case 1:
            VLOOP(va * LD(a + c)) SLOOP(wa * a[c]) break;
        case 2:
            VLOOP(va * LD(a + c) + vb * LD(b + c)) SLOOP(wa * a[c] + wb * b[c]) break;
        case 3:
            VLOOP(va * LD(a + c) + vb * LD(b + c) + ve * LD(e + c))
            SLOOP(wa * a[c] + wb * b[c] + we * e[c]) break;
        default:
            VLOOP(va * LD(a + c) + vb * LD(b + c) + ve * LD(e + c) + vf * LD(f + c))
            SLOOP(wa * a[c] + wb * b[c] + we * e[c] + wf * f[c]) break;
        }
    } else {
        switch (k) {
        case 1:
            VLOOP(LD(y + c) + va * LD(a + c)) SLOOP(y[c] + wa * a[c]) break;
        case 2:
            VLOOP(LD(y + c) + va * LD(a + c) + vb * LD(b + c))
            SLOOP(y[c] + wa * a[c] + wb * b[c]) break;
        case 3:
            VLOOP(LD(y + c) + va * LD(a + c) + vb * LD(b + c) + ve * LD(e + c))
            SLOOP(y[c] + wa * a[c] + wb * b[c] + we * e[c]) break;
        default:
            VLOOP(LD(y + c) + va * LD(a + c) + vb * LD(b + c) + ve * LD(e + c) + vf * LD(f + c))
            SLOOP(y[c] + wa * a[c] + wb * b[c] + we * e[c] + wf * f[c]) break;
        }
    }
#undef VLOOP
#undef SLOOP
}

/* y = sum_k val[k] * x[col[k]] for one row (cnt >= 1 entries, in order);
 * y is written, never read first. */
static void row_combine(const int64_t *col, const double *val, int64_t cnt,
                        const double *restrict x, double *restrict y, int64_t d)
{
    size_t D = (size_t)d;
    const double *src[4];
    for (int64_t k = 0; k < cnt; k += 4) {
        int g = cnt - k < 4 ? (int)(cnt - k) : 4;
        for (int t = 0; t < g; t++)
            src[t] = x + (size_t)col[k + t] * D;
        row_pass(y, k == 0, g, src, val + k, D);
    }
}

static void sparse_rows(const struct dpdo_network *net, const int64_t *rows, int64_t nrows,
                        const double *x, double *y, int64_t d)
{
    size_t D = (size_t)d;
    for (int64_t r = 0; r < nrows; r++) {
        int64_t i = rows ? rows[r] : r;
        int64_t b = net->rowptr[i];
        row_combine(net->col + b, net->val + b, net->rowptr[i + 1] - b, x, y + (size_t)i * D, d);
    }
}

void dpdo__gossip(const struct dpdo_network *net, const double *x, double *y, int64_t d)
{
    if (net->path == DPDO_GOSSIP_DENSE && net->wdense) {
        /* sizes were validated by the caller: n in [2, 4096], d >= 1 */
        double one = 1.0, zero = 0.0;
        bli_dgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, (dim_t)net->n, (dim_t)d, (dim_t)net->n,
                  &one, net->wdense, (inc_t)net->n, 1, (double *)x, (inc_t)d, 1, &zero, y, (inc_t)d,
                  1);
        return;
    }
    sparse_rows(net, NULL, net->n, x, y, d);
}

void dpdo__gossip_rows(const struct dpdo_network *net, const int64_t *rows, int64_t nrows,
                       const double *x, double *y, int64_t d)
{
    sparse_rows(net, rows, nrows, x, y, d);
}

void dpdo__round_gossip(const dpdo__round *r, const double *restrict x, double *restrict y,
                        int64_t d)
{
    size_t D = (size_t)d;
    if (r->nactive == 0) return;
    if (r->full_average) {
        /* scheme (c): every active row becomes the mean of the active rows */
        double *y0 = y + (size_t)r->active[0] * D;
        const double *x0 = x + (size_t)r->active[0] * D;
        memcpy(y0, x0, D * sizeof(double));
        for (int64_t t = 1; t < r->nactive; t++) {
            const double *xj = x + (size_t)r->active[t] * D;
            for (size_t c = 0; c < D; c++)
                y0[c] += xj[c];
        }
        double inv = 1.0 / (double)r->nactive;
        for (size_t c = 0; c < D; c++)
            y0[c] *= inv;
        for (int64_t t = 1; t < r->nactive; t++)
            memcpy(y + (size_t)r->active[t] * D, y0, D * sizeof(double));
        return;
    }
    for (int64_t t = 0; t < r->nactive; t++) {
        int64_t b = r->wptr[t];
        row_combine(r->wcol + b, r->wval + b, r->wptr[t + 1] - b, x, y + (size_t)r->active[t] * D,
                    d);
    }
}

static int overlap(const double *a, const double *b, size_t len)
{
    uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b, bytes = (uintptr_t)(len * sizeof(double));
    return pa < pb + bytes && pb < pa + bytes;
}

int dpdo_network_gossip(dpdo_network *net, const double *x, double *y, int64_t n, int64_t d)
{
    if (!net) return DPDO_E_INVAL;
    if (net->n == 0) return dpdo__err(net->errmsg, DPDO_E_INVAL, "gossip: the network is empty");
    if (!x || !y) return dpdo__err(net->errmsg, DPDO_E_INVAL, "gossip: x or y is NULL");
    if (n != net->n)
        return dpdo__err(net->errmsg, DPDO_E_INVAL,
                         "gossip: n = %lld but the network has %lld nodes", (long long)n,
                         (long long)net->n);
    if (d < 1)
        return dpdo__err(net->errmsg, DPDO_E_INVAL, "gossip: d = %lld, need d >= 1", (long long)d);
    size_t len;
    if (!dpdo__mul_size((size_t)n, (size_t)d, &len) || len > SIZE_MAX / sizeof(double))
        return dpdo__err(net->errmsg, DPDO_E_INVAL, "gossip: n*d overflows");
    if (overlap(x, y, len)) return dpdo__err(net->errmsg, DPDO_E_INVAL, "gossip: x and y overlap");
    dpdo__gossip(net, x, y, d);
    return DPDO_OK;
}
