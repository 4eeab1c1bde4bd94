/* SPDX-License-Identifier: BSD-3-Clause */
/* Message compressors (docs/design/notes/do-adp.md §2.6-2.8): identity, Top_k
 * (Definition 2, Lemma 7), Random_k and Bernoulli sparsifiers, all unscaled,
 * plus user types. All scratch is allocated at create; applying a compressor
 * allocates nothing. */
#include "../rng/rng_impl.h"
#include "compress_impl.h"
#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- built-in type objects ----------------------------------------------- */

/* Built-ins are ordinary type objects whose `user` is the handle itself, so
 * a caller holding the type object can still call through its pointers. */
static int builtin_compress(void *user, const double *x, int64_t dim, int64_t k,
                            const dpdo_rng *rng, uint64_t node_id, uint64_t round, int64_t *idx,
                            double *val, int64_t cap, int64_t *count)
{
    struct dpdo_compressor *c = user;
    if (!c || !x || !idx || !val || !count || dim != c->dim || k != c->k ||
        cap < dpdo_compressor_capacity(c))
        return 1;
    int rc = dpdo__compressor_apply(c, x, rng, node_id, round, idx, val, count, c->errmsg);
    return rc == DPDO_OK ? 0 : (rc < 0 ? -rc : rc);
}

static int builtin_contraction(void *user, int64_t dim, int64_t k, double *delta)
{
    struct dpdo_compressor *c = user;
    if (!c || dim != c->dim || k != c->k) return 1;
    int rc = dpdo_compressor_contraction(c, delta);
    return rc == DPDO_OK ? 0 : (rc < 0 ? -rc : rc);
}

#define BUILTIN(nm)                                                                                \
    {                                                                                              \
        sizeof(dpdo_compressor_type), nm, builtin_compress, builtin_contraction, NULL              \
    }
static const dpdo_compressor_type builtin_types[DPDO__COMP_NBUILTIN] = {
    BUILTIN("identity"),
    BUILTIN("top-k"),
    BUILTIN("rand-k"),
    BUILTIN("bernoulli"),
};
#undef BUILTIN

static int builtin_index(const dpdo_compressor_type *t)
{
    return dpdo__table_index(builtin_types, sizeof builtin_types[0], DPDO__COMP_NBUILTIN, t);
}

DPDO_API const dpdo_compressor_type *dpdo_compressor_type_find(const char *name)
{
    return dpdo__table_find(builtin_types, sizeof builtin_types[0], DPDO__COMP_NBUILTIN, name);
}

DPDO_API const dpdo_compressor_type *dpdo_compressor_type_next(const dpdo_compressor_type *prev)
{
    return dpdo__table_next(builtin_types, sizeof builtin_types[0], DPDO__COMP_NBUILTIN, prev);
}

DPDO_API const char *dpdo_compressor_type_name(const dpdo_compressor_type *t)
{
    return t && t->name ? t->name : "(null)";
}

/* ---- life cycle ------------------------------------------------------------ */

#define HAS(c, field)                                                                              \
    ((c)->tsize >= offsetof(dpdo_compressor_type, field) + sizeof((c)->type->field) &&             \
     (c)->type->field)

DPDO_API int dpdo_compressor_create(dpdo_compressor **out, const dpdo_compressor_type *type,
                                    void *user, int64_t dim)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (!type || dim < 1) return DPDO_E_INVAL;
    int kind = builtin_index(type);
    if (kind >= 0) {
        if (user) return DPDO_E_INVAL;
    } else {
        if (type->struct_size < offsetof(dpdo_compressor_type, compress) + sizeof(type->compress))
            return DPDO_E_VERSION;
        if (!type->name || !type->name[0] || !type->compress) return DPDO_E_INVAL;
        if (type->compress == builtin_compress) return DPDO_E_INVAL; /* a copy of a built-in */
        kind = DPDO__COMP_USER;
    }
    if ((uint64_t)dim > SIZE_MAX / sizeof(uint64_t)) return DPDO_E_NOMEM;
    struct dpdo_compressor *c = dpdo__calloc(1, sizeof *c);
    if (!c) return DPDO_E_NOMEM;
    c->magic = DPDO__MAGIC_COMPRESSOR;
    if (kind == DPDO__COMP_TOPK) {
        c->keys = dpdo__alloc_array((size_t)dim, sizeof(uint64_t));
        if (!c->keys) {
            dpdo__free(c);
            return DPDO_E_NOMEM;
        }
    }
    c->type = type;
    c->kind = kind;
    c->user = kind == DPDO__COMP_USER ? user : c;
    c->tsize = type->struct_size;
    c->dim = dim;
    c->k = dim;
    *out = c;
    return DPDO_OK;
}

