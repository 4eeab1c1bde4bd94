/* SPDX-License-Identifier: BSD-3-Clause */
/* Status text, versions, allocation and error-message helpers, log-gamma. */
/* lgamma_r is a POSIX-2008 XSI / BSD function: glibc declares it under _DEFAULT_SOURCE (the
 * Makefile passes it; defined here too for another build of this file) */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE 1
#endif
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <stdint.h>
#include <sys/mman.h>
#endif

#include "core_impl.h"
#include "dpdo/allocator.h"
#include "dpdo/status.h"
#include "dpdo/version.h"

/* ---- versions --------------------------------------------------------- */
DPDO_API int dpdo_version_number(void)
{
    return DPDO_VERSION_NUMBER;
}
DPDO_API const char *dpdo_version_string(void)
{
    return DPDO_VERSION_STRING;
}
DPDO_API int dpdo_abi_major(void)
{
    return DPDO_ABI_MAJOR;
}

/* ---- status text ------------------------------------------------------ */
static const struct {
    int code;
    const char *name;
    const char *text;
} status_table[] = {
    {DPDO_OK, "DPDO_OK", "success"},
    {DPDO_ROUND, "DPDO_ROUND", "a round ran; more may follow"},
    {DPDO_DONE, "DPDO_DONE", "the run is finished"},
    {DPDO_E_INVAL, "DPDO_E_INVAL", "invalid argument"},
    {DPDO_E_NOMEM, "DPDO_E_NOMEM", "out of memory"},
    {DPDO_E_STATE, "DPDO_E_STATE", "call out of order for the handle's state"},
    {DPDO_E_CALLBACK, "DPDO_E_CALLBACK", "a user callback reported failure"},
    {DPDO_E_NUMERIC, "DPDO_E_NUMERIC", "numerical failure (non-finite value or no convergence)"},
    {DPDO_E_BUDGET, "DPDO_E_BUDGET", "privacy budget would be exceeded"},
    {DPDO_E_VERSION, "DPDO_E_VERSION", "options struct version not understood"},
    {DPDO_E_UNSUPPORTED, "DPDO_E_UNSUPPORTED", "operation not supported"},
    {DPDO_E_IO, "DPDO_E_IO", "input/output error"},
    {DPDO_E_FORMAT, "DPDO_E_FORMAT", "malformed input"},
    {DPDO_E_CANCELED, "DPDO_E_CANCELED", "stopped by the host (progress callback); nothing lost"},
    {DPDO_E_MISUSE, "DPDO_E_MISUSE",
     "the handle is busy with another call (another thread, or a callback of a call on it); "
     "nothing was done"},
};

DPDO_API const char *dpdo_strerror(int status)
{
    for (size_t i = 0; i < sizeof status_table / sizeof status_table[0]; i++)
        if (status_table[i].code == status) return status_table[i].text;
    return "unknown status";
}

DPDO_API const char *dpdo_status_name(int status)
{
    for (size_t i = 0; i < sizeof status_table / sizeof status_table[0]; i++)
        if (status_table[i].code == status) return status_table[i].name;
    return "DPDO_UNKNOWN";
}

/* ---- busy state (core_impl.h) ------------------------------------------ */
/* Never written: only its address is used, one per live thread. */
static _Thread_local const char busy_anchor;

int dpdo__busy_enter(dpdo__busy *b, int mode, char *errmsg, const char *what)
{
    uintptr_t me = (uintptr_t)&busy_anchor, cur = 0;
    if (mode == DPDO__BUSY_SHARED) {
        /* announce, then look for a writer (seq_cst on both sides: a writer and a shared call
         * that race each see the other, and at worst both back off) */
        atomic_fetch_add(&b->shared, 1);
        cur = atomic_load(&b->owner);
        if (cur == 0) return 2;
        atomic_fetch_sub(&b->shared, 1);
        return cur == me ? 0 : DPDO_E_MISUSE;
    }
    if (atomic_compare_exchange_strong(&b->owner, &cur, me)) {
        if (atomic_load(&b->shared) == 0) {
            b->what = what;
            return 1;
        }
        atomic_store(&b->owner, (uintptr_t)0); /* shared calls are inside: give it back */
        return DPDO_E_MISUSE;
    }
    if (cur != me) return DPDO_E_MISUSE; /* another thread owns it, and its message buffer */
    if (mode != DPDO__BUSY_WRITE) return 0;
    return dpdo__err(errmsg, DPDO_E_MISUSE,
                     "%s: called while %s runs on the same handle (from one of its callbacks); "
                     "only read-only calls are allowed there",
                     what, b->what);
}

