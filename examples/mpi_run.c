/* SPDX-License-Identifier: BSD-3-Clause */
/* mpi_run: any libdpdo algorithm spread over MPI processes.
 *
 *   mpiexec -n 4 build/examples/mpi_run --algorithm dp-dda --nodes 20 --rounds 2000
 *   mpiexec -f hosts -n 8 mpi_run --algorithm fed-plt --shards 'data/node-%d.libsvm' --nodes 8
 *
 * Every rank hosts a block of nodes and loads only their data: with
 * --shards PATTERN node i's rows come from the LIBSVM file PATTERN % i (read
 * by its rank alone); with --data FILE the file is cut into --nodes equal
 * contiguous blocks and each rank keeps its own; without either, each rank
 * generates the same epsilon-like synthetic set (a stand-in for data it
 * would hold) and keeps its nodes' blocks. The ranks then
 * share only the row counts (public metadata the privacy accounting needs),
 * build the same algorithm, and step it together. Rank 0 prints progress,
 * the privacy spent, what crossed the wire and the final objective and
 * accuracy, which every rank computes on its own nodes and adds up.
 * Randomness: secure by default (each node's keys are drawn on the rank that
 * hosts it); --reproducible makes the run bit-identical to the one-process run.
 * --timeout S (default 60): how long any rank waits for a peer before it stops with
 * DPDO_E_IO (a host that failed, vanished or lost its link); tests/mpi/netns.sh uses it.
 * README.md "Running across machines" shows a hostfile. */
#define EX_PROG "mpi_run"
#include "common.h" /* TRY, now(), the randomness line, parameter keys by name */
#include <dpdo/mpi.h>

#define MAXN 4096

static int rank;

/* Print on rank 0 only. An error on any rank stops every rank: TRY jumps to
 * main's `fail`, which calls MPI_Abort (the other ranks would otherwise wait
 * in the next collective for ever). */
#define SAY(...) (rank == 0 ? printf(__VA_ARGS__) : 0)

/* Progress of dpdo_algorithm_run (every T/10 rounds, with the rigorous epsilon spent): rank 0
 * prints it; every rank runs the same accountant query, so the ranks stay in step. */
static int on_progress(const dpdo_progress *p, void *user)
{
    int64_t every = *(const int64_t *)user; /* the final call repeats a multiple of `every` */
    if (p->status == DPDO_ROUND || (p->status == DPDO_DONE && p->round % every != 0))
        SAY("  round %6lld  epsilon %.4f\n", (long long)p->round, p->epsilon);
    return 0; /* never cancel */
}

/* The example's own collectives on MPI_COMM_WORLD (row counts, dimension, totals) wait at most
 * --timeout seconds, as libdpdo_mpi's do: a host that vanishes while the ranks load their data
 * (before the run) stops every other rank with a message, where a blocking MPI_Allreduce would
 * hang or hand back a failed reduction's buffer. `rc` is the call that started `req`. DPDO_OK,
 * or DPDO_E_IO with the reason printed. */
static int peer_lost; /* set by world_wait: main's `fail` then waits for the other ranks to say */

