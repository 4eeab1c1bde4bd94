/* SPDX-License-Identifier: BSD-3-Clause */
/* DP-DDA over MPI (issue 10): rounds/s and bytes per round on the
 * epsilon-like configuration of bench_engine (n = 20 nodes, d = 2000, 500
 * rows each, b = 2 active per round, fixed sigma), with the nodes spread over
 * the ranks of `mpiexec -n K`, next to the same problem in one process
 * (measured by rank 0 alone before the distributed run). Run by `make bench`
 * for K = 1, 2, 4. On one machine the ranks share its cores: with K larger
 * than the core count the figure measures oversubscription, not the network.
 * Output lines: "mpi_K<k>_<key> <value>". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dpdo/dpdo.h>
#include <dpdo/mpi.h>

#define N 20
#define D 2000
#define Q 500

static double run(int distributed, int64_t rounds, int64_t *msgs, int64_t *bytes, int64_t *ctl, int *err)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    dpdo_dataset *ds = NULL;
    dpdo_shard *sh[N] = {0};
    dpdo_node *node[N] = {0};
    dpdo_loss *loss = NULL;
    dpdo_regularizer *reg = NULL;
    dpdo_network *net = NULL;
    dpdo_algorithm *alg = NULL;
    dpdo_mpi *m = NULL;
    dpdo_ledger *led = NULL;
    dpdo_accountant *acc = NULL;
    double lam = 1e-3, secs = -1;
    int64_t sizes[N];
    for (int i = 0; i < N; i++) sizes[i] = Q;
    dpdo_generate_options g;
    dpdo_generate_options_init(&g, sizeof g);
    g.n = N * Q, g.d = D, g.seed = 3;
    *err = 1;
    if (dpdo_dataset_create(&ds) || dpdo_dataset_generate(ds, "epsilon-like", &g) ||
        dpdo_dataset_partition(ds, N, sizes, 1, sh) || dpdo_loss_create(&loss, dpdo_loss_type_find("hinge"), NULL, D) ||
        dpdo_regularizer_create(&reg, dpdo_regularizer_type_find("l2"), NULL, D, &lam, 1) ||
        dpdo_network_create(&net) || dpdo_network_set_circulant(net, N, 2) || dpdo_ledger_create(&led, N) ||
        dpdo_accountant_create(&acc, dpdo_accountant_type_find("rdp"), NULL, led, NULL))
        goto done;
    if (distributed && dpdo_mpi_create(&m, MPI_COMM_WORLD, N, NULL, NULL)) goto done;
    for (int i = 0; i < N; i++) {
        int here = !m || (i >= dpdo_mpi_first_node(m) && i < dpdo_mpi_end_node(m));
        if (here ? dpdo_node_create(&node[i], sh[i], loss, 1) : dpdo_node_create_remote(&node[i], loss, Q, 1)) goto done;
    }
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.noise_mode = DPDO_NOISE_FIXED;
    o.sigma = 0.01;
    o.max_rounds = rounds + 1;
    o.max_epsilon = 1e300; /* a throughput test: the guard stays off */
    if (dpdo_algorithm_create(&alg, dpdo_algorithm_type_find("dp-dda")) ||
        dpdo_algorithm_setup(alg, node, N, net, reg, acc, &o) || dpdo_algorithm_set_int(alg, DPDO_PARAM_DDA_ACTIVE, 2))
        goto done;
    if (m && dpdo_mpi_attach(m, alg, net)) goto done;
    if (!m && dpdo_algorithm_prepare(alg)) goto done;
    if (dpdo_algorithm_step(alg) != DPDO_ROUND) goto done; /* warm-up: buffers grow in round 1 */
    int64_t m0 = 0, b0 = 0, c0 = 0;
    if (m) dpdo_mpi_traffic(m, &m0, &b0, &c0);
    if (m) MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (dpdo_algorithm_run(alg, rounds, NULL) != DPDO_ROUND) goto done;
    if (m) MPI_Barrier(MPI_COMM_WORLD);
    secs = MPI_Wtime() - t0;
    if (m) {
        dpdo_mpi_traffic(m, msgs, bytes, ctl);
        *msgs -= m0, *bytes -= b0, *ctl -= c0;
    } else {
        *msgs = *bytes = *ctl = 0;
    }
    *err = 0;
done:
    if (*err && rank == 0)
        fprintf(stderr, "bench_mpi: %s %s\n", alg ? dpdo_algorithm_errmsg(alg) : "", m ? dpdo_mpi_errmsg(m) : "");
    dpdo_algorithm_destroy(alg);
    dpdo_mpi_destroy(m);
    for (int i = 0; i < N; i++) dpdo_node_destroy(node[i]), dpdo_shard_destroy(sh[i]);
    dpdo_network_destroy(net);
    dpdo_accountant_destroy(acc);
    dpdo_ledger_destroy(led);
    dpdo_regularizer_destroy(reg);
    dpdo_loss_destroy(loss);
    dpdo_dataset_destroy(ds);
    return secs;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, err = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int64_t rounds = argc > 1 ? atoll(argv[1]) : 4000, msgs = 0, bytes = 0, ctl = 0;
    if (rank == 0) {
        double s1 = run(0, rounds, &msgs, &bytes, &ctl, &err);
        if (!err) printf("mpi_K%d_inprocess_rounds_per_s %.0f\n", size, (double)rounds / s1);
    }
    { /* the other ranks wait without spinning, so that rank 0's one-process figure has the cores */
        MPI_Request req;
        int done = 0;
        MPI_Ibcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD, &req);
        while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
    double s = err ? -1 : run(1, rounds, &msgs, &bytes, &ctl, &err);
    int64_t mine[3] = {msgs, bytes, ctl}, tot[3] = {0, 0, 0};
    MPI_Reduce(mine, tot, 3, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && !err) {
        printf("mpi_K%d_rounds_per_s %.0f\n", size, (double)rounds / s);
        printf("mpi_K%d_messages_per_round %.3f\n", size, (double)tot[0] / (double)rounds);
        printf("mpi_K%d_bytes_per_round %.0f\n", size, (double)tot[1] / (double)rounds);
        printf("mpi_K%d_control_bytes_per_round %.0f\n", size, (double)tot[2] / (double)rounds);
        printf("mpi_K%d_model_bytes_per_round %.0f (b = 2 nodes x 1 neighbour x 8 d)\n", size, 2.0 * 8 * D);
    }
    MPI_Finalize();
    return err;
}
