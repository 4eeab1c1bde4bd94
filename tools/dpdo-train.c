/* SPDX-License-Identifier: BSD-3-Clause */
/* dpdo-train: train a private linear model from a LIBSVM or CSV file and save it (the pair of
 * dpdo-predict; docs/dpdo-train.1). A front end of dpdo_train (include/dpdo/train.h).
 *   dpdo-train --data train.svm --model run.model [--nodes 8] [--epsilon 1] [--json]
 * Progress on stderr; with --json a one-line summary on stdout. Exit status: 0 success, 1 the
 * data could not be read or the training failed, 2 invalid command line. */
#include "dpdo/dpdo.h"
#include "tool_data.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *USAGE =
    "usage: dpdo-train --data FILE --model FILE [options]\n"
    "\n"
    "Train a differentially private linear model on a LIBSVM/SVMlight or CSV file (gzip-\n"
    "compressed files are read too) split over simulated nodes, and save it as a libdpdo model\n"
    "file for dpdo-predict.\n"
    "\n"
    "  --data FILE         the training samples\n"
    "  --model FILE        where to write the model (atomic write, with a checksum)\n"
    "  --format F          libsvm (default) | csv\n"
    "  --label-column K    CSV: 0-based label column, -1 = last (default 0)\n"
    "  --header            CSV: skip the first line\n"
    "  --delimiter C       CSV: field separator (default ',')\n"
    "  --nodes N           nodes the rows are split over (default 4)\n"
    "  --partition P       shuffled (default; keyed by --seed) | contiguous\n"
    "  --algorithm A       dp-dda (default) | do-adp | dp-wor-sgd | fed-plt | ...\n"
    "  --epsilon E         privacy budget per sample over the whole training (default 1;\n"
    "                      'inf' trains without noise)\n"
    "  --delta D           default min(1e-5, 0.1/n) for n training rows\n"
    "  --accountant NAME   default auto\n"
    "  --loss L            logistic (default) | hinge | ...\n"
    "  --lambda L          L2 strength (default: planned from the budget)\n"
    "  --rounds T          rounds per run (default: planned from the budget)\n"
    "  --seed S            seed of the partition (and of everything with --reproducible)\n"
    "  --reproducible      key every random draw by --seed (bit-identical reruns; the\n"
    "                      guarantee then holds only against parties who do not know the seed)\n"
    "  --threads K         threads per round (default: DPDO_NUM_THREADS, else 1)\n"
    "  --export-liblinear FILE  also write the weights as a LIBLINEAR model file\n"
    "  --export-csv FILE   also write the weights as CSV\n"
    "  --json              a one-line JSON summary on stdout\n"
    "  --quiet             no progress on stderr\n"
    "  --help              this text\n"
    "\n"
    "Labels: +1/-1 or 0/1 train one binary model; other integer labels are classes, trained\n"
    "one-vs-rest with the budget split evenly over the classes (basic composition).\n"
    "\n"
    "example:\n"
    "  dpdo-train --data a9a --model a9a.model --nodes 8 --epsilon 1 --json\n"
    "  dpdo-predict --model a9a.model --data a9a.t --quiet\n";

static int usage_error(const char *fmt, const char *arg)
{
    return tool_usage_error("dpdo-train", fmt, arg);
}

typedef struct {
    const char *data, *model, *format, *partition, *algorithm, *accountant, *loss, *ll_out,
        *csv_out;
    long label_column, threads;
    long long nodes, rounds;
    unsigned long long seed;
    double epsilon, delta, lambda;
    int header, delimiter, json, quiet, reproducible;
} args;

static int num_arg(const char *o, const char *v, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double x = strcmp(v, "inf") == 0 ? INFINITY : strtod(v, &end);
    if (strcmp(v, "inf") != 0 && (end == v || *end || errno)) x = NAN;
    if (!(x >= lo && x <= hi)) {
        fprintf(stderr, "dpdo-train: %s: '%s' is not a number in [%g, %g]\n", o, v, lo, hi);
        return 2;
    }
    *out = x;
    return 0;
}

