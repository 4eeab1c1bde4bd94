/* SPDX-License-Identifier: BSD-3-Clause */
/* Sampling objects, events and per-node ledgers (with text serialisation). */
#include "privacy_impl.h"
#include <math.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- sampling ---------------------------------------------------------------- */

int dpdo__sampling_check(const dpdo__sampling_desc *d, char *err)
{
    switch (d->kind) {
    case DPDO_SAMPLING_NONE:
        return DPDO_OK;
    case DPDO_SAMPLING_POISSON:
        if (!(d->q > 0 && d->q <= 1))
            return dpdo__err(err, DPDO_E_INVAL, "Poisson rate q = %g is not in (0, 1]", d->q);
        return DPDO_OK;
    case DPDO_SAMPLING_WOR:
        if (d->n < 1 || d->m < 1 || d->m > d->n)
            return dpdo__err(err, DPDO_E_INVAL,
                             "without replacement needs 1 <= m <= n (got m = %lld, n = %lld)",
                             (long long)d->m, (long long)d->n);
        return DPDO_OK;
    default:
        return dpdo__err(err, DPDO_E_INVAL, "unknown sampling kind %d", (int)d->kind);
    }
}

int dpdo_sampling_create(dpdo_sampling **out)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    dpdo_sampling *s = dpdo__calloc(1, sizeof *s);
    if (!s) return DPDO_E_NOMEM;
    s->magic = DPDO__MAGIC_SAMPLING;
    s->d.kind = DPDO_SAMPLING_NONE;
    s->d.q = 1.0;
    *out = s;
    return DPDO_OK;
}

void dpdo_sampling_destroy(dpdo_sampling *s)
{
    if (!s || !DPDO__LIVE(s, DPDO__MAGIC_SAMPLING)) return; /* NULL or destroyed */
    DPDO__KILL(s);
    dpdo__free(s);
}

const char *dpdo_sampling_errmsg(const dpdo_sampling *s)
{
    return s ? s->errmsg : DPDO__NULL_TEXT("dpdo_sampling_errmsg", "s");
}

int dpdo_sampling_set_none(dpdo_sampling *s)
{
    if (!s) return DPDO_E_INVAL;
    dpdo__err_clear(s->errmsg);
    memset(&s->d, 0, sizeof s->d);
    s->d.kind = DPDO_SAMPLING_NONE;
    s->d.q = 1.0;
    return DPDO_OK;
}

int dpdo_sampling_set_poisson(dpdo_sampling *s, double q)
{
    if (!s) return DPDO_E_INVAL;
    dpdo__sampling_desc d = {DPDO_SAMPLING_POISSON, q, 0, 0};
    int rc = dpdo__sampling_check(&d, s->errmsg);
    if (rc) return rc;
    dpdo__err_clear(s->errmsg);
    s->d = d;
    return DPDO_OK;
}

int dpdo_sampling_set_wor(dpdo_sampling *s, int64_t n, int64_t m)
{
    if (!s) return DPDO_E_INVAL;
    dpdo__sampling_desc d = {DPDO_SAMPLING_WOR, 0.0, n, m};
    int rc = dpdo__sampling_check(&d, s->errmsg);
    if (rc) return rc;
    d.q = (double)m / (double)n;
    dpdo__err_clear(s->errmsg);
    s->d = d;
    return DPDO_OK;
}

int dpdo_sampling_kind(const dpdo_sampling *s)
{
    return s ? (int)s->d.kind : -1;
}
double dpdo_sampling_rate(const dpdo_sampling *s)
{
    return s ? s->d.q : NAN;
}

/* ---- events ------------------------------------------------------------------ */

int dpdo__event_make(dpdo__event_desc *out, int mech, const dpdo__sampling_desc *samp, double sens,
                     double noise, char *err)
{
    const char *what = mech == DPDO_MECH_GAUSSIAN || mech == DPDO_MECH_DISCRETE_GAUSSIAN ||
                               mech == DPDO_MECH_DISCRETE_GAUSSIAN_FINE
                           ? "sigma"
                           : "Laplace scale";
    if (mech < DPDO_MECH_GAUSSIAN || mech > DPDO_MECH_DISCRETE_GAUSSIAN_FINE)
        return dpdo__err(err, DPDO_E_INVAL, "mechanism %d is not a DPDO_MECH_* value", mech);
    if (!(sens > 0) || !isfinite(sens))
        return dpdo__err(err, DPDO_E_INVAL, "sensitivity = %g must be finite and > 0", sens);
    if (!(noise > 0) || !isfinite(noise))
        return dpdo__err(err, DPDO_E_INVAL, "%s = %g must be finite and > 0", what, noise);
    dpdo__event_desc e;
    memset(&e, 0, sizeof e);
    e.mech = mech;
    if (samp) {
        int rc = dpdo__sampling_check(samp, err);
        if (rc) return rc;
        e.samp = *samp;
    } else {
        e.samp.kind = DPDO_SAMPLING_NONE;
        e.samp.q = 1.0;
    }
    e.sens = sens;
    e.noise = noise;
    *out = e;
    return DPDO_OK;
}

