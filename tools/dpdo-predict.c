/* SPDX-License-Identifier: BSD-3-Clause */
/* dpdo-predict: predictions of a saved model (docs/model.md "Model files",
 * docs/dpdo-predict.1) on a LIBSVM or CSV file.
 *   dpdo-predict --model run.model --data test.svm [--output label|margin|probability]
 * One prediction per line on stdout (or none with --quiet); on stderr a
 * summary line "accuracy A (k of n)" when the data's labels are binary
 * ({-1,+1} or {0,1}). Exit status: 0 success, 1 a file could not be read or
 * the model does not fit the data, 2 invalid command line. */
#include "dpdo/dpdo.h"
#include "dpdo/model_file.h"
#include "tool_data.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *USAGE =
    "usage: dpdo-predict --model FILE --data FILE [options]\n"
    "\n"
    "Predictions of a libdpdo model file (written by dpdo_model_save) for every sample of a\n"
    "LIBSVM/SVMlight or CSV file (gzip-compressed files are read too).\n"
    "\n"
    "  --model FILE        the model file (its checksum is verified: an edited file is refused)\n"
    "  --key-file FILE     the model's MAC key (16..64 raw bytes): only a file saved under it\n"
    "                      loads (docs/model.md \"Durable, authenticated model files\")\n"
    "  --data FILE         the samples\n"
    "  --format F          libsvm (default) | csv\n"
    "  --output O          label (default: +1/-1) | margin (<a, x>) | probability\n"
    "                      (P(y = +1); logistic-loss models only)\n"
    "  --label-column K    CSV: 0-based label column, -1 = last (default 0)\n"
    "  --header            CSV: skip the first line\n"
    "  --delimiter C       CSV: field separator (default ',')\n"
    "  --quiet             print only the summary, no predictions\n"
    "  --help              this text\n"
    "\n"
    "The data may have fewer features than the model (missing trailing features are zero),\n"
    "not more. The summary on stderr gives the model's provenance and, when the labels are\n"
    "binary ({-1,+1} or {0,1}, 0 meaning -1), the accuracy of the +1/-1 predictions.\n"
    "\n"
    "example:\n"
    "  dpdo-predict --model run.model --data a9a.t --output probability > p.txt\n";

static int usage_error(const char *fmt, const char *arg)
{
    return tool_usage_error("dpdo-predict", fmt, arg);
}

typedef struct {
    const char *model, *data, *format, *output, *key_file;
    long label_column;
    int header, delimiter, quiet;
} args;

/* parse argv into a; 0 to go on, 2 for a usage error, -1 after --help */
static int parse_args(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    a->format = "libsvm";
    a->output = "label";
    a->delimiter = ',';
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
            fputs(USAGE, stdout);
            return -1;
        }
        if (strcmp(o, "--header") == 0) {
            a->header = 1;
            continue;
        }
        if (strcmp(o, "--quiet") == 0) {
            a->quiet = 1;
            continue;
        }
        const char **slot = strcmp(o, "--model") == 0      ? &a->model
                            : strcmp(o, "--data") == 0     ? &a->data
                            : strcmp(o, "--format") == 0   ? &a->format
                            : strcmp(o, "--output") == 0   ? &a->output
                            : strcmp(o, "--key-file") == 0 ? &a->key_file
                                                           : NULL;
        int is_col = strcmp(o, "--label-column") == 0, is_del = strcmp(o, "--delimiter") == 0;
        if (!slot && !is_col && !is_del) return usage_error("unknown option '%s'", o);
        if (!v) return usage_error("option %s needs a value", o);
        i++;
        if (slot) {
            *slot = v;
        } else if (is_col) {
            char *end;
            errno = 0;
            long k = strtol(v, &end, 10);
            if (end == v || *end || errno || k < -1 || k > 1000000)
                return usage_error("--label-column: '%s' is not an integer in [-1, 10^6]", v);
            a->label_column = k;
        } else {
            if (strlen(v) != 1) return usage_error("--delimiter: '%s' is not one character", v);
            a->delimiter = (unsigned char)v[0];
        }
    }
    if (!a->model) return usage_error("--model FILE is required%s", "");
    if (!a->data) return usage_error("--data FILE is required%s", "");
    if (strcmp(a->format, "libsvm") != 0 && strcmp(a->format, "csv") != 0)
        return usage_error("--format must be libsvm or csv, not '%s'", a->format);
    if (strcmp(a->output, "label") != 0 && strcmp(a->output, "margin") != 0 &&
        strcmp(a->output, "probability") != 0)
        return usage_error("--output must be label, margin or probability, not '%s'", a->output);
    return 0;
}

