/* SPDX-License-Identifier: BSD-3-Clause */
/* Fitted feature transforms (dpdo/preprocess.h): scale -> centre or
 * standardise -> PCA -> row normalisation.
 *
 * Data are processed in blocks of PP_BLOCK rows: each block is turned into
 * the dense, scaled and centred rows z_i (a PP_BLOCK x d buffer), then
 * either accumulated into the covariance with BLIS dsyrk (fit_pca) or
 * projected with BLIS dgemm (apply). No n x d temporary is ever made. CSR
 * rows are densified into the block buffer, so dense and CSR inputs with
 * the same values give bitwise identical results. */
#include "dpdo/preprocess.h"
#include "data_impl.h"
#include <blis.h>
#include <math.h>
#include <string.h>

/* Reference LAPACK (Fortran, 32-bit integers on Debian). The trailing
 * size_t arguments are the hidden lengths of the character arguments
 * (gfortran ABI). Declared here, never in a public header. */
extern void dsyevr_(const char *jobz, const char *range, const char *uplo, const int *n, double *a,
                    const int *lda, const double *vl, const double *vu, const int *il,
                    const int *iu, const double *abstol, int *m, double *w, double *z,
                    const int *ldz, int *isuppz, double *work, const int *lwork, int *iwork,
                    const int *liwork, int *info, size_t jobz_len, size_t range_len,
                    size_t uplo_len);

#define PP_BLOCK 256
#define PP_DMAX 16384 /* PCA: the covariance is d x d doubles (2 GiB at the limit) */

enum { ST_NONE = 0, ST_SCALE = 1, ST_CENTER = 2, ST_PCA = 3 };
enum { CK_NONE = 0, CK_CENTER = 1, CK_STANDARDIZE = 2 };

struct dpdo_transform {
    uint32_t magic; /* DPDO__MAGIC_* while alive, 0 after destroy (core_impl.h) */
    int stage;      /* last fitted step, ST_* */
    int has_scale;
    double factor;
    int center_kind; /* CK_* */
    int64_t d;       /* input feature count, 0 until a data fit fixes it */
    double *mean;    /* d, after the scale */
    double *sd;      /* d divisors (standardise), else NULL */
    int64_t k;       /* PCA components, 0 = no PCA */
    double *P;       /* d x k row-major: column c is the c-th principal axis */
    double *evr;     /* k explained-variance ratios */
    int32_t normalize;
    char errmsg[DPDO__ERRMSG_LEN];
};

int dpdo_transform_create(dpdo_transform **out)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    struct dpdo_transform *t = dpdo__calloc(1, sizeof *t);
    if (!t) return DPDO_E_NOMEM;
    t->magic = DPDO__MAGIC_TRANSFORM;
    t->factor = 1.0;
    *out = t;
    return DPDO_OK;
}

void dpdo_transform_destroy(dpdo_transform *t)
{
    if (!t || !DPDO__LIVE(t, DPDO__MAGIC_TRANSFORM)) return; /* NULL or destroyed */
    DPDO__KILL(t);
    dpdo__free(t->mean);
    dpdo__free(t->sd);
    dpdo__free(t->P);
    dpdo__free(t->evr);
    dpdo__free(t);
}

const char *dpdo_transform_errmsg(const dpdo_transform *t)
{
    return t ? t->errmsg : DPDO__NULL_TEXT("dpdo_transform_errmsg", "t");
}

static const char *stage_name(int stage, int ck)
{
    switch (stage) {
    case ST_SCALE:
        return "fit_scale";
    case ST_CENTER:
        return ck == CK_STANDARDIZE ? "fit_standardize" : "fit_center";
    case ST_PCA:
        return "fit_pca";
    default:
        return "nothing";
    }
}

/* A fit of step `want` is allowed only if every fitted step comes earlier. */
static int check_order(struct dpdo_transform *t, int want, const char *fn)
{
    if (t->stage >= want)
        return dpdo__err(t->errmsg, DPDO_E_STATE,
                         "%s: %s was already fitted; steps are fitted once each in the order "
                         "scale -> center/standardize -> pca (create a new transform to refit)",
                         fn, stage_name(t->stage, t->center_kind));
    return DPDO_OK;
}

