/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal interface between the algorithm engine (lib/engine) and the
 * algorithms (lib/alg). Never installed. See docs/architecture.md "Engine".
 *
 * An algorithm is a vtable. The engine owns the life cycle, the parameters,
 * the state arena, the plan of a round, the message transport, the privacy
 * plumbing (events, guard, ledger charges) and the counters; the algorithm
 * supplies the mathematics in plan/local/combine/commit. One round:
 *
 *   plan    (public randomness only: who computes, W^(t), message patterns)
 *   guard   (engine: budget allowances; may end the run with DONE(BUDGET))
 *   per stage: local(node) for the stage's nodes -> (distributed: transport
 *              exchange, see dist.c) -> combine(node); all writes go to round scratch
 *   agree   (distributed: the transport agrees on the lowest failing node)
 *   commit  (cannot fail: scratch -> state; ledger, counters, round += 1)
 */
#ifndef DPDO_ENGINE_IMPL_H
#define DPDO_ENGINE_IMPL_H

#include "../core/core_impl.h"
#include "../net/net_impl.h"
#include "../privacy/privacy_impl.h"
#include "dpdo/algorithm.h"
#include "dpdo/reference.h"
#include "dpdo/transport.h"
#include <stddef.h>
#include <stdint.h>

#define DPDO__MAX_BLOCKS 8
#define DPDO__MAX_SCRATCH 16
#define DPDO__MAX_STAGES 4
#define DPDO__NSLOTS 64 /* parameter slots of a handle: the common ones and its type's own */

typedef struct dpdo__eng dpdo__eng;

/* Checkpoint serializer (lib/engine/checkpoint.c, docs/checkpoint.md). One function describes a
 * piece of state and runs three times: when saving (the arrays are appended to the file), when
 * checking a file (kind and count must match, index values must lie in [lo, hi]; nothing is
 * written) and when installing it (the file's values are copied into the arrays). Errors are
 * sticky and carry a message; the functions do nothing after one. */
typedef struct dpdo__ser dpdo__ser;
void dpdo__ser_i64(dpdo__ser *s, const char *name, int64_t *p, int64_t count);
void dpdo__ser_i32(dpdo__ser *s, const char *name, int32_t *p, int64_t count);
void dpdo__ser_f64(dpdo__ser *s, const char *name, double *p, int64_t count);
/* int64 values that must lie in [lo, hi] (indices, counters). */
void dpdo__ser_idx(dpdo__ser *s, const char *name, int64_t *p, int64_t count, int64_t lo,
                   int64_t hi);

/* One state variable: rows x cols doubles, row-major, 64-byte aligned. */
typedef struct dpdo__block {
    const char *name; /* getter name ("z", "x", "s"), or NULL for scratch-only blocks */
    int64_t rows, cols;
    double *cur;
} dpdo__block;

/* Message patterns. The counters and the transport's send/receive lists are
 * derived from them; algorithm code never sends. */
enum {
    DPDO__PAT_ROUND = 1,  /* senders = computing nodes; receivers = off-diagonal nonzeros of
                             the column of W^(t) (implicit full average: the other b-1) */
    DPDO__PAT_NET = 2,    /* senders = computing nodes; receivers = graph neighbours */
    DPDO__PAT_GATHER = 3, /* every computing node sends one message to the coordinator */
    DPDO__PAT_BCAST = 4,  /* the coordinator sends one message to every computing node */
    DPDO__PAT_COUNTS = 5  /* the algorithm counts: cmsg[src], cval[src] (n + 1 rows, row n = the
                             coordinator) written during local(); dense values, 8 bytes each */
};
/* plan() may return this instead of DPDO_OK: no node may act within its budget -> DONE(BUDGET) */
#define DPDO__PLAN_BUDGET 1000
/* Who runs local/combine in a stage. */
enum {
    DPDO__RUN_COMPUTING = 0,
    DPDO__RUN_COORD = 1,
    DPDO__RUN_ALL = 2 /* every node, in node order */
};
enum { DPDO__PAY_DENSE = 0, DPDO__PAY_SPARSE = 1 };

typedef struct dpdo__xpat {
    int32_t kind, payload, slot;
    int64_t k;           /* SPARSE: pairs per message */
    const int64_t *kvar; /* SPARSE: pairs per message by sender (n), written by local(); NULL = k */
    const int64_t *cmsg, *cval; /* COUNTS */
    const dpdo__round *r;       /* ROUND */
    /* What moves between processes in a distributed run (dpdo/transport.h); ignored in one
     * process. DENSE: sender j's message is d doubles at (double *)buf + j * ld (BCAST: at buf).
     * SPARSE: kvar[j] indices at ibuf + j * ld and values at (double *)buf + j * ld (ld >= the
     * largest count); kvar itself is shared with every process. buf NULL: the pattern only
     * counts (the algorithm moves nothing, or a COUNTS pattern without a route). */
    void *buf;
    int64_t ld;
    int64_t *ibuf;
    int64_t *kbuf;        /* with ibuf: the count of sender j at kbuf[j] travels with its
                             message (kvar may be NULL for a pattern counted as dense) */
    int32_t route;        /* COUNTS: DPDO__ROUTE_NET_ALL = every node sends its buf row to its
                             graph neighbours; 0 = nothing moves */
    int32_t local_counts; /* COUNTS: cmsg/cval were added to in local(): summed over processes */
} dpdo__xpat;
enum { DPDO__ROUTE_NET_ALL = 1 };

