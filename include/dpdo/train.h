/* SPDX-License-Identifier: BSD-3-Clause */
/* dpdo_train: one call from a dataset to a private model (the "simple API", in the spirit of
 * LIBLINEAR's train()): it partitions the rows over nodes, builds the losses, the network, the
 * regularizer, the ledger and the accountant, plans a run for the budget, runs the algorithm and
 * fills a dpdo_model with the weights and the privacy record (epsilon, delta, accountant,
 * algorithm, rounds, nodes). Everything it does goes through the public API of the other headers
 * (docs/architecture.md, "The front door"), so a program that outgrows it can write the same run
 * out by hand (examples/train.c).
 *
 *     dpdo_model *m;
 *     dpdo_model_create(&m);
 *     if (dpdo_train(m, ds, 8, "dp-dda", 1.0, 1e-5, NULL) != DPDO_OK)
 *         fprintf(stderr, "%s\n", dpdo_model_errmsg(m));
 *     dpdo_model_save(m, "run.model");
 *
 * Multiclass: a dataset with class ids (dpdo_dataset_set_classes) of K >= 3 classes is trained
 * one-vs-rest, K binary runs. Every example is in every run, so the K releases compose: each run
 * is calibrated to (epsilon/K, delta/K) and the model records the sum of the K runs' accountant
 * figures (basic composition, "composition basic" in the model), which is <= (epsilon, delta).
 * Basic composition is loose for large K (an accountant composing the K runs jointly would give
 * less noise per run); it is what is sound without a joint calibration. */
#ifndef DPDO_TRAIN_H
#define DPDO_TRAIN_H

#include "algorithm.h"
#include "dataset.h"
#include "export.h"
#include "model_file.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How dpdo_train splits the rows over the nodes (dpdo_train_options.partition). Since 0.3. */
enum {
    DPDO_PARTITION_SHUFFLED = 0,   /* a random even split keyed by `seed` (dpdo_dataset_partition;
                                      sizes differ by at most one) -- the default */
    DPDO_PARTITION_CONTIGUOUS = 1, /* node k gets the k-th block of consecutive rows (sizes
                                      differ by at most one, the first blocks larger) */
    DPDO_PARTITION_BY_ARRAY = 2    /* node_of_row[i] in [0, nodes) names the node of row i; every
                                      node needs at least one row */
};

/* Options of dpdo_train (versioned: docs/abi.md, "Options structs"). Since 0.3. */
typedef struct dpdo_train_options {
    size_t struct_size;         /* sizeof(dpdo_train_options) as compiled by the caller     0.3 */
    const char *loss;           /* loss type name; NULL (default) = "logistic"             0.3 */
    const char *regularizer;    /* regularizer type name; NULL (default) = "l2"; "none"    0.3 */
    double lambda;              /* regularizer strength >= 0; NaN (default) = the plan's   0.3 */
    int64_t max_rounds;         /* rounds of each run, >= 1; 0 (default) = plan for the
                                   budget (docs/choosing.md, "Library defaults")            0.3 */
    uint64_t seed;              /* partition, and with DPDO_RANDOMNESS_REPRODUCIBLE every
                                   random draw of the run; default 0                        0.3 */
    int32_t noise_mode;         /* DPDO_NOISE_*; default DPDO_NOISE_RIGOROUS (the accountant
                                   calibrates sigma to (epsilon, delta))                     0.3 */
    int32_t randomness;         /* DPDO_RANDOMNESS_*; default DPDO_RANDOMNESS_SECURE        0.3 */
    int32_t num_threads;        /* as dpdo_algorithm_options.num_threads; default 0          0.3 */
    int32_t partition;          /* DPDO_PARTITION_*; default DPDO_PARTITION_SHUFFLED         0.3 */
    const int32_t *node_of_row; /* DPDO_PARTITION_BY_ARRAY: n entries, BORROWED for the
                                   call; NULL otherwise                                       0.3 */
    const char *accountant;     /* accountant type name; NULL (default) = DPDO_ACCOUNTANT_DEFAULT
                                                                                              0.3 */
    dpdo_progress_fn progress;  /* called as by dpdo_algorithm_set_progress during each run
                                   (every `progress_every` rounds, epsilon filled); NULL = none;
                                   returning non-zero cancels the training (DPDO_E_CANCELED) 0.3 */
    void *progress_user;        /* passed to progress, BORROWED                              0.3 */
    int64_t progress_every;     /* >= 1; 0 (default) = max(1, rounds / 20)                   0.3 */
    int64_t reserved[4];        /* must be 0 (set by _init): room for later fields           0.3 */
} dpdo_train_options;

