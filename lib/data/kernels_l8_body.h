/* SPDX-License-Identifier: BSD-3-Clause */
/* The body of the 8-lane kernels of kernels_l8.c, one instance per instruction set: kernels_l8.c
 * defines L8B_SUF (the names' suffix), L8B_ATTR (the target attribute, or nothing), VD, VI (the
 * double and integer vector types of W lanes), W, SB (samples per iteration), FM, LOOK, CLAMP and
 * HSUM (the instruction set's fused multiply-add, exp table look-up, clamp and lane sum) and
 * includes this file, which defines
 *   l8_body_SUF  the body, force-inlined into each wrapper (a debugger or sanitizer sees its
 *                lines here);
 *   l8_1_SUF .. l8_8_SUF  logistic at d = 1 .. 8 (the j loops unroll), l8_n_SUF logistic at any
 *                d <= DPDO__L8_DMAX, l8_g_SUF any kind at any d: thin wrappers with the target
 *                attribute, each the body with its constants;
 *   l8_pick_SUF  the wrapper for (d, kind).
 * No include guard: included once per instruction set; the parameters are undefined at the end.
 *
 * SB = 8, 16 or 32 samples per iteration (one to four 8-sample blocks; SSE2 8, AVX2 16, AVX-512 32:
 * the fastest measured on Zen 4) as NV = SB / W vectors of W lanes (VD, VI); vector v holds samples
 * h0 + v W .. h0 + v W + W - 1, i.e. lanes u W .. u W + W - 1 of the 8-lane order with u = v mod (8
 * / W), and the vectors of one iteration are accumulated in order of v (so the blocks of one
 * iteration are the same as one after the other). Each step is written as a loop over v, so that
 * the compiler interleaves the NV independent chains (the exp and the division have long
 * latencies). DD > 0: d is that constant (the j loops unroll), 0: ds->d. KL >= 0: a logistic
 * instance (kind = KL, the other branches fold away), -1: kind as given. The copy and the gather
 * buffer hold whole iterations (qp: a multiple of DPDO__L8_PAD). */
#define L8B_CAT2(a, b) a##b
#define L8B_CAT(a, b) L8B_CAT2(a, b)
#define L8B(name) L8B_CAT(name, L8B_SUF)

