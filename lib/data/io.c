/* SPDX-License-Identifier: BSD-3-Clause */
/* File input for the loaders: whole-file reads, transparent gzip (detected by
 * the magic bytes 1f 8b, never by the name), a fast correctly-rounded number
 * parser, loader options and the LIBSVM writer. */
#include "data_impl.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

/* strerror() is not thread-safe; name the usual cases ourselves. */
static const char *errno_text(int e)
{
    switch (e) {
    case ENOENT:
        return "no such file or directory";
    case EACCES:
        return "permission denied";
    case EISDIR:
        return "is a directory";
    case ENOMEM:
        return "out of memory";
    case EIO:
        return "input/output error";
    case ENOTDIR:
        return "a path component is not a directory";
    case EMFILE:
        return "too many open files";
    default:
        return "read error";
    }
}

/* A limit option: > 0 is the limit, 0 (or less) none */
static uint64_t limit_of(int64_t v)
{
    return v > 0 ? (uint64_t)v : UINT64_MAX;
}

int dpdo__check_limits(const dpdo_load_options *o, char *errmsg)
{
    if (o->max_file_bytes < 0 || o->max_decompressed_bytes < 0 || o->max_dense_cells < 0 ||
        o->max_features < 0 || o->max_rows < 0)
        return dpdo__err(errmsg, DPDO_E_INVAL,
                         "max_file_bytes, max_decompressed_bytes, max_dense_cells, max_features "
                         "and max_rows must be >= 0 (0 = no limit)");
    if (!(o->max_compression_ratio >= 0.0) || isinf(o->max_compression_ratio))
        return dpdo__err(errmsg, DPDO_E_INVAL,
                         "max_compression_ratio must be finite and >= 0 (0 = no limit)");
    return DPDO_OK;
}

/* ---- checks of text while it is read --------------------------------------------------------
 * A token of more than DPDO__TEXT_TOKEN_MAX bytes (a run without a separator) contains a whole
 * aligned block of TOK_BLOCK = DPDO__TEXT_TOKEN_MAX / 2 bytes without one. Each block is looked
 * at once, when the bytes up to DPDO__TEXT_TOKEN_MAX past its end are there (or the input ended):
 * a block with a separator costs a memchr that stops at the first one; a block without one has
 * its run measured exactly. */
enum { TOK_BLOCK = DPDO__TEXT_TOKEN_MAX / 2 };

typedef struct text_check {
    int kind;    /* DPDO__READ_*: TEXT refuses NUL bytes */
    int tokens;  /* check token lengths */
    int delim;   /* a separator besides space, tab, CR, LF; 0: none */
    size_t done; /* bytes [0, done) checked for long tokens (a multiple of TOK_BLOCK) */
} text_check;

static inline int is_text_sep(int delim, char ch)
{
    return ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r' || (delim && ch == (char)delim);
}

static int block_has_sep(const char *b, size_t n, int delim)
{
    return memchr(b, ' ', n) || memchr(b, '\n', n) || memchr(b, '\t', n) || memchr(b, '\r', n) ||
           (delim && memchr(b, delim, n));
}

/* buf[0, len) holds the text so far; eof: it is all of it */
static int check_tokens(text_check *tc, const char *name, const char *buf, size_t len, int eof,
                        char *errmsg)
{
    while (tc->done + TOK_BLOCK <= len &&
           (eof || len - tc->done >= TOK_BLOCK + DPDO__TEXT_TOKEN_MAX)) {
        size_t s = tc->done, e = tc->done + TOK_BLOCK;
        tc->done = e;
        if (block_has_sep(buf + s, TOK_BLOCK, tc->delim)) continue;
        while (s > 0 && !is_text_sep(tc->delim, buf[s - 1]))
            s--;
        while (e < len && !is_text_sep(tc->delim, buf[e]) && e - s <= DPDO__TEXT_TOKEN_MAX)
            e++;
        if (e - s <= DPDO__TEXT_TOKEN_MAX) continue;
        long long line = 1;
        size_t ls = 0;
        for (const char *q = buf; (q = memchr(q, '\n', (size_t)(buf + s - q))) != NULL; q++)
            line++, ls = (size_t)(q - buf) + 1;
        return dpdo__err(errmsg, DPDO_E_FORMAT,
                         "'%s' line %lld, column %llu: a token of more than %d bytes (no space, "
                         "tab, newline%s); not LIBSVM or CSV text",
                         name, line, (unsigned long long)(s - ls + 1), DPDO__TEXT_TOKEN_MAX,
                         tc->delim ? " or delimiter" : "");
    }
    return DPDO_OK;
}

