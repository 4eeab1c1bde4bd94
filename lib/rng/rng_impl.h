/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal RNG interface used by every other layer. A dpdo__stream is a
 * small value on the caller's stack: it holds no heap memory and can be
 * created anywhere (including inside step()) without allocation. */
#ifndef DPDO_RNG_IMPL_H
#define DPDO_RNG_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include "dpdo/rng.h"
#include "../core/core_impl.h"

struct dpdo_rng {
    const dpdo_rng_type *type; /* never NULL */
    void *user;                /* custom types only */
    int builtin;               /* 1 = Philox fast path */
    uint64_t seed;
    char errmsg[DPDO__ERRMSG_LEN];
};

/* A position in one stream. Drawing advances `pos` by whole 128-bit blocks;
 * the buffered words of a partly used block are kept in buf. */
typedef struct dpdo__stream {
    const struct dpdo_rng *rng;
    uint32_t key[4];
    uint32_t ctr[4];  /* ctr[0] = next block index; ctr[1..3] = stream id */
    uint32_t buf[4];
    int nbuf;         /* unused words left in buf (taken from the end) */
    int status;       /* sticky: first callback failure of a custom type */
} dpdo__stream;

/* Open stream (node, round, purpose) of rng at block 0. Never fails. */
void dpdo__stream_open(dpdo__stream *s, const struct dpdo_rng *rng, uint64_t node, uint64_t round,
                       uint32_t purpose);
/* Jump to the start of block `block` (clears the buffer). */
void dpdo__stream_seek(dpdo__stream *s, uint64_t block);

uint32_t dpdo__stream_u32(dpdo__stream *s);
uint64_t dpdo__stream_u64(dpdo__stream *s);
double dpdo__stream_uniform(dpdo__stream *s);     /* (0,1), 53-bit */
uint64_t dpdo__stream_below(dpdo__stream *s, uint64_t n); /* [0,n), unbiased; n>0 */
double dpdo__stream_normal(dpdo__stream *s);
void dpdo__stream_normals(dpdo__stream *s, double *out, size_t n); /* fast block path */
/* out[i] += scale * N(0,1) for i < n: the noise kernel, no temporary buffer. */
void dpdo__stream_add_normals(dpdo__stream *s, double scale, double *out, size_t n);
double dpdo__stream_laplace(dpdo__stream *s, double b);
int dpdo__stream_bernoulli(dpdo__stream *s, double p);
uint64_t dpdo__stream_geometric(dpdo__stream *s, double p);
/* Sorted uniform b-subset of {0..n-1}. Needs no heap memory for b <= n. */
void dpdo__stream_subset(dpdo__stream *s, int64_t n, int64_t b, int64_t *out);
void dpdo__stream_permutation(dpdo__stream *s, int64_t n, int64_t *out);

/* Returns the sticky status of the stream (DPDO_OK or DPDO_E_CALLBACK). */
static inline int dpdo__stream_status(const dpdo__stream *s) { return s->status; }

#endif /* DPDO_RNG_IMPL_H */
