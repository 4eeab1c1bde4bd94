/* SPDX-License-Identifier: BSD-3-Clause */
/* The table of typed algorithm parameters (dpdo_param_*). */
#include "engine_impl.h"
#include <math.h>
#include <stddef.h>

typedef struct pdef {
    int key;
    const char *name;
    int type;        /* 0 int, 1 double */
    double lo, hi;   /* inclusive bounds */
    int live;        /* 1: settable while RUNNING */
    const char *doc; /* one line: meaning and default (dpdo_param_doc) */
} pdef;

#define I62 4611686018427387904.0
static const pdef P[] = {
    {DPDO_PARAM_MAX_ROUNDS, "max-rounds", 0, 1, 281474976710655.0, 1,
     "planned horizon T and stop; live: may only grow while running (not with DPDO_NOISE_PAPER); "
     "default options.max_rounds (1000)"},
    {DPDO_PARAM_STEP_SIZE, "step-size", 1, 0, 1e300, 0,
     "base step size; NaN (default) = the algorithm's preset"},
    {DPDO_PARAM_STEP_POWER, "step-power", 1, 0, 4, 0,
     "exponent of the step schedule; NaN (default) = the preset"},
    {DPDO_PARAM_TOL, "tol", 1, 0, INFINITY, 1,
     "stop when the averaged output moves by <= tol * max(1, norm) over check-every rounds; 0 "
     "(default) = off; live"},
    {DPDO_PARAM_CHECK_EVERY, "check-every", 0, 1, I62, 1,
     "rounds between tolerance checks; default 1; live"},
    {DPDO_PARAM_MAX_EPSILON, "max-epsilon", 1, 0, INFINITY, 1,
     "budget guard at options.delta; 0 (default) = epsilon in RIGOROUS mode; +inf = off; live: may "
     "only be lowered while running"},
    {DPDO_PARAM_BATCH, "batch", 0, 1, I62, 0,
     "samples per computing node per round, <= the smallest shard; default 1"},
    {DPDO_PARAM_SIGMA, "sigma", 1, 0, 1e300, 0,
     "noise std per coordinate, settable only with DPDO_NOISE_FIXED; read: the sigma in use (NaN "
     "before prepare)"},
    {DPDO_PARAM_CLIP, "clip", 1, 0x1p-1000, INFINITY, 0,
     "per-sample gradient clip norm; NaN (default) = options.lipschitz; +inf = no clipping"},
    {DPDO_PARAM_CALIB_STEPS, "calib-steps", 0, 0, I62, 0,
     "releases per node the rigorous sigma is calibrated for; 0 (default) = automatic"},
    {DPDO_PARAM_CALIB_TAIL, "calib-tail", 1, 1e-12, 0.5, 0,
     "tail probability of the automatic release count; default 1e-6"},
    {DPDO_PARAM_DDA_ACTIVE, "dda-active", 0, 1, 2147483647.0, 0,
     "nodes active per round b, <= n; default 2 (1 if n = 1; the baseline: n)"},
    {DPDO_PARAM_DDA_SCHEME, "dda-scheme", 0, DPDO_ROUND_ALL, DPDO_ROUND_BERNOULLI, 0,
     "round scheme DPDO_ROUND_*; default MATCHING (AVERAGE if n = 1)"},
    {DPDO_PARAM_DDA_GOSSIP_COUNT, "dda-gossip-count", 0, 0, 2147483647.0, 0,
     "count for the round scheme; 0 (default) = b (the baseline: 2)"},
    {DPDO_PARAM_DDA_BERNOULLI_P, "dda-bernoulli-p", 1, 0x1p-1000, 1, 0,
     "activation probability for DPDO_ROUND_BERNOULLI; default 0.1"},
    {DPDO_PARAM_DDA_SCHEDULE, "dda-schedule", 0, DPDO_DDA_SCHEDULE_AUTO, DPDO_DDA_SCHEDULE_PAPER_L1,
     0, "schedule preset DPDO_DDA_SCHEDULE_*; default AUTO"},
    {DPDO_PARAM_DDA_PAPER_C, "dda-paper-c", 1, 0x1p-1000, 1e300, 0,
     "Theorem 1's constant: 32 (the paper, default) or 160 (consistent with its proof)"},
    {DPDO_PARAM_DDA_ALL_COMPUTE, "dda-all-compute", 0, 0, 1, 0,
     "0/1: every node computes every round; default 0 (the baseline: 1)"},
    {DPDO_PARAM_DDA_ALL_TRANSMIT, "dda-all-transmit", 0, 0, 1, 0,
     "0/1: DO-ADP's comparison variant (every node transmits every round); default 0"},
    {DPDO_PARAM_ADP_P, "adp-p", 1, 0x1p-1000, 1, 0, "activation probability p; default 1"},
    {DPDO_PARAM_ADP_BETA, "adp-beta", 1, 0, 0.999999999, 0, "momentum beta; default 0.15"},
    {DPDO_PARAM_ADP_GAMMA, "adp-gamma", 1, 0x1p-1000, 1, 0, "consensus step gamma; default 0.05"},
    {DPDO_PARAM_WOR_SCHEDULE, "wor-schedule", 0, DPDO_WOR_SYNCHRONOUS, DPDO_WOR_SEQUENTIAL, 0,
     "who steps in a round, DPDO_WOR_*; default SYNCHRONOUS"},
    {DPDO_PARAM_WOR_PASSES, "wor-passes", 0, 1, 2147483647.0, 0,
     "passes over each node's data; default 1"},
    {DPDO_PARAM_WOR_SMOOTH, "wor-smooth", 1, 0x1p-1000, 1e300, 0,
     "smoothness mu of the per-sample loss; NaN (default) = 1 + the regularizer's modulus"},
    {DPDO_PARAM_WOR_ETA_CAP, "wor-eta-cap", 0, 0, 1, 0,
     "0/1: cap the step at 1/(2 mu) (Lemma 4's condition); default 1"},
    {DPDO_PARAM_FED_RHO, "fed-rho", 1, 0x1p-1000, 1e300, 0,
     "Peaceman-Rachford parameter rho; default 1"},
    {DPDO_PARAM_FED_EPOCHS, "fed-epochs", 0, 1, 2147483647.0, 0,
     "local steps N_e per round; default 5"},
    {DPDO_PARAM_FED_SAMPLER, "fed-sampler", 0, DPDO_FED_SAMPLER_BERNOULLI, DPDO_FED_SAMPLER_UNIFORM,
     0, "participation sampler DPDO_FED_SAMPLER_*; default BERNOULLI (the baselines: UNIFORM)"},
    {DPDO_PARAM_FED_P, "fed-p", 1, 0x1p-1000, 1, 0,
     "Bernoulli participation probability; default 1"},
    {DPDO_PARAM_FED_ACTIVE, "fed-active", 0, 1, 2147483647.0, 0,
     "agents per round for the UNIFORM sampler, <= N; default N"},
    {DPDO_PARAM_FED_DP_INIT, "fed-dp-init", 0, 0, 1, 0,
     "0/1: private runs draw the initial iterates at random (Prop. 4's hypothesis); default 1"},
    {DPDO_PARAM_FEDPD_ETA, "fedpd-eta", 1, 0x1p-1000, 1e300, 0,
     "FedPD penalty/dual scale eta; default 1"},
    {DPDO_PARAM_TAMUNA_ETA, "tamuna-eta", 1, 0x1p-1000, 1, 0,
     "TAMUNA control-variate step; NaN (default) = 1/N_e"},
    {DPDO_PARAM_LED_BETA, "led-beta", 1, 0x1p-1000, 1e300, 0,
     "LED dual step; NaN (default) = 1/(2 N_e)"},
    {DPDO_PARAM_5GCS_TAU, "5gcs-tau", 1, 0x1p-1000, 1e300, 0,
     "5GCS dual step tau; NaN (default) = derived from the solver's constants"},
    {DPDO_PARAM_5GCS_MU, "5gcs-mu", 1, 0, 1e300, 0,
     "5GCS splitting modulus mu; NaN (default) = the solver's lambda_lo (0 if unknown)"},
    {DPDO_PARAM_5GCS_LOCAL_STEP, "5gcs-local-step", 1, 0x1p-1000, 1e300, 0,
     "5GCS inner gradient step; NaN (default) = derived from the solver's constants"},
    {DPDO_PARAM_DPDO_SCHEDULE, "dpdo-schedule", 0, DPDO_DPDO_STEP_GEOMETRIC,
     DPDO_DPDO_STEP_HARMONIC, 0, "step schedule DPDO_DPDO_STEP_*; default GEOMETRIC"},
    {DPDO_PARAM_DPDO_STEP_DECAY, "dpdo-step-decay", 1, 0x1p-1000, 0.99999999999999989, 0,
     "qs in gamma_t = c qs^t; default 0.9999"},
    {DPDO_PARAM_DPDO_NOISE_DECAY, "dpdo-noise-decay", 1, 0x1p-1000, 1, 0,
     "pn in b_t = b0 pn^t; default 0.99999"},
    {DPDO_PARAM_DPDO_RADIUS, "dpdo-radius", 1, 0x1p-1000, INFINITY, 0,
     "radius R of the l2 ball X; inf = no projection; default 1"},
    {DPDO_PARAM_DPDO_FULL_GRAD, "dpdo-full-grad", 0, 0, 1, 0,
     "0/1: full local gradient instead of batch sampled rows; default 0"},
    {DPDO_PARAM_CPGT_GAMMA, "cpgt-gamma", 1, 0x1p-1000, 1, 0,
     "CPGT-like consensus step; default 0.05"},
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
    return dpdo_param_live(key) > 0;
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

DPDO_API int dpdo_param_live(int key)
{
    int s = dpdo__param_slot(key);
    return s < 0 ? -1 : P[s].live;
}

DPDO_API const char *dpdo_param_doc(int key)
{
    int s = dpdo__param_slot(key);
    return s < 0 ? NULL : P[s].doc;
}

/* The keys a type accepts, in listing order: the common keys (1..99) in table order, then the
 * type's own keys in its vtable's order. The i-th key, or 0 past the end. */
static int type_key_at(const dpdo__alg_vt *vt, int i)
{
    for (int s = 0; s < NP; s++)
        if (P[s].key < 100 && i-- == 0) return P[s].key;
    for (const int32_t *k = vt->keys; k && *k; k++)
        if (i-- == 0) return *k;
    return 0;
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
