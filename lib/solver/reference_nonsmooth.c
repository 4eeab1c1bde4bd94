/* SPDX-License-Identifier: BSD-3-Clause */
/* The reference solver's methods for non-smooth objectives (reference_impl.h): FISTA with
 * backtracking and adaptive restart, the LP-vertex polish of hinge + l1, the proximal point
 * method with dual coordinate descent for hinge + elastic net, and dual coordinate descent
 * for hinge + l2 (Hsieh et al., ICML 2008). */
#include "reference_impl.h"
#include <float.h>
#include <math.h>
#include <string.h>

/* ---- FISTA with backtracking and adaptive restart ------------------------------- */

/* ---- hinge + l1: LP-vertex polish ----------------------------------------
 * min_x sum_s c_s max(0, 1 - z_s) + lambda ||x||_1, z_s = y_s <a_s, x>, is a
 * linear program; smoothing approaches its solution only at rate O(1/eps).
 * At a vertex, the samples on the margin M (z_s = 1) and the support J of x
 * determine both solutions: A x_J = 1 and A^T t = b with A = [y_s a_{s,J}]
 * (s in M), t_s = c_s s_s and b_j = lambda sign(x_j) - sum_{z_s<1} c_s y_s a_sj.
 * We guess M and J from the smoothed iterate with a few thresholds, solve
 * both systems (regularised normal equations, Cholesky), and keep a primal
 * point only if it lowers F and a dual point only if its exact duality gap
 * (computed below, valid for any s in [0,1]^N) beats the current
 * certificate. Nothing here can make the answer worse. */
static int chol_solve(double *G, int64_t k, double *rhs)
{
    for (int64_t j = 0; j < k; j++) {
        double dj = G[j * k + j];
        for (int64_t p = 0; p < j; p++)
            dj -= G[j * k + p] * G[j * k + p];
        if (!(dj > 0.0)) return -1;
        dj = sqrt(dj);
        G[j * k + j] = dj;
        for (int64_t i = j + 1; i < k; i++) {
            double v = G[i * k + j];
            for (int64_t p = 0; p < j; p++)
                v -= G[i * k + p] * G[j * k + p];
            G[i * k + j] = v / dj;
        }
    }
    for (int64_t i = 0; i < k; i++) { /* L y = rhs */
        double v = rhs[i];
        for (int64_t p = 0; p < i; p++)
            v -= G[i * k + p] * rhs[p];
        rhs[i] = v / G[i * k + i];
    }
    for (int64_t i = k - 1; i >= 0; i--) { /* L^T x = y */
        double v = rhs[i];
        for (int64_t p = i + 1; p < k; p++)
            v -= G[p * k + i] * rhs[p];
        rhs[i] = v / G[i * k + i];
    }
    return 0;
}

static double sample_c(const struct dpdo_reference *r, int64_t s)
{
    const struct dpdo_node *nd = r->nodes[r->s_node[s]];
    return r->omega[r->s_node[s]] / (double)nd->shard->n;
}

/* exact gap of hinge + l1 at x for dual s[] (in r->alpha): P(x) - theta sum c_s s_s,
 * theta = min(1, lambda / ||sum c_s s_s y_s a_s||_inf) */
static double hinge_l1_gap(struct dpdo_reference *r, const double *x)
{
    const int64_t d = r->dim, N = r->nsamp;
    double *v = wv(r, 5);
    memset(v, 0, (size_t)d * sizeof *v);
    double cs = 0.0, P = 0.0;
    for (int64_t s = 0; s < N; s++) {
        const struct dpdo_dataset *ds = r->nodes[r->s_node[s]]->shard->parent;
        int64_t row = r->s_row[s];
        double c = sample_c(r, s), y = ds->y[row];
        double z = y * dpdo__row_dot(ds, row, x);
        if (z < 1.0) P += c * (1.0 - z);
        double sv = r->alpha[s];
        if (sv != 0.0) dpdo__row_axpy(ds, row, c * sv * y, v);
        cs += c * sv;
    }
    double lam = r->reg->p[0], vmax = 0.0, l1 = 0.0;
    for (int64_t j = 0; j < d; j++)
        vmax = fmax(vmax, fabs(v[j])), l1 += fabs(x[j]);
    double theta = vmax <= lam ? 1.0 : lam / vmax;
    double gap = P + lam * l1 - theta * cs;
    return gap < 0.0 ? 0.0 : gap;
}