static void comp_free(dpdo_compressor *c);

DPDO_API void dpdo_compressor_destroy(dpdo_compressor *c)
{
    if (!c || !DPDO__LIVE(c, DPDO__MAGIC_COMPRESSOR)) return; /* NULL or destroyed */
    DPDO__KILL(c);
    if (c->borrowers > 0) {
        c->doomed = 1; /* freed by the last borrowing algorithm */
        return;
    }
    comp_free(c);
}

void dpdo__compressor_retain(struct dpdo_compressor *c)
{
    c->borrowers++;
}

void dpdo__compressor_release(struct dpdo_compressor *c)
{
    if (c && --c->borrowers == 0 && c->doomed) comp_free(c);
}

static void comp_free(dpdo_compressor *c)
{
    if (c->kind == DPDO__COMP_USER && HAS(c, release)) c->type->release(c->user);
    dpdo__free(c->keys);
    dpdo__free(c);
}

DPDO_API const char *dpdo_compressor_errmsg(const dpdo_compressor *c)
{
    return c ? c->errmsg : DPDO__NULL_TEXT("dpdo_compressor_errmsg", "c");
}
DPDO_API const char *dpdo_compressor_name(const dpdo_compressor *c)
{
    return c ? c->type->name : "(null)";
}
DPDO_API int64_t dpdo_compressor_dim(const dpdo_compressor *c)
{
    return c ? c->dim : 0;
}
DPDO_API int64_t dpdo_compressor_k(const dpdo_compressor *c)
{
    return c ? c->k : 0;
}

DPDO_API int dpdo_compressor_set_k(dpdo_compressor *c, int64_t k)
{
    if (!c) return DPDO_E_INVAL;
    if (k < 1 || k > c->dim)
        return dpdo__err(c->errmsg, DPDO_E_INVAL, "set_k: k = %lld must be in [1, dim = %lld]",
                         (long long)k, (long long)c->dim);
    if (c->kind == DPDO__COMP_IDENTITY && k != c->dim)
        return dpdo__err(c->errmsg, DPDO_E_INVAL,
                         "set_k: the identity keeps every coordinate, k must equal dim = %lld "
                         "(got %lld); use \"top-k\" to sparsify",
                         (long long)c->dim, (long long)k);
    c->k = k;
    return DPDO_OK;
}

DPDO_API int64_t dpdo_compressor_capacity(const dpdo_compressor *c)
{
    if (!c) return 0;
    return (c->kind == DPDO__COMP_TOPK || c->kind == DPDO__COMP_RANDK) ? c->k : c->dim;
}

DPDO_API int dpdo_compressor_is_deterministic(const dpdo_compressor *c)
{
    return c && (c->kind == DPDO__COMP_IDENTITY || c->kind == DPDO__COMP_TOPK);
}

DPDO_API int dpdo_compressor_contraction(dpdo_compressor *c, double *delta)
{
    if (!c) return DPDO_E_INVAL;
    if (!delta) return dpdo__err(c->errmsg, DPDO_E_INVAL, "contraction: delta is NULL");
    if (c->kind != DPDO__COMP_USER) {
        /* identity: k = dim, so every built-in is k/dim (exactly 1 for identity).
         * top-k: Lemma 7, for every x; rand-k / bernoulli: in expectation, with
         * equality (each coordinate is kept with probability k/dim). */
        *delta = (double)c->k / (double)c->dim;
        return DPDO_OK;
    }
    if (!HAS(c, contraction))
        return dpdo__err(c->errmsg, DPDO_E_UNSUPPORTED,
                         "contraction: compressor '%s' has no contraction callback", c->type->name);
    double v = NAN;
    int rc = c->type->contraction(c->user, c->dim, c->k, &v);
    if (rc != 0)
        return dpdo__err(c->errmsg, DPDO_E_CALLBACK,
                         "contraction: compressor '%s' contraction callback returned %d",
                         c->type->name, rc);
    if (!(v >= 0.0 && v <= 1.0))
        return dpdo__err(c->errmsg, DPDO_E_NUMERIC,
                         "contraction: compressor '%s' gave delta = %g, not in [0, 1]",
                         c->type->name, v);
    *delta = v;
    return DPDO_OK;
}