typedef struct dpdo__piece {
    void *p;
    int64_t bytes;
} dpdo__piece;

typedef struct dpdo__stage {
    int32_t who; /* DPDO__RUN_*; COORD: local/combine once with node = -2 */
    int32_t npat;
    dpdo__xpat pat[2];
    /* Distributed runs (ignored in one process):
     * seq: local() runs node after node (ascending) and reads what the previous node wrote; the
     *   pieces baton[] travel from process to process with the turn, and the last holder sends
     *   them to all before combine().
     * share[]: per-node rows (row bytes at p + i * bytes) written by local() that every
     *   process needs (public bookkeeping such as pass counters); shared after the stage.
     * A COORD stage's local() runs on the coordinator's process only, its combine() on every
     *   process (for the receivers of what the coordinator sent). */
    int32_t seq;
    int32_t nbaton, nshare;
    dpdo__piece baton[3];
    dpdo__piece share[8];
} dpdo__stage;

typedef struct dpdo__charge {
    int32_t ev;
    int64_t node, count;
} dpdo__charge;

typedef struct dpdo__plan {
    uint64_t t; /* 1-based round number (the streams' round id) */
    int64_t ncomp;
    int64_t *comp;          /* computing nodes, ascending (n capacity) */
    unsigned char *is_comp; /* n flags */
    int32_t nstages;
    dpdo__stage stage[DPDO__MAX_STAGES];
    int64_t ncharges;
    dpdo__charge *charge; /* 2n capacity: at most one charge per node from plan() and one from
                             local() (dpdo__plan_add_charge), so the list cannot overflow */
    unsigned char *cmark; /* n: this round's charges of each node (1: from plan, 2: from local) */
    int32_t in_local;     /* 1 while the stages run: a charge now is a local one */
    int32_t charge_err;   /* sticky for the round: a charge was refused (the round fails before
                             anything is released, even if the caller dropped the status) */
} dpdo__plan;

/* Bench probes at phase boundaries; lib/ never reads a clock. */
enum {
    DPDO__PH_PLAN = 0,
    DPDO__PH_GRAD,
    DPDO__PH_NOISE,
    DPDO__PH_EXCHANGE,
    DPDO__PH_GOSSIP,
    DPDO__PH_PRIMAL,
    DPDO__PH_COMMIT,
    DPDO__PH_COUNT
};
typedef void (*dpdo__probe_fn)(void *user, int phase);

/* One algorithm parameter (dpdo_param_*). An algorithm defines its own in a table in its file
 * (dpdo__alg_vt.params; the last row is {.name = NULL}). key: a public DPDO_PARAM_* constant, or
 * 0: the library assigns one (DPDO__KEY_AUTO + (FNV-1a of the type's name mod 2^16) *
 * DPDO__KEY_AUTO_SPAN + row; users find it with dpdo_param_find). A row {.same_as = &row, .def}
 * accepts a parameter another table defines (the Fed-PLT baselines take Fed-PLT's; it must have
 * a public key); its own def applies. def: the value a handle starts with (the type's defaults()
 * may then change it, e.g. by the node count). Rows are positional up to doc, so a row reads like
 * the listing it documents. */
typedef struct dpdo__pdef {
    int32_t key;
    const char *name;
    int32_t type;    /* 0 int, 1 double */
    double lo, hi;   /* inclusive bounds */
    int32_t live;    /* 1: settable while RUNNING */
    const char *doc; /* one line: meaning and default (dpdo_param_doc) */
    double def;
    int32_t flags; /* DPDO__PF_* */
    const struct dpdo__pdef *same_as;
} dpdo__pdef;
enum {
    DPDO__PF_NAN = 1,  /* NaN may be set (= the algorithm's preset) */
    DPDO__PF_NODES = 2 /* an int that may not exceed the node count */
};
#define DPDO__KEY_AUTO 65536
#define DPDO__KEY_AUTO_SPAN 256

/* How the tests run a type on a small problem (4 to 6 nodes of a few dozen rows, a complete
 * network, an l2 regularizer, a few rounds): the registry-driven tests (checkpoint, secure,
 * defaults, split, MPI, threads) loop over dpdo_algorithm_type_next and take a type's setup from
 * here instead of naming it. NULL fixture: a private type that needs nothing beyond defaults. */
typedef struct dpdo__fixture {
    int32_t nonprivate;         /* 1: refuses noise and a regularizer (a non-private baseline) */
    const char *solver;         /* local solver the tests attach (dpdo_solver_type_find), or NULL */
    const char *solver_private; /* ... in a run with noise (NULL: solver) */
    double solver_step;         /* its "step" (0: its default) */
    struct {
        const char *name; /* dpdo_param_find */
        double value;
    } set[4];                  /* parameters set after setup (name NULL: none) */
    const char *notes;         /* a phrase the privacy notes of a default run contain, or NULL */
    const char *notes_private; /* ... of a default private run, or NULL */
    int32_t noise_in_solver;   /* 1: the noise is drawn inside the local solver (no per-release
                                  tap of the engine's mechanism) */
    uint64_t golden[3]; /* tests/test_split_golden.c's hashes of the type's run (one process, one
                           process over the transport, two processes; DPDO_GOLDEN_PRINT=1 prints
                           them), for a type its table does not list; 0: none */
} dpdo__fixture;

