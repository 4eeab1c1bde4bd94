/* SPDX-License-Identifier: BSD-3-Clause */
/* The dpdo-privacy command-line tool, run as a separate process from
 * $BUILD/bin/dpdo-privacy (BUILD defaults to "build"; if that file does not
 * exist, build/bin/dpdo-privacy): reference values,
 * calibration, the side-by-side table, paper bounds, and clear errors with a
 * non-zero exit status on invalid input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "harness.h"

static char BIN[512];

/* the harness prints the haystack into a 512-byte buffer; hand it a pointer
 * whose size the compiler cannot see (avoids -Wformat-truncation noise) */
static const char *volatile hay_;
static const char *H(const char *p)
{
    hay_ = p;
    return hay_;
}

/* run the tool with args; capture stdout+stderr into out; return exit status
 * (or -1 if it did not exit normally) */
static int run(const char *args, char *out, size_t cap)
{
    return h_run_cmd(BIN, args, out, cap);
}

static double field(const char *out, const char *key)
{
    const char *p = strstr(out, key);
    if (!p) return NAN;
    return strtod(p + strlen(key), NULL);
}

static void cli_exists(void)
{
    FILE *f = fopen(BIN, "r");
    CHECK_MSG(f != NULL, "%.300s not found (build the tool first)", BIN);
    if (f) fclose(f);
}

static void cli_rdp_reference(void)
{
    char out[8192];
    int rc = run("--sampling poisson --q 0.0025 --sigma 1.3 --steps 6000 --delta 1e-5 --method rdp "
                 "--orders 1.25,1.5,1.75,2,2.25,2.5,3,3.5,4,4.5,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,"
                 "21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,"
                 "51,52,53,54,55,56,57,58,59,60,61,62,63,128,256,512",
                 out, sizeof out);
    CHECK_EQ(rc, 0);
    CHECK_REL(field(out, "epsilon"), 0.7242234026, 1e-9);
    CHECK_EQ(field(out, "optimal order"), 19);
    CHECK_STR_CONTAINS(H(out), "method        rdp");
    CHECK_STR_CONTAINS(H(out), "improved conversion");
    rc = run("--sampling wor --n 60000 --m 600 --sigma 1 --steps 1000 --orders 2,3,4,5,6,7,8,9,10 --method rdp", out,
             sizeof out);
    CHECK_EQ(rc, 0);
    CHECK_REL(field(out, "epsilon"), 3.576111482, 1e-6);
    CHECK_EQ(field(out, "optimal order"), 6);
}

/* --method pld and auto (the default): the same figures as the library, the
 * interval printed, the source named; --method all lists both */
static void cli_pld_auto(void)
{
    char out[8192];
    /* dp_accounting's pessimistic PLD for this case at interval 1e-4: 6.1877449761, an estimate
     * (its FFT rounding is not bounded); the library's upper end is a proven bound
     * (docs/privacy.md), so at or above it, and within 10 bins of the interval (as test_pld's
     * poisson_reference_values) */
    int rc = run("--sampling poisson --q 0.01 --sigma 1 --steps 10000 --delta 1e-5 --method pld --pld-interval 1e-4",
                 out, sizeof out);
    CHECK_EQ(rc, 0);
    double eu = field(out, "epsilon");
    CHECK_MSG(eu >= 6.1877449761 && eu <= 6.1877449761 + 10 * 1e-4, "pld upper end %.10g", eu);
    double lo = field(out, "epsilon lower");
    CHECK(lo < 6.1877449761 && lo > 6.0);
    CHECK_STR_CONTAINS(H(out), "method        pld");
    rc = run("--sampling poisson --q 0.01 --sigma 1 --steps 10000 --delta 1e-5", out, sizeof out);
    CHECK_EQ(rc, 0);
    CHECK_STR_CONTAINS(H(out), "method        auto");
    CHECK_STR_CONTAINS(H(out), "accountant    pld");
    double ea = field(out, "epsilon");
    CHECK(ea < 6.2 && ea > 6.18);
    rc = run("--sampling none --sigma 5 --steps 100", out, sizeof out);
    CHECK_EQ(rc, 0);
    CHECK_STR_CONTAINS(H(out), "accountant    exact");
    CHECK_REL(field(out, "epsilon"), 9.997256146, 1e-8);
    CHECK_EQ(run("--sampling wor --n 60000 --m 600 --sigma 1 --steps 1000 --method all", out, sizeof out), 0);
    double er = field(out, "rdp (improved) "), ep = field(out, "pld "), ea2 = field(out, "auto ");
    CHECK(ep < er && ea2 == ep);
    CHECK_STR_CONTAINS(H(out), "smallest valid figure: pld");
    /* calibration through auto is at most rdp's */
    rc = run("--sampling wor --n 60000 --m 600 --steps 1000 --calibrate sigma --epsilon 1 --method auto", out, sizeof out);
    CHECK_EQ(rc, 0);
    double sa = field(out, "sigma");
    rc = run("--sampling wor --n 60000 --m 600 --steps 1000 --calibrate sigma --epsilon 1 --method rdp", out, sizeof out);
    CHECK_EQ(rc, 0);
    CHECK_REL(field(out, "sigma"), 2.7076, 1e-3); /* dp_accounting's RDP figure */
    CHECK(sa < field(out, "sigma"));
    CHECK_EQ(run("--sampling none --sigma 5 --steps 100 --pld-interval 0", out, sizeof out), 2);
}

