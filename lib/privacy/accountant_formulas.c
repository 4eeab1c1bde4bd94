/* SPDX-License-Identifier: BSD-3-Clause */
/* The public formula functions: RDP of single mechanisms, the RDP, Gaussian (mu-GDP) and zCDP
 * conversions to (epsilon, delta), amplification by subsampling, the classic Gaussian sigma and
 * advanced composition. Stateless, thread-safe. */
#include "accountant_impl.h"
#include <math.h>
#include <string.h>

static int bad_delta(double d)
{
    return !(d > 0 && d < 1);
}

int dpdo_rdp_gaussian(int kind, double rate, double z, double alpha, double *rdp)
{
    if (!rdp || !(z > 0) || !isfinite(z) || !(alpha > 1) || (alpha > 1e6 && alpha != INFINITY))
        return DPDO_E_INVAL;
    dpdo__event_desc d;
    memset(&d, 0, sizeof d);
    d.mech = DPDO_MECH_GAUSSIAN;
    d.samp.kind = kind;
    d.samp.q = kind == DPDO_SAMPLING_NONE ? 1.0 : rate;
    d.sens = 1.0;
    d.noise = z;
    if (kind == DPDO_SAMPLING_WOR) { /* only the ratio matters */
        if (!(rate > 0 && rate <= 1)) return DPDO_E_INVAL;
    } else if (kind != DPDO_SAMPLING_NONE && kind != DPDO_SAMPLING_POISSON) {
        return DPDO_E_INVAL;
    } else if (kind == DPDO_SAMPLING_POISSON && !(rate > 0 && rate <= 1)) {
        return DPDO_E_INVAL;
    }
    *rdp = dpdo__rdp_event(&d, alpha, NULL, 0);
    return DPDO_OK;
}

int dpdo_rdp_laplace(double lambda, double alpha, double *rdp)
{
    if (!rdp || !(lambda > 0) || !isfinite(lambda) || !(alpha > 1)) return DPDO_E_INVAL;
    *rdp = dpdo__rdp_laplace(lambda, alpha);
    return DPDO_OK;
}

static int check_curve(const double *orders, const double *rdp, int64_t n, int conv)
{
    if (!orders || !rdp || n < 1) return DPDO_E_INVAL;
    if (conv != DPDO_CONVERSION_IMPROVED && conv != DPDO_CONVERSION_CLASSIC) return DPDO_E_INVAL;
    for (int64_t i = 0; i < n; i++)
        if (!(orders[i] > 1) || !(rdp[i] >= 0)) return DPDO_E_INVAL;
    return DPDO_OK;
}

int dpdo_rdp_to_epsilon(const double *orders, const double *rdp, int64_t n, double delta, int conv,
                        double *eps, double *order)
{
    if (!eps || bad_delta(delta) || check_curve(orders, rdp, n, conv)) return DPDO_E_INVAL;
    *eps = dpdo__rdp_eps(orders, rdp, n, delta, conv, order);
    return DPDO_OK;
}

int dpdo_rdp_to_delta(const double *orders, const double *rdp, int64_t n, double eps, int conv,
                      double *delta, double *order)
{
    if (!delta || !(eps >= 0) || !isfinite(eps) || check_curve(orders, rdp, n, conv))
        return DPDO_E_INVAL;
    *delta = dpdo__rdp_delta(orders, rdp, n, eps, conv, order);
    return DPDO_OK;
}

int dpdo_gaussian_delta(double mu, double eps, double *delta)
{
    if (!delta || !(mu >= 0) || !isfinite(mu) || !(eps >= 0) || !isfinite(eps)) return DPDO_E_INVAL;
    *delta = dpdo__gauss_delta(mu, eps);
    return DPDO_OK;
}

int dpdo_gaussian_epsilon(double mu, double delta, double *eps)
{
    if (!eps || !(mu >= 0) || !isfinite(mu) || bad_delta(delta)) return DPDO_E_INVAL;
    *eps = dpdo__gauss_eps(mu, delta);
    return DPDO_OK;
}

int dpdo_zcdp_epsilon(double rho, double delta, int conv, double *eps)
{
    if (!eps || !(rho >= 0) || !isfinite(rho) || bad_delta(delta)) return DPDO_E_INVAL;
    if (conv != DPDO_CONVERSION_IMPROVED && conv != DPDO_CONVERSION_CLASSIC) return DPDO_E_INVAL;
    *eps = dpdo__zcdp_eps(rho, delta, conv);
    return DPDO_OK;
}

int dpdo_dp_amplify(double eps, double gamma, double *out)
{
    if (!out || !(eps >= 0) || !isfinite(eps) || !(gamma >= 0 && gamma <= 1)) return DPDO_E_INVAL;
    *out = eps > 30 ? eps + log(gamma + (1 - gamma) * exp(-eps)) : log1p(gamma * expm1(eps));
    if (gamma == 0) *out = 0;
    return DPDO_OK;
}

int dpdo_dp_gaussian_sigma(double eps, double delta, double *s)
{
    if (!s || !(eps > 0 && eps < 1) || bad_delta(delta)) return DPDO_E_INVAL;
    *s = sqrt(2.0 * log(1.25 / delta)) / eps;
    return DPDO_OK;
}

int dpdo_dp_advanced_composition(double k, double eps0, double dp, double *eps)
{
    if (!eps || !(k >= 1) || !isfinite(k) || !(eps0 >= 0) || !isfinite(eps0) || bad_delta(dp))
        return DPDO_E_INVAL;
    *eps = sqrt(2.0 * k * log(1.0 / dp)) * eps0 + k * eps0 * expm1(eps0);
    return DPDO_OK;
}
