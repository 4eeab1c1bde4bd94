/* SPDX-License-Identifier: BSD-3-Clause */
/* dpdo_train (include/dpdo/train.h): the front door. It sits on top of the public API -- datasets,
 * shards, losses, nodes, the network, the regularizer, the ledger and accountant, the algorithm
 * and the model file -- and calls nothing of the engine's internals (docs/architecture.md, "The
 * front door"). What it plans for a budget is the "library" profile of the scikit-learn
 * estimators (python/dpdo/sklearn.py, _plan_run; docs/choosing.md, "Library defaults"), ported
 * to C without the intercept feature. */
#include "dpdo/train.h"
#include "../core/core_impl.h"
#include "../core/options_impl.h"
#include "../data/data_impl.h"
#include "../model/model_file_impl.h"
#include "dpdo/accountant.h"
#include "dpdo/loss.h"
#include "dpdo/network.h"
#include "dpdo/node.h"
#include "dpdo/regularizer.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void train_defaults(dpdo_train_options *d)
{
    memset(d, 0, sizeof *d);
    d->struct_size = sizeof *d;
    d->lambda = NAN;
    d->noise_mode = DPDO_NOISE_RIGOROUS;
    d->randomness = DPDO_RANDOMNESS_SECURE;
    d->partition = DPDO_PARTITION_SHUFFLED;
}

DPDO_API int dpdo_train_options_init(dpdo_train_options *o, size_t struct_size)
{
    dpdo_train_options d;
    train_defaults(&d);
    return dpdo__options_init(o, struct_size, &d, sizeof d);
}

/* ---- the plan of one binary run ------------------------------------------------------------ */
typedef struct {
    int64_t rounds, batch; /* batch 0: the option's default */
    double step;           /* NaN: the preset's */
    double alpha;          /* L2 strength */
    double clip;           /* per-sample clip = Lipschitz bound */
    double averaging;      /* fraction of the rounds in the tail average; 0 = none */
    int64_t dda_active;    /* 0: not set */
    int fed;               /* fed-plt parameters */
    int adp;               /* do-adp parameters */
    int64_t wor_passes;    /* dp-wor-sgd: passes over the local data (they end the run); 0 */
    double noise;          /* the noise level nu the budget implies (inf: not private) */
} plan;

/* The library profile of python/dpdo/sklearn.py (_plan_run) for an algorithm on nodes of
 * q_min..q_max rows, dimension d, budget (eps, delta) of this run. */
static int make_plan(plan *p, const char *alg, int64_t nodes, int64_t q_min, int64_t q_max,
                     int64_t d, double eps, double delta, const char *acc_name, char *err)
{
    memset(p, 0, sizeof *p);
    p->step = NAN;
    p->alpha = 1e-3;
    p->averaging = 0.5;
    p->rounds = 0;
    /* the noise on a run's averaged full-batch gradient (clip 1): the accountant's sigma for
     * 100 releases of sensitivity 2/q, divided by 10 (sqrt of 100 averaged releases), times
     * sqrt(d / nodes) for its norm after the average over the nodes */
    double nu = INFINITY;
    if (isfinite(eps)) {
        dpdo_ledger *l = NULL;
        dpdo_accountant *a = NULL;
        double sigma = NAN;
        int rc = dpdo_ledger_create(&l, 1);
        if (!rc)
            rc = dpdo_accountant_create(&a, dpdo_accountant_type_find(acc_name), NULL, l, NULL);
        if (!rc)
            rc = dpdo_accountant_calibrate_sigma(a, NULL, 2.0 / (double)q_min, 100, eps, delta,
                                                 &sigma);
        if (rc)
            dpdo__err(err, rc,
                      "planning: the accountant '%s' cannot calibrate (epsilon %g, delta "
                      "%g): %s",
                      acc_name, eps, delta, a ? dpdo_accountant_errmsg(a) : dpdo_strerror(rc));
        dpdo_accountant_destroy(a);
        dpdo_ledger_destroy(l);
        if (rc) return rc;
        nu = sigma / 10.0 * sqrt((double)d / (double)nodes);
    }
    p->noise = nu;
    /* t: 0 where the noise is small (nu <= 0.1), 1 where it is large (nu >= 0.3) */
    double t = !isfinite(eps) || nu <= 0.1 ? 0.0 : nu >= 0.3 ? 1.0 : log(nu / 0.1) / log(3.0);
    p->clip = pow(0.2, t);
    if (strcmp(alg, "dp-dda") == 0) {
        p->batch = q_min;
        p->rounds = 200;
        p->dda_active = nodes;
        p->averaging = 0;
        p->alpha = 1e-2 * pow(3.0, t);
    } else if (strcmp(alg, "do-adp") == 0) {
        p->batch = q_min;
        p->rounds = 300;
        p->adp = 1;
        p->step = 0.5 * pow(0.2, t);
    } else if (strcmp(alg, "dp-wor-sgd") == 0) {
        p->batch = q_min;
        p->step = 0.5;
        p->wor_passes = 40;
        p->rounds = p->wor_passes * (q_max / p->batch); /* the horizon of the tail average */
    } else if (strcmp(alg, "fed-plt") == 0) {
        p->fed = 1;
        p->rounds = (int64_t)llround(50 * pow(0.4, t));
        p->clip *= 2.0 * pow(0.5, t);
    } else {
        p->averaging = 0; /* not planned: the option defaults */
        p->clip = 1.0;
    }
    return DPDO_OK;
}

