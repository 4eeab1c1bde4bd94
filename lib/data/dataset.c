/* SPDX-License-Identifier: BSD-3-Clause */
/* Dataset handle: life cycle, filling from caller arrays, accessors, class
 * ids, shards and partitions, public kernel wrappers. */
#include "../rng/rng_impl.h"
#include "data_impl.h"
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *nonfinite_name(double v)
{
    return isnan(v) ? "NaN" : "Inf";
}

int dpdo_dataset_create(dpdo_dataset **out)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    struct dpdo_dataset *ds = dpdo__calloc(1, sizeof *ds);
    if (!ds) return DPDO_E_NOMEM;
    ds->magic = DPDO__MAGIC_DATASET;
    ds->layout = DPDO__DS_EMPTY;
    *out = ds;
    return DPDO_OK;
}

static void free_content(struct dpdo_dataset *ds)
{
    for (int k = 0; k < 6; k++) {
        dpdo__free(ds->own[k]);
        ds->own[k] = NULL;
    }
    dpdo__free(ds->row_norm);
    ds->row_norm = NULL;
}

static void ds_free(struct dpdo_dataset *ds)
{
    free_content(ds);
    dpdo__free(ds);
}

void dpdo_dataset_destroy(dpdo_dataset *ds)
{
    if (!ds || !DPDO__LIVE(ds, DPDO__MAGIC_DATASET)) return; /* NULL or destroyed */
    DPDO__KILL(ds);
    if (ds->refs > 0) {
        /* shards still read it: free when the last one goes */
        ds->destroyed = 1;
        return;
    }
    ds_free(ds);
}

const char *dpdo_dataset_errmsg(const dpdo_dataset *ds)
{
    return !ds                                   ? DPDO__NULL_TEXT("dpdo_dataset_errmsg", "ds")
           : DPDO__LIVE(ds, DPDO__MAGIC_DATASET) ? ds->errmsg
                                                 : DPDO__DEAD_TEXT("dpdo_dataset_errmsg", "ds");
}

void dpdo__content_free(struct dpdo__ds_content *c)
{
    for (int k = 0; k < 6; k++) {
        dpdo__free(c->own[k]);
        c->own[k] = NULL;
    }
}

int dpdo__ds_install(struct dpdo_dataset *ds, struct dpdo__ds_content *c)
{
    if (ds->refs > 0) {
        dpdo__content_free(c);
        return dpdo__err(ds->errmsg, DPDO_E_STATE,
                         "dataset is borrowed by %d shard(s); destroy them before refilling",
                         (int)ds->refs);
    }
    double *rn = dpdo__alloc_array((size_t)c->n, sizeof(double));
    if (!rn) {
        dpdo__content_free(c);
        return dpdo__err(ds->errmsg, DPDO_E_NOMEM, "out of memory for %lld row norms",
                         (long long)c->n);
    }
    double mx = 0.0;
    for (int64_t i = 0; i < c->n; i++) {
        if (c->layout == DPDO__DS_DENSE)
            rn[i] = dpdo__norm2(c->X + (size_t)i * (size_t)c->d, (size_t)c->d);
        else
            rn[i] = dpdo__norm2(c->val + c->rowptr[i], (size_t)(c->rowptr[i + 1] - c->rowptr[i]));
        if (!isfinite(rn[i])) {
            /* finite entries whose norm exceeds DBL_MAX: every clipping and
             * sensitivity bound downstream would be Inf */
            dpdo__free(rn);
            dpdo__content_free(c);
            return dpdo__err(ds->errmsg, c->loaded ? DPDO_E_FORMAT : DPDO_E_INVAL,
                             "row %lld: the Euclidean norm overflows (larger than %.3g); "
                             "rescale the data",
                             (long long)i, DBL_MAX);
        }
        if (rn[i] > mx) mx = rn[i];
    }
    free_content(ds);
    ds->layout = c->layout;
    ds->n = c->n;
    ds->d = c->d;
    ds->X = c->layout == DPDO__DS_DENSE ? c->X : NULL;
    ds->rowptr = c->layout == DPDO__DS_CSR ? c->rowptr : NULL;
    ds->colidx = c->layout == DPDO__DS_CSR ? c->colidx : NULL;
    ds->val = c->layout == DPDO__DS_CSR ? c->val : NULL;
    ds->y = c->y;
    ds->cls = c->cls;
    ds->row_norm = rn;
    ds->max_row_norm = mx;
    ds->nnz = c->layout == DPDO__DS_DENSE ? c->n * c->d : c->rowptr[c->n];
    for (int k = 0; k < 6; k++) {
        ds->own[k] = c->own[k];
        c->own[k] = NULL;
    }
    dpdo__err_clear(ds->errmsg);
    return DPDO_OK;
}

