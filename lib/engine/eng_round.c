/* SPDX-License-Identifier: BSD-3-Clause */
/* The round driver: one round (dpdo_algorithm_step), the stage runner, the message counters,
 * the tolerance test, dpdo_algorithm_run and its progress reports. */
#include "dist_impl.h"
#include "eng_handle.h"
#include "par_impl.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Per-sender counts of the round from its message patterns. Returns 1 when any row may be
 * non-zero (a per-sender COUNTS pattern: all n + 1 rows were cleared); otherwise only the computing
 * nodes' rows and the coordinator's row were cleared and written, so that a round of b active
 * nodes out of n costs O(b), not O(n). */
static int count_round(dpdo__eng *e, const dpdo__plan *p)
{
    int full = 0;
    for (int32_t s = 0; s < p->nstages; s++)
        for (int32_t k = 0; k < p->stage[s].npat; k++)
            full |= p->stage[s].pat[k].kind == DPDO__PAT_COUNTS;
    if (full) {
        memset(e->rcomm, 0, (size_t)(e->n + 1) * sizeof *e->rcomm);
    } else {
        for (int64_t c = 0; c < p->ncomp; c++)
            memset(e->rcomm[p->comp[c]], 0, sizeof *e->rcomm);
        memset(e->rcomm[e->n], 0, sizeof *e->rcomm);
    }
    for (int32_t s = 0; s < p->nstages; s++) {
        const dpdo__stage *st = &p->stage[s];
        for (int32_t k = 0; k < st->npat; k++) {
            const dpdo__xpat *pt = &st->pat[k];
            int64_t ib = e->d < 2147483648LL ? 4 : 8;
            for (int64_t c = 0; c < p->ncomp; c++) {
                int64_t j = p->comp[c], msgs = 0;
                int64_t kk = pt->kvar ? pt->kvar[j] : pt->k;
                int64_t vals = pt->payload == DPDO__PAY_SPARSE ? kk : e->d;
                int64_t bytes = 8 * vals + (pt->payload == DPDO__PAY_SPARSE ? ib * kk : 0);
                if (pt->kind == DPDO__PAT_ROUND) {
                    const dpdo__round *r = pt->r;
                    if (r->is_active[j]) {
                        if (r->full_average)
                            msgs = r->nactive - 1;
                        else
                            msgs = r->wptr[r->pos[j] + 1] - r->wptr[r->pos[j]] - 1;
                    }
                } else if (pt->kind == DPDO__PAT_NET) {
                    msgs = e->net->rowptr[j + 1] - e->net->rowptr[j] - 1;
                } else if (pt->kind == DPDO__PAT_GATHER) {
                    msgs = 1;
                } else if (pt->kind == DPDO__PAT_COUNTS) {
                    continue;                             /* counted below, per sender */
                } else if (pt->kind == DPDO__PAT_BCAST) { /* sent by the coordinator (row n) */
                    e->rcomm[e->n][0] += 1;
                    e->rcomm[e->n][1] += vals;
                    e->rcomm[e->n][2] += bytes;
                    continue;
                }
                e->rcomm[j][0] += msgs;
                e->rcomm[j][1] += msgs * vals;
                e->rcomm[j][2] += msgs * bytes;
            }
            if (pt->kind == DPDO__PAT_COUNTS)
                for (int64_t j = 0; j <= e->n; j++) {
                    e->rcomm[j][0] += pt->cmsg[j];
                    e->rcomm[j][1] += pt->cval[j];
                    e->rcomm[j][2] += 8 * pt->cval[j];
                }
        }
    }
    return full;
}

static int tolerance_test(dpdo_algorithm *a)
{
    dpdo__eng *e = a->e;
    double tol = DPDO__PD(e, DPDO_PARAM_TOL);
    int64_t c = DPDO__PI(e, DPDO_PARAM_CHECK_EVERY);
    if (!(tol > 0) || e->round % (uint64_t)c != 0) return DPDO_OK;
    int rc;
    if (e->dist && (rc = dpdo__dist_share_state(e)))
        return rc; /* the average needs every node's row */
    dpdo__eng_output_all(e, e->tmp_b);
    if (e->round != (uint64_t)c) {
        double dn = 0, xn = 0;
        for (int64_t k = 0; k < e->d; k++) {
            double t = e->tmp_b[k] - e->tol_prev[k];
            dn += t * t;
            xn += e->tmp_b[k] * e->tmp_b[k];
        }
        if (sqrt(dn) <= tol * fmax(1.0, sqrt(xn))) e->tol_met = 1;
    }
    memcpy(e->tol_prev, e->tmp_b, (size_t)e->d * sizeof(double));
    return DPDO_OK;
}