/* ---- Top_k by radix select ------------------------------------------------ */

/* The ordering key of x_l: the bit pattern of |x_l|. For finite doubles
 * >= 0 (and -0 -> +0) the unsigned order of the pattern is the numeric
 * order, so selecting on keys is exact, platform-independent and needs no
 * comparison function. */
static inline uint64_t abs_key(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u & UINT64_C(0x7fffffffffffffff);
}

static inline int top_bit(uint64_t v)
{
    return 63 - __builtin_clzll(v);
}

/* AVX-512 versions of the three passes over all of x (the OR/AND of the keys, the first
 * compaction, the final write): they only move data and count, so the selection, its order and
 * every value are those of the portable loops below (tests/test_compress.c compares them). */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TOPK_X86 1
#define TOPK_AVX512 __attribute__((target("avx512f")))
static int topk_avx512(void)
{
    return __builtin_cpu_supports("avx512f"); /* libgcc's CPU model: no state of ours */
}

TOPK_AVX512 static void oa_avx512(const double *x, int64_t d, uint64_t *orr, uint64_t *andd)
{
    const __m512i ab = _mm512_set1_epi64(0x7fffffffffffffffLL);
    __m512i o0 = _mm512_setzero_si512(), o1 = o0, a0 = _mm512_set1_epi64(-1), a1 = a0;
    int64_t l = 0;
    for (; l + 16 <= d; l += 16) {
        __m512i u0 = _mm512_and_si512(_mm512_castpd_si512(_mm512_loadu_pd(x + l)), ab);
        __m512i u1 = _mm512_and_si512(_mm512_castpd_si512(_mm512_loadu_pd(x + l + 8)), ab);
        o0 = _mm512_or_si512(o0, u0), a0 = _mm512_and_si512(a0, u0);
        o1 = _mm512_or_si512(o1, u1), a1 = _mm512_and_si512(a1, u1);
    }
    uint64_t o = (uint64_t)_mm512_reduce_or_epi64(_mm512_or_si512(o0, o1));
    uint64_t a = (uint64_t)_mm512_reduce_and_epi64(_mm512_and_si512(a0, a1));
    for (; l < d; l++) {
        uint64_t u = abs_key(x[l]);
        o |= u;
        a &= u;
    }
    *orr = o, *andd = a;
}

/* the keys u of x with ((u >> sh) & mk) == b, in index order, into scratch; their OR and AND */
TOPK_AVX512 static int64_t compact_avx512(const double *x, int64_t d, int sh, uint64_t mk,
                                          uint64_t b, uint64_t *scratch, uint64_t *orr,
                                          uint64_t *andd)
{
    const __m512i ab = _mm512_set1_epi64(0x7fffffffffffffffLL),
                  vm = _mm512_set1_epi64((long long)mk), vb = _mm512_set1_epi64((long long)b);
    const __m128i cnt = _mm_cvtsi32_si128(sh);
    __m512i o = _mm512_setzero_si512(), a = _mm512_set1_epi64(-1);
    int64_t m = 0, l = 0;
    for (; l + 8 <= d; l += 8) {
        __m512i u = _mm512_and_si512(_mm512_castpd_si512(_mm512_loadu_pd(x + l)), ab);
        __mmask8 keep = _mm512_cmpeq_epu64_mask(_mm512_and_si512(_mm512_srl_epi64(u, cnt), vm), vb);
        if (!keep) continue;
        o = _mm512_mask_or_epi64(o, keep, o, u);
        a = _mm512_mask_and_epi64(a, keep, a, u);
        int c = __builtin_popcount((unsigned)keep);
        /* compress in a register, then a masked store (a compressing store is slow on some CPUs) */
        _mm512_mask_storeu_epi64(scratch + m, (__mmask8)((1u << c) - 1),
                                 _mm512_maskz_compress_epi64(keep, u));
        m += c;
    }
    uint64_t or_ = (uint64_t)_mm512_reduce_or_epi64(o), and_ = (uint64_t)_mm512_reduce_and_epi64(a);
    for (; l < d; l++) {
        uint64_t u = abs_key(x[l]);
        if (((u >> sh) & mk) == b) {
            scratch[m++] = u;
            or_ |= u;
            and_ &= u;
        }
    }
    *orr = or_, *andd = and_;
    return m;
}

