/* SPDX-License-Identifier: BSD-3-Clause */
/* The bottom of the engine: helpers every other engine file and the algorithms call (messages,
 * state blocks and scratch, the state arena, privacy notes, the plan helpers). Calls nothing
 * above it in lib/engine. */
#include "../rng/rng_impl.h"
#include "eng_handle.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int dpdo__eng_block(dpdo__eng *e, const char *name, int64_t rows, int64_t cols)
{
    if (e->nblk >= DPDO__MAX_BLOCKS) return -1;
    dpdo__block *b = &e->blk[e->nblk];
    b->name = name;
    b->rows = rows;
    b->cols = cols;
    b->cur = NULL;
    return e->nblk++;
}

int dpdo__eng_scratch(dpdo__eng *e, size_t bytes)
{
    if (e->nscr >= DPDO__MAX_SCRATCH) return -1;
    e->scr_bytes[e->nscr] = bytes;
    e->scr[e->nscr] = NULL;
    return e->nscr++;
}

int dpdo__eng_err(dpdo__eng *e, int status, int64_t node, const char *fmt, ...)
{
    if (e->par_mute)
        return status; /* tasks on threads: the first failing node is rerun alone (par.c) */
    char msg[DPDO__ERRMSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (node >= 0)
        return dpdo__err(e->err, status, "round %llu, node %lld: %s", (unsigned long long)e->plan.t,
                         (long long)node, msg);
    return dpdo__err(e->err, status, "round %llu: %s", (unsigned long long)e->plan.t, msg);
}

int dpdo__eng_alloc_arena(dpdo__eng *e)
{
    size_t total = 0, off[DPDO__MAX_BLOCKS + DPDO__MAX_SCRATCH];
    int k = 0;
    for (int i = 0; i < e->nblk; i++, k++) {
        size_t cells, bytes;
        if (!dpdo__mul_size((size_t)e->blk[i].rows, (size_t)e->blk[i].cols, &cells) ||
            !dpdo__mul_size(cells, sizeof(double), &bytes) || bytes > SIZE_MAX / 2 - total)
            return DPDO_E_NOMEM;
        off[k] = total;
        total += (bytes + 63) & ~(size_t)63;
    }
    for (int i = 0; i < e->nscr; i++, k++) {
        if (e->scr_bytes[i] > SIZE_MAX / 2 - total) return DPDO_E_NOMEM;
        off[k] = total;
        total += (e->scr_bytes[i] + 63) & ~(size_t)63;
    }
    if (total == 0) total = 64;
    e->arena = dpdo__alloc_aligned(total);
    if (!e->arena) return DPDO_E_NOMEM;
    e->arena_bytes = total;
    memset(e->arena, 0, total);
    k = 0;
    for (int i = 0; i < e->nblk; i++, k++)
        e->blk[i].cur = (double *)((char *)e->arena + off[k]);
    for (int i = 0; i < e->nscr; i++, k++)
        e->scr[i] = (char *)e->arena + off[k];
    return DPDO_OK;
}

/* the note's end and level for the log (eng_log.c); prepare's retry empties the notes */
static void note_mark(dpdo__eng *e, int level)
{
    if (e->pv.notes[0] == 0) e->pv.nnotes = 0;
    if (e->pv.nnotes >= DPDO__MAX_NOTES) return;
    e->pv.note_end[e->pv.nnotes] = (uint16_t)strlen(e->pv.notes);
    e->pv.note_level[e->pv.nnotes++] = (unsigned char)level;
}

static void note_add(dpdo__eng *e, const char *s, int level)
{
    if (e->pv.notes[0] == 0) e->pv.nnotes = 0;
    size_t len = strlen(e->pv.notes);
    static const char more[] = "; (more notes did not fit)";
    if (len + 3 + strlen(s) + sizeof more >=
        sizeof e->pv.notes) { /* never drop a caveat silently */
        if (!strstr(e->pv.notes, more) && len + sizeof more < sizeof e->pv.notes) {
            strcat(e->pv.notes, more);
            note_mark(e, level);
        } else if (e->pv.nnotes > 0 && e->pv.note_level[e->pv.nnotes - 1] < level) {
            e->pv.note_level[e->pv.nnotes - 1] = (unsigned char)level; /* a warning was dropped */
        }
        return;
    }
    if (len) strcat(e->pv.notes, "; ");
    strcat(e->pv.notes, s);
    note_mark(e, level);
}

void dpdo__eng_note(dpdo__eng *e, const char *s)
{
    note_add(e, s, DPDO_LOG_NOTE);
}

void dpdo__eng_warn(dpdo__eng *e, const char *s)
{
    note_add(e, s, DPDO_LOG_WARN);
}

void dpdo__plan_bernoulli(const dpdo__eng *e, dpdo__plan *p, double prob)
{
    memset(p->is_comp, 0, (size_t)e->n);
    if (e->inj_active) {
        for (int64_t c = 0; c < e->inj_b; c++)
            p->is_comp[e->inj_active[c]] = 1;
        return;
    }
    for (int64_t i = 0; i < e->n; i++) {
        double pi = e->node_p ? e->node_p[i] : prob;
        if (pi >= 1) {
            p->is_comp[i] = 1;
            continue;
        }
        dpdo__stream st;
        dpdo__stream_open(&st, e->rng, (uint64_t)i, p->t, DPDO_PURPOSE_ACTIVATION);
        p->is_comp[i] = dpdo__stream_uniform(&st) < pi;
    }
}

void dpdo__plan_list(dpdo__plan *p, int64_t n)
{
    p->ncomp = 0;
    for (int64_t i = 0; i < n; i++)
        if (p->is_comp[i]) p->comp[p->ncomp++] = i;
}

int dpdo__plan_charge_computing(dpdo__eng *e, dpdo__plan *p, int64_t count)
{
    p->ncharges = 0;
    if (!e->pv.private_run) return DPDO_OK;
    int rc = DPDO_OK;
    for (int64_t c = 0; c < p->ncomp && !rc; c++)
        rc = dpdo__plan_add_charge(e, e->pv.node_ev[p->comp[c]], p->comp[c], count);
    return rc;
}

int dpdo__plan_add_charge(dpdo__eng *e, int32_t ev, int64_t node, int64_t count)
{
    dpdo__plan *p = &e->plan;
    int bit = p->in_local ? 2 : 1;
    const char *why = NULL;
    if (!e->pv.private_run)
        why = "a charge in a run without noise";
    else if (node < 0 || node >= e->n)
        why = "a charge for a node out of range";
    else if (ev < 0 || ev >= e->pv.nev)
        why = "a charge of an unknown event";
    else if (count < 1)
        why = "a charge of fewer than one release";
    else if (p->cmark[node] & bit)
        why = bit == 1 ? "two charges for one node from one plan"
                       : "two charges for one node decided in one round";
    else if (p->ncharges >= 2 * e->n)
        why = "the charge list is full"; /* not reached: one of each kind per node */
    if (why) {
        int rc = dpdo__eng_err(e, DPDO_E_STATE, node >= 0 && node < e->n ? node : -1,
                               "privacy: %s (internal; the round is not released)", why);
        if (!p->charge_err) p->charge_err = rc;
        return rc;
    }
    p->cmark[node] |= (unsigned char)bit;
    if (DPDO__WEAKENED(e, DPDO__WEAKEN_FIRST_UNCHARGED) && e->round == 0)
        return DPDO_OK; /* test build only: the first round's releases go uncharged */
    p->charge[p->ncharges++] = (dpdo__charge){ev, node, count};
    return DPDO_OK;
}

const dpdo__block *dpdo__eng_find_block(const dpdo__eng *e, const char *name)
{
    for (int i = 0; i < e->nblk; i++)
        if (e->blk[i].name && strcmp(e->blk[i].name, name) == 0) return &e->blk[i];
    return NULL;
}