int dpdo_transform_fit_scale(dpdo_transform *t, double factor)
{
    if (!t) return DPDO_E_INVAL;
    int rc = check_order(t, ST_SCALE, "fit_scale");
    if (rc) return rc;
    if (!isfinite(factor) || factor == 0.0)
        return dpdo__err(t->errmsg, DPDO_E_INVAL,
                         "fit_scale: factor = %g: need a finite non-zero value", factor);
    t->factor = factor;
    t->has_scale = 1;
    t->stage = ST_SCALE;
    dpdo__err_clear(t->errmsg);
    return DPDO_OK;
}

int dpdo_transform_set_normalize_rows(dpdo_transform *t, int32_t on)
{
    if (!t) return DPDO_E_INVAL;
    if (on != 0 && on != 1)
        return dpdo__err(t->errmsg, DPDO_E_INVAL, "set_normalize_rows: on = %d: use 0 or 1",
                         (int)on);
    t->normalize = on;
    dpdo__err_clear(t->errmsg);
    return DPDO_OK;
}

int64_t dpdo_transform_output_dim(const dpdo_transform *t)
{
    if (!t) return 0;
    return t->k > 0 ? t->k : t->d;
}

int dpdo_transform_explained_variance(const dpdo_transform *t, double *ratio, int64_t k)
{
    if (!t || !ratio) return DPDO_E_INVAL;
    if (t->k == 0) return DPDO_E_STATE;
    if (k < 1 || k > t->k) return DPDO_E_INVAL;
    memcpy(ratio, t->evr, (size_t)k * sizeof(double));
    return DPDO_OK;
}

/* ---- row access --------------------------------------------------------- */

/* Dense row i of ds: a pointer into X (dense) or the row scattered into
 * tmp[d] (CSR; tmp is overwritten). */
static const double *raw_row(const struct dpdo_dataset *ds, int64_t i, double *tmp)
{
    size_t d = (size_t)ds->d;
    if (ds->layout == DPDO__DS_DENSE) return ds->X + (size_t)i * d;
    memset(tmp, 0, d * sizeof(double));
    for (int64_t p = ds->rowptr[i]; p < ds->rowptr[i + 1]; p++)
        tmp[ds->colidx[p]] = ds->val[p];
    return tmp;
}

/* z = steps 1-2 of t applied to the dense row r (r == z allowed). */
static void prep_row(const struct dpdo_transform *t, const double *r, double *z, int64_t d)
{
    double f = t->factor;
    if (t->center_kind == CK_STANDARDIZE) {
        const double *m = t->mean, *s = t->sd;
        if (t->has_scale)
            for (int64_t j = 0; j < d; j++)
                z[j] = (f * r[j] - m[j]) / s[j];
        else
            for (int64_t j = 0; j < d; j++)
                z[j] = (r[j] - m[j]) / s[j];
    } else if (t->center_kind == CK_CENTER) {
        const double *m = t->mean;
        if (t->has_scale)
            for (int64_t j = 0; j < d; j++)
                z[j] = f * r[j] - m[j];
        else
            for (int64_t j = 0; j < d; j++)
                z[j] = r[j] - m[j];
    } else if (t->has_scale) {
        for (int64_t j = 0; j < d; j++)
            z[j] = f * r[j];
    } else if (z != r) {
        memcpy(z, r, (size_t)d * sizeof(double));
    }
}

/* Rows [i0, i0+nb) after steps 1-2 into buf (nb x d, row-major). */
static void prep_block(const struct dpdo_transform *t, const struct dpdo_dataset *ds, int64_t i0,
                       int64_t nb, double *buf)
{
    int64_t d = ds->d;
    for (int64_t r = 0; r < nb; r++) {
        double *z = buf + (size_t)r * (size_t)d;
        const double *x = raw_row(ds, i0 + r, z);
        prep_row(t, x, z, d);
    }
}

/* Find the first non-finite stored value of ds; 1 if found. */
static int find_nonfinite(const struct dpdo_dataset *ds, int64_t *row, int64_t *col, double *v)
{
    for (int64_t i = 0; i < ds->n; i++) {
        if (ds->layout == DPDO__DS_DENSE) {
            const double *x = ds->X + (size_t)i * (size_t)ds->d;
            for (int64_t j = 0; j < ds->d; j++)
                if (!isfinite(x[j])) {
                    *row = i, *col = j, *v = x[j];
                    return 1;
                }
        } else {
            for (int64_t p = ds->rowptr[i]; p < ds->rowptr[i + 1]; p++)
                if (!isfinite(ds->val[p])) {
                    *row = i, *col = ds->colidx[p], *v = ds->val[p];
                    return 1;
                }
        }
    }
    return 0;
}