/* topk_emit with every key equal to tq selected: the l with (key_l >> sh) >= tq, ascending */
TOPK_AVX512 static void emit_all_avx512(const double *x, int64_t d, int sh, uint64_t tq,
                                        int64_t *idx, double *val)
{
    const __m512i ab = _mm512_set1_epi64(0x7fffffffffffffffLL),
                  vt = _mm512_set1_epi64((long long)tq), step = _mm512_set1_epi64(8);
    const __m128i cnt = _mm_cvtsi32_si128(sh);
    __m512i li = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    int64_t c = 0, l = 0;
    for (; l + 8 <= d; l += 8, li = _mm512_add_epi64(li, step)) {
        __m512d v = _mm512_loadu_pd(x + l);
        __m512i u = _mm512_and_si512(_mm512_castpd_si512(v), ab);
        __mmask8 sel = _mm512_cmp_epu64_mask(_mm512_srl_epi64(u, cnt), vt, _MM_CMPINT_NLT);
        __mmask8 st = (__mmask8)((1u << __builtin_popcount((unsigned)sel)) - 1);
        _mm512_mask_storeu_pd(val + c, st, _mm512_maskz_compress_pd(sel, v));
        _mm512_mask_storeu_epi64(idx + c, st, _mm512_maskz_compress_epi64(sel, li));
        c += __builtin_popcount((unsigned)sel);
    }
    for (; l < d; l++)
        if ((abs_key(x[l]) >> sh) >= tq) {
            idx[c] = l;
            val[c] = x[l];
            c++;
        }
}
#endif

/* Write the selection in ascending index order: l is selected when
 * (key_l >> sh) > tq, or when it equals tq and fewer than `take` equal ones
 * came before it (the tie rule: smaller index wins). `all` = every key equal
 * to tq is selected, which allows the branch-free loop without the tie
 * count. Exactly k coordinates satisfy the rule, so the loop stops at k. */
static void topk_emit(const double *x, int64_t d, int64_t k, int sh, uint64_t tq, int64_t take,
                      int all, int simd, int64_t *idx, double *val)
{
    int64_t c = 0;
#ifdef TOPK_X86
    if (all && simd) {
        emit_all_avx512(x, d, sh, tq, idx, val);
        return;
    }
#else
    (void)simd;
#endif
    if (all) {
        for (int64_t l = 0; l < d && c < k; l++) {
            uint64_t u = abs_key(x[l]) >> sh;
            idx[c] = l; /* written always, kept only when selected: no branch */
            val[c] = x[l];
            c += (u >= tq);
        }
    } else {
        for (int64_t l = 0; l < d && c < k; l++) {
            uint64_t u = abs_key(x[l]) >> sh;
            int64_t eq = (u == tq), sel = (u > tq) | (eq & (take > 0));
            take -= eq & sel;
            idx[c] = l;
            val[c] = x[l];
            c += sel;
        }
    }
}

void dpdo__topk_select(const double *x, int64_t d, int64_t k, uint64_t *scratch, int64_t *idx,
                       double *val)
{
    dpdo__topk_select_oa(x, d, k, 0, 0, 0, scratch, idx, val);
}