/* ---- one training ---------------------------------------------------------------------------- */
typedef struct {
    dpdo_dataset *ds;
    int64_t nodes;
    const char *alg;
    double eps, delta;
    dpdo_train_options o;
} job;

/* node k's rows [starts[k], starts[k+1]) of rows[] (partitions other than SHUFFLED) */
typedef struct {
    int64_t *rows, *starts;
} parts;

static int make_parts(const job *j, parts *pt, int64_t n, char *err)
{
    pt->rows = dpdo__alloc_array((size_t)n, sizeof(int64_t));
    pt->starts = dpdo__alloc_array((size_t)j->nodes + 1, sizeof(int64_t));
    if (!pt->rows || !pt->starts) return dpdo__err(err, DPDO_E_NOMEM, "out of memory");
    if (j->o.partition == DPDO_PARTITION_CONTIGUOUS) {
        for (int64_t i = 0; i < n; i++)
            pt->rows[i] = i;
        for (int64_t k = 0; k <= j->nodes; k++)
            pt->starts[k] = k * (n / j->nodes) + (k < n % j->nodes ? k : n % j->nodes);
        return DPDO_OK;
    }
    /* by array: a counting sort of the rows by node, rows ascending within a node */
    const int32_t *a = j->o.node_of_row;
    memset(pt->starts, 0, ((size_t)j->nodes + 1) * sizeof(int64_t));
    for (int64_t i = 0; i < n; i++) {
        if (a[i] < 0 || a[i] >= j->nodes)
            return dpdo__err(err, DPDO_E_INVAL, "node_of_row[%lld] = %ld is not in [0, %lld)",
                             (long long)i, (long)a[i], (long long)j->nodes);
        pt->starts[a[i] + 1]++;
    }
    for (int64_t k = 0; k < j->nodes; k++) {
        if (pt->starts[k + 1] == 0)
            return dpdo__err(err, DPDO_E_INVAL, "node %lld has no rows in node_of_row",
                             (long long)k);
        pt->starts[k + 1] += pt->starts[k];
    }
    int64_t *fill = dpdo__alloc_array((size_t)j->nodes, sizeof(int64_t));
    if (!fill) return dpdo__err(err, DPDO_E_NOMEM, "out of memory");
    memcpy(fill, pt->starts, (size_t)j->nodes * sizeof(int64_t));
    for (int64_t i = 0; i < n; i++)
        pt->rows[fill[a[i]]++] = i;
    dpdo__free(fill);
    return DPDO_OK;
}

/* everything one binary run builds, destroyed in reverse order of borrowing */
typedef struct {
    dpdo_shard **shards;
    dpdo_node **node;
    dpdo_loss *loss;
    dpdo_regularizer *reg;
    dpdo_network *net;
    dpdo_ledger *ledger;
    dpdo_accountant *acc;
    dpdo_algorithm *alg;
    double *avg, *snap;
} run_objs;

static void run_free(run_objs *r, int64_t nodes)
{
    dpdo_algorithm_destroy(r->alg);
    dpdo_accountant_destroy(r->acc);
    dpdo_ledger_destroy(r->ledger);
    dpdo_network_destroy(r->net);
    dpdo_regularizer_destroy(r->reg);
    for (int64_t k = 0; r->node && k < nodes; k++)
        dpdo_node_destroy(r->node[k]);
    dpdo_loss_destroy(r->loss);
    for (int64_t k = 0; r->shards && k < nodes; k++)
        dpdo_shard_destroy(r->shards[k]);
    dpdo__free(r->shards);
    dpdo__free(r->node);
    dpdo__free(r->avg);
    dpdo__free(r->snap);
    memset(r, 0, sizeof *r);
}

