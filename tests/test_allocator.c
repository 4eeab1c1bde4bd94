/* SPDX-License-Identifier: BSD-3-Clause */
/* The allocator hook (include/dpdo/allocator.h, docs/allocator.md). A counting allocator that
 * takes its memory from its own mmap'ed arena (never from malloc) is made current, and a whole
 * life cycle runs under it: load a LIBSVM file, shards, nodes, a ring, a ledger, the "auto"
 * accountant, a private DP-DDA run on two threads, a model saved to a file, loaded back and used
 * to predict, everything destroyed. Then
 *  - allocations == frees (over a hundred) and the bytes still held are 0; blocks the pool's
 *    worker thread allocates for the caller's run go to the hook too;
 *  - no block of the library came from malloc: glibc's bytes in use (mallinfo2: uordblks +
 *    hblkhd) with every handle alive differ from their value before by less than 1 KiB, while
 *    the same life cycle with the C library's allocator (the control, run first, which also
 *    lets the external libraries make their one-time state) shows the library's blocks there
 *    (the dataset alone is 320 KB): the measurement sees what the hook must catch. The "rdp"
 *    accountant is used: "auto" includes the PLD accountant, whose FFTW plans FFTW allocates
 *    itself (about 2.7 MB here; docs/allocator.md);
 *  - blocks are freed by their own allocator whatever is current at the free;
 *  - an allocator that fails gives DPDO_E_NOMEM, and bad arguments are refused. */
#include "dpdo/dpdo.h"
#include "harness.h"
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { NODES = 4, ROWS = 2000, FEAT = 20, ROUNDS = 30 };
/* the dense features alone: ROWS * FEAT * 8 = 320000 bytes */

/* a bump allocator over one reserved mapping: counts calls and live bytes, frees nothing */
typedef struct {
    char *arena;
    size_t cap;
    atomic_size_t used;
    atomic_long allocs, frees, foreign_allocs;
    atomic_llong live; /* bytes handed out and not yet freed */
    pthread_t owner;
} counter;

typedef struct {
    size_t size;
    size_t pad;
} chunk; /* before each block: its size (16 bytes keep the alignment) */

static void *count_alloc(void *user, size_t size)
{
    counter *c = user;
    size_t need = (sizeof(chunk) + size + 15) & ~(size_t)15;
    size_t at = atomic_fetch_add(&c->used, need);
    if (at + need > c->cap) return NULL;
    chunk *h = (chunk *)(void *)(c->arena + at);
    h->size = size;
    atomic_fetch_add(&c->allocs, 1);
    atomic_fetch_add(&c->live, (long long)size);
    if (!pthread_equal(pthread_self(), c->owner)) atomic_fetch_add(&c->foreign_allocs, 1);
    return h + 1;
}

static void count_free(void *user, void *ptr)
{
    counter *c = user;
    chunk *h = (chunk *)ptr - 1;
    CHECK((char *)ptr > c->arena && (char *)ptr < c->arena + c->cap); /* one of ours */
    atomic_fetch_add(&c->frees, 1);
    atomic_fetch_sub(&c->live, (long long)h->size);
}

static void counter_init(counter *c)
{
    memset(c, 0, sizeof *c);
    c->cap = (size_t)256 << 20; /* reserved, touched only where used */
    c->arena = mmap(NULL, c->cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                    -1, 0);
    CHECK(c->arena != MAP_FAILED);
    c->owner = pthread_self();
}

static void counter_done(counter *c)
{
    munmap(c->arena, c->cap);
}

static long long glibc_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return (long long)(mi.uordblks + mi.hblkhd);
}

/* 1 when mallinfo2 sees malloc's blocks: not under AddressSanitizer or valgrind, which replace
 * malloc (then the glibc measurement is skipped, the counts are still checked) */
static int glibc_visible(void)
{
    long long before = glibc_in_use();
    volatile char *p = malloc((size_t)1 << 20);
    if (!p) return 0;
    p[0] = 1;
    long long grew = glibc_in_use() - before;
    free((void *)p);
    return grew >= (1 << 20);
}

static char libsvm_path[64];

static void write_data(void)
{
    /* rows of norm <= 1 (FEAT features, labels from a fixed direction); deterministic */
    size_t cap = (size_t)ROWS * FEAT * 24 + 64;
    char *text = malloc(cap);
    size_t len = 0;
    uint64_t st = 12345;
    for (int i = 0; i < ROWS; i++) {
        double row[FEAT], s = 0;
        for (int k = 0; k < FEAT; k++)
            row[k] = (h_urand(&st) - 0.5) / sqrt((double)FEAT), s += row[k] * (k % 3 - 1);
        len += (size_t)snprintf(text + len, cap - len, "%d", s >= 0 ? 1 : -1);
        for (int k = 0; k < FEAT; k++)
            len += (size_t)snprintf(text + len, cap - len, " %d:%.6f", k + 1, row[k]);
        len += (size_t)snprintf(text + len, cap - len, "\n");
    }
    CHECK(h_tmpfile(libsvm_path, ".svm", text, len) != NULL);
    free(text);
}

