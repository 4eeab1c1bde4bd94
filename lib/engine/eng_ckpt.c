/* SPDX-License-Identifier: BSD-3-Clause */
/* Checkpoint glue: dpdo_algorithm_save / _load on top of checkpoint.c. */
#include "dpdo/checkpoint.h"
#include "eng_handle.h"

/* ---- checkpoints (lib/engine/checkpoint.c) ------------------------------------------ */

static int prepare_cb(void *arg)
{
    dpdo_algorithm *a = arg;
    return a->e->prepared ? DPDO_OK : dpdo__eng_prepare(a);
}

static int algorithm_save_body(dpdo_algorithm *a, const char *path,
                               const dpdo_checkpoint_options *opts)
{
    if (!a || !DPDO__LIVE(a, DPDO__MAGIC_ALGORITHM)) return DPDO_E_INVAL;
    if (!path) return dpdo__err(a->errmsg, DPDO_E_INVAL, "save: path is NULL");
    if (!a->e) return dpdo__err(a->errmsg, DPDO_E_STATE, "save: the algorithm is EMPTY");
    return dpdo__ckpt_save(a->e, a->state, a->stop, path, opts);
}

DPDO_API int dpdo_algorithm_save(dpdo_algorithm *a, const char *path,
                                 const dpdo_checkpoint_options *opts)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 0, "dpdo_algorithm_save",
                  algorithm_save_body(a, path, opts));
}

static int load_common(dpdo_algorithm *a, const char *path, const unsigned char *image, size_t size,
                       const dpdo_checkpoint_options *opts)
{
    if (!a->e)
        return dpdo__err(a->errmsg, DPDO_E_STATE,
                         "load: the algorithm is EMPTY; call dpdo_algorithm_setup");
    int state = a->state, stop = a->stop;
    int rc = dpdo__ckpt_load(a->e, &state, &stop, path, image, size, opts, prepare_cb, a);
    if (rc) return rc;
    a->state = state;
    a->stop = stop;
    dpdo__err_clear(a->errmsg);
    return DPDO_OK;
}

static int algorithm_load_body(dpdo_algorithm *a, const char *path,
                               const dpdo_checkpoint_options *opts)
{
    if (!a || !DPDO__LIVE(a, DPDO__MAGIC_ALGORITHM)) return DPDO_E_INVAL;
    if (!path) return dpdo__err(a->errmsg, DPDO_E_INVAL, "load: path is NULL");
    return load_common(a, path, NULL, 0, opts);
}

DPDO_API int dpdo_algorithm_load(dpdo_algorithm *a, const char *path,
                                 const dpdo_checkpoint_options *opts)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 1, "dpdo_algorithm_load",
                  algorithm_load_body(a, path, opts));
}

int dpdo__algorithm_load_image(dpdo_algorithm *a, const unsigned char *image, size_t size,
                               const dpdo_checkpoint_options *opts)
{
    if (!a || !DPDO__LIVE(a, DPDO__MAGIC_ALGORITHM) || !image) return DPDO_E_INVAL;
    return load_common(a, NULL, image, size, opts);
}