typedef struct dpdo__alg_vt {
    const char *name, *title;
    const dpdo__fixture *fixture; /* the tests' setup (see dpdo__fixture), or NULL */
    size_t priv_size;
    const dpdo__pdef *params;            /* its own parameters (see dpdo__pdef), or NULL */
    const char *paper;                   /* paper-bound type name, or NULL */
    const char *paper_eps, *paper_delta; /* its outputs reported by dpdo_algorithm_privacy */
    const char *paper_round;             /* its parameter that takes the round count */
    int needs_net;                       /* 1: setup requires a network with n nodes */
    int uses_solver;     /* 1: a local solver (dpdo_solver) runs on the computing nodes */
    int uses_compressor; /* 1: messages go through a compressor (dpdo_compressor) */
    int uses_policy;     /* 1: a Local/Global decision policy (dpdo_policy) */
    int accepts_mask;    /* 1: plan() honours e->inj_active (dpdo_algorithm_set_next_active) */
    int distributable;   /* 1: the stages describe what moves (buf/seq/share): runs over a transport
                          */
    int local_charges;   /* 1: local() may add charges (dpdo__plan_add_charge) */
    int parallel; /* 1: local() and combine() of distinct nodes write only their own rows and the
                     thread slot's workspace (dpdo__par_slot): the per-node work of a round may
                     run on threads (par.c; with uses_solver, only over a concurrent solver) */
    /* a block (by name) whose rows the coordinator needs at round 0 and reads from every node
     * (Fed-PLT: z_i0); in a distributed run with node secrets they are uploaded before round 1 */
    const char *init_gather;
    int node_probs; /* 1: plan() draws Bernoulli activation with e->node_p[i] when set */
    /* optional: 1 when the run has nothing left to do (stop reason DPDO_STOP_PASSES) */
    int (*finished)(dpdo__eng *e, void *priv);
    /* optional: set the round-dependent parameters of the paper object (instead of paper_round) */
    int (*paper_update)(dpdo__eng *e, void *priv, dpdo_paper *paper);
    /* parameter defaults (e->pi / e->pd already hold the common defaults) */
    void (*defaults)(dpdo__eng *e);
    /* setup: validate the problem, declare blocks and scratch (dpdo__eng_block,
     * dpdo__eng_scratch). May allocate into priv (freed by release). */
    int (*configure)(dpdo__eng *e, void *priv);
    /* validate the final parameters; fill e->pv (sigma, events, samplers,
     * paper parameters). May allocate (freed by release). */
    int (*prepare)(dpdo__eng *e, void *priv);
    /* the round-0 state; also used by reset. Cannot fail. */
    void (*init)(dpdo__eng *e, void *priv);
    int (*plan)(dpdo__eng *e, void *priv, dpdo__plan *p);
    int (*local)(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t stage, int64_t node);
    /* optional (NULL: nothing to combine after the exchange) */
    int (*combine)(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t stage, int64_t node);
    /* finite check of what commit will install: DPDO_OK or DPDO_E_NUMERIC */
    int (*check)(dpdo__eng *e, void *priv, const dpdo__plan *p);
    void (*commit)(dpdo__eng *e, void *priv, const dpdo__plan *p);
    void (*output)(const dpdo__eng *e, const void *priv, int64_t node, double *x);
    void (*release)(dpdo__eng *e, void *priv);
    /* optional: the private state that changes between rounds and lives outside the state
     * arena (checkpoints, dpdo_algorithm_save). Called after prepare, in a fixed order. */
    void (*ser_priv)(dpdo__eng *e, void *priv, dpdo__ser *s);
    /* optional: an algorithm whose commit swaps state blocks with scratch regions instead of
     * copying puts the arena back in the layout configure() made. move = 1: the data too, with
     * the arena's bytes then exactly those the copying commit would have left (before a save,
     * and for tests that compare raw arenas); move = 0: the pointers only (the arena's bytes are
     * about to be overwritten with a canonical image: a load). */
    void (*canonical)(dpdo__eng *e, void *priv, int move);
} dpdo__alg_vt;

struct dpdo_algorithm_type {
    const dpdo__alg_vt *vt;
};

enum { DPDO__MAX_NOTES = 48 };
/* Privacy state of a run (filled by the algorithm's prepare, used by the engine). */
typedef struct dpdo__priv_state {
    int32_t private_run; /* 0: no noise (NONE or sigma = 0) */
    double sigma;        /* noise std in use; NaN before prepare */
    double sens;         /* sensitivity of one release */
    int32_t nev;
    dpdo__event_desc *ev; /* n capacity (engine-allocated): distinct events of the run */
    int32_t *node_ev;     /* n: event index of each node */
    int64_t *allow;       /* n: releases the guard allows (INT64_MAX = off) */
    int64_t *used;        /* n: releases this run charged (per node, all events) */
    int64_t *planned;     /* n: releases per node the rigorous sigma was planned for (0: none;
                           * dpdo_algorithm_planned_releases) */
    int64_t *charged;     /* nev x n: charges to remove at reset (allocated at prepare) */
    int64_t *released;    /* n: data-dependent noisy releases of this round (dpdo__eng_noise_*),
                           * checked against the round's charges */
    dpdo_paper *paper;    /* paper-bound object, or NULL */
    double guard_eps;     /* guard threshold at options.delta (inf = off) */
    int32_t calib_boost;  /* prepare's retry count: secure calibrations start this much higher
                             (eng_privacy.c, fit_charged) */
    char notes[8192];
    /* the notes one by one, for the log (eng_log.c): note k ends at notes[note_end[k]], has
     * level note_level[k] (DPDO_LOG_NOTE or _WARN); nnotes <= DPDO__MAX_NOTES */
    int32_t nnotes;
    uint16_t note_end[DPDO__MAX_NOTES];
    unsigned char note_level[DPDO__MAX_NOTES];
} dpdo__priv_state;

