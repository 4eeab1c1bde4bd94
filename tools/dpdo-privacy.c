/* SPDX-License-Identifier: BSD-3-Clause */
/* dpdo-privacy: privacy accounting from the command line (docs/privacy.md).
 *   dpdo-privacy --sampling poisson --q 0.01 --sigma 1.1 --steps 10000 --delta 1e-5 --method rdp
 * Exit status: 0 success, 1 the computation failed (e.g. unreachable target),
 * 2 invalid command line. */
#include "dpdo/accountant.h"
#include "dpdo/dpdo.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *USAGE =
    "usage: dpdo-privacy [options]\n"
    "\n"
    "Privacy of T releases of a Gaussian mechanism (noise multiplier sigma = std/sensitivity)\n"
    "under a sampling scheme, or a paper's own bound.\n"
    "\n"
    "  --sampling poisson|wor|none  sampling scheme (default: poisson if --q is given, else none)\n"
    "  --q Q              Poisson rate, or the WOR ratio m/n (with --n)\n"
    "  --n N --m M        without replacement: m of n items (replace-one neighbours)\n"
    "  --sigma S          noise standard deviation divided by the sensitivity\n"
    "  --steps T          number of releases (composition count)\n"
    "  --delta D          target delta in (0,1) (default 1e-5)\n"
    "  --epsilon E        target epsilon: with --calibrate; alone it prints delta(E)\n"
    "  --method M         auto (default: the smallest of rdp, exact, pld) | rdp | pld |\n"
    "                     exact | zcdp | pure | all (side by side) |\n"
    "                     paper-dp-dda | paper-do-adp | paper-dp-wor-sgd | paper-fed-plt\n"
    "  --conversion C     improved (default) | classic   (RDP and zCDP to (eps, delta))\n"
    "  --orders LIST      comma-separated RDP orders (default: the 156-order grid)\n"
    "  --pld-interval H   discretisation interval of the privacy loss (pld, auto;\n"
    "                     default 1e-3; smaller: tighter, slower)\n"
    "  --calibrate sigma|steps   smallest sigma / largest steps meeting --epsilon at --delta\n"
    "  --param NAME=VALUE parameter of a paper bound (repeatable); --param help lists them\n"
    "  --n N --batch-size B --epochs E   DP-SGD as TF Privacy's compute_dp_sgd_privacy: Poisson\n"
    "                     rate q = B/N, steps = ceil(E N / B) (instead of --q and --steps)\n"
    "  --N, --batch_size, --noise_multiplier (TF Privacy's flags): aliases of --n,\n"
    "                     --batch-size, --sigma; every option also as --name=value\n"
    "  --json             print the result as one JSON object (with the winning\n"
    "                     accountant, the RDP order and the PLD bracket)\n"
    "  --help             this text\n"
    "\n"
    "examples:\n"
    "  dpdo-privacy --n 60000 --batch-size 256 --epochs 60 --sigma 1.1 --delta 1e-5 --json\n"
    "  dpdo-privacy --N 60000 --batch_size 256 --noise_multiplier 1.12 --epochs 60 \\\n"
    "      --delta 1e-5 --method rdp --conversion classic    (TF Privacy's figure)\n"
    "  dpdo-privacy --sampling poisson --q 0.01 --sigma 1.1 --steps 10000 --delta 1e-5\n"
    "  dpdo-privacy --sampling poisson --q 0.01 --steps 10000 --calibrate sigma --epsilon 2\n"
    "  dpdo-privacy --sampling none --sigma 5 --steps 100 --method all\n"
    "  dpdo-privacy --sampling wor --n 60000 --m 600 --sigma 2 --steps 1000 --method pld\n"
    "  dpdo-privacy --method paper-dp-dda --param eps=0.1 --param delta0=1e-4 --param b=2 \\\n"
    "      --param n=20 --param q=1000 --param T=1250000\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "dpdo-privacy: ");
    fprintf(stderr, fmt, arg ? arg : "");
    fprintf(stderr, "\n(see dpdo-privacy --help)\n");
    return 2;
}

/* the options, for the nearest-name hint on a typo */
static const char *const OPTIONS[] = {
    "--sampling",  "--q",       "--n",          "--m",          "--sigma",  "--steps",
    "--delta",     "--epsilon", "--method",     "--conversion", "--orders", "--pld-interval",
    "--calibrate", "--param",   "--batch-size", "--epochs",     "--json",   "--help",
    NULL};

