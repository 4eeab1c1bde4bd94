/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target for the gzip layer in front of every loader
 * (dpdo__maybe_gunzip) with small limits. Byte 0 selects how the rest is
 * turned into a gzip stream: 0: taken as is (the gzip magic is forced in
 * front), 1: compressed with zlib and then one byte (position from bytes 1-2)
 * flipped, 2: compressed and truncated (length from bytes 1-2), 3: compressed
 * and repeated as 2..9 concatenated members. Bits 2-3 of byte 0 pick the
 * limits (max_decompressed_bytes 4 KiB .. 16 MiB, max_compression_ratio 0,
 * 2, 100). Checked: a success never exceeds the limits and is the exact
 * inflation of what was compressed (modes 1-3 without damage); a failure is
 * DPDO_E_FORMAT or DPDO_E_NOMEM and frees nothing it does not own.
 * The inflated bytes then go through the LIBSVM parser. Corpus:
 * tests/fuzz/corpus_gzip. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "dpdo/dataset.h"
#include "dpdo/status.h"
#include "data/data_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) return 0;
    unsigned mode = data[0] & 3, lim = (data[0] >> 2) & 3;
    size_t pos = (size_t)data[1] << 8 | data[2];
    const uint8_t *pay = data + 3;
    size_t plen = size - 3;
    /* build the stream in a library-owned buffer */
    size_t cap = compressBound((uLong)plen) + 64, len = 0;
    int copies = mode == 3 ? 2 + (int)(pos % 8) : 1;
    unsigned char *one = malloc(cap);
    if (!one) return 0;
    if (mode == 0) {
        one[0] = 0x1f;
        one[1] = 0x8b;
        memcpy(one + 2, pay, plen);
        len = plen + 2;
    } else {
        z_stream z;
        memset(&z, 0, sizeof z);
        if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
            free(one);
            return 0;
        }
        z.next_in = (Bytef *)pay;
        z.avail_in = (uInt)plen;
        z.next_out = one;
        z.avail_out = (uInt)cap;
        deflate(&z, Z_FINISH);
        len = cap - z.avail_out;
        deflateEnd(&z);
        if (mode == 1 && len) one[pos % len] ^= (unsigned char)(1u << (data[2] & 7));
        if (mode == 2 && len) len = pos % len;
    }
    char *buf = dpdo__alloc(len * (size_t)copies + 1);
    if (!buf) {
        free(one);
        return 0;
    }
    for (int k = 0; k < copies; k++) memcpy(buf + (size_t)k * len, one, len);
    size_t blen = len * (size_t)copies;
    buf[blen] = '\0';
    free(one);
    dpdo_load_options o;
    dpdo_load_options_init(&o, sizeof o);
    static const int64_t maxd[4] = {4096, 65536, 1 << 20, 1 << 24};
    static const double ratio[4] = {0, 2, 100, 100};
    o.max_decompressed_bytes = maxd[lim];
    o.max_compression_ratio = ratio[(data[0] >> 4) & 3];
    o.max_features = 1 << 16;
    o.max_dense_cells = 1 << 16;
    char err[DPDO__ERRMSG_LEN];
    size_t outlen = blen;
    int was_gz = blen >= 2 && (unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b;
    int rc = dpdo__maybe_gunzip("fuzz", &o, &buf, &outlen, err);
    size_t want = plen * (size_t)copies;
    if (mode == 3 && rc != DPDO_OK && want <= (size_t)o.max_decompressed_bytes && rc != DPDO_E_NOMEM)
        abort(); /* valid members within the limits must inflate */
    if (rc == DPDO_OK) {
        if (was_gz && outlen > (size_t)o.max_decompressed_bytes) abort();
        if (!was_gz && outlen != blen) abort();
        if (mode == 3) {
            if (outlen != want) abort();
            for (int k = 0; k < copies; k++)
                if (memcmp(buf + (size_t)k * plen, pay, plen) != 0) abort();
        }
        if (buf[outlen] != '\0') abort();
        dpdo_dataset *ds = NULL;
        if (dpdo_dataset_create(&ds) == DPDO_OK) {
            rc = dpdo__parse_libsvm((struct dpdo_dataset *)ds, "fuzz", buf, outlen, &o);
            if (rc != DPDO_OK && rc != DPDO_E_FORMAT && rc != DPDO_E_NOMEM) abort();
            dpdo_dataset_destroy(ds);
        }
    } else if (rc != DPDO_E_FORMAT && rc != DPDO_E_NOMEM) {
        abort();
    }
    dpdo__free(buf);
    return 0;
}
