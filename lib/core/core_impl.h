/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal core helpers shared by every layer: allocation (with a test-only
 * fault hook), per-handle error messages, options-struct versioning and small
 * checks. Never installed. Names are dpdo__* and carry no DPDO_API, so they are
 * hidden in libdpdo.so. */
#ifndef DPDO_CORE_IMPL_H
#define DPDO_CORE_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include "dpdo/status.h"

#define DPDO__ERRMSG_LEN 256

#if defined(__GNUC__) || defined(__clang__)
#  define DPDO__PRINTF(a, b) __attribute__((format(printf, a, b)))
#  define DPDO__UNUSED __attribute__((unused))
#else
#  define DPDO__PRINTF(a, b)
#  define DPDO__UNUSED
#endif

/* ---- allocation -------------------------------------------------------
 * All library memory goes through these. dpdo__alloc/calloc return NULL for
 * size 0 requests only when the size is 0 (callers must not rely on that).
 * Overflow of n*size returns NULL. */
void *dpdo__alloc(size_t size);
void *dpdo__calloc(size_t n, size_t size);       /* zeroed, overflow-checked */
void *dpdo__alloc_array(size_t n, size_t size);  /* not zeroed, overflow-checked */
void *dpdo__realloc(void *p, size_t size);       /* like realloc; p kept on failure */
void *dpdo__alloc_aligned(size_t size);          /* 64-byte aligned, free with dpdo__free_aligned */
void dpdo__free(void *p);
void dpdo__free_aligned(void *p);
char *dpdo__strdup(const char *s);

/* Test-only fault injection. In the test build (compiled with
 * -DDPDO_FAULT_INJECTION) allocation number k (0-based, counted from the call)
 * and all later ones fail while the hook is armed; k < 0 disarms it. In the
 * release build these are no-ops and no global state exists. The counter is
 * thread-local so parallel tests in one process do not interfere. */
void dpdo__fault_arm(long k);
long dpdo__fault_allocs(void); /* allocations attempted since arming */
int dpdo__fault_fired(void);   /* 1 if an allocation was failed since arming */

/* ---- error messages ---------------------------------------------------
 * Writes a printf-style message into buf (DPDO__ERRMSG_LEN bytes, may be
 * NULL) and returns status unchanged, so code can write
 *     return dpdo__err(h->errmsg, DPDO_E_INVAL, "row %lld: ...", r);   */
int dpdo__err(char *buf, int status, const char *fmt, ...) DPDO__PRINTF(3, 4);
void dpdo__err_clear(char *buf);

/* ---- options structs --------------------------------------------------
 * Copy a caller's versioned options struct (first member size_t struct_size)
 * into dst, whose defaults are already filled and whose own size is dst_size.
 * Reads only what the caller's struct_size covers; bytes beyond dst_size must
 * be zero, else DPDO_E_VERSION. struct_size smaller than sizeof(size_t) is
 * DPDO_E_VERSION. src NULL leaves the defaults. */
int dpdo__opts_copy(void *dst, size_t dst_size, const void *src, char *errbuf);

/* ---- checks -----------------------------------------------------------*/
int dpdo__all_finite(const double *x, size_t n); /* 1 if no NaN/Inf */
size_t dpdo__first_nonfinite(const double *x, size_t n); /* index or n */
/* out = a*b; returns 0 on overflow. */
int dpdo__mul_size(size_t a, size_t b, size_t *out);

/* Built-in type tables: n structs of `size` bytes, each starting with `size_t struct_size;
 * const char *name;` (the public type objects). The index of t in the table (-1 if t is not
 * an entry), the entry called `name` (NULL if none or name is NULL), the entry after prev (the
 * first for NULL; NULL after the last or for a pointer outside the table). */
int dpdo__table_index(const void *table, size_t size, int n, const void *t);
const void *dpdo__table_find(const void *table, size_t size, int n, const char *name);
const void *dpdo__table_next(const void *table, size_t size, int n, const void *prev);

#endif /* DPDO_CORE_IMPL_H */