/* TF Privacy's compute_dp_sgd_privacy spellings (absl flags) and the options they stand for */
static const char *const ALIASES[][2] = {{"--N", "--n"},
                                         {"--batch_size", "--batch-size"},
                                         {"--noise_multiplier", "--sigma"},
                                         {"--noise-multiplier", "--sigma"},
                                         {"--pld_interval", "--pld-interval"},
                                         {NULL, NULL}};

static const char *canonical(const char *o)
{
    for (int i = 0; ALIASES[i][0]; i++)
        if (strcmp(o, ALIASES[i][0]) == 0) return ALIASES[i][1];
    return o;
}

/* Levenshtein distance of a and b (both at most 63 characters; longer strings count as far) */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return 1000;
    int row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* "unknown option", with the nearest option or alias when it is close (at most 2 edits, or a
 * third of the name for long ones) */
static int unknown_option(const char *o)
{
    const char *best = NULL;
    int bd = 1000;
    for (int i = 0; OPTIONS[i]; i++) {
        int d = edit_distance(o, OPTIONS[i]);
        if (d < bd) bd = d, best = OPTIONS[i];
    }
    for (int i = 0; ALIASES[i][0]; i++) {
        int d = edit_distance(o, ALIASES[i][0]);
        if (d < bd) bd = d, best = ALIASES[i][0];
    }
    int limit = (int)strlen(o) / 3 > 2 ? (int)strlen(o) / 3 : 2;
    fprintf(stderr, "dpdo-privacy: unknown option '%s'", o);
    if (best && bd <= limit) fprintf(stderr, "; did you mean %s?", best);
    fprintf(stderr, "\n(see dpdo-privacy --help)\n");
    return 2;
}

static int parse_num(const char *opt, const char *s, double *out)
{
    if (!s) return usage_error("option %s needs a value", opt);
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v)) {
        fprintf(stderr, "dpdo-privacy: %s: '%s' is not a finite number\n", opt, s);
        return 2;
    }
    *out = v;
    return 0;
}

typedef struct {
    const char *sampling, *method, *conversion, *calibrate, *orders_s;
    double q, n, m, sigma, steps, delta, eps, pld_h;
    const char *params[64];
    int n_params;
    double batch, epochs; /* --batch-size, --epochs (with --n): TF Privacy's DP-SGD form */
    int json;             /* --json */
} args;

/* --n N --batch-size B --epochs E: q = B/N (Poisson), steps = ceil(E N / B), as TF Privacy's
 * compute_dp_sgd_privacy. Returns 0 or the usage exit code. */
static int dp_sgd_form(args *a)
{
    if (isnan(a->batch) && isnan(a->epochs)) return 0;
    if (isnan(a->batch) || isnan(a->epochs) || isnan(a->n))
        return usage_error("--batch-size and --epochs go together, with --n (the dataset size)%s",
                           "");
    if (!isnan(a->q) || !isnan(a->m) || !isnan(a->steps) ||
        (a->sampling && strcmp(a->sampling, "poisson")))
        return usage_error("--batch-size/--epochs replace --q, --m, --steps and --sampling%s", "");
    if (!(a->n >= 1) || a->n != floor(a->n) || !(a->batch >= 1) || a->batch != floor(a->batch) ||
        a->batch > a->n)
        return usage_error("need integers 1 <= --batch-size <= --n%s", "");
    if (!(a->epochs > 0) || !(ceil(a->epochs * a->n / a->batch) <= 1e15))
        return usage_error("--epochs must be > 0 (and at most 1e15 steps)%s", "");
    a->q = a->batch / a->n;
    a->steps = ceil(a->epochs * a->n / a->batch);
    a->sampling = a->q < 1 ? "poisson" : "none";
    a->n = NAN;
    return 0;
}

