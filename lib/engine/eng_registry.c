/* SPDX-License-Identifier: BSD-3-Clause */
/* The registry of algorithm types (dpdo_algorithm_type_*): the one place that names every
 * algorithm vtable of lib/alg. Nothing in lib/engine calls into it. */
#include "engine_impl.h"
#include <string.h>

static const dpdo_algorithm_type TYPES[] = {{&dpdo__vt_dp_dda},     {&dpdo__vt_dp_dda_baseline},
                                            {&dpdo__vt_fed_plt},    {&dpdo__vt_fedpd},
                                            {&dpdo__vt_fedlin},     {&dpdo__vt_tamuna},
                                            {&dpdo__vt_led},        {&dpdo__vt_5gcs},
                                            {&dpdo__vt_dp_wor_sgd}, {&dpdo__vt_dp_sgd_wr},
                                            {&dpdo__vt_do_adp},     {&dpdo__vt_dpdo_huang},
                                            {&dpdo__vt_cpgt}};
#define NTYPES ((int)(sizeof TYPES / sizeof TYPES[0]))

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
