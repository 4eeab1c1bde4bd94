/* SPDX-License-Identifier: BSD-3-Clause */
/* The algorithm handle and the calls between the engine's own files (lib/engine/eng_*.c).
 * Never included by the algorithms (lib/alg uses engine_impl.h only) nor by dist.c.
 *
 * Files, bottom to top (each calls only files listed before it, and dist.c):
 *   eng_core.c     messages, blocks, scratch, the arena, notes, plan helpers
 *   eng_privacy.c  calibration, events, the budget guard, noise, privacy getters
 *   eng_keys.c     node keys and secrets, the randomness source
 *   eng_options.c  options, problem checks, parameters (set/get)
 *   eng_plugin.c   solver, compressor and policy slots
 *   eng_getters.c  copy-out getters, objective helpers
 *   eng_life.c     create, setup, prepare, reset, destroy
 *   eng_round.c    one round (the stage runner), run, progress
 *   eng_host.c     masks, node probabilities, transports, test hooks
 *   eng_ckpt.c     save/load on top of checkpoint.c
 *   eng_registry.c the algorithm types (the only file naming lib/alg's vtables)
 * dist.c (dist_impl.h) sits beside eng_core.c: it uses engine_impl.h only. */
#ifndef DPDO_ENG_HANDLE_H
#define DPDO_ENG_HANDLE_H

#include "dpdo/log.h"
#include "engine_impl.h"

struct dpdo_algorithm {
    uint32_t magic; /* DPDO__MAGIC_* while alive, 0 after destroy (core_impl.h) */
    const dpdo__alg_vt *vt;
    int state, stop;
    dpdo__eng *e;              /* NULL while EMPTY */
    dpdo_progress_fn progress; /* dpdo_algorithm_set_progress; NULL = none */
    void *progress_user;
    int64_t progress_every;
    int32_t progress_flags;
    dpdo_parallel_fn pool_run; /* dpdo_algorithm_set_pool (par.c); NULL = the library's threads */
    void *pool_host;
    int32_t pool_width;
    dpdo__busy busy; /* taken by every public call that returns a status (DPDO__GUARDED) */
    char errmsg[DPDO__ERRMSG_LEN];
    dpdo_log_fn log; /* dpdo_algorithm_set_log (eng_log.c); NULL = silent */
    void *log_user;
    int log_min;
};

/* The size of the 0.1 options struct (the smallest accepted). */

/* eng_options.c: validation of options and of the problem (message into err, "setup: ..."), and
 * the options' parameter slots. */
int dpdo__eng_check_options(const dpdo_algorithm_options *o, char *err);
int dpdo__eng_check_problem(const dpdo__alg_vt *vt, dpdo_node *const *nodes, int32_t n,
                            dpdo_network *net, dpdo_regularizer *reg, dpdo_accountant *acc,
                            const dpdo_algorithm_options *o, char *err);
void dpdo__eng_opts_to_params(dpdo__eng *e);

/* eng_core.c: place the declared blocks and scratch in one zeroed, 64-byte aligned arena. */
int dpdo__eng_alloc_arena(dpdo__eng *e);

/* eng_privacy.c: the budget guard's allowances per node; the discrete charging of secure runs. */
int dpdo__eng_compute_guard(dpdo__eng *e);
/* 1 when a rigorous private run's guard (just computed) lets some node fewer releases through
 * than its sigma was planned for: the calibration must be redone (dpdo__eng_prepare). */
int dpdo__eng_guard_short(const dpdo__eng *e);
void dpdo__eng_secure_events(dpdo__eng *e);

/* eng_keys.c: draw (secure private runs) or drop (otherwise) the entropy keys of hosted nodes;
 * message into err. */
int dpdo__eng_draw_keys(dpdo__eng *e, char *err);

/* eng_plugin.c: the default plug-ins a type uses (gd solver, identity compressor, always-global
 * policy; message into err) and the release of the owned ones. */
int dpdo__eng_plugin_defaults(dpdo__eng *e, char *err);
void dpdo__eng_plugin_release(dpdo__eng *e);
/* At prepare: an engine-owned local solver whose lambda_hi is unknown gets the largest per-sample
 * smoothness constant of the nodes' losses on their data (dpdo_node_smoothness: an upper bound of
 * the smoothness of each node's mean loss), so its automatic step works; a privacy note says what
 * was chosen. Nothing when a node is remote (the processes would differ) or a loss is not smooth
 * (hinge). DPDO_OK or an error with its message in e->err. */
int dpdo__eng_plugin_derive(dpdo__eng *e);

/* eng_getters.c: the average of every node's output into x (d values; uses e->tmp_a). */
void dpdo__eng_output_all(const dpdo__eng *e, double *x);

/* eng_life.c: prepare the handle (validate parameters, calibrate, events, guard, keys); on
 * failure the message is in a->errmsg and the handle stays unprepared. */
int dpdo__eng_prepare(dpdo_algorithm *a);

/* eng_log.c: the name of a DPDO_STOP_* reason ("max rounds", ...; "?" out of range) */
const char *dpdo__stop_name(int stop);
/* eng_log.c: the log callback (dpdo_algorithm_set_log). _prepared: the notes and the calibration
 * of a successful prepare. _step: runs body(a) (one step) and logs the run's summary when it
 * stops, or the message of a failure; returns body's status. _status: logs the message of a
 * failed call (rc < 0) and returns rc. All do nothing without a callback. */
void dpdo__eng_log_prepared(dpdo_algorithm *a);
int dpdo__eng_log_step(dpdo_algorithm *a, int (*body)(dpdo_algorithm *));
int dpdo__eng_log_status(dpdo_algorithm *a, int rc);

#endif /* DPDO_ENG_HANDLE_H */
