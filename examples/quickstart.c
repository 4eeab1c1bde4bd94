/* SPDX-License-Identifier: BSD-3-Clause */
/* quickstart: train a private model, save it, load it back and predict (README "Quickstart").
 *   cc quickstart.c $(pkg-config --cflags --libs dpdo) && ./a.out */
#include <stdio.h>
#include <dpdo/dpdo.h>

int main(void)
{
    dpdo_dataset *ds = NULL; dpdo_model *m = NULL, *back = NULL; /* back: m read from its file */
    dpdo_generate_options g; /* 4000 rows like LIBSVM's "epsilon"; or dpdo_dataset_load_libsvm */
    dpdo_generate_options_init(&g, sizeof g);
    g.n = 4000, g.d = 20;
    static double y[4000], p[4000];
    int rc = dpdo_dataset_create(&ds) || dpdo_dataset_generate(ds, "epsilon-like", &g) ||
             dpdo_model_create(&m) || dpdo_model_create(&back) ||
             dpdo_train(m, ds, 8, "dp-dda", 1.0, 1e-5, NULL) || /* 8 nodes, (1, 1e-5)-DP */
             dpdo_model_save(m, "quickstart.model") || dpdo_model_load(back, "quickstart.model") ||
             dpdo_model_predict(back, ds, DPDO_PREDICT_LABEL, p, 4000) ||
             dpdo_dataset_get_labels(ds, y, 4000);
    int right = 0; double eps = 0;
    for (int i = 0; i < 4000 && !rc; i++) right += p[i] == y[i];
    dpdo_model_privacy(back, &eps, NULL);
    if (rc) fprintf(stderr, "%s%s%s\n", dpdo_dataset_errmsg(ds), dpdo_model_errmsg(m), dpdo_model_errmsg(back));
    printf("libdpdo %s: accuracy %.3f, epsilon %.3f\n", dpdo_version_string(), right / 4000.0, eps);
    remove("quickstart.model");
    dpdo_model_destroy(back), dpdo_model_destroy(m), dpdo_dataset_destroy(ds);
    return rc;
}
