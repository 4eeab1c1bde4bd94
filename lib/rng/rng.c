/* SPDX-License-Identifier: BSD-3-Clause */
/* Counter-based streams: handles, the built-in Philox type, word draws and the
 * distributions built on them, and the public stateless draws. The exact
 * word -> value mapping is documented in docs/rng.md and defined by the
 * scalar kernels in rng_math.h; rng_simd.c holds the vectorised copies. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <openssl/evp.h>

#include "rng_dtab.h"
#include "rng_impl.h"
#include "rng_math.h"
#include "rng_simd.h"

/* ---- the built-in type -------------------------------------------------- */
static int philox_blocks(void *user, const uint32_t key[4], const uint32_t ctr[4], uint64_t nblocks,
                         uint32_t *out)
{
    (void)user;
    uint32_t c[4] = {ctr[0], ctr[1], ctr[2], ctr[3]};
    for (uint64_t j = 0; j < nblocks; j++) {
        dpdo__philox4x32_10(key, c, out + 4 * j);
        c[0]++; /* no carry into c[1] */
    }
    return 0;
}

static const dpdo_rng_type philox_type = {
    sizeof(dpdo_rng_type),
    "philox4x32-10",
    philox_blocks,
    NULL,
};

static const dpdo_rng_type *const builtin_types[] = {&philox_type};
#define N_BUILTIN (sizeof builtin_types / sizeof builtin_types[0])

DPDO_API const dpdo_rng_type *dpdo_rng_type_find(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < N_BUILTIN; i++)
        if (strcmp(builtin_types[i]->name, name) == 0) return builtin_types[i];
    return NULL;
}

DPDO_API const dpdo_rng_type *dpdo_rng_type_next(const dpdo_rng_type *prev)
{
    if (!prev) return builtin_types[0];
    for (size_t i = 0; i + 1 < N_BUILTIN; i++)
        if (builtin_types[i] == prev) return builtin_types[i + 1];
    return NULL;
}

DPDO_API const char *dpdo_rng_type_name(const dpdo_rng_type *type)
{
    return type ? type->name : NULL;
}

/* ---- handles ------------------------------------------------------------ */
static int rng_new(dpdo_rng **out, const dpdo_rng_type *type, void *user, int builtin,
                   uint64_t seed)
{
    dpdo_rng *r = dpdo__alloc(sizeof *r);
    if (!r) return DPDO_E_NOMEM;
    memset(r, 0, sizeof *r);
    if (pthread_mutex_init(&r->recent_lock, NULL)) {
        dpdo__free(r);
        return DPDO_E_NOMEM;
    }
    r->magic = DPDO__MAGIC_RNG;
    r->type = type;
    r->user = user;
    r->builtin = builtin;
    r->seed = seed;
    *out = r;
    return DPDO_OK;
}

/* Smallest struct_size that covers the required fields (name, blocks). */
#define TYPE_MIN_SIZE (offsetof(dpdo_rng_type, blocks) + sizeof(void (*)(void)))

static int create_custom(dpdo_rng **out, const dpdo_rng_type *type, void *user, uint64_t seed)
{
    if (type->struct_size < TYPE_MIN_SIZE) return DPDO_E_VERSION;
    if (!type->name || !type->blocks) return DPDO_E_INVAL;
    /* A custom generator always goes through the callback, even when it
     * wraps the built-in Philox (the output is the same). */
    return rng_new(out, type, user, 0, seed);
}

DPDO_API int dpdo_rng_create(dpdo_rng **out, const dpdo_rng_type *type, void *user, uint64_t seed)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (!type) type = &philox_type;
    int builtin = 0;
    for (size_t i = 0; i < N_BUILTIN; i++)
        if (builtin_types[i] == type) builtin = 1;
    if (!builtin) return create_custom(out, type, user, seed);
    if (user) return DPDO_E_INVAL; /* built-in types take no user pointer */
    return rng_new(out, type, NULL, type == &philox_type, seed);
}

DPDO_API int dpdo_rng_create_custom(dpdo_rng **out, const dpdo_rng_type *type, void *user,
                                    uint64_t seed)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (!type) return DPDO_E_INVAL;
    return create_custom(out, type, user, seed);
}

DPDO_API void dpdo_rng_destroy(dpdo_rng *rng)
{
    if (!rng || !DPDO__LIVE(rng, DPDO__MAGIC_RNG)) return; /* NULL or destroyed */
    DPDO__KILL(rng);
    const dpdo_rng_type *t = rng->type;
    if (!rng->builtin && t->struct_size >= offsetof(dpdo_rng_type, release) + sizeof t->release &&
        t->release && t != &philox_type)
        t->release(rng->user);
    for (int i = 0; i < DPDO__RNG_TABS; i++) /* the sampler tables: one allocation each */
        dpdo__free(atomic_load_explicit(&rng->tabs[i], memory_order_acquire));
    dpdo__dtab_recent_free(rng);
    pthread_mutex_destroy(&rng->recent_lock);
    dpdo__free(rng);
}