static int gunzip(const char *name, const dpdo_load_options *opts, char **bufp, size_t *lenp,
                  text_check *tc, char *errmsg);

static int read_impl(const char *path, text_check *tc, const dpdo_load_options *opts, char **bufp,
                     size_t *lenp, char *errmsg)
{
    const int kind = tc->kind;
    dpdo_load_options defaults;
    if (!opts) {
        dpdo__load_defaults(&defaults);
        opts = &defaults;
    }
    const uint64_t maxb = limit_of(opts->max_file_bytes);
    *bufp = NULL;
    *lenp = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return dpdo__err(errmsg, DPDO_E_IO, "cannot open '%s': %s", path, errno_text(errno));
    struct stat st;
    size_t cap = 1 << 16;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return dpdo__err(errmsg, DPDO_E_IO, "cannot read '%s': is a directory", path);
    }
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        if ((uint64_t)st.st_size > maxb) {
            fclose(f);
            return dpdo__err(errmsg, DPDO_E_FORMAT,
                             "'%s' has %lld bytes, more than the limit max_file_bytes = %llu "
                             "(a load option)",
                             path, (long long)st.st_size, (unsigned long long)maxb);
        }
        cap = (size_t)st.st_size + 1;
    }
    if (cap - 1 > maxb) cap = (size_t)maxb + 2; /* read at most maxb + 1 bytes */
    char *buf = dpdo__alloc(cap);
    if (!buf) {
        fclose(f);
        return dpdo__err(errmsg, DPDO_E_NOMEM, "out of memory reading '%s'", path);
    }
    size_t len = 0;
    int sniffed = 0, gz = 0, rc = DPDO_OK;
    for (;;) {
        if (len + 1 >= cap) {
            size_t nc = cap * 2;
            if (nc - 1 > maxb) nc = (size_t)maxb + 2;
            char *nb = nc > cap ? dpdo__realloc(buf, nc) : NULL;
            if (!nb) {
                rc = dpdo__err(errmsg, DPDO_E_NOMEM, "out of memory reading '%s'", path);
                break;
            }
            buf = nb;
            cap = nc;
        }
        size_t want = cap - 1 - len;
        if (want > DPDO__READ_CHUNK) want = DPDO__READ_CHUNK; /* checks see the file as it comes */
        size_t got = fread(buf + len, 1, want, f);
        len += got;
        if (len > maxb) {
            rc = dpdo__err(errmsg, DPDO_E_FORMAT,
                           "'%s': more than max_file_bytes = %llu bytes to read (a load option; "
                           "an endless device or pipe?)",
                           path, (unsigned long long)maxb);
            break;
        }
        /* look at the first bytes as soon as there are enough, so that a
         * device such as /dev/zero is refused at once, not after max_file_bytes */
        if (!sniffed && (len >= 4 || got == 0)) {
            const unsigned char *u = (const unsigned char *)buf;
            sniffed = 1;
            gz = len >= 2 && u[0] == 0x1f && u[1] == 0x8b;
            if (!gz && kind == DPDO__READ_IDX && (len < 4 || u[0] || u[1] || u[2] != 0x08)) {
                rc = dpdo__err(errmsg, DPDO_E_FORMAT,
                               "'%s' byte 0: not an IDX file (magic must be 00 00 08 xx, or the "
                               "gzip magic 1f 8b)",
                               path);
                break;
            }
        }
        if (kind == DPDO__READ_TEXT && !gz && got) {
            const char *z = memchr(buf + len - got, '\0', got);
            if (z) {
                rc = dpdo__err(errmsg, DPDO_E_FORMAT,
                               "'%s' byte %zu: NUL byte, this is not a text file (binary data?)",
                               path, (size_t)(z - buf));
                break;
            }
        }
        if (tc->tokens && !gz && (rc = check_tokens(tc, path, buf, len, got == 0, errmsg))) break;
        if (got == 0) break;
    }
    int bad = !rc && ferror(f);
    int e = errno;
    fclose(f);
    if (rc) {
        dpdo__free(buf);
        return rc;
    }
    if (bad) {
        dpdo__free(buf);
        return dpdo__err(errmsg, DPDO_E_IO, "cannot read '%s': %s", path, errno_text(e));
    }
    buf[len] = '\0';
    *bufp = buf;
    *lenp = len;
    rc = gunzip(path, opts, bufp, lenp, tc, errmsg);
    if (rc) {
        dpdo__free(*bufp);
        *bufp = NULL;
        *lenp = 0;
    }
    return rc;
}

