/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal core helpers shared by every layer: allocation (with a test-only
 * fault hook), per-handle error messages, options-struct versioning and small
 * checks. Never installed. Names are dpdo__* and carry no DPDO_API, so they are
 * hidden in libdpdo.so. */
#ifndef DPDO_CORE_IMPL_H
#define DPDO_CORE_IMPL_H

#include "dpdo/allocator.h"
#include "dpdo/status.h"
#include <stddef.h>
#include <stdint.h>

#define DPDO__ERRMSG_LEN 256

/* Internal invariants (the privacy ones above all; docs/architecture.md, invariants).
 * DPDO__ASSERT(cond) is an int expression: DPDO_OK when cond holds, DPDO_E_STATE when it does not.
 * Active in debug builds
 * (-DDPDO_DEBUG) and in the test build (DPDO_FAULT_INJECTION); elsewhere it is DPDO_OK and cond
 * is not evaluated. It never aborts, prints or records anything global: the caller fails the
 * operation with its own message (the engine's DPDO__ENG_ASSERT names the condition, the file
 * and the line). Invariants whose failure would under-report privacy are also enforced by plain
 * code in every build; the assertions are a second line that tests can reach. */
#if defined(DPDO_DEBUG) || defined(DPDO_FAULT_INJECTION)
#define DPDO__ASSERT_ON 1
#define DPDO__ASSERT(cond) ((cond) ? DPDO_OK : DPDO_E_STATE)
#else
#define DPDO__ASSERT_ON 0
#define DPDO__ASSERT(cond) ((void)sizeof(cond), DPDO_OK)
#endif

#if defined(__GNUC__) || defined(__clang__)
#define DPDO__PRINTF(a, b) __attribute__((format(printf, a, b)))
#define DPDO__UNUSED __attribute__((unused))
#else
#define DPDO__PRINTF(a, b)
#define DPDO__UNUSED
#endif

/* ---- allocation -------------------------------------------------------
 * All library memory goes through these. dpdo__alloc/calloc return NULL for
 * size 0 requests only when the size is 0 (callers must not rely on that).
 * Overflow of n*size returns NULL. */
void *dpdo__alloc(size_t size);
void *dpdo__calloc(size_t n, size_t size);      /* zeroed, overflow-checked */
void *dpdo__alloc_array(size_t n, size_t size); /* not zeroed, overflow-checked */
void *dpdo__realloc(void *p, size_t size);      /* like realloc; p kept on failure */
void *dpdo__alloc_aligned(size_t size);         /* 64-byte aligned, free with dpdo__free_aligned */
void dpdo__free(void *p);
void dpdo__free_aligned(void *p);
char *dpdo__strdup(const char *s);
/* The allocator hook (dpdo_allocator_set): every block above comes from the calling thread's
 * current allocator and carries a head naming it, so dpdo__free/_free_aligned (the same
 * function) give it back to that allocator from any thread. _scope copies this thread's current
 * allocator out; _enter makes `scope` current on this thread (the thread pool hands a call's
 * allocator to its workers: pool.c). */
void dpdo__alloc_scope(dpdo_allocator *out);
void dpdo__alloc_enter(const dpdo_allocator *scope);

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
/* The one text every dpdo_*_errmsg returns for a NULL handle, and for a handle
 * that no longer carries its magic: "<function>: <arg> is NULL" with the
 * parameter name of the header, e.g. "dpdo_rng_errmsg: rng is NULL". Static. */
#define DPDO__NULL_TEXT(fn, arg) fn ": " arg " is NULL"
#define DPDO__DEAD_TEXT(fn, arg) fn ": " arg " is a destroyed handle"
void dpdo__err_clear(char *buf);

/* ---- options structs: lib/core/options_impl.h (header-only, so that libdpdo_mpi shares it) */
#include "options_impl.h"

/* ---- checks -----------------------------------------------------------*/
int dpdo__all_finite(const double *x, size_t n);         /* 1 if no NaN/Inf */
size_t dpdo__first_nonfinite(const double *x, size_t n); /* index or n */
/* out = a*b; returns 0 on overflow. */
int dpdo__mul_size(size_t a, size_t b, size_t *out);