int dpdo_event_create(dpdo_event **out)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    dpdo_event *e = dpdo__calloc(1, sizeof *e);
    if (!e) return DPDO_E_NOMEM;
    e->magic = DPDO__MAGIC_EVENT;
    *out = e;
    return DPDO_OK;
}

void dpdo_event_destroy(dpdo_event *ev)
{
    if (!ev || !DPDO__LIVE(ev, DPDO__MAGIC_EVENT)) return; /* NULL or destroyed */
    DPDO__KILL(ev);
    dpdo__free(ev);
}
const char *dpdo_event_errmsg(const dpdo_event *ev)
{
    return ev ? ev->errmsg : DPDO__NULL_TEXT("dpdo_event_errmsg", "ev");
}

static int event_set(dpdo_event *ev, int mech, const dpdo_sampling *s, double sens, double noise)
{
    if (!ev) return DPDO_E_INVAL;
    dpdo__event_desc d;
    int rc = dpdo__event_make(&d, mech, s ? &s->d : NULL, sens, noise, ev->errmsg);
    if (rc) return rc;
    dpdo__err_clear(ev->errmsg);
    ev->d = d;
    return DPDO_OK;
}

int dpdo_event_set_gaussian(dpdo_event *ev, const dpdo_sampling *s, double sens, double sigma)
{
    return event_set(ev, DPDO_MECH_GAUSSIAN, s, sens, sigma);
}

int dpdo_event_set_laplace(dpdo_event *ev, const dpdo_sampling *s, double sens, double scale)
{
    return event_set(ev, DPDO_MECH_LAPLACE, s, sens, scale);
}

int dpdo_event_set_discrete_gaussian(dpdo_event *ev, const dpdo_sampling *s, double sens,
                                     double sigma)
{
    return event_set(ev, DPDO_MECH_DISCRETE_GAUSSIAN, s, sens, sigma);
}

int dpdo_event_set_discrete_laplace(dpdo_event *ev, const dpdo_sampling *s, double sens,
                                    double scale)
{
    return event_set(ev, DPDO_MECH_DISCRETE_LAPLACE, s, sens, scale);
}

/* ---- ledger ------------------------------------------------------------------ */

#define MAX_NODES ((int64_t)1 << 31)

int dpdo_ledger_create(dpdo_ledger **out, int64_t n_nodes)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (n_nodes < 1 || n_nodes > MAX_NODES) return DPDO_E_INVAL;
    dpdo_ledger *l = dpdo__calloc(1, sizeof *l);
    if (!l) return DPDO_E_NOMEM;
    l->magic = DPDO__MAGIC_LEDGER;
    l->n_nodes = n_nodes;
    l->cap = 4;
    l->ev = dpdo__alloc_array((size_t)l->cap, sizeof *l->ev);
    l->counts = dpdo__calloc((size_t)(l->cap * n_nodes), sizeof *l->counts);
    if (!l->ev || !l->counts) {
        dpdo__free(l->ev);
        dpdo__free(l->counts);
        dpdo__free(l);
        return DPDO_E_NOMEM;
    }
    *out = l;
    return DPDO_OK;
}

static void ledger_free(dpdo_ledger *l)
{
    dpdo__free(l->ev);
    dpdo__free(l->counts);
    dpdo__free(l);
}

void dpdo_ledger_destroy(dpdo_ledger *l)
{
    if (!l || !DPDO__LIVE(l, DPDO__MAGIC_LEDGER)) return; /* NULL or destroyed */
    /* refused while a call runs on the handle (core_impl.h, dpdo__busy) */
    if (dpdo__busy_enter(&l->busy, 1, l->errmsg, "dpdo_ledger_destroy") != 1) return;
    DPDO__KILL(l);
    if (l->borrowers > 0) {
        l->doomed = 1; /* freed by the last accountant (dpdo__ledger_release) */
        return;
    }
    ledger_free(l);
}

void dpdo__ledger_release(dpdo_ledger *l)
{
    if (l && --l->borrowers == 0 && l->doomed) ledger_free(l);
}

const char *dpdo_ledger_errmsg(const dpdo_ledger *l)
{
    return !l                                  ? DPDO__NULL_TEXT("dpdo_ledger_errmsg", "l")
           : DPDO__LIVE(l, DPDO__MAGIC_LEDGER) ? l->errmsg
                                               : DPDO__DEAD_TEXT("dpdo_ledger_errmsg", "l");
}
int64_t dpdo_ledger_nodes(const dpdo_ledger *l)
{
    return l ? l->n_nodes : 0;
}
int64_t dpdo_ledger_events(const dpdo_ledger *l)
{
    return l ? l->n_events : 0;
}

int64_t dpdo_ledger_charges(const dpdo_ledger *l, int64_t node)
{
    if (!l || node < 0 || node >= l->n_nodes) return -1;
    int64_t s = 0; /* saturates at INT64_MAX (cells hold at most 2^53 each) */
    for (int64_t k = 0; k < l->n_events; k++) {
        int64_t c = l->counts[k * l->n_nodes + node];
        s = s > INT64_MAX - c ? INT64_MAX : s + c;
    }
    return s;
}