static void hinge_l1_polish(struct dpdo_reference *r, double *x, double *F, double *cert)
{
    const int64_t d = r->dim, N = r->nsamp;
    const double lam = r->reg->p[0];
    double *xt = wv(r, 4), *bj = wv(r, 6);
    int64_t *M = r->act;
    int64_t J[4096];
    int64_t nJ = 0;
    for (int64_t j = 0; j < d; j++)
        if (x[j] != 0.0) {
            if (nJ == 4096) return;
            J[nJ++] = j;
        }
    for (int64_t s = 0; s < N; s++) {
        const struct dpdo_dataset *ds = r->nodes[r->s_node[s]]->shard->parent;
        r->marg[s] = ds->y[r->s_row[s]] * dpdo__row_dot(ds, r->s_row[s], x);
    }
    static const double taus[4] = {1e-8, 1e-6, 1e-4, 1e-3};
    for (int ti = 0; ti < 4; ti++) {
        double tau = taus[ti];
        int64_t nM = 0;
        for (int64_t s = 0; s < N; s++)
            if (fabs(1.0 - r->marg[s]) <= tau) M[nM++] = s;
        /* a vertex has |M| close to |J|; many more margin samples mean the
         * iterate is not accurate enough for this threshold (and the dense
         * work would be large) */
        if (nM == 0 || nM > 4096 || nJ == 0 || nM > 2 * nJ + 16) continue;
        int64_t k = nM < nJ ? nM : nJ;
        double *A = dpdo__alloc_array((size_t)(nM * nJ + k * k + 2 * (nM + nJ)), sizeof(double));
        if (!A) return;
        double *G = A + nM * nJ, *w1 = G + k * k, *w2 = w1 + (nM + nJ);
        for (int64_t a = 0; a < nM; a++) {
            const struct dpdo_dataset *ds = r->nodes[r->s_node[M[a]]]->shard->parent;
            int64_t row = r->s_row[M[a]];
            double y = ds->y[row];
            memset(xt, 0, (size_t)d * sizeof *xt);
            dpdo__row_axpy(ds, row, y, xt); /* y a_s as a dense vector */
            for (int64_t b = 0; b < nJ; b++)
                A[a * nJ + b] = xt[J[b]];
        }
        /* G = A^T A (k = nJ) or A A^T (k = nM), plus a tiny ridge */
        double tr = 0.0;
        for (int64_t i = 0; i < k; i++)
            for (int64_t j = 0; j <= i; j++) {
                double g = 0.0;
                if (k == nJ)
                    for (int64_t a = 0; a < nM; a++)
                        g += A[a * nJ + i] * A[a * nJ + j];
                else
                    for (int64_t b = 0; b < nJ; b++)
                        g += A[i * nJ + b] * A[j * nJ + b];
                G[i * k + j] = G[j * k + i] = g;
                if (i == j) tr += g;
            }
        double eps = 1e-13 * (tr / (double)k) + 1e-300;
        for (int64_t i = 0; i < k; i++)
            G[i * k + i] += eps;
        double *Gc = dpdo__alloc_array((size_t)(k * k), sizeof(double));
        if (!Gc) {
            dpdo__free(A);
            return;
        }
        /* primal: minimum-norm correction delta_J with A delta = 1 - A x_J */
        for (int64_t a = 0; a < nM; a++) {
            double z = 0.0;
            for (int64_t b = 0; b < nJ; b++)
                z += A[a * nJ + b] * x[J[b]];
            w1[a] = 1.0 - z;
        }
        memcpy(xt, x, (size_t)d * sizeof *xt);
        memcpy(Gc, G, (size_t)(k * k) * sizeof *Gc);
        int ok = 1;
        if (k == nJ) { /* delta = G^{-1} A^T r */
            for (int64_t b = 0; b < nJ; b++) {
                double v = 0.0;
                for (int64_t a = 0; a < nM; a++)
                    v += A[a * nJ + b] * w1[a];
                w2[b] = v;
            }
            ok = chol_solve(Gc, k, w2) == 0;
            if (ok)
                for (int64_t b = 0; b < nJ; b++)
                    xt[J[b]] += w2[b];
        } else { /* delta = A^T G^{-1} r */
            memcpy(w2, w1, (size_t)nM * sizeof *w2);
            ok = chol_solve(Gc, k, w2) == 0;
            if (ok)
                for (int64_t b = 0; b < nJ; b++) {
                    double v = 0.0;
                    for (int64_t a = 0; a < nM; a++)
                        v += A[a * nJ + b] * w2[a];
                    xt[J[b]] += v;
                }
        }
        if (ok && dpdo__all_finite(xt, (size_t)d)) {
            double Ft;
            if (dpdo__ref_F_eval(r, xt, &Ft) == DPDO_OK && Ft < *F) {
                memcpy(x, xt, (size_t)d * sizeof *x);
                *F = Ft;
            }
        }
        /* dual: s = 1 below the margin, 0 above, t_M solving A^T t = b */
        memset(bj, 0, (size_t)d * sizeof *bj);
        for (int64_t s = 0; s < N; s++) {
            r->alpha[s] = r->marg[s] < 1.0 - tau ? 1.0 : 0.0;
            if (r->alpha[s] != 0.0) {
                const struct dpdo_dataset *ds = r->nodes[r->s_node[s]]->shard->parent;
                dpdo__row_axpy(ds, r->s_row[s], sample_c(r, s) * ds->y[r->s_row[s]], bj);
            }
        }
        for (int64_t b = 0; b < nJ; b++)
            w1[b] = lam * (x[J[b]] > 0 ? 1.0 : (x[J[b]] < 0 ? -1.0 : 0.0)) - bj[J[b]];
        memcpy(Gc, G, (size_t)(k * k) * sizeof *Gc);
        if (k == nJ) { /* t = A G^{-1} b */
            memcpy(w2, w1, (size_t)nJ * sizeof *w2);
            ok = chol_solve(Gc, k, w2) == 0;
            for (int64_t a = 0; a < nM && ok; a++) {
                double v = 0.0;
                for (int64_t b = 0; b < nJ; b++)
                    v += A[a * nJ + b] * w2[b];
                w1[nJ + a] = v;
            }
        } else { /* t = G^{-1} A b */
            for (int64_t a = 0; a < nM; a++) {
                double v = 0.0;
                for (int64_t b = 0; b < nJ; b++)
                    v += A[a * nJ + b] * w1[b];
                w2[a] = v;
            }
            ok = chol_solve(Gc, k, w2) == 0;
            for (int64_t a = 0; a < nM && ok; a++)
                w1[nJ + a] = w2[a];
        }
        if (ok) {
            for (int64_t a = 0; a < nM; a++) {
                double sv = w1[nJ + a] / sample_c(r, M[a]);
                r->alpha[M[a]] = isfinite(sv) ? fmin(fmax(sv, 0.0), 1.0) : 0.5;
            }
            double g = hinge_l1_gap(r, x);
            if (g < *cert) *cert = g;
        }
        dpdo__free(Gc);
        dpdo__free(A);
        if (*cert <= r->o.tol * fmax(1.0, fabs(*F))) return;
    }
}

