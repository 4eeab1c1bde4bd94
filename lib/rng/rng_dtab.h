/* SPDX-License-Identifier: BSD-3-Clause */
/* The discrete samplers' tables (rng_dtab.c builds and caches them, rng_discrete.c samples from
 * them). Internal to lib/rng. */
#ifndef DPDO_RNG_DTAB_H
#define DPDO_RNG_DTAB_H
#include "rng_impl.h"
#include <stdint.h>

typedef unsigned __int128 u128;

/* ---- the table sampler (docs/privacy.md "The table sampler") ------------------------------------
 * Target P(z) ~ f(|z|) on the integers, f(a) = exp(-phi(a)), phi(a) = a^2 / (2 S^2) (Gaussian)
 * or a / T (Laplace). An envelope v(a) >= f(a) on the magnitudes a >= 0:
 *   - blocks m < M of width B = 2^b (the integers m B .. m B + B - 1): v = W_m / L there, with
 *     integers L and W_m >= L f(m B) (f decreases: f(m B) is the block's largest value);
 *   - the tail a >= X0 = M B in blocks j = 0, 1, .. of width Bt = 2^bt: v = (WT / L) 2^-j, with
 *     WT >= L f(X0) and Bt chosen so that f(X0 + j Bt) <= f(X0) 2^-j (Gaussian: X0 Bt >= S^2,
 *     since (X0 + j Bt)^2 - X0^2 >= 2 j X0 Bt and e^-1 < 1/2; Laplace: Bt >= T).
 * A candidate: an entry of {block 0 .. M-1, tail, filler} from an exact integer alias table
 * (weights W_m, 2 (Bt / B) WT and the filler 2^A - their sum: column and threshold from A = 24
 * or 32 uniform bits, so each entry has probability weight / 2^A exactly); in a block a uniform
 * offset, in the tail a block j with P(j) = 2^-(j+1) (trailing zeros of uniform bits) and a
 * uniform offset; a sign bit, (-, 0) rejected; the filler always rejected. So (a, sign) has
 * probability v(a) L / (2^(A+1) B) for every a: the envelope, exactly. Accepted iff U < f(a) /
 * v(a) (<= 1), by exact lazy comparison: p = c_m exp(-delta) in double (c_m = L f(m B) / W_m from
 * the table, delta = phi(a) - phi(m B), exp(-delta) by its Taylor polynomial of degree 5, delta
 * <= 1/8), decided from U's first bits when U's interval clears p by the error bound; else 64 bits
 * of U against a glibc-exp band, else MPFR (cmp_slow: the same U). Output: +-a. P(accept) =
 * L Z / (2^(A+1) B), Z = sum over the integers of f: the acceptance-rate check. */
struct dpdo__dtab {
    int lap;       /* 0 Gaussian, 1 Laplace */
    uint64_t P;    /* S or T */
    int b, n, bt;  /* log2 of B, of the columns N, of Bt */
    int A, ub, cb; /* the alias field's bits (the weights sum to 2^A), U's first bits, bytes per
                    * candidate: (24, 23 - b, 6) when b <= 15, else (32, 31 - b, 8) */
    uint32_t M;    /* blocks; entry M is the tail, M + 1 the filler, above: padding */
    uint64_t X0, L, WT;
    double inv;   /* 1 / (2 S^2) or 1 / T, rounded */
    uint64_t *ta; /* [N] thr | alias << 32: the column's own entry when the threshold bits are
                   * below thr, else the alias (one gather for both) */
    uint64_t *W;  /* [M] */
    double *c;    /* [M + 1] L f(m B) / W_m (relative error below 2^-45); c[M] = 0 */
    int64_t refs; /* a table of the generator's recent set: draws using it, and whether it was */
    int retired;  /* replaced there (freed by the last user); both under the rng's recent_lock */
};

/* Free a table (one allocation). */
void dpdo__dtab_free(dpdo__dtab *t);
/* The table for (lap, P) from the generator's cache, built (and cached when a slot is free) on
 * first use; *tmp is set when it comes from the recent set (the permanent slots were taken): the
 * caller hands it back with dpdo__dtab_release when done. NULL: no memory (or a Laplace scale too
 * large for a table). */
dpdo__dtab *dpdo__dtab_get(const struct dpdo_rng *rng, int lap, uint64_t P, int *tmp);
/* Done with a table of dpdo__dtab_get (nothing when tmp is 0). */
void dpdo__dtab_release(const struct dpdo_rng *rng, dpdo__dtab *t, int tmp);
/* At dpdo_rng_destroy: free the recent set. */
void dpdo__dtab_recent_free(struct dpdo_rng *rng);

#endif
