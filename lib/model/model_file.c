/* SPDX-License-Identifier: BSD-3-Clause */
/* Model files (include/dpdo/model_file.h, format in docs/model.md "Model
 * files"): the output vector of a run with what produced it, saved as text,
 * loaded with strict checks (the file is untrusted input), and prediction.
 * The model layer: it knows datasets, not algorithms; filling a model from a
 * run is lib/alg/model_from_algorithm.c (dpdo__model_fill). */
#include "dpdo/model_file.h"
#include "../data/data_impl.h"
#include "dpdo/version.h"
#include "model_file_impl.h"
#include <errno.h>
#include <math.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MODEL_FORMAT 2 /* the newest version this library reads and writes */
#define TOKLEN 64
/* Format 1 (0.2): one weight vector. Format 2 (0.3) adds the optional keys "nodes" (how many
 * nodes trained it), "classes K c_1 .. c_K" (the class ids it predicts: K = 2 with one vector,
 * K >= 3 one-vs-rest with K vectors, class by class) and "composition" (how the privacy figures
 * of several runs were added up). A model without them is still written as format 1. */
#define MODEL_MAX_CLASSES 65536

struct dpdo_model {
    uint32_t magic; /* DPDO__MAGIC_MODEL while alive (core_impl.h) */
    int filled;
    int64_t dim, rounds;
    double *x;
    double eps, delta, rp[2];
    char loss[TOKLEN], reg[TOKLEN], alg[TOKLEN], acc[TOKLEN], lib[TOKLEN];
    int64_t nodes;         /* nodes that trained it; 0 = not recorded (format 1) */
    int64_t ncls;          /* class ids: 0 (labels +1/-1), 2 (one vector) or K >= 3 (K vectors) */
    int32_t *cls;          /* ncls class ids, ascending */
    char comp[TOKLEN];     /* composition of several runs' privacy: "" = one run */
    int integrity;         /* DPDO_MODEL_INTEGRITY_* of the content (how it was verified) */
    unsigned char key[64]; /* MAC key (dpdo_model_set_key), key_len bytes; 0 = none */
    size_t key_len;
    dpdo__busy busy; /* taken by every public call that returns a status (DPDO__GUARDED) */
    char errmsg[DPDO__ERRMSG_LEN];
};

/* the content of a model without the handle (built, then swapped in) */
typedef struct {
    int64_t dim, rounds;
    double *x; /* nvec(ncls) * dim values */
    double eps, delta, rp[2];
    char loss[TOKLEN], reg[TOKLEN], alg[TOKLEN], acc[TOKLEN], lib[TOKLEN];
    int64_t nodes, ncls;
    int32_t *cls;
    char comp[TOKLEN];
    int integrity; /* DPDO_MODEL_INTEGRITY_*: built in memory counts as verified */
} content;

/* weight vectors of a model with ncls class ids */
static int64_t nvec(int64_t ncls)
{
    return ncls >= 3 ? ncls : 1;
}

static int tok_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '+' || c == '-';
}

/* copy a name as a token: characters outside the token set become '_' */
static void set_token(char *dst, const char *src)
{
    size_t k = 0;
    if (src)
        for (; src[k] && k < TOKLEN - 1; k++)
            dst[k] = tok_char(src[k]) ? src[k] : '_';
    if (k == 0) dst[k++] = '_';
    dst[k] = '\0';
}

static int valid_token(const char *s)
{
    size_t k = 0;
    if (!s) return 0;
    for (; s[k]; k++)
        if (k >= TOKLEN - 1 || !tok_char(s[k])) return 0;
    return k > 0;
}

static void install(struct dpdo_model *m, content *c)
{
    dpdo__free(m->x);
    dpdo__free(m->cls);
    m->nodes = c->nodes;
    m->ncls = c->ncls;
    m->cls = c->cls;
    c->cls = NULL;
    memcpy(m->comp, c->comp, TOKLEN);
    m->dim = c->dim;
    m->rounds = c->rounds;
    m->x = c->x;
    c->x = NULL;
    m->eps = c->eps;
    m->delta = c->delta;
    m->rp[0] = c->rp[0];
    m->rp[1] = c->rp[1];
    memcpy(m->loss, c->loss, TOKLEN);
    memcpy(m->reg, c->reg, TOKLEN);
    memcpy(m->alg, c->alg, TOKLEN);
    memcpy(m->acc, c->acc, TOKLEN);
    memcpy(m->lib, c->lib, TOKLEN);
    m->integrity = c->integrity;
    m->filled = 1;
    dpdo__err_clear(m->errmsg);
}

/* ---- life cycle ------------------------------------------------------------ */
DPDO_API int dpdo_model_create(dpdo_model **out)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    struct dpdo_model *m = dpdo__calloc(1, sizeof *m);
    if (!m) return DPDO_E_NOMEM;
    m->magic = DPDO__MAGIC_MODEL;
    *out = m;
    return DPDO_OK;
}

DPDO_API void dpdo_model_destroy(dpdo_model *m)
{
    if (!m || !DPDO__LIVE(m, DPDO__MAGIC_MODEL)) return; /* NULL or destroyed */
    /* refused while a call runs on the handle (core_impl.h, dpdo__busy) */
    if (dpdo__busy_enter(&m->busy, 1, m->errmsg, "dpdo_model_destroy") != 1) return;
    DPDO__KILL(m);
    sodium_memzero(m->key, sizeof m->key);
    dpdo__free(m->x);
    dpdo__free(m->cls);
    dpdo__free(m);
}

DPDO_API const char *dpdo_model_errmsg(const dpdo_model *m)
{
    return !m                                 ? DPDO__NULL_TEXT("dpdo_model_errmsg", "m")
           : DPDO__LIVE(m, DPDO__MAGIC_MODEL) ? m->errmsg
                                              : DPDO__DEAD_TEXT("dpdo_model_errmsg", "m");
}

static int usable(struct dpdo_model *m)
{
    return m && DPDO__LIVE(m, DPDO__MAGIC_MODEL);
}

