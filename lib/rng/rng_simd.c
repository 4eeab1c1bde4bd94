/* SPDX-License-Identifier: BSD-3-Clause */
/* Vectorised Philox4x32-10 + uniform / Box-Muller (AVX2+FMA and AVX-512F).
 *
 * Each function is compiled for its instruction set with a target attribute
 * and chosen at run time (dpdo__simd_best), so one binary runs on any x86-64.
 * Layout: one 64-bit lane per block; a lane holds a 32-bit Philox word in its
 * low half (the high half may hold garbage between rounds: _mul_epu32 reads
 * only the low half, and the words are cleaned when they are turned into
 * doubles). AVX2 handles 4 blocks (8 normals) per step, AVX-512 8 blocks.
 *
 * BIT-IDENTITY: every floating-point step below is the same IEEE operation,
 * with the same operands in the same order, as the scalar reference in
 * rng_math.h (dpdo__u01, dpdo__m2log, dpdo__bm_angle, dpdo__bm_block); only
 * fma is fused, exactly where the scalar code calls fma(). Integer steps are
 * exact. tests/test_rng.c compares the kernels bit for bit. */
#include <stddef.h>
#include <stdint.h>

#include "rng_impl.h"
#include "rng_math.h"
#include "rng_simd.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DPDO_HAVE_X86_SIMD 1
#include <immintrin.h>
#endif

#ifdef DPDO_HAVE_X86_SIMD

int dpdo__simd_best(void)
{
    /* __builtin_cpu_supports reads libgcc's CPU model, which libgcc's own
     * constructor fills before any user code runs (so no __builtin_cpu_init
     * and no state of ours); it includes the OS support check (XSAVE). */
    if (__builtin_cpu_supports("avx512f")) return DPDO__RNG_KERNEL_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return DPDO__RNG_KERNEL_AVX2;
    return DPDO__RNG_KERNEL_SCALAR;
}

/* The first two Philox rounds depend on the lane only through counter word
 * 0 (words 1..3 are the same in every lane): in round 1 the product M1 c2 and
 * the outputs c0', c1' are per-call constants, in round 2 the product M0 c0'
 * is. Precomputing them saves 5 of the 60 vector operations per block
 * vector; the result is the same Philox4x32-10. */
typedef struct {
    uint32_t x0;  /* round 1: c2' = hi(M0 j) ^ x0 */
    uint32_t a1k; /* round 2: c0'' = hi(M1 c2') ^ a1k */
    uint32_t b;   /* round 2: c2'' = c3' ^ b */
    uint32_t c3;  /* round 2: c3'' */
    uint32_t k0[10], k1[10];
} philox_pre;

static void philox_precompute(const uint32_t key[4], const uint32_t ctr[4], philox_pre *P)
{
    uint32_t a = key[0], b = key[1];
    for (int r = 0; r < 10; r++) {
        P->k0[r] = a, P->k1[r] = b;
        a += DPDO__PHILOX_W0;
        b += DPDO__PHILOX_W1;
    }
    uint64_t p1 = (uint64_t)DPDO__PHILOX_M1 * ctr[2];
    uint32_t A0 = (uint32_t)(p1 >> 32) ^ ctr[1] ^ P->k0[0]; /* c0 after round 1 */
    uint32_t A1 = (uint32_t)p1;                             /* c1 after round 1 */
    P->x0 = ctr[3] ^ P->k1[0];
    uint64_t p0 = (uint64_t)DPDO__PHILOX_M0 * A0; /* round 2 */
    P->a1k = A1 ^ P->k0[1];
    P->b = (uint32_t)(p0 >> 32) ^ P->k1[1];
    P->c3 = (uint32_t)p0;
}

/* ======================= AVX-512F: 8 blocks per step ======================= */
#define T512 __attribute__((target("avx512f")))

/* The high half of each 64-bit product moved to the low half by a dword
 * swap (a shuffle, which runs on another port than the multiplier and the
 * shifts; the garbage it leaves in the high half is harmless). */
#define HI512(p) _mm512_shuffle_epi32((p), _MM_PERM_CDAB)

/* G independent groups of 8 blocks, interleaved round by round; on entry
 * c[g][0] holds the block indices (low 32 bits of each lane). */
