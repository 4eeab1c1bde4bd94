/* SPDX-License-Identifier: BSD-3-Clause */
/* Reference solver wall time next to liblinear-train on the same LIBSVM file.
 *
 * Problem: an epsilon-like dense set (default 20000 x 500, unit-length rows),
 * L2-regularised logistic regression (liblinear -s 0) and L2-regularised
 * hinge SVM (liblinear -s 3, dual CD), no bias, lambda = 1e-4, so
 * C = 1/(lambda N). The file is written once with dpdo_dataset_save_libsvm;
 * both solvers read it (our load time is reported separately; liblinear's
 * wall time includes its parsing). liblinear runs at its default -e and at a
 * tight -e; for each run we print F(w) - F* as computed by our objective.
 * Usage: bench_model [n d]. Set DPDO_BENCH_QUICK=1 for a small run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "dpdo/dpdo.h"
#include "dpdo/loss.h"
#include "dpdo/node.h"
#include "dpdo/reference.h"
#include "dpdo/regularizer.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int read_w(const char *model, double *w, int64_t d)
{
    FILE *f = fopen(model, "r");
    if (!f) return -1;
    char line[512];
    int first = 1, inw = 0;
    int64_t k = 0;
    while (fgets(line, sizeof line, f)) {
        if (!inw) {
            if (!strncmp(line, "label ", 6)) first = atoi(line + 6);
            if (line[0] == 'w' && (line[1] == '\n' || line[1] == '\r')) inw = 1;
            continue;
        }
        if (k < d) w[k++] = strtod(line, NULL);
    }
    fclose(f);
    if (k != d) return -1;
    if (first != 1)
        for (int64_t j = 0; j < d; j++) w[j] = -w[j];
    return 0;
}

int main(int argc, char **argv)
{
    int64_t n = 20000, d = 500;
    const char *q = getenv("DPDO_BENCH_QUICK");
    if (q && *q && *q != '0') n = 2000, d = 100;
    if (argc == 3) n = atoll(argv[1]), d = atoll(argv[2]);
    const double lambda = 1e-4;
    const char *ll = "/usr/bin/liblinear-train";
    int have_ll = access(ll, X_OK) == 0;

    dpdo_dataset *gen = NULL, *ds = NULL;
    dpdo_generate_options go;
    dpdo_generate_options_init(&go, sizeof go);
    go.n = n;
    go.d = d;
    go.seed = 7;
    if (dpdo_dataset_create(&gen) || dpdo_dataset_generate(gen, "epsilon-like", &go)) {
        fprintf(stderr, "generate: %s\n", dpdo_dataset_errmsg(gen));
        return 1;
    }
    char path[64];
    snprintf(path, sizeof path, "/tmp/dpdo_bench_model_%d.svm", (int)getpid());
    double t0 = now();
    if (dpdo_dataset_save_libsvm(gen, path)) {
        fprintf(stderr, "save: %s\n", dpdo_dataset_errmsg(gen));
        return 1;
    }
    double t_save = now() - t0;
    dpdo_dataset_destroy(gen);
    dpdo_dataset_create(&ds);
    t0 = now();
    if (dpdo_dataset_load_libsvm(ds, path, NULL)) {
        fprintf(stderr, "load: %s\n", dpdo_dataset_errmsg(ds));
        return 1;
    }
    double t_load = now() - t0;
    printf("data: epsilon-like %lld x %lld dense, lambda = %g, C = 1/(lambda N) = %g\n",
           (long long)n, (long long)d, lambda, 1.0 / (lambda * (double)n));
    printf("  write LIBSVM file %.2f s; our LIBSVM load %.2f s\n", t_save, t_load);

    dpdo_shard *sh = NULL;
    dpdo_shard_create_range(&sh, ds, 0, n);
    dpdo_regularizer *reg = NULL;
    dpdo_regularizer_create(&reg, dpdo_regularizer_type_find("l2"), NULL, d, &lambda, 1);
    double *x = malloc((size_t)d * sizeof *x), *w = malloc((size_t)d * sizeof *w);
    const char *losses[2] = {"logistic", "hinge"};
    const int solver[2] = {0, 3};
    const char *tight[2] = {"1e-6", "1e-4"};
    int status = 0;
    double t_parse = NAN;
    if (have_ll) {
        /* liblinear's parsing time: a run that stops at its first check (-e 1e30) */
        char cmd[512];
        snprintf(cmd, sizeof cmd, "%s -s 0 -c 1 -e 1e30 -B -1 -q %s %s.model > /dev/null 2>&1", ll,
                 path, path);
        t0 = now();
        if (system(cmd) == 0) t_parse = now() - t0;
        printf("  liblinear-train parse-only baseline (-s 0 -e 1e30): %.2f s\n", t_parse);
    }
    for (int k = 0; k < 2; k++) {
        dpdo_loss *loss = NULL;
        dpdo_node *node = NULL;
        dpdo_reference *ref = NULL;
        dpdo_loss_create(&loss, dpdo_loss_type_find(losses[k]), NULL, d);
        if (dpdo_node_create(&node, sh, loss, 1.0)) {
            fprintf(stderr, "node: %s\n", dpdo_loss_errmsg(loss));
            return 1;
        }
        dpdo_reference_options o;
        dpdo_reference_options_init(&o, sizeof o);
        dpdo_reference_create(&ref, &node, 1, reg, &o);
        double F = NAN;
        t0 = now();
        int rc = dpdo_reference_solve(ref, x, d, &F);
        double t_ours = now() - t0;
        if (rc) status = 1;
        printf("\n%s + l2: ours (%s) %.3f s, %lld iterations, F* = %.15g, certificate %.3g%s\n",
               losses[k], dpdo_reference_method(ref), t_ours,
               (long long)dpdo_reference_iterations(ref), F, dpdo_reference_certificate(ref),
               rc ? " (NOT CONVERGED)" : "");
        if (!have_ll) {
            printf("  liblinear-train not installed: skipped\n");
        } else {
            for (int e = 0; e < 2; e++) {
                char cmd[512], model[96];
                snprintf(model, sizeof model, "%s.model", path);
                snprintf(cmd, sizeof cmd, "%s -s %d -c %.17g %s%s -B -1 -q %s %s > /dev/null 2>&1",
                         ll, solver[k], 1.0 / (lambda * (double)n), e ? "-e " : "",
                         e ? tight[k] : "", path, model);
                t0 = now();
                int src = system(cmd);
                double t_ll = now() - t0;
                double Fl = NAN;
                if (src == 0 && read_w(model, w, d) == 0) dpdo_reference_objective(ref, w, d, &Fl);
                remove(model);
                printf("  liblinear -s %d -e %-8s %.3f s (incl. parsing; minus baseline %.3f s), "
                       "F(w) - F* = %.3g, time ratio ours/liblinear = %.2f (%.2f without parsing)\n",
                       solver[k], e ? tight[k] : "default", t_ll, t_ll - t_parse, Fl - F,
                       t_ours / t_ll, t_ours / (t_ll - t_parse));
            }
        }
        dpdo_reference_destroy(ref);
        dpdo_node_destroy(node);
        dpdo_loss_destroy(loss);
    }
    /* hinge + l1 and hinge + elastic net (DP-DDA Sec. 6.2: phi = 0.0005) on
     * this dense set and on an rcv1-like sparse set of the same row count,
     * 10x the features: certified to tol 1e-8 (hinge + l1 capped at 300
     * iterations: its smoothed FISTA does not reach 1e-8 in reasonable time) */
    {
        dpdo_dataset *sp = NULL;
        dpdo_shard *sh2 = NULL;
        int64_t d2 = 10 * d;
        go.d = d2;
        if (dpdo_dataset_create(&sp) || dpdo_dataset_generate(sp, "rcv1-like", &go) ||
            dpdo_shard_create_range(&sh2, sp, 0, n)) {
            fprintf(stderr, "rcv1-like: %s\n", dpdo_dataset_errmsg(sp));
            return 1;
        }
        double *x2 = malloc((size_t)d2 * sizeof *x2);
        printf("\nhinge + l1 / elastic net, phi = 5e-4 (elastic net: lambda2 = 1e-4), tol 1e-8:\n");
        for (int setk = 0; setk < 2; setk++)
            for (int rk = 0; rk < 2; rk++) {
                int64_t dd = setk ? d2 : d;
                double pr[2] = {5e-4, 1e-4};
                dpdo_loss *loss = NULL;
                dpdo_node *node = NULL;
                dpdo_regularizer *rg = NULL;
                dpdo_reference *ref = NULL;
                dpdo_loss_create(&loss, dpdo_loss_type_find("hinge"), NULL, dd);
                dpdo_node_create(&node, setk ? sh2 : sh, loss, 1.0);
                dpdo_regularizer_create(&rg, dpdo_regularizer_type_find(rk ? "elastic-net" : "l1"),
                                        NULL, dd, pr, rk ? 2 : 1);
                dpdo_reference_options o;
                dpdo_reference_options_init(&o, sizeof o);
                o.tol = 1e-8;
                if (!rk) o.max_iter = 300;
                if (dpdo_reference_create(&ref, &node, 1, rg, &o)) {
                    fprintf(stderr, "reference: %s\n", dpdo_regularizer_errmsg(rg));
                    return 1;
                }
                double F = NAN;
                t0 = now();
                int rc = dpdo_reference_solve(ref, setk ? x2 : x, dd, &F);
                double t_ours = now() - t0;
                printf("  %-12s %s %lld x %lld: %s %.3f s, %lld iterations, F* = %.15g, "
                       "certificate %.3g%s\n",
                       rk ? "elastic-net" : "l1", setk ? "rcv1-like" : "epsilon-like", (long long)n,
                       (long long)dd, dpdo_reference_method(ref), t_ours,
                       (long long)dpdo_reference_iterations(ref), F,
                       dpdo_reference_certificate(ref), rc ? " (NOT CONVERGED)" : "");
                if (rc && rk) status = 1;
                dpdo_reference_destroy(ref);
                dpdo_regularizer_destroy(rg);
                dpdo_node_destroy(node);
                dpdo_loss_destroy(loss);
            }
        free(x2);
        dpdo_shard_destroy(sh2);
        dpdo_dataset_destroy(sp);
    }
    remove(path);
    free(x);
    free(w);
    dpdo_regularizer_destroy(reg);
    dpdo_shard_destroy(sh);
    dpdo_dataset_destroy(ds);
    return status;
}