/* ---- filling from a run's record (dpdo_model_from_algorithm in lib/alg) or from values ---- */
int dpdo__model_fill(dpdo_model *m, double *x, const dpdo__model_record *r, char *err)
{
    if (!usable(m) || !x || !r || r->dim < 1 || r->dim > DPDO_MODEL_MAX_DIM) {
        dpdo__free(x);
        return dpdo__err(err, DPDO_E_INVAL, "internal: bad arguments to fill a model");
    }
    size_t bad = dpdo__first_nonfinite(x, (size_t)r->dim);
    if (bad < (size_t)r->dim) {
        dpdo__free(x);
        return dpdo__err(err, DPDO_E_NUMERIC, "the output's entry %zu is not finite", bad);
    }
    content c;
    memset(&c, 0, sizeof c);
    c.dim = r->dim;
    c.x = x;
    c.rounds = r->rounds;
    set_token(c.alg, r->algorithm);
    set_token(c.loss, r->loss);
    set_token(c.reg, r->regularizer ? r->regularizer : "none");
    c.rp[0] = isfinite(r->rp[0]) ? r->rp[0] : 0.0;
    c.rp[1] = isfinite(r->rp[1]) ? r->rp[1] : 0.0;
    int private_ = !isnan(r->eps) && r->eps >= 0 && r->delta >= 0 && r->delta < 1;
    c.eps = private_ ? r->eps : INFINITY;
    c.delta = private_ ? r->delta : 0.0;
    set_token(c.acc, private_ && r->accountant && *r->accountant ? r->accountant : "none");
    set_token(c.lib, DPDO_VERSION_STRING);
    c.integrity = DPDO_MODEL_INTEGRITY_LOCAL;
    install(m, &c);
    return DPDO_OK;
}

static int model_set_body(dpdo_model *m, const double *x, int64_t dim, const char *loss,
                          const char *algorithm)
{
    if (!usable(m)) return DPDO_E_INVAL;
    if (!x) return dpdo__err(m->errmsg, DPDO_E_INVAL, "x is NULL");
    if (dim < 1 || dim > DPDO_MODEL_MAX_DIM)
        return dpdo__err(m->errmsg, DPDO_E_INVAL, "dim = %lld out of range [1, 2^26]",
                         (long long)dim);
    if (!valid_token(loss) || !valid_token(algorithm))
        return dpdo__err(m->errmsg, DPDO_E_INVAL,
                         "loss and algorithm names must be 1..63 characters of [A-Za-z0-9._+-]");
    size_t bad = dpdo__first_nonfinite(x, (size_t)dim);
    if (bad < (size_t)dim) return dpdo__err(m->errmsg, DPDO_E_INVAL, "x[%zu] is not finite", bad);
    content c;
    memset(&c, 0, sizeof c);
    c.dim = dim;
    c.x = dpdo__alloc_array((size_t)dim, sizeof(double));
    if (!c.x)
        return dpdo__err(m->errmsg, DPDO_E_NOMEM, "out of memory for %lld values", (long long)dim);
    memcpy(c.x, x, (size_t)dim * sizeof(double));
    set_token(c.loss, loss);
    set_token(c.alg, algorithm);
    set_token(c.reg, "none");
    set_token(c.acc, "none");
    set_token(c.lib, DPDO_VERSION_STRING);
    c.eps = INFINITY;
    c.integrity = DPDO_MODEL_INTEGRITY_LOCAL;
    install(m, &c);
    return DPDO_OK;
}

DPDO_API int dpdo_model_set(dpdo_model *m, const double *x, int64_t dim, const char *loss,
                            const char *algorithm)
{
    DPDO__GUARDED(m, DPDO__MAGIC_MODEL, 1, "dpdo_model_set",
                  model_set_body(m, x, dim, loss, algorithm));
}

/* ---- writing ------------------------------------------------------------------- */
/* the text of a model file, built in memory (then checksummed and written in one go) */
typedef struct {
    char *p;
    size_t len, cap;
    int oom;
} textbuf;

DPDO__PRINTF(2, 3)
static void put(textbuf *t, const char *fmt, ...)
{
    if (t->oom) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        t->oom = 1;
        return;
    }
    if (t->len + (size_t)n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + (size_t)n + 1)
            cap *= 2;
        char *q = dpdo__realloc(t->p, cap);
        if (!q) {
            t->oom = 1;
            return;
        }
        t->p = q;
        t->cap = cap;
        va_start(ap, fmt);
        vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
    }
    t->len += (size_t)n;
}

static void put_double(textbuf *t, double v)
{
    if (isinf(v))
        put(t, "%s", v > 0 ? "inf" : "-inf");
    else
        put(t, "%.17g", v);
}

/* The integrity trailer, the file's last line: "# checksum blake2b-256 <64 hex>" (no key) or
 * "# mac blake2b-256 <64 hex>" (keyed BLAKE2b-256, dpdo_model_set_key), over every byte before
 * it. A comment to the 0.2 reader (which skips '#' lines), so 0.3 files still load there. */
#define TRAILER_SUM "# checksum blake2b-256 "
#define TRAILER_MAC "# mac blake2b-256 "

static void digest(const struct dpdo_model *m, int keyed, const char *p, size_t n,
                   unsigned char out[32])
{
    crypto_generichash(out, 32, (const unsigned char *)p, n, keyed ? m->key : NULL,
                       keyed ? m->key_len : 0);
}

/* the text of m, with its integrity line, into t (t->oom on failure) */
static void model_text(const struct dpdo_model *m, textbuf *t)
{
    int v2 = m->nodes > 0 || m->ncls > 0 || m->comp[0];
    put(t, "dpdo-model %d\n# a linear model x of libdpdo (docs/model.md)\n", v2 ? 2 : 1);
    put(t, "library %s\nalgorithm %s\nloss %s\n", m->lib, m->alg, m->loss);
    put(t, "regularizer %s ", m->reg);
    put_double(t, m->rp[0]);
    put(t, " ");
    put_double(t, m->rp[1]);
    put(t, "\nrounds %lld\nepsilon ", (long long)m->rounds);
    put_double(t, m->eps);
    put(t, "\ndelta ");
    put_double(t, m->delta);
    put(t, "\naccountant %s\n", m->acc);
    if (m->comp[0]) put(t, "composition %s\n", m->comp);
    if (m->nodes > 0) put(t, "nodes %lld\n", (long long)m->nodes);
    if (m->ncls > 0) {
        put(t, "classes %lld", (long long)m->ncls);
        for (int64_t k = 0; k < m->ncls; k++)
            put(t, " %ld", (long)m->cls[k]);
        put(t, "\n");
    }
    put(t, "dim %lld\nx\n", (long long)m->dim);
    for (int64_t j = 0; j < nvec(m->ncls) * m->dim; j++) {
        put_double(t, m->x[j]);
        put(t, "\n");
    }
    put(t, "end\n");
    unsigned char h[32];
    char hex[65];
    if (!t->oom) {
        digest(m, m->key_len > 0, t->p, t->len, h);
        sodium_bin2hex(hex, sizeof hex, h, sizeof h);
        put(t, "%s%s\n", m->key_len > 0 ? TRAILER_MAC : TRAILER_SUM, hex);
    }
}