/* the body is laid out by hand (L8_UNROLL precedes its loops) */
/* clang-format off */
static inline DPDO__ALWAYS_INLINE L8B_ATTR void L8B(l8_body_)(
    const struct dpdo_dataset *ds, const int64_t *rows, int64_t first, int64_t q,
    const struct dpdo__tcopy *tc, int kind, const double *w, double clip, double scale,
    double *grad, double *loss_sum, int64_t *ncl, int mf, const int DD, const int KL)
{
    enum { NU = 8 / W, NV = SB / W };
    if (KL >= 0) kind = KL; /* a logistic instance: the other branches fold away */
    const int64_t d = DD > 0 ? DD : ds->d, st = DPDO__L8_PAD; /* copy and buffer */
    L8_CONSTS(VD, VI, W);
    const int px = tc && tc->px; /* the copy holds -y_h x_h: s_h is the margin */
    VD G[DPDO__L8_DMAX][NU], LS[NU], WB[DPDO__L8_DMAX]; /* WB: w_j in every lane */
    L8_UNROLL for (int j = 0; j < DPDO__L8_DMAX; j++) /* w_j, or +0 for -0: the same margin */
        WB[j] = VZ + (j < d ? w[j] : 0.0);
    double buf[DPDO__L8_DMAX * DPDO__L8_PAD], nyb[SB];
    L8_UNROLL for (int u = 0; u < NU; u++) {
        LS[u] = VZ;
        L8_UNROLL for (int64_t j = 0; j < d; j++)
            G[j][u] = VZ;
    }
    for (int64_t h0 = 0; h0 < q; h0 += SB) {
        const int nv = q - h0 < SB ? (int)(q - h0) : SB;
        const double *xb = buf, *nyp = nyb;
        if (tc)
            xb = l8_tblock(tc, h0), nyp = tc->ny + h0;
        else
            l8_gather(ds, rows, first, h0, nv, d, SB, DPDO__L8_PAD, buf, nyb);
        VD NY[NV], M[NV], S[NV], NA[NV], E[NV], C[NV];
        L8_UNROLL for (int v = 0; v < NV; v++) NY[v] = *(const VD *)(nyp + v * W);
        L8_UNROLL for (int v = 0; v < NV; v++) M[v] = VZ;
        if (mf) {
            L8_UNROLL for (int64_t j = 0; j < d; j++)
                L8_UNROLL for (int v = 0; v < NV; v++)
                    M[v] = FM(*(const VD *)(xb + j * st + v * W), WB[j], M[v]);
        } else {
            L8_UNROLL for (int64_t j = 0; j < d; j++)
                L8_UNROLL for (int v = 0; v < NV; v++)
                    M[v] += *(const VD *)(xb + j * st + v * W) * WB[j];
        }
        L8_UNROLL for (int v = 0; v < NV; v++) S[v] = M[v];
        if (!px) L8_UNROLL for (int v = 0; v < NV; v++) S[v] = NY[v] * M[v];
        VD LV[NV];
        if (kind == DPDO__L8_LOGISTIC) {
            L8_UNROLL for (int v = 0; v < NV; v++)
                NA[v] = (VD)((VI)S[v] | SIGN); /* -|s|; NaN stays NaN */
            L8_UNROLL for (int v = 0; v < NV; v++) {
                L8_EXPV(VD, VI, FM, LOOK, CLAMP, NA[v], E[v]);
            }
            L8_UNROLL for (int v = 0; v < NV; v++) { /* px: -y c_h (x_h is -y x_h) */
                C[v] = L8SEL(VD, VI, S[v] >= 0, ONE, E[v]) / (ONE + E[v]);
                if (!px) C[v] = NY[v] * C[v];
            }
            if (loss_sum)
                L8_UNROLL for (int v = 0; v < NV; v++) {
                    const VD BIG = L8SEL(VD, VI, E[v] > 0x1.a827999fcef34p-2, ONE, VZ);
                    const VD NU_ = E[v] - BIG, DE = (ONE + ONE) + (E[v] + BIG);
                    const VD SS = NU_ / DE, Z = SS * SS;
                    const VD L = BIG * DPDO__LN2_HI +
                                 ((SS + SS) + (SS * DPDO__ATANH_POLY(Z) + BIG * DPDO__LN2_LO));
                    LV[v] = L8SEL(VD, VI, S[v] > 0, S[v], VZ) + L;
                }
        } else if (kind == DPDO__L8_HINGE) {
            L8_UNROLL for (int v = 0; v < NV; v++) {
                const VD Z = ONE + S[v]; /* 1 - y m */
                C[v] = L8SEL(VD, VI, Z > 0, NY[v], VZ);
                if (px) C[v] = L8SEL(VD, VI, Z > 0, ONE, VZ);
                LV[v] = L8SEL(VD, VI, Z > 0, Z, VZ);
            }
        } else {
            L8_UNROLL for (int v = 0; v < NV; v++) {
                VD R = M[v]; /* px: -y m */
                if (px) R = NY[v] * R;
                R = R + NY[v]; /* m - y */
                C[v] = R;
                if (px) C[v] = NY[v] * R;
                LV[v] = 0.5 * R * R;
            }
        }
        if (nv < SB)
            L8_UNROLL for (int v = 0; v < NV; v++)
                C[v] = L8SEL(VD, VI, LANE + v * W < (VI){0} + nv, C[v], VZ);
        if (loss_sum)
            L8_UNROLL for (int v = 0; v < NV; v++) {
                if (nv < SB) LV[v] = L8SEL(VD, VI, LANE + v * W < (VI){0} + nv, LV[v], VZ);
                LS[v % NU] += LV[v];
            }
        if (clip > 0.0) { /* through memory here only (stores, not C's address) */
            double cs[SB];
            L8_UNROLL for (int v = 0; v < NV; v++)
                *(VD *)(cs + v * W) = C[v];
            for (int t = 0; t < nv; t++)
                cs[t] = dpdo__clip_coef(ds, l8_row(rows, first, h0 + t), cs[t], clip, ncl);
            L8_UNROLL for (int v = 0; v < NV; v++)
                C[v] = *(const VD *)(cs + v * W);
        }
        if (scale != 0.0) {
            VD A[NV];
            L8_UNROLL for (int v = 0; v < NV; v++) A[v] = C[v];
            if (!L8_SCALE_LATE) L8_UNROLL for (int v = 0; v < NV; v++) A[v] = scale * C[v];
            L8_UNROLL for (int64_t j = 0; j < d; j++)
                L8_UNROLL for (int v = 0; v < NV; v++)
                    G[j][v % NU] = FM(A[v], *(const VD *)(xb + j * st + v * W), G[j][v % NU]);
        }
    }
    double t8[8]; /* stores of G and LS, not their addresses: they stay in registers */
    if (scale != 0.0)
        L8_UNROLL for (int64_t j = 0; j < d; j++) {
            double tj;
            L8_LANE_TREE(VD, W, NU, HSUM, G[j], t8, tj);
            grad[j] += L8_SCALE_LATE ? scale * tj : tj;
        }
    if (loss_sum) {
        L8_UNROLL for (int u = 0; u < NU; u++)
            *(VD *)(t8 + u * W) = LS[u];
        *loss_sum = L8_TREE(t8);
    }
}

