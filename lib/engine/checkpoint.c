/* SPDX-License-Identifier: BSD-3-Clause */
/* Checkpoint and resume (dpdo_algorithm_save / dpdo_algorithm_load; format in docs/checkpoint.md).
 *
 * File: header (48 bytes) | [nonce, 24 bytes, when encrypted] | payload | BLAKE2b-256 of all
 * that precedes it (32 bytes). The payload (encrypted with XChaCha20-Poly1305 under the host key
 * when flag 1 is set, header and nonce as associated data) is a sequence of items written by the
 * serializer below: first the configuration fingerprint (named values compared one by one on
 * load, so that a refusal names the field), then the run state. One description of the state
 * (describe_state) serves the three passes: save, check, install. */
#include "dpdo/checkpoint.h"
#include "../model/policy_impl.h"
#include "dist_impl.h"
#include "dpdo/version.h"
#include "engine_impl.h"
#include <errno.h>
#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HDR_BYTES 48
#define NONCE_BYTES crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
#define TAG_BYTES crypto_aead_xchacha20poly1305_ietf_ABYTES
#define SUM_BYTES 32
#define FLAG_ENCRYPTED 1u
#define FLAG_MANIFEST 2u /* the manifest of a distributed run's file set (written by process 0) */
#define FLAG_PART 4u     /* one process's part of a distributed run's file set */
#define FLAG_KIND (FLAG_MANIFEST | FLAG_PART)
#define ENDIAN_MARK 0x01020304u
static const char MAGIC[8] = {'D', 'P', 'D', 'O', 'C', 'K', 'P', 'T'};

enum { SER_WRITE = 0, SER_CHECK = 1, SER_LOAD = 2 };
enum {
    K_I64 = 1,
    K_I32 = 2,
    K_F64 = 3,
    K_BYTES = 4,
    K_CFG_I64 = 11,
    K_CFG_F64 = 12,
    K_CFG_STR = 13
};

struct dpdo__ser {
    int mode, rc;
    int fmt; /* the file's format version (0: this library's, DPDO_CHECKPOINT_FORMAT) */
    unsigned char *buf;
    size_t len, cap, pos;
    char *err;
};

static void ser_fail(dpdo__ser *s, int rc, const char *fmt, const char *name, long long a,
                     long long b)
{
    if (s->rc) return;
    char tmp[DPDO__ERRMSG_LEN];
    snprintf(tmp, sizeof tmp, fmt, name, a, b);
    s->rc = dpdo__err(s->err, rc, "%s: %s", s->mode == SER_WRITE ? "save" : "load", tmp);
}

static void put(dpdo__ser *s, const void *p, size_t n)
{
    if (s->rc) return;
    if (n > s->cap - s->len) {
        size_t c = s->cap ? s->cap : 4096;
        while (c - s->len < n) {
            if (c > SIZE_MAX / 2) {
                s->rc = dpdo__err(s->err, DPDO_E_NOMEM, "save: out of memory");
                return;
            }
            c *= 2;
        }
        unsigned char *nb = dpdo__realloc(s->buf, c);
        if (!nb) {
            s->rc = dpdo__err(s->err, DPDO_E_NOMEM, "save: out of memory");
            return;
        }
        s->buf = nb;
        s->cap = c;
    }
    if (n) memcpy(s->buf + s->len, p, n);
    s->len += n;
}

