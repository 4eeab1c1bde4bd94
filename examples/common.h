/* SPDX-License-Identifier: BSD-3-Clause */
/* examples/common.h: the scaffolding the examples share: the TRY
 * error macro, a monotonic clock, output directories and files, gnuplot,
 * mean and standard error over seeds, the two-standard-error comparison every
 * ordering check uses, the PASS / FAIL / NO-SIGNAL / NOT-REPRODUCED-HERE verdicts, fresh seeds, the
 * choice of the tightest sound accountant for the "rigorous" runs, the
 * randomness line and parameter keys by name. Header-only (static inline),
 * example code, not part of the library's API; copy it with an example.
 *
 * Define EX_PROG (the program name, a string literal) before including it. */
#ifndef DPDO_EXAMPLES_COMMON_H
#define DPDO_EXAMPLES_COMMON_H

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <dpdo/dpdo.h>

#ifndef EX_PROG
#error "define EX_PROG before including examples/common.h"
#endif

/* On failure (status < 0): print the program, line, status and the message
 * (evaluated after the failure, so it reads the handle's latest error), then
 * jump to the enclosing function's `fail` label. */
#define TRY(call, errmsg)                                                                  \
    do {                                                                                   \
        int rc_ = (call);                                                                  \
        if (rc_ < 0) {                                                                     \
            fprintf(stderr, EX_PROG ":%d: %s: %s\n", __LINE__, dpdo_strerror(rc_), (errmsg)); \
            goto fail;                                                                     \
        }                                                                                  \
    } while (0)

/* Seconds on a monotonic clock. */
static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* mkdir -p; 0 or -1 (message on stderr). */
static inline int make_dirs(const char *path)
{
    char buf[1024];
    if (!*path || strlen(path) >= sizeof buf) {
        fprintf(stderr, "bad output directory '%s'\n", path);
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", path);
    for (char *s = buf + 1;; s++) {
        if (*s == '/' || *s == 0) {
            char save = *s;
            *s = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
                fprintf(stderr, "cannot create directory %s: %s\n", buf, strerror(errno));
                return -1;
            }
            *s = save;
            if (!save) return 0;
        }
    }
}

/* dir/name opened for writing, or NULL (message on stderr). */
static inline FILE *open_out(const char *dir, const char *name)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
    return f;
}

/* 1 if gnuplot is on the PATH. */
static inline int have_gnuplot(void)
{
    return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

/* dir/stem.gp opened for writing and begun with the preamble every figure
 * script shares: where it came from, a width x height PNG terminal (pngcairo
 * where gnuplot has it), output stem.png, comma-separated data, a grid. The
 * caller writes the plot commands and closes it. NULL on failure (message on
 * stderr). */
static inline FILE *open_gnuplot(const char *dir, const char *stem, int width, int height)
{
    char name[64];
    snprintf(name, sizeof name, "%s.gp", stem);
    FILE *f = open_out(dir, name);
    if (!f) return NULL;
    fprintf(f, "# gnuplot script written by " EX_PROG "; run: cd %s && gnuplot %s\n", dir, name);
    fprintf(f, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
               "  set terminal pngcairo size %d,%d noenhanced\n"
               "} else {\n  set terminal png size %d,%d noenhanced\n}\n",
            width, height, width, height);
    fprintf(f, "set output '%s.png'\nset datafile separator ','\nset grid\n", stem);
    return f;
}

/* Run gnuplot on dir/script (keeps the log on failure). 0 or -1. */
static inline int run_gnuplot(const char *dir, const char *script)
{
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "cd '%s' && gnuplot '%s' 2>'%s.log'", dir, script, script);
    if (system(cmd) != 0) {
        fprintf(stderr, "gnuplot failed on %s/%s (see %s/%s.log)\n", dir, script, dir, script);
        return -1;
    }
    snprintf(cmd, sizeof cmd, "%s/%s.log", dir, script);
    remove(cmd);
    return 0;
}

/* Mean and standard error (sample s.d. / sqrt(n); 0 for n < 2) of v[n]. */
static inline void mean_se(const double *v, int n, double *mean, double *se)
{
    double m = 0, ss = 0;
    for (int i = 0; i < n; i++) m += v[i] / n;
    for (int i = 0; i < n; i++) ss += (v[i] - m) * (v[i] - m);
    *mean = m;
    *se = n > 1 ? sqrt(ss / (n - 1) / n) : 0.0;
}

/* The margin every ordering check uses: two standard errors of the difference
 * of two independent means. */
#define EX_MARGIN_SE 2.0

/* a < b with a margin: a + 2 sqrt(se_a^2 + se_b^2) < b. */
static inline int clearly_less(double a, double se_a, double b, double se_b)
{
    return a + EX_MARGIN_SE * sqrt(se_a * se_a + se_b * se_b) < b;
}