/* ---- hinge + elastic net (l2 > 0): proximal point + dual coordinate descent ----
 * (Written for l2 >= 0; selected only for l2 > 0. With l2 = 0, i.e. the
 * hinge + l1 linear program, its inner problems become ill-conditioned as rp
 * shrinks and it does not yet beat smoothed-fista + polish on dense data.)
 * P(x) = sum_s c_s max(0, 1 - y_s <a_s, x>) + l1 ||x||_1 + (l2/2) ||x||^2 is a
 * linear program when l2 = 0. Outer loop: the proximal point method
 * (Rockafellar 1976), x_{k+1} ~ argmin P(x) + (rp/2) ||x - z_k||^2, z_{k+1} =
 * x_{k+1}; it converges for any rp > 0 (in finitely many exact steps for an
 * LP). Each subproblem is, with rho = l2 + rp and w0 = (rp / rho) z_k,
 *     min_x sum_s c_s hinge_s(x) + l1 ||x||_1 + (rho/2) ||x - w0||^2 (+ const),
 * whose dual over b_s in [0, c_s] is smooth: with v = sum_s b_s y_s a_s,
 * x(b) = soft(w0 + v / rho, l1 / rho), the partial derivative in b_s is
 * 1 - y_s <a_s, x(b)> and its Lipschitz constant ||a_s||^2 / rho. Inner
 * loop: dual coordinate ascent with shrinking, as dpdo__ref_solve_dualcd (Hsieh et al.
 * 2008), maintaining v and x(b). b is warm-started across outer steps.
 * Certificate: b is feasible for the ORIGINAL dual, max sum_s b_s - h*(v),
 * after scaling by theta in [0,1] (theta b stays in the box): the bound is
 * P(x) - max_theta (theta sum b_s - h*(theta v)) over theta in
 * {1, min(1, l1 / ||v||_inf)}, with v recomputed from scratch (no drift). */
static double softt(double u, double t)
{
    return u > t ? u - t : (u < -t ? u + t : 0.0);
}

/* G(t) = y <a_row, x(b + t e_s)> - 1, increasing in t */
static double ppa_G(const struct dpdo_dataset *ds, int64_t row, double y, double t,
                    const double *w0, const double *v, double irho, double thr)
{
    double z = 0.0, ty = t * y;
    if (ds->layout == DPDO__DS_DENSE) {
        const double *ar = ds->X + (size_t)row * (size_t)ds->d;
        for (int64_t j = 0; j < ds->d; j++)
            if (ar[j] != 0.0) z += ar[j] * softt(w0[j] + (v[j] + ty * ar[j]) * irho, thr);
    } else {
        for (int64_t e = ds->rowptr[row]; e < ds->rowptr[row + 1]; e++) {
            int64_t j = ds->colidx[e];
            z += ds->val[e] * softt(w0[j] + (v[j] + ty * ds->val[e]) * irho, thr);
        }
    }
    return y * z - 1.0;
}