#define PG 4
T512 static inline void philox512g(__m512i c[PG][4], const philox_pre *P)
{
    const __m512i m0 = _mm512_set1_epi64(DPDO__PHILOX_M0);
    const __m512i m1 = _mm512_set1_epi64(DPDO__PHILOX_M1);
    const __m512i x0 = _mm512_set1_epi64(P->x0), a1k = _mm512_set1_epi64(P->a1k),
                  bb = _mm512_set1_epi64(P->b), c3 = _mm512_set1_epi64(P->c3);
#pragma GCC unroll 4
    for (int g = 0; g < PG; g++) {
        /* rounds 1 and 2 */
        __m512i p0 = _mm512_mul_epu32(c[g][0], m0);
        __m512i n2 = _mm512_xor_si512(_mm512_srli_epi64(p0, 32), x0);
        __m512i p1 = _mm512_mul_epu32(n2, m1);
        c[g][0] = _mm512_xor_si512(HI512(p1), a1k);
        c[g][1] = p1;
        c[g][2] = _mm512_xor_si512(p0, bb);
        c[g][3] = c3;
    }
#pragma GCC unroll 8
    for (int r = 2; r < 10; r++) {
        const __m512i k0 = _mm512_set1_epi64(P->k0[r]), k1 = _mm512_set1_epi64(P->k1[r]);
#pragma GCC unroll 4
        for (int g = 0; g < PG; g++) {
            __m512i q0 = _mm512_mul_epu32(c[g][0], m0);
            __m512i q1 = _mm512_mul_epu32(c[g][2], m1);
            c[g][0] = _mm512_ternarylogic_epi64(HI512(q1), c[g][1], k0, 0x96);
            c[g][1] = q1;
            /* one shift (port 0) and one shuffle (port 5) balance the ports */
            c[g][2] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(q0, 32), c[g][3], k1, 0x96);
            c[g][3] = q0;
        }
    }
}

/* The 64-bit word lo | hi << 32 from the low halves of two lanes: one
 * dword permute. */
T512 static inline __m512i word512(__m512i lo, __m512i hi)
{
    const __m512i idx = _mm512_set_epi32(30, 14, 28, 12, 26, 10, 24, 8, 22, 6, 20, 4, 18, 2, 16, 0);
    return _mm512_permutex2var_epi32(lo, idx, hi);
}

/* dpdo__u01 of a 64-bit word */
T512 static inline __m512d u01_512(__m512i x)
{
    __m512i b = _mm512_or_si512(_mm512_srli_epi64(x, 12), _mm512_set1_epi64(0x3FF0000000000000ll));
    return _mm512_sub_pd(_mm512_castsi512_pd(b), _mm512_set1_pd(DPDO__ONE_MINUS_HALF_ULP));
}

/* the 16-entry tables of dpdo__m2log, two registers each */
typedef struct {
    __m512d inv[2], hi[2], lo[2];
} logtab512;

T512 static inline void logtab512_load(logtab512 *t)
{
    for (int h = 0; h < 2; h++) {
        t->inv[h] = _mm512_loadu_pd(DPDO__LOGT_INVC + 8 * h);
        t->hi[h] = _mm512_loadu_pd(DPDO__LOGT_M2HI + 8 * h);
        t->lo[h] = _mm512_loadu_pd(DPDO__LOGT_M2LO + 8 * h);
    }
}

/* dpdo__m2log */
T512 static inline __m512d m2log512(__m512d u, const logtab512 *t)
{
    /* getexp / getmant give the same exact e and m in [1,2) as the bit
     * manipulation of the scalar code, in one instruction each */
    __m512d e = _mm512_getexp_pd(u);
    __m512d m = _mm512_getmant_pd(u, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_src);
    /* m has the fraction bits of u: take the index from u, in parallel with
     * getmant (the permutes read the low 4 bits) */
    __m512i idx = _mm512_srli_epi64(_mm512_castpd_si512(u), 48);
    __m512d invc = _mm512_permutex2var_pd(t->inv[0], idx, t->inv[1]);
    __m512d th = _mm512_permutex2var_pd(t->hi[0], idx, t->hi[1]);
    __m512d tl = _mm512_permutex2var_pd(t->lo[0], idx, t->lo[1]);
    __m512d r = _mm512_fmadd_pd(m, invc, _mm512_set1_pd(-1.0));
    __m512d head = _mm512_fmadd_pd(e, _mm512_set1_pd(DPDO__M2LN2_HI), th);
    __m512d tail = _mm512_fmadd_pd(e, _mm512_set1_pd(DPDO__M2LN2_LO), tl);
    __m512d r2 = _mm512_mul_pd(r, r);
    __m512d q01 = _mm512_fmadd_pd(_mm512_set1_pd(DPDO__Q1), r, _mm512_set1_pd(DPDO__Q0));
    __m512d q23 = _mm512_fmadd_pd(_mm512_set1_pd(DPDO__Q3), r, _mm512_set1_pd(DPDO__Q2));
    __m512d q45 = _mm512_fmadd_pd(_mm512_set1_pd(DPDO__Q5), r, _mm512_set1_pd(DPDO__Q4));
    __m512d q67 = _mm512_fmadd_pd(_mm512_set1_pd(DPDO__Q7), r, _mm512_set1_pd(DPDO__Q6));
    __m512d q89 = _mm512_fmadd_pd(_mm512_set1_pd(DPDO__Q9), r, _mm512_set1_pd(DPDO__Q8));
    __m512d r4 = _mm512_mul_pd(r2, r2);
    __m512d q03 = _mm512_fmadd_pd(q23, r2, q01);
    __m512d q47 = _mm512_fmadd_pd(q67, r2, q45);
    __m512d q = _mm512_fmadd_pd(_mm512_fmadd_pd(q89, r4, q47), r4, q03);
    __m512d tt = _mm512_fmadd_pd(r2, q, tail);
    return _mm512_add_pd(head, _mm512_fmadd_pd(r, _mm512_set1_pd(-2.0), tt));
}

