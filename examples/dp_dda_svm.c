/* SPDX-License-Identifier: BSD-3-Clause */
/* dp_dda_svm: reproduce Figures 1-4 of Liu, Johansson, Shi, "Distributed
 * empirical risk minimization with differential privacy" (DP-DDA, Algorithm 1)
 * with libdpdo's "dp-dda" and "dp-dda-baseline" algorithms.
 *
 *   Fig 1  L2-SVM, eps = 0.8: suboptimality vs rounds, iota = 0.1, 0.2, baseline [19]
 *   Fig 2  L2-SVM, eps in {0.2,...,1}: final suboptimality after 3 epochs per method
 *   Fig 3  L1-SVM, eps = 0.4: suboptimality vs rounds, iota = 0.1 and 0.2
 *   Fig 4  L1-SVM, eps sweep: final suboptimality, both iota
 *
 * Setting (spec/dp-dda.md §6): hinge loss, h = (mu/2)||x||^2 with mu = 0.0005
 * (schedule a_t = t, gamma_t = 20) or h = phi ||x||_1 with phi = 0.0005
 * (a_t = 1, gamma_t = 0.01 sqrt(t)); n = 20 nodes on a complete graph; each
 * round a random matching of b = 2 (iota = 0.1) or b = 4 (iota = 0.2) nodes
 * computes one noisy hinge subgradient and averages pairwise; the baseline has
 * every node compute. Noise from Theorem 1 (DPDO_NOISE_PAPER) with
 * delta_0 = 0.01, L = 1, for a horizon of 3 epochs = 3q/iota rounds; or, with
 * --noise rigorous, sigma calibrated by the tightest sound accountant ("auto") so that every node
 * is (eps, 0.01)-DP per sample (DPDO_NOISE_RIGOROUS).
 * F* = min(reference solver, best F of a noiseless run of twice that length).
 *
 * Data: synthetic "epsilon-like" (dense) and "rcv1-like" (sparse) sets at a
 * scale that runs in a few minutes, or the real LIBSVM files (full scale:
 * hours) with --epsilon FILE / --rcv1 FILE.
 *
 * Output (in --out DIR): figN.csv (columns described in each file's header),
 * figN.gp and figN.png (gnuplot), progress on stderr, and on stdout a summary:
 * the paper's qualitative orderings (spec §6.7) with PASS/FAIL, and the
 * privacy of every curve -- the paper's bound (which the paper's own runs do
 * not satisfy: T < T_min) next to the sound accountant's epsilon (named per curve).
 * Exit status 1 when a check FAILs (0 with --no-fail-exit) or on a library
 * error (docs/reproductions.md, "How the checks decide").
 *
 * Usage: dp_dda_svm [--quick] [--figs 1,2,3,4] [--seeds K] [--out DIR]
 *                   [--epsilon FILE] [--rcv1 FILE] [--noise paper|rigorous] */
#define EX_PROG "dp_dda_svm"
#include "common.h"

#define NODES 20
#define N_EPS 5
#define N_METHODS 3
#define MAX_GRID 48
#define DELTA0 0.01    /* the paper's delta_0 (PAPER noise only: it is >= 1/n, no real guarantee) */
#define DELTA_RIG_PER_ROW 0.01 /* RIGOROUS noise: delta = 0.01 / n, far below 1/n (docs/privacy.md) */
#define LAMBDA 0.0005  /* mu (L2) and phi (L1) */

/* --reproducible: DPDO_RANDOMNESS_REPRODUCIBLE (bit-identical reruns); default secure */
static int g_reproducible = 0;

static const double EPS_SWEEP[N_EPS] = {0.2, 0.4, 0.6, 0.8, 1.0};
static int noise_mode = DPDO_NOISE_PAPER; /* --noise rigorous: DPDO_NOISE_RIGOROUS */
enum { EPS_04 = 1, EPS_08 = 3 }; /* indices of Fig 3's and Fig 1's epsilon */
#define DELTA_TEXT() (noise_mode == DPDO_NOISE_RIGOROUS ? "0.01/n (n rows over all nodes)" : "0.01")
#define NOISE_NAME() \
    (noise_mode == DPDO_NOISE_PAPER   ? "Theorem 1 (paper)"                         \
     : noise_mode == DPDO_NOISE_NONE ? "no (diagnostic: the noiseless trajectory)" \
                                     : "rigorous (calibrated by the accountant)")

/* The three curves: Algorithm 1 at two sampling ratios, and the baseline [19]. */
typedef struct {
    const char *label;
    const char *type; /* dpdo_algorithm_type_find name */
    int active;       /* b; the baseline's default is every node */
    double iota;
} method;
static const method METHODS[N_METHODS] = {
    {"iota=0.1", "dp-dda", 2, 0.1},
    {"iota=0.2", "dp-dda", 4, 0.2},
    {"baseline", "dp-dda-baseline", NODES, 1.0},
};

enum { REG_L2 = 0, REG_L1 = 1 };
static const char *const REG_NAME[2] = {"l2", "l1"};
static const int REG_SCHEDULE[2] = {DPDO_DDA_SCHEDULE_PAPER_L2, DPDO_DDA_SCHEDULE_PAPER_L1};
static const int REG_METHODS[2] = {3, 2}; /* L1 figures compare the two iota only */

/* One data set split over the nodes, with both regularizers and F* for each. */
typedef struct {
    char name[64];
    dpdo_dataset *ds;
    dpdo_loss *loss;
    dpdo_shard *shards[NODES];
    dpdo_node *nodes[NODES];
    dpdo_regularizer *reg[2];
    double fstar[2];
    double *labels, *margins; /* for the accuracy of a model: sign(a^T x) == b */
    double majority;          /* the majority label's share: the untrained model's accuracy */
    double majority_label;    /* +1 or -1: the prediction where a^T x = 0 */
    int64_t q, d;
} problem;

/* One (data set, regularizer, method, epsilon) curve, averaged over seeds. */
typedef struct {
    int done;
    int64_t rounds; /* T = 3 epochs */
    int ngrid;
    int64_t grid[MAX_GRID];
    double gap_mean[MAX_GRID], gap_min[MAX_GRID], gap_max[MAX_GRID];
    double final_mean, final_se; /* gap at T: mean and standard error over seeds */
    double acc_mean[MAX_GRID];   /* training accuracy of the output point, mean over seeds */
    double acc_final, acc_final_se;
    int64_t eq_round;            /* the baseline's horizon 3q (equal rounds), on the grid */
    double eq_mean, eq_se;       /* gap at eq_round: mean and standard error over seeds */
    uint64_t seed0;              /* first seed of this curve (fresh per method and epsilon) */
    double sigma;                /* noise std per coordinate in use */
    double eps_paper, delta_paper;
    int paper_valid;
    double eps_rigorous; /* worst node, worst seed, at delta_0 */
    char source_paper[32], source_rigorous[32]; /* dpdo_algorithm_privacy_source */
    int64_t stopped;     /* fewest rounds run when the budget guard stopped a seed early, else 0 */
    char notes[512];
} curve;