/* ---- the check stage's scans (the algorithms' check callbacks) ---------------------------- */

int dpdo__eng_check_finite(dpdo__eng *e, int64_t node, const double *v, size_t n, const char *name,
                           const char *when)
{
    size_t k = dpdo__first_nonfinite(v, n);
    if (k == n) return DPDO_OK;
    return dpdo__eng_err(e, DPDO_E_NUMERIC, node, "%s[%zu] = %g%s%s", name, k, v[k],
                         when ? " " : "", when ? when : "");
}

int dpdo__eng_check_rows(dpdo__eng *e, int scr, const int64_t *nodes, int64_t count,
                         const char *name, const char *when)
{
    size_t d = (size_t)e->d;
    for (int64_t c = 0; c < count; c++) {
        int64_t i = nodes ? nodes[c] : c;
        int rc = dpdo__eng_check_finite(e, i, (const double *)e->scr[scr] + (size_t)i * d, d, name,
                                        when);
        if (rc) return rc;
    }
    return DPDO_OK;
}

/* Invariants of the round's charges (DPDO__ENG_ASSERT: debug and test builds): each names a
 * known event, a node and at least one release, a run without noise charges nothing, and (after
 * the stages) the guard's allowance holds and every node whose data entered a noisy release
 * drawn through dpdo__eng_noise_* is charged this round (algorithms that decide their charges in
 * local() may charge a pass, not every release, so they are exempt). */
static int check_charges(dpdo__eng *e, const dpdo__plan *p, int after_stages)
{
    int rc =
        DPDO__ENG_ASSERT(e, -1, p->ncharges <= 2 * e->n && (e->pv.private_run || p->ncharges == 0));
    for (int64_t c = 0; c < p->ncharges && !rc; c++) {
        const dpdo__charge *ch = &p->charge[c];
        rc = DPDO__ENG_ASSERT(e, -1,
                              ch->node >= 0 && ch->node < e->n && ch->ev >= 0 &&
                                  ch->ev < e->pv.nev && ch->count >= 1);
        if (!rc && after_stages)
            rc = DPDO__ENG_ASSERT(e, ch->node,
                                  e->pv.used[ch->node] <= e->pv.allow[ch->node] - ch->count ||
                                      e->vt->local_charges);
    }
    if (rc || !after_stages || e->vt->local_charges || !DPDO__ASSERT_ON) return rc;
    for (int64_t i = 0; i < e->n && !rc; i++) {
        if (!e->pv.released[i]) continue;
        int charged = p->cmark[i] != 0; /* set by dpdo__plan_add_charge */
        rc = DPDO__ENG_ASSERT(e, i, charged);
    }
    return rc;
}

/* Charge the round's releases to the ledger (before commit). On a failure the charges of this
 * round already made are taken back and the round fails: nothing is installed, and the ledger
 * is as before the round. */
static int charge_ledger(dpdo__eng *e, const dpdo__plan *p)
{
    if (p->ncharges == 0) return DPDO_OK;
    int rc = DPDO__ENG_ASSERT(e, -1, e->ledger != NULL);
    if (!e->ledger)
        return rc ? rc
                  : dpdo__eng_err(e, DPDO_E_STATE, -1, "privacy: charges but no ledger (internal)");
    for (int64_t c = 0; c < p->ncharges; c++) {
        const dpdo__charge *ch = &p->charge[c];
        if ((rc = dpdo__ledger_charge(e->ledger, &e->pv.ev[ch->ev], ch->count, &ch->node, 1))) {
            int lrc = rc;
            char why[DPDO__ERRMSG_LEN];
            snprintf(why, sizeof why, "%s", dpdo_ledger_errmsg(e->ledger));
            while (c-- > 0) {
                const dpdo__charge *b = &p->charge[c];
                (void)dpdo__ledger_discharge(e->ledger, &e->pv.ev[b->ev], b->count, &b->node, 1);
            }
            return dpdo__eng_err(
                e, lrc, ch->node,
                "privacy ledger: the charge failed (%s); the round is not released", why);
        }
    }
    for (int64_t c = 0; c < p->ncharges; c++) {
        const dpdo__charge *ch = &p->charge[c];
        e->pv.used[ch->node] += ch->count;
        int64_t *k = &e->pv.charged[(size_t)ch->ev * (size_t)e->n + (size_t)ch->node];
        *k += ch->count;
        if (!rc)
            rc = DPDO__ENG_ASSERT(e, ch->node,
                                  dpdo__ledger_count(e->ledger, &e->pv.ev[ch->ev], ch->node) >= *k);
    }
    return rc;
}

