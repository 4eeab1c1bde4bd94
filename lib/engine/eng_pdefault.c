/* SPDX-License-Identifier: BSD-3-Clause */
/* Parameter defaults of an algorithm type without an instance (dpdo_algorithm_type_param_default):
 * the engine's own path - the options' parameter slots (dpdo__eng_opts_to_params), then the
 * type's defaults() - run on a scratch engine that has only a node count and default options.
 * Above params.c and eng_options.c; nothing in lib/ calls this file. */
#include "eng_handle.h"

DPDO_API int dpdo_algorithm_type_param_default(const dpdo_algorithm_type *t, int key,
                                               int64_t n_nodes, double *value)
{
    if (!t || !t->vt || !value || n_nodes < 1 || n_nodes > INT32_MAX) return DPDO_E_INVAL;
    int k = dpdo_algorithm_type_param_next(t, 0);
    while (k > 0 && k != key)
        k = dpdo_algorithm_type_param_next(t, k);
    if (k <= 0) return DPDO_E_UNSUPPORTED;
    dpdo__eng *e = dpdo__calloc(1, sizeof *e);
    if (!e) return DPDO_E_NOMEM;
    e->vt = t->vt;
    e->n = n_nodes;
    dpdo_algorithm_options_init(&e->o, sizeof e->o);
    dpdo__eng_opts_to_params(e);
    if (e->vt->defaults) e->vt->defaults(e);
    int s = dpdo__param_slot(t->vt, key);
    *value = dpdo__param_at(t->vt, s, NULL)->type == 0 ? (double)e->pi[s] : e->pd[s];
    dpdo__free(e);
    return DPDO_OK;
}
