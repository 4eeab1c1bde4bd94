/* SPDX-License-Identifier: BSD-3-Clause */
/* Reference solver: F(x) = sum_i omega_i f_i(x) + h(x) solved centrally to a
 * certified tolerance (see include/dpdo/reference.h and docs/model.md).
 *
 * Certificates. For linear models with built-in losses the objective is
 *     P(x) = sum_s c_s phi_s(<a_s, x>) + h(x),   c_s = omega_i / q_i,
 * with Fenchel dual D(u) = -sum_s c_s phi_s*(u_s) - h*(-sum_s c_s u_s a_s).
 * Any u with every phi_s*(u_s) and h*(.) finite gives P(x) - F* <= P(x) - D(u)
 * (weak duality). We take u_s = theta * phi'_s(<a_s, x>) (for the hinge the
 * derivative of its Nesterov smoothing, which lies in the conjugate's domain)
 * with the largest theta in [0,1] keeping h* finite (only l1 and
 * elastic-net without l2 part need theta < 1). The dual CD method for
 * hinge + l2 carries its own dual variables (Hsieh et al., ICML 2008). */
#include "reference_impl.h"
#include <float.h>
#include <math.h>
#include <string.h>

DPDO_API int dpdo_reference_options_init(dpdo_reference_options *o, size_t struct_size)
{
    dpdo_reference_options d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.weighting = DPDO_WEIGHT_SAMPLES;
    d.tol = 0.0; /* the method's default, see below */
    d.max_iter = 200000;
    d.lbfgs_memory = 10;
    return dpdo__options_init(o, struct_size, &d, sizeof d);
}

static int h_smooth(const struct dpdo_regularizer *g)
{
    switch (g->kind) {
    case DPDO__REG_NONE:
    case DPDO__REG_L2:
    case DPDO__REG_NCVX:
        return 1;
    case DPDO__REG_L1:
        return g->p[0] == 0.0;
    case DPDO__REG_EN:
        return g->p[0] == 0.0;
    case DPDO__REG_USER:
        return g->tsize >= offsetof(dpdo_regularizer_type, grad) + sizeof(g->type->grad) &&
               g->type->grad != NULL;
    default:
        return 0;
    }
}

