/* SPDX-License-Identifier: BSD-3-Clause */
/* IDX loader (MNIST / Fashion-MNIST): big-endian headers, unsigned-byte
 * images and labels, optionally gzip-compressed. */
#include "data_impl.h"
#include <math.h>
#include <string.h>

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

int dpdo__parse_idx(struct dpdo_dataset *ds, const char *iname, const unsigned char *ib,
                    size_t ilen, const char *lname, const unsigned char *lb, size_t llen,
                    const dpdo_load_options *opts)
{
    dpdo_load_options o;
    dpdo__load_defaults(&o);
    int rc = dpdo__options_accept(&o, sizeof o, offsetof(dpdo_load_options, reserved), opts,
                                  "dpdo_load_options", ds->errmsg);
    if (rc) return rc;
    if (o.scale < 0 || o.scale > 2)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL,
                         "scale = %d: use DPDO_IDX_UNIT, _ROW_NORMALIZE or _RAW", (int)o.scale);
    if (o.layout == DPDO_LAYOUT_CSR)
        return dpdo__err(ds->errmsg, DPDO_E_UNSUPPORTED, "the IDX loader produces dense data only");
    if ((rc = dpdo__check_limits(&o, ds->errmsg))) return rc;
    if (o.label_map < 0 || o.label_map > 2 || !isfinite(o.positive_label))
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "bad label_map or positive_label");
    if (ds->refs > 0)
        return dpdo__err(ds->errmsg, DPDO_E_STATE,
                         "dataset is borrowed by %d shard(s); destroy them before refilling",
                         (int)ds->refs);
    /* images: 00 00 08 03, n, rows, cols  (or 00 00 08 02, n, d) */
    if (ilen < 4 || ib[0] != 0 || ib[1] != 0 || ib[2] != 0x08 || (ib[3] != 3 && ib[3] != 2))
        return dpdo__err(
            ds->errmsg, DPDO_E_FORMAT,
            "'%s' byte 0: bad IDX magic (expected 00 00 08 03 for unsigned-byte images)", iname);
    size_t hdr = 4 + 4 * (size_t)ib[3];
    if (ilen < hdr)
        return dpdo__err(ds->errmsg, DPDO_E_FORMAT, "'%s': truncated IDX header (%zu bytes)", iname,
                         ilen);
    uint64_t n = be32(ib + 4);
    uint64_t d = be32(ib + 8);
    if (ib[3] == 3) d *= be32(ib + 12);
    if (n == 0 || d == 0)
        return dpdo__err(ds->errmsg, DPDO_E_FORMAT, "'%s': header gives %llu images of %llu pixels",
                         iname, (unsigned long long)n, (unsigned long long)d);
    size_t nd;
    if (d > INT32_MAX || !dpdo__mul_size((size_t)n, (size_t)d, &nd) ||
        !dpdo__mul_size(nd, sizeof(double), &(size_t){0}))
        return dpdo__err(ds->errmsg, DPDO_E_FORMAT, "'%s': dimensions %llu x %llu overflow", iname,
                         (unsigned long long)n, (unsigned long long)d);
    if (o.max_rows > 0 && n > (uint64_t)o.max_rows)
        return dpdo__err(ds->errmsg, DPDO_E_FORMAT,
                         "'%s': %llu images, more than max_rows = %lld (a load option)", iname,
                         (unsigned long long)n, (long long)o.max_rows);
    if (o.max_features > 0 && d > (uint64_t)o.max_features)
        return dpdo__err(
            ds->errmsg, DPDO_E_FORMAT,
            "'%s': %llu pixels per image, more than max_features = %lld (a load option)", iname,
            (unsigned long long)d, (long long)o.max_features);
    if (o.max_dense_cells > 0 && nd > (uint64_t)o.max_dense_cells)
        return dpdo__err(
            ds->errmsg, DPDO_E_FORMAT,
            "'%s': %llu x %llu pixels, more than max_dense_cells = %lld (a load option)", iname,
            (unsigned long long)n, (unsigned long long)d, (long long)o.max_dense_cells);
    if (ilen - hdr != nd)
        return dpdo__err(ds->errmsg, DPDO_E_FORMAT,
                         "'%s': size mismatch: the header announces %llu x %llu bytes of pixels "
                         "but the file has %zu after the %zu-byte header%s",
                         iname, (unsigned long long)n, (unsigned long long)d, ilen - hdr, hdr,
                         ilen - hdr < nd ? " (truncated)" : "");
    if (llen < 8 || lb[0] != 0 || lb[1] != 0 || lb[2] != 0x08 || lb[3] != 1)
        return dpdo__err(
            ds->errmsg, DPDO_E_FORMAT,
            "'%s' byte 0: bad IDX magic (expected 00 00 08 01 for unsigned-byte labels)", lname);
    if (be32(lb + 4) != n)
        return dpdo__err(ds->errmsg, DPDO_E_FORMAT, "'%s': %lu labels but '%s' has %llu images",
                         lname, (unsigned long)be32(lb + 4), iname, (unsigned long long)n);
    if (llen - 8 != n)
        return dpdo__err(ds->errmsg, DPDO_E_FORMAT,
                         "'%s': size mismatch: the header announces %llu labels but the file has "
                         "%zu bytes after the 8-byte header%s",
                         lname, (unsigned long long)n, llen - 8,
                         llen - 8 < n ? " (truncated)" : "");
    double *X = dpdo__alloc_array(nd, sizeof(double));
    double *y = X ? dpdo__alloc_array((size_t)n, sizeof(double)) : NULL;
    int32_t *cls = y ? dpdo__alloc_array((size_t)n, sizeof(int32_t)) : NULL;
    if (!cls) {
        dpdo__free(X);
        dpdo__free(y);
        return dpdo__err(ds->errmsg, DPDO_E_NOMEM, "out of memory loading '%s'", iname);
    }
    const unsigned char *px = ib + hdr;
    double lut[256];
    for (int v = 0; v < 256; v++)
        lut[v] = o.scale == DPDO_IDX_RAW ? (double)v : (double)v / 255.0;
    for (size_t i = 0; i < (size_t)n; i++) {
        double *row = X + i * (size_t)d;
        const unsigned char *src = px + i * (size_t)d;
        for (size_t j = 0; j < (size_t)d; j++)
            row[j] = lut[src[j]];
        if (o.scale == DPDO_IDX_ROW_NORMALIZE) {
            double s = 0;
            for (size_t j = 0; j < (size_t)d; j++)
                s += row[j] * row[j];
            if (s > 0) {
                double inv = 1.0 / sqrt(s);
                for (size_t j = 0; j < (size_t)d; j++)
                    row[j] *= inv;
            }
        }
        int c = lb[8 + i];
        cls[i] = c;
        if (o.label_map == DPDO_LABEL_POSITIVE)
            y[i] = (double)c == o.positive_label ? 1.0 : -1.0;
        else if (o.label_map == DPDO_LABEL_BINARY) {
            if (c > 1) {
                dpdo__free(X);
                dpdo__free(y);
                dpdo__free(cls);
                return dpdo__err(ds->errmsg, DPDO_E_FORMAT,
                                 "'%s' byte %zu: label %d is not binary (expected 0/1)", lname,
                                 8 + i, c);
            }
            y[i] = c ? 1.0 : -1.0;
        } else
            y[i] = (double)c;
    }
    struct dpdo__ds_content cont = {
        .layout = DPDO__DS_DENSE, .n = (int64_t)n, .d = (int64_t)d, .X = X, .y = y, .cls = cls};
    cont.own[0] = X;
    cont.own[1] = y;
    cont.own[2] = cls;
    return dpdo__ds_install(ds, &cont);
}