/* ---- math --------------------------------------------------------------
 * log|Gamma(x)| that touches no global state. C's lgamma writes the sign of Gamma(x) to the
 * global `signgam` (a data race when two threads call it); dpdo__lgamma is lgamma_r where the C
 * library has it (glibc, the BSDs, macOS; -DDPDO_HAVE_LGAMMA_R for another one), which gives
 * the same bits as lgamma, else dpdo__lgamma_portable. Thread-safe. */
double dpdo__lgamma(double x);
/* The portable log|Gamma(x)|: log|tgamma(x)| where tgamma is finite (|x| <= 170), Stirling's
 * series above, Euler's reflection below -170, +inf at the poles (0, -1, -2, ...). Error
 * <= ~1e-15 (1 + |result|) (tests/test_independent.c compares it with lgamma_r). */
double dpdo__lgamma_portable(double x);

/* Built-in type tables: n structs of `size` bytes, each starting with `size_t struct_size;
 * const char *name;` (the public type objects). The index of t in the table (-1 if t is not
 * an entry), the entry called `name` (NULL if none or name is NULL), the entry after prev (the
 * first for NULL; NULL after the last or for a pointer outside the table). */
int dpdo__table_index(const void *table, size_t size, int n, const void *t);
const void *dpdo__table_find(const void *table, size_t size, int n, const char *name);
const void *dpdo__table_next(const void *table, size_t size, int n, const void *prev);

/* ---- borrowed handles ---------------------------------------------------
 * The one destroy rule (docs/abi.md, "Destroying a borrowed handle"): a
 * handle that other handles borrow counts them (`borrowers`); destroying it
 * while borrowed is DEFERRED: the handle is dead for the caller at once (its
 * magic is cleared), and its memory (and a user type's release callback) goes
 * when the last borrower lets go (`doomed` marks this). Applied to datasets
 * (shards), shards and losses (nodes), networks, accountants, solvers,
 * compressors and policies (algorithms), ledgers (accountants), nodes and regularizers (reference
 * solvers, algorithms). */

/* ---- handle magic ------------------------------------------------------
 * Every public handle struct starts with `uint32_t magic`, set to its type's
 * DPDO__MAGIC_* value right after allocation and cleared by *_destroy just
 * before the block is freed (a volatile store, so that the compiler cannot
 * drop it as a dead store before free). *_destroy and a few entry points
 * (errmsg accessors, dpdo_algorithm_run/step) test DPDO__LIVE first and
 * ignore a handle that does not carry its magic.
 *
 * What this guarantees, and what it cannot (no global state in lib/, so no
 * registry of live handles):
 *  - a second destroy of a handle whose memory has not been handed out again
 *    by malloc is ignored (the freed block still holds 0 or allocator
 *    bookkeeping, never the magic): the common double-destroy bug no longer
 *    corrupts the heap or aborts in glibc;
 *  - in the default build the check READS the freed block (formally undefined
 *    behaviour; with glibc the small handle blocks stay mapped, so the read is
 *    harmless). Under AddressSanitizer the freed block is recognised from
 *    its poisoning (__asan_address_is_poisoned) without reading it, so ASan
 *    builds stay clean; valgrind reports the read (tests skip it there);
 *  - if malloc has reused the block for ANOTHER handle of the same type, the
 *    magic is valid again and the second destroy frees that other handle:
 *    undetectable without a registry. Destroy each handle once.
 * Values are distinct per type, so passing a handle of the wrong type to
 * destroy is ignored too. */
