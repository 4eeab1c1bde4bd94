/* SPDX-License-Identifier: BSD-3-Clause */
/* Local/Global decision policies (DP-WOR-SGD; docs/policy.md).
 *
 * At every node step of DP-WOR-SGD the algorithm asks a policy whether node
 * `node` takes a Local step (noise-free update of its private model) or a
 * Global step (fetch, noisy update and broadcast of the public model). The
 * algorithm computes the losses and passes the state and the reward; the
 * policy only decides (and, for the learned one, learns).
 *
 * Built-in types (dpdo_policy_type_find):
 *   "dqn"            the deep-Q controller of Alg. 2 (DP-WOR-SGD paper): per node an
 *                    online and a target network (state_len) -> hidden -> 2
 *                    with identity activations, replay memory, Adam,
 *                    epsilon-greedy exploration annealed linearly
 *   "always-global"  GLOBAL at every step (the paper's "DP-Fully collaborative"
 *                    and, with noise off, "Noiseless")
 *   "always-local"   LOCAL at every step (test/baseline)
 *   "random"         GLOBAL with probability "p_global", independently per step
 *   "periodic"       GLOBAL when k % period == period - 1 (k 0-based), i.e.
 *                    at node steps s = k + 1 that are multiples of `period`
 *                    (s_m = 0 mod period); LOCAL otherwise
 *
 * Every detail of the DQN, each paper statement and the choice made where the
 * paper is silent, and the RNG stream layout are in docs/policy.md.
 *
 * Privacy: the DQN reads private data (the local model and mini-batch
 * losses) and its actions (the timing of Global steps) are observable; the
 * DP-WOR-SGD guarantee (Theorem 2) does not cover this leak (docs/policy.md, "Privacy status").
 *
 * User policy types fill a dpdo_policy_type and pass it to
 * dpdo_policy_create(); their callbacks take `void *user` first and return 0
 * on success; any other value makes the calling function return
 * DPDO_E_CALLBACK with the code quoted in dpdo_policy_errmsg().
 *
 * Thread-safety: a policy handle holds learned state and scratch memory; use
 * one handle from one thread at a time. Type objects and the
 * dpdo_policy_type_* lookups are thread-safe. */
#ifndef DPDO_POLICY_H
#define DPDO_POLICY_H

#include "export.h"
#include "rng.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== ADVANCED ZONE: decision policies (built-in and user types) ==== */

typedef struct dpdo_policy dpdo_policy;
struct dpdo_state_io;

/* Actions (pinned values; output unit 0 of the Q-network is Local). */
enum { DPDO_ACTION_LOCAL = 0, DPDO_ACTION_GLOBAL = 1 };

/* A policy type. Fields may only be appended; the library reads a field only
 * if struct_size covers it. */
typedef struct dpdo_policy_type {
    size_t struct_size; /* sizeof(dpdo_policy_type) as the caller compiled it (required) */
    const char *name;   /* required, non-empty */
    /* required: one decision of node `node` at its local step k (0-based
     * within its episode): state[len] (DP-WOR-SGD: [w_L (d values), the
     * mini-batch loss of w_L, the previous action]), reward = the reward of
     * this node's previous decision (NaN at k = 0), randomness
     * only from stream (node, round, DPDO_PURPOSE_EXPLORATION) of rng (which
     * may be NULL if the caller has none). Set *action to DPDO_ACTION_LOCAL
     * or DPDO_ACTION_GLOBAL. 0 = success, anything else -> DPDO_E_CALLBACK
     * with the code in the message (an *action outside {0, 1} too). */
    int (*decide)(void *user, int64_t node, int64_t k, const double *state, int64_t len,
                  double reward, const dpdo_rng *rng, uint64_t round, int32_t *action);
    /* optional: the node's episode ended; `reward` is the reward of its last
     * decision (the terminal transition). 0 = success. */
    int (*finish)(void *user, int64_t node, double reward, const dpdo_rng *rng, uint64_t round);
    /* optional: forget everything learned (back to the initial state). 0 = success. */
    int (*reset)(void *user);
    /* optional: runs exactly once, at dpdo_policy_destroy */
    void (*release)(void *user);
    /* optional (Since 0.3.; read only when struct_size covers it): describe the learned state
     * for checkpoints (dpdo_algorithm_save / _load). One description serves the three passes of
     * io->mode: SAVE (the items are written), CHECK (a file's items are read and checked, the
     * policy is left alone) and LOAD (the items are copied into the arrays given). Call
     * io->f64 / io->i64 / io->i32 for each array, in the same order with the same names and
     * counts in every pass, and io->fail for a value that is read but invalid. The io
     * functions return non-zero once the pass failed (stop then). Return 0 on success, any
     * other value fails the save or load with DPDO_E_CALLBACK. A policy type without it cannot
     * be saved (dpdo_algorithm_save returns DPDO_E_UNSUPPORTED). The built-in "dqn" describes
     * its agents this way; the other built-ins have no state. */
    int (*state)(void *user, const struct dpdo_state_io *io);
} dpdo_policy_type;