static int desc_equal(const dpdo__event_desc *a, const dpdo__event_desc *b)
{
    return a->mech == b->mech && a->samp.kind == b->samp.kind && a->samp.q == b->samp.q &&
           a->samp.n == b->samp.n && a->samp.m == b->samp.m && a->sens == b->sens &&
           a->noise == b->noise;
}

/* index of ev in the ledger, or -1 (searched from the newest: rounds repeat
 * the latest event) */
static int64_t find_event(const dpdo_ledger *l, const dpdo__event_desc *ev)
{
    for (int64_t k = l->n_events - 1; k >= 0; k--)
        if (desc_equal(&l->ev[k], ev)) return k;
    return -1;
}

static int grow(dpdo_ledger *l, int64_t need)
{
    if (need <= l->cap) return DPDO_OK;
    int64_t nc = l->cap * 2;
    if (nc < need) nc = need;
    size_t cells;
    if (!dpdo__mul_size((size_t)nc, (size_t)l->n_nodes, &cells))
        return dpdo__err(l->errmsg, DPDO_E_NOMEM, "ledger too large");
    dpdo__event_desc *ev = dpdo__alloc_array((size_t)nc, sizeof *ev);
    int64_t *c = dpdo__calloc(cells, sizeof *c);
    if (!ev || !c) {
        dpdo__free(ev);
        dpdo__free(c);
        return dpdo__err(l->errmsg, DPDO_E_NOMEM, "out of memory growing the ledger to %lld events",
                         (long long)nc);
    }
    if (l->n_events) {
        memcpy(ev, l->ev, (size_t)l->n_events * sizeof *ev);
        memcpy(c, l->counts, (size_t)(l->n_events * l->n_nodes) * sizeof *c);
    }
    dpdo__free(l->ev);
    dpdo__free(l->counts);
    l->ev = ev;
    l->counts = c;
    l->cap = nc;
    return DPDO_OK;
}

int dpdo__ledger_charge(dpdo_ledger *l, const dpdo__event_desc *ev, int64_t count,
                        const int64_t *nodes, int64_t n_sel)
{
    if (ev->mech < DPDO_MECH_GAUSSIAN || ev->mech > DPDO_MECH_DISCRETE_GAUSSIAN_FINE)
        return dpdo__err(l->errmsg, DPDO_E_INVAL, "event is not set");
    if (count < 1)
        return dpdo__err(l->errmsg, DPDO_E_INVAL, "count = %lld must be >= 1", (long long)count);
    int all = (nodes == NULL);
    if (all && n_sel != -1)
        return dpdo__err(l->errmsg, DPDO_E_INVAL, "nodes is NULL but n_sel = %lld (use -1 for all)",
                         (long long)n_sel);
    if (!all && (n_sel < 0 || n_sel > l->n_nodes))
        return dpdo__err(l->errmsg, DPDO_E_INVAL, "n_sel = %lld is not in [0, %lld]",
                         (long long)n_sel, (long long)l->n_nodes);
    int64_t k = find_event(l, ev);
    int64_t kk = k >= 0 ? k : l->n_events;
    /* validate everything before changing anything */
    int64_t ns = all ? l->n_nodes : n_sel;
    for (int64_t i = 0; i < ns; i++) {
        int64_t node = all ? i : nodes[i];
        if (node < 0 || node >= l->n_nodes)
            return dpdo__err(l->errmsg, DPDO_E_INVAL, "nodes[%lld] = %lld is not in [0, %lld)",
                             (long long)i, (long long)node, (long long)l->n_nodes);
        if (count > DPDO__LEDGER_COUNT_MAX ||
            (k >= 0 && l->counts[k * l->n_nodes + node] > DPDO__LEDGER_COUNT_MAX - count))
            return dpdo__err(l->errmsg, DPDO_E_INVAL,
                             "node %lld: charge counter overflow (a cell holds at most 2^53)",
                             (long long)node);
    }
    if (k < 0) {
        int rc = grow(l, l->n_events + 1);
        if (rc) return rc;
        l->ev[kk] = *ev;
        memset(l->counts + kk * l->n_nodes, 0, (size_t)l->n_nodes * sizeof *l->counts);
    }
    int64_t *row = l->counts + kk * l->n_nodes;
    if (!all) { /* distinct nodes: mark visited cells by complementing them (no allocation) */
        for (int64_t i = 0; i < ns; i++) {
            if (row[nodes[i]] < 0) {
                for (int64_t j = 0; j < i; j++)
                    row[nodes[j]] = ~row[nodes[j]];
                return dpdo__err(l->errmsg, DPDO_E_INVAL, "node %lld is listed twice",
                                 (long long)nodes[i]);
            }
            row[nodes[i]] = ~row[nodes[i]];
        }
        for (int64_t i = 0; i < ns; i++)
            row[nodes[i]] = ~row[nodes[i]];
    }
    if (k < 0) l->n_events++;
    for (int64_t i = 0; i < ns; i++)
        row[all ? i : nodes[i]] += count;
    l->seq++;
    dpdo__err_clear(l->errmsg);
    return DPDO_OK;
}