/* parse argv into a; 0 to go on, 2 for a usage error, -1 after --help */
static int parse_args(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    a->format = "libsvm";
    a->partition = "shuffled";
    a->algorithm = "dp-dda";
    a->delimiter = ',';
    a->nodes = 4;
    a->epsilon = 1.0;
    a->delta = NAN;
    a->lambda = NAN;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
            fputs(USAGE, stdout);
            return -1;
        }
        int *flag = strcmp(o, "--header") == 0         ? &a->header
                    : strcmp(o, "--json") == 0         ? &a->json
                    : strcmp(o, "--quiet") == 0        ? &a->quiet
                    : strcmp(o, "--reproducible") == 0 ? &a->reproducible
                                                       : NULL;
        if (flag) {
            *flag = 1;
            continue;
        }
        const char **slot = strcmp(o, "--data") == 0               ? &a->data
                            : strcmp(o, "--model") == 0            ? &a->model
                            : strcmp(o, "--format") == 0           ? &a->format
                            : strcmp(o, "--partition") == 0        ? &a->partition
                            : strcmp(o, "--algorithm") == 0        ? &a->algorithm
                            : strcmp(o, "--accountant") == 0       ? &a->accountant
                            : strcmp(o, "--loss") == 0             ? &a->loss
                            : strcmp(o, "--export-liblinear") == 0 ? &a->ll_out
                            : strcmp(o, "--export-csv") == 0       ? &a->csv_out
                                                                   : NULL;
        double x;
        int rc = 0;
        if (!v &&
            (slot || !strcmp(o, "--nodes") || !strcmp(o, "--epsilon") || !strcmp(o, "--delta") ||
             !strcmp(o, "--lambda") || !strcmp(o, "--rounds") || !strcmp(o, "--seed") ||
             !strcmp(o, "--threads") || !strcmp(o, "--label-column") || !strcmp(o, "--delimiter")))
            return usage_error("option %s needs a value", o);
        if (slot)
            *slot = v;
        else if (strcmp(o, "--nodes") == 0 && !(rc = num_arg(o, v, 1, 1 << 30, &x)))
            a->nodes = (long long)x;
        else if (strcmp(o, "--epsilon") == 0 && !(rc = num_arg(o, v, 1e-300, INFINITY, &x)))
            a->epsilon = x;
        else if (strcmp(o, "--delta") == 0 && !(rc = num_arg(o, v, 1e-300, 0.5, &x)))
            a->delta = x;
        else if (strcmp(o, "--lambda") == 0 && !(rc = num_arg(o, v, 0, 1e300, &x)))
            a->lambda = x;
        else if (strcmp(o, "--rounds") == 0 && !(rc = num_arg(o, v, 1, 0x1p48, &x)))
            a->rounds = (long long)x;
        else if (strcmp(o, "--seed") == 0 && !(rc = num_arg(o, v, 0, 0x1p63, &x)))
            a->seed = (unsigned long long)x;
        else if (strcmp(o, "--threads") == 0 && !(rc = num_arg(o, v, 0, 256, &x)))
            a->threads = (long)x;
        else if (strcmp(o, "--label-column") == 0 && !(rc = num_arg(o, v, -1, 1e6, &x)))
            a->label_column = (long)x;
        else if (strcmp(o, "--delimiter") == 0) {
            if (strlen(v) != 1) return usage_error("--delimiter: '%s' is not one character", v);
            a->delimiter = (unsigned char)v[0];
        } else if (!rc)
            return usage_error("unknown option '%s'", o);
        if (rc) return rc;
        i++;
    }
    if (!a->data) return usage_error("--data FILE is required%s", "");
    if (!a->model) return usage_error("--model FILE is required%s", "");
    if (strcmp(a->format, "libsvm") != 0 && strcmp(a->format, "csv") != 0)
        return usage_error("--format must be libsvm or csv, not '%s'", a->format);
    if (strcmp(a->partition, "shuffled") != 0 && strcmp(a->partition, "contiguous") != 0)
        return usage_error("--partition must be shuffled or contiguous, not '%s'", a->partition);
    if (!dpdo_algorithm_type_find(a->algorithm)) {
        fprintf(stderr, "dpdo-train: --algorithm: '%s' is not an algorithm of this libdpdo; it has",
                a->algorithm);
        for (const dpdo_algorithm_type *t = dpdo_algorithm_type_next(NULL); t;
             t = dpdo_algorithm_type_next(t))
            fprintf(stderr, " %s", dpdo_algorithm_type_name(t));
        fprintf(stderr, "\n");
        return 2;
    }
    return 0;
}