/* The stages of a round. Per stage: local() on the stage's nodes this process hosts, then (in a
 * distributed run) the transport moves what the stage's patterns describe (dist.c), then
 * combine() on the hosted nodes. In one process every node is hosted and nothing moves, so this
 * is the plain loop; it stops at the first failure. Distributed, a failure is carried to the
 * next exchange (every process takes part in every collective), and the charges decided inside
 * local() are summed over the processes at the end. *fail_node: the node whose callback failed. */
static int run_stages(dpdo__eng *e, dpdo__plan *p, int64_t *fail_node)
{
    int rc = DPDO_OK, xr;
    int64_t nplan = p->ncharges;
    *fail_node = -1;
    p->in_local = 1; /* charges from now on are decided inside local() */
    for (int32_t s = 0; s < p->nstages; s++) {
        if (rc && !e->dist) break;
        const dpdo__stage *st = &p->stage[s];
        int who = st->who;
        int64_t cnt = who == DPDO__RUN_COORD ? 1 : who == DPDO__RUN_ALL ? e->n : p->ncomp;
#define WHO(c)                                                                                     \
    (who == DPDO__RUN_COORD ? DPDO_NODE_COORDINATOR : who == DPDO__RUN_ALL ? (c) : p->comp[c])
        if (!e->dist && !st->seq && dpdo__par_width(e) > 1) { /* one process, on threads (par.c) */
            rc = dpdo__par_stage(e, p, s, fail_node);
            continue;
        }
        if (st->seq && e->dist) { /* the baton goes from process to process */
            if ((xr = dpdo__dist_seq_local(e, p, s, &rc, fail_node))) return xr;
        } else {
            for (int64_t c = 0; c < cnt && !rc; c++) {
                int64_t i = WHO(c);
                if (dpdo__eng_hosted(e, i) &&
                    ((rc = e->vt->local(e, e->priv, p, s, i)) || (rc = p->charge_err)))
                    *fail_node = i;
            }
        }
        dpdo__eng_probe(e, DPDO__PH_EXCHANGE);
        if (e->dist) {
            int stop = 0;
            if ((xr = dpdo__dist_exchange(e, p, s, rc, &stop))) return xr;
            if (stop) return rc ? rc : DPDO__REMOTE_FAIL;
        }
        /* receivers read the senders' rows where they were written (one process) or where the
         * transport put them; a coordinator stage's combine() runs on every process */
        for (int64_t c = 0; c < cnt && !rc; c++) {
            int64_t i = WHO(c);
            if (e->vt->combine && (who == DPDO__RUN_COORD || dpdo__eng_hosted(e, i)) &&
                (rc = e->vt->combine(e, e->priv, p, s, i)))
                *fail_node = i;
        }
#undef WHO
    }
    p->in_local = 0;
    if (e->dist && e->vt->local_charges &&
        (xr = dpdo__dist_local_charges(e, p, nplan, &rc, fail_node)))
        return xr;
    return rc;
}

/* The first step of a run: the prepare stage (dpdo__eng_prepare, eng_life.c: plug-in
 * derivations, the algorithm's prepare with its noise plan, the events, the ledger's room, the
 * budget guard, the keys, the thread pool, the initial state) unless dpdo_algorithm_prepare ran
 * it, then RUNNING. The only place step() reaches prepare: a steady-state round is plan, guard,
 * the stages (local, combine), check and commit. */
static int step_start(dpdo_algorithm *a)
{
    int rc;
    if (!a->e->prepared && (rc = dpdo__eng_prepare(a))) return rc;
    a->state = DPDO_ALG_RUNNING;
    return DPDO_OK;
}