static int ledger_charge_body(dpdo_ledger *l, const dpdo_event *ev, int64_t count,
                              const int64_t *nodes, int64_t n_sel)
{
    if (!l) return DPDO_E_INVAL;
    if (!ev) return dpdo__err(l->errmsg, DPDO_E_INVAL, "event is NULL");
    return dpdo__ledger_charge(l, &ev->d, count, nodes, n_sel);
}

int dpdo_ledger_charge(dpdo_ledger *l, const dpdo_event *ev, int64_t count, const int64_t *nodes,
                       int64_t n_sel)
{
    DPDO__GUARDED(l, DPDO__MAGIC_LEDGER, 1, "dpdo_ledger_charge",
                  ledger_charge_body(l, ev, count, nodes, n_sel));
}

int dpdo__ledger_reserve(dpdo_ledger *l, int64_t extra)
{
    if (extra < 0 || extra > INT64_MAX / 2 - l->n_events)
        return dpdo__err(l->errmsg, DPDO_E_INVAL, "reserve: extra = %lld out of range",
                         (long long)extra);
    return grow(l, l->n_events + extra);
}

int64_t dpdo__ledger_count(const dpdo_ledger *l, const dpdo__event_desc *ev, int64_t node)
{
    int64_t k = find_event(l, ev);
    if (k < 0 || node < 0 || node >= l->n_nodes) return 0;
    return l->counts[k * l->n_nodes + node];
}

int dpdo__ledger_discharge(dpdo_ledger *l, const dpdo__event_desc *ev, int64_t count,
                           const int64_t *nodes, int64_t n_sel)
{
    if (count < 0)
        return dpdo__err(l->errmsg, DPDO_E_INVAL, "discharge: count = %lld < 0", (long long)count);
    if (count == 0 || n_sel == 0) return DPDO_OK;
    int64_t k = find_event(l, ev);
    if (k < 0)
        return dpdo__err(l->errmsg, DPDO_E_STATE, "discharge: the event is not in the ledger");
    int all = (nodes == NULL);
    int64_t ns = all ? l->n_nodes : n_sel;
    int64_t *row = l->counts + k * l->n_nodes;
    for (int64_t i = 0; i < ns; i++) {
        int64_t node = all ? i : nodes[i];
        if (node < 0 || node >= l->n_nodes)
            return dpdo__err(l->errmsg, DPDO_E_INVAL, "discharge: node %lld out of range",
                             (long long)node);
        if (row[node] < count)
            return dpdo__err(
                l->errmsg, DPDO_E_STATE,
                "discharge: node %lld holds %lld charges of the event, fewer than %lld",
                (long long)node, (long long)row[node], (long long)count);
    }
    for (int64_t i = 0; i < ns; i++)
        row[all ? i : nodes[i]] -= count;
    l->seq++;
    /* drop trailing events whose counts all went back to 0, so that a charge followed by its
     * discharge leaves the ledger (and its saved text) as it was */
    while (l->n_events > 0) {
        const int64_t *last = l->counts + (l->n_events - 1) * l->n_nodes;
        int64_t j = 0;
        while (j < l->n_nodes && last[j] == 0)
            j++;
        if (j < l->n_nodes) break;
        l->n_events--;
    }
    return DPDO_OK;
}

static int ledger_reset_body(dpdo_ledger *l)
{
    if (!l) return DPDO_E_INVAL;
    l->n_events = 0;
    l->seq++;
    dpdo__err_clear(l->errmsg);
    return DPDO_OK;
}

int dpdo_ledger_reset(dpdo_ledger *l)
{
    DPDO__GUARDED(l, DPDO__MAGIC_LEDGER, 1, "dpdo_ledger_reset", ledger_reset_body(l));
}

/* ---- serialisation -------------------------------------------------------------
 * Plain (no key):                     Authenticated (dpdo_ledger_set_key):
 * dpdo-ledger 1                       dpdo-ledger 2
 * nodes N                             nodes N
 * events K                            run <32 hex digits>
 * event <mech> <kind> <q %a> <n> <m> <sens %a> <noise %a>    sequence <S>
 * counts c_0 ... c_{N-1}   (one pair per event)              events K ... (as plain)
 * checksum <16 hex digits> (FNV-1a 64: corruption, not tampering)
 *                                     mac <64 hex digits> (keyed BLAKE2b-256 of every byte before)
 * Every integer is parsed with its range checked (counts 0 .. 2^53, nodes and events as the
 * ledger allows); every error names its line. */

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

typedef struct {
    char *buf;
    int64_t cap, len;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) DPDO__PRINTF(2, 3);
static void put(sbuf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (b->buf && b->len + n < b->cap) memcpy(b->buf + b->len, tmp, (size_t)n);
    b->len += n;
}

