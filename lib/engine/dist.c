/* SPDX-License-Identifier: BSD-3-Clause */
/* Distributed rounds: the engine's side of dpdo/transport.h.
 *
 * Every process holds the whole plan (public randomness, same seed) and the
 * same state layout, but computes only for the nodes it hosts. Per stage:
 * local() on the hosted nodes (a sequential stage passes a baton from
 * process to process), then the transport moves the messages the stage's
 * patterns describe (from the sender's process to the processes of its
 * receivers), shares the small public per-node values local() wrote (sparse
 * message sizes, counters, bookkeeping rows), and combine() runs on the
 * hosted nodes. After the stages every process runs check(), the processes
 * agree on the outcome (the lowest failing node), the per-node charges made
 * inside local() are summed over processes, and commit() runs everywhere,
 * so the ledger, counters and plan stay identical on all processes. Rows of
 * nodes a process does not host are unspecified there until
 * dpdo__dist_share_state(). See docs/distributed.md. */
#include <string.h>
#include "engine_impl.h"

static int xfail(dpdo__eng *e, int rc, const char *what)
{
    const char *m = e->xt->errmsg ? e->xt->errmsg(e->xu) : NULL;
    rc = rc < 0 ? rc : DPDO_E_CALLBACK; /* a transport must return DPDO_E_* codes */
    e->xbroken = rc;
    return dpdo__err(e->err, rc, "round %llu: transport '%s': %s: %s",
                     (unsigned long long)(e->plan.t), e->xt->name, what, m && *m ? m : "failed");
}

int dpdo__dist_attach(dpdo__eng *e, const dpdo_transport_type *t, void *user)
{
    int64_t n = e->n, self = -1;
    int64_t *proc = dpdo__alloc_array((size_t)n + 1, sizeof *proc);
    dpdo_message *msg = dpdo__alloc_array(2 * (size_t)n + 2, sizeof *msg);
    int64_t *lc = dpdo__calloc(2 * (size_t)n, sizeof *lc);
    int rc;
    if (!proc || !msg || !lc) {
        rc = dpdo__err(e->err, DPDO_E_NOMEM, "set_transport: out of memory");
        goto fail;
    }
    if ((rc = t->layout(user, n, proc, &self))) {
        int code = rc;
        rc = rc < 0 ? rc : DPDO_E_CALLBACK;
        dpdo__err(e->err, rc, "set_transport: '%s': layout failed (code %d)", t->name, code);
        goto fail;
    }
    rc = DPDO_E_INVAL;
    if (self < 0) {
        dpdo__err(e->err, rc, "set_transport: '%s': layout gave process %lld for this process", t->name, (long long)self);
        goto fail;
    }
    for (int64_t i = 0; i <= n; i++)
        if (proc[i] < 0) {
            dpdo__err(e->err, rc, "set_transport: '%s': layout gave process %lld for %s %lld", t->name,
                      (long long)proc[i], i < n ? "node" : "the coordinator", (long long)i);
            goto fail;
        }
    /* a sequential stage hands the baton on in node order: each process must host one block */
    for (int64_t i = 1; i < n; i++)
        if (proc[i] != proc[i - 1])
            for (int64_t k = 0; k < i - 1; k++)
                if (proc[k] == proc[i]) {
                    dpdo__err(e->err, rc,
                              "set_transport: '%s': process %lld hosts nodes %lld and %lld but not %lld: each "
                              "process must host one contiguous block of nodes",
                              t->name, (long long)proc[i], (long long)k, (long long)i, (long long)(i - 1));
                    goto fail;
                }
    dpdo__dist_detach(e);
    e->xt = t;
    e->xu = user;
    e->proc = proc;
    e->self = self;
    e->xmsg = msg;
    e->xlc = lc;
    return DPDO_OK;
fail:
    dpdo__free(proc), dpdo__free(msg), dpdo__free(lc);
    return rc;
}

void dpdo__dist_detach(dpdo__eng *e)
{
    dpdo__free(e->proc);
    dpdo__free(e->xmsg);
    dpdo__free(e->xlc);
    dpdo__free(e->xbaton);
    e->proc = NULL, e->xmsg = NULL, e->xlc = NULL, e->xbaton = NULL;
    e->xbaton_cap = 0;
    e->xt = NULL;
    e->xu = NULL;
    e->xbroken = 0;
}

