/* SPDX-License-Identifier: BSD-3-Clause */
/* The sampling draw: the same object that an event records is the one that
 * chooses the participants, through the RNG streams. Kept in its own file so
 * the accounting code links without the RNG layer. */
#include "../rng/rng_impl.h"
#include "privacy_impl.h"

int dpdo__sampling_draw(const dpdo__sampling_desc *d, struct dpdo__stream *st, int64_t n,
                        int64_t *out, int64_t *count)
{
    int64_t c = 0;
    switch (d->kind) {
    case DPDO_SAMPLING_POISSON:
        for (int64_t i = 0; i < n; i++)
            if (dpdo__stream_bernoulli(st, d->q)) out[c++] = i;
        break;
    case DPDO_SAMPLING_WOR:
        if (n != d->n) return DPDO_E_INVAL;
        dpdo__stream_subset(st, n, d->m, out);
        c = d->m;
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            out[i] = i;
        c = n;
        break;
    }
    *count = c;
    return dpdo__stream_status(st);
}

int dpdo_sampling_draw(const dpdo_sampling *s, const dpdo_rng *rng, uint64_t node, uint64_t round,
                       uint32_t purpose, int64_t n, int64_t *out, int64_t *count)
{
    if (!s) return DPDO_E_INVAL;
    dpdo_sampling *sm = (dpdo_sampling *)s; /* errmsg only */
    if (!rng || !out || !count)
        return dpdo__err(sm->errmsg, DPDO_E_INVAL, "rng, out and count must not be NULL");
    if (n < 0) return dpdo__err(sm->errmsg, DPDO_E_INVAL, "n = %lld must be >= 0", (long long)n);
    if (s->d.kind == DPDO_SAMPLING_WOR && n != s->d.n)
        return dpdo__err(
            sm->errmsg, DPDO_E_INVAL,
            "n = %lld differs from the population n = %lld of this without-replacement scheme",
            (long long)n, (long long)s->d.n);
    dpdo__stream st;
    dpdo__stream_open(&st, rng, node, round, purpose);
    int rc = dpdo__sampling_draw(&s->d, &st, n, out, count);
    if (rc) return dpdo__err(sm->errmsg, rc, "the random generator failed (%s)", dpdo_strerror(rc));
    return DPDO_OK;
}