static int check_fill(struct dpdo_dataset *ds, int64_t n, int64_t d, const double *y, int mode)
{
    if (ds->refs > 0)
        return dpdo__err(ds->errmsg, DPDO_E_STATE,
                         "dataset is borrowed by %d shard(s); destroy them before refilling",
                         (int)ds->refs);
    if (n < 1)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "n = %lld: need at least one row", (long long)n);
    if (d < 1)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "d = %lld: need at least one feature",
                         (long long)d);
    if (!y) return dpdo__err(ds->errmsg, DPDO_E_INVAL, "labels y are NULL");
    if (mode != DPDO_COPY && mode != DPDO_BORROW)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "mode = %d: use DPDO_COPY or DPDO_BORROW", mode);
    return DPDO_OK;
}

static int check_labels(struct dpdo_dataset *ds, int64_t n, const double *y)
{
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(y[i]))
            return dpdo__err(ds->errmsg, DPDO_E_INVAL, "label of row %lld is %s", (long long)i,
                             nonfinite_name(y[i]));
    return DPDO_OK;
}

double dpdo__norm2(const double *x, size_t n)
{
    double s = 0.0;
    for (size_t j = 0; j < n; j++)
        s += x[j] * x[j];
    /* in range: no square overflowed, and the sum is far from the subnormals
     * (a row of tiny values keeps full precision through the scaled pass) */
    if (s <= 0x1p1000 && (s >= 0x1p-960 || s == 0.0)) {
        if (s != 0.0) return sqrt(s);
        /* s == 0: every x_j is 0, or all squares underflowed */
    }
    double m = 0.0;
    for (size_t j = 0; j < n; j++) {
        double a = fabs(x[j]);
        if (a > m || a != a) m = a;
    }
    if (m == 0.0 || !isfinite(m)) return m;
    double t = 0.0;
    for (size_t j = 0; j < n; j++) {
        double u = x[j] / m; /* not x * (1/m): 1/m overflows for subnormal m */
        t += u * u;
    }
    return m * sqrt(t); /* +Inf when the true norm exceeds DBL_MAX */
}

static void *dup_mem(const void *src, size_t n, size_t size)
{
    size_t bytes;
    if (!dpdo__mul_size(n, size, &bytes)) return NULL;
    void *p = dpdo__alloc(bytes ? bytes : 1);
    if (p && bytes) memcpy(p, src, bytes);
    return p;
}