/* Scale of the synthetic sets. */
typedef struct {
    int64_t q_dense, d_dense;   /* epsilon-like: samples per node, features */
    int64_t q_sparse, d_sparse; /* rcv1-like */
    double density;             /* rcv1-like non-zeros per row / d */
} scale;

/* ---- data ------------------------------------------------------------------------- */

/* Fill p with a synthetic set of NODES*q rows, or the LIBSVM file `path`;
 * split it into NODES shards of equal size q (dropping the remainder, as the
 * paper does for rcv1) and create the hinge-loss nodes and regularizers. */
static int problem_init(problem *p, const char *kind, const char *path, int64_t q, int64_t d,
                        double density)
{
    memset(p, 0, sizeof *p);
    p->fstar[0] = p->fstar[1] = NAN;
    TRY(dpdo_dataset_create(&p->ds), "out of memory");
    if (path && !strcmp(kind, "fashion-2c")) {
        fprintf(stderr, "loading Fashion-MNIST from %s (pullover +1 vs coat -1) ...\n", path);
        if (ex_load_fashion_pair(p->ds, path, EX_FASHION_POS, EX_FASHION_NEG)) return -1;
        snprintf(p->name, sizeof p->name, "%s", kind);
    } else if (path) {
        dpdo_load_options lo;
        dpdo_load_options_init(&lo, sizeof lo);
        lo.label_map = DPDO_LABEL_BINARY;
        fprintf(stderr, "loading %s ...\n", path);
        TRY(dpdo_dataset_load_libsvm(p->ds, path, &lo), dpdo_dataset_errmsg(p->ds));
        snprintf(p->name, sizeof p->name, "%s", kind); /* "epsilon" or "rcv1" */
    } else {
        dpdo_generate_options g;
        dpdo_generate_options_init(&g, sizeof g);
        g.n = NODES * q;
        g.d = d;
        g.density = density;
        g.seed = 42;
        TRY(dpdo_dataset_generate(p->ds, kind, &g), dpdo_dataset_errmsg(p->ds));
        snprintf(p->name, sizeof p->name, "%s", kind);
    }
    p->d = dpdo_dataset_features(p->ds);
    p->q = dpdo_dataset_rows(p->ds) / NODES;
    if (p->q < 1) {
        fprintf(stderr, "%s: %lld rows are fewer than %d nodes\n", p->name,
                (long long)dpdo_dataset_rows(p->ds), NODES);
        return -1;
    }
    /* Theorem 1 needs every per-sample gradient to have norm <= L = 1: the
     * hinge gradient is -y a, so rows must have norm <= 1. The library clips
     * at L anyway (a deviation from the paper, docs/algorithms/dp-dda.md). */
    if (dpdo_dataset_max_row_norm(p->ds) > 1.0 + 1e-6) /* text files round to ~1e-7 */
        fprintf(stderr, "warning: %s: max row norm %.9g > 1; gradients are clipped to norm 1\n",
                p->name, dpdo_dataset_max_row_norm(p->ds));

    int64_t sizes[NODES];
    for (int i = 0; i < NODES; i++) sizes[i] = p->q;
    TRY(dpdo_dataset_partition(p->ds, NODES, sizes, 7, p->shards), dpdo_dataset_errmsg(p->ds));
    TRY(dpdo_loss_create(&p->loss, dpdo_loss_type_find("hinge"), NULL, p->d), "hinge loss");
    for (int i = 0; i < NODES; i++)
        TRY(dpdo_node_create(&p->nodes[i], p->shards[i], p->loss, 1.0), dpdo_loss_errmsg(p->loss));
    const double lambda = LAMBDA;
    for (int r = 0; r < 2; r++)
        TRY(dpdo_regularizer_create(&p->reg[r], dpdo_regularizer_type_find(REG_NAME[r]), NULL,
                                    p->d, &lambda, 1),
            REG_NAME[r]);
    int64_t rows = dpdo_dataset_rows(p->ds);
    p->labels = malloc(sizeof(double) * (size_t)rows);
    p->margins = malloc(sizeof(double) * (size_t)rows);
    if (!p->labels || !p->margins) {
        fprintf(stderr, "out of memory\n");
        return -1;
    }
    TRY(dpdo_dataset_get_labels(p->ds, p->labels, rows), dpdo_dataset_errmsg(p->ds));
    int64_t pos = 0;
    for (int64_t i = 0; i < rows; i++) pos += p->labels[i] > 0;
    p->majority = (double)(pos > rows - pos ? pos : rows - pos) / (double)rows;
    p->majority_label = pos > rows - pos ? 1.0 : -1.0;
    fprintf(stderr, "%s: %d nodes x q = %lld samples, d = %lld, %lld stored entries\n", p->name,
            NODES, (long long)p->q, (long long)p->d, (long long)dpdo_dataset_nnz(p->ds));
    return 0;
fail:
    return -1;
}

static void problem_free(problem *p)
{
    for (int r = 0; r < 2; r++) dpdo_regularizer_destroy(p->reg[r]);
    for (int i = 0; i < NODES; i++) dpdo_node_destroy(p->nodes[i]);
    for (int i = 0; i < NODES; i++) dpdo_shard_destroy(p->shards[i]);
    dpdo_loss_destroy(p->loss);
    dpdo_dataset_destroy(p->ds);
    free(p->labels);
    free(p->margins);
}

/* Training accuracy of the model x: the fraction of rows whose label is sign(a^T x), a tie
 * (a^T x = 0) predicting the majority label, so the untrained x = 0 scores the majority class's
 * share (the paper's accuracy panels), or -1 on error. */
static double accuracy(const problem *p, const double *x)
{
    int64_t rows = dpdo_dataset_rows(p->ds), ok = 0;
    if (dpdo_dataset_margins(p->ds, x, p->d, p->margins, rows) < 0) return -1;
    for (int64_t i = 0; i < rows; i++)
        ok += p->margins[i] == 0.0 ? p->labels[i] == p->majority_label : p->labels[i] * p->margins[i] > 0;
    return (double)ok / (double)rows;
}

/* The delta of a run: the paper's delta_0 for its noise rule; for the calibrated noise 0.01 / n
 * (n rows over all nodes), far below 1/n: a delta >= 1/n would allow publishing a random row. */
static double run_delta(const problem *p, int mode)
{
    return mode == DPDO_NOISE_RIGOROUS ? DELTA_RIG_PER_ROW / (double)dpdo_dataset_rows(p->ds) : DELTA0;
}

/* ---- one run -------------------------------------------------------------------------- */

/* About MAX_GRID log-spaced rounds in [1, T], always ending at T. */
static int log_grid(int64_t T, int64_t *grid)
{
    int n = 0;
    for (int k = 0; k < MAX_GRID - 1; k++) {
        int64_t t = (int64_t)llround(pow((double)T, (double)k / (MAX_GRID - 2)));
        if (t < 1) t = 1;
        if (t > T) t = T;
        if (n == 0 || t > grid[n - 1]) grid[n++] = t;
    }
    if (grid[n - 1] != T) grid[n++] = T;
    return n;
}

