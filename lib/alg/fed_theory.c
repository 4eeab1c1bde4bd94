/* SPDX-License-Identifier: BSD-3-Clause */
/* Fed-PLT's convergence constants (docs/design/notes/fed-plt.md §5): the rate
 * matrix S of Proposition 1 with the corrected or the paper's coupling
 * constant, its spectral norm and radius, the partial-participation rate
 * sigma of Proposition 2, and the noisy-GD error nu of Corollary 1. */
#include "../engine/engine_impl.h"
#include <math.h>

DPDO_API int dpdo_fedplt_rate(double lambda_lo, double lambda_hi, double rho, double contraction,
                              int32_t paper_c, double p_lo, double *out, int64_t cap)
{
    if (!out || cap < 8) return DPDO_E_INVAL;
    if (!(lambda_lo > 0 && lambda_hi >= lambda_lo && lambda_hi < INFINITY)) return DPDO_E_INVAL;
    if (!(rho > 0 && rho < INFINITY) || !(contraction >= 0 && contraction < INFINITY))
        return DPDO_E_INVAL;
    if (paper_c != 0 && paper_c != 1) return DPDO_E_INVAL;
    if (!(p_lo > 0 && p_lo <= 1)) return DPDO_E_INVAL;
    /* PRS contraction (docs/design/notes/fed-plt.md §1.3) */
    double z1 = fabs((1 - rho * lambda_hi) / (1 + rho * lambda_hi)),
           z2 = fabs((1 - rho * lambda_lo) / (1 + rho * lambda_lo));
    double zeta = z1 > z2 ? z1 : z2;
    /* coupling: the Lipschitz constant of prox_{rho f}, 1/(1 + rho lambda_lo)
     * (docs/design/notes/fed-plt.md §5.1 [fix]); the paper prints 1/(lambda_lo + 1/rho) */
    double c = paper_c ? 1.0 / (lambda_lo + 1.0 / rho) : 1.0 / (1.0 + rho * lambda_lo);
    double a = contraction;
    double S[4] = {a, (1 + a) * c, 2 * a, zeta + 2 * a * c};
    double T2 = S[0] * S[0] + S[1] * S[1] + S[2] * S[2] + S[3] * S[3];
    double D2 = (S[0] * S[3] - S[1] * S[2]) * (S[0] * S[3] - S[1] * S[2]);
    double norm = sqrt(T2 / 2 + sqrt(fmax(T2 * T2 / 4 - D2, 0.0)));
    double t = S[0] + S[3], det = S[0] * S[3] - S[1] * S[2];
    double sr = 0.5 * (t + sqrt(fmax(t * t - 4 * det, 0.0)));
    for (int k = 0; k < 4; k++)
        out[k] = S[k];
    out[4] = norm;
    out[5] = sr;
    out[6] = zeta;
    out[7] = sqrt(1 - p_lo + p_lo * norm * norm); /* Prop. 2 */
    return DPDO_OK;
}

DPDO_API int dpdo_fedplt_noise_error(double tau, int64_t n, int64_t N, double gamma, double chi,
                                     int64_t epochs, double *nu)
{
    if (!nu || !(tau >= 0 && tau < INFINITY) || n < 1 || N < 1 ||
        !(gamma > 0 && gamma < INFINITY) || !(chi >= 0 && chi < 1) || epochs < 0)
        return DPDO_E_INVAL;
    /* nu = tau sqrt(10 n N gamma) (1 - chi^N_e) / (1 - chi) (Corollary 1,
     * docs/design/notes/fed-plt.md §5.5) */
    *nu = tau * sqrt(10.0 * (double)n * (double)N * gamma) * (1 - pow(chi, (double)epochs)) /
          (1 - chi);
    return DPDO_OK;
}
