/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal dataset layout and linear-model kernels. */
#ifndef DPDO_DATA_IMPL_H
#define DPDO_DATA_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include "dpdo/dataset.h"
#include "../core/core_impl.h"

enum { DPDO__DS_EMPTY = 0, DPDO__DS_DENSE = 1, DPDO__DS_CSR = 2 };

struct dpdo_dataset {
    int layout;        /* DPDO__DS_* */
    int64_t n, d;      /* rows, features */
    /* dense: X[i*d + j], row-major */
    const double *X;
    /* CSR: row i holds entries rowptr[i] .. rowptr[i+1]-1, columns 0-based and
     * strictly increasing */
    const int64_t *rowptr;
    const int32_t *colidx;
    const double *val;
    const double *y;        /* labels as doubles (+-1 for binary tasks), n */
    const int32_t *cls;     /* class ids (IDX/multiclass), n, or NULL */
    double *row_norm;       /* ||x_i||_2, computed once, n */
    double max_row_norm;
    /* ownership: buffers this handle frees (NULL if borrowed) */
    void *own[6];
    int32_t refs;           /* shards/nodes borrowing this dataset (refill -> E_STATE) */
    char errmsg[DPDO__ERRMSG_LEN];
};

/* A shard: rows of a parent dataset given by an index list (a view, no copy).
 * rows == NULL means the contiguous range [first, first+n). */
struct dpdo_shard {
    struct dpdo_dataset *parent; /* borrowed; parent->refs counts this shard */
    int64_t n;
    int64_t first;
    int64_t *rows;               /* owned, sorted or not */
    char errmsg[DPDO__ERRMSG_LEN];
};

static inline int64_t dpdo__shard_row(const struct dpdo_shard *s, int64_t k)
{
    return s->rows ? s->rows[k] : s->first + k;
}

/* ---- linear-model kernels ----------------------------------------------
 * A per-sample scalar loss phi(margin, label): fills *loss and returns the
 * derivative with respect to the margin. `ctx` is the loss's parameters.
 * Returning a non-finite derivative is allowed; kernels report it. */
typedef double (*dpdo__phi_fn)(const void *ctx, double margin, double label, double *loss);

/* Margins m_k = <x_{r_k}, w> for the rows r_0..r_{m-1} (rows == NULL:
 * rows 0..m-1 of ds). */
void dpdo__margins(const struct dpdo_dataset *ds, const int64_t *rows, int64_t m,
                   const double *w, double *margins);

/* One fused pass: for each row r_k: margin, phi, coefficient c_k = phi'
 * (optionally clipped so that |c_k| * ||x|| <= clip when clip > 0), then
 * grad += scale * c_k x_{r_k}. Returns sum_k loss_k via *loss_sum (may be
 * NULL) and the number of clipped samples via *nclipped (may be NULL).
 * grad is accumulated into (not zeroed). Dense rows use a fused row kernel
 * (row read once); CSR rows a sparse loop. */
void dpdo__lin_grad(const struct dpdo_dataset *ds, const int64_t *rows, int64_t m,
                    const double *w, dpdo__phi_fn phi, const void *ctx, double clip, double scale,
                    double *grad, double *loss_sum, int64_t *nclipped);

/* y += alpha * x_r (one row of ds). */
void dpdo__row_axpy(const struct dpdo_dataset *ds, int64_t r, double alpha, double *y);
double dpdo__row_dot(const struct dpdo_dataset *ds, int64_t r, const double *w);

#endif /* DPDO_DATA_IMPL_H */