#define L8B_WRAP(NAME, DD, KL)                                                                     \
    L8B_ATTR static void L8B(NAME)(const struct dpdo_dataset *ds, const int64_t *rows, int64_t first, int64_t q, \
    const struct dpdo__tcopy *tc, int kind, const double *w, double clip, double scale, \
    double *grad, double *loss_sum, int64_t *ncl, int mf)                 \
    {                                                                                              \
        L8B(l8_body_)(ds, rows, first, q, tc, kind, w, clip, scale, grad, loss_sum, ncl, mf, DD, KL); \
    }
/* logistic: one instance per d = 1 .. 8 and one for d = 9 .. 16; hinge and squared (a few
 * operations per sample beside the margin and the gradient): one instance for every d */
L8B_WRAP(l8_1_, 1, 0)
L8B_WRAP(l8_2_, 2, 0)
L8B_WRAP(l8_3_, 3, 0)
L8B_WRAP(l8_4_, 4, 0)
L8B_WRAP(l8_5_, 5, 0)
L8B_WRAP(l8_6_, 6, 0)
L8B_WRAP(l8_7_, 7, 0)
L8B_WRAP(l8_8_, 8, 0)
L8B_WRAP(l8_n_, 0, 0)
L8B_WRAP(l8_g_, 0, -1)
/* clang-format on */

static l8_fn L8B(l8_pick_)(int64_t d, int kind)
{
    static const l8_fn f[9] = {L8B(l8_n_), L8B(l8_1_), L8B(l8_2_), L8B(l8_3_), L8B(l8_4_),
                               L8B(l8_5_), L8B(l8_6_), L8B(l8_7_), L8B(l8_8_)};
    return kind != DPDO__L8_LOGISTIC ? L8B(l8_g_) : f[d <= 8 ? d : 0];
}

#undef L8B_WRAP
#undef L8B
#undef L8B_CAT
#undef L8B_CAT2
#undef L8B_SUF
#undef L8B_ATTR
#undef VD
#undef VI
#undef W
#undef SB
#undef FM
#undef LOOK
#undef CLAMP
#undef HSUM