/* Run `m` with the regularizer r of p for T rounds from seed `seed` and write
 * val[k] at the grid rounds: F - fstar, or F itself when fstar is NaN (the
 * noiseless runs that help find F*). A fresh ledger per run, so the rigorous
 * epsilon is this run's alone. If c is given, store sigma and the privacy. */
static int run_once(const problem *p, int r, const method *m, int mode, double eps,
                    int64_t T, uint64_t seed, double fstar, const int64_t *grid, int ngrid,
                    double *val, double *accv, curve *c)
{
    int status = -1;
    double *x = accv ? malloc(sizeof(double) * (size_t)p->d) : NULL;
    if (accv && !x) return -1;
    dpdo_ledger *ledger = NULL;
    dpdo_accountant *acc = NULL;
    dpdo_algorithm *alg = NULL;
    dpdo_network *net = NULL;

    /* The supergraph: complete on 20 nodes (a matching is drawn on it each round). */
    TRY(dpdo_network_create(&net), "out of memory");
    TRY(dpdo_network_set_complete(net, NODES), dpdo_network_errmsg(net));
    if (mode != DPDO_NOISE_NONE) {
        TRY(dpdo_ledger_create(&ledger, NODES), "out of memory");
        TRY(dpdo_accountant_create(&acc, dpdo_accountant_type_find(ex_accountant_name()), NULL, ledger,
                                   NULL),
            "accountant");
    }

    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = g_reproducible ? DPDO_RANDOMNESS_REPRODUCIBLE : DPDO_RANDOMNESS_SECURE;
    o.seed = seed;
    o.max_rounds = T;
    o.noise_mode = mode;
    o.epsilon = eps;
    o.delta = run_delta(p, mode); /* PAPER: Theorem 1's delta_0; RIGOROUS: the target delta */
    o.lipschitz = 1.0;
    TRY(dpdo_algorithm_create(&alg, dpdo_algorithm_type_find(m->type)), "out of memory");
    TRY(dpdo_algorithm_setup(alg, p->nodes, NODES, net, p->reg[r], acc, &o),
        dpdo_algorithm_errmsg(alg));
    TRY(dpdo_algorithm_set_int(alg, DPDO_PARAM_DDA_SCHEDULE, REG_SCHEDULE[r]),
        dpdo_algorithm_errmsg(alg));
    if (m->active < NODES) { /* the baseline keeps its defaults (all compute, pairwise gossip) */
        TRY(dpdo_algorithm_set_int(alg, DPDO_PARAM_DDA_ACTIVE, m->active),
            dpdo_algorithm_errmsg(alg));
        TRY(dpdo_algorithm_set_int(alg, DPDO_PARAM_DDA_SCHEME, DPDO_ROUND_MATCHING),
            dpdo_algorithm_errmsg(alg));
    }
    TRY(dpdo_algorithm_prepare(alg), dpdo_algorithm_errmsg(alg));

    for (int k = 0; k < ngrid; k++) {
        /* Under RIGOROUS noise the budget guard may stop the run early
         * (DPDO_DONE, stop reason BUDGET): the model then stays as it is. */
        if (dpdo_algorithm_state(alg) != DPDO_ALG_DONE)
            TRY(dpdo_algorithm_run(alg, grid[k] - dpdo_algorithm_round(alg), NULL),
                dpdo_algorithm_errmsg(alg));
        if (T >= 100000) ex_progress("    rounds", (long)grid[k], (long)T); /* long runs: how far */
        if (isnan(fstar))
            TRY(dpdo_algorithm_objective(alg, DPDO_POINT_OUTPUT, DPDO_NODE_ALL, &val[k]),
                dpdo_algorithm_errmsg(alg));
        else
            TRY(dpdo_algorithm_suboptimality(alg, DPDO_POINT_OUTPUT, DPDO_NODE_ALL, fstar, &val[k]),
                dpdo_algorithm_errmsg(alg));
        if (accv) {
            TRY(dpdo_algorithm_get_output(alg, DPDO_NODE_ALL, x, p->d), dpdo_algorithm_errmsg(alg));
            accv[k] = accuracy(p, x);
        }
    }

    if (c && mode == DPDO_NOISE_NONE) c->paper_valid = 1;
    if (c && mode != DPDO_NOISE_NONE) { /* privacy spent after T rounds, both ways */
        double eps_r;
        int32_t valid;
        TRY(dpdo_algorithm_get_double(alg, DPDO_PARAM_SIGMA, &c->sigma), dpdo_algorithm_errmsg(alg));
        TRY(dpdo_algorithm_privacy(alg, DPDO_PRIVACY_PAPER, DPDO_NODE_ALL, &c->eps_paper,
                                   &c->delta_paper, &valid),
            dpdo_algorithm_errmsg(alg));
        TRY(dpdo_algorithm_privacy(alg, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eps_r, NULL, NULL),
            dpdo_algorithm_errmsg(alg));
        c->paper_valid = valid;
        snprintf(c->source_paper, sizeof c->source_paper, "%s",
                 dpdo_algorithm_privacy_source(alg, DPDO_PRIVACY_PAPER));
        snprintf(c->source_rigorous, sizeof c->source_rigorous, "%s",
                 dpdo_algorithm_privacy_source(alg, DPDO_PRIVACY_RIGOROUS));
        int64_t ran = dpdo_algorithm_round(alg);
        if (ran < T && (c->stopped == 0 || ran < c->stopped)) c->stopped = ran;
        if (!(eps_r <= c->eps_rigorous)) c->eps_rigorous = eps_r; /* worst seed */
        snprintf(c->notes, sizeof c->notes, "%s", dpdo_algorithm_privacy_notes(alg));
    }
    status = 0;
fail:
    dpdo_algorithm_destroy(alg); /* before the network: it unlocks it */
    dpdo_network_destroy(net);
    dpdo_accountant_destroy(acc);
    dpdo_ledger_destroy(ledger);
    free(x);
    return status;
}

/* 3 epochs: each sample is touched 3 times in expectation (spec §6.5). */
static int64_t three_epochs(const problem *p, const method *m)
{
    return (int64_t)llround(3.0 * (double)p->q / m->iota);
}

/* F* for regularizer r: the reference solver, lowered to the best F seen in a
 * noiseless run (2 x 3 epochs) of each method, so that no gap is negative. */
