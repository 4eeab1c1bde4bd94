/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal RNG interface used by every other layer. A dpdo__stream is a
 * small value on the caller's stack: it holds no heap memory and can be
 * created anywhere (including inside step()) without allocation. */
#ifndef DPDO_RNG_IMPL_H
#define DPDO_RNG_IMPL_H

#include "../core/core_impl.h"
#include "dpdo/rng.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* The exact samplers' tables, one per (distribution, scale), built on first use (rng_discrete.c).
 */
typedef struct dpdo__dtab dpdo__dtab;
#define DPDO__RNG_TABS 8
#define DPDO__RNG_RECENT 4

struct dpdo_rng {
    uint32_t magic;            /* DPDO__MAGIC_* while alive, 0 after destroy (core_impl.h) */
    const dpdo_rng_type *type; /* never NULL */
    void *user;                /* custom types only */
    int builtin;               /* 1 = Philox fast path */
    uint64_t seed;
    /* Per-node 256-bit keys (set by the engine on its own generator; NULL = none): streams of
     * node i < nkeys with has_key[i] and a private purpose (SAMPLE, NOISE, INIT) are the
     * AES-256-CTR keystream under keys[32 i ..] instead of Philox under the seed, so that
     * knowing the seed does not reveal them (docs/rng.md "Keyed streams"). */
    const unsigned char *keys;
    const unsigned char *has_key;
    int64_t nkeys;
    /* the exact samplers' table cache: immutable tables published once with a compare-and-swap
     * (threads drawing from the same generator share them), each one allocation, freed by
     * dpdo_rng_destroy */
    _Atomic(dpdo__dtab *) tabs[DPDO__RNG_TABS];
    /* once those slots are taken: the tables of the last DPDO__RNG_RECENT other scales, replaced
     * in turn (a scale that changes every round, e.g. a decaying Laplace noise, is then built
     * once per round, not once per node and round); each carries a count of the draws using it,
     * and one replaced while in use is freed by its last user (rng_dtab.c). Guarded by
     * recent_lock. */
    pthread_mutex_t recent_lock;
    dpdo__dtab *recent[DPDO__RNG_RECENT];
    int recent_next;
    char errmsg[DPDO__ERRMSG_LEN];
};

/* A position in one stream. The stream is a sequence of 128-bit blocks
 * (4 words each); block j is the generator's image of the counter
 * (j mod 2^32, ctr[1], ctr[2], ctr[3]). Word draws (u32, u64, uniform, below,
 * laplace, bernoulli, geometric, subset, permutation) take words in order
 * w0, w1, w2, w3 of each block; a u64 is w_a | w_b << 32 for the next two
 * words a, b. Normals are made in pairs from whole blocks (see
 * dpdo__stream_normal). See docs/rng.md for the exact value mapping.
 *
 * Fields are private to the files of lib/rng: create with dpdo__stream_open. */
typedef struct dpdo__stream {
    const struct dpdo_rng *rng;
    uint32_t key[4]; /* seed lo, seed hi, 0, 0 */
    uint32_t ctr[4]; /* ctr[0] = next block index; ctr[1..3] = stream id */
    uint32_t buf[4];
    int nbuf;                  /* 0..4: unused words of the current block are
                                * buf[4-nbuf..3]; -1: buf[0..1] hold the spare (second)
                                * normal of the last block, no words are left */
    int status;                /* sticky: first callback failure of a custom type */
    int cb_code;               /* the non-zero code that callback returned */
    int fast;                  /* built-in Philox, not keyed: the SIMD kernels may run */
    const unsigned char *ckey; /* keyed stream: the node's 32-byte AES-256 key, else NULL */
    uint32_t cid;              /* index + 1 of the group of 16 blocks cached in cblk (0 = none) */
    uint32_t cblk[64];
    /* exact samplers (rng_discrete.c): lazy comparisons made, and how many of them the double
     * band left undecided so that MPFR decided them (bench_secure reports the rate) */
    uint64_t exact_cmp, exact_slow;
    /* the table sampler: candidates drawn and accepted (their ratio is known exactly: the
     * acceptance-rate check of tests and bench) */
    uint64_t exact_cand, exact_acc;
    int exact_widen; /* test build only (DPDO_FAULT_INJECTION): widen the band by 2^exact_widen */
    int exact_bias; /* test build only: the planted defect, acceptance x (1 + k 1e-4) for |z| < S */
    int exact_scalar; /* test build only: the portable candidate kernel even where AVX-512 runs */
} dpdo__stream;

