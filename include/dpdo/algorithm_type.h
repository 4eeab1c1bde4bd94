/* SPDX-License-Identifier: BSD-3-Clause */
/* User algorithm types: write a decentralized algorithm as a C vtable and run it on the engine
 * like a built-in type (dpdo_algorithm_create accepts the type; setup, parameters, prepare,
 * step/run, checkpoints, the ledger, threads and dpdo_audit_setup work unchanged).
 * docs/writing-an-algorithm.md walks through an example (examples/muffliato.c).
 *
 * The algorithm DECLARES its noisy releases (dpdo_release_decl: mechanism, sensitivity,
 * sampling, participation, releases per node and round) and asks the engine for each one
 * (dpdo_alg_release). The engine calibrates the noise for the declaration (options.noise_mode:
 * RIGOROUS with the run's accountant, FIXED with DPDO_PARAM_SIGMA, NONE), draws it on the run's
 * noise path (options.randomness: exact discrete grid noise on SECURE private runs, Philox
 * normals on REPRODUCIBLE ones), charges the ledger and keeps the guard. The algorithm never
 * adds noise or charges by hand; data must leave a node only through dpdo_alg_release.
 *
 * One round of a user type:
 *   plan     the engine draws the active nodes (Bernoulli(participation) from the public
 *            ACTIVATION streams); the optional plan callback may switch nodes off (public
 *            information only); every active node is charged per_round releases
 *   local    for every node (active or not, any order, possibly on several threads): read the
 *            current state (dpdo_alg_state), write the node's rows of the next state
 *            (dpdo_alg_next); an active node releases its noisy vectors (dpdo_alg_release)
 *   combine  for every node, after all local calls: read every node's releases of this round
 *            (dpdo_alg_released) and the current state, write the node's next rows
 *   commit   the engine installs the next state (the copy cannot fail); a failing callback, a
 *            non-finite next state or a refused release leaves state and ledger as they were
 * Row r of a block with n rows belongs to node r: local and combine of node i write rows i only.
 * The engine treats the state as public (it is shared between processes and read by getters):
 * what local and combine write into it must be computed from the current state, the round's
 * releases and public quantities only; data-dependent values reach it only through releases.
 *
 * State: blocks declared in configure (dpdo_alg_block) live in the engine's arena and are
 * saved by checkpoints (dpdo_algorithm_save/load) and read by dpdo_algorithm_get_state(name).
 * The private `state` (vtable.state_size bytes, zeroed, owned by the engine) is for constants
 * computed in configure/declare; it is NOT checkpointed.
 *
 * Distributed runs (a transport attached, e.g. dpdo_mpi_attach): local and combine run on the
 * process hosting the node; after local, every node's releases are shared with every process (so
 * combine may read any node's), and after combine the next-state rows of the blocks with n rows;
 * blocks with another row count must be written in init only. A release of dim = d and
 * per_round = 1 is also node i's message to its neighbours (what a transport and the auditor's
 * transcript see). In reproducible mode a run is bit-identical on any number of processes.
 *
 * Thread-safety: a type object may be used by any number of algorithm handles at once (it is
 * immutable after define); the callbacks of one handle run on that handle's threads (local and
 * combine concurrently for different nodes when options.threads > 1); the dpdo_alg_* accessors
 * may be called only from inside a callback, with the ctx it received.
 *
 * Everything in this header: Since 0.3. */
#ifndef DPDO_ALGORITHM_TYPE_H
#define DPDO_ALGORITHM_TYPE_H

#include "algorithm.h"
#include "export.h"
#include "network.h"
#include "node.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The engine as seen by a callback (opaque; valid during the callback only). Since 0.3. */
typedef struct dpdo_alg_ctx dpdo_alg_ctx;

/* Mechanisms and sampling of a declaration. Since 0.3. */
enum { DPDO_RELEASE_GAUSSIAN = 0 };
enum {
    DPDO_RELEASE_FULL = 0, /* the node's whole shard may enter each release (no amplification) */
    DPDO_RELEASE_WOR = 1   /* each round's releases use one uniform batch of `batch` rows drawn
                              without replacement with dpdo_alg_sample */
};