static int parse_orders(const char *s, double **out, int64_t *n)
{
    int64_t cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    double *o = malloc((size_t)cap * sizeof *o);
    if (!o) return 1;
    int64_t k = 0;
    const char *p = s;
    while (*p) {
        char *end;
        double v;
        if (strncmp(p, "inf", 3) == 0) {
            v = INFINITY;
            end = (char *)p + 3;
        } else {
            v = strtod(p, &end);
        }
        if (end == p || (*end != ',' && *end != '\0') || !(v > 1)) {
            free(o);
            fprintf(stderr, "dpdo-privacy: --orders: bad order list '%s' (orders must be > 1)\n",
                    s);
            return 2;
        }
        o[k++] = v;
        p = *end ? end + 1 : end;
    }
    *out = o;
    *n = k;
    return 0;
}

static const char *samp_label(int kind)
{
    return kind == DPDO_SAMPLING_POISSON ? "Poisson-subsampled Gaussian"
           : kind == DPDO_SAMPLING_WOR   ? "without-replacement subsampled Gaussian (replace-one)"
                                         : "Gaussian (no sampling)";
}

static void print_method(const char *m, int conv, double h, int kind)
{
    if (strcmp(m, "pld") == 0)
        printf("method        pld (%s, interval %g)\n", samp_label(kind), h);
    else if (strcmp(m, "auto") == 0)
        printf("method        auto (%s; smallest of rdp, exact, pld)\n", samp_label(kind));
    else if (strcmp(m, "exact") == 0)
        printf("method        exact (%s)\n", samp_label(kind));
    else
        printf("method        %s (%s, %s conversion)\n", m, samp_label(kind),
               conv ? "classic" : "improved");
}

static int run_paper(const args *a)
{
    const char *name = a->method + 6; /* after "paper-" */
    char full[64];
    snprintf(full, sizeof full, "%s-%s", name,
             strcmp(name, "dp-wor-sgd") == 0 ? "thm2"
             : strcmp(name, "fed-plt") == 0  ? "prop4"
                                             : "thm1");
    const dpdo_paper_type *t = dpdo_paper_type_find(full);
    if (!t) return usage_error("unknown paper method '%s'", a->method);
    dpdo_paper *p = NULL;
    if (dpdo_paper_create(&p, t) != DPDO_OK) return 1;
    for (int i = 0; i < a->n_params; i++) {
        if (strcmp(a->params[i], "help") == 0) {
            printf("%s: %s\nparameters:", full, dpdo_paper_type_title(t));
            for (int j = 0; dpdo_paper_type_param(t, j); j++)
                printf(" %s", dpdo_paper_type_param(t, j));
            printf("\noutputs:");
            for (int j = 0; dpdo_paper_type_output(t, j); j++)
                printf(" %s", dpdo_paper_type_output(t, j));
            printf("\n");
            dpdo_paper_destroy(p);
            return 0;
        }
        const char *eq = strchr(a->params[i], '=');
        char key[64];
        if (!eq || eq == a->params[i] || (size_t)(eq - a->params[i]) >= sizeof key) {
            dpdo_paper_destroy(p);
            return usage_error("--param '%s' is not NAME=VALUE", a->params[i]);
        }
        memcpy(key, a->params[i], (size_t)(eq - a->params[i]));
        key[eq - a->params[i]] = '\0';
        double v;
        if (parse_num("--param", eq + 1, &v)) {
            dpdo_paper_destroy(p);
            return 2;
        }
        if (dpdo_paper_set(p, key, v) != DPDO_OK) {
            fprintf(stderr, "dpdo-privacy: %s\n", dpdo_paper_errmsg(p));
            dpdo_paper_destroy(p);
            return 2;
        }
    }
    int rc = dpdo_paper_evaluate(p);
    if (rc != DPDO_OK) {
        fprintf(stderr, "dpdo-privacy: %s\n", dpdo_paper_errmsg(p));
        dpdo_paper_destroy(p);
        return 2;
    }
    printf("method        %s (paper bound: %s)\n", a->method, dpdo_paper_type_title(t));
    for (int j = 0; dpdo_paper_type_output(t, j); j++) {
        double v;
        dpdo_paper_get(p, dpdo_paper_type_output(t, j), &v);
        if (!isnan(v)) printf("%-22s %.10g\n", dpdo_paper_type_output(t, j), v);
    }
    double claim;
    if (dpdo_paper_get(p, "claim_holds", &claim) == DPDO_OK && claim == 0)
        printf("NOTE: the theorem's own accountant gives eps_tilde above the claimed eps "
               "(claim_holds = 0)\n");
    if (dpdo_paper_valid(p) != 1)
        printf("PRECONDITIONS VIOLATED: %s\n", dpdo_paper_violations(p));
    else
        printf("preconditions  all hold\n");
    dpdo_paper_destroy(p);
    return 0;
}