void dpdo__topk_select_oa(const double *x, int64_t d, int64_t k, int have_oa, uint64_t orr,
                          uint64_t andd, uint64_t *scratch, int64_t *idx, double *val)
{
    if (k >= d) {
        for (int64_t l = 0; l < d; l++) {
            idx[l] = l;
            val[l] = x[l];
        }
        return;
    }
#ifdef TOPK_X86
    const int simd = topk_avx512();
#else
    const int simd = 0;
#endif
    /* MSD radix select of the k-th largest key. The candidates are the
     * coordinates that may still hold it (at first all of x). Each level:
     *   1. diff = OR ^ AND of the candidates' keys: the bits on which they
     *      differ. diff = 0: they are all equal, so the key is known. Bits
     *      above the top set bit of diff are common and skipped, which makes
     *      ties, equal magnitudes and narrow ranges cheap.
     *   2. histogram the w bits below that top bit (w = 11, the exponent
     *      width, while many candidates remain, else 8) and walk the buckets
     *      from the top to the one holding the need-th largest candidate;
     *   3. stop if that bucket is taken whole, or all 64 bits are resolved;
     *      else keep only that bucket's candidates (compacted into scratch,
     *      with their OR/AND for the next level).
     * Every level removes at least one bit of diff, and the widths sum to at
     * most 63, so there are at most 8 levels, each one pass over the
     * survivors: O(d) worst case with no data-dependent pivot, no RNG and
     * no comparison function; the result is the same on every platform. */
    uint32_t h2[2][2048]; /* counts, each of at most d / 2 + 1 keys (d < 2^33) */
    if (!have_oa) {
#ifdef TOPK_X86
        if (simd)
            oa_avx512(x, d, &orr, &andd);
        else
#endif
        {
            orr = 0, andd = ~UINT64_C(0);
            for (int64_t l = 0; l < d; l++) {
                uint64_t u = abs_key(x[l]);
                orr |= u;
                andd &= u;
            }
        }
    }
    int64_t n = d, need = k;
    int first = 1;
    for (;;) {
        uint64_t diff = orr ^ andd;
        if (!diff) { /* all candidates equal: the first `need` of them by index */
            topk_emit(x, d, k, 0, andd, need, need == n, simd, idx, val);
            return;
        }
        int top = top_bit(diff), w = n > 1024 ? 11 : 8;
        int sh = top + 1 - w < 0 ? 0 : top + 1 - w;
        uint64_t mk = (UINT64_C(1) << (top + 1 - sh)) - 1; /* top + 1 - sh <= 11 */
        /* two interleaved tables (even and odd positions): in a run of equal digits (many
         * near-equal magnitudes) an increment waits for the one two elements back, not for the
         * previous one; hist[b] = h2[0][b] + h2[1][b] is formed only for the buckets walked */
        memset(h2[0], 0, (size_t)(mk + 1) * sizeof h2[0][0]);
        memset(h2[1], 0, (size_t)(mk + 1) * sizeof h2[1][0]);
        if (first) {
            int64_t l = 0;
            for (; l + 2 <= d; l += 2) {
                h2[0][(abs_key(x[l]) >> sh) & mk]++;
                h2[1][(abs_key(x[l + 1]) >> sh) & mk]++;
            }
            if (l < d) h2[0][(abs_key(x[l]) >> sh) & mk]++;
        } else {
            int64_t j = 0;
            for (; j + 2 <= n; j += 2) {
                h2[0][(scratch[j] >> sh) & mk]++;
                h2[1][(scratch[j + 1] >> sh) & mk]++;
            }
            if (j < n) h2[0][(scratch[j] >> sh) & mk]++;
        }
        int64_t b = (int64_t)mk;
        /* down from the top bucket, eight at a time while all eight lie above the one sought */
        while (b >= 7) {
            int64_t s8 = 0;
            for (int t = 0; t < 8; t++)
                s8 += (int64_t)h2[0][b - t] + (int64_t)h2[1][b - t];
            if (s8 >= need) break;
            need -= s8;
            b -= 8;
        }
        int64_t hb;
        while ((hb = (int64_t)h2[0][b] + (int64_t)h2[1][b]) < need) {
            need -= hb;
            b--;
        }
        int64_t hist_b = hb;
        /* the threshold's bits from 63 down to sh: the candidates' common
         * high bits with the digit replaced by b */
        const uint64_t tq = ((andd >> sh) & ~mk) | (uint64_t)b;
        if (hist_b == need || sh == 0) {
            topk_emit(x, d, k, sh, tq, need, hist_b == need, simd, idx, val);
            return;
        }
        int64_t m = 0;
        orr = 0;
        andd = ~UINT64_C(0);
        /* branch-free compaction: store always, advance only when kept */
        if (first) {
#ifdef TOPK_X86
            if (simd)
                m = compact_avx512(x, d, sh, mk, (uint64_t)b, scratch, &orr, &andd);
            else
#endif
                for (int64_t l = 0; l < d; l++) {
                    uint64_t u = abs_key(x[l]);
                    uint64_t keep = ((u >> sh) & mk) == (uint64_t)b, msk = 0 - keep;
                    scratch[m] = u;
                    orr |= u & msk;
                    andd &= u | ~msk;
                    m += (int64_t)keep;
                }
            first = 0;
        } else {
            for (int64_t j = 0; j < n; j++) {
                uint64_t u = scratch[j];
                uint64_t keep = ((u >> sh) & mk) == (uint64_t)b, msk = 0 - keep;
                scratch[m] = u;
                orr |= u & msk;
                andd &= u | ~msk;
                m += (int64_t)keep;
            }
        }
        n = m;
    }
}

