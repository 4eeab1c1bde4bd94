/* SPDX-License-Identifier: BSD-3-Clause */
/* Text loaders: LIBSVM/SVMlight and CSV. Both parse a whole file image in
 * one pass into growable arrays, check everything, and install the result
 * only at the end, so a failure leaves the dataset as it was. */
#include "data_impl.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small growable arrays ------------------------------------------------ */
typedef struct {
    void *p;
    size_t n, cap, size;
} vec;

static int vec_reserve(vec *v, size_t want)
{
    if (want <= v->cap) return 0;
    size_t nc = v->cap ? v->cap + v->cap / 2 : 1024;
    if (nc < want) nc = want;
    size_t bytes;
    if (!dpdo__mul_size(nc, v->size, &bytes)) return -1;
    void *np = dpdo__realloc(v->p, bytes);
    if (!np) return -1;
    v->p = np;
    v->cap = nc;
    return 0;
}

/* ---- shared checks ------------------------------------------------------------ */
struct ctx {
    struct dpdo_dataset *ds;
    const char *name;
    const char *buf;
    dpdo_load_options o;
    int64_t line;
    const char *line_start;
    int saw_zero, saw_minus1;
    int integral;
};

static int64_t col_of(const struct ctx *c, const char *p)
{
    return (int64_t)(p - c->line_start) + 1;
}

/* Quote at most 24 characters of the token at p (up to whitespace) */
static int tok_len(const char *p, const char *end)
{
    int k = 0;
    while (p + k < end && k < 24 && p[k] != ' ' && p[k] != '\t' && p[k] != '\n' && p[k] != '\r')
        k++;
    return k;
}

#define FMT_ERR(c, p, ...) fmt_err((c), (p), __VA_ARGS__)

DPDO__PRINTF(3, 4)
static int fmt_err(struct ctx *c, const char *p, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return dpdo__err(c->ds->errmsg, DPDO_E_FORMAT, "'%s' line %lld, column %lld: %s", c->name,
                     (long long)c->line, (long long)col_of(c, p), what);
}

/* Apply label_map to a raw label; returns 0 or a DPDO_E_FORMAT with message. */
static int map_label(struct ctx *c, const char *p, double raw, double *out)
{
    if (!isfinite(raw)) return FMT_ERR(c, p, "label out of range");
    if (raw != floor(raw) || raw < INT32_MIN || raw > INT32_MAX) c->integral = 0;
    switch (c->o.label_map) {
    case DPDO_LABEL_BINARY:
        if (raw == 1.0)
            *out = 1.0;
        else if (raw == -1.0) {
            *out = -1.0;
            c->saw_minus1 = 1;
        } else if (raw == 0.0) {
            *out = -1.0;
            c->saw_zero = 1;
        } else
            return FMT_ERR(c, p, "label %.17g is not binary (expected -1/+1 or 0/1)", raw);
        if (c->saw_zero && c->saw_minus1)
            return FMT_ERR(c, p, "labels mix 0 and -1 (expected -1/+1 or 0/1)");
        return 0;
    case DPDO_LABEL_POSITIVE:
        *out = raw == c->o.positive_label ? 1.0 : -1.0;
        return 0;
    default:
        *out = raw;
        return 0;
    }
}