DPDO_API const char *dpdo_rng_errmsg(const dpdo_rng *rng)
{
    return rng ? rng->errmsg : DPDO__NULL_TEXT("dpdo_rng_errmsg", "rng");
}

DPDO_API uint64_t dpdo_rng_seed(const dpdo_rng *rng)
{
    return rng ? rng->seed : 0;
}

/* ---- streams -------------------------------------------------------------- */
int dpdo__stream_ids_check(uint64_t node, uint64_t round, uint64_t purpose, char *errbuf)
{
    if (node >= DPDO__RNG_NODE_LIMIT)
        return dpdo__err(errbuf, DPDO_E_INVAL, "node %llu is out of range (must be < 2^32)",
                         (unsigned long long)node);
    if (round >= DPDO__RNG_ROUND_LIMIT)
        return dpdo__err(errbuf, DPDO_E_INVAL, "round %llu is out of range (must be < 2^48)",
                         (unsigned long long)round);
    if (purpose >= DPDO__RNG_PURPOSE_LIMIT)
        return dpdo__err(errbuf, DPDO_E_INVAL, "purpose %llu is out of range (must be < 2^16)",
                         (unsigned long long)purpose);
    return DPDO_OK;
}

void dpdo__stream_open(dpdo__stream *s, const struct dpdo_rng *rng, uint64_t node, uint64_t round,
                       uint32_t purpose)
{
    s->rng = rng;
    s->nbuf = 0;
    s->status = 0;
    s->cb_code = 0;
    s->cid = 0;
    s->ckey = NULL;
    s->exact_cmp = s->exact_slow = s->exact_cand = s->exact_acc = 0;
    s->exact_widen = s->exact_bias = s->exact_scalar = 0;
    s->key[2] = s->key[3] = 0;
    uint64_t key = rng->seed;
    if (rng->keys && node < (uint64_t)rng->nkeys && rng->has_key[node] &&
        dpdo__purpose_private(purpose))
        s->ckey = rng->keys + 32 * (size_t)node;
    s->fast = rng->builtin && !s->ckey;
    s->key[0] = (uint32_t)key;
    s->key[1] = (uint32_t)(key >> 32);
    s->ctr[0] = 0;
    s->ctr[1] = (uint32_t)round;
    s->ctr[2] = (uint32_t)node;
    s->ctr[3] = (purpose & 0xFFFFu) | (uint32_t)((round >> 32) & 0xFFFFu) << 16;
}

void dpdo__stream_seek(dpdo__stream *s, uint64_t block)
{
    s->ctr[0] = (uint32_t)block;
    s->nbuf = 0;
}

/* Keyed streams: block j (16 bytes) of stream (node, round, purpose) is AES-256 under the node's
 * key of the 128-bit counter block (ctr[1], ctr[2], ctr[3] as little-endian words, then j as a
 * big-endian 32-bit word): AES-256-CTR (OpenSSL EVP, AES-NI when the CPU has it, OpenSSL's
 * constant-time software AES otherwise) started at that counter block; words are read
 * little-endian. A run of blocks never carries into the id words: calls are split at j = 2^32. */
static void aes_iv(const dpdo__stream *s, uint32_t j, unsigned char iv[16])
{
    for (int k = 0; k < 3; k++)
        for (int b = 0; b < 4; b++)
            iv[4 * k + b] = (unsigned char)(s->ctr[k + 1] >> (8 * b));
    for (int b = 0; b < 4; b++)
        iv[12 + b] = (unsigned char)(j >> (24 - 8 * b));
}

void *dpdo__stream_cipher_new(const dpdo__stream *s)
{
    if (!s->ckey) return NULL;
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    if (c && EVP_EncryptInit_ex(c, EVP_aes_256_ctr(), NULL, s->ckey, NULL) != 1) {
        EVP_CIPHER_CTX_free(c);
        c = NULL;
    }
    return c;
}

void dpdo__stream_cipher_free(void *cipher)
{
    EVP_CIPHER_CTX_free((EVP_CIPHER_CTX *)cipher);
}

/* nblocks keystream blocks from block j into out with cipher (a context of
 * dpdo__stream_cipher_new, or NULL: a temporary one). 0, or -1 if OpenSSL failed (out zeroed). */
