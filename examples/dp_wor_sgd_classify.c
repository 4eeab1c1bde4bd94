/* SPDX-License-Identifier: BSD-3-Clause */
/* dp_wor_sgd_classify: reproduce Figures 1-4 and Tables I-II of Jin, He, Dai,
 * "Decentralized Differentially Private Without-Replacement Stochastic
 * Gradient Descent" (DP-WOR-SGD, Algorithms 1 and 2) with libdpdo's
 * "dp-wor-sgd" and "dp-sgd-wr" algorithms (spec shared/spec/dp-wor-sgd.md §6).
 *
 *   Fig 1  Covertype, convex:          test accuracy against epsilon, M = 10
 *   Fig 2  Covertype, strongly convex: the same
 *   Fig 3  MNIST, convex:              the same
 *   Fig 4  MNIST, strongly convex:     the same
 *   Table I   Covertype: test accuracy against the node count M, eps = 1
 *   Table II  MNIST:     the same
 *
 * Task: one-vs-all L2-regularised logistic regression (spec §1.5): K binary
 * models (K = 10 for (Fashion-)MNIST, 7 for Covertype), model k trained on
 * y = +1 for class k and -1 otherwise, each an independent run of Alg. 1 (+
 * Alg. 2) with its own local/global models, DQNs, permutations and noise;
 * prediction argmax_k <w_k, x> (ties: lowest k), scored with the released
 * global models w_k^G. Convex: lambda = 0, L = 1, eta = 0.1. Strongly convex:
 * lambda = 1e-4, L = 1 + lambda R = 2 (R = 1/lambda), eta_t = min(1/(2 mu),
 * 1/(a gamma t)) with a = 0.05 (spec §2.2 default; = 1/(2 mu) = 0.49995
 * throughout). b = 50, delta = 1/n^2 with n = M n_m the total sample count,
 * one pass over each node's data (schedule S2).
 *
 * Curves (spec §6.3):
 *   Noiseless        always-global, noise off ("fully collaborative and noiseless"), trained
 *                    to convergence and checked against scikit-learn on the same rows
 *                    (scripts/check-wor-sklearn.py; see g_nl_passes below)
 *   DP-Deep-Q        Algorithm 1 with the DQN controller of Algorithm 2, Theorem 2 noise
 *   DP-Fully-collab  always-global, Theorem 2 noise
 *   DP-SGD-WR        the with-replacement baseline of spec §6.4 (each row used <= 5 times,
 *                    each iteration (eps/5, delta/5)-DP)
 *
 * Data (spec §6.1): Fashion-MNIST from Debian's dataset-fashion-mnist
 * (/usr/share/datasets/fashion-mnist) as the MNIST stand-in, or the real MNIST
 * IDX files with --mnist DIR; pixels/255, centred, PCA to 50 dimensions, rows
 * projected onto the unit sphere, all fitted on the training split. Covertype:
 * the synthetic "covtype-like" set (54 features, 7 classes), or the real file
 * with --covtype FILE (LIBSVM, or CSV with the class in the last column when
 * the name ends in .csv or .data), 80/20 random split; z-scored and projected
 * onto the unit sphere (fitted on the training part). Each node draws n_m
 * training rows (disjoint while M n_m <= the training size, else independent
 * draws, which may overlap: spec §6.1).
 *
 * Privacy, printed both ways for every DP curve: the paper's figure (Theorem 2:
 * (eps, delta) per binary model and pass; the paper stops there) composed by us
 * over the K models (K eps, K delta), and the sound accountant over ONE
 * ledger shared by the K models of a run, i.e. composed over the K models
 * (each node: one Gaussian release per model and pass). Neither covers the
 * Local/Global timing chosen by the DQN from private losses, nor the
 * preprocessing statistics fitted on the training data (spec §4.5).
 *
 * Output (in --out DIR): fig1..4.csv/.gp/.png, table1..2.csv/.gp/.png, progress
 * on stderr, and on stdout the scale used, the paper's orderings with
 * PASS / FAIL / NO-SIGNAL (examples/common.h, docs/reproductions.md), the
 * privacy of every curve, and last the tally. Exit status 1 when a check FAILs
 * (0 with --no-fail-exit) or on a library error, 2 on bad usage.
 *
 * Usage: dp_wor_sgd_classify [--quick | --full] [--nm N] [--seeds K] [--out DIR]
 *                            [--mnist DIR] [--covtype FILE] [--fashion DIR]
 *                            [--only figs|tables|noiseless] [--sklearn PATH|none]
 *                            [--control-seeds K]
 * (the Figures' Deep-Q and coin-flip curves run max(10, K) seeds per point by default, the other
 * curves K: "Deep-Q > coin flip" is a small effect, if any) */
#include <stdint.h>
#include <unistd.h>
#define EX_PROG "dp_wor_sgd_classify"
#include "common.h"

#define B 50            /* mini-batch size b (paper) */
/* --noise: DPDO_NOISE_PAPER (Theorem 2, default) or DPDO_NOISE_RIGOROUS (each
 * binary model's sigma calibrated by the accountant to the same (eps, delta)) */
static int g_noise = DPDO_NOISE_PAPER;
#define M_FIG 10        /* nodes in Figures 1-4 (paper V-A) */
#define LAMBDA 1e-4     /* strongly convex setting */
#define A_MIN 0.05      /* a in eta_t = 1/(a gamma t) (spec §2.2) */
#define MAX_EPS 10
#define MAX_M 5
#define MAX_SEEDS 16
#define KMAX 16

/* RANDOM is not in the paper: Algorithm 1 with a coin-flip controller (Global
 * with probability 1/2), the control that tells whether the DQN learns. */
enum { NOISELESS = 0, DQN = 1, FULLY = 2, WR = 3, RANDOM = 4, N_METHODS = 5 };
/* --reproducible: DPDO_RANDOMNESS_REPRODUCIBLE (bit-identical reruns); default secure */
static int g_reproducible = 0;
static uint64_t g_base_seed = 1; /* --seed, or fresh from the operating system (main) */
/* The Noiseless curve runs to convergence: noise-free, so no privacy limits its passes over each
 * node's data; it stops when its training objective fell by less than NL_TOL (relative) over
 * NL_CHUNK passes, or at --noiseless-passes (the cap), and its accuracy is compared with converged
 * one-vs-all logistic regressions on the same rows. The DP curves make the paper's one pass. */
static int g_nl_passes = 5000;
#define NL_MU(setting) (0.25 + ((setting) == STRONG ? LAMBDA : 0.0)) /* smoothness, Noiseless */
#define NL_CHUNK 25    /* the Noiseless run checks its objective every NL_CHUNK passes ... */
#define NL_TOL 1e-5    /* ... and stops when it fell by less than NL_TOL (relative) over them */
/* The outside reference for the Noiseless curve: each figure's Noiseless runs write the rows
 * their nodes hold, the test rows and both models (the run's and the library reference
 * solver's) to OUT/rows-*.bin, and scripts/check-wor-sklearn.py fits scikit-learn's one-vs-rest
 * logistic regression on them (--sklearn SCRIPT; "none" skips it). */
static const char *g_out = "build/dp_wor_sgd_classify";
static const char *g_sklearn = "scripts/check-wor-sklearn.py";
static int g_keep_rows = 0; /* --keep-rows: keep OUT/rows-*.bin after a successful comparison */

static const char *const METHOD_NAME[N_METHODS] = {"Noiseless", "DP-Deep-Q", "DP-Fully-collab",
                                                   "DP-SGD-WR", "DP-Random-1/2"};
enum { CONVEX = 0, STRONG = 1 };
static const char *const SETTING_NAME[2] = {"convex", "strongly-convex"};


/* ---- data ------------------------------------------------------------------------------ */

/* A preprocessed classification problem: dense unit-norm rows, class ids 0..K-1,
 * and K binary datasets (labels +-1 for one-vs-all) that borrow the same rows. */
typedef struct {
    char name[64];
    int64_t ntr, nte, d;
    int K;
    double *Xtr, *Xte;
    int32_t *ctr, *cte;
    double *y[KMAX];
    dpdo_dataset *cls[KMAX];
    dpdo_loss *loss;
    double t_prep; /* seconds spent loading and preprocessing */
} problem;