static int check_opts(struct dpdo_dataset *ds, const dpdo_load_options *in, dpdo_load_options *o)
{
    dpdo__load_defaults(o);
    int rc = dpdo__options_accept(o, sizeof *o, offsetof(dpdo_load_options, reserved), in,
                                  "dpdo_load_options", ds->errmsg);
    if (rc) return rc;
    if (o->n_features < 0 || o->n_features > INT32_MAX)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "n_features = %lld out of range [0, 2^31-1]",
                         (long long)o->n_features);
    if (o->layout < 0 || o->layout > 2)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL,
                         "layout = %d: use DPDO_LAYOUT_AUTO, _DENSE or _CSR", (int)o->layout);
    if (!(o->dense_threshold >= 0.0 && o->dense_threshold <= 1.0))
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "dense_threshold must be in [0, 1]");
    if (o->label_map < 0 || o->label_map > 2)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL,
                         "label_map = %d: use DPDO_LABEL_RAW, _BINARY or _POSITIVE",
                         (int)o->label_map);
    if (!isfinite(o->positive_label))
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "positive_label is not finite");
    if (o->delimiter <= 0 || o->delimiter > 127 || o->delimiter == '\n' || o->delimiter == '.' ||
        o->delimiter == '-' || o->delimiter == '+' || (o->delimiter >= '0' && o->delimiter <= '9'))
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "delimiter %d is not usable", (int)o->delimiter);
    if (o->scale < 0 || o->scale > 2)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL,
                         "scale = %d: use DPDO_IDX_UNIT, _ROW_NORMALIZE or _RAW", (int)o->scale);
    if (o->header < 0 || o->header > 1 || o->reject_qid < 0 || o->reject_qid > 1)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "header and reject_qid must be 0 or 1");
    if ((rc = dpdo__check_limits(o, ds->errmsg))) return rc;
    if (o->max_features > 0 && o->n_features > o->max_features)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "n_features = %lld exceeds max_features = %lld",
                         (long long)o->n_features, (long long)o->max_features);
    if (ds->refs > 0)
        return dpdo__err(ds->errmsg, DPDO_E_STATE,
                         "dataset is borrowed by %d shard(s); destroy them before refilling",
                         (int)ds->refs);
    return DPDO_OK;
}

/* The row limit (DPDO_E_FORMAT naming max_rows), checked as rows are added. */
static int rows_over(struct ctx *c, const char *p, size_t rows)
{
    if (c->o.max_rows > 0 && (uint64_t)rows >= (uint64_t)c->o.max_rows)
        return FMT_ERR(c, p, "more than max_rows = %lld samples (a load option)",
                       (long long)c->o.max_rows);
    return 0;
}

/* Build class ids from integral raw labels; y_raw given */
static int32_t *make_cls(const double *raw, int64_t n)
{
    int32_t *cls = dpdo__alloc_array((size_t)n, sizeof(int32_t));
    if (cls)
        for (int64_t i = 0; i < n; i++)
            cls[i] = (int32_t)raw[i];
    return cls;
}

/* ---- LIBSVM ---------------------------------------------------------------------- */
static inline int is_sep(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r';
}
/* Common start of every text parser: a zeroed context over buf and the
 * validated options. */
static int ctx_init(struct ctx *c, struct dpdo_dataset *ds, const char *name, const char *buf,
                    const dpdo_load_options *opts)
{
    memset(c, 0, sizeof *c);
    c->ds = ds;
    c->name = name;
    c->buf = buf;
    c->integral = 1;
    return check_opts(ds, opts, &c->o);
}

static inline int is_end_tok(const char *p, const char *end)
{
    return p == end || *p == ' ' || *p == '\t' || *p == '\r' || *p == '\n';
}

