/* SPDX-License-Identifier: BSD-3-Clause */
/* Algorithms: the engine that runs a distributed private optimization method
 * one round at a time over borrowed nodes, a network, a regularizer and a
 * privacy accountant. See docs/architecture.md ("Engine") and
 * docs/algorithms/<name>.md for each algorithm.
 *
 * Life cycle (two-phase, like dpdo_dataset):
 *     dpdo_algorithm_create(&alg, dpdo_algorithm_type_find("dp-dda"));
 *     dpdo_algorithm_setup(alg, nodes, n, net, reg, acc, &opts);
 *     dpdo_algorithm_set_int(alg, DPDO_PARAM_DDA_ACTIVE, 2);   (optional tuning)
 *     while ((rc = dpdo_algorithm_step(alg)) == DPDO_ROUND) { ...getters... }
 *     rc == DPDO_DONE: dpdo_algorithm_stop_reason(alg) says why.
 *     dpdo_algorithm_destroy(alg);
 *
 * State machine (DPDO_ALG_*): EMPTY --setup--> READY --step--> RUNNING
 * --(DONE)--> DONE, or --(error in a round)--> FAILED. In DONE and FAILED,
 * step() returns DPDO_E_STATE until dpdo_algorithm_reset() brings the
 * algorithm back to round 0 (READY) with the same RNG streams, so the same
 * steps reproduce the same bytes. A failed round leaves iterates, ledger and
 * counters exactly as after the previous round.
 *
 * Threads: one algorithm handle is used by one thread at a time; its
 * borrowed objects (nodes, losses, shards, network, regularizer, accountant,
 * ledger) must not be used by another thread during a call. Type lookups and
 * dpdo_param_* are thread-safe. The engine starts no threads. From 0.3 on a
 * call that returns a status on a handle busy with another call (another
 * thread, or a mutating call from one of its callbacks) returns
 * DPDO_E_MISUSE and does nothing (docs/abi.md "Misuse detection"). */
#ifndef DPDO_ALGORITHM_H
#define DPDO_ALGORITHM_H

#include "accountant.h"
#include "compressor.h"
#include "export.h"
#include "network.h"
#include "node.h"
#include "policy.h"
#include "regularizer.h"
#include "rng.h"
#include "solver.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dpdo_algorithm_type dpdo_algorithm_type; /* opaque, static, immutable */
typedef struct dpdo_algorithm dpdo_algorithm;

/* ==== CORE ZONE: algorithms by name, options, life cycle ==== */

/* ---- pinned constants --------------------------------------------------- */

/* Noise modes (options.noise_mode). */
enum {
    DPDO_NOISE_NONE = 0,     /* sigma = 0: not private; rigorous epsilon reported as +inf */
    DPDO_NOISE_PAPER = 1,    /* the paper's calibration (DP-DDA: Theorem 1, eq. T1a) */
    DPDO_NOISE_RIGOROUS = 2, /* sigma calibrated with the accountant for the sampling that runs */
    DPDO_NOISE_FIXED = 3     /* sigma given by the caller (options.sigma); both accountings */
};

/* dpdo_algorithm_state(). */
enum {
    DPDO_ALG_EMPTY = 0,
    DPDO_ALG_READY = 1,
    DPDO_ALG_RUNNING = 2,
    DPDO_ALG_DONE = 3,
    DPDO_ALG_FAILED = 4
};

/* dpdo_algorithm_stop_reason(). */
enum {
    DPDO_STOP_NONE = 0,
    DPDO_STOP_MAX_ROUNDS = 1,
    DPDO_STOP_BUDGET = 2,
    DPDO_STOP_TOLERANCE = 3,
    DPDO_STOP_PASSES = 4 /* the planned passes over the local data are complete (DP-WOR-SGD) */
};

/* options.randomness. Since 0.2. */
enum {
    DPDO_RANDOMNESS_SECURE = 0,      /* private streams keyed by secret keys from the OS */
    DPDO_RANDOMNESS_REPRODUCIBLE = 1 /* every stream keyed by options.seed: replayable */
};

/* Which privacy figure (dpdo_algorithm_privacy). */
enum { DPDO_PRIVACY_RIGOROUS = 0, DPDO_PRIVACY_PAPER = 1 };

/* Which point the objective helpers evaluate. */
enum {
    DPDO_POINT_ITERATE = 0, /* x_i, or (1/n) sum_i x_i */
    DPDO_POINT_OUTPUT = 1   /* the algorithm's output (DP-DDA: s_i / A_t), or the average */
};

#define DPDO_NODE_ALL (-1)         /* getters: every node / the average / the worst / the total */
#define DPDO_NODE_COORDINATOR (-2) /* communication counters of a coordinator (Fed-PLT) */

/* ---- algorithm types ---------------------------------------------------- */

/* Built-in by name: "dp-dda" (DP-DDA, Algorithm 1), "dp-dda-baseline" (the
 * same with every node active, the paper's [19]); the Fed-PLT baselines
 * "fedpd", "fedlin", "tamuna", "led", "5gcs" (docs/algorithms/fed-baselines.md);
 * "do-adp" and its baselines "dpdo", "cpgt" (CPGT-like reconstruction;
 * docs/algorithms/do-adp-baselines.md).
 * NULL if unknown or NULL. Thread-safe. Since 0.1. */
DPDO_API const dpdo_algorithm_type *dpdo_algorithm_type_find(const char *name);
/* Iterate the built-ins: next(NULL) = first; NULL after the last or for a
 * pointer that is not a built-in. Since 0.1. */
DPDO_API const dpdo_algorithm_type *dpdo_algorithm_type_next(const dpdo_algorithm_type *prev);
/* Name ("dp-dda") and one-line title; "(null)" for NULL. Since 0.1. */
DPDO_API const char *dpdo_algorithm_type_name(const dpdo_algorithm_type *t);
DPDO_API const char *dpdo_algorithm_type_title(const dpdo_algorithm_type *t);

/* ---- options (versioned: docs/abi.md, "Options structs") ------------------ */

