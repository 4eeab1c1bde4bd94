/* SPDX-License-Identifier: BSD-3-Clause */
/* The log callback of an algorithm handle (include/dpdo/log.h, docs/logging.md): the privacy
 * notes and the calibration decision after a successful prepare, a summary when a run stops, the
 * message of a failed call. The library never prints; without a callback nothing here runs
 * beyond one pointer test. Called only from the thread inside prepare/step/run on the handle. */
#include "eng_handle.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

DPDO_API const char *dpdo_log_level_name(int level)
{
    switch (level) {
    case DPDO_LOG_DEBUG:
        return "debug";
    case DPDO_LOG_INFO:
        return "info";
    case DPDO_LOG_NOTE:
        return "note";
    case DPDO_LOG_WARN:
        return "warning";
    case DPDO_LOG_ERROR:
        return "error";
    default:
        return "unknown";
    }
}

static int algorithm_set_log_body(dpdo_algorithm *a, dpdo_log_fn fn, void *user, int min_level)
{
    if (!a) return DPDO_E_INVAL;
    a->log = fn;
    a->log_user = user;
    a->log_min = min_level;
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_set_log(dpdo_algorithm *a, dpdo_log_fn fn, void *user, int min_level)
{
    /* guarded like a read-only call: allowed from the handle's own callbacks (the run loop reads
     * the pointer afresh for every message) */
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, DPDO__BUSY_READ, "dpdo_algorithm_set_log",
                  algorithm_set_log_body(a, fn, user, min_level));
}

static int log_wants(const dpdo_algorithm *a, int level)
{
    return a->log && level >= a->log_min;
}

static void log_emit(const dpdo_algorithm *a, int level, const char *topic, const char *msg)
{
    if (log_wants(a, level)) a->log(a->log_user, level, topic, msg);
}

static const char *noise_mode_name(int mode)
{
    switch (mode) {
    case DPDO_NOISE_NONE:
        return "none";
    case DPDO_NOISE_PAPER:
        return "paper";
    case DPDO_NOISE_RIGOROUS:
        return "rigorous";
    case DPDO_NOISE_FIXED:
        return "fixed";
    default:
        return "?";
    }
}

/* the notes one message each (levels from dpdo__eng_note/_warn), then the calibration */
void dpdo__eng_log_prepared(dpdo_algorithm *a)
{
    dpdo__eng *e = a->e;
    if (!a->log || !e) return;
    char buf[sizeof e->pv.notes];
    size_t start = 0;
    for (int32_t k = 0; e->pv.notes[0] && k < e->pv.nnotes; k++) {
        size_t end = e->pv.note_end[k];
        if (end < start || end >= sizeof buf) break;
        memcpy(buf, e->pv.notes + start, end - start);
        buf[end - start] = 0;
        log_emit(a, e->pv.note_level[k], "note", buf);
        start = end + 2; /* past "; " */
    }
    if (!log_wants(a, DPDO_LOG_INFO)) return;
    int64_t pmin = INT64_MAX, pmax = 0;
    for (int64_t i = 0; i < e->n; i++) {
        if (e->pv.planned[i] < pmin) pmin = e->pv.planned[i];
        if (e->pv.planned[i] > pmax) pmax = e->pv.planned[i];
    }
    char plan[96] = "";
    if (pmax > 0)
        snprintf(plan, sizeof plan, ", planned releases per node %lld..%lld", (long long)pmin,
                 (long long)pmax);
    const char *src = dpdo_algorithm_randomness_source(a);
    size_t srclen = strcspn(src, ":");
    if (!e->pv.private_run)
        snprintf(buf, sizeof buf,
                 "%s: sigma = %.17g, not private (noise mode %s); %lld nodes, %lld rounds planned",
                 a->vt->name, e->pv.sigma, noise_mode_name(e->o.noise_mode), (long long)e->n,
                 (long long)e->o.max_rounds);
    else
        snprintf(buf, sizeof buf,
                 "%s: sigma = %.17g (noise mode %s, accountant %s, target epsilon %g at delta "
                 "%g, budget guard %s, sensitivity %.6g, %d release kind%s%s); %lld nodes, %lld "
                 "rounds planned, %.*s randomness",
                 a->vt->name, e->pv.sigma, noise_mode_name(e->o.noise_mode),
                 e->acc ? dpdo_accountant_name(e->acc) : "none", e->o.epsilon, e->o.delta,
                 isfinite(e->pv.guard_eps) ? "on" : "off", e->pv.sens, (int)e->pv.nev,
                 e->pv.nev == 1 ? "" : "s", plan, (long long)e->n, (long long)e->o.max_rounds,
                 (int)srclen, src);
    log_emit(a, DPDO_LOG_INFO, "calibration", buf);
}

const char *dpdo__stop_name(int stop)
{
    static const char *const why[] = {"none", "max rounds", "budget", "tolerance",
                                      "passes complete"};
    return stop >= 0 && stop < (int)(sizeof why / sizeof why[0]) ? why[stop] : "?";
}

/* the summary of a stopped run: DONE (INFO) or a failed round (ERROR) */
static void log_summary(dpdo_algorithm *a, int rc)
{
    char buf[800];
    if (rc != DPDO_DONE) {
        snprintf(buf, sizeof buf, "%s: run failed in round %lld (%s): %s", a->vt->name,
                 (long long)a->e->round + 1, dpdo_status_name(rc), a->errmsg);
        log_emit(a, DPDO_LOG_ERROR, "summary", buf);
        return;
    }
    if (!log_wants(a, DPDO_LOG_INFO)) return;
    char priv[400] = "not private";
    if (a->e->pv.private_run) {
        double eps = NAN, del = NAN;
        if (dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eps, &del, NULL) ==
            DPDO_OK)
            snprintf(priv, sizeof priv, "epsilon = %.17g at delta = %g (%s)", eps, del,
                     dpdo_algorithm_privacy_source(a, DPDO_PRIVACY_RIGOROUS));
        else
            snprintf(priv, sizeof priv, "epsilon not available: %s", a->errmsg);
    }
    int64_t msgs = 0, bytes = 0;
    (void)dpdo_algorithm_comm(a, DPDO_NODE_ALL, &msgs, NULL, &bytes);
    snprintf(buf, sizeof buf, "%s: stopped (%s) after %lld rounds; %s; %lld messages, %lld bytes",
             a->vt->name, dpdo__stop_name(a->stop), (long long)a->e->round, priv, (long long)msgs,
             (long long)bytes);
    log_emit(a, DPDO_LOG_INFO, "summary", buf);
}

int dpdo__eng_log_step(dpdo_algorithm *a, int (*body)(dpdo_algorithm *))
{
    if (!a || !DPDO__LIVE(a, DPDO__MAGIC_ALGORITHM) || !a->log) return body(a);
    int before = a->state;
    int rc = body(a);
    if (rc == DPDO_DONE || (rc < 0 && a->state == DPDO_ALG_FAILED && before != DPDO_ALG_FAILED))
        log_summary(a, rc);
    else if (rc < 0 && rc != DPDO_E_MISUSE)
        log_emit(a, DPDO_LOG_ERROR, "error", a->errmsg);
    return rc;
}

int dpdo__eng_log_status(dpdo_algorithm *a, int rc)
{
    if (rc < 0 && rc != DPDO_E_MISUSE && a && a->log)
        log_emit(a, DPDO_LOG_ERROR, "error", a->errmsg);
    return rc;
}
