/* SPDX-License-Identifier: BSD-3-Clause */
/* Datasets: dense row-major or CSR sparse feature matrices with labels, their
 * loaders (LIBSVM/SVMlight, IDX, CSV, optionally gzip-compressed), synthetic
 * generators shaped like the papers' data, and shards (row views) that give
 * each node its private part without copying.
 *
 * Life cycle ("allocate small, then fill"): dpdo_dataset_create() makes an
 * empty handle; one filling call (set_dense, set_csr, load_*, generate)
 * gives it content. A filled dataset may be filled again (the old content is
 * released) as long as no shard borrows it. A failed fill leaves the handle
 * as it was (nothing is half-loaded) and explains itself in
 * dpdo_dataset_errmsg(). Once a shard borrows the dataset, refilling (and
 * relabelling) it returns DPDO_E_STATE.
 *
 * Thread-safety: a dataset is read-only once filled; any number of threads
 * may read it (accessors, margins, gemv, shards' kernels) concurrently. Calls
 * that fill, relabel or create/destroy shards of one dataset must not run
 * concurrently with anything else on that dataset (they touch its errmsg and
 * its shard count). See docs/data.md for formats and exact error messages. */
#ifndef DPDO_DATASET_H
#define DPDO_DATASET_H

#include "export.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dpdo_dataset dpdo_dataset;
typedef struct dpdo_shard dpdo_shard;

/* ownership modes for caller arrays */
enum { DPDO_COPY = 0, DPDO_BORROW = 1 };

/* layouts reported by dpdo_dataset_layout(); also the `layout` option of the
 * loaders, where DPDO_LAYOUT_EMPTY means "auto" (dense if density >= the
 * dense_threshold option, else CSR) */
enum { DPDO_LAYOUT_EMPTY = 0, DPDO_LAYOUT_DENSE = 1, DPDO_LAYOUT_CSR = 2 };
enum { DPDO_LAYOUT_AUTO = 0 };

/* label mapping of the text loaders (option `label_map`) */
enum {
    DPDO_LABEL_RAW = 0,     /* keep the values as read (default) */
    DPDO_LABEL_BINARY = 1,  /* {-1,+1} kept; {0,1} mapped 0 -> -1; anything else is an error */
    DPDO_LABEL_POSITIVE = 2 /* +1 if label == positive_label, else -1 */
};

/* modes of dpdo_dataset_binarize() */
enum { DPDO_BINARY_ONE_VS_REST = 0, DPDO_BINARY_EVEN_ODD = 1 };

/* pixel scaling of dpdo_dataset_load_idx() (option `scale`) */
enum { DPDO_IDX_UNIT = 0, DPDO_IDX_ROW_NORMALIZE = 1, DPDO_IDX_RAW = 2 };

/* ==== CORE ZONE: data sets: create, fill, query, load, save ==== */

/* ---- life cycle ------------------------------------------------------- */

/* Create an empty dataset in *out (NULL on failure). Returns DPDO_OK,
 * DPDO_E_INVAL (out NULL), DPDO_E_NOMEM. Since 0.1. */
DPDO_API int dpdo_dataset_create(dpdo_dataset **out);

/* Destroy; NULL is a no-op. If shards still borrow the dataset the free is
 * deferred: the dataset stays readable by those shards and is freed when the
 * last of them is destroyed (the caller must not use `ds` itself any more).
 * Borrowed caller arrays are never freed. Since 0.1. */
DPDO_API void dpdo_dataset_destroy(dpdo_dataset *ds);

/* Message about the last failure on this handle ("" if none, a static
 * "dpdo_dataset_errmsg: ds is NULL" for NULL). Never NULL; valid until the next call on ds.
 * Since 0.1. */
DPDO_API const char *dpdo_dataset_errmsg(const dpdo_dataset *ds);

/* ---- filling from caller arrays ---------------------------------------- */

/* Fill with a dense row-major n x d matrix X (X[i*d + j]) and labels y[n].
 * mode DPDO_COPY copies X and y; DPDO_BORROW keeps the caller's pointers,
 * which must stay valid and unchanged until the dataset is destroyed or
 * refilled (the library never writes to them). Validated: n >= 1, d >= 1,
 * n*d fits in memory, X and y not NULL, all values finite (the errmsg names
 * "row i, column j: value is NaN" / "label of row i is Inf"). Row norms are
 * computed once, without overflow (scaled when needed); a row whose norm
 * exceeds DBL_MAX is DPDO_E_INVAL ("row i: the Euclidean norm overflows";
 * Since 0.2.). Returns DPDO_OK, DPDO_E_INVAL, DPDO_E_NOMEM, DPDO_E_STATE
 * (shards borrow ds). Since 0.1. */
