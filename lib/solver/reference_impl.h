/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to the reference solver (reference.c: the handle and L-BFGS; reference_eval.c:
 * evaluation and certificates; reference_nonsmooth.c: FISTA, the hinge + l1 polish, the proximal
 * point method and dual coordinate descent). Never installed. */
#ifndef DPDO_REFERENCE_IMPL_H
#define DPDO_REFERENCE_IMPL_H
#include "../model/model_impl.h"

enum { M_LBFGS = 0, M_FISTA, M_DUALCD, M_SFISTA, M_PPA };
static const char *const method_names[] = {"lbfgs", "fista", "dual-cd", "smoothed-fista",
                                           "dual-cd-ppa"};

struct dpdo_reference {
    uint32_t magic; /* DPDO__MAGIC_* while alive, 0 after destroy (core_impl.h) */
    struct dpdo_node **nodes;
    int32_t n;
    struct dpdo_regularizer *reg;
    struct dpdo_regularizer none_reg; /* used when reg == NULL */
    dpdo_reference_options o;
    int64_t dim;
    double *omega; /* per-node weight in F */
    double *work;  /* vectors, see ws() */
    int mem;
    /* dual CD (hinge + l2) */
    int64_t nsamp;
    int64_t *s_row;
    int32_t *s_node;
    double *alpha;
    int64_t *act; /* active set (shrinking); margin set (polish) */
    double *marg; /* polish: y_s <a_s, x> per sample */
    int polish;   /* hinge + l1: LP-vertex polish of the smoothed solution */
    unsigned char *keep;
    /* properties */
    int method;
    int gap_ok; /* every loss a built-in phi and h has a conjugate */
    int any_hinge;
    double mu_h; /* modulus of h */
    /* results */
    double cert;
    int64_t iters;
    int retained; /* the nodes and reg are retained (borrowed handles, core_impl.h) */
    char errmsg[DPDO__ERRMSG_LEN];
};

/* work vectors: 0 x, 1 y, 2 g, 3 gy, 4 xn, 5 t1, 6 t2, then S (mem*dim), Y (mem*dim), rho/alpha
 * (2*mem) */
static inline double *wv(struct dpdo_reference *r, int k)
{
    return r->work + (size_t)k * (size_t)r->dim;
}

/* the node's loss is a built-in phi of a linear model (the certificates apply) */
static inline int is_builtin_phi(const struct dpdo_node *nd)
{
    return nd->loss->kind == DPDO_LOSS_KIND_PHI && nd->loss->builtin >= 0;
}

/* F's smooth part f (with the hinge smoothed at mu_s) and its gradient g (NULL: none) */
int dpdo__ref_f_eval(struct dpdo_reference *r, const double *x, double mu_s, double *f, double *g);
/* the objective F(x) */
int dpdo__ref_F_eval(struct dpdo_reference *r, const double *x, double *F);
/* a duality-gap certificate at x (hinge smoothed at mu_s); INFINITY if none */
double dpdo__ref_gap_at(struct dpdo_reference *r, const double *x, double mu_s);
double dpdo__ref_dot(const double *a, const double *b, int64_t n);
double dpdo__ref_nrm(const double *v, int64_t n);

/* the methods of reference_nonsmooth.c: the minimum found in *Fout, x in wv(r, 0) */
int dpdo__ref_solve_fista(struct dpdo_reference *r, double *Fout);
int dpdo__ref_solve_ppa(struct dpdo_reference *r, double *Fout);
int dpdo__ref_solve_dualcd(struct dpdo_reference *r, double *Fout);

#endif
