/* SPDX-License-Identifier: BSD-3-Clause */
/* libdpdo_mpi: the MPI transport of dpdo/transport.h. Uses only the public
 * libdpdo API. Every MPI call is non-blocking and waited for with a deadline,
 * so a vanished peer gives DPDO_E_IO instead of a hang. */
#define _POSIX_C_SOURCE 200809L
#include "dpdo/mpi.h"
#include "../core/options_impl.h"
#include "dpdo/status.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#define MSG_LEN 256
#define TAG_BATON 4711

struct dpdo_mpi {
    MPI_Comm comm;  /* dup of the user's communicator */
    MPI_Comm graph; /* distributed graph of ranks (MPI_COMM_NULL: none) */
    int rank, size, root, broken;
    double timeout, spin;
    int64_t n;
    int64_t *first; /* size + 1 */
    /* rank graph */
    int nnb;            /* neighbours (in = out, symmetric) */
    int *nb;            /* their ranks, ascending */
    int *nbpos;         /* size: index in nb, or -1 */
    int *all;           /* size: 0, 1, ..., size-1 (the peers of world collectives) */
    unsigned char *adj; /* size x size: 1 when ranks q and r are graph neighbours (every rank
                           knows the whole rank graph, so all decide alike without a message) */
    /* exchange buffers (grown on demand, kept) */
    unsigned char *sbuf, *rbuf;
    size_t scap, rcap;
    int64_t *scnt, *rcnt;   /* size: bytes to / from each rank */
    int *sc, *sd, *rc, *rd; /* size: MPI counts and displacements */
    int *stamp;             /* size: per-message dedup of receiving ranks */
    int64_t *proc_of;       /* n + 1 */
    int *gc, *gd;           /* size: allgatherv counts/displacements (bytes) */
    /* traffic */
    int64_t t_msgs, t_bytes, t_ctl;
    char msg[MSG_LEN];
};

static int fail(dpdo_mpi *m, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->msg, sizeof m->msg, fmt, ap);
    va_end(ap);
    return status;
}

/* Wait for requests with the deadline; a failure or a timeout breaks the handle.
 *
 * Polls without pausing for m->spin seconds (a peer on a core of its own answers within
 * microseconds), then sleeps between polls. When the ranks share cores with each other or with
 * other processes (docs/performance.md), a rank that keeps spinning or yielding while its peer
 * computes takes CPU time the peer needs, and both end up waiting for time slices; a sleeping rank
 * leaves the core. Measured in one run on the shared 2-core machine (docs/performance.md, MPI
 * section): 2-rank DP-DDA kept 0.25x of one process with the old loop (yield from 5 us, sleep after
 * 20 ms), 0.4x when yielding for 200 us before sleeping, 0.77x sleeping right after the spin. */
