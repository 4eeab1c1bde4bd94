/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal dataset layout and linear-model kernels. */
#ifndef DPDO_DATA_IMPL_H
#define DPDO_DATA_IMPL_H

#include "../core/core_impl.h"
#include "dpdo/dataset.h"
#include <math.h>
#include <stddef.h>
#include <stdint.h>

enum { DPDO__DS_EMPTY = 0, DPDO__DS_DENSE = 1, DPDO__DS_CSR = 2 };

struct dpdo_dataset {
    uint32_t magic; /* DPDO__MAGIC_* while alive, 0 after destroy (core_impl.h) */
    int layout;     /* DPDO__DS_* */
    int64_t n, d;   /* rows, features */
    /* dense: X[i*d + j], row-major */
    const double *X;
    /* CSR: row i holds entries rowptr[i] .. rowptr[i+1]-1, columns 0-based and
     * strictly increasing */
    const int64_t *rowptr;
    const int32_t *colidx;
    const double *val;
    const double *y;    /* labels as doubles (+-1 for binary tasks), n */
    const int32_t *cls; /* class ids (IDX/multiclass), n, or NULL */
    double *row_norm;   /* ||x_i||_2, computed once, n */
    double max_row_norm;
    /* ownership: buffers this handle frees (NULL if borrowed) */
    void *own[6];
    int32_t refs;  /* shards/nodes borrowing this dataset (refill -> E_STATE) */
    int destroyed; /* dpdo_dataset_destroy called while refs > 0: freed by the last shard */
    int64_t nnz;   /* n*d (dense) or rowptr[n] (CSR) */
    char errmsg[DPDO__ERRMSG_LEN];
};

/* A shard: rows of a parent dataset given by an index list (a view, no copy).
 * rows == NULL means the contiguous range [first, first+n). */
struct dpdo_shard {
    uint32_t magic;              /* DPDO__MAGIC_* while alive, 0 after destroy (core_impl.h) */
    struct dpdo_dataset *parent; /* borrowed; parent->refs counts this shard */
    int64_t n;
    int64_t first;
    int64_t *rows;     /* owned, sorted or not */
    int64_t borrowers; /* nodes borrowing this shard (core_impl.h, borrowed handles) */
    int doomed;        /* destroy requested while borrowed */
    char errmsg[DPDO__ERRMSG_LEN];
};
void dpdo__shard_retain(struct dpdo_shard *s);
void dpdo__shard_release(struct dpdo_shard *s);

static inline int64_t dpdo__shard_row(const struct dpdo_shard *s, int64_t k)
{
    return s->rows ? s->rows[k] : s->first + k;
}
/* Prefetch the dataset rows and labels of shard samples idx[0..m) (idx NULL: 0..m-1) into the
 * caches (a hint; at most 256 KB of rows). kernels.c. */
void dpdo__shard_prefetch(const struct dpdo_shard *sh, const int64_t *idx, int64_t m);
/* The same for part `part` (0 .. parts-1) of each row's bytes. */
void dpdo__shard_prefetch_part(const struct dpdo_shard *sh, const int64_t *idx, int64_t m, int part,
                               int parts);

/* ---- linear-model kernels ----------------------------------------------
 * A per-sample scalar loss phi(margin, label): fills *loss and returns the
 * derivative with respect to the margin. `ctx` is the loss's parameters.
 * Returning a non-finite derivative is allowed; kernels report it. */
typedef double (*dpdo__phi_fn)(const void *ctx, double margin, double label, double *loss);

/* Margins m_k = <x_{r_k}, w> for the rows r_0..r_{m-1} (rows == NULL:
 * rows 0..m-1 of ds). */
void dpdo__margins(const struct dpdo_dataset *ds, const int64_t *rows, int64_t m, const double *w,
                   double *margins);

/* One fused pass: for each row r_k: margin, phi, coefficient c_k = phi'
 * (optionally clipped so that |c_k| * ||x|| <= clip when clip > 0), then
 * grad += scale * c_k x_{r_k}. Returns sum_k loss_k via *loss_sum (may be
 * NULL) and the number of clipped samples via *nclipped (may be NULL).
 * grad is accumulated into (not zeroed). Dense rows use a fused row kernel
 * (row read once); CSR rows a sparse loop. */