int dpdo__parse_libsvm(struct dpdo_dataset *ds, const char *name, const char *buf, size_t len,
                       const dpdo_load_options *opts)
{
    struct ctx c;
    int rc = ctx_init(&c, ds, name, buf, opts);
    if (rc) return rc;
    const int64_t nf = c.o.n_features;

    vec y = {NULL, 0, 0, sizeof(double)}, raw = {NULL, 0, 0, sizeof(double)};
    vec rp = {NULL, 0, 0, sizeof(int64_t)}, ci = {NULL, 0, 0, sizeof(int32_t)},
        va = {NULL, 0, 0, sizeof(double)};
    size_t est = len / 16 + 16;
    if (vec_reserve(&ci, est) || vec_reserve(&va, est) || vec_reserve(&rp, len / 256 + 16))
        goto oom;
    ((int64_t *)rp.p)[0] = 0;
    rp.n = 1;

    const char *p = buf, *end = buf + len;
    int64_t maxidx = 0;
    c.line = 1;
    while (p < end) {
        c.line_start = p;
        while (p < end && is_sep(*p))
            p++;
        if (p == end) break;
        if (*p == '\n') {
            p++;
            c.line++;
            continue;
        }
        if (*p == '#') {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            p = nl ? nl : end;
            continue;
        }
        /* label */
        double lab;
        const char *q = dpdo__parse_double(p, end, &lab);
        if (!q || !is_end_tok(q, end)) {
            if (q && *q == ':')
                rc = FMT_ERR(&c, p, "missing label (the line starts with a feature '%.*s')",
                             tok_len(p, end), p);
            else
                rc = FMT_ERR(&c, p, "bad label '%.*s'", tok_len(p, end), p);
            goto fail;
        }
        double ym;
        if ((rc = map_label(&c, p, lab, &ym))) goto fail;
        if ((rc = rows_over(&c, p, y.n))) goto fail;
        if (vec_reserve(&y, y.n + 1) || vec_reserve(&raw, raw.n + 1) || vec_reserve(&rp, rp.n + 1))
            goto oom;
        ((double *)y.p)[y.n++] = ym;
        ((double *)raw.p)[raw.n++] = lab;
        p = q;
        int64_t prev = 0;
        for (;;) {
            while (p < end && is_sep(*p))
                p++;
            if (p == end || *p == '\n') break;
            if (*p == '#') {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                p = nl ? nl : end;
                break;
            }
            const char *t = p;
            if (end - p >= 4 && memcmp(p, "qid:", 4) == 0) {
                if (c.o.reject_qid) {
                    rc = FMT_ERR(&c, t, "'qid:' is not supported (reject_qid is set)");
                    goto fail;
                }
                p += 4;
                if (p == end || (unsigned)(*p - '0') >= 10u) {
                    rc = FMT_ERR(&c, t, "bad qid '%.*s'", tok_len(t, end), t);
                    goto fail;
                }
                while (p < end && (unsigned)(*p - '0') < 10u)
                    p++;
                if (!is_end_tok(p, end)) {
                    rc = FMT_ERR(&c, t, "bad qid '%.*s'", tok_len(t, end), t);
                    goto fail;
                }
                continue;
            }
            if ((unsigned)(*p - '0') >= 10u) {
                rc = FMT_ERR(&c, t, "bad token '%.*s' (expected index:value)", tok_len(t, end), t);
                goto fail;
            }
            int64_t idx = 0;
            int over = 0;
            while (p < end && (unsigned)(*p - '0') < 10u) {
                if (idx > ((int64_t)1 << 40))
                    over = 1;
                else
                    idx = idx * 10 + (*p - '0');
                p++;
            }
            if (p == end || *p != ':') {
                rc = FMT_ERR(&c, t, "bad token '%.*s' (expected index:value)", tok_len(t, end), t);
                goto fail;
            }
            if (idx == 0) {
                rc = FMT_ERR(&c, t, "feature index 0 is not allowed (indices start at 1)");
                goto fail;
            }
            if (over || idx > INT32_MAX) {
                rc = FMT_ERR(&c, t, "feature index '%.*s' overflows the dimension limit 2^31-1",
                             tok_len(t, end), t);
                goto fail;
            }
            if (idx <= prev) {
                rc = FMT_ERR(&c, t,
                             "feature index %lld is not greater than the previous index %lld "
                             "(indices must be strictly increasing)",
                             (long long)idx, (long long)prev);
                goto fail;
            }
            if (nf == 0 && c.o.max_features > 0 && idx > c.o.max_features) {
                rc = FMT_ERR(&c, t,
                             "feature index %lld exceeds max_features = %lld (a load option; "
                             "a dense model would need %lld doubles per vector)",
                             (long long)idx, (long long)c.o.max_features, (long long)idx);
                goto fail;
            }
            if (nf > 0 && idx > nf) {
                rc = FMT_ERR(&c, t, "feature index %lld exceeds n_features = %lld", (long long)idx,
                             (long long)nf);
                goto fail;
            }
            p++; /* ':' */
            double v;
            const char *vs = p;
            q = dpdo__parse_double(p, end, &v);
            if (!q || !is_end_tok(q, end)) {
                if (vs == end || is_end_tok(vs, end))
                    rc = FMT_ERR(&c, vs, "missing value after '%lld:'", (long long)idx);
                else
                    rc = FMT_ERR(&c, vs, "bad value '%.*s'", tok_len(vs, end), vs);
                goto fail;
            }
            if (!isfinite(v)) {
                rc = FMT_ERR(&c, vs, "value '%.*s' is out of range", tok_len(vs, end), vs);
                goto fail;
            }
            p = q;
            if (ci.n == ci.cap && (vec_reserve(&ci, ci.n + 1) || vec_reserve(&va, ci.n + 1)))
                goto oom;
            ((int32_t *)ci.p)[ci.n++] = (int32_t)(idx - 1);
            ((double *)va.p)[va.n++] = v;
            prev = idx;
            if (idx > maxidx) maxidx = idx;
        }
        ((int64_t *)rp.p)[rp.n++] = (int64_t)ci.n;
    }
    int64_t n = (int64_t)y.n;
    if (n == 0) {
        rc = dpdo__err(ds->errmsg, DPDO_E_FORMAT, "'%s': no samples found", name);
        goto fail;
    }
    int64_t d = nf > 0 ? nf : maxidx;
    if (d == 0) {
        rc = dpdo__err(ds->errmsg, DPDO_E_FORMAT,
                       "'%s': no feature indices in the file (set n_features)", name);
        goto fail;
    }
    int64_t nnz = (int64_t)ci.n;
    int layout = c.o.layout;
    size_t nd;
    int fits = dpdo__mul_size((size_t)n, (size_t)d, &nd) &&
               dpdo__mul_size(nd, sizeof(double), &(size_t){0});
    int over = fits && c.o.max_dense_cells > 0 && (uint64_t)nd > (uint64_t)c.o.max_dense_cells;
    if (layout == DPDO__DS_DENSE && over) {
        rc = dpdo__err(ds->errmsg, DPDO_E_FORMAT,
                       "'%s': a dense %lld x %lld matrix has more than max_dense_cells = %lld "
                       "cells (a load option; %lld stored values: use the CSR layout)",
                       name, (long long)n, (long long)d, (long long)c.o.max_dense_cells,
                       (long long)nnz);
        goto fail;
    }
    fits = fits && !over; /* AUTO: CSR above the dense cell limit */
    if (layout == DPDO_LAYOUT_AUTO)
        layout = fits && (double)nnz >= c.o.dense_threshold * (double)n * (double)d ? DPDO__DS_DENSE
                                                                                    : DPDO__DS_CSR;
    if (layout == DPDO__DS_DENSE && !fits) {
        rc = dpdo__err(ds->errmsg, DPDO_E_FORMAT, "'%s': dense %lld x %lld matrix overflows", name,
                       (long long)n, (long long)d);
        goto fail;
    }
    struct dpdo__ds_content cont = {.layout = layout, .n = n, .d = d, .y = y.p, .loaded = 1};
    cont.own[0] = y.p;
    y.p = NULL;
    if (c.integral) {
        int32_t *cls = make_cls(raw.p, n);
        if (!cls) {
            dpdo__content_free(&cont);
            goto oom;
        }
        cont.cls = cls;
        cont.own[1] = cls;
    }
    if (layout == DPDO__DS_DENSE) {
        double *X = dpdo__calloc(nd, sizeof(double));
        if (!X) {
            dpdo__content_free(&cont);
            goto oom;
        }
        const int64_t *rpp = rp.p;
        const int32_t *cip = ci.p;
        const double *vap = va.p;
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = rpp[i]; k < rpp[i + 1]; k++)
                X[(size_t)i * (size_t)d + (size_t)cip[k]] = vap[k];
        cont.X = X;
        cont.own[2] = X;
    } else {
        cont.rowptr = rp.p;
        cont.colidx = ci.p;
        cont.val = va.p;
        cont.own[2] = rp.p;
        cont.own[3] = ci.p;
        cont.own[4] = va.p;
        rp.p = ci.p = va.p = NULL;
    }
    dpdo__free(raw.p);
    dpdo__free(rp.p);
    dpdo__free(ci.p);
    dpdo__free(va.p);
    return dpdo__ds_install(ds, &cont);

