/* SPDX-License-Identifier: BSD-3-Clause */
/* Model files: the trained linear model of a run (the output vector x, its
 * dimension, the loss, the regularizer, the algorithm, the rounds run, the
 * privacy spent (epsilon, delta and the accountant that computed them) and
 * the library version) in a small line-oriented text format (docs/model.md,
 * "Model files"), and prediction from it: margins <a, x>, labels and, for
 * the logistic loss, probabilities.
 *
 *     dpdo_model *m;
 *     dpdo_model_create(&m);
 *     dpdo_model_from_algorithm(m, alg);          (after dpdo_algorithm_run)
 *     dpdo_model_save(m, "run.model");
 *     ...
 *     dpdo_model_load(m, "run.model");            (another process)
 *     dpdo_model_predict(m, test_set, DPDO_PREDICT_LABEL, labels, n);
 *
 * Life cycle as dpdo_dataset: create an empty handle, fill it (from an
 * algorithm, a file or a text buffer); a failed fill leaves it unchanged and
 * explains itself in dpdo_model_errmsg(). A model file is untrusted input:
 * every field is checked, the dimension is limited (DPDO_MODEL_MAX_DIM) and
 * nothing is allocated before the file is known to hold that many values.
 *
 * Thread-safety: one model is used by one thread at a time; from 0.3 on a
 * call that returns a status on a model busy with another call returns
 * DPDO_E_MISUSE (docs/abi.md "Misuse detection"). */
#ifndef DPDO_MODEL_FILE_H
#define DPDO_MODEL_FILE_H

#include "algorithm.h"
#include "dataset.h"
#include "export.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== CORE ZONE: models: from a run, save, load, predict ==== */

typedef struct dpdo_model dpdo_model;

/* Largest dimension a model file may declare (2^26, as the loaders' default
 * max_features). */
#define DPDO_MODEL_MAX_DIM ((int64_t)1 << 26)

/* What dpdo_model_predict writes. */
enum {
    DPDO_PREDICT_MARGIN = 0,     /* <a_i, x> */
    DPDO_PREDICT_LABEL = 1,      /* +1 if the margin is >= 0, else -1 */
    DPDO_PREDICT_PROBABILITY = 2 /* P(y = +1 | a_i) = 1 / (1 + exp(-margin)); logistic loss only */
};

/* Create an empty model in *out (NULL on failure). Returns DPDO_OK,
 * DPDO_E_INVAL (out NULL), DPDO_E_NOMEM. Since 0.2. */
DPDO_API int dpdo_model_create(dpdo_model **out);
/* Destroy; NULL and an already destroyed handle are ignored (see the handle
 * magic in docs/architecture.md). Since 0.2. */
DPDO_API void dpdo_model_destroy(dpdo_model *m);
/* Message about the last failure on m; "" if none, "dpdo_model_errmsg: m is NULL"
 * for NULL.
 * Never NULL; valid until the next call on m. Since 0.2. */
DPDO_API const char *dpdo_model_errmsg(const dpdo_model *m);

/* Fill m from a set-up algorithm: x = dpdo_algorithm_get_output(alg,
 * DPDO_NODE_ALL) (the average of the nodes' outputs), the loss of node 0,
 * the regularizer (name and its two parameters; "none" without one), the
 * algorithm's name and round, and the rigorous privacy figure
 * (dpdo_algorithm_privacy(DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL): epsilon,
 * delta and the accountant's name; epsilon = +inf, delta = 0 and accountant
 * "none" when the run has no accountant or no figure yet). alg is only read
 * (its privacy query may allocate). Over MPI (dpdo/mpi.h), call
 * dpdo_algorithm_share_state first so that every rank sees every node's
 * output. Returns DPDO_OK, DPDO_E_INVAL (NULL),
 * DPDO_E_STATE (alg EMPTY), DPDO_E_NOMEM. Since 0.2. */
DPDO_API int dpdo_model_from_algorithm(dpdo_model *m, dpdo_algorithm *alg);

/* Fill m from caller values (for models trained elsewhere): x[dim] copied,
 * all finite, 1 <= dim <= DPDO_MODEL_MAX_DIM; loss and algorithm names are
 * tokens of 1..63 characters [A-Za-z0-9._+-] (loss "logistic" enables
 * probabilities). The regularizer becomes "none", the rounds 0, the privacy
 * "not private" (epsilon +inf). Returns DPDO_OK, DPDO_E_INVAL, DPDO_E_NOMEM.
 * Since 0.2. */
DPDO_API int dpdo_model_set(dpdo_model *m, const double *x, int64_t dim, const char *loss,
                            const char *algorithm);