DPDO_API int dpdo_reference_create(dpdo_reference **out, dpdo_node *const *nodes,
                                   int64_t n_nodes_in, dpdo_regularizer *reg,
                                   const dpdo_reference_options *opts)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (!nodes || n_nodes_in < 1 || n_nodes_in >= ((int64_t)1 << 31)) return DPDO_E_INVAL;
    int32_t n_nodes = (int32_t)n_nodes_in;
    for (int32_t i = 0; i < n_nodes; i++)
        if (!nodes[i]) return DPDO_E_INVAL;
    int64_t dim = nodes[0]->dim;
    for (int32_t i = 1; i < n_nodes; i++)
        if (nodes[i]->dim != dim)
            return dpdo__err(nodes[i]->errmsg, DPDO_E_INVAL,
                             "node %d has dimension %lld, node 0 %lld", (int)i,
                             (long long)nodes[i]->dim, (long long)dim);
    if (reg && reg->dim != dim)
        return dpdo__err(reg->errmsg, DPDO_E_INVAL,
                         "regularizer has dimension %lld, the nodes %lld", (long long)reg->dim,
                         (long long)dim);
    dpdo_reference_options o;
    dpdo_reference_options_init(&o, sizeof o);
    int rc = dpdo__options_accept(&o, sizeof o, offsetof(dpdo_reference_options, reserved), opts,
                                  "dpdo_reference_options", nodes[0]->errmsg);
    if (rc) return rc;
    if (o.weighting < 0 || o.weighting > 2 || !(o.tol >= 0) || !isfinite(o.tol) || o.max_iter < 1 ||
        o.lbfgs_memory < 1 || o.lbfgs_memory > 1000)
        return DPDO_E_INVAL;
    if (o.weighting == DPDO_WEIGHT_SAMPLES)
        for (int32_t i = 0; i < n_nodes; i++)
            if (!nodes[i]->shard)
                return dpdo__err(nodes[i]->errmsg, DPDO_E_INVAL,
                                 "node %d has no samples: weighting by samples is undefined (use "
                                 "DPDO_WEIGHT_NODES)",
                                 (int)i);

    struct dpdo_reference *r = dpdo__calloc(1, sizeof *r);
    if (!r) return DPDO_E_NOMEM;
    r->magic = DPDO__MAGIC_REFERENCE;
    r->n = n_nodes;
    r->dim = dim;
    r->o = o;
    r->mem = o.lbfgs_memory;
    r->cert = NAN;
    r->nodes = dpdo__alloc_array((size_t)n_nodes, sizeof *r->nodes);
    r->omega = dpdo__alloc_array((size_t)n_nodes, sizeof *r->omega);
    size_t nvec = 7 + 2 * (size_t)r->mem, nw;
    int ok = dpdo__mul_size(nvec, (size_t)dim, &nw) && dpdo__mul_size(nw, 1, &nw);
    r->work = ok ? dpdo__alloc_array(nw + 2 * (size_t)r->mem, sizeof(double)) : NULL;
    if (!r->nodes || !r->omega || !r->work) goto nomem;
    memcpy(r->nodes, nodes, (size_t)n_nodes * sizeof *nodes);

    if (reg)
        r->reg = reg;
    else {
        r->none_reg.type = dpdo_regularizer_type_find("none");
        r->none_reg.kind = DPDO__REG_NONE;
        r->none_reg.user = &r->none_reg;
        r->none_reg.dim = dim;
        r->none_reg.tsize = sizeof(dpdo_regularizer_type);
        r->reg = &r->none_reg;
    }

    /* node weights omega_i */
    double tot = 0.0;
    for (int32_t i = 0; i < n_nodes; i++) {
        double q = (double)dpdo_node_samples(nodes[i]);
        r->omega[i] = o.weighting == DPDO_WEIGHT_SAMPLES ? q
                      : o.weighting == DPDO_WEIGHT_NODES ? 1.0
                                                         : nodes[i]->weight;
        tot += r->omega[i];
    }
    for (int32_t i = 0; i < n_nodes; i++)
        r->omega[i] /= tot;

    /* properties and method */
    r->gap_ok = 1;
    r->any_hinge = 0;
    int all_hinge = 1;
    for (int32_t i = 0; i < n_nodes; i++) {
        if (!is_builtin_phi(nodes[i])) r->gap_ok = 0;
        int hin = is_builtin_phi(nodes[i]) && nodes[i]->loss->builtin == DPDO__LOSS_HINGE;
        r->any_hinge |= hin;
        all_hinge &= hin;
    }
    int hk = r->reg->kind;
    if (hk == DPDO__REG_USER || hk == DPDO__REG_NCVX) r->gap_ok = 0;
    /* h = 0: h* is the indicator of {0}, so the only dual points we can form
     * give the trivial bound F(x) - F* <= F(x): report "uncertified" instead */
    if (hk == DPDO__REG_NONE || (hk == DPDO__REG_L2 && r->reg->p[0] == 0.0) ||
        (hk == DPDO__REG_L1 && r->reg->p[0] == 0.0) ||
        (hk == DPDO__REG_EN && r->reg->p[0] == 0.0 && r->reg->p[1] == 0.0))
        r->gap_ok = 0;
    r->mu_h = hk == DPDO__REG_USER ? 0.0 : dpdo__reg_modulus_builtin(r->reg);
    if (hk == DPDO__REG_USER) {
        double mu = 0.0;
        if (dpdo_regularizer_modulus(r->reg, &mu) == DPDO_OK) r->mu_h = mu;
    }
    if (all_hinge && hk == DPDO__REG_L2 && r->reg->p[0] > 0.0)
        r->method = M_DUALCD;
    else if (all_hinge && hk == DPDO__REG_EN && r->reg->p[1] > 0.0)
        r->method = M_PPA;
    else if (r->any_hinge)
        r->method = M_SFISTA;
    else if (h_smooth(r->reg))
        r->method = M_LBFGS;
    else
        r->method = M_FISTA;

    /* tol 0: the method's default. Smoothing converges as O(1/eps), so its
     * default is looser (docs/model.md, "Tolerances in practice"). */
    if (r->o.tol == 0.0) r->o.tol = r->method == M_SFISTA ? 1e-6 : 1e-10;
    r->polish = r->method == M_SFISTA && all_hinge && hk == DPDO__REG_L1 && r->reg->p[0] > 0.0;
    if (r->method == M_DUALCD || r->method == M_PPA || r->polish) {
        int64_t N = 0;
        for (int32_t i = 0; i < n_nodes; i++)
            N += nodes[i]->shard->n;
        r->nsamp = N;
        r->s_row = dpdo__alloc_array((size_t)N, sizeof *r->s_row);
        r->s_node = dpdo__alloc_array((size_t)N, sizeof *r->s_node);
        r->alpha = dpdo__alloc_array((size_t)N, sizeof *r->alpha);
        r->act = dpdo__alloc_array((size_t)N, sizeof *r->act);
        r->keep = dpdo__alloc((size_t)N);
        if (!r->s_row || !r->s_node || !r->alpha || !r->act || !r->keep) goto nomem;
        if (r->polish) {
            r->marg = dpdo__alloc_array((size_t)N, sizeof *r->marg);
            if (!r->marg) goto nomem;
        }
        int64_t s = 0;
        for (int32_t i = 0; i < n_nodes; i++)
            for (int64_t k = 0; k < nodes[i]->shard->n; k++, s++) {
                r->s_row[s] = dpdo__shard_row(nodes[i]->shard, k);
                r->s_node[s] = i;
            }
    }
    for (int32_t i = 0; i < n_nodes; i++)
        dpdo__node_retain(nodes[i]);
    if (reg) dpdo__reg_retain(reg);
    r->retained = 1;
    *out = r;
    return DPDO_OK;