static int wait_all(dpdo_mpi *m, int nreq, MPI_Request *req, const char *what)
{
    double t0 = MPI_Wtime();
    for (;;) {
        /* MPI_Test on each request, not MPI_Testall: MPICH raises a failed request of
         * MPI_Testall on MPI_COMM_WORLD's error handler (fatal by default: a peer killed on
         * another host aborted this rank with "Fatal error in internal_Testall",
         * tests/mpi/netns.sh), MPI_Test on the request's communicator, ours, MPI_ERRORS_RETURN.
         * A completed request becomes MPI_REQUEST_NULL, which tests as done. */
        int done = 1, rc = MPI_SUCCESS;
        for (int k = 0; k < nreq && rc == MPI_SUCCESS; k++) {
            int flag = 0;
            rc = MPI_Test(&req[k], &flag, MPI_STATUS_IGNORE);
            done &= flag;
        }
        if (rc != MPI_SUCCESS) {
            char es[MPI_MAX_ERROR_STRING];
            int len = 0;
            MPI_Error_string(rc, es, &len);
            m->broken = 1;
            return fail(m, DPDO_E_IO, "rank %d: %s: MPI error: %s", m->rank, what, es);
        }
        if (done) return DPDO_OK;
        if (MPI_Wtime() - t0 > m->timeout) {
            m->broken = 1;
            return fail(m, DPDO_E_IO,
                        "rank %d: %s: no answer from a peer within %g s (failed or vanished?)",
                        m->rank, what, m->timeout);
        }
        double waited = MPI_Wtime() - t0;
        if (waited >= m->spin) {
            /* 1 us asked, 0.5 ms once the wait is long. The kernel's timer slack (50 us by
             * default) would stretch the short nap to ~55 us, longer than a round: the peer then
             * waits for this rank too, and on a quiet machine both end up napping by turns (0.3x
             * of one process in some runs). The calling thread's slack is 1 us for the nap and
             * restored after it. */
            struct timespec ts = {0, waited > 2e-2 ? 500000 : 1000};
#if defined(__linux__) && defined(PR_SET_TIMERSLACK)
            int slack = waited > 2e-2 ? -1 : prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
            if (slack > 1000) (void)prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
            nanosleep(&ts, NULL);
            if (slack > 1000) (void)prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
#else
            nanosleep(&ts, NULL);
#endif
        }
    }
}

#define CHECK_BROKEN(m)                                                                            \
    do {                                                                                           \
        if ((m)->broken) return DPDO_E_IO; /* the first failure's message stays */                 \
    } while (0)

static int mpi_call(dpdo_mpi *m, int rc, const char *what)
{
    if (rc == MPI_SUCCESS) return DPDO_OK;
    char es[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, es, &len);
    m->broken = 1;
    return fail(m, DPDO_E_IO, "rank %d: %s: %s", m->rank, what, es);
}

static int grow(unsigned char **p, size_t *cap, size_t need)
{
    if (need <= *cap) return DPDO_OK;
    size_t nc = *cap ? *cap : 4096;
    while (nc < need)
        nc *= 2;
    unsigned char *q = realloc(*p, nc);
    if (!q) return DPDO_E_NOMEM;
    *p = q;
    *cap = nc;
    return DPDO_OK;
}

/* ---- the transport callbacks ------------------------------------------------------------------
 */

static int rank_of(const dpdo_mpi *m, int64_t node)
{
    return (int)m->proc_of[node >= 0 ? node : m->n];
}

static int t_layout(void *user, int64_t n, int64_t *proc, int64_t *self)
{
    dpdo_mpi *m = user;
    if (n != m->n)
        return fail(m, DPDO_E_INVAL, "the algorithm has %lld nodes, the handle %lld", (long long)n,
                    (long long)m->n);
    memcpy(proc, m->proc_of, (size_t)(n + 1) * sizeof *proc);
    *self = m->rank;
    return DPDO_OK;
}

/* 1 when message k goes from rank q to rank r (q != r). */
static int goes(const dpdo_mpi *m, const dpdo_message *x, int q, int r)
{
    if (rank_of(m, x->src) != q || q == r) return 0;
    for (int64_t k = 0; k < x->ndst; k++)
        if (rank_of(m, x->dst[k]) == r) return 1;
    return 0;
}

static int64_t msg_bytes(const dpdo_message *x)
{
    int64_t b = 0;
    for (int32_t s = 0; s < x->nseg; s++)
        b += 8 + x->seg[s].bytes;
    return b;
}

/* One stage's messages. Sync points: with messages of fixed size (dense rows) one - the status
 * reduction and the data move together; otherwise two - the status with the sizes, then the data.
 * A rank whose computation failed still sends its (meaningless) fixed-size rows: when anybody
 * failed, nothing received is used. */