int main(int argc, char **argv)
{
    args a;
    memset(&a, 0, sizeof a);
    a.q = a.n = a.m = a.sigma = a.steps = a.eps = NAN;
    a.batch = a.epochs = NAN;
    a.delta = 1e-5;
    a.pld_h = DPDO_PLD_DEFAULT_INTERVAL;
    a.method = "auto";
    a.conversion = "improved";
    char optbuf[64];
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int rc = 0, inline_value = 0;
        /* --name=value (absl's form, as TF Privacy's scripts are called) */
        const char *eq = strncmp(o, "--", 2) == 0 ? strchr(o, '=') : NULL;
        if (eq) {
            if ((size_t)(eq - o) >= sizeof optbuf) return unknown_option(o);
            memcpy(optbuf, o, (size_t)(eq - o));
            optbuf[eq - o] = '\0';
            o = optbuf;
            v = eq + 1;
            inline_value = 1;
        }
        o = canonical(o);
        if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
            fputs(USAGE, stdout);
            return 0;
        }
#define STR(name, field)                                                                           \
    if (strcmp(o, name) == 0) {                                                                    \
        if (!v) return usage_error("option %s needs a value", o);                                  \
        a.field = v;                                                                               \
        i += !inline_value;                                                                        \
        continue;                                                                                  \
    }
