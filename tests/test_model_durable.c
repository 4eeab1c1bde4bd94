/* SPDX-License-Identifier: BSD-3-Clause */
/* Durable, authenticated model files (docs/model.md "Durable, authenticated model files"):
 *  - SIGKILL during dpdo_model_save, 30 times at random moments of a child that saves two
 *    alternating 450 KB models in a loop: the file then loads every time, and is exactly the
 *    old model or the new one (0.2 wrote in place: 30 of 30 kills left a corrupt file);
 *  - a full disk (the test build's write fault: ENOSPC after k bytes, for k from 0 to the whole
 *    file): the save fails with DPDO_E_IO naming the cause, the previous model is intact, no
 *    temporary file is left behind;
 *  - an edited epsilon line (or weight, or a removed integrity line) is refused: "checksum
 *    mismatch" without a key, "MAC mismatch" with one; a MAC file without the key, a checksum
 *    file with a key, a file under another key are refused; a 0.2 file (no integrity line)
 *    still loads, reported as unverified (DPDO_MODEL_INTEGRITY_NONE). */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "dpdo/dpdo.h"
#include "dpdo/model_file.h"
#include "core/core_impl.h"

static char tmpdir[256];
static const char *tpath(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

static double *values(int64_t dim, double base)
{
    double *x = malloc((size_t)dim * sizeof *x);
    for (int64_t j = 0; j < dim; j++) x[j] = base + 1e-3 * (double)j + 1.0 / 3.0;
    return x;
}

static dpdo_model *model_of(const double *x, int64_t dim, const char *alg)
{
    dpdo_model *m = NULL;
    CHECK_EQ(dpdo_model_create(&m), DPDO_OK);
    CHECK_EQ(dpdo_model_set(m, x, dim, "logistic", alg), DPDO_OK);
    return m;
}

/* 1 if m holds exactly x[dim] */
static int holds(dpdo_model *m, const double *x, int64_t dim)
{
    if (dpdo_model_dim(m) != dim) return 0;
    double *y = malloc((size_t)dim * sizeof *y);
    int ok = dpdo_model_get_x(m, y, dim) == DPDO_OK && memcmp(x, y, (size_t)dim * sizeof *y) == 0;
    free(y);
    return ok;
}

/* files in tmpdir whose name starts with prefix */
static int count_files(const char *prefix)
{
    DIR *d = opendir(tmpdir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d) closedir(d);
    return n;
}

static void remove_files(const char *prefix)
{
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) remove(tpath(e->d_name));
    if (d) closedir(d);
}