DPDO_API int dpdo_dataset_set_dense(dpdo_dataset *ds, int64_t n, int64_t d, const double *X,
                                    const double *y, int mode);

/* Fill with an n x d CSR matrix: row i holds entries rowptr[i] ..
 * rowptr[i+1]-1 (rowptr[0] == 0, non-decreasing, rowptr[n] = nnz), 0-based
 * column indices colidx[k] in [0, d), strictly increasing within a row,
 * finite values val[k]; labels y[n]. colidx/val may be NULL when nnz == 0.
 * Ownership as for set_dense (all four arrays copied or all borrowed).
 * d must be <= INT32_MAX. Returns as set_dense. Since 0.1. */
DPDO_API int dpdo_dataset_set_csr(dpdo_dataset *ds, int64_t n, int64_t d, const int64_t *rowptr,
                                  const int32_t *colidx, const double *val, const double *y,
                                  int mode);

/* Attach integer class ids cls[n] (copied), e.g. for
 * dpdo_dataset_binarize(). Returns DPDO_OK, DPDO_E_INVAL (NULL, n differs
 * from the row count), DPDO_E_STATE (empty or borrowed by shards),
 * DPDO_E_NOMEM. Since 0.1. */
DPDO_API int dpdo_dataset_set_classes(dpdo_dataset *ds, const int32_t *cls, int64_t n);

/* Turn class ids into a binary task, replacing the labels: mode
 * DPDO_BINARY_ONE_VS_REST gives +1 to rows of class `positive_class` and -1
 * to the others; DPDO_BINARY_EVEN_ODD gives +1 to even class ids and -1 to
 * odd ones (positive_class ignored). Class ids are kept. Returns DPDO_OK,
 * DPDO_E_INVAL (NULL, bad mode), DPDO_E_STATE (no class ids, or borrowed by
 * shards), DPDO_E_NOMEM. Since 0.1. */
DPDO_API int dpdo_dataset_binarize(dpdo_dataset *ds, int mode, int32_t positive_class);

/* ---- accessors (read-only; NULL or empty dataset gives 0) ------------- */
DPDO_API int64_t dpdo_dataset_rows(const dpdo_dataset *ds);     /* Since 0.1. */
DPDO_API int64_t dpdo_dataset_features(const dpdo_dataset *ds); /* Since 0.1. */
DPDO_API int dpdo_dataset_layout(const dpdo_dataset *ds);       /* DPDO_LAYOUT_*; Since 0.1. */
/* Stored entries: n*d for dense, rowptr[n] for CSR. Since 0.1. */
DPDO_API int64_t dpdo_dataset_nnz(const dpdo_dataset *ds);
/* max_i ||x_i||_2 (0 for NULL/empty). Since 0.1. */
DPDO_API double dpdo_dataset_max_row_norm(const dpdo_dataset *ds);
/* 1 if class ids are attached (IDX, integral LIBSVM/CSV labels,
 * set_classes, generators with classes), else 0. Since 0.1. */
DPDO_API int dpdo_dataset_has_classes(const dpdo_dataset *ds);

/* Copy row i into out[d] as a dense vector (zeros where CSR has no entry);
 * d must equal the feature count. Returns DPDO_OK, DPDO_E_INVAL (NULL, i out
 * of range, d mismatch), DPDO_E_STATE (empty). Since 0.1. */
DPDO_API int dpdo_dataset_get_row(dpdo_dataset *ds, int64_t i, double *out, int64_t d);
/* ||x_i||_2 into *out. Errors as get_row. Since 0.1. */
DPDO_API int dpdo_dataset_get_row_norm(dpdo_dataset *ds, int64_t i, double *out);
/* Copy the labels into out[n] (n = row count). Errors as get_row. Since 0.1. */
DPDO_API int dpdo_dataset_get_labels(dpdo_dataset *ds, double *out, int64_t n);
/* Copy the class ids into out[n]; DPDO_E_STATE if there are none. Since 0.1. */
DPDO_API int dpdo_dataset_get_classes(dpdo_dataset *ds, int32_t *out, int64_t n);