int dpdo_dataset_set_dense(dpdo_dataset *ds, int64_t n, int64_t d, const double *X, const double *y,
                           int mode)
{
    if (!ds || !DPDO__LIVE(ds, DPDO__MAGIC_DATASET)) return DPDO_E_INVAL; /* NULL or destroyed */
    int rc = check_fill(ds, n, d, y, mode);
    if (rc) return rc;
    size_t nd;
    if (!dpdo__mul_size((size_t)n, (size_t)d, &nd) ||
        !dpdo__mul_size(nd, sizeof(double), &(size_t){0}))
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "n*d = %lld*%lld overflows", (long long)n,
                         (long long)d);
    if (!X) return dpdo__err(ds->errmsg, DPDO_E_INVAL, "X is NULL");
    if ((rc = check_labels(ds, n, y))) return rc;
    size_t bad = dpdo__first_nonfinite(X, nd);
    if (bad < nd)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "row %lld, column %lld: value is %s",
                         (long long)(bad / (size_t)d), (long long)(bad % (size_t)d),
                         nonfinite_name(X[bad]));
    struct dpdo__ds_content c = {.layout = DPDO__DS_DENSE, .n = n, .d = d, .X = X, .y = y};
    if (mode == DPDO_COPY) {
        double *Xc = dup_mem(X, nd, sizeof(double));
        double *yc = Xc ? dup_mem(y, (size_t)n, sizeof(double)) : NULL;
        if (!yc) {
            dpdo__free(Xc);
            return dpdo__err(ds->errmsg, DPDO_E_NOMEM, "out of memory copying a %lld x %lld matrix",
                             (long long)n, (long long)d);
        }
        c.X = c.own[0] = Xc;
        c.y = c.own[1] = yc;
    }
    return dpdo__ds_install(ds, &c);
}

int dpdo_dataset_set_csr(dpdo_dataset *ds, int64_t n, int64_t d, const int64_t *rowptr,
                         const int32_t *colidx, const double *val, const double *y, int mode)
{
    if (!ds || !DPDO__LIVE(ds, DPDO__MAGIC_DATASET)) return DPDO_E_INVAL; /* NULL or destroyed */
    int rc = check_fill(ds, n, d, y, mode);
    if (rc) return rc;
    if (d > INT32_MAX)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "d = %lld exceeds the CSR limit 2^31-1",
                         (long long)d);
    if (!rowptr) return dpdo__err(ds->errmsg, DPDO_E_INVAL, "rowptr is NULL");
    if (n > ((int64_t)1 << 48))
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "n = %lld is too large", (long long)n);
    if ((rc = check_labels(ds, n, y))) return rc;
    if (rowptr[0] != 0)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "rowptr[0] = %lld, must be 0",
                         (long long)rowptr[0]);
    for (int64_t i = 0; i < n; i++)
        if (rowptr[i + 1] < rowptr[i])
            return dpdo__err(ds->errmsg, DPDO_E_INVAL,
                             "rowptr decreases at row %lld (%lld -> %lld)", (long long)i,
                             (long long)rowptr[i], (long long)rowptr[i + 1]);
    int64_t nnz = rowptr[n];
    if (nnz > 0 && (!colidx || !val))
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "colidx or val is NULL with nnz = %lld",
                         (long long)nnz);
    for (int64_t i = 0; i < n; i++) {
        for (int64_t k = rowptr[i]; k < rowptr[i + 1]; k++) {
            if (colidx[k] < 0 || colidx[k] >= d)
                return dpdo__err(ds->errmsg, DPDO_E_INVAL,
                                 "row %lld: column index %d out of range [0, %lld)", (long long)i,
                                 (int)colidx[k], (long long)d);
            if (k > rowptr[i] && colidx[k] <= colidx[k - 1])
                return dpdo__err(ds->errmsg, DPDO_E_INVAL,
                                 "row %lld: column indices not strictly increasing (%d after %d)",
                                 (long long)i, (int)colidx[k], (int)colidx[k - 1]);
            if (!isfinite(val[k]))
                return dpdo__err(ds->errmsg, DPDO_E_INVAL, "row %lld, column %d: value is %s",
                                 (long long)i, (int)colidx[k], nonfinite_name(val[k]));
        }
    }
    struct dpdo__ds_content c = {.layout = DPDO__DS_CSR,
                                 .n = n,
                                 .d = d,
                                 .rowptr = rowptr,
                                 .colidx = colidx,
                                 .val = val,
                                 .y = y};
    if (mode == DPDO_COPY) {
        int64_t *rp = dup_mem(rowptr, (size_t)n + 1, sizeof(int64_t));
        int32_t *ci = rp ? dup_mem(colidx ? (const void *)colidx : (const void *)"", (size_t)nnz,
                                   sizeof(int32_t))
                         : NULL;
        double *v =
            ci ? dup_mem(val ? (const void *)val : (const void *)"", (size_t)nnz, sizeof(double))
               : NULL;
        double *yc = v ? dup_mem(y, (size_t)n, sizeof(double)) : NULL;
        if (!yc) {
            dpdo__free(rp);
            dpdo__free(ci);
            dpdo__free(v);
            return dpdo__err(ds->errmsg, DPDO_E_NOMEM, "out of memory copying a CSR matrix");
        }
        c.rowptr = c.own[0] = rp;
        c.colidx = c.own[1] = ci;
        c.val = c.own[2] = v;
        c.y = c.own[3] = yc;
    }
    return dpdo__ds_install(ds, &c);
}

