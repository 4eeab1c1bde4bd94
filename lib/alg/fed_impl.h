/* SPDX-License-Identifier: BSD-3-Clause */
/* Between Fed-PLT (alg_fed_plt.c) and its baselines (alg_fed_baselines.c): Fed-PLT's parameter
 * table, whose rows the baselines accept too (dpdo__pdef.same_as), by row. */
#ifndef DPDO_ALG_FED_IMPL_H
#define DPDO_ALG_FED_IMPL_H

#include "../engine/engine_impl.h"

enum {
    DPDO__FEDP_RHO,
    DPDO__FEDP_EPOCHS,
    DPDO__FEDP_SAMPLER,
    DPDO__FEDP_P,
    DPDO__FEDP_ACTIVE,
    DPDO__FEDP_DP_INIT
};
extern const dpdo__pdef dpdo__fed_plt_params[];

#endif