/* dpdo__bm_block on 8 blocks: words x1, x2 -> (z0, z1) */
T512 static inline void bm512(__m512i x1, __m512i x2, const logtab512 *t, __m512d *z0, __m512d *z1)
{
    const __m512i one_b = _mm512_set1_epi64(0x3FF0000000000000ll);
    __m512d u1 =
        _mm512_sub_pd(_mm512_castsi512_pd(_mm512_or_si512(_mm512_srli_epi64(x1, 11), one_b)),
                      _mm512_set1_pd(DPDO__ONE_MINUS_HALF_ULP));
    __m512d rho = _mm512_sqrt_pd(m2log512(u1, t));
    __m512d a = _mm512_mul_pd(
        _mm512_sub_pd(_mm512_castsi512_pd(_mm512_or_si512(_mm512_srli_epi64(x2, 11), one_b)),
                      _mm512_set1_pd(1.5)),
        _mm512_set1_pd(DPDO__PIO2));
    __m512d z = _mm512_mul_pd(a, a);
    __m512d ps = _mm512_set1_pd(DPDO__S6);
    ps = _mm512_fmadd_pd(ps, z, _mm512_set1_pd(DPDO__S5));
    ps = _mm512_fmadd_pd(ps, z, _mm512_set1_pd(DPDO__S4));
    ps = _mm512_fmadd_pd(ps, z, _mm512_set1_pd(DPDO__S3));
    ps = _mm512_fmadd_pd(ps, z, _mm512_set1_pd(DPDO__S2));
    ps = _mm512_fmadd_pd(ps, z, _mm512_set1_pd(DPDO__S1));
    __m512d sv = _mm512_fmadd_pd(_mm512_mul_pd(a, z), ps, a);
    __m512d pc = _mm512_set1_pd(DPDO__C6);
    pc = _mm512_fmadd_pd(pc, z, _mm512_set1_pd(DPDO__C5));
    pc = _mm512_fmadd_pd(pc, z, _mm512_set1_pd(DPDO__C4));
    pc = _mm512_fmadd_pd(pc, z, _mm512_set1_pd(DPDO__C3));
    pc = _mm512_fmadd_pd(pc, z, _mm512_set1_pd(DPDO__C2));
    pc = _mm512_fmadd_pd(pc, z, _mm512_set1_pd(DPDO__C1));
    __m512d cv = _mm512_fmadd_pd(_mm512_mul_pd(z, z), pc,
                                 _mm512_fmadd_pd(z, _mm512_set1_pd(-0.5), _mm512_set1_pd(1.0)));
    const __m512i sign = _mm512_set1_epi64((long long)0x8000000000000000ull);
    __mmask8 odd = _mm512_test_epi64_mask(x2, _mm512_set1_epi64(1));
    __m512d c = _mm512_mask_blend_pd(odd, cv, sv);
    __m512d s = _mm512_mask_blend_pd(odd, sv, cv);
    /* 0x78 = a ^ (b & c): the sign bits of x1 and x2 */
    __m512d cs =
        _mm512_castsi512_pd(_mm512_ternarylogic_epi64(_mm512_castpd_si512(c), x1, sign, 0x78));
    __m512d sn =
        _mm512_castsi512_pd(_mm512_ternarylogic_epi64(_mm512_castpd_si512(s), x2, sign, 0x78));
    *z0 = _mm512_mul_pd(rho, cs);
    *z1 = _mm512_mul_pd(rho, sn);
}

