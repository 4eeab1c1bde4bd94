/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory before refusal in the text loaders (lib/data/io.c, dpdo__read_text): a hostile file is
 * refused after a few MB read or inflated, not after reading it whole.
 *  - one run of 96 MiB of digits (512 MiB with DPDO_TEST_LONG=1), as LIBSVM and as CSV: refused
 *    with DPDO_E_FORMAT naming line and column, the loading process's peak RSS (getrusage
 *    ru_maxrss, in a child) under 64 MB; the code before read the file whole and then held
 *    ~2x its size (1.05 GB and 22 s for 512 MiB);
 *  - gzip bombs with no ratio limit: 256 MiB of NUL bytes (refused as "NUL byte" before
 *    inflating it, under 64 MB) and 256 MiB of one digit (refused as a long token);
 *  - the cap is exact: a token of DPDO__TEXT_TOKEN_MAX bytes loads, one more byte is refused
 *    with the line and column of its start;
 *  - normal files larger than the read chunk load to the same content from disk, from gzip and
 *    from the in-memory parser (dpdo__parse_libsvm / dpdo__parse_csv on the whole image). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "harness.h"
#include "dpdo/dpdo.h"
#include "data/data_impl.h"

static char dir[256];

static void path_of(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

/* n bytes: head, then `fill` up to n */
static int write_run(const char *path, const char *head, char fill, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t hl = strlen(head), w = 0;
    static char blk[1 << 20];
    memset(blk, fill, sizeof blk);
    int ok = fwrite(head, 1, hl, f) == hl;
    w = hl;
    while (ok && w < n) {
        size_t k = n - w < sizeof blk ? n - w : sizeof blk;
        ok = fwrite(blk, 1, k, f) == k;
        w += k;
    }
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* n bytes of `fill` as one gzip member (zlib level 9) */
static int write_gz_run(const char *path, char fill, size_t n)
{
    gzFile g = gzopen(path, "wb9");
    if (!g) return -1;
    static char blk[1 << 20];
    memset(blk, fill, sizeof blk);
    int ok = 1;
    for (size_t w = 0; ok && w < n; w += sizeof blk) ok = gzwrite(g, blk, sizeof blk) == (int)sizeof blk;
    return gzclose(g) == Z_OK && ok ? 0 : -1;
}

typedef struct child_result {
    int rc;
    long maxrss_kb, start_kb;
    char msg[256];
} child_result;

/* load `path` in a child process (so ru_maxrss is the load's own peak); csv: the CSV loader;
 * ratio: max_compression_ratio (< 0: default) */
static child_result load_in_child(const char *path, int csv, double ratio)
{
    child_result r;
    memset(&r, 0, sizeof r);
    r.rc = 999;
    int fd[2];
    if (pipe(fd) != 0) return r;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        child_result c;
        memset(&c, 0, sizeof c);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        c.start_kb = ru.ru_maxrss;
        dpdo_dataset *ds = NULL;
        dpdo_load_options o;
        dpdo_load_options_init(&o, sizeof o);
        if (ratio >= 0) o.max_compression_ratio = ratio;
        if (dpdo_dataset_create(&ds) == DPDO_OK) {
            c.rc = csv ? dpdo_dataset_load_csv(ds, path, &o) : dpdo_dataset_load_libsvm(ds, path, &o);
            snprintf(c.msg, sizeof c.msg, "%s", dpdo_dataset_errmsg(ds));
            dpdo_dataset_destroy(ds);
        }
        getrusage(RUSAGE_SELF, &ru);
        c.maxrss_kb = ru.ru_maxrss;
        ssize_t w = write(fd[1], &c, sizeof c);
        _exit(w == (ssize_t)sizeof c ? 0 : 1);
    }
    close(fd[1]);
    if (pid > 0) {
        ssize_t got = read(fd[0], &r, sizeof r);
        int st = 0;
        waitpid(pid, &st, 0);
        if (got != (ssize_t)sizeof r) r.rc = 998;
    }
    close(fd[0]);
    return r;
}

static void test_one_token_file(void)
{
    size_t mib = getenv("DPDO_TEST_LONG") ? 512 : 96;
    char p[512];
    path_of(p, sizeof p, "token.txt");
    CHECK_EQ(write_run(p, "", '7', mib << 20), 0);
    child_result r = load_in_child(p, 0, -1);
    printf("# LIBSVM, one %zu MiB token: status %d, peak RSS %.1f MB (%.1f MB at the start): %s\n", mib, r.rc,
           r.maxrss_kb / 1024.0, r.start_kb / 1024.0, r.msg);
    CHECK_EQ(r.rc, DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(r.msg, "line 1, column 1: a token of more than 1048576 bytes");
    CHECK_MSG(r.maxrss_kb < 64 * 1024, "peak RSS %ld kB", r.maxrss_kb);
    /* CSV: the run starts at line 2, column 5 */
    CHECK_EQ(write_run(p, "1,2\n3,4,", '5', mib << 20), 0);
    r = load_in_child(p, 1, -1);
    printf("# CSV, one %zu MiB token on line 2: status %d, peak RSS %.1f MB: %s\n", mib, r.rc, r.maxrss_kb / 1024.0,
           r.msg);
    CHECK_EQ(r.rc, DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(r.msg, "line 2, column 5: a token of more than");
    CHECK_MSG(r.maxrss_kb < 64 * 1024, "peak RSS %ld kB", r.maxrss_kb);
    remove(p);
}

static void test_gzip_bombs(void)
{
    char p[512];
    path_of(p, sizeof p, "bomb.gz");
    CHECK_EQ(write_gz_run(p, '\0', (size_t)256 << 20), 0);
    child_result r = load_in_child(p, 0, 0.0); /* no ratio limit: only the text checks stop it */
    printf("# gzip of 256 MiB of NUL bytes: status %d, peak RSS %.1f MB: %s\n", r.rc, r.maxrss_kb / 1024.0, r.msg);
    CHECK_EQ(r.rc, DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(r.msg, "inflated byte 0 is a NUL byte");
    CHECK_MSG(r.maxrss_kb < 64 * 1024, "peak RSS %ld kB", r.maxrss_kb);
    CHECK_EQ(write_gz_run(p, '1', (size_t)256 << 20), 0);
    r = load_in_child(p, 0, 0.0);
    printf("# gzip of 256 MiB of '1': status %d, peak RSS %.1f MB: %s\n", r.rc, r.maxrss_kb / 1024.0, r.msg);
    CHECK_EQ(r.rc, DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(r.msg, "line 1, column 1: a token of more than");
    CHECK_MSG(r.maxrss_kb < 64 * 1024, "peak RSS %ld kB", r.maxrss_kb);
    remove(p);
}

/* a LIBSVM file: 3 rows, then a comment token of `tok` bytes on line 4 at column 10 */
static int load_with_comment(size_t tok, int gz, char *msg, size_t msgn)
{
    char p[512];
    path_of(p, sizeof p, gz ? "comment.gz" : "comment.txt");
    const char *head = "1 1:0.5\n-1 2:1\n1 1:2 3:1\n1 2:0.25 #";
    size_t hl = strlen(head), n = hl + tok - 1 + 1;
    char *img = malloc(n + 1);
    if (!img) return -1;
    memcpy(img, head, hl);
    memset(img + hl, 'x', tok - 1);
    img[n - 1] = '\n';
    img[n] = 0;
    int rc = -1;
    if (gz) {
        gzFile g = gzopen(p, "wb6");
        if (g && gzwrite(g, img, (unsigned)n) == (int)n && gzclose(g) == Z_OK) rc = 0;
    } else {
        FILE *f = fopen(p, "wb");
        if (f && fwrite(img, 1, n, f) == n && fclose(f) == 0) rc = 0;
    }
    free(img);
    if (rc) return -1;
    dpdo_dataset *ds = NULL;
    CHECK_EQ(dpdo_dataset_create(&ds), DPDO_OK);
    rc = dpdo_dataset_load_libsvm(ds, p, NULL);
    snprintf(msg, msgn, "%s", dpdo_dataset_errmsg(ds));
    if (rc == DPDO_OK) CHECK_EQ(dpdo_dataset_rows(ds), 4);
    dpdo_dataset_destroy(ds);
    remove(p);
    return rc;
}

static void test_cap_is_exact(void)
{
    char msg[256];
    for (int gz = 0; gz <= 1; gz++) {
        CHECK_MSG(load_with_comment(DPDO__TEXT_TOKEN_MAX, gz, msg, sizeof msg) == DPDO_OK, "gz %d: %s", gz, msg);
        CHECK_EQ(load_with_comment(DPDO__TEXT_TOKEN_MAX + 1, gz, msg, sizeof msg), DPDO_E_FORMAT);
        CHECK_STR_CONTAINS(msg, "line 4, column 10: a token of more than 1048576 bytes");
    }
}

/* content of a dataset as bytes: n, d, labels, every row */
static int same_content(dpdo_dataset *a, dpdo_dataset *b)
{
    int64_t n = dpdo_dataset_rows(a), d = dpdo_dataset_features(a);
    if (n <= 0 || n != dpdo_dataset_rows(b) || d != dpdo_dataset_features(b)) return 0;
    double *ra = malloc((size_t)d * sizeof(double)), *rb = malloc((size_t)d * sizeof(double));
    double *ya = malloc((size_t)n * sizeof(double)), *yb = malloc((size_t)n * sizeof(double));
    int same = ra && rb && ya && yb && dpdo_dataset_get_labels(a, ya, n) == DPDO_OK &&
               dpdo_dataset_get_labels(b, yb, n) == DPDO_OK && memcmp(ya, yb, (size_t)n * sizeof(double)) == 0;
    for (int64_t i = 0; same && i < n; i++)
        same = dpdo_dataset_get_row(a, i, ra, d) == DPDO_OK && dpdo_dataset_get_row(b, i, rb, d) == DPDO_OK &&
               memcmp(ra, rb, (size_t)d * sizeof(double)) == 0;
    free(ra), free(rb), free(ya), free(yb);
    return same;
}

/* a normal file of ~5 MiB (several read chunks and token blocks) loads to the same bits from
 * disk, from gzip and from the whole image in memory */
static void test_normal_files_unchanged(void)
{
    for (int csv = 0; csv <= 1; csv++) {
        size_t cap = 6 << 20, n = 0;
        char *img = malloc(cap + 1);
        CHECK(img != NULL);
        if (!img) return;
        uint64_t st = 12345 + (uint64_t)csv;
        while (n < cap - 4096) {
            n += (size_t)snprintf(img + n, cap - n, csv ? "%d" : "%+d", h_urand(&st) < 0.5 ? 1 : -1);
            int prev = 0;
            for (int k = 0; k < 30; k++) {
                int idx = csv ? k + 1 : prev + 1 + (int)(h_urand(&st) * 20);
                prev = idx;
                double v = (h_urand(&st) - 0.5) * 1e3;
                n += (size_t)(csv ? snprintf(img + n, cap - n, ",%.15g", v)
                                  : snprintf(img + n, cap - n, " %d:%.17g", idx, v));
            }
            img[n++] = '\n';
        }
        img[n] = 0;
        char p[512], pg[512];
        path_of(p, sizeof p, "normal.txt");
        path_of(pg, sizeof pg, "normal.gz");
        FILE *f = fopen(p, "wb");
        CHECK(f && fwrite(img, 1, n, f) == n);
        if (f) fclose(f);
        gzFile g = gzopen(pg, "wb1");
        CHECK(g && gzwrite(g, img, (unsigned)n) == (int)n);
        if (g) gzclose(g);
        dpdo_dataset *a = NULL, *b = NULL, *c = NULL;
        dpdo_load_options o;
        dpdo_load_options_init(&o, sizeof o);
        o.label_map = DPDO_LABEL_RAW;
        CHECK_EQ(dpdo_dataset_create(&a), DPDO_OK);
        CHECK_EQ(dpdo_dataset_create(&b), DPDO_OK);
        CHECK_EQ(dpdo_dataset_create(&c), DPDO_OK);
        int r1 = csv ? dpdo_dataset_load_csv(a, p, &o) : dpdo_dataset_load_libsvm(a, p, &o);
        int r2 = csv ? dpdo_dataset_load_csv(b, pg, &o) : dpdo_dataset_load_libsvm(b, pg, &o);
        int r3 = csv ? dpdo__parse_csv(c, "mem", img, n, &o) : dpdo__parse_libsvm(c, "mem", img, n, &o);
        CHECK_MSG(r1 == DPDO_OK && r2 == DPDO_OK && r3 == DPDO_OK, "%s / %s / %s", dpdo_dataset_errmsg(a),
                  dpdo_dataset_errmsg(b), dpdo_dataset_errmsg(c));
        printf("# %s: %zu bytes, %lld rows\n", csv ? "CSV" : "LIBSVM", n, (long long)dpdo_dataset_rows(a));
        CHECK(dpdo_dataset_rows(a) > 5000);
        CHECK(same_content(a, c));
        CHECK(same_content(b, c));
        dpdo_dataset_destroy(a), dpdo_dataset_destroy(b), dpdo_dataset_destroy(c);
        remove(p), remove(pg);
        free(img);
    }
}

int main(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/dpdo-load-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(dir)) {
        printf("not ok - mkdtemp %s: %s\n# summary: 0 passed, 1 failed\n", dir, strerror(errno));
        return 1;
    }
    RUN(test_cap_is_exact);
    RUN(test_normal_files_unchanged);
    RUN(test_one_token_file);
    RUN(test_gzip_bombs);
    rmdir(dir);
    return h_finish();
}
