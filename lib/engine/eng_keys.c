/* SPDX-License-Identifier: BSD-3-Clause */
/* Node keys of secure runs: drawn from OS entropy at prepare (or set by the host), the 64-bit
 * node secrets, and dpdo_algorithm_randomness_source. */
#include "../rng/rng_impl.h"
#include "eng_handle.h"
#include <sodium.h>
#include <string.h>

/* Secure private runs: every hosted node without a host key gets a fresh 256-bit key from the
 * operating system's entropy (libsodium randombytes_buf); keys of earlier runs are replaced
 * (docs/privacy.md: reset draws new keys). Reproducible or non-private runs drop drawn keys. */
/* The per-node key table (all DPDO__KEY_NONE), shared with the RNG, when there is none yet.
 * DPDO_OK or DPDO_E_NOMEM (no message). */
static int key_table(dpdo__eng *e)
{
    if (e->key) return DPDO_OK;
    unsigned char *k = dpdo__calloc((size_t)e->n, 32), *src = dpdo__calloc((size_t)e->n, 1);
    if (!k || !src) {
        dpdo__free(k), dpdo__free(src);
        return DPDO_E_NOMEM;
    }
    e->key = k, e->key_src = src;
    e->rng->keys = k, e->rng->has_key = src, e->rng->nkeys = e->n;
    return DPDO_OK;
}

int dpdo__eng_draw_keys(dpdo__eng *e, char *err)
{
    int want = DPDO__SECURE(e);
    if (!want && !e->key) return DPDO_OK;
    if (want && sodium_init() < 0)
        return dpdo__err(
            err, DPDO_E_UNSUPPORTED,
            "prepare: secure randomness: libsodium cannot be initialised (no system entropy?); "
            "set options.randomness = DPDO_RANDOMNESS_REPRODUCIBLE to run without it");
    if (want && key_table(e))
        return dpdo__err(err, DPDO_E_NOMEM, "prepare: out of memory (node keys)");
    int any = 0;
    for (int64_t i = 0; i < e->n; i++) {
        unsigned char *k = e->key + 32 * (size_t)i;
        if (e->key_src[i] == DPDO__KEY_HOST) {
            any = 1;
            continue;
        }
        if (want && dpdo__eng_hosted(e, i)) {
            randombytes_buf(k, 32);
            e->key_src[i] = DPDO__KEY_ENTROPY;
            any = 1;
        } else if (e->key_src[i] == DPDO__KEY_ENTROPY) {
            sodium_memzero(k, 32);
            e->key_src[i] = DPDO__KEY_NONE;
        }
    }
    e->keyed = any;
    return DPDO_OK;
}

int dpdo__eng_keys_alloc(dpdo__eng *e)
{
    return key_table(e) ? dpdo__err(e->err, DPDO_E_NOMEM, "out of memory (node keys)") : DPDO_OK;
}

static int set_key(dpdo_algorithm *a, int64_t node, const unsigned char *key, const char *what)
{
    if (!a) return DPDO_E_INVAL;
    dpdo__eng *e = a->e;
    if (!e) return dpdo__err(a->errmsg, DPDO_E_STATE, "%s: the algorithm is EMPTY", what);
    if (a->state != DPDO_ALG_READY || e->round != 0)
        return dpdo__err(a->errmsg, DPDO_E_STATE, "%s: only at round 0 (READY)", what);
    if (node < 0 || node >= e->n)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "%s: node %lld is not in [0, %lld)", what,
                         (long long)node, (long long)e->n);
    if (!key) return dpdo__err(a->errmsg, DPDO_E_INVAL, "%s: key is NULL", what);
    if (key_table(e)) return dpdo__err(a->errmsg, DPDO_E_NOMEM, "%s: out of memory", what);
    memcpy(e->key + 32 * (size_t)node, key, 32);
    e->key_src[node] = DPDO__KEY_HOST;
    e->keyed = 1;
    e->prepared = 0; /* initial values drawn from the node's streams (prepare re-runs init) */
    e->vt->init(e, e->priv);
    return DPDO_OK;
}

static int algorithm_set_node_key_body(dpdo_algorithm *a, int64_t node, const unsigned char key[32])
{
    return set_key(a, node, key, "set_node_key");
}

DPDO_API int dpdo_algorithm_set_node_key(dpdo_algorithm *a, int64_t node,
                                         const unsigned char key[32])
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 1, "dpdo_algorithm_set_node_key",
                  algorithm_set_node_key_body(a, node, key));
}

void dpdo__node_secret_key(uint64_t secret, unsigned char key[32])
{
    static const char label[] = "libdpdo node secret v1";
    unsigned char in[sizeof label - 1 + 8];
    memcpy(in, label, sizeof label - 1);
    for (int b = 0; b < 8; b++)
        in[sizeof label - 1 + b] = (unsigned char)(secret >> (8 * b));
    crypto_generichash(key, 32, in, sizeof in, NULL, 0);
}

static int algorithm_set_node_secret_body(dpdo_algorithm *a, int64_t node, uint64_t secret)
{
    /* the 64-bit secret becomes a 256-bit key: BLAKE2b-256 of a fixed label and the secret's 8
     * little-endian bytes (docs/rng.md); no more secret than its 64 bits */
    unsigned char key[32];
    if (sodium_init() < 0)
        return dpdo__err(a ? a->errmsg : NULL, DPDO_E_UNSUPPORTED,
                         "set_node_secret: libsodium cannot be initialised");
    dpdo__node_secret_key(secret, key);
    int rc = set_key(a, node, key, "set_node_secret");
    sodium_memzero(key, sizeof key);
    return rc;
}

DPDO_API int dpdo_algorithm_set_node_secret(dpdo_algorithm *a, int64_t node, uint64_t secret)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 1, "dpdo_algorithm_set_node_secret",
                  algorithm_set_node_secret_body(a, node, secret));
}

DPDO_API const char *dpdo_algorithm_randomness_source(const dpdo_algorithm *a)
{
    if (!a || !a->e) return "";
    const dpdo__eng *e = a->e;
    if (e->o.randomness == DPDO_RANDOMNESS_SECURE) {
        if (!e->prepared || !e->pv.private_run)
            return e->keyed ? "secure (not a private run): private streams under the host's node "
                              "keys (chacha20-ietf)"
                            : "secure (not a private run): nothing secret to draw; streams keyed "
                              "by options.seed "
                              "(philox4x32-10)";
        return "secure: private streams chacha20-ietf under per-node 256-bit keys (OS entropy or "
               "the host's); "
               "noise exact discrete on a power-of-two grid; public streams philox4x32-10 under "
               "options.seed";
    }
    return e->keyed ? "reproducible: private streams chacha20-ietf under the host's node keys "
                      "where set, else "
                      "philox4x32-10 under options.seed; continuous double-precision noise (not "
                      "floating-point safe)"
                    : "reproducible: every stream philox4x32-10 under options.seed; continuous "
                      "double-precision "
                      "noise (not floating-point safe); epsilon holds only against parties who do "
                      "not know the seed";
}