/* Why the shape below: one group of 8 blocks is a long dependency chain
 * (~150 cycles: 10 multiply rounds, a square root, three polynomials), so
 * the kernel interleaves PG groups in the Philox rounds and
 * software-pipelines the integer part (Philox of unit t) with the
 * floating-point part (transform of unit t-1), which the out-of-order core
 * then overlaps. */

T512 static size_t normals512(const uint32_t key[4], const uint32_t ctr[4], size_t nblocks,
                              double *out, int add, double scale)
{
    philox_pre P;
    philox_precompute(key, ctr, &P);
    logtab512 tab;
    logtab512_load(&tab);
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i ilo = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
    const __m512i ihi = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
    const __m512d sc = _mm512_set1_pd(scale);
    /* Software pipeline over units of 8*PG blocks: iteration t generates the
     * words of unit t (integer work) while it transforms unit t-1 (floating
     * point); the two halves are independent, so the out-of-order core
     * overlaps them. The words pass through a two-slot L1 buffer. */
    enum { U = 8 * PG };
    uint64_t ub1[2][U] __attribute__((aligned(64)));
    uint64_t ub2[2][U] __attribute__((aligned(64)));
    size_t nb = nblocks & ~(size_t)(U - 1);
    size_t nu = nb / U;
    uint64_t base = ctr[0];
    for (size_t t = 0; t <= nu; t++) {
        if (t < nu) {
            __m512i c[PG][4];
            uint64_t *d1 = ub1[t & 1], *d2 = ub2[t & 1];
#pragma GCC unroll 4
            for (int g = 0; g < PG; g++)
                c[g][0] =
                    _mm512_add_epi64(_mm512_set1_epi64((long long)(base + 8 * (uint64_t)g)), lane);
            base += U;
            philox512g(c, &P);
#pragma GCC unroll 4
            for (int g = 0; g < PG; g++) {
                _mm512_store_si512((void *)(d1 + 8 * g), word512(c[g][0], c[g][1]));
                _mm512_store_si512((void *)(d2 + 8 * g), word512(c[g][2], c[g][3]));
            }
        }
        if (t > 0) {
            const uint64_t *s1 = ub1[(t - 1) & 1], *s2 = ub2[(t - 1) & 1];
            double *o = out + 2 * U * (t - 1);
            for (int g = 0; g < PG; g++, o += 16) {
                __m512d z0, z1;
                bm512(_mm512_load_si512((const void *)(s1 + 8 * g)),
                      _mm512_load_si512((const void *)(s2 + 8 * g)), &tab, &z0, &z1);
                __m512d a = _mm512_permutex2var_pd(z0, ilo, z1);
                __m512d b = _mm512_permutex2var_pd(z0, ihi, z1);
                if (add) {
                    a = _mm512_fmadd_pd(sc, a, _mm512_loadu_pd(o));
                    b = _mm512_fmadd_pd(sc, b, _mm512_loadu_pd(o + 8));
                }
                _mm512_storeu_pd(o, a);
                _mm512_storeu_pd(o + 8, b);
            }
        }
    }
    return nb;
}

/* The words of the 8 PG blocks from counter base: Philox of PG groups of 8 lanes; w[g][0] holds
 * the words 0-1 of block base + 8 g + lane, w[g][1] the words 2-3 (word512's layout) */
T512 static inline void philox_unit512(const philox_pre *P, uint64_t base, __m512i w[PG][2])
{
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    __m512i c[PG][4];
#pragma GCC unroll 4
    for (int g = 0; g < PG; g++)
        c[g][0] = _mm512_add_epi64(_mm512_set1_epi64((long long)(base + 8 * (uint64_t)g)), lane);
    philox512g(c, P);
#pragma GCC unroll 4
    for (int g = 0; g < PG; g++) {
        w[g][0] = word512(c[g][0], c[g][1]);
        w[g][1] = word512(c[g][2], c[g][3]);
    }
}

T512 static size_t uniforms512(const uint32_t key[4], const uint32_t ctr[4], size_t nblocks,
                               double *out)
{
    philox_pre P;
    philox_precompute(key, ctr, &P);
    const __m512i ilo = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
    const __m512i ihi = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
    size_t nb = nblocks & ~(size_t)(8 * PG - 1);
    uint64_t base = ctr[0];
    for (size_t j = 0; j < nb; j += 8 * PG, base += 8 * PG) {
        __m512i w[PG][2];
        philox_unit512(&P, base, w);
#pragma GCC unroll 4
        for (int g = 0; g < PG; g++) {
            __m512d u1 = u01_512(w[g][0]);
            __m512d u2 = u01_512(w[g][1]);
            double *o = out + 2 * (j + 8 * (size_t)g);
            _mm512_storeu_pd(o, _mm512_permutex2var_pd(u1, ilo, u2));
            _mm512_storeu_pd(o + 8, _mm512_permutex2var_pd(u1, ihi, u2));
        }
    }
    return nb;
}