#define NUM(name, field)                                                                           \
    if (strcmp(o, name) == 0) {                                                                    \
        if ((rc = parse_num(o, v, &a.field))) return rc;                                           \
        i += !inline_value;                                                                        \
        continue;                                                                                  \
    }
        STR("--sampling", sampling)
        STR("--method", method)
        STR("--conversion", conversion)
        STR("--calibrate", calibrate)
        STR("--orders", orders_s)
        NUM("--batch-size", batch)
        NUM("--epochs", epochs)
        if (strcmp(o, "--json") == 0 && !inline_value) {
            a.json = 1;
            continue;
        }
        NUM("--q", q)
        NUM("--n", n)
        NUM("--m", m)
        NUM("--sigma", sigma)
        NUM("--steps", steps)
        NUM("--delta", delta)
        NUM("--epsilon", eps)
        NUM("--pld-interval", pld_h)
        if (strcmp(o, "--param") == 0) {
            if (!v) return usage_error("option %s needs a value", o);
            if (a.n_params >= 64) return usage_error("too many --param options%s", "");
            a.params[a.n_params++] = v;
            i += !inline_value;
            continue;
        }
        return unknown_option(o);
    }
    if (strncmp(a.method, "paper-", 6) == 0) return run_paper(&a);
    if (a.n_params) return usage_error("--param applies only to paper-* methods%s", "");
    double q_shown = a.q;
    {
        int rc0 = dp_sgd_form(&a);
        if (rc0) return rc0;
        if (a.json && strcmp(a.method, "all") == 0)
            return usage_error("--json needs a single --method%s", "");
        q_shown = a.q;
    }

    int conv;
    if (strcmp(a.conversion, "improved") == 0)
        conv = DPDO_CONVERSION_IMPROVED;
    else if (strcmp(a.conversion, "classic") == 0)
        conv = DPDO_CONVERSION_CLASSIC;
    else
        return usage_error("--conversion must be improved or classic, not '%s'", a.conversion);
    const char *methods[] = {"rdp", "exact", "zcdp", "pure", "pld", "auto", "all"};
    int mok = 0;
    for (int i = 0; i < 7; i++)
        mok |= strcmp(a.method, methods[i]) == 0;
    if (!mok) return usage_error("unknown --method '%s'", a.method);
    if (!(a.pld_h >= 1e-6 && a.pld_h <= 1))
        return usage_error("--pld-interval must be in [1e-6, 1]%s", "");
    if (!(a.delta > 0 && a.delta < 1)) return usage_error("--delta must be in (0, 1)%s", "");
    if (!a.sampling) a.sampling = isnan(a.q) && isnan(a.m) ? "none" : "poisson";

    dpdo_sampling *s = NULL;
    if (dpdo_sampling_create(&s) != DPDO_OK) return 1;
    int rc = DPDO_OK;
    if (strcmp(a.sampling, "poisson") == 0) {
        if (isnan(a.q)) {
            dpdo_sampling_destroy(s);
            return usage_error("--sampling poisson needs --q%s", "");
        }
        rc = dpdo_sampling_set_poisson(s, a.q);
    } else if (strcmp(a.sampling, "wor") == 0) {
        if (isnan(a.n) || (isnan(a.m) && isnan(a.q))) {
            dpdo_sampling_destroy(s);
            return usage_error("--sampling wor needs --n and --m (or --n and --q)%s", "");
        }
        double m = isnan(a.m) ? a.q * a.n : a.m;
        if (m != floor(m) || a.n != floor(a.n) || fabs(m) > 9e18 || fabs(a.n) > 9e18) {
            dpdo_sampling_destroy(s);
            return usage_error("--sampling wor: n and m = q n must be integers%s", "");
        }
        rc = dpdo_sampling_set_wor(s, (int64_t)a.n, (int64_t)m);
    } else if (strcmp(a.sampling, "none") == 0) {
        rc = dpdo_sampling_set_none(s);
    } else {
        dpdo_sampling_destroy(s);
        return usage_error("--sampling must be poisson, wor or none, not '%s'", a.sampling);
    }
    if (rc != DPDO_OK) {
        fprintf(stderr, "dpdo-privacy: %s\n", dpdo_sampling_errmsg(s));
        dpdo_sampling_destroy(s);
        return 2;
    }
    int exit_code = 0;
    double *orders = NULL;
    int64_t n_orders = 0;
    dpdo_ledger *l = NULL;
    dpdo_event *ev = NULL;
    if (a.orders_s && (exit_code = parse_orders(a.orders_s, &orders, &n_orders))) goto done;
    if (a.calibrate) {
        if (strcmp(a.calibrate, "sigma") && strcmp(a.calibrate, "steps")) {
            exit_code = usage_error("--calibrate must be sigma or steps, not '%s'", a.calibrate);
            goto done;
        }
        if (isnan(a.eps)) {
            exit_code = usage_error("--calibrate needs --epsilon%s", "");
            goto done;
        }
        if (strcmp(a.method, "all") == 0 || strcmp(a.method, "pure") == 0) {
            exit_code =
                usage_error("--calibrate needs --method auto, rdp, pld, exact or zcdp%s", "");
            goto done;
        }
    }
    int cal_sigma = a.calibrate && strcmp(a.calibrate, "sigma") == 0;
    int cal_steps = a.calibrate && strcmp(a.calibrate, "steps") == 0;
    if (!cal_sigma && isnan(a.sigma)) {
        exit_code = usage_error("--sigma is required%s", "");
        goto done;
    }
    if (!cal_steps && isnan(a.steps)) {
        exit_code = usage_error("--steps is required%s", "");
        goto done;
    }
    if (!cal_sigma && !(a.sigma > 0)) {
        exit_code = usage_error("--sigma must be > 0%s", "");
        goto done;
    }
    if (!cal_steps && (!(a.steps >= 1) || a.steps != floor(a.steps) || a.steps > 1e15)) {
        exit_code = usage_error("--steps must be an integer in [1, 1e15]%s", "");
        goto done;
    }
    if (!isnan(a.eps) && !(a.eps > 0)) {
        exit_code = usage_error("--epsilon must be > 0%s", "");
        goto done;
    }
#ifdef DPDO_PRIVACY_FUZZ_WORK_CAP
    /* Fuzzing only (tests/fuzz/fuzz_privacy_cli.c defines this): every argument above was parsed
     * and checked as given; the computation below runs at a bounded size (at most
     * DPDO_PRIVACY_FUZZ_WORK_CAP releases, a privacy-loss interval of at least 0.05, at most 16
     * RDP orders, calibrations by the rdp accountant), so that one input costs milliseconds under
     * the sanitizers instead of seconds (docs/testing.md, "Fuzzing"). */
    if (!cal_steps && a.steps > DPDO_PRIVACY_FUZZ_WORK_CAP) a.steps = DPDO_PRIVACY_FUZZ_WORK_CAP;
    if (a.pld_h < 0.05) a.pld_h = 0.05;
    if (n_orders > 16) n_orders = 16;
    if (a.calibrate) a.method = "rdp"; /* a bisection over PLDs is seconds under the sanitizers */