/* Write m to `path` in the text format of docs/model.md; doubles with
 * %.17g, so loading gives identical bits. From 0.3 on the write is durable
 * and atomic: a fresh temporary file beside `path`, fsync, rename over
 * `path`, fsync of the directory -- after a crash, a kill or a full disk
 * `path` holds the previous model or the new one, never a mixture -- and the
 * file ends with an integrity line: a BLAKE2b-256 checksum of every byte
 * before it, or, when a key is set (dpdo_model_set_key), a keyed BLAKE2b-256
 * MAC. Returns DPDO_OK, DPDO_E_INVAL (NULL), DPDO_E_STATE (m empty),
 * DPDO_E_IO (the message names the step that failed; `path` unchanged),
 * DPDO_E_NOMEM. Since 0.2. */
DPDO_API int dpdo_model_save(dpdo_model *m, const char *path);
/* Load a model file (gzip-compressed files are inflated, as by the dataset
 * loaders, within their default limits). On failure m is unchanged. From
 * 0.3 on the integrity line is checked first (DPDO_E_FORMAT with "checksum
 * mismatch" / "MAC mismatch" for an edited or damaged file); with a key set,
 * only a file with a valid MAC under that key loads; without a key, a MAC
 * file is refused (it cannot be checked) and a file without an integrity line
 * (written by 0.2) loads unverified: dpdo_model_integrity tells which.
 * Returns DPDO_OK, DPDO_E_INVAL (NULL), DPDO_E_IO (cannot open/read),
 * DPDO_E_FORMAT (the message names the line and the problem: bad header,
 * unknown or repeated key, missing key, bad number, dimension out of range,
 * wrong count of values, non-finite value, newer format version),
 * DPDO_E_NOMEM. Since 0.2. */
DPDO_API int dpdo_model_load(dpdo_model *m, const char *path);
/* Same as load, from text[len] (need not be NUL-terminated); `name` (may be
 * NULL) appears in messages. Since 0.2. */
DPDO_API int dpdo_model_parse(dpdo_model *m, const char *text, size_t len, const char *name);

/* ==== ADVANCED ZONE: model keys and integrity ==== */

/* How the content of m was verified (dpdo_model_integrity). Since 0.3. */
enum {
    DPDO_MODEL_INTEGRITY_NONE = 0,     /* read from a file without an integrity line (0.2) */
    DPDO_MODEL_INTEGRITY_CHECKSUM = 1, /* its BLAKE2b-256 checksum matched: not damaged or
                                          naively edited (anyone can recompute a checksum) */
    DPDO_MODEL_INTEGRITY_MAC = 2,      /* its keyed MAC matched: written by a key holder */
    DPDO_MODEL_INTEGRITY_LOCAL = 3     /* built in this process (from_algorithm, set) */
};

/* Set the key of the keyed MAC (BLAKE2b-256, libsodium crypto_generichash)
 * that dpdo_model_save writes and dpdo_model_load/parse require: key[len],
 * 16 <= len <= 64 bytes, copied (NULL with len 0 removes it). The key is not
 * part of the content: it stays across fills and is wiped at destroy.
 * Returns DPDO_OK, DPDO_E_INVAL (NULL m, bad length), DPDO_E_UNSUPPORTED
 * (libsodium cannot be initialised). Not thread-safe on one model
 * (DPDO_E_MISUSE when busy). Since 0.3. */
DPDO_API int dpdo_model_set_key(dpdo_model *m, const unsigned char *key, size_t len);
/* DPDO_MODEL_INTEGRITY_* of m's content; -1 for NULL or an empty model.
 * Since 0.3. */
DPDO_API int dpdo_model_integrity(const dpdo_model *m);

/* ==== CORE ZONE: model accessors and prediction ==== */

/* ---- accessors (NULL or empty model: 0, "" or DPDO_E_STATE) --------------- */
DPDO_API int64_t dpdo_model_dim(const dpdo_model *m);    /* Since 0.2. */
DPDO_API int64_t dpdo_model_rounds(const dpdo_model *m); /* Since 0.2. */
/* Copy x into out[dim] (dim must equal the model's). Returns DPDO_OK,
 * DPDO_E_INVAL, DPDO_E_STATE. Since 0.2. */
DPDO_API int dpdo_model_get_x(dpdo_model *m, double *out, int64_t dim);
/* Names: "loss", "regularizer", "algorithm", "accountant", "library" (the
 * version string of the library that wrote the file), "composition" (from 0.3 on;
 * "basic" when the privacy figure is the sum over several runs, as for a
 * one-vs-rest model of dpdo_train; "" for one run). "" for an empty model
 * or an unknown field. Never NULL; valid until the next fill of m. Since 0.2. */
DPDO_API const char *dpdo_model_text(const dpdo_model *m, const char *field);
/* The regularizer's two parameters (either pointer may be NULL). Since 0.2. */
DPDO_API int dpdo_model_regularizer_params(dpdo_model *m, double *p0, double *p1);
/* The privacy figure stored with the model: epsilon (+inf: not private) and
 * delta. Returns DPDO_OK, DPDO_E_INVAL, DPDO_E_STATE. Since 0.2. */
DPDO_API int dpdo_model_privacy(dpdo_model *m, double *epsilon, double *delta);