/* Raw Philox words: block j -> out[4j .. 4j+3] (the permutations of DP-WOR-SGD draw
 * their words in bulk). */
T512 static size_t blocks512(const uint32_t key[4], const uint32_t ctr[4], size_t nblocks,
                             uint32_t *out)
{
    philox_pre P;
    philox_precompute(key, ctr, &P);
    const __m512i ilo = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
    const __m512i ihi = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
    size_t nb = nblocks & ~(size_t)(8 * PG - 1);
    uint64_t base = ctr[0];
    for (size_t j = 0; j < nb; j += 8 * PG, base += 8 * PG) {
        __m512i w[PG][2];
        philox_unit512(&P, base, w);
#pragma GCC unroll 4
        for (int g = 0; g < PG; g++) {
            __m512i w01 = w[g][0], w23 = w[g][1];
            uint32_t *o = out + 4 * (j + 8 * (size_t)g);
            _mm512_storeu_si512((void *)o, _mm512_permutex2var_epi64(w01, ilo, w23));
            _mm512_storeu_si512((void *)(o + 16), _mm512_permutex2var_epi64(w01, ihi, w23));
        }
    }
    return nb;
}

/* ======================= AVX2 + FMA: 4 blocks per step ====================== */
#define T256 __attribute__((target("avx2,fma")))

/* G independent groups of 4 blocks, interleaved round by round (same
 * precomputed first two rounds as philox512g). */
T256 static inline void philox256g(__m256i c[PG][4], const philox_pre *P)
{
    const __m256i m0 = _mm256_set1_epi64x(DPDO__PHILOX_M0);
    const __m256i m1 = _mm256_set1_epi64x(DPDO__PHILOX_M1);
    const __m256i x0 = _mm256_set1_epi64x(P->x0), a1k = _mm256_set1_epi64x(P->a1k),
                  bb = _mm256_set1_epi64x(P->b), c3 = _mm256_set1_epi64x(P->c3);
#pragma GCC unroll 4
    for (int g = 0; g < PG; g++) {
        __m256i p0 = _mm256_mul_epu32(c[g][0], m0);
        __m256i n2 = _mm256_xor_si256(_mm256_srli_epi64(p0, 32), x0);
        __m256i p1 = _mm256_mul_epu32(n2, m1);
        c[g][0] = _mm256_xor_si256(_mm256_srli_epi64(p1, 32), a1k);
        c[g][1] = p1;
        c[g][2] = _mm256_xor_si256(p0, bb);
        c[g][3] = c3;
    }
    for (int r = 2; r < 10; r++) {
        const __m256i k0 = _mm256_set1_epi64x(P->k0[r]), k1 = _mm256_set1_epi64x(P->k1[r]);
#pragma GCC unroll 4
        for (int g = 0; g < PG; g++) {
            __m256i q0 = _mm256_mul_epu32(c[g][0], m0);
            __m256i q1 = _mm256_mul_epu32(c[g][2], m1);
            c[g][0] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(q1, 32), c[g][1]), k0);
            c[g][1] = q1;
            c[g][2] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(q0, 32), c[g][3]), k1);
            c[g][3] = q0;
        }
    }
}

T256 static inline __m256i word256(__m256i lo, __m256i hi)
{
    return _mm256_blend_epi32(lo, _mm256_slli_epi64(hi, 32), 0xAA);
}

T256 static inline __m256d u01_256(__m256i x)
{
    __m256i b = _mm256_or_si256(_mm256_srli_epi64(x, 12), _mm256_set1_epi64x(0x3FF0000000000000ll));
    return _mm256_sub_pd(_mm256_castsi256_pd(b), _mm256_set1_pd(DPDO__ONE_MINUS_HALF_ULP));
}

/* dpdo__m2log. The table reads are scalar loads: on current Intel cores
 * they beat both gathers and register permute/blend trees (which cost ~25
 * vector operations per 4 lanes here) and use the otherwise idle load
 * ports. */