static void cli_calibrate(void)
{
    char out[8192];
    int rc = run("--sampling poisson --q 0.01 --steps 1000 --delta 1e-5 --calibrate sigma --epsilon 2", out, sizeof out);
    CHECK_EQ(rc, 0);
    double s = field(out, "sigma");
    CHECK(s > 0.5 && s < 5);
    /* feeding sigma back gives epsilon <= 2 (printed to 10 digits) */
    char args[256], out2[8192];
    snprintf(args, sizeof args, "--sampling poisson --q 0.01 --steps 1000 --delta 1e-5 --sigma %.10g", s * (1 + 1e-9));
    CHECK_EQ(run(args, out2, sizeof out2), 0);
    CHECK(field(out2, "epsilon") <= 2.0);
    CHECK_REL(field(out2, "epsilon"), 2.0, 1e-8);
    rc = run("--sampling poisson --q 0.01 --sigma 1.1 --calibrate steps --epsilon 1 --delta 1e-5", out, sizeof out);
    CHECK_EQ(rc, 0);
    CHECK(field(out, "steps") > 10);
    /* unreachable target: non-zero exit and a message */
    rc = run("--sampling none --steps 10 --calibrate sigma --epsilon 0.01 --delta 1e-30 --method rdp --orders 2,3 "
             "--conversion classic", out, sizeof out);
    CHECK_EQ(rc, 1);
    CHECK_STR_CONTAINS(H(out), "unreachable");
}

static void cli_all(void)
{
    char out[8192];
    CHECK_EQ(run("--sampling none --sigma 5 --steps 100 --delta 1e-5 --method all", out, sizeof out), 0);
    CHECK_STR_CONTAINS(H(out), "rdp (improved)");
    CHECK_STR_CONTAINS(H(out), "rdp (classic)");
    CHECK_STR_CONTAINS(H(out), "exact");
    CHECK_STR_CONTAINS(H(out), "zcdp (improved)");
    CHECK_STR_CONTAINS(H(out), "pure");
    CHECK_STR_CONTAINS(H(out), "n/a");
    double ex = field(out, "exact "), rd = field(out, "rdp (improved) ");
    CHECK(ex > 0 && rd > ex);
    CHECK_EQ(run("--sampling poisson --q 0.01 --sigma 1 --steps 100 --method all", out, sizeof out), 0);
    CHECK_STR_CONTAINS(H(out), "only unsampled events are supported");
    /* delta(eps) */
    CHECK_EQ(run("--sampling none --sigma 5 --steps 100 --epsilon 1 --method exact", out, sizeof out), 0);
    CHECK(field(out, "delta ") > 0 && field(out, "delta ") < 1);
}