static const unsigned char *take(dpdo__ser *s, size_t n, const char *name)
{
    if (s->rc) return NULL;
    if (n > s->len - s->pos) {
        ser_fail(s, DPDO_E_FORMAT, "the payload ends inside item '%s' (%lld of %lld bytes)", name,
                 (long long)(s->len - s->pos), (long long)n);
        return NULL;
    }
    const unsigned char *p = s->buf + s->pos;
    s->pos += n;
    return p;
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* item header: u32 kind, u32 name length, name, u64 count */
static void put_head(dpdo__ser *s, uint32_t kind, const char *name, uint64_t count)
{
    uint32_t h[2] = {kind, (uint32_t)strlen(name)};
    put(s, h, sizeof h);
    put(s, name, h[1]);
    put(s, &count, 8);
}

/* reads and checks an item header; returns the count (or -1 after an error) */
static int64_t take_head(dpdo__ser *s, uint32_t kind, const char *name)
{
    const unsigned char *h = take(s, 8, name);
    if (!h) return -1;
    uint32_t k, nl;
    memcpy(&k, h, 4);
    memcpy(&nl, h + 4, 4);
    const unsigned char *nm = take(s, nl, name);
    if (!nm) return -1;
    if (nl != strlen(name) || memcmp(nm, name, nl) != 0 || k != kind) {
        char got[64];
        size_t l = nl < sizeof got - 1 ? nl : sizeof got - 1;
        memcpy(got, nm, l);
        got[l] = 0;
        if (!s->rc)
            s->rc = dpdo__err(
                s->err, DPDO_E_FORMAT,
                "load: the file has item '%s' (kind %u) where this algorithm has '%s' (kind %u): "
                "another algorithm, configuration or library version",
                got, (unsigned)k, name, (unsigned)kind);
        return -1;
    }
    const unsigned char *c = take(s, 8, name);
    if (!c) return -1;
    uint64_t cnt = get_u64(c);
    return cnt > (uint64_t)INT64_MAX
               ? (ser_fail(s, DPDO_E_FORMAT, "item '%s': bad count", name, 0, 0), -1)
               : (int64_t)cnt;
}

static void ser_raw(dpdo__ser *s, uint32_t kind, const char *name, void *p, int64_t count,
                    size_t elem)
{
    if (s->rc) return;
    if (s->mode == SER_WRITE) {
        put_head(s, kind, name, (uint64_t)count);
        put(s, p, (size_t)count * elem);
        return;
    }
    int64_t c = take_head(s, kind, name);
    if (c < 0) return;
    if (c != count) {
        ser_fail(s, DPDO_E_FORMAT, "item '%s' holds %lld values where this algorithm has %lld",
                 name, (long long)c, (long long)count);
        return;
    }
    const unsigned char *d = take(s, (size_t)count * elem, name);
    if (d && s->mode == SER_LOAD && count) memcpy(p, d, (size_t)count * elem);
}

void dpdo__ser_i64(dpdo__ser *s, const char *name, int64_t *p, int64_t count)
{
    ser_raw(s, K_I64, name, p, count, 8);
}
void dpdo__ser_i32(dpdo__ser *s, const char *name, int32_t *p, int64_t count)
{
    ser_raw(s, K_I32, name, p, count, 4);
}
void dpdo__ser_f64(dpdo__ser *s, const char *name, double *p, int64_t count)
{
    ser_raw(s, K_F64, name, p, count, 8);
}
static void ser_bytes(dpdo__ser *s, const char *name, void *p, int64_t count)
{
    ser_raw(s, K_BYTES, name, p, count, 1);
}

void dpdo__ser_idx(dpdo__ser *s, const char *name, int64_t *p, int64_t count, int64_t lo,
                   int64_t hi)
{
    ser_raw(s, K_I64, name, p, count, 8);
    if (s->rc || s->mode != SER_CHECK) return;
    const unsigned char *d = s->buf + s->pos - (size_t)count * 8;
    for (int64_t k = 0; k < count; k++) {
        int64_t v;
        memcpy(&v, d + 8 * k, 8);
        if (v < lo || v > hi) {
            s->rc = dpdo__err(s->err, DPDO_E_FORMAT,
                              "load: item '%s': value %lld at %lld is outside [%lld, %lld]", name,
                              (long long)v, (long long)k, (long long)lo, (long long)hi);
            return;
        }
    }
}

/* Configuration values: written on save, compared on check (a difference names the field),
 * skipped on install. */
static void cfg_i64(dpdo__ser *s, const char *name, int64_t v)
{
    if (s->rc) return;
    if (s->mode == SER_WRITE) {
        put_head(s, K_CFG_I64, name, 1);
        put(s, &v, 8);
        return;
    }
    if (take_head(s, K_CFG_I64, name) != 1) {
        ser_fail(s, DPDO_E_FORMAT, "item '%s': bad count", name, 0, 0);
        return;
    }
    const unsigned char *d = take(s, 8, name);
    if (!d || s->mode != SER_CHECK) return;
    int64_t f;
    memcpy(&f, d, 8);
    if (f != v)
        ser_fail(s, DPDO_E_FORMAT, "%s differs: %lld in the file, %lld in this algorithm", name,
                 (long long)f, (long long)v);
}

static void cfg_f64(dpdo__ser *s, const char *name, double v)
{
    if (s->rc) return;
    if (s->mode == SER_WRITE) {
        put_head(s, K_CFG_F64, name, 1);
        put(s, &v, 8);
        return;
    }
    if (take_head(s, K_CFG_F64, name) != 1) {
        ser_fail(s, DPDO_E_FORMAT, "item '%s': bad count", name, 0, 0);
        return;
    }
    const unsigned char *d = take(s, 8, name);
    if (!d || s->mode != SER_CHECK) return;
    double f;
    memcpy(&f, d, 8);
    if (memcmp(&f, &v, 8) != 0 && !(isnan(f) && isnan(v)) && !s->rc)
        s->rc =
            dpdo__err(s->err, DPDO_E_FORMAT,
                      "load: %s differs: %.17g in the file, %.17g in this algorithm", name, f, v);
}

static void cfg_str(dpdo__ser *s, const char *name, const char *v)
{
    if (s->rc) return;
    size_t l = strlen(v);
    if (s->mode == SER_WRITE) {
        put_head(s, K_CFG_STR, name, l);
        put(s, v, l);
        return;
    }
    int64_t c = take_head(s, K_CFG_STR, name);
    if (c < 0) return;
    const unsigned char *d = take(s, (size_t)c, name);
    if (!d || s->mode != SER_CHECK) return;
    if ((size_t)c != l || memcmp(d, v, l) != 0) {
        char got[64];
        size_t k = (size_t)c < sizeof got - 1 ? (size_t)c : sizeof got - 1;
        memcpy(got, d, k);
        got[k] = 0;
        if (!s->rc)
            s->rc = dpdo__err(s->err, DPDO_E_FORMAT,
                              "load: %s differs: '%s' in the file, '%s' in this algorithm", name,
                              got, v);
    }
}

/* ---- what is written ------------------------------------------------------------------ */

/* Format 1 (libdpdo 0.2) kept every parameter of every type in one table of 48 slots and wrote
 * them by position: its slots in its order (44..47 unused), with the names, types (0 int,
 * 1 double) and live flags the fingerprint used. */
static const struct legacy_slot {
    int32_t key;
    const char *name;
    int32_t type, live;
} LEGACY_SLOTS[48] = {
    {DPDO_PARAM_MAX_ROUNDS, "max-rounds", 0, 1},
    {DPDO_PARAM_STEP_SIZE, "step-size", 1, 0},
    {DPDO_PARAM_STEP_POWER, "step-power", 1, 0},
    {DPDO_PARAM_TOL, "tol", 1, 1},
    {DPDO_PARAM_CHECK_EVERY, "check-every", 0, 1},
    {DPDO_PARAM_MAX_EPSILON, "max-epsilon", 1, 1},
    {DPDO_PARAM_BATCH, "batch", 0, 0},
    {DPDO_PARAM_SIGMA, "sigma", 1, 0},
    {DPDO_PARAM_CLIP, "clip", 1, 0},
    {DPDO_PARAM_CALIB_STEPS, "calib-steps", 0, 0},
    {DPDO_PARAM_CALIB_TAIL, "calib-tail", 1, 0},
    {DPDO_PARAM_DDA_ACTIVE, "dda-active", 0, 0},
    {DPDO_PARAM_DDA_SCHEME, "dda-scheme", 0, 0},
    {DPDO_PARAM_DDA_GOSSIP_COUNT, "dda-gossip-count", 0, 0},
    {DPDO_PARAM_DDA_BERNOULLI_P, "dda-bernoulli-p", 1, 0},
    {DPDO_PARAM_DDA_SCHEDULE, "dda-schedule", 0, 0},
    {DPDO_PARAM_DDA_PAPER_C, "dda-paper-c", 1, 0},
    {DPDO_PARAM_DDA_ALL_COMPUTE, "dda-all-compute", 0, 0},
    {DPDO_PARAM_DDA_ALL_TRANSMIT, "dda-all-transmit", 0, 0},
    {DPDO_PARAM_ADP_P, "adp-p", 1, 0},
    {DPDO_PARAM_ADP_BETA, "adp-beta", 1, 0},
    {DPDO_PARAM_ADP_GAMMA, "adp-gamma", 1, 0},
    {DPDO_PARAM_WOR_SCHEDULE, "wor-schedule", 0, 0},
    {DPDO_PARAM_WOR_PASSES, "wor-passes", 0, 0},
    {DPDO_PARAM_WOR_SMOOTH, "wor-smooth", 1, 0},
    {DPDO_PARAM_WOR_ETA_CAP, "wor-eta-cap", 0, 0},
    {DPDO_PARAM_FED_RHO, "fed-rho", 1, 0},
    {DPDO_PARAM_FED_EPOCHS, "fed-epochs", 0, 0},
    {DPDO_PARAM_FED_SAMPLER, "fed-sampler", 0, 0},
    {DPDO_PARAM_FED_P, "fed-p", 1, 0},
    {DPDO_PARAM_FED_ACTIVE, "fed-active", 0, 0},
    {DPDO_PARAM_FED_DP_INIT, "fed-dp-init", 0, 0},
    {DPDO_PARAM_FEDPD_ETA, "fedpd-eta", 1, 0},
    {DPDO_PARAM_TAMUNA_ETA, "tamuna-eta", 1, 0},
    {DPDO_PARAM_LED_BETA, "led-beta", 1, 0},
    {DPDO_PARAM_5GCS_TAU, "5gcs-tau", 1, 0},
    {DPDO_PARAM_5GCS_MU, "5gcs-mu", 1, 0},
    {DPDO_PARAM_5GCS_LOCAL_STEP, "5gcs-local-step", 1, 0},
    {DPDO_PARAM_DPDO_SCHEDULE, "dpdo-schedule", 0, 0},
    {DPDO_PARAM_DPDO_STEP_DECAY, "dpdo-step-decay", 1, 0},
    {DPDO_PARAM_DPDO_NOISE_DECAY, "dpdo-noise-decay", 1, 0},
    {DPDO_PARAM_DPDO_RADIUS, "dpdo-radius", 1, 0},
    {DPDO_PARAM_DPDO_FULL_GRAD, "dpdo-full-grad", 0, 0},
    {DPDO_PARAM_CPGT_GAMMA, "cpgt-gamma", 1, 0},
};

/* The value format 1 recorded for key in a handle like e: its own, or 0 (a slot e did not use). */
static int legacy_value(const dpdo__eng *e, int key, int64_t *iv, double *dv)
{
    int slot = dpdo__param_slot(e->vt, key);
    *iv = slot >= 0 ? e->pi[slot] : 0;
    *dv = slot >= 0 ? e->pd[slot] : 0.0;
    return slot;
}

/* Format 1's fingerprint of the parameters: every frozen slot by name, in its table's order. */
static void legacy_config(dpdo__eng *e, dpdo__ser *s)
{
    char nm[64];
    for (int k = 0; k < 48 && LEGACY_SLOTS[k].key; k++) {
        const struct legacy_slot *ls = &LEGACY_SLOTS[k];
        if (ls->live) continue;
        int64_t iv;
        double dv;
        legacy_value(e, ls->key, &iv, &dv);
        snprintf(nm, sizeof nm, "parameter %s", ls->name);
        if (ls->type)
            cfg_f64(s, nm, dv);
        else
            cfg_i64(s, nm, iv);
    }
}

/* Format 1's parameter values: two arrays of 48 slots; the slots e uses are installed. */
static void legacy_values(dpdo__eng *e, dpdo__ser *s)
{
    int64_t li[48];
    double ld[48];
    for (int k = 0; k < 48; k++)
        legacy_value(e, LEGACY_SLOTS[k].key, &li[k], &ld[k]);
    dpdo__ser_i64(s, "parameters (integer)", li, 48);
    dpdo__ser_f64(s, "parameters (double)", ld, 48);
    for (int k = 0; k < 48 && LEGACY_SLOTS[k].key && s->mode == SER_LOAD && !s->rc; k++) {
        int slot = dpdo__param_slot(e->vt, LEGACY_SLOTS[k].key);
        if (slot < 0) continue;
        if (LEGACY_SLOTS[k].type)
            e->pd[slot] = ld[k];
        else
            e->pi[slot] = li[k];
    }
}

/* The configuration fingerprint: compared before anything else on load. */
static void describe_config(dpdo__eng *e, dpdo__ser *s)
{
    const dpdo_algorithm_options *o = &e->o;
    cfg_str(s, "algorithm type", e->vt->name);
    cfg_i64(s, "number of nodes", e->n);
    cfg_i64(s, "dimension", e->d);
    char nm[64];
    for (int64_t i = 0; i < e->n; i++) {
        snprintf(nm, sizeof nm, "shard size of node %lld", (long long)i);
        cfg_i64(s, nm, e->q[i]);
    }
    cfg_i64(s, "option seed", (int64_t)o->seed);
    cfg_i64(s, "option randomness", o->randomness);
    cfg_i64(s, "option noise_mode", o->noise_mode);
    cfg_i64(s, "option strict", o->strict);
    cfg_f64(s, "option epsilon", o->epsilon);
    cfg_f64(s, "option delta", o->delta);
    cfg_f64(s, "option sigma", o->sigma);
    cfg_f64(s, "option lipschitz", o->lipschitz);
    cfg_f64(s, "option step_size", o->step_size);
    cfg_f64(s, "option step_power", o->step_power);
    cfg_i64(s, "option weighting", o->weighting);
    if (s->fmt == 1) {
        legacy_config(e, s);
    } else {
        int key = 0;
        const dpdo__pdef *d;
        for (int k = 0; (d = dpdo__param_at(e->vt, k, &key)) != NULL; k++) {
            if (d->live) continue; /* taken from the file, with the guard's allowances */
            snprintf(nm, sizeof nm, "parameter %s", d->name);
            if (d->type)
                cfg_f64(s, nm, e->pd[k]);
            else
                cfg_i64(s, nm, e->pi[k]);
        }
    }
    cfg_i64(s, "network edges", e->net ? e->net->m : -1);
    cfg_i64(s, "per-node activation probabilities set", e->node_p != NULL);
    for (int64_t i = 0; i < e->n && e->node_p; i++) {
        snprintf(nm, sizeof nm, "activation probability of node %lld", (long long)i);
        cfg_f64(s, nm, e->node_p[i]);
    }
    cfg_i64(s, "state blocks", e->nblk);
    for (int b = 0; b < e->nblk; b++) {
        snprintf(nm, sizeof nm, "block %d", b);
        cfg_str(s, nm, e->blk[b].name ? e->blk[b].name : "(scratch)");
        snprintf(nm, sizeof nm, "block %d rows", b);
        cfg_i64(s, nm, e->blk[b].rows);
        snprintf(nm, sizeof nm, "block %d cols", b);
        cfg_i64(s, nm, e->blk[b].cols);
    }
    cfg_i64(s, "state arena bytes", (int64_t)e->arena_bytes);
    cfg_i64(s, "policy kind", e->policy ? e->policy->kind : -2);
}

/* The node keys (e->key: 32 bytes per node; e->key_src: DPDO__KEY_NONE / _HOST / _ENTROPY); the
 * one place that knows where the engine keeps secret keys. A plain file records only which nodes
 * have a host key (compared on load: the host sets the same nodes' keys again with
 * dpdo_algorithm_set_node_key / _secret before load); an encrypted file carries the sources and
 * the keys (src, keys: scratch of n and 32 n bytes, filled on every pass). */
static void describe_keys(dpdo__eng *e, dpdo__ser *s, int encrypted, unsigned char *src,
                          unsigned char *keys)
{
    int64_t n = e->n;
    if (!encrypted) {
        for (int64_t i = 0; i < n; i++) {
            char nm[80];
            snprintf(nm, sizeof nm, "node %lld has a host key (dpdo_algorithm_set_node_key)",
                     (long long)i);
            cfg_i64(s, nm, e->key_src && e->key_src[i] == DPDO__KEY_HOST);
        }
        return;
    }
    if (s->mode == SER_WRITE) {
        for (int64_t i = 0; i < n; i++)
            src[i] = e->key_src ? e->key_src[i] : DPDO__KEY_NONE;
        if (e->key)
            memcpy(keys, e->key, 32 * (size_t)n);
        else
            memset(keys, 0, 32 * (size_t)n);
    }
    int mode = s->mode;
    if (mode == SER_CHECK) s->mode = SER_LOAD; /* scratch: read on the check pass too */
    ser_bytes(s, "node key sources", src, n);
    ser_bytes(s, "node keys", keys, 32 * n);
    s->mode = mode;
    for (int64_t i = 0; i < n && mode == SER_CHECK && !s->rc; i++)
        if (src[i] > DPDO__KEY_ENTROPY)
            ser_fail(s, DPDO_E_FORMAT, "item '%s': node %lld has key source %lld",
                     "node key sources", (long long)i, (long long)src[i]);
}

/* The policy's learned state through its type's state hook (dpdo_policy_type.state; the
 * built-in "dqn" writes its agents: weights, target network, Adam moments, replay ring,
 * pending decision). */
static int io_f64(void *ctx, const char *name, double *p, int64_t count)
{
    dpdo__ser_f64(ctx, name, p, count);
    return ((dpdo__ser *)ctx)->rc;
}
static int io_i64(void *ctx, const char *name, int64_t *p, int64_t count, int64_t lo, int64_t hi)
{
    dpdo__ser_idx(ctx, name, p, count, lo, hi);
    return ((dpdo__ser *)ctx)->rc;
}
static int io_i32(void *ctx, const char *name, int32_t *p, int64_t count)
{
    dpdo__ser_i32(ctx, name, p, count);
    return ((dpdo__ser *)ctx)->rc;
}
static int io_fail(void *ctx, const char *msg)
{
    dpdo__ser *s = ctx;
    if (!s->rc)
        s->rc =
            dpdo__err(s->err, DPDO_E_FORMAT, "%s: %s", s->mode == SER_WRITE ? "save" : "load", msg);
    return s->rc;
}

static void describe_policy(dpdo__eng *e, dpdo__ser *s)
{
    if (!e->policy || s->rc) return;
    dpdo_state_io io = {sizeof io,
                        s->mode == SER_WRITE   ? DPDO_STATE_SAVE
                        : s->mode == SER_CHECK ? DPDO_STATE_CHECK
                                               : DPDO_STATE_LOAD,
                        s,
                        io_f64,
                        io_i64,
                        io_i32,
                        io_fail};
    char msg[DPDO__ERRMSG_LEN];
    int rc = dpdo__policy_describe(e->policy, &io, msg);
    if (rc && !s->rc)
        s->rc = dpdo__err(s->err, rc, "%s: %s", s->mode == SER_WRITE ? "save" : "load", msg);
}

typedef struct run_scalars {
    int64_t v[4]; /* round, state, stop, tol_met */
} run_scalars;

static void describe_state(dpdo__eng *e, dpdo__ser *s, run_scalars *rs, int encrypted,
                           unsigned char *sflags, unsigned char *skeys, int64_t *ledger_pos)
{
    int64_t n = e->n;
    dpdo__ser_idx(s, "round", &rs->v[0], 1, 1, (int64_t)1 << 48);
    dpdo__ser_idx(s, "state", &rs->v[1], 1, DPDO_ALG_RUNNING, DPDO_ALG_DONE);
    dpdo__ser_idx(s, "stop reason", &rs->v[2], 1, DPDO_STOP_NONE, DPDO_STOP_PASSES);
    dpdo__ser_idx(s, "tolerance met", &rs->v[3], 1, 0, 1);
    /* every parameter (the live ones may have changed during the run) */
    if (s->fmt == 1) {
        legacy_values(e, s);
    } else { /* by name, in the type's listing order */
        int key = 0;
        const dpdo__pdef *d;
        char nm[80];
        for (int k = 0; (d = dpdo__param_at(e->vt, k, &key)) != NULL; k++) {
            snprintf(nm, sizeof nm, "value of parameter %s", d->name);
            if (d->type)
                dpdo__ser_f64(s, nm, &e->pd[k], 1);
            else
                dpdo__ser_i64(s, nm, &e->pi[k], 1);
        }
    }
    /* the privacy plan must come out of prepare as it did in the saved run */
    cfg_f64(s, "sigma", e->pv.sigma);
    cfg_i64(s, "private run", e->pv.private_run);
    cfg_i64(s, "privacy events", e->pv.nev);
    for (int32_t k = 0; k < e->pv.nev; k++) {
        cfg_i64(s, "event mechanism", e->pv.ev[k].mech);
        cfg_f64(s, "event sensitivity", e->pv.ev[k].sens);
        cfg_f64(s, "event noise", e->pv.ev[k].noise);
    }
    dpdo__ser_f64(s, "tolerance reference", e->tol_prev, e->d);
    dpdo__ser_idx(s, "communication counters", &e->comm[0][0], 3 * (n + 1), 0, INT64_MAX);
    ser_bytes(s, "last active", e->last_active, n);
    dpdo__ser_idx(s, "releases used", e->pv.used, n, 0, INT64_MAX);
    /* the budget guard as it stands (max-epsilon may have been lowered during the run, and the
     * allowances then depend on the ledger at that time) */
    dpdo__ser_f64(s, "guard epsilon", &e->pv.guard_eps, 1);
    dpdo__ser_idx(s, "guard allowances", e->pv.allow, n, 0, INT64_MAX);
    if (e->pv.nev > 0 && e->pv.charged) {
        dpdo__ser_idx(s, "ledger charges", e->pv.charged, (int64_t)e->pv.nev * n, 0, INT64_MAX);
        dpdo__ser_idx(s, "ledger order", ledger_pos, e->pv.nev, -1, INT64_MAX);
    }
    /* the arena as the copying commits leave it: a save moves swapped blocks back (the same
     * bytes, the same file), a load resets the pointers before the canonical image arrives */
    if (e->vt->canonical && s->mode != SER_CHECK)
        e->vt->canonical(e, e->priv, s->mode == SER_WRITE);
    ser_bytes(s, "state arena", e->arena, (int64_t)e->arena_bytes);
    describe_keys(e, s, encrypted, sflags, skeys);
    if (e->vt->ser_priv) e->vt->ser_priv(e, e->priv, s);
    describe_policy(e, s);
}

/* ---- files ------------------------------------------------------------------------------ */

static void make_header(unsigned char *h, uint32_t flags, uint64_t payload)
{
    memset(h, 0, HDR_BYTES);
    memcpy(h, MAGIC, 8);
    uint32_t w[4] = {DPDO_CHECKPOINT_FORMAT, ENDIAN_MARK, flags, 0};
    memcpy(h + 8, w, 16);
    strncpy((char *)h + 24, DPDO_VERSION_STRING, 15);
    memcpy(h + 40, &payload, 8);
}

static int opts_of(const dpdo_checkpoint_options *in, dpdo_checkpoint_options *o, char *err)
{
    dpdo_checkpoint_options_init(o, sizeof *o);
    int rc = dpdo__options_accept(o, sizeof *o, sizeof *o, in, "dpdo_checkpoint_options", err);
    for (int k = 0; !rc && k < 4; k++)
        if (o->reserved[k])
            rc = dpdo__err(err, DPDO_E_VERSION,
                           "dpdo_checkpoint_options: reserved[%d] is not zero (a field of a "
                           "newer libdpdo?)",
                           k);
    if (!rc && o->min_round < 0)
        rc = dpdo__err(err, DPDO_E_INVAL, "dpdo_checkpoint_options: min_round = %lld < 0",
                       (long long)o->min_round);
    return rc;
}

DPDO_API int dpdo_checkpoint_options_init(dpdo_checkpoint_options *o, size_t struct_size)
{
    dpdo_checkpoint_options d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    return dpdo__options_init(o, struct_size, &d, sizeof d);
}

static void ledger_positions(const dpdo__eng *e, int64_t *pos)
{
    for (int32_t k = 0; k < e->pv.nev; k++)
        pos[k] = e->ledger ? dpdo__ledger_find(e->ledger, &e->pv.ev[k]) : -1;
}

/* ---- distributed runs: one part per process and a manifest (docs/checkpoint.md) ---------- */

/* Collective agreement on a checkpoint's outcome: every process passes its status (message in
 * e->err, prefixed here with the process); all return the status and message of the lowest
 * failing process, 0 if none (dist.c). */
static int dist_agree(dpdo__eng *e, int rc, int64_t P)
{
    int64_t self = dpdo__dist_self(e);
    if (rc) {
        char tmp[DPDO__ERRMSG_LEN];
        memcpy(tmp, e->err, sizeof tmp);
        tmp[sizeof tmp - 1] = 0;
        size_t k = strncmp(tmp, "save: ", 6) == 0 || strncmp(tmp, "load: ", 6) == 0 ? 6 : 0;
        snprintf(e->err, DPDO__ERRMSG_LEN, "%.*sprocess %lld of %lld: %.200s", (int)k, tmp,
                 (long long)self, (long long)P, tmp + k);
    }
    return dpdo__dist_agree(e, rc, self);
}

/* The part of process p: path + ".p<p>" (allocated; NULL when out of memory). */
static char *part_path(const char *path, int64_t p, const char *suffix)
{
    size_t l = strlen(path) + strlen(suffix) + 32;
    char *q = dpdo__alloc_array(l, 1);
    if (q) snprintf(q, l, "%s.p%lld%s", path, (long long)p, suffix);
    return q;
}

/* What a part adds to the fingerprint: the process count, this process and the layout (compared
 * item by item, so that a refusal names the node whose process differs). */
static void describe_part(dpdo__eng *e, dpdo__ser *s, int64_t P)
{
    char nm[64];
    cfg_i64(s, "process count", P);
    cfg_i64(s, "process", dpdo__dist_self(e));
    for (int64_t i = 0; i <= e->n; i++) {
        if (i < e->n)
            snprintf(nm, sizeof nm, "process of node %lld", (long long)i);
        else
            snprintf(nm, sizeof nm, "process of the coordinator");
        cfg_i64(s, nm, dpdo__dist_proc(e, i));
    }
}

/* ---- save -------------------------------------------------------------------------------- */

static int save_checks(dpdo__eng *e, int state, const dpdo_checkpoint_options *o)
{
    if (state != DPDO_ALG_RUNNING && state != DPDO_ALG_DONE)
        return dpdo__err(e->err, DPDO_E_STATE, "save: nothing to save: the algorithm is %s",
                         state == DPDO_ALG_FAILED ? "FAILED (a round failed)"
                                                  : "READY (no round has run)");
    if (e->policy && !dpdo__policy_can_save(e->policy))
        return dpdo__err(e->err, DPDO_E_UNSUPPORTED,
                         "save: the state of a user-defined policy is not visible to the library "
                         "(its type has no state hook, dpdo_policy_type.state)");
    if (!o->key && e->o.randomness == DPDO_RANDOMNESS_SECURE && e->pv.private_run)
        return dpdo__err(e->err, DPDO_E_STATE,
                         "save: a private DPDO_RANDOMNESS_SECURE run can only be saved encrypted: "
                         "set options.key (a "
                         "%d-byte host key)",
                         DPDO_CHECKPOINT_KEY_BYTES);
    if (sodium_init() < 0)
        return dpdo__err(e->err, DPDO_E_UNSUPPORTED, "save: libsodium failed to initialise");
    return DPDO_OK;
}

/* The file image of a payload: header, [nonce], payload (encrypted under key when given),
 * BLAKE2b-256 of all that precedes it. */
static int make_image(dpdo__eng *e, const dpdo__ser *s, const unsigned char *key, uint32_t kind,
                      unsigned char **out, size_t *total)
{
    int encrypted = key != NULL;
    size_t plen = s->len + (encrypted ? TAG_BYTES : 0),
           pre = HDR_BYTES + (encrypted ? NONCE_BYTES : 0);
    *total = pre + plen + SUM_BYTES;
    unsigned char *file = dpdo__alloc_array(*total, 1);
    *out = file;
    if (!file) return dpdo__err(e->err, DPDO_E_NOMEM, "save: out of memory");
    make_header(file, (encrypted ? FLAG_ENCRYPTED : 0) | kind, plen);
    if (encrypted) {
        randombytes_buf(file + HDR_BYTES, NONCE_BYTES);
        unsigned long long clen = 0;
        crypto_aead_xchacha20poly1305_ietf_encrypt(file + pre, &clen, s->buf, s->len, file, pre,
                                                   NULL, file + HDR_BYTES, key);
    } else {
        memcpy(file + pre, s->buf, s->len);
    }
    crypto_generichash(file + pre + plen, SUM_BYTES, file, pre + plen, NULL, 0);
    return DPDO_OK;
}

/* Write the image to path + ".tmp" and fsync it; then, when final, rename it to path and fsync
 * the directory (lib/core/file.c): a completed save survives a power loss, and a crash leaves
 * the previous checkpoint or the new one. */
static int write_image(dpdo__eng *e, const char *path, const unsigned char *file, size_t total,
                       int final)
{
    size_t l = strlen(path) + 5;
    char *tmp = dpdo__alloc_array(l, 1);
    if (!tmp) return dpdo__err(e->err, DPDO_E_NOMEM, "save: out of memory");
    snprintf(tmp, l, "%s.tmp", path);
    int rc = dpdo__file_write_synced(tmp, file, total, 0, e->err, "save");
    if (!rc && final) rc = dpdo__file_rename_synced(tmp, path, e->err, "save");
    dpdo__free(tmp);
    return rc;
}

/* This process's payload (the whole fingerprint, the part's items when P > 0, the run state). */
static int save_payload(dpdo__eng *e, int state, int stop, int encrypted, int64_t P, dpdo__ser *s)
{
    run_scalars rs = {{(int64_t)e->round, state, stop, e->tol_met}};
    unsigned char *sflags = dpdo__calloc((size_t)e->n, 1);
    unsigned char *skeys = dpdo__calloc((size_t)e->n, 32);
    int64_t *lpos = dpdo__calloc((size_t)e->pv.nev + 1, sizeof *lpos);
    int rc;
    if (!sflags || !skeys || !lpos) {
        rc = dpdo__err(e->err, DPDO_E_NOMEM, "save: out of memory");
    } else {
        ledger_positions(e, lpos);
        describe_config(e, s);
        if (P > 0) describe_part(e, s, P);
        describe_state(e, s, &rs, encrypted, sflags, skeys, lpos);
        rc = s->rc;
    }
    if (skeys) sodium_memzero(skeys, 32 * (size_t)e->n);
    dpdo__free(skeys);
    dpdo__free(sflags);
    dpdo__free(lpos);
    return rc;
}

static void ser_free(dpdo__ser *s)
{
    if (s->buf) sodium_memzero(s->buf, s->cap);
    dpdo__free(s->buf);
    s->buf = NULL;
}

/* The manifest (process 0): the algorithm, the node count, the process count, the round and the
 * BLAKE2b-256 of every part (so that a part from another save, or an edited one, is refused). */
static void describe_manifest(dpdo__eng *e, dpdo__ser *s, int64_t *P, int64_t *round,
                              unsigned char *sums, int64_t Pmax)
{
    cfg_str(s, "algorithm type", e->vt->name);
    cfg_i64(s, "number of nodes", e->n);
    int mode = s->mode;
    if (mode == SER_CHECK) s->mode = SER_LOAD; /* scratch: read on the check pass too */
    dpdo__ser_idx(s, "process count", P, 1, 1, INT32_MAX);
    dpdo__ser_idx(s, "round", round, 1, 1, (int64_t)1 << 48);
    if (!s->rc && *P != Pmax)
        s->rc = dpdo__err(s->err, DPDO_E_FORMAT,
                          "load: the checkpoint set was written by a run over %lld processes; this "
                          "run has %lld (a "
                          "set resumes only on as many processes, each hosting the same nodes)",
                          (long long)*P, (long long)Pmax);
    ser_bytes(s, "part checksums", sums, SUM_BYTES * Pmax);
    s->mode = mode;
}

static int dist_save(dpdo__eng *e, int state, int stop, const char *path,
                     const dpdo_checkpoint_options *o, int rc0)
{
    int64_t P = 0;
    int rc = dpdo__dist_count(e, &P);
    if (rc) return rc;
    int64_t self = dpdo__dist_self(e);
    dpdo__ser s = {.mode = SER_WRITE, .err = e->err};
    unsigned char *file = NULL, sum[SUM_BYTES] = {0};
    size_t total = 0;
    char *part = part_path(path, self, ""), *ptmp = part_path(path, self, ".tmp");
    int64_t *sums = dpdo__calloc((size_t)P, SUM_BYTES);
    /* 1. every process writes its part to <part>.tmp */
    rc = rc0 ? rc0 : save_checks(e, state, o);
    if (!rc && (!part || !ptmp || !sums))
        rc = dpdo__err(e->err, DPDO_E_NOMEM, "save: out of memory");
    if (!rc) rc = save_payload(e, state, stop, o->key != NULL, P, &s);
    if (!rc) rc = make_image(e, &s, o->key, FLAG_PART, &file, &total);
    if (!rc) rc = write_image(e, part, file, total, 0);
    if (!rc) memcpy(sum, file + total - SUM_BYTES, SUM_BYTES);
    int written = !rc;
    if ((rc = dist_agree(e, rc, P))) goto out;
    /* 2. the parts' checksums to process 0; every part takes its name */
    memcpy((unsigned char *)sums + SUM_BYTES * (size_t)self, sum, SUM_BYTES);
    if ((rc = dpdo__dist_sum(e, sums, P * (SUM_BYTES / 8)))) goto out;
    rc = dpdo__file_rename_synced(ptmp, part, e->err, "save");
    written = 0; /* renamed, or removed by the failed rename */
    if ((rc = dist_agree(e, rc, P))) goto out;
    /* 3. the manifest, last: it names the parts, so a set is complete once it is in place */
    if (self == 0) {
        ser_free(&s);
        s = (dpdo__ser){.mode = SER_WRITE, .err = e->err};
        int64_t round = (int64_t)e->round;
        dpdo__free(file);
        file = NULL;
        describe_manifest(e, &s, &P, &round, (unsigned char *)sums, P);
        rc = s.rc;
        if (!rc) rc = make_image(e, &s, o->key, FLAG_MANIFEST, &file, &total);
        if (!rc) rc = write_image(e, path, file, total, 1);
    }
    rc = dist_agree(e, rc, P);
out:
    if (written) remove(ptmp);
    ser_free(&s);
    dpdo__free(file);
    dpdo__free(part);
    dpdo__free(ptmp);
    dpdo__free(sums);
    return rc;
}

int dpdo__ckpt_save(dpdo__eng *e, int state, int stop, const char *path,
                    const dpdo_checkpoint_options *opts)
{
    dpdo_checkpoint_options o;
    int rc = opts_of(opts, &o, e->err);
    if (e->dist)
        return dist_save(e, state, stop, path, &o, rc); /* collective: bad options agreed on too */
    if (rc) return rc;
    if ((rc = save_checks(e, state, &o))) return rc;
    dpdo__ser s = {.mode = SER_WRITE, .err = e->err};
    unsigned char *file = NULL;
    size_t total = 0;
    rc = save_payload(e, state, stop, o.key != NULL, 0, &s);
    if (!rc) rc = make_image(e, &s, o.key, 0, &file, &total);
    if (!rc) rc = write_image(e, path, file, total, 1);
    ser_free(&s);
    dpdo__free(file);
    return rc;
}

/* Verify a whole file image (header, size, checksum, decryption); *payload (plain, owned by the
 * caller) on success. name: for messages. */
static int check_header(dpdo__eng *e, const char *name, const unsigned char *buf, size_t size,
                        int *encrypted, uint64_t *payload_len, uint32_t *kind, uint32_t *fmt)
{
    if (size < 8 || memcmp(buf, MAGIC, 8) != 0)
        return dpdo__err(e->err, DPDO_E_FORMAT,
                         "load: %s is not a libdpdo checkpoint (no DPDOCKPT magic)", name);
    if (size < HDR_BYTES)
        return dpdo__err(e->err, DPDO_E_FORMAT,
                         "load: %s is truncated (%zu bytes: the header alone has %d)", name, size,
                         HDR_BYTES);
    uint32_t w[4];
    memcpy(w, buf + 8, 16);
    if (w[1] != ENDIAN_MARK)
        return dpdo__err(e->err, DPDO_E_FORMAT,
                         "load: %s was written on a machine of another byte order", name);
    if (w[0] != DPDO_CHECKPOINT_FORMAT && w[0] != 1)
        return dpdo__err(e->err, DPDO_E_FORMAT,
                         "load: %s has checkpoint format %u; this library reads formats 1 and %d",
                         name, (unsigned)w[0], DPDO_CHECKPOINT_FORMAT);
    char ver[17];
    memcpy(ver, buf + 24, 16);
    ver[16] = 0;
    for (int k = 0; ver[k]; k++)
        if (ver[k] < 32 || ver[k] > 126) ver[k] = '?';
    /* format 1 is libdpdo 0.2's (parameters by slot position); a newer format, this library's */
    if (w[0] == 1 ? strncmp(ver, "0.2.", 4) != 0 : strcmp(ver, DPDO_VERSION_STRING) != 0)
        return dpdo__err(e->err, DPDO_E_FORMAT,
                         "load: %s was written by libdpdo %s; this is libdpdo %s (it reads format "
                         "%u from libdpdo 0.2 and its own)",
                         name, ver, DPDO_VERSION_STRING, (unsigned)w[0]);
    *fmt = w[0];
    if ((w[2] & ~(FLAG_ENCRYPTED | FLAG_KIND)) || (w[2] & FLAG_KIND) == FLAG_KIND)
        return dpdo__err(e->err, DPDO_E_FORMAT, "load: %s: unknown flags %#x", name,
                         (unsigned)w[2]);
    *encrypted = (w[2] & FLAG_ENCRYPTED) != 0;
    *kind = w[2] & FLAG_KIND;
    *payload_len = get_u64(buf + 40);
    return DPDO_OK;
}

static int verify_image(dpdo__eng *e, const char *name, const unsigned char *buf, size_t size,
                        const dpdo_checkpoint_options *o, unsigned char **payload, size_t *plen,
                        int *encrypted, uint32_t *kind, uint32_t *fmt, unsigned char *sum_out)
{
    *payload = NULL;
    uint64_t pl = 0;
    int rc = check_header(e, name, buf, size, encrypted, &pl, kind, fmt);
    if (rc) return rc;
    size_t pre = HDR_BYTES + (*encrypted ? NONCE_BYTES : 0);
    if (pl > SIZE_MAX / 2 || size != pre + pl + SUM_BYTES)
        return dpdo__err(e->err, DPDO_E_FORMAT,
                         "load: %s is %s: %zu bytes where the header announces %llu", name,
                         pl <= SIZE_MAX / 2 && size < pre + pl + SUM_BYTES ? "truncated"
                                                                           : "of the wrong size",
                         size,
                         pl > SIZE_MAX / 2 ? (unsigned long long)pl
                                           : (unsigned long long)(pre + pl + SUM_BYTES));
    if (sodium_init() < 0)
        return dpdo__err(e->err, DPDO_E_UNSUPPORTED, "load: libsodium failed to initialise");
    unsigned char sum[SUM_BYTES];
    crypto_generichash(sum, SUM_BYTES, buf, size - SUM_BYTES, NULL, 0);
    if (sodium_memcmp(sum, buf + size - SUM_BYTES, SUM_BYTES) != 0)
        return dpdo__err(e->err, DPDO_E_FORMAT,
                         "load: %s: checksum mismatch (the file was changed or damaged)", name);
    if (sum_out) memcpy(sum_out, sum, SUM_BYTES);
    if (*encrypted && !o->key)
        return dpdo__err(e->err, DPDO_E_FORMAT,
                         "load: %s is encrypted: set options.key to the host key", name);
    if (!*encrypted && o->key)
        return dpdo__err(e->err, DPDO_E_FORMAT,
                         "load: %s is not encrypted but a host key was given", name);
    if (*encrypted && pl < TAG_BYTES)
        return dpdo__err(e->err, DPDO_E_FORMAT, "load: %s: payload too short", name);
    unsigned char *plain = dpdo__alloc_array((size_t)pl + 1, 1);
    if (!plain) return dpdo__err(e->err, DPDO_E_NOMEM, "load: out of memory");
    if (*encrypted) {
        unsigned long long ml = 0;
        if (crypto_aead_xchacha20poly1305_ietf_decrypt(plain, &ml, NULL, buf + pre, pl, buf, pre,
                                                       buf + HDR_BYTES, o->key) != 0) {
            dpdo__free(plain);
            return dpdo__err(e->err, DPDO_E_FORMAT,
                             "load: %s: authentication failed (wrong host key?)", name);
        }
        *plen = (size_t)ml;
    } else {
        memcpy(plain, buf + pre, (size_t)pl);
        *plen = (size_t)pl;
    }
    *payload = plain;
    return DPDO_OK;
}

/* Read the file (only as many bytes as its header announces) and verify it. */
static int read_verified(dpdo__eng *e, const char *path, const dpdo_checkpoint_options *o,
                         unsigned char **payload, size_t *plen, int *encrypted, uint32_t *kind,
                         uint32_t *fmt, unsigned char *sum_out)
{
    *payload = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return dpdo__err(e->err, DPDO_E_IO, "load: cannot open %s: %s", path, strerror(errno));
    unsigned char h[HDR_BYTES];
    unsigned char *buf = NULL;
    int rc;
    size_t got = fread(h, 1, HDR_BYTES, f);
    uint64_t pl = 0;
    if ((rc = check_header(e, path, h, got, encrypted, &pl, kind, fmt))) {
        fclose(f);
        return rc;
    }
    if (pl > SIZE_MAX / 4) {
        fclose(f);
        return dpdo__err(e->err, DPDO_E_FORMAT, "load: %s: the header announces %llu payload bytes",
                         path, (unsigned long long)pl);
    }
    /* the header is valid: the announced size bounds what is read */
    size_t want = HDR_BYTES + (*encrypted ? NONCE_BYTES : 0) + (size_t)pl + SUM_BYTES;
    long fsz = -1;
    if (fseek(f, 0, SEEK_END) == 0) fsz = ftell(f);
    if (fsz < 0) {
        fclose(f);
        return dpdo__err(e->err, DPDO_E_IO, "load: %s: cannot seek (not a regular file?)", path);
    }
    size_t have = (size_t)fsz < want ? (size_t)fsz : want;
    if ((size_t)fsz > want) {
        fclose(f);
        return dpdo__err(e->err, DPDO_E_FORMAT,
                         "load: %s is of the wrong size: %ld bytes where the header announces %zu",
                         path, fsz, want);
    }
    buf = dpdo__alloc_array(have ? have : 1, 1);
    if (!buf) {
        fclose(f);
        return dpdo__err(e->err, DPDO_E_NOMEM, "load: out of memory (%zu bytes)", have);
    }
    if (fseek(f, 0, SEEK_SET) != 0 || fread(buf, 1, have, f) != have)
        rc = dpdo__err(e->err, DPDO_E_IO, "load: cannot read %s", path);
    else
        rc = verify_image(e, path, buf, have, o, payload, plen, encrypted, kind, fmt, sum_out);
    dpdo__free(buf);
    fclose(f);
    return rc;
}

int dpdo__ckpt_load(dpdo__eng *e, int *state, int *stop, const char *path,
                    const unsigned char *image, size_t image_size,
                    const dpdo_checkpoint_options *opts, int (*prepare)(void *), void *prep_arg)
{
    dpdo_checkpoint_options o;
    int rc = opts_of(opts, &o, e->err);
    int64_t P = 0;
    /* distributed: collective from here on; local failures are agreed on before anything is
     * installed, so that every process refuses (with the lowest failing process's message) */
    if (e->dist && (rc = dpdo__dist_count(e, &P))) return rc;
    if (!e->dist && rc) return rc;
    if (!rc && (*state != DPDO_ALG_READY || e->round != 0))
        rc = dpdo__err(e->err, DPDO_E_STATE,
                       "load: the algorithm must be READY at round 0 (freshly set up, or reset)");
    if (!rc && e->dist && !path)
        rc = dpdo__err(e->err, DPDO_E_UNSUPPORTED, "load: a distributed run loads from files only");
    if (rc && !e->dist) return rc;
    unsigned char *payload = NULL, *mpay = NULL, psum[SUM_BYTES];
    size_t plen = 0, mlen = 0;
    int encrypted = 0, menc = 0;
    uint32_t kind = 0, fmt = DPDO_CHECKPOINT_FORMAT;
    unsigned char *sums = NULL;
    char *part = NULL;
    if (!rc && e->dist) { /* the manifest, then this process's part */
        sums = dpdo__calloc((size_t)P, SUM_BYTES);
        part = part_path(path, dpdo__dist_self(e), "");
        if (!sums || !part) rc = dpdo__err(e->err, DPDO_E_NOMEM, "load: out of memory");
        if (!rc) rc = read_verified(e, path, &o, &mpay, &mlen, &menc, &kind, &fmt, NULL);
        if (!rc && kind != FLAG_MANIFEST)
            rc = dpdo__err(
                e->err, DPDO_E_FORMAT,
                kind
                    ? "load: %s is one process's part of a checkpoint set: give the path of the "
                      "set "
                      "(its manifest, without the .p<process> suffix)"
                    : "load: %s is the checkpoint of a run in one process; this run is spread over "
                      "processes (a checkpoint resumes only on the layout it was saved with)",
                path);
        if (!rc) {
            dpdo__ser m = {.mode = SER_CHECK, .err = e->err, .buf = mpay, .len = mlen, .cap = mlen};
            int64_t Pm = 0, round = 0;
            describe_manifest(e, &m, &Pm, &round, sums, P);
            if (!m.rc && m.pos != m.len)
                m.rc = dpdo__err(e->err, DPDO_E_FORMAT,
                                 "load: %s: %zu unexpected bytes after the last item", path,
                                 m.len - m.pos);
            rc = m.rc;
        }
        if (!rc) rc = read_verified(e, part, &o, &payload, &plen, &encrypted, &kind, &fmt, psum);
        if (!rc && kind != FLAG_PART)
            rc = dpdo__err(e->err, DPDO_E_FORMAT, "load: %s is not a part of a checkpoint set",
                           part);
        if (!rc &&
            sodium_memcmp(psum, sums + SUM_BYTES * (size_t)dpdo__dist_self(e), SUM_BYTES) != 0)
            rc = dpdo__err(
                e->err, DPDO_E_FORMAT,
                "load: %s is not the part the manifest %s names (its checksum differs: a file from "
                "another save, or a replaced one)",
                part, path);
        if (!rc && encrypted != menc)
            rc = dpdo__err(e->err, DPDO_E_FORMAT, "load: %s and its manifest differ in encryption",
                           part);
    } else if (!rc) {
        rc = path ? read_verified(e, path, &o, &payload, &plen, &encrypted, &kind, &fmt, NULL)
                  : verify_image(e, "the image", image, image_size, &o, &payload, &plen, &encrypted,
                                 &kind, &fmt, NULL);
        if (!rc && kind)
            rc = dpdo__err(
                e->err, DPDO_E_UNSUPPORTED,
                "load: %s is %s of a distributed run: load it on as many processes, with the same "
                "transport and layout attached",
                path ? path : "the image",
                kind == FLAG_MANIFEST ? "the manifest of the checkpoint"
                                      : "one process's part of the checkpoint");
        if (rc) {
            if (payload) sodium_memzero(payload, plen);
            dpdo__free(payload);
            return rc;
        }
    }
    dpdo__ser s = {.mode = SER_CHECK,
                   .err = e->err,
                   .buf = payload,
                   .len = plen,
                   .cap = plen,
                   .fmt = fmt == DPDO_CHECKPOINT_FORMAT ? 0 : (int)fmt};
    unsigned char *sflags = dpdo__calloc((size_t)e->n, 1);
    unsigned char *skeys = dpdo__calloc((size_t)e->n, 32);
    int64_t *lpos = NULL;
    size_t state_at = 0;
    run_scalars rs = {{0, 0, 0, 0}};
    int any_key = 0;
    if (!rc && (!sflags || !skeys)) rc = dpdo__err(e->err, DPDO_E_NOMEM, "load: out of memory");
    if (!rc) {
        describe_config(e, &s);
        if (e->dist) describe_part(e, &s, P);
        rc = s.rc;
    }
    if (!rc) {
        state_at = s.pos;
        rc = prepare(prep_arg); /* sigma, events, private arrays as in the saved run */
    }
    if (!rc) {
        lpos = dpdo__calloc((size_t)e->pv.nev + 1, sizeof *lpos);
        if (!lpos) rc = dpdo__err(e->err, DPDO_E_NOMEM, "load: out of memory");
    }
    if (!rc) {
        describe_state(e, &s, &rs, encrypted, sflags, skeys, lpos);
        if (!s.rc && s.pos != s.len)
            s.rc = dpdo__err(e->err, DPDO_E_FORMAT,
                             "load: %zu unexpected bytes after the last item", s.len - s.pos);
        rc = s.rc;
    }
    if (!rc && o.min_round > 0) {
        /* the round is the state's first item: read it alone (the check pass stores nothing) */
        dpdo__ser r = s;
        r.mode = SER_LOAD;
        r.pos = state_at;
        dpdo__ser_idx(&r, "round", &rs.v[0], 1, 1, (int64_t)1 << 48);
        rc = r.rc;
    }
    if (!rc && rs.v[0] < o.min_round)
        rc = dpdo__err(e->err, DPDO_E_FORMAT,
                       "load: stale checkpoint: round %lld is older than min_round %lld (a "
                       "rolled-back file): refused",
                       (long long)rs.v[0], (long long)o.min_round);
    /* keys: without encryption the host has set the same nodes' keys (compared above); an encrypted
     * file's keys need the engine's key table */
    for (int64_t i = 0; !rc && i < e->n && encrypted; i++)
        any_key |= sflags[i] != DPDO__KEY_NONE;
    if (!rc && any_key) rc = dpdo__eng_keys_alloc(e);
    if (!rc && e->ledger &&
        e->pv.nev > 0) { /* prepare reserved this already; kept for hosts that prepared long ago */
        if ((rc = dpdo__ledger_reserve(e->ledger, e->pv.nev)))
            rc = dpdo__err(e->err, rc, "load: ledger: %s", dpdo_ledger_errmsg(e->ledger));
    }
    if (e->dist) rc = dist_agree(e, rc, P);
    if (rc) goto out;
    /* install: nothing below can fail */
    s.mode = SER_LOAD;
    s.pos = state_at;
    describe_state(e, &s, &rs, encrypted, sflags, skeys, lpos);
    if (encrypted && e->key) {
        memcpy(e->key, skeys, 32 * (size_t)e->n);
        memcpy(e->key_src, sflags, (size_t)e->n);
        e->keyed = any_key;
    }
    e->round = (uint64_t)rs.v[0];
    e->tol_met = (int)rs.v[3];
    *state = (int)rs.v[1];
    *stop = (int)rs.v[2];
    /* this run's charges go back into the ledger, events in the order they first appeared there */
    if (e->ledger && e->pv.nev > 0 && e->pv.charged) {
        for (int32_t done = 0; done < e->pv.nev; done++) {
            int32_t best = -1;
            for (int32_t k = 0; k < e->pv.nev; k++) {
                if (lpos[k] == INT64_MIN) continue;
                if (best < 0 || (uint64_t)lpos[k] < (uint64_t)lpos[best])
                    best = k; /* -1 (never charged) last */
            }
            if (best < 0) break;
            for (int64_t i = 0; i < e->n; i++) {
                int64_t c = e->pv.charged[(size_t)best * (size_t)e->n + (size_t)i];
                if (c > 0) dpdo__ledger_charge(e->ledger, &e->pv.ev[best], c, &i, 1);
            }
            lpos[best] = INT64_MIN;
        }
    }
    rc = DPDO_OK;
out:
    if (payload) sodium_memzero(payload, plen);
    dpdo__free(payload);
    dpdo__free(mpay);
    dpdo__free(sums);
    dpdo__free(part);
    if (skeys) sodium_memzero(skeys, 32 * (size_t)e->n);
    dpdo__free(skeys);
    dpdo__free(sflags);
    dpdo__free(lpos);
    return rc;
}
