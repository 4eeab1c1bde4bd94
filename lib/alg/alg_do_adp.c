/* SPDX-License-Identifier: BSD-3-Clause */
/* DO-ADP: decentralized momentum SGD with random activation and compressed
 * (sparsified) difference messages (Algorithm 1; docs/design/notes/do-adp.md §2).
 * State per agent: x_i (private), m_i (momentum), xhat_i (public copy; one
 * shared replica per agent, docs/design/notes/do-adp.md §2.1 [R]). Round t, every agent i (phase A,
 * reading only round-t values):
 *   cons_i = gamma sum_j w_ij (xhat_j - xhat_i)
 *   active (Bernoulli(p), stream (i, t, ACTIVATION)):
 *     g = mean over B samples (stream (i, t, SAMPLE)) of the per-sample
 *         gradient clamped coordinate-wise to +-G/sqrt(d)
 *     m_i = g + N(0, sigma^2 I) (stream (i, t, NOISE)) + beta m_i
 *     x_i = x_i - alpha m_i + cons_i
 *     s_i = C(x_i - xhat_i)            (the compressor; k index/value pairs)
 *   inactive: m_i = beta m_i; x_i = x_i + cons_i; nothing sent
 * phase B (commit): xhat_j += s_j for every active j (every replica alike).
 * docs/algorithms/do-adp.md explains the privacy modes and caveats. */
#include "../engine/engine_impl.h"
#include "../engine/par_impl.h"
#include "../model/model_impl.h"
#include "../net/compress_impl.h"
#include "../rng/rng_impl.h"
#include "dpdo/compressor.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct adp {
    int bx, bm, bh;
    int sxnew, smnew, sres, sg, scnt, shg;
    double p, beta, gamma, alpha, G, cl, clip;
    int coord_clamp;
    int64_t B, kcap, idx_B;
    int64_t *sidx;             /* n x B sample indices */
    int64_t *midx;             /* n x kcap message indices */
    double *mval;              /* n x kcap message values */
    dpdo__sampling_desc *samp; /* n */
    double *ws;                /* tasks 1.. of the thread pool: res, g, hg (3d doubles) + d keys */
    unsigned char *bad;        /* n: local() wrote a non-finite x' or m' (outside the arena) */
    int swapped; /* commit swapped x <-> x' and m <-> m' (blocks and scratch) an odd number of times
                  */
} adp;

#define ROW(e, b, i) ((e)->blk[(b)].cur + (size_t)(i) * (size_t)(e)->d)
#define SROW(e, k, i) ((double *)(e)->scr[(k)] + (size_t)(i) * (size_t)(e)->d)

/* ---- the fused per-node pass (A2, A7-A9 and the finiteness test in one sweep) ----------------
 * Per coordinate k, in this order (the order of the separate loops this replaces, so the bits
 * are the same):
 *   c  = 0 + w_1 (xhat_j1[k] - xhat_i[k]) + w_2 (...) + ...   (neighbours in CSR order, j != i)
 *   c  = c * gamma                                             (cons_i[k])
 *   active:   m' = mn[k] + beta m[k];  x' = (x[k] - alpha m') + c;  r = x' - xhat_i[k]
 *   inactive: m' = beta m[k];          x' = c + x[k]
 * plus the finiteness test of x' and m' (the bit test of dpdo__first_nonfinite) and, for an
 * active node, the OR and AND of the keys |r| (the first step of the top-k selection). With
 * AVX-512 and at most ADP_NB neighbours it is one loop (one_avx512); else the consensus sum runs
 * over blocks of ADP_BS coordinates and up to ADP_NB neighbour rows at a time, its partial sums
 * kept in an L1 buffer between groups, then the update over the block. The scalar loops are the
 * vector ones' reference and fallback (tails, CPUs without AVX-512). */
#define ADP_BS 512
#define ADP_NB 16

typedef struct adp_pass {
    double gamma, beta, alpha;
    const double *x, *m, *hi; /* this block's coordinates */
    double *mn, *xn, *res;    /* res NULL: the node is inactive (mn not read) */
    uint64_t bad, orr, andd;  /* bad >> 63: a non-finite x' or m' */
} adp_pass;

static const uint64_t ADP_EXP = 0x7ff0000000000000ull, ADP_ONE = 0x0010000000000000ull,
                      ADP_ABS = 0x7fffffffffffffffull;