static int model_save_body(dpdo_model *m, const char *path)
{
    if (!usable(m)) return DPDO_E_INVAL;
    if (!path) return dpdo__err(m->errmsg, DPDO_E_INVAL, "path is NULL");
    if (!m->filled) return dpdo__err(m->errmsg, DPDO_E_STATE, "the model is empty");
    if (sodium_init() < 0)
        return dpdo__err(m->errmsg, DPDO_E_UNSUPPORTED, "libsodium cannot be initialised");
    textbuf t = {NULL, 0, 0, 0};
    model_text(m, &t);
    int rc = t.oom ? dpdo__err(m->errmsg, DPDO_E_NOMEM, "out of memory")
                   : dpdo__file_replace(path, t.p, t.len, m->errmsg, "save");
    dpdo__free(t.p);
    return rc;
}

/* Since 0.3: the file's text into a caller buffer */
static int model_save_buffer_body(dpdo_model *m, char *buf, int64_t cap, int64_t *len)
{
    if (!usable(m)) return DPDO_E_INVAL;
    if (!len) return dpdo__err(m->errmsg, DPDO_E_INVAL, "len is NULL");
    if (buf && cap < 0) return dpdo__err(m->errmsg, DPDO_E_INVAL, "cap = %lld < 0", (long long)cap);
    if (!m->filled) return dpdo__err(m->errmsg, DPDO_E_STATE, "the model is empty");
    if (sodium_init() < 0)
        return dpdo__err(m->errmsg, DPDO_E_UNSUPPORTED, "libsodium cannot be initialised");
    textbuf t = {NULL, 0, 0, 0};
    model_text(m, &t);
    int rc = DPDO_OK;
    if (t.oom) {
        rc = dpdo__err(m->errmsg, DPDO_E_NOMEM, "out of memory");
    } else {
        *len = (int64_t)t.len;
        if (buf && (size_t)cap <= t.len)
            rc = dpdo__err(m->errmsg, DPDO_E_INVAL,
                           "cap = %lld: the model's text needs %lld bytes and a NUL",
                           (long long)cap, (long long)t.len);
        else if (buf)
            memcpy(buf, t.p, t.len + 1);
    }
    dpdo__free(t.p);
    return rc;
}

DPDO_API int dpdo_model_save_buffer(dpdo_model *m, char *buf, int64_t cap, int64_t *len)
{
    DPDO__GUARDED(m, DPDO__MAGIC_MODEL, DPDO__BUSY_SHARED, "dpdo_model_save_buffer",
                  model_save_buffer_body(m, buf, cap, len));
}

/* Since 0.3: the key of the keyed MAC (see model_file.h) */
static int model_set_key_body(dpdo_model *m, const unsigned char *key, size_t len)
{
    if (!usable(m)) return DPDO_E_INVAL;
    return dpdo__mac_key_set(m->key, &m->key_len, key, len, m->errmsg);
}

DPDO_API int dpdo_model_set_key(dpdo_model *m, const unsigned char *key, size_t len)
{
    DPDO__GUARDED(m, DPDO__MAGIC_MODEL, 1, "dpdo_model_set_key", model_set_key_body(m, key, len));
}

DPDO_API int dpdo_model_integrity(const dpdo_model *m)
{
    if (!m || !DPDO__LIVE(m, DPDO__MAGIC_MODEL) || !m->filled) return -1;
    return m->integrity;
}

/* Check the integrity trailer of buf[0..len) (NUL-terminated) against m's key; on success
 * *body_len is the length of the text it covers (the whole text without a trailer) and
 * *integrity how it was verified. */
static int verify(const struct dpdo_model *m, const char *name, const char *buf, size_t len,
                  size_t *body_len, int *integrity)
{
    size_t e = len;
    while (e > 0 &&
           (buf[e - 1] == '\n' || buf[e - 1] == '\r' || buf[e - 1] == ' ' || buf[e - 1] == '\t'))
        e--;
    size_t b = e;
    while (b > 0 && buf[b - 1] != '\n')
        b--;
    const char *line = buf + b;
    size_t n = e - b;
    int is_sum =
        n >= sizeof TRAILER_SUM - 1 && memcmp(line, TRAILER_SUM, sizeof TRAILER_SUM - 1) == 0;
    int is_mac =
        n >= sizeof TRAILER_MAC - 1 && memcmp(line, TRAILER_MAC, sizeof TRAILER_MAC - 1) == 0;
    *body_len = len;
    *integrity = DPDO_MODEL_INTEGRITY_NONE;
    if (!is_sum && !is_mac) {
        if (m->key_len > 0)
            return dpdo__err(
                (char *)m->errmsg, DPDO_E_FORMAT,
                "'%s': not authenticated (no 'mac' line) but a key is set: refused (written "
                "without a key, by libdpdo 0.2, or its MAC line was removed)",
                name);
        return DPDO_OK; /* a 0.2 file: loads unverified (dpdo_model_integrity says so) */
    }
    size_t pre = is_sum ? sizeof TRAILER_SUM - 1 : sizeof TRAILER_MAC - 1;
    unsigned char want[32], got[32];
    if (n - pre != 64 || sodium_hex2bin(want, sizeof want, line + pre, 64, NULL, NULL, NULL) != 0)
        return dpdo__err((char *)m->errmsg, DPDO_E_FORMAT,
                         "'%s': malformed integrity line (64 hex digits expected)", name);
    if (is_sum && m->key_len > 0)
        return dpdo__err((char *)m->errmsg, DPDO_E_FORMAT,
                         "'%s': not authenticated (a plain checksum, no MAC) but a key is set: "
                         "refused",
                         name);
    if (is_mac && m->key_len == 0)
        return dpdo__err((char *)m->errmsg, DPDO_E_FORMAT,
                         "'%s': the file is authenticated (keyed MAC): set its key "
                         "(dpdo_model_set_key) to load it",
                         name);
    if (sodium_init() < 0)
        return dpdo__err((char *)m->errmsg, DPDO_E_UNSUPPORTED, "libsodium cannot be initialised");
    digest(m, is_mac, buf, b, got);
    if (crypto_verify_32(got, want) != 0)
        return dpdo__err((char *)m->errmsg, DPDO_E_FORMAT,
                         is_mac ? "'%s': MAC mismatch: the file was changed after it was saved, "
                                  "or saved under another key: refused"
                                : "'%s': checksum mismatch: the file was changed or damaged "
                                  "after it was saved: refused",
                         name);
    *body_len = b;
    *integrity = is_mac ? DPDO_MODEL_INTEGRITY_MAC : DPDO_MODEL_INTEGRITY_CHECKSUM;
    return DPDO_OK;
}