static int find_fstar(problem *p, int r)
{
    int status = -1;
    dpdo_reference *ref = NULL;
    double *x = malloc(sizeof(double) * (size_t)p->d);
    if (!x) return -1;

    dpdo_reference_options ro;
    dpdo_reference_options_init(&ro, sizeof ro);
    ro.weighting = DPDO_WEIGHT_NODES; /* F = (1/n) sum_i f_i + h, eq. (1) */
    if (r == REG_L1) { /* only an approximate method exists for hinge + l1: cap its cost */
        ro.tol = 1e-4;
        ro.max_iter = 200;
    }
    double t0 = now(), fref;
    TRY(dpdo_reference_create(&ref, p->nodes, NODES, p->reg[r], &ro),
        "reference solver");
    int rc = dpdo_reference_solve(ref, x, p->d, &fref);
    if (rc == DPDO_E_NUMERIC && isfinite(fref)) /* iteration cap: x and F are still usable */
        fprintf(stderr, "  note: %s\n", dpdo_reference_errmsg(ref));
    else
        TRY(rc, dpdo_reference_errmsg(ref));
    fprintf(stderr, "%s %s: reference (%s, certificate %.2g) F = %.10f  [%.1f s]\n", p->name,
            REG_NAME[r], dpdo_reference_method(ref), dpdo_reference_certificate(ref), fref,
            now() - t0);

    double best = INFINITY;
    const char *best_by = "";
    for (int k = 0; k < REG_METHODS[r]; k++) {
        const method *m = &METHODS[k];
        int64_t grid[MAX_GRID], T = 2 * three_epochs(p, m);
        double F[MAX_GRID];
        int ng = log_grid(T, grid);
        t0 = now();
        if (run_once(p, r, m, DPDO_NOISE_NONE, 1.0, T, 1, NAN, grid, ng, F, NULL, NULL)) goto fail;
        for (int j = 0; j < ng; j++)
            if (F[j] < best) best = F[j], best_by = m->label;
        fprintf(stderr, "%s %s: noiseless %-8s %lld rounds: F = %.10f  [%.1f s]\n", p->name,
                REG_NAME[r], m->label, (long long)T, F[ng - 1], now() - t0);
    }
    p->fstar[r] = fref <= best ? fref : best;
    fprintf(stderr, "%s %s: F* = %.10f (from %s%s)\n", p->name, REG_NAME[r], p->fstar[r],
            fref <= best ? "the reference solver " : "a noiseless DP-DDA run ",
            fref <= best ? dpdo_reference_method(ref) : best_by);
    status = 0;
fail:
    dpdo_reference_destroy(ref);
    free(x);
    return status;
}

/* The private curve of (p, r, m, eps), averaged over `seeds` seeds starting
 * at seed0 (fresh seeds for every method and epsilon, so that the curves
 * compared are independent samples). eq_round (the baseline's horizon) is
 * added to the grid for the equal-rounds comparison. */
static int run_curve(const problem *p, int r, const method *m, double eps, int seeds,
                     uint64_t seed0, int64_t eq_round, curve *c)
{
    double val[MAX_GRID + 1], acc[MAX_GRID + 1], finals[64], eqs[64], accs[64];
    double t0 = now();
    memset(c, 0, sizeof *c);
    c->eps_rigorous = -INFINITY;
    c->rounds = three_epochs(p, m);
    c->ngrid = log_grid(c->rounds, c->grid);
    c->seed0 = seed0;
    c->eq_round = eq_round < c->rounds ? eq_round : c->rounds;
    int eq = 0; /* index of eq_round in the grid: insert it if missing */
    while (eq < c->ngrid && c->grid[eq] < c->eq_round) eq++;
    if (c->grid[eq] != c->eq_round && c->ngrid < MAX_GRID) {
        memmove(&c->grid[eq + 1], &c->grid[eq], sizeof(int64_t) * (size_t)(c->ngrid - eq));
        c->grid[eq] = c->eq_round;
        c->ngrid++;
    }
    c->eq_round = c->grid[eq];
    for (int k = 0; k < c->ngrid; k++) c->gap_min[k] = INFINITY, c->gap_max[k] = -INFINITY;
    for (int s = 0; s < seeds; s++) {
        if (run_once(p, r, m, noise_mode, eps, c->rounds, seed0 + (uint64_t)s, p->fstar[r],
                     c->grid, c->ngrid, val, acc, c))
            return -1;
        for (int k = 0; k < c->ngrid; k++) {
            c->gap_mean[k] += val[k] / seeds;
            c->acc_mean[k] += acc[k] / seeds;
            if (val[k] < c->gap_min[k]) c->gap_min[k] = val[k];
            if (val[k] > c->gap_max[k]) c->gap_max[k] = val[k];
        }
        finals[s] = val[c->ngrid - 1];
        eqs[s] = val[eq];
        accs[s] = acc[c->ngrid - 1];
    }
    mean_se(finals, seeds, &c->final_mean, &c->final_se);
    mean_se(eqs, seeds, &c->eq_mean, &c->eq_se);
    mean_se(accs, seeds, &c->acc_final, &c->acc_final_se);
    c->done = 1;
    fprintf(stderr, "%s %s %-8s eps=%.1f: %lld rounds x %d seeds, sigma = %.4g, final gap %.4e "
                    "(se %.1e), accuracy %.4f  [%.1f s]\n",
            p->name, REG_NAME[r], m->label, eps, (long long)c->rounds, seeds, c->sigma,
            c->final_mean, c->final_se, c->acc_final, now() - t0);
    return 0;
}

/* ---- output --------------------------------------------------------------------------- */

/* figN.csv for a curve figure (1, 3): the seed-averaged gap at every grid round. */
static int write_curves_csv(const char *dir, int fig, problem *probs, int nprob, int r, int ie,
                            curve (*res)[2][N_METHODS][N_EPS])
{
    char name[32];
    snprintf(name, sizeof name, "fig%d.csv", fig);
    FILE *f = open_out(dir, name);
    if (!f) return -1;
    fprintf(f, "# DP-DDA Fig. %d: %s-SVM, epsilon = %.1f, delta = %s, n = %d; suboptimality "
               "F(mean of outputs) - F* against rounds\n",
            fig, r == REG_L2 ? "L2" : "L1", EPS_SWEEP[ie], DELTA_TEXT(), NODES);
    fprintf(f, "# noise: %s\n", NOISE_NAME());
    fprintf(f, "# columns: dataset, method, iota, epsilon, round, gap_mean, gap_min, gap_max "
               "(mean/min/max over seeds), accuracy (training accuracy of the output point, "
               "mean over seeds), gradient_evals (rounds x active nodes)\n");
    fprintf(f, "dataset,method,iota,epsilon,round,gap_mean,gap_min,gap_max,accuracy,"
               "gradient_evals\n");
    for (int pi = 0; pi < nprob; pi++)
        for (int k = 0; k < REG_METHODS[r]; k++) {
            const curve *c = &res[pi][r][k][ie];
            for (int j = 0; j < c->ngrid; j++)
                fprintf(f, "%s,%s,%g,%g,%lld,%.6e,%.6e,%.6e,%.6f,%lld\n", probs[pi].name,
                        METHODS[k].label, METHODS[k].iota, EPS_SWEEP[ie], (long long)c->grid[j],
                        c->gap_mean[j], c->gap_min[j], c->gap_max[j], c->acc_mean[j],
                        (long long)c->grid[j] * METHODS[k].active);
        }
    return fclose(f) == 0 ? 0 : -1;
}

