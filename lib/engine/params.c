/* SPDX-License-Identifier: BSD-3-Clause */
/* The table of typed algorithm parameters (dpdo_param_*). */
#include <math.h>
#include <stddef.h>
#include "engine_impl.h"

typedef struct pdef {
    int key;
    const char *name;
    int type;       /* 0 int, 1 double */
    double lo, hi;  /* inclusive bounds */
    int live;       /* 1: settable while RUNNING */
} pdef;

#define I62 4611686018427387904.0
static const pdef P[] = {
    {DPDO_PARAM_MAX_ROUNDS, "max-rounds", 0, 1, 281474976710655.0, 1},
    {DPDO_PARAM_STEP_SIZE, "step-size", 1, 0, 1e300, 0},
    {DPDO_PARAM_STEP_POWER, "step-power", 1, 0, 4, 0},
    {DPDO_PARAM_TOL, "tol", 1, 0, INFINITY, 1},
    {DPDO_PARAM_CHECK_EVERY, "check-every", 0, 1, I62, 1},
    {DPDO_PARAM_MAX_EPSILON, "max-epsilon", 1, 0, INFINITY, 1},
    {DPDO_PARAM_BATCH, "batch", 0, 1, I62, 0},
    {DPDO_PARAM_SIGMA, "sigma", 1, 0, 1e300, 0},
    {DPDO_PARAM_CLIP, "clip", 1, 0x1p-1000, INFINITY, 0},
    {DPDO_PARAM_CALIB_STEPS, "calib-steps", 0, 0, I62, 0},
    {DPDO_PARAM_CALIB_TAIL, "calib-tail", 1, 1e-12, 0.5, 0},
    {DPDO_PARAM_DDA_ACTIVE, "dda-active", 0, 1, 2147483647.0, 0},
    {DPDO_PARAM_DDA_SCHEME, "dda-scheme", 0, DPDO_ROUND_ALL, DPDO_ROUND_BERNOULLI, 0},
    {DPDO_PARAM_DDA_GOSSIP_COUNT, "dda-gossip-count", 0, 0, 2147483647.0, 0},
    {DPDO_PARAM_DDA_BERNOULLI_P, "dda-bernoulli-p", 1, 0x1p-1000, 1, 0},
    {DPDO_PARAM_DDA_SCHEDULE, "dda-schedule", 0, DPDO_DDA_SCHEDULE_AUTO, DPDO_DDA_SCHEDULE_PAPER_L1, 0},
    {DPDO_PARAM_DDA_PAPER_C, "dda-paper-c", 1, 0x1p-1000, 1e300, 0},
    {DPDO_PARAM_DDA_ALL_COMPUTE, "dda-all-compute", 0, 0, 1, 0},
    {DPDO_PARAM_DDA_ALL_TRANSMIT, "dda-all-transmit", 0, 0, 1, 0},
    {DPDO_PARAM_ADP_P, "adp-p", 1, 0x1p-1000, 1, 0},
    {DPDO_PARAM_ADP_BETA, "adp-beta", 1, 0, 0.999999999, 0},
    {DPDO_PARAM_ADP_GAMMA, "adp-gamma", 1, 0x1p-1000, 1, 0},
    {DPDO_PARAM_WOR_SCHEDULE, "wor-schedule", 0, DPDO_WOR_SYNCHRONOUS, DPDO_WOR_SEQUENTIAL, 0},
    {DPDO_PARAM_WOR_PASSES, "wor-passes", 0, 1, 2147483647.0, 0},
    {DPDO_PARAM_WOR_SMOOTH, "wor-smooth", 1, 0x1p-1000, 1e300, 0},
    {DPDO_PARAM_WOR_ETA_CAP, "wor-eta-cap", 0, 0, 1, 0},
    {DPDO_PARAM_FED_RHO, "fed-rho", 1, 0x1p-1000, 1e300, 0},
    {DPDO_PARAM_FED_EPOCHS, "fed-epochs", 0, 1, 2147483647.0, 0},
    {DPDO_PARAM_FED_SAMPLER, "fed-sampler", 0, DPDO_FED_SAMPLER_BERNOULLI, DPDO_FED_SAMPLER_UNIFORM, 0},
    {DPDO_PARAM_FED_P, "fed-p", 1, 0x1p-1000, 1, 0},
    {DPDO_PARAM_FED_ACTIVE, "fed-active", 0, 1, 2147483647.0, 0},
    {DPDO_PARAM_FED_DP_INIT, "fed-dp-init", 0, 0, 1, 0},
    {DPDO_PARAM_FEDPD_ETA, "fedpd-eta", 1, 0x1p-1000, 1e300, 0},
    {DPDO_PARAM_TAMUNA_ETA, "tamuna-eta", 1, 0x1p-1000, 1, 0},
    {DPDO_PARAM_LED_BETA, "led-beta", 1, 0x1p-1000, 1e300, 0},
    {DPDO_PARAM_5GCS_TAU, "5gcs-tau", 1, 0x1p-1000, 1e300, 0},
    {DPDO_PARAM_5GCS_MU, "5gcs-mu", 1, 0, 1e300, 0},
    {DPDO_PARAM_5GCS_LOCAL_STEP, "5gcs-local-step", 1, 0x1p-1000, 1e300, 0},
    {DPDO_PARAM_DPDO_SCHEDULE, "dpdo-schedule", 0, DPDO_DPDO_STEP_GEOMETRIC, DPDO_DPDO_STEP_HARMONIC, 0},
    {DPDO_PARAM_DPDO_STEP_DECAY, "dpdo-step-decay", 1, 0x1p-1000, 0.99999999999999989, 0},
    {DPDO_PARAM_DPDO_NOISE_DECAY, "dpdo-noise-decay", 1, 0x1p-1000, 1, 0},
    {DPDO_PARAM_DPDO_RADIUS, "dpdo-radius", 1, 0x1p-1000, INFINITY, 0},
    {DPDO_PARAM_DPDO_FULL_GRAD, "dpdo-full-grad", 0, 0, 1, 0},
    {DPDO_PARAM_CPGT_GAMMA, "cpgt-gamma", 1, 0x1p-1000, 1, 0},
};
#define NP ((int)(sizeof P / sizeof P[0]))
_Static_assert(sizeof P / sizeof P[0] <= DPDO__NSLOTS, "DPDO__NSLOTS too small");

int dpdo__param_slot(int key)
{
    for (int i = 0; i < NP; i++)
        if (P[i].key == key) return i;
    return -1;
}

const char *dpdo__param_slot_info(int slot, int *type, int *live)
{
    if (slot < 0 || slot >= NP) return NULL;
    *type = P[slot].type;
    *live = P[slot].live;
    return P[slot].name;
}

int dpdo__param_live(int key)
{
    int s = dpdo__param_slot(key);
    return s >= 0 && P[s].live;
}

DPDO_API int dpdo_param_type(int key)
{
    int s = dpdo__param_slot(key);
    return s < 0 ? -1 : P[s].type;
}

DPDO_API const char *dpdo_param_name(int key)
{
    int s = dpdo__param_slot(key);
    return s < 0 ? NULL : P[s].name;
}

DPDO_API int dpdo_param_bounds(int key, double *lo, double *hi)
{
    int s = dpdo__param_slot(key);
    if (s < 0) return DPDO_E_INVAL;
    if (lo) *lo = P[s].lo;
    if (hi) *hi = P[s].hi;
    return DPDO_OK;
}