typedef struct dpdo_algorithm_options {
    size_t struct_size;  /* sizeof(dpdo_algorithm_options) as compiled by the caller      0.1 */
    uint64_t seed;       /* RNG seed; default 0 (fixed; never time based)                   0.1 */
    int64_t max_rounds;  /* T: planned horizon and stop, 1 .. 2^48-1; default 1000          0.1 */
    double step_size;    /* base step (DP-DDA: gamma in gamma_t = step_size * t^step_power);
                            NaN (default) = the schedule preset's value                       0.1 */
    double step_power;   /* exponent of the schedule; NaN (default) = preset                0.1 */
    int32_t noise_mode;  /* DPDO_NOISE_*; default DPDO_NOISE_RIGOROUS                        0.1 */
    int32_t strict;      /* 1: a violated precondition of the paper bound fails prepare with
                            E_INVAL; 0 (default): reported in dpdo_algorithm_privacy_notes  0.1 */
    double epsilon;      /* target epsilon > 0; default 1                                   0.1 */
    double delta;        /* target delta in (0,1): rigorous epsilon is calibrated and reported
                            at it; the paper's delta_0 in PAPER mode; default 1e-5         0.1 */
    double max_epsilon;  /* budget guard at `delta`: 0 (default) = `epsilon` in RIGOROUS
                            mode, off otherwise; > 0: guard at that value in every noisy
                            mode; +inf: off                                                 0.1 */
    double sigma;        /* noise std per coordinate for DPDO_NOISE_FIXED (>= 0, finite);
                            ignored otherwise; default NaN                                   0.1 */
    double lipschitz;    /* L: public per-sample gradient bound, > 0; default 1             0.1 */
    double clip;         /* per-sample gradient clip norm: NaN (default) = `lipschitz`;
                            +inf = no clipping (the paper's assumption that every sample's
                            gradient norm is <= L is then trusted, see docs)                0.1 */
    int64_t batch;       /* samples per computing node per round, >= 1; default 1          0.1 */
    double tol;          /* stop when ||xbar_t - xbar_{t-c}|| <= tol * max(1, ||xbar_t||),
                            xbar = averaged output, c = check_every; 0 (default) = off       0.1 */
    int64_t check_every; /* c >= 1; default 1                                               0.1 */
    int32_t weighting;   /* DPDO_WEIGHT_* for the objective helpers; -1 (default) = the
                            algorithm's own objective (DP-DDA: DPDO_WEIGHT_NODES, eq. (1))  0.1 */
    int32_t randomness;  /* DPDO_RANDOMNESS_*: where private randomness (sample choice, noise,
                            secret initial rows) comes from; default DPDO_RANDOMNESS_SECURE
                            (keys from the operating system's entropy). REPRODUCIBLE keys
                            everything by `seed`: bit-identical reruns, but the guarantee then
                            holds only against parties who do not know the seed.
                            (0.1: reserved0, which had to be 0 = SECURE)                   0.2 */
    int32_t
        num_threads;     /* threads for the independent per-node work of a round (local and
                            combine of the computing nodes, Fed-PLT's local training), 0..256.
                            0 (default) = the environment variable DPDO_NUM_THREADS if set,
                            else 1; and 1 whenever a user callback (user loss, regularizer,
                            compressor) is involved, since those need not be thread-safe.
                            >= 1: exactly that many (the caller vouches for its callbacks).
                            Results are bit-identical for every value. dpdo_algorithm_set_pool
                            hands in the host's own pool instead. (Takes the first half of what
                            was reserved[0], so the struct's size is unchanged.)               0.2 */
    int32_t reserved32;  /* must be 0 (the other half of num_threads' word)                  0.2 */
    int64_t reserved[3]; /* must be 0 (set by _init): room for later fields, docs/abi.md     0.2 */
} dpdo_algorithm_options;

/* Fill o with the defaults above and set o->struct_size = struct_size.
 * Returns DPDO_OK, DPDO_E_INVAL (o NULL),
 * DPDO_E_VERSION (struct_size < sizeof(size_t)); any older (smaller) or newer
 * (larger) struct_size is accepted (docs/abi.md, "Options structs"). Since 0.1. */
DPDO_API int dpdo_algorithm_options_init(dpdo_algorithm_options *o, size_t struct_size);

/* ---- life cycle ----------------------------------------------------------- */

/* Allocate an EMPTY algorithm of `type`. *out is NULL on failure. Returns
 * DPDO_OK, DPDO_E_INVAL (NULL argument), DPDO_E_NOMEM. Since 0.1. */
DPDO_API int dpdo_algorithm_create(dpdo_algorithm **out, const dpdo_algorithm_type *type);

/* Attach the problem and allocate everything the run needs.
 *   nodes[0..n_nodes-1]: the array is copied, the nodes are BORROWED (they,
 *     their shards and losses must outlive the algorithm and not be modified
 *     while it runs). Distinct, same dimension d, n_nodes in [1, 2^31).
 *     Losses must be of sample kind (phi or batch): a model-kind loss has no
 *     samples to draw or account for.
 *   net: BORROWED and locked (calls that change it return DPDO_E_STATE until
 *     the algorithm is destroyed); dpdo_network_nodes(net) == n_nodes.
 *   reg: BORROWED, dimension d; NULL = no regularizer.
 *   acc: BORROWED accountant whose ledger has n_nodes nodes; NULL only with
 *     DPDO_NOISE_NONE. The run's charges go to its ledger.
 *   opts: copied; NULL = defaults.
 * On success the algorithm is READY at round 0. On failure a previous setup
 * (if any) is left intact and dpdo_algorithm_errmsg() names the problem
 * ("setup: node 3: dimension 2000 differs from the regularizer's 2001").
 * The nodes, reg and acc are retained: destroying one of them while the
 * algorithm exists is deferred until the algorithm lets go (destroy or a
 * later setup; docs/abi.md, "Destroying a borrowed handle").
 * Returns DPDO_OK, DPDO_E_INVAL, DPDO_E_VERSION, DPDO_E_NOMEM,
 * DPDO_E_STATE (RUNNING: reset first). Since 0.1. n_nodes is int64_t:
 * Since 0.2. */
DPDO_API int dpdo_algorithm_setup(dpdo_algorithm *alg, dpdo_node *const *nodes, int64_t n_nodes,
                                  dpdo_network *net, dpdo_regularizer *reg, dpdo_accountant *acc,
                                  const dpdo_algorithm_options *opts);

/* Lifecycle: setup -> prepare -> step. setup (above) takes the problem and
 * the options (READY, round 0); parameters and plug-ins may change while
 * READY. prepare fixes everything a run needs before its first release: the
 * parameters validated together, sigma chosen by the noise mode (paper,
 * rigorous calibration or fixed), the paper bound, the privacy events and
 * the budget guard, the node keys of a secure run, the thread pool and the
 * initial state. step() runs one round: plan (who computes, what is
 * charged), budget guard, local computation and exchange, check, commit.
 * The first step() of a run prepares if dpdo_algorithm_prepare was not
 * called (compatibility; the same result), and no later step returns to the
 * prepare stage. reset() goes back to READY with the prepared sigma kept.
 * docs/architecture.md, "Lifecycle: setup -> prepare -> step". */