static int t_exchange(void *user, int status, const dpdo_message *msg, int64_t nmsg,
                      int32_t *any_failed)
{
    dpdo_mpi *m = user;
    CHECK_BROKEN(m);
    int P = m->size, me = m->rank, rc;
    MPI_Request req[2];
    if (P == 1) { /* one rank: nothing crosses a wire */
        *any_failed = status != 0;
        return DPDO_OK;
    }
    /* 1. bytes per receiving rank; is every pair of ranks in the list a graph edge? (every rank
     * sees the same list and knows the whole rank graph: all decide alike) */
    int64_t lmsgs = 0, lbytes = 0;
    /* fixed-size messages (dense rows): every rank can compute what it will receive, so the
     * size exchange is skipped (the same decision on every rank: it depends on the list only) */
    int fixed = 1;
    memset(m->scnt, 0, (size_t)P * sizeof *m->scnt);
    int use_graph = m->graph != MPI_COMM_NULL;
    for (int64_t k = 0; k < nmsg; k++) {
        const dpdo_message *x = &msg[k];
        int q = rank_of(m, x->src);
        if (x->nseg != 1 || x->seg[0].bytes != x->seg[0].cap) fixed = 0;
        for (int64_t j = 0; j < x->ndst && use_graph; j++) {
            int r = rank_of(m, x->dst[j]);
            if (r != q && !m->adj[(size_t)q * (size_t)P + (size_t)r]) use_graph = 0;
        }
        if (q != me) continue;
        int64_t b = msg_bytes(x);
        for (int r = 0; r < P; r++)
            m->stamp[r] = 0;
        for (int64_t j = 0; j < x->ndst; j++) {
            int r = rank_of(m, x->dst[j]);
            if (r != me && !m->stamp[r]) {
                m->stamp[r] = 1;
                m->scnt[r] += b;
                lmsgs++;
                lbytes += b;
            }
        }
    }
    if (status && !fixed)
        memset(m->scnt, 0, (size_t)P * sizeof *m->scnt); /* its sizes may be garbage */
    /* fixed sizes and every other rank a peer of this exchange: the status travels as the first
     * 8 bytes of the data to each peer, and the separate all-reduce of the statuses (one
     * collective per stage) is left out; every rank still sees every rank's status */
    const int fold = fixed && (!use_graph || m->nnb == P - 1);
    const int64_t hdr = fold ? 8 : 0;
    /* 2. pack, in message order, per receiving rank (a failed rank's fixed rows too, see above) */
    int64_t tot = 0;
    for (int r = 0; r < P; r++) {
        if (m->scnt[r] > 2147483647LL - 8)
            return fail(m, DPDO_E_UNSUPPORTED, "a stage sends over 2 GiB to rank %d", r);
        tot += m->scnt[r] + (r != me ? hdr : 0);
    }
    if (grow(&m->sbuf, &m->scap, (size_t)tot + 1)) return fail(m, DPDO_E_NOMEM, "out of memory");
    int64_t off = 0, soff[P];
    int64_t *pos = m->rcnt; /* scratch: pack position per rank */
    const int64_t mine = status != 0;
    for (int r = 0; r < P; r++) {
        soff[r] = off;
        if (r != me && fold) memcpy(m->sbuf + off, &mine, 8); /* the status first */
        pos[r] = off + (r != me ? hdr : 0);
        off += m->scnt[r] + (r != me ? hdr : 0);
    }
    for (int64_t k = 0; k < nmsg && (fixed || !status); k++) {
        const dpdo_message *x = &msg[k];
        if (rank_of(m, x->src) != me) continue;
        for (int r = 0; r < P; r++)
            m->stamp[r] = 0;
        for (int64_t j = 0; j < x->ndst; j++) {
            int r = rank_of(m, x->dst[j]);
            if (r == me || m->stamp[r]) continue;
            m->stamp[r] = 1;
            unsigned char *w = m->sbuf + pos[r];
            for (int32_t s = 0; s < x->nseg; s++) {
                memcpy(w, &x->seg[s].bytes, 8);
                memcpy(w + 8, x->seg[s].data, (size_t)x->seg[s].bytes);
                w += 8 + x->seg[s].bytes;
            }
            pos[r] = w - m->sbuf;
        }
    }
    /* 3. with the graph's neighbours, or with every rank: sizes (computed locally for fixed-size
     * messages, else exchanged together with the status), then the data (together with the
     * status when the sizes were known) */
    int np = use_graph ? m->nnb : P;
    const int *peer = use_graph ? m->nb : m->all;
    MPI_Comm comm = use_graph ? m->graph : m->comm;
    int64_t sz_s[np > 0 ? np : 1], sz_r[np > 0 ? np : 1];
    for (int k = 0; k < np; k++)
        sz_s[k] = m->scnt[peer[k]] + (peer[k] != me ? hdr : 0);
    int64_t all = 0;
    req[0] = MPI_REQUEST_NULL;
    if (!fold &&
        (rc = mpi_call(m, MPI_Iallreduce(&mine, &all, 1, MPI_INT64_T, MPI_MAX, m->comm, &req[0]),
                       "exchange")))
        return rc;
    m->t_ctl += 8;
    if (fixed) {
        int64_t inc[P];
        for (int r = 0; r < P; r++)
            inc[r] = 0;
        for (int64_t k = 0; k < nmsg; k++) {
            int q = rank_of(m, msg[k].src);
            if (goes(m, &msg[k], q, me)) inc[q] += msg_bytes(&msg[k]);
        }
        for (int k = 0; k < np; k++)
            sz_r[k] = inc[peer[k]] + (peer[k] != me ? hdr : 0);
    } else {
        rc = use_graph
                 ? MPI_Ineighbor_alltoall(sz_s, 1, MPI_INT64_T, sz_r, 1, MPI_INT64_T, comm, &req[1])
                 : MPI_Ialltoall(sz_s, 1, MPI_INT64_T, sz_r, 1, MPI_INT64_T, comm, &req[1]);
        if ((rc = mpi_call(m, rc, "exchange")) ||
            (rc = wait_all(m, 2, req, "exchange (status and sizes)")))
            return rc;
        m->t_ctl += 8 * (use_graph ? np : P - 1);
        *any_failed = all != 0;
        if (all) return DPDO_OK;
    }
    int64_t ro = 0;
    for (int k = 0; k < np; k++) {
        m->sc[k] = (int)sz_s[k];
        m->sd[k] = (int)soff[peer[k]];
        m->rc[k] = (int)sz_r[k];
        m->rd[k] = (int)ro;
        ro += sz_r[k];
    }
    if (ro > 2147483647LL || grow(&m->rbuf, &m->rcap, (size_t)ro + 1)) {
        if (fixed) wait_all(m, 1, req, "exchange (status)"); /* leave no request behind */
        return fail(m, ro > 2147483647LL ? DPDO_E_UNSUPPORTED : DPDO_E_NOMEM,
                    ro > 2147483647LL ? "a stage receives over 2 GiB" : "out of memory");
    }
    MPI_Request *dreq = fixed ? &req[1] : &req[0];
    rc = use_graph ? MPI_Ineighbor_alltoallv(m->sbuf, m->sc, m->sd, MPI_BYTE, m->rbuf, m->rc, m->rd,
                                             MPI_BYTE, comm, dreq)
                   : MPI_Ialltoallv(m->sbuf, m->sc, m->sd, MPI_BYTE, m->rbuf, m->rc, m->rd,
                                    MPI_BYTE, comm, dreq);
    if ((rc = mpi_call(m, rc, "exchange"))) return rc;
    if ((rc = fixed ? wait_all(m, 2, req, "exchange (status and data)")
                    : wait_all(m, 1, req, "exchange (data)")))
        return rc;
    if (fold) { /* every rank's status: its own and the peers' first 8 bytes */
        all = mine;
        for (int k = 0; k < np; k++) {
            if (peer[k] == me) continue;
            int64_t st;
            memcpy(&st, m->rbuf + m->rd[k], 8);
            all = st > all ? st : all;
        }
    }
    *any_failed = all != 0;
    if (all) return DPDO_OK;
    m->t_msgs += lmsgs;
    m->t_bytes += lbytes;
    for (int r = 0; r < P; r++)
        m->rcnt[r] = -1; /* where each sending rank's bytes start */
    for (int k = 0; k < np; k++)
        m->rcnt[peer[k]] = m->rd[k] + (peer[k] != me ? hdr : 0);
    /* 4. unpack, in message order, from each sending rank */
    for (int64_t k = 0; k < nmsg; k++) {
        const dpdo_message *x = &msg[k];
        int q = rank_of(m, x->src);
        if (!goes(m, x, q, me)) continue;
        if (m->rcnt[q] < 0)
            return fail(m, DPDO_E_STATE, "rank %d: a message from rank %d off the graph", me, q);
        const unsigned char *rp = m->rbuf + m->rcnt[q];
        for (int32_t s = 0; s < x->nseg; s++) {
            int64_t b;
            memcpy(&b, rp, 8);
            if (b < 0 || b > x->seg[s].cap) {
                m->broken = 1;
                return fail(m, DPDO_E_FORMAT,
                            "rank %d: a piece of %lld bytes from rank %d exceeds its room (%lld)",
                            me, (long long)b, q, (long long)x->seg[s].cap);
            }
            memcpy(x->seg[s].data, rp + 8, (size_t)b);
            rp += 8 + b;
        }
        m->rcnt[q] = rp - m->rbuf;
    }
    return DPDO_OK;
}

