/* SPDX-License-Identifier: BSD-3-Clause */
/* RNG layer: Philox4x32-10 known answers, the stream layout and value
 * mapping recomputed independently (libm), distribution tests (moments with
 * tolerances of 5 standard errors, Kolmogorov-Smirnov at the 0.1% level,
 * chi-square at the 0.1% level), stream independence, offsets, SIMD vs
 * scalar bit identity, accuracy of the polynomial log/sin/cos against libm,
 * custom (pluggable) types, out-of-memory and bad-input handling.
 *
 * The tests are deterministic (fixed seeds); a statistical tolerance that is
 * k standard errors wide fails a correct generator with probability about
 * erfc(k/sqrt 2) for a random seed, i.e. < 1e-6 for k = 5. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dpdo/dpdo.h"
#include "dpdo/rng.h"
#include "rng/rng_impl.h"
#include "rng/rng_math.h"
#include "harness.h"

static size_t big_n(void) { return h_quick() ? 100000 : 1000000; }

static dpdo_rng *mk(uint64_t seed)
{
    dpdo_rng *r = NULL;
    CHECK_EQ(dpdo_rng_create(&r, NULL, NULL, seed), DPDO_OK);
    return r;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static uint64_t bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

static const dpdo_rng_type hash_type_fwd = {sizeof(dpdo_rng_type), "foreign", NULL, NULL};

/* ---- Philox known answers (Random123 kat_vectors, philox4x32 10) ---------- */
static void kat_philox(void)
{
    static const uint32_t v[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
         0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
         0x94fdcceb, 0x5001e420, 0x24126ea1},
    };
    const dpdo_rng_type *t = dpdo_rng_type_find("philox4x32-10");
    CHECK(t != NULL);
    for (int i = 0; i < 3; i++) {
        uint32_t out[4], out2[4];
        uint32_t key4[4] = {v[i][4], v[i][5], 0, 0};
        dpdo__philox4x32_10(v[i] + 4, v[i], out);
        CHECK(t && t->blocks(NULL, key4, v[i], 1, out2) == 0);
        for (int k = 0; k < 4; k++) {
            CHECK_MSG(out[k] == v[i][6 + k], "vector %d word %d: %08x != %08x", i, k, out[k],
                      v[i][6 + k]);
            CHECK_EQ(out2[k], v[i][6 + k]);
        }
    }
}

static void type_lookup(void)
{
    const dpdo_rng_type *t = dpdo_rng_type_find("philox4x32-10");
    CHECK(t != NULL);
    CHECK(dpdo_rng_type_find("mt19937") == NULL);
    CHECK(dpdo_rng_type_find(NULL) == NULL);
    CHECK(dpdo_rng_type_next(NULL) == t);
    CHECK(dpdo_rng_type_next(t) == NULL);
    CHECK(dpdo_rng_type_next(&hash_type_fwd) == NULL); /* not a built-in */
    CHECK(strcmp(dpdo_rng_type_name(t), "philox4x32-10") == 0);
    CHECK(dpdo_rng_type_name(NULL) == NULL);
    int n = 0;
    for (const dpdo_rng_type *p = dpdo_rng_type_next(NULL); p; p = dpdo_rng_type_next(p)) n++;
    CHECK_EQ(n, 1);
}

/* ---- handles: create, OOM, bad input --------------------------------------- */
static int released;
static void count_release(void *user)
{
    (void)user;
    released++;
}

/* splitmix64 finaliser: a trivial counter hash for the custom-type tests */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int hash_blocks(void *user, const uint32_t key[4], const uint32_t ctr[4], uint64_t nblocks,
                       uint32_t *out)
{
    (void)user;
    uint64_t k = (uint64_t)key[0] | (uint64_t)key[1] << 32;
    uint64_t id = (uint64_t)ctr[1] | (uint64_t)ctr[2] << 32;
    for (uint64_t j = 0; j < nblocks; j++) {
        uint32_t c0 = ctr[0] + (uint32_t)j;
        uint64_t a = mix64(k ^ mix64(id ^ mix64((uint64_t)ctr[3] << 32 | c0)));
        uint64_t b = mix64(a + 0x9e3779b97f4a7c15ull);
        out[4 * j] = (uint32_t)a;
        out[4 * j + 1] = (uint32_t)(a >> 32);
        out[4 * j + 2] = (uint32_t)b;
        out[4 * j + 3] = (uint32_t)(b >> 32);
    }
    return 0;
}

static int fail_calls;
static int failing_blocks(void *user, const uint32_t key[4], const uint32_t ctr[4],
                          uint64_t nblocks, uint32_t *out)
{
    (void)user, (void)key, (void)ctr;
    fail_calls++;
    for (uint64_t i = 0; i < 4 * nblocks; i++) out[i] = 0xdeadbeef; /* garbage */
    return 7;
}

static const dpdo_rng_type hash_type = {sizeof(dpdo_rng_type), "test-hash", hash_blocks,
                                        count_release};
static const dpdo_rng_type failing_type = {sizeof(dpdo_rng_type), "test-failing",
                                           failing_blocks, NULL};

static void create_oom(void)
{
    int ok = 0;
    for (long k = 0; k < 10 && !ok; k++) {
        dpdo_rng *r = (dpdo_rng *)&r; /* poison: must become NULL */
        dpdo__fault_arm(k);
        int rc = dpdo_rng_create(&r, NULL, NULL, 1);
        dpdo__fault_arm(-1);
        if (rc == DPDO_OK) {
            ok = 1;
            CHECK(r != NULL);
            dpdo_rng_destroy(r);
        } else {
            CHECK_EQ(rc, DPDO_E_NOMEM);
            CHECK(r == NULL);
        }
    }
    CHECK(ok);
    /* custom: release is not called when creation fails */
    released = 0;
    ok = 0;
    for (long k = 0; k < 10 && !ok; k++) {
        dpdo_rng *r = (dpdo_rng *)&r;
        dpdo__fault_arm(k);
        int rc = dpdo_rng_create_custom(&r, &hash_type, NULL, 1);
        dpdo__fault_arm(-1);
        if (rc == DPDO_OK) {
            ok = 1;
            dpdo_rng_destroy(r);
        } else {
            CHECK_EQ(rc, DPDO_E_NOMEM);
            CHECK(r == NULL);
            CHECK_EQ(released, 0);
        }
    }
    CHECK(ok);
    CHECK_EQ(released, 1);
}

static void create_bad_input(void)
{
    dpdo_rng *r = (dpdo_rng *)&r;
    CHECK_EQ(dpdo_rng_create(NULL, NULL, NULL, 1), DPDO_E_INVAL);
    /* a built-in type takes no user pointer */
    CHECK_EQ(dpdo_rng_create(&r, dpdo_rng_type_find("philox4x32-10"), &r, 1), DPDO_E_INVAL);
    CHECK(r == NULL);
    r = (dpdo_rng *)&r;
    CHECK_EQ(dpdo_rng_create_custom(&r, NULL, NULL, 1), DPDO_E_INVAL);
    CHECK(r == NULL);
    CHECK_EQ(dpdo_rng_create_custom(NULL, &hash_type, NULL, 1), DPDO_E_INVAL);
    dpdo_rng_type t = hash_type;
    t.struct_size = offsetof(dpdo_rng_type, blocks); /* does not cover blocks */
    CHECK_EQ(dpdo_rng_create_custom(&r, &t, NULL, 1), DPDO_E_VERSION);
    t.struct_size = 0;
    CHECK_EQ(dpdo_rng_create_custom(&r, &t, NULL, 1), DPDO_E_VERSION);
    t = hash_type;
    t.blocks = NULL;
    CHECK_EQ(dpdo_rng_create_custom(&r, &t, NULL, 1), DPDO_E_INVAL);
    t = hash_type;
    t.name = NULL;
    CHECK_EQ(dpdo_rng_create_custom(&r, &t, NULL, 1), DPDO_E_INVAL);
    CHECK(r == NULL);
    /* an older caller whose struct ends before `release`: release is not read */
    released = 0;
    t = hash_type;
    t.struct_size = offsetof(dpdo_rng_type, release);
    CHECK_EQ(dpdo_rng_create_custom(&r, &t, NULL, 1), DPDO_OK);
    dpdo_rng_destroy(r);
    CHECK_EQ(released, 0);
    dpdo_rng_destroy(NULL);
    CHECK(dpdo_rng_errmsg(NULL) != NULL);
    CHECK_EQ(dpdo_rng_seed(NULL), 0);
    r = mk(0x123456789abcdefull);
    CHECK(dpdo_rng_seed(r) == 0x123456789abcdefull);
    CHECK(strcmp(dpdo_rng_errmsg(r), "") == 0);
    dpdo_rng_destroy(r);
}