/* Finish configuration now rather than in the first step(): validate the
 * parameters together, fix sigma (paper or rigorous calibration), evaluate
 * the paper bound and its preconditions, and compute the budget guard.
 * Idempotent. Returns DPDO_OK, DPDO_E_STATE (not READY), DPDO_E_INVAL
 * (inconsistent parameters; a paper precondition with strict = 1),
 * DPDO_E_NUMERIC (target epsilon unreachable), DPDO_E_UNSUPPORTED (the
 * accountant cannot account the run's events), DPDO_E_NOMEM. A failure
 * leaves the algorithm READY. May allocate. Since 0.1. */
DPDO_API int dpdo_algorithm_prepare(dpdo_algorithm *alg);

/* Free the algorithm and unlock the network. NULL is a no-op. The ledger
 * keeps the run's charges: that privacy was spent. Since 0.1. */
DPDO_API void dpdo_algorithm_destroy(dpdo_algorithm *alg);
/* Message about the last failure; "" if none; "dpdo_algorithm_errmsg: alg is NULL"
 * for NULL. Never NULL. Since 0.1. */
DPDO_API const char *dpdo_algorithm_errmsg(const dpdo_algorithm *alg);
/* The type's name; "(null)" for NULL. Since 0.1. */
DPDO_API const char *dpdo_algorithm_name(const dpdo_algorithm *alg);
/* DPDO_ALG_*, or -1 for NULL. Since 0.1. */
DPDO_API int dpdo_algorithm_state(const dpdo_algorithm *alg);
/* Number of nodes and dimension; 0 for NULL or EMPTY. Since 0.1. */
DPDO_API int64_t dpdo_algorithm_nodes(const dpdo_algorithm *alg);
DPDO_API int64_t dpdo_algorithm_dim(const dpdo_algorithm *alg);

/* ==== ADVANCED ZONE: typed parameter keys (options fields come first: docs/api-zones.md) ==== */

/* ---- parameters ----------------------------------------------------------- */

/* Typed parameter keys. Pinned: 1..99 common, 100..199 DP-DDA. Each key is
 * "frozen" (settable only at round 0, in READY) or "live" (also while
 * RUNNING). Changing a frozen key in READY discards an earlier prepare.
 * One way per setting (docs/api-zones.md): keys 1..9 (MAX_ROUNDS .. CLIP) name settings that are
 * also fields of dpdo_algorithm_options (max_rounds, step_size, step_power, tol, check_every,
 * max_epsilon, batch, sigma, clip). Choose them with the options field; setting one of these
 * keys before the run is a deprecated alias of the field, kept for the ABI (it gives the same
 * run, bit for bit). The keys stay the way to change a live setting while RUNNING (max_rounds,
 * tol, check_every, max_epsilon), which a field cannot, and to read back the value in use. */
