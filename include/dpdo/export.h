/* SPDX-License-Identifier: BSD-3-Clause */
/* DPDO_API marks every exported function. The library is compiled with
 * -fvisibility=hidden, so only what carries DPDO_API (and is listed in
 * lib/libdpdo.map) is visible in libdpdo.so. */
#ifndef DPDO_EXPORT_H
#define DPDO_EXPORT_H

#if defined(DPDO_STATIC)
#define DPDO_API
#elif defined(_WIN32)
#if defined(DPDO_BUILDING)
#define DPDO_API __declspec(dllexport)
#else
#define DPDO_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define DPDO_API __attribute__((visibility("default")))
#else
#define DPDO_API
#endif

#if defined(__GNUC__) || defined(__clang__)
#define DPDO_DEPRECATED(msg) __attribute__((deprecated(msg)))
#else
#define DPDO_DEPRECATED(msg)
#endif

#endif /* DPDO_EXPORT_H */
