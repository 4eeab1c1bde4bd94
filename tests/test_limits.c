/* SPDX-License-Identifier: BSD-3-Clause */
/* Limits on untrusted input (issue 20): every hostile-input case returns its
 * error quickly and with little memory. Each case runs in a forked child so
 * that its peak memory can be measured on its own (getrusage ru_maxrss of the
 * child, after minus before) and a regression cannot take the machine down:
 * the child has an address-space limit of 100 MB above its size at the start
 * (not under AddressSanitizer, which reserves terabytes of address space, nor
 * under valgrind) and
 * an alarm. The bounds (1 s, 100 MB) are correctness bounds from the issue,
 * not benchmarks; under a sanitizer or valgrind (DPDO_TEST_QUICK) the time
 * bound is 20 s and the memory bound 400 MB (shadow memory, quarantine). */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <zlib.h>
#include "harness.h"
#include "dpdo/dataset.h"
#include "dpdo/status.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

static char tmpdir[256];

static const char *tpath(const char *name)
{
    static char buf[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(data, 1, n, f);
    fclose(f);
}

/* ---- the child-process measurement ------------------------------------------ */
struct result {
    int rc;               /* the loader's status */
    char msg[256];        /* its message */
    double seconds;        /* CPU seconds the load took (the work bound; wall time varies with load) */
    long kb;              /* ru_maxrss growth in KiB */
};

typedef int (*case_fn)(dpdo_dataset *ds, char *msg);

static long vm_size_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0;
    if (f) {
        if (fscanf(f, "%ld", &pages) != 1) pages = 0;
        fclose(f);
    }
    return pages * (sysconf(_SC_PAGESIZE) / 1024);
}

static int run_case(case_fn fn, struct result *r)
{
    memset(r, 0, sizeof *r);
    int fd[2];
    if (pipe(fd) != 0) return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        close(fd[0]);
        const char *wrap = getenv("DPDO_TEST_WRAP"); /* valgrind manages its own address space */
        if (!UNDER_ASAN && !(wrap && *wrap)) {
            struct rlimit rl;
            rl.rlim_cur = rl.rlim_max = (rlim_t)(vm_size_kb() + 100 * 1024) * 1024;
            setrlimit(RLIMIT_AS, &rl);
        }
        alarm(60);
        struct result out;
        memset(&out, 0, sizeof out);
        dpdo_dataset *ds = NULL;
        dpdo_dataset_create(&ds);
        struct rusage ru0, ru1;
        struct timespec t0, t1;
        getrusage(RUSAGE_SELF, &ru0);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
        out.rc = fn(ds, out.msg);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
        getrusage(RUSAGE_SELF, &ru1);
        snprintf(out.msg, sizeof out.msg, "%s", dpdo_dataset_errmsg(ds));
        out.seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        out.kb = ru1.ru_maxrss - ru0.ru_maxrss;
        dpdo_dataset_destroy(ds);
        ssize_t w = write(fd[1], &out, sizeof out);
        _exit(w == (ssize_t)sizeof out ? 0 : 1);
    }
    close(fd[1]);
    ssize_t got = read(fd[0], r, sizeof *r);
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    if (got != (ssize_t)sizeof *r || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return -1;
    return 0;
}

/* Run fn in a child; expect status `want` whose message contains `needle`,
 * within the time and memory bounds. */
static void expect_case(const char *what, case_fn fn, int want, const char *needle)
{
    struct result r;
    int ok = run_case(fn, &r) == 0;
    CHECK_MSG(ok, "%s: the child died (killed by the memory limit or the alarm?)", what);
    if (!ok) return;
    double tmax = h_quick() ? 20.0 : 1.0;
    long kbmax = (h_quick() ? 400 : 100) * 1024L;
    CHECK_MSG(r.rc == want, "%s: status %s, expected %s (%s)", what, dpdo_status_name(r.rc),
              dpdo_status_name(want), r.msg);
    CHECK_STR_CONTAINS(r.msg, needle);
    CHECK_MSG(r.seconds < tmax, "%s: %.3f s", what, r.seconds);
    CHECK_MSG(r.kb < kbmax, "%s: peak memory grew by %ld KiB", what, r.kb);
    printf("# %-44s %-14s %7.3f s %7ld KiB  %s\n", what, dpdo_status_name(r.rc), r.seconds, r.kb,
           r.msg);
}

