/* SPDX-License-Identifier: BSD-3-Clause */
/* Typed algorithm parameters (dpdo_param_*): the common ones (keys 1..99) are defined here; each
 * algorithm defines its own in its file (dpdo__alg_vt.params, a dpdo__pdef table). The lookups
 * here need only the handle's type; those by key or name alone run over the registry
 * (eng_pnames.c). A handle keeps its values in slots e->pi / e->pd numbered in listing order: the
 * common parameters, then the type's own. */
#include "engine_impl.h"
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define I62 4611686018427387904.0
static const dpdo__pdef COMMON[] = {
    {DPDO_PARAM_MAX_ROUNDS, "max-rounds", 0, 1, 281474976710655.0, 1,
     "planned horizon T and stop; live: may only grow while running (not with DPDO_NOISE_PAPER); "
     "default options.max_rounds (1000)",
     .flags = 0},
    {DPDO_PARAM_STEP_SIZE, "step-size", 1, 0, 1e300, 0,
     "base step size; NaN (default) = the algorithm's preset", .flags = DPDO__PF_NAN},
    {DPDO_PARAM_STEP_POWER, "step-power", 1, 0, 4, 0,
     "exponent of the step schedule; NaN (default) = the preset", .flags = DPDO__PF_NAN},
    {DPDO_PARAM_TOL, "tol", 1, 0, INFINITY, 1,
     "stop when the averaged output moves by <= tol * max(1, norm) over check-every rounds; 0 "
     "(default) = off; live",
     .flags = 0},
    {DPDO_PARAM_CHECK_EVERY, "check-every", 0, 1, I62, 1,
     "rounds between tolerance checks; default 1; live", .flags = 0},
    {DPDO_PARAM_MAX_EPSILON, "max-epsilon", 1, 0, INFINITY, 1,
     "budget guard at options.delta; 0 (default) = epsilon in RIGOROUS mode; +inf = off; live: may "
     "only be lowered while running",
     .flags = 0},
    {DPDO_PARAM_BATCH, "batch", 0, 1, I62, 0,
     "samples per computing node per round, <= the smallest shard; default 1", .flags = 0},
    {DPDO_PARAM_SIGMA, "sigma", 1, 0, 1e300, 0,
     "noise std per coordinate, settable only with DPDO_NOISE_FIXED; read: the sigma in use (NaN "
     "before prepare)",
     .flags = 0},
    {DPDO_PARAM_CLIP, "clip", 1, 0x1p-1000, INFINITY, 0,
     "per-sample gradient clip norm; NaN (default) = options.lipschitz; +inf = no clipping",
     .flags = DPDO__PF_NAN},
    {DPDO_PARAM_CALIB_STEPS, "calib-steps", 0, 0, I62, 0,
     "releases per node the rigorous sigma is calibrated for; 0 (default) = automatic", .flags = 0},
    {DPDO_PARAM_CALIB_TAIL, "calib-tail", 1, 1e-12, 0.5, 0,
     "tail probability of the automatic release count; default 1e-6", .flags = 0},
};
#define NCOMMON ((int)(sizeof COMMON / sizeof COMMON[0]))
_Static_assert(sizeof COMMON / sizeof COMMON[0] < DPDO__NSLOTS, "DPDO__NSLOTS too small");

int dpdo__param_ncommon(void)
{
    return NCOMMON;
}

/* The number of rows of vt's own table. */
static int nown(const dpdo__alg_vt *vt)
{
    int j = 0;
    while (vt && vt->params && (vt->params[j].key || vt->params[j].name || vt->params[j].same_as))
        j++;
    return j;
}

/* FNV-1a of the type's name: the block of keys the library assigns to it. */
static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* The definition of row j of vt's table: the row, or the row it shares (same_as). */
static const dpdo__pdef *row_def(const dpdo__alg_vt *vt, int j)
{
    const dpdo__pdef *r = &vt->params[j];
    return r->same_as ? r->same_as : r;
}

/* The key of row j: its definition's, or one the library assigns from the type's name (the
 * same in every process and run; test_params checks that no two types' keys collide). */
static int row_key(const dpdo__alg_vt *vt, int j)
{
    const dpdo__pdef *d = row_def(vt, j);
    if (d->key) return d->key;
    return DPDO__KEY_AUTO + (int)(name_hash(vt->name) & 0xffffu) * DPDO__KEY_AUTO_SPAN + j;
}

const dpdo__pdef *dpdo__param_at(const dpdo__alg_vt *vt, int slot, int *key)
{
    if (slot < 0) return NULL;
    if (slot < NCOMMON) {
        if (key) *key = COMMON[slot].key;
        return &COMMON[slot];
    }
    int j = slot - NCOMMON;
    if (!vt || slot >= DPDO__NSLOTS || j >= nown(vt)) return NULL;
    if (key) *key = row_key(vt, j);
    return row_def(vt, j);
}

int dpdo__param_slot(const dpdo__alg_vt *vt, int key)
{
    if (key <= 0) return -1;
    for (int i = 0; i < NCOMMON; i++)
        if (COMMON[i].key == key) return i;
    for (int j = 0, m = nown(vt); j < m && NCOMMON + j < DPDO__NSLOTS; j++)
        if (row_key(vt, j) == key) return NCOMMON + j;
    return -1;
}

int dpdo__param_fits(const dpdo__alg_vt *vt)
{
    return NCOMMON + nown(vt) <= DPDO__NSLOTS;
}

const dpdo__pdef *dpdo__param_def(const dpdo__alg_vt *vt, int key)
{
    return dpdo__param_at(vt, dpdo__param_slot(vt, key), NULL);
}

void dpdo__param_table_defaults(dpdo__eng *e)
{
    for (int j = 0, m = nown(e->vt); j < m && NCOMMON + j < DPDO__NSLOTS; j++) {
        double v = e->vt->params[j].def;
        if (row_def(e->vt, j)->type == 0)
            e->pi[NCOMMON + j] = (int64_t)v;
        else
            e->pd[NCOMMON + j] = v;
    }
}

/* The keys a type accepts, in listing (= slot) order: the common keys in table order, then the
 * type's own in its table's order. The i-th key, or 0 past the end. */
static int type_key_at(const dpdo__alg_vt *vt, int i)
{
    int key = 0;
    return dpdo__param_at(vt, i, &key) ? key : 0;
}

DPDO_API int dpdo_algorithm_type_param_next(const dpdo_algorithm_type *t, int prev_key)
{
    if (!t || !t->vt) return DPDO_E_INVAL;
    if (prev_key == 0) return type_key_at(t->vt, 0);
    for (int i = 0;; i++) {
        int k = type_key_at(t->vt, i);
        if (k == 0) return DPDO_E_INVAL; /* prev_key is not one of t's keys */
        if (k == prev_key) return type_key_at(t->vt, i + 1);
    }
}