int dpdo__read_file(const char *path, int kind, const dpdo_load_options *opts, char **bufp,
                    size_t *lenp, char *errmsg)
{
    text_check tc = {kind, 0, 0, 0};
    return read_impl(path, &tc, opts, bufp, lenp, errmsg);
}

int dpdo__read_text(const char *path, int delim, const dpdo_load_options *opts, char **bufp,
                    size_t *lenp, char *errmsg)
{
    text_check tc = {DPDO__READ_TEXT, 1, delim, 0};
    return read_impl(path, &tc, opts, bufp, lenp, errmsg);
}

/* zlib allocations go through our allocator (and its fault hook) */
static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    return dpdo__alloc_array(items, size);
}
static void z_free(voidpf opaque, voidpf p)
{
    (void)opaque;
    dpdo__free(p);
}

int dpdo__maybe_gunzip(const char *name, const dpdo_load_options *opts, char **bufp, size_t *lenp,
                       char *errmsg)
{
    text_check tc = {DPDO__READ_ANY, 0, 0, 0};
    return gunzip(name, opts, bufp, lenp, &tc, errmsg);
}

/* tc: text checks on the inflated bytes as they come out (NUL bytes for DPDO__READ_TEXT, long
 * tokens), so that a bomb that cannot be text stops within a few output chunks */
