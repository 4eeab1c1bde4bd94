/* SPDX-License-Identifier: BSD-3-Clause */
/* dpdo-audit: empirical privacy audit of a libdpdo algorithm (docs/privacy-audit.md).
 *   dpdo-audit --algorithm dp-dda --epsilon 4 --rounds 3 --runs 100000
 * Exit status: 0 consistent (or no claim), 1 VIOLATION, 2 invalid command line, 3 the audit
 * failed. */
#include "dpdo/dpdo.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *USAGE =
    "usage: dpdo-audit --algorithm NAME [options]\n"
    "\n"
    "Runs the algorithm on two neighbouring datasets (a canary row at one node, its label flipped\n"
    "or the row removed), attacks what the canary node sends, and prints a lower bound on epsilon\n"
    "with its confidence beside the library's epsilon (rigorous and the paper's), and a verdict.\n"
    "\n"
    "the audit:\n"
    "  --method white-box|release|one-run\n"
    "                             white-box (default): every noisy release of the canary node,\n"
    "                             composed as a Gaussian (GDP mu, Nasr et al. 2023) or, for\n"
    "                             Laplace releases, as pure epsilons; and the\n"
    "                             threshold test on the transcript; release: the threshold test\n"
    "                             alone; one-run: one run with many canaries (Steinke, Nasr,\n"
    "                             Jagielski 2023)\n"
    "  --view transcript|model    the canary node's messages (default) or the final model\n"
    "  --neighbour replace|remove the canary's label flipped (default) or the row removed\n"
    "  --runs R                   runs per dataset and node (default 30000)\n"
    "  --canaries M --guesses K   one-run: canaries (default 500); K guesses each side (0 = best\n"
    "                             of a grid, confidence split; default)\n"
    "  --confidence C             of the bound (default 0.95)\n"
    "  --nodes N --rows Q --dim D problem size (default 2 nodes, 1 row each, 4 features)\n"
    "  --canary-node I            the canary's node (default: every node in turn)\n"
    "  --single-node              one node only: the most active one\n"
    "  --canary-norm K            (default: the Lipschitz bound L)\n"
    "  --loss linear|logistic     (default linear: the gradient canary)\n"
    "  --l2 LAMBDA                regularizer (default 0.1; 0 = none)\n"
    "  --accountant NAME          auto (default: the tightest sound one) | rdp | exact | pld |\n"
    "                             zcdp\n"
    "  --policy NAME              DP-WOR-SGD's Local/Global policy (random, periodic, ...)\n"
    "  --seed S                   data and, with --reproducible, the runs' keys (default 1)\n"
    "  --reproducible             keys from the seed (default: fresh keys from the OS per run)\n"
    "  --reproducible-path        audit the seeded continuous-noise path (default: the secure\n"
    "                             path users take: exact discrete noise on the grid)\n"
    "  --train-fraction F         share of the runs that chooses the test (default 0.5)\n"
    "the algorithm:\n"
    "  --algorithm NAME           dp-dda, dp-dda-baseline, fed-plt, fedpd, fedlin, tamuna, led,\n"
    "                             5gcs, do-adp, dpdo, cpgt, dp-wor-sgd, dp-sgd-wr\n"
    "  --noise rigorous|paper|fixed|none   (default rigorous)\n"
    "  --epsilon E --delta D      target (default 2, 1e-5)\n"
    "  --sigma S                  with --noise fixed\n"
    "  --rounds T                 max rounds (default 3)\n"
    "  --batch B                  samples per release (default 1)\n"
    "  --alg-seed S               the public seed of every run (activation, edges; default 0)\n"
    "  --param NAME=VALUE         an algorithm parameter by name (dda-active=2, fed-epochs=1, "
    "...)\n"
    "other:\n"
    "  --quiet                    no progress on stderr\n"
    "  --help                     this text\n"
    "\n"
    "exit status: 0 consistent (or no claim), 1 VIOLATION, 2 invalid command line, 3 failure\n"
    "\n"
    "examples:\n"
    "  dpdo-audit --algorithm dp-dda --epsilon 4 --rounds 3 --runs 100000 --reproducible\n"
    "  dpdo-audit --algorithm fed-plt --epsilon 2 --rounds 1 --param fed-epochs=1 --accountant "
    "exact\n"
    "  dpdo-audit --algorithm dp-dda --method one-run --canaries 1000 --epsilon 4\n"
    "  dpdo-audit --algorithm dp-dda --noise paper --epsilon 0.5 --rounds 1 --nodes 200 --runs "
    "20000\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "dpdo-audit: ");
    fprintf(stderr, fmt, arg ? arg : "");
    fprintf(stderr, "\n(see dpdo-audit --help)\n");
    return 2;
}