/* ---- apply ------------------------------------------------------------------- */

static int check_user_output(const struct dpdo_compressor *c, const int64_t *idx, const double *val,
                             int64_t cnt, char *err)
{
    const char *nm = c->type->name;
    int64_t cap = c->dim;
    if (cnt < 0 || cnt > cap)
        return dpdo__err(err, DPDO_E_CALLBACK,
                         "compressor '%s' wrote count = %lld pairs, outside [0, %lld]", nm,
                         (long long)cnt, (long long)cap);
    for (int64_t j = 0; j < cnt; j++) {
        if (idx[j] < 0 || idx[j] >= c->dim)
            return dpdo__err(err, DPDO_E_CALLBACK,
                             "compressor '%s': pair %lld has index %lld outside [0, %lld)", nm,
                             (long long)j, (long long)idx[j], (long long)c->dim);
        if (j > 0 && idx[j] <= idx[j - 1])
            return dpdo__err(err, DPDO_E_CALLBACK,
                             "compressor '%s': pair %lld has index %lld, not above the previous "
                             "index %lld (indices must be strictly ascending)",
                             nm, (long long)j, (long long)idx[j], (long long)idx[j - 1]);
        if (!isfinite(val[j]))
            return dpdo__err(err, DPDO_E_CALLBACK,
                             "compressor '%s': pair %lld (index %lld) has a non-finite value %g",
                             nm, (long long)j, (long long)idx[j], val[j]);
    }
    return DPDO_OK;
}

int dpdo__compressor_apply(struct dpdo_compressor *c, const double *x, const struct dpdo_rng *rng,
                           uint64_t node_id, uint64_t round, int64_t *idx, double *val,
                           int64_t *count, char *err)
{
    return dpdo__compressor_apply_ws(c, x, rng, node_id, round, idx, val, count, NULL, err);
}

static int apply_impl(struct dpdo_compressor *c, const double *x, const struct dpdo_rng *rng,
                      uint64_t node_id, uint64_t round, int64_t *idx, double *val, int64_t *count,
                      uint64_t *keys, int have_oa, uint64_t orr, uint64_t andd, char *err);

int dpdo__compressor_concurrent(const struct dpdo_compressor *c)
{
    return !c || c->kind != DPDO__COMP_USER;
}

int dpdo__compressor_apply_ws(struct dpdo_compressor *c, const double *x,
                              const struct dpdo_rng *rng, uint64_t node_id, uint64_t round,
                              int64_t *idx, double *val, int64_t *count, uint64_t *keys, char *err)
{
    return apply_impl(c, x, rng, node_id, round, idx, val, count, keys, 0, 0, 0, err);
}

int dpdo__compressor_apply_oa(struct dpdo_compressor *c, const double *x,
                              const struct dpdo_rng *rng, uint64_t node_id, uint64_t round,
                              int64_t *idx, double *val, int64_t *count, uint64_t *keys,
                              uint64_t orr, uint64_t andd, char *err)
{
    return apply_impl(c, x, rng, node_id, round, idx, val, count, keys, 1, orr, andd, err);
}