/* a JSON string (names from the model are tokens; paths are the user's) */
static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

typedef struct {
    int quiet;
    int64_t run, last_round;
} progress_state;

static int on_progress(const dpdo_progress *p, void *user)
{
    progress_state *s = user;
    if (p->round < s->last_round) s->run++; /* a new one-vs-rest run started */
    int again = p->round == s->last_round;  /* the call after the last round repeats it */
    s->last_round = p->round;
    if (!s->quiet && !again)
        fprintf(stderr, "dpdo-train: run %lld: round %lld of %lld, epsilon %.4g\n",
                (long long)s->run + 1, (long long)p->round, (long long)p->max_rounds, p->epsilon);
    return 0;
}

/* Labels to what dpdo_train takes: +1/-1 stay; 0/1 and other integers become class ids.
 * 0 or 1 on failure (message printed). */
static int set_targets(dpdo_dataset *ds, const char *path, int64_t *nclasses)
{
    int64_t n = dpdo_dataset_rows(ds);
    double *y = malloc((size_t)n * sizeof *y);
    int32_t *c = malloc((size_t)n * sizeof *c);
    int rc = 1, pm = 1;
    if (!y || !c) {
        fprintf(stderr, "dpdo-train: out of memory\n");
        goto out;
    }
    dpdo_dataset_get_labels(ds, y, n);
    for (int64_t i = 0; i < n; i++) {
        if (y[i] != floor(y[i]) || fabs(y[i]) > 2147483647.0) {
            fprintf(stderr,
                    "dpdo-train: '%s' row %lld: label %g is not an integer (classification "
                    "only)\n",
                    path, (long long)i + 1, y[i]);
            goto out;
        }
        c[i] = (int32_t)y[i];
        pm &= y[i] == 1 || y[i] == -1;
    }
    *nclasses = 0;
    if (!pm) {
        if (dpdo_dataset_set_classes(ds, c, n) != DPDO_OK) {
            fprintf(stderr, "dpdo-train: %s\n", dpdo_dataset_errmsg(ds));
            goto out;
        }
        *nclasses = 1; /* counted by the model */
    }
    rc = 0;
out:
    free(y);
    free(c);
    return rc;
}