/* Copy a dataset's rows and class ids into fresh arrays. */
static int extract(dpdo_dataset *ds, double **X, int32_t **c)
{
    int64_t n = dpdo_dataset_rows(ds), d = dpdo_dataset_features(ds);
    *X = malloc(sizeof(double) * (size_t)(n * d));
    *c = malloc(sizeof(int32_t) * (size_t)n);
    if (!*X || !*c) return -1;
    for (int64_t i = 0; i < n; i++)
        if (dpdo_dataset_get_row(ds, i, *X + i * d, d)) return -1;
    if (dpdo_dataset_has_classes(ds)) return dpdo_dataset_get_classes(ds, *c, n) ? -1 : 0;
    double *y = malloc(sizeof(double) * (size_t)n); /* labels as classes */
    if (!y || dpdo_dataset_get_labels(ds, y, n)) return free(y), -1;
    for (int64_t i = 0; i < n; i++) (*c)[i] = (int32_t)llround(y[i]);
    free(y);
    return 0;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int make_ds(dpdo_dataset **ds, const double *X, const int32_t *c, int64_t n, int64_t d)
{
    double *y = malloc(sizeof(double) * (size_t)n);
    if (!y) return -1;
    for (int64_t i = 0; i < n; i++) y[i] = c[i];
    int rc = dpdo_dataset_create(ds);
    if (!rc) rc = dpdo_dataset_set_dense(*ds, n, d, X, y, DPDO_COPY);
    if (!rc) rc = dpdo_dataset_set_classes(*ds, c, n);
    if (rc) fprintf(stderr, "dataset: %s\n", dpdo_dataset_errmsg(*ds));
    free(y);
    return rc ? -1 : 0;
}

/* Fit `t` on train (already configured by the caller's pipeline), apply it to train and
 * test, and fill the problem's arrays; then remap class ids to 0..K-1 and build the K
 * binary datasets. Takes ownership of nothing. */
static int finish_problem(problem *p, dpdo_transform *t, dpdo_dataset *tr, dpdo_dataset *te)
{
    int status = -1;
    dpdo_dataset *otr = NULL, *ote = NULL;
    TRY(dpdo_dataset_create(&otr), "out of memory");
    TRY(dpdo_dataset_create(&ote), "out of memory");
    TRY(dpdo_transform_apply(t, tr, otr), dpdo_dataset_errmsg(otr));
    TRY(dpdo_transform_apply(t, te, ote), dpdo_dataset_errmsg(ote));
    p->ntr = dpdo_dataset_rows(otr), p->nte = dpdo_dataset_rows(ote), p->d = dpdo_dataset_features(otr);
    if (extract(otr, &p->Xtr, &p->ctr) || extract(ote, &p->Xte, &p->cte)) {
        fprintf(stderr, "%s: extracting rows failed\n", p->name);
        goto fail;
    }
    /* class ids -> 0..K-1 in increasing order */
    int32_t ids[KMAX];
    int K = 0;
    for (int part = 0; part < 2; part++) {
        int64_t n = part ? p->nte : p->ntr;
        int32_t *c = part ? p->cte : p->ctr;
        for (int64_t i = 0; i < n; i++) {
            int k = 0;
            while (k < K && ids[k] != c[i]) k++;
            if (k == K) {
                if (K == KMAX) {
                    fprintf(stderr, "%s: more than %d classes\n", p->name, KMAX);
                    goto fail;
                }
                int j = K++;
                while (j > 0 && ids[j - 1] > c[i]) ids[j] = ids[j - 1], j--;
                ids[j] = c[i];
            }
        }
    }
    for (int part = 0; part < 2; part++) {
        int64_t n = part ? p->nte : p->ntr;
        int32_t *c = part ? p->cte : p->ctr;
        for (int64_t i = 0; i < n; i++) {
            int k = 0;
            while (ids[k] != c[i]) k++;
            c[i] = k;
        }
    }
    p->K = K;
    for (int k = 0; k < K; k++) {
        p->y[k] = malloc(sizeof(double) * (size_t)p->ntr);
        if (!p->y[k]) goto fail;
        for (int64_t i = 0; i < p->ntr; i++) p->y[k][i] = p->ctr[i] == k ? 1.0 : -1.0;
        TRY(dpdo_dataset_create(&p->cls[k]), "out of memory");
        TRY(dpdo_dataset_set_dense(p->cls[k], p->ntr, p->d, p->Xtr, p->y[k], DPDO_BORROW),
            dpdo_dataset_errmsg(p->cls[k]));
    }
    TRY(dpdo_loss_create(&p->loss, dpdo_loss_type_find("logistic"), NULL, p->d), "logistic loss");
    status = 0;
fail:
    dpdo_dataset_destroy(otr);
    dpdo_dataset_destroy(ote);
    return status;
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* (Fashion-)MNIST from the four IDX files in dir (gzip-compressed or not):
 * pixels/255 (the loader's default), centre, PCA to 50, unit rows. */
static int load_mnist(problem *p, const char *dir, const char *name)
{
    int status = -1;
    dpdo_dataset *tr = NULL, *te = NULL;
    dpdo_transform *t = NULL;
    char f[4][1200];
    static const char *const base[4] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                        "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
    double t0 = now();
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    for (int k = 0; k < 4; k++) {
        snprintf(f[k], sizeof f[k], "%s/%s.gz", dir, base[k]);
        if (!file_exists(f[k])) snprintf(f[k], sizeof f[k], "%s/%s", dir, base[k]);
    }
    fprintf(stderr, "%s: loading %s ...\n", name, dir);
    TRY(dpdo_dataset_create(&tr), "out of memory");
    TRY(dpdo_dataset_create(&te), "out of memory");
    TRY(dpdo_dataset_load_idx(tr, f[0], f[1], NULL), dpdo_dataset_errmsg(tr));
    TRY(dpdo_dataset_load_idx(te, f[2], f[3], NULL), dpdo_dataset_errmsg(te));
    TRY(dpdo_transform_create(&t), "out of memory");
    TRY(dpdo_transform_fit_center(t, tr), dpdo_transform_errmsg(t));
    TRY(dpdo_transform_fit_pca(t, tr, 50), dpdo_transform_errmsg(t));
    TRY(dpdo_transform_set_normalize_rows(t, 1), dpdo_transform_errmsg(t));
    double ev[50], tot = 0;
    if (dpdo_transform_explained_variance(t, ev, 50) == DPDO_OK)
        for (int k = 0; k < 50; k++) tot += ev[k];
    if (finish_problem(p, t, tr, te)) goto fail;
    p->t_prep = now() - t0;
    fprintf(stderr, "%s: %lld train / %lld test rows, PCA 784 -> %lld (%.1f%% of the variance), "
                    "%d classes  [%.1f s]\n",
            name, (long long)p->ntr, (long long)p->nte, (long long)p->d, 100 * tot, p->K, p->t_prep);
    status = 0;
fail:
    dpdo_transform_destroy(t);
    dpdo_dataset_destroy(tr);
    dpdo_dataset_destroy(te);
    return status;
}

/* Covertype: the real file (80/20 random split) or the synthetic covtype-like set
 * (ntr + nte rows from one generator run, the first ntr for training); z-score, unit rows. */
static int load_covtype(problem *p, const char *path, int64_t ntr_syn, int64_t nte_syn)
{
    int status = -1;
    dpdo_dataset *all = NULL, *tr = NULL, *te = NULL;
    dpdo_transform *t = NULL;
    double *X = NULL, *Xa = NULL, *Xb = NULL;
    int32_t *c = NULL, *ca = NULL, *cb = NULL;
    double t0 = now();
    memset(p, 0, sizeof *p);
    TRY(dpdo_dataset_create(&all), "out of memory");
    if (path) {
        dpdo_load_options lo;
        dpdo_load_options_init(&lo, sizeof lo);
        size_t len = strlen(path);
        int csv = (len > 4 && !strcmp(path + len - 4, ".csv")) ||
                  (len > 5 && !strcmp(path + len - 5, ".data")) ||
                  (len > 8 && !strcmp(path + len - 8, ".data.gz")) ||
                  (len > 7 && !strcmp(path + len - 7, ".csv.gz"));
        fprintf(stderr, "covtype: loading %s (%s) ...\n", path, csv ? "CSV, class last" : "LIBSVM");
        lo.layout = DPDO_LAYOUT_DENSE;
        if (csv) {
            lo.label_column = -1;
            TRY(dpdo_dataset_load_csv(all, path, &lo), dpdo_dataset_errmsg(all));
        } else {
            TRY(dpdo_dataset_load_libsvm(all, path, &lo), dpdo_dataset_errmsg(all));
        }
        snprintf(p->name, sizeof p->name, "covtype");
    } else {
        dpdo_generate_options g;
        dpdo_generate_options_init(&g, sizeof g);
        g.n = ntr_syn + nte_syn;
        g.seed = 2018;
        TRY(dpdo_dataset_generate(all, "covtype-like", &g), dpdo_dataset_errmsg(all));
        snprintf(p->name, sizeof p->name, "covtype-like");
    }
    int64_t n = dpdo_dataset_rows(all), d = dpdo_dataset_features(all);
    if (extract(all, &X, &c)) {
        fprintf(stderr, "%s: extracting rows failed\n", p->name);
        goto fail;
    }
    dpdo_dataset_destroy(all);
    all = NULL;
    int64_t na = path ? (int64_t)llround(0.8 * (double)n) : ntr_syn, nb = n - na;
    int64_t *perm = malloc(sizeof(int64_t) * (size_t)n);
    Xa = malloc(sizeof(double) * (size_t)(na * d)), Xb = malloc(sizeof(double) * (size_t)(nb * d));
    ca = malloc(sizeof(int32_t) * (size_t)na), cb = malloc(sizeof(int32_t) * (size_t)nb);
    if (!perm || !Xa || !Xb || !ca || !cb) {
        free(perm);
        goto fail;
    }
    uint64_t s = 77;
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    if (path) /* random split of the real file (spec G10: 80/20) */
        for (int64_t i = n - 1; i > 0; i--) {
            int64_t j = (int64_t)(splitmix(&s) % (uint64_t)(i + 1)), tmp = perm[i];
            perm[i] = perm[j], perm[j] = tmp;
        }
    for (int64_t i = 0; i < n; i++) {
        int64_t r = perm[i];
        if (i < na) memcpy(Xa + i * d, X + r * d, sizeof(double) * (size_t)d), ca[i] = c[r];
        else memcpy(Xb + (i - na) * d, X + r * d, sizeof(double) * (size_t)d), cb[i - na] = c[r];
    }
    free(perm);
    free(X), X = NULL;
    if (make_ds(&tr, Xa, ca, na, d) || make_ds(&te, Xb, cb, nb, d)) goto fail;
    TRY(dpdo_transform_create(&t), "out of memory");
    TRY(dpdo_transform_fit_standardize(t, tr), dpdo_transform_errmsg(t));
    TRY(dpdo_transform_set_normalize_rows(t, 1), dpdo_transform_errmsg(t));
    if (finish_problem(p, t, tr, te)) goto fail;
    p->t_prep = now() - t0;
    fprintf(stderr, "%s: %lld train / %lld test rows, d = %lld, %d classes  [%.1f s]\n", p->name,
            (long long)p->ntr, (long long)p->nte, (long long)p->d, p->K, p->t_prep);
    status = 0;
fail:
    free(X), free(c), free(Xa), free(Xb), free(ca), free(cb);
    dpdo_transform_destroy(t);
    dpdo_dataset_destroy(all);
    dpdo_dataset_destroy(tr);
    dpdo_dataset_destroy(te);
    return status;
}

static void problem_free(problem *p)
{
    for (int k = 0; k < p->K; k++) {
        dpdo_dataset_destroy(p->cls[k]);
        free(p->y[k]);
    }
    dpdo_loss_destroy(p->loss);
    free(p->Xtr), free(p->Xte), free(p->ctr), free(p->cte);
}

/* Test accuracy (%) of the one-vs-all models W[K][d]: argmax_k <w_k, x>, ties to the lowest k. */
static double accuracy(const problem *p, const double *W)
{
    int64_t ok = 0, d = p->d;
    for (int64_t i = 0; i < p->nte; i++) {
        const double *x = p->Xte + i * d;
        int best = 0;
        double bs = -INFINITY;
        for (int k = 0; k < p->K; k++) {
            double s = 0;
            for (int64_t j = 0; j < d; j++) s += W[k * d + j] * x[j];
            if (s > bs) bs = s, best = k;
        }
        ok += best == p->cte[i];
    }
    return 100.0 * (double)ok / (double)p->nte;
}

/* ---- one run: K binary models on M nodes ------------------------------------------------ */

typedef struct {
    double acc[MAX_SEEDS];
    int nseeds;
    double mean, sd, se; /* accuracy over the seeds: mean, sample s.d., standard error */
    double sigma_model;        /* Theorem 2's model-level noise std of a Global step (first) */
    double eps_model, delta_model; /* the paper's figure per binary model and pass */
    int paper_valid;
    double eps_rig;            /* RDP accountant over the K models' shared ledger, at delta_model */
    double eps_rig_K;          /* the same at K delta_model (to compare with basic composition) */
    double acc_ref[MAX_SEEDS]; /* Noiseless only: a converged one-vs-all logistic regression on the
                                  same rows (the library's reference solver), test accuracy (%) */
    double ref_mean, ref_se;
    double sk_mean, sk_se;     /* Noiseless, figures: scikit-learn on the same rows (NaN: not run) */
    int64_t nl_passes[KMAX];   /* Noiseless: passes run by each binary model (last seed) */
    char rows_file[MAX_SEEDS][160]; /* the rows-*.bin file of each seed (figures' Noiseless) */
    double eps_multi;          /* the released K-class classifier (the K binary models together):
                                  the shared ledger's figure (paper noise), or the sum of the K
                                  per-model figures at delta (rigorous: own ledgers), at delta_multi */
    double delta_multi;
    double global_frac;        /* DQN: fraction of node steps that were Global */
    char notes[1024];
    double seconds;
} result;

/* A user policy type that forwards every decision to the built-in DQN and counts the
 * actions, so that the run can report how often the learned policy chose Global. */
typedef struct {
    dpdo_policy *inner;
    int64_t steps, globals;
} counting;

static int count_decide(void *user, int64_t node, int64_t k, const double *state, int64_t len,
                        double reward, const dpdo_rng *rng, uint64_t round, int32_t *action)
{
    counting *c = user;
    int rc = dpdo_policy_decide(c->inner, node, k, state, len, reward, rng, round, action);
    if (rc) return rc;
    c->steps++;
    c->globals += *action == DPDO_ACTION_GLOBAL;
    return 0;
}

static int count_finish(void *user, int64_t node, double reward, const dpdo_rng *rng, uint64_t round)
{
    counting *c = user;
    return dpdo_policy_finish(c->inner, node, reward, rng, round);
}

static int count_reset(void *user)
{
    counting *c = user; /* the counts run on over the K models (prepare resets the policy) */
    return dpdo_policy_reset(c->inner, NULL); /* weights re-initialised lazily from the run's rng */
}

static const dpdo_policy_type COUNTING = {sizeof(dpdo_policy_type), "counting-dqn", count_decide,
                                          count_finish, count_reset, NULL, NULL};

/* The training objective of binary model k at w: the mean logistic loss over the rows the M
 * nodes hold (labels +1 for class k) plus lambda/2 ||w||^2, the function every binary run
 * minimises. */
static double train_objective(const problem *p, dpdo_shard *const *sh, int M, int64_t nm, int k,
                              double lambda, const double *w)
{
    int64_t *rows = malloc(sizeof(int64_t) * (size_t)nm), d = p->d;
    double f = 0, ww = 0;
    if (!rows) return NAN;
    for (int i = 0; i < M; i++) {
        if (dpdo_shard_get_rows(sh[i], rows, nm) != DPDO_OK) f = NAN;
        for (int64_t j = 0; j < nm; j++) {
            const double *x = p->Xtr + rows[j] * d;
            double m = 0;
            for (int64_t c = 0; c < d; c++) m += w[c] * x[c];
            m *= p->ctr[rows[j]] == k ? -1.0 : 1.0; /* -y <w, x> */
            f += m > 0 ? m + log1p(exp(-m)) : log1p(exp(m));
        }
    }
    free(rows);
    for (int64_t c = 0; c < d; c++) ww += w[c] * w[c];
    return f / ((double)M * (double)nm) + 0.5 * lambda * ww;
}

/* OUT/rows-<problem>-<setting>-s<seed>.bin for scripts/check-wor-sklearn.py (its header says
 * the layout): the rows the M nodes hold, the test rows, the run's Noiseless models W and the
 * reference solver's Wref. Writes the path into `path`; 0 or -1 (message on stderr). */
static int write_rows(const problem *p, int setting, dpdo_shard *const *sh, int M, int64_t nm,
                      const double *W, const double *Wref, char *path, size_t len, int s)
{
    int64_t d = p->d, hdr[4] = {(int64_t)M * nm, p->nte, d, p->K};
    double lam = setting == STRONG ? LAMBDA : 0.0, c;
    int64_t *rows = malloc(sizeof(int64_t) * (size_t)nm);
    snprintf(path, len, "%s/rows-%s-%s-s%d.bin", g_out, p->name, SETTING_NAME[setting], s);
    FILE *f = rows ? fopen(path, "wb") : NULL;
    int ok = f && fwrite(hdr, sizeof hdr, 1, f) == 1 && fwrite(&lam, sizeof lam, 1, f) == 1;
    for (int pass = 0; pass < 2 && ok; pass++) /* the rows, then their classes */
        for (int i = 0; i < M && ok; i++) {
            ok = dpdo_shard_get_rows(sh[i], rows, nm) == DPDO_OK;
            for (int64_t j = 0; j < nm && ok; j++)
                ok = pass ? (c = p->ctr[rows[j]], fwrite(&c, sizeof c, 1, f) == 1)
                          : fwrite(p->Xtr + rows[j] * d, sizeof(double), (size_t)d, f) == (size_t)d;
        }
    ok = ok && fwrite(p->Xte, sizeof(double), (size_t)(p->nte * d), f) == (size_t)(p->nte * d);
    for (int64_t j = 0; j < p->nte && ok; j++) ok = (c = p->cte[j], fwrite(&c, sizeof c, 1, f) == 1);
    ok = ok && fwrite(W, sizeof(double), (size_t)(p->K * d), f) == (size_t)(p->K * d) &&
         fwrite(Wref, sizeof(double), (size_t)(p->K * d), f) == (size_t)(p->K * d);
    if (f && fclose(f)) ok = 0;
    free(rows);
    if (!ok) fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
    return ok ? 0 : -1;
}

/* scikit-learn on the rows of every seed of a figure's Noiseless point (scripts/
 * check-wor-sklearn.py, which prints its per-seed lines, echoed here, and the mean): fills
 * r->sk_mean, r->sk_se, or leaves them NaN and says why. */
static void run_sklearn(result *r)
{
    char cmd[4096];
    r->sk_mean = r->sk_se = NAN;
    if (!strcmp(g_sklearn, "none")) return;
    if (access(g_sklearn, R_OK) != 0) {
        printf("  sklearn: %s not found (run from the source tree, or --sklearn PATH): not compared\n",
               g_sklearn);
        return;
    }
    int len = snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s'", g_sklearn);
    for (int s = 0; s < r->nseeds && len < (int)sizeof cmd; s++)
        len += snprintf(cmd + len, sizeof cmd - (size_t)len, " '%s'", r->rows_file[s]);
    FILE *pp = len < (int)sizeof cmd ? popen(cmd, "r") : NULL;
    char line[1024];
    while (pp && fgets(line, sizeof line, pp)) {
        double m, se;
        if (sscanf(line, "sklearn-mean-acc %lf %lf", &m, &se) == 2) r->sk_mean = m, r->sk_se = se;
        else printf("  sklearn: %s", line);
    }
    if (!pp || pclose(pp) != 0 || isnan(r->sk_mean))
        printf("  sklearn: %s failed (needs /usr/bin/python3 with numpy and scikit-learn): not compared\n",
               g_sklearn), r->sk_mean = NAN;
    else if (!g_keep_rows) /* 10-30 MB each at the default scale: kept only when asked */
        for (int s = 0; s < r->nseeds; s++) remove(r->rows_file[s]);
}

static int run_one(const problem *p, int setting, int method, int M, int64_t nm, double eps,
                   uint64_t seed, result *r)
{
    int status = -1;
    int K = p->K;
    int64_t d = p->d;
    dpdo_shard *sh[KMAX][20] = {{0}};
    dpdo_node *nodes[KMAX][20] = {{0}};
    dpdo_ledger *led = NULL;
    dpdo_accountant *acc = NULL;
    dpdo_regularizer *reg = NULL;
    dpdo_algorithm *alg = NULL;
    dpdo_policy *pol = NULL, *inner = NULL;
    int64_t *rows = malloc(sizeof(int64_t) * (size_t)nm);
    double *W = malloc(sizeof(double) * (size_t)(K * d));
    if (!rows || !W) goto fail;

    /* node data: a random subset of M nm rows split disjointly, or independent draws */
    uint64_t pseed = 1000u * (uint64_t)seed + (uint64_t)M;
    if ((int64_t)M * nm <= p->ntr) {
        int64_t sizes[20];
        for (int i = 0; i < M; i++) sizes[i] = nm;
        TRY(dpdo_dataset_partition(p->cls[0], M, sizes, pseed, sh[0]), dpdo_dataset_errmsg(p->cls[0]));
    } else {
        for (int i = 0; i < M; i++)
            TRY(dpdo_dataset_partition(p->cls[0], 1, &nm, pseed * 100 + (uint64_t)i, &sh[0][i]),
                dpdo_dataset_errmsg(p->cls[0]));
    }
    for (int i = 0; i < M; i++) {
        TRY(dpdo_shard_get_rows(sh[0][i], rows, nm), dpdo_shard_errmsg(sh[0][i]));
        for (int k = 1; k < K; k++)
            TRY(dpdo_shard_create(&sh[k][i], p->cls[k], rows, nm), dpdo_dataset_errmsg(p->cls[k]));
        for (int k = 0; k < K; k++)
            TRY(dpdo_node_create(&nodes[k][i], sh[k][i], p->loss, 1.0), "node");
    }
    if (setting == STRONG) {
        const double lam = LAMBDA;
        TRY(dpdo_regularizer_create(&reg, dpdo_regularizer_type_find("l2"), NULL, d, &lam, 1), "l2");
    }
    int noisy = method != NOISELESS;
    if (noisy) { /* one ledger for the K models: the rigorous epsilon composes over them */
        TRY(dpdo_ledger_create(&led, M), "out of memory");
        TRY(dpdo_accountant_create(&acc, dpdo_accountant_type_find(ex_accountant_name()), NULL, led, NULL), "accountant");
    }
    double n_total = (double)M * (double)nm, delta = 1.0 / (n_total * n_total);
    counting counter = {NULL, 0, 0};
    double eps_sum = 0; /* rigorous noise: the K models' own figures, summed */
    for (int k = 0; k < K; k++) {
        if (noisy && k > 0 && g_noise == DPDO_NOISE_RIGOROUS) {
            /* rigorous: each binary model is calibrated to (eps, delta) on its own ledger, the
             * paper's per-model guarantee (a shared ledger would leave nothing after model 0) */
            dpdo_accountant_destroy(acc);
            acc = NULL;
            dpdo_ledger_destroy(led);
            led = NULL;
            TRY(dpdo_ledger_create(&led, M), "out of memory");
            TRY(dpdo_accountant_create(&acc, dpdo_accountant_type_find(ex_accountant_name()), NULL, led, NULL),
                "accountant");
        }
        dpdo_algorithm_options o;
        dpdo_algorithm_options_init(&o, sizeof o);
        o.randomness = g_reproducible ? DPDO_RANDOMNESS_REPRODUCIBLE : DPDO_RANDOMNESS_SECURE;
        o.seed = 1000003u * (uint64_t)seed + 101u * (uint64_t)k + 7; /* own streams per model */
        o.max_rounds = (int64_t)1 << 40;
        o.noise_mode = noisy ? g_noise : DPDO_NOISE_NONE;
        o.epsilon = eps;
        o.delta = delta;
        o.batch = B;
        o.lipschitz = setting == STRONG ? 2.0 : 1.0; /* L = 1 + lambda R, R = 1/lambda */
        if (method == NOISELESS) { /* to convergence: the paper's largest constant step, eta =
                                    * 1/(2 mu), with the smoothness of the logistic loss on unit
                                    * rows, mu = 1/4 + lambda (l'' <= 1/4), not the bound mu = 1 +
                                    * lambda the DP analysis uses: 4x the step, which the flat
                                    * directions of the lambda = 0 problem need */
            o.step_size = 1.0 / (2.0 * NL_MU(setting));
            o.step_power = 0.0;
        } else if (method != WR) {
            o.step_size = setting == STRONG ? 1.0 / (A_MIN * LAMBDA) : 0.1; /* capped at 1/(2 mu) */
            o.step_power = setting == STRONG ? 1.0 : 0.0;
        } /* WR: eta_tau = 1/sqrt(tau), the library default (spec §6.4) */
        TRY(dpdo_algorithm_create(&alg, dpdo_algorithm_type_find(method == WR ? "dp-sgd-wr" : "dp-wor-sgd")),
            "out of memory");
        TRY(dpdo_algorithm_setup(alg, nodes[k], M, NULL, reg, acc, &o), dpdo_algorithm_errmsg(alg));
        if (method == NOISELESS) { /* at most g_nl_passes; the step cap 1/(2 mu) follows the smoothness */
            TRY(dpdo_algorithm_set_int(alg, DPDO_PARAM_WOR_PASSES, g_nl_passes), dpdo_algorithm_errmsg(alg));
            TRY(dpdo_algorithm_set_double(alg, DPDO_PARAM_WOR_SMOOTH, NL_MU(setting)), dpdo_algorithm_errmsg(alg));
        }
        if (method == DQN) {
            TRY(dpdo_policy_create(&inner, dpdo_policy_type_find("dqn"), NULL, M, d + 2), "dqn");
            TRY(dpdo_policy_set(inner, "explore_steps", (double)nm / (2.0 * B)), dpdo_policy_errmsg(inner));
            counter.inner = inner; /* the DQN, wrapped to count its actions */
            TRY(dpdo_policy_create(&pol, &COUNTING, &counter, M, d + 2), "counting policy");
            TRY(dpdo_algorithm_set_policy(alg, pol), dpdo_algorithm_errmsg(alg));
        } else if (method == RANDOM) {
            TRY(dpdo_policy_create(&pol, dpdo_policy_type_find("random"), NULL, M, d + 2), "random");
            TRY(dpdo_policy_set(pol, "p_global", 0.5), dpdo_policy_errmsg(pol));
            TRY(dpdo_algorithm_set_policy(alg, pol), dpdo_algorithm_errmsg(alg));
        }
        int prc = dpdo_algorithm_prepare(alg);
        if (prc == DPDO_E_NUMERIC && g_noise == DPDO_NOISE_RIGOROUS) {
            /* the accountant cannot reach (eps, delta) with any sigma: report, don't abort */
            fprintf(stderr, "  %s: %s\n", p->name, dpdo_algorithm_errmsg(alg));
            status = 1;
            goto fail;
        }
        TRY(prc, dpdo_algorithm_errmsg(alg));
        int64_t rounds = 0;
        int rc;
        if (method == NOISELESS) { /* chunks of NL_CHUNK passes until the objective settles */
            double fprev = INFINITY;
            int64_t chunk = (int64_t)NL_CHUNK * (nm / B), got = 0; /* S2: a round = one step per node */
            for (;;) {
                rc = dpdo_algorithm_run(alg, chunk, &got);
                TRY(rc, dpdo_algorithm_errmsg(alg));
                rounds += got;
                TRY(dpdo_algorithm_get_output(alg, 0, W + k * d, d), dpdo_algorithm_errmsg(alg));
                double f = train_objective(p, sh[k], M, nm, k, setting == STRONG ? LAMBDA : 0.0, W + k * d);
                if (rc == DPDO_DONE || fprev - f < NL_TOL * f) break;
                fprev = f;
            }
            r->nl_passes[k] = rounds / (nm / B);
            if (rc != DPDO_DONE) rc = DPDO_DONE; /* settled before the cap: converged */
        } else
            rc = dpdo_algorithm_run(alg, 0, &rounds);
        TRY(rc, dpdo_algorithm_errmsg(alg));
        if (method != NOISELESS && (rc != DPDO_DONE || dpdo_algorithm_stop_reason(alg) != DPDO_STOP_PASSES)) {
            fprintf(stderr, "%s model %d: stopped early (reason %d) after %lld rounds\n", p->name, k,
                    dpdo_algorithm_stop_reason(alg), (long long)rounds);
            goto fail;
        }
        TRY(dpdo_algorithm_get_output(alg, 0, W + k * d, d), dpdo_algorithm_errmsg(alg));
        if (noisy && k == 0) {
            double z = 0;
            TRY(dpdo_algorithm_get_double(alg, DPDO_PARAM_SIGMA, &z), dpdo_algorithm_errmsg(alg));
            double eta = method == WR ? 1.0 : setting == STRONG ? 1.0 / (2.0 * (1.0 + LAMBDA)) : 0.1;
            r->sigma_model = method == WR ? z * 2.0 * o.lipschitz / B : z * 2.0 * o.lipschitz * eta / B;
            snprintf(r->notes, sizeof r->notes, "%s", dpdo_algorithm_privacy_notes(alg));
            if (method == WR) { /* no paper-bound object: the paper's claim, by basic composition */
                r->eps_model = eps, r->delta_model = delta, r->paper_valid = eps < 1;
            } else {
                int32_t valid = 0;
                TRY(dpdo_algorithm_privacy(alg, DPDO_PRIVACY_PAPER, DPDO_NODE_ALL, &r->eps_model,
                                           &r->delta_model, &valid),
                    dpdo_algorithm_errmsg(alg));
                r->paper_valid = valid;
            }
        }
        if (noisy && g_noise == DPDO_NOISE_RIGOROUS) { /* own ledger per model: basic composition */
            double ek = 0;
            TRY(dpdo_algorithm_privacy(alg, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &ek, NULL, NULL),
                dpdo_algorithm_errmsg(alg));
            eps_sum += ek;
        }
        if (noisy && k == K - 1) { /* the accountant over every charge in the (last) ledger */
            TRY(dpdo_algorithm_privacy(alg, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &r->eps_rig, NULL, NULL),
                dpdo_algorithm_errmsg(alg));
            TRY(dpdo_accountant_epsilon(acc, -1, fmin(0.5, K * delta), &r->eps_rig_K, NULL),
                dpdo_accountant_errmsg(acc));
            int own = g_noise == DPDO_NOISE_RIGOROUS;
            r->eps_multi = own ? eps_sum : r->eps_rig;
            r->delta_multi = own ? K * delta : delta;
        }
        dpdo_algorithm_destroy(alg);
        alg = NULL;
        dpdo_policy_destroy(pol);
        pol = NULL;
        dpdo_policy_destroy(inner);
        inner = NULL;
    }
    if (!noisy) {
        r->eps_model = r->eps_rig = r->eps_rig_K = r->eps_multi = INFINITY;
        r->delta_model = r->delta_multi = delta;
    }
    if (method == DQN && counter.steps > 0) /* mean over seeds */
        r->global_frac += (double)counter.globals / (double)counter.steps;
    if (method == NOISELESS) { /* the converged reference on the same rows, one model per class */
        double *Wref = malloc(sizeof(double) * (size_t)(K * d));
        dpdo_reference_options ro;
        dpdo_reference_options_init(&ro, sizeof ro);
        if (!Wref) goto fail;
        for (int k = 0; k < K; k++) {
            dpdo_reference *ref = NULL;
            int rc = dpdo_reference_create(&ref, nodes[k], M, reg, &ro);
            if (rc == DPDO_OK) rc = dpdo_reference_solve(ref, Wref + k * d, d, NULL);
            dpdo_reference_destroy(ref);
            if (rc < 0 && rc != DPDO_E_NUMERIC) { /* E_NUMERIC: iteration cap, keep the iterate */
                fprintf(stderr, "reference solver: %s\n", dpdo_strerror(rc));
                free(Wref);
                goto fail;
            }
        }
        r->acc_ref[r->nseeds] = accuracy(p, Wref);
        if (M == M_FIG && write_rows(p, setting, sh[0], M, nm, W, Wref, r->rows_file[r->nseeds],
                                     sizeof r->rows_file[0], r->nseeds)) {
            free(Wref);
            goto fail;
        }
        free(Wref);
    }
    r->acc[r->nseeds++] = accuracy(p, W);
    status = 0;
fail:
    dpdo_algorithm_destroy(alg);
    dpdo_policy_destroy(pol);
    dpdo_policy_destroy(inner);
    dpdo_accountant_destroy(acc);
    dpdo_ledger_destroy(led);
    dpdo_regularizer_destroy(reg);
    for (int k = 0; k < KMAX; k++)
        for (int i = 0; i < 20; i++) {
            dpdo_node_destroy(nodes[k][i]);
            dpdo_shard_destroy(sh[k][i]);
        }
    free(rows);
    free(W);
    return status;
}

/* All seeds of one curve point. */
static int run_point(const problem *p, int setting, int method, int M, int64_t nm, double eps,
                     int seeds, result *r)
{
    double t0 = now();
    memset(r, 0, sizeof *r);
    /* fresh seeds for every (setting, method, M, eps): independent curves */
    uint64_t seed0 = g_base_seed + 16 * (uint64_t)(method + 8 * (setting + 2 * (M + 32 * (int)llround(eps * 100))));
    for (int s = 0; s < seeds; s++) {
        int rc = run_one(p, setting, method, M, nm, eps, seed0 + s, r);
        if (rc < 0) return -1;
        if (rc == 1) { /* unreachable under rigorous accounting */
            r->nseeds = 0;
            r->mean = r->sd = r->se = NAN;
            fprintf(stderr, "  %-12s %-15s %-15s M=%-2d eps=%-4g unreachable by the accountant\n",
                    p->name, SETTING_NAME[setting], METHOD_NAME[method], M, eps);
            return 0;
        }
    }
    mean_se(r->acc, r->nseeds, &r->mean, &r->se);
    r->sd = r->se * sqrt((double)r->nseeds);
    if (method == NOISELESS) mean_se(r->acc_ref, r->nseeds, &r->ref_mean, &r->ref_se);
    if (method == NOISELESS && M == M_FIG) run_sklearn(r);
    r->global_frac /= seeds;
    r->seconds = now() - t0;
    char gf[48] = "";
    if (method == DQN) snprintf(gf, sizeof gf, ", Global %.0f%% of steps", 100 * r->global_frac);
    fprintf(stderr, "  %-12s %-15s %-15s M=%-2d eps=%-4g acc %6.2f%% (sd %.2f, %d seeds%s)  [%.1f s]\n",
            p->name, SETTING_NAME[setting], METHOD_NAME[method], M, eps, r->mean, r->sd, seeds, gf,
            r->seconds);
    return 0;
}

/* ---- output ---------------------------------------------------------------------------- */


/* Figure: accuracy against epsilon, four curves. */
static int write_fig(const char *dir, int fig, const problem *p, int setting, const double *eps,
                     int neps, int64_t nm, result (*res)[MAX_EPS], const result *noiseless)
{
    char name[32];
    snprintf(name, sizeof name, "fig%d.csv", fig);
    FILE *f = open_out(dir, name);
    if (!f) return -1;
    fprintf(f, "# DP-WOR-SGD Fig. %d: %s, %s; test accuracy of the one-vs-all global models "
               "against epsilon; M = %d nodes x n_m = %lld samples, b = %d, delta = 1/n^2, one pass\n",
            fig, p->name, SETTING_NAME[setting], M_FIG, (long long)nm, B);
    fprintf(f, "# columns: method, epsilon, acc_mean, acc_sd (%%, over seeds), seeds, sigma_model (model-"
               "level noise std of a Global step / WR step at eta = 1), eps_paper_model and delta_model "
               "(Theorem 2 per binary model and pass; WR: the paper's basic composition), eps_paper_K = K "
               "eps (basic composition over the K = %d models, ours), eps_rigorous (the sound accountant over "
               "the ledger shared by the K models with the paper's noise, or one model's own ledger with "
               "rigorous noise, at delta_model), eps_rigorous_Kdelta (the same at K delta_model), "
               "eps_classifier and delta_classifier (the K-class classifier: the shared ledger's figure, "
               "or the K own figures summed at K delta), global_frac (DP-Deep-Q: fraction of node steps "
               "that chose Global)\n",
            p->K);
    fprintf(f, "method,epsilon,acc_mean,acc_sd,seeds,sigma_model,eps_paper_model,delta_model,eps_paper_K,"
               "eps_rigorous,eps_rigorous_Kdelta,eps_classifier,delta_classifier,global_frac\n");
    for (int m = 0; m < N_METHODS; m++)
        for (int ie = 0; ie < neps; ie++) {
            const result *r = m == NOISELESS ? noiseless : &res[m][ie];
            fprintf(f, "%s,%g,%.4f,%.4f,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.4f\n", METHOD_NAME[m],
                    eps[ie], r->mean, r->sd, r->nseeds, r->sigma_model, r->eps_model, r->delta_model,
                    p->K * r->eps_model, r->eps_rig, r->eps_rig_K, r->eps_multi, r->delta_multi,
                    m == DQN ? r->global_frac : NAN);
        }
    if (fclose(f)) return -1;
    snprintf(name, sizeof name, "fig%d", fig);
    if (!(f = open_gnuplot(dir, name, 640, 500))) return -1;
    /* the key below the plot (never over a curve's end); error bars: s.d. over seeds; chance
     * (1/K, the untrained classifier on balanced classes) as a dashed line */
    fprintf(f, "set key below horizontal\nset xlabel 'epsilon'\nset ylabel 'test accuracy (%%), "
               "error bars: s.d. over seeds'\n"
               "set title 'Fig. %d: %s, %s (M = %d, n_m = %lld)'\nplot ",
            fig, p->name, SETTING_NAME[setting], M_FIG, (long long)nm);
    for (int m = 0; m < N_METHODS; m++)
        fprintf(f, "%s'fig%d.csv' using 2:(strcol(1) eq '%s' ? $3 : 1/0):4 with yerrorlines title '%s'",
                m ? ", \\\n     " : "", fig, METHOD_NAME[m], METHOD_NAME[m]);
    fprintf(f, ", \\\n     %.4f with lines dashtype 2 lc rgb 'black' title 'chance (1/K)'\n", 100.0 / p->K);
    return fclose(f) ? -1 : 0;
}

/* The paper's Tables I (Covertype) and II (MNIST), test accuracy (%) at eps = 1 against the node
 * count M = 1, 3, 5, 10, 20, n_m = 60,000 per node: [table][setting][Noiseless, Fully
 * collaborative, Algorithm 1][M]; NaN where the paper prints "-". */
static const int PAPER_M[5] = {1, 3, 5, 10, 20};
static const double PAPER_TAB[2][2][3][5] = {
    {{{56.24, 61.64, 61.90, 62.83, 64.10}, {54.21, 58.22, 58.63, 59.82, 60.22}, {NAN, 59.05, 59.22, 60.65, 61.23}},
     {{62.79, 64.44, 65.31, 65.96, 66.04}, {50.60, 51.68, 52.60, 55.24, 57.73}, {NAN, 55.25, 59.27, 61.34, 62.37}}},
    {{{77.74, 84.07, 85.49, 86.83, 87.69}, {63.86, 71.48, 74.04, 76.80, 78.17}, {NAN, 77.17, 79.87, 80.52, 81.93}},
     {{84.80, 88.13, 88.51, 88.76, 88.96}, {55.04, 63.46, 65.63, 68.00, 73.9}, {NAN, 71.03, 75.39, 80.93, 82.97}}}};

static double paper_tab(int tab, int s, int m, int M)
{
    for (int j = 0; j < 5; j++)
        if (PAPER_M[j] == M) return PAPER_TAB[tab - 1][s][m][j];
    return NAN;
}

/* Table: accuracy against M, three methods, both settings. */
static int write_table(const char *dir, int tab, const problem *p, const int *Ms, int nM, int64_t nm,
                       result (*res)[3][MAX_M])
{
    static const int TM[3] = {NOISELESS, FULLY, DQN};
    char name[32];
    snprintf(name, sizeof name, "table%d.csv", tab);
    FILE *f = open_out(dir, name);
    if (!f) return -1;
    fprintf(f, "# DP-WOR-SGD Table %s: %s, test accuracy (%%) against the node count M; eps = 1, "
               "n_m = %lld samples per node (n = M n_m, delta = 1/n^2), b = %d, one pass\n",
            tab == 1 ? "I" : "II", p->name, (long long)nm, B);
    fprintf(f, "# columns: setting, method (Algorithm 1 = DP-Deep-Q), M, acc_mean, acc_sd, seeds, "
               "eps_paper_model, delta_model, eps_classifier and delta_classifier (the K-class classifier "
               "by the sound accountant), paper_acc (the paper's Table %s on the real %s, n_m = 60,000)\n",
            tab == 1 ? "I" : "II", tab == 1 ? "Covertype" : "MNIST");
    fprintf(f, "setting,method,M,acc_mean,acc_sd,seeds,eps_paper_model,delta_model,eps_classifier,"
               "delta_classifier,paper_acc\n");
    for (int s = 0; s < 2; s++)
        for (int m = 0; m < 3; m++)
            for (int j = 0; j < nM; j++) {
                const result *r = &res[s][m][j];
                if (!r->nseeds) continue;
                fprintf(f, "%s,%s,%d,%.4f,%.4f,%d,%.6g,%.6g,%.6g,%.6g,%.2f\n", SETTING_NAME[s],
                        TM[m] == DQN ? "Algorithm-1" : METHOD_NAME[TM[m]], Ms[j], r->mean, r->sd,
                        r->nseeds, r->eps_model, r->delta_model, r->eps_multi, r->delta_multi,
                        paper_tab(tab, s, m, Ms[j]));
            }
    if (fclose(f)) return -1;
    snprintf(name, sizeof name, "table%d", tab);
    if (!(f = open_gnuplot(dir, name, 1100, 500))) return -1;
    fprintf(f, "set key below horizontal\nset xlabel 'nodes M'\nset ylabel 'test accuracy (%%), "
               "error bars: s.d. over seeds'\n"
               "set logscale x\nset xtics (1, 3, 5, 10, 20)\nset multiplot layout 1,2\n");
    for (int s = 0; s < 2; s++) {
        fprintf(f, "set title 'Table %s: %s, %s (eps = 1, n_m = %lld)'\nplot ", tab == 1 ? "I" : "II",
                p->name, SETTING_NAME[s], (long long)nm);
        for (int m = 0; m < 3; m++) {
            const char *mn = TM[m] == DQN ? "Algorithm-1" : METHOD_NAME[TM[m]];
            fprintf(f, "%s'table%d.csv' using 3:((strcol(1) eq '%s' && strcol(2) eq '%s') ? $4 : 1/0):5 "
                       "with yerrorlines lc %d title '%s'",
                    m ? ", \\\n     " : "", tab, SETTING_NAME[s], mn, m + 1, mn);
            /* the paper's value, same colour, dashed (its data: the real Covertype / MNIST) */
            fprintf(f, ", \\\n     'table%d.csv' using 3:((strcol(1) eq '%s' && strcol(2) eq '%s') ? $11 : 1/0) "
                       "with linespoints dashtype 2 lc %d title '%s (paper, %s)'",
                    tab, SETTING_NAME[s], mn, m + 1, mn, tab == 1 ? "Covertype" : "MNIST");
        }
        fprintf(f, ", \\\n     %.4f with lines dashtype 2 lc rgb 'black' title 'chance (1/K)'\n", 100.0 / p->K);
    }
    fprintf(f, "unset multiplot\n");
    return fclose(f) ? -1 : 0;
}

/* ---- summary ----------------------------------------------------------------------------- */

static ex_tally tally;

/* Is a curve better than chance (100/K %, the untrained model's accuracy on the balanced
 * classes) by the margin? A claim whose curves are all no better is NO-SIGNAL. */
static int above_chance(const result *r, int K)
{
    return !isnan(r->mean) && ex_useful(&tally, -r->mean, r->se, -100.0 / K);
}

/* a > b by two standard errors at every eps (examples/common.h decides PASS / FAIL /
 * NO-SIGNAL the same way for every claim). */
static void check_fig_pair(const char *where, const char *la, const char *lb, const result *const *a,
                           const result *const *b, const double *eps, int neps, int K)
{
    char what[640];
    int ok = 1, signal = 0, len = snprintf(what, sizeof what, "%s > %s (2 s.e.) at every eps:", la, lb);
    for (int ie = 0; ie < neps; ie++) {
        if (isnan(a[ie]->mean) || isnan(b[ie]->mean)) { /* not run: unreachable epsilon */
            len += snprintf(what + len, sizeof what - (size_t)len, " %g:n/a", eps[ie]);
            continue;
        }
        int good = ex_less(&tally, -a[ie]->mean, a[ie]->se, -b[ie]->mean, b[ie]->se);
        ok &= good;
        signal |= above_chance(a[ie], K) || above_chance(b[ie], K);
        len += snprintf(what + len, sizeof what - (size_t)len, " %g:%.2f/%.2f%s", eps[ie], a[ie]->mean,
                        b[ie]->mean, good ? "" : "!");
    }
    ex_claim(&tally, ok, signal, where, "%s", what);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: dp_wor_sgd_classify [--quick | --full] [--nm N] [--seeds K] [--out DIR] [--reproducible]\n"
            "                           [--mnist DIR] [--covtype FILE] [--fashion DIR]\n"
            "                           [--only figs|tables|noiseless] [--noise paper|rigorous] [--paper-scale]\n"
            "                           [--sklearn PATH|none] [--keep-rows]\n"
            "                           [--seed S] [--no-fail-exit] [--plant-contrary]\n"
            "                           [--noiseless-passes P] [--control-seeds K]\n"
            "  --seed S        replay a run (default: a fresh base seed each run, printed)\n"
            "  --noiseless-passes P  at most P passes of the Noiseless curve (default 5000; it stops when its\n"
            "                  objective falls by less than 1e-5 (relative) over 25 passes; the paper: 1)\n"
            "  --no-fail-exit  exit 0 even when a check FAILs (exploration)\n"
            "  --plant-contrary  feed every check a contrary result (tests: every check must FAIL)\n"
            "  --quick         smaller: n_m = 300, 1 seed, eps {0.2, 1}, M {1, 3, 10} (about 15 s)\n"
            "  --full          the paper's scale: n_m = 6000, 5 seeds, eps 0.1..1.0, M {1,3,5,10,20}\n"
            "                  (about 15 minutes)\n"
            "  --nm N          samples per node (default 2000; a multiple of b = 50 is used)\n"
            "  --seeds K       seeds per point (default 3)\n"
            "  --control-seeds K  seeds per point of the Figures' Deep-Q and coin-flip curves (default\n"
            "                  the larger of 10 and --seeds; --quick: --seeds)\n"
            "  --out DIR       output directory (default build/dp_wor_sgd_classify)\n"
            "  --mnist DIR     real MNIST IDX files (train-images-idx3-ubyte[.gz], ...) instead of\n"
            "                  Fashion-MNIST\n"
            "  --fashion DIR   where Fashion-MNIST is (default /usr/share/datasets/fashion-mnist)\n"
            "  --covtype FILE  the real Covertype file (LIBSVM, or CSV/.data with the class last)\n"
            "                  instead of the synthetic covtype-like set\n"
            "  --only WHAT     figs (Figures 1-4), tables (Tables I-II), or noiseless (the Figures'\n"
            "                  Noiseless points and their converged references only)\n"
            "  --sklearn PATH  scripts/check-wor-sklearn.py (default, relative to the working\n"
            "                  directory): scikit-learn on the Noiseless runs' rows; none: skip\n"
            "  --keep-rows     keep OUT/rows-*.bin (the rows, test rows and models the script reads;\n"
            "                  removed after a successful comparison otherwise)\n"
            "  --noise MODE    paper (Theorem 2, default) or rigorous (each binary model's sigma\n"
            "                  calibrated by the accountant to the same (eps, delta))\n"
            "  --paper-scale   the same as --full (the paper's n_m, eps grid, M grid, 5 seeds)\n");
}

int main(int argc, char **argv)
{
    const char *out = "build/dp_wor_sgd_classify", *mnist = NULL, *covtype = NULL,
               *fashion = "/usr/share/datasets/fashion-mnist";
    int quick = 0, full = 0, seeds = -1, ctl_seeds = -1, do_figs = 1, do_tabs = 1, no_fail_exit = 0, plant = 0, only_nl = 0;
    int64_t nm = -1;
    g_base_seed = ex_fresh_seed();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick")) quick = 1;
        else if (!strcmp(a, "--seed") && v) g_base_seed = strtoull(v, NULL, 10), i++;
        else if (!strcmp(a, "--no-fail-exit")) no_fail_exit = 1;
        else if (!strcmp(a, "--plant-contrary")) plant = 1;
        else if (!strcmp(a, "--noiseless-passes") && v) g_nl_passes = atoi(v), i++;
        else if (!strcmp(a, "--reproducible")) g_reproducible = 1;
        else if (!strcmp(a, "--full") || !strcmp(a, "--paper-scale")) full = 1;
        else if (!strcmp(a, "--noise") && i + 1 < argc && !strcmp(argv[i + 1], "rigorous"))
            g_noise = DPDO_NOISE_RIGOROUS, i++;
        else if (!strcmp(a, "--noise") && i + 1 < argc && !strcmp(argv[i + 1], "paper"))
            g_noise = DPDO_NOISE_PAPER, i++;
        else if (!strcmp(a, "--nm") && v) nm = atoll(v), i++;
        else if (!strcmp(a, "--seeds") && v) seeds = atoi(v), i++;
        else if (!strcmp(a, "--control-seeds") && v) ctl_seeds = atoi(v), i++;
        else if (!strcmp(a, "--out") && v) out = v, i++;
        else if (!strcmp(a, "--sklearn") && v) g_sklearn = v, i++;
        else if (!strcmp(a, "--keep-rows")) g_keep_rows = 1;
        else if (!strcmp(a, "--only") && v && !strcmp(v, "noiseless")) only_nl = 1, do_tabs = 0, i++;
        else if (!strcmp(a, "--mnist") && v) mnist = v, i++;
        else if (!strcmp(a, "--fashion") && v) fashion = v, i++;
        else if (!strcmp(a, "--covtype") && v) covtype = v, i++;
        else if (!strcmp(a, "--only") && v && !strcmp(v, "figs")) do_tabs = 0, i++;
        else if (!strcmp(a, "--only") && v && !strcmp(v, "tables")) do_figs = 0, i++;
        else {
            usage();
            return strcmp(a, "--help") && strcmp(a, "-h") ? 2 : 0;
        }
    }
    printf("randomness: %s\n", ex_randomness(g_reproducible));
    if (quick && full) {
        usage();
        return 2;
    }
    static const double EPS_DEF[] = {0.1, 0.2, 0.5, 1.0}, EPS_QUICK[] = {0.2, 1.0},
                        EPS_FULL[] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
    static const int M_DEF[] = {1, 3, 5, 10, 20}, M_QUICK[] = {1, 3, 10};
    const double *eps = full ? EPS_FULL : quick ? EPS_QUICK : EPS_DEF;
    int neps = full ? 10 : quick ? 2 : 4;
    const int *Ms = quick ? M_QUICK : M_DEF;
    int nM = quick ? 3 : 5;
    if (nm < 0) nm = full ? 6000 : quick ? 300 : 2000;
    if (seeds < 0) seeds = full ? 5 : quick ? 1 : 3;
    /* "the DQN learns when to go Global" is a small effect: Deep-Q and its coin-flip control get
     * at least 10 seeds per point in the Figures (not in --quick, a smoke run) */
    if (ctl_seeds < 0) ctl_seeds = quick ? seeds : seeds > 10 ? seeds : 10;
    tally.one_seed = seeds < 2;
    tally.plant = plant;
    printf("base seed: %llu (fresh each run; --seed %llu replays this run's data split and sampling)\n",
           (unsigned long long)g_base_seed, (unsigned long long)g_base_seed);
    nm = nm / B * B;
    if (nm < 2 * B || nm > 60000 || seeds < 1 || seeds > MAX_SEEDS || ctl_seeds < 1 || ctl_seeds > MAX_SEEDS) {
        fprintf(stderr, "--nm must be in [%d, 60000], --seeds and --control-seeds in [1, %d]\n", 2 * B,
                MAX_SEEDS);
        return 2;
    }
    int ie1 = -1, iM10 = -1; /* eps = 1 and M = 10: shared by the figures and the tables */
    for (int ie = 0; ie < neps; ie++)
        if (eps[ie] == 1.0) ie1 = ie;
    for (int j = 0; j < nM; j++)
        if (Ms[j] == M_FIG) iM10 = j;

    double t_start = now();
    g_out = out;
    if (make_dirs(out)) return 1;
    static problem probs[2]; /* 0: Covertype (Figs 1-2, Table I), 1: MNIST (Figs 3-4, Table II) */
    int status = 1, nprob = 0;
    int Mmax = do_tabs ? Ms[nM - 1] : M_FIG;
    if (load_covtype(&probs[0], covtype, (int64_t)Mmax * nm, 10000)) goto done;
    nprob = 1;
    if (load_mnist(&probs[1], mnist ? mnist : fashion, mnist ? "mnist" : "fashion-mnist")) goto done;
    nprob = 2;

    static result fig[2][2][N_METHODS][MAX_EPS]; /* [data][setting][method][eps] */
    static result fig_noiseless[2][2];
    static result tab[2][2][3][MAX_M];           /* [data][setting][Noiseless, Fully, DQN][M] */
    for (int pi = 0; pi < 2; pi++)
        for (int s = 0; s < 2; s++) {
            const problem *p = &probs[pi];
            fprintf(stderr, "== %s, %s\n", p->name, SETTING_NAME[s]);
            if (do_figs) {
                if (run_point(p, s, NOISELESS, M_FIG, nm, 1.0, seeds, &fig_noiseless[pi][s])) goto done;
                for (int ie = 0; ie < neps && !only_nl; ie++)
                    for (int m = DQN; m < N_METHODS; m++)
                        if (run_point(p, s, m, M_FIG, nm, eps[ie], m == DQN || m == RANDOM ? ctl_seeds : seeds,
                                      &fig[pi][s][m][ie]))
                            goto done;
            }
            if (do_tabs) {
                static const int TM[3] = {NOISELESS, FULLY, DQN};
                for (int j = 0; j < nM; j++)
                    for (int m = 0; m < 3; m++) {
                        if (TM[m] == DQN && Ms[j] == 1) continue; /* the paper's "-" */
                        result *r = &tab[pi][s][m][j];
                        if (do_figs && j == iM10 && TM[m] == NOISELESS) *r = fig_noiseless[pi][s];
                        else if (do_figs && j == iM10 && ie1 >= 0) *r = fig[pi][s][TM[m]][ie1];
                        else if (run_point(p, s, TM[m], Ms[j], nm, 1.0, seeds, r)) goto done;
                    }
            }
        }

    /* files and plots */
    int gnuplot = have_gnuplot();
    for (int pi = 0; pi < 2; pi++) {
        for (int s = 0; do_figs && !only_nl && s < 2; s++) {
            int f = pi * 2 + s + 1;
            char script[32];
            snprintf(script, sizeof script, "fig%d.gp", f);
            if (write_fig(out, f, &probs[pi], s, eps, neps, nm, fig[pi][s], &fig_noiseless[pi][s])) goto done;
            if (gnuplot) run_gnuplot(out, script);
        }
        if (do_tabs) {
            char script[32];
            snprintf(script, sizeof script, "table%d.gp", pi + 1);
            if (write_table(out, pi + 1, &probs[pi], Ms, nM, nm, tab[pi])) goto done;
            if (gnuplot) run_gnuplot(out, script);
        }
    }

    /* summary */
    printf("== DP-WOR-SGD paper figures and tables (docs/reproductions.md), %s noise, %.0f s in total\n",
           g_noise == DPDO_NOISE_PAPER ? "Theorem 2 (paper)" : "rigorous (calibrated by the accountant)",
           now() - t_start);
    printf("   scale: n_m = %lld samples per node (paper: 6000), b = %d, one pass (%lld node steps per "
           "node), %d seed%s per point; Figures: M = %d, eps in {",
           (long long)nm, B, (long long)(nm / B), seeds, seeds > 1 ? "s" : "", M_FIG);
    for (int ie = 0; ie < neps; ie++) printf("%s%g", ie ? ", " : "", eps[ie]);
    printf("}; Tables: eps = 1, M in {");
    for (int j = 0; j < nM; j++) printf("%s%d", j ? ", " : "", Ms[j]);
    printf("}\n");
    if (do_figs && ctl_seeds != seeds)
        printf("   the Figures' Deep-Q and coin-flip curves: %d seeds per point (--control-seeds)\n", ctl_seeds);
    for (int pi = 0; pi < nprob; pi++)
        printf("   %-13s %lld train / %lld test rows, d = %lld, K = %d one-vs-all models%s\n", probs[pi].name,
               (long long)probs[pi].ntr, (long long)probs[pi].nte, (long long)probs[pi].d, probs[pi].K,
               pi == 1 && !mnist ? " (Fashion-MNIST as the MNIST stand-in)"
               : pi == 0 && !covtype ? " (synthetic)" : "");
    printf("   convex: lambda = 0, L = 1, eta = 0.1; strongly convex: lambda = %g, L = 2, eta = "
           "min(1/(2 mu), 1/(a gamma t)) = %.5f; delta = 1/n^2, n = M n_m\n",
           LAMBDA, 1.0 / (2.0 * (1.0 + LAMBDA)));

    printf("== orderings (Figs 1-4: Noiseless > DP-Deep-Q >= DP-Fully-collab > DP-SGD-WR;\n"
           "   Tables I-II: Noiseless > Algorithm 1 >= Fully collaborative for M >= 3,\n"
           "   accuracy non-decreasing in M); values are mean test accuracy (%%)\n");
    for (int pi = 0; pi < 2; pi++)
        for (int s = 0; do_figs && s < 2; s++) {
            char where[16];
            snprintf(where, sizeof where, "fig%d", pi * 2 + s + 1);
            const result *a[MAX_EPS], *b[MAX_EPS], *c[MAX_EPS], *nl[MAX_EPS];
            for (int ie = 0; ie < neps; ie++) {
                nl[ie] = &fig_noiseless[pi][s];
                a[ie] = &fig[pi][s][DQN][ie];
                b[ie] = &fig[pi][s][FULLY][ie];
                c[ie] = &fig[pi][s][WR][ie];
            }
            printf("  -- %s: %s, %s\n", where, probs[pi].name, SETTING_NAME[s]);
            int K = probs[pi].K;
            /* our training, not a claim of the paper: the Noiseless curve (run to convergence)
             * within 2 points of a converged one-vs-all logistic regression on the same rows */
            const result *n0 = &fig_noiseless[pi][s];
            char np[48];
            int64_t pmin = INT64_MAX, pmax = 0;
            for (int k = 0; k < K; k++)
                pmin = n0->nl_passes[k] < pmin ? n0->nl_passes[k] : pmin,
                pmax = n0->nl_passes[k] > pmax ? n0->nl_passes[k] : pmax;
            snprintf(np, sizeof np, "%lld-%lld passes, eta = %.4g", (long long)pmin, (long long)pmax,
                     1.0 / (2.0 * NL_MU(s)));
            ex_claim(&tally, fabs(n0->mean - n0->ref_mean) <= 2.0 && !tally.plant, 1, where,
                     "Noiseless (%s) within 2 points of a converged one-vs-all logistic "
                     "regression on the same rows (the library's reference solver): %.2f vs %.2f+-%.2f",
                     np, n0->mean, n0->ref_mean, n0->ref_se);
            if (!isnan(n0->sk_mean))
                ex_claim(&tally, fabs(n0->mean - n0->sk_mean) <= 2.0 && !tally.plant, 1, where,
                         "Noiseless (%s) within 2 points of scikit-learn's converged one-vs-rest "
                         "logistic regression on the same rows: %.2f vs %.2f+-%.2f",
                         np, n0->mean, n0->sk_mean, n0->sk_se);
            else
                printf("  %-19s %-6s Noiseless %.2f; scikit-learn not run (see the sklearn line above)\n",
                       "INFO", where, n0->mean);
            if (only_nl) continue;
            check_fig_pair(where, "Noiseless", "Deep-Q", nl, a, eps, neps, K);
            check_fig_pair(where, "Deep-Q", "Fully", a, b, eps, neps, K);
            check_fig_pair(where, "Fully", "WR", b, c, eps, neps, K);
            /* the DQN's contribution: Algorithm 1 with the Deep-Q controller against the same
             * algorithm with a coin-flip controller (Global w.p. 1/2; a control the paper does
             * not run): "Deep-Q learns when to go Global" means Deep-Q > coin flip */
            const result *rnd[MAX_EPS];
            for (int ie = 0; ie < neps; ie++) rnd[ie] = &fig[pi][s][RANDOM][ie];
            check_fig_pair(where, "Deep-Q", "coin-flip", a, rnd, eps, neps, K);
        }
    for (int pi = 0; pi < 2; pi++)
        for (int s = 0; do_tabs && s < 2; s++) {
            char where[16], what[512];
            snprintf(where, sizeof where, "table%s", pi == 0 ? "I" : "II");
            printf("  -- table %s: %s, %s (eps = 1)\n", pi == 0 ? "I" : "II", probs[pi].name, SETTING_NAME[s]);
            result(*t)[MAX_M] = tab[pi][s];
            int ok1 = 1, ok2 = 1, sig1 = 0, sig2 = 0, len1 = 0, len2 = 0, K = probs[pi].K;
            char w1[512], w2[512];
            len1 = snprintf(w1, sizeof w1, "Noiseless > Alg.1 (2 s.e.) for M >= 3:");
            len2 = snprintf(w2, sizeof w2, "Alg.1 > Fully (2 s.e.) for M >= 3:");
            for (int j = 0; j < nM; j++) {
                if (Ms[j] < 3) continue;
                int g1 = ex_less(&tally, -t[0][j].mean, t[0][j].se, -t[2][j].mean, t[2][j].se);
                int g2 = ex_less(&tally, -t[2][j].mean, t[2][j].se, -t[1][j].mean, t[1][j].se);
                ok1 &= g1, ok2 &= g2;
                sig1 |= above_chance(&t[0][j], K) || above_chance(&t[2][j], K);
                sig2 |= above_chance(&t[2][j], K) || above_chance(&t[1][j], K);
                len1 += snprintf(w1 + len1, sizeof w1 - (size_t)len1, " M=%d:%.2f/%.2f%s", Ms[j], t[0][j].mean,
                                 t[2][j].mean, g1 ? "" : "!");
                len2 += snprintf(w2 + len2, sizeof w2 - (size_t)len2, " M=%d:%.2f/%.2f%s", Ms[j], t[2][j].mean,
                                 t[1][j].mean, g2 ? "" : "!");
            }
            ex_claim(&tally, ok1, sig1, where, "%s", w1);
            ex_claim(&tally, ok2, sig2, where, "%s", w2);
            static const char *const MN[3] = {"Noiseless", "Fully", "Alg.1"};
            for (int m = 0; m < 3; m++) {
                /* "accuracy rises with M": the largest M above the smallest by the margin and no
                 * adjacent step down by the margin */
                int down = 0, first = -1, last = -1, signal = 0,
                    len = snprintf(what, sizeof what, "%s rises with M:", MN[m]);
                for (int j = 0; j < nM; j++) {
                    if (!t[m][j].nseeds) continue;
                    if (last >= 0 && ex_less(&tally, t[m][j].mean, t[m][j].se, t[m][last].mean,
                                             t[m][last].se))
                        down = 1;
                    if (first < 0) first = j;
                    last = j;
                    signal |= above_chance(&t[m][j], K);
                    len += snprintf(what + len, sizeof what - (size_t)len, " %d:%.2f", Ms[j], t[m][j].mean);
                }
                if (first < 0) continue;
                int up = ex_less(&tally, t[m][first].mean, t[m][first].se, t[m][last].mean,
                                 t[m][last].se);
                const char *why = down ? " (a step down by 2 s.e.)"
                                  : up ? ""
                                       : " (largest M not above smallest by 2 s.e.)";
                if (m == 0) /* the paper claims the rise for the private methods only ("more
                             * samples ... reduce the impact of the noise", section V-B): the
                             * noiseless row is reported, not scored */
                    printf("  %-19s %-6s %s%s (not a claim of the paper: it claims the rise for "
                           "DP-Fully collaborative and Algorithm 1)\n",
                           "INFO", where, what, why);
                else
                    ex_claim(&tally, up && !down, signal, where, "%s%s", what, why);
            }
        }

    if (g_noise == DPDO_NOISE_RIGOROUS)
        printf("== rigorous noise: every binary model calibrated to (eps, delta) on its own ledger (the paper's\n"
               "   per-model guarantee); the K-class classifier (the K models together) is printed by basic\n"
               "   composition of the K per-model figures\n");
    printf("== privacy per DP curve (Figures, M = %d): sigma_model = Theorem 2's model-level noise std of\n"
           "   a Global step (WR: per step at eta = 1); paper = Theorem 2, (eps, delta) per binary model and\n"
           "   pass (WR: (eps/5, delta/5) per iteration, <= 5 uses, basic composition); x K = basic\n"
           "   composition over the K one-vs-all models (ignored by the paper); rigorous = the sound accountant\n"
           "   \"%s\" over the ledger shared by the K models of a run (composed over them), worst node, at\n"
           "   delta and at K delta\n",
           M_FIG, ex_accountant_name());
    const char *notes[N_METHODS] = {0};
    for (int pi = 0; pi < 2 && do_figs && !only_nl; pi++)
        for (int m = DQN; m < N_METHODS; m++)
            for (int ie = 0; ie < neps; ie++) {
                for (int s = 0; s < 2; s++) {
                    const result *r = &fig[pi][s][m][ie];
                    printf("  %-13s %-15s %-15s eps=%-4g sigma_model=%-9.4g paper: eps=%.3g delta=%.3g %s"
                           " x K=%d: eps=%.3g delta=%.3g  rigorous(%s): eps=%.4g @delta; %d-class "
                           "classifier: eps=%.4g delta=%.2g\n",
                           probs[pi].name, SETTING_NAME[s], METHOD_NAME[m], eps[ie], r->sigma_model,
                           r->eps_model, r->delta_model, r->paper_valid ? "valid  " : "(edge/invalid)", probs[pi].K,
                           probs[pi].K * r->eps_model, probs[pi].K * r->delta_model,
                           g_noise == DPDO_NOISE_RIGOROUS ? "per model" : "K models", r->eps_rig, probs[pi].K,
                           r->eps_multi, r->delta_multi);
                    if (!notes[m]) notes[m] = r->notes;
                }
            }
    if (do_tabs) {
        printf("  tables (eps = 1 per binary model, delta = 1/(M n_m)^2): the K-class classifier's eps "
               "by the sound accountant, by M:\n");
        for (int pi = 0; pi < 2; pi++) {
            printf("  %-13s", probs[pi].name);
            for (int j = 0; j < nM; j++)
                if (tab[pi][CONVEX][1][j].nseeds)
                    printf(" M=%d: %.3g (delta %.2g);", Ms[j], tab[pi][CONVEX][1][j].eps_multi,
                           tab[pi][CONVEX][1][j].delta_multi);
            printf("\n");
        }
    }
    for (int m = DQN; m < N_METHODS; m++)
        if (notes[m] && *notes[m]) printf("  notes (%s): %s\n", METHOD_NAME[m], notes[m]);
    printf("  not covered by any figure above: the preprocessing (mean, z-scores, PCA basis) is fitted on\n"
           "  the training data the nodes hold (docs/algorithms/dp-wor-sgd.md); Noiseless is not private (eps = inf)\n");
    printf("== output in %s:", out);
    for (int f = 1; do_figs && !only_nl && f <= 4; f++) printf(" fig%d.csv", f);
    if (do_figs && g_keep_rows) printf(" rows-*.bin (the Noiseless runs' rows and models, for %s)", g_sklearn);
    for (int t2 = 1; do_tabs && t2 <= 2; t2++) printf(" table%d.csv", t2);
    printf(only_nl ? " no figure files (--only noiseless)\n"
           : gnuplot ? " (each with .gp and .png)\n"
                     : " (and .gp scripts; gnuplot not found: no PNG)\n");
    ex_tally_print(&tally);
    status = ex_exit_status(&tally, no_fail_exit);
done:
    for (int pi = 0; pi < nprob; pi++) problem_free(&probs[pi]);
    return status;
}