static int num(const char *opt, const char *s, double *out)
{
    if (!s) return usage_error("option %s needs a value", opt);
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v)) {
        fprintf(stderr, "dpdo-audit: %s: '%s' is not a finite number\n", opt, s);
        return 2;
    }
    *out = v;
    return 0;
}

static int integer(const char *opt, const char *s, int64_t *out)
{
    double v;
    int rc = num(opt, s, &v);
    if (rc) return rc;
    if (v != floor(v) || fabs(v) > 9e15) {
        fprintf(stderr, "dpdo-audit: %s: '%s' is not an integer\n", opt, s);
        return 2;
    }
    *out = (int64_t)v;
    return 0;
}

static int param_key(const char *name)
{
    for (int k = 1; k < 1000; k++) {
        const char *n = dpdo_param_name(k);
        if (n && strcmp(n, name) == 0) return k;
    }
    return 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int progress(int64_t done, int64_t total, void *user)
{
    int64_t *last = user;
    int64_t pct = total > 0 ? 100 * done / total : 100;
    if (pct != *last) {
        fprintf(stderr, "\rdpdo-audit: %lld of %lld runs (%lld%%)", (long long)done,
                (long long)total, (long long)pct);
        if (done == total) fprintf(stderr, "\n");
        *last = pct;
    }
    return 0;
}

static void print_eps(const char *label, double e)
{
    if (isnan(e))
        printf("%s-", label);
    else if (isinf(e))
        printf("%sinf (not private)", label);
    else
        printf("%s%.4f", label, e);
}

int main(int argc, char **argv)
{
    dpdo_algorithm_options ao;
    dpdo_algorithm_options_init(&ao, sizeof ao);
    ao.max_rounds = 3;
    ao.epsilon = 2; /* a halved sigma, a missing noise or an uncharged release shows at 2 */
    dpdo_audit_options o;
    dpdo_audit_options_init(&o, sizeof o);
    const char *alg = NULL;
    const char *params[64];
    int np = 0, quiet = 0, rc = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double x;
        int64_t k;
#define TAKE i++
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(USAGE, stdout);
            return 0;
        } else if (!strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "--reproducible")) {
            o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
        } else if (!strcmp(a, "--reproducible-path")) {
            o.path = DPDO_RANDOMNESS_REPRODUCIBLE;
        } else if (!strcmp(a, "--single-node")) {
            o.single_node = 1;
        } else if (!strcmp(a, "--algorithm")) {
            if (!v) return usage_error("option %s needs a value", a);
            alg = v, TAKE;
        } else if (!strcmp(a, "--method")) {
            if (!v) return usage_error("option %s needs a value", a);
            if (!strcmp(v, "white-box"))
                o.method = DPDO_AUDIT_WHITE_BOX;
            else if (!strcmp(v, "release"))
                o.method = DPDO_AUDIT_RELEASE;
            else if (!strcmp(v, "one-run"))
                o.method = DPDO_AUDIT_ONE_RUN;
            else
                return usage_error("--method: '%s' is not white-box, release or one-run", v);
            TAKE;
        } else if (!strcmp(a, "--view")) {
            if (!v) return usage_error("option %s needs a value", a);
            if (!strcmp(v, "transcript"))
                o.view = DPDO_AUDIT_VIEW_TRANSCRIPT;
            else if (!strcmp(v, "model"))
                o.view = DPDO_AUDIT_VIEW_MODEL;
            else
                return usage_error("--view: '%s' is not transcript or model", v);
            TAKE;
        } else if (!strcmp(a, "--neighbour") || !strcmp(a, "--neighbor")) {
            if (!v) return usage_error("option %s needs a value", a);
            if (!strcmp(v, "replace"))
                o.neighbour = DPDO_AUDIT_REPLACE;
            else if (!strcmp(v, "remove"))
                o.neighbour = DPDO_AUDIT_REMOVE;
            else
                return usage_error("--neighbour: '%s' is not replace or remove", v);
            TAKE;
        } else if (!strcmp(a, "--loss")) {
            if (!v) return usage_error("option %s needs a value", a);
            if (!strcmp(v, "linear"))
                o.loss = DPDO_AUDIT_LOSS_LINEAR;
            else if (!strcmp(v, "logistic"))
                o.loss = DPDO_AUDIT_LOSS_LOGISTIC;
            else
                return usage_error("--loss: '%s' is not linear or logistic", v);
            TAKE;
        } else if (!strcmp(a, "--noise")) {
            if (!v) return usage_error("option %s needs a value", a);
            if (!strcmp(v, "rigorous"))
                ao.noise_mode = DPDO_NOISE_RIGOROUS;
            else if (!strcmp(v, "paper"))
                ao.noise_mode = DPDO_NOISE_PAPER;
            else if (!strcmp(v, "fixed"))
                ao.noise_mode = DPDO_NOISE_FIXED;
            else if (!strcmp(v, "none"))
                ao.noise_mode = DPDO_NOISE_NONE;
            else
                return usage_error("--noise: '%s' is not rigorous, paper, fixed or none", v);
            TAKE;
        } else if (!strcmp(a, "--accountant")) {
            if (!v) return usage_error("option %s needs a value", a);
            o.accountant = v, TAKE;
        } else if (!strcmp(a, "--policy")) {
            if (!v) return usage_error("option %s needs a value", a);
            o.policy = v, TAKE;
        } else if (!strcmp(a, "--param")) {
            if (!v) return usage_error("option %s needs a value", a);
            if (np == 64) return usage_error("too many --param%s", "");
            params[np++] = v, TAKE;
        } else if (!strcmp(a, "--runs")) {
            if ((rc = integer(a, v, &o.runs))) return rc;
            TAKE;
        } else if (!strcmp(a, "--canaries")) {
            if ((rc = integer(a, v, &o.canaries))) return rc;
            TAKE;
        } else if (!strcmp(a, "--guesses")) {
            if ((rc = integer(a, v, &o.guesses))) return rc;
            TAKE;
        } else if (!strcmp(a, "--nodes")) {
            if ((rc = integer(a, v, &o.nodes))) return rc;
            TAKE;
        } else if (!strcmp(a, "--rows")) {
            if ((rc = integer(a, v, &o.rows))) return rc;
            TAKE;
        } else if (!strcmp(a, "--dim")) {
            if ((rc = integer(a, v, &o.dim))) return rc;
            TAKE;
        } else if (!strcmp(a, "--canary-node")) {
            if ((rc = integer(a, v, &o.canary_node))) return rc;
            TAKE;
        } else if (!strcmp(a, "--rounds")) {
            if ((rc = integer(a, v, &ao.max_rounds))) return rc;
            TAKE;
        } else if (!strcmp(a, "--batch")) {
            if ((rc = integer(a, v, &ao.batch))) return rc;
            TAKE;
        } else if (!strcmp(a, "--seed") || !strcmp(a, "--alg-seed")) {
            if ((rc = integer(a, v, &k))) return rc;
            if (k < 0) return usage_error("%s must be >= 0", a);
            if (!strcmp(a, "--seed"))
                o.seed = (uint64_t)k;
            else
                ao.seed = (uint64_t)k;
            TAKE;
        } else if (!strcmp(a, "--canary-norm")) {
            if ((rc = num(a, v, &o.canary_norm))) return rc;
            TAKE;
        } else if (!strcmp(a, "--l2")) {
            if ((rc = num(a, v, &o.l2))) return rc;
            TAKE;
        } else if (!strcmp(a, "--confidence")) {
            if ((rc = num(a, v, &o.confidence))) return rc;
            TAKE;
        } else if (!strcmp(a, "--train-fraction")) {
            if ((rc = num(a, v, &o.train_fraction))) return rc;
            TAKE;
        } else if (!strcmp(a, "--epsilon")) {
            if ((rc = num(a, v, &ao.epsilon))) return rc;
            TAKE;
        } else if (!strcmp(a, "--delta")) {
            if ((rc = num(a, v, &ao.delta))) return rc;
            TAKE;
        } else if (!strcmp(a, "--sigma")) {
            if ((rc = num(a, v, &x))) return rc;
            ao.sigma = x;
            TAKE;
        } else {
            return usage_error("unknown option '%s'", a);
        }