static int need_filled(struct dpdo_dataset *ds)
{
    if (ds->layout == DPDO__DS_EMPTY)
        return dpdo__err(ds->errmsg, DPDO_E_STATE, "dataset is empty (fill it first)");
    return DPDO_OK;
}

static int own_slot(struct dpdo_dataset *ds, const void *p)
{
    for (int k = 0; k < 6; k++)
        if (p && ds->own[k] == p) return k;
    return -1;
}

static int free_slot(struct dpdo_dataset *ds)
{
    for (int k = 0; k < 6; k++)
        if (!ds->own[k]) return k;
    return -1;
}

int dpdo_dataset_set_classes(dpdo_dataset *ds, const int32_t *cls, int64_t n)
{
    if (!ds || !DPDO__LIVE(ds, DPDO__MAGIC_DATASET)) return DPDO_E_INVAL; /* NULL or destroyed */
    int rc = need_filled(ds);
    if (rc) return rc;
    if (ds->refs > 0) return dpdo__err(ds->errmsg, DPDO_E_STATE, "dataset is borrowed by shards");
    if (!cls) return dpdo__err(ds->errmsg, DPDO_E_INVAL, "cls is NULL");
    if (n != ds->n)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "n = %lld but the dataset has %lld rows",
                         (long long)n, (long long)ds->n);
    int slot = own_slot(ds, ds->cls);
    if (slot < 0) slot = free_slot(ds);
    if (slot < 0) return dpdo__err(ds->errmsg, DPDO_E_STATE, "internal: no ownership slot");
    int32_t *c = dup_mem(cls, (size_t)n, sizeof(int32_t));
    if (!c) return dpdo__err(ds->errmsg, DPDO_E_NOMEM, "out of memory");
    dpdo__free(ds->own[slot]);
    ds->own[slot] = c;
    ds->cls = c;
    return DPDO_OK;
}

int dpdo_dataset_binarize(dpdo_dataset *ds, int mode, int32_t positive_class)
{
    if (!ds || !DPDO__LIVE(ds, DPDO__MAGIC_DATASET)) return DPDO_E_INVAL; /* NULL or destroyed */
    int rc = need_filled(ds);
    if (rc) return rc;
    if (ds->refs > 0) return dpdo__err(ds->errmsg, DPDO_E_STATE, "dataset is borrowed by shards");
    if (mode != DPDO_BINARY_ONE_VS_REST && mode != DPDO_BINARY_EVEN_ODD)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL,
                         "mode = %d: use DPDO_BINARY_ONE_VS_REST or DPDO_BINARY_EVEN_ODD", mode);
    if (!ds->cls)
        return dpdo__err(ds->errmsg, DPDO_E_STATE, "dataset has no class ids to binarize");
    int slot = own_slot(ds, ds->y);
    if (slot < 0) slot = free_slot(ds);
    if (slot < 0) return dpdo__err(ds->errmsg, DPDO_E_STATE, "internal: no ownership slot");
    double *y = dpdo__alloc_array((size_t)ds->n, sizeof(double));
    if (!y) return dpdo__err(ds->errmsg, DPDO_E_NOMEM, "out of memory");
    for (int64_t i = 0; i < ds->n; i++) {
        int32_t c = ds->cls[i];
        int pos = mode == DPDO_BINARY_ONE_VS_REST ? c == positive_class : (c % 2) == 0;
        y[i] = pos ? 1.0 : -1.0;
    }
    dpdo__free(ds->own[slot]);
    ds->own[slot] = y;
    ds->y = y;
    return DPDO_OK;
}