oom:
    rc = dpdo__err(ds->errmsg, DPDO_E_NOMEM, "out of memory loading '%s'", name);
fail:
    dpdo__free(y.p);
    dpdo__free(raw.p);
    dpdo__free(rp.p);
    dpdo__free(ci.p);
    dpdo__free(va.p);
    return rc;
}

/* ---- CSV ------------------------------------------------------------------------- */
int dpdo__parse_csv(struct dpdo_dataset *ds, const char *name, const char *buf, size_t len,
                    const dpdo_load_options *opts)
{
    struct ctx c;
    int rc = ctx_init(&c, ds, name, buf, opts);
    if (rc) return rc;
    if (c.o.layout == DPDO_LAYOUT_CSR)
        return dpdo__err(ds->errmsg, DPDO_E_UNSUPPORTED, "the CSV loader produces dense data only");
    const char delim = (char)c.o.delimiter;
    vec X = {NULL, 0, 0, sizeof(double)}, y = {NULL, 0, 0, sizeof(double)},
        raw = {NULL, 0, 0, sizeof(double)};
    const char *p = buf, *end = buf + len;
    int64_t ncols = -1, labcol = -1, d = 0;
    c.line = 1;
    if (c.o.header) {
        const char *nl = memchr(p, '\n', len);
        p = nl ? nl + 1 : end;
        c.line = 2;
    }
    while (p < end) {
        c.line_start = p;
        const char *s = p;
        while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
            s++;
        if (s == end) break;
        if (*s == '\n') {
            p = s + 1;
            c.line++;
            continue;
        }
        /* one data line: fields */
        int64_t f = 0;
        double lab = 0;
        const char *labp = s;
        size_t row0 = X.n;
        for (;;) {
            while (s < end && (*s == ' ' || *s == '\t'))
                s++;
            const char *t = s;
            double v;
            const char *q = (s < end && *s != delim && *s != '\n' && *s != '\r')
                                ? dpdo__parse_double(s, end, &v)
                                : NULL;
            if (!q) {
                if (s == end || *s == delim || *s == '\n' || *s == '\r')
                    rc = FMT_ERR(&c, t, "empty field %lld", (long long)f + 1);
                else
                    rc = FMT_ERR(&c, t, "bad number '%.*s' in field %lld", tok_len(t, end), t,
                                 (long long)f + 1);
                goto fail;
            }
            s = q;
            while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
                s++;
            if (s < end && *s != delim && *s != '\n') {
                rc = FMT_ERR(&c, t, "bad number '%.*s' in field %lld", tok_len(t, end), t,
                             (long long)f + 1);
                goto fail;
            }
            if (!isfinite(v)) {
                rc = FMT_ERR(&c, t, "value in field %lld is out of range", (long long)f + 1);
                goto fail;
            }
            if (ncols >= 0 && f >= ncols) {
                rc = FMT_ERR(&c, t, "too many fields (expected %lld)", (long long)ncols);
                goto fail;
            }
            if (ncols < 0 && c.o.max_features > 0 && f > c.o.max_features) {
                rc = FMT_ERR(&c, t, "more than max_features = %lld features (a load option)",
                             (long long)c.o.max_features);
                goto fail;
            }
            int is_lab = ncols >= 0 && f == labcol;
            if (is_lab) {
                lab = v;
                labp = t;
            } else {
                if (vec_reserve(&X, X.n + 1)) goto oom;
                ((double *)X.p)[X.n++] = v;
            }
            f++;
            if (s < end && *s == delim) {
                s++;
                continue;
            }
            break;
        }
        if (ncols < 0) {
            /* first data line fixes the column count; it was stored entirely
             * into X, so take the label out now */
            ncols = f;
            if (ncols < 2) {
                rc = FMT_ERR(&c, s,
                             "need a label and at least one feature per line (found %lld field)",
                             (long long)f);
                goto fail;
            }
            labcol = c.o.label_column < 0 ? ncols - 1 : c.o.label_column;
            if (c.o.label_column < -1 || labcol >= ncols) {
                rc = dpdo__err(ds->errmsg, DPDO_E_INVAL,
                               "label_column = %d but '%s' has %lld columns", (int)c.o.label_column,
                               name, (long long)ncols);
                goto fail;
            }
            double *row = (double *)X.p + row0;
            lab = row[labcol];
            memmove(row + labcol, row + labcol + 1, (size_t)(ncols - 1 - labcol) * sizeof(double));
            X.n--;
            d = ncols - 1;
        } else if (f < ncols) {
            rc = FMT_ERR(&c, s, "too few fields: %lld (expected %lld)", (long long)f,
                         (long long)ncols);
            goto fail;
        }
        double ym;
        if ((rc = map_label(&c, labp, lab, &ym))) goto fail;
        if ((rc = rows_over(&c, labp, y.n))) goto fail;
        if (c.o.max_dense_cells > 0 && (uint64_t)X.n > (uint64_t)c.o.max_dense_cells) {
            rc = FMT_ERR(&c, labp, "more than max_dense_cells = %lld values (a load option)",
                         (long long)c.o.max_dense_cells);
            goto fail;
        }
        if (vec_reserve(&y, y.n + 1) || vec_reserve(&raw, raw.n + 1)) goto oom;
        ((double *)y.p)[y.n++] = ym;
        ((double *)raw.p)[raw.n++] = lab;
        if (s < end && *s == '\n') {
            s++;
            c.line++;
        }
        p = s;
    }
    if (y.n == 0) {
        rc = dpdo__err(ds->errmsg, DPDO_E_FORMAT, "'%s': no samples found", name);
        goto fail;
    }
    if (c.o.n_features > 0 && c.o.n_features != d) {
        rc = dpdo__err(ds->errmsg, DPDO_E_FORMAT, "'%s': %lld features but n_features = %lld", name,
                       (long long)d, (long long)c.o.n_features);
        goto fail;
    }
    struct dpdo__ds_content cont = {
        .layout = DPDO__DS_DENSE, .n = (int64_t)y.n, .d = d, .X = X.p, .y = y.p, .loaded = 1};
    cont.own[0] = X.p;
    cont.own[1] = y.p;
    X.p = y.p = NULL;
    if (c.integral) {
        int32_t *cls = make_cls(raw.p, cont.n);
        if (!cls) {
            dpdo__content_free(&cont);
            goto oom;
        }
        cont.cls = cls;
        cont.own[2] = cls;
    }
    dpdo__free(raw.p);
    return dpdo__ds_install(ds, &cont);
oom:
    rc = dpdo__err(ds->errmsg, DPDO_E_NOMEM, "out of memory loading '%s'", name);
fail:
    dpdo__free(X.p);
    dpdo__free(y.p);
    dpdo__free(raw.p);
    return rc;
}