enum {
    DPDO_PARAM_MAX_ROUNDS = 1,   /* int [1, 2^48-1]; live (may only grow while RUNNING, and
                                    not at all with DPDO_NOISE_PAPER: sigma depends on T) */
    DPDO_PARAM_STEP_SIZE = 2,    /* double [0, 1e300] or NaN (= the algorithm's preset); frozen */
    DPDO_PARAM_STEP_POWER = 3,   /* double [0, 4] or NaN (= preset); frozen */
    DPDO_PARAM_TOL = 4,          /* double [0, inf); live */
    DPDO_PARAM_CHECK_EVERY = 5,  /* int [1, 2^62]; live */
    DPDO_PARAM_MAX_EPSILON = 6,  /* double [0, inf]; live (may only be lowered while RUNNING) */
    DPDO_PARAM_BATCH = 7,        /* int [1, 2^62], <= smallest shard (checked); frozen */
    DPDO_PARAM_SIGMA = 8,        /* double [0, 1e300]: set only with DPDO_NOISE_FIXED; get =
                                    sigma in use (NaN before prepare); frozen */
    DPDO_PARAM_CLIP = 9,         /* double (0, inf] or NaN (= L); frozen */
    DPDO_PARAM_CALIB_STEPS = 10, /* int [0, 2^62]: releases per node the rigorous sigma is
                                    calibrated for; 0 = auto (docs); frozen */
    DPDO_PARAM_CALIB_TAIL = 11,  /* double [1e-12, 0.5]: tail probability of the automatic
                                    count; default 1e-6; frozen */
    DPDO_PARAM_DDA_ACTIVE = 100, /* int b in [1, n] (checked); default 2 (1 if n = 1); baseline n */
    DPDO_PARAM_DDA_SCHEME = 101, /* int DPDO_ROUND_*; default DPDO_ROUND_MATCHING */
    DPDO_PARAM_DDA_GOSSIP_COUNT = 102, /* int: count for the scheme, 0 = b (baseline: 2) */
    DPDO_PARAM_DDA_BERNOULLI_P = 103,  /* double (0, 1] for DPDO_ROUND_BERNOULLI; default 0.1 */
    DPDO_PARAM_DDA_SCHEDULE = 105,     /* int DPDO_DDA_SCHEDULE_*; default AUTO */
    DPDO_PARAM_DDA_PAPER_C = 107,      /* double: Theorem 1's constant, 32 (paper, default)
                                          or 160 (consistent with its proof) */
    DPDO_PARAM_DDA_ALL_COMPUTE = 108,  /* int 0/1: every node computes every round
                                          (the baseline's default is 1) */
    DPDO_PARAM_DDA_ALL_TRANSMIT = 109, /* int 0/1: DO-ADP's comparison variant
                                          (docs/design/notes/do-adp.md §5.6): static W of the
                                          network, every node sends z_j + a_t eta_j zeta_j every
                                          round and applies (5), (6); eta_j from the scheme
                                          (BERNOULLI: independent Bern(dda-bernoulli-p); otherwise a
                                          uniform dda-active subset); default 0 */
    DPDO_PARAM_ADP_P = 200,            /* double (0, 1]: activation probability p; default 1 */
    DPDO_PARAM_ADP_BETA = 201,     /* double [0, 1): momentum beta; default 0.15 (experiments) */
    DPDO_PARAM_ADP_GAMMA = 202,    /* double (0, 1]: consensus step gamma; default 0.05 */
    DPDO_PARAM_WOR_SCHEDULE = 400, /* int DPDO_WOR_*: who steps in a round; default SYNCHRONOUS */
    DPDO_PARAM_WOR_PASSES = 401,   /* int [1, 2^31-1]: passes over each node's data; default 1 */
    DPDO_PARAM_WOR_SMOOTH = 402,   /* double (0, 1e300] or NaN: smoothness mu of the
                                      per-sample loss; NaN (default) = 1 + the regularizer's
                                      modulus (unit-norm rows, logistic loss) */
    DPDO_PARAM_WOR_ETA_CAP = 403,  /* int 0/1: eta_t <- min(eta_t, 1/(2 mu)) (Lemma 4's
                                      condition); default 1. With 0 and DP on, eta_1 >
                                      1/(2 mu) fails prepare */
    DPDO_PARAM_FED_RHO = 300,      /* double (0, 1e300]: PRS parameter rho; default 1 */
    DPDO_PARAM_FED_EPOCHS = 301,   /* int [1, 2^31-1]: local steps N_e per round; default 5 */
    DPDO_PARAM_FED_SAMPLER = 302,  /* int DPDO_FED_SAMPLER_*; default BERNOULLI */
    DPDO_PARAM_FED_P = 303,        /* double (0, 1]: Bernoulli participation; default 1 */
    DPDO_PARAM_FED_ACTIVE = 304,   /* int [1, N]: agents per round for UNIFORM; default N */
    DPDO_PARAM_FED_DP_INIT = 305,  /* int 0/1: private runs draw x_i0 ~ N(0, 2 tau^2 /
                                      lambda_lo I) (Prop. 4's hypothesis); default 1 */
    /* Fed-PLT baselines (docs/algorithms/fed-baselines.md); DPDO_PARAM_STEP_SIZE is each
       one's local step (NaN = derived from the solver's lambda_lo/lambda_hi) */
    DPDO_PARAM_FEDPD_ETA = 310,       /* double (0, 1e300]: FedPD penalty/dual scale eta;
                                         default 1 */
    DPDO_PARAM_TAMUNA_ETA = 311,      /* double (0, 1]: TAMUNA control-variate step eta_T;
                                         default NaN = eta_max = p = 1/N_e (no compression) */
    DPDO_PARAM_LED_BETA = 312,        /* double (0, 1e300]: LED dual step beta_L; default NaN =
                                         1/(2 N_e) */
    DPDO_PARAM_5GCS_TAU = 313,        /* double (0, 1e300]: 5GCS dual step tau; default NaN =
                                         sqrt(mu (lambda_hi - mu)), or lambda_hi if that is 0 */
    DPDO_PARAM_5GCS_MU = 314,         /* double [0, 1e300]: 5GCS splitting modulus mu; default
                                         NaN = the solver's lambda_lo (0 if unknown) */
    DPDO_PARAM_5GCS_LOCAL_STEP = 315, /* double (0, 1e300]: 5GCS inner GD step; default NaN =
                                         2/(lambda_lo + lambda_hi - 2 mu + 2 tau) */
    /* DO-ADP's baselines (docs/algorithms/do-adp-baselines.md); DPDO_PARAM_STEP_SIZE is
       DPDO's c (gamma_t) and CPGT's eta_s; NaN = 0.001 */
    DPDO_PARAM_DPDO_SCHEDULE = 500,    /* int DPDO_DPDO_STEP_*; default GEOMETRIC */
    DPDO_PARAM_DPDO_STEP_DECAY = 501,  /* double (0, 1): qs in gamma_t = c qs^t; default 0.9999 */
    DPDO_PARAM_DPDO_NOISE_DECAY = 502, /* double (0, 1]: pn in b_t = b0 pn^t; default 0.99999 */
    DPDO_PARAM_DPDO_RADIUS = 503,      /* double (0, inf]: radius R of the l2 ball X; inf = no
                                          projection; default 1 */
    DPDO_PARAM_DPDO_FULL_GRAD = 504,   /* int 0/1: full local gradient instead of `batch`
                                          sampled rows; default 0 */
    DPDO_PARAM_CPGT_GAMMA = 510        /* double (0, 1]: CPGT-like consensus step; default 0.05 */
};

/* DPDO step schedules (DPDO_PARAM_DPDO_SCHEDULE). */
enum {
    DPDO_DPDO_STEP_GEOMETRIC = 0, /* gamma_t = c qs^t (Huang, Mitra, Vaidya 2015) */
    DPDO_DPDO_STEP_HARMONIC =
        1 /* gamma_t = c/(t+1) ("linearly decaying", docs/design/notes/do-adp.md §5.6) */
};

/* DP-WOR-SGD schedules (docs/design/notes/dp-wor-sgd.md §2.4). */
enum {
    DPDO_WOR_SYNCHRONOUS = 0, /* S2: every node with data left steps once per round, in node
                                 order; a later node sees the wG updated earlier this round */
    DPDO_WOR_SEQUENTIAL = 1   /* S1: one node per round, round robin */
};

/* Fed-PLT participation samplers. */
enum {
    DPDO_FED_SAMPLER_BERNOULLI = 0, /* agent i active with probability p, independently */
    DPDO_FED_SAMPLER_UNIFORM = 1    /* exactly m agents, uniformly without replacement */
};

/* DP-DDA schedule presets (a_t, gamma_t = step_size * t^step_power). */
enum {
    DPDO_DDA_SCHEDULE_AUTO = 0,     /* STRONG if the regularizer's modulus > 0, else CONVEX */
    DPDO_DDA_SCHEDULE_STRONG = 1,   /* a_t = t, gamma_t = 0        (Cor. 3.2/3.5) */
    DPDO_DDA_SCHEDULE_CONVEX = 2,   /* a_t = 1, gamma_t = sqrt(t)  (Cor. 3.4/3.6, gamma = 1) */
    DPDO_DDA_SCHEDULE_PAPER_L2 = 3, /* a_t = t, gamma_t = 20       (experiments, L2-SVM) */
    DPDO_DDA_SCHEDULE_PAPER_L1 = 4  /* a_t = 1, gamma_t = 0.01 sqrt(t) (experiments, L1-SVM) */
};

/* Set or get a parameter. Setters: DPDO_OK; DPDO_E_INVAL (NULL, NaN, out of
 * bounds, wrong setter type: the message says which); DPDO_E_UNSUPPORTED (key
 * unknown or not used by this algorithm); DPDO_E_STATE (EMPTY, DONE, FAILED,
 * or a frozen key after round 0). A rejected value leaves the old one.
 * Parameters survive reset(). Getters: DPDO_OK, DPDO_E_INVAL,
 * DPDO_E_UNSUPPORTED, DPDO_E_STATE (EMPTY). Since 0.1. */
