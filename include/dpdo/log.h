/* SPDX-License-Identifier: BSD-3-Clause */
/* The log callback of an algorithm handle (docs/logging.md). The library never prints: a host
 * that wants to see what a run decided and warned about registers a callback, in the style of
 * LIBLINEAR's set_print_string_function and SQLite's SQLITE_CONFIG_LOG, but per handle (no
 * process-wide state). Without one (the default) the library is silent, as before 0.3; the same
 * texts stay available by polling (dpdo_algorithm_privacy_notes and the getters). */
#ifndef DPDO_LOG_H
#define DPDO_LOG_H

#include "algorithm.h"
#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== CORE ZONE: the log callback ==== */

/* Message levels; the values are those of Python's logging module (NOTE sits between INFO and
 * WARNING), pinned forever. A callback registered with min_level L receives the messages of
 * level >= L. */
enum {
    DPDO_LOG_DEBUG = 10, /* detail for debugging the library's decisions */
    DPDO_LOG_INFO = 20,  /* the calibration decision (topic "calibration"), the per-run summary
                            when a run stops (topic "summary") */
    DPDO_LOG_NOTE = 25,  /* a privacy note: a fact about the guarantee worth knowing (topic
                            "note"), e.g. "reproducible mode: ..." */
    DPDO_LOG_WARN = 30,  /* a warning (topic "note"): the run may not be useful or the guarantee
                            may not hold as read, e.g. "clipping dominates", delta >= 1/n, a
                            violated precondition of the paper bound */
    DPDO_LOG_ERROR = 40  /* a call on the handle failed (topic "error"): the message the
                            handle's errmsg holds */
};

/* A log callback: `level` one of DPDO_LOG_*, `topic` a short static name ("note",
 * "calibration", "summary", "error"), `message` one line of English text without a trailing
 * newline. Both strings are valid only during the call (copy them to keep them). `user` is the
 * pointer given at registration. The callback must not call mutating functions on the handle
 * that logs (read-only getters are allowed; a mutating call gets DPDO_E_MISUSE). */
typedef void (*dpdo_log_fn)(void *user, int level, const char *topic, const char *message);

/* Register fn (NULL: none, the default; silent) as alg's log callback, receiving the messages
 * of level >= min_level (any int; DPDO_LOG_DEBUG receives all). What is logged:
 *  - at every successful prepare (dpdo_algorithm_prepare, or the first step that prepares):
 *    each privacy note as its own message, in the order of dpdo_algorithm_privacy_notes (whose
 *    "; "-joined text equals the joined messages), at DPDO_LOG_NOTE or DPDO_LOG_WARN (the
 *    warnings: unscaled features/clipping dominates, delta >= 1/n, a paper bound whose
 *    precondition fails), then the calibration decision at DPDO_LOG_INFO ("sigma = ... noise mode
 *    ..., accountant ..., target epsilon ... at delta ..., sensitivity ..., planned releases ...";
 *    topic "calibration");
 *  - when a run stops (the step that returns DPDO_DONE, or the step whose round fails): one
 *    summary at DPDO_LOG_INFO (stop reason, rounds, epsilon spent at delta and its accountant,
 *    messages sent; topic "summary"), or at DPDO_LOG_ERROR with the failure's message;
 *  - a failed prepare or step: the handle's error message at DPDO_LOG_ERROR (topic "error").
 * The callback is called only from the thread inside dpdo_algorithm_prepare, _step or _run on
 * this handle, never from the library's worker threads, and never concurrently with itself for
 * one handle. It may be replaced at any time between calls (also from inside the callback of
 * dpdo_algorithm_set_progress). Computing the summary's epsilon queries the accountant once per
 * run, and only when a callback receiving DPDO_LOG_INFO is set; results are unchanged
 * (bit-identical with or without a callback). Returns DPDO_OK, DPDO_E_INVAL (alg NULL). Does not
 * allocate. Thread-safety: one thread per handle (like every mutating call on it). Since 0.3. */
DPDO_API int dpdo_algorithm_set_log(dpdo_algorithm *alg, dpdo_log_fn fn, void *user, int min_level);

/* Static name of a level: "debug", "info", "note", "warning", "error"; "unknown" otherwise.
 * Never NULL. Thread-safe. Since 0.3. */
DPDO_API const char *dpdo_log_level_name(int level);

#ifdef __cplusplus
}
#endif
#endif /* DPDO_LOG_H */