/* ---- loaders ------------------------------------------------------------
 * Every loader reads the whole file (gzip-compressed files are recognised by
 * their magic bytes 1f 8b, not by the name, and inflated transparently),
 * validates everything, and only then replaces the dataset's content; on
 * failure the dataset is unchanged. Errors: DPDO_E_INVAL (NULL arguments,
 * bad options), DPDO_E_IO (cannot open/read: "cannot open 'f': No such
 * file"), DPDO_E_FORMAT (malformed input; the message names the file, line
 * and column, e.g. "a.svm:17:3: feature index 0 is not allowed (indices
 * start at 1)"; also an input beyond one of the limit options, the message
 * naming the option; Since 0.2.), DPDO_E_NOMEM, DPDO_E_STATE (shards borrow
 * ds), DPDO_E_VERSION (options struct). Options may be NULL (defaults).
 * Thread-safety: per dataset. Since 0.1. */

typedef struct dpdo_load_options {
    size_t struct_size; /* sizeof as compiled by the caller; set by _init */
    int64_t
        n_features; /* 0 (default): from the data; > 0: forced, an index beyond it is an error */
    int32_t layout; /* DPDO_LAYOUT_AUTO (default), _DENSE or _CSR (CSV, IDX: dense/auto only) */
    double dense_threshold; /* auto layout: dense if nnz >= threshold * n * d (default 0.25) */
    int32_t label_map;      /* DPDO_LABEL_* (default RAW) */
    double positive_label;  /* for DPDO_LABEL_POSITIVE (default 1) */
    int32_t reject_qid;     /* LIBSVM: 0 (default) ignores "qid:N" tokens, 1 rejects them */
    int32_t label_column;   /* CSV: 0-based label column, -1 = last (default 0) */
    int32_t header;         /* CSV: 1 = skip the first line (default 0) */
    int32_t delimiter;      /* CSV: field separator character (default ',') */
    int32_t scale;          /* IDX: DPDO_IDX_UNIT (default: pixel/255), _ROW_NORMALIZE, _RAW */
    /* Limits on untrusted input (Since 0.2.). A file beyond a limit is refused
     * with DPDO_E_FORMAT and a message naming the limit and this option; the
     * check happens while reading, so refusing costs about the limit in time
     * and memory, never the size of the hostile input. 0 means "no limit"
     * for the integer limits. Defaults in docs/data.md ("Limits"). */
    int64_t
        max_file_bytes; /* bytes read from the file, compressed or not (default 2^34 = 16 GiB) */
    int64_t max_decompressed_bytes; /* bytes after gzip inflation (default 2^34 = 16 GiB) */
    double max_compression_ratio; /* gzip: at most max(16 MiB, this x the compressed size) bytes of
                                   * inflated output (default 100; 0 = no ratio limit) */
    int64_t max_dense_cells;      /* n*d of a dense result (default 2^30 = 8 GiB of doubles); AUTO
                                   * layout falls back to CSR above it, a forced dense layout fails */
    int64_t max_features;         /* d, from the data or n_features (default 2^26 = 67,108,864) */
    int64_t max_rows;             /* n (default 2^31) */
    int64_t reserved[4]; /* must be 0 (set by _init): room for later fields, docs/abi.md  0.2 */
} dpdo_load_options;

/* Fill o with defaults; struct_size must be sizeof *o as the caller compiled
 * it. Returns DPDO_OK, DPDO_E_INVAL (o NULL),
 * DPDO_E_VERSION (struct_size < sizeof(size_t)); any older (smaller) or newer
 * (larger) struct_size is accepted (docs/abi.md, "Options structs"). Since 0.1. */
DPDO_API int dpdo_load_options_init(dpdo_load_options *o, size_t struct_size);

/* LIBSVM / SVMlight: one sample per line "label idx:value idx:value ...
 * [# comment]", indices 1-based and strictly increasing; blank lines and
 * lines starting with '#' are skipped. Labels become y (after label_map);
 * if every label is an integer in int32 range, class ids are attached too
 * (before mapping). Since 0.1. */
DPDO_API int dpdo_dataset_load_libsvm(dpdo_dataset *ds, const char *path,
                                      const dpdo_load_options *opts);

/* CSV: numeric fields separated by `delimiter`, one sample per line, all
 * lines with the same number of fields; the label column is removed from
 * the features. Dense output. Since 0.1. */