DPDO_API int dpdo_model_save(dpdo_model *m, const char *path)
{
    DPDO__GUARDED(m, DPDO__MAGIC_MODEL, DPDO__BUSY_SHARED, "dpdo_model_save",
                  model_save_body(m, path));
}

/* ---- reading ------------------------------------------------------------------- */
enum {
    K_LIBRARY,
    K_ALGORITHM,
    K_LOSS,
    K_REGULARIZER,
    K_ROUNDS,
    K_EPSILON,
    K_DELTA,
    K_ACCOUNTANT,
    K_DIM,
    K_REQUIRED, /* the keys above are required; the ones below are optional, format 2 only */
    K_COMPOSITION = K_REQUIRED,
    K_NODES,
    K_CLASSES,
    K_N
};
static const char *const KEYS[K_N] = {"library", "algorithm",   "loss",  "regularizer",
                                      "rounds",  "epsilon",     "delta", "accountant",
                                      "dim",     "composition", "nodes", "classes"};

typedef struct {
    const char *name;
    const char *p, *end; /* NUL-terminated buffer [p, end) */
    int64_t line;
    char *err;
} reader;

DPDO__PRINTF(2, 3)
static int perr(reader *r, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return dpdo__err(r->err, DPDO_E_FORMAT, "'%s' line %lld: %s", r->name, (long long)r->line,
                     what);
}

/* the next line that is neither blank nor a comment: [*b, *e) without the
 * newline and trailing spaces; 0 at the end of the text */
static int next_line(reader *r, const char **b, const char **e)
{
    while (r->p < r->end) {
        const char *s = r->p;
        const char *nl = memchr(s, '\n', (size_t)(r->end - s));
        const char *le = nl ? nl : r->end;
        r->p = nl ? nl + 1 : r->end;
        r->line++;
        while (s < le && (*s == ' ' || *s == '\t'))
            s++;
        const char *t = le;
        while (t > s && (t[-1] == ' ' || t[-1] == '\t' || t[-1] == '\r'))
            t--;
        if (s == t || *s == '#') continue;
        *b = s;
        *e = t;
        return 1;
    }
    return 0;
}

/* one token of the line starting at *s: returns its length (0 if none) */
static size_t token(const char **s, const char *e, const char **tok)
{
    const char *p = *s;
    while (p < e && (*p == ' ' || *p == '\t'))
        p++;
    const char *q = p;
    while (q < e && *q != ' ' && *q != '\t')
        q++;
    *tok = p;
    *s = q;
    return (size_t)(q - p);
}

/* a double from [t, t+n): the data layer's strict grammar, or inf */
static int num(const char *t, size_t n, int allow_inf, double *out)
{
    if (allow_inf && n == 3 && memcmp(t, "inf", 3) == 0) {
        *out = INFINITY;
        return 1;
    }
    const char *q = dpdo__parse_double(t, t + n, out);
    return q == t + n && isfinite(*out);
}

/* the next token of the line as an integer in [lo, hi] into *out; 0 if it is not one */
static int int_tok(const char **s, const char *e, double lo, double hi, int64_t *out)
{
    const char *t;
    size_t n = token(s, e, &t);
    double v;
    if (!num(t, n, 0, &v) || v < lo || v != floor(v) || v > hi) return 0;
    *out = (int64_t)v;
    return 1;
}

static int copy_tok(reader *r, char *dst, const char *t, size_t n, const char *key)
{
    if (n == 0 || n >= TOKLEN) return perr(r, "%s: a name of 1..63 characters is expected", key);
    for (size_t k = 0; k < n; k++)
        if (!tok_char(t[k]))
            return perr(r, "%s: character 0x%02x is not allowed in a name", key,
                        (unsigned char)t[k]);
    memcpy(dst, t, n);
    dst[n] = '\0';
    return 0;
}