/* ---- /dev/zero --------------------------------------------------------------------- */
static int zero_libsvm(dpdo_dataset *ds, char *m) { (void)m; return dpdo_dataset_load_libsvm(ds, "/dev/zero", NULL); }
static int zero_csv(dpdo_dataset *ds, char *m) { (void)m; return dpdo_dataset_load_csv(ds, "/dev/zero", NULL); }
static int zero_idx(dpdo_dataset *ds, char *m)
{
    (void)m;
    return dpdo_dataset_load_idx(ds, "/dev/zero", "/dev/zero", NULL);
}
static int urandom_libsvm(dpdo_dataset *ds, char *m)
{
    (void)m;
    return dpdo_dataset_load_libsvm(ds, "/dev/urandom", NULL);
}

static void test_dev_zero(void)
{
    if (access("/dev/zero", R_OK) != 0) {
        printf("# no /dev/zero: skipped\n");
        return;
    }
    expect_case("/dev/zero as LIBSVM", zero_libsvm, DPDO_E_FORMAT, "NUL byte");
    expect_case("/dev/zero as CSV", zero_csv, DPDO_E_FORMAT, "NUL byte");
    expect_case("/dev/zero as IDX", zero_idx, DPDO_E_FORMAT, "not an IDX file");
    /* random bytes hold a NUL within a few hundred bytes with overwhelming
     * probability (1 - (255/256)^65536 for the first read) */
    expect_case("/dev/urandom as LIBSVM", urandom_libsvm, DPDO_E_FORMAT, "NUL byte");
}

/* ---- an endless pipe without NUL bytes: max_file_bytes ------------------------------- */
static int pipe_libsvm(dpdo_dataset *ds, char *m)
{
    (void)m;
    const char *fifo = tpath("endless.fifo");
    pid_t w = fork();
    if (w == 0) {
        int fd = open(fifo, O_WRONLY);
        static const char line[] = "1 1:0.5 2:0.25\n-1 3:1\n";
        char block[4096];
        size_t k = 0;
        while (k + sizeof line - 1 <= sizeof block) {
            memcpy(block + k, line, sizeof line - 1);
            k += sizeof line - 1;
        }
        while (fd >= 0 && write(fd, block, k) > 0) {
        }
        _exit(0);
    }
    dpdo_load_options o;
    dpdo_load_options_init(&o, sizeof o);
    o.max_file_bytes = 4 << 20;
    int rc = dpdo_dataset_load_libsvm(ds, fifo, &o);
    kill(w, SIGKILL);
    waitpid(w, NULL, 0);
    return rc;
}

static void test_endless_pipe(void)
{
    const char *fifo = tpath("endless.fifo");
    unlink(fifo);
    if (mkfifo(fifo, 0600) != 0) {
        printf("# mkfifo failed: skipped\n");
        return;
    }
    expect_case("endless pipe, max_file_bytes 4 MiB", pipe_libsvm, DPDO_E_FORMAT,
                "max_file_bytes = 4194304");
    unlink(fifo);
}

/* ---- a regular file above max_file_bytes is refused before reading ------------------- */
static int big_file(dpdo_dataset *ds, char *m)
{
    (void)m;
    dpdo_load_options o;
    dpdo_load_options_init(&o, sizeof o);
    o.max_file_bytes = 100;
    return dpdo_dataset_load_libsvm(ds, tpath("small.svm"), &o);
}

static void test_file_bytes(void)
{
    char text[4096];
    size_t k = 0;
    for (int i = 0; i < 200; i++) k += (size_t)snprintf(text + k, sizeof text - k, "1 1:%d\n", i);
    write_file(tpath("small.svm"), text, k);
    expect_case("file of 1.2 KB, max_file_bytes 100", big_file, DPDO_E_FORMAT,
                "more than the limit max_file_bytes = 100");
    dpdo_dataset *ds = NULL;
    dpdo_dataset_create(&ds);
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, tpath("small.svm"), NULL), DPDO_OK); /* defaults: fine */
    CHECK_EQ(dpdo_dataset_rows(ds), 200);
    dpdo_dataset_destroy(ds);
}

/* ---- gzip bomb ----------------------------------------------------------------------- */
/* One gzip member of `n` bytes of `ch`, appended `copies` times to path. */
static size_t write_gz_members(const char *path, int ch, size_t n, int copies)
{
    unsigned char *src = malloc(n);
    memset(src, ch, n);
    z_stream z;
    memset(&z, 0, sizeof z);
    deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY);
    size_t cap = deflateBound(&z, (uLong)n);
    unsigned char *dst = malloc(cap);
    z.next_in = src;
    z.avail_in = (uInt)n;
    z.next_out = dst;
    z.avail_out = (uInt)cap;
    deflate(&z, Z_FINISH);
    size_t m = cap - z.avail_out;
    deflateEnd(&z);
    FILE *f = fopen(path, "wb");
    for (int i = 0; f && i < copies; i++) fwrite(dst, 1, m, f);
    if (f) fclose(f);
    free(src);
    free(dst);
    return m * (size_t)copies;
}

