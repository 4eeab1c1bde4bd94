/* SPDX-License-Identifier: BSD-3-Clause */
/* The registry of algorithm types (dpdo_algorithm_type_*): the one place that names every
 * algorithm vtable of lib/alg (the list lib/alg/algorithms.def). Nothing in lib/engine calls
 * into it except the parameter facts by key or name (eng_pnames.c, dpdo__type_at). */
#include "engine_impl.h"
#include <string.h>

/* generated from lib/alg/algorithms.def (registry order) */
static const dpdo_algorithm_type TYPES[] = {
#define DPDO_ALG(x) {&dpdo__vt_##x},
#include "../alg/algorithms.def"
#undef DPDO_ALG
};
#define NTYPES ((int)(sizeof TYPES / sizeof TYPES[0]))

const dpdo__alg_vt *dpdo__type_at(int i)
{
    return i >= 0 && i < NTYPES ? TYPES[i].vt : NULL;
}

DPDO_API const dpdo_algorithm_type *dpdo_algorithm_type_find(const char *name)
{
    if (!name) return NULL;
    for (int i = 0; i < NTYPES; i++)
        if (strcmp(TYPES[i].vt->name, name) == 0) return &TYPES[i];
    return NULL;
}

DPDO_API const dpdo_algorithm_type *dpdo_algorithm_type_next(const dpdo_algorithm_type *prev)
{
    if (!prev) return &TYPES[0];
    for (int i = 0; i + 1 < NTYPES; i++)
        if (prev == &TYPES[i]) return &TYPES[i + 1];
    return NULL;
}

DPDO_API const char *dpdo_algorithm_type_name(const dpdo_algorithm_type *t)
{
    return t ? t->vt->name : "(null)";
}

DPDO_API const char *dpdo_algorithm_type_title(const dpdo_algorithm_type *t)
{
    return t ? t->vt->title : "(null)";
}