static int gunzip(const char *name, const dpdo_load_options *opts, char **bufp, size_t *lenp,
                  text_check *tc, char *errmsg)
{
    const unsigned char *in = (const unsigned char *)*bufp;
    size_t inlen = *lenp;
    if (inlen < 2 || in[0] != 0x1f || in[1] != 0x8b) return DPDO_OK;
    dpdo_load_options defaults;
    if (!opts) {
        dpdo__load_defaults(&defaults);
        opts = &defaults;
    }
    /* the output limit: max_decompressed_bytes, and max(16 MiB, ratio x input) */
    const uint64_t maxd = limit_of(opts->max_decompressed_bytes);
    uint64_t maxr = UINT64_MAX;
    if (opts->max_compression_ratio > 0) {
        double r = opts->max_compression_ratio * (double)inlen;
        maxr = r >= 1.8e19 ? UINT64_MAX : (uint64_t)r;
        if (maxr < ((uint64_t)16 << 20)) maxr = (uint64_t)16 << 20;
    }
    const uint64_t maxout = maxd < maxr ? maxd : maxr;
    const size_t maxcap = maxout >= SIZE_MAX - 2 ? SIZE_MAX : (size_t)maxout + 2;
    /* guess the output size from ISIZE (size mod 2^32 of the last member) */
    size_t cap = inlen * 4 + 1024;
    if (inlen >= 18) {
        size_t isz = (size_t)in[inlen - 4] | (size_t)in[inlen - 3] << 8 |
                     (size_t)in[inlen - 2] << 16 | (size_t)in[inlen - 1] << 24;
        /* deflate cannot expand more than ~1032:1, so a larger ISIZE is a
         * lie (or a multi-member file): do not let it drive the allocation */
        if (isz + 1 > cap && isz / 1032 <= inlen) cap = isz + 1;
    }
    if (cap > maxcap) cap = maxcap; /* at most maxout + 1 bytes of output */
    char *out = dpdo__alloc(cap);
    if (!out) return dpdo__err(errmsg, DPDO_E_NOMEM, "out of memory inflating '%s'", name);
    z_stream z;
    memset(&z, 0, sizeof z);
    z.zalloc = z_alloc;
    z.zfree = z_free;
    int zr = inflateInit2(&z, 15 + 16);
    if (zr != Z_OK) {
        dpdo__free(out);
        return dpdo__err(errmsg, zr == Z_MEM_ERROR ? DPDO_E_NOMEM : DPDO_E_FORMAT,
                         "cannot inflate '%s': zlib init failed", name);
    }
    size_t ipos = 0, opos = 0;
    int rc = DPDO_OK;
    for (;;) {
        if (opos > maxout) {
            if (maxd <= maxr)
                rc = dpdo__err(errmsg, DPDO_E_FORMAT,
                               "'%s': inflates to more than max_decompressed_bytes = %llu bytes "
                               "(a load option)",
                               name, (unsigned long long)maxd);
            else
                rc = dpdo__err(errmsg, DPDO_E_FORMAT,
                               "'%s': %zu gzip bytes inflate to more than %llu bytes, a ratio "
                               "above max_compression_ratio = %g (a load option; a gzip bomb?)",
                               name, inlen, (unsigned long long)maxr, opts->max_compression_ratio);
            break;
        }
        if (cap - opos < 2) {
            size_t nc = cap * 2;
            if (nc > maxcap || nc < cap) nc = maxcap;
            char *nb = nc > cap ? dpdo__realloc(out, nc) : NULL;
            if (!nb) {
                rc = dpdo__err(errmsg, DPDO_E_NOMEM, "out of memory inflating '%s'", name);
                break;
            }
            out = nb;
            cap = nc;
        }
        size_t ain = inlen - ipos, aout = cap - 1 - opos;
        z.next_in = (Bytef *)(in + ipos);
        z.avail_in = ain > 0x40000000u ? 0x40000000u : (uInt)ain;
        z.next_out = (Bytef *)(out + opos);
        /* text is checked as it comes out, one chunk at a time */
        size_t amax = tc->kind == DPDO__READ_TEXT ? DPDO__READ_CHUNK : 0x40000000u;
        z.avail_out = aout > amax ? (uInt)amax : (uInt)aout;
        uInt gi = z.avail_in, go = z.avail_out;
        zr = inflate(&z, Z_NO_FLUSH);
        ipos += gi - z.avail_in;
        size_t o0 = opos;
        opos += go - z.avail_out;
        if (tc->kind == DPDO__READ_TEXT && opos > o0) {
            const char *nul = memchr(out + o0, '\0', opos - o0);
            if (nul) {
                rc = dpdo__err(errmsg, DPDO_E_FORMAT,
                               "'%s': inflated byte %zu is a NUL byte, this is not a text file "
                               "(binary data or a gzip bomb?)",
                               name, (size_t)(nul - out));
                break;
            }
        }
        if (tc->tokens && (zr == Z_OK || zr == Z_STREAM_END) &&
            (rc = check_tokens(tc, name, out, opos, zr == Z_STREAM_END && ipos == inlen, errmsg)))
            break;
        if (zr == Z_STREAM_END) {
            if (ipos == inlen) break;
            /* another gzip member follows (as `cat a.gz b.gz` makes) */
            if (inlen - ipos >= 2 && in[ipos] == 0x1f && in[ipos + 1] == 0x8b) {
                inflateReset(&z);
                continue;
            }
            rc = dpdo__err(errmsg, DPDO_E_FORMAT,
                           "'%s': trailing garbage after gzip data at byte %zu", name, ipos);
            break;
        }
        if (zr == Z_MEM_ERROR) {
            rc = dpdo__err(errmsg, DPDO_E_NOMEM, "out of memory inflating '%s'", name);
            break;
        }
        if (zr == Z_DATA_ERROR || zr == Z_NEED_DICT || zr == Z_STREAM_ERROR) {
            rc = dpdo__err(errmsg, DPDO_E_FORMAT, "'%s': corrupt gzip data near byte %zu (%s)",
                           name, ipos, z.msg ? z.msg : "data error");
            break;
        }
        if (ipos == inlen && z.avail_out > 0) {
            rc = dpdo__err(errmsg, DPDO_E_FORMAT,
                           "'%s': truncated gzip data (input ends at byte %zu before the end "
                           "of the compressed stream)",
                           name, inlen);
            break;
        }
        if (zr == Z_BUF_ERROR && gi - z.avail_in == 0 && go - z.avail_out == 0 && z.avail_out > 0) {
            rc = dpdo__err(errmsg, DPDO_E_FORMAT, "'%s': truncated gzip data", name);
            break;
        }
    }
    inflateEnd(&z);
    if (rc) {
        dpdo__free(out);
        return rc;
    }
    out[opos] = '\0';
    dpdo__free(*bufp);
    *bufp = out;
    *lenp = opos;
    return DPDO_OK;
}

/* ---- numbers ---------------------------------------------------------------
 * Clinger's fast path: if the decimal significand has at most 19 digits and
 * is <= 2^53, and the decimal exponent e satisfies |e| <= 22, then both the
 * significand and 10^|e| are exact doubles and one IEEE multiplication or
 * division gives the correctly rounded result. Everything else goes to
 * strtod (glibc's is correctly rounded), which parses exactly the same
 * characters because our grammar is a subset of its grammar and the number
 * is followed by a non-number character (the buffer is NUL-terminated). */
static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                               1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                               1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

