/* SPDX-License-Identifier: BSD-3-Clause */
/* Feature preprocessing: a fitted transform made of up to four steps,
 *
 *     scale -> centre or standardise -> PCA projection -> row normalisation
 *
 * always applied in that order. Each step is fitted once, in that order, on
 * one dataset (the training split), and the fitted transform is then applied
 * to any dataset with the same feature count (training and test splits). The
 * pipelines of the DP-WOR-SGD experiments (docs/design/notes/dp-wor-sgd.md §6.1):
 *
 *     MNIST / Fashion-MNIST: fit_scale(1/255), fit_center, fit_pca(50),
 *                            set_normalize_rows(1)
 *     Covertype:             fit_standardize, set_normalize_rows(1)
 *
 * (dpdo_dataset_load_idx already divides pixels by 255 with its default
 * options, in which case fit_scale is not needed.)
 *
 * PRIVACY: the centring mean, the z-score statistics and the PCA basis are
 * statistics of the data they are fitted on. When that data is the nodes'
 * private training data, the transform itself leaks information that no
 * differential-privacy guarantee of this library covers (replacing one
 * sample changes the transform applied to every sample). For a strict
 * guarantee fit the transform on public data disjoint from every node's
 * data. Row normalisation alone (a per-sample map) is harmless. See
 * docs/preprocess.md.
 *
 * Thread-safety: fitting calls modify the transform and must not run
 * concurrently with anything else on it. A fitted transform is read-only for
 * dpdo_transform_apply(), dpdo_transform_output_dim() and
 * dpdo_transform_explained_variance(), which may run concurrently (apply
 * writes its error message into the output dataset, not the transform). */
#ifndef DPDO_PREPROCESS_H
#define DPDO_PREPROCESS_H

#include "dataset.h"
#include "export.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== CORE ZONE: feature scaling and transforms ==== */

/* A fitted transform: per-feature offset/scale and an optional linear
 * projection, then optional row normalisation. Fitted on one dataset (the
 * training split), applied to others. Opaque. */
typedef struct dpdo_transform dpdo_transform;

/* Create an identity transform (no step fitted, no row normalisation) in
 * *out; *out is NULL on failure. Returns DPDO_OK, DPDO_E_INVAL (out NULL),
 * DPDO_E_NOMEM. Since 0.1. */
DPDO_API int dpdo_transform_create(dpdo_transform **out);

/* Destroy; NULL is a no-op. Datasets produced by apply are independent of
 * the transform and stay valid. Since 0.1. */
DPDO_API void dpdo_transform_destroy(dpdo_transform *t);

/* Message about the last failed fitting call on t ("" if none; a static
 * "dpdo_transform_errmsg: t is NULL" for NULL). Never NULL; valid until the next call on t.
 * Failures of dpdo_transform_apply() are explained in the OUTPUT dataset's
 * dpdo_dataset_errmsg(), because apply does not modify t. Since 0.1. */
DPDO_API const char *dpdo_transform_errmsg(const dpdo_transform *t);

/* Step 1, scale: x <- factor * x for every feature (e.g. factor = 1/255 for
 * pixel bytes). factor must be finite and non-zero. Must be the first fit
 * call (DPDO_E_STATE after any other fit, or when called twice). Needs no
 * data and does not fix the feature count. Returns DPDO_OK, DPDO_E_INVAL
 * (t NULL, factor 0/NaN/Inf), DPDO_E_STATE. Since 0.1. */
DPDO_API int dpdo_transform_fit_scale(dpdo_transform *t, double factor);

/* Step 2a, centre: fits the per-feature mean m_j = (1/n) sum_i s*x_ij of
 * the (scaled) training data and later applies x_j <- s*x_j - m_j. A
 * constant feature gets its exact value as mean (its output is exactly 0).
 * Reads `train` (dense or CSR; borrowed for the call only) and fixes the
 * feature count d of the transform. Errors: DPDO_E_INVAL (NULL arguments; a
 * non-finite value in train, named "row i, column j: value is NaN"),
 * DPDO_E_STATE (train empty; centre,
 * standardise or PCA already fitted), DPDO_E_NUMERIC (the sums overflow),
 * DPDO_E_NOMEM. On failure t is unchanged. Since 0.1. */
DPDO_API int dpdo_transform_fit_center(dpdo_transform *t, const dpdo_dataset *train);

