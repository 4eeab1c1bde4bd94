/* SPDX-License-Identifier: BSD-3-Clause */
/* Synthetic datasets shaped like the papers' data. Every random value comes
 * from a stream (seed, node = sub-stream id, round = 0, DPDO_PURPOSE_DATA);
 * sub-streams are fixed per quantity (direction, labels, rows, ...) so that
 * changing n does not change the direction, and rows are generated one
 * stream block range at a time in a fixed order: same options, same bytes.
 * docs/data.md gives the exact distributions. */
#include "../rng/rng_impl.h"
#include "data_impl.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const kinds[] = {"epsilon-like", "rcv1-like", "fedplt-logistic", "covtype-like"};
enum { NKINDS = 4 };

/* sub-stream ids (the stream's `node` field) */
enum { S_DIR = 1, S_ROWS = 2, S_LABELS = 3, S_NOISE = 4, S_PERM = 5, S_SHIFT = 6, S_VALS = 7 };

const char *dpdo_dataset_generator_name(int index)
{
    return index >= 0 && index < NKINDS ? kinds[index] : NULL;
}

static void gen_defaults(dpdo_generate_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->seed = 1;
    o->n = 1000;
    o->d = 100;
    o->density = 0.0016;
    o->label_noise = 0.05;
    o->separation = 1.5;
    o->zipf_exponent = 1.0;
    o->scale = 1.0;
    o->independent_labels = 0;
    o->n_agents = 1;
    o->shift_scale = 0.0;
    o->normalize_rows = -1;
}

int dpdo_generate_options_init(dpdo_generate_options *o, size_t struct_size)
{
    dpdo_generate_options d;
    gen_defaults(&d);
    return dpdo__options_init(o, struct_size, &d, sizeof d);
}

static void normalize(double *x, int64_t d)
{
    double s = 0;
    for (int64_t j = 0; j < d; j++)
        s += x[j] * x[j];
    if (s > 0) {
        double inv = 1.0 / sqrt(s);
        for (int64_t j = 0; j < d; j++)
            x[j] *= inv;
    }
}

static double sigmoid(double t)
{
    return t >= 0 ? 1.0 / (1.0 + exp(-t)) : exp(t) / (1.0 + exp(t));
}

/* x_i = b_i * sep * u + N(0, I), u a uniform random unit direction, b_i = +-1
 * with probability 1/2; the stored label is b_i flipped with probability
 * label_noise; rows normalised (default). */
static int gen_epsilon(struct dpdo_dataset *ds, const dpdo_generate_options *o, dpdo_rng *rng,
                       struct dpdo__ds_content *c)
{
    int64_t n = o->n, d = o->d;
    double *X = dpdo__alloc_array((size_t)n * (size_t)d, sizeof(double));
    double *y = X ? dpdo__alloc_array((size_t)n, sizeof(double)) : NULL;
    double *u = y ? dpdo__alloc_array((size_t)d, sizeof(double)) : NULL;
    if (!u) {
        dpdo__free(X);
        dpdo__free(y);
        return dpdo__err(ds->errmsg, DPDO_E_NOMEM, "out of memory generating %lld x %lld",
                         (long long)n, (long long)d);
    }
    dpdo__stream s;
    dpdo__stream_open(&s, rng, S_DIR, 0, DPDO_PURPOSE_DATA);
    dpdo__stream_normals(&s, u, (size_t)d);
    normalize(u, d);
    dpdo__stream sl, sx;
    dpdo__stream_open(&sl, rng, S_LABELS, 0, DPDO_PURPOSE_DATA);
    dpdo__stream_open(&sx, rng, S_ROWS, 0, DPDO_PURPOSE_DATA);
    int norm = o->normalize_rows != 0;
    for (int64_t i = 0; i < n; i++) {
        double b = dpdo__stream_uniform(&sl) < 0.5 ? -1.0 : 1.0;
        double flip = dpdo__stream_uniform(&sl) < o->label_noise ? -1.0 : 1.0;
        double *x = X + (size_t)i * (size_t)d;
        dpdo__stream_normals(&sx, x, (size_t)d);
        for (int64_t j = 0; j < d; j++)
            x[j] += b * o->separation * u[j];
        if (norm) normalize(x, d);
        y[i] = b * flip;
    }
    dpdo__free(u);
    c->layout = DPDO__DS_DENSE;
    c->X = c->own[0] = X;
    c->y = c->own[1] = y;
    return DPDO_OK;
}