static int world_wait(int rc, MPI_Request *req, double timeout, const char *what)
{
    double t0 = now();
    int flag = 0;
    while (rc == MPI_SUCCESS && !flag) {
        rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || flag) break;
        if (now() - t0 > timeout) {
            fprintf(stderr, EX_PROG ": rank %d: %s: no answer from a peer within %g s (failed or vanished?)\n",
                    rank, what, timeout);
            peer_lost = 1;
            return DPDO_E_IO;
        }
        struct timespec ts = {0, 1000000}; /* 1 ms: these are a few calls outside the rounds */
        nanosleep(&ts, NULL);
    }
    if (rc != MPI_SUCCESS) {
        char es[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, es, &len);
        fprintf(stderr, EX_PROG ": rank %d: %s: MPI error: %s\n", rank, what, es);
        peer_lost = 1;
        return DPDO_E_IO;
    }
    return DPDO_OK;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* world_wait reports failures */
    const char *algo = "dp-dda", *data = NULL, *shards = NULL, *loss_name = "logistic", *sets[32];
    int64_t n = 20, T = 1000, q = 500, d = 20, nsets = 0;
    double eps = 1.0, lambda = 0.1, timeout = 60; /* --timeout: seconds to wait for any peer */
    uint64_t seed = 1;
    int reproducible = 0; /* default: secure randomness (per-node keys drawn on the hosting rank) */
    for (int a = 1; a < argc; a++) {
        const char *o = argv[a], *v = a + 1 < argc ? argv[a + 1] : "";
        if (!strcmp(o, "--algorithm")) algo = v, a++;
        else if (!strcmp(o, "--data")) data = v, a++;
        else if (!strcmp(o, "--shards")) shards = v, a++;
        else if (!strcmp(o, "--nodes")) n = atoll(v), a++;
        else if (!strcmp(o, "--rounds")) T = atoll(v), a++;
        else if (!strcmp(o, "--rows")) q = atoll(v), a++;     /* synthetic rows per node */
        else if (!strcmp(o, "--features")) d = atoll(v), a++; /* synthetic features */
        else if (!strcmp(o, "--epsilon")) eps = atof(v), a++;
        else if (!strcmp(o, "--l2")) lambda = atof(v), a++;
        else if (!strcmp(o, "--loss")) loss_name = v, a++;
        else if (!strcmp(o, "--seed")) seed = strtoull(v, NULL, 10), a++;
        else if (!strcmp(o, "--set") && nsets < 32) sets[nsets++] = v, a++; /* key=value */
        else if (!strcmp(o, "--reproducible")) reproducible = 1;
        else if (!strcmp(o, "--timeout")) timeout = atof(v), a++; /* since 0.3 */
        else {
            SAY("usage: mpi_run [--algorithm NAME] [--data FILE | --shards PATTERN] [--nodes N] [--rounds T]\n"
                "               [--rows Q --features D] [--epsilon E] [--l2 L] [--loss logistic|hinge]\n"
                "               [--seed S] [--set param=value]... [--reproducible] [--timeout SECONDS]\n");
            MPI_Finalize();
            return strcmp(o, "--help") ? 2 : 0;
        }
    }
    if (n < 1 || n > MAXN) {
        SAY("--nodes must be in [1, %d]\n", MAXN);
        MPI_Finalize();
        return 2;
    }

    /* 1. The layout: which nodes this rank hosts (balanced blocks). */
    /* --timeout: a peer (a host) that fails, vanishes or stops answering gives every other rank
     * DPDO_E_IO within this many seconds (dpdo_mpi_options.timeout; default 60) */
    if (!(timeout > 0) || timeout > 1e9) {
        SAY("--timeout must be > 0 seconds\n");
        MPI_Finalize();
        return 2;
    }
    dpdo_mpi_options mo;
    dpdo_mpi_options_init(&mo, sizeof mo);
    mo.timeout = timeout;
    dpdo_mpi *m = NULL;
    double t_start = now();
    TRY(dpdo_mpi_create(&m, MPI_COMM_WORLD, n, NULL, &mo), "MPI handle");
    int64_t lo = dpdo_mpi_first_node(m), hi = dpdo_mpi_end_node(m);

    /* 2. This rank's data only. One dataset per hosted node keeps the code simple. */
    static dpdo_dataset *ds[MAXN];
    static dpdo_shard *sh[MAXN];
    static int64_t rows[MAXN];
    dpdo_load_options lo_opt;
    dpdo_load_options_init(&lo_opt, sizeof lo_opt);
    lo_opt.label_map = DPDO_LABEL_BINARY;
    int64_t dim = 0;
    for (int pass = 0; pass < 2; pass++) { /* pass 1 reloads with the largest dimension of all ranks */
        for (int64_t i = lo; i < hi; i++) {
            if (shards || i == lo) dpdo_dataset_destroy(ds[i]);
            ds[i] = NULL;
            TRY(dpdo_dataset_create(&ds[i]), "out of memory");
            if (shards) {
                char path[1024];
                snprintf(path, sizeof path, shards, (int)i);
                TRY(dpdo_dataset_load_libsvm(ds[i], path, &lo_opt), dpdo_dataset_errmsg(ds[i]));
            } else if (data) { /* one copy of the file per rank, shared by its nodes */
                if (i == lo) TRY(dpdo_dataset_load_libsvm(ds[i], data, &lo_opt), dpdo_dataset_errmsg(ds[i]));
            } else if (i == lo) { /* one synthetic set per rank, shared by its nodes */
                dpdo_generate_options g;
                dpdo_generate_options_init(&g, sizeof g);
                g.n = q * n, g.d = d, g.seed = seed;
                TRY(dpdo_dataset_generate(ds[i], "epsilon-like", &g), dpdo_dataset_errmsg(ds[i]));
            }
        }
        if (!shards)
            for (int64_t i = lo + 1; i < hi; i++) dpdo_dataset_destroy(ds[i]), ds[i] = ds[lo];
        int64_t mine = 0;
        for (int64_t i = lo; i < hi; i++) mine = mine > dpdo_dataset_features(ds[i]) ? mine : dpdo_dataset_features(ds[i]);
        MPI_Request rq;
        TRY(world_wait(MPI_Iallreduce(&mine, &dim, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD, &rq), &rq, timeout, "dimension"),
            "a peer failed before the run");
        int again = 0, any = 0;
        for (int64_t i = lo; i < hi; i++) again |= dpdo_dataset_features(ds[i]) != dim;
        TRY(world_wait(MPI_Iallreduce(&again, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &rq), &rq, timeout, "dimension"),
            "a peer failed before the run");
        if (!any) break;
        lo_opt.n_features = dim;
    }
    for (int64_t i = lo; i < hi; i++) {
        int64_t r = dpdo_dataset_rows(ds[i]), first = 0, cnt = r;
        if (!shards) { /* --data: node i keeps block i of the file */
            first = r * i / n;
            cnt = r * (i + 1) / n - first;
        }
        TRY(dpdo_shard_create_range(&sh[i], ds[i], first, cnt), dpdo_dataset_errmsg(ds[i]));
        rows[i] = cnt;
    }
    /* the row counts are public: every rank needs all of them for the accounting */
    MPI_Request rq;
    TRY(world_wait(MPI_Iallreduce(MPI_IN_PLACE, rows, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, &rq), &rq, timeout,
                   "row counts"),
        "a peer failed before the run");

    /* 3. The same problem on every rank: real nodes here, remote nodes elsewhere. */
    dpdo_loss *loss = NULL;
    dpdo_regularizer *reg = NULL;
    dpdo_network *net = NULL;
    static dpdo_node *node[MAXN];
    TRY(dpdo_loss_create(&loss, dpdo_loss_type_find(loss_name), NULL, dim), "unknown --loss");
    TRY(dpdo_regularizer_create(&reg, dpdo_regularizer_type_find("l2"), NULL, dim, &lambda, 1), "l2");
    for (int64_t i = 0; i < n; i++) {
        if (i >= lo && i < hi) TRY(dpdo_node_create(&node[i], sh[i], loss, 1.0), dpdo_loss_errmsg(loss));
        else TRY(dpdo_node_create_remote(&node[i], loss, rows[i], 1.0), dpdo_loss_errmsg(loss));
    }
    TRY(dpdo_network_create(&net), "out of memory");
    TRY(dpdo_network_set_circulant(net, n, n > 4 ? 2 : 1), dpdo_network_errmsg(net));
    dpdo_ledger *ledger = NULL;
    dpdo_accountant *acc = NULL;
    TRY(dpdo_ledger_create(&ledger, n), "out of memory");
    TRY(dpdo_accountant_create(&acc, dpdo_accountant_type_find(DPDO_ACCOUNTANT_DEFAULT), NULL, ledger, NULL), "accountant");

    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.seed = seed;
    o.randomness = reproducible ? DPDO_RANDOMNESS_REPRODUCIBLE : DPDO_RANDOMNESS_SECURE;
    SAY("randomness: %s\n", ex_randomness(reproducible));
    o.max_rounds = T;
    o.epsilon = eps;
    dpdo_algorithm *alg = NULL;
    const dpdo_algorithm_type *type = dpdo_algorithm_type_find(algo);
    if (!type) {
        SAY("unknown algorithm '%s'; built in:", algo);
        for (const dpdo_algorithm_type *t = dpdo_algorithm_type_next(NULL); t; t = dpdo_algorithm_type_next(t))
            SAY(" %s", dpdo_algorithm_type_name(t));
        SAY("\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    TRY(dpdo_algorithm_create(&alg, type), "out of memory");
    TRY(dpdo_algorithm_setup(alg, node, (int32_t)n, net, reg, acc, &o), dpdo_algorithm_errmsg(alg));
    /* federated algorithms train locally with (noisy) gradient descent */
    dpdo_solver *solver = NULL;
    TRY(dpdo_solver_create(&solver, dpdo_solver_type_find("noisy-gd"), NULL, dim), "solver");
    dpdo_solver_set(solver, "lambda_lo", lambda);
    dpdo_solver_set(solver, "lambda_hi", 0.25 + lambda); /* logistic loss on unit-norm rows */
    if (dpdo_algorithm_set_solver(alg, solver) == DPDO_E_UNSUPPORTED) { /* not federated: unused */ }
    for (int64_t k = 0; k < nsets; k++) {
        char name[64];
        const char *eq = strchr(sets[k], '=');
        int key = 0;
        if (eq && eq - sets[k] < 63) {
            memcpy(name, sets[k], (size_t)(eq - sets[k]));
            name[eq - sets[k]] = 0;
            key = ex_param_key(type, name);
        }
        if (!key) {
            SAY("--set %s: not NAME=VALUE with a parameter of %s; its parameters:", sets[k], algo);
            for (int p = dpdo_algorithm_type_param_next(type, 0); p > 0; p = dpdo_algorithm_type_param_next(type, p))
                SAY(" %s", dpdo_param_name(p));
            SAY("\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        int rc = dpdo_param_type(key) == 0 ? dpdo_algorithm_set_int(alg, key, atoll(eq + 1))
                                           : dpdo_algorithm_set_double(alg, key, atof(eq + 1));
        TRY(rc, dpdo_algorithm_errmsg(alg));
    }

    /* 4. Attach MPI (collective: prepares and agrees) and step together. */
    TRY(dpdo_mpi_attach(m, alg, net), dpdo_mpi_errmsg(m));
    SAY("%s on %lld nodes over %d ranks (rank 0 hosts nodes %lld..%lld), d = %lld, %lld rounds\n", algo,
        (long long)n, dpdo_mpi_size(m), (long long)lo, (long long)hi - 1, (long long)dim, (long long)T);
    double t0 = now();
    int64_t every = T / 10 > 0 ? T / 10 : 1;
    TRY(dpdo_algorithm_set_progress(alg, on_progress, &every, every, DPDO_PROGRESS_EPSILON),
        dpdo_algorithm_errmsg(alg));
    TRY(dpdo_algorithm_run(alg, 0, NULL), dpdo_algorithm_errmsg(alg)); /* to DPDO_DONE or an error */
    double secs = now() - t0;

    /* 5. Results: the output model, evaluated by each rank on its own nodes, added up. */
    TRY(dpdo_algorithm_share_state(alg), dpdo_algorithm_errmsg(alg));
    double *x = malloc((size_t)dim * sizeof *x);
    if (!x) goto fail;
    TRY(dpdo_algorithm_get_output(alg, DPDO_NODE_ALL, x, dim), dpdo_algorithm_errmsg(alg));
    double part[3] = {0, 0, 0}; /* sum of f_i, correct predictions, samples */
    for (int64_t i = lo; i < hi; i++) {
        double fi = 0;
        TRY(dpdo_node_eval(node[i], x, dim, NULL, 0, 0, &fi, NULL, NULL), dpdo_node_errmsg(node[i]));
        part[0] += fi / (double)n;
        double *mg = malloc((size_t)rows[i] * sizeof *mg), *y = malloc((size_t)dpdo_dataset_rows(ds[i]) * sizeof *y);
        if (!mg || !y) goto fail; /* out of memory: stop every rank */
        TRY(dpdo_shard_margins(sh[i], x, dim, mg, rows[i]), dpdo_shard_errmsg(sh[i]));
        TRY(dpdo_dataset_get_labels(ds[i], y, dpdo_dataset_rows(ds[i])), dpdo_dataset_errmsg(ds[i]));
        for (int64_t k = 0; k < rows[i]; k++) part[1] += mg[k] * y[dpdo_shard_row_index(sh[i], k)] > 0;
        part[2] += (double)rows[i];
        free(mg), free(y);
    }
    TRY(world_wait(MPI_Iallreduce(MPI_IN_PLACE, part, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq), &rq, timeout,
                   "objective"),
        "a peer failed after the run");
    double e_rig = INFINITY;
    dpdo_algorithm_privacy(alg, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &e_rig, NULL, NULL);
    int64_t msgs = 0, bytes = 0, ctl = 0, tot[3];
    dpdo_mpi_traffic(m, &msgs, &bytes, &ctl);
    int64_t mine[3] = {msgs, bytes, ctl};
    TRY(world_wait(MPI_Ireduce(mine, tot, 3, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD, &rq), &rq, timeout, "traffic"),
        "a peer failed after the run");
    SAY("done in %.2f s (%.0f rounds/s); stop reason %d\n", secs, (double)dpdo_algorithm_round(alg) / secs,
        dpdo_algorithm_stop_reason(alg));
    double xx = 0;
    for (int64_t k = 0; k < dim; k++) xx += x[k] * x[k];
    SAY("F(x) = %.6f (mean loss + L2), training accuracy %.4f\n", part[0] + 0.5 * lambda * xx, part[1] / part[2]);
    uint64_t h = 1469598103934665603ull; /* FNV-1a of the output's bytes: compares runs bit for bit */
    for (size_t k = 0; k < (size_t)dim * sizeof *x; k++) h = (h ^ ((const unsigned char *)x)[k]) * 1099511628211ull;
    SAY("output hash %016llx, %lld rounds\n", (unsigned long long)h, (long long)dpdo_algorithm_round(alg));
    SAY("privacy: epsilon = %.4f at delta = %g (%s)\n", e_rig, o.delta, dpdo_algorithm_privacy_source(alg, 0));
    SAY("wire: %lld messages, %lld bytes between ranks, %lld control bytes\n", (long long)tot[0], (long long)tot[1],
        (long long)tot[2]);
    free(x);
    dpdo_algorithm_destroy(alg);
    dpdo_mpi_destroy(m);
    dpdo_solver_destroy(solver);
    dpdo_accountant_destroy(acc);
    dpdo_ledger_destroy(ledger);
    dpdo_network_destroy(net);
    for (int64_t i = 0; i < n; i++) dpdo_node_destroy(node[i]);
    for (int64_t i = lo; i < hi; i++) dpdo_shard_destroy(sh[i]);
    for (int64_t i = lo; i < hi; i++)
        if (shards || i == lo) dpdo_dataset_destroy(ds[i]);
    dpdo_regularizer_destroy(reg);
    dpdo_loss_destroy(loss);
    MPI_Finalize();
    return 0;

fail:
    fprintf(stderr, EX_PROG ": rank %d stops every rank (%.1f s after the start)\n", rank, now() - t_start);
    if (peer_lost || (m && dpdo_mpi_errmsg(m)[0])) { /* a peer failed or vanished: let every other rank see it and say */
        struct timespec ts = {(time_t)timeout + 1, 0}; /* so before MPI_Abort ends them */
        nanosleep(&ts, NULL);
    }
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
}