static int parse(content *c, const char *name, const char *buf, size_t len, char *err)
{
    reader r = {name, buf, buf + len, 0, err};
    const char *b, *e, *t;
    size_t n;
    if (!next_line(&r, &b, &e))
        return dpdo__err(err, DPDO_E_FORMAT, "'%s': empty model file", name);
    const char *s = b;
    n = token(&s, e, &t);
    if (n != 10 || memcmp(t, "dpdo-model", 10) != 0)
        return perr(&r, "not a dpdo model file (the first line must be 'dpdo-model %d')",
                    MODEL_FORMAT);
    n = token(&s, e, &t);
    double ver;
    if (!num(t, n, 0, &ver) || ver != floor(ver) || ver < 1 || s != e)
        return perr(&r, "bad format version (expected 'dpdo-model %d')", MODEL_FORMAT);
    if (ver > MODEL_FORMAT)
        return perr(&r, "format version %.0f is newer than this library's %d (libdpdo %s)", ver,
                    MODEL_FORMAT, DPDO_VERSION_STRING);
    int seen[K_N] = {0};
    int rc;
    for (;;) {
        if (!next_line(&r, &b, &e))
            return dpdo__err(err, DPDO_E_FORMAT, "'%s': truncated: no 'x' line", name);
        s = b;
        n = token(&s, e, &t);
        if (n == 1 && t[0] == 'x' && s == e) break;
        int k = 0;
        while (k < K_N && !(strlen(KEYS[k]) == n && memcmp(KEYS[k], t, n) == 0))
            k++;
        if (k == K_N || (k >= K_REQUIRED && ver < 2))
            return perr(&r, "unknown key '%.*s'", (int)(n < 40 ? n : 40), t);
        if (seen[k]) return perr(&r, "key '%s' repeated", KEYS[k]);
        seen[k] = 1;
        const char *key = KEYS[k];
        double v;
        switch (k) {
        case K_LIBRARY:
        case K_ALGORITHM:
        case K_LOSS:
        case K_ACCOUNTANT:
        case K_COMPOSITION: {
            char *dst = k == K_LIBRARY      ? c->lib
                        : k == K_ALGORITHM  ? c->alg
                        : k == K_LOSS       ? c->loss
                        : k == K_ACCOUNTANT ? c->acc
                                            : c->comp;
            n = token(&s, e, &t);
            if ((rc = copy_tok(&r, dst, t, n, key))) return rc;
            break;
        }
        case K_REGULARIZER:
            n = token(&s, e, &t);
            if ((rc = copy_tok(&r, c->reg, t, n, key))) return rc;
            for (int j = 0; j < 2; j++) {
                n = token(&s, e, &t);
                if (!num(t, n, 0, &c->rp[j]))
                    return perr(&r, "regularizer: parameter %d must be a finite number", j + 1);
            }
            break;
        case K_ROUNDS:
            if (!int_tok(&s, e, 0, 0x1p62, &c->rounds))
                return perr(&r, "rounds: an integer in [0, 2^62] is expected");
            break;
        case K_EPSILON:
            n = token(&s, e, &t);
            if (!num(t, n, 1, &c->eps) || !(c->eps >= 0))
                return perr(&r, "epsilon: a number >= 0 or 'inf' is expected");
            break;
        case K_DELTA:
            n = token(&s, e, &t);
            if (!num(t, n, 0, &c->delta) || !(c->delta >= 0 && c->delta < 1))
                return perr(&r, "delta: a number in [0, 1) is expected");
            break;
        case K_NODES:
            if (!int_tok(&s, e, 1, 0x1p31, &c->nodes))
                return perr(&r, "nodes: an integer in [1, 2^31] is expected");
            break;
        case K_CLASSES:
            n = token(&s, e, &t);
            if (!num(t, n, 0, &v) || v < 2 || v != floor(v) || v > MODEL_MAX_CLASSES)
                return perr(&r, "classes: a count in [2, %d] is expected first", MODEL_MAX_CLASSES);
            /* each id needs two bytes (" 0") of this line */
            if ((double)(e - s) < 2 * v)
                return perr(&r, "classes: %.0f ids announced, the line is too short", v);
            c->ncls = (int64_t)v;
            c->cls = dpdo__alloc_array((size_t)c->ncls, sizeof(int32_t));
            if (!c->cls) return dpdo__err(err, DPDO_E_NOMEM, "out of memory");
            for (int64_t j = 0; j < c->ncls; j++) {
                n = token(&s, e, &t);
                if (!num(t, n, 0, &v) || v != floor(v) || v < INT32_MIN || v > INT32_MAX ||
                    (j > 0 && v <= c->cls[j - 1]))
                    return perr(&r,
                                "classes: id %lld must be a 32-bit integer above the one "
                                "before",
                                (long long)j + 1);
                c->cls[j] = (int32_t)v;
            }
            break;
        default: /* K_DIM */
            if (!int_tok(&s, e, 1, (double)DPDO_MODEL_MAX_DIM, &c->dim))
                return perr(&r, "dim: an integer in [1, %lld] is expected",
                            (long long)DPDO_MODEL_MAX_DIM);
            break;
        }
        if (s != e) {
            token(&s, e, &t);
            return perr(&r, "%s: unexpected '%.*s' after the value", key,
                        (int)(e - t < 40 ? e - t : 40), t);
        }
    }
    for (int k = 0; k < K_REQUIRED; k++)
        if (!seen[k]) return perr(&r, "key '%s' missing before 'x'", KEYS[k]);
    /* K >= 3 classes: K vectors of dim values, at most DPDO_MODEL_MAX_DIM in all */
    int64_t total = c->dim * nvec(c->ncls);
    if (total > DPDO_MODEL_MAX_DIM)
        return perr(&r, "%lld classes x dim %lld: more than %lld values", (long long)c->ncls,
                    (long long)c->dim, (long long)DPDO_MODEL_MAX_DIM);
    /* every value needs at least two bytes ("0\n"): refuse a dimension the
     * rest of the file cannot hold before allocating for it */
    if ((size_t)(r.end - r.p) / 2 < (size_t)total)
        return perr(&r,
                    "dim %lld but the rest of the file (%zu bytes) cannot hold that many values",
                    (long long)c->dim, (size_t)(r.end - r.p));
    c->x = dpdo__alloc_array((size_t)total, sizeof(double));
    if (!c->x)
        return dpdo__err(err, DPDO_E_NOMEM, "out of memory for %lld values", (long long)total);
    for (int64_t j = 0; j < total; j++) {
        if (!next_line(&r, &b, &e))
            return dpdo__err(err, DPDO_E_FORMAT, "'%s': truncated: %lld of %lld values", name,
                             (long long)j, (long long)total);
        if (!num(b, (size_t)(e - b), 0, &c->x[j]))
            return perr(&r, "value %lld: '%.*s' is not a finite number", (long long)j + 1,
                        (int)(e - b < 40 ? e - b : 40), b);
    }
    if (!next_line(&r, &b, &e) || e - b != 3 || memcmp(b, "end", 3) != 0)
        return perr(&r, "'end' expected after the %lld values", (long long)total);
    if (next_line(&r, &b, &e)) return perr(&r, "text after 'end'");
    return DPDO_OK;
}

static int model_parse_body(dpdo_model *m, const char *text, size_t len, const char *name)
{
    if (!usable(m)) return DPDO_E_INVAL;
    if (!text) return dpdo__err(m->errmsg, DPDO_E_INVAL, "text is NULL");
    if (!name) name = "(buffer)";
    /* the number parser needs a terminator after each token */
    char *buf = dpdo__alloc(len + 1);
    if (!buf) return dpdo__err(m->errmsg, DPDO_E_NOMEM, "out of memory");
    memcpy(buf, text, len);
    buf[len] = '\0';
    if (memchr(buf, '\0', len)) {
        dpdo__free(buf);
        return dpdo__err(m->errmsg, DPDO_E_FORMAT, "'%s': NUL byte in a model file", name);
    }
    content c;
    memset(&c, 0, sizeof c);
    size_t body = len;
    int rc = verify(m, name, buf, len, &body, &c.integrity);
    if (!rc) {
        buf[body] = '\0'; /* the trailer (a comment) is not parsed again */
        rc = parse(&c, name, buf, body, m->errmsg);
    }
    dpdo__free(buf);
    if (rc) {
        dpdo__free(c.x);
        dpdo__free(c.cls);
        return rc;
    }
    install(m, &c);
    return DPDO_OK;
}

DPDO_API int dpdo_model_parse(dpdo_model *m, const char *text, size_t len, const char *name)
{
    DPDO__GUARDED(m, DPDO__MAGIC_MODEL, 1, "dpdo_model_parse",
                  model_parse_body(m, text, len, name));
}

