/* Per-type test setup from the algorithm's own unit (dpdo__alg_vt.fixture, engine_impl.h): the
 * registry-driven tests loop over dpdo_algorithm_type_next and call these instead of naming types.
 * Include after harness.h. */
#ifndef DPDO_TESTS_ALG_FIXTURE_H
#define DPDO_TESTS_ALG_FIXTURE_H

#include "dpdo/dpdo.h"
#include "engine/engine_impl.h"
#include "harness.h"

/* The fixture of type `type` (by name); a type without one gets the empty fixture (private,
 * defaults). Never NULL. */
static inline const dpdo__fixture *tfx_alg(const char *type)
{
    static const dpdo__fixture none = {0};
    const dpdo_algorithm_type *t = dpdo_algorithm_type_find(type);
    return t && t->vt->fixture ? t->vt->fixture : &none;
}

/* 1 when the type is a non-private baseline (refuses noise and a regularizer). */
static inline int tfx_alg_nonprivate(const char *type)
{
    return tfx_alg(type)->nonprivate;
}

/* Set up `a` (set up with dimension d) as its type's fixture says: its parameters, and its local
 * solver (the private one when noisy) written to *sol (NULL when none; the caller destroys it). */
static inline void tfx_alg_apply(dpdo_algorithm *a, const char *type, int noisy, int64_t d,
                                 dpdo_solver **sol)
{
    const dpdo__fixture *tf = tfx_alg(type);
    *sol = NULL;
    for (int k = 0; k < 4 && tf->set[k].name; k++) {
        int key = dpdo_param_find(tf->set[k].name);
        int rc = dpdo_param_type(key) == 0 ? dpdo_algorithm_set_int(a, key, (int64_t)tf->set[k].value)
                                           : dpdo_algorithm_set_double(a, key, tf->set[k].value);
        CHECK_MSG(rc == DPDO_OK, "%s: fixture parameter %s: %s", type, tf->set[k].name,
                  dpdo_algorithm_errmsg(a));
    }
    const char *sn = noisy && tf->solver_private ? tf->solver_private : tf->solver;
    if (!sn) return;
    CHECK_EQ(dpdo_solver_create(sol, dpdo_solver_type_find(sn), NULL, d), DPDO_OK);
    if (tf->solver_step > 0) CHECK_EQ(dpdo_solver_set(*sol, "step", tf->solver_step), DPDO_OK);
    int rc = dpdo_algorithm_set_solver(a, *sol);
    CHECK_MSG(rc == DPDO_OK, "%s: set_solver: %s", type, dpdo_algorithm_errmsg(a));
}

#endif