#undef TAKE
    }
    if (!alg) return usage_error("--algorithm is required%s", "");
    const dpdo_algorithm_type *type = dpdo_algorithm_type_find(alg);
    if (!type) return usage_error("unknown algorithm '%s'", alg);
    dpdo_audit *au = NULL;
    if (dpdo_audit_create(&au)) {
        fprintf(stderr, "dpdo-audit: out of memory\n");
        return 3;
    }
    if ((rc = dpdo_audit_setup(au, type, &ao, &o))) {
        fprintf(stderr, "dpdo-audit: %s\n", dpdo_audit_errmsg(au));
        dpdo_audit_destroy(au);
        return 2;
    }
    if (ao.noise_mode == DPDO_NOISE_FIXED && isnan(ao.sigma)) {
        dpdo_audit_destroy(au);
        return usage_error("--noise fixed needs --sigma%s", "");
    }
    if (ao.noise_mode == DPDO_NOISE_FIXED) dpdo_audit_set_param(au, DPDO_PARAM_SIGMA, ao.sigma);
    for (int p = 0; p < np; p++) {
        char name[128];
        const char *eq = strchr(params[p], '=');
        double val;
        if (!eq || eq == params[p] || (size_t)(eq - params[p]) >= sizeof name) {
            dpdo_audit_destroy(au);
            return usage_error("--param '%s': expected NAME=VALUE", params[p]);
        }
        memcpy(name, params[p], (size_t)(eq - params[p]));
        name[eq - params[p]] = 0;
        int key = param_key(name);
        if (!key) {
            dpdo_audit_destroy(au);
            return usage_error("--param: unknown parameter '%s'", name);
        }
        if ((rc = num("--param", eq + 1, &val)) ||
            (rc = dpdo_audit_set_param(au, key, val) ? 2 : 0)) {
            if (rc == 2 && *dpdo_audit_errmsg(au))
                fprintf(stderr, "dpdo-audit: %s\n", dpdo_audit_errmsg(au));
            dpdo_audit_destroy(au);
            return 2;
        }
    }
    int64_t last = -1;
    if (!quiet && isatty(2)) dpdo_audit_set_progress(au, progress, &last);
    dpdo_audit_result r;
    r.struct_size = sizeof r;
    double t0 = now();
    rc = dpdo_audit_run(au, &r);
    double secs = now() - t0;
    if (rc) {
        fprintf(stderr, "dpdo-audit: %s\n", dpdo_audit_errmsg(au));
        dpdo_audit_destroy(au);
        return 3;
    }
    dpdo_audit_destroy(au);
    const char *path = r.path == DPDO_RANDOMNESS_SECURE ? "secure" : "reproducible";
    const char *keys = r.keys == DPDO_RANDOMNESS_SECURE ? "fresh OS keys" : "keys from --seed";
    printf("algorithm        %s (%s noise, %lld rounds, canary at node %lld of %lld%s)\n", alg,
           ao.noise_mode == DPDO_NOISE_RIGOROUS ? "rigorous"
           : ao.noise_mode == DPDO_NOISE_PAPER  ? "paper"
           : ao.noise_mode == DPDO_NOISE_FIXED  ? "fixed"
                                                : "no",
           (long long)r.rounds, (long long)r.canary_node, (long long)o.nodes,
           r.nodes_audited > 1 ? ", the worst of every node" : "");
    printf("path             %s (%s)\n", path, keys);
    if (o.method == DPDO_AUDIT_WHITE_BOX)
        printf("audit            white box, %lld releases of the canary node per run seen; "
               "transcript: %lld features; %lld runs (%lld per dataset and node in the test "
               "split)\n",
               (long long)r.releases, (long long)r.features, (long long)r.runs,
               (long long)r.test_runs);
    else if (o.method == DPDO_AUDIT_RELEASE)
        printf("audit            release, %s view, %s, %lld runs (%lld per dataset in the test "
               "split, %lld "
               "features)\n",
               o.view == DPDO_AUDIT_VIEW_MODEL ? "final-model" : "transcript",
               o.neighbour == DPDO_AUDIT_REMOVE ? "row removed" : "label flipped",
               (long long)r.runs, (long long)r.test_runs, (long long)r.features);
    else
        printf("audit            one run, %lld canaries, %lld guesses, %lld right (+1 pilot run)\n",
               (long long)r.canaries, (long long)r.guesses, (long long)r.correct);
    print_eps("claimed epsilon  ", r.eps_claimed);
    printf(" at delta %g (rigorous, %s)\n", r.delta, o.accountant ? o.accountant : "auto");
    if (!isnan(r.eps_paper)) {
        print_eps("paper epsilon    ", r.eps_paper);
        printf(" at delta %.4g (%s)\n", r.delta_paper,
               r.paper_valid ? "preconditions hold" : "preconditions violated");
    }
    printf("epsilon lower    %.4f at delta %g, %.0f%% confidence", r.eps_lower, r.delta,
           100 * r.confidence);
    if (o.method != DPDO_AUDIT_ONE_RUN) printf(" (TPR %.4f, FPR %.5f)", r.tpr, r.fpr);
    printf("\n");
    if (o.method == DPDO_AUDIT_WHITE_BOX) {
        printf("  white box      ");
        if (isnan(r.eps_lower_white))
            printf("-");
        else if (isnan(r.mu_lower))
            printf("%.4f (composed Laplace releases)", r.eps_lower_white);
        else
            printf("%.4f (composed GDP mu >= %.4f)", r.eps_lower_white, r.mu_lower);
        printf("; threshold test %.4f\n", r.eps_lower_black);
    }
    if (!isnan(r.eps_paper))
        printf("epsilon lower    %.4f at the paper's delta %.4g\n", r.eps_lower_paper,
               r.delta_paper);
    printf("verdict          %s (%s path)\n", dpdo_audit_verdict_name(r.verdict), path);
    if (!isnan(r.eps_paper))
        printf("paper verdict    %s\n", dpdo_audit_verdict_name(r.paper_verdict));
    printf("time             %.2f s (%.2f us per run)\n", secs,
           1e6 * secs / (double)(r.runs > 0 ? r.runs : 1));
    return r.verdict == DPDO_AUDIT_VIOLATION ? 1 : 0;
}