enum {
    DPDO__MAGIC_DEAD = 0,
    DPDO__MAGIC_DATASET = 0x64704401,
    DPDO__MAGIC_SHARD = 0x64704402,
    DPDO__MAGIC_TRANSFORM = 0x64704403,
    DPDO__MAGIC_LOSS = 0x64704404,
    DPDO__MAGIC_REGULARIZER = 0x64704405,
    DPDO__MAGIC_NODE = 0x64704406,
    DPDO__MAGIC_POLICY = 0x64704407,
    DPDO__MAGIC_REFERENCE = 0x64704408,
    DPDO__MAGIC_NETWORK = 0x64704409,
    DPDO__MAGIC_COMPRESSOR = 0x6470440a,
    DPDO__MAGIC_SAMPLING = 0x6470440b,
    DPDO__MAGIC_EVENT = 0x6470440c,
    DPDO__MAGIC_LEDGER = 0x6470440d,
    DPDO__MAGIC_ACCOUNTANT = 0x6470440e,
    DPDO__MAGIC_PAPER = 0x6470440f,
    DPDO__MAGIC_SOLVER = 0x64704410,
    DPDO__MAGIC_RNG = 0x64704411,
    DPDO__MAGIC_ALGORITHM = 0x64704412,
    DPDO__MAGIC_MODEL = 0x64704413
};

#if defined(__SANITIZE_ADDRESS__)
#define DPDO__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DPDO__ASAN 1
#endif
#endif
#ifdef DPDO__ASAN
int __asan_address_is_poisoned(void const volatile *addr);
#endif

/* Forces inlining: a small helper called from a function compiled for another target (AVX2,
 * AVX-512) is then compiled for that target too, instead of staying a baseline call. */
#if defined(__GNUC__) || defined(__clang__)
#define DPDO__ALWAYS_INLINE __attribute__((always_inline))
#else
#define DPDO__ALWAYS_INLINE
#endif

/* The sign bit of the result is set iff v is Inf or NaN: an exponent of all ones plus 1 at its
 * lowest bit carries into the sign bit. ORed over many values and tested once (>> 63):
 * branch-free, so that a loop of it vectorises. */
static inline DPDO__ALWAYS_INLINE uint64_t dpdo__nf_bits(double v)
{
    uint64_t b;
    __builtin_memcpy(&b, &v, sizeof b);
    return (b & 0x7ff0000000000000ull) + 0x0010000000000000ull;
}

/* A cache hint for len bytes at p (into L2: a few tens of KB issued ahead of work that does
 * not need them yet would otherwise be evicted from L1 by that work). No effect on results. */
static inline void dpdo__prefetch(const void *p, size_t len)
{
#if defined(__GNUC__) || defined(__clang__)
    const char *c = (const char *)p;
    for (size_t o = 0; o < len; o += 64)
        __builtin_prefetch(c + o, 0, 2);
#else
    (void)p, (void)len;
#endif
}

static inline int dpdo__magic_live(const volatile uint32_t *magic, uint32_t want)
{
#ifdef DPDO__ASAN
    if (__asan_address_is_poisoned(magic)) return 0; /* freed: do not read it */
#endif
    return *magic == want;
}
/* 1 if handle h (not NULL) carries magic M; DPDO__KILL(h) clears it. */
#define DPDO__LIVE(h, M) dpdo__magic_live(&(h)->magic, (uint32_t)(M))
#define DPDO__KILL(h) (*(volatile uint32_t *)&(h)->magic = (uint32_t)DPDO__MAGIC_DEAD)

/* ---- durable files (file.c) --------------------------------------------------------------
 * dpdo__file_replace: write len bytes to a fresh temporary file beside path (O_EXCL, mode 0666
 * less the umask), fsync it, rename it over path, fsync the directory: path then holds the old
 * or the new content after a crash, a kill or a full disk, and the new one durably once the
 * call returned DPDO_OK. On failure the temporary file is removed and path is untouched.
 * dpdo__file_write_synced (O_EXCL if excl, else truncate) and dpdo__file_rename_synced are
 * the two halves, for protocols that rename later (multi-process checkpoints). Errors:
 * DPDO_E_IO / DPDO_E_NOMEM with "<what>: ..." in err. dpdo__fault_write_arm(k) (test build
 * only; a no-op otherwise): this thread's writes through these calls stop with ENOSPC after k
 * more bytes (k < 0: no limit) -- a full disk. */