static int bomb_default(dpdo_dataset *ds, char *m)
{
    (void)m;
    return dpdo_dataset_load_libsvm(ds, tpath("bomb.gz"), NULL);
}
static int bomb_ratio0(dpdo_dataset *ds, char *m)
{
    (void)m;
    dpdo_load_options o;
    dpdo_load_options_init(&o, sizeof o);
    o.max_compression_ratio = 0;            /* no ratio limit ... */
    o.max_decompressed_bytes = 32 << 20;    /* ... but 32 MiB of output */
    return dpdo_dataset_load_csv(ds, tpath("bomb.gz"), &o);
}

static void test_gzip_bomb(void)
{
    /* 256 MiB of spaces in 256 members of 1 MiB each (about 1 KB each): refused
     * after max(16 MiB, 100 x 263 KB) of output. (The ratio limit bounds the
     * memory by 100 x the compressed size; max_decompressed_bytes bounds it
     * absolutely.) Spaces, as a run of one digit is refused sooner, as a token
     * of more than 1 MiB (tests/test_load_bounds.c). */
    size_t gz = write_gz_members(tpath("bomb.gz"), ' ', 1 << 20, 256);
    printf("# gzip bomb: %zu compressed bytes, 256 MiB inflated\n", gz);
    CHECK(gz > 100000 && gz < 500000);
    expect_case("gzip bomb (256 MiB from 263 KB), defaults", bomb_default, DPDO_E_FORMAT,
                "max_compression_ratio = 100");
    expect_case("gzip bomb, ratio off, max_decompressed 32 MiB", bomb_ratio0, DPDO_E_FORMAT,
                "max_decompressed_bytes = 33554432");
    /* a legitimate, highly compressible file below the limits loads */
    char line[64];
    FILE *f = fopen(tpath("ok.svm"), "wb");
    for (int i = 0; i < 20000; i++) {
        int k = snprintf(line, sizeof line, "%d 1:1 2:0.5\n", i % 2 ? 1 : -1);
        fwrite(line, 1, (size_t)k, f);
    }
    fclose(f);
    /* gzip it with zlib's gz* API */
    FILE *in = fopen(tpath("ok.svm"), "rb");
    gzFile out = gzopen(tpath("ok.svm.gz"), "wb9");
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) gzwrite(out, buf, (unsigned)n);
    fclose(in);
    gzclose(out);
    dpdo_dataset *ds = NULL;
    dpdo_dataset_create(&ds);
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, tpath("ok.svm.gz"), NULL), DPDO_OK);
    CHECK_EQ(dpdo_dataset_rows(ds), 20000);
    /* the same file with a tight decompressed limit is refused and ds kept */
    dpdo_load_options o;
    dpdo_load_options_init(&o, sizeof o);
    o.max_decompressed_bytes = 1000;
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, tpath("ok.svm.gz"), &o), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "max_decompressed_bytes = 1000");
    CHECK_EQ(dpdo_dataset_rows(ds), 20000);
    dpdo_dataset_destroy(ds);
}

/* ---- the dense blow-up: 35 bytes asking for a 3 x 880,960,693 matrix (the was 46) - */
static const char blowup[] = "1 1:1\n-1 2:1 3:1\n1 880960693:1e-3\n";

static int blowup_default(dpdo_dataset *ds, char *m)
{
    (void)m;
    return dpdo_dataset_load_libsvm(ds, tpath("blowup.svm"), NULL);
}
static int blowup_dense(dpdo_dataset *ds, char *m)
{
    (void)m;
    dpdo_load_options o;
    dpdo_load_options_init(&o, sizeof o);
    o.layout = DPDO_LAYOUT_DENSE;
    o.max_features = 0; /* no feature limit: the dense cell limit catches it */
    return dpdo_dataset_load_libsvm(ds, tpath("blowup.svm"), &o);
}
static int blowup_auto(dpdo_dataset *ds, char *m)
{
    (void)m;
    dpdo_load_options o;
    dpdo_load_options_init(&o, sizeof o);
    o.max_features = 0;
    o.dense_threshold = 0; /* would ask for dense; above max_dense_cells AUTO gives CSR */
    int rc = dpdo_dataset_load_libsvm(ds, tpath("blowup.svm"), &o);
    if (rc == DPDO_OK && dpdo_dataset_layout(ds) != DPDO_LAYOUT_CSR) return -100;
    return rc;
}

