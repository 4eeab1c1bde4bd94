/* SPDX-License-Identifier: BSD-3-Clause */
/* Message compressors (sparsifiers) for algorithms that send compressed
 * messages, such as DO-ADP (docs/design/notes/do-adp.md §2.6-2.8). A compressor C maps a
 * vector x[dim] to a sparse message: `count` (index, value) pairs with
 * strictly ascending indices. Built-in types (all UNSCALED: every value sent
 * equals the input value at that index):
 *
 *   "identity"   all dim pairs (k = dim always); C(x) = x; delta = 1.
 *   "top-k"      the k coordinates of largest |x_l|, ties broken by the
 *                smaller index (docs/design/notes/do-adp.md §7 item 16); always exactly k pairs,
 *                zeros included when x has fewer than k non-zeros, so a
 *                message always costs k. Deterministic, O(dim) selection.
 *                ||C(x) - x||^2 <= (1 - k/dim) ||x||^2 for every x (Lemma 7).
 *   "rand-k"     a uniform k-subset of the coordinates, drawn independently
 *                of x from stream (node_id, round, DPDO_PURPOSE_COMPRESSION)
 *                (dpdo_rng_subset on that stream); exactly k pairs.
 *                E C(x) = (k/dim) x, E||C(x) - x||^2 = (1 - k/dim)||x||^2.
 *   "bernoulli"  coordinate l kept when u_l < k/dim, u_l the l-th uniform of
 *                stream (node_id, round, DPDO_PURPOSE_COMPRESSION) (what
 *                dpdo_rng_uniform gives at offset 0); a variable number of
 *                pairs (Binomial(dim, k/dim), mean k, at most dim); same
 *                expectations as rand-k.
 *
 * The scaled rand-k ((dim/k) Rand_k(x), unbiased) is deliberately not
 * offered: it is not a contraction (E||.-x||^2 = (dim/k - 1)||x||^2), so it
 * breaks the consensus step of DO-ADP (docs/design/notes/do-adp.md §2.6). See docs/compressor.md.
 *
 * User compressor types fill a dpdo_compressor_type and pass it to
 * dpdo_compressor_create(); their callbacks take `void *user` first and
 * return 0 on success; any other value makes the calling function return
 * DPDO_E_CALLBACK with the code quoted in dpdo_compressor_errmsg().
 *
 * Thread-safety: a compressor handle owns scratch memory, so one handle is
 * used by one thread at a time (create one per thread or per node). Type
 * objects and the dpdo_compressor_type_* lookups are thread-safe. */
#ifndef DPDO_COMPRESSOR_H
#define DPDO_COMPRESSOR_H

#include "export.h"
#include "rng.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== ADVANCED ZONE: message compressors (built-in and user types) ==== */

typedef struct dpdo_compressor dpdo_compressor;

/* A compressor type. Fields may only be appended; the library reads a field
 * only if struct_size covers it. A type object is immutable and may be shared
 * by any number of handles and threads. */
typedef struct dpdo_compressor_type {
    size_t struct_size; /* sizeof(dpdo_compressor_type) as the caller compiled it (required) */
    const char *name;   /* required, non-empty */
    /* required: write at most cap (index, value) pairs of the compressed
     * x[dim] into idx/val, indices strictly ascending in [0, dim), values
     * finite, *count = pairs written (0 <= *count <= cap; cap is
     * dpdo_compressor_capacity = dim for user types). k is the handle's k
     * (dpdo_compressor_set_k, default dim). Randomness only from stream
     * (node_id, round, DPDO_PURPOSE_COMPRESSION) of rng, which may be NULL if
     * the caller has none; the public draws take a const dpdo_rng *, e.g.
     * dpdo_rng_subset(rng, node_id, round, DPDO_PURPOSE_COMPRESSION, dim, k,
     * idx). 0 = success, anything else ->
     * DPDO_E_CALLBACK with the code in the message. Output that breaks these
     * rules is also reported as DPDO_E_CALLBACK. */
    int (*compress)(void *user, const double *x, int64_t dim, int64_t k, const dpdo_rng *rng,
                    uint64_t node_id, uint64_t round, int64_t *idx, double *val, int64_t cap,
                    int64_t *count);
    /* optional: *delta in [0, 1] such that E||C(x) - x||^2 <= (1 - delta)
     * ||x||^2 for all x (expectation over the stream); NULL = unknown */
    int (*contraction)(void *user, int64_t dim, int64_t k, double *delta);
    /* optional: runs exactly once, at dpdo_compressor_destroy */
    void (*release)(void *user);
} dpdo_compressor_type;

/* Built-in type by name ("identity", "top-k", "rand-k", "bernoulli"); NULL
 * if unknown or name is NULL. Built-in type objects are opaque: use them only
 * through a compressor handle. Thread-safe. Since 0.1. */
DPDO_API const dpdo_compressor_type *dpdo_compressor_type_find(const char *name);
/* Iterate over the built-in types: next(NULL) is the first, NULL after the
 * last (or for a type that is not built in). Thread-safe. Since 0.1. */
DPDO_API const dpdo_compressor_type *dpdo_compressor_type_next(const dpdo_compressor_type *prev);
/* The type's name ("(null)" for NULL). Thread-safe. Since 0.1. */
DPDO_API const char *dpdo_compressor_type_name(const dpdo_compressor_type *t);

