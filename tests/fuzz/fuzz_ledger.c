/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target for the ledger loader (dpdo_ledger_load), plain and authenticated.
 * Input layout: byte 0: bit 0 = load under a fixed 32-byte key (the authenticated format),
 * bits 1-2 = node count - 1 (1..4); the rest is the ledger text. A successful load must give a
 * ledger whose save -> load round trip is exact and whose counts are in [0, 2^53]; anything else
 * must fail with DPDO_E_FORMAT or DPDO_E_VERSION and leave the ledger unchanged. A broken
 * invariant aborts (the fuzzer's crash signal).
 *
 * Build and run (docs/privacy.md "Fuzzing the ledger"):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Ilib tests/fuzz/fuzz_ledger.c \
 *         lib/core/[a-z]*.c lib/rng/[a-z_]*.c lib/privacy/[a-z]*.c -lsodium -lm -o fuzz_ledger
 *   ./fuzz_ledger -max_total_time=60 tests/fuzz/corpus_ledger
 * tests/test_fuzz_ledger.c replays tests/fuzz/corpus_ledger/ in make check. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "dpdo/accountant.h"
#include "dpdo/status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const unsigned char FUZZ_KEY[32] = "libdpdo ledger fuzzing key 0001";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int keyed = data[0] & 1;
    int64_t nodes = 1 + ((data[0] >> 1) & 3);
    dpdo_ledger *l = NULL, *l2 = NULL;
    if (dpdo_ledger_create(&l, nodes) != DPDO_OK) return 0;
    if (keyed && dpdo_ledger_set_key(l, FUZZ_KEY, sizeof FUZZ_KEY) != DPDO_OK) abort();
    int64_t before = 0;
    if (dpdo_ledger_save(l, NULL, 0, &before) != DPDO_OK) abort();
    int rc = dpdo_ledger_load(l, (const char *)data + 1, (int64_t)size - 1);
    if (rc != DPDO_OK) {
        if (rc != DPDO_E_FORMAT && rc != DPDO_E_VERSION && rc != DPDO_E_NOMEM) abort();
        if (dpdo_ledger_events(l) != 0) abort(); /* unchanged: still empty */
        if (dpdo_ledger_errmsg(l)[0] == 0) abort(); /* the error is explained */
    } else {
        int64_t len = 0;
        if (dpdo_ledger_save(l, NULL, 0, &len) != DPDO_OK || len < 1) abort();
        char *buf = malloc((size_t)len + 1);
        if (!buf || dpdo_ledger_save(l, buf, len + 1, &len) != DPDO_OK) abort();
        for (int64_t i = 0; i < nodes; i++) {
            int64_t c = dpdo_ledger_charges(l, i);
            if (c < 0) abort();
        }
        if (dpdo_ledger_create(&l2, nodes) != DPDO_OK) abort();
        if (keyed && dpdo_ledger_set_key(l2, FUZZ_KEY, sizeof FUZZ_KEY) != DPDO_OK) abort();
        if (dpdo_ledger_load(l2, buf, len) != DPDO_OK) abort(); /* its own output loads */
        if (dpdo_ledger_events(l2) != dpdo_ledger_events(l)) abort();
        for (int64_t i = 0; i < nodes; i++)
            if (dpdo_ledger_charges(l2, i) != dpdo_ledger_charges(l, i)) abort();
        free(buf);
        dpdo_ledger_destroy(l2);
    }
    dpdo_ledger_destroy(l);
    return 0;
}