static int t_agree(void *user, int *status, int64_t *node, char *msg, size_t len)
{
    dpdo_mpi *m = user;
    CHECK_BROKEN(m);
    int P = m->size, rc;
    MPI_Request req;
    if (P == 1) { /* one rank: its outcome is the outcome */
        if (!*status) *node = -1;
        return DPDO_OK;
    }
    int64_t mine[2] = {*status, *status ? *node : 0}, all[2 * P];
    if ((rc = mpi_call(m, MPI_Iallgather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, m->comm, &req),
                       "agree")))
        return rc;
    if ((rc = wait_all(m, 1, &req, "agree"))) return rc;
    m->t_ctl += 16;
    int who = -1;
    for (int r = 0; r < P; r++)
        if (all[2 * r] && (who < 0 || all[2 * r + 1] < all[2 * who + 1])) who = r;
    if (who < 0) {
        *status = 0;
        *node = -1;
        return DPDO_OK;
    }
    *status = (int)all[2 * who];
    *node = all[2 * who + 1];
    if (len > 0) {
        if ((rc = mpi_call(m, MPI_Ibcast(msg, (int)len, MPI_CHAR, who, m->comm, &req), "agree")))
            return rc;
        if ((rc = wait_all(m, 1, &req, "agree (message)"))) return rc;
        msg[len - 1] = 0;
        if (m->rank == who) m->t_ctl += (int64_t)len * (P - 1);
    }
    return DPDO_OK;
}