/* A computed quantity came out non-finite: blame a non-finite input value
 * (DPDO_E_INVAL) if there is one, else overflow (DPDO_E_NUMERIC). */
static int nonfinite_error(char *errmsg, const char *fn, const char *what,
                           const struct dpdo_dataset *ds)
{
    int64_t r = 0, c = 0;
    double v = 0.0;
    if (find_nonfinite(ds, &r, &c, &v))
        return dpdo__err(errmsg, DPDO_E_INVAL, "%s: row %lld, column %lld: value is %s", fn,
                         (long long)r, (long long)c, isnan(v) ? "NaN" : "Inf");
    return dpdo__err(errmsg, DPDO_E_NUMERIC, "%s: %s overflows (values too large)", fn, what);
}

static int check_train(struct dpdo_transform *t, const struct dpdo_dataset *train, const char *fn)
{
    if (!train) return dpdo__err(t->errmsg, DPDO_E_INVAL, "%s: train dataset is NULL", fn);
    if (train->layout == DPDO__DS_EMPTY)
        return dpdo__err(t->errmsg, DPDO_E_STATE, "%s: train dataset is empty (fill it first)", fn);
    if (t->d > 0 && train->d != t->d)
        return dpdo__err(t->errmsg, DPDO_E_INVAL,
                         "%s: train has %lld features but the transform was fitted on %lld", fn,
                         (long long)train->d, (long long)t->d);
    return DPDO_OK;
}

/* ---- centre / standardise ---------------------------------------------- */

static int fit_moments(struct dpdo_transform *t, const struct dpdo_dataset *train, int kind)
{
    const char *fn = kind == CK_STANDARDIZE ? "fit_standardize" : "fit_center";
    int rc = check_order(t, ST_CENTER, fn);
    if (rc) return rc;
    if ((rc = check_train(t, train, fn))) return rc;
    int64_t n = train->n, d = train->d;
    size_t D = (size_t)d;
    double *mean = dpdo__calloc(D, sizeof(double));
    double *mn = dpdo__alloc_array(D, sizeof(double));
    double *mx = dpdo__alloc_array(D, sizeof(double));
    double *tmp = dpdo__alloc_array(D, sizeof(double));
    double *sd = kind == CK_STANDARDIZE ? dpdo__calloc(D, sizeof(double)) : NULL;
    if (!mean || !mn || !mx || !tmp || (kind == CK_STANDARDIZE && !sd)) {
        rc = dpdo__err(t->errmsg, DPDO_E_NOMEM, "%s: out of memory for %lld features", fn,
                       (long long)d);
        goto done;
    }
    double f = t->factor;
    /* pass 1: sums, minima and maxima of the scaled values */
    for (int64_t i = 0; i < n; i++) {
        const double *x = raw_row(train, i, tmp);
        for (int64_t j = 0; j < d; j++) {
            double v = t->has_scale ? f * x[j] : x[j];
            mean[j] += v;
            if (i == 0 || v < mn[j]) mn[j] = v;
            if (i == 0 || v > mx[j]) mx[j] = v;
        }
    }
    for (int64_t j = 0; j < d; j++) {
        if (!isfinite(mean[j])) {
            rc = nonfinite_error(t->errmsg, fn, "the feature sum", train);
            goto done;
        }
        /* a constant feature gets its exact value, so it centres to exactly 0 */
        mean[j] = mn[j] == mx[j] ? mn[j] : mean[j] / (double)n;
    }
    if (kind == CK_STANDARDIZE) {
        /* pass 2: sums of squared deviations (two-pass, numerically stable) */
        for (int64_t i = 0; i < n; i++) {
            const double *x = raw_row(train, i, tmp);
            for (int64_t j = 0; j < d; j++) {
                double v = (t->has_scale ? f * x[j] : x[j]) - mean[j];
                sd[j] += v * v;
            }
        }
        for (int64_t j = 0; j < d; j++) {
            if (!isfinite(sd[j])) {
                rc = dpdo__err(t->errmsg, DPDO_E_NUMERIC,
                               "%s: column %lld: the sum of squared deviations overflows", fn,
                               (long long)j);
                goto done;
            }
            double s = sqrt(sd[j] / (double)n);
            /* guard: constant feature or 1/s overflowing -> divisor 1 */
            sd[j] = (mn[j] == mx[j] || !(s > 0.0) || !isfinite(1.0 / s)) ? 1.0 : s;
        }
    }
    t->mean = mean;
    t->sd = sd;
    mean = sd = NULL;
    t->d = d;
    t->center_kind = kind;
    t->stage = ST_CENTER;
    dpdo__err_clear(t->errmsg);
done:
    dpdo__free(mean);
    dpdo__free(sd);
    dpdo__free(mn);
    dpdo__free(mx);
    dpdo__free(tmp);
    return rc;
}