/* ---- accessors --------------------------------------------------------- */
int64_t dpdo_dataset_rows(const dpdo_dataset *ds)
{
    return ds ? ds->n : 0;
}
int64_t dpdo_dataset_features(const dpdo_dataset *ds)
{
    return ds ? ds->d : 0;
}
int dpdo_dataset_layout(const dpdo_dataset *ds)
{
    return ds ? ds->layout : DPDO_LAYOUT_EMPTY;
}
int64_t dpdo_dataset_nnz(const dpdo_dataset *ds)
{
    return ds ? ds->nnz : 0;
}
double dpdo_dataset_max_row_norm(const dpdo_dataset *ds)
{
    return ds ? ds->max_row_norm : 0.0;
}
int dpdo_dataset_has_classes(const dpdo_dataset *ds)
{
    return ds && ds->cls ? 1 : 0;
}

static int check_row(struct dpdo_dataset *ds, int64_t i)
{
    int rc = need_filled(ds);
    if (rc) return rc;
    if (i < 0 || i >= ds->n)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "row %lld out of range [0, %lld)", (long long)i,
                         (long long)ds->n);
    return DPDO_OK;
}

int dpdo_dataset_get_row(dpdo_dataset *ds, int64_t i, double *out, int64_t d)
{
    if (!ds || !DPDO__LIVE(ds, DPDO__MAGIC_DATASET)) return DPDO_E_INVAL; /* NULL or destroyed */
    int rc = check_row(ds, i);
    if (rc) return rc;
    if (!out) return dpdo__err(ds->errmsg, DPDO_E_INVAL, "out is NULL");
    if (d != ds->d)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "d = %lld but the dataset has %lld features",
                         (long long)d, (long long)ds->d);
    if (ds->layout == DPDO__DS_DENSE) {
        memcpy(out, ds->X + (size_t)i * (size_t)d, (size_t)d * sizeof(double));
    } else {
        memset(out, 0, (size_t)d * sizeof(double));
        for (int64_t k = ds->rowptr[i]; k < ds->rowptr[i + 1]; k++)
            out[ds->colidx[k]] = ds->val[k];
    }
    return DPDO_OK;
}

int dpdo_dataset_get_row_norm(dpdo_dataset *ds, int64_t i, double *out)
{
    if (!ds || !DPDO__LIVE(ds, DPDO__MAGIC_DATASET)) return DPDO_E_INVAL; /* NULL or destroyed */
    int rc = check_row(ds, i);
    if (rc) return rc;
    if (!out) return dpdo__err(ds->errmsg, DPDO_E_INVAL, "out is NULL");
    *out = ds->row_norm[i];
    return DPDO_OK;
}

static int check_n_out(struct dpdo_dataset *ds, const void *out, int64_t n)
{
    int rc = need_filled(ds);
    if (rc) return rc;
    if (!out) return dpdo__err(ds->errmsg, DPDO_E_INVAL, "out is NULL");
    if (n != ds->n)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "n = %lld but the dataset has %lld rows",
                         (long long)n, (long long)ds->n);
    return DPDO_OK;
}

int dpdo_dataset_get_labels(dpdo_dataset *ds, double *out, int64_t n)
{
    if (!ds || !DPDO__LIVE(ds, DPDO__MAGIC_DATASET)) return DPDO_E_INVAL; /* NULL or destroyed */
    int rc = check_n_out(ds, out, n);
    if (rc) return rc;
    memcpy(out, ds->y, (size_t)n * sizeof(double));
    return DPDO_OK;
}