static int apply_impl(struct dpdo_compressor *c, const double *x, const struct dpdo_rng *rng,
                      uint64_t node_id, uint64_t round, int64_t *idx, double *val, int64_t *count,
                      uint64_t *keys, int have_oa, uint64_t orr, uint64_t andd, char *err)
{
    const int64_t d = c->dim, k = c->k;
    *count = 0;
    switch (c->kind) {
    case DPDO__COMP_IDENTITY:
        for (int64_t l = 0; l < d; l++) {
            idx[l] = l;
            val[l] = x[l];
        }
        *count = d;
        return DPDO_OK;
    case DPDO__COMP_TOPK:
        dpdo__topk_select_oa(x, d, k, have_oa, orr, andd, keys ? keys : c->keys, idx, val);
        *count = k;
        return DPDO_OK;
    case DPDO__COMP_RANDK: {
        if (!rng)
            return dpdo__err(err, DPDO_E_INVAL, "compressor 'rand-k' needs an rng (got NULL)");
        dpdo__stream s;
        dpdo__stream_open(&s, rng, node_id, round, DPDO_PURPOSE_COMPRESSION);
        dpdo__stream_subset(&s, d, k, idx); /* sorted ascending */
        if (dpdo__stream_status(&s) != DPDO_OK)
            return dpdo__err(err, DPDO_E_CALLBACK,
                             "compressor 'rand-k': the rng's block callback returned %d",
                             dpdo__stream_cb_code(&s));
        for (int64_t j = 0; j < k; j++)
            val[j] = x[idx[j]];
        *count = k;
        return DPDO_OK;
    }
    case DPDO__COMP_BERNOULLI: {
        if (!rng)
            return dpdo__err(err, DPDO_E_INVAL, "compressor 'bernoulli' needs an rng (got NULL)");
        dpdo__stream s;
        dpdo__stream_open(&s, rng, node_id, round, DPDO_PURPOSE_COMPRESSION);
        /* val (capacity dim) holds the d uniforms first; the compaction
         * below writes pair j at position j <= l, never ahead of the
         * uniform it still has to read. */
        dpdo__stream_uniforms(&s, val, (size_t)d);
        if (dpdo__stream_status(&s) != DPDO_OK)
            return dpdo__err(err, DPDO_E_CALLBACK,
                             "compressor 'bernoulli': the rng's block callback returned %d",
                             dpdo__stream_cb_code(&s));
        const double p = (double)k / (double)d;
        int64_t m = 0;
        for (int64_t l = 0; l < d; l++) {
            if (val[l] < p) {
                idx[m] = l;
                val[m] = x[l];
                m++;
            }
        }
        *count = m;
        return DPDO_OK;
    }
    default: {
        int64_t cnt = -1;
        int rc = c->type->compress(c->user, x, d, k, rng, node_id, round, idx, val, d, &cnt);
        if (rc != 0)
            return dpdo__err(err, DPDO_E_CALLBACK, "compressor '%s': compress returned %d",
                             c->type->name, rc);
        rc = check_user_output(c, idx, val, cnt, err);
        if (rc != DPDO_OK) return rc;
        *count = cnt;
        return DPDO_OK;
    }
    }
}

DPDO_API int dpdo_compressor_apply(dpdo_compressor *c, const double *x, int64_t dim,
                                   const dpdo_rng *rng, uint64_t node_id, uint64_t round,
                                   int64_t *idx, double *val, int64_t cap, int64_t *count)
{
    if (count) *count = 0;
    if (!c) return DPDO_E_INVAL;
    if (!x || !idx || !val || !count)
        return dpdo__err(c->errmsg, DPDO_E_INVAL, "apply: %s is NULL",
                         !x     ? "x"
                         : !idx ? "idx"
                         : !val ? "val"
                                : "count");
    if (dim != c->dim)
        return dpdo__err(c->errmsg, DPDO_E_INVAL,
                         "apply: dim = %lld differs from the compressor's %lld", (long long)dim,
                         (long long)c->dim);
    int64_t need = dpdo_compressor_capacity(c);
    if (cap < need)
        return dpdo__err(c->errmsg, DPDO_E_INVAL,
                         "apply: cap = %lld is below the capacity %lld of compressor '%s' "
                         "(see dpdo_compressor_capacity)",
                         (long long)cap, (long long)need, c->type->name);
    /* val is written while x is still read (and bernoulli parks uniforms in
     * val), so they must not overlap. */
    uintptr_t xa = (uintptr_t)x, xb = xa + (uintptr_t)dim * sizeof(double);
    uintptr_t va = (uintptr_t)val, vb = va + (uintptr_t)need * sizeof(double);
    if (va < xb && xa < vb) return dpdo__err(c->errmsg, DPDO_E_INVAL, "apply: val overlaps x");
    size_t bad = dpdo__first_nonfinite(x, (size_t)dim);
    if (bad < (size_t)dim)
        return dpdo__err(c->errmsg, DPDO_E_INVAL, "apply: x[%lld] = %g is not finite",
                         (long long)bad, x[bad]);
    if ((c->kind == DPDO__COMP_RANDK || c->kind == DPDO__COMP_BERNOULLI) && !rng)
        return dpdo__err(c->errmsg, DPDO_E_INVAL, "apply: compressor '%s' needs an rng (got NULL)",
                         c->type->name);
    int rc = dpdo__stream_ids_check(node_id, round, DPDO_PURPOSE_COMPRESSION, c->errmsg);
    if (rc != DPDO_OK) return rc;
    return dpdo__compressor_apply(c, x, rng, node_id, round, idx, val, count, c->errmsg);
}