/* Fed-PLT Sec. 6.2: x_true ~ N(0, I_d); agent k (rows [k*n/N, (k+1)*n/N))
 * has a shift m_k ~ N(0, c_h^2 I) (c_h = shift_scale, 0 = none); a_i ~
 * N(m_k, s^2 I); b_i = +1 w.p. sigmoid(a_i . x_true), else -1 (or
 * Unif{-1,+1} if independent_labels). Rows not normalised by default. */
static int gen_fedplt(struct dpdo_dataset *ds, const dpdo_generate_options *o, dpdo_rng *rng,
                      struct dpdo__ds_content *c)
{
    int64_t n = o->n, d = o->d, N = o->n_agents;
    double *X = dpdo__alloc_array((size_t)n * (size_t)d, sizeof(double));
    double *y = X ? dpdo__alloc_array((size_t)n, sizeof(double)) : NULL;
    double *xt = y ? dpdo__alloc_array((size_t)d, sizeof(double)) : NULL;
    double *m = xt ? dpdo__calloc((size_t)d, sizeof(double)) : NULL;
    if (!m) {
        dpdo__free(X);
        dpdo__free(y);
        dpdo__free(xt);
        return dpdo__err(ds->errmsg, DPDO_E_NOMEM, "out of memory generating %lld x %lld",
                         (long long)n, (long long)d);
    }
    dpdo__stream s, sl, sx;
    dpdo__stream_open(&s, rng, S_DIR, 0, DPDO_PURPOSE_DATA);
    dpdo__stream_normals(&s, xt, (size_t)d);
    dpdo__stream_open(&sl, rng, S_LABELS, 0, DPDO_PURPOSE_DATA);
    dpdo__stream_open(&sx, rng, S_ROWS, 0, DPDO_PURPOSE_DATA);
    int64_t agent = -1;
    for (int64_t i = 0; i < n; i++) {
        int64_t k = (int64_t)(((__int128)i * N) / n);
        if (k != agent) {
            agent = k;
            if (o->shift_scale > 0) {
                dpdo__stream sm;
                dpdo__stream_open(&sm, rng, S_SHIFT + (uint64_t)k * 16u, 0, DPDO_PURPOSE_DATA);
                dpdo__stream_normals(&sm, m, (size_t)d);
                for (int64_t j = 0; j < d; j++)
                    m[j] *= o->shift_scale;
            }
        }
        double *x = X + (size_t)i * (size_t)d;
        dpdo__stream_normals(&sx, x, (size_t)d);
        double dot = 0;
        for (int64_t j = 0; j < d; j++) {
            x[j] = m[j] + o->scale * x[j];
            dot += x[j] * xt[j];
        }
        double uu = dpdo__stream_uniform(&sl);
        if (o->independent_labels)
            y[i] = uu < 0.5 ? 1.0 : -1.0;
        else
            y[i] = uu < sigmoid(dot) ? 1.0 : -1.0;
        if (o->normalize_rows == 1) normalize(x, d);
    }
    dpdo__free(xt);
    dpdo__free(m);
    c->layout = DPDO__DS_DENSE;
    c->X = c->own[0] = X;
    c->y = c->own[1] = y;
    return DPDO_OK;
}

/* covtype-like, 54 features: 10 continuous U(0,1)-ish (Beta-like via the
 * mean of two uniforms), one-hot wilderness area (4, probabilities .45 .05
 * .44 .06) and one-hot soil type (40, Zipf(1) over a random order). Class
 * ids 1..7 by argmax of random linear scores + Gumbel noise; y = +1 for
 * class 2 ... see docs. Rows not normalised by default. */
