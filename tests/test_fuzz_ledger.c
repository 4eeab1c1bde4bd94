/* SPDX-License-Identifier: BSD-3-Clause */
/* The ledger loader (issue 15):
 *  - the overflow reproducer (a 19- and a 20-digit count with a recomputed checksum) is an error
 *    naming its line, not a negative count or epsilon 0;
 *  - with a key: save/load round trip; a plain (version 1) file with lowered counts and a
 *    recomputed FNV checksum is refused; an edited authenticated file, a truncated one, one
 *    under another key, a foreign run's and a stale (older sequence) one are refused with a
 *    message naming the problem;
 *  - replays tests/fuzz/corpus_ledger/ (and every prefix) through the libFuzzer target. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "fuzz/fuzz_ledger.c"

static uint64_t fnv(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* Replace the checksum line of a version-1 text in place (the attacker's "recomputed checksum"). */
static void rechecksum(char *t)
{
    char *c = strstr(t, "checksum ");
    size_t body = (size_t)(c - t);
    snprintf(c, 27, "checksum %016llx\n", (unsigned long long)fnv(t, body));
}

static dpdo_event *gauss_event(double sens, double sigma)
{
    dpdo_event *ev = NULL;
    CHECK_EQ(dpdo_event_create(&ev), DPDO_OK);
    CHECK_EQ(dpdo_event_set_gaussian(ev, NULL, sens, sigma), DPDO_OK);
    return ev;
}

static void overflow_reproducer(void)
{
    dpdo_ledger *l = NULL;
    CHECK_EQ(dpdo_ledger_create(&l, 2), DPDO_OK);
    const char *digits[] = {"9999999999999999999", "18446744073709551617", "9007199254740993" /* 2^53 + 1 */};
    for (int k = 0; k < 3; k++) {
        char t[512];
        snprintf(t, sizeof t,
                 "dpdo-ledger 1\nnodes 2\nevents 1\nevent 1 0 0x1p+0 0 0 0x1p+0 0x1p+2\ncounts %s 3\n"
                 "checksum 0000000000000000\n", digits[k]);
        rechecksum(t);
        CHECK_EQ(dpdo_ledger_load(l, t, (int64_t)strlen(t)), DPDO_E_FORMAT);
        CHECK_STR_CONTAINS(dpdo_ledger_errmsg(l), "line 5");
        CHECK_STR_CONTAINS(dpdo_ledger_errmsg(l), "out of range");
        CHECK_EQ(dpdo_ledger_events(l), 0);
    }
    /* 2^53 itself is the largest count that loads */
    char t[512];
    snprintf(t, sizeof t, "dpdo-ledger 1\nnodes 2\nevents 1\nevent 1 0 0x1p+0 0 0 0x1p+0 0x1p+2\ncounts 9007199254740992 3\n"
                          "checksum 0000000000000000\n");
    rechecksum(t);
    CHECK_EQ(dpdo_ledger_load(l, t, (int64_t)strlen(t)), DPDO_OK);
    CHECK_EQ(dpdo_ledger_charges(l, 0), (int64_t)1 << 53);
    /* other numbers are range-checked too: nodes, events, sampling sizes, mechanism */
    const char *bad[] = {
        "dpdo-ledger 1\nnodes 99999999999999999999\nevents 0\nchecksum 0000000000000000\n",
        "dpdo-ledger 1\nnodes 2\nevents -1\nchecksum 0000000000000000\n",
        "dpdo-ledger 1\nnodes 2\nevents 1\nevent 1 2 0x1p-1 99999999999999999999 1 0x1p+0 0x1p+2\ncounts 1 1\nchecksum 0000000000000000\n",
        "dpdo-ledger 1\nnodes 2\nevents 1\nevent 4294967297 0 0x1p+0 0 0 0x1p+0 0x1p+2\ncounts 1 1\nchecksum 0000000000000000\n",
        "dpdo-ledger 1\nnodes 2\nevents 1\nevent 1 0 0x1p+0 0 0 0x1p+0 0x1p+2\ncounts 1 -1\nchecksum 0000000000000000\n",
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char b[512];
        snprintf(b, sizeof b, "%s", bad[k]);
        rechecksum(b);
        CHECK_EQ(dpdo_ledger_load(l, b, (int64_t)strlen(b)), DPDO_E_FORMAT);
        CHECK_STR_CONTAINS(dpdo_ledger_errmsg(l), "line ");
    }
    dpdo_ledger_destroy(l);
}