T256 static inline __m256d m2log256(__m256d u)
{
    __m256i b = _mm256_castpd_si256(u);
    __m256d e =
        _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(
                          _mm256_srli_epi64(b, 52), _mm256_set1_epi64x(0x4330000000000000ll))),
                      _mm256_set1_pd(DPDO__MAGIC52 + 1023.0));
    __m256i mb = _mm256_or_si256(_mm256_and_si256(b, _mm256_set1_epi64x(0x000FFFFFFFFFFFFFll)),
                                 _mm256_set1_epi64x(0x3FF0000000000000ll));
    __m256d m = _mm256_castsi256_pd(mb);
    uint64_t ix[4] __attribute__((aligned(32)));
    _mm256_store_si256((__m256i *)(void *)ix,
                       _mm256_and_si256(_mm256_srli_epi64(mb, 48), _mm256_set1_epi64x(15)));
    __m256d invc = _mm256_set_pd(DPDO__LOGT_INVC[ix[3]], DPDO__LOGT_INVC[ix[2]],
                                 DPDO__LOGT_INVC[ix[1]], DPDO__LOGT_INVC[ix[0]]);
    __m256d th = _mm256_set_pd(DPDO__LOGT_M2HI[ix[3]], DPDO__LOGT_M2HI[ix[2]],
                               DPDO__LOGT_M2HI[ix[1]], DPDO__LOGT_M2HI[ix[0]]);
    __m256d tl = _mm256_set_pd(DPDO__LOGT_M2LO[ix[3]], DPDO__LOGT_M2LO[ix[2]],
                               DPDO__LOGT_M2LO[ix[1]], DPDO__LOGT_M2LO[ix[0]]);
    __m256d r = _mm256_fmadd_pd(m, invc, _mm256_set1_pd(-1.0));
    __m256d head = _mm256_fmadd_pd(e, _mm256_set1_pd(DPDO__M2LN2_HI), th);
    __m256d tail = _mm256_fmadd_pd(e, _mm256_set1_pd(DPDO__M2LN2_LO), tl);
    __m256d r2 = _mm256_mul_pd(r, r);
    __m256d q01 = _mm256_fmadd_pd(_mm256_set1_pd(DPDO__Q1), r, _mm256_set1_pd(DPDO__Q0));
    __m256d q23 = _mm256_fmadd_pd(_mm256_set1_pd(DPDO__Q3), r, _mm256_set1_pd(DPDO__Q2));
    __m256d q45 = _mm256_fmadd_pd(_mm256_set1_pd(DPDO__Q5), r, _mm256_set1_pd(DPDO__Q4));
    __m256d q67 = _mm256_fmadd_pd(_mm256_set1_pd(DPDO__Q7), r, _mm256_set1_pd(DPDO__Q6));
    __m256d q89 = _mm256_fmadd_pd(_mm256_set1_pd(DPDO__Q9), r, _mm256_set1_pd(DPDO__Q8));
    __m256d r4 = _mm256_mul_pd(r2, r2);
    __m256d q03 = _mm256_fmadd_pd(q23, r2, q01);
    __m256d q47 = _mm256_fmadd_pd(q67, r2, q45);
    __m256d q = _mm256_fmadd_pd(_mm256_fmadd_pd(q89, r4, q47), r4, q03);
    __m256d tt = _mm256_fmadd_pd(r2, q, tail);
    return _mm256_add_pd(head, _mm256_fmadd_pd(r, _mm256_set1_pd(-2.0), tt));
}