struct dpdo__eng {
    const dpdo__alg_vt *vt;
    void *priv;
    char *err;                /* the handle's message buffer */
    dpdo_algorithm_options o; /* validated copy */
    int64_t pi[DPDO__NSLOTS];
    double pd[DPDO__NSLOTS];
    struct dpdo_node **nodes;
    int64_t n, d;
    int64_t *q;   /* shard rows per node */
    int64_t qmin; /* the smallest shard */
    struct dpdo_network *net;
    int retained; /* nodes, reg and acc retained by setup (borrowed handles, core_impl.h) */
    struct dpdo_regularizer *reg;
    dpdo_accountant *acc;
    dpdo_ledger *ledger;
    dpdo_rng *rng;              /* owned built-in Philox keyed by options.seed */
    dpdo_reference *ref;        /* objective helper */
    struct dpdo_solver *solver; /* local solver (borrowed, or owned when own_solver) */
    int own_solver;
    double auto_lambda_hi;        /* > 0: the lambda_hi the engine derived for its own solver */
    struct dpdo_compressor *comp; /* message compressor (borrowed, or owned when own_comp) */
    int own_comp;
    struct dpdo_policy *policy; /* decision policy (borrowed, or owned when own_policy) */
    int own_policy;
    dpdo__block blk[DPDO__MAX_BLOCKS];
    int32_t nblk;
    size_t scr_bytes[DPDO__MAX_SCRATCH];
    void *scr[DPDO__MAX_SCRATCH];
    int32_t nscr;
    void *arena;
    size_t arena_bytes; /* blocks and scratch, 64-byte padded (checkpoints copy it all) */
    dpdo__plan plan;
    int64_t (*comm)[3];         /* n+1 rows (row n = coordinator): messages, scalars, bytes */
    int64_t (*rcomm)[3];        /* the round's counts */
    unsigned char *last_active; /* n flags of the last completed round */
    dpdo__priv_state pv;
    int prepared;
    uint64_t round;
    /* tolerance test */
    double *tol_prev;      /* d: averaged output at the last test */
    double *tmp_a, *tmp_b; /* d each: getter and objective scratch */
    int tol_met;
    /* test injection and bench probes */
    const int64_t *inj_active;
    int64_t inj_b;
    int64_t *mask_list;     /* n: the host's next-round mask as an ascending list */
    double *node_p;         /* n: per-node activation probabilities, or NULL (the key's p) */
    const double *inj_zeta; /* n x d, used instead of the gradient + noise, or NULL */
    dpdo__probe_fn probe;
    void *probe_user;
    /* distributed runs: dist.c's state (dist_impl.h), NULL in one process */
    struct dpdo__dist *dist;
    unsigned char *key;     /* 32 n bytes: per-node 256-bit keys of the private streams, or NULL */
    unsigned char *key_src; /* n: DPDO__KEY_NONE / _HOST (set_node_key/secret) / _ENTROPY */
    int keyed;              /* some node has a key (its secret initial rows are gathered) */
    struct dpdo__par *par;  /* threads for the per-node work of a round (par.c), or NULL */
    int par_mute;           /* 1 while worker tasks run: dpdo__eng_err writes no message */
#ifdef DPDO_FAULT_INJECTION
    uint32_t weaken; /* test build only: DPDO__WEAKEN_* bits (mechanisms weakened on
                      * purpose so that the auditor can be shown to catch real bugs) */
#endif
    /* every noisy release right after the draw (grid 0: continuous; grid < 0: a secret random
     * state that is no release, e.g. Fed-PLT's initial models); the white-box auditor
     * (lib/audit) and tests; NULL: off (then the fused noise paths may run) */
    void (*tap)(void *user, int64_t node, const double *out, size_t n, double grid);
    void *tap_user;
    /* set by the auditor: an algorithm whose message is not the noised vector itself taps the
     * message instead of the draw (DP-WOR-SGD's wG; grid 0) */
    int tap_sent;
    /* set at configure by such an algorithm (DP-WOR-SGD): with tap_sent, the engine's noise
     * helpers do not tap its draws (eng_privacy.c, TAP); it taps its message itself */
    int tap_message;
};

enum { DPDO__KEY_NONE = 0, DPDO__KEY_HOST = 1, DPDO__KEY_ENTROPY = 2 };
/* The 256-bit key of the deprecated 64-bit node secret: BLAKE2b-256("libdpdo node secret v1" ||
 * secret as 8 little-endian bytes) (libsodium must be initialised). */
void dpdo__node_secret_key(uint64_t secret, unsigned char key[32]);
/* 1 when the run draws its private randomness from node keys and its noise from the discrete
 * grid samplers: options.randomness SECURE and a private run (decided at prepare). */
#define DPDO__SECURE(e) ((e)->o.randomness == DPDO_RANDOMNESS_SECURE && (e)->pv.private_run)