int dpdo_dataset_get_classes(dpdo_dataset *ds, int32_t *out, int64_t n)
{
    if (!ds || !DPDO__LIVE(ds, DPDO__MAGIC_DATASET)) return DPDO_E_INVAL; /* NULL or destroyed */
    int rc = check_n_out(ds, out, n);
    if (rc) return rc;
    if (!ds->cls) return dpdo__err(ds->errmsg, DPDO_E_STATE, "dataset has no class ids");
    memcpy(out, ds->cls, (size_t)n * sizeof(int32_t));
    return DPDO_OK;
}

/* ---- kernels ------------------------------------------------------------ */
int dpdo_dataset_margins(dpdo_dataset *ds, const double *w, int64_t d, double *margins, int64_t n)
{
    if (!ds || !DPDO__LIVE(ds, DPDO__MAGIC_DATASET)) return DPDO_E_INVAL; /* NULL or destroyed */
    int rc = need_filled(ds);
    if (rc) return rc;
    if (!w || !margins) return dpdo__err(ds->errmsg, DPDO_E_INVAL, "w or margins is NULL");
    if (d != ds->d || n != ds->n)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL,
                         "sizes d = %lld, n = %lld but the dataset is %lld x %lld", (long long)d,
                         (long long)n, (long long)ds->n, (long long)ds->d);
    size_t bad = dpdo__first_nonfinite(w, (size_t)d);
    if (bad < (size_t)d)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "w[%zu] is %s", bad, nonfinite_name(w[bad]));
    dpdo__margins(ds, NULL, n, w, margins);
    return DPDO_OK;
}

int dpdo_dataset_gemv(dpdo_dataset *ds, int trans, double alpha, const double *x, int64_t nx,
                      double beta, double *y, int64_t ny)
{
    if (!ds || !DPDO__LIVE(ds, DPDO__MAGIC_DATASET)) return DPDO_E_INVAL; /* NULL or destroyed */
    int rc = need_filled(ds);
    if (rc) return rc;
    if (trans != 0 && trans != 1)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "trans = %d: use 0 (X x) or 1 (X^T x)", trans);
    if (!x || !y) return dpdo__err(ds->errmsg, DPDO_E_INVAL, "x or y is NULL");
    int64_t ex = trans ? ds->n : ds->d, ey = trans ? ds->d : ds->n;
    if (nx != ex || ny != ey)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL,
                         "trans = %d: x needs %lld and y %lld entries, got %lld and %lld", trans,
                         (long long)ex, (long long)ey, (long long)nx, (long long)ny);
    if (!isfinite(alpha) || !isfinite(beta))
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "alpha or beta is not finite");
    size_t bad = dpdo__first_nonfinite(x, (size_t)nx);
    if (bad < (size_t)nx)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "x[%zu] is %s", bad, nonfinite_name(x[bad]));
    if (!trans) {
        for (int64_t i = 0; i < ds->n; i++) {
            double m = dpdo__row_dot(ds, i, x);
            y[i] = beta == 0.0 ? alpha * m : alpha * m + beta * y[i];
        }
    } else {
        for (int64_t j = 0; j < ds->d; j++)
            y[j] = beta == 0.0 ? 0.0 : beta * y[j];
        for (int64_t i = 0; i < ds->n; i++) {
            double a = alpha * x[i];
            if (a != 0.0) dpdo__row_axpy(ds, i, a, y);
        }
    }
    return DPDO_OK;
}

/* ---- shards --------------------------------------------------------------- */
static int shard_new(dpdo_shard **out, struct dpdo_dataset *ds, int64_t m)
{
    struct dpdo_shard *s = dpdo__calloc(1, sizeof *s);
    if (!s) return DPDO_E_NOMEM;
    s->magic = DPDO__MAGIC_SHARD;
    s->parent = ds;
    s->n = m;
    ds->refs++;
    *out = s;
    return DPDO_OK;
}

