/* SPDX-License-Identifier: BSD-3-Clause */
/* The allocator hook (docs/allocator.md): the memory libdpdo allocates for its handles, data
 * sets, arenas and scratch can come from the host's functions instead of the C library's
 * malloc/free, in the spirit of zstd's ZSTD_customMem and SQLite's SQLITE_CONFIG_MALLOC, but
 * without process-wide state: the allocator is chosen per thread, and every block remembers the
 * allocator that made it. */
#ifndef DPDO_ALLOCATOR_H
#define DPDO_ALLOCATOR_H

#include "export.h"
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== ADVANCED ZONE: the allocator hook ==== */

/* A host allocator (versioned: set struct_size = sizeof(dpdo_allocator); later releases may
 * append fields). alloc(user, size) returns size bytes aligned for any object (as malloc does),
 * or NULL (the library call then fails with DPDO_E_NOMEM; nothing leaks); size is never 0.
 * free(user, ptr) releases a block alloc returned; ptr is never NULL. Both NULL: the C library's
 * malloc/free. The library adds a small head (32 bytes on 64-bit systems; 64-byte aligned
 * blocks up to 95) to each block it asks for. */
typedef struct dpdo_allocator {
    size_t struct_size;
    void *(*alloc)(void *user, size_t size);
    void (*free)(void *user, void *ptr);
    void *user;
} dpdo_allocator;

/* Make *alloc (copied) the calling thread's current allocator; NULL, or alloc and free both
 * NULL: the C library (the default of every thread). From then on every block libdpdo
 * allocates in a call made on this thread comes from it, including the blocks the library's own
 * worker threads allocate for that call (the threads of dpdo_algorithm's pool take the calling
 * thread's allocator for each round; a host pool given to dpdo_algorithm_set_pool runs tasks on
 * the host's threads, whose own current allocator applies). Each block is freed by the allocator
 * that made it, whichever thread frees it and whichever allocator is current then: a handle
 * created under one allocator may be destroyed under another. So the functions and `user` must
 * stay valid until every block allocated through them is freed (destroy the handles created or
 * run under it first), and must be thread-safe when handles are used from several threads or a
 * run uses worker threads (options.num_threads > 1).
 * Not covered (they allocate on their own): the libraries libdpdo calls (BLIS, LAPACK, FFTW,
 * OpenSSL, libsodium, MPFR, zlib), the C library itself (fopen's FILE, thread stacks), and
 * libdpdo_mpi (lib/mpi uses malloc). Returns DPDO_OK, DPDO_E_INVAL (exactly one of alloc and
 * free NULL), DPDO_E_VERSION (struct_size too small); the current allocator is unchanged on
 * error. Thread-safety: affects the calling thread only; thread-safe. Since 0.3. */
DPDO_API int dpdo_allocator_set(const dpdo_allocator *alloc);

/* Copy the calling thread's current allocator into *out (alloc and free NULL: the C library)
 * and set out->struct_size = struct_size (pass sizeof(dpdo_allocator)), e.g. to restore it after
 * a scope. Returns DPDO_OK, DPDO_E_INVAL (out NULL), DPDO_E_VERSION (struct_size too small).
 * Thread-safe. Since 0.3. */
DPDO_API int dpdo_allocator_get(dpdo_allocator *out, size_t struct_size);

#ifdef __cplusplus
}
#endif
#endif /* DPDO_ALLOCATOR_H */