int dpdo_transform_fit_center(dpdo_transform *t, const dpdo_dataset *train)
{
    if (!t) return DPDO_E_INVAL;
    return fit_moments(t, train, CK_CENTER);
}

int dpdo_transform_fit_standardize(dpdo_transform *t, const dpdo_dataset *train)
{
    if (!t) return DPDO_E_INVAL;
    return fit_moments(t, train, CK_STANDARDIZE);
}

/* ---- PCA ------------------------------------------------------------------ */

int dpdo_transform_fit_pca(dpdo_transform *t, const dpdo_dataset *train, int64_t k)
{
    if (!t) return DPDO_E_INVAL;
    const char *fn = "fit_pca";
    int rc = check_order(t, ST_PCA, fn);
    if (rc) return rc;
    if (t->stage != ST_CENTER)
        return dpdo__err(t->errmsg, DPDO_E_STATE,
                         "fit_pca: the data must be centred first (call dpdo_transform_fit_center "
                         "or dpdo_transform_fit_standardize before fit_pca)");
    if ((rc = check_train(t, train, fn))) return rc;
    int64_t n = train->n, d = train->d;
    if (k < 1 || k > d)
        return dpdo__err(t->errmsg, DPDO_E_INVAL, "fit_pca: k = %lld: need 1 <= k <= d = %lld",
                         (long long)k, (long long)d);
    if (d > PP_DMAX)
        return dpdo__err(t->errmsg, DPDO_E_INVAL,
                         "fit_pca: d = %lld exceeds %d (the covariance is a dense d x d matrix)",
                         (long long)d, PP_DMAX);
    size_t D = (size_t)d, K = (size_t)k;
    int64_t bmax = n < PP_BLOCK ? n : PP_BLOCK;
    double *C = dpdo__calloc(D * D, sizeof(double));
    double *buf = dpdo__alloc_array((size_t)bmax * D, sizeof(double));
    double *w = dpdo__alloc_array(D, sizeof(double));
    double *Z = dpdo__alloc_array(D * K, sizeof(double));
    int *isuppz = dpdo__alloc_array(2 * K, sizeof(int));
    double *P = dpdo__alloc_array(D * K, sizeof(double));
    double *evr = dpdo__alloc_array(K, sizeof(double));
    double *work = NULL;
    int *iwork = NULL;
    if (!C || !buf || !w || !Z || !isuppz || !P || !evr) {
        rc = dpdo__err(t->errmsg, DPDO_E_NOMEM,
                       "fit_pca: out of memory for a %lld x %lld covariance", (long long)d,
                       (long long)d);
        goto done;
    }
    /* C = sum_i z_i z_i^T, lower triangle of the row-major C, block by block */
    double one = 1.0;
    for (int64_t i0 = 0; i0 < n; i0 += PP_BLOCK) {
        int64_t nb = n - i0 < PP_BLOCK ? n - i0 : PP_BLOCK;
        prep_block(t, train, i0, nb, buf);
        bli_dsyrk(BLIS_LOWER, BLIS_TRANSPOSE, (dim_t)d, (dim_t)nb, &one, buf, (inc_t)d, 1, &one, C,
                  (inc_t)d, 1);
    }
    double trace = 0.0;
    for (size_t i = 0; i < D; i++) {
        for (size_t j = 0; j <= i; j++) {
            double c = C[i * D + j] / (double)n;
            if (!isfinite(c)) {
                rc = nonfinite_error(t->errmsg, fn, "the covariance", train);
                goto done;
            }
            C[i * D + j] = c;
            C[j * D + i] = c;
        }
        trace += C[i * D + i];
    }
    if (!(trace > 0.0)) {
        rc = dpdo__err(t->errmsg, DPDO_E_INVAL,
                       "fit_pca: the training data have zero total variance (every feature is "
                       "constant): principal axes are undefined");
        goto done;
    }
    /* top-k eigenpairs: indices il..iu of the ascending spectrum */
    int in = (int)d, il = (int)(d - k + 1), iu = (int)d, m = 0, info = 0;
    int lwork = -1, liwork = -1, iwq = 0;
    double vl = 0.0, vu = 0.0, abstol = 0.0, wq = 0.0;
    dsyevr_("V", "I", "L", &in, C, &in, &vl, &vu, &il, &iu, &abstol, &m, w, Z, &in, isuppz, &wq,
            &lwork, &iwq, &liwork, &info, 1, 1, 1);
    if (info != 0) {
        rc = dpdo__err(t->errmsg, DPDO_E_NUMERIC,
                       "fit_pca: dsyevr workspace query failed (info %d)", info);
        goto done;
    }
    lwork = (int)wq + 1;
    liwork = iwq > 1 ? iwq : 1;
    work = dpdo__alloc_array((size_t)lwork, sizeof(double));
    iwork = dpdo__alloc_array((size_t)liwork, sizeof(int));
    if (!work || !iwork) {
        rc = dpdo__err(t->errmsg, DPDO_E_NOMEM, "fit_pca: out of memory for the LAPACK workspace");
        goto done;
    }
    dsyevr_("V", "I", "L", &in, C, &in, &vl, &vu, &il, &iu, &abstol, &m, w, Z, &in, isuppz, work,
            &lwork, iwork, &liwork, &info, 1, 1, 1);
    if (info != 0 || m != (int)k) {
        rc = dpdo__err(t->errmsg, DPDO_E_NUMERIC,
                       "fit_pca: dsyevr failed (info %d, %d of %lld eigenpairs)", info, m,
                       (long long)k);
        goto done;
    }
    /* ascending -> descending; sign: the largest-|.| entry (first on ties) positive */
    for (size_t c = 0; c < K; c++) {
        const double *v = Z + (K - 1 - c) * D;
        size_t jm = 0;
        for (size_t j = 1; j < D; j++)
            if (fabs(v[j]) > fabs(v[jm])) jm = j;
        double sgn = v[jm] < 0.0 ? -1.0 : 1.0;
        for (size_t j = 0; j < D; j++)
            P[j * K + c] = sgn * v[j];
        double lam = w[K - 1 - c];
        evr[c] = lam > 0.0 ? lam / trace : 0.0; /* C is PSD: rounding below 0 is clamped */
    }
    t->P = P;
    t->evr = evr;
    P = evr = NULL;
    t->k = k;
    t->stage = ST_PCA;
    dpdo__err_clear(t->errmsg);
done:
    dpdo__free(C);
    dpdo__free(buf);
    dpdo__free(w);
    dpdo__free(Z);
    dpdo__free(isuppz);
    dpdo__free(P);
    dpdo__free(evr);
    dpdo__free(work);
    dpdo__free(iwork);
    return rc;
}

