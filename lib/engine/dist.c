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
#include "dist_impl.h"
#include "engine_impl.h"
#include <string.h>

/* The state of a distributed run (e->dist). */
struct dpdo__dist {
    const dpdo_transport_type *xt;
    void *xu;
    int64_t n;     /* nodes */
    int64_t *proc; /* n + 1: process of each node, then of the coordinator */
    int64_t self;
    dpdo_message *msg;    /* message list of a stage (2n + 2) */
    unsigned char *baton; /* baton buffer */
    int64_t baton_cap;
    int64_t *lc; /* 2n: local charges (event + 1, count) per node */
    int broken;  /* the transport failed: its status (processes out of step) */
};

int dpdo__dist_hosts(const dpdo__dist *x, int64_t i)
{
    return x->proc[i >= 0 ? i : x->n] == x->self;
}

static int xfail(dpdo__eng *e, int rc, const char *what)
{
    dpdo__dist *x = e->dist;
    const char *m = x->xt->errmsg ? x->xt->errmsg(x->xu) : NULL;
    rc = rc < 0 ? rc : DPDO_E_CALLBACK; /* a transport must return DPDO_E_* codes */
    x->broken = rc;
    return dpdo__err(e->err, rc, "round %llu: transport '%s': %s: %s",
                     (unsigned long long)(e->plan.t), x->xt->name, what, m && *m ? m : "failed");
}

static void dist_free(dpdo__dist *x)
{
    if (!x) return;
    dpdo__free(x->proc);
    dpdo__free(x->msg);
    dpdo__free(x->lc);
    dpdo__free(x->baton);
    dpdo__free(x);
}

int dpdo__dist_attach(dpdo__eng *e, const dpdo_transport_type *t, void *user)
{
    int64_t n = e->n, self = -1;
    dpdo__dist *x = dpdo__calloc(1, sizeof *x);
    int64_t *proc = x ? (x->proc = dpdo__alloc_array((size_t)n + 1, sizeof *proc)) : NULL;
    if (x) x->msg = dpdo__alloc_array(2 * (size_t)n + 2, sizeof *x->msg);
    if (x && x->msg) x->lc = dpdo__calloc(2 * (size_t)n, sizeof *x->lc);
    int rc;
    if (!x || !proc || !x->msg || !x->lc) {
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
        dpdo__err(e->err, rc, "set_transport: '%s': layout gave process %lld for this process",
                  t->name, (long long)self);
        goto fail;
    }
    for (int64_t i = 0; i <= n; i++)
        if (proc[i] < 0) {
            dpdo__err(e->err, rc, "set_transport: '%s': layout gave process %lld for %s %lld",
                      t->name, (long long)proc[i], i < n ? "node" : "the coordinator",
                      (long long)i);
            goto fail;
        }
    /* a sequential stage hands the baton on in node order: each process must host one block */
    for (int64_t i = 1; i < n; i++)
        if (proc[i] != proc[i - 1])
            for (int64_t k = 0; k < i - 1; k++)
                if (proc[k] == proc[i]) {
                    dpdo__err(e->err, rc,
                              "set_transport: '%s': process %lld hosts nodes %lld and %lld but not "
                              "%lld: each "
                              "process must host one contiguous block of nodes",
                              t->name, (long long)proc[i], (long long)k, (long long)i,
                              (long long)(i - 1));
                    goto fail;
                }
    dpdo__dist_detach(e);
    x->xt = t;
    x->xu = user;
    x->n = n;
    x->self = self;
    e->dist = x;
    return DPDO_OK;
fail:
    dist_free(x);
    return rc;
}

void dpdo__dist_detach(dpdo__eng *e)
{
    dist_free(e->dist);
    e->dist = NULL;
}

static const int64_t coord_dst = DPDO_NODE_COORDINATOR;

/* The messages of one pattern, appended to x->msg; returns the new count. */
static int64_t pattern_messages(dpdo__eng *e, const dpdo__plan *p, const dpdo__xpat *pt, int64_t nm)
{
    dpdo_message *m = e->dist->msg;
    size_t d = (size_t)e->d, d8 = d * sizeof(double);
    if (!pt->buf) return nm;
    if (pt->kind == DPDO__PAT_BCAST) {
        m[nm++] = (dpdo_message){.src = DPDO_NODE_COORDINATOR,
                                 .ndst = p->ncomp,
                                 .dst = p->comp,
                                 .nseg = 1,
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
            x->seg[0] =
                (dpdo_segment){(double *)pt->buf + (size_t)j * (size_t)(pt->ld ? pt->ld : e->d),
                               (int64_t)d8, (int64_t)d8};
        }
        nm++;
    }
    return nm;
}

