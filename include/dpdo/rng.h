/* SPDX-License-Identifier: BSD-3-Clause */
/* Counter-based random numbers.
 *
 * Every random draw in libdpdo is identified by a *stream* (seed, node, round,
 * purpose) and a position inside that stream. The value at a position depends
 * on nothing else: not on loop order, thread count, or which process hosts a
 * node. The default generator is Philox4x32-10 (Salmon et al., SC'11). It is
 * for reproducible experiments and is NOT a cryptographic noise source; a
 * CSPRNG can be plugged in through dpdo_rng_type without an API change.
 *
 * Stream positions count *values of the kind drawn* from the start of the
 * stream (e.g. offset 10 of a normal draw is the 11th normal of that stream).
 * Different kinds (uniform, normal, ...) drawn from the same stream and
 * offsets are not independent of one another: use different purposes.
 *
 * Stream ids: node < 2^32, round < 2^48, purpose < 2^16 (other values give
 * DPDO_E_INVAL). A stream holds 2^33 uniforms/normals. The exact mapping from
 * (seed, ids, position) to each value is specified in docs/rng.md; it is the
 * same on every machine (the SIMD and scalar code paths are bit-identical). */
#ifndef DPDO_RNG_H
#define DPDO_RNG_H

#include "export.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== ADVANCED ZONE: random number generators (raw sampling, user types) ==== */

/* Purposes: which part of an algorithm a stream feeds. Pinned values; user
 * code may use DPDO_PURPOSE_USER + k for its own streams. */
enum {
    DPDO_PURPOSE_ACTIVATION = 1,  /* which nodes/agents are active */
    DPDO_PURPOSE_SAMPLE = 2,      /* which local samples are used */
    DPDO_PURPOSE_NOISE = 3,       /* privacy noise */
    DPDO_PURPOSE_COMPRESSION = 4, /* random sparsifiers */
    DPDO_PURPOSE_EDGES = 5,       /* sampled edges / matchings */
    DPDO_PURPOSE_EXPLORATION = 6, /* policy exploration (DQN epsilon-greedy) */
    DPDO_PURPOSE_INIT = 7,        /* initialisation (weights, iterates) */
    DPDO_PURPOSE_DATA = 8,        /* synthetic data generation */
    DPDO_PURPOSE_PARTITION = 9,   /* splitting data into shards */
    DPDO_PURPOSE_USER = 1024
};

/* A pluggable counter-based block generator. A type object is immutable and
 * may be shared by any number of generators and threads.
 * `blocks` (required) writes 4*nblocks 32-bit words: block j is the image of
 * the 128-bit counter (ctr[0]+j, ctr[1], ctr[2], ctr[3]) under the 128-bit key
 * (the increment of ctr[0] does not carry into ctr[1]). It must be a pure
 * function of (key, counter); it returns 0 or a non-zero code (reported as
 * DPDO_E_CALLBACK). `user` is the pointer given at dpdo_rng_create. */
typedef struct dpdo_rng_type {
    size_t struct_size; /* sizeof(dpdo_rng_type) as compiled by the caller */
    const char *name;   /* required, static */
    int (*blocks)(void *user, const uint32_t key[4], const uint32_t ctr[4], uint64_t nblocks,
                  uint32_t *out);
    void (*release)(void *user); /* optional: called once at dpdo_rng_destroy */
} dpdo_rng_type;

typedef struct dpdo_rng dpdo_rng;

/* Built-in types by name ("philox4x32-10"); NULL if unknown. Iterate with
 * dpdo_rng_type_next(NULL), dpdo_rng_type_next(prev) ... until NULL.
 * Thread-safe. Since 0.1. */
DPDO_API const dpdo_rng_type *dpdo_rng_type_find(const char *name);
DPDO_API const dpdo_rng_type *dpdo_rng_type_next(const dpdo_rng_type *prev);
DPDO_API const char *dpdo_rng_type_name(const dpdo_rng_type *type);

/* Create a generator keyed by the 64-bit `seed` in *out (NULL on failure),
 * the one create shape of every pluggable type: (out, type, user, ...).
 * Built-in type (type NULL = Philox4x32-10; a static object, nothing to
 * free): `user` must be NULL. User type (e.g. a CSPRNG in counter mode; see
 * docs/rng.md): the type object is borrowed (must outlive the generator);
 * `user` is passed untouched to its callbacks, and its ownership moves to the
 * handle on success only: type->release (if struct_size covers it and it is
 * non-NULL) runs once at dpdo_rng_destroy, never on a failed create. The
 * callback receives key[4] = {seed lo, seed hi, 0, 0}. Returns DPDO_OK,
 * DPDO_E_INVAL (out NULL; user not NULL for a built-in; user type without
 * name or blocks), DPDO_E_VERSION (the user type's struct_size does not
 * cover `blocks`), DPDO_E_NOMEM. Thread-safe. Since 0.1. `user` parameter
 * (user types through create): Since 0.2. */