static int aes_blocks(const dpdo__stream *s, void *cipher, uint32_t j, uint32_t *out,
                      size_t nblocks)
{
    EVP_CIPHER_CTX *c = cipher ? (EVP_CIPHER_CTX *)cipher : dpdo__stream_cipher_new(s);
    int ok = c != NULL;
    unsigned char *o = (unsigned char *)out;
    const size_t total = nblocks;
    memset(o, 0, 16 * total);
    while (ok && nblocks > 0) {
        size_t m = (size_t)((UINT64_C(1) << 32) - j); /* blocks before the counter word wraps */
        if (m > nblocks) m = nblocks;
        if (m > ((size_t)1 << 26)) m = (size_t)1 << 26; /* EVP lengths are int */
        unsigned char iv[16];
        int len;
        aes_iv(s, j, iv);
        ok = EVP_EncryptInit_ex(c, NULL, NULL, NULL, iv) == 1 &&
             EVP_EncryptUpdate(c, o, &len, o, (int)(16 * m)) == 1 && len == (int)(16 * m);
        o += 16 * m;
        j += (uint32_t)m;
        nblocks -= m;
    }
    if (c && c != cipher) EVP_CIPHER_CTX_free(c);
    if (!ok) {
        memset(out, 0, 16 * total);
        return -1;
    }
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    for (size_t w = 0; w < 4 * total; w++)
        out[w] = __builtin_bswap32(out[w]);
#endif
    return 0;
}

enum { CBLK_BLOCKS = sizeof(((dpdo__stream *)0)->cblk) / 16 };

/* Runs of at least CBLK_BLOCKS blocks are generated straight into out; shorter ones (word draws)
 * come from the cached group of CBLK_BLOCKS blocks that holds them, so that a context is set up
 * once per group. */
static void keyed_blocks(dpdo__stream *s, void *cipher, uint32_t *out, size_t nblocks)
{
    uint32_t j = s->ctr[0];
    int rc = 0;
    if (nblocks >= CBLK_BLOCKS) {
        rc = aes_blocks(s, cipher, j, out, nblocks);
    } else {
        for (; nblocks > 0 && !rc; nblocks--, j++, out += 4) {
            uint32_t g = j / CBLK_BLOCKS, off = j % CBLK_BLOCKS;
            if (s->cid != g + 1) {
                s->cid = 0;
                if ((rc = aes_blocks(s, cipher, g * CBLK_BLOCKS, s->cblk, CBLK_BLOCKS))) break;
                s->cid = g + 1;
            }
            memcpy(out, s->cblk + 4 * off, 16);
        }
        if (rc) memset(out, 0, 16 * nblocks);
    }
    if (rc && s->status == DPDO_OK) s->status = DPDO_E_NOMEM; /* OpenSSL could not run */
}

/* Write nblocks blocks starting at s->ctr[0] into out and advance. */
static void gen_blocks(dpdo__stream *s, void *cipher, uint32_t *out, size_t nblocks)
{
    if (s->ckey) {
        keyed_blocks(s, cipher, out, nblocks);
    } else if (s->rng->builtin) {
        uint32_t c[4] = {s->ctr[0], s->ctr[1], s->ctr[2], s->ctr[3]};
        size_t j = nblocks >= 32
                       ? dpdo__simd_blocks(dpdo__simd_best(), s->key, s->ctr, nblocks, out)
                       : 0; /* the same words, vectorised (AVX-512) */
        c[0] += (uint32_t)j;
        for (; j < nblocks; j++) {
            dpdo__philox4x32_10(s->key, c, out + 4 * j);
            c[0]++;
        }
    } else if (s->status != DPDO_OK) {
        memset(out, 0, 16 * nblocks); /* sticky failure: deterministic zeros */
    } else {
        int rc = s->rng->type->blocks(s->rng->user, s->key, s->ctr, nblocks, out);
        if (rc != 0) {
            s->status = DPDO_E_CALLBACK;
            s->cb_code = rc;
            memset(out, 0, 16 * nblocks);
        }
    }
    s->ctr[0] += (uint32_t)nblocks;
}

void dpdo__stream_blocks(dpdo__stream *s, uint32_t *out, size_t nblocks)
{
    if (s->nbuf == -1 || s->nbuf > 0) s->nbuf = 0; /* whole blocks only */
    gen_blocks(s, NULL, out, nblocks);
}

void dpdo__stream_blocks_c(dpdo__stream *s, void *cipher, uint32_t *out, size_t nblocks)
{
    if (s->nbuf == -1 || s->nbuf > 0) s->nbuf = 0;
    gen_blocks(s, cipher, out, nblocks);
}

static inline void refill(dpdo__stream *s)
{
    gen_blocks(s, NULL, s->buf, 1);
    s->nbuf = 4;
}

uint32_t dpdo__stream_u32(dpdo__stream *s)
{
    if (s->nbuf <= 0) refill(s);
    return s->buf[4 - s->nbuf--];
}

uint64_t dpdo__stream_u64(dpdo__stream *s)
{
    uint32_t lo = dpdo__stream_u32(s);
    uint32_t hi = dpdo__stream_u32(s);
    return dpdo__w64(lo, hi);
}