static void test_dense_blowup(void)
{
    write_file(tpath("blowup.svm"), blowup, sizeof blowup - 1);
    CHECK(sizeof blowup - 1 < 48);
    expect_case("35-byte LIBSVM, d = 880960693, defaults", blowup_default, DPDO_E_FORMAT,
                "exceeds max_features = 67108864");
    expect_case("same, forced dense, no feature limit", blowup_dense, DPDO_E_FORMAT,
                "max_dense_cells = 1073741824");
    expect_case("same, AUTO layout, no feature limit -> CSR", blowup_auto, DPDO_OK, "");
}

/* ---- rows and features ------------------------------------------------------------- */
static void test_rows_features(void)
{
    write_file(tpath("rows.svm"), "1 1:1\n1 2:1\n-1 1:2\n1 3:1\n", 24);
    write_file(tpath("rows.csv"), "1,2,3\n0,4,5\n1,6,7\n", 18);
    dpdo_dataset *ds = NULL;
    dpdo_dataset_create(&ds);
    dpdo_load_options o;
    dpdo_load_options_init(&o, sizeof o);
    o.max_rows = 3;
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, tpath("rows.svm"), &o), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "line 4, column 1: more than max_rows = 3");
    CHECK_EQ(dpdo_dataset_layout(ds), DPDO_LAYOUT_EMPTY);
    o.max_rows = 4;
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, tpath("rows.svm"), &o), DPDO_OK);
    o.max_rows = 2;
    CHECK_EQ(dpdo_dataset_load_csv(ds, tpath("rows.csv"), &o), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "max_rows = 2");
    CHECK_EQ(dpdo_dataset_rows(ds), 4); /* unchanged */
    o.max_rows = 0; /* no limit */
    o.max_features = 1;
    CHECK_EQ(dpdo_dataset_load_csv(ds, tpath("rows.csv"), &o), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "max_features = 1");
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, tpath("rows.svm"), &o), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "feature index 2 exceeds max_features = 1");
    o.max_features = 2;
    CHECK_EQ(dpdo_dataset_load_csv(ds, tpath("rows.csv"), &o), DPDO_OK);
    CHECK_EQ(dpdo_dataset_features(ds), 2);
    o.max_dense_cells = 5;
    CHECK_EQ(dpdo_dataset_load_csv(ds, tpath("rows.csv"), &o), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "max_dense_cells = 5");
    /* n_features forced above max_features is a bad option */
    dpdo_load_options_init(&o, sizeof o);
    o.n_features = 1000;
    o.max_features = 10;
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, tpath("rows.svm"), &o), DPDO_E_INVAL);
    /* invalid limits */
    dpdo_load_options_init(&o, sizeof o);
    o.max_rows = -1;
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, tpath("rows.svm"), &o), DPDO_E_INVAL);
    dpdo_load_options_init(&o, sizeof o);
    o.max_compression_ratio = NAN;
    CHECK_EQ(dpdo_dataset_load_csv(ds, tpath("rows.csv"), &o), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "max_compression_ratio");
    dpdo_dataset_destroy(ds);
}

/* ---- options versioning: a 0.1 caller's shorter struct gets the default limits -------- */
static void test_options_versioning(void)
{
    dpdo_load_options o;
    memset(&o, 0x55, sizeof o);
    size_t old = offsetof(dpdo_load_options, max_file_bytes);
    CHECK_EQ(dpdo_load_options_init(&o, old), DPDO_OK);
    CHECK_EQ(o.struct_size, old);
    unsigned char *tail = (unsigned char *)&o + old;
    CHECK_EQ(tail[0], 0x55); /* bytes beyond the caller's size are not written */
    dpdo_load_options_init(&o, sizeof o);
    CHECK_EQ(o.max_file_bytes, (int64_t)1 << 34);
    CHECK_EQ(o.max_decompressed_bytes, (int64_t)1 << 34);
    CHECK(o.max_compression_ratio == 100.0);
    CHECK_EQ(o.max_dense_cells, (int64_t)1 << 30);
    CHECK_EQ(o.max_features, (int64_t)1 << 26);
    CHECK_EQ(o.max_rows, (int64_t)1 << 31);
    /* an old-size struct loads the blow-up file with the default limits */
    write_file(tpath("blowup.svm"), blowup, sizeof blowup - 1);
    dpdo_load_options_init(&o, old);
    dpdo_dataset *ds = NULL;
    dpdo_dataset_create(&ds);
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, tpath("blowup.svm"), &o), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "max_features");
    dpdo_dataset_destroy(ds);
}

