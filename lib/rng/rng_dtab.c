/* SPDX-License-Identifier: BSD-3-Clause */
/* Construction and caching of the table sampler's tables (rng_dtab.h; docs/privacy.md "The
 * table sampler"): the envelope's blocks and tail, and the exact integer alias table. */
#include "rng_dtab.h"
#include <math.h>
#include <stdatomic.h>
#include <string.h>

/* A table is one allocation (the header, then ta, W and c), so that dpdo_rng_destroy frees it
 * with dpdo__free without knowing its layout. */
void dpdo__dtab_free(dpdo__dtab *t)
{
    dpdo__free(t);
}

/* f(a) = exp(-phi(a)) in double, relative error below 2^-46 for phi <= 22: phi in double
 * (a exact below 2^53, the square, the product: 3 roundings), then exp (glibc: < 1 ulp), so
 * phi 3 2^-53 + 2^-52. */
static double tab_f(const dpdo__dtab *t, uint64_t a)
{
    double ad = (double)a;
    return exp(-(t->lap ? ad * t->inv : ad * ad * t->inv));
}

/* The table for (lap, P), or NULL (no memory, or a Laplace scale too large for 2^16 columns). */
static dpdo__dtab *tab_build(int lap, uint64_t P)
{
    dpdo__dtab hd, *t = &hd; /* the header; the table is allocated once its sizes are known */
    memset(&hd, 0, sizeof hd);
    const double Pd = (double)P;
    t->lap = lap;
    t->P = P;
    t->inv = lap ? 1.0 / Pd : 0.5 / (Pd * Pd);
    int b = 0;
    while (b < 23 && (UINT64_C(64) << (b + 1)) <= P) /* B <= P / 64, B <= 2^23 */
        b++;
    uint64_t M;
    for (;; b--) { /* delta = phi(m B + r) - phi(m B) <= 1/8 over the table */
        const uint64_t B = UINT64_C(1) << b;
        M = (uint64_t)ceil((lap ? 20.0 : 6.0) * Pd / (double)B) + 1; /* f(X0) <= e^-18, e^-20 */
        const double X0d = (double)(M << b);
        double dmax = lap ? (double)(B - 1) * t->inv : (double)(B - 1) * (2 * X0d) * t->inv;
        if (dmax <= 0.125 || b == 0) break;
    }
    if (M + 2 > (UINT64_C(1) << 16)) return NULL;
    t->b = b;
    t->M = (uint32_t)M;
    t->X0 = M << b;
    int bt = b;
    if (lap)
        while ((UINT64_C(1) << bt) < P)
            bt++;
    else
        while ((u128)t->X0 << bt < (u128)P * P)
            bt++;
    t->bt = bt;
    int n = 2; /* thresholds below 2^30: signed 32-bit compares in the AVX-512 kernel */
    while ((UINT64_C(1) << n) < M + 2)
        n++;
    t->n = n;
    /* 6-byte candidates when U keeps >= 8 bits (the alias field then holds at most 12 column bits:
     * M + 2 <= 6 * 128 + 3 or 20 * 128 + 3, so the threshold has >= 12 bits) */
    t->A = b <= 15 ? 24 : 32;
    t->cb = b <= 15 ? 6 : 8;
    t->ub = 8 * t->cb - t->A - b - 1;
    const uint64_t tot = UINT64_C(1) << t->A;
    const uint64_t N = UINT64_C(1) << n, C = tot >> n, tb = UINT64_C(2) << (bt - b);
    _Static_assert(sizeof(dpdo__dtab) % 8 == 0, "the arrays follow the header");
    unsigned char *blk = dpdo__alloc(sizeof hd + (size_t)(N + 2 * M + 1) * 8);
    if (!blk) return NULL;
    memcpy(blk, &hd, sizeof hd);
    t = (dpdo__dtab *)blk;
    t->ta = (uint64_t *)(blk + sizeof hd);
    t->W = t->ta + N;
    t->c = (double *)(t->W + M);
    uint32_t *thr = dpdo__alloc_array(N, sizeof *thr), *alias = dpdo__alloc_array(N, sizeof *alias);
    uint64_t *w = dpdo__alloc_array(N, sizeof *w);
    uint32_t *stk = dpdo__alloc_array(N, sizeof *stk);
    if (!thr || !alias || !w || !stk) {
        dpdo__free(w), dpdo__free(stk), dpdo__free(thr), dpdo__free(alias);
        return dpdo__dtab_free(t), NULL;
    }
    /* L as large as the weights allow: sum <= 2^32 (W_m = ceil(L f (1 + 2^-40)) covers the
     * 2^-46 error of tab_f and the two roundings of the product) */
    double F = (double)tb * tab_f(t, t->X0);
    for (uint64_t m = 0; m < M; m++)
        F += tab_f(t, m << b);
    double Ld = floor(((double)tot - (double)(M + 2 + tb)) / (F * (1 + 0x1p-30)));
    uint64_t sum;
    for (;;) {
        t->L = (uint64_t)Ld;
        sum = 0;
        for (uint64_t m = 0; m < M; m++) {
            t->W[m] = (uint64_t)ceil(Ld * tab_f(t, m << b) * (1 + 0x1p-40));
            sum += t->W[m];
        }
        t->WT = (uint64_t)ceil(Ld * tab_f(t, t->X0) * (1 + 0x1p-40));
        sum += tb * t->WT;
        if (sum <= tot) break;
        Ld = floor(Ld * (1 - 0x1p-20)); /* not reached: the bound above leaves room */
    }
    for (uint64_t m = 0; m < M; m++) {
        w[m] = t->W[m];
        t->c[m] = Ld * tab_f(t, m << b) / (double)t->W[m];
    }
    t->c[M] = 0;
    w[M] = tb * t->WT;
    w[M + 1] = tot - sum;
    for (uint64_t i = M + 2; i < N; i++)
        w[i] = 0;
    /* Vose's alias table in integers: every column holds C units, N C = 2^A = the total; a
     * column below C takes the rest from one above (stack: smalls from the bottom, larges from
     * the top). The remaining columns hold exactly C (the total is invariant). */
    uint64_t ns = 0, nl = N;
    for (uint64_t i = 0; i < N; i++) {
        if (w[i] < C)
            stk[ns++] = (uint32_t)i;
        else
            stk[--nl] = (uint32_t)i;
        thr[i] = (uint32_t)C;
        alias[i] = (uint32_t)i;
    }
    while (ns > 0 && nl < N) {
        uint32_t sm = stk[--ns], lg = stk[nl];
        thr[sm] = (uint32_t)w[sm];
        alias[sm] = lg;
        w[lg] -= C - w[sm];
        if (w[lg] < C) { /* lg moves to the smalls: the slot just freed */
            nl++;
            stk[ns++] = lg;
        }
    }
    for (uint64_t i = 0; i < N; i++)
        t->ta[i] = thr[i] | (uint64_t)alias[i] << 32;
    dpdo__free(w), dpdo__free(stk), dpdo__free(thr), dpdo__free(alias);
    return t;
}