/* ---- apply ------------------------------------------------------------------ */

/* x <- x / ||x||_2 for one row of length m; zero rows stay zero. Rows whose
 * largest entry is outside [2^-400, 2^400] are first scaled by a power of
 * two (exact unless the result is subnormal) so that the sum of squares
 * neither overflows nor underflows. */
static void normalize_row(double *x, int64_t m)
{
    double amax = 0.0;
    for (int64_t j = 0; j < m; j++) {
        double a = fabs(x[j]);
        if (a > amax) amax = a;
    }
    if (amax == 0.0) return;
    if (amax >= 0x1p-400 && amax <= 0x1p400) {
        double s = 0.0;
        for (int64_t j = 0; j < m; j++)
            s += x[j] * x[j];
        double nr = sqrt(s);
        for (int64_t j = 0; j < m; j++)
            x[j] /= nr;
        return;
    }
    int e = 0;
    (void)frexp(amax, &e); /* amax = f 2^e, f in [0.5, 1) */
    double p1 = ldexp(1.0, -e / 2), p2 = ldexp(1.0, -e - (-e / 2));
    double s = 0.0;
    for (int64_t j = 0; j < m; j++) {
        x[j] = (x[j] * p1) * p2;
        s += x[j] * x[j];
    }
    double nr = sqrt(s);
    for (int64_t j = 0; j < m; j++)
        x[j] /= nr;
}