/* Predict for every row of ds into out[n] (n = row count). ds may have
 * fewer features than the model (missing trailing features are zero, as in
 * a LIBSVM test file whose largest index is smaller) but not more.
 * Returns DPDO_OK, DPDO_E_INVAL (NULL, bad kind, n mismatch, ds has more
 * features than the model: message on m), DPDO_E_STATE (m or ds empty),
 * DPDO_E_UNSUPPORTED (probabilities for a loss other than logistic).
 * From 0.3 on a model trained on class ids (dpdo_model_classes, dpdo_train)
 * predicts class ids for DPDO_PREDICT_LABEL; a one-vs-rest model of K >= 3
 * classes predicts labels only (margins and probabilities: DPDO_E_UNSUPPORTED).
 * Since 0.2. */
DPDO_API int dpdo_model_predict(dpdo_model *m, dpdo_dataset *ds, int kind, double *out, int64_t n);

/* ---- buffers, classes, export (0.3) -------------------------------------- */

/* Write m's file text (what dpdo_model_save writes, integrity line included: a checksum, or a
 * MAC under the key of dpdo_model_set_key) into the caller's buf[cap]. Sets *len to the text's
 * length without the NUL. buf NULL: a size query (nothing written, DPDO_OK). Otherwise the text
 * and a NUL are written when cap > *len, else DPDO_E_INVAL (nothing written). Read it back with
 * dpdo_model_parse (same checks and key rules as dpdo_model_load). Returns DPDO_OK,
 * DPDO_E_INVAL (NULL m or len, cap too small), DPDO_E_STATE (m empty), DPDO_E_NOMEM,
 * DPDO_E_UNSUPPORTED (libsodium cannot be initialised). Thread-safety: like dpdo_model_save
 * (a read of m). Since 0.3. */
DPDO_API int dpdo_model_save_buffer(dpdo_model *m, char *buf, int64_t cap, int64_t *len);

/* How many nodes trained m (recorded by dpdo_train; model files of format 2); 0 when not
 * recorded, for NULL or an empty model. Since 0.3. */
DPDO_API int64_t dpdo_model_nodes(const dpdo_model *m);

/* The class ids m predicts, ascending, into out[cap]; *len = their count: 0 for a model of
 * labels +1/-1, 2 for a binary model trained on class ids (DPDO_PREDICT_LABEL then gives
 * out[1] for a margin >= 0, else out[0]), K >= 3 for a one-vs-rest model of K weight vectors
 * (DPDO_PREDICT_LABEL gives the class whose vector has the largest margin, the first on a tie;
 * margins and probabilities are DPDO_E_UNSUPPORTED). out NULL: a count query. Returns DPDO_OK,
 * DPDO_E_INVAL (NULL m or len, cap < count), DPDO_E_STATE (empty). Since 0.3. */
DPDO_API int dpdo_model_classes(dpdo_model *m, int32_t *out, int64_t cap, int64_t *len);

/* Copy weight vector k into out[dim] (dim = dpdo_model_dim): k = 0 for a binary model (the
 * same as dpdo_model_get_x), 0..K-1 for a one-vs-rest model of K classes (vector k votes for
 * class k of dpdo_model_classes; dpdo_model_get_x gives vector 0). Returns DPDO_OK,
 * DPDO_E_INVAL (NULL, k out of range, dim mismatch), DPDO_E_STATE (empty). Since 0.3. */
DPDO_API int dpdo_model_get_class_x(dpdo_model *m, int64_t k, double *out, int64_t dim);

/* Formats of dpdo_model_export. Since 0.3. */
enum {
    DPDO_MODEL_EXPORT_CSV = 0,      /* header "label,w1,..,wd", then one row per weight vector:
                                       the label it votes for (+1, the second class id, or the
                                       class id of a one-vs-rest vector), its weights (%.17g) */
    DPDO_MODEL_EXPORT_LIBLINEAR = 1 /* LIBLINEAR's model file (solver_type, nr_class, label,
                                       nr_feature, bias -1, w): its `predict` reads it and gives
                                       the labels of dpdo_model_predict (docs/model.md) */
};

/* Write m's weights to `path` in `format` (written like dpdo_model_save: temporary file,
 * fsync, rename; no integrity line, the formats have none; the privacy record is not part of
 * either format). LIBLINEAR needs a classification loss: logistic (L2R_LR), hinge
 * (L2R_L1LOSS_SVC_DUAL), squared_hinge (L2R_L2LOSS_SVC). Returns DPDO_OK, DPDO_E_INVAL (NULL,
 * bad format), DPDO_E_STATE (empty), DPDO_E_UNSUPPORTED (LIBLINEAR and another loss, or dim
 * beyond int), DPDO_E_IO, DPDO_E_NOMEM. Thread-safety: a read of m. Since 0.3. */
DPDO_API int dpdo_model_export(dpdo_model *m, int format, const char *path);

#ifdef __cplusplus
}
#endif
#endif /* DPDO_MODEL_FILE_H */