/* certificate at (x, b): writes F(x) and the gap (INFINITY if no finite bound) */
static int ppa_gap(struct dpdo_reference *r, const double *x, double *F, double *gap)
{
    const int64_t d = r->dim, N = r->nsamp;
    double *t = wv(r, 3), *u = wv(r, 5);
    memset(t, 0, (size_t)d * sizeof *t);
    double sb = 0.0;
    for (int64_t s = 0; s < N; s++) {
        double b = r->alpha[s];
        if (b == 0.0) continue;
        const struct dpdo_dataset *ds = r->nodes[r->s_node[s]]->shard->parent;
        dpdo__row_axpy(ds, r->s_row[s], b * ds->y[r->s_row[s]], t);
        sb += b;
    }
    int rc = dpdo__ref_F_eval(r, x, F);
    if (rc) return rc;
    double amax = 0.0;
    for (int64_t j = 0; j < d; j++)
        amax = fmax(amax, fabs(t[j]));
    const double l1 = r->reg->p[0];
    double thetas[2] = {1.0, amax <= l1 ? 1.0 : l1 / amax}, best = -INFINITY;
    for (int k = 0; k < 2; k++) {
        for (int64_t j = 0; j < d; j++)
            u[j] = thetas[k] * t[j];
        int ok = 0;
        double hs = dpdo__reg_conjugate(r->reg, u, &ok);
        double D = thetas[k] * sb - hs;
        if (ok && isfinite(D) && D > best) best = D;
    }
    double g = *F - best;
    *gap = isnan(g) ? INFINITY : (g < 0.0 ? 0.0 : g);
    return DPDO_OK;
}

/* Dual coordinate descent with shrinking (Hsieh et al. 2008, Alg. 3): the
 * projected gradient PG of dual variable al in [0, C] with gradient G.
 * Returns 0 when the variable sits at a bound with a gradient pushing it
 * outward beyond last sweep's extremes, i.e. it is shrunk from the active
 * set; else 1 with *PG set. */
static int dcd_projected_grad(double al, double C, double G, double PGmax_old, double PGmin_old,
                              double *PG)
{
    *PG = 0.0;
    if (al <= 0.0) {
        if (G > PGmax_old) return 0;
        if (G < 0.0) *PG = G;
    } else if (al >= C) {
        if (G < PGmin_old) return 0;
        if (G > 0.0) *PG = G;
    } else
        *PG = G;
    return 1;
}

