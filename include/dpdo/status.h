/* SPDX-License-Identifier: BSD-3-Clause */
/* Status codes. Values are pinned forever: new codes are appended, none is
 * renumbered. Success is >= 0; DPDO_ROUND and DPDO_DONE are returned only by
 * stepping calls. Every fallible function returns one of these as an int. */
#ifndef DPDO_STATUS_H
#define DPDO_STATUS_H

#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== CORE ZONE: status codes and their text ==== */

enum {
    DPDO_OK = 0,             /* success */
    DPDO_ROUND = 1,          /* step(): one round ran, more may follow */
    DPDO_DONE = 2,           /* step(): the run is over (see the stop reason) */
    DPDO_E_INVAL = -1,       /* invalid argument (NULL, NaN, wrong size, out of range) */
    DPDO_E_NOMEM = -2,       /* memory allocation failed */
    DPDO_E_STATE = -3,       /* call out of order (e.g. step after DONE) */
    DPDO_E_CALLBACK = -4,    /* a user callback returned non-zero */
    DPDO_E_NUMERIC = -5,     /* a non-finite value appeared, or no convergence */
    DPDO_E_BUDGET = -6,      /* privacy budget would be exceeded */
    DPDO_E_VERSION = -7,     /* options struct size/tail not understood */
    DPDO_E_UNSUPPORTED = -8, /* valid request this build or type cannot do */
    DPDO_E_IO = -9,          /* a file could not be opened or read */
    DPDO_E_FORMAT = -10,     /* malformed input file (message names file, line, column) */
    DPDO_E_CANCELED = -11,   /* the host asked to stop (progress callback). Since 0.2. */
    DPDO_E_MISUSE = -12      /* the handle is busy: a call on it is running in another thread,
                                or this call came from inside a callback of a call on it
                                (docs/abi.md "Misuse detection"). Nothing was done. Since 0.3. */
};

/* Static English text for a status code; "unknown status" for codes this
 * library does not know. Never NULL, never freed. Thread-safe. Since 0.1. */
DPDO_API const char *dpdo_strerror(int status);

/* The symbolic name of a status code ("DPDO_E_INVAL"), or "DPDO_UNKNOWN".
 * Never NULL, static. Thread-safe. Since 0.1. */
DPDO_API const char *dpdo_status_name(int status);

#ifdef __cplusplus
}
#endif
#endif /* DPDO_STATUS_H */