/* Verdicts (docs/reproductions.md, "How the checks decide"), the same rule in every example:
 *   PASS  the paper's claim holds by the margin (every comparison it needs, by two standard
 *         errors of the difference over independent seeds);
 *   FAIL  it does not: contradicted, or not resolved at this number of seeds (a claim that
 *         cannot be shown at this power is not shown);
 *   NO-SIGNAL  no model the claim compares is better than the untrained one (x = 0 / the
 *         majority class): an ordering of noise says nothing about the claim, so it is
 *         reported, held or not, and counted as neither PASS nor FAIL;
 *   NOT-REPRODUCED-HERE  decided before the run, never from its numbers: the setting cannot
 *         be rebuilt offline (data or tuning unpublished); the check is not run.
 * An example exits non-zero when a check FAILs (unless --no-fail-exit). */
enum { EX_FAIL = 0, EX_PASS = 1, EX_NOT_REPRODUCED = 2, EX_NO_SIGNAL = 3 };
typedef struct {
    int pass, fail, not_reproduced, no_signal;
    int one_seed; /* set when every mean is over one seed: no standard error, so no verdict */
    int plant;    /* --plant-contrary: every comparison is fed a contrary result (the test) */
} ex_tally;

/* The comparison every check makes: a is below b by the margin (pass negated values for
 * "above"). Under --plant-contrary it is fed a contradicting result: it never holds, and
 * every claim check must then print FAIL (tests/test_examples.sh runs each example so). */
static inline int ex_less(const ex_tally *t, double a, double se_a, double b, double se_b)
{
    return !t->plant && clearly_less(a, se_a, b, se_b);
}

/* Is a model better than the untrained one: its mean `v` (gap to the optimum, error, loss)
 * below the untrained model's `zero` by the margin? Under --plant-contrary every model
 * counts as better, so the planted result contradicts the claim instead of being noise. */
static inline int ex_useful(const ex_tally *t, double v, double se, double zero)
{
    return t->plant || clearly_less(v, se, zero, 0.0);
}

static inline void ex_verdict(ex_tally *t, int v, const char *where, const char *fmt, ...)
{
    va_list ap;
    if (t->one_seed && v != EX_NOT_REPRODUCED) v = -1;
    printf("  %-19s %-6s ",
           v == EX_PASS        ? "PASS"
           : v == EX_FAIL      ? "FAIL"
           : v == EX_NO_SIGNAL ? "NO-SIGNAL"
           : v < 0             ? "INFO(1 seed)"
                               : "NOT-REPRODUCED-HERE",
           where);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    if (v == EX_PASS) t->pass++;
    else if (v == EX_FAIL) t->fail++;
    else if (v == EX_NOT_REPRODUCED) t->not_reproduced++;
    else if (v == EX_NO_SIGNAL) t->no_signal++;
}

/* A claim check: `holds` says whether every comparison the claim needs held by the margin
 * (each computed with ex_less), `signal` whether a model it compares is better than the
 * untrained one (ex_useful). PASS or FAIL; NO-SIGNAL (saying what the ordering did) when
 * there is no signal. */
static inline void ex_claim(ex_tally *t, int holds, int signal, const char *where, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (signal) ex_verdict(t, holds ? EX_PASS : EX_FAIL, where, "%s", buf);
    else
        ex_verdict(t, EX_NO_SIGNAL, where, "%s (%s; no model better than x = 0)", buf,
                   holds ? "held" : "did not hold");
}

/* A check the run does not make, decided before it (the setting cannot be rebuilt offline). */
#define ex_not_here(t, where, ...) ex_verdict((t), EX_NOT_REPRODUCED, (where), __VA_ARGS__)

/* The closing tally, the last line of every example's output:
 * "N PASS, M FAIL, K NOT-REPRODUCED-HERE", the NO-SIGNAL count on the line before (with one seed
 * per point, a note instead: no verdicts, so 0 PASS and 0 FAIL). */
static inline void ex_tally_print(const ex_tally *t)
{
    if (t->one_seed) /* every check was printed INFO(1 seed): the tally counts none of them */
        printf("  one seed per point: no standard errors, so no verdicts (use more seeds)\n");
    else
        printf("  margin: %g standard errors of the difference over independent seeds; %d NO-SIGNAL "
               "(no model better than x = 0: neither PASS nor FAIL; docs/reproductions.md)\n",
               EX_MARGIN_SE, t->no_signal);
    printf("%d PASS, %d FAIL, %d NOT-REPRODUCED-HERE\n", t->pass, t->fail, t->not_reproduced);
}

/* The exit status of an example: 1 when a check FAILed (0 with --no-fail-exit). */
static inline int ex_exit_status(const ex_tally *t, int no_fail_exit)
{
    return t->fail > 0 && !no_fail_exit ? 1 : 0;
}

/* The base seed of a run: --seed S reproduces a run; by default a fresh one from the operating
 * system, so every table and curve is a new replication (printed, to rerun it). */