static char *save(dpdo_ledger *l, int64_t *len)
{
    CHECK_EQ(dpdo_ledger_save(l, NULL, 0, len), DPDO_OK);
    char *t = malloc((size_t)*len + 1);
    CHECK_EQ(dpdo_ledger_save(l, t, *len + 1, len), DPDO_OK);
    return t;
}

static void authenticated(void)
{
    const unsigned char key[32] = "a 32-byte key for the ledger MAC", other[32] = "another 32-byte key, not the one";
    dpdo_event *ev = gauss_event(1.0, 4.0);
    dpdo_ledger *l = NULL, *m = NULL;
    CHECK_EQ(dpdo_ledger_create(&l, 2), DPDO_OK);
    CHECK_EQ(dpdo_ledger_set_key(l, key, 8), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_ledger_errmsg(l), "[16, 64]");
    CHECK_EQ(dpdo_ledger_set_key(l, NULL, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_ledger_set_key(NULL, key, 32), DPDO_E_INVAL);
    /* the attack on a plain ledger: lower the counts, recompute the checksum */
    CHECK_EQ(dpdo_ledger_charge(l, ev, 40, NULL, -1), DPDO_OK);
    int64_t len = 0;
    char *plain = save(l, &len);
    char *c = strstr(plain, "counts 40 40");
    CHECK(c != NULL);
    memcpy(c, "counts 01 01", 12);
    rechecksum(plain);
    CHECK_EQ(dpdo_ledger_create(&m, 2), DPDO_OK);
    CHECK_EQ(dpdo_ledger_load(m, plain, len), DPDO_OK); /* without a key it loads: a checksum is not a MAC */
    CHECK_EQ(dpdo_ledger_charges(m, 0), 1);
    dpdo_ledger_destroy(m);
    CHECK_EQ(dpdo_ledger_create(&m, 2), DPDO_OK);
    CHECK_EQ(dpdo_ledger_set_key(m, key, 32), DPDO_OK);
    CHECK_EQ(dpdo_ledger_load(m, plain, len), DPDO_E_FORMAT); /* with a key: refused */
    CHECK_STR_CONTAINS(dpdo_ledger_errmsg(m), "not authenticated");
    free(plain);
    /* authenticated round trip into a pristine ledger (it adopts the run) */
    CHECK_EQ(dpdo_ledger_set_key(l, key, 32), DPDO_OK);
    char *t = save(l, &len);
    CHECK(strncmp(t, "dpdo-ledger 2\n", 14) == 0 && strstr(t, "\nmac ") && strstr(t, "\nrun ") && strstr(t, "\nsequence "));
    CHECK_EQ(dpdo_ledger_load(m, t, len), DPDO_OK);
    CHECK_EQ(dpdo_ledger_charges(m, 1), 40);
    /* edited (counts lowered, every other byte kept) */
    char *e = malloc((size_t)len + 1);
    memcpy(e, t, (size_t)len + 1);
    memcpy(strstr(e, "counts 40 40"), "counts 01 01", 12);
    dpdo_ledger *f = NULL;
    CHECK_EQ(dpdo_ledger_create(&f, 2), DPDO_OK);
    CHECK_EQ(dpdo_ledger_set_key(f, key, 32), DPDO_OK);
    CHECK_EQ(dpdo_ledger_load(f, e, len), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_ledger_errmsg(f), "MAC mismatch");
    /* truncated: the MAC line cut off, or cut in the middle */
    int64_t body = (int64_t)(strstr(t, "\nmac ") - t) + 1;
    CHECK_EQ(dpdo_ledger_load(f, t, body), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_ledger_errmsg(f), "truncated");
    for (int64_t cut = 0; cut < len; cut += 7) CHECK(dpdo_ledger_load(f, t, cut) != DPDO_OK);
    /* another key */
    dpdo_ledger *g = NULL;
    CHECK_EQ(dpdo_ledger_create(&g, 2), DPDO_OK);
    CHECK_EQ(dpdo_ledger_set_key(g, other, 32), DPDO_OK);
    CHECK_EQ(dpdo_ledger_load(g, t, len), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_ledger_errmsg(g), "another key");
    /* foreign: g (its own run, with charges) refuses l's file even under the same key */
    CHECK_EQ(dpdo_ledger_set_key(g, key, 32), DPDO_OK);
    CHECK_EQ(dpdo_ledger_charge(g, ev, 1, NULL, -1), DPDO_OK);
    CHECK_EQ(dpdo_ledger_load(g, t, len), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_ledger_errmsg(g), "foreign ledger");
    /* stale: m (adopted l's run) charges on; the older file is refused, a newer one of the run loads */
    CHECK_EQ(dpdo_ledger_charge(m, ev, 5, NULL, -1), DPDO_OK);
    CHECK_EQ(dpdo_ledger_load(m, t, len), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_ledger_errmsg(m), "stale ledger");
    CHECK_EQ(dpdo_ledger_charges(m, 0), 45); /* unchanged by the refused loads */
    int64_t len2 = 0;
    char *t2 = save(m, &len2);
    CHECK_EQ(dpdo_ledger_load(m, t2, len2), DPDO_OK);
    CHECK_EQ(dpdo_ledger_charges(m, 0), 45);
    /* a keyed file needs a key */
    dpdo_ledger *h = NULL;
    CHECK_EQ(dpdo_ledger_create(&h, 2), DPDO_OK);
    CHECK_EQ(dpdo_ledger_load(h, t, len), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_ledger_errmsg(h), "dpdo_ledger_set_key");
    /* removing the key goes back to the plain format */
    CHECK_EQ(dpdo_ledger_set_key(m, NULL, 0), DPDO_OK);
    free(t2);
    t2 = save(m, &len2);
    CHECK(strncmp(t2, "dpdo-ledger 1\n", 14) == 0);
    free(t2), free(t), free(e);
    dpdo_ledger_destroy(f), dpdo_ledger_destroy(g), dpdo_ledger_destroy(h), dpdo_ledger_destroy(m);
    dpdo_ledger_destroy(l);
    dpdo_event_destroy(ev);
}

static void replay_corpus(void)
{
    const char *dir = "tests/fuzz/corpus_ledger";
    DIR *d = opendir(dir);
    CHECK_MSG(d != NULL, "cannot open %s (run from the source root)", dir);
    if (!d) return;
    int count = 0;
    struct dirent *en;
    while ((en = readdir(d)) != NULL) {
        if (en->d_name[0] == '.') continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, en->d_name);
        FILE *fp = fopen(path, "rb");
        if (!fp) continue;
        unsigned char *buf = malloc(1 << 20);
        size_t n = fread(buf, 1, 1 << 20, fp);
        fclose(fp);
        LLVMFuzzerTestOneInput(buf, n);
        for (size_t k = 0; k < n; k += 1 + n / 16) LLVMFuzzerTestOneInput(buf, k); /* prefixes */
        free(buf);
        count++;
    }
    closedir(d);
    CHECK_MSG(count >= 8, "only %d corpus files", count);
    printf("# replayed %d ledger corpus files\n", count);
}

int main(void)
{
    RUN(overflow_reproducer);
    RUN(authenticated);
    RUN(replay_corpus);
    return h_finish();
}