static void hex(char *out, const unsigned char *in, size_t n)
{
    static const char d[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++)
        out[2 * i] = d[in[i] >> 4], out[2 * i + 1] = d[in[i] & 15];
    out[2 * n] = 0;
}

static int unhex(unsigned char *out, const char *in, size_t n)
{
    for (size_t i = 0; i < 2 * n; i++) {
        char c = in[i];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0) return 0;
        if (i & 1)
            out[i / 2] = (unsigned char)(out[i / 2] | v);
        else
            out[i / 2] = (unsigned char)(v << 4);
    }
    return in[2 * n] == 0;
}

static void mac_of(const dpdo_ledger *l, const char *text, size_t n, unsigned char out[32])
{
    crypto_generichash(out, 32, (const unsigned char *)text, n, l->key, l->key_len);
}

static int ledger_set_key_body(dpdo_ledger *l, const unsigned char *key, size_t len)
{
    if (!l) return DPDO_E_INVAL;
    int rc = dpdo__mac_key_set(l->key, &l->key_len, key, len, l->errmsg);
    if (rc || !key) return rc;
    randombytes_buf(l->run, sizeof l->run);
    dpdo__err_clear(l->errmsg);
    return DPDO_OK;
}

int dpdo_ledger_set_key(dpdo_ledger *l, const unsigned char *key, size_t len)
{
    DPDO__GUARDED(l, DPDO__MAGIC_LEDGER, 1, "dpdo_ledger_set_key",
                  ledger_set_key_body(l, key, len));
}

static int ledger_sequence_body(const dpdo_ledger *l, unsigned char *run, uint64_t *seq)
{
    if (!l || !seq) return DPDO_E_INVAL;
    if (l->key_len == 0)
        return dpdo__err((char *)l->errmsg, DPDO_E_STATE,
                         "sequence: the ledger has no key (only authenticated ledgers carry a "
                         "run and a sequence)");
    if (run) memcpy(run, l->run, sizeof l->run);
    *seq = l->seq;
    return DPDO_OK;
}

int dpdo_ledger_sequence(const dpdo_ledger *l, unsigned char *run, uint64_t *seq)
{
    DPDO__GUARDED(l, DPDO__MAGIC_LEDGER, DPDO__BUSY_READ, "dpdo_ledger_sequence",
                  ledger_sequence_body(l, run, seq));
}

static int ledger_set_min_sequence_body(dpdo_ledger *l, const unsigned char *run, uint64_t min_seq)
{
    if (!l) return DPDO_E_INVAL;
    if (!run) {
        l->pinned = 0;
        return DPDO_OK;
    }
    memcpy(l->pin_run, run, sizeof l->pin_run);
    l->pin_seq = min_seq;
    l->pinned = 1;
    return DPDO_OK;
}

int dpdo_ledger_set_min_sequence(dpdo_ledger *l, const unsigned char *run, uint64_t min_seq)
{
    DPDO__GUARDED(l, DPDO__MAGIC_LEDGER, DPDO__BUSY_WRITE, "dpdo_ledger_set_min_sequence",
                  ledger_set_min_sequence_body(l, run, min_seq));
}

static int ledger_save_body(const dpdo_ledger *l, char *buf, int64_t cap, int64_t *len)
{
    if (!l || !len) return DPDO_E_INVAL;
    if (buf && cap < 1) return DPDO_E_INVAL;
    sbuf b = {buf, buf ? cap : 0, 0};
    int keyed = l->key_len > 0;
    put(&b, "dpdo-ledger %d\nnodes %lld\n", keyed ? 2 : 1, (long long)l->n_nodes);
    if (keyed) {
        char rh[33];
        hex(rh, l->run, sizeof l->run);
        put(&b, "run %s\nsequence %llu\n", rh, (unsigned long long)l->seq);
    }
    put(&b, "events %lld\n", (long long)l->n_events);
    for (int64_t k = 0; k < l->n_events; k++) {
        const dpdo__event_desc *e = &l->ev[k];
        put(&b, "event %d %d %a %lld %lld %a %a\ncounts", (int)e->mech, (int)e->samp.kind,
            e->samp.q, (long long)e->samp.n, (long long)e->samp.m, e->sens, e->noise);
        for (int64_t i = 0; i < l->n_nodes; i++)
            put(&b, " %lld", (long long)l->counts[k * l->n_nodes + i]);
        put(&b, "\n");
    }
    int64_t body = b.len, tail = keyed ? 4 + 64 + 1 : 9 + 16 + 1;
    if (!buf ||
        body + tail >= cap) { /* size query (or too small): the last line has a fixed length */
        *len = body + tail;
        return buf ? DPDO_E_INVAL : DPDO_OK;
    }
    if (keyed) {
        unsigned char m[32];
        char mh[65];
        mac_of(l, buf, (size_t)body, m);
        hex(mh, m, sizeof m);
        put(&b, "mac %s\n", mh);
    } else {
        put(&b, "checksum %016llx\n", (unsigned long long)fnv1a(buf, (size_t)body));
    }
    *len = b.len;
    buf[b.len] = '\0';
    return DPDO_OK;
}

