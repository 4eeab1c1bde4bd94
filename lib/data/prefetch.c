/* SPDX-License-Identifier: BSD-3-Clause */
/* Software prefetch of the rows of a mini-batch before they are needed (issue 19). A node step
 * of DP-WOR-SGD reads b random rows of its shard: cold lines whose latency, one block of rows
 * after another, bounded the step. The algorithm knows the next step's rows one step ahead and
 * asks for them here, so their lines arrive while the current step computes. A prefetch has no
 * effect on any result. */
#include "data_impl.h"

void dpdo__shard_prefetch(const struct dpdo_shard *sh, const int64_t *idx, int64_t m)
{
    if (!sh || !sh->parent || sh->parent->layout != DPDO__DS_DENSE || m <= 0) return;
    const struct dpdo_dataset *ds = sh->parent;
    const size_t d = (size_t)ds->d;
    for (int64_t k = 0; k < m; k++) {
        int64_t r = dpdo__shard_row(sh, idx[k]);
        const double *x = ds->X + (size_t)r * d;
        for (size_t j = 0; j < d; j += 8)
            __builtin_prefetch(x + j, 0, 2);
        __builtin_prefetch(x + d - 1, 0, 2);
        __builtin_prefetch(ds->y + r, 0, 2);
    }
}