static int model_load_body(dpdo_model *m, const char *path)
{
    if (!usable(m)) return DPDO_E_INVAL;
    if (!path) return dpdo__err(m->errmsg, DPDO_E_INVAL, "path is NULL");
    dpdo_load_options o;
    dpdo__load_defaults(&o);
    /* a model holds at most 2^26 values of at most ~25 characters */
    o.max_file_bytes = (int64_t)1 << 31;
    o.max_decompressed_bytes = (int64_t)1 << 31;
    char *buf = NULL;
    size_t len = 0;
    int rc = dpdo__read_file(path, DPDO__READ_TEXT, &o, &buf, &len, m->errmsg);
    if (rc) return rc;
    rc = model_parse_body(m, buf, len, path);
    dpdo__free(buf);
    return rc;
}

DPDO_API int dpdo_model_load(dpdo_model *m, const char *path)
{
    DPDO__GUARDED(m, DPDO__MAGIC_MODEL, 1, "dpdo_model_load", model_load_body(m, path));
}

/* ---- accessors ------------------------------------------------------------------ */
DPDO_API int64_t dpdo_model_dim(const dpdo_model *m)
{
    return m && DPDO__LIVE(m, DPDO__MAGIC_MODEL) && m->filled ? m->dim : 0;
}
DPDO_API int64_t dpdo_model_rounds(const dpdo_model *m)
{
    return m && DPDO__LIVE(m, DPDO__MAGIC_MODEL) && m->filled ? m->rounds : 0;
}

static int model_get_x_body(dpdo_model *m, double *out, int64_t dim)
{
    if (!usable(m)) return DPDO_E_INVAL;
    if (!m->filled) return dpdo__err(m->errmsg, DPDO_E_STATE, "the model is empty");
    if (!out || dim != m->dim)
        return dpdo__err(m->errmsg, DPDO_E_INVAL,
                         "out is NULL or dim %lld differs from the model's %lld", (long long)dim,
                         (long long)m->dim);
    memcpy(out, m->x, (size_t)dim * sizeof(double));
    return DPDO_OK;
}

DPDO_API int dpdo_model_get_x(dpdo_model *m, double *out, int64_t dim)
{
    DPDO__GUARDED(m, DPDO__MAGIC_MODEL, DPDO__BUSY_SHARED, "dpdo_model_get_x",
                  model_get_x_body(m, out, dim));
}

DPDO_API const char *dpdo_model_text(const dpdo_model *m, const char *field)
{
    if (!m || !DPDO__LIVE(m, DPDO__MAGIC_MODEL) || !m->filled || !field) return "";
    if (strcmp(field, "loss") == 0) return m->loss;
    if (strcmp(field, "regularizer") == 0) return m->reg;
    if (strcmp(field, "algorithm") == 0) return m->alg;
    if (strcmp(field, "accountant") == 0) return m->acc;
    if (strcmp(field, "library") == 0) return m->lib;
    if (strcmp(field, "composition") == 0) return m->comp; /* Since 0.3 */
    return "";
}

static int model_regularizer_params_body(dpdo_model *m, double *p0, double *p1)
{
    if (!usable(m)) return DPDO_E_INVAL;
    if (!m->filled) return dpdo__err(m->errmsg, DPDO_E_STATE, "the model is empty");
    if (p0) *p0 = m->rp[0];
    if (p1) *p1 = m->rp[1];
    return DPDO_OK;
}

DPDO_API int dpdo_model_regularizer_params(dpdo_model *m, double *p0, double *p1)
{
    DPDO__GUARDED(m, DPDO__MAGIC_MODEL, DPDO__BUSY_SHARED, "dpdo_model_regularizer_params",
                  model_regularizer_params_body(m, p0, p1));
}

static int model_privacy_body(dpdo_model *m, double *epsilon, double *delta)
{
    if (!usable(m)) return DPDO_E_INVAL;
    if (!m->filled) return dpdo__err(m->errmsg, DPDO_E_STATE, "the model is empty");
    if (epsilon) *epsilon = m->eps;
    if (delta) *delta = m->delta;
    return DPDO_OK;
}

DPDO_API int dpdo_model_privacy(dpdo_model *m, double *epsilon, double *delta)
{
    DPDO__GUARDED(m, DPDO__MAGIC_MODEL, DPDO__BUSY_SHARED, "dpdo_model_privacy",
                  model_privacy_body(m, epsilon, delta));
}

/* ---- prediction ------------------------------------------------------------------ */
static int model_predict_body(dpdo_model *m, dpdo_dataset *ds, int kind, double *out, int64_t n)
{
    if (!usable(m)) return DPDO_E_INVAL;
    if (!ds || !out) return dpdo__err(m->errmsg, DPDO_E_INVAL, "ds or out is NULL");
    if (kind < DPDO_PREDICT_MARGIN || kind > DPDO_PREDICT_PROBABILITY)
        return dpdo__err(m->errmsg, DPDO_E_INVAL,
                         "kind = %d: use DPDO_PREDICT_MARGIN, _LABEL or _PROBABILITY", kind);
    if (!m->filled) return dpdo__err(m->errmsg, DPDO_E_STATE, "the model is empty");
    if (ds->layout == DPDO__DS_EMPTY)
        return dpdo__err(m->errmsg, DPDO_E_STATE, "the dataset is empty");
    if (n != ds->n)
        return dpdo__err(m->errmsg, DPDO_E_INVAL, "n = %lld but the dataset has %lld rows",
                         (long long)n, (long long)ds->n);
    if (ds->d > m->dim)
        return dpdo__err(m->errmsg, DPDO_E_INVAL,
                         "the dataset has %lld features, the model only %lld", (long long)ds->d,
                         (long long)m->dim);
    if (kind == DPDO_PREDICT_PROBABILITY && strcmp(m->loss, "logistic") != 0)
        return dpdo__err(m->errmsg, DPDO_E_UNSUPPORTED,
                         "probabilities need the logistic loss; this model's loss is '%s'",
                         m->loss);
    if (m->ncls >= 3 && kind != DPDO_PREDICT_LABEL)
        return dpdo__err(m->errmsg, DPDO_E_UNSUPPORTED,
                         "a one-vs-rest model of %lld classes predicts labels only (its margins "
                         "per class: dpdo_model_get_class_x and dpdo_dataset_margins)",
                         (long long)m->ncls);
    if (m->ncls >= 3) {
        /* one-vs-rest: the class whose vector gives the largest margin (the first on a tie) */
        double *best = dpdo__alloc_array((size_t)n * 2, sizeof(double));
        if (!best)
            return dpdo__err(m->errmsg, DPDO_E_NOMEM, "out of memory for %lld margins",
                             (long long)n);
        double *z = best + n;
        for (int64_t k = 0; k < m->ncls; k++) {
            dpdo__margins(ds, NULL, ds->n, m->x + k * m->dim, k == 0 ? best : z);
            for (int64_t i = 0; i < n; i++)
                if (k == 0 || z[i] > best[i]) {
                    if (k > 0) best[i] = z[i];
                    out[i] = (double)m->cls[k];
                }
        }
        dpdo__free(best);
        dpdo__err_clear(m->errmsg);
        return DPDO_OK;
    }
    /* the dataset's features are the first ds->d of the model's */
    dpdo__margins(ds, NULL, ds->n, m->x, out);
    for (int64_t i = 0; i < n; i++) {
        double z = out[i];
        if (kind == DPDO_PREDICT_LABEL)
            out[i] = m->ncls == 2 ? (double)m->cls[z >= 0] : z >= 0 ? 1.0 : -1.0;
        else if (kind == DPDO_PREDICT_PROBABILITY) {
            if (z >= 0)
                out[i] = 1.0 / (1.0 + exp(-z));
            else {
                double ez = exp(z);
                out[i] = ez / (1.0 + ez);
            }
        }
    }
    dpdo__err_clear(m->errmsg);
    return DPDO_OK;
}