int dpdo_transform_apply(const dpdo_transform *t, const dpdo_dataset *in, dpdo_dataset *out)
{
    if (!out) return DPDO_E_INVAL;
    if (!t) return dpdo__err(out->errmsg, DPDO_E_INVAL, "transform_apply: transform is NULL");
    if (!in) return dpdo__err(out->errmsg, DPDO_E_INVAL, "transform_apply: input dataset is NULL");
    if ((const struct dpdo_dataset *)out == in)
        return dpdo__err(out->errmsg, DPDO_E_INVAL,
                         "transform_apply: out is the input dataset (use a new dataset)");
    if (in->layout == DPDO__DS_EMPTY)
        return dpdo__err(out->errmsg, DPDO_E_STATE, "transform_apply: input dataset is empty");
    if (t->d > 0 && in->d != t->d)
        return dpdo__err(out->errmsg, DPDO_E_INVAL,
                         "transform_apply: input has %lld features but the transform was fitted "
                         "on %lld",
                         (long long)in->d, (long long)t->d);
    if (out->refs > 0)
        return dpdo__err(out->errmsg, DPDO_E_STATE,
                         "transform_apply: out is borrowed by %d shard(s); destroy them before "
                         "refilling",
                         (int)out->refs);
    int64_t n = in->n, d = in->d, dout = t->k > 0 ? t->k : d;
    size_t D = (size_t)d, DO = (size_t)dout, N = (size_t)n, nd;
    if (!dpdo__mul_size(N, DO, &nd))
        return dpdo__err(out->errmsg, DPDO_E_NOMEM, "transform_apply: %lld x %lld output overflows",
                         (long long)n, (long long)dout);
    int64_t bmax = n < PP_BLOCK ? n : PP_BLOCK;
    int rc = DPDO_OK;
    double *Y = dpdo__alloc_array(nd, sizeof(double));
    double *y = dpdo__alloc_array(N, sizeof(double));
    int32_t *cls = in->cls ? dpdo__alloc_array(N, sizeof(int32_t)) : NULL;
    double *buf = t->k > 0 ? dpdo__alloc_array((size_t)bmax * D, sizeof(double)) : NULL;
    if (!Y || !y || (in->cls && !cls) || (t->k > 0 && !buf)) {
        rc = dpdo__err(out->errmsg, DPDO_E_NOMEM,
                       "transform_apply: out of memory for a %lld x %lld output", (long long)n,
                       (long long)dout);
        goto fail;
    }
    memcpy(y, in->y, N * sizeof(double));
    if (cls) memcpy(cls, in->cls, N * sizeof(int32_t));
    double one = 1.0, zero = 0.0;
    for (int64_t i0 = 0; i0 < n; i0 += PP_BLOCK) {
        int64_t nb = n - i0 < PP_BLOCK ? n - i0 : PP_BLOCK;
        double *Yb = Y + (size_t)i0 * DO;
        if (t->k > 0) {
            prep_block(t, in, i0, nb, buf);
            bli_dgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, (dim_t)nb, (dim_t)dout, (dim_t)d, &one,
                      buf, (inc_t)d, 1, t->P, (inc_t)dout, 1, &zero, Yb, (inc_t)dout, 1);
        } else {
            prep_block(t, in, i0, nb, Yb);
        }
        size_t cnt = (size_t)nb * DO;
        if (dpdo__first_nonfinite(Yb, cnt) < cnt) {
            rc = nonfinite_error(out->errmsg, "transform_apply", "a transformed value", in);
            goto fail;
        }
        if (t->normalize)
            for (int64_t r = 0; r < nb; r++)
                normalize_row(Yb + (size_t)r * DO, dout);
    }
    dpdo__free(buf);
    struct dpdo__ds_content c = {
        .layout = DPDO__DS_DENSE, .n = n, .d = dout, .X = Y, .y = y, .cls = cls};
    c.own[0] = Y;
    c.own[1] = y;
    c.own[2] = cls;
    return dpdo__ds_install(out, &c); /* takes ownership of Y, y, cls even on failure */
fail:
    dpdo__free(Y);
    dpdo__free(y);
    dpdo__free(cls);
    dpdo__free(buf);
    return rc;
}