static inline unsigned long long ex_fresh_seed(void)
{
    unsigned long long s = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f || fread(&s, sizeof s, 1, f) != 1) s = (unsigned long long)time(NULL) ^ (unsigned long long)clock();
    if (f) fclose(f);
    return s % 1000000007ULL;
}

/* The library's default accountant (DPDO_ACCOUNTANT_DEFAULT, "auto": the
 * tightest sound figure). */
static inline const char *ex_accountant_name(void)
{
    return DPDO_ACCOUNTANT_DEFAULT; /* "auto": docs/privacy.md, "Which accountant" */
}

/* The randomness line every example prints: what --reproducible (seed-keyed
 * Philox) and the default (secure) mode mean for the numbers that follow. */
static inline const char *ex_randomness(int reproducible)
{
    return reproducible ? "reproducible (Philox keyed by the seed: bit-identical reruns; epsilon "
                          "holds only against parties who do not know the seed)"
                        : "secure (per-node keys from OS entropy, exact discrete grid noise; "
                          "--reproducible for bit-identical reruns)";
}

/* The key of the parameter `name` ("dda-active") among those algorithm type t
 * accepts, or 0 if t has none of that name. */
static inline int ex_param_key(const dpdo_algorithm_type *t, const char *name)
{
    for (int k = dpdo_algorithm_type_param_next(t, 0); k > 0; k = dpdo_algorithm_type_param_next(t, k))
        if (strcmp(dpdo_param_name(k), name) == 0) return k;
    return 0;
}

/* "k/n" progress on stderr, overwritten in place. */
static inline void ex_progress(const char *what, long k, long n)
{
    fprintf(stderr, "\r%s %ld/%ld%s", what, k, n, k == n ? "\n" : "");
}

/* A real dense binary task from Fashion-MNIST (the training IDX files in
 * `dir`): the rows of classes pos (+1) and neg (-1) only, pixels scaled to
 * unit-norm rows (so that a per-sample gradient bound G = 1 holds for the
 * logistic and hinge losses). Fills ds (empty); 0 or -1 (message on stderr). */
static inline int ex_load_fashion_pair(dpdo_dataset *ds, const char *dir, int32_t pos, int32_t neg)
{
    char img[1024], lab[1024];
    int status = -1;
    dpdo_dataset *all = NULL;
    double *X = NULL, *y = NULL;
    int32_t *cls = NULL;
    const char *suffix[2] = {"", ".gz"};
    FILE *probe = NULL;
    for (int s = 0; s < 2 && !probe; s++) {
        snprintf(img, sizeof img, "%s/train-images-idx3-ubyte%s", dir, suffix[s]);
        snprintf(lab, sizeof lab, "%s/train-labels-idx1-ubyte%s", dir, suffix[s]);
        probe = fopen(img, "rb");
    }
    if (!probe) {
        fprintf(stderr, "no Fashion-MNIST training images in %s\n", dir);
        return -1;
    }
    fclose(probe);
    dpdo_load_options lo;
    dpdo_load_options_init(&lo, sizeof lo);
    lo.scale = DPDO_IDX_ROW_NORMALIZE;
    TRY(dpdo_dataset_create(&all), "out of memory");
    TRY(dpdo_dataset_load_idx(all, img, lab, &lo), dpdo_dataset_errmsg(all));
    int64_t n = dpdo_dataset_rows(all), d = dpdo_dataset_features(all), m = 0;
    cls = malloc(sizeof(int32_t) * (size_t)n);
    if (!cls) goto fail;
    TRY(dpdo_dataset_get_classes(all, cls, n), dpdo_dataset_errmsg(all));
    for (int64_t i = 0; i < n; i++) m += cls[i] == pos || cls[i] == neg;
    X = malloc(sizeof(double) * (size_t)(m * d));
    y = malloc(sizeof(double) * (size_t)(m ? m : 1));
    if (!X || !y) goto fail;
    m = 0;
    for (int64_t i = 0; i < n; i++)
        if (cls[i] == pos || cls[i] == neg) {
            TRY(dpdo_dataset_get_row(all, i, X + m * d, d), dpdo_dataset_errmsg(all));
            y[m++] = cls[i] == pos ? 1.0 : -1.0;
        }
    TRY(dpdo_dataset_set_dense(ds, m, d, X, y, DPDO_COPY), dpdo_dataset_errmsg(ds));
    status = 0;
fail:
    free(X);
    free(y);
    free(cls);
    dpdo_dataset_destroy(all);
    return status;
}

/* Fashion-MNIST classes of the binary task: pullover (+1) against coat (-1),
 * two classes a linear model separates only in part. */
#define EX_FASHION_DIR "/usr/share/datasets/fashion-mnist"
#define EX_FASHION_POS 2
#define EX_FASHION_NEG 4

#endif