/* 1 if purpose is private (its streams are keyed by a node's key when it has one). */
static inline int dpdo__purpose_private(uint32_t purpose)
{
    return purpose == 2 /* SAMPLE */ || purpose == 3 /* NOISE */ || purpose == 7 /* INIT */;
}
/* 1 if the stream is keyed (AES-256-CTR under a node key). */
static inline int dpdo__stream_keyed(const dpdo__stream *s)
{
    return s->ckey != NULL;
}

/* Stream identifiers must satisfy node < 2^32, round < 2^48,
 * purpose < 2^16 for the counter layout to be injective:
 *   ctr[1] = round mod 2^32, ctr[2] = node,
 *   ctr[3] = purpose | (round >> 32) << 16.
 * dpdo__stream_open does not check (it truncates); callers that take ids
 * from users check them with dpdo__stream_ids_check, which returns DPDO_OK
 * or DPDO_E_INVAL with a message naming the argument written to errbuf
 * (DPDO__ERRMSG_LEN bytes, may be NULL). */
#define DPDO__RNG_NODE_LIMIT (UINT64_C(1) << 32)
#define DPDO__RNG_ROUND_LIMIT (UINT64_C(1) << 48)
#define DPDO__RNG_PURPOSE_LIMIT (UINT32_C(1) << 16)
/* A stream has 2^32 blocks = 2^33 uniforms/normals; past that the block index
 * wraps to 0 (no carry into the stream id). */
#define DPDO__RNG_STREAM_BLOCKS (UINT64_C(1) << 32)
int dpdo__stream_ids_check(uint64_t node, uint64_t round, uint64_t purpose, char *errbuf);

/* Open stream (node, round, purpose) of rng at block 0. Never fails. */
void dpdo__stream_open(dpdo__stream *s, const struct dpdo_rng *rng, uint64_t node, uint64_t round,
                       uint32_t purpose);
/* Jump to the start of block `block` (clears the buffer). */
void dpdo__stream_seek(dpdo__stream *s, uint64_t block);

/* The next nblocks whole blocks (4 words each) into out; a partly used block is skipped. */
void dpdo__stream_blocks(dpdo__stream *s, uint32_t *out, size_t nblocks);
/* Keyed streams: a cipher context holding the node key's AES schedule, for bulk readers that
 * refill many times (dpdo__stream_blocks_c: the same blocks, the key not set up again). NULL if
 * the stream is not keyed or OpenSSL failed (then pass NULL: each call sets the key up). The
 * caller frees it with dpdo__stream_cipher_free (NULL is fine); one thread at a time. */
void *dpdo__stream_cipher_new(const dpdo__stream *s);
void dpdo__stream_cipher_free(void *cipher);
void dpdo__stream_blocks_c(dpdo__stream *s, void *cipher, uint32_t *out, size_t nblocks);

