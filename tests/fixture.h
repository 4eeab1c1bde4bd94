/* Shared set-up of the engine tests: n nodes of q rows each over one dense data set.
 *
 * X (n q rows of d values) and Y (n q labels) are copied into a dataset; node i holds the
 * shard of rows [i q, (i + 1) q) with the built-in loss `loss` and weight 1. The caller owns
 * the handles written to *ds, *loss, sh[0..n-1] and nodes[0..n-1] and releases them with
 * tfx_nodes_free. Each test keeps its own data and its own network, regularizer and accountant.
 * Include after harness.h. */
#ifndef DPDO_TESTS_FIXTURE_H
#define DPDO_TESTS_FIXTURE_H

#include "dpdo/dpdo.h"
#include "harness.h"

static inline void tfx_nodes_make(const double *X, const double *Y, int n, int64_t q, int64_t d,
                                  const char *loss, dpdo_dataset **ds, dpdo_loss **lo,
                                  dpdo_shard **sh, dpdo_node **nodes)
{
    CHECK_EQ(dpdo_dataset_create(ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_dense(*ds, n * q, d, X, Y, DPDO_COPY), DPDO_OK);
    CHECK_EQ(dpdo_loss_create(lo, dpdo_loss_type_find(loss), NULL, d), DPDO_OK);
    for (int i = 0; i < n; i++) {
        CHECK_EQ(dpdo_shard_create_range(&sh[i], *ds, (int64_t)i * q, q), DPDO_OK);
        CHECK_EQ(dpdo_node_create(&nodes[i], sh[i], *lo, 1.0), DPDO_OK);
    }
}

static inline void tfx_nodes_free(int n, dpdo_dataset *ds, dpdo_loss *lo, dpdo_shard **sh,
                                  dpdo_node **nodes)
{
    for (int i = 0; i < n; i++) {
        dpdo_node_destroy(nodes[i]);
        dpdo_shard_destroy(sh[i]);
    }
    dpdo_loss_destroy(lo);
    dpdo_dataset_destroy(ds);
}

#endif