static int t_share(void *user, void *base, int64_t row, int64_t n)
{
    dpdo_mpi *m = user;
    CHECK_BROKEN(m);
    if (n != m->n)
        return fail(m, DPDO_E_INVAL, "share of %lld rows, the run has %lld", (long long)n,
                    (long long)m->n);
    int P = m->size, rc;
    if (P == 1) return DPDO_OK;
    for (int r = 0; r < P; r++) {
        int64_t c = (m->first[r + 1] - m->first[r]) * row, d = m->first[r] * row;
        if (c > 2147483647LL || d > 2147483647LL)
            return fail(m, DPDO_E_UNSUPPORTED, "a share of over 2 GiB");
        m->gc[r] = (int)c;
        m->gd[r] = (int)d;
    }
    MPI_Request req;
    if ((rc = mpi_call(m,
                       MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_BYTE, base, m->gc, m->gd, MPI_BYTE,
                                       m->comm, &req),
                       "share")))
        return rc;
    if ((rc = wait_all(m, 1, &req, "share"))) return rc;
    m->t_ctl += (int64_t)m->gc[m->rank] * (P - 1);
    return DPDO_OK;
}

static int t_sum(void *user, int64_t *v, int64_t count)
{
    dpdo_mpi *m = user;
    CHECK_BROKEN(m);
    if (count > 2147483647LL) return fail(m, DPDO_E_UNSUPPORTED, "a sum of over 2^31 values");
    if (m->size == 1) return DPDO_OK;
    MPI_Request req;
    int rc;
    if ((rc = mpi_call(
             m, MPI_Iallreduce(MPI_IN_PLACE, v, (int)count, MPI_INT64_T, MPI_SUM, m->comm, &req),
             "sum")))
        return rc;
    if ((rc = wait_all(m, 1, &req, "sum"))) return rc;
    m->t_ctl += 8 * count;
    return DPDO_OK;
}