DPDO_API int dpdo_algorithm_set_int(dpdo_algorithm *alg, int key, int64_t value);
DPDO_API int dpdo_algorithm_set_double(dpdo_algorithm *alg, int key, double value);
DPDO_API int dpdo_algorithm_get_int(const dpdo_algorithm *alg, int key, int64_t *value);
DPDO_API int dpdo_algorithm_get_double(const dpdo_algorithm *alg, int key, double *value);

/* Static facts about a key: type (0 int, 1 double, -1 unknown), name
 * ("dda-active"; NULL if unknown), bounds (DPDO_OK or DPDO_E_INVAL).
 * Thread-safe. Since 0.1. */
DPDO_API int dpdo_param_type(int key);
DPDO_API const char *dpdo_param_name(int key);
DPDO_API int dpdo_param_bounds(int key, double *lo, double *hi);

/* Listing the parameters (for bindings, command lines and documentation), without an instance:
 *     for (int k = dpdo_algorithm_type_param_next(t, 0); k > 0;
 *          k = dpdo_algorithm_type_param_next(t, k))
 *         printf("%s %s: %s\n", dpdo_param_name(k), dpdo_param_type(k) ? "double" : "int",
 *                dpdo_param_doc(k));
 * dpdo_algorithm_type_param_next returns the key after prev_key among the keys type t accepts
 * (those dpdo_algorithm_set_int/_double take on an algorithm of type t): prev_key 0 gives the
 * first; the common keys (1..99) come first in key order, then t's own keys. Returns a key > 0; 0
 * after the last; DPDO_E_INVAL when t is NULL or prev_key is not one of t's keys. The current
 * value (the default until set; some defaults depend on the number of nodes) of an algorithm that
 * is set up is read with dpdo_algorithm_get_int/_double.
 * dpdo_param_live: 1 if the key may be set while RUNNING, 0 if frozen after round 0, -1 if unknown.
 * dpdo_param_doc: one line of text (meaning, default), static storage; NULL if unknown.
 * No allocation; thread-safe. Since 0.2. */
DPDO_API int dpdo_algorithm_type_param_next(const dpdo_algorithm_type *t, int prev_key);
DPDO_API int dpdo_param_live(int key);
DPDO_API const char *dpdo_param_doc(int key);

/* The value parameter `key` starts with on an algorithm of type t set up with n_nodes nodes and
 * default options (dpdo_algorithm_options_init), without an instance: *value is the double (an
 * int key's value converted exactly). NaN means "derived at prepare" (the doc line says from
 * what). The common keys take the options' defaults; an algorithm set up with other options
 * starts from those. Returns DPDO_OK; DPDO_E_INVAL (t or value NULL, n_nodes outside
 * [1, 2^31-1]); DPDO_E_UNSUPPORTED (key is not one of t's); DPDO_E_NOMEM. Allocates a scratch
 * engine and frees it. Thread-safe. Since 0.2. */
DPDO_API int dpdo_algorithm_type_param_default(const dpdo_algorithm_type *t, int key,
                                               int64_t n_nodes, double *value);

/* The key of the parameter called name ("dda-active", "fed-rho", or one of an algorithm that has
 * no DPDO_PARAM_* constant), for dpdo_algorithm_set_int/_double and the dpdo_param_* facts.
 * Parameters an algorithm defines without a pinned constant get keys >= 65536 assigned by the
 * library: reach them by name (their numbers may change between versions). name is borrowed
 * (NUL-terminated, not kept). Returns the key (> 0); DPDO_E_INVAL (name NULL);
 * DPDO_E_UNSUPPORTED (no parameter has that name). No allocation; thread-safe. Since 0.3. */
DPDO_API int dpdo_param_find(const char *name);
/* ==== ADVANCED ZONE: plug-ins, Fed-PLT theory, host-chosen participation, node keys ==== */

/* ---- local solver ---------------------------------------------------------------- */

/* Use `solver` (BORROWED and retained: destroying it while installed is
 * deferred until the algorithm lets go, docs/abi.md; dimension d) as the
 * local solver of every agent (Fed-PLT and its baselines). NULL restores the
 * default, a solver owned by the algorithm: "noisy-gd" when options.noise_mode
 * is not DPDO_NOISE_NONE, else "gd" (version 0.1 always made "gd"). At
 * prepare the default solver's unknown "lambda_hi" is derived from the data
 * (the largest per-sample smoothness constant of the nodes' losses, e.g. max
 * row norm^2 / 4 for logistic; not for non-smooth losses or remote nodes) and
 * the privacy notes say so. In noisy modes prepare()
 * writes the solver's "tau" (and "clip" when options.clip is not +inf).
 * Only in READY. Returns DPDO_OK, DPDO_E_INVAL (dimension), DPDO_E_STATE,
 * DPDO_E_UNSUPPORTED (the algorithm has no local solver), DPDO_E_NOMEM.
 * Since 0.1. */
DPDO_API int dpdo_algorithm_set_solver(dpdo_algorithm *alg, dpdo_solver *solver);

/* Use `comp` (BORROWED and retained as the solver above; dimension d) to
 * compress every message (DO-ADP and
 * its compressed baselines). NULL restores the default "identity" (k = d).
 * Only in READY. Returns as dpdo_algorithm_set_solver. Since 0.1. */
DPDO_API int dpdo_algorithm_set_compressor(dpdo_algorithm *alg, dpdo_compressor *comp);

/* Use `policy` (BORROWED and retained as the solver above; created for at
 * least n nodes and states of d + 2
 * values: [w_L, mini-batch loss, previous action]) for the Local/Global
 * decisions of DP-WOR-SGD. NULL restores the default "always-global" (owned).
 * The policy is reset by dpdo_algorithm_reset and by prepare. Only in READY.
 * Returns DPDO_OK, DPDO_E_INVAL (shape), DPDO_E_STATE, DPDO_E_UNSUPPORTED (the
 * algorithm takes no policy), DPDO_E_NOMEM. Since 0.1. */
DPDO_API int dpdo_algorithm_set_policy(dpdo_algorithm *alg, dpdo_policy *policy);

/* ---- Fed-PLT theory helpers (pure functions, thread-safe) ------------------------------ */