/* figN.csv for a sweep figure (2, 4): final gap and privacy per (method, epsilon). */
static int write_sweep_csv(const char *dir, int fig, problem *probs, int nprob, int r,
                           curve (*res)[2][N_METHODS][N_EPS])
{
    char name[32];
    snprintf(name, sizeof name, "fig%d.csv", fig);
    FILE *f = open_out(dir, name);
    if (!f) return -1;
    fprintf(f, "# DP-DDA Fig. %d: %s-SVM, final suboptimality after 3 epochs (3q/iota rounds) "
               "against epsilon; delta = %s, n = %d\n",
            fig, r == REG_L2 ? "L2" : "L1", DELTA_TEXT(), NODES);
    fprintf(f, "# noise: %s\n", NOISE_NAME());
    fprintf(f, "# columns: dataset, method, iota, epsilon, rounds, gap_mean, gap_se (over seeds), "
               "sigma (noise std in use), eps_paper and delta_paper (the paper's bound, Remark 3.1), "
               "paper_valid (0: a precondition fails, e.g. T < T_min), eps_rigorous (RDP "
               "accountant, worst node and seed, at delta = delta_0), delta, accuracy and "
               "accuracy_se (training accuracy of the output point over seeds), seed0 (first of "
               "the curve's own seeds)\n");
    fprintf(f, "dataset,method,iota,epsilon,rounds,gap_mean,gap_se,sigma,eps_paper,delta_paper,"
               "paper_valid,eps_rigorous,delta,accuracy,accuracy_se,seed0\n");
    for (int pi = 0; pi < nprob; pi++)
        for (int k = 0; k < REG_METHODS[r]; k++)
            for (int ie = 0; ie < N_EPS; ie++) {
                const curve *c = &res[pi][r][k][ie];
                fprintf(f, "%s,%s,%g,%g,%lld,%.6e,%.6e,%.6e,%.6g,%.6g,%d,%.6g,%g,%.6f,%.2e,%llu\n",
                        probs[pi].name, METHODS[k].label, METHODS[k].iota, EPS_SWEEP[ie],
                        (long long)c->rounds, c->final_mean, c->final_se, c->sigma, c->eps_paper,
                        c->delta_paper, c->paper_valid, c->eps_rigorous, run_delta(&probs[pi], noise_mode), c->acc_final,
                        c->acc_final_se, (unsigned long long)c->seed0);
            }
    return fclose(f) == 0 ? 0 : -1;
}

/* figN.gp: one panel per data set, one line per method, log scales. */
static int write_gnuplot(const char *dir, int fig, problem *probs, int nprob, int r)
{
    char stem[32];
    int sweep = fig == 2 || fig == 4;
    snprintf(stem, sizeof stem, "fig%d", fig);
    FILE *f = open_gnuplot(dir, stem, 520 * nprob, 840);
    if (!f) return -1;
    /* the key goes below each panel, so that it never covers a curve */
    fprintf(f, "set key below horizontal\n");
    fprintf(f, sweep ? "set xlabel 'epsilon'\n" : "set logscale x\nset xlabel 'rounds'\n");
    fprintf(f, "set multiplot layout 2,%d\n", nprob);
    for (int row = 0; row < 2; row++) {
        if (row == 0)
            fprintf(f, "unset offsets\nset logscale y\nset format y '%%.0e'\nset ylabel 'F(x) - F*'\n");
        else /* a margin below and above, so the majority-class line is never on the border */
            fprintf(f, "set offsets graph 0, graph 0, graph 0.05, graph 0.05\nunset logscale y\n"
                       "set format y '%%.2f'\nset ylabel 'training accuracy'\n");
        for (int pi = 0; pi < nprob; pi++) {
            fprintf(f, "set title '%s, %s-SVM (Fig. %d)'\nplot ", probs[pi].name,
                    r == REG_L2 ? "L2" : "L1", fig);
            int col = row == 0 ? 6 : sweep ? 14 : 9;
            for (int k = 0; k < REG_METHODS[r]; k++)
                fprintf(f, "%s'fig%d.csv' using %d:((strcol(1) eq '%s' && strcol(2) eq '%s') ? $%d : 1/0) "
                           "with linespoints title '%s'",
                        k ? ", \\\n     " : "", fig, sweep ? 4 : 5, probs[pi].name,
                        METHODS[k].label, col, METHODS[k].label);
            /* the untrained model: x = 0's gap F(0) - F*, and the majority class's accuracy
             * (what x = 0 scores: its ties predict the majority label) */
            if (row == 0)
                fprintf(f, ", \\\n     %.6e with lines dashtype 2 lc rgb 'black' title 'x = 0 (not training)'",
                        1.0 - probs[pi].fstar[r]);
            else
                fprintf(f, ", \\\n     %.6f with lines dashtype 2 lc rgb 'black' title 'majority class'",
                        probs[pi].majority);
            fprintf(f, "\n");
        }
    }
    fprintf(f, "unset multiplot\n");
    if (fclose(f) != 0) return -1;
    return 0;
}

/* Run gnuplot on figN.gp if it is installed; keep the CSV either way. */
static void plot(const char *dir, int fig, int gnuplot)
{
    char script[32];
    if (!gnuplot) return;
    snprintf(script, sizeof script, "fig%d.gp", fig);
    run_gnuplot(dir, script);
}

/* ---- summary ------------------------------------------------------------------------------ */

static ex_tally tally;

/* The untrained model's gap F(0) - F* (hinge(0) = 1, h(0) = 0). */
static double f0gap_of(const problem *p, int r) { return 1.0 - p->fstar[r]; }
/* Better than not training: the curve's final training accuracy above the majority class's by
 * two standard errors over seeds (accuracy, not the hinge objective: a model can classify
 * well at an objective above F(0)). */
static int useful(const problem *p, const curve *c)
{
    return ex_useful(&tally, -c->acc_final, c->acc_final_se, -p->majority);
}
static int no_better_than_majority(const problem *p, const curve *c)
{
    return !clearly_less(p->majority, 0.0, c->acc_final, c->acc_final_se);
}

/* Fig 1 / Fig 3 at equal gradient evaluations (every method's own 3-epoch
 * horizon: 3q/iota rounds x iota n active nodes = 3 q n gradients): the final
 * gap increases with iota, and (Fig 1) the baseline is last. Each step of the
 * ordering must hold by two standard errors (independent seeds). */
static void check_order(const char *fig, const problem *p, int r, int ie,
                        curve (*res)[N_METHODS][N_EPS])
{
    char what[320];
    int nm = REG_METHODS[r], ok = 1, signal = 0, len = 0;
    for (int k = 0; k < nm; k++) {
        const curve *c = &res[r][k][ie], *prev = &res[r][k ? k - 1 : 0][ie];
        len += snprintf(what + len, sizeof what - (size_t)len, "%s%s %.3e+-%.1e", k ? " < " : "",
                        METHODS[k].label, c->final_mean, c->final_se);
        if (k && !ex_less(&tally, prev->final_mean, prev->final_se, c->final_mean, c->final_se)) ok = 0;
        signal |= useful(p, c);
    }
    ex_claim(&tally, ok, signal, fig, "%-12s equal gradient evaluations (3 epochs): %s", p->name, what);
}

/* Fig 1 at equal rounds (the baseline's horizon 3q): both iota beat the
 * baseline ("faster convergence"). Also reports how far every curve first
 * climbs above F(0) - F* (F(0) = 1 for the hinge loss, h(0) = 0). */
