/* SPDX-License-Identifier: BSD-3-Clause */
/* Checkpoint and resume of an algorithm run (docs/checkpoint.md). Since 0.2.
 *
 * dpdo_algorithm_save writes everything a run needs to continue (state arena, round, stop
 * reason, counters, the algorithm's private state such as DP-WOR-SGD's passes and permutations
 * and the DQN policy's weights and replay buffer, this run's ledger charges) into a versioned
 * binary file with a BLAKE2b-256 checksum. dpdo_algorithm_load reads it into an algorithm the
 * host has set up identically (same type, nodes and data, network, regularizer, accountant,
 * options and parameters) and that has not run yet; the run then continues exactly where it was
 * saved: in DPDO_RANDOMNESS_REPRODUCIBLE mode the resumed run is bit-identical to one that was
 * never interrupted.
 *
 * Secret keys are never written in plain. With a host key (options.key, 32 bytes) the payload
 * is encrypted and authenticated (XChaCha20-Poly1305, libsodium) and carries the nodes' keys
 * (host-set or drawn from entropy); without one, nothing secret is written and the host sets the
 * same nodes' keys (dpdo_algorithm_set_node_key) again before dpdo_algorithm_load. A run with
 * options.randomness = DPDO_RANDOMNESS_SECURE can only be saved with a host key.
 *
 * Distributed runs (a transport attached, dpdo/transport.h, dpdo/mpi.h): save and load are
 * collective - every process calls them with the same path and options. Process r writes its
 * part to path + ".p<r>" (its view of the state), process 0 a manifest to `path` naming the
 * parts' checksums; load resumes only on the same number of processes with the same layout, and
 * a refusal found by any process (another process count, a missing, foreign or edited part,
 * another configuration) is returned on every process with the lowest failing process's
 * message, every handle unchanged (docs/checkpoint.md, "Distributed runs"). */
#ifndef DPDO_CHECKPOINT_H
#define DPDO_CHECKPOINT_H

#include "dpdo/algorithm.h"
#include "dpdo/export.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== ADVANCED ZONE: checkpoints (save and resume a run) ==== */

/* Bytes of a host key. */
#define DPDO_CHECKPOINT_KEY_BYTES 32
/* The file format version written by this library (docs/checkpoint.md): 2 from 0.3 on (parameters
 * recorded by name). Format 1 files written by libdpdo 0.2 still load. */
#define DPDO_CHECKPOINT_FORMAT 2

typedef struct dpdo_checkpoint_options {
    size_t struct_size;       /* sizeof(dpdo_checkpoint_options) as compiled by the caller  0.2 */
    const unsigned char *key; /* DPDO_CHECKPOINT_KEY_BYTES-byte host key (borrowed, read during
                                 the call only), or NULL (default): the file is not encrypted 0.2 */
    int64_t reserved[4];      /* must be 0 (set by _init): room for later fields, docs/abi.md 0.2 */
    int64_t min_round;        /* anti-rollback (load only): refuse a checkpoint whose round is
                                 below this (0 = no check, the default); the host persists the
                                 round of its latest save (docs/checkpoint.md "Rollback") 0.3 */
} dpdo_checkpoint_options;

/* Fill *o with the defaults (no key). Returns DPDO_OK, DPDO_E_INVAL (o NULL),
 * DPDO_E_VERSION (struct_size < sizeof(size_t)); any older (smaller) or newer
 * (larger) struct_size is accepted (docs/abi.md, "Options structs"). Thread-safe. Since 0.2. */
DPDO_API int dpdo_checkpoint_options_init(dpdo_checkpoint_options *o, size_t struct_size);

/* Write a checkpoint of alg's run to `path` (created or replaced; written to path + ".tmp" and
 * renamed, so an interrupted save never leaves a half-written file under `path`). alg must be
 * RUNNING or DONE (at least one round run); alg is not changed. opts may be NULL (defaults).
 * With a transport attached: collective, writes path + ".p<process>" and (process 0) the
 * manifest `path`; the outcome is agreed, so every process returns the same code.
 * Returns DPDO_OK; DPDO_E_INVAL (NULL alg or path, bad key); DPDO_E_STATE (EMPTY, READY or FAILED;
 * a private run with DPDO_RANDOMNESS_SECURE and no host key); DPDO_E_UNSUPPORTED
 * (a user-defined policy whose type has no state hook, dpdo_policy_type.state);
 * DPDO_E_CALLBACK (the policy's state hook failed);
 * DPDO_E_IO (cannot write); DPDO_E_NOMEM. Message in dpdo_algorithm_errmsg. Not thread-safe with
 * other calls on the same alg. Since 0.2. */
DPDO_API int dpdo_algorithm_save(dpdo_algorithm *alg, const char *path,
                                 const dpdo_checkpoint_options *opts);

/* Resume the run saved in `path` on alg, which must be READY at round 0 (freshly set up, or
 * reset) with the same configuration as the saved run: type, number of nodes, dimension, shard
 * sizes, options, parameters (the live ones - max-rounds, max-epsilon, tol, check-every - are
 * taken from the file, with the budget guard's allowances), state layout, library version; node
 * keys set again with dpdo_algorithm_set_node_key on the same nodes when the file is not encrypted.
 * The accountant must hold what it held when the saved run was prepared (typically a fresh one);
 * load adds the saved run's charges to its ledger, so that the ledger, the budget guard and a later
 * reset are as in the uninterrupted run. Everything is parsed and checked before anything is
 * installed: on failure alg keeps its state (it may have been prepared, as dpdo_algorithm_prepare
 * would). With a transport attached: collective (attach first); every process reads the manifest
 * `path` and its part path + ".p<process>", and installs only when every process can. Returns
 * DPDO_OK (alg is RUNNING, or DONE when the saved run was); DPDO_E_INVAL (NULL arguments, bad key);
 * DPDO_E_STATE (alg not READY at round 0); DPDO_E_IO (cannot read); DPDO_E_FORMAT (not a
 * checkpoint, truncated, checksum or authentication failure, another format or library version,
 * another algorithm or configuration: the message names the mismatch); DPDO_E_UNSUPPORTED (a
 * distributed set loaded without its transport, or an image with one); DPDO_E_NOMEM; the codes of
 * dpdo_algorithm_prepare. Not thread-safe with other calls on the same alg or its accountant.
 * Since 0.2. */
DPDO_API int dpdo_algorithm_load(dpdo_algorithm *alg, const char *path,
                                 const dpdo_checkpoint_options *opts);

#ifdef __cplusplus
}
#endif

#endif /* DPDO_CHECKPOINT_H */