int dpdo__ref_solve_ppa(struct dpdo_reference *r, double *Fout)
{
    const int64_t d = r->dim, N = r->nsamp;
    const double l1 = r->reg->p[0], l2 = r->reg->kind == DPDO__REG_EN ? r->reg->p[1] : 0.0;
    double *x = wv(r, 0), *v = wv(r, 1), *w0 = wv(r, 2), *best = wv(r, 4);
    /* proximal weight rp: starts at max(l1, l2) and halves every proximal
     * step down to 1e-5 of that: well-conditioned inner problems early,
     * long proximal steps late (docs/model.md, measured) */
    double rp = fmax(fmax(l1, l2), 1e-6);
    const double rpf = 0.5, rpmin = 1e-5 * rp;
    double rho = l2 + rp, irho = 1.0 / rho, thr = l1 / rho, wsc = rp / rho;
    memset(x, 0, (size_t)d * sizeof *x);
    memset(v, 0, (size_t)d * sizeof *v);
    memset(w0, 0, (size_t)d * sizeof *w0);
    int64_t *act = r->act;
    unsigned char *keep = r->keep;
    for (int64_t s = 0; s < N; s++) {
        const struct dpdo_dataset *ds = r->nodes[r->s_node[s]]->shard->parent;
        /* a zero row's hinge is the constant 1: its dual optimum is b_s = c_s */
        r->alpha[s] = ds->row_norm[r->s_row[s]] == 0.0 ? sample_c(r, s) : 0.0;
    }
    int status = DPDO_E_NUMERIC;
    int64_t ep = 0;
    double F = NAN, gap = INFINITY, best_F = NAN, best_gap = INFINITY;
    double eps_in = 0.1;
    while (ep < r->o.max_iter) {
        /* inner: dual CD with shrinking until the full set is eps_in-optimal */
        for (int64_t s = 0; s < N; s++)
            act[s] = s;
        int64_t nact = N;
        double PGmax_old = INFINITY, PGmin_old = -INFINITY;
        for (; ep < r->o.max_iter; ep++) {
            uint64_t na = (uint64_t)nact;
            if (na == 0) na = 1;
            uint64_t a = (0x9E3779B97F4A7C15ull + 2 * (uint64_t)ep) % na;
            if (a == 0) a = 1;
            for (;;) {
                uint64_t p = a, q = na;
                while (q) {
                    uint64_t tq = p % q;
                    p = q;
                    q = tq;
                }
                if (p == 1) break;
                a = a + 1 >= na ? 1 : a + 1;
            }
            uint64_t su = ((uint64_t)ep * 0xBF58476D1CE4E5B9ull) % na;
            double PGmax = -INFINITY, PGmin = INFINITY;
            for (int64_t k = 0; k < nact; k++, su = (su + a) % na) {
                int64_t pos = (int64_t)su, s = act[pos];
                keep[pos] = 1;
                const struct dpdo_dataset *ds = r->nodes[r->s_node[s]]->shard->parent;
                int64_t row = r->s_row[s];
                double Q = ds->row_norm[row] * ds->row_norm[row] * irho;
                if (Q == 0.0) continue;
                double C = sample_c(r, s), y = ds->y[row];
                double G = y * dpdo__row_dot(ds, row, x) - 1.0;
                double al = r->alpha[s], PG;
                if (!dcd_projected_grad(al, C, G, PGmax_old, PGmin_old, &PG)) {
                    keep[pos] = 0;
                    continue;
                }
                if (PG > PGmax) PGmax = PG;
                if (PG < PGmin) PGmin = PG;
                if (PG == 0.0) continue;
                /* exact coordinate maximisation: the root of the monotone,
                 * piecewise linear G(t) on [-al, C - al] by the Illinois
                 * method, kept on the side of t = 0 unless the root is hit
                 * (so the dual value never decreases), and never shorter
                 * than the Lipschitz step -G / Q */
                double ta, tb, Ga, Gb, tt;
                if (G < 0.0) {
                    ta = 0.0, Ga = G, tb = C - al;
                    Gb = ppa_G(ds, row, y, tb, w0, v, irho, thr);
                } else {
                    tb = 0.0, Gb = G, ta = -al;
                    Ga = ppa_G(ds, row, y, ta, w0, v, irho, thr);
                }
                if (G < 0.0 && Gb <= 0.0)
                    tt = tb;
                else if (G > 0.0 && Ga >= 0.0)
                    tt = ta;
                else {
                    tt = G < 0.0 ? ta : tb;
                    int side = 0;
                    for (int it = 0; it < 12; it++) {
                        double tn = ta - Ga * (tb - ta) / (Gb - Ga);
                        if (!(tn > ta && tn < tb)) break;
                        double Gn = ppa_G(ds, row, y, tn, w0, v, irho, thr);
                        if (Gn == 0.0) {
                            ta = tb = tn;
                            break;
                        }
                        if (Gn < 0.0) {
                            ta = tn, Ga = Gn;
                            if (side == -1) Gb *= 0.5;
                            side = -1;
                        } else {
                            tb = tn, Gb = Gn;
                            if (side == 1) Ga *= 0.5;
                            side = 1;
                        }
                        if (fabs(Gn) <= 1e-14 || tb - ta <= 1e-15 * C) break;
                    }
                    /* the Lipschitz step -G/Q is on the side of t = 0 too */
                    double ts = -G / Q;
                    tt = G < 0.0 ? fmax(ta, fmin(ts, tb)) : fmin(tb, fmax(ts, ta));
                }
                double an = fmin(fmax(al + tt, 0.0), C);
                if (an == al) continue;
                double dy = (an - al) * y;
                r->alpha[s] = an;
                if (ds->layout == DPDO__DS_DENSE) {
                    const double *ar = ds->X + (size_t)row * (size_t)ds->d;
                    for (int64_t j = 0; j < d; j++) {
                        v[j] += dy * ar[j];
                        x[j] = softt(w0[j] + v[j] * irho, thr);
                    }
                } else {
                    for (int64_t e = ds->rowptr[row]; e < ds->rowptr[row + 1]; e++) {
                        int64_t j = ds->colidx[e];
                        v[j] += dy * ds->val[e];
                        x[j] = softt(w0[j] + v[j] * irho, thr);
                    }
                }
            }
            int64_t m = 0;
            for (int64_t k = 0; k < nact; k++)
                if (keep[k]) act[m++] = act[k];
            nact = m;
            if (PGmax == -INFINITY) PGmax = 0.0;
            if (PGmin == INFINITY) PGmin = 0.0;
            if (PGmax - PGmin <= eps_in) {
                if (nact < N) {
                    for (int64_t s = 0; s < N; s++)
                        act[s] = s;
                    nact = N;
                    PGmax_old = INFINITY;
                    PGmin_old = -INFINITY;
                    continue;
                }
                ep++;
                break;
            }
            PGmax_old = PGmax <= 0.0 ? INFINITY : PGmax;
            PGmin_old = PGmin >= 0.0 ? -INFINITY : PGmin;
        }
        /* certificate of the original problem at (x, b) */
        int rc = ppa_gap(r, x, &F, &gap);
        if (rc) return rc;
        if (gap < best_gap) {
            best_gap = gap;
            best_F = F;
            memcpy(best, x, (size_t)d * sizeof *best);
        }
        if (best_gap <= r->o.tol * fmax(1.0, fabs(best_F))) {
            status = DPDO_OK;
            break;
        }
        /* proximal step: new centre z = x; keep b (and v), recompute x(b) */
        if (rp * rpf >= rpmin) rp *= rpf;
        rho = l2 + rp;
        irho = 1.0 / rho;
        thr = l1 / rho;
        wsc = rp / rho;
        for (int64_t j = 0; j < d; j++) {
            w0[j] = wsc * x[j];
            x[j] = softt(w0[j] + v[j] * irho, thr);
        }
        eps_in = fmax(0.3 * eps_in, 1e-12);
    }
    r->iters = ep;
    if (isinf(best_gap)) { /* no certificate at all: report the last point */
        int rc = dpdo__ref_F_eval(r, x, &best_F);
        if (rc) return rc;
        memcpy(best, x, (size_t)d * sizeof *best);
    }
    memcpy(x, best, (size_t)d * sizeof *x);
    r->cert = isinf(best_gap) ? NAN : best_gap;
    *Fout = best_F;
    if (status != DPDO_OK)
        dpdo__err(r->errmsg, DPDO_E_NUMERIC,
                  "dual-cd-ppa stopped after %lld epochs: certificate %.3g, tol %.3g",
                  (long long)ep, r->cert, r->o.tol);
    return status;
}

