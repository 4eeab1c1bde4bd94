/* SPDX-License-Identifier: BSD-3-Clause */
/* The facts of a parameter known by its key or name alone (dpdo_param_*): the common table, then
 * every registered type's own (lib/alg/algorithms.def order). Above params.c and the registry;
 * nothing in lib/engine or lib/alg calls this file (the engine looks keys up in the handle's type,
 * params.c). */
#include "engine_impl.h"
#include <string.h>

/* The definition of key: common, or of the first registered type that accepts it, or NULL. */
static const dpdo__pdef *def_of(int key)
{
    if (key <= 0) return NULL;
    const dpdo__pdef *d = dpdo__param_def(NULL, key);
    const dpdo__alg_vt *vt;
    for (int ti = 0; !d && (vt = dpdo__type_at(ti)) != NULL; ti++)
        d = dpdo__param_def(vt, key);
    return d;
}

DPDO_API int dpdo_param_type(int key)
{
    const dpdo__pdef *d = def_of(key);
    return d ? d->type : -1;
}

DPDO_API const char *dpdo_param_name(int key)
{
    const dpdo__pdef *d = def_of(key);
    return d ? d->name : NULL;
}

DPDO_API int dpdo_param_bounds(int key, double *lo, double *hi)
{
    const dpdo__pdef *d = def_of(key);
    if (!d) return DPDO_E_INVAL;
    if (lo) *lo = d->lo;
    if (hi) *hi = d->hi;
    return DPDO_OK;
}

DPDO_API int dpdo_param_live(int key)
{
    const dpdo__pdef *d = def_of(key);
    return d ? d->live : -1;
}

DPDO_API const char *dpdo_param_doc(int key)
{
    const dpdo__pdef *d = def_of(key);
    return d ? d->doc : NULL;
}

DPDO_API int dpdo_param_find(const char *name)
{
    if (!name) return DPDO_E_INVAL;
    int key = 0, nc = dpdo__param_ncommon();
    const dpdo__pdef *d;
    for (int s = 0; s < nc; s++)
        if ((d = dpdo__param_at(NULL, s, &key)) && strcmp(d->name, name) == 0) return key;
    const dpdo__alg_vt *vt;
    for (int ti = 0; (vt = dpdo__type_at(ti)) != NULL; ti++)
        for (int s = nc; (d = dpdo__param_at(vt, s, &key)) != NULL; s++)
            if (strcmp(d->name, name) == 0) return key;
    return DPDO_E_UNSUPPORTED;
}
