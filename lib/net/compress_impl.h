/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal layout of message compressors and the entry point the engine
 * calls every round (DO-ADP, docs/design/notes/do-adp.md §2.6-2.8). Never installed. */
#ifndef DPDO_COMPRESS_IMPL_H
#define DPDO_COMPRESS_IMPL_H

#include "../core/core_impl.h"
#include "dpdo/compressor.h"
#include <stddef.h>
#include <stdint.h>

struct dpdo_rng;

enum {
    DPDO__COMP_USER = -1,
    DPDO__COMP_IDENTITY = 0,
    DPDO__COMP_TOPK,
    DPDO__COMP_RANDK,
    DPDO__COMP_BERNOULLI,
    DPDO__COMP_NBUILTIN
};

struct dpdo_compressor {
    uint32_t magic; /* DPDO__MAGIC_* while alive, 0 after destroy (core_impl.h) */
    const dpdo_compressor_type *type;
    int kind;     /* DPDO__COMP_* */
    void *user;   /* user types: the caller's pointer; built-ins: this handle */
    size_t tsize; /* the type's struct_size */
    int64_t dim;
    int64_t k;         /* 1..dim; identity: dim */
    uint64_t *keys;    /* top-k: dim words of radix-select scratch; else NULL */
    int64_t borrowers; /* algorithms borrowing it (core_impl.h, borrowed handles) */
    int doomed;        /* destroy requested while borrowed */
    char errmsg[DPDO__ERRMSG_LEN];
};
void dpdo__compressor_retain(struct dpdo_compressor *c);
void dpdo__compressor_release(struct dpdo_compressor *c);

/* The engine's per-round entry: like dpdo_compressor_apply with
 * cap = dpdo_compressor_capacity(c), but without the argument checks: x must
 * hold c->dim finite values, idx/val at least capacity entries (val not
 * overlapping x), node_id < 2^32, round < 2^48. rng may be NULL only for
 * identity and top-k (checked: DPDO_E_INVAL). User output is still validated
 * (O(count)): a bad message is DPDO_E_CALLBACK. Allocates nothing. Message
 * into err (DPDO__ERRMSG_LEN bytes, may be NULL). On failure *count = 0. */
int dpdo__compressor_apply(struct dpdo_compressor *c, const double *x, const struct dpdo_rng *rng,
                           uint64_t node_id, uint64_t round, int64_t *idx, double *val,
                           int64_t *count, char *err);

/* The same with `keys` (dim words, or NULL = the handle's) as top-k's scratch, so that several
 * nodes can apply one built-in compressor at once (one workspace per task of the engine's
 * thread pool). */
int dpdo__compressor_apply_ws(struct dpdo_compressor *c, const double *x,
                              const struct dpdo_rng *rng, uint64_t node_id, uint64_t round,
                              int64_t *idx, double *val, int64_t *count, uint64_t *keys, char *err);
/* The same with a hint for top-k: orr and andd are the OR and AND of the keys (bit patterns of
 * |x_l|, sign cleared) over all of x, as dpdo__topk_select_oa takes them; ignored by the other
 * kinds. Same result as dpdo__compressor_apply_ws. */
int dpdo__compressor_apply_oa(struct dpdo_compressor *c, const double *x,
                              const struct dpdo_rng *rng, uint64_t node_id, uint64_t round,
                              int64_t *idx, double *val, int64_t *count, uint64_t *keys,
                              uint64_t orr, uint64_t andd, char *err);
/* 1 if c is NULL or built-in (no user callback): dpdo__compressor_apply_ws may run concurrently */
int dpdo__compressor_concurrent(const struct dpdo_compressor *c);

/* Top-k selection kernel (exposed for tests and the bench): the k
 * (1 <= k <= d) coordinates of largest |x_l|, ties to the smaller index,
 * written ascending into idx[k] with val[l] = x[idx[l]]. x finite.
 * scratch holds d words. MSD radix select on the bit patterns of |x|
 * (skipping the bits all candidates share): O(d) worst case (at most 8
 * levels, each one pass over the surviving candidates, plus 2 passes over
 * x), no RNG, no allocation, no comparison sort. */
void dpdo__topk_select(const double *x, int64_t d, int64_t k, uint64_t *scratch, int64_t *idx,
                       double *val);
/* The same when the caller already has orr = OR and andd = AND of the keys (bit patterns of
 * |x_l|, sign cleared) over all of x (have_oa = 1; DO-ADP gets them in the pass that writes x):
 * the selection is the same, one pass over x fewer. have_oa = 0: they are computed here. */
void dpdo__topk_select_oa(const double *x, int64_t d, int64_t k, int have_oa, uint64_t orr,
                          uint64_t andd, uint64_t *scratch, int64_t *idx, double *val);

#endif /* DPDO_COMPRESS_IMPL_H */