const char *dpdo__parse_double(const char *p, const char *end, double *out)
{
    const char *s = p;
    int neg = 0;
    if (s < end && (*s == '+' || *s == '-')) {
        neg = *s == '-';
        s++;
    }
    uint64_t mant = 0;
    int nd = 0, trunc = 0, any = 0;
    int64_t dexp = 0;
    /* leading zeros carry no significant digit */
    while (s < end && *s == '0') {
        s++;
        any = 1;
    }
    for (; s < end; s++) {
        unsigned dg = (unsigned)(*s - '0');
        if (dg >= 10u) break;
        any = 1;
        if (nd < 19) {
            mant = mant * 10 + dg;
            nd++;
        } else {
            dexp++;
            trunc |= dg != 0;
        }
    }
    if (s < end && *s == '.') {
        s++;
        if (nd == 0)
            while (s < end && *s == '0') {
                s++;
                dexp--;
                any = 1;
            }
        for (; s < end; s++) {
            unsigned dg = (unsigned)(*s - '0');
            if (dg >= 10u) break;
            any = 1;
            if (nd < 19) {
                mant = mant * 10 + dg;
                nd++;
                dexp--;
            } else {
                trunc |= dg != 0;
            }
        }
    }
    if (!any) return NULL;
    if (s < end && (*s == 'e' || *s == 'E')) {
        const char *e = s + 1;
        int eneg = 0;
        if (e < end && (*e == '+' || *e == '-')) {
            eneg = *e == '-';
            e++;
        }
        if (e < end && (unsigned)(*e - '0') < 10u) {
            int64_t ev = 0;
            while (e < end && (unsigned)(*e - '0') < 10u) {
                if (ev < 100000000) ev = ev * 10 + (*e - '0');
                e++;
            }
            dexp += eneg ? -ev : ev;
            s = e;
        }
    }
    if (!trunc) {
        if (mant == 0) {
            *out = neg ? -0.0 : 0.0;
            return s;
        }
        if (mant <= ((uint64_t)1 << 53) && dexp >= -22 && dexp <= 22) {
            double v = (double)mant;
            v = dexp < 0 ? v / p10[-dexp] : v * p10[dexp];
            *out = neg ? -v : v;
            return s;
        }
    }
    char *e2 = NULL;
    double v = strtod(p, &e2);
    if (e2 != s) return NULL; /* e.g. a locale with another decimal point */
    *out = v;
    return s;
}

/* ---- options ----------------------------------------------------------------- */
void dpdo__load_defaults(dpdo_load_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->n_features = 0;
    o->layout = DPDO_LAYOUT_AUTO;
    o->dense_threshold = 0.25;
    o->label_map = DPDO_LABEL_RAW;
    o->positive_label = 1.0;
    o->reject_qid = 0;
    o->label_column = 0;
    o->header = 0;
    o->delimiter = ',';
    o->scale = DPDO_IDX_UNIT;
    o->max_file_bytes = (int64_t)1 << 34;
    o->max_decompressed_bytes = (int64_t)1 << 34;
    o->max_compression_ratio = 100.0;
    o->max_dense_cells = (int64_t)1 << 30;
    o->max_features = (int64_t)1 << 26;
    o->max_rows = (int64_t)1 << 31;
}

int dpdo_load_options_init(dpdo_load_options *o, size_t struct_size)
{
    dpdo_load_options d;
    dpdo__load_defaults(&d);
    return dpdo__options_init(o, struct_size, &d, sizeof d);
}

/* ---- writer ---------------------------------------------------------------------- */
int dpdo_dataset_save_libsvm(dpdo_dataset *ds, const char *path)
{
    if (!ds || !DPDO__LIVE(ds, DPDO__MAGIC_DATASET)) return DPDO_E_INVAL; /* NULL or destroyed */
    if (!path) return dpdo__err(ds->errmsg, DPDO_E_INVAL, "path is NULL");
    if (ds->layout == DPDO__DS_EMPTY)
        return dpdo__err(ds->errmsg, DPDO_E_STATE, "dataset is empty (fill it first)");
    FILE *f = fopen(path, "wb");
    if (!f)
        return dpdo__err(ds->errmsg, DPDO_E_IO, "cannot open '%s' for writing: %s", path,
                         errno_text(errno));
    for (int64_t i = 0; i < ds->n; i++) {
        fprintf(f, "%.17g", ds->y[i]);
        if (ds->layout == DPDO__DS_DENSE) {
            const double *x = ds->X + (size_t)i * (size_t)ds->d;
            for (int64_t j = 0; j < ds->d; j++)
                if (x[j] != 0.0) fprintf(f, " %lld:%.17g", (long long)j + 1, x[j]);
        } else {
            for (int64_t k = ds->rowptr[i]; k < ds->rowptr[i + 1]; k++)
                fprintf(f, " %d:%.17g", (int)ds->colidx[k] + 1, ds->val[k]);
        }
        fputc('\n', f);
    }
    int bad = ferror(f);
    if (fclose(f) != 0) bad = 1;
    if (bad) return dpdo__err(ds->errmsg, DPDO_E_IO, "write error on '%s'", path);
    return DPDO_OK;
}