/* Every public draw rejects bad arguments with E_INVAL and a message naming
 * the argument, and leaves no partial state. */
static void draws_bad_input(void)
{
    dpdo_rng *r = mk(1);
    double d[4];
    int32_t b[4];
    int64_t g[4];
    const uint64_t BIGN = UINT64_C(1) << 32, BIGR = UINT64_C(1) << 48;
    /* NULL rng */
    CHECK_EQ(dpdo_rng_uniform(NULL, 0, 0, 1, 0, d, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_normal(NULL, 0, 0, 1, 0, d, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_laplace(NULL, 0, 0, 1, 0, 1.0, d, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_bernoulli(NULL, 0, 0, 1, 0, 0.5, b, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_geometric(NULL, 0, 0, 1, 0, 0.5, g, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_subset(NULL, 0, 0, 1, 4, 2, g), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_permutation(NULL, 0, 0, 1, 4, g), DPDO_E_INVAL);
    /* NULL out / negative n */
    CHECK_EQ(dpdo_rng_uniform(r, 0, 0, 1, 0, NULL, 4), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_rng_errmsg(r), "out is NULL");
    CHECK_EQ(dpdo_rng_uniform(r, 0, 0, 1, 0, NULL, 0), DPDO_OK); /* n = 0: no-op */
    CHECK_EQ(dpdo_rng_uniform(r, 0, 0, 1, 0, d, -1), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_rng_errmsg(r), "n = -1");
    CHECK_EQ(dpdo_rng_normal(r, 0, 0, 1, 0, NULL, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_normal(r, 0, 0, 1, 0, d, -5), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_laplace(r, 0, 0, 1, 0, 1.0, NULL, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_laplace(r, 0, 0, 1, 0, 1.0, d, -1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_bernoulli(r, 0, 0, 1, 0, 0.5, NULL, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_bernoulli(r, 0, 0, 1, 0, 0.5, b, -1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_geometric(r, 0, 0, 1, 0, 0.5, NULL, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_geometric(r, 0, 0, 1, 0, 0.5, g, -1), DPDO_E_INVAL);
    /* stream ids out of range */
    CHECK_EQ(dpdo_rng_uniform(r, BIGN, 0, 1, 0, d, 4), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_rng_errmsg(r), "node");
    CHECK_EQ(dpdo_rng_normal(r, 0, BIGR, 1, 0, d, 4), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_rng_errmsg(r), "round");
    CHECK_EQ(dpdo_rng_laplace(r, 0, 0, 70000, 0, 1.0, d, 4), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_rng_errmsg(r), "purpose");
    CHECK_EQ(dpdo_rng_bernoulli(r, BIGN, 0, 1, 0, 0.5, b, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_geometric(r, 0, BIGR, 1, 0, 0.5, g, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_subset(r, 0, 0, 1u << 16, 4, 2, g), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_permutation(r, BIGN, 0, 1, 4, g), DPDO_E_INVAL);
    /* the largest ids are accepted */
    CHECK_EQ(dpdo_rng_uniform(r, BIGN - 1, BIGR - 1, 0xFFFF, 0, d, 4), DPDO_OK);
    /* offset past the end of the stream (2^33 values) */
    CHECK_EQ(dpdo_rng_uniform(r, 0, 0, 1, UINT64_C(1) << 33, d, 1), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_rng_errmsg(r), "offset");
    CHECK_EQ(dpdo_rng_normal(r, 0, 0, 1, UINT64_MAX, d, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_normal(r, 0, 0, 1, (UINT64_C(1) << 33) - 4, d, 4), DPDO_OK);
    /* distribution parameters */
    CHECK_EQ(dpdo_rng_laplace(r, 0, 0, 1, 0, 0.0, d, 4), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_rng_errmsg(r), "scale");
    CHECK_EQ(dpdo_rng_laplace(r, 0, 0, 1, 0, -1.0, d, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_laplace(r, 0, 0, 1, 0, NAN, d, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_laplace(r, 0, 0, 1, 0, INFINITY, d, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_laplace(r, 0, 0, 1, 0, DBL_MAX, d, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_laplace(r, 0, 0, 1, 0, DBL_MAX / 128, d, 4), DPDO_OK);
    CHECK(isfinite(d[0]) && isfinite(d[1]) && isfinite(d[2]) && isfinite(d[3]));
    CHECK_EQ(dpdo_rng_bernoulli(r, 0, 0, 1, 0, -0.1, b, 4), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_rng_errmsg(r), "p = ");
    CHECK_EQ(dpdo_rng_bernoulli(r, 0, 0, 1, 0, 1.5, b, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_bernoulli(r, 0, 0, 1, 0, NAN, b, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_geometric(r, 0, 0, 1, 0, 0.0, g, 4), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_rng_errmsg(r), "geometric");
    CHECK_EQ(dpdo_rng_geometric(r, 0, 0, 1, 0, 1.01, g, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_geometric(r, 0, 0, 1, 0, NAN, g, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_subset(r, 0, 0, 1, 4, 5, g), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_rng_errmsg(r), "b = 5");
    CHECK_EQ(dpdo_rng_subset(r, 0, 0, 1, 4, -1, g), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_subset(r, 0, 0, 1, -1, 0, g), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_subset(r, 0, 0, 1, 4, 2, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_subset(r, 0, 0, 1, 4, 0, NULL), DPDO_OK);
    CHECK_EQ(dpdo_rng_permutation(r, 0, 0, 1, -2, g), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_permutation(r, 0, 0, 1, 4, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_rng_permutation(r, 0, 0, 1, 0, NULL), DPDO_OK);
    /* edge parameters that are valid */
    CHECK_EQ(dpdo_rng_bernoulli(r, 0, 0, 1, 0, 0.0, b, 4), DPDO_OK);
    CHECK(b[0] == 0 && b[1] == 0 && b[2] == 0 && b[3] == 0);
    CHECK_EQ(dpdo_rng_bernoulli(r, 0, 0, 1, 0, 1.0, b, 4), DPDO_OK);
    CHECK(b[0] == 1 && b[1] == 1 && b[2] == 1 && b[3] == 1);
    CHECK_EQ(dpdo_rng_geometric(r, 0, 0, 1, 0, 1.0, g, 4), DPDO_OK);
    CHECK(g[0] == 0 && g[1] == 0 && g[2] == 0 && g[3] == 0);
    CHECK_EQ(dpdo_rng_laplace(r, 0, 0, 1, 0, DBL_MIN, d, 4), DPDO_OK);
    dpdo_rng_destroy(r);
}

/* ---- the stream layout and value mapping, recomputed independently --------- */
static void stream_layout(void)
{
    const uint64_t seed = 0x0123456789abcdefull;
    dpdo_rng *r = mk(seed);
    const uint64_t node = 0x89abcdefu, round = 0xBEEF12345678ull;
    const uint32_t purpose = 0x4321;
    enum { N = 40 };
    double u[N], z[N];
    CHECK_EQ(dpdo_rng_uniform(r, node, round, purpose, 0, u, N), DPDO_OK);
    CHECK_EQ(dpdo_rng_normal(r, node, round, purpose, 0, z, N), DPDO_OK);
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    for (int j = 0; j < N / 2; j++) {
        uint32_t ctr[4] = {(uint32_t)j, (uint32_t)round, (uint32_t)node,
                           purpose | (uint32_t)(round >> 32) << 16};
        uint32_t w[4];
        dpdo__philox4x32_10(key, ctr, w);
        uint64_t x1 = (uint64_t)w[0] | (uint64_t)w[1] << 32;
        uint64_t x2 = (uint64_t)w[2] | (uint64_t)w[3] << 32;
        /* uniform: (2k + 1) / 2^53 with k the top 52 bits */
        CHECK(u[2 * j] == ldexp(2.0 * (double)(x1 >> 12) + 1.0, -53));
        CHECK(u[2 * j + 1] == ldexp(2.0 * (double)(x2 >> 12) + 1.0, -53));
        /* normal pair with libm: u1 from bits 62..11 of x1, the arc angle
         * a = pi/2 (k2 2^-52 - 1/2) from bits 62..11 of x2, reflected to
         * pi/2 - a by bit 0 of x2, to pi - theta by bit 63 of x1 and to
         * -theta by bit 63 of x2 */
        const uint64_t m52 = (UINT64_C(1) << 52) - 1;
        double u1 = ldexp(2.0 * (double)((x1 >> 11) & m52) + 1.0, -53);
        double rho = sqrt(-2.0 * log(u1));
        double theta = M_PI / 2 * (ldexp((double)((x2 >> 11) & m52), -52) - 0.5);
        if (x2 & 1) theta = M_PI / 2 - theta;
        if (x1 >> 63) theta = M_PI - theta;
        if (x2 >> 63) theta = -theta;
        CHECK_NEAR(z[2 * j], rho * cos(theta), 1e-14 * (1 + rho));
        CHECK_NEAR(z[2 * j + 1], rho * sin(theta), 1e-14 * (1 + rho));
    }
    /* injective ids: streams that a lossy layout would merge differ */
    double a[4], b[4];
    CHECK_EQ(dpdo_rng_uniform(r, 0, UINT64_C(1) << 32, 0, 0, a, 4), DPDO_OK);
    CHECK_EQ(dpdo_rng_uniform(r, 0, 0, 1, 0, b, 4), DPDO_OK);
    CHECK(memcmp(a, b, sizeof a) != 0);
    CHECK_EQ(dpdo_rng_uniform(r, 1, 0, 0, 0, a, 4), DPDO_OK);
    CHECK_EQ(dpdo_rng_uniform(r, 0, 1, 0, 0, b, 4), DPDO_OK);
    CHECK(memcmp(a, b, sizeof a) != 0);
    dpdo_rng_destroy(r);
    /* the extreme words map strictly inside (0,1) */
    CHECK(dpdo__u01(0) == ldexp(1.0, -53));
    CHECK(dpdo__u01(UINT64_MAX) == 1.0 - ldexp(1.0, -53));
    CHECK(dpdo__u01(UINT64_MAX) < 1.0);
}

/* ---- polynomial kernels against libm ---------------------------------------- */
static double ulp_err(double got, double want)
{
    if (got == want) return 0.0;
    double ulp = ldexp(1.0, ilogb(want) - 52);
    return fabs(got - want) / ulp;
}

static void math_accuracy(void)
{
    /* log over the whole range the generator uses, [2^-53, 1), log-uniform,
     * plus the neighbourhood of 1 where log is small */
    double worst = 0, worst_x = 0;
    dpdo_rng *r = mk(5);
    dpdo__stream s;
    dpdo__stream_open(&s, r, 0, 0, 1);
    size_t n = h_quick() ? 200000 : 2000000;
    for (size_t i = 0; i < n; i++) {
        double x = (i & 1) ? exp(-36.7 * dpdo__stream_uniform(&s))
                           : 1.0 - ldexp(dpdo__stream_uniform(&s), -(int)(i % 50));
        if (x >= 1.0) continue;
        double e = ulp_err(dpdo__log(x), log(x));
        if (e > worst) worst = e, worst_x = x;
    }
    CHECK_MSG(worst <= 2.0, "log: max error %.2f ulp at %.17g", worst, worst_x);
    printf("# dpdo__log max error vs libm: %.2f ulp\n", worst);
    /* sin/cos kernel on [-pi/4, pi/4] */
    double ws = 0, wc = 0;
    for (size_t i = 0; i < n; i++) {
        double a = (dpdo__stream_uniform(&s) - 0.5) * (M_PI / 2);
        double sn, cs;
        dpdo__sincos_kernel(a, &sn, &cs);
        double es = ulp_err(sn, sin(a)), ec = ulp_err(cs, cos(a));
        if (es > ws) ws = es;
        if (ec > wc) wc = ec;
    }
    CHECK_MSG(ws <= 2.0, "sin kernel: max error %.2f ulp", ws);
    CHECK_MSG(wc <= 2.0, "cos kernel: max error %.2f ulp", wc);
    printf("# sin kernel max error %.2f ulp, cos kernel %.2f ulp\n", ws, wc);
    /* the full angle map: absolute error against libm of the same angle */
    double wa = 0;
    const uint64_t m52 = (UINT64_C(1) << 52) - 1;
    for (size_t i = 0; i < n / 4; i++) {
        uint64_t x1 = dpdo__stream_u64(&s), x2 = dpdo__stream_u64(&s);
        double sn, cs;
        dpdo__bm_angle(x1, x2, &sn, &cs);
        double th = M_PI / 2 * (ldexp((double)((x2 >> 11) & m52), -52) - 0.5);
        if (x2 & 1) th = M_PI / 2 - th;
        if (x1 >> 63) th = M_PI - th;
        if (x2 >> 63) th = -th;
        double e = fmax(fabs(sn - sin(th)), fabs(cs - cos(th)));
        if (e > wa) wa = e;
        CHECK(fabs(sn * sn + cs * cs - 1.0) < 1e-15);
    }
    CHECK_MSG(wa < 1e-15, "angle: max abs error %.3g", wa);
    /* the Box-Muller radius squared, -2 ln u without a division (table +
     * polynomial), against glibc's log (exactly scaled by -2), over
     * [2^-53, 1): log-uniform, near 1, near 1/2 and at every table
     * interval edge, plus the extreme u of the generator */
    double wm = 0, wm_x = 0;
    for (size_t i = 0; i < n; i++) {
        double x;
        switch (i & 3) {
        case 0: x = exp(-36.7 * dpdo__stream_uniform(&s)); break;
        case 1: x = 1.0 - ldexp(dpdo__stream_uniform(&s), -(int)(i % 53)); break;
        case 2: x = ldexp(1.0 + (double)((i >> 2) % 17) / 16.0, -(int)(1 + i % 53)); /* edges */
            x = (i & 4) ? nextafter(x, 0.0) : x;
            break;
        default: x = 0.5 + ldexp(dpdo__stream_uniform(&s), -(int)(i % 50)); break;
        }
        if (!(x < 1.0) || x < 0x1p-53) continue;
        double e = ulp_err(dpdo__m2log(x), -2.0 * log(x));
        if (e > wm) wm = e, wm_x = x;
    }
    double ex[3] = {0x1p-53, 1.0 - 0x1p-53, 0.5};
    for (int i = 0; i < 3; i++) {
        double e = ulp_err(dpdo__m2log(ex[i]), -2.0 * log(ex[i]));
        if (e > wm) wm = e, wm_x = ex[i];
    }
    CHECK_MSG(wm <= 2.0, "-2 ln u: max error %.2f ulp at %.17g", wm, wm_x);
    printf("# dpdo__m2log max error vs -2 log(): %.2f ulp (at %.17g)\n", wm, wm_x);
    /* the extreme words give the extreme radii: |z| reaches sqrt(106 ln 2) */
    CHECK(dpdo__bm_u1(0) == 0x1p-53 && dpdo__bm_u1(UINT64_MAX) == 1.0 - 0x1p-53);
    CHECK(dpdo__bm_u1(UINT64_C(1) << 63) == 0x1p-53);
    CHECK_NEAR(sqrt(dpdo__m2log(0x1p-53)), sqrt(106.0 * M_LN2), 1e-15);
    dpdo_rng_destroy(r);
}

/* ---- normals: moments and Kolmogorov-Smirnov --------------------------------- */
static void normal_moments_ks(void)
{
    size_t n = big_n();
    double *z = malloc(n * sizeof *z);
    CHECK(z != NULL);
    if (!z) return;
    dpdo_rng *r = mk(20240601);
    CHECK_EQ(dpdo_rng_normal(r, 3, 17, DPDO_PURPOSE_NOISE, 0, z, (int64_t)n), DPDO_OK);
    double m1 = 0, m2 = 0, m3 = 0, m4 = 0;
    for (size_t i = 0; i < n; i++) m1 += z[i];
    m1 /= (double)n;
    for (size_t i = 0; i < n; i++) {
        double d = z[i] - m1, d2 = d * d;
        m2 += d2, m3 += d2 * d, m4 += d2 * d2;
    }
    m2 /= (double)n, m3 /= (double)n, m4 /= (double)n;
    double skew = m3 / pow(m2, 1.5), kurt = m4 / (m2 * m2) - 3.0;
    double rn = sqrt((double)n);
    /* standard errors under N(0,1): mean 1/sqrt n, variance sqrt(2/n),
     * skewness sqrt(6/n), excess kurtosis sqrt(24/n); tolerance 5 SE */
    CHECK_NEAR(m1, 0.0, 5.0 / rn);
    CHECK_NEAR(m2, 1.0, 5.0 * sqrt(2.0) / rn);
    CHECK_NEAR(skew, 0.0, 5.0 * sqrt(6.0) / rn);
    CHECK_NEAR(kurt, 0.0, 5.0 * sqrt(24.0) / rn);
    /* KS against Phi; 0.1% critical value of sqrt(n) D is 1.95 */
    qsort(z, n, sizeof *z, cmp_double);
    double D = 0;
    for (size_t i = 0; i < n; i++) {
        double F = 0.5 * erfc(-z[i] / M_SQRT2);
        double d1 = fabs(F - (double)i / (double)n), d2 = fabs((double)(i + 1) / (double)n - F);
        if (d1 > D) D = d1;
        if (d2 > D) D = d2;
    }
    CHECK_MSG(D * rn < 1.95, "KS normal: sqrt(n) D = %.3f >= 1.95", D * rn);
    printf("# normals n=%zu: mean %.2e var %.5f skew %.2e kurt %.2e KS sqrt(n)D %.3f\n", n, m1,
           m2, skew, kurt, D * rn);
    /* the tails exist and stay finite: |z| <= sqrt(-2 log 2^-53) */
    CHECK(z[0] < -4.0 && z[n - 1] > 4.0);
    CHECK(z[0] >= -8.58 && z[n - 1] <= 8.58);
    free(z);
    dpdo_rng_destroy(r);
}

static void uniform_ks(void)
{
    size_t n = big_n();
    double *u = malloc(n * sizeof *u);
    CHECK(u != NULL);
    if (!u) return;
    dpdo_rng *r = mk(99);
    CHECK_EQ(dpdo_rng_uniform(r, 0, 5, DPDO_PURPOSE_SAMPLE, 0, u, (int64_t)n), DPDO_OK);
    double mean = 0;
    for (size_t i = 0; i < n; i++) {
        CHECK(u[i] > 0.0 && u[i] < 1.0);
        mean += u[i];
    }
    mean /= (double)n;
    CHECK_NEAR(mean, 0.5, 5.0 * sqrt(1.0 / 12.0 / (double)n));
    qsort(u, n, sizeof *u, cmp_double);
    double D = 0;
    for (size_t i = 0; i < n; i++) {
        double d1 = fabs(u[i] - (double)i / (double)n), d2 = fabs((double)(i + 1) / (double)n - u[i]);
        if (d1 > D) D = d1;
        if (d2 > D) D = d2;
    }
    CHECK_MSG(D * sqrt((double)n) < 1.95, "KS uniform: sqrt(n) D = %.3f", D * sqrt((double)n));
    free(u);
    dpdo_rng_destroy(r);
}

/* ---- Laplace, geometric, Bernoulli ------------------------------------------ */
static void laplace_moments(void)
{
    size_t n = big_n();
    double *x = malloc(n * sizeof *x);
    CHECK(x != NULL);
    if (!x) return;
    dpdo_rng *r = mk(7);
    const double b = 2.5;
    CHECK_EQ(dpdo_rng_laplace(r, 1, 2, DPDO_PURPOSE_NOISE, 0, b, x, (int64_t)n), DPDO_OK);
    double m1 = 0, ma = 0, m2 = 0;
    int finite = 1;
    for (size_t i = 0; i < n; i++) {
        finite &= isfinite(x[i]) && x[i] != 0.0;
        m1 += x[i], ma += fabs(x[i]), m2 += x[i] * x[i];
    }
    m1 /= (double)n, ma /= (double)n, m2 /= (double)n;
    double rn = sqrt((double)n);
    CHECK(finite);
    /* Laplace(0,b): E X = 0 (sd b sqrt 2), E|X| = b (sd b), E X^2 = 2 b^2
     * (sd sqrt(E X^4 - 4 b^4) = sqrt(20) b^2) */
    CHECK_NEAR(m1, 0.0, 5.0 * b * sqrt(2.0) / rn);
    CHECK_NEAR(ma, b, 5.0 * b / rn);
    CHECK_NEAR(m2, 2 * b * b, 5.0 * sqrt(20.0) * b * b / rn);
    /* KS of |X|/b against Exp(1), and the sign is balanced */
    size_t neg = 0;
    for (size_t i = 0; i < n; i++) {
        neg += x[i] < 0;
        x[i] = fabs(x[i]) / b;
    }
    CHECK_NEAR((double)neg / (double)n, 0.5, 5.0 * 0.5 / rn);
    qsort(x, n, sizeof *x, cmp_double);
    double D = 0;
    for (size_t i = 0; i < n; i++) {
        double F = -expm1(-x[i]);
        D = fmax(D, fmax(fabs(F - (double)i / (double)n), fabs((double)(i + 1) / (double)n - F)));
    }
    CHECK_MSG(D * rn < 1.95, "KS Laplace: sqrt(n) D = %.3f", D * rn);
    /* the largest magnitude is bounded by b * 53 ln 2 */
    CHECK(x[n - 1] <= 53 * M_LN2 + 1e-9);
    free(x);
    dpdo_rng_destroy(r);
}

static void geometric_moments(void)
{
    size_t n = big_n();
    int64_t *k = malloc(n * sizeof *k);
    CHECK(k != NULL);
    if (!k) return;
    dpdo_rng *r = mk(11);
    const double p = 0.3;
    CHECK_EQ(dpdo_rng_geometric(r, 4, 0, DPDO_PURPOSE_USER, 0, p, k, (int64_t)n), DPDO_OK);
    double m = 0, v = 0;
    long cnt[8] = {0};
    for (size_t i = 0; i < n; i++) {
        m += (double)k[i];
        if (k[i] < 7) cnt[k[i]]++;
        else cnt[7]++;
        CHECK(k[i] >= 0);
    }
    m /= (double)n;
    for (size_t i = 0; i < n; i++) v += ((double)k[i] - m) * ((double)k[i] - m);
    v /= (double)(n - 1);
    const double mu = (1 - p) / p, var = (1 - p) / (p * p);
    CHECK_NEAR(m, mu, 5.0 * sqrt(var / (double)n));
    /* sd of the sample variance: sqrt((mu4 - var^2)/n), mu4 = var (1 + 9 (1-p)/p^2)... use
     * the kurtosis of the geometric: excess = 6 + p^2/(1-p) */
    double ex = 6.0 + p * p / (1 - p);
    CHECK_NEAR(v, var, 5.0 * var * sqrt((ex + 2.0) / (double)n));
    /* chi-square of P(X = j) = (1-p)^j p for j < 7 and the tail, 7 df,
     * 0.1% critical value 24.32 */
    double chi = 0;
    for (int j = 0; j < 8; j++) {
        double e = (j < 7 ? pow(1 - p, j) * p : pow(1 - p, 7)) * (double)n;
        chi += ((double)cnt[j] - e) * ((double)cnt[j] - e) / e;
    }
    CHECK_MSG(chi < 24.32, "geometric chi-square %.2f", chi);
    /* tiny p keeps its relative accuracy: mean ~ 1/p, no saturation */
    const double tiny = 1e-12;
    CHECK_EQ(dpdo_rng_geometric(r, 4, 1, DPDO_PURPOSE_USER, 0, tiny, k, 2000), DPDO_OK);
    double mt = 0;
    for (int i = 0; i < 2000; i++) mt += (double)k[i];
    mt /= 2000.0;
    CHECK_NEAR(mt * tiny, 1.0, 5.0 / sqrt(2000.0));
    free(k);
    dpdo_rng_destroy(r);
}

static void bernoulli_freq(void)
{
    size_t n = big_n();
    int32_t *x = malloc(n * sizeof *x);
    CHECK(x != NULL);
    if (!x) return;
    dpdo_rng *r = mk(12);
    const double ps[] = {0.3, 0.5, 0.999, 1e-3};
    for (int t = 0; t < 4; t++) {
        double p = ps[t];
        CHECK_EQ(dpdo_rng_bernoulli(r, 0, (uint64_t)t, DPDO_PURPOSE_ACTIVATION, 0, p, x, (int64_t)n),
                 DPDO_OK);
        double ones = 0;
        int ok = 1;
        for (size_t i = 0; i < n; i++) {
            ok &= x[i] == 0 || x[i] == 1;
            ones += x[i];
        }
        CHECK(ok);
        /* chi-square, 1 df, 0.1% critical value 10.83 */
        double e1 = p * (double)n, e0 = (1 - p) * (double)n;
        double chi = (ones - e1) * (ones - e1) / e1 + (ones - e1) * (ones - e1) / e0;
        CHECK_MSG(chi < 10.83, "bernoulli p=%g: chi-square %.2f", p, chi);
    }
    free(x);
    dpdo_rng_destroy(r);
}

/* ---- subsets and permutations ---------------------------------------------------- */
static int valid_subset(const int64_t *s, int64_t n, int64_t b)
{
    for (int64_t i = 0; i < b; i++) {
        if (s[i] < 0 || s[i] >= n) return 0;
        if (i > 0 && s[i] <= s[i - 1]) return 0; /* sorted, distinct */
    }
    return 1;
}

/* marginal frequencies of element inclusion, both algorithms */
static void subset_marginals(void)
{
    dpdo_rng *r = mk(13);
    const int64_t cases[2][2] = {{10, 3}, {100, 90}}; /* Floyd; selection sampling */
    int T = h_quick() ? 4000 : 20000;
    for (int c = 0; c < 2; c++) {
        int64_t n = cases[c][0], b = cases[c][1];
        long cnt[100] = {0};
        int64_t s[100];
        int ok = 1;
        for (int t = 0; t < T; t++) {
            CHECK_EQ(dpdo_rng_subset(r, 0, (uint64_t)t, DPDO_PURPOSE_SAMPLE, n, b, s), DPDO_OK);
            ok &= valid_subset(s, n, b);
            for (int64_t i = 0; i < b; i++) cnt[s[i]]++;
        }
        CHECK(ok);
        /* chi-square over the n cells; the counts of a fixed-size subset are
         * negatively correlated, which only shrinks the statistic, so the
         * chi-square(n-1) 0.1% critical value is conservative */
        double e = (double)T * (double)b / (double)n, chi = 0;
        for (int64_t i = 0; i < n; i++) chi += ((double)cnt[i] - e) * ((double)cnt[i] - e) / e;
        double crit = n == 10 ? 27.88 : 148.2; /* chi2(9), chi2(99) at 0.1% */
        CHECK_MSG(chi < crit, "subset n=%lld b=%lld: chi-square %.2f", (long long)n, (long long)b,
                  chi);
    }
    /* whole-subset uniformity: n=5, b=2 has 10 subsets, chi2(9) */
    long cnt[32] = {0};
    int T2 = h_quick() ? 5000 : 50000;
    for (int t = 0; t < T2; t++) {
        int64_t s[2];
        CHECK_EQ(dpdo_rng_subset(r, 1, (uint64_t)t, DPDO_PURPOSE_SAMPLE, 5, 2, s), DPDO_OK);
        cnt[(1 << s[0]) | (1 << s[1])]++;
    }
    double chi = 0, e = T2 / 10.0;
    int cells = 0;
    for (int m = 0; m < 32; m++)
        if (__builtin_popcount((unsigned)m) == 2) {
            chi += (cnt[m] - e) * (cnt[m] - e) / e;
            cells++;
        }
    CHECK_EQ(cells, 10);
    CHECK_MSG(chi < 27.88, "subset(5,2): chi-square %.2f", chi);
    /* b = n and b = 0, large n with small b (Floyd), no duplicates */
    int64_t all[50], big[64];
    CHECK_EQ(dpdo_rng_subset(r, 0, 0, 1, 50, 50, all), DPDO_OK);
    for (int i = 0; i < 50; i++) CHECK_EQ(all[i], i);
    CHECK_EQ(dpdo_rng_subset(r, 0, 0, 1, INT64_C(1) << 40, 64, big), DPDO_OK);
    CHECK(valid_subset(big, INT64_C(1) << 40, 64));
    dpdo_rng_destroy(r);
}

/* The chunked permutation (built-in and keyed streams, n >= 64: words generated 64 blocks at a
 * time, AVX-512 Philox) against Fisher-Yates on dpdo__stream_below word by word: the same
 * permutation, and afterwards both streams at the same position (the next words and normals
 * agree), from a fresh stream, after one u32 (3 words left in the block), after one normal (a
 * spare pending) and near the 2^32 block wrap; bulk raw blocks equal the scalar generator. */
static void permutation_chunked(void)
{
    dpdo_rng *r = mk(0x5eed5eed12345678ull);
    static const int64_t NS[] = {2, 63, 64, 65, 127, 1000, 6000};
    static unsigned char key[32], has = 1;
    for (int b = 0; b < 32; b++) key[b] = (unsigned char)(3 * b + 1);
    int64_t *p = malloc(6000 * sizeof *p), *q = malloc(6000 * sizeof *q);
    size_t bad = 0, cases = 0;
    for (int keyed = 0; keyed < 2; keyed++) {
        r->keys = keyed ? key : NULL, r->has_key = keyed ? &has : NULL, r->nkeys = keyed;
        for (size_t a = 0; a < sizeof NS / sizeof NS[0]; a++)
            for (int pre = 0; pre < 4; pre++) {
                int64_t n = NS[a];
                dpdo__stream x, y;
                dpdo__stream_open(&x, r, 0, (uint64_t)n, DPDO_PURPOSE_SAMPLE);
                dpdo__stream_open(&y, r, 0, (uint64_t)n, DPDO_PURPOSE_SAMPLE);
                CHECK(x.fast == !keyed && (x.ckey != NULL) == keyed);
                if (pre == 1) (void)dpdo__stream_u32(&x), (void)dpdo__stream_u32(&y);
                if (pre == 2) (void)dpdo__stream_normal(&x), (void)dpdo__stream_normal(&y);
                if (pre == 3) dpdo__stream_seek(&x, 0xFFFFFFF9u), dpdo__stream_seek(&y, 0xFFFFFFF9u);
                dpdo__stream_permutation(&x, n, p);
                for (int64_t i = 0; i < n; i++) q[i] = i;
                for (int64_t i = n - 1; i > 0; i--) {
                    int64_t j = (int64_t)dpdo__stream_below(&y, (uint64_t)i + 1), t = q[i];
                    q[i] = q[j], q[j] = t;
                }
                cases++;
                int same = memcmp(p, q, (size_t)n * sizeof *p) == 0;
                for (int k = 0; k < 7; k++) same &= dpdo__stream_u32(&x) == dpdo__stream_u32(&y);
                same &= bits(dpdo__stream_normal(&x)) == bits(dpdo__stream_normal(&y));
                if (!same) {
                    bad++;
                    printf("# differs: keyed %d n %lld pre %d\n", keyed, (long long)n, pre);
                }
            }
    }
    r->keys = NULL, r->has_key = NULL, r->nkeys = 0;
    CHECK_MSG(bad == 0, "%zu of %zu permutation cases differ", bad, cases);
    /* bulk raw blocks (the vectorised path from 32 blocks on) = block-by-block scalar */
    uint32_t w1[4 * 100], w2[4 * 100];
    dpdo__stream x, y;
    dpdo__stream_open(&x, r, 5, 6, 7);
    dpdo__stream_open(&y, r, 5, 6, 7);
    dpdo__stream_seek(&x, 0xFFFFFFE0u), dpdo__stream_seek(&y, 0xFFFFFFE0u);
    dpdo__stream_blocks(&x, w1, 100);
    for (int j = 0; j < 100; j++) dpdo__stream_blocks(&y, w2 + 4 * j, 1);
    CHECK(memcmp(w1, w2, sizeof w1) == 0);
    CHECK(dpdo__stream_u32(&x) == dpdo__stream_u32(&y));
    free(p), free(q);
    dpdo_rng_destroy(r);
}

static void permutation_uniform(void)
{
    dpdo_rng *r = mk(14);
    long cnt[256] = {0};
    int T = h_quick() ? 4800 : 48000;
    for (int t = 0; t < T; t++) {
        int64_t p[4];
        CHECK_EQ(dpdo_rng_permutation(r, 2, (uint64_t)t, DPDO_PURPOSE_SAMPLE, 4, p), DPDO_OK);
        int code = 0, seen = 0;
        for (int i = 0; i < 4; i++) {
            code = code * 4 + (int)p[i];
            seen |= 1 << p[i];
        }
        CHECK_EQ(seen, 15);
        cnt[code]++;
    }
    double e = T / 24.0, chi = 0;
    int cells = 0;
    for (int c = 0; c < 256; c++) {
        int d0 = c >> 6, d1 = (c >> 4) & 3, d2 = (c >> 2) & 3, d3 = c & 3;
        int isperm = ((1 << d0) | (1 << d1) | (1 << d2) | (1 << d3)) == 15;
        if (!isperm) {
            CHECK_EQ(cnt[c], 0);
            continue;
        }
        cells++;
        chi += (cnt[c] - e) * (cnt[c] - e) / e;
    }
    CHECK_EQ(cells, 24);
    CHECK_MSG(chi < 49.73, "permutation n=4: chi-square %.2f (chi2(23) 0.1%% = 49.73)", chi);
    int64_t big[1000];
    CHECK_EQ(dpdo_rng_permutation(r, 0, 0, 1, 1000, big), DPDO_OK);
    char seen[1000] = {0};
    int ok = 1;
    for (int i = 0; i < 1000; i++) {
        ok &= big[i] >= 0 && big[i] < 1000 && !seen[big[i]];
        if (big[i] >= 0 && big[i] < 1000) seen[big[i]] = 1;
    }
    CHECK(ok);
    dpdo_rng_destroy(r);
}

static void below_unbiased(void)
{
    dpdo_rng *r = mk(15);
    dpdo__stream s;
    dpdo__stream_open(&s, r, 0, 0, 1);
    long cnt[7] = {0};
    int T = h_quick() ? 70000 : 700000;
    for (int t = 0; t < T; t++) {
        uint64_t v = dpdo__stream_below(&s, 7);
        CHECK(v < 7);
        if (v < 7) cnt[v]++;
    }
    double e = T / 7.0, chi = 0;
    for (int i = 0; i < 7; i++) chi += (cnt[i] - e) * (cnt[i] - e) / e;
    CHECK_MSG(chi < 22.46, "below(7): chi-square %.2f (chi2(6) 0.1%%)", chi);
    CHECK_EQ(dpdo__stream_below(&s, 1), 0);
    /* n = 2^63 + 1 rejects about half of the words: still in range */
    for (int t = 0; t < 100; t++) CHECK(dpdo__stream_below(&s, (UINT64_C(1) << 63) + 1) <= UINT64_C(1) << 63);
    dpdo_rng_destroy(r);
}

/* ---- independence and offsets -------------------------------------------------------- */
static double corr(const double *a, const double *b, size_t n)
{
    double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
    for (size_t i = 0; i < n; i++) ma += a[i], mb += b[i];
    ma /= (double)n, mb /= (double)n;
    for (size_t i = 0; i < n; i++) {
        sab += (a[i] - ma) * (b[i] - mb);
        saa += (a[i] - ma) * (a[i] - ma);
        sbb += (b[i] - mb) * (b[i] - mb);
    }
    return sab / sqrt(saa * sbb);
}

static void stream_independence(void)
{
    size_t n = h_quick() ? 100000 : 400000;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    CHECK(a && b);
    if (!a || !b) {
        free(a), free(b);
        return;
    }
    dpdo_rng *r = mk(16), *r2 = mk(17);
    const uint64_t ids[5][3] = {{5, 9, 3}, {6, 9, 3}, {5, 10, 3}, {5, 9, 4}, {5, 9 + (UINT64_C(1) << 32), 3}};
    CHECK_EQ(dpdo_rng_normal(r, ids[0][0], ids[0][1], (uint32_t)ids[0][2], 0, a, (int64_t)n), DPDO_OK);
    for (int k = 1; k < 6; k++) {
        if (k < 5)
            CHECK_EQ(dpdo_rng_normal(r, ids[k][0], ids[k][1], (uint32_t)ids[k][2], 0, b, (int64_t)n),
                     DPDO_OK);
        else /* same ids, another seed */
            CHECK_EQ(dpdo_rng_normal(r2, ids[0][0], ids[0][1], (uint32_t)ids[0][2], 0, b, (int64_t)n),
                     DPDO_OK);
        double c = corr(a, b, n);
        CHECK_MSG(fabs(c) < 4.0 / sqrt((double)n), "stream %d: correlation %.4g", k, c);
        /* also the lag-1 correlation of the shifted stream (same position effects) */
        double c1 = corr(a, b + 1, n - 1);
        CHECK_MSG(fabs(c1) < 4.0 / sqrt((double)n - 1), "stream %d: lag-1 correlation %.4g", k, c1);
    }
    /* within one stream: the two members of a Box-Muller pair are uncorrelated,
     * also in their squares (they share the radius) */
    double cs = 0, cq = 0;
    size_t h = n / 2;
    for (size_t j = 0; j < h; j++) {
        cs += a[2 * j] * a[2 * j + 1];
        cq += (a[2 * j] * a[2 * j] - 1) * (a[2 * j + 1] * a[2 * j + 1] - 1);
    }
    CHECK_NEAR(cs / (double)h, 0.0, 5.0 / sqrt((double)h));
    CHECK_NEAR(cq / (double)h, 0.0, 5.0 * 2.0 / sqrt((double)h)); /* sd of (z^2-1)(w^2-1) is 2 */
    free(a), free(b);
    dpdo_rng_destroy(r);
    dpdo_rng_destroy(r2);
}

static void offsets(void)
{
    dpdo_rng *r = mk(18);
    enum { N = 301 };
    double full[N], part[N];
    int32_t bf[N], bp[N];
    int64_t gf[N], gp[N];
    const int64_t ks[] = {0, 1, 2, 7, 8, 33, 150, 300};
    CHECK_EQ(dpdo_rng_uniform(r, 1, 2, 3, 0, full, N), DPDO_OK);
    for (size_t t = 0; t < sizeof ks / sizeof ks[0]; t++) {
        int64_t k = ks[t];
        CHECK_EQ(dpdo_rng_uniform(r, 1, 2, 3, 0, part, k), DPDO_OK);
        CHECK_EQ(dpdo_rng_uniform(r, 1, 2, 3, (uint64_t)k, part + k, N - k), DPDO_OK);
        CHECK(memcmp(full, part, sizeof full) == 0);
    }
    CHECK_EQ(dpdo_rng_normal(r, 1, 2, 3, 0, full, N), DPDO_OK);
    for (size_t t = 0; t < sizeof ks / sizeof ks[0]; t++) {
        int64_t k = ks[t];
        CHECK_EQ(dpdo_rng_normal(r, 1, 2, 3, 0, part, k), DPDO_OK);
        CHECK_EQ(dpdo_rng_normal(r, 1, 2, 3, (uint64_t)k, part + k, N - k), DPDO_OK);
        CHECK_MSG(memcmp(full, part, sizeof full) == 0, "normal offset %lld", (long long)k);
    }
    CHECK_EQ(dpdo_rng_laplace(r, 1, 2, 3, 0, 1.5, full, N), DPDO_OK);
    CHECK_EQ(dpdo_rng_bernoulli(r, 1, 2, 3, 0, 0.4, bf, N), DPDO_OK);
    CHECK_EQ(dpdo_rng_geometric(r, 1, 2, 3, 0, 0.2, gf, N), DPDO_OK);
    for (size_t t = 0; t < sizeof ks / sizeof ks[0]; t++) {
        int64_t k = ks[t];
        CHECK_EQ(dpdo_rng_laplace(r, 1, 2, 3, 0, 1.5, part, k), DPDO_OK);
        CHECK_EQ(dpdo_rng_laplace(r, 1, 2, 3, (uint64_t)k, 1.5, part + k, N - k), DPDO_OK);
        CHECK(memcmp(full, part, sizeof full) == 0);
        CHECK_EQ(dpdo_rng_bernoulli(r, 1, 2, 3, 0, 0.4, bp, k), DPDO_OK);
        CHECK_EQ(dpdo_rng_bernoulli(r, 1, 2, 3, (uint64_t)k, 0.4, bp + k, N - k), DPDO_OK);
        CHECK(memcmp(bf, bp, sizeof bf) == 0);
        CHECK_EQ(dpdo_rng_geometric(r, 1, 2, 3, 0, 0.2, gp, k), DPDO_OK);
        CHECK_EQ(dpdo_rng_geometric(r, 1, 2, 3, (uint64_t)k, 0.2, gp + k, N - k), DPDO_OK);
        CHECK(memcmp(gf, gp, sizeof gf) == 0);
    }
    /* the internal stream: one-at-a-time calls equal one bulk call, also for
     * normals split at odd lengths and mixed normal()/normals() */
    dpdo__stream s;
    double one[N];
    dpdo__stream_open(&s, r, 4, 5, 6);
    for (int i = 0; i < N; i++) one[i] = dpdo__stream_normal(&s);
    dpdo__stream_open(&s, r, 4, 5, 6);
    dpdo__stream_normals(&s, full, N);
    CHECK(memcmp(one, full, sizeof one) == 0);
    dpdo__stream_open(&s, r, 4, 5, 6);
    dpdo__stream_normals(&s, part, 3);
    dpdo__stream_normals(&s, part + 3, 100);
    part[103] = dpdo__stream_normal(&s);
    dpdo__stream_normals(&s, part + 104, N - 104);
    CHECK(memcmp(part, full, sizeof full) == 0);
    /* add_normals is fma(scale, normals, out) (one rounding), bit for bit */
    for (int i = 0; i < N; i++) part[i] = one[i] = 0.25 * i - 3.0;
    dpdo__stream_open(&s, r, 4, 5, 6);
    dpdo__stream_add_normals(&s, 0.7, part, N);
    for (int i = 0; i < N; i++) one[i] = fma(0.7, full[i], one[i]);
    CHECK(memcmp(one, part, sizeof one) == 0);
    /* uniforms: bulk equals one at a time, also after an odd u32 draw */
    dpdo__stream_open(&s, r, 4, 5, 7);
    for (int i = 0; i < N; i++) one[i] = dpdo__stream_uniform(&s);
    dpdo__stream_open(&s, r, 4, 5, 7);
    part[0] = dpdo__stream_uniform(&s);
    dpdo__stream_uniforms(&s, part + 1, N - 1);
    CHECK(memcmp(one, part, sizeof one) == 0);
    dpdo__stream_open(&s, r, 4, 5, 7);
    (void)dpdo__stream_u32(&s);
    for (int i = 0; i < 50; i++) one[i] = dpdo__stream_uniform(&s);
    dpdo__stream_open(&s, r, 4, 5, 7);
    (void)dpdo__stream_u32(&s);
    dpdo__stream_uniforms(&s, part, 50);
    CHECK(memcmp(one, part, 50 * sizeof *one) == 0);
    dpdo_rng_destroy(r);
}

/* ---- SIMD kernels vs the scalar reference ---------------------------------------------- */
static void simd_bit_identical(void)
{
    size_t n = 200003; /* odd, not a multiple of any vector width */
    double *ref = malloc(n * sizeof *ref), *got = malloc(n * sizeof *got);
    CHECK(ref && got);
    if (!ref || !got) {
        free(ref), free(got);
        return;
    }
    dpdo_rng *r = mk(0xfeedfacecafebeefull);
    int best = dpdo__rng_kernel_best();
    printf("# best kernel on this CPU: %s\n", dpdo__rng_kernel_name(best));
    for (int k = DPDO__RNG_KERNEL_SCALAR + 1; k <= best; k++) {
        for (int start = 0; start < 3; start++) {
            /* start = 1: one normal drawn first (a spare is pending);
             * start = 2: the stream begins near the 2^32 block wrap */
            dpdo__stream a, b;
            dpdo__stream_open(&a, r, 7, 8, 9);
            dpdo__stream_open(&b, r, 7, 8, 9);
            if (start == 2) {
                dpdo__stream_seek(&a, 0xFFFFFFF0u);
                dpdo__stream_seek(&b, 0xFFFFFFF0u);
            }
            size_t off = 0;
            if (start == 1) {
                ref[0] = dpdo__stream_normal(&a);
                got[0] = dpdo__stream_normal(&b);
                off = 1;
            }
            CHECK_EQ(dpdo__stream_normals_k(&a, ref + off, n - off, DPDO__RNG_KERNEL_SCALAR),
                     DPDO__RNG_KERNEL_SCALAR);
            CHECK_EQ(dpdo__stream_normals_k(&b, got + off, n - off, k), k);
            size_t diff = 0, first = n;
            for (size_t i = 0; i < n; i++)
                if (bits(ref[i]) != bits(got[i])) {
                    diff++;
                    if (first == n) first = i;
                }
            CHECK_MSG(diff == 0, "%s normals (start %d): %zu of %zu differ, first at %zu",
                      dpdo__rng_kernel_name(k), start, diff, n, first);
            /* the streams end at the same position */
            CHECK(bits(dpdo__stream_normal(&a)) == bits(dpdo__stream_normal(&b)));
        }
        /* add_normals */
        for (size_t i = 0; i < n; i++) ref[i] = got[i] = (double)i * 1e-3;
        dpdo__stream a, b;
        dpdo__stream_open(&a, r, 1, 1, 1);
        dpdo__stream_open(&b, r, 1, 1, 1);
        dpdo__stream_add_normals_k(&a, 0.3, ref, n, DPDO__RNG_KERNEL_SCALAR);
        dpdo__stream_add_normals_k(&b, 0.3, got, n, k);
        CHECK_MSG(memcmp(ref, got, n * sizeof *ref) == 0, "%s add_normals differ",
                  dpdo__rng_kernel_name(k));
        /* uniforms */
        dpdo__stream_open(&a, r, 2, 2, 2);
        dpdo__stream_open(&b, r, 2, 2, 2);
        dpdo__stream_uniforms_k(&a, ref, n, DPDO__RNG_KERNEL_SCALAR);
        dpdo__stream_uniforms_k(&b, got, n, k);
        CHECK_MSG(memcmp(ref, got, n * sizeof *ref) == 0, "%s uniforms differ",
                  dpdo__rng_kernel_name(k));
    }
    /* short and odd lengths (partial vectors, the scalar tail, a pending
     * spare) on every kernel, for normals and add_normals */
    for (int k = DPDO__RNG_KERNEL_SCALAR + 1; k <= best; k++) {
        size_t bad = 0;
        for (size_t len = 1; len <= 80; len++) {
            for (int pre = 0; pre < 2; pre++) {
                dpdo__stream a, b;
                dpdo__stream_open(&a, r, 11, len, 12);
                dpdo__stream_open(&b, r, 11, len, 12);
                if (pre) (void)dpdo__stream_normal(&a), (void)dpdo__stream_normal(&b);
                for (size_t i = 0; i < len; i++) ref[i] = got[i] = 1.0 - (double)i;
                dpdo__stream_add_normals_k(&a, -1.25, ref, len, DPDO__RNG_KERNEL_SCALAR);
                dpdo__stream_add_normals_k(&b, -1.25, got, len, k);
                dpdo__stream_normals_k(&a, ref + len, len, DPDO__RNG_KERNEL_SCALAR);
                dpdo__stream_normals_k(&b, got + len, len, k);
                if (memcmp(ref, got, 2 * len * sizeof *ref) != 0) bad++;
            }
        }
        CHECK_MSG(bad == 0, "%s: %zu short-length cases differ", dpdo__rng_kernel_name(k), bad);
    }
    /* the dispatched public path equals the scalar kernel too */
    dpdo__stream a;
    dpdo__stream_open(&a, r, 3, 3, 3);
    dpdo__stream_normals_k(&a, ref, n, DPDO__RNG_KERNEL_SCALAR);
    CHECK_EQ(dpdo_rng_normal(r, 3, 3, 3, 0, got, (int64_t)n), DPDO_OK);
    CHECK(memcmp(ref, got, n * sizeof *ref) == 0);
    free(ref), free(got);
    dpdo_rng_destroy(r);
}

/* Golden values: recorded from this implementation AFTER the distribution,
 * layout (libm recomputation) and known-answer tests above passed. They pin
 * the output across runs, compilers and machines; a change of the generator
 * or the value mapping must update them and say so in the CHANGELOG. */
static void golden(void)
{
    dpdo_rng *r = mk(42);
    double u[3], z[3], l[2];
    int64_t s[4], p[5];
    CHECK_EQ(dpdo_rng_uniform(r, 0, 0, DPDO_PURPOSE_NOISE, 0, u, 3), DPDO_OK);
    CHECK_EQ(dpdo_rng_normal(r, 0, 0, DPDO_PURPOSE_NOISE, 0, z, 3), DPDO_OK);
    CHECK_EQ(dpdo_rng_laplace(r, 1, 2, DPDO_PURPOSE_NOISE, 0, 1.0, l, 2), DPDO_OK);
    CHECK_EQ(dpdo_rng_subset(r, 1, 2, DPDO_PURPOSE_SAMPLE, 100, 4, s), DPDO_OK);
    CHECK_EQ(dpdo_rng_permutation(r, 1, 2, DPDO_PURPOSE_SAMPLE, 5, p), DPDO_OK);
    printf("# golden: u %a %a %a\n# golden: z %a %a %a\n# golden: l %a %a\n", u[0], u[1], u[2],
           z[0], z[1], z[2], l[0], l[1]);
    printf("# golden: s %lld %lld %lld %lld p %lld %lld %lld %lld %lld\n", (long long)s[0],
           (long long)s[1], (long long)s[2], (long long)s[3], (long long)p[0], (long long)p[1],
           (long long)p[2], (long long)p[3], (long long)p[4]);
    static const double gu[3] = {0x1.08f2a6974a0abp-1, 0x1.deff1fd29df0fp-1,
                                 0x1.dabb5296e0631p-1};
    /* normals regenerated for the 0.2 Box-Muller mapping (division-free
     * -2 ln u, angle signs from bit 63 of each word, see docs/rng.md); the
     * libm recomputation in stream_layout and the distribution tests passed
     * unchanged before they were recorded */
    static const double gz[3] = {-0x1.14c408953c67ep+1, -0x1.6cf2ce14a512ap+0,
                                 -0x1.df27b06e316ddp-2};
    static const double gl[2] = {-0x1.afc6195f82afcp-1, 0x1.c187a12ee31a8p-1};
    static const int64_t gs[4] = {3, 15, 58, 89}, gp[5] = {1, 3, 0, 2, 4};
    for (int i = 0; i < 3; i++) CHECK_MSG(u[i] == gu[i], "uniform %d: %a != %a", i, u[i], gu[i]);
    for (int i = 0; i < 3; i++) CHECK_MSG(z[i] == gz[i], "normal %d: %a != %a", i, z[i], gz[i]);
    for (int i = 0; i < 2; i++) CHECK_MSG(l[i] == gl[i], "laplace %d: %a != %a", i, l[i], gl[i]);
    for (int i = 0; i < 4; i++) CHECK_EQ(s[i], gs[i]);
    for (int i = 0; i < 5; i++) CHECK_EQ(p[i], gp[i]);
    dpdo_rng_destroy(r);
}

/* ---- pluggable types ------------------------------------------------------------------- */
static void custom_types(void)
{
    /* a custom type wrapping the built-in Philox callback gives exactly the
     * built-in output through the generic (callback) path */
    const dpdo_rng_type *ph = dpdo_rng_type_find("philox4x32-10");
    dpdo_rng_type wrap = {sizeof(dpdo_rng_type), "wrapped-philox", ph->blocks, NULL};
    dpdo_rng *b = mk(77), *c = NULL;
    CHECK_EQ(dpdo_rng_create_custom(&c, &wrap, NULL, 77), DPDO_OK);
    enum { N = 1001 };
    double x[N], y[N];
    int64_t sx[20], sy[20];
    CHECK_EQ(dpdo_rng_normal(b, 1, 2, 3, 5, x, N), DPDO_OK);
    CHECK_EQ(dpdo_rng_normal(c, 1, 2, 3, 5, y, N), DPDO_OK);
    CHECK(memcmp(x, y, sizeof x) == 0);
    CHECK_EQ(dpdo_rng_uniform(b, 1, 2, 3, 5, x, N), DPDO_OK);
    CHECK_EQ(dpdo_rng_uniform(c, 1, 2, 3, 5, y, N), DPDO_OK);
    CHECK(memcmp(x, y, sizeof x) == 0);
    CHECK_EQ(dpdo_rng_subset(b, 1, 2, 3, 1000, 20, sx), DPDO_OK);
    CHECK_EQ(dpdo_rng_subset(c, 1, 2, 3, 1000, 20, sy), DPDO_OK);
    CHECK(memcmp(sx, sy, sizeof sx) == 0);
    dpdo_rng_destroy(c);
    dpdo_rng_destroy(b);

    /* a trivial counter hash: the transforms run on its words */
    released = 0;
    int token = 0;
    CHECK_EQ(dpdo_rng_create_custom(&c, &hash_type, &token, 5), DPDO_OK);
    size_t n = h_quick() ? 20000 : 200000;
    double *z = malloc(n * sizeof *z);
    CHECK(z != NULL);
    if (z) {
        CHECK_EQ(dpdo_rng_normal(c, 0, 0, 1, 0, z, (int64_t)n), DPDO_OK);
        /* first pair recomputed from the hash's words */
        uint32_t w[4], key[4] = {5, 0, 0, 0}, ctr[4] = {0, 0, 0, 1};
        hash_blocks(NULL, key, ctr, 1, w);
        double z0, z1;
        dpdo__bm_block(w, &z0, &z1);
        CHECK(z[0] == z0 && z[1] == z1);
        double m = 0, v = 0;
        for (size_t i = 0; i < n; i++) m += z[i], v += z[i] * z[i];
        m /= (double)n, v /= (double)n;
        CHECK_NEAR(m, 0.0, 5.0 / sqrt((double)n));
        CHECK_NEAR(v, 1.0, 5.0 * sqrt(2.0 / (double)n));
        free(z);
    }
    CHECK_EQ(released, 0);
    dpdo_rng_destroy(c);
    CHECK_EQ(released, 1);

    /* a failing type: DPDO_E_CALLBACK with the code in the message, for every
     * draw kind; the callback is not called again within a failed draw */
    CHECK_EQ(dpdo_rng_create_custom(&c, &failing_type, NULL, 5), DPDO_OK);
    double d[100];
    int32_t bb[10];
    int64_t g[10];
    fail_calls = 0;
    CHECK_EQ(dpdo_rng_normal(c, 0, 0, 1, 0, d, 100), DPDO_E_CALLBACK);
    CHECK_EQ(fail_calls, 1);
    CHECK_STR_CONTAINS(dpdo_rng_errmsg(c), "returned 7");
    CHECK_STR_CONTAINS(dpdo_rng_errmsg(c), "test-failing");
    for (int i = 0; i < 100; i++) CHECK(isfinite(d[i])); /* deterministic, no garbage */
    CHECK_EQ(dpdo_rng_uniform(c, 0, 0, 1, 0, d, 100), DPDO_E_CALLBACK);
    CHECK_EQ(dpdo_rng_laplace(c, 0, 0, 1, 0, 1.0, d, 10), DPDO_E_CALLBACK);
    CHECK_EQ(dpdo_rng_bernoulli(c, 0, 0, 1, 0, 0.5, bb, 10), DPDO_E_CALLBACK);
    CHECK_EQ(dpdo_rng_geometric(c, 0, 0, 1, 0, 0.5, g, 10), DPDO_E_CALLBACK);
    CHECK_EQ(dpdo_rng_subset(c, 0, 0, 1, 10, 3, g), DPDO_E_CALLBACK);
    CHECK_EQ(dpdo_rng_permutation(c, 0, 0, 1, 10, g), DPDO_E_CALLBACK);
    /* internal streams report it through the sticky status */
    dpdo__stream s;
    dpdo__stream_open(&s, c, 0, 0, 1);
    CHECK_EQ(dpdo__stream_status(&s), DPDO_OK);
    (void)dpdo__stream_uniform(&s);
    CHECK_EQ(dpdo__stream_status(&s), DPDO_E_CALLBACK);
    CHECK_EQ(dpdo__stream_cb_code(&s), 7);
    (void)dpdo__stream_normal(&s);
    CHECK_EQ(dpdo__stream_status(&s), DPDO_E_CALLBACK);
    dpdo_rng_destroy(c);
}

/* Drawing is deterministic: two handles with one seed give identical bytes,
 * and the result does not depend on how the work is split. */
static void deterministic(void)
{
    dpdo_rng *a = mk(3), *b = mk(3), *c = mk(4);
    double x[257], y[257];
    CHECK_EQ(dpdo_rng_normal(a, 9, 9, 9, 0, x, 257), DPDO_OK);
    CHECK_EQ(dpdo_rng_normal(b, 9, 9, 9, 0, y, 257), DPDO_OK);
    CHECK(memcmp(x, y, sizeof x) == 0);
    CHECK_EQ(dpdo_rng_normal(c, 9, 9, 9, 0, y, 257), DPDO_OK);
    CHECK(memcmp(x, y, sizeof x) != 0);
    dpdo_rng_destroy(a);
    dpdo_rng_destroy(b);
    dpdo_rng_destroy(c);
}

int main(void)
{
    RUN(kat_philox);
    RUN(type_lookup);
    RUN(create_oom);
    RUN(create_bad_input);
    RUN(draws_bad_input);
    RUN(stream_layout);
    RUN(math_accuracy);
    RUN(normal_moments_ks);
    RUN(uniform_ks);
    RUN(laplace_moments);
    RUN(geometric_moments);
    RUN(bernoulli_freq);
    RUN(subset_marginals);
    RUN(permutation_uniform);
    RUN(permutation_chunked);
    RUN(below_unbiased);
    RUN(stream_independence);
    RUN(offsets);
    RUN(simd_bit_identical);
    RUN(golden);
    RUN(custom_types);
    RUN(deterministic);
    return h_finish();
}