static void check_equal_rounds(const char *fig, const problem *p, int r, int ie,
                               curve (*res)[N_METHODS][N_EPS])
{
    const curve *b = &res[r][2][ie];
    for (int k = 0; k < 2; k++) {
        const curve *c = &res[r][k][ie];
        ex_claim(&tally, ex_less(&tally, c->eq_mean, c->eq_se, b->final_mean, b->final_se),
           useful(p, c) || useful(p, b), fig,
           "%-12s equal rounds (%lld): %s %.3e+-%.1e < baseline %.3e+-%.1e", p->name,
           (long long)c->eq_round, METHODS[k].label, c->eq_mean, c->eq_se, b->final_mean,
           b->final_se);
    }
    printf("  %-19s %-6s %-12s F(0) - F* = %.3e; peak of the mean curve:", "INFO", fig, p->name,
           f0gap_of(p, r));
    for (int k = 0; k < N_METHODS; k++) {
        const curve *c = &res[r][k][ie];
        int at = 0;
        for (int j = 1; j < c->ngrid; j++)
            if (c->gap_mean[j] > c->gap_mean[at]) at = j;
        printf(" %s %.3e at round %lld;", METHODS[k].label, c->gap_mean[at], (long long)c->grid[at]);
    }
    printf(" (the noise in the early dual-averaging steps: see docs/reproductions.md)\n");
}

/* Fig 2 / Fig 4: for every method the final gap decreases as epsilon grows
 * (every adjacent pair by two standard errors, fresh seeds per epsilon);
 * Fig 2 also: both iota beat the baseline at every epsilon. */
static void check_sweep(const char *fig, const problem *p, int r, curve (*res)[N_METHODS][N_EPS])
{
    char what[320];
    for (int k = 0; k < REG_METHODS[r]; k++) {
        int ok = 1, signal = 0, len;
        len = snprintf(what, sizeof what, "%s decreasing in eps:", METHODS[k].label);
        for (int ie = 0; ie < N_EPS; ie++) {
            const curve *c = &res[r][k][ie], *prev = &res[r][k][ie ? ie - 1 : 0];
            len += snprintf(what + len, sizeof what - (size_t)len, " %.2e", c->final_mean);
            if (ie && !ex_less(&tally, c->final_mean, c->final_se, prev->final_mean, prev->final_se))
                ok = 0;
            signal |= useful(p, c);
        }
        ex_claim(&tally, ok, signal, fig, "%-12s %s", p->name, what);
        len = snprintf(what, sizeof what, "%s accuracy:", METHODS[k].label);
        for (int ie = 0; ie < N_EPS; ie++)
            len += snprintf(what + len, sizeof what - (size_t)len, " %.4f", res[r][k][ie].acc_final);
        printf("  %-19s %-6s %-12s %s\n", "INFO", fig, p->name, what);
    }
    if (REG_METHODS[r] == N_METHODS) {
        for (int k = 0; k < 2; k++) {
            int ok = 1, signal = 0, worst = -1;
            for (int ie = 0; ie < N_EPS; ie++) {
                const curve *c = &res[r][k][ie], *b = &res[r][2][ie];
                if (!ex_less(&tally, c->final_mean, c->final_se, b->final_mean, b->final_se))
                    ok = 0, worst = worst < 0 ? ie : worst;
                signal |= useful(p, c) || useful(p, b);
            }
            if (ok) {
                ex_claim(&tally, 1, signal, fig, "%-12s %s beats the baseline at every eps", p->name,
                         METHODS[k].label);
                continue;
            }
            const curve *c = &res[r][k][worst], *b = &res[r][2][worst];
            ex_claim(&tally, 0, signal, fig,
                     "%-12s %s beats the baseline at every eps (not at eps=%.1f: %.3e+-%.1e vs "
                     "%.3e+-%.1e)", p->name, METHODS[k].label, EPS_SWEEP[worst], c->final_mean,
                     c->final_se, b->final_mean, b->final_se);
        }
    }
}

static void print_privacy(const problem *p, int r, int k, int ie, const curve *c)
{
    printf("  %-13s %s %-8s eps=%.1f  T=%-7lld gap=%.3e  sigma=%-7.4g %s: eps=%.4f "
           "delta=%.3g %-7s  %s: eps=%.4g\n",
           p->name, REG_NAME[r], METHODS[k].label, EPS_SWEEP[ie], (long long)c->rounds,
           c->final_mean, c->sigma, c->source_paper, c->eps_paper, c->delta_paper,
           c->paper_valid ? "valid" : "INVALID", c->source_rigorous, c->eps_rigorous);
    if (c->stopped)
        printf("  %-13s   (the budget guard stopped a seed after %lld rounds)\n", p->name,
               (long long)c->stopped);
}

/* Plain sentences for a newcomer: what the paper's noise rule really costs in
 * privacy, and what the method gives at an honest epsilon (Fig. 1's epsilon). */
static void explain(const problem *probs, int nprob, const int *fig_on,
                    curve (*res)[4][2][N_METHODS][N_EPS])
{
    if (!fig_on[1]) return;
    printf("== in plain words (Fig. 1, L2-SVM, eps = %.1f; privacy figures name their accountant)\n",
           EPS_SWEEP[EPS_08]);
    for (int pi = 0; pi < nprob; pi++) {
        const curve *pa = &res[0][pi][REG_L2][0][EPS_08], *pb = &res[0][pi][REG_L2][2][EPS_08];
        const curve *ra = &res[1][pi][REG_L2][0][EPS_08], *rb = &res[1][pi][REG_L2][2][EPS_08];
        double f0gap = 1.0 - probs[pi].fstar[REG_L2];
        printf("  * %s: with the paper's noise rule, the sampled variant (iota = 0.1) ends at gap "
               "%.3g against the baseline's %.3g%s, but %s the %s accountant puts the "
               "privacy actually spent at eps = %.3g (at the paper's delta_0 = 0.01)%s (the baseline's: %.3g).\n",
               probs[pi].name, pa->final_mean, pb->final_mean,
               clearly_less(pa->final_mean, pa->final_se, pb->final_mean, pb->final_se)
                   ? " (the paper's ordering)" : " (not the paper's ordering)",
               pa->paper_valid ? "while the paper's theorem claims eps = 0.8," :
                                 "the paper's privacy theorem does not apply to a run this short, and",
               pa->source_rigorous, pa->eps_rigorous,
               pa->eps_rigorous > 10 ? ", i.e. no meaningful privacy" : "", pb->eps_rigorous);
        printf("  * %s: at a real eps = %.1f (delta = %.2g, far below 1/n = %.2g; sigma calibrated by "
               "the %s accountant) iota = 0.1 reaches training accuracy %.4f +- %.4f (gap %.3g) and "
               "the baseline %.4f (gap %.3g); not training (always the majority label) scores %.4f "
               "(gap %.3g), so the private model is %s.\n",
               probs[pi].name, EPS_SWEEP[EPS_08], run_delta(&probs[pi], DPDO_NOISE_RIGOROUS),
               1.0 / (double)dpdo_dataset_rows(probs[pi].ds), ra->source_rigorous, ra->acc_final,
               ra->acc_final_se, ra->final_mean, rb->acc_final, rb->final_mean, probs[pi].majority,
               f0gap,
               no_better_than_majority(&probs[pi], ra)
                   ? "no better than not training"
                   : "better than not training (by two standard errors over seeds)");
        if (ra->stopped > 0) /* the guard's allowance, not the data, ended the run */
            printf("    (the iota = 0.1 run stopped after %lld of its %lld rounds: the library's budget "
                   "guard ends a run before any node could exceed eps = %.1f, and here it stops early, at "
                   "eps = %.3g by the %s accountant: a known accountant defect, see docs/reproductions.md)\n",
                   (long long)ra->stopped, (long long)ra->rounds, EPS_SWEEP[EPS_08], ra->eps_rigorous,
                   ra->source_rigorous);
    }
    printf("  * what to use: the calibrated noise (options.noise_mode = DPDO_NOISE_RIGOROUS, the library's "
           "default), whose eps the accountant guarantees; the paper's rule only to reproduce the paper's "
           "curves (docs/privacy.md).\n");
}