void dpdo__busy_leave(dpdo__busy *b, int took)
{
    if (took == 1) atomic_store_explicit(&b->owner, (uintptr_t)0, memory_order_release);
    if (took == 2) atomic_fetch_sub_explicit(&b->shared, 1, memory_order_release);
}

/* ---- allocation with a test-only fault hook ---------------------------- */
#ifdef DPDO_FAULT_INJECTION
static _Thread_local long fault_countdown = -1; /* test build only */
static _Thread_local long fault_allocs = 0;
static _Thread_local int fault_fired = 0;

void dpdo__fault_arm(long k)
{
    fault_countdown = k;
    fault_allocs = 0;
    fault_fired = 0;
}
long dpdo__fault_allocs(void)
{
    return fault_allocs;
}
int dpdo__fault_fired(void)
{
    return fault_fired;
}

static int fault_hit(void)
{
    if (fault_countdown < 0) return 0;
    fault_allocs++;
    if (fault_allocs > fault_countdown) {
        fault_fired = 1;
        return 1;
    }
    return 0;
}
#else
void dpdo__fault_arm(long k)
{
    (void)k;
}
long dpdo__fault_allocs(void)
{
    return 0;
}
int dpdo__fault_fired(void)
{
    return 0;
}
#define fault_hit() 0
#endif

/* Large blocks (data sets, arenas: >= 4 MiB) ask Linux for transparent huge pages on their
 * 2 MiB-aligned interior, as NumPy does for its arrays: a round that reads random rows of a
 * large data set then misses the TLB once per 2 MiB instead of once per 4 KiB. A hint only
 * (madvise's result is ignored; other systems: nothing). */
static void *huge_hint(void *p, size_t size)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    enum { HUGE = 2u << 20 };
    if (p && size >= 2 * (size_t)HUGE) {
        uintptr_t b = ((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1);
        uintptr_t end = ((uintptr_t)p + size) & ~(uintptr_t)(HUGE - 1);
        if (end > b) (void)madvise((void *)b, end - b, MADV_HUGEPAGE);
    }
#else
    (void)size;
#endif
    return p;
}

/* ---- the allocator hook (include/dpdo/allocator.h) ---------------------------------------
 * Every block starts HEAD bytes before the pointer handed out, with a head naming the allocator
 * that made it (free_fn NULL: the C library) and where its memory starts (base: differs from
 * the head for 64-byte aligned blocks), so that a block is freed by its own allocator whatever
 * the thread or the allocator current at the free. HEAD keeps the pointer aligned for any object
 * (alignof(max_align_t) <= 16 on the platforms built for) given such an allocation. The current
 * allocator is per thread (thread-local, never process-wide); zero = the C library. */
typedef struct blk_head {
    void (*free_fn)(void *user, void *ptr);
    void *user;
    void *base;
    size_t size; /* bytes asked for (dpdo__realloc copies that many) */
} blk_head;
enum { HEAD = (sizeof(blk_head) + 15) & ~(size_t)15 };
_Static_assert(HEAD % _Alignof(max_align_t) == 0, "block head breaks alignment");

static _Thread_local dpdo_allocator cur_alloc; /* alloc NULL: the C library */

void dpdo__alloc_scope(dpdo_allocator *out)
{
    *out = cur_alloc;
}

void dpdo__alloc_enter(const dpdo_allocator *scope)
{
    cur_alloc = *scope;
}

DPDO_API int dpdo_allocator_set(const dpdo_allocator *a)
{
    if (!a) {
        memset(&cur_alloc, 0, sizeof cur_alloc);
        return DPDO_OK;
    }
    if (a->struct_size < offsetof(dpdo_allocator, user) + sizeof a->user) return DPDO_E_VERSION;
    if (!a->alloc != !a->free) return DPDO_E_INVAL; /* both or neither */
    cur_alloc.struct_size = sizeof cur_alloc;
    cur_alloc.alloc = a->alloc;
    cur_alloc.free = a->free;
    cur_alloc.user = a->alloc ? a->user : NULL;
    return DPDO_OK;
}

DPDO_API int dpdo_allocator_get(dpdo_allocator *out, size_t struct_size)
{
    if (!out) return DPDO_E_INVAL;
    if (struct_size < offsetof(dpdo_allocator, user) + sizeof out->user) return DPDO_E_VERSION;
    out->struct_size = struct_size;
    out->alloc = cur_alloc.alloc;
    out->free = cur_alloc.free;
    out->user = cur_alloc.user;
    return DPDO_OK;
}

/* size + extra bytes from the current allocator (NULL on overflow or failure), the head filled
 * for a block starting at base + off */
