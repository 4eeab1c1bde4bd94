/* SPDX-License-Identifier: BSD-3-Clause */
/* The one options-struct versioning rule, header-only so that libdpdo and
 * libdpdo_mpi (a separate library without access to libdpdo's hidden
 * symbols) apply the same code. Never installed. */
#ifndef DPDO_OPTIONS_IMPL_H
#define DPDO_OPTIONS_IMPL_H

#include "dpdo/status.h"
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* ---- options structs --------------------------------------------------
 * The one versioning rule of every public options struct (docs/abi.md,
 * "Options structs"). Such a struct starts with `size_t struct_size` (the
 * caller's sizeof) and may end with `reserved` words.
 *
 * dpdo__options_init: the body of every dpdo_*_options_init. Writes the
 * library's defaults (lib_size bytes at `defaults`) into the caller's struct
 * of caller_size bytes: the first min(caller_size, lib_size) bytes, zero
 * beyond lib_size (fields of a newer header this library does not know keep
 * their zero = default), and struct_size = caller_size. Returns DPDO_OK,
 * DPDO_E_INVAL (o NULL), DPDO_E_VERSION (caller_size < sizeof(size_t)).
 *
 * dpdo__options_accept: the entry of every function taking an options struct.
 * dst holds the defaults (lib_size bytes); src (may be NULL: defaults) is the
 * caller's struct. An older, smaller struct is accepted: the fields it does
 * not cover keep their defaults. A larger one is accepted only if every byte
 * beyond the library's known fields is zero. `known` is the size of the part
 * the library understands: lib_size, or the offset of the struct's
 * `reserved` words, which must be zero as well (a non-zero reserved word is a
 * field of a newer release). Anything else is DPDO_E_VERSION with a message
 * in err (may be NULL) naming the struct `type` and both sizes. On success
 * dst->struct_size = lib_size. */
static inline int dpdo__options_init(void *o, size_t caller_size, const void *defaults,
                                     size_t lib_size)
{
    if (!o) return DPDO_E_INVAL;
    if (caller_size < sizeof(size_t)) return DPDO_E_VERSION;
    memcpy(o, defaults, caller_size < lib_size ? caller_size : lib_size);
    if (caller_size > lib_size) memset((char *)o + lib_size, 0, caller_size - lib_size);
    memcpy(o, &caller_size, sizeof caller_size);
    return DPDO_OK;
}

/* err: NULL or a buffer of DPDO__OPTIONS_ERRLEN (256) bytes */
static inline int dpdo__options_accept(void *dst, size_t lib_size, size_t known, const void *src,
                                       const char *type, char *err)
{
    if (!src) return DPDO_OK;
    size_t caller_size;
    memcpy(&caller_size, src, sizeof caller_size);
    if (caller_size < sizeof(size_t)) {
        if (err)
            snprintf(err, 256,
                     "%s: struct_size = %zu is smaller than a size_t (call %s_init first); "
                     "this library's struct has %zu bytes",
                     type, caller_size, type, lib_size);
        return DPDO_E_VERSION;
    }
    if (known > lib_size) known = lib_size;
    const unsigned char *s = (const unsigned char *)src;
    for (size_t i = known; i < caller_size; i++)
        if (s[i]) {
            if (err)
                snprintf(err, 256,
                         "%s: byte %zu of the caller's %zu-byte struct is not zero, but this "
                         "library (%zu bytes) knows only the first %zu (the unknown tail holds a "
                         "field of a newer libdpdo, or a reserved word is set)",
                         type, i, caller_size, lib_size, known);
            return DPDO_E_VERSION;
        }
    size_t n = caller_size < known ? caller_size : known;
    memcpy((char *)dst + sizeof(size_t), s + sizeof(size_t), n - sizeof(size_t));
    memcpy(dst, &lib_size, sizeof lib_size);
    return DPDO_OK;
}

/* The pre-0.2 name: dpdo__options_accept with known = dst_size and a generic name. */
static inline int dpdo__opts_copy(void *dst, size_t dst_size, const void *src, char *errbuf)
{
    return dpdo__options_accept(dst, dst_size, dst_size, src, "options", errbuf);
}

#endif /* DPDO_OPTIONS_IMPL_H */