typedef struct {
    dpdo_dataset *ds;
    dpdo_loss *loss;
    dpdo_shard *sh[NODES];
    dpdo_node *nodes[NODES];
    dpdo_network *net;
    dpdo_ledger *led;
    dpdo_accountant *acc;
    dpdo_algorithm *a;
    dpdo_model *m, *m2;
    char model_path[80];
} life;

/* everything up to a loaded model that predicted; handles stay alive */
static void life_start(life *L)
{
    memset(L, 0, sizeof *L);
    dpdo_load_options lo;
    dpdo_load_options_init(&lo, sizeof lo);
    CHECK_EQ(dpdo_dataset_create(&L->ds), DPDO_OK);
    CHECK_MSG(dpdo_dataset_load_libsvm(L->ds, libsvm_path, &lo) == DPDO_OK, "%s",
              dpdo_dataset_errmsg(L->ds));
    CHECK_EQ(dpdo_dataset_rows(L->ds), ROWS);
    CHECK_EQ(dpdo_loss_create(&L->loss, dpdo_loss_type_find("logistic"), NULL, FEAT), DPDO_OK);
    for (int i = 0; i < NODES; i++) {
        CHECK_EQ(dpdo_shard_create_range(&L->sh[i], L->ds, (int64_t)i * (ROWS / NODES),
                                         ROWS / NODES),
                 DPDO_OK);
        CHECK_EQ(dpdo_node_create(&L->nodes[i], L->sh[i], L->loss, 1.0), DPDO_OK);
    }
    CHECK_EQ(dpdo_network_create(&L->net), DPDO_OK);
    CHECK_EQ(dpdo_network_set_ring(L->net, NODES), DPDO_OK);
    CHECK_EQ(dpdo_ledger_create(&L->led, NODES), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&L->acc, dpdo_accountant_type_find("rdp"),
                                    NULL, L->led, NULL),
             DPDO_OK);
    CHECK_EQ(dpdo_algorithm_create(&L->a, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.max_rounds = ROUNDS;
    o.delta = 1e-5;
    o.num_threads = 2;
    /* reproducible keys (Philox): in the secure default OpenSSL's cipher contexts allocate with
     * malloc (outside the hook, docs/allocator.md), which the glibc check below would count */
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    CHECK_EQ(dpdo_algorithm_setup(L->a, L->nodes, NODES, L->net, NULL, L->acc, &o), DPDO_OK);
    CHECK_MSG(dpdo_algorithm_run(L->a, 0, NULL) == DPDO_DONE, "%s", dpdo_algorithm_errmsg(L->a));
    CHECK_EQ(dpdo_algorithm_threads(L->a), 2);
    CHECK_EQ(dpdo_model_create(&L->m), DPDO_OK);
    CHECK_MSG(dpdo_model_from_algorithm(L->m, L->a) == DPDO_OK, "%s", dpdo_model_errmsg(L->m));
    snprintf(L->model_path, sizeof L->model_path, "/tmp/dpdo_test_alloc_%ld.model",
             (long)getpid());
    CHECK_MSG(dpdo_model_save(L->m, L->model_path) == DPDO_OK, "%s", dpdo_model_errmsg(L->m));
    CHECK_EQ(dpdo_model_create(&L->m2), DPDO_OK);
    CHECK_MSG(dpdo_model_load(L->m2, L->model_path) == DPDO_OK, "%s", dpdo_model_errmsg(L->m2));
    static double pred[ROWS];
    CHECK_EQ(dpdo_model_predict(L->m2, L->ds, DPDO_PREDICT_LABEL, pred, ROWS), DPDO_OK);
    int right = 0;
    for (int i = 0; i < ROWS; i++)
        right += pred[i] == 1.0 || pred[i] == -1.0;
    CHECK_EQ(right, ROWS);
}

static void life_end(life *L)
{
    dpdo_model_destroy(L->m2);
    dpdo_model_destroy(L->m);
    dpdo_algorithm_destroy(L->a);
    dpdo_accountant_destroy(L->acc);
    dpdo_ledger_destroy(L->led);
    dpdo_network_destroy(L->net);
    for (int i = 0; i < NODES; i++) {
        dpdo_node_destroy(L->nodes[i]);
        dpdo_shard_destroy(L->sh[i]);
    }
    dpdo_loss_destroy(L->loss);
    dpdo_dataset_destroy(L->ds);
    remove(L->model_path);
}

static long long control_delta; /* glibc bytes in use by the life cycle without the hook */

static void control_without_hook(void)
{
    static life L;
    if (!glibc_visible()) {
        printf("# malloc is not glibc's here (sanitizer or valgrind): glibc measurement skipped\n");
        control_delta = -1;
        return;
    }
    life_start(&L); /* a first run: lazily initialised library state (e.g. libsodium) */
    life_end(&L);
    long long before = glibc_in_use();
    life_start(&L);
    control_delta = glibc_in_use() - before;
    life_end(&L);
    printf("# control (C library allocator): %lld bytes in use by the live handles\n",
           control_delta);
    CHECK(control_delta > (long long)ROWS * FEAT * 8); /* at least the dense features */
}

static void every_allocation_counted(void)
{
    static counter c;
    static life L;
    counter_init(&c);
    dpdo_allocator al = {sizeof al, count_alloc, count_free, &c}, prev;
    CHECK_EQ(dpdo_allocator_get(&prev, sizeof prev), DPDO_OK);
    CHECK(prev.alloc == NULL && prev.free == NULL);
    long long before = glibc_in_use();
    CHECK_EQ(dpdo_allocator_set(&al), DPDO_OK);
    life_start(&L);
    long long outside = glibc_in_use() - before;
    long long held = atomic_load(&c.live);
    life_end(&L);
    CHECK_EQ(dpdo_allocator_set(&prev), DPDO_OK);
    long allocs = atomic_load(&c.allocs), frees = atomic_load(&c.frees);
    printf("# hook: %ld allocations (%ld on the worker thread), %ld frees, %lld bytes held by the "
           "live handles; glibc in use meanwhile %+lld bytes (control %lld)\n",
           allocs, (long)atomic_load(&c.foreign_allocs), frees, held, outside, control_delta);
    CHECK(allocs > 100);
    CHECK_EQ(allocs, frees);
    CHECK_EQ((long long)atomic_load(&c.live), 0LL);
    CHECK(held > (long long)ROWS * FEAT * 8);
    /* the worker thread allocates only on some runs (which thread takes which node's task is
     * not fixed), so its count is reported, not required */
    /* what the hook does not cover: stdio's FILE and buffer (load, save), freed again; glibc may
     * keep part of that in its thread cache, counted as in use: < 1 KiB */
    if (control_delta >= 0) {
        CHECK_MSG(outside < 1024, "%lld bytes from malloc with the hook current", outside);
        CHECK(control_delta > 16 * (outside > 0 ? outside : 1));
    }
    counter_done(&c);
}

static void freed_by_its_own_allocator(void)
{
    static counter c1, c2;
    counter_init(&c1);
    counter_init(&c2);
    dpdo_allocator a1 = {sizeof a1, count_alloc, count_free, &c1};
    dpdo_allocator a2 = {sizeof a2, count_alloc, count_free, &c2};
    dpdo_network *net1, *net2;
    CHECK_EQ(dpdo_allocator_set(&a1), DPDO_OK);
    CHECK_EQ(dpdo_network_create(&net1), DPDO_OK);
    CHECK_EQ(dpdo_network_set_ring(net1, 50), DPDO_OK);
    CHECK_EQ(dpdo_allocator_set(&a2), DPDO_OK);
    CHECK_EQ(dpdo_network_create(&net2), DPDO_OK);
    CHECK_EQ(dpdo_allocator_set(NULL), DPDO_OK); /* the C library current at the frees */
    long n1 = atomic_load(&c1.allocs), n2 = atomic_load(&c2.allocs);
    CHECK(n1 > 0 && n2 > 0);
    dpdo_network_destroy(net1);
    dpdo_network_destroy(net2);
    CHECK_EQ(atomic_load(&c1.frees), n1);
    CHECK_EQ(atomic_load(&c2.frees), n2);
    CHECK_EQ((long long)atomic_load(&c1.live), 0LL);
    counter_done(&c1);
    counter_done(&c2);
}

static void *no_memory(void *user, size_t size)
{
    (void)user, (void)size;
    return NULL;
}

static void failing_and_bad_arguments(void)
{
    dpdo_allocator none = {sizeof none, no_memory, count_free, NULL};
    CHECK_EQ(dpdo_allocator_set(&none), DPDO_OK);
    dpdo_dataset *ds = (dpdo_dataset *)&none;
    CHECK_EQ(dpdo_dataset_create(&ds), DPDO_E_NOMEM);
    CHECK(ds == NULL);
    CHECK_EQ(dpdo_allocator_set(NULL), DPDO_OK);
    dpdo_allocator half = {sizeof half, no_memory, NULL, NULL};
    CHECK_EQ(dpdo_allocator_set(&half), DPDO_E_INVAL);
    dpdo_allocator old = {sizeof(size_t), no_memory, count_free, NULL};
    CHECK_EQ(dpdo_allocator_set(&old), DPDO_E_VERSION);
    CHECK_EQ(dpdo_allocator_get(NULL, sizeof old), DPDO_E_INVAL);
    CHECK_EQ(dpdo_allocator_get(&old, 4), DPDO_E_VERSION);
    dpdo_allocator cur;
    CHECK_EQ(dpdo_allocator_get(&cur, sizeof cur), DPDO_OK);
    CHECK(cur.alloc == NULL && cur.struct_size == sizeof cur); /* refused sets changed nothing */
    CHECK_EQ(dpdo_dataset_create(&ds), DPDO_OK);
    dpdo_dataset_destroy(ds);
}

int main(void)
{
    write_data();
    RUN(control_without_hook);
    RUN(every_allocation_counted);
    RUN(freed_by_its_own_allocator);
    RUN(failing_and_bad_arguments);
    remove(libsvm_path);
    return h_finish();
}