/* run the algorithm to the end of its horizon T; with p->averaging > 0 the model is the mean of
 * snapshots of the output over the last ceil(averaging T) rounds (post-processing: free) */
static int run_to_end(run_objs *r, const plan *p, int64_t T, int64_t d, char *err)
{
    int rc;
    if (!(p->averaging > 0)) {
        rc = dpdo_algorithm_run(r->alg, 0, NULL);
        if (rc < 0) goto fail;
        return DPDO_OK;
    }
    int64_t tail = (int64_t)ceil(p->averaging * (double)T);
    if (tail < 1) tail = 1;
    int64_t t0 = T - tail, chunk = tail / 64 > 1 ? tail / 64 : 1, snaps = 0;
    r->avg = dpdo__alloc_array((size_t)d, sizeof(double));
    r->snap = dpdo__alloc_array((size_t)d, sizeof(double));
    if (!r->avg || !r->snap) return dpdo__err(err, DPDO_E_NOMEM, "out of memory");
    rc = DPDO_OK;
    while (rc != DPDO_DONE) {
        int64_t at = dpdo_algorithm_round(r->alg);
        int64_t next = at < t0 ? t0 : at + chunk;
        if (next > at) {
            rc = dpdo_algorithm_run(r->alg, next - at, NULL);
            if (rc < 0) goto fail;
        }
        int64_t now = dpdo_algorithm_round(r->alg);
        if (now >= t0 && now > at) {
            if ((rc = dpdo_algorithm_get_output(r->alg, DPDO_NODE_ALL, r->snap, d)) < 0) goto fail;
            snaps++;
            for (int64_t c = 0; c < d; c++)
                r->avg[c] += (r->snap[c] - r->avg[c]) / (double)snaps;
        }
        if (now == at && rc != DPDO_DONE) rc = DPDO_DONE; /* nothing ran: the run is over */
    }
    if (snaps == 0) {
        dpdo__free(r->avg);
        r->avg = NULL;
    }
    return DPDO_OK;
fail:
    return dpdo__err(err, rc, "%s: %s", dpdo_algorithm_name(r->alg), dpdo_algorithm_errmsg(r->alg));
}