static int t_bcast(void *user, int64_t from, void *buf, int64_t bytes)
{
    dpdo_mpi *m = user;
    CHECK_BROKEN(m);
    if (bytes > 2147483647LL) return fail(m, DPDO_E_UNSUPPORTED, "a broadcast of over 2 GiB");
    if (m->size == 1) return DPDO_OK;
    MPI_Request req;
    int rc;
    if ((rc =
             mpi_call(m, MPI_Ibcast(buf, (int)bytes, MPI_BYTE, (int)from, m->comm, &req), "bcast")))
        return rc;
    if ((rc = wait_all(m, 1, &req, "bcast"))) return rc;
    if (m->rank == from) m->t_ctl += bytes * (m->size - 1);
    return DPDO_OK;
}

static int t_send(void *user, int64_t to, const void *buf, int64_t bytes)
{
    dpdo_mpi *m = user;
    CHECK_BROKEN(m);
    MPI_Request req;
    int rc;
    if ((rc = mpi_call(m, MPI_Isend(buf, (int)bytes, MPI_BYTE, (int)to, TAG_BATON, m->comm, &req),
                       "send")))
        return rc;
    if ((rc = wait_all(m, 1, &req, "send"))) return rc;
    m->t_msgs++;
    m->t_bytes += bytes;
    return DPDO_OK;
}

static int t_recv(void *user, int64_t from, void *buf, int64_t bytes)
{
    dpdo_mpi *m = user;
    CHECK_BROKEN(m);
    MPI_Request req;
    int rc;
    if ((rc = mpi_call(m, MPI_Irecv(buf, (int)bytes, MPI_BYTE, (int)from, TAG_BATON, m->comm, &req),
                       "recv")))
        return rc;
    return wait_all(m, 1, &req, "recv");
}

static const char *t_errmsg(void *user)
{
    return ((dpdo_mpi *)user)->msg;
}

static const dpdo_transport_type mpi_type = {
    .errmsg = t_errmsg,
    .struct_size = sizeof(dpdo_transport_type),
    .name = "mpi",
    .layout = t_layout,
    .exchange = t_exchange,
    .agree = t_agree,
    .share = t_share,
    .sum = t_sum,
    .bcast = t_bcast,
    .send = t_send,
    .recv = t_recv,
};

/* ---- the handle ------------------------------------------------------------------------------ */

DPDO_API int dpdo_mpi_options_init(dpdo_mpi_options *o, size_t struct_size)
{
    dpdo_mpi_options d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.root = 0;
    d.timeout = 60;
    d.spin = 5e-5;
    return dpdo__options_init(o, struct_size, &d, sizeof d);
}