int dpdo__file_replace(const char *path, const void *buf, size_t len, char *err, const char *what);
int dpdo__file_write_synced(const char *path, const void *buf, size_t len, int excl, char *err,
                            const char *what);
int dpdo__file_rename_synced(const char *from, const char *to, char *err, const char *what);
int dpdo__file_sync_dir(const char *path, char *err, const char *what);
void dpdo__fault_write_arm(long long bytes);
/* The key of a keyed BLAKE2b MAC (ledger, model files): key[len], 16 <= len <= 64, copied into
 * dst[64]; NULL with len 0 wipes it. DPDO_OK, DPDO_E_INVAL, DPDO_E_UNSUPPORTED ("set_key: ..."
 * in err). */
int dpdo__mac_key_set(unsigned char *dst, size_t *dst_len, const unsigned char *key, size_t len,
                      char *err);

/* ---- busy state: misuse detection (docs/abi.md "Misuse detection") -----
 * A handle that can be driven by a call (algorithm, model, ledger) embeds a
 * dpdo__busy. A public call on it takes it with one compare-exchange
 * (dpdo__busy_enter) and gives it back with one store (dpdo__busy_leave), so
 * a second call at the same time from another thread, or a mutating call made
 * from inside a callback of a call on the handle, gets DPDO_E_MISUSE instead
 * of racing on the state. A read-only call nested in a call of the SAME
 * thread (a getter inside a progress callback) goes through without taking
 * it: the outer call is paused in its callback and the state is consistent.
 * The owner is identified by the address of a thread-local object of
 * core.c (distinct for each live thread; never written). */
typedef struct dpdo__busy {
    _Atomic(uintptr_t) owner; /* 0 = idle, else the token of the thread inside a call */
    _Atomic(int32_t) shared;  /* calls inside in DPDO__BUSY_SHARED mode */
    const char *what;         /* the owner's call (read only by the owner's own thread) */
} dpdo__busy;

/* modes of dpdo__busy_enter: a mutating call; a read-only call (exclusive too, but allowed
 * nested in a call of the same thread); a read-only call that other such calls may run beside
 * (the model's predict and accessors, documented concurrent-safe since 0.2) */
enum { DPDO__BUSY_READ = 0, DPDO__BUSY_WRITE = 1, DPDO__BUSY_SHARED = 2 };

/* Take b for the public call `what` (e.g. "dpdo_algorithm_step") in `mode` (DPDO__BUSY_*).
 * Returns 1 or 2 (taken: pass it to dpdo__busy_leave), 0 (a read-only call nested in a call of
 * this thread: go on, nothing to give back) or DPDO_E_MISUSE. The message is written into errmsg
 * only when the owner is this thread (a callback); a call from another thread must not touch the
 * buffer that the owner's call writes, so it gets the status alone (dpdo_strerror(DPDO_E_MISUSE)
 * says what it means). */
int dpdo__busy_enter(dpdo__busy *b, int mode, char *errmsg, const char *what);
void dpdo__busy_leave(dpdo__busy *b, int took);

/* The body of a guarded public function that returns a status: h is the handle (NULL or
 * destroyed: `call` runs unguarded and reports that), M its magic, `mut` the DPDO__BUSY_* mode.
 * `call` is the unguarded implementation, evaluated at most once. */
#define DPDO__GUARDED(h, M, mut, what, call)                                                       \
    do {                                                                                           \
        int took_ = 0;                                                                             \
        if ((h) && DPDO__LIVE(h, M) &&                                                             \
            (took_ = dpdo__busy_enter((dpdo__busy *)&(h)->busy, (mut), (char *)(h)->errmsg,        \
                                      (what))) < 0)                                                \
            return took_;                                                                          \
        int rc_ = (call);                                                                          \
        if (took_) dpdo__busy_leave((dpdo__busy *)&(h)->busy, took_);                              \
        return rc_;                                                                                \
    } while (0)

#endif /* DPDO_CORE_IMPL_H */