static int algorithm_step_body(dpdo_algorithm *a)
{
    if (!a || !DPDO__LIVE(a, DPDO__MAGIC_ALGORITHM)) return DPDO_E_INVAL; /* NULL or destroyed */
    if (!a->e)
        return dpdo__err(a->errmsg, DPDO_E_STATE,
                         "step: the algorithm is EMPTY; call dpdo_algorithm_setup");
    if (a->state == DPDO_ALG_DONE || a->state == DPDO_ALG_FAILED) {
        if (a->state == DPDO_ALG_DONE)
            return dpdo__err(a->errmsg, DPDO_E_STATE,
                             "step: the run is done (stop reason: %s); call dpdo_algorithm_reset",
                             dpdo__stop_name(a->stop));
        return dpdo__err(a->errmsg, DPDO_E_STATE,
                         "step: a round failed; call dpdo_algorithm_reset");
    }
    dpdo__eng *e = a->e;
    int rc;
    if (a->state == DPDO_ALG_READY && (rc = step_start(a))) return rc;
    if (e->round >= (uint64_t)DPDO__PI(e, DPDO_PARAM_MAX_ROUNDS)) {
        a->state = DPDO_ALG_DONE;
        a->stop = DPDO_STOP_MAX_ROUNDS;
        return DPDO_DONE;
    }
    if (e->tol_met) {
        a->state = DPDO_ALG_DONE;
        a->stop = DPDO_STOP_TOLERANCE;
        return DPDO_DONE;
    }
    if (e->vt->finished && e->vt->finished(e, e->priv)) {
        a->state = DPDO_ALG_DONE;
        a->stop = DPDO_STOP_PASSES;
        return DPDO_DONE;
    }
    /* distributed with node secrets: the coordinator cannot compute the nodes' secret initial
     * rows, so they are uploaded before round 1 */
    if (e->dist && e->round == 0 && e->keyed && e->vt->init_gather &&
        (rc = dpdo__dist_init_gather(e)))
        goto failed;
    dpdo__plan *p = &e->plan;
    p->t = e->round + 1;
    p->ncomp = 0;
    p->nstages = 0;
    memset(p->stage, 0, sizeof p->stage);
    p->ncharges = 0;
    p->in_local = 0;
    p->charge_err = 0;
    memset(p->cmark, 0, (size_t)e->n);
    memset(e->pv.released, 0, (size_t)e->n * sizeof *e->pv.released);
    dpdo__eng_probe(e, DPDO__PH_PLAN);
    if ((rc = e->vt->plan(e, e->priv, p)) == DPDO__PLAN_BUDGET && !p->charge_err) {
        a->state = DPDO_ALG_DONE;
        a->stop = DPDO_STOP_BUDGET;
        e->inj_active = NULL;
        e->inj_zeta = NULL;
        return DPDO_DONE;
    }
    if (!rc) rc = p->charge_err; /* a refused charge fails the round even if plan() dropped it */
    if (!rc) rc = check_charges(e, p, 0);
    if (rc) goto failed;
    /* guard: nothing has been computed or released yet */
    for (int64_t c = 0; c < p->ncharges; c++) {
        const dpdo__charge *ch = &p->charge[c];
        if (e->pv.used[ch->node] > e->pv.allow[ch->node] - ch->count) {
            a->state = DPDO_ALG_DONE;
            a->stop = DPDO_STOP_BUDGET;
            e->inj_active = NULL;
            e->inj_zeta = NULL;
            return DPDO_DONE;
        }
    }
    int64_t fail_node = -1;
    int full = 0;
    rc = run_stages(e, p, &fail_node);
    if (!rc) rc = check_charges(e, p, 1);
    if (!rc) rc = e->vt->check(e, e->priv, p);
    if (!rc)
        full = count_round(
            e, p); /* after local(): sparse messages may have data-independent varying sizes */
    if (e->dist)
        rc = dpdo__dist_agree(e, rc, fail_node); /* every process ends the round the same way */
    /* privacy: the ledger first, so that a failed charge fails the round before commit installs
     * (releases) anything; capacity was reserved at prepare, so this is not expected to fail */
    if (!rc) rc = charge_ledger(e, p);
    if (rc) goto failed;
    dpdo__eng_probe(e, DPDO__PH_COMMIT);
    e->vt->commit(e, e->priv, p);
    if (full) {
        for (int64_t i = 0; i <= e->n; i++)
            for (int k = 0; k < 3; k++)
                e->comm[i][k] += e->rcomm[i][k];
    } else { /* only these rows were counted this round (count_round) */
        for (int64_t c = 0; c < p->ncomp; c++)
            for (int k = 0; k < 3; k++)
                e->comm[p->comp[c]][k] += e->rcomm[p->comp[c]][k];
        for (int k = 0; k < 3; k++)
            e->comm[e->n][k] += e->rcomm[e->n][k];
    }
    memcpy(e->last_active, p->is_comp, (size_t)e->n);
    e->round = p->t;
    if ((rc = tolerance_test(a))) goto failed;
    e->inj_active = NULL;
    e->inj_zeta = NULL;
    return DPDO_ROUND;
failed:
    a->state = DPDO_ALG_FAILED;
    e->inj_active = NULL;
    e->inj_zeta = NULL;
    return rc;
}