/* What one node releases per round. Filled by the declare callback on top of the defaults
 * (GAUSSIAN, FULL, batch 0, sensitivity NaN = must be set, dim = the model dimension,
 * per_round 1, participation 1). Fields may only be appended. Since 0.3. */
typedef struct dpdo_release_decl {
    size_t struct_size;   /* set by the engine */
    int32_t mechanism;    /* DPDO_RELEASE_GAUSSIAN */
    int32_t sampling;     /* DPDO_RELEASE_FULL or DPDO_RELEASE_WOR */
    int64_t batch;        /* WOR: rows per batch, 1 <= batch <= the smallest shard */
    double sensitivity;   /* L2 sensitivity of one release vector under replace-one of a row
                             of the node's shard (finite, > 0), in the release's units */
    int64_t dim;          /* length of one release vector (>= 1) */
    int64_t per_round;    /* releases per active node and round (>= 1) */
    double participation; /* probability a node is active in a round, in (0, 1]; public */
} dpdo_release_decl;

/* The vtable of a user algorithm. Callbacks take the engine context, the private state and the
 * `user` pointer given at define; int callbacks return 0 on success, anything else fails the
 * calling function with DPDO_E_CALLBACK (the code quoted in the handle's message). Fields may
 * only be appended; the library reads a field only if struct_size covers it. Since 0.3. */
typedef struct dpdo_algorithm_vtable {
    size_t struct_size;    /* sizeof(dpdo_algorithm_vtable) as the caller compiled it (required) */
    const char *name;      /* required: [a-z0-9-], 1..31 characters, not a built-in type's name */
    const char *title;     /* optional: one line (NULL = name) */
    size_t state_size;     /* bytes of private state (0: none) */
    int32_t needs_network; /* 1: setup requires a network with n nodes */
    /* optional: at setup: declare the state blocks (dpdo_alg_block); may fill `state` */
    int (*configure)(dpdo_alg_ctx *ctx, void *state, void *user);
    /* required: at prepare (parameters final): describe the releases */
    int (*declare)(dpdo_alg_ctx *ctx, void *state, void *user, dpdo_release_decl *decl);
    /* required: the round-0 state (write it with dpdo_alg_next); also used by reset */
    void (*init)(dpdo_alg_ctx *ctx, void *state, void *user);
    /* optional: active[n] holds the engine's draw; clear entries to skip nodes (public
     * information only; setting an entry the engine cleared is refused) */
    int (*plan)(dpdo_alg_ctx *ctx, void *state, void *user, unsigned char *active);
    /* required: node's local computation (see the round above) */
    int (*local)(dpdo_alg_ctx *ctx, void *state, void *user, int64_t node);
    /* optional: node's combination of the round's releases */
    int (*combine)(dpdo_alg_ctx *ctx, void *state, void *user, int64_t node);
    /* required: node's model (dim doubles) from the current state */
    void (*output)(const dpdo_alg_ctx *ctx, const void *state, void *user, int64_t node, double *x);
    /* optional: free what configure/declare allocated in `state` (at destroy and before a
     * new setup); never frees `state` itself */
    void (*release)(void *state, void *user);
} dpdo_algorithm_vtable;

/* Make a type from a vtable (copied, with its name and title strings) and a user pointer
 * (borrowed: it must outlive every handle of the type; never freed by the library). *out is
 * NULL on failure. The type must outlive every algorithm and audit handle made from it.
 * Returns DPDO_OK, DPDO_E_INVAL (NULL out/vt, missing required callback, bad name, name of a
 * built-in type), DPDO_E_VERSION (struct_size does not cover the required callbacks),
 * DPDO_E_NOMEM. Thread-safe. Since 0.3. */
DPDO_API int dpdo_algorithm_type_define(const dpdo_algorithm_vtable *vt, void *user,
                                        dpdo_algorithm_type **out);
/* Free a type made by dpdo_algorithm_type_define. NULL and built-in types are no-ops. No handle
 * may use it any more. Since 0.3. */
DPDO_API void dpdo_algorithm_type_destroy(dpdo_algorithm_type *t);
/* 1 if t was made by dpdo_algorithm_type_define, else 0 (NULL: 0). Thread-safe. Since 0.3. */
DPDO_API int dpdo_algorithm_type_is_user(const dpdo_algorithm_type *t);