int dpdo__ref_solve_fista(struct dpdo_reference *r, double *Fout)
{
    const int64_t d = r->dim;
    double *x = wv(r, 0), *y = wv(r, 1), *gy = wv(r, 3), *xn = wv(r, 4), *diff = wv(r, 2);
    double L = 1.0, t = 1.0;
    double mu_s = r->any_hinge ? 1.0 : 0.0;
    memset(x, 0, (size_t)d * sizeof *x);
    /* start feasible: project 0 */
    int rc = dpdo__reg_prox(r->reg, x, 1.0, x, r->errmsg);
    if (rc) return rc;
    memcpy(y, x, (size_t)d * sizeof *y);
    int status = DPDO_E_NUMERIC;
    int64_t it = 0;
    double F = NAN, gap = INFINITY, gmap = INFINITY;
    double *best = wv(r, 7), best_cert = INFINITY, best_F = NAN; /* S block unused here */
    for (; it < r->o.max_iter; it++) {
        double fy, fx;
        rc = dpdo__ref_f_eval(r, y, mu_s, &fy, gy);
        if (rc) return rc;
        for (int ls = 0;; ls++) {
            for (int64_t j = 0; j < d; j++)
                xn[j] = y[j] - gy[j] / L;
            rc = dpdo__reg_prox(r->reg, xn, 1.0 / L, xn, r->errmsg);
            if (rc) return rc;
            rc = dpdo__ref_f_eval(r, xn, mu_s, &fx, NULL);
            if (rc) return rc;
            double q = fy;
            double sq = 0.0;
            for (int64_t j = 0; j < d; j++) {
                diff[j] = xn[j] - y[j];
                q += gy[j] * diff[j];
                sq += diff[j] * diff[j];
            }
            q += 0.5 * L * sq;
            if (fx <= q + 8.0 * DBL_EPSILON * fabs(fy) || ls > 100) {
                gmap = L * sqrt(sq);
                break;
            }
            L *= 2.0;
        }
        /* adaptive restart (O'Donoghue & Candes 2015): momentum against progress */
        double rs = 0.0;
        for (int64_t j = 0; j < d; j++)
            rs += (y[j] - xn[j]) * (xn[j] - x[j]);
        double tn = 0.5 * (1.0 + sqrt(1.0 + 4.0 * t * t));
        double beta = (t - 1.0) / tn;
        if (rs > 0.0) {
            tn = 1.0;
            beta = 0.0;
        }
        for (int64_t j = 0; j < d; j++) {
            double xo = x[j];
            x[j] = xn[j];
            y[j] = xn[j] + beta * (xn[j] - xo);
        }
        t = tn;
        L *= 0.95; /* let the estimate shrink again */
        if (it % 10 == 9 || it + 1 == r->o.max_iter) {
            rc = dpdo__ref_F_eval(r, x, &F);
            if (rc) return rc;
            double target = r->o.tol * fmax(1.0, fabs(F));
            if (r->gap_ok) {
                /* any smoothing parameter gives a valid dual point; near a
                 * kink-heavy optimum a slightly larger one is often better */
                gap = dpdo__ref_gap_at(r, x, mu_s);
                double gb = gap;
                if (mu_s > 0.0)
                    gb = fmin(gb, fmin(dpdo__ref_gap_at(r, x, 10.0 * mu_s),
                                       dpdo__ref_gap_at(r, x, 0.1 * mu_s)));
                if (gb < best_cert) { /* keep the best certified point */
                    best_cert = gb;
                    best_F = F;
                    memcpy(best, x, (size_t)d * sizeof *best);
                }
                if (r->polish && it % 50 == 49 && best_cert > target) {
                    double Fp = F, cp = best_cert;
                    /* diff (work vector 2) is free here; the polish uses 4, 5, 6 */
                    memcpy(diff, x, (size_t)d * sizeof *diff);
                    hinge_l1_polish(r, diff, &Fp, &cp);
                    if (cp < best_cert) {
                        best_cert = cp;
                        best_F = Fp;
                        memcpy(best, diff, (size_t)d * sizeof *best);
                    }
                }
                if (best_cert <= target) {
                    status = DPDO_OK;
                    it++;
                    break;
                }
                if (mu_s > 0.0 && gap <= 3.0 * mu_s) {
                    mu_s *= 0.1;
                    t = 1.0;
                    memcpy(y, x, (size_t)d * sizeof *y);
                }
            } else {
                /* uncertified: gradient-mapping norm of the (smoothed) problem */
                double gtol = fmax(r->o.tol, 1e-3 * mu_s);
                if (mu_s > r->o.tol && gmap <= gtol) {
                    mu_s *= 0.1;
                    t = 1.0;
                    memcpy(y, x, (size_t)d * sizeof *y);
                } else if (mu_s <= r->o.tol && gmap <= gtol) {
                    status = DPDO_OK;
                    it++;
                    break;
                }
            }
        }
    }
    r->iters = it;
    int rc2 = dpdo__ref_F_eval(r, x, &F);
    if (rc2) return rc2;
    if (r->gap_ok) {
        double g0 = dpdo__ref_gap_at(r, x, mu_s),
               g1 = mu_s > 0 ? dpdo__ref_gap_at(r, x, 0.0) : INFINITY;
        r->cert = fmin(g0, g1);
        if (best_cert < r->cert) { /* return the best certified point seen */
            r->cert = best_cert;
            F = best_F;
            memcpy(x, best, (size_t)d * sizeof *x);
        }
        if (r->any_hinge) /* a ladder of dual points at the returned x */
            for (double m = 1.0; m > 1e-14; m *= 0.1)
                r->cert = fmin(r->cert, dpdo__ref_gap_at(r, x, m));
        if (r->polish && r->cert > r->o.tol * fmax(1.0, fabs(F)))
            hinge_l1_polish(r, x, &F, &r->cert);
        if (r->polish && status != DPDO_OK && r->cert <= r->o.tol * fmax(1.0, fabs(F))) {
            status = DPDO_OK;
            dpdo__err_clear(r->errmsg);
        }
        if (isinf(r->cert)) r->cert = NAN;
    } else
        r->cert = NAN;
    *Fout = F;
    if (status != DPDO_OK)
        dpdo__err(r->errmsg, DPDO_E_NUMERIC,
                  "%s stopped after %lld iterations: certificate %.3g, gradient mapping %.3g, "
                  "tol %.3g",
                  method_names[r->method], (long long)it, r->cert, gmap, r->o.tol);
    return status;
}