nomem:
    dpdo_reference_destroy(r);
    return DPDO_E_NOMEM;
}

DPDO_API void dpdo_reference_destroy(dpdo_reference *ref)
{
    if (!ref || !DPDO__LIVE(ref, DPDO__MAGIC_REFERENCE)) return; /* NULL or destroyed */
    DPDO__KILL(ref);
    if (ref->retained) {
        for (int32_t i = 0; i < ref->n; i++)
            dpdo__node_release(ref->nodes[i]);
        if (ref->reg != &ref->none_reg) dpdo__reg_release(ref->reg);
    }
    dpdo__free(ref->nodes);
    dpdo__free(ref->omega);
    dpdo__free(ref->work);
    dpdo__free(ref->s_row);
    dpdo__free(ref->s_node);
    dpdo__free(ref->alpha);
    dpdo__free(ref->act);
    dpdo__free(ref->keep);
    dpdo__free(ref->marg);
    dpdo__free(ref);
}

DPDO_API const char *dpdo_reference_errmsg(const dpdo_reference *ref)
{
    return ref ? ref->errmsg : DPDO__NULL_TEXT("dpdo_reference_errmsg", "ref");
}
DPDO_API double dpdo_reference_certificate(const dpdo_reference *ref)
{
    return ref ? ref->cert : NAN;
}
DPDO_API int64_t dpdo_reference_iterations(const dpdo_reference *ref)
{
    return ref ? ref->iters : 0;
}
DPDO_API const char *dpdo_reference_method(const dpdo_reference *ref)
{
    return ref ? method_names[ref->method] : "(null)";
}

