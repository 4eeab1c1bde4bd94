/* SPDX-License-Identifier: BSD-3-Clause */
/* Datasets: dense row-major or CSR sparse feature matrices with labels, their
 * loaders (LIBSVM/SVMlight, IDX, CSV, optionally gzip-compressed), synthetic
 * generators shaped like the papers' data, and shards (row views) that give
 * each node its private part without copying.
 *
 * Life cycle ("allocate small, then fill"): dpdo_dataset_create() makes an
 * empty handle; one filling call (set_dense, set_csr, load_*, generate)
 * gives it content. A failed fill leaves the handle as it was (nothing is
 * half-loaded) and explains itself in dpdo_dataset_errmsg(). Once a shard
 * borrows the dataset, refilling it returns DPDO_E_STATE. */
#ifndef DPDO_DATASET_H
#define DPDO_DATASET_H

#include <stddef.h>
#include <stdint.h>
#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dpdo_dataset dpdo_dataset;
typedef struct dpdo_shard dpdo_shard;

/* ownership modes for caller arrays */
enum { DPDO_COPY = 0, DPDO_BORROW = 1 };

/* layouts reported by dpdo_dataset_layout() */
enum { DPDO_LAYOUT_EMPTY = 0, DPDO_LAYOUT_DENSE = 1, DPDO_LAYOUT_CSR = 2 };

/* Create an empty dataset. Returns DPDO_OK, DPDO_E_INVAL (out NULL),
 * DPDO_E_NOMEM. Since 0.1. */
DPDO_API int dpdo_dataset_create(dpdo_dataset **out);
/* Destroy; NULL is a no-op. Shards borrowing it must be destroyed first
 * (destroying a borrowed dataset is a caller bug: the call does nothing and
 * sets the errmsg ... see docs). Since 0.1. */
DPDO_API void dpdo_dataset_destroy(dpdo_dataset *ds);
DPDO_API const char *dpdo_dataset_errmsg(const dpdo_dataset *ds);

DPDO_API int64_t dpdo_dataset_rows(const dpdo_dataset *ds);     /* 0 for NULL/empty */
DPDO_API int64_t dpdo_dataset_features(const dpdo_dataset *ds); /* 0 for NULL/empty */
DPDO_API int dpdo_dataset_layout(const dpdo_dataset *ds);       /* DPDO_LAYOUT_* */

#ifdef __cplusplus
}
#endif
#endif /* DPDO_DATASET_H */