int dpdo_ledger_save(const dpdo_ledger *l, char *buf, int64_t cap, int64_t *len)
{
    DPDO__GUARDED(l, DPDO__MAGIC_LEDGER, 0, "dpdo_ledger_save", ledger_save_body(l, buf, cap, len));
}

/* line reader over (buf, len) */
typedef struct {
    const char *p, *end;
    int64_t line;
    char cur[4096];
} lreader;

static int next_line(lreader *r)
{
    if (r->p >= r->end) return 0;
    const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
    if (!nl) return 0; /* every line must end in \n */
    size_t n = (size_t)(nl - r->p);
    if (n >= sizeof r->cur) n = sizeof r->cur - 1; /* truncated: parse will fail */
    memcpy(r->cur, r->p, n);
    r->cur[n] = '\0';
    r->p = nl + 1;
    r->line++;
    return 1;
}

/* Checked decimal integer at *p (optional '-' when lo < 0), in [lo, hi]; advances *p. 1 on success.
 */
static int parse_int(const char **p, const char *end, int64_t lo, int64_t hi, int64_t *out)
{
    const char *q = *p;
    int neg = 0;
    if (q < end && *q == '-' && lo < 0) neg = 1, q++;
    uint64_t v = 0, lim = neg ? (uint64_t)(-(lo + 1)) + 1 : (uint64_t)hi;
    int digits = 0;
    while (q < end && *q >= '0' && *q <= '9') {
        unsigned dg = (unsigned)(*q - '0');
        if (v > (lim - dg) / 10) return 0; /* out of range (and no overflow of v) */
        v = v * 10 + dg;
        q++;
        digits++;
    }
    if (!digits) return 0;
    int64_t x = neg ? (v == (uint64_t)1 << 63 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
    if (x < lo || x > hi) return 0;
    *out = x;
    *p = q;
    return 1;
}

/* "<word> <int>" as the whole line */
static int word_int(const char *line, const char *word, int64_t lo, int64_t hi, int64_t *out)
{
    size_t w = strlen(word);
    if (strncmp(line, word, w) != 0 || line[w] != ' ') return 0;
    const char *p = line + w + 1, *end = line + strlen(line);
    return parse_int(&p, end, lo, hi, out) && p == end;
}

/* Hex-float token (as printed by %a), strict: the whole token must parse. */
static int parse_hexf(const char **p, double *out)
{
    const char *q = *p;
    if (*q == ' ' || *q == 0) return 0;
    char *e = NULL;
    double v = strtod(q, &e);
    if (e == q || (*e != ' ' && *e != 0)) return 0;
    *out = v;
    *p = e;
    return 1;
}

static int expect_space(const char **p)
{
    if (**p != ' ') return 0;
    (*p)++;
    return 1;
}

static int ledger_load_body(dpdo_ledger *l, const char *buf, int64_t len)
{
    if (!l) return DPDO_E_INVAL;
    if (!buf || len < 0) return dpdo__err(l->errmsg, DPDO_E_INVAL, "buffer is NULL or len < 0");
    lreader r = {buf, buf + len, 0, {0}};
    int64_t ver = 0, nn = 0, ne = 0, seq = 0;
    unsigned char run[16] = {0};
    if (!next_line(&r) || !word_int(r.cur, "dpdo-ledger", 0, 1000000, &ver))
        return dpdo__err(l->errmsg, DPDO_E_FORMAT, "line 1: not a dpdo-ledger header");
    if (ver != 1 && ver != 2)
        return dpdo__err(l->errmsg, DPDO_E_VERSION,
                         "line 1: ledger format version %lld is not supported (expected 1 or 2)",
                         (long long)ver);
    int keyed = ver == 2;
    if (keyed && l->key_len == 0)
        return dpdo__err(l->errmsg, DPDO_E_FORMAT,
                         "line 1: an authenticated ledger (version 2): set its key with "
                         "dpdo_ledger_set_key before loading");
    if (!keyed && l->key_len > 0)
        return dpdo__err(l->errmsg, DPDO_E_FORMAT,
                         "line 1: the file is not authenticated (version 1, no MAC) but "
                         "this ledger has a key: refused");
    if (!keyed && l->pinned)
        return dpdo__err(l->errmsg, DPDO_E_FORMAT,
                         "line 1: rollback protection is on (dpdo_ledger_set_min_sequence) but "
                         "the file is not authenticated: refused");
    if (!next_line(&r) || !word_int(r.cur, "nodes", 1, INT64_MAX, &nn))
        return dpdo__err(l->errmsg, DPDO_E_FORMAT, "line 2: expected 'nodes N' (N >= 1)");
    if (nn != l->n_nodes)
        return dpdo__err(l->errmsg, DPDO_E_FORMAT,
                         "line 2: saved ledger has %lld nodes, this one %lld", (long long)nn,
                         (long long)l->n_nodes);
    if (keyed) {
        if (!next_line(&r) || strncmp(r.cur, "run ", 4) != 0 || strlen(r.cur) != 4 + 32 ||
            !unhex(run, r.cur + 4, 16))
            return dpdo__err(l->errmsg, DPDO_E_FORMAT, "line %lld: expected 'run <32 hex digits>'",
                             (long long)r.line);
        if (!next_line(&r) || !word_int(r.cur, "sequence", 0, INT64_MAX, &seq))
            return dpdo__err(l->errmsg, DPDO_E_FORMAT, "line %lld: expected 'sequence S'",
                             (long long)r.line);
    }
    if (!next_line(&r) || !word_int(r.cur, "events", 0, (int64_t)1 << 40, &ne))
        return dpdo__err(l->errmsg, DPDO_E_FORMAT,
                         "line %lld: expected 'events K' (0 <= K <= 2^40)", (long long)r.line);
    /* parse into fresh arrays; commit only on success */
    size_t cells;
    int64_t cap = ne > 4 ? ne : 4;
    if (!dpdo__mul_size((size_t)cap, (size_t)l->n_nodes, &cells) ||
        (double)len < (double)ne * (20.0 + 2.0 * (double)l->n_nodes))
        return dpdo__err(l->errmsg, DPDO_E_FORMAT,
                         "line %lld: %lld events cannot fit in %lld bytes", (long long)r.line,
                         (long long)ne, (long long)len);
    dpdo__event_desc *ev = dpdo__alloc_array((size_t)cap, sizeof *ev);
    int64_t *counts = dpdo__calloc(cells, sizeof *counts);
    int rc = DPDO_OK;
    if (!ev || !counts) {
        rc = dpdo__err(l->errmsg, DPDO_E_NOMEM, "out of memory loading the ledger");
        goto fail;
    }
    for (int64_t k = 0; k < ne; k++) {
        int64_t mech = 0, kind = 0, n = 0, m = 0;
        double q = 0, sens = 0, noise = 0;
        int ok = next_line(&r) && strncmp(r.cur, "event ", 6) == 0;
        const char *p = r.cur + 6;
        if (!ok || !parse_int(&p, p + strlen(p), 0, 1000, &mech) || !expect_space(&p) ||
            !parse_int(&p, p + strlen(p), 0, 1000, &kind) || !expect_space(&p) ||
            !parse_hexf(&p, &q) || !expect_space(&p) ||
            !parse_int(&p, p + strlen(p), 0, INT64_MAX, &n) || !expect_space(&p) ||
            !parse_int(&p, p + strlen(p), 0, INT64_MAX, &m) || !expect_space(&p) ||
            !parse_hexf(&p, &sens) || !expect_space(&p) || !parse_hexf(&p, &noise) || *p != 0) {
            rc = dpdo__err(l->errmsg, DPDO_E_FORMAT,
                           "line %lld: malformed event line (a field is missing, not a "
                           "number, or out of range)",
                           (long long)r.line);
            goto fail;
        }
        dpdo__sampling_desc sd = {(int32_t)kind, q, n, m};
        char err[DPDO__ERRMSG_LEN] = "";
        if (mech < DPDO_MECH_GAUSSIAN || mech > DPDO_MECH_DISCRETE_GAUSSIAN_FINE) {
            rc = dpdo__err(l->errmsg, DPDO_E_FORMAT, "line %lld: unknown mechanism %lld",
                           (long long)r.line, (long long)mech);
            goto fail;
        }
        if (dpdo__event_make(&ev[k], (int)mech, &sd, sens, noise, err) != DPDO_OK ||
            (kind == DPDO_SAMPLING_WOR && q != (double)m / (double)n) ||
            (kind == DPDO_SAMPLING_NONE && (q != 1.0 || n != 0 || m != 0)) ||
            (kind == DPDO_SAMPLING_POISSON && (n != 0 || m != 0))) {
            rc = dpdo__err(l->errmsg, DPDO_E_FORMAT, "line %lld: invalid event (%s)",
                           (long long)r.line, err[0] ? err : "inconsistent sampling fields");
            goto fail;
        }
        for (int64_t j = 0; j < k; j++)
            if (desc_equal(&ev[j], &ev[k])) {
                rc = dpdo__err(l->errmsg, DPDO_E_FORMAT, "line %lld: duplicate event",
                               (long long)r.line);
                goto fail;
            }
        /* counts line can be long: parse straight from the buffer */
        const char *c = r.p, *end = r.end;
        const char *nl = memchr(c, '\n', (size_t)(end - c));
        if (!nl || (size_t)(nl - c) < 6 || memcmp(c, "counts", 6) != 0) {
            rc = dpdo__err(l->errmsg, DPDO_E_FORMAT, "line %lld: expected a counts line",
                           (long long)r.line + 1);
            goto fail;
        }
        c += 6;
        for (int64_t i = 0; i < l->n_nodes; i++) {
            int64_t v = 0;
            if (c >= nl || *c != ' ' || (c++, !parse_int(&c, nl, 0, DPDO__LEDGER_COUNT_MAX, &v)) ||
                (c < nl && *c != ' ')) {
                rc = dpdo__err(l->errmsg, DPDO_E_FORMAT,
                               "line %lld: counts line must hold %lld integers in [0, 2^53]: count "
                               "%lld is missing, "
                               "malformed or out of range",
                               (long long)r.line + 1, (long long)l->n_nodes, (long long)i);
                goto fail;
            }
            counts[k * l->n_nodes + i] = v;
        }
        if (c != nl) {
            rc = dpdo__err(l->errmsg, DPDO_E_FORMAT, "line %lld: more than %lld counts",
                           (long long)r.line + 1, (long long)l->n_nodes);
            goto fail;
        }
        r.p = nl + 1;
        r.line++;
    }
    const char *body_end = r.p;
    if (keyed) {
        unsigned char got[32], want[32];
        if (!next_line(&r) || strncmp(r.cur, "mac ", 4) != 0 || strlen(r.cur) != 4 + 64 ||
            !unhex(got, r.cur + 4, 32)) {
            rc = dpdo__err(l->errmsg, DPDO_E_FORMAT,
                           "line %lld: expected 'mac <64 hex digits>': the file is truncated "
                           "or not authenticated",
                           (long long)r.line + (r.p < r.end ? 0 : 1));
            goto fail;
        }
        if (r.p != r.end) {
            rc = dpdo__err(l->errmsg, DPDO_E_FORMAT, "line %lld: trailing data after the MAC",
                           (long long)r.line + 1);
            goto fail;
        }
        mac_of(l, buf, (size_t)(body_end - buf), want);
        if (sodium_memcmp(got, want, 32) != 0) {
            rc = dpdo__err(l->errmsg, DPDO_E_FORMAT,
                           "MAC mismatch: the ledger was edited, or written under another "
                           "key: refused");
            goto fail;
        }
        int pristine = l->seq == 0 && l->n_events == 0;
        if (!pristine && memcmp(run, l->run, sizeof run) != 0) {
            char a[33], b[33];
            hex(a, run, 16), hex(b, l->run, 16);
            rc = dpdo__err(l->errmsg, DPDO_E_FORMAT,
                           "foreign ledger: the file belongs to run %.8s..., this ledger to "
                           "run %.8s...: refused",
                           a, b);
            goto fail;
        }
        if (l->pinned && (memcmp(run, l->pin_run, sizeof run) != 0 || (uint64_t)seq < l->pin_seq)) {
            rc = dpdo__err(l->errmsg, DPDO_E_FORMAT,
                           memcmp(run, l->pin_run, sizeof run) != 0
                               ? "foreign ledger: the file is not of the run the host pinned "
                                 "(dpdo_ledger_set_min_sequence): refused"
                               : "stale ledger: sequence %lld is older than the minimum %llu the "
                                 "host recorded (a rolled-back file): refused",
                           (long long)seq, (unsigned long long)l->pin_seq);
            goto fail;
        }
        if (!pristine && (uint64_t)seq < l->seq) {
            rc = dpdo__err(l->errmsg, DPDO_E_FORMAT,
                           "stale ledger: sequence %lld is older than this ledger's %llu "
                           "(a rolled-back file): refused",
                           (long long)seq, (unsigned long long)l->seq);
            goto fail;
        }
    } else {
        unsigned long long h = 0;
        int used = 0;
        if (!next_line(&r) || sscanf(r.cur, "checksum %16llx%n", &h, &used) != 1 ||
            r.cur[used] != '\0' || used != 25) {
            rc = dpdo__err(l->errmsg, DPDO_E_FORMAT,
                           "line %lld: expected 'checksum <16 hex digits>'", (long long)r.line);
            goto fail;
        }
        if (r.p != r.end) {
            rc = dpdo__err(l->errmsg, DPDO_E_FORMAT, "line %lld: trailing data after the checksum",
                           (long long)r.line + 1);
            goto fail;
        }
        if (fnv1a(buf, (size_t)(body_end - buf)) != h) {
            rc = dpdo__err(l->errmsg, DPDO_E_FORMAT,
                           "checksum mismatch: the ledger text is corrupt");
            goto fail;
        }
    }
    dpdo__free(l->ev);
    dpdo__free(l->counts);
    l->ev = ev;
    l->counts = counts;
    l->cap = cap;
    l->n_events = ne;
    if (keyed) {
        memcpy(l->run, run, sizeof run);
        l->seq = (uint64_t)seq;
    } else {
        l->seq++;
    }
    dpdo__err_clear(l->errmsg);
    return DPDO_OK;
fail:
    dpdo__free(ev);
    dpdo__free(counts);
    return rc;
}

int dpdo_ledger_load(dpdo_ledger *l, const char *buf, int64_t len)
{
    DPDO__GUARDED(l, DPDO__MAGIC_LEDGER, 1, "dpdo_ledger_load", ledger_load_body(l, buf, len));
}

int64_t dpdo__ledger_find(const dpdo_ledger *l, const dpdo__event_desc *ev)
{
    return l && ev ? find_event(l, ev) : -1;
}