/* Test-build weakening hooks (never compiled into the installed library). The algorithm keeps
 * charging the ledger as if nothing were weakened:
 *   SIGMA_HALF  the noise actually drawn has half the planned standard deviation (scale)
 *   SENS_DOUBLE the data-dependent part of a release is doubled (twice the charged sensitivity)
 *   WOR_PASS    DP-WOR-SGD's old multi-pass behaviour (no reset at a pass boundary) */
#define DPDO__WEAKEN_SIGMA_HALF 1u
#define DPDO__WEAKEN_SENS_DOUBLE 2u
#define DPDO__WEAKEN_WOR_PASS 4u
/*   SECURE_SIGMA_HALF  half the planned scale in the secure (grid) noise path only
 *   NO_NOISE_NODE      the last node (n - 1) adds no noise to its releases
 *   FIRST_UNCHARGED    no charge is recorded in the first round (round 0)
 *   STEP_UNCHARGED     Fed-PLT charges one local step fewer than it runs */
#define DPDO__WEAKEN_SECURE_SIGMA_HALF 8u
#define DPDO__WEAKEN_NO_NOISE_NODE 16u
#define DPDO__WEAKEN_FIRST_UNCHARGED 32u
#define DPDO__WEAKEN_STEP_UNCHARGED 64u
#define DPDO__WEAKEN_ALL 127u
#ifdef DPDO_FAULT_INJECTION
#define DPDO__WEAKENED(e, bit) (((e)->weaken & (bit)) != 0)
/* Set the weakening bits of a set-up algorithm (test build only). DPDO_OK, DPDO_E_INVAL,
 * DPDO_E_STATE. */
int dpdo__algorithm_set_weaken(struct dpdo_algorithm *a, uint32_t bits);
/* Test build only: where node's key came from (DPDO__KEY_NONE / _HOST / _ENTROPY), -1 if EMPTY. */
int dpdo__algorithm_key_source(const struct dpdo_algorithm *a, int64_t node);
#else
#define DPDO__WEAKENED(e, bit) 0
#endif

/* Call tap after every noise draw of dpdo__eng_noise_* (NULL: off); the auditor's white-box
 * view. DPDO_OK, DPDO_E_INVAL (a NULL), DPDO_E_STATE (EMPTY). */
int dpdo__algorithm_set_noise_tap(struct dpdo_algorithm *a,
                                  void (*tap)(void *user, int64_t node, const double *out, size_t n,
                                              double grid),
                                  void *user);

/* 1 when this process computes for node i (always in one process; i < 0: the coordinator). */
typedef struct dpdo__dist dpdo__dist;
int dpdo__dist_hosts(const dpdo__dist *d, int64_t i);
static inline int dpdo__eng_hosted(const dpdo__eng *e, int64_t i)
{
    return !e->dist || dpdo__dist_hosts(e->dist, i);
}
/* Internal status of a process whose computation stopped because another process failed. */
#define DPDO__REMOTE_FAIL 1001

/* Append "; s" to the privacy notes (silently truncated at the buffer's end). */
void dpdo__eng_note(dpdo__eng *e, const char *s);
/* The same for a warning: a note that the log (dpdo_algorithm_set_log) reports at DPDO_LOG_WARN
 * (the run may not be useful, or the guarantee may not hold as read). */
void dpdo__eng_warn(dpdo__eng *e, const char *s);
/* Releases per node the rigorous calibration plans for: the calib-steps key when set, else T
 * (max rounds) when the most active node computes with probability pmax >= 1, else the
 * (1 - calib-tail) quantile of Binomial(T, pmax); at least 1. */
double dpdo__eng_calib_count(const dpdo__eng *e, double pmax);
/* Per-node version of dpdo__eng_calib_count: node i computes in a round with probability pi[i]
 * (pi NULL: every node with pdef; e->node_p, when set, replaces pdef). Records each node's count
 * in e->pv.planned[i] (the calib-steps key, when set, for every node) and returns the largest,
 * the count sigma must cover. */
double dpdo__eng_calib_counts(dpdo__eng *e, const double *pi, double pdef);
/* Record the same planned count for every node (algorithms whose count is exact: passes, uses). */
void dpdo__eng_set_planned(dpdo__eng *e, double count);
/* After a rigorous WOR calibration: when the accountant's without-replacement bound rather than
 * the sensitivity sets sigma (sigma more than 4x the Poisson-sampled sigma at the same rate and
 * count, e.g. a large batch from a small shard), add a one-line privacy note saying so. */
void dpdo__eng_note_wor_floor(dpdo__eng *e, const dpdo__sampling_desc *sd, double sens,
                              double releases, double sigma);
/* The largest per-node activation probability: max e->node_p[i] when set, else p. */
double dpdo__eng_node_pmax(const dpdo__eng *e, double p);
/* sigma such that `releases` Gaussian releases of sensitivity sens under the sampling sd keep
 * epsilon <= options.epsilon at options.delta, on top of the ledger (the accountant's
 * calibration). Message into e->err. */