/* ---- L-BFGS (smooth f and smooth h) ------------------------------------------ */

static int Fg_smooth(struct dpdo_reference *r, const double *x, double *F, double *g)
{
    double f, h;
    int rc = dpdo__ref_f_eval(r, x, 0.0, &f, g);
    if (rc) return rc;
    rc = dpdo__reg_value(r->reg, x, &h, r->errmsg);
    if (rc) return rc;
    double *t = wv(r, 5);
    rc = dpdo__reg_grad(r->reg, x, t, r->errmsg);
    if (rc) return rc;
    for (int64_t j = 0; j < r->dim; j++)
        g[j] += t[j];
    *F = f + h;
    return DPDO_OK;
}

static int solve_lbfgs(struct dpdo_reference *r, double *Fout)
{
    const int64_t d = r->dim;
    const int M = r->mem;
    double *x = wv(r, 0), *dir = wv(r, 1), *g = wv(r, 2), *gn = wv(r, 3), *xn = wv(r, 4);
    double *S = wv(r, 7), *Y = S + (size_t)M * (size_t)d;
    double *rho = Y + (size_t)M * (size_t)d, *al = rho + M;
    int npairs = 0, head = 0;
    double F, Fn;
    memset(x, 0, (size_t)d * sizeof *x);
    int rc = Fg_smooth(r, x, &F, g);
    if (rc) return rc;
    double gn0 = dpdo__ref_nrm(g, d);
    int64_t it = 0;
    int status = DPDO_E_NUMERIC;
    for (; it < r->o.max_iter; it++) {
        double gnorm = dpdo__ref_nrm(g, d);
        if (gnorm <= r->o.tol) {
            status = DPDO_OK;
            break;
        }
        /* two-loop recursion: dir = -H g */
        for (int64_t j = 0; j < d; j++)
            dir[j] = -g[j];
        for (int k = 0; k < npairs; k++) {
            int p = (head - 1 - k + M) % M;
            al[p] = rho[p] * dpdo__ref_dot(S + (size_t)p * d, dir, d);
            double *yp = Y + (size_t)p * d;
            for (int64_t j = 0; j < d; j++)
                dir[j] -= al[p] * yp[j];
        }
        if (npairs > 0) {
            int p = (head - 1 + M) % M;
            double *yp = Y + (size_t)p * d;
            double gam = 1.0 / (rho[p] * dpdo__ref_dot(yp, yp, d));
            for (int64_t j = 0; j < d; j++)
                dir[j] *= gam;
        } else {
            double s0 = 1.0 / fmax(gn0, 1.0);
            for (int64_t j = 0; j < d; j++)
                dir[j] *= s0;
        }
        for (int k = npairs - 1; k >= 0; k--) {
            int p = (head - 1 - k + M) % M;
            double b = rho[p] * dpdo__ref_dot(Y + (size_t)p * d, dir, d);
            double *sp = S + (size_t)p * d;
            for (int64_t j = 0; j < d; j++)
                dir[j] += (al[p] - b) * sp[j];
        }
        double gd = dpdo__ref_dot(g, dir, d);
        if (!(gd < 0.0)) { /* not a descent direction: restart with steepest descent */
            npairs = 0;
            double s0 = 1.0 / fmax(gnorm, 1.0);
            for (int64_t j = 0; j < d; j++)
                dir[j] = -g[j] * s0;
            gd = dpdo__ref_dot(g, dir, d);
        }
        /* backtracking: Armijo, or (near the optimum, where F differences are
         * below rounding) no increase beyond rounding and a smaller gradient */
        double step = 1.0;
        int accepted = 0;
        for (int ls = 0; ls < 60; ls++) {
            for (int64_t j = 0; j < d; j++)
                xn[j] = x[j] + step * dir[j];
            rc = Fg_smooth(r, xn, &Fn, gn);
            if (rc == DPDO_E_NUMERIC) {
                step *= 0.5;
                continue;
            }
            if (rc) return rc;
            if (Fn <= F + 1e-4 * step * gd ||
                (Fn <= F + 4.0 * DBL_EPSILON * fabs(F) && dpdo__ref_nrm(gn, d) < gnorm)) {
                accepted = 1;
                break;
            }
            step *= 0.5;
        }
        if (!accepted) break; /* stalled at rounding level */
        /* store the pair */
        double *sp = S + (size_t)head * d, *yp = Y + (size_t)head * d;
        for (int64_t j = 0; j < d; j++) {
            sp[j] = xn[j] - x[j];
            yp[j] = gn[j] - g[j];
        }
        double sy = dpdo__ref_dot(sp, yp, d);
        if (sy > 1e-300 && sy > 1e-12 * dpdo__ref_nrm(sp, d) * dpdo__ref_nrm(yp, d)) {
            rho[head] = 1.0 / sy;
            head = (head + 1) % M;
            if (npairs < M) npairs++;
        }
        memcpy(x, xn, (size_t)d * sizeof *x);
        memcpy(g, gn, (size_t)d * sizeof *g);
        F = Fn;
    }
    r->iters = it;
    double gnorm = dpdo__ref_nrm(g, d);
    double cert = INFINITY;
    if (r->mu_h > 0.0) cert = gnorm * gnorm / (2.0 * r->mu_h);
    double gap = dpdo__ref_gap_at(r, x, 0.0);
    if (gap < cert) cert = gap;
    r->cert = isinf(cert) ? NAN : cert;
    *Fout = F;
    if (status != DPDO_OK)
        dpdo__err(r->errmsg, DPDO_E_NUMERIC,
                  "lbfgs stopped after %lld iterations with ||grad F|| = %.3g > tol %.3g",
                  (long long)it, gnorm, r->o.tol);
    return status;
}