/* ---- dual coordinate descent for hinge + l2 (Hsieh et al. 2008) ----------------
 * min_w lambda/2 ||w||^2 + sum_s c_s max(0, 1 - y_s <a_s, w>). Divided by
 * lambda this is the SVM primal with C_s = c_s / lambda; its dual is
 * max_alpha sum alpha_s - 1/2 ||sum alpha_s y_s a_s||^2, 0 <= alpha_s <= C_s,
 * with w = sum alpha_s y_s a_s. Gap (ours) = lambda (P'(w) - D(alpha)). */
static int dualcd_gap(struct dpdo_reference *r, double *F, double *gap)
{
    /* primal: lambda/2 ||w||^2 + sum c_s hinge; dual: lambda (sum alpha - ||w||^2/2) */
    const double lam = r->reg->p[0];
    double *w = wv(r, 0);
    double f;
    int rc = dpdo__ref_f_eval(r, w, 0.0, &f, NULL);
    if (rc) return rc;
    double ww = dpdo__ref_dot(w, w, r->dim), sa = 0.0;
    for (int64_t s = 0; s < r->nsamp; s++)
        sa += r->alpha[s];
    *F = f + 0.5 * lam * ww;
    double g = *F - lam * (sa - 0.5 * ww);
    *gap = g < 0.0 ? 0.0 : g;
    return DPDO_OK;
}