DPDO_API int dpdo_algorithm_step(dpdo_algorithm *a)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 1, "dpdo_algorithm_step",
                  dpdo__eng_log_step(a, algorithm_step_body));
}

static int algorithm_set_progress_body(dpdo_algorithm *a, dpdo_progress_fn fn, void *user,
                                       int64_t every, int32_t flags)
{
    if (!a) return DPDO_E_INVAL;
    if (every < 1)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "set_progress: every = %lld: must be >= 1",
                         (long long)every);
    if (flags & ~(int32_t)(DPDO_PROGRESS_EPSILON | DPDO_PROGRESS_OBJECTIVE))
        return dpdo__err(a->errmsg, DPDO_E_INVAL,
                         "set_progress: flags = %d: unknown DPDO_PROGRESS_* bits", (int)flags);
    a->progress = fn;
    a->progress_user = user;
    a->progress_every = every;
    a->progress_flags = flags;
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_set_progress(dpdo_algorithm *a, dpdo_progress_fn fn, void *user,
                                         int64_t every, int32_t flags)
{
    /* guarded like a read-only call: exclusive against other threads, but allowed from the
     * progress callback itself (the run loop reads fn, every and flags afresh after each report;
     * the Python binding adapts `every` there, about 20 reports a second) */
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, DPDO__BUSY_READ, "dpdo_algorithm_set_progress",
                  algorithm_set_progress_body(a, fn, user, every, flags));
}

/* Fill a progress report and call the host; returns the callback's answer (0 = go on). */
static int report_progress(dpdo_algorithm *a, int64_t steps, int status)
{
    dpdo_progress p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.round = dpdo_algorithm_round(a);
    p.max_rounds = a->e ? a->e->o.max_rounds : 0;
    p.steps = steps;
    p.status = status;
    p.stop_reason = a->stop;
    p.epsilon = NAN;
    p.delta = a->e ? a->e->o.delta : NAN;
    p.objective = NAN;
    if (status >= 0 && a->e) {
        /* getters may fail (e.g. a non-private run has no accountant): the field stays NaN */
        if ((a->progress_flags & DPDO_PROGRESS_EPSILON) && a->e->pv.private_run) {
            double eps = NAN, del = NAN;
            if (dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eps, &del, NULL) ==
                DPDO_OK) {
                p.epsilon = eps;
                p.delta = del;
            }
        }
        if (a->progress_flags & DPDO_PROGRESS_OBJECTIVE) {
            double F = NAN;
            if (dpdo_algorithm_objective(a, DPDO_POINT_OUTPUT, DPDO_NODE_ALL, &F) == DPDO_OK)
                p.objective = F;
        }
    }
    return a->progress(&p, a->progress_user);
}

static int algorithm_run_body(dpdo_algorithm *a, int64_t max_steps, int64_t *steps)
{
    int64_t k = 0;
    int rc = DPDO_E_INVAL;
    if (steps) *steps = 0;
    if (!a || !DPDO__LIVE(a, DPDO__MAGIC_ALGORITHM)) return rc; /* NULL or destroyed */
    for (;;) {
        if (max_steps > 0 && k >= max_steps) break;
        rc = dpdo__eng_log_step(a, algorithm_step_body);
        if (rc != DPDO_ROUND) break;
        k++;
        int last = max_steps > 0 && k >= max_steps;
        if (a->progress && !last && k % a->progress_every == 0 && report_progress(a, k, rc)) {
            rc = dpdo__err(a->errmsg, DPDO_E_CANCELED,
                           "run: stopped by the progress callback after round %lld",
                           (long long)dpdo_algorithm_round(a));
            if (steps) *steps = k;
            return rc;
        }
    }
    if (steps) *steps = k;
    /* the final report: after DONE, after max_steps, after a failure; its answer is ignored
     * (nothing more would run anyway) */
    if (a->progress && (k > 0 || rc != DPDO_ROUND)) (void)report_progress(a, k, rc);
    return rc;
}

DPDO_API int dpdo_algorithm_run(dpdo_algorithm *a, int64_t max_steps, int64_t *steps)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 1, "dpdo_algorithm_run",
                  algorithm_run_body(a, max_steps, steps));
}
