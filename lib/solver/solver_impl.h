/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal layout of local solvers and the entry points the engine calls
 * every round (Fed-PLT; docs/solver.md). Never installed. */
#ifndef DPDO_SOLVER_IMPL_H
#define DPDO_SOLVER_IMPL_H

#include "../core/core_impl.h"
#include "dpdo/solver.h"
#include <stddef.h>
#include <stdint.h>

struct dpdo_node;
struct dpdo_rng;

enum {
    DPDO__SOLVER_USER = -1,
    DPDO__SOLVER_GD = 0,
    DPDO__SOLVER_AGD,
    DPDO__SOLVER_SGD,
    DPDO__SOLVER_NOISY_GD,
    DPDO__SOLVER_EXACT_QUAD,
    DPDO__SOLVER_NBUILTIN
};

struct dpdo_solver {
    uint32_t magic; /* DPDO__MAGIC_* while alive, 0 after destroy (core_impl.h) */
    const dpdo_solver_type *type;
    int kind;     /* DPDO__SOLVER_* */
    void *user;   /* user types: the caller's pointer; built-ins: this handle */
    size_t tsize; /* the type's struct_size */
    int64_t dim;
    /* parameters (NaN = auto / unknown) */
    double step, lambda_lo, lambda_hi, tau, clip;
    double l2; /* ridge term (l2/2)|w|^2 added to f in gd/agd/sgd/noisy-gd; 0 = none (Since 0.2) */
    int64_t batch;
    /* scratch, allocated at create / set("batch") */
    double *buf;       /* 3*dim: gradient, auxiliary (AGD u^{l-1}), backup of w */
    double *mat;       /* exact-quadratic: dim*dim (I + rho A, column-major) */
    int64_t *idx;      /* sgd: batch indices */
    int64_t borrowers; /* algorithms borrowing it (core_impl.h, borrowed handles) */
    int doomed;        /* destroy requested while borrowed */
    /* noisy-gd: called with every noisy iterate right after its draw (grid 0: continuous), or
     * NULL; the engine's noise tap reaches Fed-PLT's local steps through it (the auditor) */
    void (*tap)(void *user, uint64_t node_id, const double *w, size_t n, double grid);
    void *tap_user;
    char errmsg[DPDO__ERRMSG_LEN];
};
void dpdo__solver_retain(struct dpdo_solver *s);
void dpdo__solver_release(struct dpdo_solver *s);

/* O(1) compatibility checks of (solver, node, rho): kinds, the step bound,
 * the lambdas, sgd batch vs the node's sample count. Message into err.
 * dpdo__solver_run calls it; the engine may call it once at setup to fail
 * early. Returns DPDO_OK, DPDO_E_INVAL, DPDO_E_UNSUPPORTED. */
int dpdo__solver_check(const struct dpdo_solver *s, const struct dpdo_node *node, double rho,
                       char *err);

/* The engine's per-round entry: like dpdo_solver_run but without the O(dim)
 * argument checks (v and w must be finite arrays of s->dim entries, node of
 * the same dimension, rho > 0 finite, epochs >= 0; the O(1) checks of
 * dpdo__solver_check still run). Allocates nothing. Message into err
 * (DPDO__ERRMSG_LEN bytes, may be NULL). On failure w is unchanged. */
int dpdo__solver_run(struct dpdo_solver *s, struct dpdo_node *node, const double *v, double rho,
                     int64_t epochs, const struct dpdo_rng *rng, uint64_t node_id, uint64_t round,
                     double *w, char *err);

/* The same for secure private runs: noisy-gd rounds every step's iterate to a power-of-two grid
 * and adds exact discrete Gaussian noise of at least (1 + grid_eta) sqrt(2 gamma) tau
 * (dpdo__grid_choose with the L2 sensitivity grid_sens of one step; the grid is at most
 * grid_eta grid_sens / sqrt(dim)), so that one step is a DPDO_MECH_DISCRETE_GAUSSIAN release of
 * sensitivity (1 + grid_eta) grid_sens and noise (1 + grid_eta) sqrt(2 gamma) tau. grid_sens 0:
 * exactly dpdo__solver_run (continuous normals). Other kinds ignore the grid. */
int dpdo__solver_run_grid(struct dpdo_solver *s, struct dpdo_node *node, const double *v,
                          double rho, int64_t epochs, const struct dpdo_rng *rng, uint64_t node_id,
                          uint64_t round, double grid_sens, double grid_eta, double *w, char *err);
/* dpdo__solver_run_grid with the workspace ws (3*s->dim doubles) in place of the handle's own
 * scratch, so that several nodes can run one built-in gd/agd/noisy-gd solver at once (the engine's
 * thread pool, one workspace per task). ws NULL: the handle's scratch. sgd still uses the
 * handle's index buffer and exact-quadratic its matrix: one node at a time for those. */
int dpdo__solver_run_ws(struct dpdo_solver *s, struct dpdo_node *node, const double *v, double rho,
                        int64_t epochs, const struct dpdo_rng *rng, uint64_t node_id,
                        uint64_t round, double grid_sens, double grid_eta, double *w, double *ws,
                        char *err);
/* 1 if dpdo__solver_run_ws with distinct workspaces may run for distinct nodes concurrently
 * (built-in gd, agd, noisy-gd) */
int dpdo__solver_concurrent(const struct dpdo_solver *s);

/* The step gamma in use at penalty rho (auto resolved): the "step"
 * parameter if set, else gd/sgd 2/(lambda_hi + lambda_lo + 2/rho) (lambda_lo
 * unknown counts as 0), noisy-gd 1/(lambda_hi + 1/rho), agd 1/(lambda_hi +
 * 1/rho); NaN when it cannot be resolved (lambda_hi unknown) and for
 * exact-quadratic and user types. For the privacy accounting. */
double dpdo__solver_step(const struct dpdo_solver *s, double rho);

/* 1 if s is the built-in "noisy-gd" (whatever tau), else 0. */
int dpdo__solver_is_noisy_gd(const struct dpdo_solver *s);

#endif /* DPDO_SOLVER_IMPL_H */