DPDO_API int dpdo_dataset_load_csv(dpdo_dataset *ds, const char *path,
                                   const dpdo_load_options *opts);

/* IDX (MNIST, Fashion-MNIST): images file (magic 0x00000803, n x rows x
 * cols unsigned bytes) and labels file (magic 0x00000801, n bytes), both
 * big-endian, optionally gzip-compressed. Features are pixels scaled by
 * `scale`; labels are the class ids (as y and as class ids; see
 * dpdo_dataset_binarize). Dense output. Since 0.1. */
DPDO_API int dpdo_dataset_load_idx(dpdo_dataset *ds, const char *images_path,
                                   const char *labels_path, const dpdo_load_options *opts);

/* Write the dataset in LIBSVM format (1-based indices, values and labels
 * with %.17g so that loading gives identical doubles; dense zeros are
 * omitted). Returns DPDO_OK, DPDO_E_INVAL, DPDO_E_STATE (empty), DPDO_E_IO.
 * Since 0.1. */
DPDO_API int dpdo_dataset_save_libsvm(dpdo_dataset *ds, const char *path);

/* ==== ADVANCED ZONE: synthetic generators and kernels ==== */

/* ---- synthetic generators ------------------------------------------------
 * dpdo_dataset_generate(ds, kind, opts) fills ds with a seeded synthetic set;
 * same options give identical bytes on every run. Kinds (exact
 * distributions in docs/data.md):
 *   "epsilon-like"  dense, two Gaussian classes along a random direction,
 *                   label noise, rows normalised to unit length;
 *   "rcv1-like"     CSR, given density, Zipf feature frequencies, tf-idf-like
 *                   positive values, rows normalised;
 *   "fedplt-logistic" dense, Fed-PLT Sec. 6.2: a ~ N(m_agent, s^2 I),
 *                   b = +1 w.p. sigmoid(a.x_true) (or independent labels);
 *   "covtype-like"  dense 54 features: 10 continuous in [0,1], 4 + 40 one-hot.
 * Unknown kind -> DPDO_E_INVAL listing the valid names. Other errors:
 * DPDO_E_INVAL (bad option, named), DPDO_E_NOMEM, DPDO_E_STATE,
 * DPDO_E_VERSION. Since 0.1. */
typedef struct dpdo_generate_options {
    size_t struct_size;
    uint64_t seed;        /* default 1 */
    int64_t n;            /* rows (default 1000) */
    int64_t d;            /* features (default 100; ignored by covtype-like, always 54) */
    double density;       /* rcv1-like: expected fraction of non-zeros per row (default 0.0016) */
    double label_noise;   /* epsilon/rcv1-like: probability of flipping a label (default 0.05) */
    double separation;    /* epsilon-like: class mean distance along the direction (default 1.5) */
    double zipf_exponent; /* rcv1-like: feature frequency ~ 1/rank^s (default 1.0) */
    double scale;         /* fedplt-logistic: s, the feature std (default 1) */
    int32_t independent_labels; /* fedplt-logistic: 1 = b ~ Unif{-1,+1} (default 0) */
    int32_t n_agents;           /* fedplt-logistic: agents for the feature shift (default 1) */
    double shift_scale;     /* fedplt-logistic: c_h, m_i ~ N(0, c_h^2 I) (default 0 = no shift) */
    int32_t normalize_rows; /* -1 (default): the kind's default; 0 no; 1 unit-length rows */
    int64_t reserved[4];    /* must be 0 (set by _init): room for later fields, docs/abi.md  0.2 */
} dpdo_generate_options;

/* Defaults as above. Returns as dpdo_load_options_init. Since 0.1. */
DPDO_API int dpdo_generate_options_init(dpdo_generate_options *o, size_t struct_size);
DPDO_API int dpdo_dataset_generate(dpdo_dataset *ds, const char *kind,
                                   const dpdo_generate_options *opts);
/* Names of the generator kinds: index 0.. ; NULL past the end. Since 0.1. */
DPDO_API const char *dpdo_dataset_generator_name(int index);

/* ---- kernels ------------------------------------------------------------ */

/* margins[i] = <x_i, w> for every row i; w has d = feature-count entries,
 * margins n = row-count entries. Returns DPDO_OK, DPDO_E_INVAL (NULL, size
 * mismatch, non-finite w), DPDO_E_STATE (empty). Thread-safe (errmsg
 * aside). Since 0.1. */