/* The built-in logistic loss (phi of lib/model/loss.c, the exp/log1p of vmath_impl.h) over
 * short dense rows (d <= 16) in one vectorised pass; same contract as dpdo__lin_grad with
 * that phi, except that loss_sum NULL skips the loss values, and the gradient is summed in four
 * interleaved partial sums (rows k = t mod 4) combined at the end. Returns 1 if it handled the
 * call, 0 (nothing done) for other layouts or d > 16. */
int dpdo__lin_grad_logistic(const struct dpdo_dataset *ds, const int64_t *rows, int64_t m,
                            const double *w, double clip, double scale, double *grad,
                            double *loss_sum, int64_t *nclipped);
/* dpdo__lin_grad_logistic's path for gathered long dense rows (d > 16, rows not NULL): margins,
 * coefficients, clipping and the gradient in one pass over blocks of rows (lib/data/kernels.c),
 * bit for bit the per-sample path. isa: 2 AVX-512F, 1 AVX2, -1 the best the CPU has. Returns 1
 * if it ran, 0 (nothing done) for other calls or when the CPU lacks the instruction set. The
 * explicit isa is for the tests. */
int dpdo__logit_long(const struct dpdo_dataset *ds, const int64_t *rows, int64_t m, const double *w,
                     double clip, double scale, double *grad, double *loss_sum, int64_t *nclipped,
                     int isa);
void dpdo__lin_grad(const struct dpdo_dataset *ds, const int64_t *rows, int64_t m, const double *w,
                    dpdo__phi_fn phi, const void *ctx, double clip, double scale, double *grad,
                    double *loss_sum, int64_t *nclipped);
/* The scaled coefficient a of the one row r in dpdo__lin_grad (its gradient is 0 + a x_r), its
 * loss and whether it was clipped (0/1); dense or CSR rows. */
double dpdo__lin_coef1(const struct dpdo_dataset *ds, int64_t r, const double *w, dpdo__phi_fn phi,
                       const void *ctx, double clip, double scale, double *loss_sum,
                       int64_t *nclipped);
/* grad = 0, then dpdo__lin_grad of the one row r, bit for bit, in one pass for a dense row (no
 * separate zeroing); *finite = 1 if every grad[k] is finite (the test of the d values for a
 * dense row, of the row's coordinates for CSR, whose other values are 0). Returns 1 if it ran,
 * 0 (nothing written) for other layouts. */
int dpdo__lin_grad1(const struct dpdo_dataset *ds, int64_t r, const double *w, dpdo__phi_fn phi,
                    const void *ctx, double clip, double scale, double *grad, double *loss_sum,
                    int64_t *nclipped, int *finite);

/* ---- full batch of a built-in loss over short dense rows: 8 lanes ----------------------
 * The full-batch gradient (and loss) of a built-in loss (kind: DPDO__L8_LOGISTIC, _HINGE,
 * _SQUARED: the phi functions of lib/model/loss.c, bit for bit per sample) over the q samples
 * h = 0..q-1 of a shard (dataset row rows[h], or first + h when rows is NULL) with
 * d <= DPDO__L8_DMAX features, summed in 8 lanes: lane k accumulates, in order of h, the samples
 * h = k (mod 8) (grad: scale * c_h x_h per feature, loss: loss_h), and the lanes are combined at
 * the end as ((l0 + l4) + (l1 + l5)) + ((l2 + l6) + (l3 + l7)), added to grad[j] / stored in
 *loss_sum. The per-sample margin (sum over j in order from 0, with fma when
 * dpdo__l8_margin_fma), coefficient c_h (logistic: the fma exp of kernels_l8_exp.h) and clipping
 * (dpdo__clip_coef), lanes accumulating fma(c_h, x_hj, G), scale times each lane tree: kernels_l8.c
 * (built with -DDPDO__L8_NO_FMA: lanes accumulating (scale c_h) x_hj, two roundings). Every
 * instruction-set path (scalar, SSE2, AVX2 with FMA, AVX-512F) gives the same bits.
 *
 * tc (may be NULL) is a transposed, padded copy of the q rows (dpdo__tcopy_build): the fast
 * path; without it the rows are gathered block by block into the same layout (same bits).
 * path: -1 = best available; 0 scalar, 1 SSE2 vectors, 2 AVX2, 3 AVX-512 (a test hook).
 * Returns 1 if it handled the call, 0 (nothing done) for other layouts, d > DPDO__L8_DMAX, an
 * unknown kind or a path this CPU or build lacks. loss_sum NULL: no loss values computed. */