/* The recent set's table for (lap, P) with one more user, or NULL; under g->recent_lock. */
static dpdo__dtab *recent_ref(struct dpdo_rng *g, int lap, uint64_t P)
{
    for (int k = 0; k < DPDO__RNG_RECENT; k++) {
        dpdo__dtab *r = g->recent[k];
        if (r && r->lap == lap && r->P == P) {
            r->refs++;
            return r;
        }
    }
    return NULL;
}

/* The table for (lap, P) from the generator's cache (rng_dtab.h). The permanent slots are
 * lock-free (published once by compare-and-swap, never replaced); the recent set behind them is
 * guarded by the generator's recent_lock and counts its users, so that a table replaced while
 * another thread draws from it stays alive until that draw releases it. */
dpdo__dtab *dpdo__dtab_get(const struct dpdo_rng *rng, int lap, uint64_t P, int *tmp)
{
    struct dpdo_rng *g = (struct dpdo_rng *)rng; /* the cache: logically const */
    *tmp = 0;
    for (int i = 0; i < DPDO__RNG_TABS; i++) {
        dpdo__dtab *t = atomic_load_explicit(&g->tabs[i], memory_order_acquire);
        if (t && t->lap == lap && t->P == P) return t;
    }
    pthread_mutex_lock(&g->recent_lock);
    dpdo__dtab *r = recent_ref(g, lap, P);
    pthread_mutex_unlock(&g->recent_lock);
    if (r) {
        *tmp = 1;
        return r;
    }
    dpdo__dtab *t = tab_build(lap, P); /* outside the lock: up to milliseconds */
    if (!t) return NULL;
    for (int i = 0; i < DPDO__RNG_TABS; i++) {
        dpdo__dtab *exp0 = NULL;
        if (atomic_compare_exchange_strong_explicit(&g->tabs[i], &exp0, t, memory_order_acq_rel,
                                                    memory_order_acquire))
            return t;
        if (exp0->lap == lap && exp0->P == P) { /* another thread cached the same table */
            dpdo__dtab_free(t);
            return exp0;
        }
    }
    dpdo__dtab *old = NULL;
    *tmp = 1;
    pthread_mutex_lock(&g->recent_lock);
    if ((r = recent_ref(g, lap, P))) { /* another thread built it meanwhile */
        pthread_mutex_unlock(&g->recent_lock);
        dpdo__dtab_free(t);
        return r;
    }
    const int k = g->recent_next;
    g->recent_next = (k + 1) % DPDO__RNG_RECENT;
    if (g->recent[k]) {
        g->recent[k]->retired = 1;
        if (g->recent[k]->refs == 0) old = g->recent[k];
    }
    t->refs = 1;
    t->retired = 0;
    g->recent[k] = t;
    pthread_mutex_unlock(&g->recent_lock);
    dpdo__dtab_free(old);
    return t;
}

void dpdo__dtab_release(const struct dpdo_rng *rng, dpdo__dtab *t, int tmp)
{
    if (!tmp || !t) return;
    struct dpdo_rng *g = (struct dpdo_rng *)rng;
    pthread_mutex_lock(&g->recent_lock);
    const int last = --t->refs == 0 && t->retired;
    pthread_mutex_unlock(&g->recent_lock);
    if (last) dpdo__dtab_free(t);
}

void dpdo__dtab_recent_free(struct dpdo_rng *rng)
{
    for (int k = 0; k < DPDO__RNG_RECENT; k++) {
        dpdo__dtab_free(rng->recent[k]);
        rng->recent[k] = NULL;
    }
}

/* exp(-d) for 0 <= d <= 1/8: Taylor polynomial of degree 5 (remainder below d^6 / 6! < 2^-27.4),
 * Horner in double (values in [0.88, 1]: below 2^-50 of rounding). Only the fast decision uses
 * it, with a margin above its error. */
