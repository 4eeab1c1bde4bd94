/* SPDX-License-Identifier: BSD-3-Clause */
/* Status codes are pinned and named; versions agree with the header;
 * options-struct versioning; the allocation fault hook. */
#include <float.h>
#include <stdint.h>
#include "dpdo/dpdo.h"
#include "core/core_impl.h"
#include "harness.h"

static void status_values_pinned(void)
{
    CHECK_EQ(DPDO_OK, 0);
    CHECK_EQ(DPDO_ROUND, 1);
    CHECK_EQ(DPDO_DONE, 2);
    CHECK_EQ(DPDO_E_INVAL, -1);
    CHECK_EQ(DPDO_E_NOMEM, -2);
    CHECK_EQ(DPDO_E_STATE, -3);
    CHECK_EQ(DPDO_E_CALLBACK, -4);
    CHECK_EQ(DPDO_E_NUMERIC, -5);
    CHECK_EQ(DPDO_E_BUDGET, -6);
    CHECK_EQ(DPDO_E_VERSION, -7);
    CHECK_EQ(DPDO_E_UNSUPPORTED, -8);
    CHECK_EQ(DPDO_E_IO, -9);
    CHECK_EQ(DPDO_E_FORMAT, -10);
    CHECK_EQ(DPDO_E_CANCELED, -11);
    CHECK_EQ(DPDO_E_MISUSE, -12);
}

static void status_text(void)
{
    for (int s = -12; s <= 2; s++) {
        CHECK(dpdo_strerror(s) != NULL);
        CHECK(strcmp(dpdo_strerror(s), "unknown status") != 0);
        CHECK(strncmp(dpdo_status_name(s), "DPDO_", 5) == 0);
    }
    CHECK(strcmp(dpdo_strerror(-13), "unknown status") == 0);
    CHECK(strcmp(dpdo_status_name(DPDO_E_MISUSE), "DPDO_E_MISUSE") == 0);
    CHECK(strcmp(dpdo_strerror(3), "unknown status") == 0);
    CHECK(strcmp(dpdo_strerror(INT32_MIN), "unknown status") == 0);
    CHECK(strcmp(dpdo_status_name(DPDO_E_BUDGET), "DPDO_E_BUDGET") == 0);
    CHECK(strcmp(dpdo_status_name(99), "DPDO_UNKNOWN") == 0);
}

static void versions(void)
{
    CHECK_EQ(dpdo_version_number(), DPDO_VERSION_NUMBER);
    CHECK(strcmp(dpdo_version_string(), DPDO_VERSION_STRING) == 0);
    CHECK_EQ(dpdo_abi_major(), DPDO_ABI_MAJOR);
    char buf[32];
    snprintf(buf, sizeof buf, "%d.%d.%d", DPDO_VERSION_MAJOR, DPDO_VERSION_MINOR,
             DPDO_VERSION_PATCH);
    CHECK(strcmp(buf, dpdo_version_string()) == 0);
}

typedef struct { size_t struct_size; int32_t a; double b; } opts_v1;
typedef struct { size_t struct_size; int32_t a; double b; uint64_t c; } opts_v2;

static void options_versioning(void)
{
    char err[DPDO__ERRMSG_LEN] = "";
    opts_v1 dst = {sizeof dst, 1, 2.0};
    /* a caller compiled against a newer library with a zero tail: accepted */
    opts_v2 newer = {sizeof newer, 5, 6.0, 0};
    CHECK_EQ(dpdo__opts_copy(&dst, sizeof dst, &newer, err), DPDO_OK);
    CHECK_EQ(dst.a, 5);
    CHECK(dst.b == 6.0);
    /* non-zero unknown tail: rejected, message says why */
    newer.c = 7;
    CHECK_EQ(dpdo__opts_copy(&dst, sizeof dst, &newer, err), DPDO_E_VERSION);
    CHECK_STR_CONTAINS(err, "tail");
    /* an older, smaller caller struct keeps the defaults for what it lacks */
    opts_v2 dst2 = {sizeof dst2, 1, 2.0, 99};
    opts_v1 older = {sizeof older, 3, 4.0};
    CHECK_EQ(dpdo__opts_copy(&dst2, sizeof dst2, &older, err), DPDO_OK);
    CHECK_EQ(dst2.a, 3);
    CHECK_EQ(dst2.c, 99);
    /* garbage struct_size */
    older.struct_size = 2;
    CHECK_EQ(dpdo__opts_copy(&dst2, sizeof dst2, &older, err), DPDO_E_VERSION);
    /* NULL: defaults */
    CHECK_EQ(dpdo__opts_copy(&dst2, sizeof dst2, NULL, err), DPDO_OK);
}

static void fault_hook(void)
{
    dpdo__fault_arm(2);
    void *a = dpdo__alloc(8), *b = dpdo__alloc(8), *c = dpdo__alloc(8);
    CHECK(a && b && !c);
    CHECK(dpdo__fault_fired());
    dpdo__free(a);
    dpdo__free(b);
    dpdo__fault_arm(-1);
    c = dpdo__calloc(4, 4);
    CHECK(c != NULL);
    dpdo__free(c);
    /* overflow is refused, not wrapped */
    CHECK(dpdo__calloc(SIZE_MAX / 2, 4) == NULL);
    CHECK(dpdo__alloc_array(SIZE_MAX / 2, 4) == NULL);
}

static void checks(void)
{
    double x[4] = {1, 2, NAN, 3};
    CHECK(!dpdo__all_finite(x, 4));
    CHECK_EQ(dpdo__first_nonfinite(x, 4), 2);
    CHECK(dpdo__all_finite(x, 2));
    size_t out;
    CHECK(!dpdo__mul_size(SIZE_MAX, 2, &out));
    CHECK(dpdo__mul_size(3, 4, &out) && out == 12);
}

/* the blocked (SSE2 / AVX2) scans return the first bad index for every length around the block
 * sizes (16, 32), every position, every kind of non-finite value, and the largest finite values
 * and subnormals are not flagged */
static void finite_scan_blocks(void)
{
    enum { N = 133 };
    double x[N + 1] = {0};
    const double bad[4] = {NAN, -NAN, INFINITY, -INFINITY};
    const double ok[4] = {DBL_MAX, -DBL_MAX, 4.9e-324, -0.0};
    int wrong = 0;
    for (size_t n = 0; n <= N; n++) {
        for (size_t k = 0; k < n; k++)
            x[k] = ok[k % 4] * ((k & 4) ? 1.0 : 0.5);
        if (dpdo__first_nonfinite(x, n) != n) wrong++;
        for (size_t p = 0; p < n; p++)
            for (int b = 0; b < 4; b++) {
                double keep = x[p];
                x[p] = bad[b];
                if (p + 1 < n) x[n - 1] = bad[(b + 1) % 4]; /* a later bad value must not win */
                if (dpdo__first_nonfinite(x, n) != p || dpdo__all_finite(x, n)) wrong++;
                x[p] = keep;
                x[n - 1] = ok[(n - 1) % 4] * (((n - 1) & 4) ? 1.0 : 0.5);
            }
    }
    CHECK_EQ(wrong, 0);
}

int main(void)
{
    RUN(status_values_pinned);
    RUN(status_text);
    RUN(versions);
    RUN(options_versioning);
    RUN(fault_hook);
    RUN(checks);
    RUN(finite_scan_blocks);
    return h_finish();
}