enum { DPDO__L8_DMAX = 16, DPDO__L8_PAD = 32 /* qp: whole iterations of the widest kernel */ };
enum { DPDO__L8_LOGISTIC = 0, DPDO__L8_HINGE = 1, DPDO__L8_SQUARED = 2 };
struct dpdo__tcopy {
    int64_t q, qp, d; /* samples, q rounded up to a multiple of DPDO__L8_PAD, features */
    double *xt;       /* d x qp: xt[j * qp + h] = feature j of sample h (times -y_h when px);
                         0 for h >= q */
    int px;           /* 1: every y_h is +1 or -1 and xt holds -y_h x_h (exact) */
    double *ny;       /* qp: -y of sample h; 0 for h >= q */
};
int dpdo__lin_grad_full8(const struct dpdo_dataset *ds, const int64_t *rows, int64_t first,
                         int64_t q, const struct dpdo__tcopy *tc, int kind, const double *w,
                         double clip, double scale, double *grad, double *loss_sum,
                         int64_t *nclipped, int path);
/* 1 if dpdo__lin_grad_full8 computes the margins of w with fused multiply-adds: max_row_norm
 * times max_j |w_j| <= 2^1015, so that no product x_hj w_j and no partial margin can overflow
 * (then fma and the two-rounding margin differ only in rounding); 0 otherwise (NaN or huge
 * weights or data: the two-rounding margin, whose overflowing products give +-Inf and Inf - Inf
 * NaN as before), and always 0 when built with -DDPDO__L8_NO_FMA. */
int dpdo__l8_margin_fma(const struct dpdo_dataset *ds, const double *w);
/* 1 if dpdo__lin_grad_full8 applies to the shard's data (dense, 1 <= d <= DPDO__L8_DMAX) and
 * the 8-lane full-batch path is compiled in (not with -DDPDO__NO_LOGIT8, which restores the
 * earlier per-chunk orders for comparison). */
int dpdo__full8_applies(const struct dpdo_dataset *ds);
/* Build the transposed copy of sh's rows ((d + 1) * qp doubles, 64-byte aligned). Returns
 * DPDO_OK, DPDO_E_NOMEM; *out NULL if the layout does not apply. Free with dpdo__tcopy_free. */
int dpdo__tcopy_build(const struct dpdo_shard *sh, struct dpdo__tcopy **out);
void dpdo__tcopy_free(struct dpdo__tcopy *tc);

/* Coefficient c of one sample clipped so that |c| * ||x_r|| <= clip (per-sample gradient
 * clipping; the per-sample gradient of a linear model is c x_r): c' = c clip / g, written so that
 * |c'| * ||x_r|| <= clip holds after rounding too; counts a clipped sample in *ncl. */
static inline double dpdo__clip_coef(const struct dpdo_dataset *ds, int64_t r, double c,
                                     double clip, int64_t *ncl)
{
    double g = fabs(c) * ds->row_norm[r];
    if (g > clip) {
        double cc = clip / ds->row_norm[r];
        while (cc * ds->row_norm[r] > clip)
            cc = nextafter(cc, 0.0);
        c = c < 0 ? -cc : cc;
        (*ncl)++;
    }
    return c;
}

/* y += alpha * x_r (one row of ds). */
void dpdo__row_axpy(const struct dpdo_dataset *ds, int64_t r, double alpha, double *y);
double dpdo__row_dot(const struct dpdo_dataset *ds, int64_t r, const double *w);

/* ---- internal helpers shared by the data files ------------------------ */

/* New content for a dataset, built by a loader or generator. The own[]
 * pointers are buffers allocated with dpdo__alloc that the dataset will free
 * (NULL entries are skipped). */
struct dpdo__ds_content {
    int layout;
    int64_t n, d;
    const double *X;
    const int64_t *rowptr;
    const int32_t *colidx;
    const double *val;
    const double *y;
    const int32_t *cls;
    void *own[6];
    int loaded; /* 1: parsed from a file (a non-finite row norm is DPDO_E_FORMAT, not _INVAL) */
};

