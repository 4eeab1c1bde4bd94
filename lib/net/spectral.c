/* SPDX-License-Identifier: BSD-3-Clause */
/* Spectral quantities of W: all eigenvalues of the dense symmetric W from
 * LAPACK dsyevd (eigenvalues only: tridiagonal reduction + root-free QR,
 * O(n^3)), cached in the handle until W changes. */
#include "net_impl.h"
#include <math.h>
#include <string.h>

/* Reference LAPACK (Fortran, 32-bit integers on Debian). Declared here, never
 * in a public header. The trailing size_t is the hidden length of the
 * character arguments (gfortran ABI). */
extern void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
                    double *w, double *work, const int *lwork, int *iwork, const int *liwork,
                    int *info, size_t jobz_len, size_t uplo_len);

#define SPEC_NMAX 16384

static int spectrum(struct dpdo_network *net)
{
    if (net->n == 0) return dpdo__err(net->errmsg, DPDO_E_INVAL, "spectrum: the network is empty");
    if (net->spec_ok) return DPDO_OK;
    int64_t n = net->n;
    if (n > SPEC_NMAX)
        return dpdo__err(net->errmsg, DPDO_E_INVAL,
                         "spectrum: n = %lld exceeds %d (dense O(n^2) memory, O(n^3) time)",
                         (long long)n, SPEC_NMAX);
    double *eig = dpdo__alloc_array((size_t)n, sizeof(double));
    if (!eig) return dpdo__err(net->errmsg, DPDO_E_NOMEM, "spectrum: out of memory");
    if (n == 1) {
        eig[0] = net->val[0];
        net->eig = eig;
        net->slem = 0.0;
        net->spec_ok = 1;
        return DPDO_OK;
    }
    size_t N = (size_t)n;
    double *a = dpdo__calloc(N * N, sizeof(double));
    double *wv = dpdo__alloc_array(N, sizeof(double));
    if (!a || !wv) {
        dpdo__free(a);
        dpdo__free(wv);
        dpdo__free(eig);
        return dpdo__err(net->errmsg, DPDO_E_NOMEM,
                         "spectrum: out of memory for a %lld x %lld matrix", (long long)n,
                         (long long)n);
    }
    /* Row-major W; LAPACK reads column-major, so with uplo = 'L' it reads the
     * row-major upper triangle, w_ij for i <= j. */
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = net->rowptr[i]; k < net->rowptr[i + 1]; k++)
            a[(size_t)i * N + (size_t)net->col[k]] = net->val[k];
    int in = (int)n, info = 0, lwork = -1, liwork = -1, iwq = 0;
    double wq = 0.0;
    dsyevd_("N", "L", &in, a, &in, wv, &wq, &lwork, &iwq, &liwork, &info, 1, 1);
    lwork = (int)wq + 1;
    liwork = iwq > 1 ? iwq : 1;
    double *work = dpdo__alloc_array((size_t)lwork, sizeof(double));
    int *iwork = dpdo__alloc_array((size_t)liwork, sizeof(int));
    int rc = DPDO_OK;
    if (info != 0 || !work || !iwork) {
        rc = info != 0 ? dpdo__err(net->errmsg, DPDO_E_NUMERIC,
                                   "spectrum: dsyevd workspace query failed (info %d)", info)
                       : dpdo__err(net->errmsg, DPDO_E_NOMEM,
                                   "spectrum: out of memory for the workspace");
    } else {
        dsyevd_("N", "L", &in, a, &in, wv, work, &lwork, iwork, &liwork, &info, 1, 1);
        if (info != 0)
            rc = dpdo__err(net->errmsg, DPDO_E_NUMERIC, "spectrum: dsyevd failed (info %d)", info);
    }
    dpdo__free(work);
    dpdo__free(iwork);
    dpdo__free(a);
    if (rc) {
        dpdo__free(wv);
        dpdo__free(eig);
        return rc;
    }
    for (int64_t i = 0; i < n; i++)
        eig[i] = wv[n - 1 - i]; /* descending */
    dpdo__free(wv);
    double l2 = fabs(eig[1]), ln = fabs(eig[n - 1]);
    net->slem = l2 > ln ? l2 : ln;
    dpdo__free(net->eig);
    net->eig = eig;
    net->spec_ok = 1;
    return DPDO_OK;
}

int dpdo_network_slem(dpdo_network *net, double *slem)
{
    if (!net) return DPDO_E_INVAL;
    if (!slem) return dpdo__err(net->errmsg, DPDO_E_INVAL, "slem: out is NULL");
    int rc = spectrum(net);
    if (rc) return rc;
    *slem = net->slem;
    return DPDO_OK;
}

int dpdo_network_spectral_gap(dpdo_network *net, double *gap)
{
    if (!net) return DPDO_E_INVAL;
    if (!gap) return dpdo__err(net->errmsg, DPDO_E_INVAL, "spectral_gap: out is NULL");
    int rc = spectrum(net);
    if (rc) return rc;
    *gap = 1.0 - net->slem;
    return DPDO_OK;
}

int dpdo_network_eigenvalues(dpdo_network *net, double *out, int64_t cap)
{
    if (!net) return DPDO_E_INVAL;
    if (!out) return dpdo__err(net->errmsg, DPDO_E_INVAL, "eigenvalues: out is NULL");
    if (net->n > 0 && cap < net->n)
        return dpdo__err(net->errmsg, DPDO_E_INVAL, "eigenvalues: cap = %lld, need n = %lld",
                         (long long)cap, (long long)net->n);
    int rc = spectrum(net);
    if (rc) return rc;
    memcpy(out, net->eig, (size_t)net->n * sizeof(double));
    return DPDO_OK;
}