static int64_t baton_bytes(const dpdo__stage *st)
{
    int64_t b = 2 * (int64_t)sizeof(int64_t);
    for (int32_t k = 0; k < st->nbaton; k++)
        b += st->baton[k].bytes;
    return b;
}

static void baton_pack(dpdo__dist *x, const dpdo__stage *st, int64_t status, int64_t node)
{
    unsigned char *b = x->baton;
    memcpy(b, &status, 8), memcpy(b + 8, &node, 8);
    b += 16;
    for (int32_t k = 0; k < st->nbaton; k++) {
        memcpy(b, st->baton[k].p, (size_t)st->baton[k].bytes);
        b += st->baton[k].bytes;
    }
}

static int64_t baton_unpack(dpdo__dist *x, const dpdo__stage *st)
{
    const unsigned char *b = x->baton;
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
int dpdo__dist_seq_local(dpdo__eng *e, dpdo__plan *p, int32_t s, int *rc, int64_t *fail_node)
{
    dpdo__dist *x = e->dist;
    const dpdo__stage *st = &p->stage[s];
    int64_t need = baton_bytes(st);
    if (need >
        x->baton_cap) { /* first round of the run (the baton's size is fixed per algorithm) */
        unsigned char *nb = dpdo__realloc(x->baton, (size_t)need);
        if (!nb)
            return dpdo__err(e->err, DPDO_E_NOMEM, "round %llu: out of memory",
                             (unsigned long long)p->t);
        x->baton = nb;
        x->baton_cap = need;
    }
    int64_t prev = -1;
    int xr;
    for (int64_t c = 0; c < p->ncomp; c++) {
        int64_t i = p->comp[c], P = x->proc[i];
        if (P != prev) {
            if (prev >= 0 && x->self == prev) {
                baton_pack(x, st, *rc, *fail_node);
                if ((xr = x->xt->send(x->xu, P, x->baton, need))) return xfail(e, xr, "send");
            }
            if (prev >= 0 && x->self == P) {
                if ((xr = x->xt->recv(x->xu, prev, x->baton, need))) return xfail(e, xr, "recv");
                if (baton_unpack(x, st) && !*rc) *rc = DPDO__REMOTE_FAIL;
            }
            prev = P;
        }
        if (x->self == P && !*rc &&
            ((*rc = e->vt->local(e, e->priv, p, s, i)) || (*rc = p->charge_err)))
            *fail_node = i;
    }
    if (prev >= 0) {
        if (x->self == prev) baton_pack(x, st, *rc, *fail_node);
        if ((xr = x->xt->bcast(x->xu, prev, x->baton, need))) return xfail(e, xr, "bcast");
        if (x->self != prev && baton_unpack(x, st) && !*rc) *rc = DPDO__REMOTE_FAIL;
    }
    return DPDO_OK;
}

int dpdo__dist_exchange(dpdo__eng *e, dpdo__plan *p, int32_t s, int rc, int *stop)
{
    dpdo__dist *x = e->dist;
    const dpdo__stage *st = &p->stage[s];
    int xr;
    int64_t nm = 0;
    *stop = 0;
    for (int32_t k = 0; k < st->npat; k++)
        nm = pattern_messages(e, p, &st->pat[k], nm);
    int32_t anyf = 0;
    if ((xr = x->xt->exchange(x->xu, rc, x->msg, nm, &anyf))) return xfail(e, xr, "exchange");
    if (anyf) {
        *stop = 1;
        return DPDO_OK;
    }
    for (int32_t k = 0; k < st->npat; k++) {
        const dpdo__xpat *pt = &st->pat[k];
        if (pt->kvar && (xr = x->xt->share(x->xu, (void *)pt->kvar, 8, e->n)))
            return xfail(e, xr, "share");
        if (pt->kind == DPDO__PAT_COUNTS && pt->local_counts) {
            if ((xr = x->xt->sum(x->xu, (int64_t *)pt->cmsg, e->n + 1))) return xfail(e, xr, "sum");
            if ((xr = x->xt->sum(x->xu, (int64_t *)pt->cval, e->n + 1))) return xfail(e, xr, "sum");
        }
    }
    for (int32_t k = 0; k < st->nshare; k++)
        if ((xr = x->xt->share(x->xu, st->share[k].p, st->share[k].bytes, e->n)))
            return xfail(e, xr, "share");
    return DPDO_OK;
}

/* charges decided inside local(): one per node and round, summed over processes (node order);
 * collective, so a process whose combine() failed takes part too */
int dpdo__dist_local_charges(dpdo__eng *e, dpdo__plan *p, int64_t nplan, int *rc,
                             int64_t *fail_node)
{
    dpdo__dist *x = e->dist;
    int64_t n = e->n;
    int xr;
    memset(x->lc, 0, 2 * (size_t)n * sizeof *x->lc);
    for (int64_t c = nplan; c < p->ncharges && !*rc; c++) {
        const dpdo__charge *ch = &p->charge[c];
        if (x->lc[2 * ch->node]) {
            *rc = dpdo__eng_err(e, DPDO_E_STATE, ch->node,
                                "two charges decided in one round (internal)");
            *fail_node = ch->node;
            break;
        }
        x->lc[2 * ch->node] = ch->ev + 1;
        x->lc[2 * ch->node + 1] = ch->count;
    }
    if (*rc) memset(x->lc, 0, 2 * (size_t)n * sizeof *x->lc);
    if ((xr = x->xt->sum(x->xu, x->lc, 2 * n))) return xfail(e, xr, "sum");
    p->ncharges = nplan;
    for (int64_t i = 0; i < n; i++)
        if (x->lc[2 * i])
            p->charge[p->ncharges++] =
                (dpdo__charge){(int32_t)(x->lc[2 * i] - 1), i, x->lc[2 * i + 1]};
    return DPDO_OK;
}

int dpdo__dist_agree(dpdo__eng *e, int rc, int64_t fail_node)
{
    dpdo__dist *x = e->dist;
    if (x->broken) return x->broken; /* the message names the transport's failure */
    int st = rc == DPDO__REMOTE_FAIL ? 0 : rc;
    int64_t node = st ? fail_node : -1;
    char msg[DPDO__ERRMSG_LEN];
    memcpy(msg, e->err, sizeof msg);
    int xr = x->xt->agree(x->xu, &st, &node, msg, sizeof msg);
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
    dpdo__dist *x = e->dist;
    const dpdo__block *b = dpdo__eng_find_block(e, e->vt->init_gather);
    if (!b || b->rows != e->n)
        return dpdo__eng_err(e, DPDO_E_STATE, -1, "init_gather: no block '%s'", e->vt->init_gather);
    int64_t row = b->cols * (int64_t)sizeof(double);
    for (int64_t i = 0; i < e->n; i++)
        x->msg[i] = (dpdo_message){.src = i,
                                   .ndst = 1,
                                   .dst = &coord_dst,
                                   .nseg = 1,
                                   .seg = {{b->cur + (size_t)i * (size_t)b->cols, row, row}}};
    int32_t anyf = 0;
    int xr = x->xt->exchange(x->xu, 0, x->msg, e->n, &anyf);
    if (xr) return xfail(e, xr, "exchange");
    return DPDO_OK;
}

int dpdo__dist_share_state(dpdo__eng *e)
{
    dpdo__dist *x = e->dist;
    int xr;
    for (int32_t b = 0; b < e->nblk; b++) {
        dpdo__block *bk = &e->blk[b];
        int64_t row = bk->cols * (int64_t)sizeof(double);
        if (bk->rows == e->n) {
            if ((xr = x->xt->share(x->xu, bk->cur, row, e->n))) return xfail(e, xr, "share");
        } else if ((xr = x->xt->bcast(x->xu, x->proc[e->n], bk->cur, row * bk->rows))) {
            return xfail(e, xr, "bcast");
        }
    }
    return DPDO_OK;
}

int64_t dpdo__dist_self(const dpdo__eng *e)
{
    return e->dist->self;
}
int64_t dpdo__dist_proc(const dpdo__eng *e, int64_t i)
{
    return e->dist->proc[i];
}

/* The transport failed outside a round (a checkpoint): processes out of step, as in xfail. */
static int cfail(dpdo__eng *e, int rc, const char *what)
{
    dpdo__dist *x = e->dist;
    const char *m = x->xt->errmsg ? x->xt->errmsg(x->xu) : NULL;
    rc = rc < 0 ? rc : DPDO_E_CALLBACK;
    x->broken = rc;
    return dpdo__err(e->err, rc, "checkpoint: transport '%s': %s: %s", x->xt->name, what,
                     m && *m ? m : "failed");
}

int dpdo__dist_sum(dpdo__eng *e, int64_t *v, int64_t count)
{
    dpdo__dist *x = e->dist;
    if (x->broken) return x->broken;
    int xr = x->xt->sum(x->xu, v, count);
    return xr ? cfail(e, xr, "sum") : DPDO_OK;
}

int dpdo__dist_count(dpdo__eng *e, int64_t *nproc)
{
    int64_t v = 1;
    int rc = dpdo__dist_sum(e, &v, 1);
    *nproc = v;
    return rc;
}