/* Compute row norms and replace ds's content with c. Always takes ownership
 * of c->own (freed on failure). Checks ds->refs (DPDO_E_STATE). Does not
 * validate the arrays (callers did). Returns DPDO_OK, DPDO_E_STATE,
 * DPDO_E_NOMEM with ds unchanged on failure. */
int dpdo__ds_install(struct dpdo_dataset *ds, struct dpdo__ds_content *c);
void dpdo__content_free(struct dpdo__ds_content *c);

/* Read a whole file into a fresh NUL-terminated buffer (*len excludes the
 * NUL), inflating it if it starts with the gzip magic. DPDO_E_IO,
 * DPDO_E_FORMAT (corrupt/truncated gzip), DPDO_E_NOMEM; message in errmsg. */
/* `kind` lets a hostile file be refused from its first bytes (an endless
 * device such as /dev/zero): DPDO__READ_TEXT refuses NUL bytes in a file that
 * is not gzip, DPDO__READ_IDX a file that starts with neither the IDX nor the
 * gzip magic. The limits of o (NULL: defaults) max_file_bytes,
 * max_decompressed_bytes and max_compression_ratio are applied while reading
 * and inflating (DPDO_E_FORMAT naming the option). */
enum { DPDO__READ_ANY = 0, DPDO__READ_TEXT = 1, DPDO__READ_IDX = 2 };
int dpdo__read_file(const char *path, int kind, const dpdo_load_options *o, char **buf, size_t *len,
                    char *errmsg);
/* dpdo__read_file for the text loaders: DPDO__READ_TEXT, and the file (or its inflated bytes) is
 * checked as it is read for a token longer than DPDO__TEXT_TOKEN_MAX bytes, a run without a
 * space, tab, CR, LF or `delim` (0: none; CSV's delimiter), refused with DPDO_E_FORMAT naming
 * its line and column. A hostile file (one run of digits, a gzip bomb of one character, NUL
 * bytes) is thus refused after at most ~2 DPDO__TEXT_TOKEN_MAX + DPDO__READ_CHUNK bytes read or
 * inflated, not after reading it whole. */
#define DPDO__TEXT_TOKEN_MAX (1 << 20)
#define DPDO__READ_CHUNK (1 << 20)
int dpdo__read_text(const char *path, int delim, const dpdo_load_options *o, char **buf,
                    size_t *len, char *errmsg);
/* If (buf,len) is gzip data, replace it by the inflated bytes (the old
 * buffer freed); else leave it. On failure *buf is unchanged (caller frees). `name` is used in
 * messages. o (NULL: defaults) gives the inflation limits. */
int dpdo__maybe_gunzip(const char *name, const dpdo_load_options *o, char **buf, size_t *len,
                       char *errmsg);
/* DPDO_E_INVAL unless the limit options of o are valid. */
int dpdo__check_limits(const dpdo_load_options *o, char *errmsg);
/* ||x||_2 of n values without overflow or underflow: the plain sum of squares
 * when it is safely in range, else a two-pass scaled sum (max |x_j|, then
 * sum (x_j/max)^2). +Inf only if the true norm exceeds DBL_MAX. */
double dpdo__norm2(const double *x, size_t n);

/* Parsers over a file image (buf[len] == '\0' required); `name` appears in
 * messages. Same contract as the public loaders. */
int dpdo__parse_libsvm(struct dpdo_dataset *ds, const char *name, const char *buf, size_t len,
                       const dpdo_load_options *o);
int dpdo__parse_csv(struct dpdo_dataset *ds, const char *name, const char *buf, size_t len,
                    const dpdo_load_options *o);
int dpdo__parse_idx(struct dpdo_dataset *ds, const char *iname, const unsigned char *ibuf,
                    size_t ilen, const char *lname, const unsigned char *lbuf, size_t llen,
                    const dpdo_load_options *o);
void dpdo__load_defaults(dpdo_load_options *o);

/* Parse a decimal floating-point number starting at p (no leading spaces),
 * ending before `end`: [+-] (digits [. digits*] | . digits) [(e|E) [+-] digits].
 * inf/nan and hex floats are not numbers here. Correctly rounded (exact fast path,
 * strtod otherwise). Returns the pointer after the number, or NULL if there
 * is no valid number at p. */
const char *dpdo__parse_double(const char *p, const char *end, double *out);

#endif /* DPDO_DATA_IMPL_H */