/* ---- exact discrete samplers on a power-of-two grid (rng_discrete.c, docs/privacy.md) -------
 * x[i] <- gamma * (rint(x[i] / gamma) + Z_i), Z_i i.i.d. exact discrete Gaussian N_Z(0, S^2)
 * (rejection from a table-driven envelope, docs/privacy.md "The table sampler"; every coin an
 * exact lazy comparison of a uniform with its probability: double band, MPFR fallback) or exact
 * discrete Laplace P(z) ~ exp(-|z| / T). gamma must be a power of two in [2^-1000, 2^900];
 * 2^10 <= S <= 2^31, 1 <= T <= 2^40. The released value is exactly gamma * (k + Z) (no rounding).
 * Returns DPDO_OK, DPDO_E_INVAL (bad gamma/S/T, written to err), DPDO_E_NUMERIC (x[i] not finite,
 * or |k + Z| >= 2^52: named in err). On failure x is partly updated: the caller must not release
 * it. Draws whole blocks from s. */
int dpdo__grid_add_dgauss(dpdo__stream *s, uint64_t S, double gamma, double *x, size_t n,
                          char *err);
int dpdo__grid_add_dlaplace(dpdo__stream *s, uint64_t T, double gamma, double *x, size_t n,
                            char *err);
/* n raw draws (no grid): out[i] = Z_i (tests and bench). DPDO_OK, DPDO_E_INVAL (S or T out of
 * range), DPDO_E_NUMERIC (an event of probability below exp(-2^22): no value for out[i]). */
int dpdo__stream_dgauss(dpdo__stream *s, uint64_t S, int64_t *out, size_t n);
int dpdo__stream_dlaplace(dpdo__stream *s, uint64_t T, int64_t *out, size_t n);
#ifdef DPDO_FAULT_INJECTION
/* The previous all-integer CKS 2020 samplers (Algorithm 1 coins), kept for a cross-check. */
int dpdo__stream_dgauss_cks(dpdo__stream *s, uint64_t S, int64_t *out, size_t n);
int dpdo__stream_dlaplace_cks(dpdo__stream *s, uint64_t T, int64_t *out, size_t n);
/* The previous lazy-comparison CKS samplers (Algorithm 3 over a discrete Laplace by inversion),
 * which the table sampler replaced: the cross-check. */
int dpdo__stream_dgauss_lazy(dpdo__stream *s, uint64_t S, int64_t *out, size_t n);
int dpdo__stream_dlaplace_lazy(dpdo__stream *s, uint64_t T, int64_t *out, size_t n);
/* The table sampler's scale L and block width B for (lap, P): its acceptance probability is
 * L Z / (2^33 B) exactly, Z = sum over the integers of the unnormalised PMF. 0, or -1. */
int dpdo__dtab_info(const dpdo__stream *s, int lap, uint64_t P, uint64_t *L, uint64_t *B);
#endif
/* The grid for noise sigma on a release of n coordinates with L2 sensitivity sens (both in the
 * release's units) and slack eta: gamma = 2^floor(log2 min(eta sens / sqrt n, sigma / max(2^10,
 * 2^12 sqrt n))) (Gaussian: S^2 >= 2^24 n, the fine lattice Gaussian
 * DPDO_MECH_DISCRETE_GAUSSIAN_FINE) and S = ceil(sigma (1 + eta) / gamma), so that the rounded
 * release has sensitivity
 * <= sens + gamma sqrt n <= (1 + eta) sens and noise gamma S >= (1 + eta) sigma. l1: the L1
 * version for Laplace (sens L1, sigma = the Laplace scale, gamma n instead of gamma sqrt n;
 * T returned in *S). DPDO_OK or DPDO_E_UNSUPPORTED (S would exceed 2^31 / 2^40: err says why). */
int dpdo__grid_choose(double sigma, double sens, size_t n, double eta, int l1, double *gamma,
                      uint64_t *S, char *err);

/* Word draws. */
uint32_t dpdo__stream_u32(dpdo__stream *s);
uint64_t dpdo__stream_u64(dpdo__stream *s);
double dpdo__stream_uniform(dpdo__stream *s); /* (0,1), 53-bit grid; one u64 */
/* n uniforms, identical to n calls of dpdo__stream_uniform (SIMD bulk path). */
void dpdo__stream_uniforms(dpdo__stream *s, double *out, size_t n);
uint64_t dpdo__stream_below(dpdo__stream *s, uint64_t n); /* [0,n), unbiased; n>0 */