DPDO_API int dpdo_dataset_margins(dpdo_dataset *ds, const double *w, int64_t d, double *margins,
                                  int64_t n);

/* y = alpha * op(X) x + beta * y with op(X) = X (trans 0: x has d entries,
 * y has n) or X^T (trans 1: x has n entries, y has d). beta == 0 overwrites
 * y (NaN in y ignored). Returns DPDO_OK, DPDO_E_INVAL (NULL, sizes, trans
 * not 0/1, non-finite alpha/beta/x), DPDO_E_STATE (empty). Since 0.1. */
DPDO_API int dpdo_dataset_gemv(dpdo_dataset *ds, int trans, double alpha, const double *x,
                               int64_t nx, double beta, double *y, int64_t ny);

/* ==== CORE ZONE: shards: the rows of each node ==== */

/* ---- shards (row views) -------------------------------------------------
 * A shard is a list of row indices into a parent dataset; rows are never
 * copied. A shard borrows its dataset (which counts its shards): while any
 * shard exists the dataset cannot be refilled, and destroying the dataset
 * is deferred until the last shard is destroyed. */

/* Shard of the m rows rows[0..m-1] (copied; each in [0, n); repeats are
 * allowed; m >= 1). Returns DPDO_OK, DPDO_E_INVAL (NULL, m < 1, index out of
 * range -- message on ds), DPDO_E_STATE (empty ds), DPDO_E_NOMEM. *out NULL
 * on failure. Since 0.1. */
DPDO_API int dpdo_shard_create(dpdo_shard **out, dpdo_dataset *ds, const int64_t *rows, int64_t m);
/* Shard of the contiguous rows [first, first+m). Errors as above. Since 0.1. */
DPDO_API int dpdo_shard_create_range(dpdo_shard **out, dpdo_dataset *ds, int64_t first, int64_t m);
/* Destroy; NULL is a no-op. Frees the parent if it was destroyed and this
 * was its last shard. If nodes still borrow the shard, the free is deferred
 * until the last of them is destroyed (docs/abi.md, "Destroying a borrowed
 * handle"). Since 0.1. Deferred: Since 0.2. */
DPDO_API void dpdo_shard_destroy(dpdo_shard *s);
DPDO_API const char *dpdo_shard_errmsg(const dpdo_shard *s); /* never NULL. Since 0.1. */
DPDO_API int64_t dpdo_shard_rows(const dpdo_shard *s);       /* 0 for NULL. Since 0.1. */
/* Parent row index of shard row k, or -1 if s is NULL or k out of range. Since 0.1. */
DPDO_API int64_t dpdo_shard_row_index(const dpdo_shard *s, int64_t k);
/* Copy the parent row indices into out[m] (m = shard rows). Since 0.1. */
DPDO_API int dpdo_shard_get_rows(dpdo_shard *s, int64_t *out, int64_t m);
/* margins[k] = <x_{r_k}, w> over the shard's rows; w has the parent's
 * feature count d, margins m entries. Since 0.1. */
DPDO_API int dpdo_shard_margins(dpdo_shard *s, const double *w, int64_t d, double *margins,
                                int64_t m);

/* Split the rows into nshards random disjoint shards written to
 * shards_out[0..nshards-1]. sizes NULL: an even split (sizes differ by at
 * most one; every row used). sizes given: shard k gets sizes[k] >= 1 rows
 * and sum(sizes) <= n; the n - sum(sizes) leftover rows are DROPPED (not in
 * any shard), as in the DP-DDA rcv1 setup. The assignment is a random
 * permutation drawn from the stream (seed, node 0, round 0,
 * DPDO_PURPOSE_PARTITION); shard k takes the next sizes[k] entries, stored
 * in ascending order. All or nothing: on failure every shards_out[k] is
 * NULL. Returns DPDO_OK, DPDO_E_INVAL, DPDO_E_STATE (empty), DPDO_E_NOMEM.
 * Since 0.1. nshards is int64_t: Since 0.2. */
DPDO_API int dpdo_dataset_partition(dpdo_dataset *ds, int64_t nshards, const int64_t *sizes,
                                    uint64_t seed, dpdo_shard **shards_out);

#ifdef __cplusplus
}
#endif
#endif /* DPDO_DATASET_H */