static void *raw_alloc(size_t size, size_t extra, int zero, void **base)
{
    if (size > SIZE_MAX - extra) return NULL;
    size_t total = size + extra;
    void *b;
    if (cur_alloc.alloc) {
        b = cur_alloc.alloc(cur_alloc.user, total);
        if (b && zero) memset(b, 0, total);
    } else {
        b = zero ? calloc(total, 1) : malloc(total);
    }
    *base = b;
    return b;
}

static void *head_fill(void *base, char *p, size_t size)
{
    blk_head h = {cur_alloc.alloc ? cur_alloc.free : NULL, cur_alloc.alloc ? cur_alloc.user : NULL,
                  base, size};
    memcpy(p - HEAD, &h, sizeof h);
    return p;
}

static blk_head head_of(const void *p)
{
    blk_head h;
    memcpy(&h, (const char *)p - HEAD, sizeof h);
    return h;
}

static void *alloc_plain(size_t size, int zero)
{
    void *base;
    if (!raw_alloc(size ? size : 1, HEAD, zero, &base)) return NULL;
    return head_fill(base, (char *)base + HEAD, size);
}

void *dpdo__alloc(size_t size)
{
    if (fault_hit()) return NULL;
    return huge_hint(alloc_plain(size, 0), size);
}

void *dpdo__calloc(size_t n, size_t size)
{
    size_t total;
    if (!dpdo__mul_size(n, size, &total)) return NULL;
    if (fault_hit()) return NULL;
    return alloc_plain(total, 1);
}

void *dpdo__alloc_array(size_t n, size_t size)
{
    size_t total;
    if (!dpdo__mul_size(n, size, &total)) return NULL;
    return dpdo__alloc(total);
}

void *dpdo__realloc(void *p, size_t size)
{
    if (fault_hit()) return NULL;
    if (!p) return alloc_plain(size, 0);
    blk_head h = head_of(p);
    if (!h.free_fn && !cur_alloc.alloc && h.base == (char *)p - HEAD) {
        /* a C-library block, and the C library current: grow in place when it can */
        if (size > SIZE_MAX - HEAD) return NULL;
        void *b = realloc(h.base, (size ? size : 1) + HEAD);
        if (!b) return NULL;
        h.base = b;
        h.size = size;
        memcpy(b, &h, sizeof h);
        return (char *)b + HEAD;
    }
    void *q = alloc_plain(size, 0);
    if (!q) return NULL;
    memcpy(q, p, h.size < size ? h.size : size);
    dpdo__free(p);
    return q;
}

void *dpdo__alloc_aligned(size_t size)
{
    if (fault_hit()) return NULL;
    size_t rounded = (size + 63) & ~(size_t)63;
    if (rounded < size) return NULL;
    if (!rounded) rounded = 64;
    void *base;
    if (!raw_alloc(rounded, HEAD + 63, 0, &base)) return NULL;
    uintptr_t at = ((uintptr_t)base + HEAD + 63) & ~(uintptr_t)63;
    return head_fill(base, (char *)at, rounded);
}

void dpdo__free(void *p)
{
    if (!p) return;
    blk_head h = head_of(p);
    if (h.free_fn)
        h.free_fn(h.user, h.base);
    else
        free(h.base);
}
void dpdo__free_aligned(void *p)
{
    dpdo__free(p);
}

char *dpdo__strdup(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = dpdo__alloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* ---- error messages ---------------------------------------------------- */
int dpdo__err(char *buf, int status, const char *fmt, ...)
{
    if (buf) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, DPDO__ERRMSG_LEN, fmt, ap);
        va_end(ap);
    }
    return status;
}

void dpdo__err_clear(char *buf)
{
    if (buf) buf[0] = '\0';
}

/* ---- checks ------------------------------------------------------------- */
/* Blocks are tested branch-free on the bit patterns (exponent all ones <=> Inf or NaN: adding 1 at
 * the exponent's lowest bit then carries into the sign bit); only a flagged block is scanned
 * element by element, so every variant returns the same index. The portable loop (blocks of 16)
 * vectorises to SSE2; on x86-64 an AVX2 variant (blocks of 32, four 4-lane accumulators) is chosen
 * at run time: these scans sit on every round's hot path (docs/performance.md). */
static size_t first_nonfinite_tail(const double *x, size_t i, size_t n)
{
    for (; i < n; i++)
        if (!isfinite(x[i])) return i;
    return n;
}

static size_t first_nonfinite_portable(const double *x, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        uint64_t acc = 0;
        for (int k = 0; k < 16; k++)
            acc |= dpdo__nf_bits(x[i + k]);
        if (acc >> 63) break;
    }
    return first_nonfinite_tail(x, i, n);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