static const int64_t coord_dst = DPDO_NODE_COORDINATOR;

/* The messages of one pattern, appended to e->xmsg; returns the new count. */
static int64_t pattern_messages(dpdo__eng *e, const dpdo__plan *p, const dpdo__xpat *pt, int64_t nm)
{
    dpdo_message *m = e->xmsg;
    size_t d = (size_t)e->d, d8 = d * sizeof(double);
    if (!pt->buf) return nm;
    if (pt->kind == DPDO__PAT_BCAST) {
        m[nm++] = (dpdo_message){.src = DPDO_NODE_COORDINATOR, .ndst = p->ncomp, .dst = p->comp, .nseg = 1,
                                 .seg = {{pt->buf, (int64_t)d8, (int64_t)d8}}};
        return nm;
    }
    int all = pt->kind == DPDO__PAT_COUNTS && pt->route == DPDO__ROUTE_NET_ALL;
    int64_t cnt = all ? e->n : p->ncomp;
    for (int64_t c = 0; c < cnt; c++) {
        int64_t j = all ? c : p->comp[c];
        dpdo_message *x = &m[nm];
        x->src = j;
        if (pt->kind == DPDO__PAT_ROUND) {
            const dpdo__round *r = pt->r;
            if (!r->is_active[j]) continue;
            if (r->full_average) {
                x->ndst = r->nactive;
                x->dst = r->active;
            } else {
                int64_t b0 = r->wptr[r->pos[j]], b1 = r->wptr[r->pos[j] + 1];
                x->ndst = b1 - b0;
                x->dst = r->wcol + b0;
            }
        } else if (pt->kind == DPDO__PAT_NET || all) {
            x->ndst = e->net->rowptr[j + 1] - e->net->rowptr[j];
            x->dst = e->net->col + e->net->rowptr[j];
        } else if (pt->kind == DPDO__PAT_GATHER) {
            x->ndst = 1;
            x->dst = &coord_dst;
        } else {
            continue;
        }
        if (pt->ibuf) {
            int64_t k = pt->kbuf[j], cap = pt->ld * 8;
            x->nseg = 3;
            x->seg[0] = (dpdo_segment){pt->kbuf + j, 8, 8};
            x->seg[1] = (dpdo_segment){pt->ibuf + (size_t)j * (size_t)pt->ld, 8 * k, cap};
            x->seg[2] = (dpdo_segment){(double *)pt->buf + (size_t)j * (size_t)pt->ld, 8 * k, cap};
        } else {
            x->nseg = 1;
            x->seg[0] = (dpdo_segment){(double *)pt->buf + (size_t)j * (size_t)(pt->ld ? pt->ld : e->d),
                                       (int64_t)d8, (int64_t)d8};
        }
        nm++;
    }
    return nm;
}

static int64_t baton_bytes(const dpdo__stage *st)
{
    int64_t b = 2 * (int64_t)sizeof(int64_t);
    for (int32_t k = 0; k < st->nbaton; k++) b += st->baton[k].bytes;
    return b;
}

static void baton_pack(dpdo__eng *e, const dpdo__stage *st, int64_t status, int64_t node)
{
    unsigned char *b = e->xbaton;
    memcpy(b, &status, 8), memcpy(b + 8, &node, 8);
    b += 16;
    for (int32_t k = 0; k < st->nbaton; k++) {
        memcpy(b, st->baton[k].p, (size_t)st->baton[k].bytes);
        b += st->baton[k].bytes;
    }
}

static int64_t baton_unpack(dpdo__eng *e, const dpdo__stage *st)
{
    const unsigned char *b = e->xbaton;
    int64_t status;
    memcpy(&status, b, 8);
    b += 16;
    for (int32_t k = 0; k < st->nbaton; k++) {
        memcpy(st->baton[k].p, b, (size_t)st->baton[k].bytes);
        b += st->baton[k].bytes;
    }
    return status;
}

/* local() of a sequential stage: runs of consecutive computing nodes on one process, the baton
 * passed between runs, the last holder's baton to all. */