/* Fill o with the defaults above and set o->struct_size = struct_size. Returns DPDO_OK,
 * DPDO_E_INVAL (o NULL), DPDO_E_VERSION (struct_size < sizeof(size_t)); older (smaller) and
 * newer (larger) sizes are accepted. Thread-safe. Since 0.3. */
DPDO_API int dpdo_train_options_init(dpdo_train_options *o, size_t struct_size);

/* Train a private linear model on ds and fill m with it.
 *   m: an empty or filled model (its key, if any, stays); on failure m is unchanged and
 *     dpdo_model_errmsg(m) names the problem ("algorithm 'dp-ddx' is unknown", "node 3 has no
 *     rows", "epsilon = -1: must be > 0 or +inf", and the messages of the calls below).
 *   ds: BORROWED for the call, not modified (labels are restored after a one-vs-rest run; it must
 *     not be borrowed by shards of the caller when it has K >= 3 classes). Labels +1/-1 (0 and 1
 *     also work for a dataset without class ids: they are the labels the losses see), or class
 *     ids (2 classes: one run with the larger id as +1; K >= 3: one-vs-rest).
 *   nodes: number of nodes, 1 <= nodes <= rows; the rows are split by opts->partition.
 *   algorithm: an algorithm type name (dpdo_algorithm_type_find: "dp-dda", "do-adp",
 *     "dp-wor-sgd", "fed-plt", ...); decentralized types gossip on a ring (complete graph for
 *     nodes <= 2).
 *   epsilon, delta: the privacy target per sample over the whole training: epsilon > 0 or +inf
 *     (+inf: no noise, DPDO_NOISE_NONE), delta in (0, 1). With K >= 3 classes each run gets
 *     (epsilon/K, delta/K).
 *   opts: NULL = defaults (dpdo_train_options_init).
 * The run: the options' max_rounds, or the plan of docs/choosing.md ("Library defaults") for the
 * four planned algorithms (full local batches, rounds, step, clip and L2 strength chosen from
 * the noise level the budget implies; tail averaging of the output for DO-ADP, DP-WOR-SGD and
 * Fed-PLT); other types run with the library's option defaults. The model's privacy figure is the
 * accountant's rigorous figure at the run's delta (summed over the runs of a one-vs-rest model);
 * dpdo_model_nodes gives the node count, dpdo_model_text(m, "algorithm") the type.
 * Returns DPDO_OK, DPDO_E_INVAL, DPDO_E_VERSION, DPDO_E_STATE (ds empty, or borrowed by shards
 * when it has classes), DPDO_E_NOMEM, DPDO_E_NUMERIC (the budget cannot be met), DPDO_E_CANCELED
 * (the progress callback), and any status of the algorithm's setup or run.
 * Thread-safety: m and ds are used by this call only; different models and datasets may be
 * trained from several threads at once. Reproducible: with DPDO_RANDOMNESS_REPRODUCIBLE the same
 * inputs and seed give a bit-identical model. Since 0.3. */
DPDO_API int dpdo_train(dpdo_model *m, dpdo_dataset *ds, int64_t nodes, const char *algorithm,
                        double epsilon, double delta, const dpdo_train_options *opts);

#ifdef __cplusplus
}
#endif
#endif /* DPDO_TRAIN_H */