static inline uint64_t adp_bits(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

/* c[0..len) (+)= sum_t w[t] (h[t][k] - hi[k]), t in order; first: the sum starts from 0 */
static void cons_scalar(double *c, const double *const *h, const double *w, int nb,
                        const double *hi, size_t len, int first)
{
    for (size_t k = 0; k < len; k++) {
        double acc = first ? 0.0 : c[k];
        for (int t = 0; t < nb; t++)
            acc += w[t] * (h[t][k] - hi[k]);
        c[k] = acc;
    }
}

static void upd_scalar(adp_pass *a, const double *c, size_t len)
{
    uint64_t bad = a->bad, orr = a->orr, andd = a->andd;
    for (size_t k = 0; k < len; k++) {
        double cv = c[k] * a->gamma, mv, xv;
        if (a->res) {
            mv = a->mn[k] + a->beta * a->m[k];
            xv = a->x[k] - a->alpha * mv + cv;
            double r = xv - a->hi[k];
            a->res[k] = r;
            uint64_t u = adp_bits(r) & ADP_ABS;
            orr |= u;
            andd &= u;
        } else {
            mv = a->beta * a->m[k];
            xv = cv + a->x[k];
        }
        a->mn[k] = mv;
        a->xn[k] = xv;
        bad |= dpdo__nf_bits(xv) | dpdo__nf_bits(mv);
    }
    a->bad = bad, a->orr = orr, a->andd = andd;
}

/* A5 for one sample: u = g + h' (hp NULL: no regularizer; g keeps u: the scratch ends as before,
 * the golden hashes cover the arena), t = the values of fmin(fmax(u, -cl), cl) (NaN -> -cl
 * included), mn = 0 + t for the first sample (the 0 + turns -0 into +0 as the zeroed accumulator
 * did), mn += t for the others */
static void clamp_scalar(double *g, const double *hp, double *mn, double cl, int first, size_t d)
{
    const double m0 = 0.0;
    for (size_t k = 0; k < d; k++) {
        double u = hp ? g[k] + hp[k] : g[k], t = u > -cl ? u : -cl;
        if (hp) g[k] = u;
        mn[k] = (first ? m0 : mn[k]) + (t < cl ? t : cl);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#define ADP_X86 1
#define ADP_AVX512 __attribute__((target("avx512f")))
typedef double adp_v8d __attribute__((vector_size(64), aligned(8), may_alias));
typedef uint64_t adp_v8u __attribute__((vector_size(64), aligned(8), may_alias));

/* the same operations, eight coordinates per vector (no FMA: -ffp-contract=off) */
ADP_AVX512 static void cons_avx512(double *c, const double *const *h, const double *w, int nb,
                                   const double *hi, size_t len, int first)
{
    size_t k = 0;
    for (; k + 8 <= len; k += 8) {
        adp_v8d acc = first ? (adp_v8d){0, 0, 0, 0, 0, 0, 0, 0} : *(const adp_v8d *)(c + k);
        adp_v8d hv = *(const adp_v8d *)(hi + k);
        for (int t = 0; t < nb; t++)
            acc += w[t] * (*(const adp_v8d *)(h[t] + k) - hv);
        *(adp_v8d *)(c + k) = acc;
    }
    if (k < len) {
        const double *hk[ADP_NB];
        for (int t = 0; t < nb; t++)
            hk[t] = h[t] + k;
        cons_scalar(c + k, hk, w, nb, hi + k, len - k, first);
    }
}

typedef int64_t adp_v8l __attribute__((vector_size(64), aligned(8), may_alias));

/* m ? a : b, lane by lane */
ADP_AVX512 static inline adp_v8d adp_sel(adp_v8l m, adp_v8d a, adp_v8d b)
{
    return (adp_v8d)(((adp_v8u)a & (adp_v8u)m) | ((adp_v8u)b & ~(adp_v8u)m));
}

ADP_AVX512 static void clamp_avx512(double *g, const double *hp, double *mn, double cl, int first,
                                    size_t d)
{
    const adp_v8d vcl = {cl, cl, cl, cl, cl, cl, cl, cl}, ncl = -vcl, z = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t k = 0;
    for (; k + 8 <= d; k += 8) {
        adp_v8d u = *(const adp_v8d *)(g + k);
        if (hp) {
            u = u + *(const adp_v8d *)(hp + k);
            *(adp_v8d *)(g + k) = u;
        }
        adp_v8d t = adp_sel(u > ncl, u, ncl); /* NaN compares false: -cl */
        t = adp_sel(t < vcl, t, vcl);
        *(adp_v8d *)(mn + k) = (first ? z : *(const adp_v8d *)(mn + k)) + t;
    }
    if (k < d) clamp_scalar(g + k, hp ? hp + k : NULL, mn + k, cl, first, d - k);
}

/* lanes whose x or m is NaN or Inf get the top bit (the exponent all ones carries into it) */
ADP_AVX512 static inline adp_v8u adp_nf2(adp_v8d xv, adp_v8d mv)
{
    return (((adp_v8u)xv & ADP_EXP) + ADP_ONE) | (((adp_v8u)mv & ADP_EXP) + ADP_ONE);
}

/* the 8 lanes' finiteness flags and key OR/AND into the pass's totals */
ADP_AVX512 static inline void fold8(adp_pass *a, adp_v8u bad, adp_v8u orr, adp_v8u andd)
{
    uint64_t b = 0, o = 0, n = ~UINT64_C(0);
    for (int t = 0; t < 8; t++) {
        b |= bad[t];
        o |= orr[t];
        n &= andd[t];
    }
    a->bad |= b, a->orr |= o, a->andd &= n;
}

ADP_AVX512 static void upd_avx512(adp_pass *a, const double *c, size_t len)
{
    const double g = a->gamma, be = a->beta, al = a->alpha;
    adp_v8u bad = {0, 0, 0, 0, 0, 0, 0, 0}, orr = bad, andd = ~bad;
    size_t k = 0;
    if (a->res) {
        for (; k + 8 <= len; k += 8) {
            adp_v8d cv = *(const adp_v8d *)(c + k) * g;
            adp_v8d mv = *(const adp_v8d *)(a->mn + k) + be * *(const adp_v8d *)(a->m + k);
            adp_v8d xv = *(const adp_v8d *)(a->x + k) - al * mv + cv;
            adp_v8d r = xv - *(const adp_v8d *)(a->hi + k);
            *(adp_v8d *)(a->res + k) = r;
            *(adp_v8d *)(a->mn + k) = mv;
            *(adp_v8d *)(a->xn + k) = xv;
            adp_v8u u = (adp_v8u)r & ADP_ABS;
            orr |= u;
            andd &= u;
            bad |= adp_nf2(xv, mv);
        }
    } else {
        for (; k + 8 <= len; k += 8) {
            adp_v8d cv = *(const adp_v8d *)(c + k) * g;
            adp_v8d mv = be * *(const adp_v8d *)(a->m + k);
            adp_v8d xv = cv + *(const adp_v8d *)(a->x + k);
            *(adp_v8d *)(a->mn + k) = mv;
            *(adp_v8d *)(a->xn + k) = xv;
            bad |= adp_nf2(xv, mv);
        }
    }
    fold8(a, bad, orr, andd);
    if (k < len) {
        adp_pass tail = *a;
        tail.x += k, tail.m += k, tail.hi += k, tail.mn += k, tail.xn += k;
        if (tail.res) tail.res += k;
        upd_scalar(&tail, c + k, len - k);
        a->bad = tail.bad, a->orr = tail.orr, a->andd = tail.andd;
    }
}

/* The whole pass in one loop when the neighbours fit one group (nb <= ADP_NB): the sum stays in a
 * register, xhat_i is loaded once per vector; the same operations in the same order */
ADP_AVX512 static void one_avx512(adp_pass *a, const double *const *h, const double *w, int nb,
                                  size_t d)
{
    const double g = a->gamma, be = a->beta, al = a->alpha;
    adp_v8u bad = {0, 0, 0, 0, 0, 0, 0, 0}, orr = bad, andd = ~bad;
    size_t k = 0;
    for (; k + 8 <= d; k += 8) {
        adp_v8d hv = *(const adp_v8d *)(a->hi + k), acc = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int t = 0; t < nb; t++)
            acc += w[t] * (*(const adp_v8d *)(h[t] + k) - hv);
        adp_v8d cv = acc * g, mv, xv;
        if (a->res) {
            mv = *(const adp_v8d *)(a->mn + k) + be * *(const adp_v8d *)(a->m + k);
            xv = *(const adp_v8d *)(a->x + k) - al * mv + cv;
            adp_v8d r = xv - hv;
            *(adp_v8d *)(a->res + k) = r;
            adp_v8u u = (adp_v8u)r & ADP_ABS;
            orr |= u;
            andd &= u;
        } else {
            mv = be * *(const adp_v8d *)(a->m + k);
            xv = cv + *(const adp_v8d *)(a->x + k);
        }
        *(adp_v8d *)(a->mn + k) = mv;
        *(adp_v8d *)(a->xn + k) = xv;
        bad |= adp_nf2(xv, mv);
    }
    fold8(a, bad, orr, andd);
    if (k < d) { /* the last d mod 8 coordinates */
        double c[8];
        const double *hk[ADP_NB];
        for (int t = 0; t < nb; t++)
            hk[t] = h[t] + k;
        cons_scalar(c, hk, w, nb, a->hi + k, d - k, 1);
        adp_pass tail = *a;
        tail.x += k, tail.m += k, tail.hi += k, tail.mn += k, tail.xn += k;
        if (tail.res) tail.res += k;
        upd_scalar(&tail, c, d - k);
        a->bad = tail.bad, a->orr = tail.orr, a->andd = tail.andd;
    }
}
#endif

/* Node i's pass over all d coordinates: x, m, xhat_i = its rows; mn holds g + noise for an active
 * node (res != NULL), is only written for an inactive one. Returns 1 if x' or m' has a
 * non-finite entry; *orr, *andd = OR and AND of the keys |res| (active). */
static int adp_fused(const dpdo__eng *e, const adp *P, int64_t i, const double *x, const double *m,
                     double *mn, double *xn, double *res, uint64_t *orr, uint64_t *andd)
{
    const size_t d = (size_t)e->d;
    const struct dpdo_network *net = e->net;
    const double *hi = ROW(e, P->bh, i);
#ifdef ADP_X86
    const int simd = __builtin_cpu_supports("avx512f");
#endif
    double c[ADP_BS] __attribute__((aligned(64)));
    const double *h[ADP_NB];
    double w[ADP_NB];
    adp_pass a = {.gamma = P->gamma, .beta = P->beta, .alpha = P->alpha, .orr = 0, .andd = ~0ull};
#ifdef ADP_X86
    if (simd && net->rowptr[i + 1] - net->rowptr[i] <= ADP_NB + 1) { /* one group: one loop */
        int nb = 0;
        for (int64_t q = net->rowptr[i]; q < net->rowptr[i + 1]; q++)
            if (net->col[q] != i && nb < ADP_NB) {
                h[nb] = ROW(e, P->bh, net->col[q]);
                w[nb++] = net->val[q];
            }
        a.x = x, a.m = m, a.hi = hi, a.mn = mn, a.xn = xn, a.res = res;
        one_avx512(&a, h, w, nb, d);
        *orr = a.orr, *andd = a.andd;
        return (int)(a.bad >> 63);
    }
#endif
    for (size_t k0 = 0; k0 < d; k0 += ADP_BS) {
        size_t len = d - k0 < ADP_BS ? d - k0 : ADP_BS;
        int first = 1;
        int64_t q = net->rowptr[i], qe = net->rowptr[i + 1];
        for (;;) { /* neighbour groups of up to ADP_NB rows */
            int nb = 0;
            for (; q < qe && nb < ADP_NB; q++) {
                int64_t j = net->col[q];
                if (j == i) continue;
                h[nb] = ROW(e, P->bh, j) + k0;
                w[nb++] = net->val[q];
            }
            if (nb == 0 && !first) break;
#ifdef ADP_X86
            if (simd)
                cons_avx512(c, h, w, nb, hi + k0, len, first);
            else
#endif
                cons_scalar(c, h, w, nb, hi + k0, len, first);
            first = 0;
            if (q == qe) break;
        }
        a.x = x + k0, a.m = m + k0, a.hi = hi + k0, a.mn = mn + k0, a.xn = xn + k0;
        a.res = res ? res + k0 : NULL;
#ifdef ADP_X86
        if (simd)
            upd_avx512(&a, c, len);
        else
#endif
            upd_scalar(&a, c, len);
    }
    *orr = a.orr, *andd = a.andd;
    return (int)(a.bad >> 63);
}

static void release(dpdo__eng *e, void *priv)
{
    (void)e;
    adp *P = priv;
    dpdo__free(P->sidx);
    dpdo__free(P->midx);
    dpdo__free(P->mval);
    dpdo__free(P->samp);
    dpdo__free(P->ws);
    dpdo__free(P->bad);
    P->sidx = NULL, P->midx = NULL, P->mval = NULL, P->samp = NULL, P->ws = NULL, P->bad = NULL;
    P->idx_B = 0, P->kcap = 0;
}

static int configure(dpdo__eng *e, void *priv)
{
    adp *P = priv;
    int64_t n = e->n, d = e->d;
    P->bx = dpdo__eng_block(e, "x", n, d);
    P->bm = dpdo__eng_block(e, "m", n, d);
    P->bh = dpdo__eng_block(e, "xhat", n, d);
    size_t nd = (size_t)n * (size_t)d * sizeof(double);
    P->sxnew = dpdo__eng_scratch(e, nd);
    P->smnew = dpdo__eng_scratch(e, nd);
    P->sres = dpdo__eng_scratch(e, (size_t)d * sizeof(double));
    P->sg = dpdo__eng_scratch(e, (size_t)d * sizeof(double));
    P->scnt = dpdo__eng_scratch(e, (size_t)n * sizeof(int64_t));
    P->shg = dpdo__eng_scratch(e, (size_t)d * sizeof(double));
    P->samp = dpdo__calloc((size_t)n, sizeof *P->samp);
    /* tasks 1.. of the thread pool get their own res, g, hg and top-k keys; task 0 (and a serial
     * run) uses the arena's rows and the compressor's keys, exactly as before threads */
    int32_t extra = dpdo__par_slots(e) - 1;
    P->ws = extra > 0 ? dpdo__alloc_array((size_t)extra * 4, (size_t)d * sizeof(double)) : NULL;
    P->bad = dpdo__calloc((size_t)n, 1);
    return P->samp && P->bad && (extra == 0 || P->ws) ? DPDO_OK : DPDO_E_NOMEM;
}

/* The noise skeleton's callbacks (dpdo__eng_noise_plan). */
static int paper_set(dpdo__eng *e, void *priv, dpdo_paper *pp)
{
    adp *P = priv;
    double Gs = P->clip > 0 ? P->clip : P->G; /* l2 bound of one per-sample gradient */
    int rc;
    if ((rc = dpdo_paper_set(pp, "eps", e->o.epsilon)) ||
        (rc = dpdo_paper_set(pp, "delta0", e->o.delta)) || (rc = dpdo_paper_set(pp, "p", P->p)) ||
        (rc = dpdo_paper_set(pp, "k", (double)dpdo_compressor_k(e->comp))) ||
        (rc = dpdo_paper_set(pp, "d", (double)e->d)) ||
        (rc = dpdo_paper_set(pp, "q", (double)e->qmin)) || (rc = dpdo_paper_set(pp, "G", Gs)) ||
        (rc = dpdo_paper_set(pp, "T", (double)DPDO__PI(e, DPDO_PARAM_MAX_ROUNDS))))
        return rc;
    return DPDO_OK;
}

static int paper_sigma(dpdo__eng *e, void *priv, dpdo_paper *pp, double *sigma)
{
    dpdo_paper_get(pp, "sigma_paper", sigma);
    return DPDO_OK;
}

/* RIGOROUS: activation is observable and Top-k selection is data dependent, so neither p nor k/d
 * is claimed: Gaussian(WOR(B of q), 2G/B, sigma) per active round */
static int rigorous(dpdo__eng *e, void *priv, double *sigma)
{
    adp *P = priv;
    int64_t B = P->B, qmin = e->qmin;
    dpdo__sampling_desc sd = {DPDO_SAMPLING_WOR, (double)B / (double)qmin, qmin, B};
    double K = dpdo__eng_calib_counts(e, NULL, P->p); /* per node: Binomial(T, p_i) quantile */
    int rc = dpdo__eng_calibrate_sigma(e, &sd, e->pv.sens, K, sigma);
    if (rc) return rc;
    dpdo__eng_note_wor_floor(e, &sd, e->pv.sens, K, *sigma);
    return DPDO_OK;
}

static void noisy_notes(dpdo__eng *e, void *priv)
{
    adp *P = priv;
    if (dpdo_compressor_k(e->comp) < e->d)
        dpdo__eng_note(e, "the paper's k/d noise saving is not claimed by the rigorous figure (the "
                          "Top-k selection "
                          "depends on the data, docs/design/notes/do-adp.md §7 item 1)");
    if (P->p < 1)
        dpdo__eng_note(
            e,
            "activation treated as public: inactive agents send nothing, so no amplification by p "
            "(docs/design/notes/do-adp.md §7 item 19)");
}

static int prepare(dpdo__eng *e, void *priv)
{
    adp *P = priv;
    int64_t n = e->n, d = e->d;
    P->p = DPDO__PD(e, DPDO_PARAM_ADP_P);
    P->beta = DPDO__PD(e, DPDO_PARAM_ADP_BETA);
    P->gamma = DPDO__PD(e, DPDO_PARAM_ADP_GAMMA);
    double ss = DPDO__PD(e, DPDO_PARAM_STEP_SIZE);
    P->alpha = isnan(ss) ? 0.001 : ss;
    if (!(P->alpha >= 0))
        return dpdo__err(e->err, DPDO_E_INVAL, "prepare: step_size (alpha) = %g must be >= 0",
                         P->alpha);
    int64_t B = DPDO__PI(e, DPDO_PARAM_BATCH), qmin = e->qmin;
    if (B > qmin)
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: batch = %lld exceeds the smallest shard (%lld rows)",
                         (long long)B, (long long)qmin);
    P->B = B;
    if (e->reg) { /* h enters every per-sample gradient (docs/design/notes/do-adp.md §5.2:
                     ||x||^2/(2q) inside l_i): it must be smooth */
        char err[DPDO__ERRMSG_LEN] = "";
        double *t = e->scr[P->shg];
        memset(e->scr[P->sres], 0, (size_t)d * sizeof(double));
        int rc = dpdo__reg_grad(e->reg, e->scr[P->sres], t, err);
        if (rc)
            return dpdo__err(e->err, rc,
                             "prepare: the regularizer must be differentiable for DO-ADP: %s", err);
    }
    int64_t kcap = dpdo_compressor_capacity(e->comp);
    if (B != P->idx_B || kcap != P->kcap) {
        int64_t *si = dpdo__alloc_array((size_t)n * (size_t)B, sizeof *si);
        int64_t *mi = dpdo__calloc((size_t)n * (size_t)kcap, sizeof *mi);
        double *mv = dpdo__calloc((size_t)n * (size_t)kcap, sizeof *mv);
        if (!si || !mi || !mv) {
            dpdo__free(si), dpdo__free(mi), dpdo__free(mv);
            return dpdo__err(e->err, DPDO_E_NOMEM, "prepare: out of memory");
        }
        dpdo__free(P->sidx), dpdo__free(P->midx), dpdo__free(P->mval);
        P->sidx = si, P->midx = mi, P->mval = mv;
        P->idx_B = B, P->kcap = kcap;
    }
    /* per-sample gradient bound: coordinate clamp to G/sqrt(d) (docs/design/notes/do-adp.md §2.4
     * A5, [R]) by default; +inf = no clipping (trusted); a finite clip = l2 per-sample clipping */
    P->G = e->o.lipschitz;
    double clip = DPDO__PD(e, DPDO_PARAM_CLIP);
    P->coord_clamp = isnan(clip);
    P->cl = P->G / sqrt((double)d);
    P->clip = isnan(clip) || clip == INFINITY ? 0.0 : clip;
    int trusted = clip == INFINITY;
    double Gs = P->clip > 0 ? P->clip : P->G; /* l2 bound of one per-sample gradient */
    e->pv.sens = 2.0 * Gs / (double)B;        /* replace-one, mean of B */
    static const dpdo__noise_plan NP = {.paper = "do-adp-thm1",
                                        .theorem = "Theorem 1",
                                        .invalid_note = "paper bound invalid",
                                        .paper_sigma_key = "sigma",
                                        .paper_set = paper_set,
                                        .paper_sigma = paper_sigma,
                                        .rigorous = rigorous,
                                        .notes = noisy_notes};
    double sigma = 0;
    int rc = dpdo__eng_noise_plan(e, P, &NP, &sigma);
    if (rc) return rc;
    if (e->pv.private_run && trusted) {
        /* clip = inf trusts the data: refuse when the per-sample gradient bound is known to exceed
         * G (as DP-DDA does); the regularizer's part is the same on neighbouring data */
        dpdo__eng_note(e, "no clipping: the guarantee assumes every per-sample gradient norm <= G");
        int64_t bad = 0;
        double Li = 0;
        if (dpdo__eng_grad_exceeds(e, P->G, 0, &bad, &Li))
            return dpdo__err(e->err, DPDO_E_INVAL,
                             "prepare: node %lld: per-sample gradients reach %g > G = "
                             "lipschitz = %g and clip = inf "
                             "turns clipping off; set a finite clip, leave clip unset "
                             "(coordinate clamp) or raise "
                             "lipschitz",
                             (long long)bad, Li, P->G);
    }
    return dpdo__eng_events_wor(e, B, e->pv.sens, sigma, P->samp);
}

/* x <-> x' and m <-> m': the state blocks and the scratch rows local() wrote trade places (every
 * row of x' and m' is written each round: local() runs on every agent) */
static void swap_new(dpdo__eng *e, adp *P)
{
    double *t = e->blk[P->bx].cur;
    e->blk[P->bx].cur = (double *)e->scr[P->sxnew];
    e->scr[P->sxnew] = (char *)t;
    t = e->blk[P->bm].cur;
    e->blk[P->bm].cur = (double *)e->scr[P->smnew];
    e->scr[P->smnew] = (char *)t;
    P->swapped ^= 1;
}

/* the layout configure() made (vt canonical); move = 1: x and m are also copied into x' and m',
 * which leaves the bytes a copying commit left (after a committed round its x' and m' equal the
 * installed x and m; before any round both are 0) */
static void canonical(dpdo__eng *e, void *priv, int move)
{
    adp *P = priv;
    if (move) {
        size_t nd = (size_t)e->n * (size_t)e->d * sizeof(double);
        memcpy(e->scr[P->sxnew], e->blk[P->bx].cur, nd);
        memcpy(e->scr[P->smnew], e->blk[P->bm].cur, nd);
    }
    if (P->swapped) swap_new(e, P);
}

static void init(dpdo__eng *e, void *priv)
{
    adp *P = priv;
    canonical(e, priv, 0); /* a reset starts from configure()'s layout */
    size_t nd = (size_t)e->n * (size_t)e->d * sizeof(double);
    memset(e->blk[P->bx].cur, 0, nd); /* x_0 = 0 (docs/design/notes/do-adp.md §2.3 [R]) */
    memset(e->blk[P->bm].cur, 0, nd);
    memset(e->blk[P->bh].cur, 0, nd);
}

static int plan(dpdo__eng *e, void *priv, dpdo__plan *p)
{
    adp *P = priv;
    dpdo__plan_bernoulli(e, p, P->p);
    dpdo__plan_list(p, e->n);
    p->nstages = 1;
    p->stage[0].who = DPDO__RUN_ALL;
    p->stage[0].npat = 1;
    /* the identity compressor sends dense vectors: no indices on the wire */
    int dense = strcmp(dpdo_compressor_name(e->comp), "identity") == 0;
    p->stage[0].pat[0] = (dpdo__xpat){.kind = DPDO__PAT_NET,
                                      .payload = dense ? DPDO__PAY_DENSE : DPDO__PAY_SPARSE,
                                      .kvar = dense ? NULL : (const int64_t *)e->scr[P->scnt],
                                      .buf = P->mval,
                                      .ibuf = P->midx,
                                      .kbuf = e->scr[P->scnt],
                                      .ld = P->kcap};
    if (dpdo__plan_charge_computing(e, p, 1)) return e->plan.charge_err;
    return DPDO_OK;
}

static int local(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t stage, int64_t i)
{
    (void)stage;
    adp *P = priv;
    size_t d = (size_t)e->d;
    const double *x = ROW(e, P->bx, i), *m = ROW(e, P->bm, i);
    double *xn = SROW(e, P->sxnew, i), *mn = SROW(e, P->smnew, i);
    int64_t *cnt = e->scr[P->scnt];
    unsigned char *bad = P->bad;
    uint64_t orr = 0, andd = 0;
    if (!p->is_comp[i]) { /* A2, A12-A13 and the finiteness test in one pass */
        bad[i] = (unsigned char)adp_fused(e, P, i, x, m, mn, xn, NULL, &orr, &andd);
        cnt[i] = 0;
        return DPDO_OK;
    }
    /* A4-A5: sample(s) and the clipped gradient, averaged */
    struct dpdo_node *nd = e->nodes[i];
    dpdo__stream st;
    int64_t *idx = P->sidx + (size_t)i * (size_t)P->B, got = 0;
    dpdo__stream_open(&st, e->rng, (uint64_t)i, p->t, DPDO_PURPOSE_SAMPLE);
    int rc = dpdo__sampling_draw(&P->samp[i], &st, e->q[i], idx, &got);
    if (rc)
        return dpdo__eng_err(e, rc, i, "drawing the sample failed (generator code %d)",
                             dpdo__stream_cb_code(&st));
    char err[DPDO__ERRMSG_LEN] = "";
    double scale = NAN;                  /* continuous noise fused with the gradient: its scale */
    int32_t slot = dpdo__par_slot(e, i); /* this task's workspace */
    double *ws = slot ? P->ws + (size_t)(slot - 1) * 4 * d : NULL;
    double *g = ws ? ws + d : e->scr[P->sg], *hg = ws ? ws + 2 * d : e->scr[P->shg];
    if (e->reg && (rc = dpdo__reg_grad(e->reg, x, hg, err)))
        return dpdo__eng_err(e, rc, i, "regularizer: %s", err);
    /* Continuous noise (dpdo__eng_noise_gauss_fused) is drawn first, into the node's loss scratch
     * (dpdo__loss_eval_into leaves its first d doubles alone), while the sample rows' cache hints
     * go out a part per chunk (docs/performance.md), and is added after the gradient (with h in the
     * same pass under l2 clipping): the bits of the separate draw. */
    if (e->pv.sigma > 0 && !DPDO__WEAKENED(e, DPDO__WEAKEN_SENS_DOUBLE) &&
        (rc = dpdo__eng_noise_gauss_fused(e, i, e->pv.sigma, e->pv.sens, &scale)))
        return rc;
    if (scale == scale) {
        dpdo__stream_open(&st, e->rng, (uint64_t)i, p->t, DPDO_PURPOSE_NOISE);
        dpdo__eng_normals_prefetching(&st, nd->scratch, d, nd->shard, idx, got);
        dpdo__eng_probe(e, DPDO__PH_NOISE); /* phase timing: the draw is noise time */
    }
    if (P->coord_clamp) { /* per-sample gradient (loss + h) clamped coordinate-wise */
        if (got == 0) memset(mn, 0, d * sizeof(double)); /* an empty sample: g = 0 */
        for (int64_t b = 0; b < got; b++) {
            rc = dpdo__loss_eval_into(nd->loss, nd->shard, x, idx + b, 1, 0.0, NULL, g, NULL,
                                      nd->scratch, err);
            if (rc) return dpdo__eng_err(e, rc, i, "%s", err);
            const double *hp = e->reg ? hg : NULL;
#ifdef ADP_X86
            if (__builtin_cpu_supports("avx512f"))
                clamp_avx512(g, hp, mn, P->cl, b == 0, d);
            else
#endif
                clamp_scalar(g, hp, mn, P->cl, b == 0, d);
        }
        if (got > 1)
            for (size_t k = 0; k < d; k++)
                mn[k] /= (double)got;
        if (scale == scale) dpdo__eng_noise_add(mn, NULL, scale, nd->scratch, d);
    } else { /* l2 clipping of the loss part; h is the same on neighbouring data */
        memset(mn, 0, d * sizeof(double));
        rc = dpdo__loss_eval_into(nd->loss, nd->shard, x, idx, got, P->clip, NULL, mn, NULL,
                                  nd->scratch, err);
        if (rc) return dpdo__eng_err(e, rc, i, "%s", err);
        if (scale == scale)
            dpdo__eng_noise_add(mn, e->reg ? hg : NULL, scale, nd->scratch, d);
        else if (e->reg)
            for (size_t k = 0; k < d; k++)
                mn[k] += hg[k];
    }
    if (DPDO__WEAKENED(e, DPDO__WEAKEN_SENS_DOUBLE)) /* test build: twice the charged sensitivity */
        for (size_t k = 0; k < d; k++)
            mn[k] *= 2;
    dpdo__eng_probe(e, DPDO__PH_GRAD);
    /* A6-A8 (the noise was added with the gradient when scale is a number) */
    if (scale == scale) {
        if ((rc = dpdo__eng_noise_status(e, &st, i))) return rc;
    } else if (e->pv.sigma > 0) {
        dpdo__stream_open(&st, e->rng, (uint64_t)i, p->t, DPDO_PURPOSE_NOISE);
        if ((rc = dpdo__eng_noise_gauss(e, &st, i, e->pv.sigma, e->pv.sens, mn, d))) return rc;
    }
    dpdo__eng_probe(e, DPDO__PH_NOISE);
    /* A2, A7-A9 and the finiteness test in one pass: res = x' - xhat_i, with the OR/AND of its
     * keys for the top-k selection */
    double *res = ws ? ws : e->scr[P->sres];
    bad[i] = (unsigned char)adp_fused(e, P, i, x, m, mn, xn, res, &orr, &andd);
    rc = dpdo__compressor_apply_oa(e->comp, res, e->rng, (uint64_t)i, p->t,
                                   P->midx + (size_t)i * (size_t)P->kcap,
                                   P->mval + (size_t)i * (size_t)P->kcap, &cnt[i],
                                   ws ? (uint64_t *)(ws + 3 * d) : NULL, orr, andd, err);
    if (rc) return dpdo__eng_err(e, rc, i, "compressor: %s", err);
    dpdo__eng_probe(e, DPDO__PH_PRIMAL);
    return DPDO_OK;
}

static int check(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    (void)p;
    adp *P = priv;
    size_t d = (size_t)e->d;
    const unsigned char *bad = P->bad;
    for (int64_t i = 0; i < e->n; i++) {
        /* local() found x' and m' finite (the same test, on its thread); rows of nodes hosted
         * elsewhere are scanned */
        if (!bad[i] && dpdo__eng_hosted(e, i)) continue;
        int rc = dpdo__eng_check_finite(e, i, SROW(e, P->sxnew, i), d, "x", "after the update");
        if (rc ||
            (rc = dpdo__eng_check_finite(e, i, SROW(e, P->smnew, i), d, "m", "after the update")))
            return rc;
    }
    return DPDO_OK;
}

/* commit: x and m installed by swapping the blocks with x' and m' (commit() below: no copy, the
 * same values); per node j (dpdo__par_for: on the round's threads when the run is parallel), B1
 * for an active j: its own replica row xhat_j += s_j (only j's message touches it) */
typedef struct commit_arg {
    dpdo__eng *e;
    adp *P;
    const dpdo__plan *p;
} commit_arg;

static void commit_node(void *arg, int64_t j)
{
    const commit_arg *a = arg;
    dpdo__eng *e = a->e;
    adp *P = a->P;
    if (!a->p->is_comp[j]) return;
    const int64_t *cnt = e->scr[P->scnt];
    const struct dpdo_network *net = e->net;
    if (e->dist && !dpdo__eng_hosted(e, j)) { /* distributed: only replicas this process reads */
        int64_t q = net->rowptr[j];
        while (q < net->rowptr[j + 1] && !dpdo__eng_hosted(e, net->col[q]))
            q++;
        if (q == net->rowptr[j + 1]) return;
    }
    double *h = ROW(e, P->bh, j);
    const int64_t *ix = P->midx + (size_t)j * (size_t)P->kcap;
    const double *v = P->mval + (size_t)j * (size_t)P->kcap;
    for (int64_t q = 0; q < cnt[j]; q++)
        h[ix[q]] += v[q];
}

static void commit(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    commit_arg a = {e, priv, p};
    swap_new(e, priv);
    dpdo__par_for(e, e->n, commit_node, &a);
}

static void output(const dpdo__eng *e, const void *priv, int64_t i, double *out)
{
    const adp *P = priv;
    memcpy(out, ROW(e, P->bx, i), (size_t)e->d * sizeof(double));
}

/* DO-ADP's parameters (dpdo_param_*) */
static const dpdo__pdef PARAMS[] = {{DPDO_PARAM_ADP_P, "adp-p", 1, 0x1p-1000, 1, 0,
                                     "activation probability p; default 1", .def = 1.0},
                                    {DPDO_PARAM_ADP_BETA, "adp-beta", 1, 0, 0.999999999, 0,
                                     "momentum beta; default 0.15", .def = 0.15},
                                    {DPDO_PARAM_ADP_GAMMA, "adp-gamma", 1, 0x1p-1000, 1, 0,
                                     "consensus step gamma; default 0.05", .def = 0.05},
                                    {.name = NULL}};

const dpdo__alg_vt dpdo__vt_do_adp = {
    .name = "do-adp",
    .title = "DO-ADP: decentralized momentum SGD with random activation and sparsified messages, "
             "Algorithm 1",
    .priv_size = sizeof(adp),
    .params = PARAMS,
    .paper = "do-adp-thm1",
    .paper_eps = "eps_tilde",
    .paper_delta = "delta_tilde_lemma4",
    .paper_round = NULL, /* Theorem 1's claim for the planned horizon T (see docs) */
    .needs_net = 1,
    .uses_solver = 0,
    .uses_compressor = 1,
    .accepts_mask = 1,
    .node_probs = 1,
    .distributable = 1,
    .parallel = 1,
    .configure = configure,
    .prepare = prepare,
    .init = init,
    .plan = plan,
    .local = local, /* no combine: phase B happens in commit (every replica of xhat_j adds s_j) */
    .check = check,
    .commit = commit,
    .output = output,
    .release = release,
    .canonical = canonical,
};