double dpdo__stream_uniform(dpdo__stream *s)
{
    return dpdo__u01(dpdo__stream_u64(s));
}

/* hi:lo = a * b, 128-bit product */
static inline uint64_t mul_hilo(uint64_t a, uint64_t b, uint64_t *lo)
{
#ifdef __SIZEOF_INT128__
    unsigned __int128 m = (unsigned __int128)a * b;
    *lo = (uint64_t)m;
    return (uint64_t)(m >> 64);
#else
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    *lo = (mid << 32) | (uint32_t)p00;
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
#endif
}

uint64_t dpdo__stream_below(dpdo__stream *s, uint64_t n)
{
    /* Lemire, "Fast random integer generation in an interval" (2019):
     * accept the high word of x*n unless the low word falls in the biased
     * zone [0, 2^64 mod n). */
    if (n <= 1) return 0;
    uint64_t l, h = mul_hilo(dpdo__stream_u64(s), n, &l);
    if (l < n) {
        uint64_t t = (0 - n) % n;
        /* Each retry happens with probability < n / 2^64 <= 1/2 for a sound
         * generator; the cap only stops a broken custom type (constant
         * words, or zeros after a callback failure) from looping forever. */
        for (int tries = 0; l < t && tries < 128; tries++)
            h = mul_hilo(dpdo__stream_u64(s), n, &l);
    }
    return h;
}

/* ---- normals ---------------------------------------------------------------- */
static inline int take_spare(dpdo__stream *s, double *z)
{
    if (s->nbuf != -1) return 0;
    *z = dpdo__f64(dpdo__w64(s->buf[0], s->buf[1]));
    s->nbuf = 0;
    return 1;
}

static inline void put_spare(dpdo__stream *s, double z)
{
    uint64_t b = dpdo__bits(z);
    s->buf[0] = (uint32_t)b;
    s->buf[1] = (uint32_t)(b >> 32);
    s->nbuf = -1;
}

double dpdo__stream_normal(dpdo__stream *s)
{
    double z0, z1;
    if (take_spare(s, &z0)) return z0;
    uint32_t w[4];
    gen_blocks(s, NULL, w, 1); /* a partly used block is skipped */
    s->nbuf = 0;
    dpdo__bm_block(w, &z0, &z1);
    put_spare(s, z1);
    return z0;
}

int dpdo__rng_kernel_best(void)
{
    return dpdo__simd_best();
}

const char *dpdo__rng_kernel_name(int kernel)
{
    switch (kernel) {
    case DPDO__RNG_KERNEL_SCALAR:
        return "scalar";
    case DPDO__RNG_KERNEL_AVX2:
        return "avx2";
    case DPDO__RNG_KERNEL_AVX512:
        return "avx512";
    default:
        return "auto";
    }
}

static int pick_kernel(int kernel)
{
    int best = dpdo__simd_best();
    if (kernel == DPDO__RNG_KERNEL_AUTO || kernel > best) return best;
    return kernel < DPDO__RNG_KERNEL_SCALAR ? DPDO__RNG_KERNEL_SCALAR : kernel;
}

enum { CHUNK_BLOCKS = 64 };

/* Whole pairs: nblocks blocks from s->ctr[0] -> out[2*nblocks] (add: +=). */
static void normal_blocks(dpdo__stream *s, double *out, size_t nblocks, int add, double scale,
                          int kernel)
{
    if (s->fast && kernel != DPDO__RNG_KERNEL_SCALAR) {
        size_t done = dpdo__simd_normals(kernel, s->key, s->ctr, nblocks, out, add, scale);
        s->ctr[0] += (uint32_t)done;
        out += 2 * done;
        nblocks -= done;
        /* a tail shorter than the kernel's unit (AVX-512: 32 blocks, AVX2: 16; DP-WOR-SGD's 50
         * normals are 25 blocks): one whole unit into a buffer and its first nblocks used. The
         * blocks are independent and the kernels give the scalar bits (out = fma(scale, z, out)
         * as there), so this is the scalar tail's result at about a fifth of its cost
         * (docs/performance.md). */
        enum { TAIL = 32 };
        if (nblocks > 0 && nblocks < TAIL) {
            double z[2 * TAIL];
            if (dpdo__simd_normals(kernel, s->key, s->ctr, TAIL, z, 0, 0.0) == TAIL) {
                for (size_t i = 0; i < 2 * nblocks; i++)
                    out[i] = add ? fma(scale, z[i], out[i]) : z[i];
                s->ctr[0] += (uint32_t)nblocks;
                return;
            }
        }
    }
    uint32_t w[4 * CHUNK_BLOCKS];
    while (nblocks > 0) {
        size_t m = nblocks < CHUNK_BLOCKS ? nblocks : CHUNK_BLOCKS;
        gen_blocks(s, NULL, w, m);
        if (dpdo__simd_bm_blocks(w, m, out, add, scale)) {
            out += 2 * m;
            nblocks -= m;
            continue;
        }
        for (size_t j = 0; j < m; j++) {
            double z0, z1;
            dpdo__bm_block(w + 4 * j, &z0, &z1);
            if (add) {
                out[2 * j] = fma(scale, z0, out[2 * j]);
                out[2 * j + 1] = fma(scale, z1, out[2 * j + 1]);
            } else {
                out[2 * j] = z0;
                out[2 * j + 1] = z1;
            }
        }
        out += 2 * m;
        nblocks -= m;
    }
}