DPDO_API int dpdo_model_predict(dpdo_model *m, dpdo_dataset *ds, int kind, double *out, int64_t n)
{
    DPDO__GUARDED(m, DPDO__MAGIC_MODEL, DPDO__BUSY_SHARED, "dpdo_model_predict",
                  model_predict_body(m, ds, kind, out, n));
}

/* ---- Since 0.3: nodes, classes, per-class vectors, export ------------------------ */
DPDO_API int64_t dpdo_model_nodes(const dpdo_model *m)
{
    return m && DPDO__LIVE(m, DPDO__MAGIC_MODEL) && m->filled ? m->nodes : 0;
}

static int model_classes_body(dpdo_model *m, int32_t *out, int64_t cap, int64_t *len)
{
    if (!usable(m)) return DPDO_E_INVAL;
    if (!len) return dpdo__err(m->errmsg, DPDO_E_INVAL, "len is NULL");
    if (!m->filled) return dpdo__err(m->errmsg, DPDO_E_STATE, "the model is empty");
    *len = m->ncls;
    if (out && cap < m->ncls)
        return dpdo__err(m->errmsg, DPDO_E_INVAL, "cap = %lld but the model has %lld classes",
                         (long long)cap, (long long)m->ncls);
    if (out && m->ncls > 0) memcpy(out, m->cls, (size_t)m->ncls * sizeof(int32_t));
    return DPDO_OK;
}

DPDO_API int dpdo_model_classes(dpdo_model *m, int32_t *out, int64_t cap, int64_t *len)
{
    DPDO__GUARDED(m, DPDO__MAGIC_MODEL, DPDO__BUSY_SHARED, "dpdo_model_classes",
                  model_classes_body(m, out, cap, len));
}

static int model_get_class_x_body(dpdo_model *m, int64_t k, double *out, int64_t dim)
{
    if (!usable(m)) return DPDO_E_INVAL;
    if (!m->filled) return dpdo__err(m->errmsg, DPDO_E_STATE, "the model is empty");
    if (k < 0 || k >= nvec(m->ncls))
        return dpdo__err(m->errmsg, DPDO_E_INVAL, "vector %lld: the model has %lld", (long long)k,
                         (long long)nvec(m->ncls));
    if (!out || dim != m->dim)
        return dpdo__err(m->errmsg, DPDO_E_INVAL,
                         "out is NULL or dim %lld differs from the model's %lld", (long long)dim,
                         (long long)m->dim);
    memcpy(out, m->x + k * m->dim, (size_t)dim * sizeof(double));
    return DPDO_OK;
}

DPDO_API int dpdo_model_get_class_x(dpdo_model *m, int64_t k, double *out, int64_t dim)
{
    DPDO__GUARDED(m, DPDO__MAGIC_MODEL, DPDO__BUSY_SHARED, "dpdo_model_get_class_x",
                  model_get_class_x_body(m, k, out, dim));
}

/* LIBLINEAR's solver_type name of a loss (the name decides only what LIBLINEAR's predict offers:
 * probabilities for L2R_LR) */
static const char *liblinear_solver(const char *loss)
{
    if (strcmp(loss, "logistic") == 0) return "L2R_LR";
    if (strcmp(loss, "hinge") == 0) return "L2R_L1LOSS_SVC_DUAL";
    if (strcmp(loss, "squared_hinge") == 0 || strcmp(loss, "squared-hinge") == 0)
        return "L2R_L2LOSS_SVC";
    return NULL;
}