static void cli_paper(void)
{
    char out[8192];
    CHECK_EQ(run("--method paper-dp-dda --param eps=0.1 --param delta0=1e-4 --param b=2 --param n=20 --param q=1000 "
                 "--param T=1250000",
                 out, sizeof out),
             0);
    CHECK_REL(field(out, "sigma_thm"), 19.90325356, 1e-9);
    CHECK_STR_CONTAINS(H(out), "paper bound");
    CHECK_STR_CONTAINS(H(out), "preconditions  all hold");
    CHECK_EQ(run("--method paper-dp-dda --param eps=0.8 --param delta0=0.01 --param b=2 --param n=20 --param q=20000 "
                 "--param T=600000",
                 out, sizeof out),
             0);
    CHECK_STR_CONTAINS(H(out), "PRECONDITIONS VIOLATED");
    CHECK_STR_CONTAINS(H(out), "below the theorem's minimum");
    CHECK_EQ(run("--method paper-fed-plt --param help", out, sizeof out), 0);
    CHECK_STR_CONTAINS(H(out), "lambda_lo");
    CHECK_EQ(run("--method paper-do-adp --param eps=0.01", out, sizeof out), 2);
    CHECK_STR_CONTAINS(H(out), "required");
    CHECK_EQ(run("--method paper-dp-dda --param bogus=1", out, sizeof out), 2);
    CHECK_EQ(run("--method paper-dp-dda --param eps", out, sizeof out), 2);
    CHECK_EQ(run("--method paper-nope", out, sizeof out), 2);
}

static void cli_errors(void)
{
    char out[8192];
    CHECK_EQ(run("--help", out, sizeof out), 0);
    CHECK_STR_CONTAINS(H(out), "usage: dpdo-privacy");
    const char *bad[] = {
        "--q",                                     /* missing value */
        "--q abc --sigma 1 --steps 10",            /* garbage */
        "--q nan --sigma 1 --steps 10",            /* NaN */
        "--q inf --sigma 1 --steps 10",            /* Inf */
        "--q 1e999 --sigma 1 --steps 10",          /* overflow */
        "--q 0.01 --sigma 1",                      /* no steps */
        "--q 0.01 --steps 10",                     /* no sigma */
        "--q 1.5 --sigma 1 --steps 10",            /* q out of range */
        "--q 0.01 --sigma -1 --steps 10",          /* negative sigma */
        "--q 0.01 --sigma 1 --steps 2.5",          /* fractional steps */
        "--q 0.01 --sigma 1 --steps 10 --delta 0", /* delta */
        "--q 0.01 --sigma 1 --steps 10 --delta 1.5",
        "--q 0.01 --sigma 1 --steps 10 --method magic",
        "--q 0.01 --sigma 1 --steps 10 --conversion fancy",
        "--sampling bogus --sigma 1 --steps 10",
        "--sampling wor --n 100 --sigma 1 --steps 10",
        "--sampling wor --n 100 --m 200 --sigma 1 --steps 10",
        "--q 0.01 --sigma 1 --steps 10 --orders 2,abc",
        "--q 0.01 --sigma 1 --steps 10 --orders 0.5",
        "--q 0.01 --steps 10 --calibrate sigma",
        "--q 0.01 --steps 10 --calibrate banana --epsilon 1",
        "--q 0.01 --sigma 1 --steps 10 --frobnicate",
        "--q 0.01 --sigma 1 --steps 10 --param a=1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = run(bad[i], out, sizeof out);
        CHECK_MSG(rc == 2, "'%.100s' exited %d: %.200s", bad[i], rc, out);
        CHECK_MSG(strstr(out, "dpdo-privacy:") != NULL, "'%.100s': no error message", bad[i]);
    }
}

/* TF Privacy's compute_dp_sgd_privacy spellings (--N, --batch_size, --noise_multiplier, --epochs,
 * --delta, also as --name=value) give TF's figure: dp_accounting's RdpAccountant with TF's orders
 * ([1 + x/10 for x in 1..99] + 12..63), Poisson q = 256/60000, 14063 steps, sigma 1.12, classic
 * conversion eps = min_a RDP(a) + log(1/delta)/(a - 1) = 2.922345396535523 at order 9.1 (run
 * beside this repository: google/differential-privacy, python/dp_accounting). A typo names the
 * nearest option; --json carries the winning accountant, the order and the PLD bracket. */