static int seq_local(dpdo__eng *e, dpdo__plan *p, int32_t s, int *rc, int64_t *fail_node)
{
    const dpdo__stage *st = &p->stage[s];
    int64_t need = baton_bytes(st);
    if (need > e->xbaton_cap) { /* first round of the run (the baton's size is fixed per algorithm) */
        unsigned char *nb = dpdo__realloc(e->xbaton, (size_t)need);
        if (!nb) return dpdo__err(e->err, DPDO_E_NOMEM, "round %llu: out of memory", (unsigned long long)p->t);
        e->xbaton = nb;
        e->xbaton_cap = need;
    }
    int64_t prev = -1;
    int xr;
    for (int64_t c = 0; c < p->ncomp; c++) {
        int64_t i = p->comp[c], P = e->proc[i];
        if (P != prev) {
            if (prev >= 0 && e->self == prev) {
                baton_pack(e, st, *rc, *fail_node);
                if ((xr = e->xt->send(e->xu, P, e->xbaton, need))) return xfail(e, xr, "send");
            }
            if (prev >= 0 && e->self == P) {
                if ((xr = e->xt->recv(e->xu, prev, e->xbaton, need))) return xfail(e, xr, "recv");
                if (baton_unpack(e, st) && !*rc) *rc = DPDO__REMOTE_FAIL;
            }
            prev = P;
        }
        if (e->self == P && !*rc && (*rc = e->vt->local(e, e->priv, p, s, i))) *fail_node = i;
    }
    if (prev >= 0) {
        if (e->self == prev) baton_pack(e, st, *rc, *fail_node);
        if ((xr = e->xt->bcast(e->xu, prev, e->xbaton, need))) return xfail(e, xr, "bcast");
        if (e->self != prev && baton_unpack(e, st) && !*rc) *rc = DPDO__REMOTE_FAIL;
    }
    return DPDO_OK;
}

int dpdo__dist_stages(dpdo__eng *e, dpdo__plan *p, int64_t *fail_node)
{
    int rc = 0, xr;
    int64_t nplan = p->ncharges;
    *fail_node = -1;
    for (int32_t s = 0; s < p->nstages; s++) {
        dpdo__stage *st = &p->stage[s];
        int who = st->who;
        int64_t cnt = who == DPDO__RUN_COORD ? 1 : who == DPDO__RUN_ALL ? e->n : p->ncomp;
#define WHO(c) (who == DPDO__RUN_COORD ? DPDO_NODE_COORDINATOR : who == DPDO__RUN_ALL ? (c) : p->comp[c])
        if (st->seq) {
            if ((xr = seq_local(e, p, s, &rc, fail_node))) return xr;
        } else {
            for (int64_t c = 0; c < cnt && !rc; c++) {
                int64_t i = WHO(c);
                if (!dpdo__eng_hosted(e, i)) continue;
                if ((rc = e->vt->local(e, e->priv, p, s, i))) *fail_node = i;
            }
        }
        dpdo__eng_probe(e, DPDO__PH_EXCHANGE);
        int64_t nm = 0;
        for (int32_t k = 0; k < st->npat; k++) nm = pattern_messages(e, p, &st->pat[k], nm);
        int32_t anyf = 0;
        if ((xr = e->xt->exchange(e->xu, rc, e->xmsg, nm, &anyf))) return xfail(e, xr, "exchange");
        if (anyf) return rc ? rc : DPDO__REMOTE_FAIL;
        for (int32_t k = 0; k < st->npat; k++) {
            dpdo__xpat *pt = &st->pat[k];
            if (pt->kvar && (xr = e->xt->share(e->xu, (void *)pt->kvar, 8, e->n))) return xfail(e, xr, "share");
            if (pt->kind == DPDO__PAT_COUNTS && pt->local_counts) {
                if ((xr = e->xt->sum(e->xu, (int64_t *)pt->cmsg, e->n + 1))) return xfail(e, xr, "sum");
                if ((xr = e->xt->sum(e->xu, (int64_t *)pt->cval, e->n + 1))) return xfail(e, xr, "sum");
            }
        }
        for (int32_t k = 0; k < st->nshare; k++)
            if ((xr = e->xt->share(e->xu, st->share[k].p, st->share[k].bytes, e->n))) return xfail(e, xr, "share");
        for (int64_t c = 0; c < cnt && !rc; c++) {
            int64_t i = WHO(c);
            if (who != DPDO__RUN_COORD && !dpdo__eng_hosted(e, i)) continue;
            if ((rc = e->vt->combine(e, e->priv, p, s, i))) *fail_node = i;
        }
#undef WHO
        /* a failed combine() is told to the others by the next exchange or the agreement */
    }
    /* charges decided inside local(): one per node and round, summed over processes (node order);
     * collective, so a process whose combine() failed takes part too */
    if (e->vt->local_charges) {
        int64_t n = e->n;
        memset(e->xlc, 0, 2 * (size_t)n * sizeof *e->xlc);
        for (int64_t c = nplan; c < p->ncharges && !rc; c++) {
            const dpdo__charge *ch = &p->charge[c];
            if (e->xlc[2 * ch->node]) {
                rc = dpdo__eng_err(e, DPDO_E_STATE, ch->node, "two charges decided in one round (internal)");
                *fail_node = ch->node;
                break;
            }
            e->xlc[2 * ch->node] = ch->ev + 1;
            e->xlc[2 * ch->node + 1] = ch->count;
        }
        if (rc) memset(e->xlc, 0, 2 * (size_t)n * sizeof *e->xlc);
        if ((xr = e->xt->sum(e->xu, e->xlc, 2 * n))) return xfail(e, xr, "sum");
        p->ncharges = nplan;
        for (int64_t i = 0; i < n; i++)
            if (e->xlc[2 * i]) p->charge[p->ncharges++] = (dpdo__charge){(int32_t)(e->xlc[2 * i] - 1), i, e->xlc[2 * i + 1]};
    }
    return rc;
}