int dpdo_shard_create(dpdo_shard **out, dpdo_dataset *ds, const int64_t *rows, int64_t m)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (!ds || !DPDO__LIVE(ds, DPDO__MAGIC_DATASET)) return DPDO_E_INVAL; /* NULL or destroyed */
    int rc = need_filled(ds);
    if (rc) return rc;
    if (!rows) return dpdo__err(ds->errmsg, DPDO_E_INVAL, "rows is NULL");
    if (m < 1)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "m = %lld: a shard needs at least one row",
                         (long long)m);
    for (int64_t k = 0; k < m; k++)
        if (rows[k] < 0 || rows[k] >= ds->n)
            return dpdo__err(ds->errmsg, DPDO_E_INVAL, "rows[%lld] = %lld out of range [0, %lld)",
                             (long long)k, (long long)rows[k], (long long)ds->n);
    int64_t *r = dup_mem(rows, (size_t)m, sizeof(int64_t));
    if (!r) return dpdo__err(ds->errmsg, DPDO_E_NOMEM, "out of memory");
    if (shard_new(out, ds, m)) {
        dpdo__free(r);
        return dpdo__err(ds->errmsg, DPDO_E_NOMEM, "out of memory");
    }
    (*out)->rows = r;
    return DPDO_OK;
}

int dpdo_shard_create_range(dpdo_shard **out, dpdo_dataset *ds, int64_t first, int64_t m)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (!ds || !DPDO__LIVE(ds, DPDO__MAGIC_DATASET)) return DPDO_E_INVAL; /* NULL or destroyed */
    int rc = need_filled(ds);
    if (rc) return rc;
    if (m < 1)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "m = %lld: a shard needs at least one row",
                         (long long)m);
    if (first < 0 || first > ds->n - m)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "range [%lld, %lld + %lld) outside [0, %lld)",
                         (long long)first, (long long)first, (long long)m, (long long)ds->n);
    if (shard_new(out, ds, m)) return dpdo__err(ds->errmsg, DPDO_E_NOMEM, "out of memory");
    (*out)->first = first;
    return DPDO_OK;
}

static void shard_free(struct dpdo_shard *s)
{
    struct dpdo_dataset *ds = s->parent;
    dpdo__free(s->rows);
    dpdo__free(s);
    if (ds && --ds->refs == 0 && ds->destroyed) ds_free(ds);
}

void dpdo_shard_destroy(dpdo_shard *s)
{
    if (!s || !DPDO__LIVE(s, DPDO__MAGIC_SHARD)) return; /* NULL or destroyed */
    DPDO__KILL(s);
    if (s->borrowers > 0) {
        s->doomed = 1; /* freed by the last borrowing node */
        return;
    }
    shard_free(s);
}

void dpdo__shard_retain(struct dpdo_shard *s)
{
    s->borrowers++;
}

void dpdo__shard_release(struct dpdo_shard *s)
{
    if (s && --s->borrowers == 0 && s->doomed) shard_free(s);
}

const char *dpdo_shard_errmsg(const dpdo_shard *s)
{
    return !s                                 ? DPDO__NULL_TEXT("dpdo_shard_errmsg", "s")
           : DPDO__LIVE(s, DPDO__MAGIC_SHARD) ? s->errmsg
                                              : DPDO__DEAD_TEXT("dpdo_shard_errmsg", "s");
}
int64_t dpdo_shard_rows(const dpdo_shard *s)
{
    return s ? s->n : 0;
}

int64_t dpdo_shard_row_index(const dpdo_shard *s, int64_t k)
{
    if (!s || k < 0 || k >= s->n) return -1;
    return dpdo__shard_row(s, k);
}

int dpdo_shard_get_rows(dpdo_shard *s, int64_t *out, int64_t m)
{
    if (!s) return DPDO_E_INVAL;
    if (!out) return dpdo__err(s->errmsg, DPDO_E_INVAL, "out is NULL");
    if (m != s->n)
        return dpdo__err(s->errmsg, DPDO_E_INVAL, "m = %lld but the shard has %lld rows",
                         (long long)m, (long long)s->n);
    for (int64_t k = 0; k < m; k++)
        out[k] = dpdo__shard_row(s, k);
    return DPDO_OK;
}