#endif
    if (dpdo_ledger_create(&l, 1) != DPDO_OK || dpdo_event_create(&ev) != DPDO_OK) {
        exit_code = 1;
        goto done;
    }
    dpdo_accountant_options opt;
    dpdo_accountant_options_init(&opt, sizeof opt);
    opt.conversion = conv;
    opt.pld_interval = a.pld_h;
    if (orders) {
        opt.orders = orders;
        opt.n_orders = n_orders;
    }
    if (a.calibrate) {
        dpdo_accountant *acc = NULL;
        if (dpdo_accountant_create(&acc, dpdo_accountant_type_find(a.method), NULL, l, &opt) !=
            DPDO_OK) {
            fprintf(stderr, "dpdo-privacy: cannot create the accountant\n");
            exit_code = 1;
            goto done;
        }
        double x;
        rc = cal_sigma ? dpdo_accountant_calibrate_sigma(acc, s, 1.0, a.steps, a.eps, a.delta, &x)
                       : dpdo_accountant_calibrate_steps(acc, s, 1.0, a.sigma, a.eps, a.delta, &x);
        if (rc != DPDO_OK) {
            fprintf(stderr, "dpdo-privacy: %s\n", dpdo_accountant_errmsg(acc));
            exit_code = rc == DPDO_E_INVAL ? 2 : 1;
        } else if (a.json) {
            printf("{\"method\": \"%s\", \"%s\": %.17g, \"epsilon\": %.17g, \"delta\": %.17g, "
                   "\"q\": %.17g}\n",
                   a.method, cal_sigma ? "sigma" : "steps", x, a.eps, a.delta,
                   isnan(q_shown) ? 1.0 : q_shown);
        } else {
            print_method(a.method, conv, a.pld_h, dpdo_sampling_kind(s));
            if (cal_sigma)
                printf("sigma         %.10g   (smallest noise multiplier with epsilon <= %g at "
                       "delta = %g over %.0f steps)\n",
                       x, a.eps, a.delta, a.steps);
            else
                printf("steps         %.0f   (largest number of steps with epsilon <= %g at delta "
                       "= %g, sigma = %g)\n",
                       x, a.eps, a.delta, a.sigma);
        }
        dpdo_accountant_destroy(acc);
        goto done;
    }
    if (dpdo_event_set_gaussian(ev, s, 1.0, a.sigma) != DPDO_OK ||
        dpdo_ledger_charge(l, ev, (int64_t)a.steps, NULL, -1) != DPDO_OK) {
        fprintf(stderr, "dpdo-privacy: %s%s\n", dpdo_event_errmsg(ev), dpdo_ledger_errmsg(l));
        exit_code = 2;
        goto done;
    }
    int all = strcmp(a.method, "all") == 0;
    if (all)
        printf("%-24s %-16s %-8s %s\n", "accountant", isnan(a.eps) ? "epsilon" : "delta", "order",
               "note");
    const char *list[] = {"rdp", "rdp", "exact", "zcdp", "zcdp", "pure", "pld", "auto"};
    const int convs[] = {DPDO_CONVERSION_IMPROVED,
                         DPDO_CONVERSION_CLASSIC,
                         0,
                         DPDO_CONVERSION_IMPROVED,
                         DPDO_CONVERSION_CLASSIC,
                         0,
                         0,
                         DPDO_CONVERSION_IMPROVED};
    for (int i = 0; i < 8; i++) {
        if (!all && strcmp(list[i], a.method) != 0) continue;
        if (!all && strcmp(list[i], "pure") != 0 && (list[i][0] == 'r' || list[i][0] == 'z') &&
            convs[i] != conv)
            continue;
        dpdo_accountant_options o2 = opt;
        o2.conversion = convs[i];
        dpdo_accountant *acc = NULL;
        if (dpdo_accountant_create(&acc, dpdo_accountant_type_find(list[i]), NULL, l, &o2) !=
            DPDO_OK) {
            fprintf(stderr, "dpdo-privacy: cannot create accountant %s (bad --orders?)\n", list[i]);
            exit_code = 1;
            break;
        }
        double v, ord = NAN, lo = 0.0;
        if (isnan(a.eps)) {
            rc = dpdo_accountant_epsilon(acc, -1, a.delta, &v, &ord);
            double hi;
            if (rc == DPDO_OK &&
                dpdo_accountant_epsilon_bounds(acc, -1, a.delta, &lo, &hi) != DPDO_OK)
                lo = 0.0;
        } else {
            rc = dpdo_accountant_delta(acc, -1, a.eps, &v);
        }
        int is_pld = strcmp(list[i], "pld") == 0, is_auto = strcmp(list[i], "auto") == 0;
        const char *src = dpdo_accountant_source(acc);
        char label[64];
        snprintf(label, sizeof label, "%s%s", list[i],
                 (list[i][0] == 'r' || list[i][0] == 'z')
                     ? (convs[i] ? " (classic)" : " (improved)")
                     : "");
        if (all) {
            if (rc == DPDO_OK) {
                char os[32] = "-";
                if (!isnan(ord)) snprintf(os, sizeof os, "%g", ord);
                char note[160];
                if (strcmp(list[i], "exact") == 0)
                    snprintf(note, sizeof note, "exact (tight) for unsampled Gaussian");
                else if (is_pld && isnan(a.eps))
                    snprintf(note, sizeof note, "upper bound; lower bound %.6g (interval %g)", lo,
                             a.pld_h);
                else if (is_auto)
                    snprintf(note, sizeof note, "smallest valid figure: %s", src);
                else
                    snprintf(note, sizeof note, "upper bound");
                printf("%-24s %-16.10g %-8s %s\n", label, v, os, note);
            } else {
                printf("%-24s %-16s %-8s n/a: %s\n", label, "-", "-", dpdo_accountant_errmsg(acc));
            }
        } else if (rc != DPDO_OK) {
            fprintf(stderr, "dpdo-privacy: %s\n", dpdo_accountant_errmsg(acc));
            exit_code = 1;
        } else if (a.json) {
            /* accountant: the one whose figure this is (auto: the winner); order: its RDP
             * order (null when not an RDP figure); epsilon_lower: the lower end of the PLD
             * bracket [epsilon_lower, epsilon], equal for an exact figure (null for RDP, zCDP,
             * pure) */
            char os[40] = "null", ls[40] = "null";
            if (!isnan(ord) && isfinite(ord)) snprintf(os, sizeof os, "%.17g", ord);
            int bracket = isnan(a.eps) && (strcmp(src, "pld") == 0 || strcmp(src, "exact") == 0);
            if (bracket) snprintf(ls, sizeof ls, "%.17g", lo);
            printf("{\"method\": \"%s\", \"accountant\": \"%s\", \"conversion\": \"%s\", "
                   "\"%s\": %.17g, \"%s\": %.17g, \"order\": %s, \"epsilon_lower\": %s, "
                   "\"sigma\": %.17g, \"steps\": %.0f, \"q\": %.17g}\n",
                   list[i], src, convs[i] ? "classic" : "improved",
                   isnan(a.eps) ? "epsilon" : "delta", v, isnan(a.eps) ? "delta" : "epsilon",
                   isnan(a.eps) ? a.delta : a.eps, os, ls, a.sigma, a.steps,
                   isnan(q_shown) ? 1.0 : q_shown);
        } else {
            print_method(list[i], convs[i], a.pld_h, dpdo_sampling_kind(s));
            if (isnan(a.eps)) {
                printf("epsilon       %.10g\n", v);
                if (is_pld || (is_auto && strcmp(src, "rdp") != 0))
                    printf("epsilon lower %.10g   (the exact epsilon lies in [lower, epsilon])\n",
                           lo);
                if (is_auto) printf("accountant    %s\n", src);
                printf("delta         %g\n", a.delta);
                if (!isnan(ord)) printf("optimal order %g\n", ord);
            } else {
                printf("delta         %.10g\n", v);
                printf("epsilon       %g\n", a.eps);
                if (is_auto) printf("accountant    %s\n", src);
            }
        }
        dpdo_accountant_destroy(acc);
    }
    if (all && isnan(a.eps))
        printf("(paper bounds need the theorem's parameters: --method paper-... --param help)\n");
done:
    free(orders);
    dpdo_event_destroy(ev);
    dpdo_ledger_destroy(l);
    dpdo_sampling_destroy(s);
    return exit_code;
}