/* The rate matrix of Fed-PLT's Proposition 1 (docs/design/notes/fed-plt.md §5.1) for
 * f_i in F(lambda_lo, lambda_hi) (0 < lambda_lo <= lambda_hi), PRS parameter
 * rho > 0 and a local-solver contraction c(N_e) >= 0 (e.g. from
 * dpdo_solver_contraction: chi^N_e for GD). paper_c = 1 uses the paper's
 * coupling 1/(lambda_lo + 1/rho), 0 (recommended) the corrected
 * 1/(1 + rho lambda_lo) (they agree at rho = 1). p_lo in (0, 1]: the
 * smallest participation probability. out[cap >= 8]: S (row-major, 4
 * values), ||S|| (the paper's guaranteed rate, Prop. 1), sr(S) (< 1:
 * stable), zeta (PRS contraction), sigma = sqrt(1 - p_lo + p_lo ||S||^2)
 * (Prop. 2). Returns DPDO_OK or DPDO_E_INVAL. Since 0.1. */
DPDO_API int dpdo_fedplt_rate(double lambda_lo, double lambda_hi, double rho, double contraction,
                              int32_t paper_c, double p_lo, double *out, int64_t cap);
/* The additive error bound of noisy GD (Corollary 1, docs/design/notes/fed-plt.md §5.5):
 * nu = tau sqrt(10 n N gamma) (1 - chi^epochs) / (1 - chi), for dimension n,
 * N agents, step gamma, per-step contraction chi in [0, 1). The asymptotic
 * bound is sqrt(p_hi/p_lo) nu / (1 - sigma). Returns DPDO_OK or
 * DPDO_E_INVAL. Since 0.1. */
DPDO_API int dpdo_fedplt_noise_error(double tau, int64_t n, int64_t N, double gamma, double chi,
                                     int64_t epochs, double *nu);

/* ---- participation chosen by the host ------------------------------------------------ */

/* Use flags[n] (1 = computes) as the computing set of the NEXT step() only,
 * instead of the algorithm's own draw: intrinsic participation such as slow
 * agents (Fed-PLT, docs/design/notes/fed-plt.md §2.4), or scripted experiments. At least one node.
 * The flags are copied. NULL cancels. The activation stays public: active
 * nodes are charged as usual and no amplification by the host's choice is
 * claimed. DP-DDA pairs the chosen nodes in ascending order under
 * DPDO_ROUND_MATCHING (count must be even). Returns DPDO_OK, DPDO_E_INVAL (n,
 * flags not 0/1, none active), DPDO_E_STATE (EMPTY, DONE, FAILED),
 * DPDO_E_UNSUPPORTED (the algorithm chooses its own nodes). Since 0.1. */
DPDO_API int dpdo_algorithm_set_next_active(dpdo_algorithm *alg, const int32_t *flags, int64_t n);

/* Per-node Bernoulli activation probabilities p[n] in (0, 1] (Fed-PLT's
 * Bernoulli(p_i) participation, DO-ADP's activation), copied; NULL = the
 * common probability of the algorithm's key. The rigorous calibration plans
 * for the most active node. Only in READY. Returns DPDO_OK, DPDO_E_INVAL,
 * DPDO_E_STATE, DPDO_E_UNSUPPORTED, DPDO_E_NOMEM. Since 0.1. */
DPDO_API int dpdo_algorithm_set_node_probabilities(dpdo_algorithm *alg, const double *p, int64_t n);

/* Key node `node`'s private random streams (its sample choice, its privacy
 * noise, its random initial values) by the 256-bit `key` (32 bytes, copied):
 * they become the ChaCha20-IETF keystream under it (docs/rng.md). In the
 * default DPDO_RANDOMNESS_SECURE mode every hosted node of a private run gets
 * a fresh key from the operating system's entropy at prepare (and again at
 * reset); a key set here replaces that, e.g. to resume a run or to let a
 * trusted party replay it, and is kept across reset. In
 * DPDO_RANDOMNESS_REPRODUCIBLE mode nodes without a key use Philox under
 * options.seed. In a run spread over processes each process keys only the
 * nodes it hosts (before dpdo_mpi_attach); keys are never sent. A
 * one-process run with the same keys reproduces it bit for bit. Public
 * randomness (activation, edges, compression) stays keyed by the seed, so all
 * processes agree on it. Only in READY at round 0; discards an earlier
 * prepare. Returns DPDO_OK, DPDO_E_INVAL (NULL alg or key, node out of
 * range), DPDO_E_STATE, DPDO_E_NOMEM. Not thread-safe on one handle.
 * Since 0.2. */
DPDO_API int dpdo_algorithm_set_node_key(dpdo_algorithm *alg, int64_t node,
                                         const unsigned char key[32]);

/* Deprecated in 0.2 (kept for the ABI): the same as
 * dpdo_algorithm_set_node_key with the key BLAKE2b-256("libdpdo node secret
 * v1" || secret as 8 little-endian bytes). Only 64 bits of secret: use
 * dpdo_algorithm_set_node_key. Returns as set_node_key, and
 * DPDO_E_UNSUPPORTED if libsodium cannot be initialised. Since 0.1. */
DPDO_API int dpdo_algorithm_set_node_secret(dpdo_algorithm *alg, int64_t node, uint64_t secret);

/* ==== CORE ZONE: stepping, progress and cancel ==== */

/* ---- stepping ------------------------------------------------------------- */

/* Run exactly one round for every node: sample, compute, perturb, exchange,
 * account. Prepares first when READY (a configuration error then leaves the
 * algorithm READY). Returns DPDO_ROUND (a round ran), DPDO_DONE (no round ran:
 * max rounds reached, the budget guard refused the next round, or the
 * tolerance was met; see stop_reason), or an error (DPDO_E_CALLBACK,
 * DPDO_E_NUMERIC ...: state FAILED, everything as after the previous round,
 * the message names round and node). DONE/FAILED: E_STATE until reset().
 * Allocates nothing after the first round. Since 0.1. */
DPDO_API int dpdo_algorithm_step(dpdo_algorithm *alg);
/* step() up to max_steps times (<= 0: until DONE or an error); *steps (may be
 * NULL) = rounds run. Returns the last status of step(), or DPDO_E_CANCELED
 * when the progress callback (dpdo_algorithm_set_progress) asked to stop: the
 * run is intact and continues with the next step/run. Since 0.1. Cancel: Since 0.2. */
DPDO_API int dpdo_algorithm_run(dpdo_algorithm *alg, int64_t max_steps, int64_t *steps);
/* Back to round 0: initial iterates, zero counters, this run's ledger charges
 * removed, no stop reason, same RNG streams. Parameters and the prepared sigma
 * are kept. Returns DPDO_OK, DPDO_E_INVAL (NULL), DPDO_E_STATE (EMPTY), or
 * DPDO_E_STATE if the ledger no longer holds this run's charges (someone
 * reset it). Since 0.1. */