int dpdo_shard_margins(dpdo_shard *s, const double *w, int64_t d, double *margins, int64_t m)
{
    if (!s) return DPDO_E_INVAL;
    if (!w || !margins) return dpdo__err(s->errmsg, DPDO_E_INVAL, "w or margins is NULL");
    if (d != s->parent->d || m != s->n)
        return dpdo__err(s->errmsg, DPDO_E_INVAL,
                         "sizes d = %lld, m = %lld but the shard is %lld x %lld", (long long)d,
                         (long long)m, (long long)s->n, (long long)s->parent->d);
    size_t bad = dpdo__first_nonfinite(w, (size_t)d);
    if (bad < (size_t)d)
        return dpdo__err(s->errmsg, DPDO_E_INVAL, "w[%zu] is %s", bad, nonfinite_name(w[bad]));
    if (s->rows) {
        dpdo__margins(s->parent, s->rows, m, w, margins);
    } else {
        for (int64_t k = 0; k < m; k++)
            margins[k] = dpdo__row_dot(s->parent, s->first + k, w);
    }
    return DPDO_OK;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int dpdo_dataset_partition(dpdo_dataset *ds, int64_t nshards, const int64_t *sizes, uint64_t seed,
                           dpdo_shard **shards_out)
{
    if (!ds || !DPDO__LIVE(ds, DPDO__MAGIC_DATASET)) return DPDO_E_INVAL; /* NULL or destroyed */
    if (!shards_out) return dpdo__err(ds->errmsg, DPDO_E_INVAL, "shards_out is NULL");
    if (nshards < 1)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "nshards = %lld: need at least one",
                         (long long)nshards);
    for (int64_t k = 0; k < nshards; k++)
        shards_out[k] = NULL;
    int rc = need_filled(ds);
    if (rc) return rc;
    int64_t total = 0;
    if (sizes) {
        for (int64_t k = 0; k < nshards; k++) {
            if (sizes[k] < 1)
                return dpdo__err(ds->errmsg, DPDO_E_INVAL, "sizes[%lld] = %lld: must be >= 1",
                                 (long long)k, (long long)sizes[k]);
            if (sizes[k] > ds->n - total)
                return dpdo__err(ds->errmsg, DPDO_E_INVAL,
                                 "sizes sum to more than the %lld rows (at shard %lld)",
                                 (long long)ds->n, (long long)k);
            total += sizes[k];
        }
    } else if (nshards > ds->n) {
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "nshards = %lld exceeds the %lld rows",
                         (long long)nshards, (long long)ds->n);
    }
    int64_t *perm = dpdo__alloc_array((size_t)ds->n, sizeof(int64_t));
    dpdo_rng *rng = NULL;
    if (!perm || dpdo_rng_create(&rng, NULL, NULL, seed) != DPDO_OK) {
        dpdo__free(perm);
        return dpdo__err(ds->errmsg, DPDO_E_NOMEM, "out of memory");
    }
    dpdo__stream st;
    dpdo__stream_open(&st, rng, 0, 0, DPDO_PURPOSE_PARTITION);
    dpdo__stream_permutation(&st, ds->n, perm);
    dpdo_rng_destroy(rng);
    int64_t off = 0;
    for (int64_t k = 0; k < nshards; k++) {
        int64_t m = sizes ? sizes[k] : ds->n / nshards + (k < ds->n % nshards ? 1 : 0);
        qsort(perm + off, (size_t)m, sizeof(int64_t), cmp_i64);
        rc = dpdo_shard_create(&shards_out[k], ds, perm + off, m);
        if (rc) {
            for (int64_t j = 0; j < k; j++) {
                dpdo_shard_destroy(shards_out[j]);
                shards_out[j] = NULL;
            }
            dpdo__free(perm);
            return rc;
        }
        off += m;
    }
    dpdo__free(perm);
    return DPDO_OK;
}