/* ---- file entry points ------------------------------------------------------------- */
typedef int (*text_parser)(struct dpdo_dataset *, const char *, const char *, size_t,
                           const dpdo_load_options *);

static int load_text(dpdo_dataset *ds, const char *path, const dpdo_load_options *opts,
                     text_parser parse)
{
    if (!ds || !DPDO__LIVE(ds, DPDO__MAGIC_DATASET)) return DPDO_E_INVAL; /* NULL or destroyed */
    if (!path) return dpdo__err(ds->errmsg, DPDO_E_INVAL, "path is NULL");
    dpdo_load_options o;
    int rc = check_opts(ds, opts, &o);
    if (rc) return rc;
    char *buf;
    size_t len;
    rc = dpdo__read_text(path, parse == dpdo__parse_csv ? o.delimiter : 0, &o, &buf, &len,
                         ds->errmsg);
    if (rc) return rc;
    rc = parse(ds, path, buf, len, opts);
    dpdo__free(buf);
    return rc;
}

int dpdo_dataset_load_libsvm(dpdo_dataset *ds, const char *path, const dpdo_load_options *opts)
{
    return load_text(ds, path, opts, dpdo__parse_libsvm);
}

int dpdo_dataset_load_csv(dpdo_dataset *ds, const char *path, const dpdo_load_options *opts)
{
    return load_text(ds, path, opts, dpdo__parse_csv);
}