/* The noise draw of every algorithm (docs/privacy.md). `st` is the node's open NOISE stream,
 * `sigma` the Gaussian standard deviation (resp. `b` the Laplace scale) in out's units and `sens`
 * an upper bound on the L2 (resp. L1) sensitivity of out in the same units with sens / sigma the
 * ratio the ledger is charged (<= 0: out is data-independent). REPRODUCIBLE (or non-private)
 * runs: out += sigma * N(0,1) by dpdo__stream_add_normals (resp. += Laplace(b) per coordinate),
 * today's bit-exact behaviour. SECURE private runs: out is rounded to a power-of-two grid gamma
 * and gamma * Z added with Z exact discrete Gaussian (resp. Laplace), gamma and the integer scale
 * from dpdo__grid_choose with slack DPDO__GRID_ETA, so the release is exactly gamma * (k + Z).
 * Test builds with DPDO__WEAKEN_SIGMA_HALF draw with half the scale. Returns DPDO_OK or an error
 * already reported for `node` (dpdo__eng_err). */
#define DPDO__GRID_ETA 0x1p-10
int dpdo__eng_noise_gauss(dpdo__eng *e, struct dpdo__stream *st, int64_t node, double sigma,
                          double sens, double *out, size_t n);
int dpdo__eng_noise_laplace(dpdo__eng *e, struct dpdo__stream *st, int64_t node, double b,
                            double sens, double *out, size_t n);
/* The same Gaussian draw, fused into the caller's pass (docs/performance.md).
 * dpdo__eng_noise_gauss_fused decides: when the run's noise is continuous (REPRODUCIBLE or
 * non-private, no test tap), it counts the release as dpdo__eng_noise_gauss does and sets *scale;
 * the caller then draws standard normals from st with dpdo__stream_normals (in one call or in
 * consecutive chunks: the same numbers), adds them with dpdo__eng_noise_affine, and calls
 * dpdo__eng_noise_status after the last draw. Otherwise it counts nothing, sets *scale to NaN, and
 * the caller uses dpdo__eng_noise_gauss. dpdo__eng_noise_affine computes out = z + a (out + scale
 * N) in one pass: bit for bit what dpdo__eng_noise_gauss(out) followed by out = z + a out gives
 * (the noise is added with one fused multiply-add, as the normal kernels add it). */
int dpdo__eng_noise_gauss_fused(dpdo__eng *e, int64_t node, double sigma, double sens,
                                double *scale);
int dpdo__eng_noise_status(dpdo__eng *e, struct dpdo__stream *st, int64_t node);
/* n standard normals from st into buf, drawn in chunks of 256 (the same numbers as one call),
 * with a part of the dataset rows of shard samples idx[0..m) prefetched per chunk: the fused draw
 * ahead of a gradient, whose rows come in from memory meanwhile (DP-DDA, DO-ADP). */
struct dpdo_shard;
void dpdo__eng_normals_prefetching(struct dpdo__stream *st, double *buf, size_t n,
                                   const struct dpdo_shard *sh, const int64_t *idx, int64_t m);
/* out = z + a (g + scale N) with the n normals N in out on entry (drawn there) and the gradient
 * g = 0 + c row[k] of one sampled row of a linear loss (dpdo__loss_row1) formed in the same pass:
 * bit for bit the gradient, then the noise, then the message; returns 1 if every g is finite (0:
 * out is garbage, report dpdo__loss_err_grad) */
int dpdo__eng_noise_affine_row(double *out, const double *z, double a, double scale, double c,
                               const double *row, size_t n);
void dpdo__eng_noise_affine(double *out, const double *z, double a, double scale, const double *buf,
                            size_t n);
/* out = (out + h) + scale N in one pass (h NULL: out + scale N): what out += h followed by
 * dpdo__eng_noise_gauss(out) gives, bit for bit (DO-ADP). */
void dpdo__eng_noise_add(double *out, const double *h, double scale, const double *buf, size_t n);
/* 1 if the noise draws of this run are the exact discrete grid samplers (secure private run of
 * an algorithm whose noise goes through the helpers above). */
int dpdo__eng_grid_noise(const dpdo__eng *e);

/* Without clipping (clip = inf, or the data checked against L) the data must keep every per-sample
 * gradient within the bound the sensitivity rests on: 1 when some node's rows are known to exceed
 * `bound` (relative slack 1e-12), with the first such node and its per-sample gradient bound
 * (dpdo_node_lipschitz at radius inf) in *node and *reach; 0 otherwise. Nodes whose loss has no
 * per-row bound (batch losses; with phi_only, every kind but phi) are not checked. The messages
 * are the callers' ("per-sample gradients reach <reach> > L = <bound>"). */
int dpdo__eng_grad_exceeds(dpdo__eng *e, double bound, int phi_only, int64_t *node, double *reach);
/* The rigorous sigma for `releases` releases of sensitivity sens per node under sampling sd, at
 * (options.epsilon, options.delta) on the run's accountant. Secure runs: sigma such that the
 * event as secure runs charge it (dpdo__eng_secure_events) fits the target over `releases`. */
int dpdo__eng_calibrate_sigma(dpdo__eng *e, const dpdo__sampling_desc *sd, double sens,
                              double releases, double *sigma);