DPDO_API int dpdo_mpi_create(dpdo_mpi **out, MPI_Comm comm, int64_t n, const int64_t *first,
                             const dpdo_mpi_options *opts)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    dpdo_mpi_options o;
    dpdo_mpi_options_init(&o, sizeof o);
    int rc = dpdo__options_accept(&o, sizeof o, offsetof(dpdo_mpi_options, reserved), opts,
                                  "dpdo_mpi_options", NULL);
    if (rc) return rc;
    if (o.reserved0) return DPDO_E_INVAL;
    int size, rank;
    if (MPI_Comm_size(comm, &size) != MPI_SUCCESS || MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return DPDO_E_IO;
    if (n < 1 || n >= (INT64_C(1) << 31) || !(o.timeout > 0) || !(o.spin >= 0) || o.root < 0 ||
        o.root >= size)
        return DPDO_E_INVAL;
    if (first) {
        if (first[0] != 0 || first[size] != n) return DPDO_E_INVAL;
        for (int r = 0; r < size; r++)
            if (first[r + 1] < first[r]) return DPDO_E_INVAL;
    }
    dpdo_mpi *m = calloc(1, sizeof *m);
    if (!m) return DPDO_E_NOMEM;
    m->graph = MPI_COMM_NULL;
    m->comm = MPI_COMM_NULL;
    size_t P = (size_t)size;
    m->first = malloc((P + 1) * sizeof *m->first);
    m->nbpos = malloc(P * sizeof *m->nbpos);
    m->nb = malloc(P * sizeof *m->nb);
    m->all = malloc(P * sizeof *m->all);
    m->scnt = calloc(P, sizeof *m->scnt);
    m->rcnt = calloc(P, sizeof *m->rcnt);
    m->sc = malloc(P * sizeof(int)), m->sd = malloc(P * sizeof(int));
    m->rc = malloc(P * sizeof(int)), m->rd = malloc(P * sizeof(int));
    m->gc = malloc(P * sizeof(int)), m->gd = malloc(P * sizeof(int));
    m->stamp = malloc(P * sizeof(int));
    m->adj = calloc(P * P, 1);
    m->proc_of = malloc(((size_t)n + 1) * sizeof *m->proc_of);
    if (!m->first || !m->nbpos || !m->nb || !m->all || !m->scnt || !m->rcnt || !m->sc || !m->sd ||
        !m->rc || !m->rd || !m->gc || !m->gd || !m->stamp || !m->proc_of || !m->adj) {
        dpdo_mpi_destroy(m);
        return DPDO_E_NOMEM;
    }
    m->rank = rank, m->size = size, m->root = o.root, m->timeout = o.timeout, m->spin = o.spin,
    m->n = n;
    for (int r = 0; r <= size; r++)
        m->first[r] = first ? first[r] : (int64_t)r * (n / size) + (r < n % size ? r : n % size);
    for (int r = 0; r < size; r++)
        for (int64_t i = m->first[r]; i < m->first[r + 1]; i++)
            m->proc_of[i] = r;
    m->proc_of[n] = o.root;
    for (int r = 0; r < size; r++)
        m->nbpos[r] = -1, m->all[r] = r;
    if (MPI_Comm_dup(comm, &m->comm) != MPI_SUCCESS) {
        m->comm = MPI_COMM_NULL;
        dpdo_mpi_destroy(m);
        return DPDO_E_IO;
    }
    MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
    *out = m;
    return DPDO_OK;
}

DPDO_API void dpdo_mpi_destroy(dpdo_mpi *m)
{
    if (!m) return;
    if (m->graph != MPI_COMM_NULL) MPI_Comm_free(&m->graph);
    if (m->comm != MPI_COMM_NULL) MPI_Comm_free(&m->comm);
    free(m->first), free(m->nbpos), free(m->nb), free(m->all), free(m->scnt), free(m->rcnt);
    free(m->sc), free(m->sd), free(m->rc), free(m->rd), free(m->gc), free(m->gd), free(m->stamp),
        free(m->adj);
    free(m->proc_of), free(m->sbuf), free(m->rbuf);
    free(m);
}