/* Normals. Block j gives the pair (rho cos 2 pi u2, rho sin 2 pi u2). A
 * partly used block is skipped first. dpdo__stream_normal returns the first
 * member of a new pair and keeps the second as a spare, which the next
 * normal/normals/add_normals call returns first; a word draw drops the spare.
 * So any sequence of normal calls yields the same numbers as one
 * dpdo__stream_normals call of the total length. */
double dpdo__stream_normal(dpdo__stream *s);
void dpdo__stream_normals(dpdo__stream *s, double *out, size_t n); /* fast block path */
/* out[i] = fma(scale, z_i, out[i]) (one rounding) for i < n, with z_i the normals that
 * dpdo__stream_normals would give: the noise kernel, no temporary buffer. */
void dpdo__stream_add_normals(dpdo__stream *s, double scale, double *out, size_t n);

/* Laplace(0, b) = sign * b * (-log u), u and the sign bit from one u64. */
double dpdo__stream_laplace(dpdo__stream *s, double b);
/* 1 with probability p (u < p for one uniform); p <= 0 gives 0, p >= 1 gives 1. */
int dpdo__stream_bernoulli(dpdo__stream *s, double p);
/* Failures before the first success, p in (0,1]: floor(log u / log(1-p))
 * from one uniform, exactly 0 for p = 1 (one word pair is still consumed);
 * saturates at 2^63-1. */
uint64_t dpdo__stream_geometric(dpdo__stream *s, double p);
/* Sorted uniform b-subset of {0..n-1} (0 <= b <= n): Floyd's algorithm with
 * sorted insertion into out when b^2 <= 64 n, else selection sampling
 * (Knuth's algorithm S with exact integer tests). Needs no heap memory and
 * no scratch beyond out[b]. */
void dpdo__stream_subset(dpdo__stream *s, int64_t n, int64_t b, int64_t *out);
/* Fisher-Yates shuffle of 0..n-1 into out[n]. */
void dpdo__stream_permutation(dpdo__stream *s, int64_t n, int64_t *out);

/* ---- kernels (tests and bench) -------------------------------------------
 * The bulk normal/uniform paths run a SIMD kernel chosen at run time with
 * __builtin_cpu_supports (AVX-512F, else AVX2+FMA, else portable scalar).
 * Every kernel gives bit-identical output (docs/rng.md). The _k variants run
 * a named kernel (a kernel the CPU lacks falls back to the best available
 * one not above it) and return the kernel that ran; they exist so tests can
 * compare kernels and the bench can time them. No global state is involved. */
enum {
    DPDO__RNG_KERNEL_AUTO = 0,
    DPDO__RNG_KERNEL_SCALAR = 1,
    DPDO__RNG_KERNEL_AVX2 = 2,  /* AVX2 + FMA */
    DPDO__RNG_KERNEL_AVX512 = 3 /* AVX-512F */
};
int dpdo__rng_kernel_best(void);               /* best kernel this CPU runs */
const char *dpdo__rng_kernel_name(int kernel); /* "scalar", "avx2", "avx512" */
int dpdo__stream_normals_k(dpdo__stream *s, double *out, size_t n, int kernel);
int dpdo__stream_add_normals_k(dpdo__stream *s, double scale, double *out, size_t n, int kernel);
int dpdo__stream_uniforms_k(dpdo__stream *s, double *out, size_t n, int kernel);

/* Returns the sticky status of the stream (DPDO_OK or DPDO_E_CALLBACK). */
static inline int dpdo__stream_status(const dpdo__stream *s)
{
    return s->status;
}
/* The code the failing callback returned (0 if none failed). */
static inline int dpdo__stream_cb_code(const dpdo__stream *s)
{
    return s->cb_code;
}

#endif /* DPDO_RNG_IMPL_H */