T256 static inline void bm256(__m256i x1, __m256i x2, __m256d *z0, __m256d *z1)
{
    const __m256i one_b = _mm256_set1_epi64x(0x3FF0000000000000ll);
    __m256d u1 =
        _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64(x1, 11), one_b)),
                      _mm256_set1_pd(DPDO__ONE_MINUS_HALF_ULP));
    __m256d rho = _mm256_sqrt_pd(m2log256(u1));
    __m256d a = _mm256_mul_pd(
        _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64(x2, 11), one_b)),
                      _mm256_set1_pd(1.5)),
        _mm256_set1_pd(DPDO__PIO2));
    __m256d z = _mm256_mul_pd(a, a);
    __m256d ps = _mm256_set1_pd(DPDO__S6);
    ps = _mm256_fmadd_pd(ps, z, _mm256_set1_pd(DPDO__S5));
    ps = _mm256_fmadd_pd(ps, z, _mm256_set1_pd(DPDO__S4));
    ps = _mm256_fmadd_pd(ps, z, _mm256_set1_pd(DPDO__S3));
    ps = _mm256_fmadd_pd(ps, z, _mm256_set1_pd(DPDO__S2));
    ps = _mm256_fmadd_pd(ps, z, _mm256_set1_pd(DPDO__S1));
    __m256d sv = _mm256_fmadd_pd(_mm256_mul_pd(a, z), ps, a);
    __m256d pc = _mm256_set1_pd(DPDO__C6);
    pc = _mm256_fmadd_pd(pc, z, _mm256_set1_pd(DPDO__C5));
    pc = _mm256_fmadd_pd(pc, z, _mm256_set1_pd(DPDO__C4));
    pc = _mm256_fmadd_pd(pc, z, _mm256_set1_pd(DPDO__C3));
    pc = _mm256_fmadd_pd(pc, z, _mm256_set1_pd(DPDO__C2));
    pc = _mm256_fmadd_pd(pc, z, _mm256_set1_pd(DPDO__C1));
    __m256d cv = _mm256_fmadd_pd(_mm256_mul_pd(z, z), pc,
                                 _mm256_fmadd_pd(z, _mm256_set1_pd(-0.5), _mm256_set1_pd(1.0)));
    const __m256i sign = _mm256_set1_epi64x((long long)0x8000000000000000ull);
    __m256d odd = _mm256_castsi256_pd(_mm256_slli_epi64(x2, 63)); /* sign bit = bit 0 */
    __m256d c = _mm256_blendv_pd(cv, sv, odd);
    __m256d s = _mm256_blendv_pd(sv, cv, odd);
    __m256d cs = _mm256_xor_pd(c, _mm256_castsi256_pd(_mm256_and_si256(x1, sign)));
    __m256d sn = _mm256_xor_pd(s, _mm256_castsi256_pd(_mm256_and_si256(x2, sign)));
    *z0 = _mm256_mul_pd(rho, cs);
    *z1 = _mm256_mul_pd(rho, sn);
}

/* [a0 a1 a2 a3], [b0 b1 b2 b3] -> [a0 b0 a1 b1], [a2 b2 a3 b3] */
T256 static inline void interleave256(__m256d a, __m256d b, __m256d *lo, __m256d *hi)
{
    __m256d l = _mm256_unpacklo_pd(a, b); /* a0 b0 a2 b2 */
    __m256d h = _mm256_unpackhi_pd(a, b); /* a1 b1 a3 b3 */
    *lo = _mm256_permute2f128_pd(l, h, 0x20);
    *hi = _mm256_permute2f128_pd(l, h, 0x31);
}

T256 static size_t normals256(const uint32_t key[4], const uint32_t ctr[4], size_t nblocks,
                              double *out, int add, double scale)
{
    /* same software pipeline as normals512, units of 4*PG blocks */
    enum { U = 4 * PG };
    philox_pre P;
    philox_precompute(key, ctr, &P);
    const __m256i lane = _mm256_set_epi64x(3, 2, 1, 0);
    const __m256d sc = _mm256_set1_pd(scale);
    uint64_t ub1[2][U] __attribute__((aligned(32)));
    uint64_t ub2[2][U] __attribute__((aligned(32)));
    size_t nb = nblocks & ~(size_t)(U - 1);
    size_t nu = nb / U;
    uint64_t base = ctr[0];
    for (size_t t = 0; t <= nu; t++) {
        if (t < nu) {
            __m256i c[PG][4];
            uint64_t *d1 = ub1[t & 1], *d2 = ub2[t & 1];
#pragma GCC unroll 4
            for (int g = 0; g < PG; g++)
                c[g][0] =
                    _mm256_add_epi64(_mm256_set1_epi64x((long long)(base + 4 * (uint64_t)g)), lane);
            base += U;
            philox256g(c, &P);
#pragma GCC unroll 4
            for (int g = 0; g < PG; g++) {
                _mm256_store_si256((__m256i *)(void *)(d1 + 4 * g), word256(c[g][0], c[g][1]));
                _mm256_store_si256((__m256i *)(void *)(d2 + 4 * g), word256(c[g][2], c[g][3]));
            }
        }
        if (t > 0) {
            const uint64_t *s1 = ub1[(t - 1) & 1], *s2 = ub2[(t - 1) & 1];
            double *o = out + 2 * U * (t - 1);
            for (int g = 0; g < PG; g++, o += 8) {
                __m256d z0, z1, a, b;
                bm256(_mm256_load_si256((const __m256i *)(const void *)(s1 + 4 * g)),
                      _mm256_load_si256((const __m256i *)(const void *)(s2 + 4 * g)), &z0, &z1);
                interleave256(z0, z1, &a, &b);
                if (add) {
                    a = _mm256_fmadd_pd(sc, a, _mm256_loadu_pd(o));
                    b = _mm256_fmadd_pd(sc, b, _mm256_loadu_pd(o + 4));
                }
                _mm256_storeu_pd(o, a);
                _mm256_storeu_pd(o + 4, b);
            }
        }
    }
    return nb;
}