/* The serializer a policy's state hook receives (dpdo_policy_type.state). The library fills
 * it; `ctx` is the library's and is passed back as the first argument. Counts are numbers of
 * elements; names are the items' names in the file (non-empty). i64 checks
 * (CHECK pass) that every value read lies in [lo, hi]. Since 0.3. */
enum { DPDO_STATE_SAVE = 0, DPDO_STATE_CHECK = 1, DPDO_STATE_LOAD = 2 }; /* io->mode. Since 0.3. */
typedef struct dpdo_state_io {
    size_t struct_size; /* sizeof(dpdo_state_io) as compiled by the library */
    int32_t mode;       /* DPDO_STATE_SAVE, _CHECK or _LOAD */
    void *ctx;
    int (*f64)(void *ctx, const char *name, double *p, int64_t count);
    int (*i64)(void *ctx, const char *name, int64_t *p, int64_t count, int64_t lo, int64_t hi);
    int (*i32)(void *ctx, const char *name, int32_t *p, int64_t count);
    /* a value read is invalid: the pass fails with DPDO_E_FORMAT and this message */
    int (*fail)(void *ctx, const char *msg);
} dpdo_state_io;

/* Built-in type by name ("dqn", "always-global", "always-local", "random",
 * "periodic"); NULL if unknown or name is NULL. Built-in type objects are
 * opaque: use them only through a policy handle. Thread-safe. Since 0.1. */
DPDO_API const dpdo_policy_type *dpdo_policy_type_find(const char *name);
/* Iterate over the built-in types: next(NULL) is the first, NULL after the
 * last (or for a type that is not built in). Thread-safe. Since 0.1. */
DPDO_API const dpdo_policy_type *dpdo_policy_type_next(const dpdo_policy_type *prev);
/* The type's name ("(null)" for NULL). Thread-safe. Since 0.1. */
DPDO_API const char *dpdo_policy_type_name(const dpdo_policy_type *t);

/* Create a policy for `n_nodes` agents (nodes 0..n_nodes-1) whose states have
 * `state_len` entries, in *out (NULL on failure). Allocates everything up
 * front: for "dqn" per node the online and target networks, the two Adam
 * moments and the replay memory (with the default sizes, see
 * dpdo_policy_set), plus shared training scratch; decisions allocate
 * nothing. The DQN weights are initialised by dpdo_policy_reset(p, rng), or
 * lazily at a node's first decide/finish from the rng of that call (the same
 * values either way: stream (node, 0, DPDO_PURPOSE_INIT)). Built-in type:
 * `user` must be NULL. User type: `user` is passed to every callback; its
 * ownership moves to the handle on success only (release runs at destroy,
 * never on a failed create). The type object is borrowed and must outlive
 * the handle.
 * Returns DPDO_OK, DPDO_E_INVAL (NULL out/type, n_nodes < 1 or >= 2^32,
 * state_len < 0, "dqn" with state_len < 1, user != NULL for a built-in,
 * user type without name or decide), DPDO_E_VERSION (user type's
 * struct_size does not cover decide), DPDO_E_NOMEM. No handle exists on
 * failure, so there is no message. Since 0.1. */