static void test_sigkill_during_save(void)
{
    const int64_t dim = h_quick() ? 5000 : 20000;
    const int kills = 30;
    double *xa = values(dim, 1.0), *xb = values(dim, -2.0);
    dpdo_model *a = model_of(xa, dim, "A"), *b = model_of(xb, dim, "B");
    const char *path = tpath("kill.model");
    CHECK_EQ(dpdo_model_save(a, path), DPDO_OK);
    /* how long one save takes here, to spread the kills over a few saves */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK_EQ(dpdo_model_save(a, path), DPDO_OK);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long save_us = (long)((t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000);
    if (save_us < 1000) save_us = 1000;
    uint64_t rs = 12345;
    int loaded = 0, old_or_new = 0, as_b = 0;
    for (int k = 0; k < kills; k++) {
        pid_t pid = fork();
        if (pid == 0) {
            for (int i = 0;; i++) (void)dpdo_model_save(i % 2 ? a : b, path);
            _exit(0);
        }
        CHECK(pid > 0);
        long us = (long)(h_urand(&rs) * 3.0 * (double)save_us) + 200;
        struct timespec ts = {us / 1000000L, (us % 1000000L) * 1000L};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int st = 0;
        waitpid(pid, &st, 0);
        dpdo_model *m = NULL;
        CHECK_EQ(dpdo_model_create(&m), DPDO_OK);
        int rc = dpdo_model_load(m, path);
        CHECK_MSG(rc == DPDO_OK, "kill %d after %ld us: %s", k, us, dpdo_model_errmsg(m));
        loaded += rc == DPDO_OK;
        int is_a = holds(m, xa, dim), is_b = holds(m, xb, dim);
        old_or_new += is_a || is_b;
        as_b += is_b;
        CHECK_EQ(dpdo_model_integrity(m), DPDO_MODEL_INTEGRITY_CHECKSUM);
        dpdo_model_destroy(m);
    }
    printf("    %d SIGKILLs during saves (one save ~%ld us): %d loaded, %d old or new (%d the "
           "second model)\n",
           kills, save_us, loaded, old_or_new, as_b);
    CHECK_EQ(loaded, kills);
    CHECK_EQ(old_or_new, kills);
    remove_files("kill.model");
    dpdo_model_destroy(a);
    dpdo_model_destroy(b);
    free(xa), free(xb);
}

static void test_disk_full(void)
{
    const int64_t dim = 300;
    double *xa = values(dim, 1.0), *xb = values(dim, 5.0);
    dpdo_model *a = model_of(xa, dim, "A"), *b = model_of(xb, dim, "B");
    const char *path = tpath("full.model");
    CHECK_EQ(dpdo_model_save(a, path), DPDO_OK);
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    int refused = 0, intact = 0, trials = 0;
    for (long k = 0; k < size; k += k < 64 ? 1 : 97) {
        trials++;
        dpdo__fault_write_arm(k); /* the disk takes k more bytes */
        int rc = dpdo_model_save(b, path);
        dpdo__fault_write_arm(-1);
        refused += rc == DPDO_E_IO && strstr(dpdo_model_errmsg(b), "No space left") != NULL;
        dpdo_model *m = NULL;
        CHECK_EQ(dpdo_model_create(&m), DPDO_OK);
        CHECK_EQ(dpdo_model_load(m, path), DPDO_OK);
        intact += holds(m, xa, dim);
        dpdo_model_destroy(m);
        CHECK_EQ(count_files("full.model.tmp"), 0);
    }
    CHECK_EQ(refused, trials);
    CHECK_EQ(intact, trials);
    /* a first save that fails leaves no file at all (0.2 left a truncated one) */
    const char *fresh = tpath("fresh.model");
    dpdo__fault_write_arm(100);
    CHECK_EQ(dpdo_model_save(b, fresh), DPDO_E_IO);
    dpdo__fault_write_arm(-1);
    CHECK(access(fresh, F_OK) != 0);
    /* with room, the new model replaces the old */
    CHECK_EQ(dpdo_model_save(b, path), DPDO_OK);
    dpdo_model *m = NULL;
    CHECK_EQ(dpdo_model_create(&m), DPDO_OK);
    CHECK_EQ(dpdo_model_load(m, path), DPDO_OK);
    CHECK(holds(m, xb, dim));
    dpdo_model_destroy(m);
    dpdo_model_destroy(a);
    dpdo_model_destroy(b);
    free(xa), free(xb);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    *len = fread(s, 1, (size_t)n, f);
    s[*len] = 0;
    fclose(f);
    return s;
}

/* text with the first occurrence of `from` replaced by `to` */
static char *edit(const char *text, const char *from, const char *to)
{
    const char *p = strstr(text, from);
    CHECK(p != NULL);
    if (!p) return strdup(text);
    size_t n = strlen(text) - strlen(from) + strlen(to);
    char *s = malloc(n + 1);
    size_t k = (size_t)(p - text);
    memcpy(s, text, k);
    strcpy(s + k, to);
    strcat(s, p + strlen(from));
    return s;
}

static int parse(dpdo_model *m, const char *text)
{
    return dpdo_model_parse(m, text, strlen(text), "edited.model");
}

static void test_tampering(void)
{
    static const unsigned char key[32] = "0123456789abcdef0123456789abcde";
    static const unsigned char other[32] = "fedcba9876543210fedcba987654321";
    double x[3] = {0.5, -1.25, 2.0};
    dpdo_model *m = model_of(x, 3, "dp-dda");
    CHECK_EQ(dpdo_model_integrity(m), DPDO_MODEL_INTEGRITY_LOCAL);
    /* the privacy claim: set a finite epsilon through a parsed text */
    const char *plain_path = tpath("plain.model"), *mac_path = tpath("mac.model");
    CHECK_EQ(dpdo_model_save(m, plain_path), DPDO_OK);
    size_t len;
    char *plain = slurp(plain_path, &len);
    char *priv = edit(plain, "epsilon inf", "epsilon 0.5");
    /* rebuild a valid private model from an edited 0.2-style text (no trailer) */
    char *legacy = edit(priv, "# checksum", "# (removed)");
    dpdo_model *r = NULL;
    CHECK_EQ(dpdo_model_create(&r), DPDO_OK);
    CHECK_EQ(parse(r, legacy), DPDO_OK); /* a 0.2 file loads, unverified */
    CHECK_EQ(dpdo_model_integrity(r), DPDO_MODEL_INTEGRITY_NONE);
    CHECK_EQ(dpdo_model_save(r, plain_path), DPDO_OK);
    free(plain);
    plain = slurp(plain_path, &len);
    CHECK_EQ(dpdo_model_load(r, plain_path), DPDO_OK);
    CHECK_EQ(dpdo_model_integrity(r), DPDO_MODEL_INTEGRITY_CHECKSUM);
    /* unkeyed: an edited epsilon or weight is detected by the checksum */
    char *t = edit(plain, "epsilon 0.5", "epsilon 5000");
    CHECK_EQ(parse(r, t), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_model_errmsg(r), "checksum mismatch");
    free(t);
    t = edit(plain, "\n-1.25\n", "\n-1.26\n");
    CHECK_EQ(parse(r, t), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_model_errmsg(r), "checksum mismatch");
    free(t);
    t = edit(plain, "# checksum blake2b-256 ", "# checksum blake2b-256 0");
    CHECK_EQ(parse(r, t), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_model_errmsg(r), "malformed integrity line");
    free(t);
    double eps = 0, del = 0;
    CHECK_EQ(dpdo_model_privacy(r, &eps, &del), DPDO_OK);
    CHECK(eps == 0.5); /* the refused texts left the model unchanged */
    /* keyed */
    CHECK_EQ(dpdo_model_set_key(r, key, 8), DPDO_E_INVAL);
    CHECK_EQ(dpdo_model_set_key(r, NULL, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_model_set_key(r, key, sizeof key), DPDO_OK);
    CHECK_EQ(parse(r, plain), DPDO_E_FORMAT); /* a checksum file while a key is set */
    CHECK_STR_CONTAINS(dpdo_model_errmsg(r), "not authenticated");
    CHECK_EQ(parse(r, legacy), DPDO_E_FORMAT); /* a 0.2 file while a key is set */
    CHECK_STR_CONTAINS(dpdo_model_errmsg(r), "not authenticated");
    CHECK_EQ(dpdo_model_save(r, mac_path), DPDO_OK);
    char *mac = slurp(mac_path, &len);
    CHECK(strstr(mac, "\n# mac blake2b-256 ") != NULL);
    CHECK_EQ(dpdo_model_load(r, mac_path), DPDO_OK);
    CHECK_EQ(dpdo_model_integrity(r), DPDO_MODEL_INTEGRITY_MAC);
    t = edit(mac, "epsilon 0.5", "epsilon 0.05");
    CHECK_EQ(parse(r, t), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_model_errmsg(r), "MAC mismatch");
    free(t);
    t = edit(mac, "# mac", "# removed");
    CHECK_EQ(parse(r, t), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_model_errmsg(r), "not authenticated");
    free(t);
    CHECK_EQ(dpdo_model_set_key(r, other, sizeof other), DPDO_OK);
    CHECK_EQ(parse(r, mac), DPDO_E_FORMAT); /* another key */
    CHECK_STR_CONTAINS(dpdo_model_errmsg(r), "MAC mismatch");
    CHECK_EQ(dpdo_model_set_key(r, NULL, 0), DPDO_OK);
    CHECK_EQ(parse(r, mac), DPDO_E_FORMAT); /* a MAC file and no key */
    CHECK_STR_CONTAINS(dpdo_model_errmsg(r), "set its key");
    CHECK_EQ(parse(r, plain), DPDO_OK);
    free(mac), free(plain), free(priv), free(legacy);
    dpdo_model_destroy(r);
    dpdo_model_destroy(m);
}

static int run_predict(const char *args, char *out, size_t cap)
{
    return h_run_tool("dpdo-predict", args, out, cap);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    fputs(text, f);
    fclose(f);
}

/* dpdo-predict refuses an edited file, and with --key-file only a file under that key */
static void test_predict_refuses_edits(void)
{
    static const unsigned char key[32] = "predict-key-0123456789abcdefghi";
    double x[2] = {1.0, -1.0};
    dpdo_model *m = model_of(x, 2, "A");
    write_text(tpath("p.svm"), "1 1:0.5 2:0.25\n-1 1:-1 2:2\n");
    FILE *kf = fopen(tpath("p.key"), "wb");
    fwrite(key, 1, sizeof key, kf);
    fclose(kf);
    CHECK_EQ(dpdo_model_save(m, tpath("p.model")), DPDO_OK);
    static char out[8192];
    char args[1600];
    snprintf(args, sizeof args, "--model %s --data %s --quiet", tpath("p.model"), tpath("p.svm"));
    CHECK_EQ(run_predict(args, out, sizeof out), 0);
    CHECK_STR_CONTAINS(out, "model file: checksum verified");
    size_t len;
    char *t = slurp(tpath("p.model"), &len), *e = edit(t, "epsilon inf", "epsilon 0.1");
    write_text(tpath("p.model"), e);
    CHECK_EQ(run_predict(args, out, sizeof out), 1);
    CHECK_STR_CONTAINS(out, "checksum mismatch");
    free(t), free(e);
    CHECK_EQ(dpdo_model_set_key(m, key, sizeof key), DPDO_OK);
    CHECK_EQ(dpdo_model_save(m, tpath("p.model")), DPDO_OK);
    CHECK_EQ(run_predict(args, out, sizeof out), 1); /* no key given */
    CHECK_STR_CONTAINS(out, "set its key");
    snprintf(args, sizeof args, "--model %s --data %s --quiet --key-file %s", tpath("p.model"),
             tpath("p.svm"), tpath("p.key"));
    CHECK_EQ(run_predict(args, out, sizeof out), 0);
    CHECK_STR_CONTAINS(out, "model file: authenticated");
    t = slurp(tpath("p.model"), &len);
    e = edit(t, "epsilon inf", "epsilon 0.1");
    write_text(tpath("p.model"), e);
    CHECK_EQ(run_predict(args, out, sizeof out), 1);
    CHECK_STR_CONTAINS(out, "MAC mismatch");
    free(t), free(e);
    dpdo_model_destroy(m);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dpdo_durable_XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    RUN(test_tampering);
    RUN(test_disk_full);
    RUN(test_predict_refuses_edits);
    RUN(test_sigkill_during_save);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) printf("# could not remove %s\n", tmpdir);
    return h_finish();
}