static void cli_tf_privacy_spellings(void)
{
    char out[8192];
    int rc = run("--N 60000 --batch_size 256 --noise_multiplier 1.12 --epochs 60 --delta 1e-5 --method rdp "
                 "--conversion classic",
                 out, sizeof out);
    CHECK_EQ(rc, 0);
    CHECK_REL(field(out, "epsilon"), 2.922345396535523, 1e-9);
    CHECK_EQ(field(out, "optimal order"), 9.1);
    rc = run("--N=60000 --batch_size=256 --noise_multiplier=1.12 --epochs=60 --delta=1e-5 --method=rdp "
             "--conversion=classic --orders 1.1,2,9.1,20",
             out, sizeof out);
    CHECK_EQ(rc, 0);
    CHECK_REL(field(out, "epsilon"), 2.922345396535523, 1e-9);
    /* the same through the library's own spellings */
    char out2[8192];
    rc = run("--n 60000 --batch-size 256 --sigma 1.12 --epochs 60 --delta 1e-5 --method rdp --conversion classic",
             out2, sizeof out2);
    CHECK_EQ(rc, 0);
    CHECK_REL(field(out2, "epsilon"), 2.922345396535523, 1e-9);
    /* typos: the nearest option, the alias included */
    rc = run("--N 60000 --batchsize 256", out, sizeof out);
    CHECK_EQ(rc, 2);
    CHECK_STR_CONTAINS(H(out), "unknown option '--batchsize'; did you mean --batch-size?");
    rc = run("--noise_multiplyer 1.1", out, sizeof out);
    CHECK_EQ(rc, 2);
    CHECK_STR_CONTAINS(H(out), "did you mean --noise_multiplier?");
    rc = run("--frobnicate 1", out, sizeof out);
    CHECK_EQ(rc, 2);
    CHECK(strstr(out, "did you mean") == NULL);
    /* --json: the winner of auto, its bracket; rdp: the order, no bracket */
    rc = run("--N 60000 --batch_size 256 --noise_multiplier 1.12 --epochs 60 --json", out, sizeof out);
    CHECK_EQ(rc, 0);
    CHECK_STR_CONTAINS(H(out), "\"method\": \"auto\", \"accountant\": \"");
    double lo = field(out, "\"epsilon_lower\": "), hi = field(out, "\"epsilon\": ");
    CHECK(strstr(out, "\"accountant\": \"rdp\"") != NULL || (lo > 0 && lo <= hi));
    CHECK(hi < 2.5186864808); /* auto is at most the improved RDP figure (dp_accounting: 2.518686480817747) */
    rc = run("--N 60000 --batch_size 256 --noise_multiplier 1.12 --epochs 60 --method rdp --json", out, sizeof out);
    CHECK_EQ(rc, 0);
    CHECK_REL(field(out, "\"epsilon\": "), 2.518686480817747, 1e-9);
    CHECK_EQ(field(out, "\"order\": "), 8.3);
    CHECK_STR_CONTAINS(H(out), "\"epsilon_lower\": null");
    rc = run("--N 60000 --batch_size 256 --noise_multiplier 1.12 --epochs 60 --method pld --json", out, sizeof out);
    CHECK_EQ(rc, 0);
    lo = field(out, "\"epsilon_lower\": ");
    hi = field(out, "\"epsilon\": ");
    CHECK(lo > 0 && lo < hi);
    CHECK_STR_CONTAINS(H(out), "\"accountant\": \"pld\"");
}

int main(void)
{
    const char *b = getenv("BUILD");
    snprintf(BIN, sizeof BIN, "%s/bin/dpdo-privacy", b && *b ? b : "build");
    /* check-asan builds only tests into its BUILD: fall back to the regular build's tool */
    FILE *f = fopen(BIN, "r");
    if (f)
        fclose(f);
    else
        snprintf(BIN, sizeof BIN, "build/bin/dpdo-privacy");
    RUN(cli_exists);
    RUN(cli_rdp_reference);
    RUN(cli_pld_auto);
    RUN(cli_calibrate);
    RUN(cli_all);
    RUN(cli_paper);
    RUN(cli_errors);
    RUN(cli_tf_privacy_spellings);
    return h_finish();
}