/* Create a compressor for vectors of `dim` entries in *out (NULL on
 * failure), with k = dim. Allocates all scratch for dim here (top-k: dim
 * 64-bit words), so dpdo_compressor_apply allocates nothing. Built-in type:
 * `user` must be NULL. User type: `user` is passed to every callback; its
 * ownership moves to the handle on success only (release runs at destroy,
 * never on a failed create). The type object is borrowed and must outlive
 * the handle.
 * Returns DPDO_OK, DPDO_E_INVAL (NULL out/type, dim < 1, user != NULL for a
 * built-in, user type without name or compress, a copy of a built-in type),
 * DPDO_E_VERSION (user type's struct_size does not cover compress),
 * DPDO_E_NOMEM. No handle exists on failure, so there is no message.
 * Since 0.1. */
DPDO_API int dpdo_compressor_create(dpdo_compressor **out, const dpdo_compressor_type *type,
                                    void *user, int64_t dim);
/* Destroy; runs release(user) once for user types. NULL is a no-op. If an
 * algorithm still borrows it (dpdo_algorithm_set_*), the free (and release)
 * is deferred until the algorithm lets go (docs/abi.md). Since 0.1.
 * Deferred: Since 0.2. */
DPDO_API void dpdo_compressor_destroy(dpdo_compressor *c);
/* Message about the last failure ("" if none; "dpdo_compressor_errmsg: c
 * is NULL" for NULL). Never NULL; owned by the handle, valid until the next call on it.
 * Since 0.1. */
DPDO_API const char *dpdo_compressor_errmsg(const dpdo_compressor *c);
/* The type's name ("(null)" for NULL). Since 0.1. */
DPDO_API const char *dpdo_compressor_name(const dpdo_compressor *c);
/* The dimension given at create (0 for NULL). Since 0.1. */
DPDO_API int64_t dpdo_compressor_dim(const dpdo_compressor *c);

/* Set the sparsity k, 1 <= k <= dim (identity: only k = dim). The default is
 * k = dim. top-k and rand-k then send exactly k pairs, bernoulli keeps each
 * coordinate with probability k/dim, user types receive k. Allocates
 * nothing. Returns DPDO_OK, DPDO_E_INVAL (NULL c, k out of range; k is then
 * unchanged). Not thread-safe on one handle. Since 0.1. */
DPDO_API int dpdo_compressor_set_k(dpdo_compressor *c, int64_t k);
/* The current k (0 for NULL). Since 0.1. */
DPDO_API int64_t dpdo_compressor_k(const dpdo_compressor *c);
/* The most pairs one call can write, i.e. the size idx and val must have:
 * k for top-k and rand-k, dim for identity, bernoulli and user types (0 for
 * NULL). Changes with set_k. Since 0.1. */
DPDO_API int64_t dpdo_compressor_capacity(const dpdo_compressor *c);

/* Compress x[dim] (borrowed, unchanged) into *count (index, value) pairs
 * idx[0..count-1], val[0..count-1], indices strictly ascending, values equal
 * to x at those indices for the built-ins (no scaling). cap is the size of
 * idx and val and must be >= dpdo_compressor_capacity(c); val must not
 * overlap x. rng (borrowed) is needed by rand-k and bernoulli (stream
 * (node_id, round, DPDO_PURPOSE_COMPRESSION), consumed from its start), may
 * be NULL for identity and top-k (ignored) and is passed to user types as
 * given. Allocates nothing (user callbacks aside). On failure *count = 0
 * (when count is not NULL) and idx/val hold unspecified values.
 * Returns DPDO_OK, DPDO_E_INVAL (NULL c/x/idx/val/count, dim differs from
 * the compressor's, NaN/Inf in x (the index is named), cap < capacity, val
 * overlapping x, rng NULL for rand-k/bernoulli, node_id >= 2^32 or
 * round >= 2^48), DPDO_E_CALLBACK (user compress failed or wrote an invalid
 * message; custom rng type failed; the code is in the message).
 * Deterministic: the same inputs and stream give the same bytes.
 * Thread-safety: per handle. Since 0.1. */
DPDO_API int dpdo_compressor_apply(dpdo_compressor *c, const double *x, int64_t dim,
                                   const dpdo_rng *rng, uint64_t node_id, uint64_t round,
                                   int64_t *idx, double *val, int64_t cap, int64_t *count);

/* *delta = the contraction constant at the current k: a delta in [0, 1]
 * with E||C(x) - x||^2 <= (1 - delta)||x||^2 for every x: identity 1;
 * top-k k/dim (deterministic, Lemma 7); rand-k and bernoulli k/dim (in
 * expectation over the stream; equality holds); user types: their
 * contraction callback. Returns DPDO_OK, DPDO_E_INVAL (NULL c/delta),
 * DPDO_E_UNSUPPORTED (user type without a contraction callback),
 * DPDO_E_CALLBACK (the callback failed), DPDO_E_NUMERIC (the callback gave a
 * value outside [0, 1] or NaN). On failure *delta is unchanged.
 * Since 0.1. */
DPDO_API int dpdo_compressor_contraction(dpdo_compressor *c, double *delta);

/* 1 if the output depends on x alone (no randomness): identity and top-k;
 * 0 for rand-k, bernoulli, every user type and NULL. Since 0.1. */
DPDO_API int dpdo_compressor_is_deterministic(const dpdo_compressor *c);

#ifdef __cplusplus
}
#endif
#endif /* DPDO_COMPRESSOR_H */