/* Step 2b, standardise (z-score): fits the mean m_j as fit_center and the
 * population standard deviation s_j = sqrt((1/n) sum_i (s*x_ij - m_j)^2)
 * (divisor n, two-pass), and later applies x_j <- (s*x_j - m_j) / s_j. A
 * feature that is constant in the training data (s_j = 0), or whose s_j is
 * so small that 1/s_j overflows, keeps the divisor 1: its output is
 * s*x_j - m_j, i.e. exactly 0 on the training data. Use instead of (not
 * after) fit_center. Errors as fit_center. Since 0.1. */
DPDO_API int dpdo_transform_fit_standardize(dpdo_transform *t, const dpdo_dataset *train);

/* Step 3, PCA: the top-k principal axes of the training data after steps 1
 * and 2, i.e. the eigenvectors v_1..v_k of the covariance
 * C = (1/n) sum_i z_i z_i^T (z_i = row i after scale and centre/standardise)
 * for its k largest eigenvalues, in decreasing order; later applies
 * x <- (v_1.z, ..., v_k.z), so the output has k features. Centring must
 * have been fitted first (fit_center or fit_standardize; DPDO_E_STATE
 * otherwise) so that the axes are those of the covariance. Sign convention
 * (deterministic): in each v_c the entry of largest absolute value (the
 * first such index on exact ties) is positive. C is accumulated from blocks
 * of rows (BLIS dsyrk), never from a full centred copy; the eigenvectors
 * come from LAPACK dsyevr. 1 <= k <= d, and d <= 16384 (C is d x d).
 * Errors: DPDO_E_INVAL (NULL; k out of range; d too large or different
 * from the earlier fit; non-finite value in train; zero total variance),
 * DPDO_E_STATE (train empty; no centring fitted; PCA already fitted),
 * DPDO_E_NUMERIC (overflow, LAPACK failure), DPDO_E_NOMEM. On failure t is
 * unchanged. Since 0.1. */
DPDO_API int dpdo_transform_fit_pca(dpdo_transform *t, const dpdo_dataset *train, int64_t k);

/* Step 4, row normalisation: on = 1 makes every output row x <- x/||x||_2
 * (computed with power-of-two pre-scaling, so neither overflow nor
 * underflow), on = 0 turns it off (default). A row that is exactly zero
 * after the earlier steps stays zero (it has no direction). May be called
 * at any time. Returns DPDO_OK, DPDO_E_INVAL (t NULL, on not 0/1).
 * Since 0.1. */
DPDO_API int dpdo_transform_set_normalize_rows(dpdo_transform *t, int32_t on);

/* Number of output features: k after fit_pca, else the feature count fixed
 * by fit_center/fit_standardize, else 0 (the transform then keeps the input
 * dimension, whatever it is). 0 for NULL. Since 0.1. */
DPDO_API int64_t dpdo_transform_output_dim(const dpdo_transform *t);

/* Explained-variance ratios of the first k principal components,
 * ratio[c] = lambda_c / trace(C) (lambda_c the c-th largest eigenvalue of
 * C, trace(C) the total variance of all d features), written to ratio[k];
 * 1 <= k <= the fitted k. Returns DPDO_OK, DPDO_E_INVAL (NULL, k out of
 * range), DPDO_E_STATE (no PCA fitted). No message (t is read-only).
 * Since 0.1. */
DPDO_API int dpdo_transform_explained_variance(const dpdo_transform *t, double *ratio, int64_t k);

/* Apply the fitted steps to every row of `in` (dense or CSR; borrowed for
 * the call) and fill `out` with the result as a dense n x output_dim
 * dataset: a fill call in the sense of dataset.h, normally on a fresh empty
 * dataset from dpdo_dataset_create (an already filled `out` is refilled, as
 * by a loader). Labels and class ids are copied. in must have the fitted
 * feature count. Works in blocks of rows (no n x d temporary).
 * Errors (message in dpdo_dataset_errmsg(out) when out is not NULL):
 * DPDO_E_INVAL (NULL; out == in; feature count differs; non-finite value in
 * in), DPDO_E_STATE (in empty; out borrowed by shards), DPDO_E_NUMERIC (a
 * transformed value overflows), DPDO_E_NOMEM. On failure out is unchanged.
 * Thread-safe with respect to t. Since 0.1. */
DPDO_API int dpdo_transform_apply(const dpdo_transform *t, const dpdo_dataset *in,
                                  dpdo_dataset *out);

#ifdef __cplusplus
}
#endif
#endif /* DPDO_PREPROCESS_H */