typedef int64_t nf_v4i __attribute__((vector_size(32), aligned(8), may_alias));
__attribute__((target("avx2"))) static size_t first_nonfinite_avx2(const double *x, size_t n)
{
    const nf_v4i EXP = {0x7ff0000000000000ll, 0x7ff0000000000000ll, 0x7ff0000000000000ll,
                        0x7ff0000000000000ll};
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const nf_v4i *v = (const nf_v4i *)(const void *)(x + i);
        /* (b & EXP) == EXP per lane, ORed over 8 vectors */
        nf_v4i a0 = (v[0] & EXP) == EXP, a1 = (v[1] & EXP) == EXP, a2 = (v[2] & EXP) == EXP,
               a3 = (v[3] & EXP) == EXP;
        a0 |= (v[4] & EXP) == EXP, a1 |= (v[5] & EXP) == EXP, a2 |= (v[6] & EXP) == EXP,
            a3 |= (v[7] & EXP) == EXP;
        nf_v4i a = (a0 | a1) | (a2 | a3);
        if (a[0] | a[1] | a[2] | a[3]) break;
    }
    return first_nonfinite_tail(x, i, n);
}
#endif

size_t dpdo__first_nonfinite(const double *x, size_t n)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    /* __builtin_cpu_supports reads libgcc's CPU model (filled before main): no state of ours */
    if (n >= 32 && __builtin_cpu_supports("avx2")) return first_nonfinite_avx2(x, n);
#endif
    return first_nonfinite_portable(x, n);
}

int dpdo__all_finite(const double *x, size_t n)
{
    return dpdo__first_nonfinite(x, n) == n;
}

/* ---- log-gamma ---------------------------------------------------------------------------- */

#if !defined(DPDO_NO_LGAMMA_R) &&                                                                  \
    (defined(DPDO_HAVE_LGAMMA_R) || defined(__GLIBC__) || defined(__APPLE__) ||                    \
     defined(__FreeBSD__) || defined(__NetBSD__) || defined(__OpenBSD__) ||                        \
     defined(__DragonFly__))
#define DPDO__LGAMMA_R 1
#endif

/* log(x) - x + 0.5 log(2 pi) + Stirling's series, x >= 170: the 1/(1680 x^7) term left out
 * is below 2e-19 */
static double lgamma_stirling(double x)
{
    double r = 1.0 / x, r2 = r * r;
    double series = r * (1.0 / 12 - r2 * (1.0 / 360 - r2 * (1.0 / 1260)));
    return (x - 0.5) * log(x) - x + 0.91893853320467274178 + series;
}

double dpdo__lgamma_portable(double x)
{
    if (isnan(x)) return x;
    if (isinf(x)) return INFINITY;
    if (x <= 0 && x == floor(x)) return INFINITY; /* a pole */
    double ax = fabs(x);
    if (ax < 1e-300) return -log(ax); /* Gamma(x) = 1/x - euler + ... */
    if (ax <= 170.0) return log(fabs(tgamma(x)));
    if (x > 0) return lgamma_stirling(x);
    /* reflection: |Gamma(x) Gamma(1 - x)| = pi / |sin(pi x)|, sin(pi x) from x's fraction */
    double f = ax - floor(ax); /* exact; in (0, 1) */
    double s = sin(3.14159265358979323846 * (f <= 0.5 ? f : 1.0 - f));
    return 1.14472988584940017414 - log(s) - lgamma_stirling(1.0 - x);
}

double dpdo__lgamma(double x)
{
#ifdef DPDO__LGAMMA_R
    int sign;
    return lgamma_r(x, &sign);
#else
    return dpdo__lgamma_portable(x);
#endif
}

int dpdo__mul_size(size_t a, size_t b, size_t *out)
{
    if (a && b > SIZE_MAX / a) return 0;
    *out = a * b;
    return 1;
}

/* ---- built-in type tables ---------------------------------------------------------------------
 */

typedef struct dpdo__type_head {
    size_t struct_size;
    const char *name;
} dpdo__type_head;

int dpdo__table_index(const void *table, size_t size, int n, const void *t)
{
    for (int k = 0; k < n; k++)
        if (t == (const char *)table + (size_t)k * size) return k;
    return -1;
}

const void *dpdo__table_find(const void *table, size_t size, int n, const char *name)
{
    if (!name) return NULL;
    for (int k = 0; k < n; k++) {
        const char *entry = (const char *)table + (size_t)k * size, *nm;
        memcpy(&nm, entry + offsetof(dpdo__type_head, name), sizeof nm);
        if (nm && strcmp(nm, name) == 0) return entry;
    }
    return NULL;
}

const void *dpdo__table_next(const void *table, size_t size, int n, const void *prev)
{
    if (!prev) return table;
    int k = dpdo__table_index(table, size, n, prev);
    return k < 0 || k + 1 >= n ? NULL : (const char *)table + (size_t)(k + 1) * size;
}
