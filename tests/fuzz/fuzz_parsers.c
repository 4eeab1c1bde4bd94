/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target for the LIBSVM, CSV and IDX parsers (and the gzip
 * layer in front of them). Input layout: byte 0 selects the parser and its
 * options, the rest is the file image (possibly gzip). For IDX the
 * (inflated) image starts with a 2-byte big-endian length of the images
 * part, followed by the images file and then the labels file.
 *
 * Build and run: see the command in docs/data.md ("Fuzzing"): clang with
 * -fsanitize=fuzzer,address,undefined over this file and the core, rng and
 * data sources, then `fuzz_parsers -max_total_time=60 tests/fuzz/corpus`.
 * tests/test_fuzz_replay.c replays tests/fuzz/corpus/ as a normal test. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "dpdo/dataset.h"
#include "dpdo/status.h"
#include "data/data_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Check the invariants of a successfully filled dataset; returns 0 if fine. */
static int fuzz_check(struct dpdo_dataset *ds)
{
    if (ds->n < 1 || ds->d < 1) return 1;
    for (int64_t i = 0; i < ds->n; i++) {
        if (!(ds->row_norm[i] >= 0) || ds->row_norm[i] > ds->max_row_norm) return 2;
        if (ds->y[i] != ds->y[i]) return 3;
    }
    if (ds->layout == DPDO__DS_CSR) {
        if (ds->rowptr[0] != 0) return 4;
        for (int64_t i = 0; i < ds->n; i++)
            for (int64_t k = ds->rowptr[i]; k < ds->rowptr[i + 1]; k++) {
                if (ds->colidx[k] < 0 || ds->colidx[k] >= ds->d) return 5;
                if (k > ds->rowptr[i] && ds->colidx[k] <= ds->colidx[k - 1]) return 6;
            }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    unsigned sel = data[0];
    data++;
    size--;
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    dpdo_dataset *ds = NULL;
    if (dpdo_dataset_create(&ds) != DPDO_OK) {
        free(buf);
        return 0;
    }
    dpdo_load_options o;
    dpdo_load_options_init(&o, sizeof o);
        o.layout = (sel >> 2) & 1 ? DPDO_LAYOUT_CSR : (sel >> 3) & 1 ? DPDO_LAYOUT_DENSE : DPDO_LAYOUT_AUTO;
    /* the input limits (docs/data.md "Limits") keep a forced dense layout and
     * gzip bombs within the fuzzer's memory limit; they are part of what is
     * fuzzed (AUTO falls back to CSR above max_dense_cells) */
    o.max_dense_cells = 1 << 20;
    o.max_features = 1 << 20;
    o.max_rows = 1 << 20;
    o.max_decompressed_bytes = 1 << 24;
    o.label_map = (int32_t)((sel >> 4) % 3);
    o.reject_qid = (sel >> 6) & 1;
    o.header = (sel >> 6) & 1;
    o.label_column = (sel >> 7) ? -1 : 0;
    if (sel & 0x80) o.n_features = 8;
    int rc = DPDO_OK;
    char err[DPDO__ERRMSG_LEN];
    /* the gzip layer works on a library-owned buffer */
    char *img = dpdo__alloc(size + 1);
    size_t len = size;
    if (img) {
        memcpy(img, buf, size + 1);
        rc = dpdo__maybe_gunzip("fuzz", &o, &img, &len, err);
    }
    if (img && rc == DPDO_OK) {
        switch (sel & 3) {
        case 0: rc = dpdo__parse_libsvm(ds, "fuzz", img, len, &o); break;
        case 1:
            o.layout = 0;
            rc = dpdo__parse_csv(ds, "fuzz", img, len, &o);
            break;
        default: {
            /* two big-endian bytes give the image length, then images, labels */
            o.layout = 0;
            if (len < 2) {
                rc = DPDO_E_FORMAT; /* nothing to parse */
                break;
            }
            size_t cut = ((size_t)(unsigned char)img[0] << 8) | (unsigned char)img[1];
            if (cut > len - 2) cut = len - 2;
            rc = dpdo__parse_idx(ds, "img", (const unsigned char *)img + 2, cut, "lab",
                                 (const unsigned char *)img + 2 + cut, len - 2 - cut, &o);
        }
        }
        if (rc == DPDO_OK && fuzz_check((struct dpdo_dataset *)ds) != 0) abort();
        if (rc != DPDO_OK && rc != DPDO_E_FORMAT && rc != DPDO_E_INVAL && rc != DPDO_E_UNSUPPORTED &&
            rc != DPDO_E_NOMEM)
            abort();
        if (rc != DPDO_OK && dpdo_dataset_layout(ds) != DPDO_LAYOUT_EMPTY) abort();
    }
    dpdo__free(img);
    dpdo_dataset_destroy(ds);
    free(buf);
    return 0;
}