static int normals_impl(dpdo__stream *s, double *out, size_t n, int add, double scale, int kernel)
{
    kernel = pick_kernel(kernel);
    if (n == 0) return kernel;
    double z;
    if (take_spare(s, &z)) {
        out[0] = add ? fma(scale, z, out[0]) : z;
        out++;
        n--;
    }
    s->nbuf = 0; /* skip a partly used block */
    normal_blocks(s, out, n / 2, add, scale, kernel);
    if (n & 1) {
        z = dpdo__stream_normal(s);
        out[n - 1] = add ? fma(scale, z, out[n - 1]) : z;
    }
    return kernel;
}

int dpdo__stream_normals_k(dpdo__stream *s, double *out, size_t n, int kernel)
{
    return normals_impl(s, out, n, 0, 0.0, kernel);
}

int dpdo__stream_add_normals_k(dpdo__stream *s, double scale, double *out, size_t n, int kernel)
{
    return normals_impl(s, out, n, 1, scale, kernel);
}

void dpdo__stream_normals(dpdo__stream *s, double *out, size_t n)
{
    normals_impl(s, out, n, 0, 0.0, DPDO__RNG_KERNEL_AUTO);
}

void dpdo__stream_add_normals(dpdo__stream *s, double scale, double *out, size_t n)
{
    normals_impl(s, out, n, 1, scale, DPDO__RNG_KERNEL_AUTO);
}

/* ---- uniforms in bulk ---------------------------------------------------------- */
int dpdo__stream_uniforms_k(dpdo__stream *s, double *out, size_t n, int kernel)
{
    kernel = pick_kernel(kernel);
    size_t i = 0;
    if (s->nbuf == -1) s->nbuf = 0; /* a spare normal is dropped by word draws */
    /* finish the current block so the bulk part starts on a block boundary */
    while (i < n && s->nbuf == 2)
        out[i++] = dpdo__stream_uniform(s);
    if (s->nbuf == 4) {
        while (i < n && s->nbuf > 0)
            out[i++] = dpdo__stream_uniform(s);
    }
    if (s->nbuf & 1) {
        /* odd word alignment (a u32 was drawn): pairs straddle blocks, so
         * the block kernel cannot be used; rare, take the slow path */
        for (; i < n; i++)
            out[i] = dpdo__stream_uniform(s);
        return kernel;
    }
    if (i == n) return kernel;
    size_t nblocks = (n - i) / 2;
    if (s->fast && kernel != DPDO__RNG_KERNEL_SCALAR) {
        size_t done = dpdo__simd_uniforms(kernel, s->key, s->ctr, nblocks, out + i);
        s->ctr[0] += (uint32_t)done;
        i += 2 * done;
        nblocks -= done;
    }
    uint32_t w[4 * CHUNK_BLOCKS];
    while (nblocks > 0) {
        size_t m = nblocks < CHUNK_BLOCKS ? nblocks : CHUNK_BLOCKS;
        gen_blocks(s, NULL, w, m);
        for (size_t j = 0; j < 2 * m; j++)
            out[i + j] = dpdo__u01(dpdo__w64(w[2 * j], w[2 * j + 1]));
        i += 2 * m;
        nblocks -= m;
    }
    if (i < n) out[i] = dpdo__stream_uniform(s);
    return kernel;
}

void dpdo__stream_uniforms(dpdo__stream *s, double *out, size_t n)
{
    dpdo__stream_uniforms_k(s, out, n, DPDO__RNG_KERNEL_AUTO);
}

/* ---- other distributions ---------------------------------------------------- */
double dpdo__stream_laplace(dpdo__stream *s, double b)
{
    /* The top 52 bits give u (never 0 or 1, so -log u is finite and > 0),
     * the lowest bit the sign: inverse CDF of |X| = Exp(1/b), symmetric in
     * both tails; the largest magnitude is b * 36.74 (u = 2^-53). */
    uint64_t x = dpdo__stream_u64(s);
    double e = -dpdo__log(dpdo__u01(x));
    double v = b * e;
    return (x & 1) ? -v : v;
}