DPDO_API int dpdo_policy_create(dpdo_policy **out, const dpdo_policy_type *type, void *user,
                                int64_t n_nodes, int64_t state_len);
/* Destroy; runs release(user) once for user types. NULL is a no-op. If an
 * algorithm still borrows it (dpdo_algorithm_set_*), the free (and release)
 * is deferred until the algorithm lets go (docs/abi.md). Since 0.1.
 * Deferred: Since 0.2. */
DPDO_API void dpdo_policy_destroy(dpdo_policy *p);
/* Message about the last failure ("" if none; "dpdo_policy_errmsg: p is NULL" for NULL).
 * Never NULL; valid until the next call on the handle. Since 0.1. */
DPDO_API const char *dpdo_policy_errmsg(const dpdo_policy *p);
/* The type's name ("(null)" for NULL). Since 0.1. */
DPDO_API const char *dpdo_policy_name(const dpdo_policy *p);

/* Set a named parameter:
 *   "p_global"       random: probability of GLOBAL, in [0, 1] (default 0.5)
 *   "period"         periodic: integer in [1, 2^62] (default 2): GLOBAL when
 *                    k % period == period - 1
 *   dqn only (docs/policy.md; defaults in parentheses):
 *   "hidden"         hidden units, integer in [1, 2^20] (128)          structural
 *   "replay"         replay-memory capacity, integer in [1, 2^20] (20) structural
 *   "batch"          training mini-batch, integer in [1, replay] (10); training
 *                    starts once the memory holds >= batch transitions structural
 *   "lr"             Adam learning rate, finite >= 0 (0.01)
 *   "discount"       discount gamma_DQ, in [0, 1] (0.99)
 *   "target_period"  target sync every this many training steps, integer >= 1 (10)
 *   "explore_start"  exploration probability at step 0, in [0, 1] (1)
 *   "explore_min"    exploration probability from step K_a on, in [0, 1] (0.1)
 *   "explore_steps"  K_a, finite >= 0 (60; set it to n_m/(2b) for DP-WOR-SGD, docs/policy.md
 * "Exploration" -- the algorithm does not change it); p(j) = explore_start - (explore_start -
 * explore_min) j/K_a for j < K_a, explore_min after (j = the node's decisions since reset)
 * "adam_beta1"     in [0, 1) (0.9) "adam_beta2"     in [0, 1) (0.999) "adam_eps"       finite > 0
 * (1e-8) "finish_train"   0 or 1 (1): whether dpdo_policy_finish runs one training step after
 * storing the terminal transition Structural parameters reallocate the per-node storage
 * (DPDO_E_NOMEM possible; the old storage and value are kept then) and forget everything learned,
 * as dpdo_policy_reset(p, NULL) does; setting the current value changes nothing. The others take
 * effect at the next decision and keep the learned state. Returns DPDO_OK, DPDO_E_INVAL (NULL
 * p/param, unknown name, value out of range; "batch" > "replay": set "replay" first),
 * DPDO_E_UNSUPPORTED (the parameter belongs to another type, so it is never silently ignored; every
 * name on a user type), DPDO_E_NOMEM. Not thread-safe on one handle.
 * Since 0.1. */
DPDO_API int dpdo_policy_set(dpdo_policy *p, const char *param, double value);
/* *value = the parameter's current value, for the names the type accepts in
 * dpdo_policy_set. Returns DPDO_OK, DPDO_E_INVAL (NULL argument, unknown
 * name), DPDO_E_UNSUPPORTED (name of another type). Since 0.1. */
DPDO_API int dpdo_policy_get(const dpdo_policy *p, const char *param, double *value);

