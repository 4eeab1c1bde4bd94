/* SPDX-License-Identifier: BSD-3-Clause */
/* Minimal test harness. A test file defines static void functions and calls
 * RUN(fn) for each from main(), then returns h_finish(). A case passes when
 * none of its CHECKs failed. Output is TAP-like ("ok - name" / "not ok -
 * name") and ends with "# summary: N passed, M failed", which tests/run.sh
 * adds up. The exit code is the number of failed cases (capped at 100). */
#ifndef DPDO_TEST_HARNESS_H
#define DPDO_TEST_HARNESS_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int h_passed, h_failed, h_case_failed;
static const char *h_case = "";

static inline void h_fail(const char *file, int line, const char *what)
{
    if (!h_case_failed) printf("# in %s\n", h_case);
    printf("#   %s:%d: %s\n", file, line, what);
    h_case_failed++;
}

#define CHECK(c)                                                      \
    do {                                                              \
        if (!(c)) h_fail(__FILE__, __LINE__, "CHECK(" #c ") failed"); \
    } while (0)

#define CHECK_MSG(c, ...)                                             \
    do {                                                              \
        if (!(c)) {                                                   \
            char h_buf_[512];                                         \
            snprintf(h_buf_, sizeof h_buf_, __VA_ARGS__);             \
            h_fail(__FILE__, __LINE__, h_buf_);                       \
        }                                                             \
    } while (0)

#define CHECK_EQ(a, b)                                                                  \
    do {                                                                                \
        long long h_a_ = (long long)(a), h_b_ = (long long)(b);                         \
        if (h_a_ != h_b_) {                                                             \
            char h_buf_[512];                                                           \
            snprintf(h_buf_, sizeof h_buf_, "%s == %s: %lld != %lld", #a, #b, h_a_, h_b_); \
            h_fail(__FILE__, __LINE__, h_buf_);                                         \
        }                                                                               \
    } while (0)

/* |a - b| <= tol (absolute) */
#define CHECK_NEAR(a, b, tol)                                                              \
    do {                                                                                   \
        double h_a_ = (double)(a), h_b_ = (double)(b), h_t_ = (double)(tol);               \
        if (!(fabs(h_a_ - h_b_) <= h_t_)) {                                                \
            char h_buf_[512];                                                              \
            snprintf(h_buf_, sizeof h_buf_, "%s ~ %s: %.17g vs %.17g (tol %g)", #a, #b, h_a_, \
                     h_b_, h_t_);                                                          \
            h_fail(__FILE__, __LINE__, h_buf_);                                            \
        }                                                                                  \
    } while (0)

/* |a - b| <= rtol * |b| (relative to the expected value b) */
#define CHECK_REL(a, b, rtol)                                                                 \
    do {                                                                                      \
        double h_a_ = (double)(a), h_b_ = (double)(b), h_t_ = (double)(rtol);                 \
        if (!(fabs(h_a_ - h_b_) <= h_t_ * fabs(h_b_))) {                                      \
            char h_buf_[512];                                                                 \
            snprintf(h_buf_, sizeof h_buf_, "%s ~ %s: %.17g vs %.17g (rel err %.3g > %g)", #a, \
                     #b, h_a_, h_b_, fabs(h_a_ - h_b_) / fabs(h_b_), h_t_);                   \
            h_fail(__FILE__, __LINE__, h_buf_);                                               \
        }                                                                                     \
    } while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                                  \
    do {                                                                                 \
        const char *h_h_ = (hay), *h_n_ = (needle);                                      \
        if (!h_h_ || !strstr(h_h_, h_n_)) {                                              \
            char h_buf_[512];                                                            \
            snprintf(h_buf_, sizeof h_buf_, "\"%.200s\" does not contain \"%.200s\"", h_h_ ? h_h_ : "(null)", h_n_); \
            h_fail(__FILE__, __LINE__, h_buf_);                                          \
        }                                                                                \
    } while (0)

#define RUN(fn) h_run(#fn, fn)

/* DPDO_TEST_TIMES=1: each case also prints "# cpu NAME S" (its CPU seconds, clock()), to find the
 * slow ones: DPDO_TEST_TIMES=1 build/tests/test_pld */
static inline void h_run(const char *name, void (*fn)(void))
{
    h_case = name;
    h_case_failed = 0;
    clock_t h_t0_ = clock();
    fn();
    if (getenv("DPDO_TEST_TIMES"))
        printf("# cpu %s %.2f\n", name, (double)(clock() - h_t0_) / CLOCKS_PER_SEC);
    fflush(stdout);
    if (h_case_failed) {
        printf("not ok - %s\n", name);
        h_failed++;
    } else {
        printf("ok - %s\n", name);
        h_passed++;
    }
}

static inline int h_finish(void)
{
    printf("# summary: %d passed, %d failed\n", h_passed, h_failed);
    return h_failed > 100 ? 100 : h_failed;
}

/* xorshift64 uniform in [0, 1) (53 bits) from *state: the tests' own reproducible data */
static inline double h_urand(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return (double)(*state >> 11) * 0x1.0p-53;
}

/* 1 when DPDO_TEST_QUICK is set (sanitizer and valgrind runs): tests then
 * shrink their sizes, never their assertions. */
static inline int h_quick(void)
{
    const char *q = getenv("DPDO_TEST_QUICK");
    return q && *q && *q != '0';
}

/* 1 when DPDO_TEST_LONG is set (make check-long): the statistical sweeps run their whole grids
 * and sample counts; make check runs a fixed part of each (the same assertions) */
static inline int h_long(void)
{
    const char *q = getenv("DPDO_TEST_LONG");
    return q && *q && *q != '0';
}

/* Run the shell command line "PROG ARGS 2>&1"; its output goes to out (at most cap - 1 bytes,
 * NUL-ended). Returns the exit status, or -1 if it did not exit normally. */
static inline int h_run_cmd(const char *prog, const char *args, char *out, size_t cap)
{
    char cmd[4096];
    if (snprintf(cmd, sizeof cmd, "%s %s 2>&1", prog, args) >= (int)sizeof cmd) return -1;
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* h_run_cmd on the build's tool NAME: $BUILD/bin/NAME (BUILD defaults to "build") */
static inline int h_run_tool(const char *name, const char *args, char *out, size_t cap)
{
    const char *b = getenv("BUILD");
    char prog[1024];
    if (snprintf(prog, sizeof prog, "%s/bin/%s", b && *b ? b : "build", name) >= (int)sizeof prog) return -1;
    return h_run_cmd(prog, args, out, cap);
}

/* Write `text` to a fresh temporary file and return its path (static
 * buffer per call site is the caller's job: pass buf of >= 64 bytes). */
static inline const char *h_tmpfile(char *buf, const char *suffix, const char *text, size_t len)
{
    snprintf(buf, 64, "/tmp/dpdo_test_XXXXXX%s", suffix ? suffix : "");
    int fd = mkstemps(buf, suffix ? (int)strlen(suffix) : 0);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "wb");
    if (!f) return NULL;
    fwrite(text, 1, len, f);
    fclose(f);
    return buf;
}

#endif /* DPDO_TEST_HARNESS_H */