int dpdo__stream_bernoulli(dpdo__stream *s, double p)
{
    double u = dpdo__stream_uniform(s);
    return u < p;
}

/* log(1 + x) for x in (-1, 0]: the Goldberg trick on the rounded 1 + x, so
 * that tiny p keeps its relative accuracy (plain log(1 - p) would be 0 for
 * p < 2^-54). */
static double log1p_neg(double x)
{
    double w = 1.0 + x;
    if (w == 1.0) return x;
    return dpdo__log(w) * x / (w - 1.0);
}

uint64_t dpdo__stream_geometric(dpdo__stream *s, double p)
{
    double u = dpdo__stream_uniform(s);
    if (p >= 1.0) return 0;
    if (!(p > 0.0)) return UINT64_C(0x7FFFFFFFFFFFFFFF);
    /* P(X >= k) = (1-p)^k = P(log u / log(1-p) >= k) */
    double g = floor(dpdo__log(u) / log1p_neg(-p));
    if (!(g < 0x1p63)) return UINT64_C(0x7FFFFFFFFFFFFFFF);
    return (uint64_t)g;
}

void dpdo__stream_subset(dpdo__stream *s, int64_t n, int64_t b, int64_t *out)
{
    if (b <= 0 || n <= 0) return;
    if (b > n) b = n;
    if ((double)b <= 64.0 * ((double)n / (double)b)) { /* b^2 <= 64 n */
        /* Floyd (Bentley & Floyd, CACM 1987): for j = n-b..n-1 draw t in
         * [0, j]; insert t, or j if t is already present. out stays sorted;
         * a present t is found by binary search. Every b-subset has
         * probability 1/C(n,b). */
        int64_t cnt = 0;
        for (int64_t j = n - b; j < n; j++) {
            int64_t t = (int64_t)dpdo__stream_below(s, (uint64_t)j + 1);
            int64_t lo = 0, hi = cnt;
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (out[mid] < t)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < cnt && out[lo] == t) {
                out[cnt++] = j; /* j exceeds every element so far */
            } else {
                memmove(out + lo + 1, out + lo, (size_t)(cnt - lo) * sizeof *out);
                out[lo] = t;
                cnt++;
            }
        }
    } else {
        /* Selection sampling (Knuth TAOCP 2, 3.4.2 Algorithm S): keep i with
         * probability (needed)/(remaining), tested exactly on integers. */
        int64_t need = b, cnt = 0;
        for (int64_t i = 0; i < n && need > 0; i++) {
            if (n - i == need || (int64_t)dpdo__stream_below(s, (uint64_t)(n - i)) < need) {
                out[cnt++] = i;
                need--;
            }
        }
    }
}

/* dpdo__stream_below's draw on words taken from w[*pos..], refilled by whole chunks of CB blocks
 * (the built-in and keyed streams: a block's words do not depend on how many are generated at
 * once); *chunked: w holds a generated chunk (not the stream's leftover words) */
enum { PERM_CB = 64 };
static inline uint32_t chunk_u32(dpdo__stream *s, uint32_t *w, size_t *pos, size_t *len,
                                 int *chunked)
{
    if (*pos == *len) {
        gen_blocks(s, NULL, w, PERM_CB);
        *pos = 0, *len = 4 * PERM_CB, *chunked = 1;
    }
    return w[(*pos)++];
}

static uint64_t chunk_below(dpdo__stream *s, uint64_t n, uint32_t *w, size_t *pos, size_t *len,
                            int *chunked)
{
#define CHUNK_U64()                                                                                \
    (lo = chunk_u32(s, w, pos, len, chunked), dpdo__w64(lo, chunk_u32(s, w, pos, len, chunked)))
    uint32_t lo;
    uint64_t l, h = mul_hilo(CHUNK_U64(), n, &l);
    if (l < n) {
        uint64_t t = (0 - n) % n;
        for (int tries = 0; l < t && tries < 128; tries++)
            h = mul_hilo(CHUNK_U64(), n, &l);
    }
    return h;
#undef CHUNK_U64
}