/* ---- main ----------------------------------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr,
            "usage: dp_dda_svm [--quick] [--figs 1,2,3,4] [--seeds K] [--out DIR] [--reproducible]\n"
            "                  [--epsilon FILE] [--rcv1 FILE] [--noise both|paper|rigorous]\n"
            "                  [--paper-scale] [--fashion DIR] [--text FILE] [--real]\n"
            "                  [--seed S] [--no-fail-exit] [--plant-contrary]\n"
            "  --seed S        replay a run (default: a fresh base seed each run, printed)\n"
            "  --no-fail-exit  exit 0 even when a check FAILs (exploration)\n"
            "  --plant-contrary  feed every check a contrary result (tests: every check must FAIL)\n"
            "  --quick         small instance of Fig 1 (the demo; under 2 minutes)\n"
            "  --figs LIST     figures to reproduce (default 1,2,3,4; --quick: 1)\n"
            "  --seeds K       seeds averaged per curve (default 3)\n"
            "  --out DIR       output directory (default build/dp_dda_svm)\n"
            "  --epsilon FILE  the LIBSVM epsilon file instead of the synthetic epsilon-like set\n"
            "  --rcv1 FILE     the LIBSVM rcv1.binary file instead of the synthetic rcv1-like set\n"
            "  --noise MODE    both (default), paper (Theorem 1, as in the paper), rigorous\n"
            "                  (sigma calibrated by the tightest sound accountant to (eps, 0.01)),\n"
            "                  or none (diagnostic: the same runs without noise)\n"
            "  --paper-scale   the paper's sizes on the synthetic sets (epsilon-like q 20000, d 2000;\n"
            "                  rcv1-like q 33869, d 47236): 6.4 GB and hours, see docs/reproductions.md\n"
            "  --fashion DIR   add the real dense task Fashion-MNIST pullover vs coat (IDX files in DIR)\n"
            "  --text FILE     add the real sparse task FILE (LIBSVM, e.g. build/data/debian-text.svm)\n"
            "  --real          both: --fashion " EX_FASHION_DIR " --text build/data/debian-text.svm\n");
}

int main(int argc, char **argv)
{
    const char *out = "build/dp_dda_svm", *eps_file = NULL, *rcv1_file = NULL, *figs_arg = NULL;
    const char *fashion_dir = NULL, *text_file = NULL;
    int quick = 0, seeds = -1, fig_on[5] = {0}, paper_scale = 0, noise_arg = 0, no_fail_exit = 0;
    int plant = 0;
    unsigned long long base_seed = ex_fresh_seed();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick")) quick = 1;
        else if (!strcmp(a, "--seed") && v) base_seed = strtoull(v, NULL, 10), i++;
        else if (!strcmp(a, "--no-fail-exit")) no_fail_exit = 1;
        else if (!strcmp(a, "--plant-contrary")) plant = 1;
        else if (!strcmp(a, "--reproducible")) g_reproducible = 1;
        else if (!strcmp(a, "--figs") && v) figs_arg = v, i++;
        else if (!strcmp(a, "--seeds") && v) seeds = atoi(v), i++;
        else if (!strcmp(a, "--out") && v) out = v, i++;
        else if (!strcmp(a, "--epsilon") && v) eps_file = v, i++;
        else if (!strcmp(a, "--rcv1") && v) rcv1_file = v, i++;
        else if (!strcmp(a, "--paper-scale")) paper_scale = 1;
        else if (!strcmp(a, "--fashion") && v) fashion_dir = v, i++;
        else if (!strcmp(a, "--text") && v) text_file = v, i++;
        else if (!strcmp(a, "--real"))
            fashion_dir = EX_FASHION_DIR, text_file = "build/data/debian-text.svm";
        else if (!strcmp(a, "--noise") && v && !strcmp(v, "paper"))
            noise_mode = DPDO_NOISE_PAPER, noise_arg = 1, i++;
        else if (!strcmp(a, "--noise") && v && !strcmp(v, "rigorous"))
            noise_mode = DPDO_NOISE_RIGOROUS, noise_arg = 1, i++;
        else if (!strcmp(a, "--noise") && v && !strcmp(v, "both")) noise_arg = 0, i++;
        else if (!strcmp(a, "--noise") && v && !strcmp(v, "none")) /* diagnostic: no noise */
            noise_mode = DPDO_NOISE_NONE, noise_arg = 1, i++;
        else {
            usage();
            return strcmp(a, "--help") && strcmp(a, "-h") ? 2 : 0;
        }
    }
    printf("randomness: %s\n", ex_randomness(g_reproducible));
    printf("base seed: %llu (fresh each run; --seed %llu replays this run's data and sampling)\n",
           base_seed, base_seed);
    if (seeds < 0) seeds = 3;
    tally.one_seed = seeds < 2;
    tally.plant = plant;
    ex_tally total = tally;
    if (seeds < 1 || seeds > 64) {
        fprintf(stderr, "--seeds must be in [1, 64]\n");
        return 2;
    }
    for (const char *s = figs_arg ? figs_arg : quick ? "1" : "1,2,3,4"; *s; s++) {
        if (*s >= '1' && *s <= '4') fig_on[*s - '0'] = 1;
        else if (*s != ',') {
            usage();
            return 2;
        }
    }

    /* Scale. With Theorem 1's sigma and a 3-epoch horizon, the noise part of
     * the gap grows like d iota^2 / (q^2 eps^2) (Cor. 3.5), so a smaller
     * instance behaves like the paper's only if d / q^2 stays near the
     * paper's: 5e-6 for epsilon (d 2000, q 20000) and 4e-5 for rcv1 (d 47236,
     * q 33869). Shrinking q alone makes every curve noise-dominated. */
    const scale sc = paper_scale ? (scale){20000, 2000, 33869, 47236, 0.0016} /* the paper's */
                     : quick     ? (scale){2000, 20, 1500, 100, 0.1}    /* d/q^2 5e-6, 4.4e-5 */
                                 : (scale){3000, 50, 3500, 500, 0.02}; /* 5.6e-6, 4.1e-5 */

    static problem probs[4];
    int nprob = 0, status = 1;
    double t_start = now();
    if (make_dirs(out)) return 1;
    if (problem_init(&probs[nprob++], eps_file ? "epsilon" : "epsilon-like", eps_file,
                     sc.q_dense, sc.d_dense, 0.0016))
        goto done;
    if (problem_init(&probs[nprob++], rcv1_file ? "rcv1" : "rcv1-like", rcv1_file, sc.q_sparse,
                     sc.d_sparse, sc.density))
        goto done;
    if (fashion_dir && problem_init(&probs[nprob++], "fashion-2c", fashion_dir, 0, 0, 0.0))
        goto done;
    if (text_file && problem_init(&probs[nprob++], "debian-text", text_file, 0, 0, 0.0)) goto done;

    /* Both noise rules by default: the paper's (Theorem 1) and sigma calibrated
     * by the tightest sound accountant to the same nominal epsilon. */
    int modes[2] = {DPDO_NOISE_PAPER, DPDO_NOISE_RIGOROUS}, nmodes = 2;
    if (noise_arg) modes[0] = noise_mode, nmodes = 1;
    static curve res[2][4][2][N_METHODS][N_EPS]; /* [mode][data][reg][method][eps] */
    for (int mi = 0; mi < nmodes; mi++) {
    noise_mode = modes[mi];
    tally = (ex_tally){0, 0, 0, 0, tally.one_seed, plant}; /* verdicts per noise rule */
    curve (*R)[2][N_METHODS][N_EPS] = res[mi];
    char dir[1024];
    snprintf(dir, sizeof dir, "%s%s", out,
             nmodes == 1 ? "" : noise_mode == DPDO_NOISE_PAPER ? "/paper" : "/rigorous");
    if (make_dirs(dir)) goto done;
        /* Which (regularizer, epsilon) curves the requested figures need. */
        int need[2][N_EPS] = {{0}};
        for (int ie = 0; ie < N_EPS; ie++) {
            need[REG_L2][ie] = fig_on[2] || (fig_on[1] && ie == EPS_08);
            need[REG_L1][ie] = fig_on[4] || (fig_on[3] && ie == EPS_04);
        }
        for (int pi = 0; pi < nprob; pi++)
            for (int r = 0; r < 2; r++) {
                int any = 0;
                for (int ie = 0; ie < N_EPS; ie++) any |= need[r][ie];
                if (!any) continue;
                if (isnan(probs[pi].fstar[r]) && find_fstar(&probs[pi], r)) goto done;
                for (int k = 0; k < REG_METHODS[r]; k++)
                    for (int ie = 0; ie < N_EPS; ie++)
                        if (need[r][ie] &&
                            run_curve(&probs[pi], r, &METHODS[k], EPS_SWEEP[ie], seeds,
                                      /* fresh seeds for every (data, reg, method, eps) */
                                      base_seed + (uint64_t)((((pi * 2 + r) * N_METHODS + k) * N_EPS + ie) * 64),
                                      three_epochs(&probs[pi], &METHODS[2]), &R[pi][r][k][ie]))
                            goto done;
            }

        /* Files and plots. */
        int gnuplot = have_gnuplot();
        for (int fig = 1; fig <= 4; fig++) {
            if (!fig_on[fig]) continue;
            int r = fig <= 2 ? REG_L2 : REG_L1;
            int rc = fig == 1   ? write_curves_csv(dir, 1, probs, nprob, r, EPS_08, R)
                     : fig == 3 ? write_curves_csv(dir, 3, probs, nprob, r, EPS_04, R)
                                : write_sweep_csv(dir, fig, probs, nprob, r, R);
            if (rc || write_gnuplot(dir, fig, probs, nprob, r)) goto done;
            plot(dir, fig, gnuplot);
        }

        /* Summary: the paper's orderings, then the privacy of every curve. */
        printf("== DP-DDA paper figures: %s noise, %d seeds per curve, %.0f s\n", NOISE_NAME(), seeds,
               now() - t_start);
        for (int pi = 0; pi < nprob; pi++) {
            printf("  %-13s n = %d, q = %lld per node, d = %lld", probs[pi].name, NODES,
                   (long long)probs[pi].q, (long long)probs[pi].d);
            for (int r = 0; r < 2; r++)
                if (!isnan(probs[pi].fstar[r])) printf("; F*(%s) = %.8f", REG_NAME[r], probs[pi].fstar[r]);
            printf("\n");
        }
        printf("== the paper's orderings (docs/reproductions.md), each step by %g standard errors over "
               "independent seeds\n", EX_MARGIN_SE);
        for (int pi = 0; pi < nprob; pi++) {
            if (fig_on[1]) check_order("fig1", &probs[pi], REG_L2, EPS_08, R[pi]);
            if (fig_on[1]) check_equal_rounds("fig1", &probs[pi], REG_L2, EPS_08, R[pi]);
            if (fig_on[2]) check_sweep("fig2", &probs[pi], REG_L2, R[pi]);
            if (fig_on[3]) check_order("fig3", &probs[pi], REG_L1, EPS_04, R[pi]);
            if (fig_on[4]) check_sweep("fig4", &probs[pi], REG_L1, R[pi]);
        }
        ex_tally_print(&tally);
        total.pass += tally.pass, total.fail += tally.fail;
        total.not_reproduced += tally.not_reproduced, total.no_signal += tally.no_signal;

        printf("== per curve: final gap after 3 epochs (T rounds), noise sigma, privacy spent by the\n"
               "   paper's Theorem 1 bound (Remark 3.1 at the delta its proof gives) and by the sound\n"
               "   accountant named on each line (worst node, at delta = %s, active set public)\n",
               DELTA_TEXT());
        const char *notes = "";
        for (int pi = 0; pi < nprob; pi++)
            for (int r = 0; r < 2; r++)
                for (int k = 0; k < REG_METHODS[r]; k++)
                    for (int ie = 0; ie < N_EPS; ie++)
                        if (R[pi][r][k][ie].done) {
                            print_privacy(&probs[pi], r, k, ie, &R[pi][r][k][ie]);
                            if (!R[pi][r][k][ie].paper_valid && !*notes) notes = R[pi][r][k][ie].notes;
                        }
        if (*notes && quick) /* the demo: a pointer instead of the library's technical notes */
            printf("  the paper's bound is INVALID here (T is below the theorem's T_min, and its "
                   "per-step epsilon is >= 1): see docs/algorithms/dp-dda.md\n");
        else if (*notes) printf("  paper bound notes (first invalid curve): %s\n", notes);
        printf("== output in %s: ", dir);
        for (int fig = 1; fig <= 4; fig++)
            if (fig_on[fig]) {
                printf("fig%d.csv ", fig);
                if (gnuplot) printf("fig%d.png ", fig);
            }
        printf("\n");
        if (!gnuplot) printf("   (gnuplot not found: no PNG plots; the .gp scripts are written)\n");
    }
    if (nmodes == 2) explain(probs, nprob, fig_on, res);
    printf("== all checks of this run (%s)\n", nmodes == 2 ? "both noise rules" : NOISE_NAME());
    ex_tally_print(&total);
    status = ex_exit_status(&total, no_fail_exit);
done:
    for (int pi = 0; pi < nprob; pi++) problem_free(&probs[pi]);
    return status;
}