/* One binary run on ds's current labels with budget (eps, delta); fills out. */
static int one_run(const job *j, const parts *pt, double eps, double delta, dpdo_model *out,
                   char *err)
{
    const dpdo_train_options *o = &j->o;
    dpdo_dataset *ds = j->ds;
    int64_t nodes = j->nodes, d = dpdo_dataset_features(ds);
    run_objs r;
    memset(&r, 0, sizeof r);
    int rc;
    r.shards = dpdo__calloc((size_t)nodes, sizeof *r.shards);
    r.node = dpdo__calloc((size_t)nodes, sizeof *r.node);
    if (!r.shards || !r.node) {
        rc = dpdo__err(err, DPDO_E_NOMEM, "out of memory");
        goto out;
    }
    /* the partition */
    if (o->partition == DPDO_PARTITION_SHUFFLED) {
        if ((rc = dpdo_dataset_partition(ds, nodes, NULL, o->seed, r.shards))) {
            dpdo__err(err, rc, "partition: %s", dpdo_dataset_errmsg(ds));
            goto out;
        }
    } else {
        for (int64_t k = 0; k < nodes; k++)
            if ((rc = dpdo_shard_create(&r.shards[k], ds, pt->rows + pt->starts[k],
                                        pt->starts[k + 1] - pt->starts[k]))) {
                dpdo__err(err, rc, "node %lld's shard: %s", (long long)k, dpdo_dataset_errmsg(ds));
                goto out;
            }
    }
    int64_t q_min = INT64_MAX, q_max = 0;
    for (int64_t k = 0; k < nodes; k++) {
        int64_t q = dpdo_shard_rows(r.shards[k]);
        q_min = q < q_min ? q : q_min;
        q_max = q > q_max ? q : q_max;
    }
    const char *acc_name = o->accountant ? o->accountant : DPDO_ACCOUNTANT_DEFAULT;
    plan p;
    if ((rc = make_plan(&p, j->alg, nodes, q_min, q_max, d, eps, delta, acc_name, err))) goto out;
    /* the problem */
    const char *loss_name = o->loss ? o->loss : "logistic";
    if ((rc = dpdo_loss_create(&r.loss, dpdo_loss_type_find(loss_name), NULL, d))) {
        dpdo__err(err, rc, "loss '%s': %s", loss_name,
                  dpdo_loss_type_find(loss_name) ? dpdo_loss_errmsg(r.loss) : "unknown loss type");
        goto out;
    }
    for (int64_t k = 0; k < nodes; k++)
        if ((rc = dpdo_node_create(&r.node[k], r.shards[k], r.loss, 1.0))) {
            dpdo__err(err, rc, "node %lld: %s", (long long)k, dpdo_loss_errmsg(r.loss));
            goto out;
        }
    const char *reg_name = o->regularizer ? o->regularizer : "l2";
    double lambda = isnan(o->lambda) ? p.alpha : o->lambda;
    if (strcmp(reg_name, "none") != 0 &&
        (rc = dpdo_regularizer_create(&r.reg, dpdo_regularizer_type_find(reg_name), NULL, d,
                                      &lambda, 1))) {
        dpdo__err(err, rc, "regularizer '%s' (lambda %g): %s", reg_name, lambda,
                  r.reg                                  ? dpdo_regularizer_errmsg(r.reg)
                  : dpdo_regularizer_type_find(reg_name) ? "invalid parameter"
                                                         : "unknown regularizer type");
        goto out;
    }
    if ((rc = dpdo_network_create(&r.net)) ||
        (rc = nodes >= 3 ? dpdo_network_set_ring(r.net, nodes)
                         : dpdo_network_set_complete(r.net, nodes))) {
        dpdo__err(err, rc, "network: %s", dpdo_network_errmsg(r.net));
        goto out;
    }
    int private_run = isfinite(eps) && o->noise_mode != DPDO_NOISE_NONE;
    if (private_run) {
        if ((rc = dpdo_ledger_create(&r.ledger, nodes)) ||
            (rc = dpdo_accountant_create(&r.acc, dpdo_accountant_type_find(acc_name), NULL,
                                         r.ledger, NULL))) {
            dpdo__err(err, rc, "accountant '%s': %s", acc_name,
                      r.acc ? dpdo_accountant_errmsg(r.acc) : dpdo_strerror(rc));
            goto out;
        }
    }
    /* the algorithm */
    dpdo_algorithm_options ao;
    dpdo_algorithm_options_init(&ao, sizeof ao);
    ao.seed = o->seed;
    /* DP-WOR-SGD: its passes end the run (the estimators do the same) */
    ao.max_rounds = o->max_rounds > 0  ? o->max_rounds
                    : p.wor_passes > 0 ? (int64_t)1 << 40
                    : p.rounds > 0     ? p.rounds
                                       : ao.max_rounds;
    int64_t horizon = o->max_rounds > 0 ? o->max_rounds : p.rounds > 0 ? p.rounds : ao.max_rounds;
    ao.noise_mode = private_run ? o->noise_mode : DPDO_NOISE_NONE;
    ao.randomness = o->randomness;
    ao.num_threads = o->num_threads;
    ao.epsilon = private_run ? eps : ao.epsilon;
    ao.delta = delta;
    ao.lipschitz = p.clip;
    ao.clip = p.clip;
    if (p.batch > 0) ao.batch = p.batch;
    if (!isnan(p.step)) ao.step_size = p.step;
    if ((rc = dpdo_algorithm_create(&r.alg, dpdo_algorithm_type_find(j->alg)))) {
        dpdo__err(err, rc, "algorithm '%s': %s", j->alg,
                  dpdo_algorithm_type_find(j->alg) ? "cannot be created" : "unknown type");
        goto out;
    }
    if ((rc = dpdo_algorithm_setup(r.alg, r.node, nodes, r.net, r.reg, r.acc, &ao))) goto alg_fail;
    if (p.dda_active > 0 &&
        ((rc = dpdo_algorithm_set_int(r.alg, DPDO_PARAM_DDA_ACTIVE, p.dda_active)) ||
         (rc = dpdo_algorithm_set_int(r.alg, DPDO_PARAM_DDA_SCHEME, 0)) ||
         (rc = dpdo_algorithm_set_int(r.alg, DPDO_PARAM_DDA_ALL_COMPUTE, 1))))
        goto alg_fail;
    if (p.adp && ((rc = dpdo_algorithm_set_double(r.alg, DPDO_PARAM_ADP_GAMMA, 0.5)) ||
                  (rc = dpdo_algorithm_set_double(r.alg, DPDO_PARAM_ADP_BETA, 0.0))))
        goto alg_fail;
    if (p.wor_passes > 0 &&
        (rc = dpdo_algorithm_set_int(r.alg, DPDO_PARAM_WOR_PASSES, p.wor_passes)))
        goto alg_fail;
    if (p.fed && ((rc = dpdo_algorithm_set_int(r.alg, DPDO_PARAM_FED_EPOCHS, 1)) ||
                  (rc = dpdo_algorithm_set_double(r.alg, DPDO_PARAM_FED_RHO, 1.0))))
        goto alg_fail;
    if (o->progress) {
        int64_t every = o->progress_every > 0 ? o->progress_every
                        : horizon / 20 > 1    ? horizon / 20
                                              : 1;
        if ((rc = dpdo_algorithm_set_progress(r.alg, o->progress, o->progress_user, every,
                                              private_run ? DPDO_PROGRESS_EPSILON : 0)))
            goto alg_fail;
    }
    if ((rc = run_to_end(&r, &p, horizon, d, err))) goto out;
    if ((rc = dpdo_model_from_algorithm(out, r.alg))) {
        dpdo__err(err, rc, "model: %s", dpdo_model_errmsg(out));
        goto out;
    }
    if (r.avg && (rc = dpdo__model_set_x(out, r.avg, d, err))) goto out;
    rc = DPDO_OK;
    goto out;
alg_fail:
    dpdo__err(err, rc, "%s: %s", j->alg, dpdo_algorithm_errmsg(r.alg));
out:
    run_free(&r, nodes);
    return rc;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int train_locked(dpdo_model *m, char *err, void *ctx)
{
    job *j = ctx;
    dpdo_dataset *ds = j->ds;
    int64_t n = dpdo_dataset_rows(ds);
    int rc = DPDO_OK;
    int32_t *cls = NULL;
    double *labels = NULL;
    dpdo_model **runs = NULL;
    int64_t K = 0, nruns = 1;
    int relabelled = 0; /* dpdo_dataset_binarize ran on ds */
    parts pt = {NULL, NULL};
    /* classes: K distinct ids (0: train on the labels as they are) */
    if (dpdo_dataset_has_classes(ds)) {
        cls = dpdo__alloc_array((size_t)n, sizeof(int32_t));
        labels = dpdo__alloc_array((size_t)n, sizeof(double));
        if (!cls || !labels) {
            rc = dpdo__err(err, DPDO_E_NOMEM, "out of memory");
            goto out;
        }
        dpdo_dataset_get_classes(ds, cls, n);
        dpdo_dataset_get_labels(ds, labels, n);
        qsort(cls, (size_t)n, sizeof *cls, cmp_i32);
        for (int64_t i = 0; i < n; i++)
            if (K == 0 || cls[i] != cls[K - 1]) cls[K++] = cls[i];
        if (K < 2) {
            rc = dpdo__err(err, DPDO_E_INVAL,
                           "the dataset has one class (id %ld): nothing to "
                           "learn",
                           (long)cls[0]);
            goto out;
        }
        nruns = K >= 3 ? K : 1;
    } else {
        labels = dpdo__alloc_array((size_t)n, sizeof(double));
        if (!labels) {
            rc = dpdo__err(err, DPDO_E_NOMEM, "out of memory");
            goto out;
        }
        dpdo_dataset_get_labels(ds, labels, n);
        for (int64_t i = 0; i < n; i++)
            if (labels[i] != 1.0 && labels[i] != -1.0) {
                rc = dpdo__err(err, DPDO_E_INVAL,
                               "row %lld has label %g: labels must be +1/-1, or give the "
                               "dataset class ids (dpdo_dataset_set_classes)",
                               (long long)i, labels[i]);
                goto out;
            }
        dpdo__free(labels);
        labels = NULL;
    }
    if (j->o.partition != DPDO_PARTITION_SHUFFLED && (rc = make_parts(j, &pt, n, err))) goto out;
    runs = dpdo__calloc((size_t)nruns, sizeof *runs);
    if (!runs) {
        rc = dpdo__err(err, DPDO_E_NOMEM, "out of memory");
        goto out;
    }
    /* each example is in every run: run k gets (eps/nruns, delta/nruns), basic composition */
    double eps = j->eps / (double)nruns, delta = j->delta / (double)nruns;
    for (int64_t k = 0; k < nruns; k++) {
        if ((rc = dpdo_model_create(&runs[k]))) {
            rc = dpdo__err(err, rc, "out of memory");
            goto out;
        }
        if (K > 0 &&
            (rc = dpdo_dataset_binarize(ds, DPDO_BINARY_ONE_VS_REST, K == 2 ? cls[1] : cls[k]))) {
            dpdo__err(err, rc, "class %ld: %s", (long)cls[k], dpdo_dataset_errmsg(ds));
            goto out;
        }
        relabelled = K > 0;
        rc = one_run(j, &pt, eps, delta, runs[k], err);
        if (rc) {
            if (nruns > 1) {
                char what[DPDO__ERRMSG_LEN];
                memcpy(what, err, sizeof what);
                what[sizeof what - 1] = '\0';
                dpdo__err(err, rc, "class %ld (run %lld of %lld): %s", (long)cls[k],
                          (long long)k + 1, (long long)nruns, what);
            }
            goto out;
        }
    }
    rc = dpdo__model_combine(m, runs, nruns, K > 0 ? cls : NULL, K, j->nodes, err);
out:
    /* binarize replaced the labels: give ds its own back (binarize made the library own the
     * label array, so this never writes to a caller's borrowed array) */
    if (relabelled && labels && ds->y) memcpy((double *)ds->y, labels, (size_t)n * sizeof(double));
    for (int64_t k = 0; runs && k < nruns; k++)
        dpdo_model_destroy(runs[k]);
    dpdo__free(runs);
    dpdo__free(pt.rows);
    dpdo__free(pt.starts);
    dpdo__free(cls);
    dpdo__free(labels);
    return rc;
}

DPDO_API int dpdo_train(dpdo_model *m, dpdo_dataset *ds, int64_t nodes, const char *algorithm,
                        double epsilon, double delta, const dpdo_train_options *opts)
{
    job j;
    memset(&j, 0, sizeof j);
    train_defaults(&j.o);
    char err[256] = ""; /* dpdo__options_accept writes at most 256 bytes */
    int rc = dpdo__options_accept(&j.o, sizeof j.o, offsetof(dpdo_train_options, reserved), opts,
                                  "dpdo_train_options", err);
    const char *why = rc ? err : NULL;
    j.ds = ds;
    j.nodes = nodes;
    j.alg = algorithm;
    j.eps = epsilon;
    j.delta = delta;
    int64_t n = dpdo_dataset_rows(ds);
    char buf[200];
    if (!rc) {
        rc = DPDO_E_INVAL;
        if (!ds)
            why = "ds is NULL";
        else if (dpdo_dataset_layout(ds) == DPDO_LAYOUT_EMPTY)
            rc = DPDO_E_STATE, why = "the dataset is empty";
        else if (!algorithm)
            why = "algorithm is NULL";
        else if (!dpdo_algorithm_type_find(algorithm))
            why = (snprintf(buf, sizeof buf,
                            "algorithm '%.60s' is unknown (dpdo_algorithm_type_next "
                            "lists the types)",
                            algorithm),
                   buf);
        else if (nodes < 1 || nodes > n)
            why = (snprintf(buf, sizeof buf, "nodes = %lld: must be in [1, %lld] (the rows)",
                            (long long)nodes, (long long)n),
                   buf);
        else if (!(epsilon > 0))
            why = (snprintf(buf, sizeof buf, "epsilon = %g: must be > 0 or +inf", epsilon), buf);
        else if (!(delta > 0 && delta < 1))
            why = (snprintf(buf, sizeof buf, "delta = %g: must be in (0, 1)", delta), buf);
        else if (j.o.partition < DPDO_PARTITION_SHUFFLED || j.o.partition > DPDO_PARTITION_BY_ARRAY)
            why = (snprintf(buf, sizeof buf, "partition = %d: use DPDO_PARTITION_*",
                            (int)j.o.partition),
                   buf);
        else if ((j.o.partition == DPDO_PARTITION_BY_ARRAY) != (j.o.node_of_row != NULL))
            why = "node_of_row is needed with DPDO_PARTITION_BY_ARRAY, and only with it";
        else if (j.o.max_rounds < 0)
            why = "max_rounds < 0";
        else if (!isnan(j.o.lambda) && !(j.o.lambda >= 0 && isfinite(j.o.lambda)))
            why = "lambda must be finite and >= 0 (NaN: the plan's)";
        else if (j.o.progress_every < 0)
            why = "progress_every < 0";
        else
            rc = DPDO_OK;
    }
    return dpdo__model_locked(m, "dpdo_train", rc, why, train_locked, &j);
}