int dpdo__dist_agree(dpdo__eng *e, int rc, int64_t fail_node)
{
    if (e->xbroken) return e->xbroken; /* the message names the transport's failure */
    int st = rc == DPDO__REMOTE_FAIL ? 0 : rc;
    int64_t node = st ? fail_node : -1;
    char msg[DPDO__ERRMSG_LEN];
    memcpy(msg, e->err, sizeof msg);
    int xr = e->xt->agree(e->xu, &st, &node, msg, sizeof msg);
    if (xr) return xfail(e, xr, "agree");
    if (st) {
        msg[sizeof msg - 1] = 0;
        memcpy(e->err, msg, sizeof msg);
        return st;
    }
    if (rc == DPDO__REMOTE_FAIL) /* not reached: someone failed, so the agreement is not OK */
        return dpdo__eng_err(e, DPDO_E_STATE, -1, "processes disagree about the round's outcome");
    return DPDO_OK;
}

int dpdo__dist_init_gather(dpdo__eng *e)
{
    const dpdo__block *b = NULL;
    for (int32_t k = 0; k < e->nblk; k++)
        if (e->blk[k].name && strcmp(e->blk[k].name, e->vt->init_gather) == 0) b = &e->blk[k];
    if (!b || b->rows != e->n) return dpdo__eng_err(e, DPDO_E_STATE, -1, "init_gather: no block '%s'", e->vt->init_gather);
    int64_t row = b->cols * (int64_t)sizeof(double);
    for (int64_t i = 0; i < e->n; i++)
        e->xmsg[i] = (dpdo_message){.src = i, .ndst = 1, .dst = &coord_dst, .nseg = 1,
                                    .seg = {{b->cur + (size_t)i * (size_t)b->cols, row, row}}};
    int32_t anyf = 0;
    int xr = e->xt->exchange(e->xu, 0, e->xmsg, e->n, &anyf);
    if (xr) return xfail(e, xr, "exchange");
    return DPDO_OK;
}

int dpdo__dist_share_state(dpdo__eng *e)
{
    int xr;
    for (int32_t b = 0; b < e->nblk; b++) {
        dpdo__block *bk = &e->blk[b];
        int64_t row = bk->cols * (int64_t)sizeof(double);
        if (bk->rows == e->n) {
            if ((xr = e->xt->share(e->xu, bk->cur, row, e->n))) return xfail(e, xr, "share");
        } else if ((xr = e->xt->bcast(e->xu, e->proc[e->n], bk->cur, row * bk->rows))) {
            return xfail(e, xr, "bcast");
        }
    }
    return DPDO_OK;
}