/* The one noise plan of every private type's prepare() (DP-DDA and its baseline, DO-ADP,
 * DP-WOR-SGD, DP-SGD-WR, Fed-PLT, DPDO, CPGT; the Fed baselines are not private): drop the
 * previous paper bound; unless noise_mode is NONE, create the bound `paper` (NULL: none), set its
 * inputs (paper_set) and evaluate it, choose sigma by the mode (PAPER: paper_sigma; FIXED: the
 * sigma parameter; RIGOROUS: rigorous, the algorithm's calibration), check it (check_sigma, may
 * be NULL: the type's own refusal of a scale it cannot use), give the bound the chosen sigma
 * under paper_sigma_key (NULL: not), refuse a bound that does not apply under options.strict
 * ("prepare: <theorem> does not apply (strict): ...") or note it ("<invalid_note>: ..."), then
 * the algorithm's own caveats (notes, may be NULL). Always: pv.sigma, pv.private_run (noise on,
 * sigma > 0 and no_release == 0) and, when not private, the note "noise disabled: not private".
 * `sigma` is in the type's own units (the Gaussian multiplier, Fed-PLT's tau, the Laplace scale
 * b0 of DPDO, lambda of CPGT). Callbacks return DPDO_OK or an error with its message in e->err. */
typedef struct dpdo__noise_plan {
    const char *paper, *theorem, *invalid_note, *paper_sigma_key;
    int (*paper_set)(dpdo__eng *e, void *priv, dpdo_paper *pp);
    int (*paper_sigma)(dpdo__eng *e, void *priv, dpdo_paper *pp, double *sigma);
    int (*rigorous)(dpdo__eng *e, void *priv, double *sigma);
    void (*notes)(dpdo__eng *e, void *priv);
    int (*check_sigma)(dpdo__eng *e, void *priv, double sigma);
    int no_release; /* 1: nothing this run releases is charged (DPDO over <= 1 round) */
} dpdo__noise_plan;
/* The paper bound's verdict as the noise plan gives it: DPDO_OK when pp applies; otherwise under
 * options.strict DPDO_E_INVAL "prepare: <theorem> does not apply (strict): <violations>", else
 * DPDO_OK and the note "<invalid_note>: <violations>". */
int dpdo__eng_paper_verdict(dpdo__eng *e, dpdo_paper *pp, const char *theorem,
                            const char *invalid_note);
/* One event that every node charges (no sampling amplification): e->pv.ev[0] = (mech, sens,
 * noise), nev = 1, node_ev[i] = 0. DPDO_OK or the event's refusal ("prepare: ..."). */
int dpdo__eng_event_all(dpdo__eng *e, int mech, double sens, double noise);
int dpdo__eng_noise_plan(dpdo__eng *e, void *priv, const dpdo__noise_plan *np, double *sigma);

/* One Gaussian event per distinct shard size: WOR(B of q_i), sensitivity sens, noise sigma;
 * fills e->pv.ev/nev/node_ev, and samp[i] (may be NULL) with each node's sampler. */
int dpdo__eng_events_wor(dpdo__eng *e, int64_t B, double sens, double sigma,
                         dpdo__sampling_desc *samp);

/* Plan helpers shared by the algorithms. Bernoulli activation: is_comp[i] from the host's mask
 * (e->inj_active) if set, else 1 w.p. e->node_p[i] (or p) drawn from stream (i, t, ACTIVATION)
 * (no draw when the probability is >= 1). comp from is_comp (ascending). One charge of `count`
 * releases of its event per computing node, in a private run (DPDO_OK or the status of
 * dpdo__plan_add_charge). */
void dpdo__plan_bernoulli(const dpdo__eng *e, dpdo__plan *p, double prob);
void dpdo__plan_list(dpdo__plan *p, int64_t n);
int dpdo__plan_charge_computing(dpdo__eng *e, dpdo__plan *p, int64_t count);

/* Charge `count` >= 1 releases of event ev (an index into e->pv.ev) to node for this round:
 * from plan() (releases the public plan decides) or from local() (releases decided there;
 * vt->local_charges; distributed runs sum them per node over the processes). At most one of
 * each kind per node and round, which bounds the list by its capacity 2n. Returns DPDO_OK, or
 * DPDO_E_STATE with a message (bad event, node or count, a second charge, a charge in a run
 * that is not private); the refusal is also kept in e->plan.charge_err, so the engine fails the
 * round before anything is released even when the caller drops the status. */
int dpdo__plan_add_charge(dpdo__eng *e, int32_t ev, int64_t node, int64_t count);

/* An internal invariant (DPDO__ASSERT, core_impl.h): DPDO_OK, or DPDO_E_STATE with a message
 * naming the condition, in debug and test builds. */