/* ---- row norms without overflow -------------------------------------------------------- */
static int huge_norm_file(dpdo_dataset *ds, char *m)
{
    (void)m;
    return dpdo_dataset_load_libsvm(ds, tpath("huge.svm"), NULL);
}

static void test_row_norms(void)
{
    dpdo_dataset *ds = NULL;
    dpdo_dataset_create(&ds);
    /* 1e200: the plain sum of squares is Inf; the norm is 1e200 * sqrt(3) */
    double X[6] = {1e200, -1e200, 1e200, 3.0, 4.0, 0.0};
    double y[2] = {1, -1};
    CHECK_EQ(dpdo_dataset_set_dense(ds, 2, 3, X, y, DPDO_COPY), DPDO_OK);
    double r0 = 0, r1 = 0;
    dpdo_dataset_get_row_norm(ds, 0, &r0);
    dpdo_dataset_get_row_norm(ds, 1, &r1);
    CHECK_REL(r0, 1e200 * sqrt(3.0), 4e-16);
    CHECK(r1 == 5.0); /* the fast path: exactly as before */
    CHECK_REL(dpdo_dataset_max_row_norm(ds), 1.7320508075688772e200, 4e-16);
    /* tiny values: the plain sum underflows to 0 */
    double T[3] = {3e-200, 4e-200, 0};
    CHECK_EQ(dpdo_dataset_set_dense(ds, 1, 3, T, y, DPDO_COPY), DPDO_OK);
    CHECK_REL(dpdo_dataset_max_row_norm(ds), 5e-200, 4e-16);
    /* subnormals */
    double S[2] = {3 * 4.9406564584124654e-324, 4 * 4.9406564584124654e-324};
    CHECK_EQ(dpdo_dataset_set_dense(ds, 1, 2, S, y, DPDO_COPY), DPDO_OK);
    CHECK(dpdo_dataset_max_row_norm(ds) == 5 * 4.9406564584124654e-324);
    /* a true norm above DBL_MAX: refused, dataset unchanged */
    double H[2] = {1.5e308, 1.5e308};
    CHECK_EQ(dpdo_dataset_set_dense(ds, 1, 2, H, y, DPDO_COPY), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "row 0: the Euclidean norm overflows");
    CHECK_EQ(dpdo_dataset_features(ds), 2);
    CHECK(dpdo_dataset_max_row_norm(ds) == 5 * 4.9406564584124654e-324);
    /* CSR too */
    int64_t rp[3] = {0, 2, 3};
    int32_t ci[3] = {0, 1, 1};
    double v[3] = {1e300, 1e300, 2.0};
    CHECK_EQ(dpdo_dataset_set_csr(ds, 2, 2, rp, ci, v, y, DPDO_COPY), DPDO_OK);
    CHECK_REL(dpdo_dataset_max_row_norm(ds), 1e300 * sqrt(2.0), 4e-16);
    dpdo_dataset_destroy(ds);
    /* files: 1e200 entries load with a finite norm; 1e308 pairs are refused */
    write_file(tpath("big.svm"), "1 1:1e200 2:1e200\n-1 1:1\n", 25);
    dpdo_dataset_create(&ds);
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, tpath("big.svm"), NULL), DPDO_OK);
    CHECK(isfinite(dpdo_dataset_max_row_norm(ds)));
    CHECK_REL(dpdo_dataset_max_row_norm(ds), 1e200 * sqrt(2.0), 4e-16);
    dpdo_dataset_destroy(ds);
    write_file(tpath("huge.svm"), "1 1:1\n-1 1:1.5e308 2:1.5e308\n", 29);
    expect_case("LIBSVM row norm above DBL_MAX", huge_norm_file, DPDO_E_FORMAT,
                "row 1: the Euclidean norm overflows");
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dpdo_limits_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        printf("cannot create a temporary directory\n");
        return 1;
    }
    RUN(test_row_norms);
    RUN(test_dev_zero);
    RUN(test_endless_pipe);
    RUN(test_file_bytes);
    RUN(test_gzip_bomb);
    RUN(test_dense_blowup);
    RUN(test_rows_features);
    RUN(test_options_versioning);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) printf("# could not remove %s\n", tmpdir);
    return h_finish();
}