static int gen_covtype(struct dpdo_dataset *ds, const dpdo_generate_options *o, dpdo_rng *rng,
                       struct dpdo__ds_content *c)
{
    const int64_t d = 54, n = o->n;
    double *X = dpdo__calloc((size_t)n * (size_t)d, sizeof(double));
    double *y = X ? dpdo__alloc_array((size_t)n, sizeof(double)) : NULL;
    int32_t *cls = y ? dpdo__alloc_array((size_t)n, sizeof(int32_t)) : NULL;
    if (!cls) {
        dpdo__free(X);
        dpdo__free(y);
        return dpdo__err(ds->errmsg, DPDO_E_NOMEM, "out of memory generating %lld x 54",
                         (long long)n);
    }
    /* class weights W[7][54] ~ N(0,1); class biases favour classes 1, 2 */
    double W[7][54];
    static const double bias[7] = {1.2, 1.5, 0.0, -1.5, -1.0, -0.5, -0.3};
    dpdo__stream s;
    dpdo__stream_open(&s, rng, S_DIR, 0, DPDO_PURPOSE_DATA);
    dpdo__stream_normals(&s, &W[0][0], 7 * 54);
    static const double wild[4] = {0.45, 0.05, 0.44, 0.06};
    double soil_cdf[40], z = 0;
    for (int k = 0; k < 40; k++)
        z += 1.0 / (k + 1);
    double acc = 0;
    for (int k = 0; k < 40; k++) {
        acc += 1.0 / (k + 1) / z;
        soil_cdf[k] = acc;
    }
    dpdo__stream sx;
    dpdo__stream_open(&sx, rng, S_ROWS, 0, DPDO_PURPOSE_DATA);
    int norm = o->normalize_rows == 1;
    for (int64_t i = 0; i < n; i++) {
        double *x = X + (size_t)i * 54;
        for (int j = 0; j < 10; j++)
            x[j] = 0.5 * (dpdo__stream_uniform(&sx) + dpdo__stream_uniform(&sx));
        double u = dpdo__stream_uniform(&sx), a = 0;
        int w = 3;
        for (int k = 0; k < 4; k++) {
            a += wild[k];
            if (u < a) {
                w = k;
                break;
            }
        }
        x[10 + w] = 1.0;
        u = dpdo__stream_uniform(&sx);
        int st = 39;
        for (int k = 0; k < 40; k++)
            if (u < soil_cdf[k]) {
                st = k;
                break;
            }
        x[14 + st] = 1.0;
        int best = 0;
        double bs = -HUGE_VAL;
        for (int k = 0; k < 7; k++) {
            double sc = bias[k] - log(-log(dpdo__stream_uniform(&sx)));
            for (int j = 0; j < 10; j++)
                sc += W[k][j] * (x[j] - 0.5) * 2.0;
            sc += W[k][10 + w] + W[k][14 + st];
            if (sc > bs) {
                bs = sc;
                best = k;
            }
        }
        cls[i] = best + 1;
        y[i] = best + 1 == 2 ? 1.0 : -1.0;
        if (norm) normalize(x, d);
    }
    c->layout = DPDO__DS_DENSE;
    c->d = d;
    c->X = c->own[0] = X;
    c->y = c->own[1] = y;
    c->cls = c->own[2] = cls;
    return DPDO_OK;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int64_t upper_bound(const double *cdf, int64_t d, double u)
{
    int64_t lo = 0, hi = d - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* rcv1-like CSR: feature of popularity rank r (0-based) has weight
 * 1/(r+1)^zipf; ranks map to columns through a random permutation. Row i
 * has k_i ~ Uniform{1, ..., 2*round(density*d) - 1} distinct features drawn
 * by weight without replacement (rejection); value of feature j =
 * (1 + ln tf) * idf_j with tf ~ 1 + Geometric(1/2) and idf_j = ln(1 +
 * 1/p_j), p_j the feature's probability; rows normalised. Labels: +1 if
 * <x, w> (w ~ N(0, I)) is above its median over the rows, -1 below, a fair
 * coin at the median; then flipped w.p. label_noise. */
static int gen_rcv1(struct dpdo_dataset *ds, const dpdo_generate_options *o, dpdo_rng *rng,
                    struct dpdo__ds_content *c)
{
    int64_t n = o->n, d = o->d;
    int64_t kmean = (int64_t)llround(o->density * (double)d);
    if (kmean < 1) kmean = 1;
    if (kmean > d) kmean = d;
    int64_t kmax = 2 * kmean - 1;
    if (kmax > d) kmax = d;
    size_t cap;
    if (!dpdo__mul_size((size_t)n, (size_t)kmax, &cap))
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "n * max row length overflows");
    int64_t *rp = dpdo__alloc_array((size_t)n + 1, sizeof(int64_t));
    int32_t *ci = rp ? dpdo__alloc_array(cap, sizeof(int32_t)) : NULL;
    double *va = ci ? dpdo__alloc_array(cap, sizeof(double)) : NULL;
    double *y = va ? dpdo__alloc_array((size_t)n, sizeof(double)) : NULL;
    double *cdf = y ? dpdo__alloc_array((size_t)d, sizeof(double)) : NULL;
    double *idf = cdf ? dpdo__alloc_array((size_t)d, sizeof(double)) : NULL;
    double *w = idf ? dpdo__alloc_array((size_t)d, sizeof(double)) : NULL;
    int64_t *perm = w ? dpdo__alloc_array((size_t)d, sizeof(int64_t)) : NULL;
    unsigned char *mark = perm ? dpdo__calloc((size_t)d, 1) : NULL;
    int rc = DPDO_OK;
    if (!mark) {
        rc = dpdo__err(ds->errmsg, DPDO_E_NOMEM, "out of memory generating rcv1-like %lld x %lld",
                       (long long)n, (long long)d);
        goto done;
    }
    double z = 0;
    for (int64_t r = 0; r < d; r++)
        z += pow((double)(r + 1), -o->zipf_exponent);
    double acc = 0;
    for (int64_t r = 0; r < d; r++) {
        double pr = pow((double)(r + 1), -o->zipf_exponent) / z;
        acc += pr;
        cdf[r] = acc;
        idf[r] = log(1.0 + 1.0 / pr);
    }
    cdf[d - 1] = 2.0; /* guard against rounding: u < 1 always lands */
    dpdo__stream s;
    dpdo__stream_open(&s, rng, S_PERM, 0, DPDO_PURPOSE_DATA);
    dpdo__stream_permutation(&s, d, perm); /* rank r -> column perm[r] */
    dpdo__stream_open(&s, rng, S_DIR, 0, DPDO_PURPOSE_DATA);
    dpdo__stream_normals(&s, w, (size_t)d);
    dpdo__stream sx, sv, sl;
    dpdo__stream_open(&sx, rng, S_ROWS, 0, DPDO_PURPOSE_DATA);
    dpdo__stream_open(&sv, rng, S_VALS, 0, DPDO_PURPOSE_DATA);
    dpdo__stream_open(&sl, rng, S_LABELS, 0, DPDO_PURPOSE_DATA);
    int norm = o->normalize_rows != 0;
    int64_t pos = 0;
    rp[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t k = 1 + (int64_t)dpdo__stream_below(&sx, (uint64_t)kmax);
        int64_t got = 0, tries = 0;
        while (got < k && tries < 64 * k + 1024) {
            int64_t r = upper_bound(cdf, d, dpdo__stream_uniform(&sx));
            tries++;
            if (mark[r]) continue;
            mark[r] = 1;
            ci[pos + got++] = (int32_t)r; /* rank for now */
        }
        for (int64_t r = 0; got < k && r < d; r++) /* rare fallback: most popular unused */
            if (!mark[r]) {
                mark[r] = 1;
                ci[pos + got++] = (int32_t)r;
            }
        for (int64_t t = 0; t < k; t++) {
            int64_t r = ci[pos + t];
            mark[r] = 0;
            double tf = 1.0 + (double)dpdo__stream_geometric(&sv, 0.5);
            ci[pos + t] = (int32_t)perm[r];
            va[pos + t] = (1.0 + log(tf)) * idf[r];
        }
        /* sort the row by column (values follow) */
        for (int64_t t = 1; t < k; t++) {
            int32_t cc = ci[pos + t];
            double vv = va[pos + t];
            int64_t u = t - 1;
            while (u >= 0 && ci[pos + u] > cc) {
                ci[pos + u + 1] = ci[pos + u];
                va[pos + u + 1] = va[pos + u];
                u--;
            }
            ci[pos + u + 1] = cc;
            va[pos + u + 1] = vv;
        }
        double nn = 0, dot = 0;
        for (int64_t t = 0; t < k; t++)
            nn += va[pos + t] * va[pos + t];
        if (norm && nn > 0) {
            double inv = 1.0 / sqrt(nn);
            for (int64_t t = 0; t < k; t++)
                va[pos + t] *= inv;
        }
        for (int64_t t = 0; t < k; t++)
            dot += va[pos + t] * w[ci[pos + t]];
        y[i] = dot; /* score for now */
        pos += k;
        rp[i + 1] = pos;
    }
    /* labels: +1 above the median score, -1 below, ties at the median by a
     * fair coin (all values are positive, so a zero threshold would not
     * balance the classes); then flipped w.p. label_noise */
    double *sorted = dpdo__alloc_array((size_t)n, sizeof(double));
    if (!sorted) {
        rc = dpdo__err(ds->errmsg, DPDO_E_NOMEM, "out of memory generating rcv1-like labels");
        goto done;
    }
    memcpy(sorted, y, (size_t)n * sizeof(double));
    qsort(sorted, (size_t)n, sizeof(double), cmp_dbl);
    double med = sorted[(n - 1) / 2];
    dpdo__free(sorted);
    for (int64_t i = 0; i < n; i++) {
        double u = dpdo__stream_uniform(&sl), b;
        if (y[i] > med)
            b = 1.0;
        else if (y[i] < med)
            b = -1.0;
        else
            b = u < 0.5 ? 1.0 : -1.0;
        if (dpdo__stream_uniform(&sl) < o->label_noise) b = -b;
        y[i] = b;
    }
done: /* the scratch arrays; on failure the outputs too */
    dpdo__free(cdf);
    dpdo__free(idf);
    dpdo__free(w);
    dpdo__free(perm);
    dpdo__free(mark);
    if (rc) {
        dpdo__free(rp);
        dpdo__free(ci);
        dpdo__free(va);
        dpdo__free(y);
        return rc;
    }
    c->layout = DPDO__DS_CSR;
    c->rowptr = c->own[0] = rp;
    c->colidx = c->own[1] = ci;
    c->val = c->own[2] = va;
    c->y = c->own[3] = y;
    return DPDO_OK;
}

int dpdo_dataset_generate(dpdo_dataset *ds, const char *kind, const dpdo_generate_options *opts)
{
    if (!ds || !DPDO__LIVE(ds, DPDO__MAGIC_DATASET)) return DPDO_E_INVAL; /* NULL or destroyed */
    int which = -1;
    for (int k = 0; kind && k < NKINDS; k++)
        if (strcmp(kind, kinds[k]) == 0) which = k;
    if (which < 0)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL,
                         "unknown generator '%s' (valid: epsilon-like, rcv1-like, "
                         "fedplt-logistic, covtype-like)",
                         kind ? kind : "(null)");
    dpdo_generate_options o;
    gen_defaults(&o);
    int rc = dpdo__options_accept(&o, sizeof o, offsetof(dpdo_generate_options, reserved), opts,
                                  "dpdo_generate_options", ds->errmsg);
    if (rc) return rc;
    if (which == 3) o.d = 54; /* covtype-like ignores d */
    if (o.n < 1 || o.n > ((int64_t)1 << 40))
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "n = %lld out of range [1, 2^40]",
                         (long long)o.n);
    if (o.d < 1 || o.d > INT32_MAX)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "d = %lld out of range [1, 2^31-1]",
                         (long long)o.d);
    size_t nd;
    if (which != 1 && (!dpdo__mul_size((size_t)o.n, (size_t)o.d, &nd) ||
                       !dpdo__mul_size(nd, sizeof(double), &nd)))
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "n*d overflows");
    if (!(o.density > 0 && o.density <= 1))
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "density = %g must be in (0, 1]", o.density);
    if (!(o.label_noise >= 0 && o.label_noise <= 1))
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "label_noise = %g must be in [0, 1]",
                         o.label_noise);
    if (!isfinite(o.separation))
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "separation is not finite");
    if (!(o.zipf_exponent >= 0 && o.zipf_exponent <= 10))
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "zipf_exponent = %g must be in [0, 10]",
                         o.zipf_exponent);
    if (!(o.scale > 0 && isfinite(o.scale)))
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "scale = %g must be > 0", o.scale);
    if (!(o.shift_scale >= 0 && isfinite(o.shift_scale)))
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "shift_scale = %g must be >= 0", o.shift_scale);
    if (o.n_agents < 1 || o.n_agents > o.n)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "n_agents = %d must be in [1, n]",
                         (int)o.n_agents);
    if (o.independent_labels < 0 || o.independent_labels > 1 || o.normalize_rows < -1 ||
        o.normalize_rows > 1)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL,
                         "independent_labels must be 0/1 and normalize_rows -1/0/1");
    if (ds->refs > 0)
        return dpdo__err(ds->errmsg, DPDO_E_STATE,
                         "dataset is borrowed by %d shard(s); destroy them before refilling",
                         (int)ds->refs);
    dpdo_rng *rng = NULL;
    if (dpdo_rng_create(&rng, NULL, NULL, o.seed) != DPDO_OK)
        return dpdo__err(ds->errmsg, DPDO_E_NOMEM, "out of memory");
    struct dpdo__ds_content c;
    memset(&c, 0, sizeof c);
    c.n = o.n;
    c.d = o.d;
    switch (which) {
    case 0:
        rc = gen_epsilon(ds, &o, rng, &c);
        break;
    case 1:
        rc = gen_rcv1(ds, &o, rng, &c);
        break;
    case 2:
        rc = gen_fedplt(ds, &o, rng, &c);
        break;
    default:
        rc = gen_covtype(ds, &o, rng, &c);
        break;
    }
    dpdo_rng_destroy(rng);
    if (rc) return rc;
    return dpdo__ds_install(ds, &c);
}