int dpdo_dataset_load_idx(dpdo_dataset *ds, const char *images_path, const char *labels_path,
                          const dpdo_load_options *opts)
{
    if (!ds || !DPDO__LIVE(ds, DPDO__MAGIC_DATASET)) return DPDO_E_INVAL; /* NULL or destroyed */
    if (!images_path || !labels_path)
        return dpdo__err(ds->errmsg, DPDO_E_INVAL, "images_path or labels_path is NULL");
    dpdo_load_options o;
    dpdo__load_defaults(&o);
    int rc = dpdo__options_accept(&o, sizeof o, offsetof(dpdo_load_options, reserved), opts,
                                  "dpdo_load_options", ds->errmsg);
    if (rc) return rc;
    if (ds->refs > 0)
        return dpdo__err(ds->errmsg, DPDO_E_STATE,
                         "dataset is borrowed by %d shard(s); destroy them before refilling",
                         (int)ds->refs);
    char *ib = NULL, *lb = NULL;
    size_t il = 0, ll = 0;
    if ((rc = dpdo__check_limits(&o, ds->errmsg))) return rc;
    rc = dpdo__read_file(labels_path, DPDO__READ_IDX, &o, &lb, &ll, ds->errmsg);
    if (!rc) rc = dpdo__read_file(images_path, DPDO__READ_IDX, &o, &ib, &il, ds->errmsg);
    if (!rc)
        rc = dpdo__parse_idx(ds, images_path, (const unsigned char *)ib, il, labels_path,
                             (const unsigned char *)lb, ll, opts);
    dpdo__free(ib);
    dpdo__free(lb);
    return rc;
}