int main(int argc, char **argv)
{
    args a;
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    int status = 1;
    dpdo_model *m = NULL;
    dpdo_dataset *ds = NULL;
    double *pred = NULL, *lab = NULL, *y = NULL;
    if (dpdo_model_create(&m) != DPDO_OK || dpdo_dataset_create(&ds) != DPDO_OK) {
        fprintf(stderr, "dpdo-predict: out of memory\n");
        goto out;
    }
    if (a.key_file) {
        unsigned char key[65];
        FILE *kf = fopen(a.key_file, "rb");
        size_t kn = kf ? fread(key, 1, sizeof key, kf) : 0;
        if (kf) fclose(kf);
        if (!kf || kn < 16 || kn > 64) {
            fprintf(stderr, "dpdo-predict: --key-file '%s': %s\n", a.key_file,
                    !kf ? strerror(errno) : "the key must be 16..64 bytes");
            goto out;
        }
        rc = dpdo_model_set_key(m, key, kn);
        memset(key, 0, sizeof key);
        if (rc != DPDO_OK) {
            fprintf(stderr, "dpdo-predict: %s\n", dpdo_model_errmsg(m));
            goto out;
        }
    }
    if (dpdo_model_load(m, a.model) != DPDO_OK) {
        fprintf(stderr, "dpdo-predict: %s\n", dpdo_model_errmsg(m));
        goto out;
    }
    if (tool_load_data(ds, "dpdo-predict", a.data, a.format, a.label_column, a.header,
                       a.delimiter) != DPDO_OK)
        goto out;
    /* a feature beyond the model is an error, named by the model's dimension (the load
     * options' max_features guard against huge files stays at its default) */
    if (dpdo_dataset_features(ds) > dpdo_model_dim(m)) {
        fprintf(stderr,
                "dpdo-predict: '%s' has %lld features, more than the %lld features of the model "
                "'%s'\n",
                a.data, (long long)dpdo_dataset_features(ds), (long long)dpdo_model_dim(m),
                a.model);
        goto out;
    }
    int64_t n = dpdo_dataset_rows(ds);
    int kind = strcmp(a.output, "margin") == 0        ? DPDO_PREDICT_MARGIN
               : strcmp(a.output, "probability") == 0 ? DPDO_PREDICT_PROBABILITY
                                                      : DPDO_PREDICT_LABEL;
    pred = malloc((size_t)n * sizeof *pred);
    lab = malloc((size_t)n * sizeof *lab);
    y = malloc((size_t)n * sizeof *y);
    if (!pred || !lab || !y) {
        fprintf(stderr, "dpdo-predict: out of memory for %lld samples\n", (long long)n);
        goto out;
    }
    if (dpdo_model_predict(m, ds, kind, pred, n) != DPDO_OK ||
        dpdo_model_predict(m, ds, DPDO_PREDICT_LABEL, lab, n) != DPDO_OK) {
        fprintf(stderr, "dpdo-predict: %s\n", dpdo_model_errmsg(m));
        goto out;
    }
    dpdo_dataset_get_labels(ds, y, n);
    if (!a.quiet)
        for (int64_t i = 0; i < n; i++) {
            if (kind == DPDO_PREDICT_LABEL)
                printf("%+.0f\n", pred[i]);
            else
                printf("%.17g\n", pred[i]);
        }
    double eps = 0, delta = 0;
    dpdo_model_privacy(m, &eps, &delta);
    fprintf(stderr,
            "model: %s, loss %s, %lld rounds, epsilon %g at delta %g (%s), dim %lld, libdpdo %s\n",
            dpdo_model_text(m, "algorithm"), dpdo_model_text(m, "loss"),
            (long long)dpdo_model_rounds(m), eps, delta, dpdo_model_text(m, "accountant"),
            (long long)dpdo_model_dim(m), dpdo_model_text(m, "library"));
    int integ = dpdo_model_integrity(m);
    fprintf(stderr, "model file: %s\n",
            integ == DPDO_MODEL_INTEGRITY_MAC        ? "authenticated (keyed MAC verified)"
            : integ == DPDO_MODEL_INTEGRITY_CHECKSUM ? "checksum verified (not authenticated: use "
                                                       "a key to detect deliberate edits)"
                                                     : "NOT VERIFIED (no integrity line: written "
                                                       "by libdpdo 0.2, or the line was removed)");
    int64_t ncls = 0;
    dpdo_model_classes(m, NULL, 0, &ncls);
    if (ncls > 0) {
        /* a model trained on class ids (dpdo_train) predicts class ids */
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++)
            k += lab[i] == y[i];
        fprintf(stderr, "accuracy %.6f (%lld of %lld; %lld classes)\n", (double)k / (double)n,
                (long long)k, (long long)n, (long long)ncls);
        status = 0;
        goto out;
    }
    int binary = 1, saw0 = 0, sawm1 = 0;
    for (int64_t i = 0; i < n && binary; i++) {
        if (y[i] == 0)
            saw0 = 1;
        else if (y[i] == -1)
            sawm1 = 1;
        else if (y[i] != 1)
            binary = 0;
    }
    if (binary && !(saw0 && sawm1)) {
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++)
            k += (lab[i] > 0) == (y[i] > 0);
        fprintf(stderr, "accuracy %.6f (%lld of %lld)\n", (double)k / (double)n, (long long)k,
                (long long)n);
    } else {
        fprintf(stderr, "accuracy: not computed (labels are not binary)\n");
    }
    status = 0;
out:
    free(pred);
    free(lab);
    free(y);
    dpdo_dataset_destroy(ds);
    dpdo_model_destroy(m);
    return status;
}