void dpdo__stream_permutation(dpdo__stream *s, int64_t n, int64_t *out)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = i;
    if ((s->fast || s->ckey) && n >= 64) {
        /* the same words in the same order as dpdo__stream_below takes them, generated a chunk
         * at a time (AVX-512 Philox for the built-in generator: DP-WOR-SGD draws a
         * permutation of every shard every pass); afterwards the stream stands where the
         * word-by-word loop leaves it */
        uint32_t w[4 * PERM_CB];
        size_t pos = 0, len = 0;
        int chunked = 0;
        if (s->nbuf > 0) { /* the current block's unused words come first */
            len = (size_t)s->nbuf;
            memcpy(w, s->buf + 4 - s->nbuf, len * sizeof *w);
        }
        for (int64_t i = n - 1; i > 0; i--) {
            int64_t j = (int64_t)chunk_below(s, (uint64_t)i + 1, w, &pos, &len, &chunked);
            int64_t t = out[i];
            out[i] = out[j];
            out[j] = t;
        }
        if (!chunked) { /* only leftover words were used */
            s->nbuf = (int)(len - pos);
            return;
        }
        size_t used = (pos + 3) / 4; /* blocks of the chunk begun */
        s->ctr[0] -= (uint32_t)(PERM_CB - used);
        s->nbuf = (int)(4 * used - pos);
        if (s->nbuf > 0) memcpy(s->buf, w + 4 * (used - 1), sizeof s->buf);
        return;
    }
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)dpdo__stream_below(s, (uint64_t)i + 1);
        int64_t t = out[i];
        out[i] = out[j];
        out[j] = t;
    }
}

/* ---- public stateless draws --------------------------------------------------- */
static int check_stream_args(dpdo_rng *rng, uint64_t node, uint64_t round, uint32_t purpose,
                             uint64_t offset, const void *out, int64_t n, const char *what)
{
    if (n < 0)
        return dpdo__err(rng->errmsg, DPDO_E_INVAL, "%s: n = %lld is negative", what, (long long)n);
    if (!out && n > 0) return dpdo__err(rng->errmsg, DPDO_E_INVAL, "%s: out is NULL", what);
    int rc = dpdo__stream_ids_check(node, round, purpose, rng->errmsg);
    if (rc != DPDO_OK) return rc;
    /* one value per u64 / per normal: 2^33 values per stream */
    const uint64_t limit = 2 * DPDO__RNG_STREAM_BLOCKS;
    if (offset > limit || (uint64_t)n > limit - offset)
        return dpdo__err(rng->errmsg, DPDO_E_INVAL,
                         "%s: offset %llu + n %lld exceeds the stream length 2^33", what,
                         (unsigned long long)offset, (long long)n);
    return DPDO_OK;
}

static int stream_done(dpdo_rng *rng, const dpdo__stream *s)
{
    if (s->status != DPDO_OK)
        return dpdo__err(rng->errmsg, s->status, "rng type '%s': blocks callback returned %d",
                         rng->type->name, s->cb_code);
    return DPDO_OK;
}

/* Open the stream positioned at u64 number `offset`. */
static void open_at_u64(dpdo__stream *s, dpdo_rng *rng, uint64_t node, uint64_t round,
                        uint32_t purpose, uint64_t offset)
{
    dpdo__stream_open(s, rng, node, round, purpose);
    dpdo__stream_seek(s, offset / 2);
    if (offset & 1) (void)dpdo__stream_u64(s);
}

#define NEED_RNG(rng)                                                                              \
    do {                                                                                           \
        if (!(rng)) return DPDO_E_INVAL;                                                           \
    } while (0)

DPDO_API int dpdo_rng_uniform(const dpdo_rng *crng, uint64_t node, uint64_t round, uint32_t purpose,
                              uint64_t offset, double *out, int64_t n)
{
    dpdo_rng *rng = (dpdo_rng *)crng; /* writes only the message buffer, not the logical state */
    NEED_RNG(rng);
    int rc = check_stream_args(rng, node, round, purpose, offset, out, n, "uniform");
    if (rc != DPDO_OK || n == 0) return rc;
    dpdo__stream s;
    open_at_u64(&s, rng, node, round, purpose, offset);
    dpdo__stream_uniforms(&s, out, (size_t)n);
    return stream_done(rng, &s);
}

DPDO_API int dpdo_rng_normal(const dpdo_rng *crng, uint64_t node, uint64_t round, uint32_t purpose,
                             uint64_t offset, double *out, int64_t n)
{
    dpdo_rng *rng = (dpdo_rng *)crng; /* writes only the message buffer, not the logical state */
    NEED_RNG(rng);
    int rc = check_stream_args(rng, node, round, purpose, offset, out, n, "normal");
    if (rc != DPDO_OK || n == 0) return rc;
    dpdo__stream s;
    dpdo__stream_open(&s, rng, node, round, purpose);
    dpdo__stream_seek(&s, offset / 2);
    if (offset & 1) (void)dpdo__stream_normal(&s); /* keeps the odd member as spare */
    dpdo__stream_normals(&s, out, (size_t)n);
    return stream_done(rng, &s);
}