DPDO_API int dpdo_algorithm_reset(dpdo_algorithm *alg);
/* Rounds completed (0 for NULL). Since 0.1. */
DPDO_API int64_t dpdo_algorithm_round(const dpdo_algorithm *alg);
/* DPDO_STOP_* of the last DONE (NONE otherwise; -1 for NULL). Since 0.1. */
DPDO_API int dpdo_algorithm_stop_reason(const dpdo_algorithm *alg);

/* ---- progress and cancel ---------------------------------------------------- */

/* What dpdo_algorithm_run hands to a progress callback. Since 0.2. */
typedef struct dpdo_progress {
    size_t struct_size;  /* sizeof(dpdo_progress) as compiled by the library               0.2 */
    int64_t round;       /* rounds completed                                               0.2 */
    int64_t max_rounds;  /* options.max_rounds (the planned horizon)                       0.2 */
    int64_t steps;       /* rounds run by this dpdo_algorithm_run call                     0.2 */
    int32_t status;      /* status of the last step (DPDO_ROUND, DPDO_DONE)                0.2 */
    int32_t stop_reason; /* DPDO_STOP_* (NONE while running)                               0.2 */
    double epsilon;      /* rigorous epsilon spent at options.delta (NaN if not private
                            or not asked for: DPDO_PROGRESS_EPSILON)                       0.2 */
    double delta;        /* the delta epsilon holds at                                     0.2 */
    double objective;    /* F at the averaged output (NaN unless DPDO_PROGRESS_OBJECTIVE)  0.2 */
} dpdo_progress;

/* flags of dpdo_algorithm_set_progress. Since 0.2. */
enum {
    DPDO_PROGRESS_EPSILON = 1,  /* fill dpdo_progress.epsilon (an accountant query) */
    DPDO_PROGRESS_OBJECTIVE = 2 /* fill dpdo_progress.objective (one pass over the data) */
};

/* Progress callback: return 0 to go on, non-zero to stop the run cleanly
 * between rounds (dpdo_algorithm_run then returns DPDO_E_CANCELED and the
 * algorithm stays RUNNING at that round: step or run again to continue). Called
 * on the thread that called dpdo_algorithm_run. Must not call
 * dpdo_algorithm_step/run/reset/setup/destroy on the same handle (from 0.3 on
 * they return DPDO_E_MISUSE, and destroy is ignored); read-only calls
 * (getters, dpdo_algorithm_privacy, dpdo_algorithm_save) are allowed. Since 0.2. */
typedef int (*dpdo_progress_fn)(const dpdo_progress *p, void *user);

/* Register fn (NULL = none) for dpdo_algorithm_run: it is called after every
 * `every` rounds (>= 1), after the last round of the call (DONE, max_steps
 * reached) and after a failed step (status < 0; the callback's return value is
 * then ignored). `flags`: DPDO_PROGRESS_* bits (0 = round counters only, free).
 * `user` is passed through, BORROWED. Kept across reset and setup. Returns
 * DPDO_OK, DPDO_E_INVAL (NULL alg, every < 1, unknown flag bits). Not
 * thread-safe for the same handle (from 0.3 on a call from another thread during a call on the
 * handle returns DPDO_E_MISUSE); it may be called from the progress callback itself, to change
 * `every` or the callback for the rest of the run. Since 0.2. */
DPDO_API int dpdo_algorithm_set_progress(dpdo_algorithm *alg, dpdo_progress_fn fn, void *user,
                                         int64_t every, int32_t flags);

/* ==== ADVANCED ZONE: the host's own thread pool ==== */

/* ---- threads: the host's own pool ----------------------------------------------
 * By default the library runs the independent per-node work of a round on its own
 * POSIX threads (options.num_threads; docs/architecture.md "Threads"). A host with a
 * pool of its own (OpenMP team, TBB arena, a job system) can run that work instead:
 *
 *   run(host, ntasks, task, arg) must call task(arg, k) exactly once for every k in
 *   [0, ntasks), on any threads, concurrently or not, and return only after all of
 *   them have returned. 1 <= ntasks <= width. It is called from inside
 *   dpdo_algorithm_step/run on the calling thread; a task never calls back into the
 *   host or into libdpdo's public API, and never blocks on other tasks. Since 0.2. */
typedef void (*dpdo_task_fn)(void *arg, int32_t task);
typedef void (*dpdo_parallel_fn)(void *host, int32_t ntasks, dpdo_task_fn task, void *arg);

/* Hand in the host's pool: `run` with up to `width` concurrent tasks (1 .. 256;
 * options.num_threads is then ignored), `host` BORROWED (must outlive the handle or the
 * next set_pool). run = NULL goes back to the library's own threads. Takes effect at
 * the next dpdo_algorithm_setup: call it before setup (EMPTY or READY). The host pool
 * counts as "the host vouches for its callbacks": user losses, regularizers and
 * compressors then run concurrently too. Results are bit-identical to a serial run
 * whatever the pool does. Returns DPDO_OK, DPDO_E_INVAL (NULL alg, width out of range),
 * DPDO_E_STATE (RUNNING). Not thread-safe for the same handle. Since 0.2. */
DPDO_API int dpdo_algorithm_set_pool(dpdo_algorithm *alg, dpdo_parallel_fn run, void *host,
                                     int32_t width);

/* Threads the rounds use (1 before prepare, or when the run is serial: see
 * options.num_threads); 0 for NULL. Since 0.2. */
DPDO_API int32_t dpdo_algorithm_threads(const dpdo_algorithm *alg);

/* ==== CORE ZONE: results: iterates, privacy, communication, objective ==== */

/* ---- copy-out getters (never change state, never allocate) ----------------- */

/* x_i of `node`, or DPDO_NODE_ALL: (1/n) sum_i x_i (summed in node order),
 * into x[dim]. Returns DPDO_OK, DPDO_E_INVAL (NULL, node out of range, dim
 * != the algorithm's dimension), DPDO_E_STATE (EMPTY). Since 0.1. */
DPDO_API int dpdo_algorithm_get_iterate(const dpdo_algorithm *alg, int64_t node, double *x,
                                        int64_t dim);
/* The algorithm's output for `node` (DP-DDA: the a_t-weighted average
 * x~_i = s_i / A_t; at round 0 the initial iterate), or DPDO_NODE_ALL: the
 * average over nodes (the point the paper plots). Returns as get_iterate. Since 0.1. */
DPDO_API int dpdo_algorithm_get_output(const dpdo_algorithm *alg, int64_t node, double *x,
                                       int64_t dim);