static int model_export_body(dpdo_model *m, int format, const char *path)
{
    if (!usable(m)) return DPDO_E_INVAL;
    if (!path) return dpdo__err(m->errmsg, DPDO_E_INVAL, "path is NULL");
    if (format != DPDO_MODEL_EXPORT_CSV && format != DPDO_MODEL_EXPORT_LIBLINEAR)
        return dpdo__err(m->errmsg, DPDO_E_INVAL,
                         "format = %d: use DPDO_MODEL_EXPORT_CSV or _LIBLINEAR", format);
    if (!m->filled) return dpdo__err(m->errmsg, DPDO_E_STATE, "the model is empty");
    int64_t K = nvec(m->ncls);
    if (m->dim > INT32_MAX)
        return dpdo__err(m->errmsg, DPDO_E_UNSUPPORTED, "dim %lld is beyond LIBLINEAR's int",
                         (long long)m->dim);
    textbuf t = {NULL, 0, 0, 0};
    if (format == DPDO_MODEL_EXPORT_CSV) {
        /* one row per weight vector: the label it votes for, then its dim weights */
        put(&t, "label");
        for (int64_t j = 0; j < m->dim; j++)
            put(&t, ",w%lld", (long long)j + 1);
        put(&t, "\n");
        for (int64_t k = 0; k < K; k++) {
            long lab = m->ncls >= 3 ? (long)m->cls[k] : m->ncls == 2 ? (long)m->cls[1] : 1L;
            put(&t, "%ld", lab);
            for (int64_t j = 0; j < m->dim; j++) {
                put(&t, ",");
                put_double(&t, m->x[k * m->dim + j]);
            }
            put(&t, "\n");
        }
    } else {
        const char *solver = liblinear_solver(m->loss);
        if (!solver)
            return dpdo__err(m->errmsg, DPDO_E_UNSUPPORTED,
                             "LIBLINEAR has no classifier for the loss '%s' (logistic, hinge, "
                             "squared_hinge)",
                             m->loss);
        /* the layout of LIBLINEAR's save_model (linear.cpp): with 2 classes one vector w, for
         * which a decision value > 0 predicts label[0] (our +1 or second class id); with K >= 3
         * classes w holds K values per feature, feature-major */
        put(&t, "solver_type %s\nnr_class %lld\nlabel", solver,
            (long long)(m->ncls > 0 ? m->ncls : 2));
        if (m->ncls >= 3)
            for (int64_t k = 0; k < m->ncls; k++)
                put(&t, " %ld", (long)m->cls[k]);
        else if (m->ncls == 2)
            put(&t, " %ld %ld", (long)m->cls[1], (long)m->cls[0]);
        else
            put(&t, " 1 -1");
        put(&t, "\nnr_feature %lld\nbias -1\nw\n", (long long)m->dim);
        for (int64_t j = 0; j < m->dim; j++) {
            for (int64_t k = 0; k < K; k++) {
                put(&t, "%.17g ", m->x[k * m->dim + j]);
            }
            put(&t, "\n");
        }
    }
    int rc = t.oom ? dpdo__err(m->errmsg, DPDO_E_NOMEM, "out of memory")
                   : dpdo__file_replace(path, t.p, t.len, m->errmsg, "export");
    dpdo__free(t.p);
    return rc;
}

DPDO_API int dpdo_model_export(dpdo_model *m, int format, const char *path)
{
    DPDO__GUARDED(m, DPDO__MAGIC_MODEL, DPDO__BUSY_SHARED, "dpdo_model_export",
                  model_export_body(m, format, path));
}

/* ---- for dpdo_train (lib/alg/train.c): one model from the binary runs of a training -------- */
int dpdo__model_combine(dpdo_model *m, dpdo_model *const *runs, int64_t nruns, const int32_t *cls,
                        int64_t ncls, int64_t nodes, char *err)
{
    if (!usable(m) || !runs || nruns < 1 || nruns != nvec(ncls) || (ncls > 0 && !cls))
        return dpdo__err(err, DPDO_E_INVAL, "internal: bad arguments to combine the runs");
    const struct dpdo_model *r0 = runs[0];
    for (int64_t k = 0; k < nruns; k++)
        if (!runs[k]->filled || runs[k]->dim != r0->dim || runs[k]->ncls != 0)
            return dpdo__err(err, DPDO_E_INVAL, "internal: run %lld does not fit", (long long)k);
    content c;
    memset(&c, 0, sizeof c);
    c.dim = r0->dim;
    if (c.dim * nruns > DPDO_MODEL_MAX_DIM)
        return dpdo__err(err, DPDO_E_INVAL, "%lld classes x %lld features: more than %lld values",
                         (long long)nruns, (long long)c.dim, (long long)DPDO_MODEL_MAX_DIM);
    c.x = dpdo__alloc_array((size_t)(c.dim * nruns), sizeof(double));
    c.cls = ncls > 0 ? dpdo__alloc_array((size_t)ncls, sizeof(int32_t)) : NULL;
    if (!c.x || (ncls > 0 && !c.cls)) {
        dpdo__free(c.x);
        dpdo__free(c.cls);
        return dpdo__err(err, DPDO_E_NOMEM, "out of memory");
    }
    if (ncls > 0) memcpy(c.cls, cls, (size_t)ncls * sizeof(int32_t));
    c.ncls = ncls;
    c.nodes = nodes;
    /* basic composition: every example is in every run, so the runs' figures add up */
    c.eps = 0;
    c.delta = 0;
    for (int64_t k = 0; k < nruns; k++) {
        memcpy(c.x + k * c.dim, runs[k]->x, (size_t)c.dim * sizeof(double));
        c.eps += runs[k]->eps;
        c.delta += runs[k]->delta;
        if (runs[k]->rounds > c.rounds) c.rounds = runs[k]->rounds;
    }
    if (!(c.delta < 1)) c.delta = nextafter(1.0, 0.0);
    memcpy(c.loss, r0->loss, TOKLEN);
    memcpy(c.reg, r0->reg, TOKLEN);
    memcpy(c.alg, r0->alg, TOKLEN);
    memcpy(c.acc, r0->acc, TOKLEN);
    for (int64_t k = 1; k < nruns; k++)
        if (strcmp(runs[k]->acc, r0->acc) != 0) set_token(c.acc, "mixed");
    memcpy(c.lib, r0->lib, TOKLEN);
    c.rp[0] = r0->rp[0];
    c.rp[1] = r0->rp[1];
    if (nruns > 1) set_token(c.comp, "basic");
    c.integrity = DPDO_MODEL_INTEGRITY_LOCAL;
    install(m, &c);
    return DPDO_OK;
}

/* Replace m's (single) weight vector by x[dim] (dpdo_train's tail average of a run's output). */
int dpdo__model_set_x(dpdo_model *m, const double *x, int64_t dim, char *err)
{
    if (!usable(m) || !m->filled || m->ncls >= 3 || dim != m->dim || !x)
        return dpdo__err(err, DPDO_E_INVAL, "internal: bad arguments to set the weights");
    size_t bad = dpdo__first_nonfinite(x, (size_t)dim);
    if (bad < (size_t)dim)
        return dpdo__err(err, DPDO_E_NUMERIC, "the averaged output's entry %zu is not finite", bad);
    memcpy(m->x, x, (size_t)dim * sizeof(double));
    return DPDO_OK;
}

/* dpdo_train's entry: with m's busy guard taken, the message of a failed check (rc, why) or
 * fn(m, errmsg, ctx) */
int dpdo__model_locked(dpdo_model *m, const char *what, int rc, const char *why,
                       int (*fn)(dpdo_model *, char *, void *), void *ctx)
{
    DPDO__GUARDED(m, DPDO__MAGIC_MODEL, 1, what,
                  !usable(m) ? DPDO_E_INVAL
                  : rc       ? dpdo__err(m->errmsg, rc, "%s: %s", what, why ? why : "")
                             : fn(m, m->errmsg, ctx));
}
