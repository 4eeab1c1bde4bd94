/* SPDX-License-Identifier: BSD-3-Clause */
/* Release and ABI numbers. The Makefile parses this file, so the numbers live
 * only here. DPDO_ABI_MAJOR is the SONAME number (libdpdo.so.N); it changes on
 * an incompatible ABI change and is independent of the release number. */
#ifndef DPDO_VERSION_H
#define DPDO_VERSION_H

#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== CORE ZONE: versions ==== */

#define DPDO_VERSION_MAJOR 0
#define DPDO_VERSION_MINOR 3
#define DPDO_VERSION_PATCH 0
#define DPDO_ABI_MAJOR 1

#define DPDO_VERSION_NUMBER                                                                        \
    (DPDO_VERSION_MAJOR * 10000 + DPDO_VERSION_MINOR * 100 + DPDO_VERSION_PATCH)
#define DPDO_STRINGIFY_(x) #x
#define DPDO_STRINGIFY(x) DPDO_STRINGIFY_(x)
#define DPDO_VERSION_STRING                                                                        \
    DPDO_STRINGIFY(DPDO_VERSION_MAJOR)                                                             \
    "." DPDO_STRINGIFY(DPDO_VERSION_MINOR) "." DPDO_STRINGIFY(DPDO_VERSION_PATCH)

/* Runtime twins of the macros above, for bindings that check at load time
 * (a program compiled against one header may run with another library).
 * Thread-safe, never fail. Since 0.1. */
DPDO_API int dpdo_version_number(void);         /* e.g. 200 for 0.2.0 */
DPDO_API const char *dpdo_version_string(void); /* static "M.m.p", never NULL */
DPDO_API int dpdo_abi_major(void);              /* the N of libdpdo.so.N */

#ifdef __cplusplus
}
#endif
#endif /* DPDO_VERSION_H */