DPDO_API const char *dpdo_mpi_errmsg(const dpdo_mpi *m)
{
    return m ? m->msg : "dpdo_mpi_errmsg: m is NULL";
}
DPDO_API int dpdo_mpi_rank(const dpdo_mpi *m)
{
    return m ? m->rank : -1;
}
DPDO_API int dpdo_mpi_size(const dpdo_mpi *m)
{
    return m ? m->size : -1;
}
DPDO_API int64_t dpdo_mpi_first_node(const dpdo_mpi *m)
{
    return m ? m->first[m->rank] : 0;
}
DPDO_API int64_t dpdo_mpi_end_node(const dpdo_mpi *m)
{
    return m ? m->first[m->rank + 1] : 0;
}

DPDO_API int dpdo_mpi_traffic(const dpdo_mpi *m, int64_t *messages, int64_t *bytes,
                              int64_t *control_bytes)
{
    if (!m) return DPDO_E_INVAL;
    if (messages) *messages = m->t_msgs;
    if (bytes) *bytes = m->t_bytes;
    if (control_bytes) *control_bytes = m->t_ctl;
    return DPDO_OK;
}

DPDO_API int dpdo_mpi_attach(dpdo_mpi *m, dpdo_algorithm *alg, dpdo_network *net)
{
    if (!m || !alg) return DPDO_E_INVAL;
    CHECK_BROKEN(m);
    if (dpdo_algorithm_nodes(alg) != m->n)
        return fail(m, DPDO_E_INVAL, "the algorithm has %lld nodes, the handle %lld",
                    (long long)dpdo_algorithm_nodes(alg), (long long)m->n);
    if (net && dpdo_network_nodes(net) != m->n)
        return fail(m, DPDO_E_INVAL, "the network has %lld nodes, the handle %lld",
                    (long long)dpdo_network_nodes(net), (long long)m->n);
    /* the rank graph: ranks hosting adjacent nodes (symmetric), built once */
    if (net && m->graph == MPI_COMM_NULL) {
        int P = m->size, me = m->rank;
        int *adj = calloc((size_t)P, sizeof *adj);
        int64_t cap = dpdo_network_max_degree(net) + 1;
        int64_t *nb = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *nb);
        if (!adj || !nb) {
            free(adj), free(nb);
            return fail(m, DPDO_E_NOMEM, "out of memory");
        }
        for (int64_t i = 0; i < m->n; i++) {
            int64_t cnt = 0;
            if (dpdo_network_neighbors(net, i, nb, cap, &cnt) != DPDO_OK) {
                free(adj), free(nb);
                return fail(m, DPDO_E_INVAL, "network: %s", dpdo_network_errmsg(net));
            }
            int q = (int)m->proc_of[i];
            for (int64_t k = 0; k < cnt; k++) {
                int r = (int)m->proc_of[nb[k]];
                if (r == q) continue;
                m->adj[(size_t)q * (size_t)P + (size_t)r] =
                    m->adj[(size_t)r * (size_t)P + (size_t)q] = 1;
                if (q == me) adj[r] = 1;
                if (r == me) adj[q] = 1;
            }
        }
        free(nb);
        m->nnb = 0;
        for (int r = 0; r < P; r++)
            if (adj[r]) {
                m->nbpos[r] = m->nnb;
                m->nb[m->nnb++] = r;
            }
        free(adj);
        int rc = MPI_Dist_graph_create_adjacent(m->comm, m->nnb, m->nb, MPI_UNWEIGHTED, m->nnb,
                                                m->nb, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &m->graph);
        if (rc != MPI_SUCCESS) {
            m->graph = MPI_COMM_NULL;
            return mpi_call(m, rc, "MPI_Dist_graph_create_adjacent");
        }
        MPI_Comm_set_errhandler(m->graph, MPI_ERRORS_RETURN);
    }
    int rc = dpdo_algorithm_set_transport(alg, &mpi_type, m);
    if (rc) return fail(m, rc, "attach: %s", dpdo_algorithm_errmsg(alg));
    return DPDO_OK;
}