T256 static size_t uniforms256(const uint32_t key[4], const uint32_t ctr[4], size_t nblocks,
                               double *out)
{
    philox_pre P;
    philox_precompute(key, ctr, &P);
    const __m256i lane = _mm256_set_epi64x(3, 2, 1, 0);
    size_t nb = nblocks & ~(size_t)(4 * PG - 1);
    uint64_t base = ctr[0];
    for (size_t j = 0; j < nb; j += 4 * PG, base += 4 * PG) {
        __m256i c[PG][4];
#pragma GCC unroll 4
        for (int g = 0; g < PG; g++)
            c[g][0] =
                _mm256_add_epi64(_mm256_set1_epi64x((long long)(base + 4 * (uint64_t)g)), lane);
        philox256g(c, &P);
#pragma GCC unroll 4
        for (int g = 0; g < PG; g++) {
            __m256d a, b;
            interleave256(u01_256(word256(c[g][0], c[g][1])), u01_256(word256(c[g][2], c[g][3])),
                          &a, &b);
            double *o = out + 2 * (j + 4 * (size_t)g);
            _mm256_storeu_pd(o, a);
            _mm256_storeu_pd(o + 4, b);
        }
    }
    return nb;
}

/* The scalar transform compiled with FMA enabled, so that the fma() calls of
 * rng_math.h become single instructions instead of libm calls (same bits:
 * fma is correctly rounded either way). */
__attribute__((target("fma"))) static void bm_blocks_fma(const uint32_t *w, size_t m, double *out,
                                                         int add, double scale)
{
    for (size_t j = 0; j < m; j++) {
        double z0, z1;
        dpdo__bm_block(w + 4 * j, &z0, &z1);
        if (add) {
            out[2 * j] = fma(scale, z0, out[2 * j]);
            out[2 * j + 1] = fma(scale, z1, out[2 * j + 1]);
        } else {
            out[2 * j] = z0;
            out[2 * j + 1] = z1;
        }
    }
}

int dpdo__simd_bm_blocks(const uint32_t *w, size_t m, double *out, int add, double scale)
{
    if (!__builtin_cpu_supports("fma")) return 0;
    bm_blocks_fma(w, m, out, add, scale);
    return 1;
}

size_t dpdo__simd_normals(int kernel, const uint32_t key[4], const uint32_t ctr[4], size_t nblocks,
                          double *out, int add, double scale)
{
    if (kernel == DPDO__RNG_KERNEL_AVX512) return normals512(key, ctr, nblocks, out, add, scale);
    if (kernel == DPDO__RNG_KERNEL_AVX2) return normals256(key, ctr, nblocks, out, add, scale);
    return 0;
}

size_t dpdo__simd_blocks(int kernel, const uint32_t key[4], const uint32_t ctr[4], size_t nblocks,
                         uint32_t *out)
{
    if (kernel == DPDO__RNG_KERNEL_AVX512) return blocks512(key, ctr, nblocks, out);
    return 0;
}

size_t dpdo__simd_uniforms(int kernel, const uint32_t key[4], const uint32_t ctr[4], size_t nblocks,
                           double *out)
{
    if (kernel == DPDO__RNG_KERNEL_AVX512) return uniforms512(key, ctr, nblocks, out);
    if (kernel == DPDO__RNG_KERNEL_AVX2) return uniforms256(key, ctr, nblocks, out);
    return 0;
}

#else /* no x86 SIMD: the scalar kernel only */

int dpdo__simd_best(void)
{
    return DPDO__RNG_KERNEL_SCALAR;
}

size_t dpdo__simd_normals(int kernel, const uint32_t key[4], const uint32_t ctr[4], size_t nblocks,
                          double *out, int add, double scale)
{
    (void)kernel, (void)key, (void)ctr, (void)nblocks, (void)out, (void)add, (void)scale;
    return 0;
}

size_t dpdo__simd_uniforms(int kernel, const uint32_t key[4], const uint32_t ctr[4], size_t nblocks,
                           double *out)
{
    (void)kernel, (void)key, (void)ctr, (void)nblocks, (void)out;
    return 0;
}

size_t dpdo__simd_blocks(int kernel, const uint32_t key[4], const uint32_t ctr[4], size_t nblocks,
                         uint32_t *out)
{
    (void)kernel, (void)key, (void)ctr, (void)nblocks, (void)out;
    return 0;
}

int dpdo__simd_bm_blocks(const uint32_t *w, size_t m, double *out, int add, double scale)
{
    (void)w, (void)m, (void)out, (void)add, (void)scale;
    return 0;
}

#endif