/* ---- accessors for callbacks (ctx as received; NULL ctx: 0 / NULL / DPDO_E_INVAL) -------- */
/* Nodes n and model dimension d. Since 0.3. */
DPDO_API int64_t dpdo_alg_nodes(const dpdo_alg_ctx *ctx);
DPDO_API int64_t dpdo_alg_dim(const dpdo_alg_ctx *ctx);
/* The round being computed (1-based) in plan/local/combine; the completed rounds elsewhere.
 * Since 0.3. */
DPDO_API uint64_t dpdo_alg_round(const dpdo_alg_ctx *ctx);
/* Node i (borrowed; its data may be read with dpdo_node_eval; NULL if i is out of range).
 * Since 0.3. */
DPDO_API dpdo_node *dpdo_alg_node(const dpdo_alg_ctx *ctx, int64_t i);
/* The run's network (borrowed), or NULL. Since 0.3. */
DPDO_API dpdo_network *dpdo_alg_network(const dpdo_alg_ctx *ctx);
/* The run's validated options (borrowed). Since 0.3. */
DPDO_API const dpdo_algorithm_options *dpdo_alg_options(const dpdo_alg_ctx *ctx);
/* A common parameter (DPDO_PARAM_STEP_SIZE, _BATCH, _CLIP, _MAX_ROUNDS, ...) as a double into
 * *value (NaN = unset where the key allows it). DPDO_OK or DPDO_E_INVAL (unknown key).
 * Since 0.3. */
DPDO_API int dpdo_alg_param(const dpdo_alg_ctx *ctx, int key, double *value);
/* configure only: a state block of rows x cols doubles called name (the getter name; copied
 * up to 31 characters); returns its index (>= 0), or a negative DPDO_E_* (table full: at most
 * 4 blocks; bad size; called outside configure). Since 0.3. */
DPDO_API int dpdo_alg_block(dpdo_alg_ctx *ctx, const char *name, int64_t rows, int64_t cols);
/* Row `row` of block blk in the current state (read-only; NULL for a bad index). Since 0.3. */
DPDO_API const double *dpdo_alg_state(const dpdo_alg_ctx *ctx, int blk, int64_t row);
/* Row `row` of block blk in the state being built: in init the state itself; in local and
 * combine the next state (which starts as a copy of the current one). NULL elsewhere or for a
 * bad index. Since 0.3. */
DPDO_API double *dpdo_alg_next(dpdo_alg_ctx *ctx, int blk, int64_t row);
/* 1 if node is active this round (plan, local, combine), else 0. Since 0.3. */
DPDO_API int dpdo_alg_active(const dpdo_alg_ctx *ctx, int64_t node);
/* local only, WOR declarations: this round's batch of node (declared batch row indices into
 * idx[cap]; *count = rows written). The same batch on every call in a round. DPDO_OK,
 * DPDO_E_INVAL (NULL, cap < batch), DPDO_E_STATE (not WOR, not in local, inactive node).
 * Since 0.3. */
DPDO_API int dpdo_alg_sample(dpdo_alg_ctx *ctx, int64_t node, int64_t *idx, int64_t cap,
                             int64_t *count);
/* local only: release vec[dim] of an active node: the engine adds the calibrated noise in
 * place (vec becomes what the network sees) and records it as this round's next release of
 * node. At most per_round calls per node and round. DPDO_OK, DPDO_E_INVAL (NULL, dim differs
 * from the declaration), DPDO_E_STATE (not in local, inactive node, more than per_round
 * releases), or the noise path's error. Since 0.3. */
DPDO_API int dpdo_alg_release(dpdo_alg_ctx *ctx, int64_t node, double *vec, int64_t dim);
/* combine only: node's k-th release of this round (dim doubles, read-only), or NULL (inactive
 * node, k out of range, not in combine). Since 0.3. */
DPDO_API const double *dpdo_alg_released(const dpdo_alg_ctx *ctx, int64_t node, int64_t k);
/* The noise standard deviation in use (0: no noise). Since 0.3. */
DPDO_API double dpdo_alg_sigma(const dpdo_alg_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif /* DPDO_ALGORITHM_TYPE_H */