int main(int argc, char **argv)
{
    args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    int status = 1;
    dpdo_model *m = NULL;
    dpdo_dataset *ds = NULL;
    if (dpdo_model_create(&m) != DPDO_OK || dpdo_dataset_create(&ds) != DPDO_OK) {
        fprintf(stderr, "dpdo-train: out of memory\n");
        goto out;
    }
    if (tool_load_data(ds, "dpdo-train", a.data, a.format, a.label_column, a.header, a.delimiter) !=
        DPDO_OK)
        goto out;
    int64_t n = dpdo_dataset_rows(ds), ncls = 0;
    if (set_targets(ds, a.data, &ncls)) goto out;
    double delta = isnan(a.delta) ? fmin(1e-5, 0.1 / (double)n) : a.delta;
    if (delta * (double)n >= 1.0)
        fprintf(stderr,
                "dpdo-train: warning: delta = %g >= 1/n for n = %lld rows protects no row; use "
                "delta < 1/(10 n) (the default does)\n",
                delta, (long long)n);
    dpdo_train_options o;
    dpdo_train_options_init(&o, sizeof o);
    o.loss = a.loss;
    o.lambda = a.lambda;
    o.max_rounds = a.rounds;
    o.seed = a.seed;
    o.randomness = a.reproducible ? DPDO_RANDOMNESS_REPRODUCIBLE : DPDO_RANDOMNESS_SECURE;
    o.num_threads = (int32_t)a.threads;
    o.partition = strcmp(a.partition, "contiguous") == 0 ? DPDO_PARTITION_CONTIGUOUS
                                                         : DPDO_PARTITION_SHUFFLED;
    o.accountant = a.accountant;
    progress_state ps = {a.quiet, 0, 0};
    o.progress = on_progress;
    o.progress_user = &ps;
    if (!a.quiet)
        fprintf(stderr,
                "dpdo-train: %lld rows x %lld features from '%s', %lld nodes, %s, "
                "epsilon %g, delta %g\n",
                (long long)n, (long long)dpdo_dataset_features(ds), a.data, a.nodes, a.algorithm,
                a.epsilon, delta);
    rc = dpdo_train(m, ds, a.nodes, a.algorithm, a.epsilon, delta, &o);
    if (rc != DPDO_OK) {
        fprintf(stderr, "dpdo-train: %s\n", dpdo_model_errmsg(m));
        goto out;
    }
    if (dpdo_model_save(m, a.model) != DPDO_OK ||
        (a.ll_out && dpdo_model_export(m, DPDO_MODEL_EXPORT_LIBLINEAR, a.ll_out) != DPDO_OK) ||
        (a.csv_out && dpdo_model_export(m, DPDO_MODEL_EXPORT_CSV, a.csv_out) != DPDO_OK)) {
        fprintf(stderr, "dpdo-train: %s\n", dpdo_model_errmsg(m));
        goto out;
    }
    /* training accuracy (the predictions the model file will give) */
    double *pred = malloc((size_t)n * sizeof *pred), *y = malloc((size_t)n * sizeof *y);
    double acc = NAN;
    if (pred && y && dpdo_model_predict(m, ds, DPDO_PREDICT_LABEL, pred, n) == DPDO_OK &&
        dpdo_dataset_get_labels(ds, y, n) == DPDO_OK) {
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++)
            k += pred[i] == y[i] || (ncls == 0 && (pred[i] > 0) == (y[i] > 0));
        acc = (double)k / (double)n;
    }
    free(pred);
    free(y);
    double eps = 0, dl = 0;
    dpdo_model_privacy(m, &eps, &dl);
    int64_t K = 0;
    dpdo_model_classes(m, NULL, 0, &K);
    if (!a.quiet)
        fprintf(stderr,
                "dpdo-train: wrote '%s': %s, %lld rounds, epsilon %g at delta %g (%s%s), "
                "training accuracy %.4f\n",
                a.model, dpdo_model_text(m, "algorithm"), (long long)dpdo_model_rounds(m), eps, dl,
                dpdo_model_text(m, "accountant"),
                *dpdo_model_text(m, "composition") ? ", basic composition over the classes" : "",
                acc);
    if (a.json) {
        printf("{\"model\": ");
        json_string(a.model);
        printf(", \"algorithm\": \"%s\", \"loss\": \"%s\", \"nodes\": %lld, "
               "\"rows\": %lld, \"features\": %lld, \"classes\": %lld, \"rounds\": %lld, ",
               dpdo_model_text(m, "algorithm"), dpdo_model_text(m, "loss"),
               (long long)dpdo_model_nodes(m), (long long)n, (long long)dpdo_model_dim(m),
               (long long)K, (long long)dpdo_model_rounds(m));
        if (isinf(eps))
            printf("\"epsilon\": null, ");
        else
            printf("\"epsilon\": %.17g, ", eps);
        printf("\"delta\": %.17g, \"target_epsilon\": ", dl);
        if (isinf(a.epsilon))
            printf("null");
        else
            printf("%.17g", a.epsilon);
        printf(", \"target_delta\": %.17g, \"accountant\": \"%s\", \"composition\": \"%s\", "
               "\"train_accuracy\": %.6f}\n",
               delta, dpdo_model_text(m, "accountant"),
               *dpdo_model_text(m, "composition") ? dpdo_model_text(m, "composition") : "none",
               acc);
    }
    status = 0;
out:
    dpdo_dataset_destroy(ds);
    dpdo_model_destroy(m);
    return status;
}