DPDO_API int dpdo_rng_laplace(const dpdo_rng *crng, uint64_t node, uint64_t round, uint32_t purpose,
                              uint64_t offset, double scale, double *out, int64_t n)
{
    dpdo_rng *rng = (dpdo_rng *)crng; /* writes only the message buffer, not the logical state */
    NEED_RNG(rng);
    int rc = check_stream_args(rng, node, round, purpose, offset, out, n, "laplace");
    if (rc != DPDO_OK) return rc;
    if (!(scale > 0.0) || !isfinite(scale))
        return dpdo__err(rng->errmsg, DPDO_E_INVAL,
                         "laplace: scale = %g must be positive and finite", scale);
    if (scale > DBL_MAX / 64) /* |X| <= 36.8 scale must stay finite */
        return dpdo__err(rng->errmsg, DPDO_E_INVAL, "laplace: scale = %g is too large", scale);
    dpdo__stream s;
    open_at_u64(&s, rng, node, round, purpose, offset);
    for (int64_t i = 0; i < n; i++)
        out[i] = dpdo__stream_laplace(&s, scale);
    return stream_done(rng, &s);
}

DPDO_API int dpdo_rng_bernoulli(const dpdo_rng *crng, uint64_t node, uint64_t round,
                                uint32_t purpose, uint64_t offset, double p, int32_t *out,
                                int64_t n)
{
    dpdo_rng *rng = (dpdo_rng *)crng; /* writes only the message buffer, not the logical state */
    NEED_RNG(rng);
    int rc = check_stream_args(rng, node, round, purpose, offset, out, n, "bernoulli");
    if (rc != DPDO_OK) return rc;
    if (!(p >= 0.0 && p <= 1.0))
        return dpdo__err(rng->errmsg, DPDO_E_INVAL, "bernoulli: p = %g is not in [0, 1]", p);
    dpdo__stream s;
    open_at_u64(&s, rng, node, round, purpose, offset);
    for (int64_t i = 0; i < n; i++)
        out[i] = dpdo__stream_bernoulli(&s, p);
    return stream_done(rng, &s);
}

DPDO_API int dpdo_rng_geometric(const dpdo_rng *crng, uint64_t node, uint64_t round,
                                uint32_t purpose, uint64_t offset, double p, int64_t *out,
                                int64_t n)
{
    dpdo_rng *rng = (dpdo_rng *)crng; /* writes only the message buffer, not the logical state */
    NEED_RNG(rng);
    int rc = check_stream_args(rng, node, round, purpose, offset, out, n, "geometric");
    if (rc != DPDO_OK) return rc;
    if (!(p > 0.0 && p <= 1.0))
        return dpdo__err(rng->errmsg, DPDO_E_INVAL, "geometric: p = %g is not in (0, 1]", p);
    dpdo__stream s;
    open_at_u64(&s, rng, node, round, purpose, offset);
    for (int64_t i = 0; i < n; i++)
        out[i] = (int64_t)dpdo__stream_geometric(&s, p);
    return stream_done(rng, &s);
}

DPDO_API int dpdo_rng_subset(const dpdo_rng *crng, uint64_t node, uint64_t round, uint32_t purpose,
                             int64_t n, int64_t b, int64_t *out)
{
    dpdo_rng *rng = (dpdo_rng *)crng; /* writes only the message buffer, not the logical state */
    NEED_RNG(rng);
    if (n < 0)
        return dpdo__err(rng->errmsg, DPDO_E_INVAL, "subset: n = %lld is negative", (long long)n);
    if (b < 0 || b > n)
        return dpdo__err(rng->errmsg, DPDO_E_INVAL, "subset: b = %lld is not in [0, n = %lld]",
                         (long long)b, (long long)n);
    if (!out && b > 0) return dpdo__err(rng->errmsg, DPDO_E_INVAL, "subset: out is NULL");
    int rc = dpdo__stream_ids_check(node, round, purpose, rng->errmsg);
    if (rc != DPDO_OK) return rc;
    dpdo__stream s;
    dpdo__stream_open(&s, rng, node, round, purpose);
    dpdo__stream_subset(&s, n, b, out);
    return stream_done(rng, &s);
}

DPDO_API int dpdo_rng_permutation(const dpdo_rng *crng, uint64_t node, uint64_t round,
                                  uint32_t purpose, int64_t n, int64_t *out)
{
    dpdo_rng *rng = (dpdo_rng *)crng; /* writes only the message buffer, not the logical state */
    NEED_RNG(rng);
    if (n < 0)
        return dpdo__err(rng->errmsg, DPDO_E_INVAL, "permutation: n = %lld is negative",
                         (long long)n);
    if (!out && n > 0) return dpdo__err(rng->errmsg, DPDO_E_INVAL, "permutation: out is NULL");
    int rc = dpdo__stream_ids_check(node, round, purpose, rng->errmsg);
    if (rc != DPDO_OK) return rc;
    dpdo__stream s;
    dpdo__stream_open(&s, rng, node, round, purpose);
    dpdo__stream_permutation(&s, n, out);
    return stream_done(rng, &s);
}