DPDO_API int dpdo_reference_solve(dpdo_reference *ref, double *x, int64_t dim, double *fstar)
{
    if (!ref) return DPDO_E_INVAL;
    if (x && dim != ref->dim)
        return dpdo__err(ref->errmsg, DPDO_E_INVAL, "x has dimension %lld, the problem %lld",
                         (long long)dim, (long long)ref->dim);
    dpdo__err_clear(ref->errmsg);
    double F = NAN;
    int rc;
    ref->cert = NAN;
    ref->iters = 0;
    switch (ref->method) {
    case M_LBFGS:
        rc = solve_lbfgs(ref, &F);
        break;
    case M_DUALCD:
        rc = dpdo__ref_solve_dualcd(ref, &F);
        break;
    case M_PPA:
        rc = dpdo__ref_solve_ppa(ref, &F);
        break;
    default:
        rc = dpdo__ref_solve_fista(ref, &F);
        break;
    }
    if (rc != DPDO_OK && rc != DPDO_E_NUMERIC) return rc;
    if (rc == DPDO_E_NUMERIC && !isfinite(F)) return rc;
    if (x) memcpy(x, wv(ref, 0), (size_t)ref->dim * sizeof *x);
    if (fstar) *fstar = F;
    return rc;
}

DPDO_API int dpdo_reference_objective(dpdo_reference *ref, const double *x, int64_t dim, double *F)
{
    if (!ref) return DPDO_E_INVAL;
    if (!x || !F) return dpdo__err(ref->errmsg, DPDO_E_INVAL, "x or F is NULL");
    if (dim != ref->dim)
        return dpdo__err(ref->errmsg, DPDO_E_INVAL, "x has dimension %lld, the problem %lld",
                         (long long)dim, (long long)ref->dim);
    size_t bad = dpdo__first_nonfinite(x, (size_t)dim);
    if (bad < (size_t)dim) return dpdo__err(ref->errmsg, DPDO_E_INVAL, "x[%zu] is not finite", bad);
    return dpdo__ref_F_eval(ref, x, F);
}