/* One decision of node `node` at its local step k (0-based within its
 * episode): state[len] (borrowed; len must equal the create-time state_len;
 * may be NULL if len = 0), reward = the reward of the node's previous
 * decision (ignored at k = 0, where NaN is customary; must be finite at
 * k > 0). *action = DPDO_ACTION_LOCAL or DPDO_ACTION_GLOBAL.
 * rng (borrowed) feeds "random" and "dqn" from stream (node, round,
 * DPDO_PURPOSE_EXPLORATION) and the DQN's lazy initialisation from stream
 * (node, 0, DPDO_PURPOSE_INIT); it may be NULL for "always-*" and
 * "periodic". "dqn" follows docs/policy.md "Per-step order": at k > 0 store the previous
 * transition (previous state, previous action, reward, state, not done); at
 * k = 0 a pending transition of an unfinished episode is dropped; train once
 * if the memory holds >= batch transitions; then act epsilon-greedily with
 * the updated network (ties toward LOCAL). Allocates nothing.
 * Returns DPDO_OK, DPDO_E_INVAL (NULL p/action, node outside [0, n_nodes),
 * k < 0, len differs, NULL or non-finite state, non-finite reward at k > 0,
 * rng NULL when needed, round >= 2^48), DPDO_E_CALLBACK (user callback or
 * custom rng failed), DPDO_E_NUMERIC (the DQN's Q-values or weights became
 * non-finite: the learned state is then unusable until reset). On failure
 * *action is unchanged. Thread-safety: per handle. Since 0.1. */
DPDO_API int dpdo_policy_decide(dpdo_policy *p, int64_t node, int64_t k, const double *state,
                                int64_t len, double reward, const dpdo_rng *rng, uint64_t round,
                                int32_t *action);
/* The node's episode ended; `reward` (finite) is the reward of its last
 * decision. "dqn": store the terminal transition (last state, last action,
 * reward, last state, done) and, if "finish_train" is 1 and the memory holds
 * >= batch transitions, train once (replay draws from stream (node, round,
 * DPDO_PURPOSE_EXPLORATION)); a no-op if the node has no pending decision.
 * Other built-ins: no-op. User types: the finish callback if present.
 * Allocates nothing. Returns DPDO_OK, DPDO_E_INVAL (NULL p, bad node,
 * non-finite reward, rng NULL when training needs it, round >= 2^48),
 * DPDO_E_CALLBACK, DPDO_E_NUMERIC. Since 0.1. */
DPDO_API int dpdo_policy_finish(dpdo_policy *p, int64_t node, double reward, const dpdo_rng *rng,
                                uint64_t round);
/* Forget everything learned: "dqn" sets every node's online and target
 * weights to the Xavier-uniform initialisation (U(-r, r), r =
 * sqrt(6/(fan_in + fan_out)), from stream (node, 0, DPDO_PURPOSE_INIT) of
 * rng; biases 0), zeroes the Adam moments and counters and empties the
 * replay memories; with rng NULL the weights are initialised lazily at each
 * node's next decide/finish from that call's rng (same values). Parameters
 * keep their values. Other built-ins have nothing to reset. User types: the
 * reset callback if present. The result is bit-identical to a freshly
 * created handle with the same parameters. Allocates nothing.
 * Returns DPDO_OK, DPDO_E_INVAL (NULL p), DPDO_E_CALLBACK. Since 0.1. */
DPDO_API int dpdo_policy_reset(dpdo_policy *p, const dpdo_rng *rng);
/* "dqn" only: q[2] = (Q(state, LOCAL), Q(state, GLOBAL)) of node `node`'s
 * online network. state[len] borrowed, len = state_len. Returns DPDO_OK,
 * DPDO_E_INVAL (NULL argument, bad node, len differs, non-finite state),
 * DPDO_E_UNSUPPORTED (not "dqn"), DPDO_E_STATE (the node's weights are not
 * initialised yet: call dpdo_policy_reset with an rng, or decide first).
 * Since 0.1. */
DPDO_API int dpdo_policy_q_values(const dpdo_policy *p, int64_t node, const double *state,
                                  int64_t len, double *q);

#ifdef __cplusplus
}
#endif
#endif /* DPDO_POLICY_H */