/* A named state row (DP-DDA: "z", "x", "s"). Unknown name: DPDO_E_INVAL with
 * the list of names. Returns as get_iterate. Since 0.1. */
DPDO_API int dpdo_algorithm_get_state(const dpdo_algorithm *alg, const char *name, int64_t node,
                                      double *x, int64_t dim);
/* Which nodes computed in the last completed round: flags[n] = 1/0 (all 0 at
 * round 0). Returns as get_iterate (n must equal the node count). Since 0.1. */
DPDO_API int dpdo_algorithm_get_active(const dpdo_algorithm *alg, int32_t *flags, int64_t n);

/* ---- privacy --------------------------------------------------------------- */

/* Epsilon spent so far by `node` (DPDO_NODE_ALL: the worst node).
 *   DPDO_PRIVACY_RIGOROUS: the accountant over its ledger at options.delta
 *     (every charge in the ledger, including charges made by others). +inf
 *     with DPDO_NOISE_NONE or sigma = 0.
 *   DPDO_PRIVACY_PAPER: the paper's bound after round() rounds (DP-DDA: the
 *     running bound of Remark 3.1 of Theorem 1); the same for every node.
 *     *valid = 0 when a precondition of the theorem fails (see notes).
 * *delta (may be NULL): the delta the figure holds at (PAPER: the delta the
 * paper's proof delivers). *valid (may be NULL): 1 or 0. Returns DPDO_OK,
 * DPDO_E_INVAL, DPDO_E_STATE (EMPTY, or not yet prepared), DPDO_E_UNSUPPORTED
 * (no paper bound for this algorithm), DPDO_E_NOMEM. May allocate (accountant
 * queries do). Since 0.1. */
DPDO_API int dpdo_algorithm_privacy(dpdo_algorithm *alg, int kind, int64_t node, double *eps,
                                    double *delta, int32_t *valid);
/* How many releases (ledger charges) of `node` the rigorous calibration planned sigma for
 * (DPDO_NODE_ALL: the largest over the nodes, the count sigma covers). The count is a
 * high-probability bound on the node's charged releases under the activation scheme and the
 * graph: the (1 - calib-tail) quantile of Binomial(max_rounds, pi_i), pi_i = the probability that
 * node i computes in a round (DP-DDA: from the gossip scheme and the node's degree; DO-ADP,
 * Fed-PLT: the activation probability), times the releases per round; exact counts where the
 * algorithm fixes them (DP-WOR-SGD: passes; dp-sgd-wr: 5 uses); the calib-steps key when set.
 * The budget guard still stops the run before any node's epsilon exceeds the target, so a node
 * that computes more often than planned ends the run early (probability <= calib-tail per node).
 * Valid after prepare (step() prepares). Returns DPDO_OK; DPDO_E_INVAL (NULL, node out of
 * range); DPDO_E_STATE (EMPTY or not prepared); DPDO_E_UNSUPPORTED (no rigorous calibration:
 * noise mode NONE, FIXED or PAPER, or sigma = 0); the message names the problem. Allocates
 * nothing; writes only *count and the handle's message (one thread per handle). Since 0.2. */
DPDO_API int dpdo_algorithm_planned_releases(dpdo_algorithm *alg, int64_t node, int64_t *count);
/* Who produced the figure: the accountant behind the latest rigorous figure
 * ("rdp", "pld", "exact"; under the "auto" accountant the member that gave
 * the smallest epsilon, see dpdo_accountant_source; the accountant's own name
 * before any query) or the paper type ("dp-dda-thm1"); "" if none. Never
 * NULL; valid until the next privacy query. Since 0.1. The auto
 * accountant's member: Since 0.2. */
DPDO_API const char *dpdo_algorithm_privacy_source(const dpdo_algorithm *alg, int kind);
/* "; "-separated notes about the guarantee: violated paper preconditions,
 * "noise disabled: not private", "active set treated as public". "" if none,
 * never NULL. Valid after prepare. Since 0.1. */
DPDO_API const char *dpdo_algorithm_privacy_notes(const dpdo_algorithm *alg);
/* Where the run's randomness comes from, one line: "secure: ..." (private
 * streams ChaCha20 under per-node keys, exact discrete grid noise) or
 * "reproducible: ..." (Philox under options.seed, continuous noise; epsilon
 * holds only against parties who do not know the seed). "" for NULL or
 * EMPTY; never NULL; static storage. Accurate after prepare. Since 0.2. */
DPDO_API const char *dpdo_algorithm_randomness_source(const dpdo_algorithm *alg);

/* ---- communication counters ----------------------------------------------- */

/* Sent by `node` since round 0 (DPDO_NODE_ALL: the total;
 * DPDO_NODE_COORDINATOR: a coordinator): messages (one per sender/receiver
 * pair per round; a node's own term is not a message), scalars (values
 * carried; indices not counted), bytes (payload: 8 per value, plus 4 per
 * index when d < 2^31, else 8; no headers). Any output may be NULL. Returns
 * DPDO_OK, DPDO_E_INVAL, DPDO_E_STATE (EMPTY). Since 0.1. */
DPDO_API int dpdo_algorithm_comm(const dpdo_algorithm *alg, int64_t node, int64_t *messages,
                                 int64_t *scalars, int64_t *bytes);

/* ---- objective helpers ------------------------------------------------------ */

/* F at a point of the run: `point` DPDO_POINT_ITERATE or OUTPUT of `node`
 * (DPDO_NODE_ALL: the average). F = sum_i omega_i f_i + h with options'
 * weighting. One pass over all data; allocates nothing; may call user loss
 * callbacks (DPDO_E_CALLBACK) and reports non-finite values (DPDO_E_NUMERIC).
 * Does not change the run. Returns DPDO_OK, DPDO_E_INVAL, DPDO_E_STATE
 * (EMPTY), DPDO_E_CALLBACK, DPDO_E_NUMERIC. Since 0.1. */
DPDO_API int dpdo_algorithm_objective(dpdo_algorithm *alg, int point, int64_t node, double *F);
/* F(point) - fstar, fstar finite (e.g. from dpdo_reference_solve). Since 0.1. */
DPDO_API int dpdo_algorithm_suboptimality(dpdo_algorithm *alg, int point, int64_t node,
                                          double fstar, double *gap);
/* F at any x[dim]. Since 0.1. */
DPDO_API int dpdo_algorithm_objective_at(dpdo_algorithm *alg, const double *x, int64_t dim,
                                         double *F);

#ifdef __cplusplus
}
#endif
#endif /* DPDO_ALGORITHM_H */