#define DPDO__ENG_ASSERT(e, node, cond)                                                            \
    (DPDO__ASSERT(cond)                                                                            \
         ? dpdo__eng_err((e), DPDO_E_STATE, (node), "internal invariant violated: %s (%s:%d)",     \
                         #cond, __FILE__, __LINE__)                                                \
         : DPDO_OK)

/* Parameters (params.c), looked up in a handle's type vt (NULL: the common ones only). The slot
 * of key (listing order: the common parameters, then the type's own), or -1 when vt does not
 * accept it; its definition, or NULL. */
int dpdo__param_slot(const dpdo__alg_vt *vt, int key);
const dpdo__pdef *dpdo__param_def(const dpdo__alg_vt *vt, int key);
int dpdo__param_ncommon(void);
/* 1 when a handle's DPDO__NSLOTS slots hold the common parameters and all of vt's own */
int dpdo__param_fits(const dpdo__alg_vt *vt);
/* The definition of slot `slot` of a handle of type vt and its key (*key; may be NULL), or NULL
 * past the end (checkpoints, listings). */
const dpdo__pdef *dpdo__param_at(const dpdo__alg_vt *vt, int slot, int *key);
/* Set e's own slots (after the common ones) to their table defaults (def). */
void dpdo__param_table_defaults(dpdo__eng *e);
/* The registry (eng_registry.c): the vtable of type i in registry order, NULL past the end. */
const dpdo__alg_vt *dpdo__type_at(int i);
#define DPDO__PI(e, key) ((e)->pi[dpdo__param_slot((e)->vt, key)])
#define DPDO__PD(e, key) ((e)->pd[dpdo__param_slot((e)->vt, key)])
/* An algorithm's own parameter by its row j in its table (any key, engine-assigned included). */
#define DPDO__OWN_I(e, j) ((e)->pi[dpdo__param_ncommon() + (j)])
#define DPDO__OWN_D(e, j) ((e)->pd[dpdo__param_ncommon() + (j)])

/* The check stage's scans, for the algorithms' check callbacks: DPDO_OK when the n values of v
 * are finite, else DPDO_E_NUMERIC with "<name>[k] = <v[k]> <when>" (when NULL: no suffix) for
 * node (< 0: the round), k the first non-finite index (the bit test of dpdo__first_nonfinite).
 * check_rows scans row i (d values) of scratch scr for i = nodes[0..count) in that order (nodes
 * NULL: 0..count-1) and reports the first bad row. */
int dpdo__eng_check_finite(dpdo__eng *e, int64_t node, const double *v, size_t n, const char *name,
                           const char *when);
int dpdo__eng_check_rows(dpdo__eng *e, int scr, const int64_t *nodes, int64_t count,
                         const char *name, const char *when);
/* The state block called name, or NULL. */
const dpdo__block *dpdo__eng_find_block(const dpdo__eng *e, const char *name);
/* Declare a state block or scratch during configure; returns its index (or
 * -1 with a message when the table is full). */
int dpdo__eng_block(dpdo__eng *e, const char *name, int64_t rows, int64_t cols);
int dpdo__eng_scratch(dpdo__eng *e, size_t bytes);
/* Message helper: "round t, node i: ..." (node < 0: "round t: ..."). */
int dpdo__eng_err(dpdo__eng *e, int status, int64_t node, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static inline void dpdo__eng_probe(const dpdo__eng *e, int phase)
{
    if (e->probe) e->probe(e->probe_user, phase);
}

/* Algorithms (lib/alg). */
#define DPDO_ALG(x) extern const dpdo__alg_vt dpdo__vt_##x;
#include "../alg/algorithms.def"
#undef DPDO_ALG
/* DPDO's Laplace calibration (lib/alg/alg_do_adp_baselines.c, docs/design/notes/do-adp.md §5.6,
 * T-9): b0 of b_t = b0 pn^t for pure eps-DP by basic composition, l2 gradient sensitivity `sens2`
 * (= 2G for one sample), dimension d. Closed form (geometric steps c qs^t, infinite
 * horizon; qs < pn): sqrt(d) sens2 c / (eps (pn - qs)). Finite horizon (T rounds,
 * releases t = 1..T-1; sched DPDO_DPDO_STEP_*): (sqrt(d) sens2/eps) sum gamma_{t-1}/pn^t. */
double dpdo__dpdo_b0_closed(double d, double sens2, double c, double eps, double pn, double qs);
double dpdo__dpdo_b0_finite(double d, double sens2, double eps, int sched, double c, double qs,
                            double pn, int64_t T);

/* Checkpoints (checkpoint.c). state/stop: the handle's; load checks and prepares the handle
 * (prepare callback: the engine's do_prepare) and installs everything only when all is valid. */
struct dpdo_checkpoint_options;
int dpdo__ckpt_save(dpdo__eng *e, int state, int stop, const char *path,
                    const struct dpdo_checkpoint_options *o);
int dpdo__ckpt_load(dpdo__eng *e, int *state, int *stop, const char *path,
                    const unsigned char *image, size_t image_size,
                    const struct dpdo_checkpoint_options *o, int (*prepare)(void *),
                    void *prep_arg);
/* Allocate the per-node key table (all DPDO__KEY_NONE) when there is none; message into e->err. */
int dpdo__eng_keys_alloc(dpdo__eng *e);
/* dpdo_algorithm_load from a file image in memory (fuzzing, tests). */
int dpdo__algorithm_load_image(dpdo_algorithm *a, const unsigned char *image, size_t size,
                               const struct dpdo_checkpoint_options *o);

/* Internal entry points for tests and benches (not exported). */
int dpdo__algorithm_create_vt(dpdo_algorithm **out, const dpdo__alg_vt *vt);
dpdo__eng *dpdo__algorithm_eng(dpdo_algorithm *a);
/* Use these nodes as the computing set of the next step() only (sorted copy
 * not made: nodes must be ascending and distinct; the pointer must stay valid
 * until that step returns). b = 0 clears. */
int dpdo__algorithm_inject_active(dpdo_algorithm *a, const int64_t *nodes, int64_t b);
/* Use zeta (n x d) instead of gradient + noise in the next step() only. */
int dpdo__algorithm_inject_zeta(dpdo_algorithm *a, const double *zeta);
void dpdo__algorithm_set_probe(dpdo_algorithm *a, dpdo__probe_fn fn, void *user);

#endif /* DPDO_ENGINE_IMPL_H */