/* With shrinking as in Hsieh et al. (2008) Sec. 3.2 / LIBLINEAR: variables
 * at a bound whose projected gradient points outwards beyond the previous
 * sweep's extremes leave the active set; when the active set is optimal to
 * eps_in, the full set is restored; when the full set is, the duality gap
 * decides (and eps_in shrinks if the gap is still too large). */
int dpdo__ref_solve_dualcd(struct dpdo_reference *r, double *Fout)
{
    const int64_t d = r->dim, N = r->nsamp;
    double *w = wv(r, 0);
    const double lam = r->reg->p[0];
    memset(w, 0, (size_t)d * sizeof *w);
    memset(r->alpha, 0, (size_t)N * sizeof *r->alpha);
    int64_t *act = r->act;
    unsigned char *keep = r->keep;
    for (int64_t s = 0; s < N; s++)
        act[s] = s;
    int64_t nact = N;
    double PGmax_old = INFINITY, PGmin_old = -INFINITY, eps_in = 0.1;
    int status = DPDO_E_NUMERIC;
    int64_t ep = 0;
    double F = NAN, gap = INFINITY;
    for (; ep < r->o.max_iter; ep++) {
        /* deterministic pseudo-random visiting order: p = (b + a k) mod nact with
         * gcd(a, nact) = 1; a and b change every epoch */
        uint64_t na = (uint64_t)nact;
        uint64_t a = (0x9E3779B97F4A7C15ull + 2 * (uint64_t)ep) % na;
        if (a == 0) a = 1;
        for (;;) {
            uint64_t p = a, q = na;
            while (q) {
                uint64_t tq = p % q;
                p = q;
                q = tq;
            }
            if (p == 1) break;
            a = a + 1 >= na ? 1 : a + 1;
        }
        uint64_t su = ((uint64_t)ep * 0xBF58476D1CE4E5B9ull) % na;
        double PGmax = -INFINITY, PGmin = INFINITY;
        for (int64_t k = 0; k < nact; k++, su = (su + a) % na) {
            int64_t pos = (int64_t)su;
            int64_t s = act[pos];
            keep[pos] = 1;
            const struct dpdo_node *nd = r->nodes[r->s_node[s]];
            const struct dpdo_dataset *ds = nd->shard->parent;
            int64_t row = r->s_row[s];
            double Q = ds->row_norm[row] * ds->row_norm[row];
            if (Q == 0.0) continue;
            double C = r->omega[r->s_node[s]] / (double)nd->shard->n / lam;
            double y = ds->y[row];
            double G = y * dpdo__row_dot(ds, row, w) - 1.0;
            double al = r->alpha[s], PG;
            if (!dcd_projected_grad(al, C, G, PGmax_old, PGmin_old, &PG)) {
                keep[pos] = 0;
                continue;
            }
            if (PG > PGmax) PGmax = PG;
            if (PG < PGmin) PGmin = PG;
            if (PG != 0.0) {
                double an = fmin(fmax(al - G / Q, 0.0), C);
                if (an != al) {
                    dpdo__row_axpy(ds, row, (an - al) * y, w);
                    r->alpha[s] = an;
                }
            }
        }
        int64_t m = 0;
        for (int64_t k = 0; k < nact; k++)
            if (keep[k]) act[m++] = act[k];
        nact = m;
        if (PGmax == -INFINITY) PGmax = 0.0;
        if (PGmin == INFINITY) PGmin = 0.0;
        int check = (ep % 50 == 49) || ep + 1 == r->o.max_iter;
        if (PGmax - PGmin <= eps_in) {
            if (nact < N) { /* the active set is optimal: restore the full set */
                for (int64_t s = 0; s < N; s++)
                    act[s] = s;
                nact = N;
                PGmax_old = INFINITY;
                PGmin_old = -INFINITY;
                continue;
            }
            check = 1;
            eps_in *= 0.1;
        }
        PGmax_old = PGmax <= 0.0 ? INFINITY : PGmax;
        PGmin_old = PGmin >= 0.0 ? -INFINITY : PGmin;
        if (check) {
            int rc = dualcd_gap(r, &F, &gap);
            if (rc) return rc;
            if (gap <= r->o.tol * fmax(1.0, fabs(F))) {
                status = DPDO_OK;
                ep++;
                break;
            }
        }
    }
    r->iters = ep;
    if (status != DPDO_OK) {
        int rc = dualcd_gap(r, &F, &gap);
        if (rc) return rc;
    }
    r->cert = gap;
    int rc = dpdo__ref_F_eval(r, w, &F);
    if (rc) return rc;
    *Fout = F;
    if (status != DPDO_OK)
        dpdo__err(r->errmsg, DPDO_E_NUMERIC,
                  "dual-cd stopped after %lld epochs with duality gap %.3g > tol", (long long)ep,
                  gap);
    return status;
}