DPDO_API int dpdo_rng_create(dpdo_rng **out, const dpdo_rng_type *type, void *user, uint64_t seed);

/* Deprecated in 0.2 (kept for the ABI): dpdo_rng_create(out, type, user,
 * seed) with a user type; a built-in type given here is run through its
 * callback like a user type (same values). type NULL is DPDO_E_INVAL.
 * Since 0.1. */
DPDO_API int dpdo_rng_create_custom(dpdo_rng **out, const dpdo_rng_type *type, void *user,
                                    uint64_t seed);

/* Destroy (calls the custom type's release once); NULL is a no-op.
 * Since 0.1. */
DPDO_API void dpdo_rng_destroy(dpdo_rng *rng);

/* The message of the last failed call on this handle ("" if none), e.g.
 * "laplace: scale = -1 must be positive and finite". Never NULL ("dpdo_rng_errmsg: rng
 * is NULL" for NULL). Owned by the handle. Since 0.1. */
DPDO_API const char *dpdo_rng_errmsg(const dpdo_rng *rng);
/* The seed given at creation (0 for NULL). Since 0.1. */
DPDO_API uint64_t dpdo_rng_seed(const dpdo_rng *rng);

/* Draw n values from stream (node, round, purpose) starting at `offset`
 * (counted in values of that kind). out must hold n values (n >= 0; n = 0 is
 * a no-op and out may then be NULL). Returns DPDO_OK, DPDO_E_INVAL (NULL
 * rng/out, n < 0, stream id out of range, offset + n > 2^33, bad parameter;
 * named in the errmsg), DPDO_E_CALLBACK (custom type failed; the code is in
 * the errmsg; out then holds deterministic but meaningless values).
 * Deterministic: the same arguments give the same bytes on every run and
 * machine. The handle is const: a draw changes no state of the generator
 * (only the message buffer behind dpdo_rng_errmsg, on failure), so code
 * holding a const dpdo_rng * (callbacks of compressor, solver and policy
 * types) draws without casts. Thread-safety: concurrent draws on one handle
 * are safe; errmsg is per handle. Since 0.1. Const handle: Since 0.2. */
/* Uniform on (0,1): never 0 or 1, 53-bit grid (2k+1)/2^53. Since 0.1. */
DPDO_API int dpdo_rng_uniform(const dpdo_rng *rng, uint64_t node, uint64_t round, uint32_t purpose,
                              uint64_t offset, double *out, int64_t n);
/* Standard normal N(0,1) by Box-Muller (values 2j, 2j+1 from block j);
 * the fast SIMD path. Since 0.1. */
DPDO_API int dpdo_rng_normal(const dpdo_rng *rng, uint64_t node, uint64_t round, uint32_t purpose,
                             uint64_t offset, double *out, int64_t n);
/* Laplace(0, scale), density exp(-|x|/scale) / (2 scale); scale finite > 0. Since 0.1. */
DPDO_API int dpdo_rng_laplace(const dpdo_rng *rng, uint64_t node, uint64_t round, uint32_t purpose,
                              uint64_t offset, double scale, double *out, int64_t n);
/* Bernoulli(p) as 0/1 ints, p in [0,1]. Since 0.1. */
DPDO_API int dpdo_rng_bernoulli(const dpdo_rng *rng, uint64_t node, uint64_t round,
                                uint32_t purpose, uint64_t offset, double p, int32_t *out,
                                int64_t n);
/* Geometric: number of failures before the first success, p in (0,1]
 * (exactly 0 for p = 1; saturates at 2^63-1). Since 0.1. */
DPDO_API int dpdo_rng_geometric(const dpdo_rng *rng, uint64_t node, uint64_t round,
                                uint32_t purpose, uint64_t offset, double p, int64_t *out,
                                int64_t n);
/* Uniform random b-subset of {0..n-1}, written sorted ascending into out[b]
 * (0 <= b <= n; out may be NULL if b = 0). Each subset has probability
 * 1/C(n,b). Uses the stream from its start (no offset). No allocation; time
 * O(min(b^2, n)). Also serves "random k of d coordinates". Same return codes
 * and thread-safety as above. Since 0.1. */
DPDO_API int dpdo_rng_subset(const dpdo_rng *rng, uint64_t node, uint64_t round, uint32_t purpose,
                             int64_t n, int64_t b, int64_t *out);
/* Uniform random permutation of {0..n-1} into out[n] (Fisher-Yates; out may
 * be NULL if n = 0). Uses the stream from its start. Since 0.1. */
DPDO_API int dpdo_rng_permutation(const dpdo_rng *rng, uint64_t node, uint64_t round,
                                  uint32_t purpose, int64_t n, int64_t *out);

#ifdef __cplusplus
}
#endif
#endif /* DPDO_RNG_H */
